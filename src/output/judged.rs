//! The verdicts and findings of one interval as `#` lines, printed after
//! the batch table so the table stays machine-readable.

use std::fmt::Write as _;

use crate::base::cpulist;
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
                crate::noise::traced::probe_ran_text(ns)
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

/// One line per watched CPU whose run-queue waits the kernel counted:
/// `# run-queue wait on CPU 1: 412 waits, p50 < 4.1 µs, …`.
pub fn runq_lines(trace: Option<&crate::noise::traced::Traced>, cpus: Option<&[u32]>) -> String {
    let mut out = String::new();
    let Some(t) = trace else {
        return out;
    };
    for c in t
        .cpus
        .iter()
        .filter(|c| cpus.is_none_or(|l| l.contains(&c.cpu)))
    {
        if let Some(k) = &c.kernel {
            let _ = writeln!(
                out,
                "# run-queue wait on CPU {}: {} ({RUNQ_HOW})",
                c.cpu,
                k.runq.text()
            );
        }
    }
    out
}

/// What a run-queue wait is, as the lines say.
pub const RUNQ_HOW: &str = "BPF: from a wake-up or preemption to the switch in";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::traced::Traced;
    use crate::noise::traced::TracedCpu;
    use crate::trace::in_kernel::{KernelCounts, RunqDelay};

    #[test]
    fn a_watched_cpu_with_kernel_counts_has_its_run_queue_line() {
        let counted = TracedCpu {
            cpu: 1,
            kernel: Some(KernelCounts {
                runq: RunqDelay {
                    waits: 4,
                    total_ns: 3 * 3_000 + 180_000,
                    max_ns: 180_000,
                    // three waits in [2048, 4096) ns, one in [131072, 262144)
                    buckets: vec![(4096, 3), (262_144, 1)],
                },
                ..KernelCounts::default()
            }),
            ..TracedCpu::default()
        };
        let sampled = TracedCpu {
            cpu: 2,
            ..TracedCpu::default()
        };
        let t = Traced {
            cpus: vec![counted, sampled],
            ..Traced::default()
        };
        assert_eq!(
            runq_lines(Some(&t), None),
            format!(
                "# run-queue wait on CPU 1: 4 waits, p50 < 4.1 µs, p99 < 180 µs, max 180 µs \
                 ({RUNQ_HOW})\n"
            )
        );
        assert_eq!(runq_lines(Some(&t), Some(&[2])), "");
        assert_eq!(runq_lines(None, None), "");
    }
}
