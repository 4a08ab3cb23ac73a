//! `noisetop check`: reads the machine once and judges its configuration
//! for benchmarking, rule by rule (OK / WARN / FAIL / UNKNOWN), with the
//! values read, the file they came from, and the command that would fix
//! each one (printed, never run).
//!
//! [`facts`] reads; the rules are pure functions of [`CheckFacts`], the
//! benchmark CPUs and [`CheckConfig`], one file per family.

pub(crate) mod boot;
pub mod explain;
pub mod facts;
mod frequency;
mod idle;
mod interrupts;
mod isolation;
mod kernel;
mod platform;

use crate::noise::config::CheckConfig;
use std::collections::BTreeMap;

use serde::Serialize;

use crate::base::cpulist;
use facts::CheckFacts;

/// Version of the JSON shape; raised when a field changes meaning or goes
/// (2: `title` says what was found, `goal` what the rule wants, and `doc`
/// names the man page's section).
pub const SCHEMA: u32 = 2;

/// What a rule concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Outcome {
    /// Set as a benchmark wants it.
    Ok,
    /// What the rule judges could not be read; `reason` says why.
    Unknown,
    /// Adds noise or variation to measurements.
    Warn,
    /// Makes measurements meaningless until fixed.
    Fail,
}

impl Outcome {
    /// The status as printed: `OK`, `WARN`, `FAIL`, `UNKNOWN`.
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Ok => "OK",
            Outcome::Unknown => "UNKNOWN",
            Outcome::Warn => "WARN",
            Outcome::Fail => "FAIL",
        }
    }
}

/// The verdict of one rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleResult {
    /// Stable kebab-case id (`turbo-on`); also the anchor `check-<id>` of
    /// docs/check.md.
    pub id: &'static str,
    /// The verdict.
    pub status: Outcome,
    /// What was found, in a few words: the goal met when OK (`Turbo/boost
    /// is off`), what is wrong on WARN or FAIL (`Turbo/boost is on`), the
    /// goal not judged when UNKNOWN.
    pub title: &'static str,
    /// What the rule wants, whatever it found.
    pub goal: &'static str,
    /// The values read, each naming its file.
    pub evidence: Vec<String>,
    /// Commands that would fix it, one per line; empty when OK or when no
    /// command can (a VM).
    pub fix: Vec<String>,
    /// Why the rule could not judge (UNKNOWN only).
    pub reason: Option<String>,
    /// Where the rule is explained, in the man page an installed binary
    /// prints (`man noisetop, CHECK RULES: turbo-on`).
    pub doc: String,
}

impl RuleResult {
    fn new(id: &'static str, title: &'static str, status: Outcome) -> Self {
        RuleResult {
            id,
            status,
            title,
            goal: title,
            evidence: Vec::new(),
            fix: Vec::new(),
            reason: None,
            doc: doc_of(id),
        }
    }

    /// Says what was found: the rule's finding in place of its goal where
    /// it is not OK.
    fn settled(mut self) -> Self {
        self.title = match self.status {
            Outcome::Warn | Outcome::Fail => found(self.id).unwrap_or(self.goal),
            Outcome::Ok | Outcome::Unknown => self.goal,
        };
        self
    }

    fn unknown(id: &'static str, title: &'static str, reason: impl Into<String>) -> Self {
        let mut r = RuleResult::new(id, title, Outcome::Unknown);
        r.reason = Some(reason.into());
        r
    }

    /// The rule could not judge after all: UNKNOWN with `reason`, keeping
    /// the evidence read so far (and no fix).
    fn unknown_because(mut self, reason: impl Into<String>) -> Self {
        self.status = Outcome::Unknown;
        self.reason = Some(reason.into());
        self.fix.clear();
        self
    }

    fn evidence(mut self, line: impl Into<String>) -> Self {
        self.evidence.push(line.into());
        self
    }

    fn fix(mut self, line: impl Into<String>) -> Self {
        self.fix.push(line.into());
        self
    }
}

/// The whole answer of `noisetop check --json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckReport {
    /// [`SCHEMA`].
    pub schema: u32,
    /// The benchmark CPUs the rules judged.
    pub cpus: Vec<u32>,
    /// One verdict per rule, in a fixed order.
    pub rules: Vec<RuleResult>,
}

/// Every rule id, in the order the rules run and print.
pub const RULE_IDS: [&str; 20] = [
    "governor",
    "turbo-on",
    "epp",
    "freq-range",
    "isolcpus",
    "nohz-full",
    "rcu-nocbs",
    "smt-siblings",
    "irq-affinity",
    "irqbalance",
    "deep-cstates",
    "cstate-limits",
    "cpu-dma-latency",
    "perf-sample-rate",
    "aslr-on",
    "nmi-watchdog",
    "thp",
    "timer-migration",
    "on-battery",
    "vm",
];

/// Where a rule is explained: the man page's CHECK RULES section (made of
/// [`explain::EXPLAIN`]), which an installed binary prints with `noisetop
/// man`.
pub fn doc_of(id: &str) -> String {
    format!("man noisetop, CHECK RULES: {id}")
}

/// What a rule that is not OK found, said as a finding; its goal is the
/// title of an OK line. Without this a WARN line stated the goal
/// (`WARN aslr-on Address space layout randomization is off`).
fn found(id: &str) -> Option<&'static str> {
    Some(match id {
        "governor" => "CPU frequency governor is not performance",
        "turbo-on" => "Turbo/boost is on",
        "epp" => "Energy/performance preference is not performance",
        "freq-range" => "Frequency not pinned (scaling_min_freq < scaling_max_freq)",
        "isolcpus" => "Benchmark CPUs not isolated from the scheduler (isolcpus)",
        "nohz-full" => "Benchmark CPUs keep the periodic tick (nohz_full)",
        "rcu-nocbs" => "RCU callbacks run on benchmark CPUs (rcu_nocbs)",
        "smt-siblings" => "An SMT sibling of a benchmark CPU is online",
        "irq-affinity" => "Device IRQs may run on the benchmark CPUs",
        "irqbalance" => "irqbalance is running",
        "deep-cstates" => "Deep idle states enabled on the benchmark CPUs",
        "cstate-limits" => "idle=poll spins beside the benchmark CPUs (SMT siblings)",
        "cpu-dma-latency" => "A process holds a CPU latency limit (/dev/cpu_dma_latency)",
        "perf-sample-rate" => "perf sampling rate not limited",
        "aslr-on" => "Address space layout randomization is on",
        "nmi-watchdog" => "NMI watchdog is on",
        "thp" => "Transparent huge pages forced on every mapping",
        "timer-migration" => "Timer migration is on",
        "on-battery" => "Running on battery",
        "vm" => "A virtual machine (its CPUs lose time to the hypervisor)",
        _ => return None,
    })
}

/// The benchmark CPUs as the rules see them.
pub(crate) struct Scope<'a> {
    /// Sorted, deduplicated.
    pub cpus: &'a [u32],
    /// The CPUs are every online CPU: isolation rules then ask whether any
    /// CPU is set apart, not whether these are.
    pub all: bool,
    /// Online CPUs not in `cpus`: where noise may be moved.
    pub housekeeping: Vec<u32>,
}

/// Runs every rule. `cpus` are the benchmark CPUs; when they are all the
/// online CPUs, isolation rules judge whether any CPU is set apart.
pub fn rules(facts: &CheckFacts, cpus: &[u32], cfg: &CheckConfig) -> Vec<RuleResult> {
    let mut cpus = cpus.to_vec();
    cpus.sort_unstable();
    cpus.dedup();
    let online = &facts.machine.online;
    let all = !online.is_empty() && online.iter().all(|c| cpus.binary_search(c).is_ok());
    let housekeeping = online
        .iter()
        .copied()
        .filter(|c| cpus.binary_search(c).is_err())
        .collect();
    let s = Scope {
        cpus: &cpus,
        all,
        housekeeping,
    };
    [
        frequency::governor(facts, &s),
        frequency::turbo(facts, &s),
        frequency::epp(facts, &s),
        frequency::freq_range(facts, &s),
        isolation::isolcpus(facts, &s),
        isolation::nohz_full(facts, &s),
        isolation::rcu_nocbs(facts, &s),
        isolation::smt_siblings(facts, &s),
        interrupts::irq_affinity(facts, &s),
        interrupts::irqbalance(facts),
        idle::deep_cstates(facts, &s, cfg),
        idle::cstate_limits(facts, &s),
        idle::cpu_dma_latency(facts),
        kernel::perf_sample_rate(facts, cfg),
        kernel::aslr(facts),
        kernel::nmi_watchdog(facts),
        kernel::thp(facts),
        kernel::timer_migration(facts),
        platform::on_battery(facts),
        platform::vm(facts),
    ]
    .into_iter()
    .map(RuleResult::settled)
    .collect()
}

/// Maps verdicts to the exit code: 2 on any FAIL, 1 on any WARN, else 0
/// (UNKNOWN alone does not fail).
pub fn exit_code(results: &[RuleResult]) -> u8 {
    match results.iter().map(|r| r.status).max() {
        Some(Outcome::Fail) => 2,
        Some(Outcome::Warn) => 1,
        _ => 0,
    }
}

/// Formats CPUs for a sentence: `CPU 3` or `CPUs 0-3,8`.
pub(crate) fn cpus_phrase(cpus: &[u32]) -> String {
    if cpus.len() == 1 {
        format!("CPU {}", cpus[0])
    } else {
        format!("CPUs {}", cpulist::format(cpus))
    }
}

/// The CPUs to set apart when none is: every online CPU but the first core
/// (the first CPU and its SMT siblings), which keeps the housekeeping; on a
/// machine of one core, every CPU but the first.
pub(crate) fn suggested_isolation(facts: &CheckFacts) -> Vec<u32> {
    facts.machine.isolatable(&facts.machine.online)
}

/// Groups CPUs by a value, values in order.
pub(crate) fn by_value<T: Ord>(pairs: impl IntoIterator<Item = (u32, T)>) -> BTreeMap<T, Vec<u32>> {
    let mut map: BTreeMap<T, Vec<u32>> = BTreeMap::new();
    for (cpu, v) in pairs {
        map.entry(v).or_default().push(cpu);
    }
    map
}

/// Writes `value` into `cpuN/<file>` of each CPU: one `echo` for one CPU,
/// else a shell loop over the CPU numbers.
pub(crate) fn sysfs_loop(cpus: &[u32], value: &str, file: &str) -> String {
    if let [c] = cpus {
        return format!("echo {value} > /sys/devices/system/cpu/cpu{c}/{file}");
    }
    format!(
        "for c in {}; do echo {value} > /sys/devices/system/cpu/cpu$c/{file}; done",
        shell_list(cpus)
    )
}

/// Lists numbers for a bash `for` loop, runs of three or more as brace
/// ranges: `0 2 4 {6..9}`.
pub(crate) fn shell_list(nums: &[u32]) -> String {
    let mut sorted = nums.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut words = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        if j >= i + 2 {
            words.push(format!("{{{}..{}}}", sorted[i], sorted[j]));
        } else {
            words.extend(sorted[i..=j].iter().map(u32::to_string));
        }
        i = j + 1;
    }
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(status: Outcome) -> RuleResult {
        RuleResult::new("governor", "x", status)
    }

    #[test]
    fn shell_lists_and_loops() {
        assert_eq!(shell_list(&[]), "");
        assert_eq!(shell_list(&[3]), "3");
        assert_eq!(shell_list(&[0, 1]), "0 1");
        assert_eq!(shell_list(&[9, 0, 2, 4, 6, 7, 8]), "0 2 4 {6..9}");
        assert_eq!(shell_list(&[1, 2, 3, 5, 6, 7]), "{1..3} {5..7}");
        assert_eq!(
            sysfs_loop(&[4], "0", "online"),
            "echo 0 > /sys/devices/system/cpu/cpu4/online"
        );
        assert_eq!(
            sysfs_loop(&[1, 2, 3, 5], "1", "cpuidle/state2/disable"),
            "for c in {1..3} 5; do echo 1 > /sys/devices/system/cpu/cpu$c/cpuidle/state2/disable; done"
        );
    }

    #[test]
    fn exit_codes() {
        assert_eq!(exit_code(&[]), 0);
        assert_eq!(
            exit_code(&[result(Outcome::Ok), result(Outcome::Unknown)]),
            0,
            "UNKNOWN does not fail"
        );
        assert_eq!(exit_code(&[result(Outcome::Ok), result(Outcome::Warn)]), 1);
        assert_eq!(
            exit_code(&[
                result(Outcome::Fail),
                result(Outcome::Warn),
                result(Outcome::Unknown)
            ]),
            2
        );
    }

    #[test]
    fn config_reads_kebab_case_and_rejects_unknown_keys() {
        let cfg: CheckConfig = serde_json::from_str(r#"{"deep-latency-us": 20}"#).unwrap();
        assert_eq!(cfg.deep_latency_us, 20);
        assert_eq!(cfg.perf_sample_rate_max, 1, "missing keys keep defaults");
        assert_eq!(
            serde_json::from_str::<CheckConfig>("{}").unwrap(),
            CheckConfig::default()
        );
        let err = serde_json::from_str::<CheckConfig>(r#"{"deep_latency_us": 20}"#).unwrap_err();
        assert!(err.to_string().contains("unknown field"), "{err}");
    }

    #[test]
    fn statuses_serialize_in_capitals_and_doc_links_name_the_id() {
        let r = result(Outcome::Unknown);
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["status"], "UNKNOWN");
        // a section an installed binary has, not a file of the source tree
        assert_eq!(json["doc"], "man noisetop, CHECK RULES: governor");
        assert_eq!(json["reason"], serde_json::Value::Null);
    }

    #[test]
    fn a_line_that_is_not_ok_says_what_was_found_not_the_goal() {
        let mut r = RuleResult::new(
            "aslr-on",
            "Address space layout randomization is off",
            Outcome::Warn,
        );
        r = r.settled();
        assert_eq!(r.title, "Address space layout randomization is on");
        assert_eq!(r.goal, "Address space layout randomization is off");
        let ok = RuleResult::new("vm", "Bare metal", Outcome::Ok).settled();
        assert_eq!(ok.title, "Bare metal");
        // every rule has its finding, and each differs from the goal
        for id in RULE_IDS {
            assert!(found(id).is_some(), "{id}");
        }
        for (id, _) in explain::EXPLAIN {
            assert!(RULE_IDS.contains(&id), "{id}");
        }
    }
}
