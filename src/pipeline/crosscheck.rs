//! Each traced CPU's window held against the interval's cpuidle residency
//! and /proc/interrupts LOC count ([`crate::trace::crosscheck`]): the
//! driver drains the tracer right after the snapshot, so both cover the
//! same span.

use crate::interval::{CpuRates, Interval};
use crate::noise::{Traced, TracedCpu};
use crate::trace::crosscheck::{CpuCheck, disagreements};

/// What disagrees on any traced CPU, one clause each.
pub fn check(t: &Traced, iv: &Interval) -> Vec<String> {
    // a sampled CPU has no traced idle time to hold against cpuidle
    t.cpus
        .iter()
        .filter(|c| !c.sampled)
        .filter_map(|c| Some(cpu_check(c, iv.cpu(c.cpu)?, iv.dt_s)))
        .flat_map(|c| disagreements(&c))
        .collect()
}

/// One traced CPU's figures beside the kernel's counts for it.
fn cpu_check(c: &TracedCpu, r: &CpuRates, dt_s: f64) -> CpuCheck {
    // residency covers the interval only when read in it, in every state
    let residency: Option<f64> = (r.window_s.is_none() && !r.idle.is_empty())
        .then(|| r.idle.iter().map(|s| s.pct).sum::<Option<f64>>())
        .flatten();
    let window = c.window_ns;
    CpuCheck {
        cpu: c.cpu,
        window_ns: window,
        traced_busy_ns: window.saturating_sub(c.idle_ns + c.unknown_ns),
        slack_ns: c.idle_edge_ns + c.unknown_ns,
        cpuidle_busy_ns: residency.map(|pct| (window as f64 * (1.0 - pct / 100.0)).max(0.0) as u64),
        loc_traced: c
            .stolen
            .iter()
            .filter(|s| s.kind == "timer")
            .map(|s| s.count)
            .sum(),
        loc_counted: r.loc_per_s.map(|v| (v * dt_s).round() as u64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interval::IdleRate;
    use crate::noise::traced::StolenBy;

    fn state(name: &str, pct: Option<f64>) -> IdleRate {
        IdleRate {
            name: name.into(),
            pct,
            per_s: None,
            above_per_s: None,
            below_per_s: None,
            latency_us: None,
            residency_us: None,
            disabled: None,
        }
    }

    #[test]
    fn a_cpu_is_checked_against_its_residency_and_loc_count_over_the_interval() {
        let traced = TracedCpu {
            cpu: 1,
            window_ns: 2_000_000_000,
            stolen: vec![StolenBy {
                kind: "timer".into(),
                name: "local_timer".into(),
                irq: None,
                ns: 2_600_000,
                count: 287,
                max_ns: 30_000,
            }],
            idle_ns: 1_500_000_000,
            unknown_ns: 1_000,
            idle_edge_ns: 20_000,
            ..TracedCpu::default()
        };
        let rates = CpuRates {
            cpu: 1,
            idle: vec![state("POLL", Some(4.0)), state("haltpoll", Some(60.0))].into(),
            loc_per_s: Some(11_438.5),
            ..CpuRates::default()
        };
        assert_eq!(
            cpu_check(&traced, &rates, 2.0),
            CpuCheck {
                cpu: 1,
                window_ns: 2_000_000_000,
                traced_busy_ns: 499_999_000,
                slack_ns: 21_000,
                cpuidle_busy_ns: Some(720_000_000),
                loc_traced: 287,
                loc_counted: Some(22_877),
            }
        );
        // a state without its figure, or figures of another span: unknown
        let rates = CpuRates {
            idle: vec![state("POLL", Some(4.0)), state("haltpoll", None)].into(),
            ..rates
        };
        assert_eq!(cpu_check(&traced, &rates, 2.0).cpuidle_busy_ns, None);
        let rates = CpuRates {
            idle: vec![state("haltpoll", Some(60.0))].into(),
            window_s: Some(3.0),
            loc_per_s: None,
            ..rates
        };
        let c = cpu_check(&traced, &rates, 2.0);
        assert_eq!((c.cpuidle_busy_ns, c.loc_counted), (None, None));
    }
}
