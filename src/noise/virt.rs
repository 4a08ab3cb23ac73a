//! Steal: the hypervisor ran something else while this vCPU wanted to run.

use super::{Context, Finding, Kind, Number, cpus_label, severity_of};
use crate::model::interval::Interval;

/// One finding for every CPU whose steal passed its limit (strict for
/// watched CPUs, mild for the others), naming the worst.
pub fn steal(iv: &Interval, cx: &Context<'_>) -> Option<Finding> {
    let limit_of = |cpu: u32| {
        if cx.is_watched(cpu) {
            cx.config.watched.steal_pct
        } else {
            cx.config.other.steal_pct
        }
    };
    let hit: Vec<(u32, f64)> = iv
        .cpus
        .iter()
        .filter_map(|r| Some((r.cpu, r.time?.steal?)))
        .filter(|(c, s)| *s > limit_of(*c))
        .collect();
    let (worst_cpu, worst) = hit.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1))?;
    let cpus: Vec<u32> = hit.iter().map(|h| h.0).collect();
    Some(Finding {
        severity: severity_of(worst, limit_of(worst_cpu), cx.config),
        kind: Kind::Steal,
        label: "steal".into(),
        evidence: if cpus.len() == 1 {
            format!("CPU {worst_cpu}: steal {worst:.1} %: the hypervisor ran something else")
        } else {
            format!(
                "{}: steal up to {worst:.1} % (CPU {worst_cpu}): the hypervisor ran something else",
                cpus_label(&cpus)
            )
        },
        numbers: hit
            .iter()
            .map(|(c, s)| Number::new(format!("cpu{c}_steal_pct"), *s))
            .collect(),
        fix: Some("ask for dedicated (pinned, not overcommitted) vCPUs".into()),
        cpus,
    })
}
