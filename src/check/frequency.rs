//! Frequency rules: governor, turbo/boost, EPP and the scaling range of the
//! benchmark CPUs, from cpufreq.

use super::{
    CheckFacts, Outcome, RuleResult, Scope, by_value, cpus_phrase, facts::shown, sysfs_loop,
};
use crate::base::{Cause, Unavailable, cpulist};
use crate::collect::cpufreq::CpuFreqInfo;
use crate::collect::topology::CPU_DIR;
use crate::os::fs::Base;

/// The cpufreq policies of the benchmark CPUs, plus the benchmark CPUs
/// without one; `Err` (the reason) when none of them has cpufreq.
fn policies<'a>(
    f: &'a CheckFacts,
    s: &Scope,
) -> Result<(Vec<&'a CpuFreqInfo>, Vec<u32>), Unavailable> {
    let mut have = Vec::new();
    let mut lack = Vec::new();
    for &c in s.cpus {
        match f.machine.cpufreq.iter().find(|i| i.cpu == c) {
            Some(i) => have.push(i),
            None => lack.push(c),
        }
    }
    if have.is_empty() {
        let first = s.cpus.first().copied().unwrap_or(0);
        return Err(Unavailable::new(
            Cause::KernelLacks,
            format!(
                "no cpufreq driver: {} is absent",
                shown(Base::Sys, &format!("{CPU_DIR}/cpu{first}/cpufreq"))
            ),
        ));
    }
    Ok((have, lack))
}

fn lacking(r: RuleResult, lack: &[u32]) -> RuleResult {
    if lack.is_empty() {
        r
    } else {
        r.evidence(format!("no cpufreq on {}", cpus_phrase(lack)))
    }
}

pub(super) fn governor(f: &CheckFacts, s: &Scope) -> RuleResult {
    const ID: &str = "governor";
    const TITLE: &str = "CPU frequency governor is performance";
    let (have, lack) = match policies(f, s) {
        Ok(p) => p,
        Err(why) => return RuleResult::unknown(ID, TITLE, why.detail),
    };
    let groups = by_value(have.iter().map(|i| (i.cpu, i.governor.clone())));
    if groups.keys().all(Option::is_none) {
        return RuleResult::unknown(
            ID,
            TITLE,
            "scaling_governor unreadable on every benchmark CPU",
        );
    }
    let slow: Vec<u32> = groups
        .iter()
        .filter(|(g, _)| g.as_deref().is_some_and(|g| g != "performance"))
        .flat_map(|(_, cpus)| cpus.iter().copied())
        .collect();
    let status = if slow.is_empty() {
        Outcome::Ok
    } else {
        Outcome::Warn
    };
    let mut r = RuleResult::new(ID, TITLE, status);
    for (g, cpus) in &groups {
        r = r.evidence(format!(
            "/sys/devices/system/cpu/cpuN/cpufreq/scaling_governor = {} on {}",
            g.as_deref().unwrap_or("(unreadable)"),
            cpus_phrase(cpus)
        ));
    }
    r = lacking(r, &lack);
    if !slow.is_empty() {
        let mut slow = slow;
        slow.sort_unstable();
        r = r.fix(format!(
            "cpupower -c {} frequency-set -g performance",
            cpulist::format(&slow)
        ));
    }
    r
}

pub(super) fn turbo(f: &CheckFacts, s: &Scope) -> RuleResult {
    const ID: &str = "turbo-on";
    const TITLE: &str = "Turbo/boost is off";
    let b = &f.machine.boost;
    let mut r = RuleResult::new(ID, TITLE, Outcome::Ok);
    let mut seen = false;
    let mut on = false;
    if let Some(off) = b.intel_no_turbo {
        seen = true;
        r = r.evidence(format!(
            "/sys/devices/system/cpu/intel_pstate/no_turbo = {}",
            u8::from(off)
        ));
        if !off {
            on = true;
            r = r.fix("echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo");
        }
    }
    if let Some(allowed) = b.cpufreq_boost {
        seen = true;
        r = r.evidence(format!(
            "/sys/devices/system/cpu/cpufreq/boost = {}",
            u8::from(allowed)
        ));
        if allowed {
            on = true;
            r = r.fix("echo 0 > /sys/devices/system/cpu/cpufreq/boost");
        }
    }
    let policy: Vec<(u32, bool)> = f
        .policy_boost
        .iter()
        .copied()
        .filter(|(c, _)| s.cpus.binary_search(c).is_ok())
        .collect();
    if !policy.is_empty() {
        seen = true;
        let groups = by_value(policy);
        for (v, cpus) in &groups {
            r = r.evidence(format!(
                "/sys/devices/system/cpu/cpuN/cpufreq/boost = {} on {}",
                u8::from(*v),
                cpus_phrase(cpus)
            ));
        }
        if let Some(cpus) = groups.get(&true) {
            on = true;
            r = r.fix(sysfs_loop(cpus, "0", "cpufreq/boost"));
        }
    }
    for (file, v) in [
        ("intel_pstate/status", &b.intel_pstate_status),
        ("amd_pstate/status", &b.amd_pstate_status),
    ] {
        if let Some(v) = v {
            r = r.evidence(format!("/sys/devices/system/cpu/{file} = {v}"));
        }
    }
    if !seen {
        let what = "no intel_pstate/no_turbo, cpufreq/boost or cpuN/cpufreq/boost file";
        let why = if f.machine.cpufreq.is_empty() {
            format!("no cpufreq driver: {what}")
        } else {
            what.to_string()
        };
        return r.unknown_because(why);
    }
    if on {
        r.status = Outcome::Warn;
    }
    r
}

pub(super) fn epp(f: &CheckFacts, s: &Scope) -> RuleResult {
    const ID: &str = "epp";
    const TITLE: &str = "Energy/performance preference is performance";
    let (have, lack) = match policies(f, s) {
        Ok(p) => p,
        Err(why) => return RuleResult::unknown(ID, TITLE, why.detail),
    };
    let with: Vec<(u32, &str)> = have
        .iter()
        .filter_map(|i| Some((i.cpu, i.epp.as_deref()?)))
        .collect();
    if with.is_empty() {
        let driver = have
            .iter()
            .find_map(|i| i.driver.as_deref())
            .unwrap_or("unknown");
        return RuleResult::unknown(
            ID,
            TITLE,
            format!(
                "no energy_performance_preference (cpufreq driver {driver}; EPP needs \
                 intel_pstate or amd-pstate in active mode)"
            ),
        );
    }
    let groups = by_value(with);
    let mut r = RuleResult::new(ID, TITLE, Outcome::Ok);
    for (v, cpus) in &groups {
        r = r.evidence(format!(
            "/sys/devices/system/cpu/cpuN/cpufreq/energy_performance_preference = {v} on {}",
            cpus_phrase(cpus)
        ));
    }
    r = lacking(r, &lack);
    let mut other: Vec<u32> = groups
        .iter()
        .filter(|(v, _)| **v != "performance")
        .flat_map(|(_, c)| c.iter().copied())
        .collect();
    if !other.is_empty() {
        other.sort_unstable();
        r.status = Outcome::Warn;
        r = r.fix(sysfs_loop(
            &other,
            "performance",
            "cpufreq/energy_performance_preference",
        ));
    }
    r
}

pub(super) fn freq_range(f: &CheckFacts, s: &Scope) -> RuleResult {
    const ID: &str = "freq-range";
    const TITLE: &str = "Frequency pinned (scaling_min_freq = scaling_max_freq)";
    let (have, lack) = match policies(f, s) {
        Ok(p) => p,
        Err(why) => return RuleResult::unknown(ID, TITLE, why.detail),
    };
    let with: Vec<(u32, (u64, u64))> = have
        .iter()
        .filter_map(|i| Some((i.cpu, (i.scaling_min_khz?, i.scaling_max_khz?))))
        .collect();
    if with.is_empty() {
        return RuleResult::unknown(
            ID,
            TITLE,
            "scaling_min_freq or scaling_max_freq unreadable on every benchmark CPU",
        );
    }
    let groups = by_value(with);
    let mut r = RuleResult::new(ID, TITLE, Outcome::Ok);
    for ((lo, hi), cpus) in &groups {
        r = r.evidence(format!(
            "/sys/devices/system/cpu/cpuN/cpufreq/scaling_min_freq = {lo}, scaling_max_freq = {hi} (kHz) on {}",
            cpus_phrase(cpus)
        ));
    }
    r = lacking(r, &lack);
    let mut loose: Vec<u32> = groups
        .iter()
        .filter(|((lo, hi), _)| lo < hi)
        .flat_map(|(_, c)| c.iter().copied())
        .collect();
    if !loose.is_empty() {
        loose.sort_unstable();
        r.status = Outcome::Warn;
        // The base frequency holds without turbo; acpi-cpufreq's
        // cpuinfo_max_freq is the base too (boost lies above it).
        let target = have
            .iter()
            .filter(|i| loose.contains(&i.cpu))
            .filter_map(|i| i.base_khz.or(i.cpuinfo_max_khz).or(i.scaling_max_khz))
            .min();
        if let Some(t) = target {
            r = r.fix(format!(
                "cpupower -c {} frequency-set -d {t} -u {t}",
                cpulist::format(&loose)
            ));
        }
    }
    r
}
