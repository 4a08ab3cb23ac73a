//! Wake-up latencies into histograms, and histograms into percentiles.
//!
//! hdrhistogram keeps every latency at 3 significant digits in a few KiB
//! whatever the count, merges exactly (a recording's CPUs added up), and
//! its buckets are written out as `[value, count]` pairs that read back
//! into the same buckets.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use super::tag::Tag;
use super::{Kind, Row, TagMethod};

/// One idle state of a CPU as the driver declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateDecl {
    /// Its name (`POLL`, `C6`).
    pub name: String,
    /// Advertised exit latency, µs.
    pub latency_us: Option<u64>,
}

/// A new histogram of nanoseconds, 3 significant digits, growing as needed.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new(3).expect("3 significant digits are allowed")
}

/// Reads back a histogram written as `[value, count]` pairs.
pub fn from_buckets(buckets: &[(u64, u64)]) -> Histogram<u64> {
    let mut h = new_histogram();
    for &(v, n) in buckets {
        let _ = h.record_n(v, n);
    }
    h
}

/// The non-empty buckets of a histogram as `[highest value, count]`.
pub fn to_buckets(h: &Histogram<u64>) -> Vec<(u64, u64)> {
    h.iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect()
}

fn us(ns: u64) -> f64 {
    (ns as f64 / 1000.0 * 1000.0).round() / 1000.0
}

/// Latency percentiles of a histogram, µs: p50, p90, p99, p99.9, max, mean.
pub fn percentiles(h: &Histogram<u64>) -> [f64; 6] {
    [
        us(h.value_at_quantile(0.5)),
        us(h.value_at_quantile(0.9)),
        us(h.value_at_quantile(0.99)),
        us(h.value_at_quantile(0.999)),
        us(h.max()),
        (h.mean() / 1000.0 * 1000.0).round() / 1000.0,
    ]
}

/// The wake-ups of a probe, by CPU × kind × tag.
#[derive(Default)]
pub struct Latencies {
    hist: BTreeMap<(u32, Kind, Tag, TagMethod), Histogram<u64>>,
}

impl Latencies {
    /// Adds one wake-up of `ns` latency, tagged `by` a method.
    pub fn add(&mut self, cpu: u32, kind: Kind, tag: Tag, by: TagMethod, ns: u64) {
        self.hist
            .entry((cpu, kind, tag, by))
            .or_insert_with(new_histogram)
            .record(ns)
            .expect("an auto-resizing histogram takes any u64");
    }

    /// One row per CPU × kind × tag × method; `states[cpu]` names the
    /// states.
    pub fn rows(&self, states: &BTreeMap<u32, Vec<StateDecl>>) -> Vec<Row> {
        self.hist
            .iter()
            .map(|(&(cpu, kind, tag, by), h)| {
                let decl = match tag {
                    Tag::State(i) => states.get(&cpu).and_then(|s| s.get(i as usize)),
                    _ => None,
                };
                let state = match tag {
                    Tag::State(i) => decl.map_or_else(|| format!("state{i}"), |d| d.name.clone()),
                    Tag::Busy => "busy".into(),
                    Tag::Unknown => "unknown".into(),
                };
                let advertised_us = decl.and_then(|d| d.latency_us);
                let [p50, p90, p99, p999, max, mean] = percentiles(h);
                let ratio = |v: f64| {
                    advertised_us
                        .filter(|&a| a > 0)
                        .map(|a| (v / a as f64 * 100.0).round() / 100.0)
                };
                Row {
                    cpu,
                    kind,
                    state,
                    state_index: match tag {
                        Tag::State(i) => Some(i),
                        _ => None,
                    },
                    tagged_by: by,
                    count: h.len(),
                    mean_us: mean,
                    p50_us: p50,
                    p90_us: p90,
                    p99_us: p99,
                    p999_us: p999,
                    max_us: max,
                    advertised_us,
                    p50_over_advertised: ratio(p50),
                    p99_over_advertised: ratio(p99),
                    histogram_ns: to_buckets(h),
                }
            })
            .collect()
    }
}

#[cfg(test)]
#[expect(
    clippy::float_cmp,
    reason = "percentiles of known histograms are exact values"
)]
mod tests {
    use super::*;

    #[test]
    fn rows_carry_exact_percentiles_names_and_ratios() {
        let mut l = Latencies::default();
        // 90 wake-ups at 2 µs and 10 at 10 µs from state 1 (advertised 4)
        for _ in 0..90 {
            l.add(1, Kind::Timer, Tag::State(1), TagMethod::Tracepoint, 2000);
        }
        for _ in 0..10 {
            l.add(1, Kind::Timer, Tag::State(1), TagMethod::Tracepoint, 10_000);
        }
        l.add(1, Kind::Timer, Tag::Busy, TagMethod::Tracepoint, 700);
        l.add(1, Kind::Timer, Tag::State(0), TagMethod::Inferred, 300);
        let states = BTreeMap::from([(
            1,
            vec![
                StateDecl {
                    name: "POLL".into(),
                    latency_us: Some(0),
                },
                StateDecl {
                    name: "C1".into(),
                    latency_us: Some(4),
                },
            ],
        )]);
        let rows = l.rows(&states);
        assert_eq!(rows.len(), 3);
        let c1 = rows.iter().find(|r| r.state == "C1").unwrap();
        assert_eq!(c1.count, 100);
        assert_eq!(c1.p50_us, 2.0);
        assert_eq!(c1.p90_us, 2.0);
        // 10 000 ns lies in a bucket 8 ns wide at 3 digits
        assert_eq!(c1.p99_us, 10.007);
        assert_eq!(c1.max_us, 10.007);
        assert_eq!(c1.p50_over_advertised, Some(0.5));
        assert_eq!(c1.p99_over_advertised, Some(2.5));
        assert_eq!(c1.histogram_ns, vec![(2000, 90), (10_007, 10)]);
        let poll = rows.iter().find(|r| r.state == "POLL").unwrap();
        assert_eq!(poll.advertised_us, Some(0));
        assert_eq!(poll.tagged_by, TagMethod::Inferred);
        assert_eq!(c1.tagged_by, TagMethod::Tracepoint);
        assert_eq!(poll.p50_over_advertised, None, "advertised 0 has no ratio");
        let busy = rows.iter().find(|r| r.state == "busy").unwrap();
        assert_eq!((busy.state_index, busy.advertised_us), (None, None));
    }

    #[test]
    fn buckets_read_back_into_the_same_histogram() {
        let mut h = new_histogram();
        for v in [1, 999, 2048, 91_000, 133_333, 5_000_000] {
            h.record(v).unwrap();
        }
        let b = to_buckets(&h);
        assert_eq!(to_buckets(&from_buckets(&b)), b);
        assert_eq!(percentiles(&from_buckets(&b)), percentiles(&h));
    }
}
