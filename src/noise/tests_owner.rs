//! Who owns a watched CPU and who intruded: sampled figures, fixes that
//! name only the evidence's live tasks, and a change of longest runner.

use super::tests::{interval, judge_all, machine, rates, traced_task};
use super::traced::Intruder;
use super::*;

fn intruder(comm: &str, pid: u32, ms: u64) -> Intruder {
    Intruder {
        task: traced_task(comm, pid, false),
        ns: ms * 1_000_000,
        slices: 4,
        charged_ns: None,
    }
}

fn cpu1(owner: Option<TracedTask>, intruders: Vec<Intruder>) -> Traced {
    Traced {
        cpus: vec![TracedCpu {
            cpu: 1,
            window_ns: 1_000_000_000,
            owner,
            intruders,
            ..TracedCpu::default()
        }],
        ..Traced::default()
    }
}

fn finding(j: &Judgement, k: Kind) -> &Finding {
    j.findings
        .iter()
        .find(|f| f.kind == k)
        .unwrap_or_else(|| panic!("no {k:?} in {:?}", j.findings))
}

#[test]
fn the_fix_names_only_the_tasks_the_evidence_names() {
    let m = machine(4);
    // three kernel threads ran longest; a fourth, movable task (the
    // rcu_preempt of a real run) is beyond what the evidence lists
    let mut t = cpu1(
        Some(traced_task("bench", 4000, false)),
        vec![
            intruder("kworker/1:2", 88, 30),
            intruder("ksoftirqd/1", 21, 20),
            intruder("migration/1", 22, 10),
            intruder("rcu_preempt", 15, 5),
        ],
    );
    for i in &mut t.cpus[0].intruders[..3] {
        i.task.per_cpu_kthread = true;
    }
    let j = judge_all(&interval(vec![rates(0), rates(1)]), &m, &[1], Some(&t));
    let f = finding(&j, Kind::Intruder);
    // the more tasks' own time, then the total: neither read as the other
    assert!(
        f.evidence
            .contains("1 more task ran 5.0 ms; in all 65 ms (6.50 % of the time)"),
        "{}",
        f.evidence
    );
    assert!(!f.evidence.contains("[15]"), "{}", f.evidence);
    assert_eq!(
        f.fix.as_deref(),
        Some(
            "boot with isolcpus=domain,managed_irq,1 nohz_full=1 rcu_nocbs=1 (kernel command line)"
        ),
        "pid 15 is in no evidence: no command names it"
    );
}

#[test]
fn an_exited_task_is_named_exited_and_given_no_command() {
    let m = machine(4);
    let mut t = cpu1(
        Some(traced_task("bench", 4000, false)),
        vec![intruder("grep", 5150, 40), intruder("stress", 4242, 20)],
    );
    t.cpus[0].intruders[0].task.exited = true;
    let j = judge_all(&interval(vec![rates(0), rates(1)]), &m, &[1], Some(&t));
    let f = finding(&j, Kind::Intruder);
    assert_eq!(
        f.evidence,
        "CPU 1: grep[5150] (exited) ran 40 ms in 4 slices, stress[4242] ran 20 ms in 4 slices; \
         in all 60 ms (6.00 % of the time) (the CPU belongs to bench[4000])"
    );
    assert_eq!(f.label, "grep[5150] (exited)");
    // no name known (a tid the trace never named): the pid alone
    let mut u = t.clone();
    u.cpus[0].intruders[0].task.comm = "tid 5150".into();
    let j = judge_all(&interval(vec![rates(0), rates(1)]), &m, &[1], Some(&u));
    assert_eq!(finding(&j, Kind::Intruder).label, "pid 5150 (exited)");
    assert_eq!(f.fix.as_deref(), Some("taskset -apc 0,2-3 4242"));
    // every intruder gone: the cure is at boot
    t.cpus[0].intruders[1].task.exited = true;
    let j = judge_all(&interval(vec![rates(0), rates(1)]), &m, &[1], Some(&t));
    assert!(
        finding(&j, Kind::Intruder)
            .fix
            .as_deref()
            .unwrap()
            .starts_with("boot with ")
    );
}

#[test]
fn sampled_figures_judge_tasks_and_the_counts_judge_interrupts() {
    let m = machine(4);
    let mut r1 = rates(1);
    r1.dev_per_s = Some(74.0);
    let mut t = cpu1(
        Some(traced_task("sleep", 4000, false)),
        vec![intruder("yes", 8571, 990)],
    );
    t.cpus[0].sampled = true;
    t.cpus[0].owner_given = true;
    let j = judge_all(&interval(vec![rates(0), r1]), &m, &[1], Some(&t));
    let v = j.verdict(1).unwrap();
    assert_eq!(v.state, VerdictState::Noisy);
    let classes: Vec<CauseClass> = v.causes.iter().map(|c| c.class).collect();
    assert!(classes.contains(&CauseClass::Intruder), "{classes:?}");
    assert!(
        classes.contains(&CauseClass::DeviceIrq),
        "no interrupt time is sampled: the counts still judge it: {classes:?}"
    );
    let f = finding(&j, Kind::Intruder);
    assert_eq!(
        f.evidence,
        "CPU 1: yes[8571] ran 990 ms in 4 slices; in all 990 ms (99.00 % of the time) (the CPU belongs \
         to sleep[4000]); sampled from /proc, not traced: each task's run time on the CPU it was \
         seen leaving or ran on last"
    );
    assert_eq!(f.label, "yes[8571]");
    // traced (not sampled) figures: the interrupt counts stand aside
    t.cpus[0].sampled = false;
    let j = judge_all(&interval(vec![rates(0), r1_again()]), &m, &[1], Some(&t));
    assert!(
        j.verdict(1)
            .unwrap()
            .causes
            .iter()
            .all(|c| c.class != CauseClass::DeviceIrq)
    );
}

fn r1_again() -> crate::model::interval::CpuRates {
    let mut r = rates(1);
    r.dev_per_s = Some(74.0);
    r
}

#[test]
fn a_change_of_longest_runner_is_a_finding_naming_both() {
    let m = machine(4);
    let mut t = cpu1(
        Some(traced_task("yes", 1234, false)),
        vec![intruder("sh", 9437, 2)],
    );
    t.cpus[0].owner_ns = 900_000_000;
    t.cpus[0].owner_was = Some(traced_task("sh", 9437, false));
    let j = judge_all(&interval(vec![rates(0), rates(1)]), &m, &[1], Some(&t));
    let f = finding(&j, Kind::OwnerChanged);
    assert_eq!(f.cpus, vec![1]);
    assert_eq!(f.severity, Severity::Warn);
    assert_eq!(f.label, "owner changed");
    assert_eq!(
        f.evidence,
        "CPU 1's longest runner changed: sh[9437] → yes[1234] (sh[9437] ran 0.2 % of the \
         interval); no owner is given, so the longest runner is taken for the benchmark"
    );
    assert_eq!(
        f.fix.as_deref(),
        Some(
            "if sh[9437] is the benchmark: taskset -apc 0,2-3 1234; if yes[1234] is: make it the \
             owner (--owner 1234, or `o` on it in the detail's who-ran table)"
        )
    );
    // no change, no finding
    let none = |t: &Traced| {
        let j = judge_all(&interval(vec![rates(0), rates(1)]), &m, &[1], Some(t));
        j.findings.iter().all(|f| f.kind != Kind::OwnerChanged)
    };
    let was = t.cpus[0].owner_was.take();
    assert!(none(&t));
    // an idle CPU: its longest runner ran under 5 % of the window
    t.cpus[0].owner_was = was;
    t.cpus[0].owner_ns = 49_000_000;
    assert!(none(&t));
    t.cpus[0].owner_ns = 50_000_000;
    assert!(!none(&t));
    // a kernel thread bound to the CPU is never the benchmark
    t.cpus[0].owner.as_mut().unwrap().per_cpu_kthread = true;
    assert!(none(&t));
}

#[test]
fn the_migration_fix_pins_an_owner_the_evidence_names() {
    let m = machine(4);
    let mut r1 = rates(1);
    r1.mig_per_s = Some(30.0);
    // sampled: no switch or migration is traced, the counts judge them
    let mut t = cpu1(Some(traced_task("bench", 4000, false)), Vec::new());
    t.cpus[0].sampled = true;
    let j = judge_all(&interval(vec![rates(0), r1]), &m, &[1], Some(&t));
    let f = finding(&j, Kind::MigOnWatched);
    assert!(
        f.evidence.ends_with("(the CPU belongs to bench[4000])"),
        "{}",
        f.evidence
    );
    assert_eq!(f.fix.as_deref(), Some("taskset -apc 1 4000"));
}
