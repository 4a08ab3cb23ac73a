//! The event loop: generic over the ratatui backend, the terminal input
//! and the clock, so a test drives it whole with scripted keys and a fake
//! clock. It redraws only on a sample, a key or a resize, and between them
//! blocks in the input wait with a timeout to the next expected sample.
//!
//! Live samples are shown as they arrive. A replay's are shown at their
//! recorded pace: each is due at the first one's display time plus its
//! recorded offset, divided by the speed; pause or a speed change
//! re-anchors that clock.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::Backend;
use ratatui::crossterm::event::{self, Event};

use crate::os::stop::Stop;
use crate::pipeline::control::Control;
use crate::pipeline::{Msg, Sample};
use crate::tui::keys;
use crate::tui::selfcost::SelfCost;
use crate::tui::state::{Change, Effect, Origin, State};

/// How long the loop waits on the channel for a live sample that is due
/// but late; input waits at most this long (< 50 ms stays responsive).
pub const GRACE: Duration = Duration::from_millis(20);
const _: () = assert!(
    GRACE.as_millis() < 50,
    "input must stay responsive within 50 ms"
);
/// Slack added to a live sample's expected arrival.
pub const MARGIN: Duration = Duration::from_millis(3);
/// Poll timeout before the sampler has said when its first sample comes.
pub const STARTUP_POLL: Duration = Duration::from_millis(100);

/// Terminal events, with a timeout.
pub trait Input {
    /// Waits up to `timeout` (forever when `None`) for one event.
    fn next(&mut self, timeout: Option<Duration>) -> std::io::Result<Option<Event>>;
}

/// The time source of the loop.
pub trait Clock {
    /// Returns now.
    fn now(&self) -> Instant;
}

/// Reads events from the terminal through crossterm.
#[derive(Debug, Default)]
pub struct TerminalInput;

impl Input for TerminalInput {
    fn next(&mut self, timeout: Option<Duration>) -> std::io::Result<Option<Event>> {
        // an event crossterm already parsed (several keys in one read, a
        // resize) is returned at once
        if event::poll(Duration::ZERO)? {
            return Ok(Some(event::read()?));
        }
        // Wait on the terminal ourselves: when it is closed, crossterm's
        // poll spins on end-of-file and never returns, so neither a signal
        // nor `q` could end noisetop. A signal interrupts this wait, and the
        // loop then sees the stop flag. "Forever" is a day.
        match crate::os::sys::wait_stdin(timeout.unwrap_or(Duration::from_secs(86_400))) {
            crate::os::sys::StdinWait::Closed => Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "the terminal was closed",
            )),
            crate::os::sys::StdinWait::Readable if event::poll(Duration::ZERO)? => {
                Ok(Some(event::read()?))
            }
            crate::os::sys::StdinWait::Readable | crate::os::sys::StdinWait::Nothing => Ok(None),
        }
    }
}

/// The system's monotonic clock.
#[derive(Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// Called with the new watched set.
pub type OnWatched<'a> = Box<dyn FnMut(&[u32]) + 'a>;

/// What connects the loop to the rest of noisetop.
pub struct Wiring<'a> {
    /// Samples from the sampler or the replay reader.
    pub feed: Receiver<Msg>,
    /// Set by signals; the loop sets it on quit to stop the sampler.
    pub stop: Stop,
    /// The live sampler's controls (`None` for a replay).
    pub control: Option<Arc<Control>>,
    /// Called when the watched set changes (noisetop moves off those CPUs).
    pub on_watched: OnWatched<'a>,
    /// Whether to measure noisetop's own CPU use for the footer.
    pub measure_self: bool,
}

/// When the next sample is due, and the replay's clock.
#[derive(Debug, Default)]
struct Pacer {
    /// Live: when the next sample should have arrived.
    expected: Option<Instant>,
    /// Replay: the next interval, read but not yet due.
    pending: Option<Box<Sample>>,
    /// Replay: (display time, recorded time) of the clock's anchor.
    anchor: Option<(Instant, u64)>,
    /// Replay: recorded time of the interval on screen.
    shown_ns: Option<u64>,
    /// The feed is closed.
    done: bool,
}

impl Pacer {
    /// Applies every message that is due; returns whether anything changed.
    fn pump(&mut self, s: &mut State, rx: &Receiver<Msg>, now: Instant) -> bool {
        match s.pacing().origin() {
            Origin::Live => self.pump_live(s, rx, now),
            Origin::Replay(_) => self.pump_replay(s, rx, now),
        }
    }

    fn note(&mut self, m: &Msg) {
        match m {
            Msg::Ready { next_at, .. } => self.expected = next_at.map(|t| t + MARGIN),
            Msg::Sample(x) => self.expected = x.next_at.map(|t| t + x.took + MARGIN),
            Msg::Ended(_) => self.expected = None,
        }
    }

    fn pump_live(&mut self, s: &mut State, rx: &Receiver<Msg>, now: Instant) -> bool {
        let mut changed = self.drain(s, rx, now);
        if !changed && !self.done && self.expected.is_some_and(|e| now >= e) {
            // due but not here: wait a little on the channel itself
            match rx.recv_timeout(GRACE) {
                Ok(m) => {
                    self.note(&m);
                    s.update(Change::Feed(m, now));
                    self.drain(s, rx, now);
                    changed = true;
                }
                Err(RecvTimeoutError::Timeout) => self.expected = Some(now + GRACE),
                Err(RecvTimeoutError::Disconnected) => changed = self.close(s),
            }
        }
        changed
    }

    fn drain(&mut self, s: &mut State, rx: &Receiver<Msg>, now: Instant) -> bool {
        let mut changed = false;
        loop {
            match rx.try_recv() {
                Ok(m) => {
                    self.note(&m);
                    s.update(Change::Feed(m, now));
                    changed = true;
                }
                Err(TryRecvError::Empty) => return changed,
                Err(TryRecvError::Disconnected) => return self.close(s) || changed,
            }
        }
    }

    /// The feed is closed (the state quits when the sampler died);
    /// returns whether this is news.
    fn close(&mut self, s: &mut State) -> bool {
        let first = !self.done;
        self.done = true;
        s.update(Change::FeedClosed);
        first
    }

    fn pump_replay(&mut self, s: &mut State, rx: &Receiver<Msg>, now: Instant) -> bool {
        let mut changed = false;
        while !s.pacing().paused() {
            if self.pending.is_none() {
                match rx.try_recv() {
                    Ok(Msg::Sample(x)) => self.pending = Some(x),
                    Ok(m) => {
                        s.update(Change::Feed(m, now));
                        changed = true;
                        continue;
                    }
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => {
                        changed |= self.close(s);
                        break;
                    }
                }
            }
            let Some(x) = self.pending.take() else { break };
            if self.due(&x, s.pacing().speed()).is_some_and(|d| d > now) {
                self.pending = Some(x);
                break;
            }
            let ns = x.interval.to.mono_ns;
            // a clock that jumped makes no interval: play on from here
            if crate::model::interval::clock_note(x.interval.from, x.interval.to).is_some() {
                self.anchor = Some((now, ns));
            }
            self.anchor.get_or_insert((now, ns));
            self.shown_ns = Some(ns);
            s.update(Change::Feed(Msg::Sample(x), now));
            changed = true;
        }
        changed
    }

    /// When a replayed interval is due on screen (`None`: at once).
    fn due(&self, x: &Sample, speed: f64) -> Option<Instant> {
        let (t0, ns0) = self.anchor?;
        if crate::model::interval::clock_note(x.interval.from, x.interval.to).is_some() {
            return None;
        }
        let ahead = x.interval.to.mono_ns.saturating_sub(ns0) as f64 / 1e9 / speed.max(1e-3);
        Some(t0 + Duration::from_secs_f64(ahead.min(86_400.0)))
    }

    /// Restarts the replay clock from the interval on screen.
    fn reanchor(&mut self, now: Instant) {
        self.anchor = self.shown_ns.map(|ns| (now, ns));
    }

    /// How long the loop may wait for input before a sample is due.
    fn timeout(&self, s: &State, now: Instant) -> Option<Duration> {
        match s.pacing().origin() {
            Origin::Live if self.done => None,
            Origin::Live => Some(
                self.expected
                    .map_or(STARTUP_POLL, |e| e.saturating_duration_since(now)),
            ),
            Origin::Replay(_) if s.pacing().paused() => None,
            Origin::Replay(_) => match &self.pending {
                Some(x) => Some(
                    self.due(x, s.pacing().speed())
                        .map_or(Duration::ZERO, |d| d.saturating_duration_since(now)),
                ),
                None if self.done => None,
                // the reader is behind: look again shortly
                None => Some(GRACE),
            },
        }
    }
}

/// Why the dashboard stopped before it was asked to.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The terminal could not be sized or drawn on.
    #[error("{0}")]
    Terminal(std::io::Error),
    /// The keyboard could not be read.
    #[error("{0}")]
    Input(std::io::Error),
}

/// Runs the dashboard until quit, a stop signal or an input error.
pub fn run<B>(
    terminal: &mut Terminal<B>,
    s: &mut State,
    w: &mut Wiring<'_>,
    input: &mut impl Input,
    clock: &impl Clock,
) -> Result<(), RunError>
where
    B: Backend,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let mut pacer = Pacer::default();
    let mut cost = SelfCost::default();
    let mut dirty = true;
    // the CPU whose tasks the sampler was last asked to sample
    let mut browsing = None;
    loop {
        let now = clock.now();
        if pacer.pump(s, &w.feed, now) {
            dirty = true;
            if w.measure_self
                && let Some(pct) = cost.update(now)
            {
                s.update(Change::OwnCpu(pct));
            }
        }
        if s.pacing().quit() || w.stop.is_stopped() {
            break;
        }
        let was_stale = s.stale_for().is_some();
        s.update(Change::Tick(clock.now()));
        if s.stale_for().is_some() != was_stale {
            dirty = true;
        }
        if dirty {
            let size = terminal.size().map_err(terminal_error)?;
            s.update(Change::Screen(size));
            terminal
                .draw(|f| f.render_widget(&*s, f.area()))
                .map_err(terminal_error)?;
            dirty = false;
        }
        let timeout = until_stale(s, pacer.timeout(s, clock.now()), clock.now());
        match input.next(timeout).map_err(RunError::Input)? {
            Some(Event::Key(k)) => {
                if let Some(a) = keys::action_for(&k) {
                    if let Some(e) = s.update(a) {
                        effect(e, &mut pacer, w, clock.now());
                    }
                    let want = s.browse_wanted();
                    if want != browsing {
                        browsing = want;
                        if let Some(c) = &w.control {
                            c.request_browse(want);
                        }
                    }
                    dirty = true;
                }
            }
            Some(Event::Resize(..)) => dirty = true,
            _ => {}
        }
    }
    w.stop.stop();
    Ok(())
}

/// The backend's error, whatever its type, in the terminal's words.
fn terminal_error<E: std::error::Error + Send + Sync + 'static>(e: E) -> RunError {
    RunError::Terminal(std::io::Error::other(e))
}

/// Shortens the wait so the loop wakes when the sample on screen turns
/// stale (older than two intervals), and marks it.
fn until_stale(s: &State, timeout: Option<Duration>, now: Instant) -> Option<Duration> {
    if !s.pacing().is_live() || s.stale_for().is_some() {
        return timeout;
    }
    let Some(at) = s.pacing().arrived() else {
        return timeout;
    };
    let left = (at + 2 * s.pacing().interval() + MARGIN).saturating_duration_since(now);
    Some(timeout.map_or(left, |t| t.min(left)))
}

fn effect(e: Effect, pacer: &mut Pacer, w: &mut Wiring<'_>, now: Instant) {
    match e {
        Effect::Interval(d) => {
            if let Some(c) = &w.control {
                c.set_interval(d);
                // the sampler wakes at once on a new interval: wait for its
                // next sample no later than one new interval from now
                pacer.expected = Some(
                    pacer
                        .expected
                        .map_or(now + d + MARGIN, |e| e.min(now + d + MARGIN)),
                );
            }
        }
        Effect::Speed(_) | Effect::Paused(_) => pacer.reanchor(now),
        Effect::Watched(cpus) => (w.on_watched)(&cpus),
        Effect::Owner(pids) => {
            if let Some(c) = &w.control {
                c.request_owner(pids);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::collections::VecDeque;
    use std::rc::Rc;

    use ratatui::backend::TestBackend;
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    use super::*;
    use crate::testkit::synth::{self, Flavor, Spec};
    use crate::tui::state::View;
    use crate::tui::theme::Theme;

    struct FakeClock(Rc<Cell<Instant>>);

    impl Clock for FakeClock {
        fn now(&self) -> Instant {
            self.0.get()
        }
    }

    enum Step {
        /// Nothing happens until the timeout (the fake clock jumps there).
        Wait,
        Key(KeyCode),
    }

    /// Scripted input; every wait is recorded; `q` once the script ends.
    struct FakeInput {
        clock: Rc<Cell<Instant>>,
        script: VecDeque<Step>,
        waits: Vec<Option<Duration>>,
    }

    impl Input for FakeInput {
        fn next(&mut self, timeout: Option<Duration>) -> std::io::Result<Option<Event>> {
            self.waits.push(timeout);
            let key = |c| Ok(Some(Event::Key(KeyEvent::new(c, KeyModifiers::NONE))));
            match self.script.pop_front() {
                Some(Step::Wait) => {
                    if let Some(t) = timeout {
                        self.clock.set(self.clock.get() + t);
                    }
                    Ok(None)
                }
                Some(Step::Key(c)) => key(c),
                None => key(KeyCode::Char('q')),
            }
        }
    }

    /// A replay of `instants` instants one second apart, read in full.
    fn replay_feed(instants: u32) -> (State, Receiver<Msg>) {
        let dir = tempfile::tempdir().unwrap();
        let spec = Spec {
            flavor: Flavor::Vm,
            cpus: 2,
            instants,
            interval_ms: 1000,
        };
        synth::write_capture(dir.path(), &spec).unwrap();
        let (paths, engine) = crate::pipeline::replay::open_engine(dir.path()).unwrap();
        let s = State::new(
            engine.sampler.machine.clone(),
            Origin::Replay("capture".into()),
            Duration::from_secs(1),
            Theme { color: true },
        );
        let (tx, rx) = std::sync::mpsc::sync_channel(64);
        crate::pipeline::replay::replay_into(
            &paths,
            crate::pipeline::Driver::new(engine),
            None,
            &mut [],
            &tx,
        );
        (s, rx)
    }

    fn wiring(rx: Receiver<Msg>) -> Wiring<'static> {
        Wiring {
            feed: rx,
            stop: Stop::new(),
            control: None,
            on_watched: Box::new(|_: &[u32]| {}),
            measure_self: false,
        }
    }

    #[test]
    fn a_replay_plays_at_its_recorded_pace_and_keys_drive_the_views() {
        let (mut s, rx) = replay_feed(4);
        let mut w = wiring(rx);
        let t0 = Instant::now();
        let clock = Rc::new(Cell::new(t0));
        let mut input = FakeInput {
            clock: clock.clone(),
            script: VecDeque::from([
                Step::Wait,
                Step::Wait,
                Step::Wait,
                Step::Key(KeyCode::Tab),
                Step::Key(KeyCode::Tab),
                Step::Key(KeyCode::Char('j')),
                Step::Key(KeyCode::Enter),
            ]),
            waits: Vec::new(),
        };
        let mut term = Terminal::new(TestBackend::new(80, 24)).unwrap();
        run(
            &mut term,
            &mut s,
            &mut w,
            &mut input,
            &FakeClock(clock.clone()),
        )
        .unwrap();
        // interval 1 at once, 2 and 3 one recorded second apart; then the
        // loop waits for keys only: no polling between samples or after them
        assert_eq!(
            input.waits,
            vec![
                Some(Duration::from_secs(1)),
                Some(Duration::from_secs(1)),
                None,
                None,
                None,
                None,
                None,
                None
            ]
        );
        assert_eq!(clock.get() - t0, Duration::from_secs(2));
        assert_eq!(s.pacing().position(), Some((3, 3)));
        assert_eq!(s.pacing().ended(), Some("end of capture"));
        assert_eq!(
            (s.nav().view(), s.nav().back(), s.nav().selected()),
            (View::Detail, View::Interrupts, Some(1))
        );
        assert!(s.pacing().quit());
        assert!(w.stop.is_stopped(), "quitting stops the sampler");
        let screen = term.backend().to_string();
        assert!(screen.contains("CPU 1 · core 1"), "{screen}");
    }

    #[test]
    fn pause_holds_a_replay_and_resume_restarts_its_clock() {
        let (mut s, rx) = replay_feed(4);
        let mut w = wiring(rx);
        let t0 = Instant::now();
        let clock = Rc::new(Cell::new(t0));
        let mut input = FakeInput {
            clock: clock.clone(),
            script: VecDeque::from([
                Step::Key(KeyCode::Char(' ')),
                Step::Wait,
                Step::Key(KeyCode::Char(' ')),
                Step::Wait,
            ]),
            waits: Vec::new(),
        };
        let mut term = Terminal::new(TestBackend::new(80, 24)).unwrap();
        run(
            &mut term,
            &mut s,
            &mut w,
            &mut input,
            &FakeClock(clock.clone()),
        )
        .unwrap();
        // paused: no timeout at all; resumed: a full recorded second again
        assert_eq!(input.waits[1], None);
        assert_eq!(input.waits[3], Some(Duration::from_secs(1)));
        assert_eq!(s.pacing().position(), Some((2, 3)));
    }

    #[test]
    fn plus_slows_a_replay_down() {
        let (mut s, rx) = replay_feed(3);
        let mut w = wiring(rx);
        let clock = Rc::new(Cell::new(Instant::now()));
        let mut input = FakeInput {
            clock: clock.clone(),
            script: VecDeque::from([Step::Key(KeyCode::Char('+')), Step::Wait]),
            waits: Vec::new(),
        };
        let mut term = Terminal::new(TestBackend::new(80, 24)).unwrap();
        run(&mut term, &mut s, &mut w, &mut input, &FakeClock(clock)).unwrap();
        assert!(
            (s.pacing().speed() - 0.5).abs() < f64::EPSILON,
            "{}",
            s.pacing().speed()
        );
        assert_eq!(input.waits[1], Some(Duration::from_secs(2)));
    }

    #[test]
    fn a_stop_signal_ends_the_loop_before_drawing() {
        let (mut s, rx) = replay_feed(2);
        let mut w = wiring(rx);
        w.stop.stop();
        let clock = Rc::new(Cell::new(Instant::now()));
        let mut input = FakeInput {
            clock: clock.clone(),
            script: VecDeque::new(),
            waits: Vec::new(),
        };
        let mut term = Terminal::new(TestBackend::new(80, 24)).unwrap();
        run(&mut term, &mut s, &mut w, &mut input, &FakeClock(clock)).unwrap();
        assert!(input.waits.is_empty());
    }

    fn empty_state(origin: Origin) -> State {
        let m = crate::model::machine::Machine::read(&mut crate::os::fs::Fs::new(
            crate::os::fs::Roots::under(std::path::Path::new("/nonexistent")),
        ));
        State::new(m, origin, Duration::from_secs(1), Theme { color: true })
    }

    #[test]
    fn a_sampler_that_dies_without_saying_so_ends_the_loop() {
        let (tx, rx) = std::sync::mpsc::sync_channel(4);
        tx.send(Msg::Ready {
            statuses: Vec::new(),
            next_at: None,
        })
        .unwrap();
        drop(tx);
        let mut s = empty_state(Origin::Live);
        let mut w = wiring(rx);
        let clock = Rc::new(Cell::new(Instant::now()));
        let mut input = FakeInput {
            clock: clock.clone(),
            script: VecDeque::new(),
            waits: Vec::new(),
        };
        let mut term = Terminal::new(TestBackend::new(80, 24)).unwrap();
        run(&mut term, &mut s, &mut w, &mut input, &FakeClock(clock)).unwrap();
        assert!(input.waits.is_empty(), "quit without waiting for a key");
        assert_eq!(s.pacing().ended(), Some("the sampler stopped unexpectedly"));
    }

    #[test]
    fn a_late_live_sample_holds_input_back_at_most_the_grace() {
        let (_tx, rx) = std::sync::mpsc::sync_channel::<Msg>(4);
        let mut s = empty_state(Origin::Live);
        let mut p = Pacer::default();
        let due = Instant::now();
        p.expected = Some(due);
        let start = Instant::now();
        assert!(!p.pump(&mut s, &rx, due), "nothing arrived");
        let waited = start.elapsed();
        assert!(
            waited >= GRACE && waited < Duration::from_millis(50),
            "{waited:?}"
        );
        // the next wait for input is one more grace, not a busy loop
        assert_eq!(p.timeout(&s, due), Some(GRACE));
    }

    #[test]
    fn a_live_sample_is_expected_at_the_next_deadline_plus_its_cost() {
        let mut p = Pacer::default();
        let t0 = Instant::now();
        let (_, rx) = replay_feed(2);
        let msgs: Vec<Msg> = rx.try_iter().collect();
        let Msg::Sample(mut x) = msgs[1].clone() else {
            panic!("{:?}", msgs[1])
        };
        x.next_at = Some(t0 + Duration::from_secs(1));
        x.took = Duration::from_millis(5);
        p.note(&Msg::Sample(x));
        let s = empty_state(Origin::Live);
        assert_eq!(
            p.timeout(&s, t0),
            Some(Duration::from_millis(1005) + MARGIN)
        );
        p.done = true;
        assert_eq!(p.timeout(&s, t0), None, "no sampler, no timeout");
    }
}
