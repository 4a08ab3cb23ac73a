//! Machine settings around the watched CPUs: a busy SMT sibling, missing
//! isolation, address-space randomisation.

use super::{Context, Finding, Kind, Number, Severity, cpus_label};
use crate::model::interval::Interval;
use crate::model::machine::Machine;

/// The busiest unwatched SMT sibling of watched CPU `w`, when busy enough:
/// the two threads share the core's execution units and caches.
pub fn smt_sibling_busy(iv: &Interval, cx: &Context<'_>, w: u32) -> Option<Finding> {
    let topo = cx.machine.topo(w)?;
    let (sib, busy) = topo
        .siblings
        .iter()
        .copied()
        .filter(|s| *s != w && !cx.is_watched(*s))
        .filter_map(|s| Some((s, iv.cpu(s)?.busy_pct?)))
        .filter(|(_, b)| *b >= cx.config.smt.sibling_busy_pct)
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    Some(Finding {
        cpus: vec![w],
        kind: Kind::SmtSiblingBusy,
        severity: Severity::Warn,
        label: format!("SMT {sib} busy"),
        evidence: format!("CPU {sib}, the SMT sibling of watched CPU {w}, is {busy:.0} % busy"),
        numbers: vec![Number::new(format!("cpu{sib}_busy_pct"), busy)],
        fix: Some(format!("echo 0 > /sys/devices/system/cpu/cpu{sib}/online")),
    })
}

/// Watched CPUs missing from `isolated` or `nohz_full` (when the kernel
/// says which CPUs are in them).
pub fn not_isolated(m: &Machine, watched: &[u32]) -> Option<Finding> {
    let missing_from = |set: &Option<Vec<u32>>| -> Vec<u32> {
        match set {
            Some(s) => watched.iter().copied().filter(|w| !s.contains(w)).collect(),
            None => Vec::new(),
        }
    };
    let not_iso = missing_from(&m.sets.isolated);
    let not_nohz = missing_from(&m.sets.nohz_full);
    if not_iso.is_empty() && not_nohz.is_empty() {
        return None;
    }
    let mut cpus: Vec<u32> = not_iso.iter().chain(&not_nohz).copied().collect();
    cpus.sort_unstable();
    cpus.dedup();
    let mut parts = Vec::new();
    if !not_iso.is_empty() {
        parts.push(format!("{} not in isolated", cpus_label(&not_iso)));
    }
    if !not_nohz.is_empty() {
        parts.push(format!("{} not in nohz_full", cpus_label(&not_nohz)));
    }
    // the boot list is the whole set, so every watched CPU
    let fix = super::interrupts::isolate_cpus(m, watched);
    Some(Finding {
        cpus,
        kind: Kind::NotIsolated,
        severity: Severity::Info,
        label: "not isolated".into(),
        evidence: parts.join("; "),
        numbers: Vec::new(),
        fix: Some(fix),
    })
}

/// Address-space layout randomisation on: code and stack addresses, and so
/// cache and branch-predictor behaviour, change from run to run.
pub fn aslr_on(m: &Machine) -> Option<Finding> {
    let level = m.kernel.aslr.filter(|a| *a > 0)?;
    Some(Finding {
        cpus: Vec::new(),
        kind: Kind::AslrOn,
        severity: Severity::Info,
        label: "ASLR".into(),
        evidence: format!(
            "randomize_va_space = {level}: code and stack addresses change from run to run"
        ),
        numbers: vec![Number::new("randomize_va_space", f64::from(level))],
        fix: Some(
            "echo 0 > /proc/sys/kernel/randomize_va_space (or run the benchmark under setarch -R)"
                .into(),
        ),
    })
}
