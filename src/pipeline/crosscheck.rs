//! Each traced CPU's window held against the interval's cpuidle residency
//! and /proc/interrupts LOC count ([`crate::trace::crosscheck`]): the
//! driver drains the tracer right after the snapshot, so both cover the
//! same span.

use crate::interval::Interval;
use crate::noise::Traced;
use crate::trace::crosscheck::{CpuCheck, disagreements};

/// What disagrees on any traced CPU, one clause each.
pub fn check(t: &Traced, iv: &Interval) -> Vec<String> {
    let mut out = Vec::new();
    for c in &t.cpus {
        let Some(r) = iv.cpus.iter().find(|r| r.cpu == c.cpu) else {
            continue;
        };
        // residency covers the interval only when read in it, in every state
        let residency: Option<f64> = (r.window_s.is_none() && !r.idle.is_empty())
            .then(|| r.idle.iter().map(|s| s.pct).sum::<Option<f64>>())
            .flatten();
        let window = c.window_ns;
        let cpuidle_busy_ns =
            residency.map(|pct| (window as f64 * (1.0 - pct / 100.0)).max(0.0) as u64);
        let loc_traced = c
            .stolen
            .iter()
            .filter(|s| s.kind == "timer")
            .map(|s| s.count)
            .sum();
        let loc_counted = r.loc_per_s.map(|v| (v * iv.dt_s).round() as u64);
        out.extend(disagreements(&CpuCheck {
            cpu: c.cpu,
            window_ns: window,
            traced_busy_ns: window.saturating_sub(c.idle_ns + c.unknown_ns),
            slack_ns: c.idle_edge_ns + c.unknown_ns,
            cpuidle_busy_ns,
            loc_traced,
            loc_counted,
        }));
    }
    out
}
