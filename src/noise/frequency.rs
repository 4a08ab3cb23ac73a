//! What makes the clock move: thermal throttling, turbo, the governor.

use super::{Finding, Kind, Number, Severity, cpus_label};
use crate::base::cpulist;
use crate::model::interval::Interval;
use crate::model::machine::Machine;

/// Core throttling names its CPUs; package throttling slows every CPU of
/// the package alike, so it is a machine-wide finding (no row tag each).
pub fn throttle(iv: &Interval) -> Vec<Finding> {
    let mut out = Vec::new();
    let cores: Vec<(u32, u64, Option<f64>)> = iv
        .cpus
        .iter()
        .filter_map(|r| Some((r.cpu, r.throttle?, r.window_s)))
        .filter(|(_, n, _)| *n > 0)
        .collect();
    if !cores.is_empty() {
        let cpus: Vec<u32> = cores.iter().map(|c| c.0).collect();
        let events: u64 = cores.iter().map(|c| c.1).sum();
        // counts read in rounds cover each CPU's window, not the interval
        let window = cores
            .iter()
            .filter_map(|c| c.2)
            .fold(None, |m: Option<f64>, w| Some(m.map_or(w, |m| m.max(w))))
            .map_or_else(String::new, |w| format!(" in the last {w:.0} s"));
        out.push(Finding {
            evidence: format!(
                "{}: {events} core throttling events{window}",
                cpus_label(&cpus)
            ),
            numbers: cores
                .iter()
                .map(|c| Number::new(format!("cpu{}_throttle", c.0), c.1 as f64))
                .collect(),
            cpus,
            kind: Kind::Throttle,
            severity: Severity::Crit,
            label: "throttle".into(),
            fix: Some("check cooling and power limits; lower the load on the package".into()),
        });
    }
    for p in &iv.pkgs {
        let Some(n) = p.throttle.filter(|n| *n > 0) else {
            continue;
        };
        out.push(Finding {
            cpus: Vec::new(),
            kind: Kind::Throttle,
            severity: Severity::Crit,
            label: "pkg throttle".into(),
            evidence: format!("package {}: {n} package throttling events", p.package),
            numbers: vec![Number::new(
                format!("package{}_throttle", p.package),
                n as f64,
            )],
            fix: Some("check cooling and power limits; lower the load on the package".into()),
        });
    }
    out
}

/// Turbo/boost allowed: the clock depends on load and temperature.
pub fn turbo_on(m: &Machine) -> Option<Finding> {
    if m.boost.turbo_allowed() != Some(true) {
        return None;
    }
    let fix = if m.boost.intel_no_turbo.is_some() {
        "echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo"
    } else {
        "echo 0 > /sys/devices/system/cpu/cpufreq/boost"
    };
    Some(Finding {
        cpus: Vec::new(),
        kind: Kind::TurboOn,
        severity: Severity::Info,
        label: "turbo".into(),
        evidence: "turbo/boost is on: the clock depends on load, temperature and other cores"
            .into(),
        numbers: Vec::new(),
        fix: Some(fix.into()),
    })
}

/// CPUs (watched ones, or all when none is watched) whose governor is not
/// `performance`, one finding per governor.
pub fn governor(m: &Machine, watched: &[u32]) -> Vec<Finding> {
    let mut by_gov: Vec<(String, Vec<u32>)> = Vec::new();
    for f in &m.cpufreq {
        if !watched.is_empty() && !watched.contains(&f.cpu) {
            continue;
        }
        let Some(g) = f.governor.as_deref().filter(|g| *g != "performance") else {
            continue;
        };
        match by_gov.iter_mut().find(|(n, _)| n == g) {
            Some(e) => e.1.push(f.cpu),
            None => by_gov.push((g.to_string(), vec![f.cpu])),
        }
    }
    by_gov
        .into_iter()
        .map(|(g, cpus)| {
            let list = cpulist::format(&cpus);
            Finding {
                severity: if watched.is_empty() {
                    Severity::Info
                } else {
                    Severity::Warn
                },
                kind: Kind::Governor,
                label: format!("gov {g}"),
                evidence: format!("{}: governor {g}, not performance", cpus_label(&cpus)),
                numbers: Vec::new(),
                fix: Some(format!("cpupower -c {list} frequency-set -g performance")),
                cpus,
            }
        })
        .collect()
}
