//! Everything the screen shows, and `update`, the one place keys change
//! it. Rendering only reads a `State`; samples and actions are the only
//! writers.

use std::time::{Duration, Instant};

use ratatui::layout::Size;

use crate::interval::{CpuRates, Interval};
use crate::ladder::Status;
use crate::machine::Machine;
use crate::noise::{self, CpuVerdict, Finding, NoiseConfig, Severity, Traced, VerdictState};
use crate::pipeline::{Msg, Sample};
use crate::tui::history::{HISTORY_LEN, History};
use crate::tui::keys::Action;
use crate::tui::log::FindingLog;
use crate::tui::overview::Paint;
use crate::tui::theme::Theme;

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
    /// Machine facts (the header).
    pub machine: Machine,
    /// How each metric is obtained, or why not.
    pub statuses: Vec<Status>,
    /// The interval on screen.
    pub latest: Option<Interval>,
    /// The findings of the interval on screen.
    pub findings: Vec<Finding>,
    /// Each CPU's verdict over the interval on screen.
    pub verdicts: Vec<CpuVerdict>,
    /// Who ran on the traced CPUs over the interval on screen.
    pub trace: Option<Traced>,
    /// Thresholds, to judge again at once when the user marks a CPU.
    pub config: NoiseConfig,
    /// What the other sinks said with the last sample (a recorder's file).
    pub notes: Vec<String>,
    /// Why the tree under `--root` is not this machine's live kernel (no
    /// live counter is read for it and one instant has no rates).
    pub foreign: Option<String>,
    /// The last word on who-ran attribution: the traced CPUs, or why none.
    pub trace_status: Option<String>,
    /// Why who ran is not counted in the kernel, where it is not.
    pub trace_missing: Option<String>,
    /// The last `noisetop probe` of this machine, shown in a CPU's detail.
    pub probe: Option<crate::probe::ProbeReport>,
    /// Every finding of the session.
    pub log: FindingLog,
    /// Per-CPU history.
    pub history: History,
    /// The view on screen.
    pub view: View,
    /// The view Detail returns to.
    pub back: View,
    /// The selected CPU.
    pub selected: Option<u32>,
    /// Row order.
    pub sort: Sort,
    /// Which CPUs are shown.
    pub filter: Filter,
    /// The metric the overview colours its cells by.
    pub paint: Paint,
    /// The optional columns of wide rows shown (`--show`/`--hide`), by
    /// index into `columns::columns()`.
    pub columns: Vec<usize>,
    /// The columns `--show`/`--hide` chose (IRQ/s and CSW/s without
    /// them): `w` switches between these and every column.
    pub chosen_columns: Vec<usize>,
    /// The digits typed so far of a CPU number to jump to.
    pub goto: String,
    /// The selected entry of the Findings view (newest first).
    pub finding_at: usize,
    /// First line of the pop-up shown (every pop-up scrolls on short screens).
    pub popup_scroll: u16,
    /// The view is still the one noisetop started with: the first draw may
    /// switch to the overview when the CPUs do not fit.
    pub auto_view: bool,
    /// When the sample on screen arrived (live), by the loop's clock.
    pub arrived: Option<Instant>,
    /// The loop's clock at the last draw.
    pub now: Option<Instant>,
    /// Benchmark CPUs.
    pub watched: Vec<u32>,
    /// Only these CPUs are listed (`--cpus`).
    pub only: Option<Vec<u32>>,
    /// The screen is frozen.
    pub paused: bool,
    /// Samples that arrived while paused, applied on resume.
    pub held: Vec<Sample>,
    /// The pop-up over the view, if any.
    pub overlay: Overlay,
    /// Live sampling interval.
    pub interval: Duration,
    /// Replay speed factor.
    pub speed: f64,
    /// noisetop's own CPU use, % of one CPU.
    pub own_cpu: Option<f64>,
    /// IPIs noisetop sent to the watched CPUs since the first sample, and
    /// apart the wake-ups of tasks there its writes caused: `None` with no
    /// live kernel to count them (a replay), `Some(None)` where they cannot
    /// be counted.
    pub own_ipis: Option<Option<(u64, u64)>>,
    /// Live or replay.
    pub origin: Origin,
    /// Replay: the interval on screen and how many there are.
    pub position: Option<(usize, usize)>,
    /// Why no more samples come, once they stop.
    pub ended: Option<String>,
    /// Colours.
    pub theme: Theme,
    /// The terminal size the loop last drew at (for page moves).
    pub screen: Size,
    /// Set by Quit.
    pub quit: bool,
    /// The selected row of the detail's who-ran table.
    pub task_at: usize,
    /// The CPU whose tasks the sampler was last asked to sample for the
    /// detail view.
    pub browsing: Option<u32>,
}

impl State {
    /// Starts with machine facts and no sample.
    pub fn new(machine: Machine, origin: Origin, interval: Duration, theme: Theme) -> Self {
        State {
            selected: machine.online.first().copied(),
            machine,
            statuses: Vec::new(),
            latest: None,
            findings: Vec::new(),
            verdicts: Vec::new(),
            trace: None,
            config: NoiseConfig::default(),
            notes: Vec::new(),
            foreign: None,
            trace_status: None,
            trace_missing: None,
            probe: None,
            log: FindingLog::default(),
            history: History::default(),
            view: View::Cores,
            back: View::Cores,
            sort: Sort::Cpu,
            filter: Filter::All,
            paint: Paint::Busy,
            finding_at: 0,
            goto: String::new(),
            columns: crate::tui::columns::shown(None, &[]),
            chosen_columns: vec![0, 2],
            popup_scroll: 0,
            auto_view: true,
            arrived: None,
            now: None,
            watched: Vec::new(),
            only: None,
            paused: false,
            held: Vec::new(),
            overlay: Overlay::None,
            interval,
            speed: 1.0,
            own_cpu: None,
            own_ipis: None,
            origin,
            position: None,
            ended: None,
            theme,
            task_at: 0,
            browsing: None,
            screen: Size::new(80, 24),
            quit: false,
        }
    }

    /// Sets the watched CPUs (`--watch`), sorted and without repeats, and
    /// selects the first: the row marked `▸` is the one Enter opens.
    #[must_use]
    pub fn with_watched(mut self, mut cpus: Vec<u32>) -> Self {
        cpus.sort_unstable();
        cpus.dedup();
        if let Some(&first) = cpus.first() {
            self.selected = Some(first);
        }
        self.watched = cpus;
        self
    }

    /// Takes one message from the sampler.
    pub fn apply(&mut self, msg: Msg) {
        match msg {
            Msg::Ready { statuses, .. } => self.statuses = statuses,
            Msg::Sample(s) if self.paused => {
                if self.held.len() == HISTORY_LEN {
                    self.held.remove(0);
                }
                self.held.push(*s);
            }
            Msg::Sample(s) => self.take(*s),
            Msg::Ended(why) => self.ended = Some(why),
        }
    }

    fn take(&mut self, s: Sample) {
        if let Some(m) = s.machine {
            self.machine = *m;
        }
        self.statuses = s.statuses;
        self.own_ipis = s
            .own_ipis
            .as_ref()
            .map(|r| r.as_ref().ok().map(|o| (o.since_first, o.woke_since_first)));
        self.trace = s.trace;
        self.trace_missing = s.trace_missing;
        if let Some(n) = s.notes.iter().find_map(|n| n.strip_prefix("who ran: ")) {
            self.trace_status = Some(n.to_string());
        }
        self.notes = s.notes;
        let mut j = s.judgement;
        // marks the sampler has not seen yet (or a replay, which has no
        // control): judge again with the CPUs on screen
        if s.watched != self.watched {
            j = self.judge(&s.interval);
        }
        self.history.record(&s.interval);
        self.log.record(&j.findings, s.interval.to.wall_ns);
        self.position = s.position.or(self.position);
        self.findings = j.findings;
        self.verdicts = j.verdicts;
        self.latest = Some(s.interval);
        if self.selected.is_none_or(|c| !self.order().contains(&c)) {
            self.selected = self.order().first().copied();
        }
    }

    /// Returns the CPUs in row order: the `--cpus` list and the filter,
    /// then the sort.
    pub fn order(&self) -> Vec<u32> {
        let keep =
            |c: &u32| self.only.as_ref().is_none_or(|o| o.contains(c)) && self.passes_filter(*c);
        let Some(iv) = &self.latest else {
            return self.machine.online.iter().copied().filter(keep).collect();
        };
        let rows = iv.cpus.iter().filter(|r| keep(&r.cpu));
        match self.sort {
            Sort::Cpu => rows.map(|r| r.cpu).collect(),
            Sort::Noise => {
                let mut score: Vec<(u32, f64)> = rows
                    .map(|r| (r.cpu, noise_score(r, &self.findings)))
                    .collect();
                score.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                score.into_iter().map(|s| s.0).collect()
            }
            Sort::Busy => {
                let mut v: Vec<(u32, f64)> =
                    rows.map(|r| (r.cpu, r.busy_pct.unwrap_or(-1.0))).collect();
                v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                v.into_iter().map(|s| s.0).collect()
            }
        }
    }

    /// Tells whether `cpu` passes the filter (`f`).
    pub fn passes_filter(&self, cpu: u32) -> bool {
        match self.filter {
            Filter::All => true,
            Filter::Watched => self.is_watched(cpu),
            Filter::Noisy => self.verdict_of(cpu).is_some_and(|v| v > Verdict::Quiet),
        }
    }

    /// Returns how `cpu` stands in the interval on screen, from its verdict
    /// (`None` before the first interval or when the verdict is unknown): a
    /// noisy CPU is WARN or, with a critical finding, CRIT; a quiet one
    /// takes the severity of a WARN or CRIT setting that concerns it (a
    /// governor on a watched CPU), else quiet.
    pub fn verdict_of(&self, cpu: u32) -> Option<Verdict> {
        self.latest.as_ref()?;
        let v = self.cpu_verdict(cpu)?;
        let worst = self.tags_of(cpu).map(|f| f.severity).max();
        Some(match (v.state, worst) {
            (VerdictState::Unknown, _) => return None,
            (_, Some(Severity::Crit)) => Verdict::Crit,
            (VerdictState::Noisy, _) | (_, Some(Severity::Warn)) => Verdict::Warn,
            (VerdictState::Quiet, _) => Verdict::Quiet,
        })
    }

    /// Returns how long the sample on screen has been due for a successor:
    /// `Some(age)` when a live sample is older than two intervals.
    pub fn stale_for(&self) -> Option<Duration> {
        if self.origin != Origin::Live || self.paused || self.ended.is_some() || self.one_instant()
        {
            return None;
        }
        let age = self.now?.checked_duration_since(self.arrived?)?;
        (age > 2 * self.interval).then_some(age)
    }

    /// Opens the overview instead of the Cores view, once, when the CPUs
    /// do not fit the screen as rows.
    pub fn fit_view(&mut self) {
        if !std::mem::take(&mut self.auto_view) || self.view != View::Cores {
            return;
        }
        let n = self.order().len();
        let g = crate::tui::layout::Geometry::of(
            crate::tui::layout::cpu_rows(self.screen),
            self.screen.width,
            n,
        );
        if n > g.slots() {
            self.view = View::Overview;
        }
    }

    /// Tells whether the tree on screen is one instant (another machine's
    /// tree, or a capture's files under `--root`): no second read will
    /// come, so there are no rates, only what one read can show.
    pub fn one_instant(&self) -> bool {
        self.foreign.is_some()
    }

    /// Says why no CPU is listed, and what to do, when the filter or
    /// `--cpus` leaves none.
    pub fn why_no_rows(&self) -> Option<String> {
        if !self.order().is_empty() {
            return None;
        }
        Some(match self.filter {
            Filter::Watched if self.watched.is_empty() => {
                "only watched CPUs are shown, and none is watched: f shows all CPUs, \
                 then m watches the selected one (or start with --watch 2-5)"
                    .into()
            }
            Filter::Watched => "no watched CPU is online or within --cpus: f shows all CPUs".into(),
            Filter::Noisy if self.latest.is_none() => {
                "only noisy CPUs are shown, and no interval has been judged yet: f shows all CPUs"
                    .into()
            }
            Filter::Noisy => {
                "only noisy CPUs are shown, and no CPU has a finding in this interval: \
                 f shows all CPUs"
                    .into()
            }
            Filter::All if self.machine.online.is_empty() => {
                "no online CPU found in this tree (check --root or --sysfs, u: why)".into()
            }
            Filter::All => "no online CPU is within --cpus: widen --cpus".into(),
        })
    }

    /// Returns the rates of one CPU in the interval on screen.
    pub fn rates(&self, cpu: u32) -> Option<&CpuRates> {
        self.latest.as_ref()?.cpu(cpu)
    }

    /// Returns the findings of the interval on screen that touch `cpu`.
    pub fn tags_of(&self, cpu: u32) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(move |f| f.touches(cpu))
    }

    /// Judges an interval with the CPUs watched on screen (the same pure
    /// rules the pipeline runs).
    fn judge(&self, iv: &Interval) -> noise::Judgement {
        noise::judge(
            iv,
            &noise::Context {
                machine: &self.machine,
                watched: &self.watched,
                config: &self.config,
                trace: self.trace.as_ref(),
            },
        )
    }

    /// Returns a CPU's verdict over the interval on screen.
    pub fn cpu_verdict(&self, cpu: u32) -> Option<&CpuVerdict> {
        noise::verdict_in(&self.verdicts, cpu)
    }

    /// Tells whether a CPU was judged noisy.
    pub fn is_noisy(&self, cpu: u32) -> bool {
        self.cpu_verdict(cpu)
            .is_some_and(|v| v.state == VerdictState::Noisy)
    }

    /// The tasks of the detail's who-ran table (the selected CPU's, traced
    /// or sampled), when the detail view is open.
    pub fn who_ran(&self) -> Option<Vec<&crate::noise::TracedTask>> {
        if self.view != View::Detail {
            return None;
        }
        let c = self.trace.as_ref()?.shown(self.selected?)?;
        Some(
            c.intruders
                .iter()
                .take(WHO_RAN_ROWS)
                .map(|i| &i.task)
                .collect(),
        )
    }

    /// The CPU the sampler should sample tasks of for the screen, when it
    /// changed since last asked.
    pub fn browse_change(&mut self) -> Option<Option<u32>> {
        let want = self.selected.filter(|_| self.view == View::Detail);
        if want == self.browsing {
            return None;
        }
        self.browsing = want;
        Some(want)
    }

    /// Tells whether `cpu` is watched.
    pub fn is_watched(&self, cpu: u32) -> bool {
        self.watched.contains(&cpu)
    }

    /// Carries out one action; returns what the loop must do beyond the state.
    pub fn update(&mut self, a: Action) -> Option<Effect> {
        if self.overlay != Overlay::None {
            return self.update_popup(a);
        }
        if let Action::Digit(d) = a {
            self.go_to_digit(d);
            return None;
        }
        self.goto.clear();
        match a {
            Action::Quit => self.quit = true,
            Action::Back => self.back_out(),
            Action::Help => self.toggle_overlay(Overlay::Help),
            Action::Why => self.toggle_overlay(Overlay::Why),
            Action::Pause => return Some(self.toggle_pause()),
            Action::Up => self.step(0, -1),
            Action::Down => self.step(0, 1),
            Action::Left => self.step(-1, 0),
            Action::Right => self.step(1, 0),
            Action::Filter => {
                self.filter = match self.filter {
                    Filter::All => Filter::Watched,
                    Filter::Watched => Filter::Noisy,
                    Filter::Noisy => Filter::All,
                };
                self.keep_selection();
            }
            Action::Paint => self.paint = self.paint.next(),
            Action::PageUp => self.jump(-(self.page() as i64)),
            Action::PageDown => self.jump(self.page() as i64),
            Action::First => self.jump(i64::MIN / 2),
            Action::Last => self.jump(i64::MAX / 2),
            Action::Detail if self.view == View::Findings => {
                if !self.log.is_empty() {
                    self.overlay = Overlay::Finding;
                    self.popup_scroll = 0;
                }
            }
            Action::Detail => self.toggle_detail(),
            Action::NextView => self.cycle_view(1),
            Action::PrevView => self.cycle_view(View::TABS.len() - 1),
            Action::Slower => return self.step_pace(true),
            Action::Faster => return self.step_pace(false),
            Action::Mark => return self.toggle_mark(),
            Action::NextTask => {
                let n = self.who_ran().map_or(0, |t| t.len());
                self.task_at = if n == 0 { 0 } else { (self.task_at + 1) % n };
            }
            Action::Owner => {
                let pid = self.who_ran()?.get(self.task_at)?.pid;
                self.task_at = 0;
                return Some(Effect::Owner(vec![pid]));
            }
            Action::Digit(_) => {}
            Action::Columns => {
                let all = crate::tui::columns::shown(None, &[]);
                self.columns = if self.columns == all {
                    self.chosen_columns.clone()
                } else {
                    all
                };
            }
            Action::Sort => {
                self.sort = match self.sort {
                    Sort::Cpu => Sort::Noise,
                    Sort::Noise => Sort::Busy,
                    Sort::Busy => Sort::Cpu,
                };
            }
        }
        None
    }

    /// Adds a digit to the CPU number being typed and selects that CPU
    /// when it is listed (`12` selects CPU 1, then CPU 12); a number no
    /// CPU starts with begins again from this digit.
    fn go_to_digit(&mut self, d: u8) {
        let order = self.order();
        let max = order.iter().max().copied().unwrap_or(0);
        self.goto.push(char::from(b'0' + d));
        let n: u64 = self.goto.parse().unwrap_or(u64::MAX);
        if n > u64::from(max) || self.goto.len() > 1 && self.goto.starts_with('0') {
            self.goto = d.to_string();
        }
        let n: u32 = self.goto.parse().unwrap_or(0);
        if order.contains(&n) {
            self.selected = Some(n);
        }
    }

    /// Carries out a key while a pop-up is open: the moving keys scroll
    /// it, Enter, Esc and the pop-up's own key close it, `?` and `u`
    /// switch pop-ups, quit and pause keep working, and nothing else
    /// reaches the screen behind it.
    fn update_popup(&mut self, a: Action) -> Option<Effect> {
        let page = i64::from(crate::tui::layout::body_rows(self.screen).max(1));
        match a {
            Action::Quit => self.quit = true,
            Action::Back => self.overlay = Overlay::None,
            Action::Pause => return Some(self.toggle_pause()),
            Action::Help => self.toggle_overlay(Overlay::Help),
            Action::Why => self.toggle_overlay(Overlay::Why),
            Action::Detail if self.overlay == Overlay::Finding => self.overlay = Overlay::None,
            Action::Up => self.scroll_popup(-1),
            Action::Down => self.scroll_popup(1),
            Action::PageUp => self.scroll_popup(-page),
            Action::PageDown => self.scroll_popup(page),
            Action::First => self.scroll_popup(i64::MIN / 2),
            Action::Last => self.scroll_popup(i64::MAX / 2),
            _ => {}
        }
        None
    }

    fn scroll_popup(&mut self, delta: i64) {
        let last = i64::from(crate::tui::popup::max_scroll(self));
        self.popup_scroll =
            (i64::from(self.popup_scroll).saturating_add(delta)).clamp(0, last) as u16;
    }

    fn toggle_overlay(&mut self, o: Overlay) {
        self.overlay = if self.overlay == o { Overlay::None } else { o };
        self.popup_scroll = 0;
    }

    /// Moves the selection: in the help it scrolls, in the Findings view
    /// it moves between findings, in the overview it moves in the grid,
    /// elsewhere `dy` moves through the rows.
    fn step(&mut self, dx: i64, dy: i64) {
        if self.view == View::Findings {
            let last = self.log.len().saturating_sub(1) as i64;
            self.finding_at = (self.finding_at as i64 + dy).clamp(0, last) as usize;
        } else if self.view == View::Overview {
            if let Some(c) = crate::tui::overview::step(self, dx, dy) {
                self.selected = Some(c);
            }
        } else if dy != 0 {
            self.move_by(dy);
        }
    }

    /// Moves by a page or to an end: in the help it scrolls the text, in
    /// the Findings view it moves between findings, elsewhere through the
    /// CPUs.
    fn jump(&mut self, delta: i64) {
        if self.view == View::Findings {
            let last = self.log.len().saturating_sub(1) as i64;
            self.finding_at = (self.finding_at as i64)
                .saturating_add(delta)
                .clamp(0, last) as usize;
        } else {
            self.move_by(delta);
        }
    }

    /// Keeps a selection within the rows shown after the filter changed.
    fn keep_selection(&mut self) {
        let order = self.order();
        if self.selected.is_none_or(|c| !order.contains(&c)) {
            self.selected = order.first().copied().or(self.selected);
        }
    }

    /// Esc: closes what is open; on a main view it does nothing, so that
    /// it never ends the program (`q` does).
    fn back_out(&mut self) {
        if self.overlay != Overlay::None {
            self.overlay = Overlay::None;
        } else if self.view == View::Detail {
            self.view = self.back;
        }
    }

    fn toggle_pause(&mut self) -> Effect {
        self.paused = !self.paused;
        if !self.paused {
            for s in std::mem::take(&mut self.held) {
                self.take(s);
            }
        }
        Effect::Paused(self.paused)
    }

    fn toggle_detail(&mut self) {
        if self.view == View::Detail {
            self.view = self.back;
        } else if self.selected.is_some() {
            self.back = self.view;
            self.view = View::Detail;
        }
    }

    fn cycle_view(&mut self, step: usize) {
        let from = if self.view == View::Detail {
            self.back
        } else {
            self.view
        };
        let i = View::TABS.iter().position(|v| *v == from).unwrap_or(0);
        self.overlay = Overlay::None;
        self.view = View::TABS[(i + step) % View::TABS.len()];
    }

    /// Rows one page move skips: the CPU rows that fit the body; in the
    /// help, its text rows; in the Findings view, the findings that fit
    /// (each takes at least two lines: evidence and fix).
    fn page(&self) -> usize {
        let rows = usize::from(crate::tui::layout::body_rows(self.screen));
        if self.view == View::Findings {
            return (rows.saturating_sub(1) / 2).max(1);
        }
        let n = self.order().len();
        crate::tui::layout::Geometry::of(
            crate::tui::layout::cpu_rows(self.screen),
            self.screen.width,
            n,
        )
        .slots()
        .max(1)
    }

    fn move_by(&mut self, delta: i64) {
        let order = self.order();
        if order.is_empty() {
            return;
        }
        let at = self
            .selected
            .and_then(|c| order.iter().position(|x| *x == c))
            .unwrap_or(0) as i64;
        let to = at.saturating_add(delta).clamp(0, order.len() as i64 - 1);
        self.selected = Some(order[to as usize]);
    }

    /// Steps the live interval (`+` longer) or the replay speed (`+` slower).
    fn step_pace(&mut self, longer: bool) -> Option<Effect> {
        match self.origin {
            Origin::Live => {
                let ms = self.interval.as_millis() as u64;
                let to = if longer {
                    INTERVAL_STEPS_MS.iter().find(|s| **s > ms)
                } else {
                    INTERVAL_STEPS_MS.iter().rev().find(|s| **s < ms)
                };
                let d = Duration::from_millis(*to?);
                self.interval = d;
                Some(Effect::Interval(d))
            }
            Origin::Replay(_) => {
                let sp = self.speed;
                let to = if longer {
                    SPEED_STEPS.iter().rev().find(|s| **s < sp)
                } else {
                    SPEED_STEPS.iter().find(|s| **s > sp)
                };
                self.speed = *to?;
                Some(Effect::Speed(self.speed))
            }
        }
    }

    fn toggle_mark(&mut self) -> Option<Effect> {
        let cpu = self.selected?;
        if let Some(i) = self.watched.iter().position(|c| *c == cpu) {
            self.watched.remove(i);
        } else {
            self.watched.push(cpu);
            self.watched.sort_unstable();
        }
        if let Some(iv) = self.latest.take() {
            let j = self.judge(&iv);
            self.findings = j.findings;
            self.verdicts = j.verdicts;
            self.latest = Some(iv);
        }
        Some(Effect::Watched(self.watched.clone()))
    }
}

/// Orders CPUs for "noisiest first": each finding weighs by severity far
/// above any rate, then device and IPI interrupts, softirqs, switches and
/// migrations (ten switches' worth each) per second.
pub fn noise_score(r: &CpuRates, findings: &[Finding]) -> f64 {
    let tags: f64 = findings
        .iter()
        .filter(|f| f.touches(r.cpu))
        .map(|f| match f.severity {
            Severity::Crit => 1e9,
            Severity::Warn => 1e8,
            Severity::Info => 1e7,
        })
        .sum();
    let rates = [
        r.dev_per_s,
        r.ipi_per_s,
        r.softirq_per_s,
        r.csw_per_s,
        r.mig_per_s.map(|m| m * 10.0),
    ];
    tags + rates.iter().flatten().sum::<f64>()
}
