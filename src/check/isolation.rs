//! Isolation rules: `isolcpus`, `nohz_full`, `rcu_nocbs` and the SMT
//! siblings of the benchmark CPUs. With every online CPU as benchmark CPU
//! the first three ask whether any CPU is set apart at all.

use super::{CheckFacts, Outcome, RuleResult, Scope, cpus_phrase, sysfs_loop};
use crate::base::cpulist;
use crate::collect::facts::cmdline_param;

/// Shows a CPU list, `(empty)` when there is none.
fn list(cpus: &[u32]) -> String {
    if cpus.is_empty() {
        "(empty)".into()
    } else {
        cpulist::format(cpus)
    }
}

fn union(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut v: Vec<u32> = a.iter().chain(b).copied().collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Judges a set of CPUs set apart: with all CPUs as benchmark CPUs, OK
/// when any is; else OK when every benchmark CPU is. The fix is the one
/// isolation advice ([`Machine::isolation_args`], which the dashboard's
/// findings give too): `isolcpus=`, `nohz_full=` and `rcu_nocbs=` go
/// together, whichever of them is missing.
///
/// [`Machine::isolation_args`]: crate::model::machine::Machine::isolation_args
fn judge_set(mut r: RuleResult, f: &CheckFacts, s: &Scope, set: &[u32], param: &str) -> RuleResult {
    if s.all {
        if set.is_empty() {
            r.status = Outcome::Warn;
            if let Some(args) = f.machine.isolation_args(&super::suggested_isolation(f)) {
                r = r.fix(f.boot.add_command(&args));
            }
        }
        return r;
    }
    let missing: Vec<u32> = s
        .cpus
        .iter()
        .copied()
        .filter(|c| set.binary_search(c).is_err())
        .collect();
    if !missing.is_empty() {
        r.status = Outcome::Warn;
        r = r.evidence(format!("not in the set: {}", cpus_phrase(&missing)));
        // the boot CPU cannot be set apart: asking for it changes nothing
        let want = f.machine.isolatable(s.cpus);
        if let Some(boot) = missing.iter().find(|c| !want.contains(c)) {
            r = r.evidence(format!(
                "CPU {boot} is the boot CPU: the kernel keeps it for housekeeping whatever \
                 {param}= says"
            ));
        }
        if want.iter().any(|c| missing.contains(c))
            && let Some(args) = f.machine.isolation_args(&union(set, &want))
        {
            r = r.fix(f.boot.add_command(&args));
        }
    }
    r
}

fn cmdline_evidence(r: RuleResult, f: &CheckFacts, param: &str) -> RuleResult {
    match f
        .cmdline
        .as_deref()
        .ok()
        .and_then(|c| cmdline_param(c, param))
    {
        Some(v) => r.evidence(format!("/proc/cmdline has {param}={v}")),
        None if f.cmdline.is_ok() => r.evidence(format!("/proc/cmdline has no {param}=")),
        None => r,
    }
}

pub(super) fn isolcpus(f: &CheckFacts, s: &Scope) -> RuleResult {
    const ID: &str = "isolcpus";
    const TITLE: &str = "Benchmark CPUs isolated from the scheduler (isolcpus)";
    let set = match &f.isolated {
        Ok(v) => v,
        Err(why) => return RuleResult::unknown(ID, TITLE, why.detail()),
    };
    let r = RuleResult::new(ID, TITLE, Outcome::Ok)
        .evidence(format!("/sys/devices/system/cpu/isolated = {}", list(set)));
    let r = cmdline_evidence(r, f, "isolcpus");
    judge_set(r, f, s, set, "isolcpus")
}

pub(super) fn nohz_full(f: &CheckFacts, s: &Scope) -> RuleResult {
    const ID: &str = "nohz-full";
    const TITLE: &str = "Benchmark CPUs run without the periodic tick (nohz_full)";
    let set = match &f.nohz_full {
        Ok(v) => v,
        Err(why) => {
            let r = RuleResult::unknown(
                ID,
                TITLE,
                format!("{why} (kernel built without CONFIG_NO_HZ_FULL?)"),
            );
            return cmdline_evidence(r, f, "nohz_full");
        }
    };
    let r = RuleResult::new(ID, TITLE, Outcome::Ok)
        .evidence(format!("/sys/devices/system/cpu/nohz_full = {}", list(set)));
    let r = cmdline_evidence(r, f, "nohz_full");
    judge_set(r, f, s, set, "nohz_full")
}

pub(super) fn rcu_nocbs(f: &CheckFacts, s: &Scope) -> RuleResult {
    const ID: &str = "rcu-nocbs";
    const TITLE: &str = "RCU callbacks offloaded from benchmark CPUs (rcu_nocbs)";
    let cmdline = match &f.cmdline {
        Ok(c) => c,
        Err(why) => return RuleResult::unknown(ID, TITLE, why.detail()),
    };
    let mut r = RuleResult::new(ID, TITLE, Outcome::Ok);
    let mut set = match cmdline_param(cmdline, "rcu_nocbs") {
        None => {
            r = r.evidence("/proc/cmdline has no rcu_nocbs=");
            Vec::new()
        }
        Some(v) => match cpulist::parse(v) {
            Ok(cpus) => {
                r = r.evidence(format!("/proc/cmdline has rcu_nocbs={v}"));
                cpus
            }
            Err(e) => {
                return RuleResult::unknown(
                    ID,
                    TITLE,
                    format!("/proc/cmdline: rcu_nocbs={v}: {e}"),
                );
            }
        },
    };
    // The kernel offloads the nohz_full CPUs too (rcu_init_nohz).
    if let Ok(nohz) = &f.nohz_full
        && !nohz.is_empty()
    {
        r = r.evidence(format!(
            "/sys/devices/system/cpu/nohz_full = {} (offloaded too)",
            cpulist::format(nohz)
        ));
        set = union(&set, nohz);
    }
    judge_set(r, f, s, &set, "rcu_nocbs")
}

pub(super) fn smt_siblings(f: &CheckFacts, s: &Scope) -> RuleResult {
    const SHOWN: usize = 8;
    const ID: &str = "smt-siblings";
    const TITLE: &str = "No SMT sibling of a benchmark CPU is online";
    let m = &f.machine;
    let online = &m.online;
    let known: Vec<(u32, Vec<u32>)> = s
        .cpus
        .iter()
        .filter_map(|&c| {
            let t = m.topo(c)?;
            (!t.siblings.is_empty()).then(|| {
                let others = t
                    .siblings
                    .iter()
                    .copied()
                    .filter(|&o| o != c && online.binary_search(&o).is_ok())
                    .collect();
                (c, others)
            })
        })
        .collect();
    let mut r = RuleResult::new(ID, TITLE, Outcome::Ok);
    if let Some(ctl) = &m.kernel.smt_control {
        r = r.evidence(format!("/sys/devices/system/cpu/smt/control = {ctl}"));
    }
    if let Some(active) = m.kernel.smt_active {
        r = r.evidence(format!(
            "/sys/devices/system/cpu/smt/active = {}",
            u8::from(active)
        ));
    }
    if known.is_empty() {
        return match m.kernel.smt_active {
            Some(false) => r,
            Some(true) => {
                r.status = Outcome::Warn;
                r.fix("echo off > /sys/devices/system/cpu/smt/control")
            }
            None => r.unknown_because("no cpuN/topology/thread_siblings_list and no smt/active"),
        };
    }
    let shared: Vec<&(u32, Vec<u32>)> = known.iter().filter(|(_, o)| !o.is_empty()).collect();
    if shared.is_empty() {
        let alone: Vec<u32> = known.iter().map(|(c, _)| *c).collect();
        let whose = if alone.len() == 1 {
            "its core"
        } else {
            "their cores"
        };
        return r.evidence(format!(
            "{} alone on {whose} (cpuN/topology/thread_siblings_list)",
            cpus_phrase(&alone)
        ));
    }
    r.status = Outcome::Warn;
    if s.all {
        let cpus: Vec<u32> = shared.iter().map(|(c, _)| *c).collect();
        return r
            .evidence(format!(
                "{} share a core with another online CPU (cpuN/topology/thread_siblings_list)",
                cpus_phrase(&cpus)
            ))
            .fix("echo off > /sys/devices/system/cpu/smt/control");
    }
    for (c, others) in shared.iter().take(SHOWN) {
        r = r.evidence(format!(
            "CPU {c} shares a core with {} (cpu{c}/topology/thread_siblings_list)",
            cpus_phrase(others)
        ));
    }
    if shared.len() > SHOWN {
        r = r.evidence(format!(
            "… and {} more benchmark CPUs",
            shared.len() - SHOWN
        ));
    }
    let mut off: Vec<u32> = shared
        .iter()
        .flat_map(|(_, o)| o.iter().copied())
        .filter(|o| s.cpus.binary_search(o).is_err())
        .collect();
    off.sort_unstable();
    off.dedup();
    if !off.is_empty() {
        r = r.fix(sysfs_loop(&off, "0", "online"));
    }
    r.fix("echo off > /sys/devices/system/cpu/smt/control")
}
