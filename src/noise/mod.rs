//! Noise verdicts and findings: pure rules over one interval, the machine
//! facts, the watched CPUs and the thresholds of [`NoiseConfig`].
//!
//! Every CPU gets a [`CpuVerdict`] each interval, from its own
//! interruptions (device IRQs, IPIs, softirqs, timer ticks beyond what its
//! mode needs, steal, other tasks): watched CPUs against the strict limits,
//! the others against mild ones. A [`Finding`] names one thing that
//! disturbs (or may disturb) the measured CPUs, with a stable id, the
//! numbers that show it and the usual fix as a command to copy. One file a
//! family of rules; the sinks only read [`Judgement`]s.

pub mod config;
mod frequency;
mod idle;
mod interrupts;
mod scheduler;
pub use scheduler::OWNER_MIN_PCT;
pub mod settings;
pub mod traced;
mod verdict;
mod virt;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_owner;

use config::NoiseConfig;
use serde::Serialize;
use traced::Traced;
#[cfg(test)]
use traced::{TracedCpu, TracedTask};

pub use verdict::{Cause, CauseClass, CpuVerdict, VerdictState};
// `run --repeat` gives the same boot-time advice for noise that recurred
pub(crate) use interrupts::isolate_cpus;

use crate::base::cpulist;
use crate::model::interval::Interval;
use crate::model::machine::Machine;

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Severity {
    /// Worth knowing; not necessarily noise.
    Info,
    /// Noise that skews measurements.
    Warn,
    /// Noise that dominates measurements.
    Crit,
}

impl Severity {
    /// Names the severity in four capitals, as the findings pane prints it.
    pub fn label(self) -> &'static str {
        match self {
            Severity::Info => "INFO",
            Severity::Warn => "WARN",
            Severity::Crit => "CRIT",
        }
    }
}

/// What a finding is about: its stable id (`Kind::tag`), documented in the
/// README under `finding-<id>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// A device interrupt lands on a watched CPU.
    IrqOnWatched,
    /// Inter-processor interrupts reach a watched CPU.
    IpiOnWatched,
    /// Softirqs run on a watched CPU.
    SoftirqOnWatched,
    /// The timer ticks on a watched CPU more than its mode needs.
    TickOnWatched,
    /// Another task ran on a watched CPU (traced, or sampled from /proc).
    Intruder,
    /// A watched CPU's longest runner (its owner, when none is given) changed.
    OwnerChanged,
    /// Other tasks switch in and out of a watched CPU.
    CswOnWatched,
    /// Tasks migrate onto or off a watched CPU.
    MigOnWatched,
    /// Unwatched CPUs above the mild limits.
    NoisyCpus,
    /// Residency in an idle state with a long exit latency.
    DeepCstate,
    /// The hypervisor runs something else on this vCPU.
    Steal,
    /// Thermal throttling events.
    Throttle,
    /// Turbo/boost is allowed.
    TurboOn,
    /// The cpufreq governor is not `performance`.
    Governor,
    /// The SMT sibling of a watched CPU is busy.
    SmtSiblingBusy,
    /// A watched CPU is not in `isolated` or not in `nohz_full`.
    NotIsolated,
    /// Address-space layout randomisation is on.
    AslrOn,
}

impl Kind {
    /// Every id, in the order the README documents them.
    pub const ALL: [Kind; 17] = [
        Kind::IrqOnWatched,
        Kind::IpiOnWatched,
        Kind::SoftirqOnWatched,
        Kind::TickOnWatched,
        Kind::Intruder,
        Kind::OwnerChanged,
        Kind::CswOnWatched,
        Kind::MigOnWatched,
        Kind::NoisyCpus,
        Kind::DeepCstate,
        Kind::Steal,
        Kind::Throttle,
        Kind::TurboOn,
        Kind::Governor,
        Kind::SmtSiblingBusy,
        Kind::NotIsolated,
        Kind::AslrOn,
    ];

    /// Returns the stable id (`irq-on-watched`).
    pub fn tag(self) -> &'static str {
        match self {
            Kind::IrqOnWatched => "irq-on-watched",
            Kind::IpiOnWatched => "ipi-on-watched",
            Kind::SoftirqOnWatched => "softirq-on-watched",
            Kind::TickOnWatched => "tick-on-watched",
            Kind::Intruder => "intruder",
            Kind::OwnerChanged => "owner-changed",
            Kind::CswOnWatched => "csw-on-watched",
            Kind::MigOnWatched => "mig-on-watched",
            Kind::NoisyCpus => "noisy-cpus",
            Kind::DeepCstate => "deep-cstate",
            Kind::Steal => "steal",
            Kind::Throttle => "throttle",
            Kind::TurboOn => "turbo-on",
            Kind::Governor => "governor",
            Kind::SmtSiblingBusy => "smt-sibling-busy",
            Kind::NotIsolated => "not-isolated",
            Kind::AslrOn => "aslr-on",
        }
    }
}

/// One thing that disturbs (or may disturb) the measured CPUs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The CPUs it concerns; empty when it is machine-wide.
    pub cpus: Vec<u32>,
    /// What it is about; serialized as its id.
    #[serde(rename = "id")]
    pub kind: Kind,
    /// How much it matters.
    pub severity: Severity,
    /// A short, stable label for the CPU's row (`IRQ nvme0q2`); no numbers,
    /// so the same finding keeps its label from one interval to the next.
    pub label: String,
    /// The numbers behind it, in words.
    pub evidence: String,
    /// The same numbers for scripts: name, value, unit.
    pub numbers: Vec<Number>,
    /// The usual fix, as a command to print; `None` when there is none.
    pub fix: Option<String>,
}

/// One figure behind a finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Number {
    /// What it measures (`irq_per_s`, `steal_pct`).
    pub name: String,
    /// Its value.
    pub value: f64,
}

impl Number {
    /// Names a figure.
    pub fn new(name: impl Into<String>, value: f64) -> Self {
        Number {
            name: name.into(),
            value,
        }
    }
}

impl Finding {
    /// Tells whether the finding concerns `cpu` (machine-wide ones do not).
    pub fn touches(&self, cpu: u32) -> bool {
        self.cpus.contains(&cpu)
    }
}

/// Everything judged of one interval: the findings, highest severity
/// first, and one verdict per CPU of the interval, in its order.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Judgement {
    /// Findings, sorted by severity (highest first), then id, then CPUs.
    pub findings: Vec<Finding>,
    /// One verdict per CPU of the interval, in `Interval::cpus` order.
    pub verdicts: Vec<CpuVerdict>,
}

impl Judgement {
    /// Returns the verdict of one CPU. The verdicts follow the interval's
    /// CPUs, in ascending order as the kernel lists them: a binary search,
    /// so that a sink asking for each of 1152 CPUs does not scan 1152 each.
    pub fn verdict(&self, cpu: u32) -> Option<&CpuVerdict> {
        verdict_in(&self.verdicts, cpu)
    }

    /// Returns the ids of the findings that concern `cpu`, without repeats.
    pub fn ids_of(&self, cpu: u32) -> Vec<&'static str> {
        let mut ids: Vec<&'static str> = Vec::new();
        for f in self.findings.iter().filter(|f| f.touches(cpu)) {
            if !ids.contains(&f.kind.tag()) {
                ids.push(f.kind.tag());
            }
        }
        ids
    }

    /// Tells whether any watched CPU, or any finding of `Warn` or more,
    /// says the run was disturbed.
    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }
}

/// Finds one CPU's verdict among verdicts in the interval's CPU order.
pub fn verdict_in(verdicts: &[CpuVerdict], cpu: u32) -> Option<&CpuVerdict> {
    match verdicts.binary_search_by_key(&cpu, |v| v.cpu) {
        Ok(i) => Some(&verdicts[i]),
        // an unsorted online list (a hand-made tree) still answers
        Err(_) => verdicts.iter().find(|v| v.cpu == cpu),
    }
}

/// What the rules read besides the interval.
pub struct Context<'a> {
    /// Machine facts.
    pub machine: &'a Machine,
    /// Watched (benchmark) CPUs, sorted.
    pub watched: &'a [u32],
    /// Thresholds.
    pub config: &'a NoiseConfig,
    /// Who ran and what interrupted the traced CPUs over the interval.
    pub trace: Option<&'a Traced>,
}

impl Context<'_> {
    /// Tells whether a CPU is watched.
    pub fn is_watched(&self, cpu: u32) -> bool {
        self.watched.binary_search(&cpu).is_ok()
    }

    /// The CPUs work may be moved to: online and not watched.
    pub fn housekeeping(&self) -> Vec<u32> {
        self.machine
            .online
            .iter()
            .copied()
            .filter(|c| !self.is_watched(*c))
            .collect()
    }
}

/// Judges one interval: every CPU's verdict and every finding.
pub fn judge(iv: &Interval, cx: &Context<'_>) -> Judgement {
    let verdicts = verdict::verdicts(iv, cx);
    let mut findings = Vec::new();
    for v in verdicts.iter().filter(|v| v.watched) {
        let Some(r) = iv.cpu(v.cpu) else { continue };
        findings.extend(interrupts::on_watched(iv, cx, r, v));
        findings.extend(scheduler::on_watched(cx, r, v));
        if let Some(t) = cx.trace.and_then(|t| t.cpu(v.cpu)) {
            findings.extend(scheduler::owner_changed(cx, t));
        }
        findings.extend(settings::smt_sibling_busy(iv, cx, v.cpu));
    }
    findings.extend(verdict::noisy_cpus(&verdicts));
    findings.extend(idle::deep_cstates(iv, cx));
    findings.extend(virt::steal(iv, cx));
    findings.extend(frequency::throttle(iv));
    findings.extend(frequency::turbo_on(cx.machine));
    findings.extend(frequency::governor(cx.machine, cx.watched));
    findings.extend(settings::not_isolated(cx.machine, cx.watched));
    findings.extend(settings::aslr_on(cx.machine));
    findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then(a.kind.cmp(&b.kind))
            .then_with(|| a.cpus.cmp(&b.cpus))
            .then_with(|| a.label.cmp(&b.label))
    });
    Judgement { findings, verdicts }
}

/// Formats a rate: whole numbers from 10 up, one decimal below.
pub fn rate_text(v: f64) -> String {
    rate(v)
}

/// Formats a rate: whole numbers from 10 up, one decimal below.
pub(crate) fn rate(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// Names CPUs in a sentence: `CPU 5`, `CPUs 0-3`.
pub(crate) fn cpus_label(cpus: &[u32]) -> String {
    match cpus {
        [one] => format!("CPU {one}"),
        _ => format!("CPUs {}", cpulist::format(cpus)),
    }
}

/// The severity of a reading against its limit: critical from
/// `crit-factor` times the limit.
pub(crate) fn severity_of(value: f64, limit: f64, cfg: &NoiseConfig) -> Severity {
    if value >= limit * cfg.crit_factor && limit > 0.0 {
        Severity::Crit
    } else {
        Severity::Warn
    }
}
