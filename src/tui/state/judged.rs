//! What the pipeline measured and judged, as the screen shows it: the
//! machine, the interval on screen with its findings and verdicts, who
//! ran, what the sinks said, and the session's log and history. The
//! fields are written only by `State::update` (its parent module); the
//! views read them through the methods here.

use crate::model::interval::Interval;
use crate::model::machine::Machine;
use crate::noise::config::NoiseConfig;
use crate::noise::traced::Traced;
use crate::noise::{CpuVerdict, Finding};
use crate::probe::ProbeReport;
use crate::sample::ladder::Status;
use crate::tui::history::History;
use crate::tui::log::FindingLog;

/// The judged data on screen.
#[derive(Debug, Clone)]
pub struct Judged {
    /// Machine facts (the header).
    pub(super) machine: Machine,
    /// How each metric is obtained, or why not.
    pub(super) statuses: Vec<Status>,
    /// The interval on screen.
    pub(super) latest: Option<Interval>,
    /// The findings of the interval on screen.
    pub(super) findings: Vec<Finding>,
    /// Each CPU's verdict over the interval on screen.
    pub(super) verdicts: Vec<CpuVerdict>,
    /// Who ran on the traced CPUs over the interval on screen.
    pub(super) trace: Option<Traced>,
    /// Thresholds, to judge again at once when the user marks a CPU.
    pub(super) config: NoiseConfig,
    /// Benchmark CPUs, sorted: the judgement depends on them.
    pub(super) watched: Vec<u32>,
    /// What the other sinks said with the last sample (a recorder's file).
    pub(super) notes: Vec<crate::pipeline::Note>,
    /// Why the tree under `--root` is not this machine's live kernel (no
    /// live counter is read for it and one instant has no rates).
    pub(super) foreign: Option<String>,
    /// The last word on who-ran attribution: the traced CPUs, or why none.
    pub(super) trace_status: Option<String>,
    /// Why who ran is not counted in the kernel, where it is not.
    pub(super) trace_missing: Option<crate::base::Unavailable>,
    /// The last `noisetop probe` of this machine, shown in a CPU's detail.
    pub(super) probe: Option<ProbeReport>,
    /// Every finding of the session.
    pub(super) log: FindingLog,
    /// Per-CPU history.
    pub(super) history: History,
}

impl Judged {
    /// Starts with machine facts and nothing judged.
    pub(super) fn new(machine: Machine) -> Self {
        Judged {
            machine,
            statuses: Vec::new(),
            latest: None,
            findings: Vec::new(),
            verdicts: Vec::new(),
            trace: None,
            config: NoiseConfig::default(),
            watched: Vec::new(),
            notes: Vec::new(),
            foreign: None,
            trace_status: None,
            trace_missing: None,
            probe: None,
            log: FindingLog::default(),
            history: History::default(),
        }
    }

    /// Returns the machine facts.
    pub fn machine(&self) -> &Machine {
        &self.machine
    }

    /// Returns how each metric is obtained, or why not.
    pub fn statuses(&self) -> &[Status] {
        &self.statuses
    }

    /// Returns the interval on screen (`None` before the first).
    pub fn latest(&self) -> Option<&Interval> {
        self.latest.as_ref()
    }

    /// Returns the findings of the interval on screen.
    pub fn findings(&self) -> &[Finding] {
        &self.findings
    }

    /// Returns each CPU's verdict over the interval on screen.
    pub fn verdicts(&self) -> &[CpuVerdict] {
        &self.verdicts
    }

    /// Returns who ran on the traced CPUs over the interval on screen.
    pub fn trace(&self) -> Option<&Traced> {
        self.trace.as_ref()
    }

    /// Returns the thresholds the screen judges with.
    pub fn config(&self) -> &NoiseConfig {
        &self.config
    }

    /// Returns the watched CPUs, sorted.
    pub fn watched(&self) -> &[u32] {
        &self.watched
    }

    /// Returns what the other sinks said with the last sample.
    pub fn notes(&self) -> &[crate::pipeline::Note] {
        &self.notes
    }

    /// Returns why the tree on screen is not this machine's live kernel.
    pub fn foreign(&self) -> Option<&str> {
        self.foreign.as_deref()
    }

    /// Returns the last word on who-ran attribution.
    pub fn trace_status(&self) -> Option<&str> {
        self.trace_status.as_deref()
    }

    /// Returns why who ran is not counted in the kernel, where it is not.
    pub fn trace_missing(&self) -> Option<&crate::base::Unavailable> {
        self.trace_missing.as_ref()
    }

    /// Returns the last `noisetop probe` of this machine.
    pub fn probe(&self) -> Option<&ProbeReport> {
        self.probe.as_ref()
    }

    /// Returns every finding of the session.
    pub fn log(&self) -> &FindingLog {
        &self.log
    }

    /// Returns the per-CPU history.
    pub fn history(&self) -> &History {
        &self.history
    }
}
