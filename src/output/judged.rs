//! The verdicts and findings of one interval as `#` lines, printed after
//! the batch table so the table stays machine-readable.

use std::fmt::Write as _;

use crate::collect::cpulist;
use crate::noise::{Judgement, VerdictState};

/// Renders one line of verdicts (quiet and unknown CPUs as lists, each
/// noisy CPU with its causes), then one line per finding:
/// `# SEV id: evidence → fix`.
pub fn lines(j: &Judgement, cpus: Option<&[u32]>) -> String {
    let shown = |c: u32| cpus.is_none_or(|l| l.contains(&c));
    let of = |st: VerdictState| -> Vec<u32> {
        j.verdicts
            .iter()
            .filter(|v| v.state == st && shown(v.cpu))
            .map(|v| v.cpu)
            .collect()
    };
    let mut out = String::new();
    let mut parts = Vec::new();
    let quiet = of(VerdictState::Quiet);
    if !quiet.is_empty() {
        parts.push(format!("quiet {}", cpulist::format(&quiet)));
    }
    for v in j
        .verdicts
        .iter()
        .filter(|v| v.state == VerdictState::Noisy && shown(v.cpu))
    {
        let causes: Vec<String> = v.causes.iter().map(crate::noise::Cause::text).collect();
        let w = if v.watched { " (watched)" } else { "" };
        parts.push(format!("noisy {}{w}: {}", v.cpu, causes.join(", ")));
    }
    let unknown: Vec<&crate::noise::CpuVerdict> = j
        .verdicts
        .iter()
        .filter(|v| v.state == VerdictState::Unknown && shown(v.cpu))
        .collect();
    if let Some(first) = unknown.first() {
        let list: Vec<u32> = unknown.iter().map(|v| v.cpu).collect();
        parts.push(format!(
            "unknown {} ({})",
            cpulist::format(&list),
            first.reason.as_deref().unwrap_or("no reading")
        ));
    }
    for v in j.verdicts.iter().filter(|v| shown(v.cpu)) {
        if let Some(ns) = v.probe_ns {
            parts.push(format!(
                "CPU {} being probed ({})",
                v.cpu,
                crate::probe::running::ran_text(ns)
            ));
        }
    }
    if !parts.is_empty() {
        let _ = writeln!(out, "# verdict: {}", parts.join("; "));
    }
    for f in &j.findings {
        let fix = f
            .fix
            .as_deref()
            .map_or_else(String::new, |x| format!(" → {x}"));
        let _ = writeln!(
            out,
            "# {} {}: {}{fix}",
            f.severity.label(),
            f.kind.tag(),
            f.evidence
        );
    }
    out
}
