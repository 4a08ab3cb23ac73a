//! Platform rules: power supply (a laptop on battery) and virtual machines
//! (the hypervisor steals time from the guest's CPUs).

use super::{CheckFacts, Outcome, RuleResult};

pub(super) fn on_battery(f: &CheckFacts) -> RuleResult {
    const ID: &str = "on-battery";
    const TITLE: &str = "Running on mains power";
    let supplies = match &f.power {
        Ok(s) => s,
        Err(why) => return RuleResult::unknown(ID, TITLE, why.detail()),
    };
    if supplies.is_empty() {
        return RuleResult::new(ID, TITLE, Outcome::Ok)
            .evidence("/sys/class/power_supply is empty (no battery: desktop, server or VM)");
    }
    let mut r = RuleResult::new(ID, TITLE, Outcome::Ok);
    for p in supplies {
        let online = match p.online {
            Some(true) => ", online = 1",
            Some(false) => ", online = 0",
            None => "",
        };
        r = r.evidence(format!(
            "/sys/class/power_supply/{}: type = {}{online}",
            p.name,
            p.kind.as_deref().unwrap_or("(unreadable)")
        ));
    }
    // Chargers show as Mains, or as USB on USB-C power delivery.
    let chargers: Vec<_> = supplies
        .iter()
        .filter(|p| matches!(p.kind.as_deref(), Some("Mains" | "USB")) && p.online.is_some())
        .collect();
    let battery = supplies
        .iter()
        .any(|p| p.kind.as_deref() == Some("Battery") && p.scope.as_deref() != Some("Device"));
    if chargers.iter().any(|p| p.online == Some(true)) {
        return r;
    }
    if chargers.is_empty() {
        if battery {
            return r.unknown_because("a battery but no Mains supply with an online file");
        }
        return r;
    }
    r.status = Outcome::Fail;
    r
}

pub(super) fn vm(f: &CheckFacts) -> RuleResult {
    const ID: &str = "vm";
    const TITLE: &str = "Bare metal (a VM's CPUs lose time to the hypervisor)";
    let m = &f.machine;
    let has_cpuinfo = !m.cpuinfo.processors.is_empty() || !m.cpuinfo.flags.is_empty();
    let mut r = RuleResult::new(ID, TITLE, Outcome::Ok);
    if m.cpuinfo.hypervisor {
        r = r.evidence("/proc/cpuinfo flags include hypervisor");
    } else if !m.cpuinfo.flags.is_empty() {
        r = r.evidence("/proc/cpuinfo flags lack hypervisor");
    }
    match (&m.kernel.hypervisor, &f.dmi) {
        (Some(h), _) => {
            r = r.evidence(format!(
                "hypervisor {h} (/sys/hypervisor/type or /sys/class/dmi/id)"
            ));
        }
        (None, Ok(d)) => r = r.evidence(format!("/sys/class/dmi/id: {d}")),
        (None, Err(_)) => {}
    }
    if m.virtualized().is_some() {
        r.status = Outcome::Warn;
        return r.evidence("steal time expected: watch the steal column");
    }
    if !has_cpuinfo && f.dmi.is_err() {
        return r.unknown_because("no /proc/cpuinfo and no /sys/class/dmi/id/sys_vendor");
    }
    r
}
