//! Idle rules: deep C-states the benchmark CPUs may enter (and their exit
//! latency), the kernel command line limits on C-states, and a CPU latency
//! limit held through `/dev/cpu_dma_latency`.

use super::facts::DMA_LATENCY_DEFAULT_US;
use super::{
    CheckConfig, CheckFacts, Outcome, RuleResult, Scope, by_value, cpus_phrase, sysfs_loop,
};
use crate::collect::facts::cmdline_param;

/// Kernel parameters that limit or replace the idle states.
const LIMITS: [&str; 4] = [
    "intel_idle.max_cstate",
    "processor.max_cstate",
    "idle",
    "cpuidle.off",
];

pub(super) fn deep_cstates(f: &CheckFacts, s: &Scope, cfg: &CheckConfig) -> RuleResult {
    const ID: &str = "deep-cstates";
    const TITLE: &str = "No deep idle state enabled on the benchmark CPUs";
    let m = &f.machine;
    let with: Vec<u32> = s
        .cpus
        .iter()
        .copied()
        .filter(|c| m.idle_states.contains_key(c))
        .collect();
    if with.is_empty() {
        let first = s.cpus.first().copied().unwrap_or(0);
        let driver = m.idle_driver.driver.as_deref().unwrap_or("unknown");
        return RuleResult::unknown(
            ID,
            TITLE,
            format!(
                "no cpuidle states: /sys/devices/system/cpu/cpu{first}/cpuidle has none \
                 (idle driver: {driver})"
            ),
        );
    }
    // The idle governors skip a state whose exit latency exceeds the QoS
    // limit (menu and teo compare it with the latency request).
    let qos = f
        .dma_latency
        .as_ref()
        .ok()
        .copied()
        .filter(|&v| v < DMA_LATENCY_DEFAULT_US)
        .map(|v| u64::try_from(v).unwrap_or(0));
    let mut deep = Vec::new();
    let mut held_off = Vec::new();
    let mut deepest = Vec::new();
    for &c in &with {
        let states = m.idle_states.get(&c).map(Vec::as_slice).unwrap_or_default();
        let enabled = states.iter().filter(|st| st.disabled != Some(true));
        let reachable = |l: u64| qos.is_none_or(|q| l <= q);
        if let Some(d) = enabled
            .clone()
            .rfind(|st| st.latency_us.is_some_and(reachable))
        {
            deepest.push((c, (d.name.to_string(), d.latency_us.unwrap_or(0))));
        }
        for st in enabled {
            let Some(lat) = st.latency_us.filter(|&l| l >= cfg.deep_latency_us) else {
                continue;
            };
            let key = (st.index, st.name.to_string(), lat);
            if reachable(lat) {
                deep.push((c, key));
            } else {
                held_off.push((c, key));
            }
        }
    }
    let mut r = RuleResult::new(ID, TITLE, Outcome::Ok);
    let deep = by_value(deep);
    for ((idx, name, lat), cpus) in &deep {
        r = r.evidence(format!(
            "{name}: exit latency {lat} µs, enabled on {} (cpuN/cpuidle/state{idx})",
            cpus_phrase(cpus)
        ));
    }
    for ((idx, name, lat), cpus) in &by_value(held_off) {
        r = r.evidence(format!(
            "{name}: exit latency {lat} µs, enabled on {} (cpuN/cpuidle/state{idx}) but skipped: \
             /dev/cpu_dma_latency holds {} µs",
            cpus_phrase(cpus),
            qos.unwrap_or(0)
        ));
    }
    if deep.is_empty() {
        for ((name, lat), cpus) in &by_value(deepest) {
            r = r.evidence(format!(
                "deepest enabled state {name}: exit latency {lat} µs on {} (below {} µs)",
                cpus_phrase(cpus),
                cfg.deep_latency_us
            ));
        }
        return r;
    }
    r.status = Outcome::Warn;
    for ((idx, _, _), cpus) in &deep {
        r = r.fix(sysfs_loop(
            cpus,
            "1",
            &format!("cpuidle/state{idx}/disable"),
        ));
    }
    r
}

pub(super) fn cstate_limits(f: &CheckFacts, s: &Scope) -> RuleResult {
    const ID: &str = "cstate-limits";
    const TITLE: &str = "Kernel command line limits on idle states";
    let cmdline = match &f.cmdline {
        Ok(c) => c,
        Err(why) => return RuleResult::unknown(ID, TITLE, why.detail()),
    };
    let mut r = RuleResult::new(ID, TITLE, Outcome::Ok);
    let found: Vec<(&str, &str)> = LIMITS
        .iter()
        .filter_map(|&p| Some((p, cmdline_param(cmdline, p)?)))
        .collect();
    if found.is_empty() {
        r = r.evidence(format!(
            "/proc/cmdline has none of {}",
            LIMITS.map(|p| format!("{p}=")).join(", ")
        ));
    }
    for (p, v) in &found {
        r = r.evidence(format!("/proc/cmdline has {p}={v}"));
    }
    if let Some(d) = &f.machine.idle_driver.driver {
        r = r.evidence(format!(
            "/sys/devices/system/cpu/cpuidle/current_driver = {d}"
        ));
    }
    // idle=poll spins every idle CPU; an SMT sibling that spins takes
    // execution slots from the benchmark thread on the same core.
    if found.iter().any(|(p, v)| *p == "idle" && *v == "poll") {
        let m = &f.machine;
        let busy_siblings: Vec<u32> = s
            .cpus
            .iter()
            .copied()
            .filter(|&c| {
                m.topo(c).is_some_and(|t| {
                    t.siblings
                        .iter()
                        .any(|&o| o != c && m.online.binary_search(&o).is_ok())
                })
            })
            .collect();
        if !busy_siblings.is_empty() {
            r.status = Outcome::Warn;
            r = r
                .evidence(format!(
                    "idle=poll with online SMT siblings of {}",
                    cpus_phrase(&busy_siblings)
                ))
                .fix(f.boot.remove_command("idle"));
        }
    }
    r
}

pub(super) fn cpu_dma_latency(f: &CheckFacts) -> RuleResult {
    const ID: &str = "cpu-dma-latency";
    const TITLE: &str = "No process holds a CPU latency limit (/dev/cpu_dma_latency)";
    match f.dma_latency {
        Err(ref why) => RuleResult::unknown(ID, TITLE, why.detail()),
        Ok(v) if v >= DMA_LATENCY_DEFAULT_US => RuleResult::new(ID, TITLE, Outcome::Ok).evidence(
            format!("/dev/cpu_dma_latency = {v} µs (the kernel default: no limit held)"),
        ),
        Ok(v) => RuleResult::new(ID, TITLE, Outcome::Warn)
            .evidence(format!(
                "/dev/cpu_dma_latency = {v} µs: idle states with a longer exit latency are \
                 skipped on every CPU while the holder keeps the device open"
            ))
            .fix("fuser -v /dev/cpu_dma_latency  # names the process holding it"),
    }
}
