//! The last probe's latencies as Prometheus histograms. The probe's file is
//! looked at on noisetop's tick (read again only when it changed), never
//! on a scrape; its histograms (3 significant digits) are put into fixed
//! 1-2-5 buckets from 1 µs to 100 ms so every probe, CPU and machine has
//! the same `le` labels to add up.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::SystemTime;

use super::catalog as m;
use super::text::Writer;
use crate::probe::{Kind, ProbeReport, Row};

/// Upper bounds of the buckets, s (`+Inf` follows).
pub const BUCKETS_S: [f64; 16] = [
    1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 0.1,
];

/// What `noisetop_metric_unavailable` says when no probe has run.
pub const NO_PROBE: &str = "no noisetop probe has run on this machine (run noisetop probe)";

/// The last probe, as of the latest tick.
#[derive(Debug, Default)]
pub struct LastProbe {
    path: Option<PathBuf>,
    seen: Option<(SystemTime, u64)>,
    /// The probe, when one has run and its file reads.
    pub report: Option<ProbeReport>,
    /// When its file was written (Unix time, s).
    pub at_s: Option<f64>,
}

impl LastProbe {
    /// Follows the probe file at `path` (none: no probe is exported).
    pub fn at(path: Option<PathBuf>) -> LastProbe {
        LastProbe {
            path,
            ..LastProbe::default()
        }
    }

    /// Reads the file again when its time or size changed since the last
    /// tick; a file gone or unreadable means no probe.
    pub fn refresh(&mut self) {
        let Some(path) = &self.path else { return };
        let Ok(meta) = std::fs::metadata(path) else {
            self.seen = None;
            self.report = None;
            self.at_s = None;
            return;
        };
        let stamp = (
            meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            meta.len(),
        );
        if self.seen == Some(stamp) {
            return;
        }
        self.seen = Some(stamp);
        self.report = crate::probe::sinks::load_last_from(path);
        self.at_s = stamp
            .0
            .duration_since(SystemTime::UNIX_EPOCH)
            .ok()
            .map(|d| d.as_secs_f64());
    }
}

/// Cumulative counts per bucket of `BUCKETS_S` (then `+Inf`), with the sum
/// of the latencies (s) and their count.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Buckets {
    /// Counts at or below each bound, then the total for `+Inf`.
    pub cumulative: Vec<u64>,
    /// Sum of the latencies, s (from the probe's mean).
    pub sum_s: f64,
    /// Wake-ups.
    pub count: u64,
}

impl Buckets {
    fn add(&mut self, r: &Row) {
        if self.cumulative.is_empty() {
            self.cumulative = vec![0; BUCKETS_S.len() + 1];
        }
        for &(ns, n) in &r.histogram_ns {
            // a bucket of the probe's histogram is named by its highest
            // value, within 0.1 % of every value in it
            let s = ns as f64 * 1e-9 / 1.001;
            let first = BUCKETS_S
                .iter()
                .position(|&le| s <= le)
                .unwrap_or(BUCKETS_S.len());
            for c in &mut self.cumulative[first..] {
                *c += n;
            }
        }
        self.sum_s += r.mean_us * 1e-6 * r.count as f64;
        self.count += r.count;
    }
}

fn write_one(w: &mut Writer, labels: &[(&str, &str)], b: &Buckets) {
    let les: Vec<String> = BUCKETS_S.iter().map(|v| format!("{v}")).collect();
    let mut pairs: Vec<(&str, u64)> = les
        .iter()
        .map(String::as_str)
        .zip(b.cumulative.iter().copied())
        .collect();
    pairs.push(("+Inf", b.cumulative.last().copied().unwrap_or(0)));
    w.histogram(labels, &pairs, b.sum_s, b.count);
}

/// Histograms by (cpu, kind, state).
pub type PerCpu = BTreeMap<(u32, Kind, String), Buckets>;

/// Histograms by (kind, state), every probed CPU added up.
pub type PerMachine = BTreeMap<(Kind, String), Buckets>;

/// Per (cpu, kind, state), and per (kind, state) over every probed CPU.
pub fn buckets(rep: &ProbeReport) -> (PerCpu, PerMachine) {
    let mut per_cpu = PerCpu::new();
    let mut all = PerMachine::new();
    for r in rep.rows.iter().filter(|r| r.count > 0) {
        per_cpu
            .entry((r.cpu, r.kind, r.state.clone()))
            .or_default()
            .add(r);
        all.entry((r.kind, r.state.clone())).or_default().add(r);
    }
    (per_cpu, all)
}

/// Writes the probe's families: histograms per detailed CPU and over
/// every probed CPU, the context switch per probed CPU, and when it ran.
pub fn write(w: &mut Writer, probe: Option<&LastProbe>, detail: &[u32]) {
    let Some((rep, at)) = probe.and_then(|p| Some((p.report.as_ref()?, p.at_s))) else {
        return;
    };
    let (per_cpu, all) = buckets(rep);
    w.family(m::PROBE_CPU_LATENCY);
    for ((cpu, kind, state), b) in &per_cpu {
        if detail.contains(cpu) {
            let c = cpu.to_string();
            write_one(
                w,
                &[("cpu", &c), ("kind", kind.name()), ("state", state)],
                b,
            );
        }
    }
    w.family(m::PROBE_LATENCY);
    for ((kind, state), b) in &all {
        write_one(w, &[("kind", kind.name()), ("state", state)], b);
    }
    w.family(m::PROBE_CSW);
    for c in &rep.ctx {
        w.sample(&[("cpu", &c.cpu.to_string())], c.switch_us * 1e-6);
    }
    w.family(m::PROBE_TIME);
    if let Some(t) = at {
        w.sample(&[], t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::{Conditions, TagMethod};
    use crate::serve::text::Format;

    fn row(cpu: u32, kind: Kind, state: &str, hist: Vec<(u64, u64)>, mean_us: f64) -> Row {
        let count = hist.iter().map(|x| x.1).sum();
        Row {
            cpu,
            kind,
            state: state.into(),
            state_index: Some(1),
            tagged_by: TagMethod::Tracepoint,
            count,
            mean_us,
            p50_us: 0.0,
            p90_us: 0.0,
            p99_us: 0.0,
            p999_us: 0.0,
            max_us: 0.0,
            advertised_us: None,
            p50_over_advertised: None,
            p99_over_advertised: None,
            histogram_ns: hist,
        }
    }

    fn report() -> ProbeReport {
        ProbeReport {
            format: crate::probe::FORMAT.into(),
            noisetop_version: "t".into(),
            cpus: vec![1, 2],
            duration_s: 1.0,
            timer_interval_us: None,
            conditions: Conditions::default(),
            rows: vec![
                // 1 µs exactly, 1.5 µs, 40 µs, 2.0005 ms (hdr's name of a
                // bucket a little above 2 ms, still in it), 0.3 s
                row(
                    1,
                    Kind::Timer,
                    "haltpoll idle",
                    vec![
                        (1000, 3),
                        (1500, 1),
                        (40_000, 2),
                        (2_000_511, 1),
                        (300_000_000, 1),
                    ],
                    10.0,
                ),
                row(2, Kind::Timer, "haltpoll idle", vec![(1000, 2)], 1.0),
            ],
            ctx: Vec::new(),
        }
    }

    #[test]
    fn wake_ups_land_in_fixed_buckets_per_cpu_and_over_the_machine() {
        let (per_cpu, all) = buckets(&report());
        let b = &per_cpu[&(1, Kind::Timer, "haltpoll idle".into())];
        //            1µ 2µ 5µ 10 20 50 .1m .2 .5 1m 2m 5m 10 20 50 .1s Inf
        assert_eq!(
            b.cumulative,
            vec![3, 4, 4, 4, 4, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 8]
        );
        assert_eq!(b.count, 8);
        assert!((b.sum_s - 80e-6).abs() < 1e-12);
        let a = &all[&(Kind::Timer, "haltpoll idle".into())];
        assert_eq!(a.cumulative[0], 5);
        assert_eq!(a.cumulative[16], 10);
        assert_eq!(a.count, 10);
    }

    #[test]
    fn the_exposition_has_every_bucket_with_sum_and_count_of_detailed_cpus() {
        let p = LastProbe {
            report: Some(report()),
            at_s: Some(1_700_000_000.5),
            ..LastProbe::default()
        };
        let mut w = Writer::new(Format::OpenMetrics, 0);
        write(&mut w, Some(&p), &[2]);
        let text = w.finish();
        // CPU 1 is not detailed: only in the machine's sum
        assert!(!text.contains("cpu=\"1\""), "{text}");
        assert!(text.contains("# TYPE noisetop_probe_cpu_wakeup_latency_seconds histogram\n"));
        assert!(text.contains(
            "noisetop_probe_cpu_wakeup_latency_seconds_bucket{cpu=\"2\",kind=\"timer\",state=\"haltpoll idle\",le=\"0.000001\"} 2\n"
        ));
        assert!(text.contains(
            "noisetop_probe_wakeup_latency_seconds_bucket{kind=\"timer\",state=\"haltpoll idle\",le=\"+Inf\"} 10\n"
        ));
        assert!(text.contains(
            "noisetop_probe_wakeup_latency_seconds_count{kind=\"timer\",state=\"haltpoll idle\"} 10\n"
        ));
        assert!(text.contains("noisetop_probe_timestamp_seconds 1700000000.5\n"));
        assert_eq!(
            text.matches("noisetop_probe_wakeup_latency_seconds_bucket{")
                .count(),
            BUCKETS_S.len() + 1
        );
        // no probe: no family at all
        let mut w = Writer::new(Format::Classic, 0);
        write(&mut w, Some(&LastProbe::default()), &[2]);
        write(&mut w, None, &[2]);
        assert_eq!(w.finish(), "");
    }
}
