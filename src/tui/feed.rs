//! The sampler side of the dashboard: a thread that owns the engine, takes
//! a snapshot at each deadline, and hands owned samples to the sinks (the
//! screen's channel first; a CSV recorder can be another). It sleeps to its
//! next deadline on the `Stop` condvar: one wake-up per interval, and it
//! never waits for the screen (a full channel drops the sample).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::engine::Engine;
use crate::interval::Interval;
use crate::ladder::Status;
use crate::machine::Machine;
use crate::sampler::Hardware;
use crate::source::capture::Captured;
use crate::stop::Stop;

/// Samples the screen's channel holds before the sampler drops new ones.
pub const LIVE_QUEUE: usize = 64;
/// Intervals a replay reads ahead of the screen.
pub const REPLAY_QUEUE: usize = 2;

/// One interval and what came with it, owned by whoever receives it.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The interval.
    pub interval: Interval,
    /// How each metric is obtained (or why not), as of this snapshot.
    pub statuses: Vec<Status>,
    /// New machine facts, when the online set changed and they were read again.
    pub machine: Option<Box<Machine>>,
    /// When the sampler takes its next snapshot (live only).
    pub next_at: Option<Instant>,
    /// How long taking and computing this sample took.
    pub took: Duration,
    /// Replay: this interval's number and how many the capture holds.
    pub position: Option<(usize, usize)>,
}

/// What the sampler tells the screen.
#[derive(Debug, Clone, PartialEq)]
pub enum Msg {
    /// The first snapshot is taken: the statuses are known, no interval yet.
    Ready {
        /// How each metric is obtained.
        statuses: Vec<Status>,
        /// When the first interval will be taken (live only).
        next_at: Option<Instant>,
    },
    /// A new interval.
    Sample(Box<Sample>),
    /// No more samples will come, and why.
    Ended(String),
}

/// Another consumer of every sample, run on the sampler thread (a recorder).
pub trait Sink: Send {
    /// Takes one sample; returns false to stop the sampler (a write failed).
    fn accept(&mut self, s: &Sample) -> bool;
}

/// What the screen may change while the sampler runs.
#[derive(Debug)]
pub struct Control {
    interval_ms: AtomicU64,
    pin: Pending,
    watch: Pending,
}

/// A CPU list the screen hands over, taken once by the sampler at its next
/// wake-up; a newer request replaces one not yet taken.
#[derive(Debug, Default)]
struct Pending(Mutex<Option<Vec<u32>>>);

impl Pending {
    fn set(&self, cpus: Vec<u32>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(cpus);
    }

    fn take(&self) -> Option<Vec<u32>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

impl Control {
    /// Starts with the given interval.
    pub fn new(interval: Duration) -> Self {
        Control {
            interval_ms: AtomicU64::new(interval.as_millis().max(1) as u64),
            pin: Pending::default(),
            watch: Pending::default(),
        }
    }

    /// Returns the interval the sampler uses from its next deadline on.
    pub fn interval(&self) -> Duration {
        Duration::from_millis(self.interval_ms.load(Ordering::Relaxed))
    }

    /// Sets the interval (taken at the sampler's next wake-up).
    pub fn set_interval(&self, d: Duration) {
        self.interval_ms
            .store(d.as_millis().max(1) as u64, Ordering::Relaxed);
    }

    /// Asks the sampler thread to move itself onto `cpus` at its next wake-up.
    pub fn request_pin(&self, cpus: Vec<u32>) {
        self.pin.set(cpus);
    }

    fn take_pin(&self) -> Option<Vec<u32>> {
        self.pin.take()
    }

    /// Tells the sampler the CPUs the user marked (`m`): on a machine
    /// read in rounds, it reads their per-CPU files every sample from its
    /// next wake-up on, as it does for `--watch`.
    pub fn request_watch(&self, cpus: Vec<u32>) {
        self.watch.set(cpus);
    }

    fn take_watch(&self) -> Option<Vec<u32>> {
        self.watch.take()
    }
}

/// Creates the screen's channel for a live run.
pub fn live_channel() -> (SyncSender<Msg>, Receiver<Msg>) {
    std::sync::mpsc::sync_channel(LIVE_QUEUE)
}

/// Creates the screen's channel for a replay.
pub fn replay_channel() -> (SyncSender<Msg>, Receiver<Msg>) {
    std::sync::mpsc::sync_channel(REPLAY_QUEUE)
}

/// The live sampler's settings.
pub struct Live {
    /// Shared with the screen.
    pub control: Arc<Control>,
    /// Set by signals and by the screen on quit.
    pub stop: Stop,
    /// Stop after this many intervals.
    pub count: Option<u64>,
    /// Sinks beside the screen.
    pub sinks: Vec<Box<dyn Sink>>,
}

/// Starts the live sampler thread; it ends on stop, at `count`, or when
/// the screen is gone.
pub fn spawn_live<H: Hardware + Send + 'static>(
    engine: Engine<H>,
    live: Live,
    tx: SyncSender<Msg>,
) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("sampler".into())
        .spawn(move || live_loop(engine, live, &tx))
}

fn live_loop<H: Hardware>(mut engine: Engine<H>, mut live: Live, tx: &SyncSender<Msg>) {
    let mut next = Instant::now();
    let mut online = engine.sampler.machine.online.clone();
    let mut sent = 0u64;
    loop {
        if let Some(cpus) = live.control.take_pin() {
            // best effort: a CPU that went offline leaves the old affinity
            let _ = crate::sys::pin_to(&cpus);
        }
        if let Some(cpus) = live.control.take_watch() {
            engine.sampler.set_always(&cpus);
        }
        let woke = Instant::now();
        let iv = engine.step();
        next += live.control.interval();
        let now = Instant::now();
        if next <= now {
            // fell behind (suspend, a slow read): restart the schedule
            next = now + live.control.interval();
        }
        let msg = match iv {
            None => Msg::Ready {
                statuses: engine.statuses(),
                next_at: Some(next),
            },
            Some(interval) => {
                let machine = (engine.sampler.machine.online != online).then(|| {
                    online.clone_from(&engine.sampler.machine.online);
                    Box::new(engine.sampler.machine.clone())
                });
                let s = Sample {
                    interval,
                    statuses: engine.statuses(),
                    machine,
                    next_at: Some(next),
                    took: now - woke,
                    position: None,
                };
                if !live.sinks.iter_mut().all(|k| k.accept(&s)) {
                    let _ = tx.try_send(Msg::Ended("a recorder failed: sampling stopped".into()));
                    return;
                }
                sent += 1;
                Msg::Sample(Box::new(s))
            }
        };
        if let Err(TrySendError::Disconnected(_)) = tx.try_send(msg) {
            return;
        }
        if live.count.is_some_and(|c| sent >= c) {
            let _ = tx.try_send(Msg::Ended(format!("--count {sent} reached")));
            return;
        }
        if live.stop.sleep_until(next) {
            return;
        }
    }
}

/// Starts a thread that computes a capture's intervals ahead of the screen
/// (which plays them at their recorded pace); it ends at the last instant,
/// or when the screen is gone.
pub fn spawn_replay(
    instants: Vec<PathBuf>,
    engine: Engine<Captured>,
    count: Option<u64>,
    tx: SyncSender<Msg>,
) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("replay".into())
        .spawn(move || replay_into(&instants, engine, count, &tx))
}

/// Computes every interval of a capture in order and sends each, then
/// `Ended`; returns early when the receiver is gone.
pub fn replay_into(
    instants: &[PathBuf],
    mut engine: Engine<Captured>,
    count: Option<u64>,
    tx: &SyncSender<Msg>,
) {
    let total = instants.len().saturating_sub(1);
    let mut sent = 0u64;
    for (i, dir) in instants.iter().enumerate() {
        let woke = Instant::now();
        if i > 0
            && let Err(e) = crate::cmd::batch::advance(&mut engine, dir)
        {
            let _ = tx.send(Msg::Ended(format!("{}: {e:#}", dir.display())));
            return;
        }
        let msg = match engine.step() {
            None => Msg::Ready {
                statuses: engine.statuses(),
                next_at: None,
            },
            Some(interval) => {
                sent += 1;
                Msg::Sample(Box::new(Sample {
                    interval,
                    statuses: engine.statuses(),
                    machine: None,
                    next_at: None,
                    took: woke.elapsed(),
                    position: Some((i, total)),
                }))
            }
        };
        if tx.send(msg).is_err() {
            return;
        }
        if count.is_some_and(|c| sent >= c) {
            break;
        }
    }
    let _ = tx.send(Msg::Ended("end of capture".into()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_round_trips_interval_and_pin() {
        let c = Control::new(Duration::from_secs(1));
        assert_eq!(c.interval(), Duration::from_secs(1));
        c.set_interval(Duration::from_millis(250));
        assert_eq!(c.interval(), Duration::from_millis(250));
        assert_eq!(c.take_pin(), None);
        c.request_pin(vec![0, 1]);
        assert_eq!(c.take_pin(), Some(vec![0, 1]));
        assert_eq!(c.take_pin(), None, "a pin request is taken once");
        assert_eq!(c.take_watch(), None);
        c.request_watch(vec![2]);
        c.request_watch(vec![2, 5]);
        assert_eq!(c.take_watch(), Some(vec![2, 5]), "the latest marks win");
        assert_eq!(c.take_watch(), None);
    }
}
