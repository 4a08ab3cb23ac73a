//! Interrupt rules: which device IRQs may land on the benchmark CPUs
//! (`/proc/irq/N/smp_affinity_list`, `default_smp_affinity`), and whether
//! irqbalance runs (it rewrites those affinities while the benchmark runs).

use std::fmt::Write as _;

use super::{CheckFacts, Outcome, RuleResult, Scope, cpus_phrase};
use crate::base::{Unavailable, cpulist};

/// Formats CPUs as the kernel's hex mask: 32-bit words, most significant
/// first, separated by commas (`1,00000003` for CPUs 0, 1 and 32).
pub fn format_cpumask(cpus: &[u32]) -> String {
    let Some(&max) = cpus.iter().max() else {
        return "0".into();
    };
    let mut words = vec![0u32; max as usize / 32 + 1];
    for &c in cpus {
        words[c as usize / 32] |= 1 << (c % 32);
    }
    let mut out = String::new();
    for (i, w) in words.iter().rev().enumerate() {
        if i == 0 {
            let _ = write!(out, "{w:x}");
        } else {
            let _ = write!(out, ",{w:08x}");
        }
    }
    out
}

/// The fix that moves `irqs` to `to`: one shell loop.
fn move_irqs(irqs: &[u32], to: &[u32]) -> String {
    let to = cpulist::format(to);
    if let [i] = irqs {
        return format!("echo {to} > /proc/irq/{i}/smp_affinity_list");
    }
    format!(
        "for i in {}; do echo {to} > /proc/irq/$i/smp_affinity_list; done",
        super::shell_list(irqs)
    )
}

fn overlaps(cpus: &[u32], bench: &[u32]) -> bool {
    cpus.iter().any(|c| bench.binary_search(c).is_ok())
}

pub(super) fn irq_affinity(f: &CheckFacts, s: &Scope) -> RuleResult {
    const ID: &str = "irq-affinity";
    const TITLE: &str = "No device IRQ may run on the benchmark CPUs";
    const SHOWN: usize = 10;
    let irqs = match &f.irqs {
        Ok(v) => v,
        Err(why) => return RuleResult::unknown(ID, TITLE, why.detail()),
    };
    let readable: Vec<(u32, Option<&str>, &[u32])> = irqs
        .iter()
        .filter_map(|i| Some((i.irq, i.name.as_deref(), i.cpus.as_deref().ok()?)))
        .collect();
    let unreadable = irqs.len() - readable.len();
    if readable.is_empty() && f.default_affinity.is_err() {
        let why = irqs
            .iter()
            .find_map(|i| i.cpus.as_ref().err())
            .map_or("no /proc/irq/N/smp_affinity_list", Unavailable::detail);
        return RuleResult::unknown(ID, TITLE, why);
    }
    let mut r = RuleResult::new(ID, TITLE, Outcome::Ok);
    if let Ok(d) = &f.default_affinity {
        r = r.evidence(format!(
            "/proc/irq/default_smp_affinity = {} ({})",
            format_cpumask(d),
            cpus_phrase(d)
        ));
    }
    if unreadable > 0 {
        r = r.evidence(format!(
            "{unreadable} IRQs with no readable smp_affinity_list"
        ));
    }
    let online = &f.machine.online;
    if s.all {
        // Any CPU that no IRQ may use is a place for a benchmark.
        let mut used: Vec<u32> = readable
            .iter()
            .flat_map(|(_, _, c)| c.iter().copied())
            .chain(f.default_affinity.iter().flatten().copied())
            .collect();
        used.sort_unstable();
        used.dedup();
        let free: Vec<u32> = online
            .iter()
            .copied()
            .filter(|c| used.binary_search(c).is_err())
            .collect();
        if !free.is_empty() {
            return r.evidence(format!(
                "{} receive no device IRQ ({} IRQs read from /proc/irq/N/smp_affinity_list)",
                cpus_phrase(&free),
                readable.len()
            ));
        }
        r.status = Outcome::Warn;
        r = r.evidence(format!(
            "every online CPU may receive device IRQs ({} IRQs read from /proc/irq/N/smp_affinity_list)",
            readable.len()
        ));
        let apart = super::suggested_isolation(f);
        let keep: Vec<u32> = online
            .iter()
            .copied()
            .filter(|c| !apart.contains(c))
            .collect();
        if !apart.is_empty() && !keep.is_empty() {
            let on: Vec<u32> = readable
                .iter()
                .filter(|(_, _, c)| overlaps(c, &apart))
                .map(|(i, _, _)| *i)
                .collect();
            if !on.is_empty() {
                r = r.fix(move_irqs(&on, &keep));
            }
            r = r.fix(format!(
                "echo {} > /proc/irq/default_smp_affinity",
                format_cpumask(&keep)
            ));
        }
        return r;
    }
    let on: Vec<&(u32, Option<&str>, &[u32])> = readable
        .iter()
        .filter(|(_, _, c)| overlaps(c, s.cpus))
        .collect();
    let default_on = f
        .default_affinity
        .as_deref()
        .is_ok_and(|d| overlaps(d, s.cpus));
    if on.is_empty() && !default_on {
        return r.evidence(format!(
            "none of {} IRQs may run on {} (/proc/irq/N/smp_affinity_list)",
            readable.len(),
            cpus_phrase(s.cpus)
        ));
    }
    r.status = Outcome::Warn;
    for (irq, name, cpus) in on.iter().take(SHOWN) {
        let name = name.map(|n| format!(" {n}")).unwrap_or_default();
        r = r.evidence(format!(
            "IRQ {irq}{name}: /proc/irq/{irq}/smp_affinity_list = {}",
            cpulist::format(cpus)
        ));
    }
    if on.len() > SHOWN {
        r = r.evidence(format!("… and {} more IRQs", on.len() - SHOWN));
    }
    if s.housekeeping.is_empty() {
        return r.evidence("no online CPU outside the benchmark CPUs to move them to");
    }
    if !on.is_empty() {
        let irqs: Vec<u32> = on.iter().map(|(i, _, _)| *i).collect();
        r = r.fix(move_irqs(&irqs, &s.housekeeping));
    }
    if default_on {
        r = r.fix(format!(
            "echo {} > /proc/irq/default_smp_affinity",
            format_cpumask(&s.housekeeping)
        ));
    }
    r
}

pub(super) fn irqbalance(f: &CheckFacts) -> RuleResult {
    const ID: &str = "irqbalance";
    const TITLE: &str = "irqbalance is not running";
    match &f.irqbalance {
        Err(why) => RuleResult::unknown(ID, TITLE, why.detail()),
        Ok((n, pids)) if pids.is_empty() => RuleResult::new(ID, TITLE, Outcome::Ok).evidence(
            format!("no process named irqbalance among {n} (/proc/PID/comm)"),
        ),
        Ok((_, pids)) => {
            let mut r = RuleResult::new(ID, TITLE, Outcome::Warn);
            for p in pids {
                r = r.evidence(format!("irqbalance runs as pid {p} (/proc/{p}/comm)"));
            }
            r.fix("systemctl stop irqbalance")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpumask_words() {
        assert_eq!(format_cpumask(&[]), "0");
        assert_eq!(format_cpumask(&[0, 1]), "3");
        assert_eq!(format_cpumask(&[0, 1, 32]), "1,00000003");
        assert_eq!(format_cpumask(&[4, 5, 6, 7]), "f0");
        assert_eq!(
            crate::collect::topology::parse_cpumask(&format_cpumask(&[1, 33, 70])).unwrap(),
            vec![1, 33, 70]
        );
    }
}
