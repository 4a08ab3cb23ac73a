//! Two recordings' probes side by side: the state each machine's CPUs
//! mostly woke from, and what a wake-up cost there, measured.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use hdrhistogram::Histogram;

use super::stats::{from_buckets, new_histogram, percentiles};
use super::{Kind, ProbeReport};

/// The wake-ups of one kind and state over every CPU of a recording.
#[derive(Debug, Clone)]
pub struct StateSum {
    /// The state's name.
    pub state: String,
    /// Advertised exit latency, µs.
    pub advertised_us: Option<u64>,
    /// Every CPU's histogram added up.
    pub hist: Histogram<u64>,
}

/// Adds up the rows of `kind` per idle state (busy and unknown left out).
pub fn by_state(rep: &ProbeReport, kind: Kind) -> Vec<StateSum> {
    let mut m: BTreeMap<String, StateSum> = BTreeMap::new();
    for r in rep
        .rows
        .iter()
        .filter(|r| r.kind == kind && r.state_index.is_some())
    {
        let e = m.entry(r.state.clone()).or_insert_with(|| StateSum {
            state: r.state.clone(),
            advertised_us: r.advertised_us,
            hist: new_histogram(),
        });
        let _ = e.hist.add(from_buckets(&r.histogram_ns));
    }
    m.into_values().collect()
}

/// A latency in whole µs below 10 µs to one decimal.
fn us(v: f64) -> String {
    if v < 10.0 {
        let s = format!("{v:.1}");
        s.strip_suffix(".0").map_or(s.clone(), str::to_string)
    } else {
        format!("{v:.0}")
    }
}

/// The state most wake-ups of `kind` came from, with its p50 (µs).
fn dominant(rep: &ProbeReport, kind: Kind) -> Option<(StateSum, f64)> {
    let s = by_state(rep, kind)
        .into_iter()
        .max_by_key(|s| s.hist.len())?;
    let p50 = percentiles(&s.hist)[0];
    Some((s, p50))
}

/// The measured sentence: the side whose wake-ups cost more first. Remote
/// wake-ups (the ping case's path) when both probes have them, else timer
/// wake-ups.
pub fn sentence(a: &ProbeReport, b: &ProbeReport) -> Option<String> {
    let kind = [Kind::Remote, Kind::Timer]
        .into_iter()
        .find(|&k| dominant(a, k).is_some() && dominant(b, k).is_some())?;
    let (sa, pa) = dominant(a, kind)?;
    let (sb, pb) = dominant(b, kind)?;
    let ((hi_name, hi, phi), (lo_name, lo, plo)) = if pb >= pa {
        (("B", sb, pb), ("A", sa, pa))
    } else {
        (("A", sa, pa), ("B", sb, pb))
    };
    let what = match kind {
        Kind::Timer => "timer wake-ups",
        _ => "wake-ups",
    };
    let adv = |s: &StateSum| {
        s.advertised_us.map_or_else(
            || "advertised unknown".into(),
            |v| format!("advertised {v} µs"),
        )
    };
    Some(format!(
        "{hi_name}'s {what} from {}: p50 {} µs ({}), {lo_name}'s from {}: p50 {} µs — {} µs more per wake-up, measured",
        hi.state,
        us(phi),
        adv(&hi),
        lo.state,
        us(plo),
        us(phi - plo)
    ))
}

/// The comparison as text: the sentence, then per kind and state both
/// sides' counts and percentiles.
pub fn render(a: &ProbeReport, b: &ProbeReport) -> String {
    let mut s = String::new();
    match sentence(a, b) {
        Some(line) => {
            let _ = writeln!(s, "{line}");
        }
        None => s.push_str("No idle state has wake-ups in both probes: nothing to compare.\n"),
    }
    let _ = writeln!(
        s,
        "{:<10}  {:<14}  {:>8}  {:>8}  {:>8}  {:>8}  {:>8}  {:>8}  {:>10}",
        "kind", "state", "A count", "A p50", "A p99", "B count", "B p50", "B p99", "advertised"
    );
    for kind in [Kind::Timer, Kind::Remote, Kind::RoundTrip] {
        let (la, lb) = (by_state(a, kind), by_state(b, kind));
        let mut names: Vec<&str> = la.iter().chain(&lb).map(|x| x.state.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        for n in names {
            let cell = |l: &[StateSum]| {
                l.iter().find(|x| x.state == n).map_or_else(
                    || ["0".to_string(), "-".into(), "-".into()],
                    |x| {
                        let p = percentiles(&x.hist);
                        [x.hist.len().to_string(), us(p[0]), us(p[2])]
                    },
                )
            };
            let (ca, cb) = (cell(&la), cell(&lb));
            let adv = la
                .iter()
                .chain(&lb)
                .find(|x| x.state == n)
                .and_then(|x| x.advertised_us)
                .map_or_else(|| "-".into(), |v| v.to_string());
            let _ = writeln!(
                s,
                "{:<10}  {:<14}  {:>8}  {:>8}  {:>8}  {:>8}  {:>8}  {:>8}  {:>10}",
                kind.name(),
                n,
                ca[0],
                ca[1],
                ca[2],
                cb[0],
                cb[1],
                cb[2],
                adv
            );
        }
    }
    s.push_str("  latencies in µs, every probed CPU of each recording added up\n");
    s
}

/// The comparison as JSON: the sentence, and per side, kind and state the
/// wake-ups added up over the CPUs (count, p50, p99 in µs, advertised).
pub fn json(a: &ProbeReport, b: &ProbeReport) -> serde_json::Value {
    let side = |r: &ProbeReport| {
        let mut kinds = serde_json::Map::new();
        for kind in [Kind::Timer, Kind::Remote, Kind::RoundTrip] {
            let states: serde_json::Map<String, serde_json::Value> = by_state(r, kind)
                .into_iter()
                .map(|x| {
                    let p = percentiles(&x.hist);
                    (
                        x.state,
                        serde_json::json!({
                            "count": x.hist.len(),
                            "p50_us": p[0],
                            "p99_us": p[2],
                            "advertised_us": x.advertised_us,
                        }),
                    )
                })
                .collect();
            if !states.is_empty() {
                kinds.insert(kind.name().into(), states.into());
            }
        }
        serde_json::Value::Object(kinds)
    };
    serde_json::json!({
        "sentence": sentence(a, b),
        "a": side(a),
        "b": side(b),
    })
}
