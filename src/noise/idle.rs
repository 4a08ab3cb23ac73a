//! Idle states with a long exit latency: a wake-up from them costs as much
//! as a short benchmark iteration (the ping case of two servers, one in C1
//! and one in C6).

use super::{Context, Finding, Kind, Number, Severity, cpus_label, rate};
use crate::base::cpulist;
use crate::model::interval::Interval;

/// Unwatched CPUs that used the same deep state, with their residency.
struct DeepGroup {
    name: String,
    latency_us: u64,
    cpus: Vec<(u32, f64)>,
}

/// One finding per watched CPU and deep state; the unwatched CPUs in the
/// same state share one finding, so 256 CPUs give a handful of lines.
pub fn deep_cstates(iv: &Interval, cx: &Context<'_>) -> Vec<Finding> {
    let deep_us = cx.config.idle.deep_latency_us;
    let min_pct = cx.config.idle.deep_min_pct;
    let mut out = Vec::new();
    let mut groups: Vec<DeepGroup> = Vec::new();
    for r in &iv.cpus {
        for st in r.idle.iter() {
            let (Some(lat), Some(pct)) = (st.latency_us, st.pct) else {
                continue;
            };
            if lat < deep_us || pct < min_pct {
                continue;
            }
            if cx.is_watched(r.cpu) {
                out.push(Finding {
                    cpus: vec![r.cpu],
                    kind: Kind::DeepCstate,
                    severity: Severity::Warn,
                    label: format!("{} {lat}µs", st.name),
                    evidence: format!(
                        "CPU {}: {pct:.0} % in {} (exit latency {lat} µs), {} entries/s",
                        r.cpu,
                        st.name,
                        st.per_s.map_or_else(|| "?".to_string(), rate)
                    ),
                    numbers: vec![
                        Number::new(format!("{}_pct", st.name.to_lowercase()), pct),
                        Number::new("exit_latency_us", lat as f64),
                    ],
                    fix: Some(format!("cpupower -c {} idle-set -D {deep_us}", r.cpu)),
                });
            } else {
                match groups
                    .iter_mut()
                    .find(|g| *st.name == *g.name && g.latency_us == lat)
                {
                    Some(g) => g.cpus.push((r.cpu, pct)),
                    None => groups.push(DeepGroup {
                        name: st.name.to_string(),
                        latency_us: lat,
                        cpus: vec![(r.cpu, pct)],
                    }),
                }
            }
        }
    }
    for DeepGroup {
        name,
        latency_us: lat,
        cpus,
    } in groups
    {
        let list: Vec<u32> = cpus.iter().map(|c| c.0).collect();
        let mean = cpus.iter().map(|c| c.1).sum::<f64>() / cpus.len() as f64;
        out.push(Finding {
            cpus: list.clone(),
            kind: Kind::DeepCstate,
            severity: Severity::Info,
            label: format!("{name} {lat}µs"),
            evidence: format!(
                "{}: {mean:.0} % on average in {name} (exit latency {lat} µs)",
                cpus_label(&list)
            ),
            numbers: vec![
                Number::new(format!("{}_pct_mean", name.to_lowercase()), mean),
                Number::new("exit_latency_us", lat as f64),
            ],
            fix: Some(format!(
                "cpupower -c {} idle-set -D {deep_us}",
                cpulist::format(&list)
            )),
        });
    }
    out
}
