//! `noisetop check [--cpus LIST] [--json]`: reads the machine once, prints
//! every configuration rule's verdict with its evidence and fix, and exits
//! 0 (all OK or UNKNOWN), 1 (warnings) or 2 (failures).

use std::fmt::Write as _;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};

use crate::base::cpulist::{self, CpuList, parse_cpus};
use crate::check::facts::CheckFacts;
use crate::check::{self, CheckReport, Outcome, RuleResult};
use crate::noise::config::CheckConfig;
use crate::os::fs::{Fs, Roots};

/// Options of `noisetop check`.
#[derive(Debug, Clone, clap::Args)]
pub struct CheckArgs {
    /// Benchmark CPUs the rules judge (`2-5`) [default: every online CPU,
    /// and isolation rules then ask whether any CPU is set apart].
    #[arg(long, value_name = "LIST", value_parser = parse_cpus)]
    pub cpus: Option<CpuList>,
    /// Print JSON: {schema, cpus, rules: [{id, status, title, goal, evidence, fix, reason, doc}]}.
    #[arg(long)]
    pub json: bool,
}

/// Reads the machine under `roots`, judges it and prints the verdicts.
pub fn run(args: &CheckArgs, roots: &Roots) -> Result<ExitCode> {
    run_with(args, roots, &CheckConfig::default())
}

/// Judges the machine under `roots` with these thresholds.
pub fn run_with(args: &CheckArgs, roots: &Roots, cfg: &CheckConfig) -> Result<ExitCode> {
    let mut fs = Fs::new(roots.clone());
    let facts = CheckFacts::read(&mut fs);
    let cpus = benchmark_cpus(args.cpus.as_ref(), &facts.machine.online)?;
    let results = check::rules(&facts, &cpus, cfg);
    let code = check::exit_code(&results);
    let out = if args.json {
        let report = CheckReport {
            schema: check::SCHEMA,
            cpus,
            rules: results,
        };
        let mut s = serde_json::to_string_pretty(&report).context("JSON of the check")?;
        s.push('\n');
        s
    } else {
        let all = args.cpus.is_none();
        let mut s = format!(
            "noisetop check: benchmark CPUs {}{}\n\n",
            cpulist::format(&cpus),
            if all { " (all online)" } else { "" }
        );
        s.push_str(&render_text(&results));
        s
    };
    crate::cmd::out::emit(&mut std::io::stdout().lock(), &out)?;
    Ok(ExitCode::from(code))
}

/// Chooses the CPUs to judge: the given list, each of which must be online,
/// or every online CPU.
pub fn benchmark_cpus(asked: Option<&CpuList>, online: &[u32]) -> Result<Vec<u32>> {
    if online.is_empty() {
        bail!("no online CPU list could be read (is procfs/sysfs mounted under the root?)");
    }
    let Some(CpuList(cpus)) = asked else {
        return Ok(online.to_vec());
    };
    let offline: Vec<u32> = cpus
        .iter()
        .copied()
        .filter(|c| online.binary_search(c).is_err())
        .collect();
    if !offline.is_empty() {
        return Err(crate::cmd::UsageError(format!(
            "--cpus {}: {} not online (online: {})",
            cpulist::format(cpus),
            if offline.len() == 1 {
                format!("CPU {} is", offline[0])
            } else {
                format!("CPUs {} are", cpulist::format(&offline))
            },
            cpulist::format(online)
        ))
        .into());
    }
    Ok(cpus.clone())
}

/// Prints the verdicts: one line per rule (status, id, title), then its
/// evidence; for a rule that is not OK also the fix or the reason and the
/// man page's section; last a count per status and the exit code.
pub fn render_text(results: &[RuleResult]) -> String {
    let mut out = String::new();
    let width = results.iter().map(|r| r.id.len()).max().unwrap_or(0);
    for r in results {
        let _ = writeln!(
            out,
            "{:<7}  {:<width$}  {}",
            r.status.label(),
            r.id,
            r.title
        );
        let pad = " ".repeat(9 + width + 2);
        if let Some(why) = &r.reason {
            let _ = writeln!(out, "{pad}unknown: {why}");
        }
        for e in &r.evidence {
            let _ = writeln!(out, "{pad}{e}");
        }
        for f in &r.fix {
            let _ = writeln!(out, "{pad}fix: {f}");
        }
        if r.status != Outcome::Ok {
            let _ = writeln!(out, "{pad}see {}", r.doc);
        }
    }
    let count = |s: Outcome| results.iter().filter(|r| r.status == s).count();
    let _ = writeln!(
        out,
        "\n{} OK, {} WARN, {} FAIL, {} UNKNOWN: exit {}",
        count(Outcome::Ok),
        count(Outcome::Warn),
        count(Outcome::Fail),
        count(Outcome::Unknown),
        check::exit_code(results)
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpus_default_to_online_and_must_be_online() {
        assert_eq!(benchmark_cpus(None, &[0, 1]).unwrap(), [0, 1]);
        assert_eq!(
            benchmark_cpus(Some(&CpuList(vec![1])), &[0, 1]).unwrap(),
            [1]
        );
        let err = benchmark_cpus(Some(&CpuList(vec![1, 4, 5])), &[0, 1]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--cpus 1,4-5: CPUs 4-5 are not online (online: 0-1)"
        );
        let err = benchmark_cpus(Some(&CpuList(vec![7])), &[0, 1]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--cpus 7: CPU 7 is not online (online: 0-1)"
        );
        assert!(benchmark_cpus(None, &[]).is_err());
        assert!(parse_cpus("").is_err());
        assert!(parse_cpus("x").is_err());
        assert_eq!(parse_cpus("0-2").unwrap(), CpuList(vec![0, 1, 2]));
    }

    #[test]
    fn text_lists_evidence_fix_reason_and_doc() {
        let ok = RuleResult {
            id: "nmi-watchdog",
            status: Outcome::Ok,
            title: "NMI watchdog is off",
            goal: "NMI watchdog is off",
            evidence: vec!["/proc/sys/kernel/nmi_watchdog = 0".into()],
            fix: vec![],
            reason: None,
            doc: "man noisetop, CHECK RULES: nmi-watchdog".into(),
        };
        let warn = RuleResult {
            id: "thp",
            status: Outcome::Warn,
            title: "Transparent huge pages forced on every mapping",
            goal: "Transparent huge pages not forced on every mapping",
            evidence: vec!["/sys/kernel/mm/transparent_hugepage/enabled = [always]".into()],
            fix: vec!["echo madvise > /sys/kernel/mm/transparent_hugepage/enabled".into()],
            reason: None,
            doc: "man noisetop, CHECK RULES: thp".into(),
        };
        let unknown = RuleResult {
            id: "governor",
            status: Outcome::Unknown,
            title: "CPU frequency governor is performance",
            goal: "CPU frequency governor is performance",
            evidence: vec![],
            fix: vec![],
            reason: Some(
                "no cpufreq driver: /sys/devices/system/cpu/cpu0/cpufreq is absent".into(),
            ),
            doc: "man noisetop, CHECK RULES: governor".into(),
        };
        let text = render_text(&[ok, warn, unknown]);
        let want = "\
OK       nmi-watchdog  NMI watchdog is off
                       /proc/sys/kernel/nmi_watchdog = 0
WARN     thp           Transparent huge pages forced on every mapping
                       /sys/kernel/mm/transparent_hugepage/enabled = [always]
                       fix: echo madvise > /sys/kernel/mm/transparent_hugepage/enabled
                       see man noisetop, CHECK RULES: thp
UNKNOWN  governor      CPU frequency governor is performance
                       unknown: no cpufreq driver: /sys/devices/system/cpu/cpu0/cpufreq is absent
                       see man noisetop, CHECK RULES: governor

1 OK, 1 WARN, 0 FAIL, 1 UNKNOWN: exit 1
";
        assert_eq!(text, want);
    }

    #[test]
    fn args_parse_with_clap() {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct T {
            #[command(flatten)]
            a: CheckArgs,
        }
        let t = T::try_parse_from(["t", "--cpus", "2-3", "--json"]).unwrap();
        assert_eq!(t.a.cpus, Some(CpuList(vec![2, 3])));
        assert!(t.a.json);
        assert!(T::try_parse_from(["t", "--cpus", ""]).is_err());
    }
}
