//! The live loop: one snapshot per deadline, sleeping on the stop flag in
//! between (one wake-up per interval), judged by the driver and handed to
//! the sinks and then the consumer. It never waits for a screen.

use std::sync::Arc;
use std::sync::mpsc::{SyncSender, TrySendError};
use std::thread::JoinHandle;
use std::time::Instant;

use super::{Control, Driver, Flow, Msg, Sink, Step, feed_sinks};
use crate::os::hw::Hardware;
use crate::os::stop::Stop;

/// Samples the screen's channel holds before the loop drops new ones.
pub const LIVE_QUEUE: usize = 64;

/// The live loop's settings.
pub struct Live {
    /// Shared with the screen.
    pub control: Arc<Control>,
    /// Set by signals and by the screen on quit.
    pub stop: Stop,
    /// Stop after this many intervals.
    pub count: Option<u64>,
}

/// When a step hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Before snapshot `i` is taken.
    Before(u64),
    /// After snapshot `i` is taken.
    After(u64),
}

/// Work around each snapshot (a capture writes its instant folder).
pub type Hook<'a, H> = &'a mut dyn FnMut(Phase, &mut Driver<H>) -> Result<(), HookError>;

/// Why a step hook stopped the loop: what it was doing, and what failed.
// the OS error is said in the message, so it is not also a `source` that
// `{:#}` would print a second time
#[derive(Debug, thiserror::Error)]
#[error("{what}: {err}")]
pub struct HookError {
    /// What the hook was doing (`cannot write capture to DIR`).
    pub what: String,
    /// What the OS said.
    pub err: std::io::Error,
}

/// Why a loop ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// `--count` intervals were taken.
    Count(u64),
    /// A signal or the screen set the stop flag.
    Stopped,
    /// The consumer is gone or had enough.
    Consumer,
    /// A step hook failed, or a replayed instant could not be read.
    Failed(String),
    /// A replay reached the capture's last instant.
    Exhausted,
}

impl End {
    /// Says why, for the screen.
    pub fn text(&self) -> String {
        match self {
            End::Count(n) => format!("--count {n} reached"),
            End::Stopped => "stopped".into(),
            End::Consumer => "the screen is gone".into(),
            End::Failed(e) => e.clone(),
            End::Exhausted => "end of capture".into(),
        }
    }
}

/// Samples until stopped, `count` intervals, or the consumer says stop.
pub fn run<H: Hardware>(
    driver: &mut Driver<H>,
    live: &Live,
    sinks: &mut [Box<dyn Sink>],
    hook: Option<Hook<'_, H>>,
    out: &mut dyn FnMut(Msg) -> Flow,
) -> End {
    let mut hook = hook;
    live.control.wake_with(&live.stop);
    // the deadline the current sample was due at: the schedule does not
    // drift with the time a sample takes
    let mut due = Instant::now();
    let mut sent = 0u64;
    for i in 0u64.. {
        if let Some(cpus) = live.control.take_pin() {
            // best effort: a CPU that went offline leaves the old affinity
            let _ = crate::os::sys::pin_to(&cpus);
        }
        if let Some(cpus) = live.control.take_watch() {
            driver.set_watched(&cpus);
        }
        if let Some(pids) = live.control.take_owner() {
            driver.set_owners(pids);
        }
        if let Some(cpu) = live.control.take_browse() {
            driver.set_browse(cpu.first().copied());
        }
        if let Some(h) = hook.as_mut()
            && let Err(e) = h(Phase::Before(i), driver)
        {
            return End::Failed(e.to_string());
        }
        let step = driver.step();
        if let Some(h) = hook.as_mut()
            && let Err(e) = h(Phase::After(i), driver)
        {
            return End::Failed(e.to_string());
        }
        let now = Instant::now();
        if due + live.control.interval() <= now {
            // fell behind (suspend, a slow read): restart the schedule
            due = now;
        }
        let next = due + live.control.interval();
        let msg = match step {
            Step::Ready(statuses) => Msg::Ready {
                statuses,
                next_at: Some(next),
            },
            Step::Sample(mut s) => {
                s.next_at = Some(next);
                feed_sinks(sinks, &mut s);
                sent += 1;
                Msg::Sample(s)
            }
        };
        if out(msg) == Flow::Stop {
            return End::Consumer;
        }
        if live.count.is_some_and(|c| sent >= c) {
            return End::Count(sent);
        }
        // a new interval moves the deadline: asked again on every wake-up,
        // and one already past samples at once
        let control = &live.control;
        let deadline = || (due + control.interval()).max(now);
        if live.stop.sleep_until_woken(deadline) {
            return End::Stopped;
        }
        due = deadline();
    }
    End::Stopped
}

/// Starts the live loop on its own thread, feeding a screen's channel; a
/// full channel drops the sample, a closed one ends the loop.
pub fn spawn<H: Hardware + Send + 'static>(
    mut driver: Driver<H>,
    live: Live,
    mut sinks: Vec<Box<dyn Sink>>,
    tx: SyncSender<Msg>,
) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("sampler".into())
        .spawn(move || {
            let mut out = |m: Msg| match tx.try_send(m) {
                Err(TrySendError::Disconnected(_)) => Flow::Stop,
                _ => Flow::Continue,
            };
            let end = run(&mut driver, &live, &mut sinks, None, &mut out);
            if end != End::Stopped {
                let _ = tx.try_send(Msg::Ended(end.text()));
            }
        })
}

/// Creates a screen's channel for a live run.
pub fn channel() -> (SyncSender<Msg>, std::sync::mpsc::Receiver<Msg>) {
    std::sync::mpsc::sync_channel(LIVE_QUEUE)
}
