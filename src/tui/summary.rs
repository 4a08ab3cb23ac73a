//! The Cores view's summary row, turbostat's `-` row: one line for every
//! CPU listed. Clocks and busy share are the mean over the CPUs that have
//! them, per-second counts are the sum, each idle state's residency is the
//! mean and its entries the sum, temperature the hottest. A figure no CPU
//! has stays unknown.

use std::sync::Arc;

use crate::model::interval::{CpuRates, IdleRate};

fn mean(v: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let known: Vec<f64> = v.flatten().collect();
    (!known.is_empty()).then(|| known.iter().sum::<f64>() / known.len() as f64)
}

fn sum(v: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    v.flatten().fold(None, |a, x| Some(a.unwrap_or(0.0) + x))
}

fn max(v: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    v.flatten().reduce(f64::max)
}

/// Sums up `rows` into one row (its `cpu` is `u32::MAX`: no CPU).
pub fn of(rows: &[&CpuRates]) -> CpuRates {
    let m = |f: fn(&CpuRates) -> Option<f64>| mean(rows.iter().map(|r| f(r)));
    let s = |f: fn(&CpuRates) -> Option<f64>| sum(rows.iter().map(|r| f(r)));
    // idle states line up by position where every CPU names the same ones
    let idle: Vec<IdleRate> = rows.first().map_or_else(Vec::new, |first| {
        first
            .idle
            .iter()
            .enumerate()
            .map(|(i, st)| {
                let same = || {
                    rows.iter()
                        .filter_map(|r| r.idle.get(i))
                        .filter(|x| x.name == st.name)
                };
                IdleRate {
                    pct: mean(same().map(|x| x.pct)),
                    per_s: sum(same().map(|x| x.per_s)),
                    above_per_s: sum(same().map(|x| x.above_per_s)),
                    below_per_s: sum(same().map(|x| x.below_per_s)),
                    ..st.clone()
                }
            })
            .collect()
    });
    let hw_cstates = rows.first().map_or_else(Vec::new, |first| {
        first
            .hw_cstates
            .iter()
            .enumerate()
            .map(|(i, (n, _))| {
                (
                    *n,
                    mean(rows.iter().map(|r| r.hw_cstates.get(i).and_then(|x| x.1))),
                )
            })
            .collect()
    });
    // IPC of all CPUs: ΣΔinstructions/ΣΔcycles, not a mean of IPCs
    let (instructions, cycles) = crate::model::interval::total_counts(rows.iter().copied());
    CpuRates {
        cpu: u32::MAX,
        avg_mhz: m(|r| r.avg_mhz),
        bzy_mhz: m(|r| r.bzy_mhz),
        busy_pct: m(|r| r.busy_pct),
        tsc_mhz: m(|r| r.tsc_mhz),
        idle: Arc::from(idle),
        hw_cstates,
        irq_per_s: s(|r| r.irq_per_s),
        loc_per_s: s(|r| r.loc_per_s),
        res_per_s: s(|r| r.res_per_s),
        cal_per_s: s(|r| r.cal_per_s),
        tlb_per_s: s(|r| r.tlb_per_s),
        ipi_per_s: s(|r| r.ipi_per_s),
        dev_per_s: s(|r| r.dev_per_s),
        nmi_per_s: s(|r| r.nmi_per_s),
        softirq_per_s: s(|r| r.softirq_per_s),
        csw_per_s: s(|r| r.csw_per_s),
        mig_per_s: s(|r| r.mig_per_s),
        instructions,
        cycles,
        ipc: crate::model::interval::ipc(instructions, cycles),
        temp_c: max(rows.iter().map(|r| r.temp_c)),
        ..CpuRates::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cpu: u32, busy: Option<f64>, irq: Option<f64>, c6: Option<f64>) -> CpuRates {
        CpuRates {
            cpu,
            busy_pct: busy,
            avg_mhz: busy.map(|b| b * 30.0),
            irq_per_s: irq,
            temp_c: Some(40.0 + f64::from(cpu)),
            idle: Arc::from(vec![IdleRate {
                name: "C6".into(),
                pct: c6,
                per_s: c6.map(|p| p * 2.0),
                above_per_s: None,
                below_per_s: None,
                latency_us: Some(133),
                residency_us: Some(600),
                disabled: None,
            }]),
            ..CpuRates::default()
        }
    }

    #[test]
    fn means_of_clocks_sums_of_rates_hottest_temperature_unknown_stays_unknown() {
        let rows = [
            row(0, Some(20.0), Some(100.0), Some(80.0)),
            row(1, Some(60.0), None, Some(40.0)),
            row(2, None, Some(300.0), None),
        ];
        let refs: Vec<&CpuRates> = rows.iter().collect();
        let a = of(&refs);
        // the mean over the two CPUs with a busy figure, not over three
        assert_eq!(a.busy_pct, Some(40.0));
        assert_eq!(a.avg_mhz, Some(1200.0));
        assert_eq!(a.irq_per_s, Some(400.0));
        assert_eq!(a.temp_c, Some(42.0));
        assert_eq!(a.idle[0].pct, Some(60.0));
        assert_eq!(a.idle[0].per_s, Some(240.0));
        assert_eq!(a.idle[0].latency_us, Some(133));
        assert_eq!(a.csw_per_s, None, "no CPU has it: unknown, not 0");
        assert_eq!(a.ipc, None, "no CPU has it: unknown, not 0");
        assert_eq!(of(&[]).busy_pct, None);
    }

    #[test]
    fn ipc_of_all_cpus_is_their_instructions_over_their_cycles() {
        let cpu = |n, i, c| CpuRates {
            cpu: n,
            instructions: i,
            cycles: c,
            ipc: crate::model::interval::ipc(i, c),
            ..CpuRates::default()
        };
        // 3e6/1e6 and 1e6/2e6: 4e6 over 3e6 cycles, not the mean 1.75
        let rows = [
            cpu(0, Some(3_000_000), Some(1_000_000)),
            cpu(1, Some(1_000_000), Some(2_000_000)),
            cpu(2, None, Some(5_000_000)),
        ];
        let refs: Vec<&CpuRates> = rows.iter().collect();
        let a = of(&refs);
        assert_eq!(
            (a.instructions, a.cycles),
            (Some(4_000_000), Some(3_000_000))
        );
        assert_eq!(a.ipc, Some(4.0 / 3.0));
    }
}
