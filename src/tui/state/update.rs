//! `State::update`, the one writer of the state once the loop runs: what
//! can happen (`Change`: a key, a message from the sampler, the clock, the
//! terminal's size) and what each does. Keys are carried out in
//! `on_key`; the sampler's messages here.

use std::time::Instant;

use ratatui::layout::Size;

use super::{Effect, SelfIpis, State, View};
use crate::pipeline::{Msg, Sample};
use crate::tui::history::HISTORY_LEN;
use crate::tui::keys::Action;

/// What happens to the screen: the only input of [`State::update`].
#[derive(Debug, Clone)]
pub enum Change {
    /// The user pressed the key of this action.
    Key(Action),
    /// The sampler's message, received at this instant of the loop's clock.
    Feed(Msg, Instant),
    /// The sampler's channel closed.
    FeedClosed,
    /// noisetop's own CPU use, % of one CPU, newly measured.
    OwnCpu(f64),
    /// The loop's clock as it is about to draw.
    Tick(Instant),
    /// The terminal's size the loop is about to draw at: the first one
    /// opens the overview instead of the Cores view when the CPUs do not
    /// fit as rows.
    Screen(Size),
}

impl From<Action> for Change {
    fn from(a: Action) -> Self {
        Change::Key(a)
    }
}

impl State {
    /// Carries out one change; returns what the loop must do beyond the
    /// state.
    pub fn update(&mut self, change: impl Into<Change>) -> Option<Effect> {
        match change.into() {
            Change::Key(a) => return self.on_key(a),
            Change::Feed(msg, at) => {
                let had = self.judged.latest.as_ref().map(|iv| iv.to.mono_ns);
                self.apply(msg);
                // "stale" counts from when the interval on screen changed
                if self.judged.latest.as_ref().map(|iv| iv.to.mono_ns) != had {
                    self.pacing.arrived = Some(at);
                }
            }
            Change::FeedClosed => {
                // without an `Ended` first the sampler died (a panic, whose
                // hook has already restored the terminal): quit too
                if self.pacing.ended.is_none() {
                    self.pacing.ended = Some("the sampler stopped unexpectedly".into());
                    self.pacing.quit = true;
                }
            }
            Change::OwnCpu(pct) => self.pacing.own_cpu = Some(pct),
            Change::Tick(now) => self.pacing.now = Some(now),
            Change::Screen(size) => {
                self.nav.screen = size;
                self.fit_view();
            }
        }
        None
    }

    /// Takes one message from the sampler: samples that come while paused
    /// are held (the newest `HISTORY_LEN`) for the resume.
    fn apply(&mut self, msg: Msg) {
        match msg {
            Msg::Ready { statuses, .. } => self.judged.statuses = statuses,
            Msg::Sample(s) if self.pacing.paused => {
                if self.pacing.held.len() == HISTORY_LEN {
                    self.pacing.held.remove(0);
                }
                self.pacing.held.push(*s);
            }
            Msg::Sample(s) => self.take(*s),
            Msg::Ended(why) => self.pacing.ended = Some(why),
        }
    }

    /// Puts a sample on screen.
    pub(super) fn take(&mut self, s: Sample) {
        let j = &mut self.judged;
        if let Some(m) = s.machine {
            j.machine = *m;
        }
        j.statuses = s.statuses;
        self.pacing.own_ipis = match &s.own_ipis {
            None => SelfIpis::NotLive,
            Some(Err(_)) => SelfIpis::Uncounted,
            Some(Ok(o)) => SelfIpis::Counted {
                sent: o.since_first,
                woke: o.woke_since_first,
            },
        };
        j.trace = s.trace;
        j.trace_missing = s.trace_missing;
        if let Some(n) = s.who_ran {
            j.trace_status = Some(n);
        }
        j.notes = s.notes;
        let mut judgement = s.judgement;
        // marks the sampler has not seen yet (or a replay, which has no
        // control): judge again with the CPUs on screen
        if s.watched != self.judged.watched {
            judgement = self.judge(&s.interval);
        }
        let j = &mut self.judged;
        j.history.record(&s.interval);
        j.log.record(&judgement.findings, s.interval.to.wall_ns);
        self.pacing.position = s.position.or(self.pacing.position);
        j.findings = judgement.findings;
        j.verdicts = judgement.verdicts;
        j.latest = Some(s.interval);
        if self.nav.selected.is_none_or(|c| !self.order().contains(&c)) {
            self.nav.selected = self.order().first().copied();
        }
    }

    /// Opens the overview instead of the Cores view, once, when the CPUs
    /// do not fit the screen as rows.
    fn fit_view(&mut self) {
        if !std::mem::take(&mut self.nav.auto_view) || self.nav.view != View::Cores {
            return;
        }
        let n = self.order().len();
        let screen = self.nav.screen;
        let g =
            crate::tui::layout::Geometry::of(crate::tui::layout::cpu_rows(screen), screen.width, n);
        if n > g.slots() {
            self.nav.view = View::Overview;
        }
    }
}
