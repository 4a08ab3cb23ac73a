//! Kernel setting rules: perf sample rate, ASLR, NMI watchdog, transparent
//! huge pages and timer migration.

use super::facts::Fact;
use super::{CheckConfig, CheckFacts, Outcome, RuleResult};

/// Judges one sysctl holding a number: WARN when `bad(value)`, with the
/// `sysctl -w` that sets `good`.
fn sysctl(
    id: &'static str,
    title: &'static str,
    fact: &Fact<u64>,
    name: &str,
    bad: impl Fn(u64) -> bool,
    good: u64,
) -> RuleResult {
    let v = match fact {
        Ok(v) => *v,
        Err(why) => return RuleResult::unknown(id, title, why.detail()),
    };
    let ev = format!("/proc/sys/kernel/{name} = {v}");
    if bad(v) {
        RuleResult::new(id, title, Outcome::Warn)
            .evidence(ev)
            .fix(format!("sysctl -w kernel.{name}={good}"))
    } else {
        RuleResult::new(id, title, Outcome::Ok).evidence(ev)
    }
}

pub(super) fn perf_sample_rate(f: &CheckFacts, cfg: &CheckConfig) -> RuleResult {
    let max = cfg.perf_sample_rate_max;
    sysctl(
        "perf-sample-rate",
        "perf sampling rate limited",
        &f.perf_sample_rate,
        "perf_event_max_sample_rate",
        |v| v > max,
        max,
    )
}

pub(super) fn aslr(f: &CheckFacts) -> RuleResult {
    sysctl(
        "aslr-on",
        "Address space layout randomization is off",
        &f.aslr,
        "randomize_va_space",
        |v| v > 0,
        0,
    )
}

pub(super) fn nmi_watchdog(f: &CheckFacts) -> RuleResult {
    sysctl(
        "nmi-watchdog",
        "NMI watchdog is off",
        &f.nmi_watchdog,
        "nmi_watchdog",
        |v| v > 0,
        0,
    )
}

pub(super) fn timer_migration(f: &CheckFacts) -> RuleResult {
    sysctl(
        "timer-migration",
        "Timer migration is off",
        &f.timer_migration,
        "timer_migration",
        |v| v > 0,
        0,
    )
}

pub(super) fn thp(f: &CheckFacts) -> RuleResult {
    const ID: &str = "thp";
    const TITLE: &str = "Transparent huge pages not forced on every mapping";
    const DIR: &str = "/sys/kernel/mm/transparent_hugepage";
    if let (Err(why), Err(_)) = (&f.thp_enabled, &f.thp_defrag) {
        return RuleResult::unknown(ID, TITLE, why.detail());
    }
    let mut r = RuleResult::new(ID, TITLE, Outcome::Ok);
    for (file, fact) in [("enabled", &f.thp_enabled), ("defrag", &f.thp_defrag)] {
        match fact {
            Ok(v) => {
                r = r.evidence(format!("{DIR}/{file} = [{v}]"));
                if v == "always" {
                    r.status = Outcome::Warn;
                    r = r.fix(format!("echo madvise > {DIR}/{file}"));
                }
            }
            Err(why) => r = r.evidence(why.detail()),
        }
    }
    r
}
