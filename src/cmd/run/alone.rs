//! A run's bottom line: the share of its CPUs the command had while it
//! wanted them, and an estimate of how long it would have taken alone.
//!
//! The time others took from the command is what kept it from running
//! while it was runnable:
//! - its tasks' run-queue waits: runnable, not running, while another task
//!   ran there (the scheduler's `run_delay`, the second field of
//!   /proc/PID/task/TID/schedstat);
//! - the interrupts that ran while one of its tasks was the one running
//!   (traced on its CPUs; not in the waits);
//! - what the host stole while one of its tasks ran: its traced time on
//!   its CPUs runs on the monotonic clock, which goes on while the host
//!   runs others, and its schedstat run time is the scheduler's, from
//!   which a paravirtualised kernel leaves steal out; the difference is
//!   held to /proc/stat's steal on its CPUs (good to a tick, 10 ms, per
//!   CPU). Where that cannot be had, /proc/stat's steal in the share of
//!   the CPUs' busy time that was the command's. (Steal while another task
//!   ran is in the waits already.)
//!
//! It is held to what others took on its CPUs in all (other tasks,
//! interrupts, steal): two of the command's own threads waiting for one
//! CPU are not others' doing. Then time alone = wall − taken, and the
//! share = its CPU time / (its CPU time + taken).

use std::fmt::Write as _;

use serde::Serialize;

use super::seen::{CpuRun, RunReport, duration};
use crate::base::cpulist;

/// How the estimate is made, as the report says it.
pub const HOW: &str = "time alone = wall time − what others took while the command was \
                       runnable: its tasks' run-queue waits (/proc/PID/task/TID/schedstat), \
                       the interrupts that hit it (traced) and what the host stole while it \
                       ran (its traced time less its schedstat run time, at most /proc/stat's \
                       steal); at most what others took on its CPUs";

/// /proc/stat counts steal in ticks of 10 ms (`USER_HZ` 100).
const TICK_NS: u64 = 10_000_000;

/// What one run met, in the figures the estimate needs (ns).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Met {
    /// Wall time of the run.
    pub wall_ns: u64,
    /// The command's own CPU time (user and system, getrusage).
    pub cpu_ns: Option<u64>,
    /// Its tasks' run time (schedstat: without steal on a paravirtualised
    /// kernel) and run-queue waits, or why they are not known.
    pub seen_ns: Result<(u64, u64), String>,
    /// Its tasks' time between their switches on its CPUs (traced, on the
    /// monotonic clock: with what the host stole meanwhile).
    pub on_cpu_ns: Option<u64>,
    /// How many CPUs it had.
    pub cpus: u64,
    /// Interrupts while one of its tasks was running on its CPUs.
    pub interrupted_ns: Option<u64>,
    /// The host's steal on its CPUs.
    pub steal_ns: Option<u64>,
    /// Its CPUs' busy time.
    pub busy_ns: Option<u64>,
    /// Other tasks' time on its CPUs.
    pub others_ns: Option<u64>,
    /// Every interrupt's time on its CPUs.
    pub irq_ns: Option<u64>,
}

/// The estimate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BottomLine {
    /// Its CPU time over its CPU time plus what others took from it, %;
    /// `None` where it neither ran nor waited.
    pub share_pct: Option<f64>,
    /// Wall time less what others took from it, s.
    pub time_alone_s: f64,
    /// What others took from it, s (the three parts below, held to
    /// `others_total_s`).
    pub taken_s: f64,
    /// Its run-queue waits, s.
    pub waited_s: f64,
    /// Interrupts that hit it, s.
    pub interrupted_s: f64,
    /// What the host stole while it ran, s; `None` where not known.
    pub steal_s: Option<f64>,
    /// What others took on its CPUs in all (tasks, interrupts, steal), s.
    pub others_total_s: f64,
    /// Whether `taken_s` was held to `others_total_s`.
    pub held: bool,
}

fn s(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// The estimate, or why it cannot be made.
pub fn estimate(m: &Met) -> Result<BottomLine, String> {
    let (run, waited) = m.seen_ns.clone()?;
    let interrupted = m
        .interrupted_ns
        .ok_or("who ran on its CPUs was not traced: the interrupts that hit it are not known")?;
    let others = m
        .others_ns
        .ok_or("other tasks on its CPUs were not traced")?;
    let irq = m.irq_ns.ok_or("interrupts on its CPUs were not traced")?;
    let steal = match m.on_cpu_ns {
        // its traced time (with steal and without interrupts) against its
        // run time (without steal; with the interrupts, on a kernel without
        // IRQ_TIME_ACCOUNTING, else the cap keeps them out)
        Some(on) => {
            let d = (on + interrupted).saturating_sub(run);
            Some(
                m.steal_ns
                    .map_or(d, |st| d.min(st + TICK_NS * m.cpus.max(1))),
            )
        }
        // its share of the busy time (all of it where that is not known)
        None => m.steal_ns.map(|st| match (m.cpu_ns, m.busy_ns) {
            (Some(c), Some(b)) if b > 0 => {
                (u128::from(st) * u128::from(c.min(b)) / u128::from(b)) as u64
            }
            _ => st,
        }),
    };
    let raw = waited + interrupted + steal.unwrap_or(0);
    let total = others + irq + m.steal_ns.unwrap_or(0);
    let taken = raw.min(total).min(m.wall_ns);
    let share_pct = m.cpu_ns.and_then(|c| {
        let want = c + taken;
        (want > 0).then(|| 100.0 * c as f64 / want as f64)
    });
    Ok(BottomLine {
        share_pct,
        time_alone_s: s(m.wall_ns - taken),
        taken_s: s(taken),
        waited_s: s(waited),
        interrupted_s: s(interrupted),
        steal_s: steal.map(s),
        others_total_s: s(total),
        held: taken < raw,
    })
}

/// The figures of a run's report the estimate needs.
pub fn met_of(rep: &RunReport, seen_ns: Result<(u64, u64), String>) -> Met {
    let cpus = &rep.per_cpu;
    let traced = !cpus.is_empty() && cpus.iter().all(|c| c.traced_ns > 0 && !c.sampled);
    let sum = |f: &dyn Fn(&CpuRun) -> Option<u64>| -> Option<u64> {
        if cpus.is_empty() {
            return None;
        }
        cpus.iter().map(f).sum()
    };
    Met {
        wall_ns: (rep.facts.seconds * 1e9) as u64,
        cpu_ns: rep.facts.command_cpu_ns,
        seen_ns,
        on_cpu_ns: sum(&|c| c.command_ns),
        cpus: cpus.len() as u64,
        interrupted_ns: sum(&|c| c.command_irq_ns),
        steal_ns: sum(&|c| c.steal_pct.map(|p| (p / 100.0 * c.seconds * 1e9) as u64)),
        busy_ns: sum(&|c| c.busy_ns),
        others_ns: traced
            .then(|| sum(&|c| Some(c.intruders.iter().map(|i| i.ns).sum())))
            .flatten(),
        irq_ns: traced
            .then(|| sum(&|c| Some(c.stolen.iter().map(|x| x.2).sum())))
            .flatten(),
    }
}

impl RunReport {
    /// Estimates the command's share of its CPUs and its time alone from
    /// the report's figures and its tasks' waits.
    pub fn estimate_alone(&mut self, seen: Result<(u64, u64), String>) {
        match estimate(&met_of(self, seen)) {
            Ok(b) => {
                self.bottom_line = Some(b);
                self.bottom_line_unknown = None;
            }
            Err(why) => {
                self.bottom_line = None;
                self.bottom_line_unknown = Some(why);
            }
        }
    }

    /// The bottom line as the report says it, with how it is made.
    pub(super) fn bottom_line_text(&self, o: &mut String) {
        let ns = |s: f64| duration((s * 1e9).round() as u64);
        if let Some(why) = &self.bottom_line_unknown {
            let _ = writeln!(o, "bottom line: unknown: {why}");
            return;
        }
        let Some(b) = &self.bottom_line else { return };
        let cpus = cpulist::format(&self.facts.cpus);
        let share = b.share_pct.map_or_else(
            || "the command neither ran nor waited".to_string(),
            |p| format!("the command had {p:.0} % of CPU {cpus} while it was runnable"),
        );
        let steal = match b.steal_s {
            None => "steal unknown".to_string(),
            Some(s) if s <= 0.0 => "no steal".to_string(),
            Some(s) => format!("the host stole {}", ns(s)),
        };
        let held = if b.held {
            format!("; held to what others took on CPU {cpus} in all")
        } else {
            String::new()
        };
        let _ = writeln!(
            o,
            "bottom line: {share}; alone it would take about {}, not {}: others took {} from it \
             (it waited {} for the CPU, interrupts hit it for {}, {steal}{held})",
            ns(b.time_alone_s),
            ns(self.facts.seconds),
            ns(b.taken_s),
            ns(b.waited_s),
            ns(b.interrupted_s),
        );
        let _ = writeln!(o, "  how: {HOW}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// A 2.02 s run beside a loop on its CPU: it waited 950 ms, the tick
    /// and a disk took 20 ms while it ran, the host stole 10 ms of CPU 1
    /// and 6 ms of that while it ran (its 1026 ms traced and 20 ms
    /// interrupted against its 1040 ms of run time).
    fn beside_a_loop() -> Met {
        Met {
            wall_ns: 2020 * MS,
            cpu_ns: Some(1040 * MS),
            seen_ns: Ok((1040 * MS, 950 * MS)),
            on_cpu_ns: Some(1026 * MS),
            cpus: 1,
            interrupted_ns: Some(20 * MS),
            steal_ns: Some(10 * MS),
            busy_ns: Some(2000 * MS),
            others_ns: Some(940 * MS),
            irq_ns: Some(30 * MS),
        }
    }

    #[test]
    fn time_alone_is_the_wall_time_less_the_waits_the_interrupts_and_its_steal() {
        let b = estimate(&beside_a_loop()).unwrap();
        // 950 + 20 + 6
        assert!((b.taken_s - 0.976).abs() < 1e-9, "{b:?}");
        assert!((b.time_alone_s - 1.044).abs() < 1e-9, "{b:?}");
        assert!((b.steal_s.unwrap() - 0.006).abs() < 1e-9);
        // 1040 / (1040 + 976)
        assert!(
            (b.share_pct.unwrap() - 104_000.0 / 2016.0).abs() < 1e-9,
            "{b:?}"
        );
        assert!((b.others_total_s - 0.98).abs() < 1e-9);
        assert!(!b.held);
    }

    #[test]
    fn the_steal_it_met_is_held_to_proc_stat_and_taken_in_its_share_untraced() {
        // its traced time passes its run time by far more than the host
        // stole (a task it started, not seen by schedstat): held to the
        // 10 ms /proc/stat saw and a tick
        let m = Met {
            on_cpu_ns: Some(1300 * MS),
            ..beside_a_loop()
        };
        assert!((estimate(&m).unwrap().steal_s.unwrap() - 0.020).abs() < 1e-9);
        // no traced time of its own: the steal in its share of the busy
        // time, 10 ms × 1040/2000
        let m = Met {
            on_cpu_ns: None,
            ..beside_a_loop()
        };
        assert!((estimate(&m).unwrap().steal_s.unwrap() - 0.0052).abs() < 1e-9);
    }

    #[test]
    fn what_was_taken_is_held_to_what_others_took_on_its_cpus() {
        // two of its own threads waited for each other: 1.5 s of waits,
        // while others took only 40 ms of its CPUs
        let m = Met {
            seen_ns: Ok((1040 * MS, 1500 * MS)),
            others_ns: Some(5 * MS),
            irq_ns: Some(25 * MS),
            ..beside_a_loop()
        };
        let b = estimate(&m).unwrap();
        assert!(b.held);
        assert!((b.taken_s - 0.040).abs() < 1e-9, "{b:?}");
        assert!((b.time_alone_s - 1.980).abs() < 1e-9, "{b:?}");
    }

    #[test]
    fn a_command_that_slept_keeps_its_sleep_in_its_time_alone() {
        // sleep 1 beside a loop: it waited 0.2 ms once, woken
        let m = Met {
            wall_ns: 1000 * MS,
            cpu_ns: Some(MS),
            seen_ns: Ok((MS, MS / 5)),
            on_cpu_ns: Some(MS),
            cpus: 1,
            interrupted_ns: Some(0),
            steal_ns: Some(0),
            busy_ns: Some(1000 * MS),
            others_ns: Some(998 * MS),
            irq_ns: Some(MS),
        };
        let b = estimate(&m).unwrap();
        assert!((b.time_alone_s - 0.9998).abs() < 1e-9, "{b:?}");
        // it had the CPU 1 ms of the 1.2 ms it wanted it
        assert!((b.share_pct.unwrap() - 100.0 / 1.2).abs() < 1e-9, "{b:?}");
    }

    #[test]
    fn without_waits_or_a_trace_there_is_no_estimate_and_the_reason_is_said() {
        let m = Met {
            seen_ns: Err("no schedstat of its tasks could be read".into()),
            ..beside_a_loop()
        };
        assert_eq!(
            estimate(&m).unwrap_err(),
            "no schedstat of its tasks could be read"
        );
        let m = Met {
            interrupted_ns: None,
            ..beside_a_loop()
        };
        assert!(estimate(&m).unwrap_err().contains("not traced"));
        // unknown steal is said as unknown, the rest stands
        let m = Met {
            steal_ns: None,
            on_cpu_ns: None,
            ..beside_a_loop()
        };
        let b = estimate(&m).unwrap();
        assert_eq!(b.steal_s, None);
        assert!((b.taken_s - 0.970).abs() < 1e-9, "{b:?}");
    }
}
