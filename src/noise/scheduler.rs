//! Tasks on a watched CPU: who else ran there (traced), context switches
//! and migrations.

use super::interrupts::isolate_cmdline;
use super::traced::{Intruder, TracedCpu, TracedTask};
use super::verdict::CpuVerdict;
use super::{CauseClass, Context, Finding, Kind, Number, rate, severity_of};
use crate::base::cpulist;
use crate::collect::cgroup_name::{CgroupName, Cpuset, keep_on, parse, shown};
use crate::model::interval::CpuRates;

/// The findings of one watched CPU's scheduler causes.
pub fn on_watched(cx: &Context<'_>, r: &CpuRates, v: &CpuVerdict) -> Vec<Finding> {
    let traced = cx.trace.and_then(|t| t.cpu(r.cpu));
    let mut out = Vec::new();
    for c in &v.causes {
        let f = match c.class {
            CauseClass::Intruder => traced.and_then(|t| intruders(cx, t, c.limit)),
            CauseClass::Csw => context_switches(cx, r, traced, c.limit),
            CauseClass::Mig => migrations(cx, r, traced, c.limit),
            _ => None,
        };
        out.extend(f);
    }
    out
}

/// `taskset` lines that move the user tasks among `who` (the ones the
/// evidence names, and nothing else) to the housekeeping CPUs, or the
/// boot-time cure when none of them can move: per-CPU kernel threads, which
/// `taskset` cannot move, and tasks that have exited.
fn move_off(cx: &Context<'_>, cpu: u32, who: &[&Intruder], owner: Option<&TracedTask>) -> String {
    let house = cx.housekeeping();
    let root = cx.trace.and_then(|t| t.cgroups.as_ref());
    let mut pids: Vec<u32> = Vec::new();
    let mut groups: Vec<&str> = Vec::new();
    for i in who {
        if i.task.per_cpu_kthread || i.task.pid == 0 {
            continue;
        }
        // a container or a service moves as a whole, with what it starts
        // later; an exited task's cgroup still names the rest of it
        if let (Some(path), Some(_)) = (confinable(&i.task, owner), root) {
            if !groups.contains(&path) {
                groups.push(path);
            }
            continue;
        }
        if !i.task.exited && !pids.contains(&i.task.pid) {
            pids.push(i.task.pid);
        }
    }
    if (pids.is_empty() && groups.is_empty()) || house.is_empty() {
        return isolate_cmdline(cx.machine, cpu);
    }
    let list = cpulist::format(&house);
    let mut fixes: Vec<String> = Vec::new();
    if let Some(root) = root {
        let cpuset = if root.cpuset {
            Cpuset::Unified
        } else {
            Cpuset::Legacy { mount: &root.mount }
        };
        fixes.extend(groups.iter().map(|g| keep_on(g, &list, cpuset)));
    }
    fixes.extend(pids.iter().map(|p| format!("taskset -apc {list} {p}")));
    fixes.join("; ")
}

/// The cgroup an intruder's fix may confine as a whole: a Kubernetes
/// pod's container, a container, or a system service; never the root, a
/// user's session, nor the cgroup the CPU's owner is in.
fn confinable<'a>(task: &'a TracedTask, owner: Option<&TracedTask>) -> Option<&'a str> {
    let path = task.cgroup.as_deref()?;
    if owner.and_then(|o| o.cgroup.as_deref()) == Some(path) {
        return None;
    }
    match parse(path) {
        CgroupName::Pod {
            container: Some(_), ..
        }
        | CgroupName::Container(_) => Some(path),
        CgroupName::Unit { unit, uid: None } if unit.ends_with(".service") => Some(path),
        _ => None,
    }
}

/// ` from foo.service` after a task whose cgroup is known and not the
/// root, as an operator names it.
fn from_cgroup(t: &TracedTask) -> String {
    shown(t.cgroup.as_deref()).map_or_else(String::new, |name| format!(" from {name}"))
}

/// A task as the evidence names it: `comm[pid]`, with `(exited)` for one
/// gone since. Its name is the one the kernel wrote as it ran (the trace's
/// switch records, or /proc read while it lived), never a later reading
/// of a pid that may be another task's now; `pid N (exited)` where none is
/// known.
pub(crate) fn task_name(t: &TracedTask) -> String {
    match (t.exited, t.comm.starts_with("tid ")) {
        (false, _) => format!("{}[{}]", t.comm, t.pid),
        (true, false) => format!("{}[{}] (exited)", t.comm, t.pid),
        (true, true) => format!("pid {} (exited)", t.pid),
    }
}

/// What the evidence of sampled figures says of them.
const SAMPLED: &str = "; sampled from /proc, not traced: each task's run time on the CPU it was seen leaving or ran on last";

fn ms(ns: u64) -> String {
    let v = ns as f64 / 1e6;
    if v >= 10.0 {
        format!("{v:.0} ms")
    } else {
        format!("{v:.1} ms")
    }
}

fn intruders(cx: &Context<'_>, t: &TracedCpu, limit: f64) -> Option<Finding> {
    const SHOWN: usize = 3;
    let total = t.intruder_ns();
    let pct = t.pct(total)?;
    let mut parts: Vec<String> = t
        .intruders
        .iter()
        .take(SHOWN)
        .map(|i| {
            // the scheduler's charge is what top and schedstat show: said
            // beside the time between switches where they differ. None in
            // the window: the charge comes with the switch out, in the next
            // one, and "charged 0" would say the task took nothing.
            let charged = i
                .charged_ns
                .filter(|&c| c > 0 && c.abs_diff(i.ns) * 20 > i.ns)
                .map_or_else(String::new, |c| format!(" (charged {})", ms(c)));
            format!(
                "{} ran {} in {} slice{}{charged}{}",
                task_name(&i.task),
                ms(i.ns),
                i.slices,
                if i.slices == 1 { "" } else { "s" },
                from_cgroup(&i.task)
            )
        })
        .collect();
    if t.intruders.len() > SHOWN {
        // their own time, so that the total after them reads as the total
        let more = t.intruders.len() - SHOWN;
        let shown: u64 = t.intruders.iter().take(SHOWN).map(|i| i.ns).sum();
        parts.push(format!(
            "{more} more task{} ran {}",
            if more == 1 { "" } else { "s" },
            ms(total.saturating_sub(shown))
        ));
    }
    let owner = t.owner.as_ref().map_or_else(String::new, |o| {
        format!(" (the CPU belongs to {})", task_name(o))
    });
    let top = t.intruders.first()?;
    let who: Vec<&Intruder> = t.intruders.iter().take(SHOWN).collect();
    Some(Finding {
        cpus: vec![t.cpu],
        kind: Kind::Intruder,
        severity: severity_of(pct, limit, cx.config),
        label: task_name(&top.task),
        evidence: format!(
            "CPU {}: {}; in all {} ({pct:.2} % of the time){owner}{}",
            t.cpu,
            parts.join(", "),
            ms(total),
            if t.sampled { SAMPLED } else { "" }
        ),
        numbers: std::iter::once(Number::new("intruder_pct", pct))
            .chain(
                t.intruders
                    .iter()
                    .map(|i| Number::new(format!("pid{}_ns", i.task.pid), i.ns as f64)),
            )
            .collect(),
        fix: Some(move_off(cx, t.cpu, &who, t.owner.as_ref())),
    })
}

fn context_switches(
    cx: &Context<'_>,
    r: &CpuRates,
    traced: Option<&TracedCpu>,
    limit: f64,
) -> Option<Finding> {
    let csw = r.csw_per_s?;
    let (who, fix) = match traced {
        Some(t) if !t.intruders.is_empty() => {
            let names: Vec<String> = t
                .intruders
                .iter()
                .take(3)
                .map(|i| task_name(&i.task))
                .collect();
            let all: Vec<&Intruder> = t.intruders.iter().take(3).collect();
            (
                format!(" with {}", names.join(", ")),
                Some(move_off(cx, r.cpu, &all, t.owner.as_ref())),
            )
        }
        _ => (String::new(), Some(isolate_cmdline(cx.machine, r.cpu))),
    };
    Some(Finding {
        cpus: vec![r.cpu],
        kind: Kind::CswOnWatched,
        severity: severity_of(csw, limit, cx.config),
        label: "CSW".into(),
        evidence: format!("CPU {}: {} context switches/s{who}", r.cpu, rate(csw)),
        numbers: vec![Number::new("csw_per_s", csw)],
        fix,
    })
}

fn migrations(
    cx: &Context<'_>,
    r: &CpuRates,
    traced: Option<&TracedCpu>,
    limit: f64,
) -> Option<Finding> {
    let mig = r.mig_per_s?;
    // the counter counts every task that moved onto the CPU, the benchmark
    // or not: pin the owner when it is known, else keep the balancer away
    let owner = traced.and_then(|t| t.owner.as_ref());
    let fix = match owner {
        Some(o) if o.pid != 0 && !o.exited => format!("taskset -apc {} {}", r.cpu, o.pid),
        // the one isolation advice: the balancer then moves no task onto it
        _ => isolate_cmdline(cx.machine, r.cpu),
    };
    Some(Finding {
        cpus: vec![r.cpu],
        kind: Kind::MigOnWatched,
        severity: severity_of(mig, limit, cx.config),
        label: "MIG".into(),
        evidence: format!(
            "CPU {}: {} task migrations/s counted on it{}",
            r.cpu,
            rate(mig),
            owner.map_or_else(String::new, |o| format!(
                " (the CPU belongs to {})",
                task_name(o)
            ))
        ),
        numbers: vec![Number::new("mig_per_s", mig)],
        fix: Some(fix),
    })
}

/// The least share of the window the longest runner must have run for a
/// change of it to be told: below it the CPU is idle, not benchmarking.
pub const OWNER_MIN_PCT: f64 = 5.0;

/// A watched CPU whose longest runner changed while no owner is given:
/// the longest runner is taken for the benchmark, so a stray busy loop
/// that outruns it would otherwise pass for the owner and read quiet.
pub fn owner_changed(cx: &Context<'_>, t: &TracedCpu) -> Option<Finding> {
    let was = t.owner_was.as_ref()?;
    let now = t.owner.as_ref()?;
    // an idle CPU runs no benchmark: its longest runner is a passer-by,
    // and a kernel thread bound to the CPU is never the benchmark
    if now.per_cpu_kthread || t.pct(t.owner_ns).is_none_or(|p| p < OWNER_MIN_PCT) {
        return None;
    }
    let pct = t.pct(
        t.intruders
            .iter()
            .filter(|i| i.task.pid == was.pid)
            .map(|i| i.ns)
            .sum(),
    );
    let house = cpulist::format(&cx.housekeeping());
    let movable = |x: &TracedTask| !x.per_cpu_kthread && !x.exited && !house.is_empty();
    let mut fix = Vec::new();
    if movable(now) {
        fix.push(format!(
            "if {} is the benchmark: taskset -apc {house} {}",
            task_name(was),
            now.pid
        ));
    }
    if !now.exited {
        fix.push(format!(
            "if {} is: make it the owner (--owner {}, or `o` on it in the detail's who-ran table)",
            task_name(now),
            now.pid
        ));
    }
    Some(Finding {
        cpus: vec![t.cpu],
        kind: Kind::OwnerChanged,
        severity: super::Severity::Warn,
        label: "owner changed".into(),
        evidence: format!(
            "CPU {}'s longest runner changed: {} → {}{}; no owner is given, so the longest runner \
             is taken for the benchmark{}",
            t.cpu,
            task_name(was),
            task_name(now),
            pct.map_or_else(String::new, |p| format!(
                " ({} ran {p:.1} % of the interval)",
                task_name(was)
            )),
            if t.sampled { SAMPLED } else { "" }
        ),
        numbers: vec![
            Number::new("was_pid", f64::from(was.pid)),
            Number::new("now_pid", f64::from(now.pid)),
        ],
        fix: (!fix.is_empty()).then(|| fix.join("; ")),
    })
}
