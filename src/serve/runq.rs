//! The run-queue wait histogram of each watched CPU since serve started:
//! the kernel's per-window buckets (log-linear, in ns) added up and
//! written as a Prometheus histogram whose bounds are powers of two of
//! nanoseconds, where the kernel's buckets begin and end, so each of its
//! buckets falls under one bound exactly.

use std::collections::BTreeMap;

use super::text::Writer;
use crate::trace::in_kernel::RunqDelay;

/// The first bound, 2^10 ns (1.024 µs): a wait shorter than that is the
/// scheduler's own path, below what anyone tunes.
const FIRST_POW: u32 = 10;
/// The last bound, 2^30 ns (1.07 s); longer waits count under `+Inf`.
const LAST_POW: u32 = 30;
const BOUNDS: usize = (LAST_POW - FIRST_POW + 1) as usize;

/// One CPU's waits since start.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Waits {
    /// Waits not longer than each bound, cumulative.
    pub cumulative: [u64; BOUNDS],
    /// All waits (`+Inf`).
    pub count: u64,
    /// Their total, ns.
    pub sum_ns: u64,
}

impl Waits {
    /// Adds one window's waits.
    pub fn add(&mut self, r: &RunqDelay) {
        for &(upper, n) in &r.buckets {
            // a bucket holds waits below `upper`: every bound from the
            // first at or past it counts them
            let first = (FIRST_POW..=LAST_POW).position(|p| upper <= 1u64 << p);
            if let Some(first) = first {
                for c in &mut self.cumulative[first..] {
                    *c += n;
                }
            }
        }
        self.count += r.waits;
        self.sum_ns += r.total_ns;
    }
}

/// Waits by CPU: one entry per watched CPU, so as many as the machine has
/// CPUs at most.
pub type PerCpu = BTreeMap<u32, Waits>;

/// Adds each watched CPU's window of a sample.
pub fn observe(per_cpu: &mut PerCpu, trace: Option<&crate::noise::traced::Traced>) {
    let Some(t) = trace else {
        return;
    };
    for c in &t.cpus {
        if let Some(k) = &c.kernel {
            per_cpu.entry(c.cpu).or_default().add(&k.runq);
        }
    }
}

/// Writes the family's series.
pub fn write(w: &mut Writer, per_cpu: &PerCpu) {
    let les: Vec<String> = (FIRST_POW..=LAST_POW)
        .map(|p| format!("{}", (1u64 << p) as f64 * 1e-9))
        .collect();
    for (cpu, waits) in per_cpu {
        let mut pairs: Vec<(&str, u64)> = les
            .iter()
            .map(String::as_str)
            .zip(waits.cumulative.iter().copied())
            .collect();
        pairs.push(("+Inf", waits.count));
        let c = cpu.to_string();
        w.histogram(
            &[("cpu", &c)],
            &pairs,
            waits.sum_ns as f64 * 1e-9,
            waits.count,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kernel_bucket_counts_from_the_first_bound_at_or_past_its_end() {
        let mut w = Waits::default();
        // 3 waits below 1024 ns, 2 in [1024, 1152), 1 past 2^30 ns
        w.add(&RunqDelay {
            waits: 6,
            total_ns: 3 * 500 + 2 * 1100 + 2_000_000_000,
            max_ns: 2_000_000_000,
            buckets: vec![(1024, 3), (1152, 2), (2_147_483_648, 1)],
        });
        // a second window adds up
        w.add(&RunqDelay {
            waits: 1,
            total_ns: 3000,
            max_ns: 3000,
            buckets: vec![(3072, 1)],
        });
        assert_eq!(w.cumulative[0], 3, "≤ 1.024 µs");
        assert_eq!(w.cumulative[1], 5, "≤ 2.048 µs");
        assert_eq!(w.cumulative[2], 6, "≤ 4.096 µs");
        assert_eq!(w.cumulative[BOUNDS - 1], 6, "≤ 1.07 s: not the 2 s wait");
        assert_eq!(w.count, 7);
        assert_eq!(w.sum_ns, 1500 + 2200 + 2_000_000_000 + 3000);
    }
}
