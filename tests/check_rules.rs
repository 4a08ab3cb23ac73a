//! `noisetop check` rules on synthetic /proc and /sys trees (each rule
//! both ways, and UNKNOWN when its file is missing), on every real capture,
//! and live on this machine.

use std::path::Path;

use noisetop::check::{self, CheckConfig, CheckFacts, RuleResult, Status};
use noisetop::cmd::check::render_text;
use noisetop::source::fs::{Fs, Roots};

fn judge(root: &Path, cpus: Option<&[u32]>) -> Vec<RuleResult> {
    let mut fs = Fs::new(Roots::under(root));
    let facts = CheckFacts::read(&mut fs);
    let cpus = cpus.map_or_else(|| facts.machine.online.clone(), <[u32]>::to_vec);
    check::rules(&facts, &cpus, &CheckConfig::default())
}

fn find<'a>(rs: &'a [RuleResult], id: &str) -> &'a RuleResult {
    rs.iter().find(|r| r.id == id).unwrap()
}

/// Live: every rule answers, and what this machine lacks is UNKNOWN with
/// the reason (a VM without cpufreq: governor, turbo, EPP, range).
#[test]
fn live_machine() {
    let r = judge(Path::new("/"), None);
    println!("{}", render_text(&r));
    let ids: Vec<&str> = r.iter().map(|r| r.id).collect();
    assert_eq!(ids, check::RULE_IDS);
    for rule in &r {
        assert_eq!(
            rule.status == Status::Unknown,
            rule.reason.is_some(),
            "{rule:?}"
        );
    }
    if !Path::new("/sys/devices/system/cpu/cpu0/cpufreq").exists() {
        for id in ["governor", "epp", "freq-range"] {
            let g = find(&r, id);
            assert_eq!(g.status, Status::Unknown, "{g:?}");
            assert_eq!(
                g.reason.as_deref(),
                Some("no cpufreq driver: /sys/devices/system/cpu/cpu0/cpufreq is absent")
            );
        }
        let t = find(&r, "turbo-on");
        if t.status == Status::Unknown {
            assert_eq!(
                t.reason.as_deref(),
                Some(
                    "no cpufreq driver: no intel_pstate/no_turbo, cpufreq/boost or \
                     cpuN/cpufreq/boost file"
                )
            );
        }
    }
}
