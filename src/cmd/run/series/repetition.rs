//! One run of a series as its row: its times, what it had of its CPUs,
//! what others took there (the top task named), and whether that makes it
//! quiet or noisy. Names carry their unit (`wall_s`, `others_s`).

use std::collections::BTreeMap;

use serde::Serialize;

use super::super::seen::RunReport;
use super::super::session::Stamp;
use super::super::settle::Settled;

/// What took the most from a run's CPUs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Culprit {
    /// Another task.
    Task {
        /// `comm[pid]`.
        name: String,
        /// Its process id.
        pid: u32,
        /// Its time on the command's CPUs, s.
        s: f64,
        /// The CPUs it ran on, of the command's.
        cpus: Vec<u32>,
    },
    /// Interrupts, all sources.
    Interrupts {
        /// The costliest source (`timer local_timer`).
        most: String,
        /// Their time on the command's CPUs, s.
        s: f64,
    },
    /// The host (steal time).
    Host {
        /// Steal on the command's CPUs, s.
        s: f64,
    },
}

impl Culprit {
    /// Who, as a sentence names it (`sh[1234]`, `interrupts (most: timer
    /// local_timer)`, `the host`).
    pub fn label(&self) -> String {
        match self {
            Culprit::Task { name, .. } => name.clone(),
            Culprit::Interrupts { most, .. } => format!("interrupts (most: {most})"),
            Culprit::Host { .. } => "the host (steal)".into(),
        }
    }

    /// What makes two runs' culprits the same: a task's process id, else
    /// the kind.
    pub fn key(&self) -> String {
        match self {
            Culprit::Task { pid, .. } => format!("task {pid}"),
            Culprit::Interrupts { .. } => "interrupts".into(),
            Culprit::Host { .. } => "host".into(),
        }
    }

    /// Its time, s.
    pub fn s(&self) -> f64 {
        match self {
            Culprit::Task { s, .. } | Culprit::Interrupts { s, .. } | Culprit::Host { s } => *s,
        }
    }
}

/// A run's verdict in a series: whether others took more of its CPUs
/// than the watched limits allow while it wanted them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunVerdict {
    /// Others took at most the limit.
    Quiet,
    /// Others took more.
    Noisy,
    /// Not known (see `verdict_unknown`).
    Unknown,
}

impl RunVerdict {
    /// Its word.
    pub fn label(self) -> &'static str {
        match self {
            RunVerdict::Quiet => "quiet",
            RunVerdict::Noisy => "noisy",
            RunVerdict::Unknown => "unknown",
        }
    }
}

/// One run of the series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Repetition {
    /// Its number, from 1.
    pub run: u32,
    /// The command's process id in this run.
    pub pid: u32,
    /// When it started, `CLOCK_MONOTONIC` s.
    pub start_monotonic_s: f64,
    /// When it ended, `CLOCK_MONOTONIC` s.
    pub end_monotonic_s: f64,
    /// When it started, wall clock, s since the epoch.
    pub start_unix_s: f64,
    /// When it ended, wall clock, s since the epoch.
    pub end_unix_s: f64,
    /// Its wall time, s.
    pub wall_s: f64,
    /// The command's own CPU time (user and system), s.
    pub cpu_s: Option<f64>,
    /// Its share of its CPUs while it was runnable, %.
    pub share_pct: Option<f64>,
    /// Time other tasks ran on its CPUs (traced), s.
    pub others_s: Option<f64>,
    /// Time interrupts took on its CPUs (traced), s.
    pub irq_s: Option<f64>,
    /// The host's steal on its CPUs (/proc/stat), s.
    pub steal_s: Option<f64>,
    /// What took the most of it.
    pub top: Option<Culprit>,
    /// Its tasks' run-queue waits, s.
    pub waited_s: Option<f64>,
    /// Interrupts while it ran, s.
    pub interrupted_s: Option<f64>,
    /// What others took from it while it was runnable, s.
    pub taken_s: Option<f64>,
    /// Its estimated time alone: `wall_s` − `taken_s`.
    pub time_alone_s: Option<f64>,
    /// Why there is no time alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_alone_unknown: Option<String>,
    /// Its tasks' migrations.
    pub migrations: Option<u64>,
    /// Exits from idle states on its CPUs while it ran.
    pub cstate_exits: Option<u64>,
    /// Those exits' latency summed, µs, where each state's is known.
    pub cstate_exit_latency_us: Option<f64>,
    /// quiet, noisy or unknown.
    pub verdict: RunVerdict,
    /// Why the verdict is unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict_unknown: Option<String>,
    /// The watched CPUs' rules over the run (`quiet`, `noisy: …`), as a
    /// single run reports them.
    pub rules_verdict: String,
    /// Its exit code.
    pub exit_code: Option<i32>,
    /// The signal that ended it.
    pub signal: Option<i32>,
    /// How the wait for idle CPUs before it ended.
    pub settle: Option<Settled>,
    /// Slower than the median by more than the outlier limit.
    pub outlier: bool,
    /// Its wall time less the quiet runs' median, s (outliers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excess_s: Option<f64>,
    /// What explains it (outliers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
    /// Whether the noise it met explains it (outliers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explained: Option<bool>,
}

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// The task, interrupts or steal that took the most of the run's CPUs.
fn top_of(rep: &RunReport) -> Option<Culprit> {
    // by process: its threads may carry names of their own (a compiler's
    // workers), and it is moved off as one
    let mut tasks: BTreeMap<u32, (u64, Vec<u32>, &str, u64)> = BTreeMap::new();
    let (mut irq, mut most): (u64, Option<(&str, &str, u64)>) = (0, None);
    let mut steal = 0.0;
    for c in &rep.per_cpu {
        for t in &c.intruders {
            let e = tasks.entry(t.pid).or_insert((0, Vec::new(), &t.comm, 0));
            e.0 += t.ns;
            if !e.1.contains(&c.cpu) {
                e.1.push(c.cpu);
            }
            // named by its thread that ran longest
            if t.ns > e.3 {
                (e.2, e.3) = (&t.comm, t.ns);
            }
        }
        for (kind, name, ns, _, _) in &c.stolen {
            irq += ns;
            if most.is_none_or(|m| *ns > m.2) {
                most = Some((kind, name, *ns));
            }
        }
        steal += c.steal_pct.unwrap_or(0.0) / 100.0 * c.seconds;
    }
    let task = tasks
        .into_iter()
        .max_by_key(|(pid, v)| (v.0, std::cmp::Reverse(*pid)))
        .map(|(pid, (ns, cpus, comm, _))| Culprit::Task {
            name: format!("{comm}[{pid}]"),
            pid,
            s: secs(ns),
            cpus,
        });
    let irq = most.map(|(kind, name, _)| Culprit::Interrupts {
        most: format!("{kind} {name}"),
        s: secs(irq),
    });
    let host = (steal > 0.0).then_some(Culprit::Host { s: steal });
    [task, irq, host]
        .into_iter()
        .flatten()
        .filter(|c| c.s() > 0.0)
        .max_by(|a, b| a.s().total_cmp(&b.s()))
}

impl Repetition {
    /// The row of run `run`, from its report.
    pub fn of(
        run: u32,
        rep: &RunReport,
        started: Stamp,
        ended: Stamp,
        settle: Option<Settled>,
    ) -> Repetition {
        let f = &rep.facts;
        let traced =
            !rep.per_cpu.is_empty() && rep.per_cpu.iter().all(|c| c.traced_ns > 0 && !c.sampled);
        let sum = |g: &dyn Fn(&super::super::seen::CpuRun) -> u64| -> Option<f64> {
            traced.then(|| secs(rep.per_cpu.iter().map(g).sum()))
        };
        let others_s = sum(&|c| c.intruders.iter().map(|i| i.ns).sum());
        let irq_s = sum(&|c| c.stolen.iter().map(|x| x.2).sum());
        let steal_s = if rep.per_cpu.is_empty() {
            None
        } else {
            rep.per_cpu
                .iter()
                .map(|c| c.steal_pct.map(|p| p / 100.0 * c.seconds))
                .sum()
        };
        let b = rep.bottom_line.as_ref();
        let (exits, latency) = cstate_exits(rep);
        let mut r = Repetition {
            run,
            pid: f.pid,
            start_monotonic_s: secs(started.mono_ns),
            end_monotonic_s: secs(ended.mono_ns),
            start_unix_s: secs(started.wall_ns),
            end_unix_s: secs(ended.wall_ns),
            wall_s: f.seconds,
            cpu_s: f.command_cpu_ns.map(secs),
            share_pct: b.and_then(|b| b.share_pct),
            others_s,
            irq_s,
            steal_s,
            top: if traced { top_of(rep) } else { None },
            waited_s: b.map(|b| b.waited_s),
            interrupted_s: b.map(|b| b.interrupted_s),
            taken_s: b.map(|b| b.taken_s),
            time_alone_s: b.map(|b| b.time_alone_s),
            time_alone_unknown: rep.bottom_line_unknown.clone(),
            migrations: f.command_migrations,
            cstate_exits: exits,
            cstate_exit_latency_us: latency,
            verdict: RunVerdict::Unknown,
            verdict_unknown: None,
            rules_verdict: rep.verdict.clone(),
            exit_code: f.exit,
            signal: f.signal,
            settle,
            outlier: false,
            excess_s: None,
            explanation: None,
            explained: None,
        };
        r.judge(f.others_limit_pct);
        r
    }

    /// Others' time on its CPUs in all: tasks, interrupts, steal, s.
    pub fn others_total_s(&self) -> Option<f64> {
        Some(self.others_s? + self.irq_s? + self.steal_s.unwrap_or(0.0))
    }

    /// Quiet when others took at most `limit_pct` of its wall time while
    /// it was runnable, noisy above; where that is not known, quiet when
    /// others took no more than that on its CPUs in all (a bound).
    fn judge(&mut self, limit_pct: f64) {
        let pct = |s: f64| 100.0 * s / self.wall_s.max(f64::MIN_POSITIVE);
        (self.verdict, self.verdict_unknown) = match (self.taken_s, self.others_total_s()) {
            (Some(t), _) if pct(t) > limit_pct => (RunVerdict::Noisy, None),
            (Some(_), _) => (RunVerdict::Quiet, None),
            (None, Some(o)) if pct(o) <= limit_pct => (RunVerdict::Quiet, None),
            (None, Some(o)) => (
                RunVerdict::Unknown,
                Some(format!(
                    "others took {:.1} % of its CPUs' time, and how much of it while the \
                     command was runnable is not known: {}",
                    pct(o),
                    self.time_alone_unknown.as_deref().unwrap_or("no estimate")
                )),
            ),
            (None, None) => (
                RunVerdict::Unknown,
                Some("who ran on its CPUs was not traced".into()),
            ),
        };
    }

    /// Whether it exited with 0.
    pub fn succeeded(&self) -> bool {
        self.exit_code == Some(0)
    }
}

/// Idle exits on the run's CPUs: cpuidle's entries where the machine has
/// states (with their latencies summed where each is known), else the
/// kernel's count of `cpu_idle` exits.
fn cstate_exits(rep: &RunReport) -> (Option<u64>, Option<f64>) {
    let states: Vec<_> = rep.per_cpu.iter().flat_map(|c| &c.cstates).collect();
    if !states.is_empty() {
        let exits: f64 = states.iter().map(|s| s.entries).sum();
        let latency = states
            .iter()
            .map(|s| s.latency_us.map(|l| l as f64 * s.entries))
            .sum::<Option<f64>>();
        return (Some(exits.round() as u64), latency);
    }
    let kernel = rep
        .per_cpu
        .iter()
        .map(|c| c.idle_exits)
        .sum::<Option<u64>>();
    (kernel, None)
}
