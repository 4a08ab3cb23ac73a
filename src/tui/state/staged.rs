//! Test-only setters: they stage screens that the loop reaches only after
//! many samples and keys (a finding on a given CPU, an owner's long name,
//! a sample grown stale), so that a test can draw them at once. Only
//! tests are built with them: the running dashboard changes its state
//! through `update` alone.

use std::time::Instant;

use super::{Change, Origin, Overlay, SelfIpis, State};
use crate::model::interval::Interval;
use crate::noise::traced::Traced;
use crate::noise::{CpuVerdict, Finding};
use crate::pipeline::Msg;
use crate::tui::log::FindingLog;

impl State {
    /// Takes a sampler's message as the loop does, received now.
    pub(crate) fn update_feed(&mut self, m: Msg) {
        self.update(Change::Feed(m, Instant::now()));
    }

    pub(crate) fn set_selected(&mut self, cpu: Option<u32>) {
        self.nav.selected = cpu;
    }

    pub(crate) fn set_overlay(&mut self, o: Overlay) {
        self.nav.overlay = o;
    }

    pub(crate) fn set_popup_scroll(&mut self, line: u16) {
        self.nav.popup_scroll = line;
    }

    pub(crate) fn set_columns(&mut self, columns: Vec<usize>) {
        self.nav.columns = columns;
    }

    pub(crate) fn set_watched(&mut self, cpus: Vec<u32>) {
        self.judged.watched = cpus;
    }

    pub(crate) fn set_findings(&mut self, findings: Vec<Finding>) {
        self.judged.findings = findings;
    }

    pub(crate) fn set_verdicts(&mut self, verdicts: Vec<CpuVerdict>) {
        self.judged.verdicts = verdicts;
    }

    pub(crate) fn set_trace(&mut self, trace: Option<Traced>) {
        self.judged.trace = trace;
    }

    pub(crate) fn set_trace_missing(&mut self, why: Option<crate::base::Unavailable>) {
        self.judged.trace_missing = why;
    }

    pub(crate) fn set_foreign(&mut self, why: Option<String>) {
        self.judged.foreign = why;
    }

    pub(crate) fn set_log(&mut self, log: FindingLog) {
        self.judged.log = log;
    }

    pub(crate) fn machine_mut(&mut self) -> &mut crate::model::machine::Machine {
        &mut self.judged.machine
    }

    pub(crate) fn latest_mut(&mut self) -> Option<&mut Interval> {
        self.judged.latest.as_mut()
    }

    pub(crate) fn set_origin(&mut self, origin: Origin) {
        self.pacing.origin = origin;
    }

    pub(crate) fn set_ended(&mut self, why: Option<String>) {
        self.pacing.ended = why;
    }

    pub(crate) fn set_arrived(&mut self, at: Option<Instant>) {
        self.pacing.arrived = at;
    }

    pub(crate) fn set_own_ipis(&mut self, ipis: SelfIpis) {
        self.pacing.own_ipis = ipis;
    }
}
