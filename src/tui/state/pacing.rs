//! When samples come and how the session runs: live or replay, the
//! interval or replay speed, pause and the samples held through it, when
//! the sample on screen arrived, the replay's position, why samples
//! stopped, and noisetop's own cost. The fields are written only by
//! `State::update` (its parent module); the screen reads them through the
//! methods here.

use std::time::{Duration, Instant};

use super::Origin;
use crate::pipeline::Sample;

/// The IPIs noisetop sent to the watched CPUs since the first sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SelfIpis {
    /// No live kernel counts them (a replay).
    NotLive,
    /// The kernel cannot count them here.
    Uncounted,
    /// Counted: those sent, and apart the wake-ups of tasks there that
    /// noisetop's writes caused.
    Counted {
        /// IPIs sent.
        sent: u64,
        /// Reschedule and wake-list IPIs of tasks it woke.
        woke: u64,
    },
}

/// The pacing of the session.
#[derive(Debug, Clone)]
pub struct Pacing {
    /// Live or replay.
    pub(super) origin: Origin,
    /// Live sampling interval.
    pub(super) interval: Duration,
    /// Replay speed factor.
    pub(super) speed: f64,
    /// The screen is frozen.
    pub(super) paused: bool,
    /// Samples that arrived while paused, applied on resume.
    pub(super) held: Vec<Sample>,
    /// When the sample on screen arrived (live), by the loop's clock.
    pub(super) arrived: Option<Instant>,
    /// The loop's clock at the last draw.
    pub(super) now: Option<Instant>,
    /// Replay: the interval on screen and how many there are.
    pub(super) position: Option<(usize, usize)>,
    /// Why no more samples come, once they stop.
    pub(super) ended: Option<String>,
    /// noisetop's own CPU use, % of one CPU.
    pub(super) own_cpu: Option<f64>,
    /// IPIs noisetop sent to the watched CPUs since the first sample.
    pub(super) own_ipis: SelfIpis,
    /// Set by Quit, or when the sampler died.
    pub(super) quit: bool,
}

impl Pacing {
    /// Starts unpaused at `interval` and speed 1.
    pub(super) fn new(origin: Origin, interval: Duration) -> Self {
        Pacing {
            origin,
            interval,
            speed: 1.0,
            paused: false,
            held: Vec::new(),
            arrived: None,
            now: None,
            position: None,
            ended: None,
            own_cpu: None,
            own_ipis: SelfIpis::NotLive,
            quit: false,
        }
    }

    /// Returns where the samples come from.
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// Tells whether the samples come from the running machine.
    pub fn is_live(&self) -> bool {
        self.origin == Origin::Live
    }

    /// Returns the live sampling interval.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// Returns the replay speed factor.
    pub fn speed(&self) -> f64 {
        self.speed
    }

    /// Tells whether the screen is frozen.
    pub fn paused(&self) -> bool {
        self.paused
    }

    /// Returns the samples held while paused.
    pub fn held(&self) -> &[Sample] {
        &self.held
    }

    /// Returns when the sample on screen arrived, by the loop's clock.
    pub fn arrived(&self) -> Option<Instant> {
        self.arrived
    }

    /// Returns the loop's clock at the last draw.
    pub fn now(&self) -> Option<Instant> {
        self.now
    }

    /// Returns the replay's position: the interval on screen and how many.
    pub fn position(&self) -> Option<(usize, usize)> {
        self.position
    }

    /// Returns why no more samples come, once they stop.
    pub fn ended(&self) -> Option<&str> {
        self.ended.as_deref()
    }

    /// Returns noisetop's own CPU use, % of one CPU.
    pub fn own_cpu(&self) -> Option<f64> {
        self.own_cpu
    }

    /// Returns the IPIs noisetop sent to the watched CPUs.
    pub fn own_ipis(&self) -> SelfIpis {
        self.own_ipis
    }

    /// Tells whether the loop is to end.
    pub fn quit(&self) -> bool {
        self.quit
    }
}
