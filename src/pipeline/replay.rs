//! Replay: the same driver over the instants of a capture, as fast as the
//! consumer takes them (the screen paces them at their recorded rate).

use std::path::{Path, PathBuf};
use std::sync::mpsc::SyncSender;
use std::thread::JoinHandle;
use std::time::Instant;

use super::live::End;
use super::{Driver, Flow, Msg, Sink, Step, feed_sinks, kept_trace};
use crate::os::capture::{self, Captured};
use crate::os::fs::{Fs, Roots};
use crate::sample::engine::Engine;
use crate::sample::sampler::Sampler;

/// Why a capture cannot be replayed.
// each inner error is said in the message, so it is not also a `source`
// that `{:#}` would print a second time
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The capture's folder cannot be listed.
    #[error("cannot read capture folder {}: {err}", .dir.display())]
    Unreadable {
        /// The capture.
        dir: PathBuf,
        /// What listing it said.
        err: std::io::Error,
    },
    /// The folder holds no instant folders.
    #[error(
        "{} holds no instants (0000/, 0001/, …): was it made by `noisetop capture`?",
        .0.display()
    )]
    NoInstants(PathBuf),
    /// An instant's tables cannot be loaded.
    #[error("{0}")]
    Load(capture::LoadError),
}

/// Intervals a replay reads ahead of the screen.
pub const REPLAY_QUEUE: usize = 2;

/// A capture opened for replay: its instants and a driver on instant 0.
pub struct Replay {
    /// Instant folders in order.
    pub instants: Vec<PathBuf>,
    /// The driver, with instant 0's facts read.
    pub driver: Driver<Captured>,
}

/// Opens a capture: reads instant 0's facts, the budget and watched CPUs
/// the capture was taken with.
pub fn open(dir: &Path) -> Result<Replay, ReplayError> {
    let (instants, engine, always) = open_parts(dir)?;
    let mut driver = Driver::new(engine);
    if kept_trace::kept_in(&instants) {
        let kept = kept_trace::Replayed::new(instants.clone());
        driver.set_tracer(Some(Box::new(kept)), None);
    } else if !always.is_empty() {
        driver.set_tracer(
            None,
            Some(crate::base::Unavailable::new(
                crate::base::Cause::NotLive,
                "a replay of a capture that kept no traced window \
                 (tracing was not possible when it was made)",
            )),
        );
    }
    driver.set_watched(&always);
    Ok(Replay { instants, driver })
}

/// Opens a capture as a bare engine (no judgement), for tests and benches
/// of the sample and the delta alone.
pub fn open_engine(dir: &Path) -> Result<(Vec<PathBuf>, Engine<Captured>), ReplayError> {
    let (instants, engine, _) = open_parts(dir)?;
    Ok((instants, engine))
}

/// Moves a bare replay engine to instant `dir`.
pub fn advance_engine(engine: &mut Engine<Captured>, dir: &Path) -> Result<(), ReplayError> {
    engine.sampler.fs.set_roots(Roots::under(dir));
    engine.sampler.hw = Captured::load(dir).map_err(ReplayError::Load)?;
    Ok(())
}

type Parts = (Vec<PathBuf>, Engine<Captured>, Vec<u32>);

fn open_parts(dir: &Path) -> Result<Parts, ReplayError> {
    let instants = capture::instants(dir).map_err(|err| ReplayError::Unreadable {
        dir: dir.to_path_buf(),
        err,
    })?;
    let Some(first) = instants.first() else {
        return Err(ReplayError::NoInstants(dir.to_path_buf()));
    };
    let hw = Captured::load(first).map_err(ReplayError::Load)?;
    let mut fs = Fs::new(Roots::under(first));
    fs.set_keep_open(false);
    let mut sampler = Sampler::new(fs, hw);
    // replay reads the rounds the capture read
    if let Some(files) = capture::read_budget(first) {
        sampler.set_budget(files);
    }
    let always = capture::read_always(first);
    sampler.set_always(&always);
    Ok((instants, Engine::new(sampler), always))
}

/// Moves a replay driver to instant `dir` (instant 0 is already loaded).
pub fn advance(driver: &mut Driver<Captured>, dir: &Path) -> Result<(), ReplayError> {
    advance_engine(&mut driver.engine, dir)
}

/// Computes every interval of a capture in order, at most `count`.
pub fn run(
    instants: &[PathBuf],
    driver: &mut Driver<Captured>,
    count: Option<u64>,
    sinks: &mut [Box<dyn Sink>],
    out: &mut dyn FnMut(Msg) -> Flow,
) -> End {
    let total = instants.len().saturating_sub(1);
    let mut sent = 0u64;
    for (i, dir) in instants.iter().enumerate() {
        let woke = Instant::now();
        if i > 0
            && let Err(e) = advance(driver, dir)
        {
            return End::Failed(format!("{}: {e}", dir.display()));
        }
        let msg = match driver.step() {
            Step::Ready(statuses) => Msg::Ready {
                statuses,
                next_at: None,
            },
            Step::Sample(mut s) => {
                s.position = Some((i, total));
                s.took = woke.elapsed();
                feed_sinks(sinks, &mut s);
                sent += 1;
                Msg::Sample(s)
            }
        };
        if out(msg) == Flow::Stop {
            return End::Consumer;
        }
        if count.is_some_and(|c| sent >= c) {
            return End::Count(sent);
        }
    }
    End::Exhausted
}

/// Sends every interval of a capture into `tx` (blocking: the screen sets
/// the pace), then `Ended`; returns early when the receiver is gone.
pub fn replay_into(
    instants: &[PathBuf],
    mut driver: Driver<Captured>,
    count: Option<u64>,
    sinks: &mut [Box<dyn Sink>],
    tx: &SyncSender<Msg>,
) {
    let mut out = |m: Msg| {
        if tx.send(m).is_err() {
            Flow::Stop
        } else {
            Flow::Continue
        }
    };
    let end = run(instants, &mut driver, count, sinks, &mut out);
    if end != End::Consumer {
        let _ = tx.send(Msg::Ended(end.text()));
    }
}

/// Starts [`replay_into`] on its own thread.
pub fn spawn(
    replay: Replay,
    count: Option<u64>,
    mut sinks: Vec<Box<dyn Sink>>,
    tx: SyncSender<Msg>,
) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("replay".into())
        .spawn(move || replay_into(&replay.instants, replay.driver, count, &mut sinks, &tx))
}

/// Creates a screen's channel for a replay.
pub fn channel() -> (SyncSender<Msg>, std::sync::mpsc::Receiver<Msg>) {
    std::sync::mpsc::sync_channel(REPLAY_QUEUE)
}
