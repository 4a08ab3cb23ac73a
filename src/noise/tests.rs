//! The noise rules, each both ways, with exact evidence.

use super::traced::{Intruder, StolenBy};
use super::*;
use crate::collect::cpufreq::CpuFreqInfo;
use crate::collect::interrupts::IrqKind;
use crate::collect::topology::CpuTopology;
use crate::model::interval::CpuRates;
use crate::model::interval::{IdleRate, PkgRates, TimeSplit};
use crate::model::irq_rates::SourceRates;
use crate::os::fs::{Fs, Roots};
use crate::os::hw::Stamp;
use std::collections::BTreeSet;

/// A machine read from an empty tree (every fact unknown), then given
/// `n` online CPUs, two SMT threads per core (cpu i and i + n/2).
pub(super) fn machine(n: u32) -> Machine {
    let dir = tempfile::tempdir().unwrap();
    let mut m = Machine::read(&mut Fs::new(Roots::under(dir.path())));
    m.online = (0..n).collect();
    m.topology = (0..n)
        .map(|cpu| {
            let core = cpu % (n / 2);
            CpuTopology {
                cpu,
                package: Some(0),
                die: None,
                cluster: None,
                core: Some(core),
                siblings: vec![core, core + n / 2],
                core_type: None,
                node: Some(0),
            }
        })
        .collect();
    m
}

pub(super) fn rates(cpu: u32) -> CpuRates {
    CpuRates {
        cpu,
        ..CpuRates::default()
    }
}

pub(super) fn interval(cpus: Vec<CpuRates>) -> Interval {
    Interval {
        from: Stamp::default(),
        to: Stamp::default(),
        dt_s: 1.0,
        freq_source: None,
        cpus,
        pkgs: Vec::new(),
        irqs: Vec::new(),
        softirqs: Vec::new(),
        gone: Vec::new(),
    }
}

fn source(label: &str, desc: &str, kind: IrqKind, per_cpu: Vec<Option<f64>>) -> SourceRates {
    let total = per_cpu.iter().flatten().sum();
    SourceRates {
        label: label.into(),
        desc: desc.into(),
        kind,
        per_cpu,
        total,
    }
}

fn idle(name: &str, latency: u64, pct: f64) -> IdleRate {
    IdleRate {
        name: name.into(),
        pct: Some(pct),
        per_s: Some(410.0),
        above_per_s: None,
        below_per_s: None,
        latency_us: Some(latency),
        residency_us: None,
        disabled: Some(false),
    }
}

fn tags(iv: &Interval, m: &Machine, watched: &[u32]) -> Vec<Finding> {
    judge_all(iv, m, watched, None).findings
}

pub(super) fn judge_all(
    iv: &Interval,
    m: &Machine,
    watched: &[u32],
    trace: Option<&Traced>,
) -> Judgement {
    let mut w = watched.to_vec();
    w.sort_unstable();
    let cfg = NoiseConfig::default();
    judge(
        iv,
        &Context {
            machine: m,
            watched: &w,
            config: &cfg,
            trace,
        },
    )
}

fn kinds(f: &[Finding]) -> Vec<Kind> {
    f.iter().map(|x| x.kind).collect()
}

#[test]
fn top_device_irq_on_a_watched_cpu_names_the_row_and_the_affinity_fix() {
    let m = machine(4);
    let mut r2 = rates(2);
    r2.dev_per_s = Some(1030.0);
    let mut iv = interval(vec![rates(0), rates(1), r2, rates(3)]);
    iv.irqs = vec![
        source(
            "LOC",
            "Local timer interrupts",
            IrqKind::LocalTimer,
            vec![Some(250.0); 4],
        ),
        source(
            "72",
            "IR-PCI-MSI 524288-edge nvme0q2",
            IrqKind::Device,
            vec![Some(0.0), Some(0.0), Some(1010.0), Some(0.0)],
        ),
        source(
            "30",
            "IR-PCI-MSI 1-edge eth0",
            IrqKind::Device,
            vec![Some(5.0), Some(0.0), Some(20.0), Some(0.0)],
        ),
    ];
    let f = tags(&iv, &m, &[2]);
    let irq = f.iter().find(|x| x.kind == Kind::IrqOnWatched).unwrap();
    assert_eq!(irq.cpus, vec![2]);
    assert_eq!(irq.severity, Severity::Crit);
    assert_eq!(irq.label, "IRQ nvme0q2");
    assert_eq!(
        irq.evidence,
        "CPU 2: IRQ 72 nvme0q2 1010/s (all device IRQs 1030/s)"
    );
    assert_eq!(
        irq.fix.as_deref(),
        Some("echo 0-1,3 > /proc/irq/72/smp_affinity_list")
    );
    // the same rates on an unwatched CPU are not noise
    assert!(
        tags(&iv, &m, &[1])
            .iter()
            .all(|x| x.kind != Kind::IrqOnWatched)
    );
}

#[test]
fn device_irq_below_one_per_second_is_quiet() {
    let m = machine(2);
    let mut iv = interval(vec![rates(0), rates(1)]);
    iv.irqs = vec![source(
        "9",
        "IO-APIC 9-fasteoi acpi",
        IrqKind::Device,
        vec![None, Some(0.5)],
    )];
    assert!(tags(&iv, &m, &[1]).is_empty());
}

#[test]
fn context_switches_and_migrations_on_a_watched_cpu() {
    let m = machine(2);
    let mut r = rates(1);
    r.csw_per_s = Some(800.0);
    r.mig_per_s = Some(12.0);
    let f = tags(&interval(vec![rates(0), r.clone()]), &m, &[1]);
    assert_eq!(kinds(&f), vec![Kind::CswOnWatched, Kind::MigOnWatched]);
    assert_eq!(f[0].evidence, "CPU 1: 800 context switches/s");
    // ten times the strict limit of 50/s
    assert_eq!(f[0].severity, Severity::Crit);
    assert_eq!(
        f[0].fix.as_deref(),
        Some(
            "boot with isolcpus=domain,managed_irq,1 nohz_full=1 rcu_nocbs=1 (kernel command line)"
        )
    );
    assert_eq!(f[1].evidence, "CPU 1: 12 task migrations/s counted on it");
    assert_eq!(
        f[1].fix.as_deref(),
        Some(
            "boot with isolcpus=domain,managed_irq,1 nohz_full=1 rcu_nocbs=1 (kernel command line)"
        )
    );
    // just under both thresholds
    r.csw_per_s = Some(49.0);
    r.mig_per_s = Some(0.9);
    assert!(tags(&interval(vec![rates(0), r]), &m, &[1]).is_empty());
}

#[test]
fn deep_state_on_watched_cpu_is_its_own_finding_and_the_rest_are_grouped() {
    let m = machine(4);
    let mut cpus: Vec<CpuRates> = (0..4).map(rates).collect();
    for r in &mut cpus {
        r.idle = vec![idle("C1", 2, 20.0), idle("C6", 133, 60.0)].into();
    }
    let mut shallow = idle("C6", 133, 60.0);
    shallow.pct = Some(0.5); // below DEEP_MIN_PCT
    cpus[3].idle = vec![idle("C1", 2, 20.0), shallow].into();
    let f = tags(&interval(cpus), &m, &[1]);
    let deep: Vec<&Finding> = f.iter().filter(|x| x.kind == Kind::DeepCstate).collect();
    assert_eq!(deep.len(), 2);
    assert_eq!(deep[0].cpus, vec![1]);
    assert_eq!(deep[0].severity, Severity::Warn);
    assert_eq!(deep[0].label, "C6 133µs");
    assert_eq!(
        deep[0].evidence,
        "CPU 1: 60 % in C6 (exit latency 133 µs), 410 entries/s"
    );
    assert_eq!(
        deep[0].fix.as_deref(),
        Some("cpupower -c 1 idle-set -D 100")
    );
    assert_eq!(deep[1].cpus, vec![0, 2]);
    assert_eq!(deep[1].severity, Severity::Info);
    assert_eq!(
        deep[1].evidence,
        "CPUs 0,2: 60 % on average in C6 (exit latency 133 µs)"
    );
}

#[test]
fn steal_over_the_limit_of_each_cpu_lists_them_and_the_worst() {
    let m = machine(4);
    let mut cpus: Vec<CpuRates> = (0..4).map(rates).collect();
    for (r, s) in cpus.iter_mut().zip([0.5, 1.5, 12.5, 3.0]) {
        r.time = Some(TimeSplit {
            steal: Some(s),
            ..TimeSplit::default()
        });
    }
    // watched CPUs 1 and 3 pass the strict 1 %, CPU 2 the mild 5 %
    let f = tags(&interval(cpus.clone()), &m, &[1, 3]);
    assert_eq!(kinds(&f), vec![Kind::Steal, Kind::NoisyCpus]);
    assert_eq!(f[0].cpus, vec![1, 2, 3]);
    assert_eq!(f[0].severity, Severity::Warn);
    assert_eq!(
        f[0].evidence,
        "CPUs 1-3: steal up to 12.5 % (CPU 2): the hypervisor ran something else"
    );
    assert_eq!(
        f[1].evidence,
        "CPU 2 over the mild limits: CPU 2 steal 12.5 %; quiet now: CPU 0"
    );
    // nothing watched: only CPU 2 passes the mild limit
    let f = tags(&interval(cpus), &m, &[]);
    assert_eq!(
        f[0].evidence,
        "CPU 2: steal 12.5 %: the hypervisor ran something else"
    );
    let mut one = interval(vec![rates(0)]);
    one.cpus[0].time = Some(TimeSplit {
        steal: Some(12.0),
        ..TimeSplit::default()
    });
    let f = tags(&one, &m, &[0]);
    assert_eq!(f[0].severity, Severity::Crit, "12 % is over ten times 1 %");
}

#[test]
fn core_and_package_throttling_are_critical() {
    let m = machine(4);
    let mut cpus: Vec<CpuRates> = (0..4).map(rates).collect();
    cpus[0].throttle = Some(0);
    cpus[3].throttle = Some(7);
    let mut iv = interval(cpus);
    iv.pkgs = vec![PkgRates {
        package: 0,
        throttle: Some(2),
        ..PkgRates::default()
    }];
    let f = tags(&iv, &m, &[]);
    assert_eq!(kinds(&f), vec![Kind::Throttle, Kind::Throttle]);
    assert!(f[0].cpus.is_empty(), "package throttling is machine-wide");
    assert_eq!(f[0].evidence, "package 0: 2 package throttling events");
    assert_eq!(f[1].cpus, vec![3]);
    assert_eq!(f[1].evidence, "CPU 3: 7 core throttling events");
}

#[test]
fn busy_smt_sibling_of_a_watched_cpu() {
    let m = machine(4); // siblings: 0+2, 1+3
    let mut cpus: Vec<CpuRates> = (0..4).map(rates).collect();
    cpus[3].busy_pct = Some(76.0);
    cpus[2].busy_pct = Some(9.0);
    let iv = interval(cpus);
    let f = tags(&iv, &m, &[1]);
    assert_eq!(kinds(&f), vec![Kind::SmtSiblingBusy]);
    assert_eq!(f[0].cpus, vec![1]);
    assert_eq!(f[0].label, "SMT 3 busy");
    assert_eq!(
        f[0].evidence,
        "CPU 3, the SMT sibling of watched CPU 1, is 76 % busy"
    );
    assert_eq!(
        f[0].fix.as_deref(),
        Some("echo 0 > /sys/devices/system/cpu/cpu3/online")
    );
    // watching both threads of the core is a choice, not noise; CPU 2 is 9 % busy
    assert!(tags(&iv, &m, &[1, 3]).is_empty());
    assert!(tags(&iv, &m, &[0]).is_empty());
}

#[test]
fn machine_facts_turbo_governor_isolation_aslr() {
    let mut m = machine(4);
    m.boost.intel_no_turbo = Some(false);
    m.kernel.aslr = Some(2);
    m.sets.isolated = Some(vec![2, 3]);
    m.sets.nohz_full = None; // unknown: no claim about it
    m.cpufreq = (0..4)
        .map(|cpu| CpuFreqInfo {
            cpu,
            driver: Some("intel_pstate".into()),
            governor: Some(if cpu == 1 { "performance" } else { "powersave" }.into()),
            epp: None,
            scaling_min_khz: None,
            scaling_max_khz: None,
            cpuinfo_min_khz: None,
            cpuinfo_max_khz: None,
            base_khz: None,
            cur_khz: None,
            dir: String::new(),
            cur_path: None,
        })
        .collect();
    let iv = interval((0..4).map(rates).collect());
    let f = tags(&iv, &m, &[1, 2]);
    assert_eq!(
        kinds(&f),
        vec![
            Kind::Governor,
            Kind::TurboOn,
            Kind::NotIsolated,
            Kind::AslrOn
        ]
    );
    assert_eq!(f[0].cpus, vec![2]);
    assert_eq!(f[0].severity, Severity::Warn);
    assert_eq!(
        f[0].fix.as_deref(),
        Some("cpupower -c 2 frequency-set -g performance")
    );
    assert_eq!(
        f[1].fix.as_deref(),
        Some("echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo")
    );
    assert_eq!(f[2].cpus, vec![1]);
    assert_eq!(f[2].evidence, "CPU 1 not in isolated");
    assert_eq!(
        f[3].evidence,
        "randomize_va_space = 2: code and stack addresses change from run to run"
    );
    // nothing watched: governor of every CPU, informational; no isolation claim
    let f = tags(&iv, &m, &[]);
    assert_eq!(kinds(&f), vec![Kind::TurboOn, Kind::Governor, Kind::AslrOn]);
    assert_eq!(f[1].cpus, vec![0, 2, 3]);
    assert_eq!(f[1].severity, Severity::Info);
}

#[test]
fn unknown_facts_and_empty_interval_give_no_finding() {
    let m = machine(2);
    assert!(tags(&interval(Vec::new()), &m, &[0, 1, 7]).is_empty());
    assert!(tags(&interval((0..2).map(rates).collect()), &m, &[0, 1]).is_empty());
}

#[test]
fn kinds_serialize_as_their_tags() {
    for k in [
        Kind::IrqOnWatched,
        Kind::DeepCstate,
        Kind::SmtSiblingBusy,
        Kind::AslrOn,
    ] {
        assert_eq!(
            serde_json::to_string(&k).unwrap(),
            format!("\"{}\"", k.tag())
        );
    }
}

pub(super) fn traced_task(comm: &str, pid: u32, kthread: bool) -> TracedTask {
    TracedTask {
        per_cpu_kthread: kthread,
        ..TracedTask::user(comm, pid)
    }
}

#[test]
fn the_same_reading_is_noisy_on_a_watched_cpu_and_quiet_on_another() {
    let m = machine(4);
    let mut cpus: Vec<CpuRates> = (0..4).map(rates).collect();
    for r in &mut cpus {
        r.csw_per_s = Some(120.0);
        r.dev_per_s = Some(0.0);
    }
    let j = judge_all(&interval(cpus), &m, &[1], None);
    let v1 = j.verdict(1).unwrap();
    assert!(v1.watched);
    assert_eq!(v1.state, VerdictState::Noisy);
    assert_eq!(v1.text(), "noisy: CSW 120/s");
    let v0 = j.verdict(0).unwrap();
    assert!(!v0.watched);
    assert_eq!(v0.state, VerdictState::Quiet);
    assert_eq!(v0.text(), "quiet");
    assert_eq!(j.ids_of(1), vec!["csw-on-watched"]);
    assert!(j.ids_of(0).is_empty());
}

#[test]
fn an_unwatched_cpu_with_device_irqs_and_switches_is_named_noisy() {
    let m = machine(2);
    let mut r0 = rates(0);
    r0.dev_per_s = Some(402.0);
    r0.csw_per_s = Some(1487.0);
    let mut r1 = rates(1);
    r1.dev_per_s = Some(0.0);
    r1.csw_per_s = Some(12.0);
    let mut iv = interval(vec![r0, r1]);
    iv.irqs = vec![source(
        "41",
        "PCI-MSIX-0000:00:04.0 1-edge virtio3-rx",
        IrqKind::Device,
        vec![Some(402.0), Some(0.0)],
    )];
    let j = judge_all(&iv, &m, &[], None);
    // 1487 is 1.49 times its limit of 1000, 402 is 2.01 times 200
    assert_eq!(
        j.verdict(0).unwrap().text(),
        "noisy: IRQ virtio3-rx 402/s, CSW 1487/s"
    );
    assert_eq!(j.verdict(1).unwrap().text(), "quiet");
    assert_eq!(kinds(&j.findings), vec![Kind::NoisyCpus]);
    assert_eq!(
        j.findings[0].evidence,
        "CPU 0 over the mild limits: CPU 0 IRQ virtio3-rx 402/s, CSW 1487/s; quiet now: CPU 1"
    );
    assert_eq!(j.findings[0].fix, None);
}

#[test]
fn a_verdict_is_unknown_with_its_reason_when_nothing_is_read() {
    let m = machine(2);
    let j = judge_all(&interval(vec![rates(0)]), &m, &[0], None);
    let v = j.verdict(0).unwrap();
    assert_eq!(v.state, VerdictState::Unknown);
    assert_eq!(
        v.text(),
        "unknown: no interrupt, softirq, scheduler or steal counter for this CPU"
    );
    let mut r = rates(0);
    r.csw_per_s = Some(5.0);
    let mut iv = interval(vec![r]);
    iv.dt_s = 0.0;
    let j = judge_all(&iv, &m, &[0], None);
    assert_eq!(
        j.verdict(0).unwrap().text(),
        "unknown: the interval has no length"
    );
}

#[test]
fn timer_ticks_count_on_idle_and_nohz_full_cpus_only() {
    let mut m = machine(4);
    m.sets.nohz_full = Some(vec![3]);
    let mut cpus: Vec<CpuRates> = (0..4).map(rates).collect();
    for (r, busy) in cpus.iter_mut().zip([1.0, 100.0, 100.0, 100.0]) {
        r.loc_per_s = Some(250.0);
        r.busy_pct = Some(busy);
    }
    let j = judge_all(&interval(cpus), &m, &[0, 1, 3], None);
    // idle and ticking 250 times a second
    assert_eq!(j.verdict(0).unwrap().text(), "noisy: tick (idle) 250/s");
    // busy with a periodic tick: ticks are what the mode needs
    assert_eq!(j.verdict(1).unwrap().text(), "quiet");
    assert_eq!(
        j.verdict(3).unwrap().text(),
        "noisy: tick (nohz_full) 250/s"
    );
    let ticks: Vec<&Finding> = j
        .findings
        .iter()
        .filter(|f| f.kind == Kind::TickOnWatched)
        .collect();
    assert_eq!(ticks.len(), 2);
    // 250 is over ten times the nohz_full limit of 2, five times the idle 50
    assert_eq!(
        ticks[1].evidence,
        "CPU 0: 250 timer interrupts/s while 1.0 % busy: timers keep waking an idle CPU"
    );
    assert_eq!(ticks[1].severity, Severity::Warn);
    assert_eq!(
        ticks[0].evidence,
        "CPU 3: 250 timer interrupts/s on a nohz_full CPU (1/s expected with one task)"
    );
    assert_eq!(ticks[0].severity, Severity::Crit);
    assert_eq!(
        ticks[0].fix.as_deref(),
        Some("boot with nohz_full=3 rcu_nocbs=3 (kernel command line), and run one task on it")
    );
}

#[test]
fn ipis_and_softirqs_on_a_watched_cpu_name_their_top_source() {
    let m = machine(2);
    let mut r1 = rates(1);
    r1.ipi_per_s = Some(64.0);
    r1.softirq_per_s = Some(90.0);
    let mut iv = interval(vec![rates(0), r1]);
    iv.irqs = vec![
        source(
            "RES",
            "Rescheduling interrupts",
            IrqKind::Reschedule,
            vec![Some(1.0), Some(60.0)],
        ),
        source(
            "CAL",
            "Function call interrupts",
            IrqKind::FunctionCall,
            vec![Some(1.0), Some(4.0)],
        ),
    ];
    iv.softirqs = vec![
        source("RCU", "", IrqKind::Other, vec![Some(3.0), Some(70.0)]),
        source("TIMER", "", IrqKind::Other, vec![Some(3.0), Some(20.0)]),
    ];
    let j = judge_all(&iv, &m, &[1], None);
    assert_eq!(
        j.verdict(1).unwrap().text(),
        "noisy: IPI RES 64/s, softirq RCU 90/s"
    );
    let ipi = j
        .findings
        .iter()
        .find(|f| f.kind == Kind::IpiOnWatched)
        .unwrap();
    assert_eq!(
        ipi.evidence,
        "CPU 1: 64 IPIs/s (RES 60/s, CAL 4.0/s): reschedule IPIs wake tasks here: other tasks share this CPU"
    );
    assert_eq!(ipi.severity, Severity::Warn);
    let soft = j
        .findings
        .iter()
        .find(|f| f.kind == Kind::SoftirqOnWatched)
        .unwrap();
    assert_eq!(soft.evidence, "CPU 1: 90 softirqs/s, most RCU 70/s");
    assert_eq!(
        soft.fix.as_deref(),
        Some("boot with rcu_nocbs=1 (kernel command line): RCU callbacks then run elsewhere")
    );
}

#[test]
fn traced_intruders_are_named_with_their_pid_and_the_fix_moves_them() {
    let m = machine(4);
    let mut r1 = rates(1);
    r1.csw_per_s = Some(300.0);
    let trace = Traced {
        cpus: vec![TracedCpu {
            cpu: 1,
            window_ns: 1_000_000_000,
            owner: Some(traced_task("bench", 4000, false)),
            intruders: vec![
                Intruder {
                    task: traced_task("stress", 4242, false),
                    ns: 41_000_000,
                    slices: 12,
                    charged_ns: Some(45_500_000),
                },
                Intruder {
                    task: traced_task("kworker/1:2", 88, true),
                    ns: 2_000_000,
                    slices: 3,
                    // charged at its switch out, after the window
                    charged_ns: Some(0),
                },
            ],
            ..TracedCpu::default()
        }],
        ..Traced::default()
    };
    let j = judge_all(
        &interval(vec![rates(0), r1, rates(2), rates(3)]),
        &m,
        &[1],
        Some(&trace),
    );
    assert_eq!(j.verdict(1).unwrap().text(), "noisy: stress[4242] 4.3 %");
    let f = j
        .findings
        .iter()
        .find(|f| f.kind == Kind::Intruder)
        .unwrap();
    assert_eq!(f.label, "stress[4242]");
    assert_eq!(
        f.evidence,
        "CPU 1: stress[4242] ran 41 ms in 12 slices (charged 46 ms), kworker/1:2[88] ran 2.0 ms \
         in 3 slices; in all 43 ms (4.30 % of the time) (the CPU belongs to bench[4000])"
    );
    // the per-CPU kworker cannot move; the user task can
    assert_eq!(f.fix.as_deref(), Some("taskset -apc 0,2-3 4242"));
    // 4.3 % is over the 0.5 % limit, under ten times it
    assert_eq!(f.severity, Severity::Warn);
    // traced: the time taken judges the CPU, not the switch count
    assert!(j.findings.iter().all(|f| f.kind != Kind::CswOnWatched));
    // only a bound kernel thread: the cure is at boot
    let mut only_kthread = trace.clone();
    only_kthread.cpus[0].intruders.remove(0);
    only_kthread.cpus[0].intruders[0].ns = 8_000_000;
    let j = judge_all(
        &interval(vec![rates(0), rates(1)]),
        &m,
        &[1],
        Some(&only_kthread),
    );
    let f = j
        .findings
        .iter()
        .find(|f| f.kind == Kind::Intruder)
        .unwrap();
    assert_eq!(
        f.fix.as_deref(),
        Some(
            "boot with isolcpus=domain,managed_irq,1 nohz_full=1 rcu_nocbs=1 (kernel command line)"
        )
    );
}

#[test]
fn every_id_is_documented_in_the_verdicts_page() {
    let page = include_str!("../../docs/verdicts.md");
    for k in Kind::ALL {
        let anchor = format!("\n### finding-{}\n", k.tag());
        assert!(
            page.contains(&anchor),
            "docs/verdicts.md lacks a section {anchor}"
        );
    }
    // and documents no finding that does not exist
    let documented = page
        .lines()
        .filter(|l| l.starts_with("### finding-"))
        .count();
    assert_eq!(documented, Kind::ALL.len(), "docs/verdicts.md's findings");
    let ids: BTreeSet<&str> = Kind::ALL.iter().map(|k| k.tag()).collect();
    assert_eq!(ids.len(), Kind::ALL.len(), "ids are unique");
}

#[test]
fn time_taken_by_interrupts_on_a_traced_cpu_names_the_costliest_source() {
    let m = machine(4);
    let trace = Traced {
        cpus: vec![TracedCpu {
            cpu: 2,
            window_ns: 1_000_000_000,
            owner: Some(traced_task("bench", 4000, false)),
            stolen: vec![
                StolenBy {
                    kind: "irq".into(),
                    name: "72:nvme0q2".into(),
                    irq: Some(72),
                    ns: 18_000_000,
                    count: 900,
                    max_ns: 61_000,
                },
                StolenBy {
                    kind: "timer".into(),
                    name: "local_timer".into(),
                    irq: None,
                    ns: 2_000_000,
                    count: 250,
                    max_ns: 9_000,
                },
            ],
            ..TracedCpu::default()
        }],
        ..Traced::default()
    };
    let mut r2 = rates(2);
    r2.softirq_per_s = Some(5000.0);
    let iv = interval(vec![rates(0), rates(1), r2, rates(3)]);
    let j = judge_all(&iv, &m, &[2], Some(&trace));
    // 2 % of the time against a 1 % limit; the softirq count is not judged
    assert_eq!(
        j.verdict(2).unwrap().text(),
        "noisy: interrupts (most 72:nvme0q2) 2.0 %"
    );
    let f = j.findings.iter().find(|f| f.cpus == vec![2]).unwrap();
    assert_eq!(f.kind, Kind::IrqOnWatched);
    assert_eq!(
        f.evidence,
        "CPU 2: interrupts took 2.00 % of the time: 72:nvme0q2 18.00 ms in 900 (longest 61 µs), \
         local_timer 2.00 ms in 250 (longest 9 µs)"
    );
    assert_eq!(
        f.fix.as_deref(),
        Some("echo 0-1,3 > /proc/irq/72/smp_affinity_list")
    );
    assert_eq!(f.severity, Severity::Warn);
    // half a percent is within the limit: quiet
    let mut small = trace.clone();
    small.cpus[0].stolen.truncate(1);
    small.cpus[0].stolen[0].ns = 5_000_000;
    let j = judge_all(&iv, &m, &[2], Some(&small));
    assert_eq!(j.verdict(2).unwrap().text(), "quiet");
}

#[test]
fn a_traced_cpu_is_not_called_quiet_while_who_ran_is_not_known() {
    let m = machine(4);
    let trace = |unknown_ns| Traced {
        cpus: vec![TracedCpu {
            cpu: 1,
            window_ns: 1_000_000_000,
            owner: Some(traced_task("bench", 4000, false)),
            unknown_ns,
            ..TracedCpu::default()
        }],
        ..Traced::default()
    };
    let iv = interval(vec![rates(0), rates(1), rates(2), rates(3)]);
    // 30 ms of 1 s (3 %) against the watched 0.5 % for other tasks
    let j = judge_all(&iv, &m, &[1], Some(&trace(30_000_000)));
    assert_eq!(
        j.verdict(1).unwrap().text(),
        "unknown: who ran for 30.0 ms (3.0 %) is not known: counting began in it, before the \
         CPU's first event"
    );
    // 4 ms (0.4 %) is within what another task may take
    let j = judge_all(&iv, &m, &[1], Some(&trace(4_000_000)));
    assert_eq!(j.verdict(1).unwrap().text(), "quiet");
    // a cause makes it noisy whatever else is unknown
    let mut r1 = rates(1);
    r1.time = Some(TimeSplit {
        steal: Some(40.0),
        ..TimeSplit::default()
    });
    let iv = interval(vec![rates(0), r1, rates(2), rates(3)]);
    let j = judge_all(&iv, &m, &[1], Some(&trace(30_000_000)));
    assert_eq!(j.verdict(1).unwrap().state, VerdictState::Noisy);
}

#[test]
fn isolation_advice_never_asks_for_the_boot_cpu() {
    // two cores of two threads: CPU 0's core is 0 and 2
    let mut m = machine(4);
    m.sets.isolated = Some(Vec::new());
    m.sets.nohz_full = Some(Vec::new());
    let iv = interval((0..4).map(rates).collect());
    // every CPU watched: the boot CPU's core stays for housekeeping
    let f = tags(&iv, &m, &[0, 1, 2, 3]);
    let iso = f.iter().find(|f| f.kind == Kind::NotIsolated).unwrap();
    assert_eq!(iso.cpus, vec![0, 1, 2, 3]);
    assert_eq!(
        iso.fix.as_deref(),
        Some(
            "boot with isolcpus=domain,managed_irq,1,3 nohz_full=1,3 rcu_nocbs=1,3 \
             (kernel command line)"
        )
    );
    // a list with the boot CPU in it: the others only
    let f = tags(&iv, &m, &[0, 1]);
    let iso = f.iter().find(|f| f.kind == Kind::NotIsolated).unwrap();
    assert_eq!(
        iso.fix.as_deref(),
        Some(
            "boot with isolcpus=domain,managed_irq,1 nohz_full=1 rcu_nocbs=1 (kernel command line)"
        )
    );
    // the boot CPU alone, switching often: no boot argument helps there
    let mut r = rates(0);
    r.csw_per_s = Some(800.0);
    let mut cpus: Vec<CpuRates> = (1..4).map(rates).collect();
    cpus.insert(0, r);
    let f = tags(&interval(cpus), &m, &[0]);
    let csw = f.iter().find(|f| f.kind == Kind::CswOnWatched).unwrap();
    assert_eq!(
        csw.fix.as_deref(),
        Some(
            "CPU 0 is the boot CPU, which the kernel keeps for its housekeeping whatever \
             isolcpus= says: run the benchmark on CPUs 1,3 and boot with \
             isolcpus=domain,managed_irq,1,3 nohz_full=1,3 rcu_nocbs=1,3"
        )
    );
    // one CPU online: nothing to offer but the fact
    let mut one = machine(2);
    one.online = vec![0];
    one.topology.truncate(1);
    one.topology[0].siblings = vec![0];
    assert_eq!(
        interrupts::isolate_cmdline(&one, 0),
        "CPU 0 is the boot CPU, which the kernel keeps for its housekeeping whatever \
         isolcpus= says, and no other CPU is online"
    );
}

/// An intruder's cgroup is named as an operator knows it, and the fix
/// confines a container or a service as a whole: with `AllowedCPUs=` where
/// the cpuset controller is on cgroup v2, task by task from its
/// `cgroup.procs` where it is not (a hybrid host). A login session, the
/// root, and the owner's own cgroup are never confined: those tasks move
/// by pid.
#[test]
fn an_intruder_in_a_container_or_service_is_named_by_it_and_confined_as_a_whole() {
    let m = machine(4);
    let pod = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod7f9c1b2e_1111_2222_3333_444455556666.slice/cri-containerd-1a2b3c4d5e6f77778888999900001111222233334444555566667777aaaabbbb.scope";
    let task = |comm: &str, pid: u32, cg: &str| {
        let mut t = traced_task(comm, pid, false);
        t.cgroup = Some(cg.to_string());
        t
    };
    let intruder = |t: TracedTask, ms: u64| Intruder {
        task: t,
        ns: ms * 1_000_000,
        slices: 2,
        charged_ns: None,
    };
    let trace = |cpuset: bool| Traced {
        cpus: vec![TracedCpu {
            cpu: 1,
            window_ns: 1_000_000_000,
            owner: Some(task(
                "bench",
                4000,
                "/user.slice/user-0.slice/session-3.scope",
            )),
            intruders: vec![
                intruder(task("gzip", 30775, pod), 208),
                intruder(task("rsync", 812, "/system.slice/backup.service"), 40),
                // the owner's own session: by pid
                intruder(
                    task("sh", 4100, "/user.slice/user-0.slice/session-3.scope"),
                    20,
                ),
            ],
            ..TracedCpu::default()
        }],
        cgroups: Some(crate::os::cgroups::CgroupRoot {
            mount: "/sys/fs/cgroup/unified".into(),
            cpuset,
        }),
        ..Traced::default()
    };
    let find = |t: &Traced| {
        judge_all(
            &interval(vec![rates(0), rates(1), rates(2), rates(3)]),
            &m,
            &[1],
            Some(t),
        )
        .findings
        .into_iter()
        .find(|f| f.kind == Kind::Intruder)
        .unwrap()
    };
    let f = find(&trace(true));
    assert_eq!(
        f.evidence,
        "CPU 1: gzip[30775] ran 208 ms in 2 slices from pod 7f9c1b2e…/container 1a2b3c4d5e6f…, \
         rsync[812] ran 40 ms in 2 slices from backup.service, sh[4100] ran 20 ms in 2 slices \
         from session-3.scope (uid 0); in all 268 ms (26.80 % of the time) (the CPU belongs to \
         bench[4000])"
    );
    let fix = f.fix.unwrap();
    // a pod's container through its runtime, which keeps kubelet's view
    assert!(
        fix.starts_with(
            "crictl update --cpuset-cpus 0,2-3 1a2b3c4d5e6f77778888999900001111222233334444555566667777aaaabbbb; "
        ),
        "{fix}"
    );
    assert!(
        fix.contains(
            "; systemctl set-property backup.service AllowedCPUs=0,2-3; taskset -apc 0,2-3 4100"
        ),
        "{fix}"
    );
    // cpuset on v1: each task of the cgroup, listed where cgroup2 holds it
    let fix = find(&trace(false)).fix.unwrap();
    assert!(
        fix.contains(
            "for p in $(cat /sys/fs/cgroup/unified/system.slice/backup.service/cgroup.procs); do taskset -a -c -p 0,2-3 \"$p\"; done"
        ),
        "{fix}"
    );
    // without the cgroup2 mount known, every task moves by pid
    let mut none = trace(true);
    none.cgroups = None;
    assert_eq!(
        find(&none).fix.as_deref(),
        Some("taskset -apc 0,2-3 30775; taskset -apc 0,2-3 812; taskset -apc 0,2-3 4100")
    );
}
