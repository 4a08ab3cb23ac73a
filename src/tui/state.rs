//! Everything the screen shows, split by what it holds: the judged data
//! (`Judged`: the interval on screen, its verdicts, the history), the
//! navigation (`Navigation`: view, selection, order, pop-ups) and the
//! pacing (`Pacing`: interval or speed, pause, timing, self-cost).
//!
//! A `State` is built with `new` and the `with_*` settings before the loop
//! starts; from then on `update` is the only writer: a key, a sampler's
//! message, the clock and the terminal's size all come to it as a
//! `Change`. Rendering reads a `&State` through the parts' methods, so no
//! view can change what another one shows.

mod judged;
mod navigation;
mod on_key;
mod pacing;
mod rows;
#[cfg(test)]
mod staged;
mod update;

use std::time::Duration;

use ratatui::layout::Size;

use crate::model::machine::Machine;
use crate::noise::config::NoiseConfig;
use crate::probe::ProbeReport;
use crate::tui::overview::Paint;
use crate::tui::theme::Theme;

pub use judged::Judged;
pub use navigation::Navigation;
pub use pacing::{Pacing, SelfIpis};
pub use rows::noise_score;
pub use update::Change;

/// The main views, in Tab order; `Detail` is entered with Enter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// One row per CPU.
    Cores,
    /// One cell per CPU, by package and core, coloured by one metric.
    Overview,
    /// Interrupt sources × CPUs.
    Interrupts,
    /// Idle-state residency per CPU and state.
    Cstates,
    /// The session's findings.
    Findings,
    /// History of the selected CPU.
    Detail,
}

impl View {
    /// Names the view for the tab line.
    pub fn label(self) -> &'static str {
        match self {
            View::Cores => "Cores",
            View::Overview => "Overview",
            View::Interrupts => "Interrupts",
            View::Cstates => "C-states",
            View::Findings => "Findings",
            View::Detail => "Detail",
        }
    }

    /// The views Tab cycles through.
    pub const TABS: [View; 5] = [
        View::Cores,
        View::Overview,
        View::Interrupts,
        View::Cstates,
        View::Findings,
    ];

    /// Every view: the tabs and the detail.
    #[cfg(test)]
    pub const ALL: [View; 6] = [
        View::Cores,
        View::Overview,
        View::Interrupts,
        View::Cstates,
        View::Findings,
        View::Detail,
    ];
}

/// The order of the CPU rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sort {
    /// By CPU number.
    Cpu,
    /// Noisiest first: findings by severity, then interrupt and switch rates.
    Noise,
    /// Busiest first.
    Busy,
}

impl Sort {
    /// Names the order for the title.
    pub fn label(self) -> &'static str {
        match self {
            Sort::Cpu => "cpu",
            Sort::Noise => "noisiest",
            Sort::Busy => "busiest",
        }
    }
}

/// Which CPUs the lists and the overview show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    /// Every online CPU (within `--cpus`).
    All,
    /// Only the watched CPUs.
    Watched,
    /// Only CPUs with a finding in the interval on screen.
    Noisy,
}

impl Filter {
    /// Names the filter for the title.
    pub fn label(self) -> &'static str {
        match self {
            Filter::All => "all",
            Filter::Watched => "only watched",
            Filter::Noisy => "only noisy",
        }
    }
}

/// How a CPU stands in the interval on screen, from its findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// No finding touches it.
    Quiet,
    /// Its worst finding is informational.
    Info,
    /// Its worst finding skews measurements.
    Warn,
    /// Its worst finding dominates measurements.
    Crit,
}

impl Verdict {
    /// Names the verdict in a word.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Quiet => "quiet",
            Verdict::Info => "info",
            Verdict::Warn => "warn",
            Verdict::Crit => "crit",
        }
    }
}

/// A pop-up over the view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overlay {
    /// None.
    None,
    /// The keys and the legend.
    Help,
    /// Where each metric comes from, or why it is unavailable.
    Why,
    /// One finding of the log: evidence, history and fix.
    Finding,
}

/// Where the samples come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Origin {
    /// The running machine.
    Live,
    /// A capture, named by its folder.
    Replay(String),
}

/// A change the event loop carries out beyond the state itself.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// The sampler's new interval.
    Interval(Duration),
    /// The replay's new speed factor.
    Speed(f64),
    /// The watched set changed (noisetop moves itself off those CPUs).
    Watched(Vec<u32>),
    /// Pause switched (a replay re-anchors its clock).
    Paused(bool),
    /// These pids own the watched CPUs from now on.
    Owner(Vec<u32>),
}

/// Tasks the detail's who-ran table lists.
pub const WHO_RAN_ROWS: usize = 5;

/// Sampling intervals `+`/`-` step through.
pub const INTERVAL_STEPS_MS: [u64; 10] =
    [100, 200, 250, 500, 1000, 2000, 5000, 10_000, 30_000, 60_000];
/// Replay speeds `+`/`-` step through (`+` plays slower, like a longer interval).
pub const SPEED_STEPS: [f64; 8] = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 64.0];

/// The dashboard's whole state.
#[derive(Debug, Clone)]
pub struct State {
    /// What the pipeline measured and judged.
    judged: Judged,
    /// Where the user is on the screen.
    nav: Navigation,
    /// When samples come and how the session runs.
    pacing: Pacing,
    /// Colours.
    theme: Theme,
}

impl State {
    /// Starts with machine facts and no sample.
    pub fn new(machine: Machine, origin: Origin, interval: Duration, theme: Theme) -> Self {
        State {
            nav: Navigation::new(machine.online.first().copied()),
            judged: Judged::new(machine),
            pacing: Pacing::new(origin, interval),
            theme,
        }
    }

    /// Sets the watched CPUs (`--watch`), sorted and without repeats, and
    /// selects the first: the row marked `▸` is the one Enter opens.
    #[must_use]
    pub fn with_watched(mut self, mut cpus: Vec<u32>) -> Self {
        cpus.sort_unstable();
        cpus.dedup();
        if let Some(&first) = cpus.first() {
            self.nav.selected = Some(first);
        }
        self.judged.watched = cpus;
        self
    }

    /// Lists only these CPUs (`--cpus`).
    #[must_use]
    pub fn with_only(mut self, only: Option<Vec<u32>>) -> Self {
        self.nav.only = only;
        self
    }

    /// Judges with these thresholds when the user marks a CPU.
    #[must_use]
    pub fn with_config(mut self, config: NoiseConfig) -> Self {
        self.judged.config = config;
        self
    }

    /// Says why the tree read is not this machine's live kernel.
    #[must_use]
    pub fn with_foreign(mut self, why: String) -> Self {
        self.judged.foreign = Some(why);
        self
    }

    /// Shows the last `noisetop probe` of this machine in a CPU's detail.
    #[must_use]
    pub fn with_probe(mut self, probe: Option<ProbeReport>) -> Self {
        self.judged.probe = probe;
        self
    }

    /// Shows these optional columns of wide rows (`--show`/`--hide`), and
    /// makes them the set `w` switches back to.
    #[must_use]
    pub fn with_columns(mut self, columns: Vec<usize>) -> Self {
        self.nav.chosen_columns.clone_from(&columns);
        self.nav.columns = columns;
        self
    }

    /// Starts with this row order.
    #[must_use]
    pub fn with_sort(mut self, sort: Sort) -> Self {
        self.nav.sort = sort;
        self
    }

    /// Starts with this filter.
    #[must_use]
    pub fn with_filter(mut self, filter: Filter) -> Self {
        self.nav.filter = filter;
        self
    }

    /// Starts with the overview coloured by this metric.
    #[must_use]
    pub fn with_paint(mut self, paint: Paint) -> Self {
        self.nav.paint = paint;
        self
    }

    /// Shows this view (a picture or a benchmark of one view: the first
    /// draw may still open the overview instead of the Cores view).
    #[must_use]
    pub fn with_view(mut self, view: View) -> Self {
        self.nav.view = view;
        self
    }

    /// Takes the terminal's size for page moves and layout without
    /// drawing (see [`Change::Screen`] for the loop's draws).
    #[must_use]
    pub fn with_screen(mut self, size: Size) -> Self {
        self.nav.screen = size;
        self
    }

    /// Returns what the pipeline measured and judged.
    pub fn judged(&self) -> &Judged {
        &self.judged
    }

    /// Returns where the user is on the screen.
    pub fn nav(&self) -> &Navigation {
        &self.nav
    }

    /// Returns when samples come and how the session runs.
    pub fn pacing(&self) -> &Pacing {
        &self.pacing
    }

    /// Returns the colours.
    pub fn theme(&self) -> Theme {
        self.theme
    }

    /// Returns how long the sample on screen has been due for a successor:
    /// `Some(age)` when a live sample is older than two intervals.
    pub fn stale_for(&self) -> Option<Duration> {
        let p = &self.pacing;
        if !p.is_live() || p.paused || p.ended.is_some() || self.one_instant() {
            return None;
        }
        let age = p.now?.checked_duration_since(p.arrived?)?;
        (age > 2 * p.interval).then_some(age)
    }

    /// Tells whether the tree on screen is one instant (another machine's
    /// tree, or a capture's files under `--root`): no second read will
    /// come, so there are no rates, only what one read can show.
    pub fn one_instant(&self) -> bool {
        self.judged.foreign.is_some()
    }

    /// The tasks of the detail's who-ran table (the selected CPU's, traced
    /// or sampled), when the detail view is open.
    pub fn who_ran(&self) -> Option<Vec<&crate::noise::traced::TracedTask>> {
        if self.nav.view != View::Detail {
            return None;
        }
        let c = self.judged.trace.as_ref()?.shown(self.nav.selected?)?;
        Some(
            c.intruders
                .iter()
                .take(WHO_RAN_ROWS)
                .map(|i| &i.task)
                .collect(),
        )
    }

    /// The CPU whose tasks the sampler should sample for the screen: the
    /// selected one while its detail is open.
    pub fn browse_wanted(&self) -> Option<u32> {
        self.nav.selected.filter(|_| self.nav.view == View::Detail)
    }
}
