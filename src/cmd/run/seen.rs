//! What `noisetop run` saw on the command's CPUs, summed over the run, and
//! its report as text and JSON.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::base::cpulist;
use crate::base::{Cause, Unavailable};
use crate::noise::{Severity, VerdictState};
use crate::pipeline::Sample;

/// What is known of the run besides the samples.
#[derive(Debug, Clone, Serialize)]
pub struct RunFacts {
    /// The command and its arguments.
    pub command: Vec<String>,
    /// Its process id.
    pub pid: u32,
    /// The CPUs watched (the command's).
    pub cpus: Vec<u32>,
    /// Wall time of the run, s.
    pub seconds: f64,
    /// Its exit code, when it exited.
    pub exit: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    /// Its context switches (voluntary, involuntary), from getrusage.
    pub command_switches: Option<(u64, u64)>,
    /// Its migrations (every thread), as last read while it ran.
    pub command_migrations: Option<u64>,
    /// Why nothing was traced.
    pub trace_missing: Option<String>,
    /// CPU time the command and every child it waited for used (user and
    /// system, getrusage), ns.
    pub command_cpu_ns: Option<u64>,
    /// The share of a watched CPU other tasks and interrupts may take, %
    /// (the watched `intruder-pct` plus `stolen-pct`).
    #[serde(skip)]
    pub others_limit_pct: f64,
    /// The IPIs noisetop sent to the command's CPUs, counted by the kernel.
    pub own_ipis: Option<crate::pipeline::OwnIpis>,
    /// Why they were not counted.
    pub own_ipis_missing: Option<Unavailable>,
}

/// min / median / max of a series.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Spread {
    /// Least.
    pub min: f64,
    /// Median.
    pub median: f64,
    /// Greatest.
    pub max: f64,
}

fn spread(v: &[f64]) -> Option<Spread> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let mid = s.len() / 2;
    let median = if s.len().is_multiple_of(2) {
        f64::midpoint(s[mid - 1], s[mid])
    } else {
        s[mid]
    };
    Some(Spread {
        min: s[0],
        median,
        max: s[s.len() - 1],
    })
}

/// Interruptions of one source over the run.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct SourceTotal {
    /// Row label (`LOC`, `42`, `TIMER`).
    pub label: String,
    /// Its description (device name).
    pub desc: String,
    /// How many over the run.
    pub count: f64,
    /// Per second over the run.
    pub per_s: f64,
}

/// One idle state over the run.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct StateTotal {
    /// State name.
    pub name: String,
    /// Exit latency, µs.
    pub latency_us: Option<u64>,
    /// Mean residency, %.
    pub pct: f64,
    /// Entries over the run.
    pub entries: f64,
}

/// A task that ran on a watched CPU besides the command (traced).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct TaskTotal {
    /// Command name.
    pub comm: String,
    /// Process id.
    pub pid: u32,
    /// Time on the CPU between its switches, ns.
    pub ns: u64,
    /// Times switched in.
    pub slices: u64,
    /// What the scheduler charged it on this CPU, ns (what its schedstat
    /// counts), where the kernel writes run time records.
    pub charged_ns: Option<u64>,
    /// Its cgroup v2 path, where the kernel counted it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<String>,
}

/// One watched CPU over the run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CpuRun {
    /// The CPU.
    pub cpu: u32,
    /// Seconds of intervals summed.
    pub seconds: f64,
    /// `Avg_MHz` over the intervals.
    pub avg_mhz: Option<Spread>,
    /// `Bzy_MHz` over the intervals.
    pub bzy_mhz: Option<Spread>,
    /// Busy % over the intervals.
    pub busy_pct: Option<Spread>,
    /// Interrupts by source, most first.
    pub interrupts: Vec<SourceTotal>,
    /// Softirqs by type, most first.
    pub softirqs: Vec<SourceTotal>,
    /// Idle states.
    pub cstates: Vec<StateTotal>,
    /// Context switches over the run (every task).
    pub csw: Option<f64>,
    /// Migrations over the run.
    pub migrations: Option<f64>,
    /// Mean steal, %.
    pub steal_pct: Option<f64>,
    /// The span the traced figures cover, ns (0: not traced).
    pub traced_ns: u64,
    /// Tasks other than the command (traced), longest first.
    pub intruders: Vec<TaskTotal>,
    /// Tasks left out of `intruders` to keep the run's memory bounded
    /// (the shortest, past [`TASKS_KEPT`]), and their time, ns.
    #[serde(default)]
    pub more_tasks: (u64, u64),
    /// Time interrupts took (traced): (kind, name, ns, count, longest ns).
    pub stolen: Vec<(String, String, u64, u64, u64)>,
    /// Of `traced_ns`, the time around switches the kernel did not show:
    /// who ran then is not known.
    pub unseen_ns: u64,
    /// Whether who ran was sampled from /proc rather than traced.
    pub sampled: bool,
    /// Time the CPU was busy over the run, ns (Busy % × interval length):
    /// from the kernel's counts (the window less the idle task's time)
    /// where it counted the CPU, else /proc/stat.
    pub busy_ns: Option<u64>,
    /// What /proc/stat's ticks (or APERF/MPERF) say of the same, ns: the
    /// cross-check of a counted busy time.
    #[serde(default)]
    pub busy_stat_ns: Option<u64>,
    /// Whether `busy_ns` came from the kernel's counts.
    #[serde(default)]
    pub busy_counted: bool,
    /// Time `noisetop probe` ran on the CPU, ns, where it measured there
    /// (traced; not an intruder: its wake-ups were asked for).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe_ns: Option<u64>,
    /// Intervals this CPU was judged noisy, of all.
    pub noisy_intervals: u64,
    /// Intervals whose verdict was unknown, of all.
    pub unknown_intervals: u64,
    /// Intervals judged.
    pub intervals: u64,
    /// Time interrupts took while the command was the task running, ns
    /// (traced; `None` where a window was sampled or not traced).
    pub command_irq_ns: Option<u64>,
    /// Time the command's tasks ran on the CPU between their switches, ns
    /// (traced, as `command_irq_ns`): on the monotonic clock, so with what
    /// the host stole while they ran.
    pub command_ns: Option<u64>,
    /// Idle exits the kernel counted (`power:cpu_idle`), where it did.
    pub idle_exits: Option<u64>,
}

/// A finding over the run.
#[derive(Debug, Clone, Serialize)]
pub struct FindingTotal {
    /// Its id.
    pub id: &'static str,
    /// Highest severity seen.
    pub severity: Severity,
    /// Intervals it was seen in.
    pub count: u64,
    /// Evidence of its last interval.
    pub evidence: String,
    /// The fix.
    pub fix: Option<String>,
}

/// The report of one run.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    /// The command and how it ended.
    #[serde(flatten)]
    pub facts: RunFacts,
    /// `quiet`, or `noisy: …` with the worst causes.
    pub verdict: String,
    /// The signal that ended it.
    #[serde(skip)]
    pub signal: Option<i32>,
    /// Per watched CPU.
    pub per_cpu: Vec<CpuRun>,
    /// Findings seen, most frequent first.
    pub findings: Vec<FindingTotal>,
    /// The least time others took from the command's CPUs: their busy
    /// time minus the command's own CPU time, ns.
    pub others_min_ns: Option<u64>,
    /// The command's share of its CPUs and its time alone
    /// (`alone`), once estimated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bottom_line: Option<super::alone::BottomLine>,
    /// Why there is no bottom line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bottom_line_unknown: Option<String>,
}

#[derive(Debug, Default)]
struct CpuAcc {
    seconds: f64,
    avg: Vec<f64>,
    bzy: Vec<f64>,
    busy: Vec<f64>,
    irqs: BTreeMap<String, SourceTotal>,
    softirqs: BTreeMap<String, SourceTotal>,
    states: BTreeMap<String, StateTotal>,
    csw: Option<f64>,
    mig: Option<f64>,
    steal: Option<f64>,
    traced_ns: u64,
    intruders: BTreeMap<(u32, String), TaskTotal>,
    /// Tasks folded out of `intruders` and their time, ns.
    more_tasks: (u64, u64),
    stolen: BTreeMap<(String, String), (u64, u64, u64)>,
    unseen_ns: u64,
    sampled: bool,
    busy_ns: Option<f64>,
    /// /proc/stat's (or APERF's) busy time, the cross-check.
    busy_stat_ns: Option<f64>,
    /// Some interval's busy time came from the kernel's counts.
    busy_counted: bool,
    probe_ns: Option<u64>,
    noisy: u64,
    unknown: u64,
    /// Why the last unknown interval was.
    unknown_why: Option<String>,
    intervals: u64,
    /// (cause label, unit) → (intervals, worst value, another task).
    causes: BTreeMap<(String, &'static str), (u64, f64, bool)>,
    /// Interrupts while the command ran, ns (traced windows).
    command_irq_ns: u64,
    /// The command's time between its switches, ns (traced windows).
    command_ns: u64,
    /// A window with this CPU was sampled or not traced.
    untraced: bool,
    idle_exits: Option<u64>,
}

/// Tasks a run keeps by name on each CPU: past twice as many (a build
/// that starts a process a millisecond for hours), the shortest are folded
/// into one count and time, so the run's memory does not grow with them.
pub const TASKS_KEPT: usize = 256;

/// Causes kept per CPU (a task's label is one), by the same rule.
const CAUSES_KEPT: usize = 256;

/// Folds the shortest tasks past [`TASKS_KEPT`] into `more`.
fn fold_tasks(m: &mut BTreeMap<(u32, String), TaskTotal>, more: &mut (u64, u64)) {
    if m.len() <= 2 * TASKS_KEPT {
        return;
    }
    let mut by: Vec<((u32, String), u64)> = m.iter().map(|(k, t)| (k.clone(), t.ns)).collect();
    by.sort_by_key(|(_, ns)| std::cmp::Reverse(*ns));
    for (k, _) in by.into_iter().skip(TASKS_KEPT) {
        if let Some(t) = m.remove(&k) {
            more.0 += 1;
            more.1 += t.ns;
        }
    }
}

/// Drops the causes seen in the fewest intervals past [`CAUSES_KEPT`].
fn fold_causes<K: Ord + Clone>(m: &mut BTreeMap<K, (u64, f64, bool)>) {
    if m.len() <= 2 * CAUSES_KEPT {
        return;
    }
    let mut by: Vec<(K, u64)> = m.iter().map(|(k, v)| (k.clone(), v.0)).collect();
    by.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    for (k, _) in by.into_iter().skip(CAUSES_KEPT) {
        m.remove(&k);
    }
}

/// Sums the samples of a run.
#[derive(Debug)]
pub struct Accumulator {
    cpus: BTreeMap<u32, CpuAcc>,
    findings: BTreeMap<&'static str, FindingTotal>,
}

fn add(o: &mut Option<f64>, v: Option<f64>) {
    if let Some(v) = v {
        *o = Some(o.unwrap_or(0.0) + v);
    }
}

impl Accumulator {
    /// Starts empty for the watched CPUs.
    pub fn new(cpus: &[u32]) -> Self {
        Accumulator {
            cpus: cpus.iter().map(|&c| (c, CpuAcc::default())).collect(),
            findings: BTreeMap::new(),
        }
    }

    /// Takes one judged interval.
    pub fn add(&mut self, s: &Sample) {
        let iv = &s.interval;
        let dt = iv.dt_s;
        if dt <= 0.0 {
            return;
        }
        for (col, r) in iv.cpus.iter().enumerate() {
            let Some(a) = self.cpus.get_mut(&r.cpu) else {
                continue;
            };
            a.seconds += dt;
            a.avg.extend(r.avg_mhz);
            a.bzy.extend(r.bzy_mhz);
            // busy from the source the verdict reads: the kernel's counts
            // (the window less the idle task's time) where the CPU was
            // counted there; /proc/stat's ticks (or APERF) are kept beside
            // as the cross-check, and used where it was not
            let stat_busy = r.busy_pct.or_else(|| r.time.and_then(|t| t.busy()));
            let counted = s
                .trace
                .as_ref()
                .and_then(|t| t.cpu(r.cpu))
                .filter(|t| !t.sampled && t.window_ns > 0 && t.kernel.is_some());
            let busy = counted.map_or(stat_busy, |t| {
                Some(100.0 * t.window_ns.saturating_sub(t.idle_ns) as f64 / t.window_ns as f64)
            });
            a.busy.extend(busy);
            add(&mut a.busy_stat_ns, stat_busy.map(|b| b / 100.0 * dt * 1e9));
            a.busy_counted |= counted.is_some();
            for (rows, into) in [(&iv.irqs, &mut a.irqs), (&iv.softirqs, &mut a.softirqs)] {
                for row in rows {
                    let Some(Some(v)) = row.per_cpu.get(col) else {
                        continue;
                    };
                    let e = into
                        .entry(row.label.clone())
                        .or_insert_with(|| SourceTotal {
                            label: row.label.clone(),
                            desc: row.desc.clone(),
                            ..SourceTotal::default()
                        });
                    e.count += v * dt;
                }
            }
            for st in r.idle.iter() {
                let e = a
                    .states
                    .entry(st.name.to_string())
                    .or_insert_with(|| StateTotal {
                        name: st.name.to_string(),
                        latency_us: st.latency_us,
                        ..StateTotal::default()
                    });
                e.pct += st.pct.unwrap_or(0.0) * dt;
                e.entries += st.per_s.unwrap_or(0.0) * dt;
            }
            add(&mut a.csw, r.csw_per_s.map(|v| v * dt));
            add(&mut a.mig, r.mig_per_s.map(|v| v * dt));
            add(&mut a.steal, r.time.and_then(|t| t.steal).map(|v| v * dt));
            add(&mut a.busy_ns, busy.map(|b| b / 100.0 * dt * 1e9));
            let traced = s.trace.as_ref().and_then(|t| t.cpu(r.cpu));
            a.untraced |= traced.is_none_or(|t| t.sampled);
            if let Some(k) = traced.and_then(|t| t.kernel.as_ref()) {
                a.idle_exits = Some(a.idle_exits.unwrap_or(0) + k.idle_entries);
            }
            if let Some(t) = traced {
                a.command_irq_ns += t.owner_irq_ns;
                a.command_ns += t.owner_ns;
                a.traced_ns += t.window_ns;
                a.unseen_ns += t.unknown_ns;
                a.sampled |= t.sampled;
                if let Some(p) = s.trace.as_ref().and_then(|t| t.probed(r.cpu)) {
                    a.probe_ns = Some(a.probe_ns.unwrap_or(0) + p.ns);
                }
                for i in &t.intruders {
                    let e = a
                        .intruders
                        .entry((i.task.pid, i.task.comm.clone()))
                        .or_insert_with(|| TaskTotal {
                            comm: i.task.comm.clone(),
                            pid: i.task.pid,
                            cgroup: i.task.cgroup.clone(),
                            ..TaskTotal::default()
                        });
                    e.ns += i.ns;
                    e.slices += i.slices;
                    if let Some(c) = i.charged_ns {
                        e.charged_ns = Some(e.charged_ns.unwrap_or(0) + c);
                    }
                }
                fold_tasks(&mut a.intruders, &mut a.more_tasks);
                for x in &t.stolen {
                    let e = a
                        .stolen
                        .entry((x.kind.clone(), x.name.clone()))
                        .or_default();
                    e.0 += x.ns;
                    e.1 += x.count;
                    e.2 = e.2.max(x.max_ns);
                }
            }
            if let Some(v) = s.judgement.verdict(r.cpu) {
                a.intervals += 1;
                match v.state {
                    VerdictState::Noisy => a.noisy += 1,
                    VerdictState::Unknown => {
                        a.unknown += 1;
                        a.unknown_why.clone_from(&v.reason);
                    }
                    VerdictState::Quiet => {}
                }
                for c in &v.causes {
                    let e = a.causes.entry((c.label.clone(), c.unit)).or_default();
                    e.0 += 1;
                    e.1 = e.1.max(c.value);
                    e.2 = c.class == crate::noise::CauseClass::Intruder;
                }
                fold_causes(&mut a.causes);
            }
        }
        for f in &s.judgement.findings {
            let e = self
                .findings
                .entry(f.kind.tag())
                .or_insert_with(|| FindingTotal {
                    id: f.kind.tag(),
                    severity: f.severity,
                    count: 0,
                    evidence: String::new(),
                    fix: None,
                });
            e.count += 1;
            e.severity = e.severity.max(f.severity);
            e.evidence.clone_from(&f.evidence);
            e.fix.clone_from(&f.fix);
        }
    }

    /// The report: per CPU figures and a one-line verdict.
    pub fn report(self, facts: RunFacts) -> RunReport {
        let mut worst: Vec<(String, u64, u64)> = Vec::new();
        let mut unknown: Vec<String> = Vec::new();
        let mut per_cpu = Vec::new();
        let others = others_min(&self.cpus, &facts);
        for (cpu, a) in self.cpus {
            if let Some(why) = a.unknown_why.as_ref().filter(|_| a.unknown > 0) {
                unknown.push(format!(
                    "CPU {cpu} in {} of {} intervals: {why}",
                    a.unknown, a.intervals
                ));
            }
            for ((label, unit), (n, v, task)) in &a.causes {
                let value = if *unit == "%" {
                    format!("{v:.1} %")
                } else {
                    format!("{}{unit}", crate::noise::rate_text(*v))
                };
                // another task names itself with its time on the CPU, and
                // ranks above every count, the longest first
                let ran = a
                    .intruders
                    .values()
                    .find(|i| *task && format!("{}[{}]", i.comm, i.pid) == *label);
                match ran {
                    Some(i) => worst.push((
                        format!(
                            "{label} ran {:.1} ms on CPU {cpu} (up to {value} of an interval)",
                            i.ns as f64 / 1e6
                        ),
                        u64::MAX / 2 + i.ns,
                        a.intervals,
                    )),
                    None => worst.push((
                        format!("{label} up to {value} on CPU {cpu}"),
                        *n,
                        a.intervals,
                    )),
                }
            }
            let secs = a.seconds.max(f64::MIN_POSITIVE);
            let totals = |m: BTreeMap<String, SourceTotal>| {
                let mut v: Vec<SourceTotal> = m
                    .into_values()
                    .filter(|s| s.count >= 0.5)
                    .map(|mut s| {
                        s.per_s = s.count / secs;
                        s
                    })
                    .collect();
                v.sort_by(|a, b| b.count.total_cmp(&a.count));
                v
            };
            let mut intruders: Vec<TaskTotal> = a.intruders.into_values().collect();
            intruders.sort_by_key(|t| std::cmp::Reverse(t.ns));
            let mut stolen: Vec<(String, String, u64, u64, u64)> = a
                .stolen
                .into_iter()
                .map(|((k, n), (ns, c, m))| (k, n, ns, c, m))
                .collect();
            stolen.sort_by_key(|s| std::cmp::Reverse(s.2));
            per_cpu.push(CpuRun {
                cpu,
                seconds: a.seconds,
                avg_mhz: spread(&a.avg),
                bzy_mhz: spread(&a.bzy),
                busy_pct: spread(&a.busy),
                interrupts: totals(a.irqs),
                softirqs: totals(a.softirqs),
                cstates: a
                    .states
                    .into_values()
                    .map(|mut s| {
                        s.pct /= secs;
                        s
                    })
                    .collect(),
                csw: a.csw,
                migrations: a.mig,
                steal_pct: a.steal.map(|s| s / secs),
                traced_ns: a.traced_ns,
                unseen_ns: a.unseen_ns,
                sampled: a.sampled,
                busy_ns: a.busy_ns.map(|b| b as u64),
                busy_stat_ns: a.busy_stat_ns.map(|b| b as u64),
                busy_counted: a.busy_counted,
                probe_ns: a.probe_ns,
                intruders,
                more_tasks: a.more_tasks,
                stolen,
                noisy_intervals: a.noisy,
                unknown_intervals: a.unknown,
                intervals: a.intervals,
                command_irq_ns: (a.traced_ns > 0 && !a.untraced).then_some(a.command_irq_ns),
                command_ns: (a.traced_ns > 0 && !a.untraced).then_some(a.command_ns),
                idle_exits: a.idle_exits,
            });
        }
        // intruders first, then the causes seen most often
        worst.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        // traced CPUs keep their exact figures; where any was not traced,
        // the bound judges what sampling may have missed
        let untraced = per_cpu.iter().any(|c| c.sampled || c.traced_ns == 0);
        if let Some(line) = others
            .as_ref()
            .filter(|_| untraced)
            .and_then(|o| o.over_limit(&per_cpu, &facts))
        {
            // the bound holds whatever tracing or sampling missed: after the
            // tasks named with their time, before every count
            let at = worst.iter().take_while(|w| w.1 > u64::MAX / 2).count();
            worst.insert(at, (line, u64::MAX / 2, 0));
        }
        let judged: u64 = per_cpu.iter().map(|c| c.intervals).sum();
        let verdict = if judged == 0 {
            "unknown: the command ended before the first interval".to_string()
        } else if worst.is_empty() && !unknown.is_empty() {
            // nothing went over a limit, but not everything could be seen
            format!("unknown: {}", unknown.join("; "))
        } else if worst.is_empty() {
            "quiet".to_string()
        } else {
            let shown: Vec<String> = worst
                .iter()
                .take(3)
                .map(|(t, n, of)| {
                    if *n >= u64::MAX / 2 {
                        t.clone()
                    } else {
                        format!("{t} ({n} of {of} intervals)")
                    }
                })
                .collect();
            format!("noisy: {}", shown.join("; "))
        };
        let probed: Vec<String> = per_cpu
            .iter()
            .filter_map(|c| {
                c.probe_ns.map(|ns| {
                    format!(
                        "; CPU {} being probed ({})",
                        c.cpu,
                        crate::noise::traced::probe_ran_text(ns)
                    )
                })
            })
            .collect();
        let verdict = verdict + &probed.concat();
        let mut findings: Vec<FindingTotal> = self.findings.into_values().collect();
        findings.sort_by(|a, b| b.severity.cmp(&a.severity).then(b.count.cmp(&a.count)));
        RunReport {
            signal: facts.signal,
            facts,
            verdict,
            per_cpu,
            findings,
            others_min_ns: others.map(|o| o.ns),
            bottom_line: None,
            bottom_line_unknown: None,
        }
    }
}

/// Busy time of the command's CPUs beyond what the command itself used.
struct Others {
    /// The least time others took, ns.
    ns: u64,
    busy_ns: f64,
    own_ns: u64,
    /// Seconds of intervals, summed over the CPUs.
    seconds: f64,
}

/// Whatever ran on the command's CPUs and was not the command took at
/// least their busy time minus the command's own CPU time: a bound that
/// needs no tracing and misses nothing (noisetop keeps off these CPUs).
fn others_min(cpus: &BTreeMap<u32, CpuAcc>, f: &RunFacts) -> Option<Others> {
    let own_ns = f.command_cpu_ns?;
    let mut busy_ns = 0.0;
    let mut seconds = 0.0;
    for a in cpus.values() {
        busy_ns += a.busy_ns?;
        seconds += a.seconds;
    }
    (seconds > 0.0).then(|| Others {
        ns: (busy_ns - own_ns as f64).max(0.0) as u64,
        busy_ns,
        own_ns,
        seconds,
    })
}

impl Others {
    /// The verdict's first line when others took more than the limit,
    /// naming the tasks found on the CPUs.
    fn over_limit(&self, per_cpu: &[CpuRun], f: &RunFacts) -> Option<String> {
        let pct = self.ns as f64 / (self.seconds * 1e9) * 100.0;
        if pct <= f.others_limit_pct {
            return None;
        }
        let mut found: Vec<&TaskTotal> = per_cpu.iter().flat_map(|c| &c.intruders).collect();
        found.sort_by_key(|t| std::cmp::Reverse(t.ns));
        let names: Vec<String> = found
            .iter()
            .take(3)
            .map(|t| format!("{}[{}] {:.1} ms", t.comm, t.pid, t.ns as f64 / 1e6))
            .collect();
        let top = if names.is_empty() {
            "no task was found there".to_string()
        } else {
            format!("top tasks found: {}", names.join(", "))
        };
        Some(format!(
            "others (tasks, interrupts) took at least {:.1} ms ({pct:.1} %) of CPU {} (busy \
             {:.1} ms, the command's own CPU time {:.1} ms); {top}",
            self.ns as f64 / 1e6,
            cpulist::format(&f.cpus),
            self.busy_ns / 1e6,
            self.own_ns as f64 / 1e6
        ))
    }
}

/// Writes `  label: a, b, c` when there is anything to list.
/// Cgroups shown in a CPU's `by cgroup` line; the rest are summed.
const CGROUPS_SHOWN: usize = 5;

/// `by cgroup: pod 7f9c1b2e…/container 1a2b3c4d5e6f… 208.00 ms, backup.service
/// 40.00 ms` for a CPU where another task's cgroup was known: what an
/// operator moves. `None` where every task was in the root cgroup or none
/// was counted with one.
pub(super) fn by_cgroup(c: &CpuRun) -> Option<String> {
    let mut by: BTreeMap<String, u64> = BTreeMap::new();
    for t in &c.intruders {
        if let Some(name) = crate::collect::cgroup_name::shown(t.cgroup.as_deref()) {
            *by.entry(name.to_string()).or_default() += t.ns;
        }
    }
    if by.is_empty() {
        return None;
    }
    let mut v: Vec<(String, u64)> = by.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut parts: Vec<String> = v
        .iter()
        .take(CGROUPS_SHOWN)
        .map(|(n, ns)| format!("{n} {}", duration(*ns)))
        .collect();
    if v.len() > CGROUPS_SHOWN {
        let rest: u64 = v[CGROUPS_SHOWN..].iter().map(|x| x.1).sum();
        parts.push(format!(
            "{} more {}",
            v.len() - CGROUPS_SHOWN,
            duration(rest)
        ));
    }
    Some(format!("by cgroup on CPU {}: {}", c.cpu, parts.join(", ")))
}

fn list(o: &mut String, label: &str, items: impl Iterator<Item = String>) {
    let items: Vec<String> = items.collect();
    if !items.is_empty() {
        let _ = writeln!(o, "  {label}: {}", items.join(", "));
    }
}

/// A traced span in the unit that shows it: 41.03 ms, 18.2 µs, 640 ns
/// (a few microseconds printed as "0.00 ms" read as nothing at all).
pub(super) fn duration(ns: u64) -> String {
    // from 999.95 µs on, a tenth of a microsecond would round to 1000.0
    if ns >= 999_950 {
        format!("{:.2} ms", ns as f64 / 1e6)
    } else if ns >= 1_000 {
        format!("{:.1} µs", ns as f64 / 1e3)
    } else {
        format!("{ns} ns")
    }
}

fn opt(v: Option<f64>, d: usize) -> String {
    v.map_or_else(|| "?".to_string(), |x| format!("{x:.d$}"))
}

fn spread_text(s: Option<Spread>) -> String {
    s.map_or_else(
        || "?".to_string(),
        |s| format!("{:.0}/{:.0}/{:.0}", s.min, s.median, s.max),
    )
}

/// The command as a shell takes it back: each word quoted where the shell
/// would split or expand it (`python3 -c 'sum(range(10**8))'`). `shlex`
/// is the crate made for POSIX shell quoting; a word with a NUL (which no
/// command line can hold) is shown as Rust would debug-print it.
pub fn shell_words(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            shlex::try_quote(w).map_or_else(|_| format!("{w:?}"), std::borrow::Cow::into_owned)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

impl RunReport {
    /// The report as a person reads it.
    pub fn text(&self) -> String {
        let f = &self.facts;
        let mut o = String::new();
        let how = match (f.exit, f.signal) {
            (Some(c), _) => format!("exit status {c}"),
            (None, Some(s)) => format!("killed by signal {s}"),
            _ => "ended".into(),
        };
        let _ = writeln!(
            o,
            "noisetop run: `{}` (pid {}) on CPU {}, {:.2} s, {how}",
            shell_words(&f.command),
            f.pid,
            cpulist::format(&f.cpus),
            f.seconds
        );
        let _ = writeln!(o, "verdict: {}", self.verdict);
        if let Some((v, i)) = f.command_switches {
            // unknown where a CPU's count is, or where no interval was taken
            let others: Option<f64> = if self.per_cpu.iter().any(|c| c.intervals > 0) {
                self.per_cpu.iter().map(|c| c.csw).sum()
            } else {
                None
            };
            let mig = f.command_migrations.map_or_else(String::new, |m| {
                format!(", {m} migration{}", if m == 1 { "" } else { "s" })
            });
            let n = v + i;
            let _ = writeln!(
                o,
                "the command: {n} context switch{} ({v} voluntary, {i} involuntary){mig}; \
                 every task on its CPUs: {} context switches",
                if n == 1 { "" } else { "es" },
                opt(others, 0)
            );
        }
        if let Some(why) = &f.trace_missing {
            let _ = writeln!(o, "not traced: {why}");
        }
        self.bottom_line_text(&mut o);
        let ipis = match (&f.own_ipis, &f.own_ipis_missing) {
            (Some(i), _) => Ok(i.clone()),
            (None, Some(why)) => Err(why.clone()),
            (None, None) => Err(Unavailable::new(Cause::Failed, "not counted")),
        };
        let _ = writeln!(
            o,
            "noisetop itself: {}",
            crate::pipeline::OwnIpis::text(&ipis)
        );
        for c in &self.per_cpu {
            let _ = writeln!(
                o,
                "\nCPU {}: {} of {} intervals noisy; Bzy_MHz min/median/max {}; Avg_MHz {}; Busy% {}",
                c.cpu,
                c.noisy_intervals,
                c.intervals,
                spread_text(c.bzy_mhz),
                spread_text(c.avg_mhz),
                spread_text(c.busy_pct),
            );
            if let (true, Some(b), Some(st)) = (c.busy_counted, c.busy_ns, c.busy_stat_ns) {
                let _ = writeln!(
                    o,
                    "  busy {} counted in the kernel; /proc/stat's ticks say {}",
                    duration(b),
                    duration(st)
                );
            }
            let _ = writeln!(
                o,
                "  context switches {} (all tasks), migrations {}, steal {} %",
                opt(c.csw, 0),
                opt(c.migrations, 0),
                opt(c.steal_pct, 2)
            );
            let src = |v: &[SourceTotal]| -> String {
                if c.intervals == 0 {
                    return "? (no interval taken)".into();
                }
                if v.is_empty() {
                    return "none".into();
                }
                v.iter()
                    .take(6)
                    .map(|s| {
                        let name = if s.label.bytes().all(|b| b.is_ascii_digit()) {
                            format!(
                                "{}:{}",
                                s.label,
                                s.desc.split_whitespace().last().unwrap_or("")
                            )
                        } else {
                            s.label.clone()
                        };
                        format!("{name} {:.0} ({:.1}/s)", s.count, s.per_s)
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let _ = writeln!(o, "  interrupts: {}", src(&c.interrupts));
            let _ = writeln!(o, "  softirqs: {}", src(&c.softirqs));
            list(
                &mut o,
                "C-states",
                c.cstates.iter().map(|s| {
                    format!(
                        "{} {:.1} % {:.0} entries (exit {} µs)",
                        s.name,
                        s.pct,
                        s.entries,
                        s.latency_us
                            .map_or_else(|| "?".to_string(), |l| l.to_string())
                    )
                }),
            );
            list(
                &mut o,
                if c.sampled {
                    "other tasks on the CPU (sampled from /proc, not exact)"
                } else {
                    "other tasks on the CPU"
                },
                c.intruders.iter().take(5).map(|i| {
                    format!(
                        "{}[{}] {} in {} slice{}",
                        i.comm,
                        i.pid,
                        duration(i.ns),
                        i.slices,
                        if i.slices == 1 { "" } else { "s" }
                    )
                }),
            );
            if let Some(line) = by_cgroup(c) {
                let _ = writeln!(o, "  {line}");
            }
            if c.more_tasks.0 > 0 {
                let _ = writeln!(
                    o,
                    "  and {} more short task{} ({} in all), counted together",
                    c.more_tasks.0,
                    if c.more_tasks.0 == 1 { "" } else { "s" },
                    duration(c.more_tasks.1)
                );
            }
            if let Some(ns) = c.probe_ns {
                let _ = writeln!(
                    o,
                    "  {} (asked for, not noise): {}",
                    crate::noise::traced::PROBE_LABEL,
                    duration(ns)
                );
            }
            if c.unseen_ns > 0 {
                let _ = writeln!(
                    o,
                    "  who ran is not known for {}: counting began in it, or more tasks ran \
                     than the table holds",
                    duration(c.unseen_ns)
                );
            }
            list(
                &mut o,
                "time taken by interrupts",
                c.stolen.iter().take(6).map(|(k, n, ns, cnt, max)| {
                    format!(
                        "{k} {n} {} in {cnt} (longest {})",
                        duration(*ns),
                        duration(*max)
                    )
                }),
            );
        }
        if !self.findings.is_empty() {
            let _ = writeln!(o, "\nfindings:");
            for x in &self.findings {
                let fix = x
                    .fix
                    .as_deref()
                    .map_or_else(String::new, |f| format!(" → {f}"));
                let _ = writeln!(
                    o,
                    "  {} {} ×{}: {}{fix}",
                    x.severity.label(),
                    x.id,
                    x.count,
                    x.evidence
                );
            }
        }
        o
    }
}

#[cfg(test)]
mod tests {
    use super::{Accumulator, RunFacts, duration};
    use crate::noise::VerdictState;
    use crate::pipeline::Sample;

    const WHY: &str = "who ran for 30.0 ms (3.0 %) is not known: the kernel gave perf no \
                       events of a task that ran then";

    /// One second of CPU 1 with `unseen_ns` not known, judged `state`.
    fn second(state: VerdictState, unseen_ns: u64) -> Sample {
        let mut s = super::tests_support::quiet_second(0.0);
        s.interval.cpus[0].busy_pct = None;
        let v = &mut s.judgement.verdicts[0];
        v.state = state;
        v.reason = (state == VerdictState::Unknown).then(|| WHY.to_string());
        let t = s.trace.as_mut().expect("quiet_second is traced");
        t.cpus[0].unknown_ns = unseen_ns;
        s
    }

    fn facts() -> RunFacts {
        RunFacts {
            command: vec!["sleep".into(), "3".into()],
            pid: 4000,
            cpus: vec![1],
            seconds: 3.0,
            exit: Some(0),
            signal: None,
            command_switches: None,
            command_migrations: None,
            trace_missing: None,
            command_cpu_ns: None,
            others_limit_pct: 1.0,
            own_ipis: None,
            own_ipis_missing: Some(crate::base::Unavailable::new(
                crate::base::Cause::Failed,
                "not counted in this test",
            )),
        }
    }

    #[test]
    fn a_run_with_nothing_over_a_limit_but_time_unseen_is_unknown_not_quiet() {
        let mut acc = Accumulator::new(&[1]);
        acc.add(&second(VerdictState::Quiet, 0));
        acc.add(&second(VerdictState::Unknown, 30_000_000));
        acc.add(&second(VerdictState::Quiet, 2_000_000));
        let r = acc.report(facts());
        assert_eq!(
            r.verdict,
            format!("unknown: CPU 1 in 1 of 3 intervals: {WHY}")
        );
        assert_eq!(
            (r.per_cpu[0].unseen_ns, r.per_cpu[0].unknown_intervals),
            (32_000_000, 1)
        );
        assert!(
            r.text().contains(
                "  who ran is not known for 32.00 ms: counting began in it, or more tasks ran than \
                 the table holds\n"
            ),
            "{}",
            r.text()
        );

        // with every interval seen well enough, quiet
        let mut acc = Accumulator::new(&[1]);
        acc.add(&second(VerdictState::Quiet, 2_000_000));
        assert_eq!(acc.report(facts()).verdict, "quiet");
    }

    #[test]
    fn the_command_is_quoted_to_paste_back_and_counts_agree_in_number() {
        let mut f = facts();
        f.command = vec![
            "python3".into(),
            "-c".into(),
            "sum(range(10**8))".into(),
            "it's".into(),
            String::new(),
        ];
        f.command_switches = Some((1, 0));
        f.command_migrations = Some(1);
        let mut acc = Accumulator::new(&[1]);
        acc.add(&second(VerdictState::Quiet, 0));
        let text = acc.report(f).text();
        assert!(
            text.starts_with(
                "noisetop run: `python3 -c 'sum(range(10**8))' \"it's\" ''` (pid 4000)"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "the command: 1 context switch (1 voluntary, 0 involuntary), 1 migration;"
            ),
            "{text}"
        );
        assert_eq!(
            super::shell_words(&["sh".into(), "-c".into(), "sleep 0.5; exit 3".into()]),
            "sh -c 'sleep 0.5; exit 3'"
        );
    }

    #[test]
    fn spans_take_the_unit_that_shows_them() {
        assert_eq!(duration(41_030_000), "41.03 ms");
        assert_eq!(duration(1_000_000), "1.00 ms");
        assert_eq!(duration(999_999), "1.00 ms");
        assert_eq!(duration(999_949), "999.9 µs");
        assert_eq!(duration(18_240), "18.2 µs");
        assert_eq!(duration(1_000), "1.0 µs");
        assert_eq!(duration(640), "640 ns");
        assert_eq!(duration(0), "0 ns");
    }
}

#[cfg(test)]
mod others_tests {
    use super::tests_support::{facts_with, quiet_second};
    use super::*;

    /// Busy time comes from the kernel's counts where it counted the CPU
    /// (the window less the idle task's time), with /proc/stat's ticks
    /// kept beside as the cross-check: a 3 s sleep on a CPU whose ticks
    /// saw nothing busy is still 30 ms busy where the kernel counted
    /// 10 ms of other tasks each second.
    #[test]
    fn busy_time_is_counted_in_the_kernel_and_cross_checked_with_proc_stat() {
        let mut acc = Accumulator::new(&[1]);
        for _ in 0..3 {
            let mut s = quiet_second(0.0);
            let t = &mut s.trace.as_mut().unwrap().cpus[0];
            t.window_ns = 1_000_000_000;
            t.idle_ns = 990_000_000;
            t.kernel = Some(crate::trace::in_kernel::KernelCounts::default());
            acc.add(&s);
        }
        let r = acc.report(facts_with(Some(1_000_000)));
        let c = &r.per_cpu[0];
        assert!(c.busy_counted);
        assert_eq!(c.busy_ns, Some(30_000_000));
        assert_eq!(c.busy_stat_ns, Some(0));
        assert!(
            r.text()
                .contains("busy 30.00 ms counted in the kernel; /proc/stat's ticks say 0 ns"),
            "{}",
            r.text()
        );
    }

    #[test]
    fn busy_time_beyond_the_commands_own_is_others_and_names_the_tasks_found() {
        let mut acc = Accumulator::new(&[1]);
        for _ in 0..3 {
            // CPU 1 busy all the time; the sampled list found a loop for
            // 0.85 s of each second
            let mut s = quiet_second(100.0);
            let t = &mut s.trace.as_mut().unwrap().cpus[0];
            t.sampled = true;
            t.intruders.push(crate::noise::traced::Intruder {
                task: crate::noise::traced::TracedTask {
                    comm: "yes".into(),
                    pid: 8571,
                    tid: 8571,
                    per_cpu_kthread: false,
                    exited: false,
                    cgroup: None,
                },
                ns: 850_000_000,
                slices: 3,
                charged_ns: None,
            });
            acc.add(&s);
        }
        let r = acc.report(facts_with(Some(12_000_000)));
        assert_eq!(r.others_min_ns, Some(2_988_000_000));
        assert!(r.per_cpu[0].sampled);
        assert_eq!(r.per_cpu[0].busy_ns, Some(3_000_000_000));
        assert_eq!(
            r.verdict,
            "noisy: others (tasks, interrupts) took at least 2988.0 ms (99.6 %) of CPU 1 (busy \
             3000.0 ms, the command's own CPU time 12.0 ms); top tasks found: yes[8571] 2550.0 ms"
        );
        assert!(
            r.text()
                .contains("other tasks on the CPU (sampled from /proc, not exact): yes[8571]"),
            "{}",
            r.text()
        );
        // docs/run.md gives the same words
        let readme = include_str!("../../../docs/run.md")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let head = r.verdict.split(" 2988.0").next().unwrap();
        assert!(
            readme.contains(head.trim_start_matches("noisy: ")),
            "{head}"
        );
        assert!(readme.contains(
            "of CPU 1 (busy 2941.9 ms, the command's own CPU time 1.2 ms); top tasks found:"
        ));
    }

    #[test]
    fn traced_cpus_keep_their_exact_verdict_and_the_bound_is_only_reported() {
        let mut acc = Accumulator::new(&[1]);
        acc.add(&quiet_second(30.0));
        let r = acc.report(facts_with(Some(1_000_000)));
        assert_eq!(r.others_min_ns, Some(299_000_000));
        assert_eq!(
            r.verdict, "quiet",
            "the trace saw who ran: its verdict stands"
        );
    }

    #[test]
    fn a_command_that_used_its_cpu_leaves_no_bound_over_the_limit() {
        let mut acc = Accumulator::new(&[1]);
        acc.add(&untraced(quiet_second(100.0)));
        // the command itself was the busy one
        let r = acc.report(facts_with(Some(995_000_000)));
        assert_eq!(r.others_min_ns, Some(5_000_000));
        assert_eq!(r.verdict, "quiet", "0.5 % is under the 1.5 % limit");
        // without its CPU time there is no bound, and no claim
        let mut acc = Accumulator::new(&[1]);
        acc.add(&untraced(quiet_second(100.0)));
        assert_eq!(acc.report(facts_with(None)).others_min_ns, None);
    }

    fn untraced(mut s: Sample) -> Sample {
        s.trace = None;
        s
    }
}

#[cfg(test)]
mod tests_support {

    use super::RunFacts;
    use crate::model::interval::{CpuRates, Interval};
    use crate::noise::traced::Traced;
    use crate::noise::traced::TracedCpu;
    use crate::noise::{CpuVerdict, Judgement, VerdictState};
    use crate::pipeline::Sample;

    /// One second of CPU 1, busy `busy_pct`, judged quiet.
    pub fn quiet_second(busy_pct: f64) -> Sample {
        Sample {
            interval: Interval {
                dt_s: 1.0,
                cpus: vec![CpuRates {
                    cpu: 1,
                    busy_pct: Some(busy_pct),
                    ..CpuRates::default()
                }],
                ..Interval::default()
            },
            judgement: Judgement {
                findings: Vec::new(),
                verdicts: vec![CpuVerdict {
                    cpu: 1,
                    watched: true,
                    state: VerdictState::Quiet,
                    causes: Vec::new(),
                    reason: None,
                    probe_ns: None,
                }],
            },
            watched: vec![1],
            trace: Some(Traced {
                cpus: vec![TracedCpu {
                    cpu: 1,
                    window_ns: 1_000_000_000,
                    owner_given: true,
                    ..TracedCpu::default()
                }],
                ..Traced::default()
            }),
            ..Sample::default()
        }
    }

    /// A 3 s run of `sleep 3` on CPU 1 whose children used `cpu_ns`.
    pub fn facts_with(cpu_ns: Option<u64>) -> RunFacts {
        RunFacts {
            command: vec!["sleep".into(), "3".into()],
            pid: 4000,
            cpus: vec![1],
            seconds: 3.0,
            exit: Some(0),
            signal: None,
            command_switches: None,
            command_migrations: None,
            trace_missing: None,
            command_cpu_ns: cpu_ns,
            others_limit_pct: 1.5,
            own_ipis: None,
            own_ipis_missing: None,
        }
    }
}

#[cfg(test)]
mod fold_tests {
    use std::collections::BTreeMap;

    use super::{TASKS_KEPT, TaskTotal, fold_tasks};

    /// Past twice [`TASKS_KEPT`] tasks, the shortest are folded into one
    /// count and time: the longest stay by name and no time is lost.
    #[test]
    fn a_run_keeps_its_longest_tasks_by_name_and_counts_the_rest() {
        let mut m = BTreeMap::new();
        let mut more = (0, 0);
        let n = 2 * TASKS_KEPT as u32 + 1;
        for pid in 1..=n {
            m.insert(
                (pid, "true".to_string()),
                TaskTotal {
                    comm: "true".into(),
                    pid,
                    ns: u64::from(pid) * 1000,
                    slices: 1,
                    charged_ns: None,
                    cgroup: None,
                },
            );
            fold_tasks(&mut m, &mut more);
        }
        assert_eq!(m.len(), TASKS_KEPT);
        // the shortest went: pids 1 ..= n - TASKS_KEPT
        let gone = u64::from(n) - TASKS_KEPT as u64;
        assert_eq!(more, (gone, 1000 * gone * (gone + 1) / 2));
        assert!(m.contains_key(&(n, "true".to_string())));
        assert!(!m.contains_key(&(1, "true".to_string())));
        let kept: u64 = m.values().map(|t| t.ns).sum();
        assert_eq!(kept + more.1, 1000 * u64::from(n) * u64::from(n + 1) / 2);
    }
}

#[cfg(test)]
mod cgroup_tests {
    use super::{CpuRun, TaskTotal, by_cgroup};

    fn task(pid: u32, ms: u64, cgroup: Option<&str>) -> TaskTotal {
        TaskTotal {
            comm: "t".into(),
            pid,
            ns: ms * 1_000_000,
            slices: 1,
            charged_ns: None,
            cgroup: cgroup.map(String::from),
        }
    }

    /// The run report groups the other tasks of a CPU by the cgroup an
    /// operator manages, longest first, and leaves the root cgroup out.
    #[test]
    fn other_tasks_are_grouped_by_cgroup_longest_first() {
        let pod = "/kubepods/burstable/pod7f9c1b2e-1111-2222-3333-444455556666/1a2b3c4d5e6f77778888999900001111222233334444555566667777aaaabbbb";
        let c = CpuRun {
            cpu: 3,
            intruders: vec![
                task(1, 150, Some(pod)),
                task(2, 58, Some(pod)),
                task(3, 40, Some("/system.slice/backup.service")),
                task(4, 500, Some("/")),
                task(5, 9, None),
            ],
            ..CpuRun::default()
        };
        assert_eq!(
            by_cgroup(&c).as_deref(),
            Some(
                "by cgroup on CPU 3: pod 7f9c1b2e…/container 1a2b3c4d5e6f… 208.00 ms, \
                 backup.service 40.00 ms"
            )
        );
        let none = CpuRun {
            intruders: vec![task(4, 500, Some("/")), task(5, 9, None)],
            ..CpuRun::default()
        };
        assert_eq!(by_cgroup(&none), None);
    }
}
