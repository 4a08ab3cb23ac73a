//! `noisetop probe`: wake-up latency measured per CPU and per idle state,
//! and the cost of a context switch, with no kernel module.
//!
//! `runner` drives the measuring threads (the system calls are in
//! `source::probe_os` and `source::idle_ring`), `tag` names the idle state
//! each wake-up came out of, `stats` turns the wake-ups into histograms and
//! percentiles, `report` writes the table, JSON and CSV, and `compare`
//! says what two recordings' probes differ by.

pub mod runner;
pub(crate) mod running;
pub mod sinks;
pub mod stats;
pub(crate) mod tag;
pub(crate) mod wakeup_diff;

use serde::{Deserialize, Serialize};

/// What woke the thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Its own timer: an absolute `CLOCK_MONOTONIC` sleep; latency is how
    /// late it ran after the deadline.
    Timer,
    /// A thread on a housekeeping CPU wrote to a pipe it was blocked on;
    /// latency is from the writer's time stamp to the woken thread running.
    Remote,
    /// The same exchange answered back: from the stamp to the writer
    /// reading the reply (the ping case in miniature).
    RoundTrip,
}

impl Kind {
    /// The name in tables and CSV rows.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Timer => "timer",
            Kind::Remote => "remote",
            Kind::RoundTrip => "round_trip",
        }
    }
}

/// How the idle state of a wake-up was known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TagMethod {
    /// The `power:cpu_idle` tracepoint of the woken CPU.
    Tracepoint,
    /// The CPU's cpuidle `usage` counters read around the wake-up.
    Inferred,
}

impl TagMethod {
    /// The name in tables and CSV rows.
    pub fn name(self) -> &'static str {
        match self {
            TagMethod::Tracepoint => "tracepoint",
            TagMethod::Inferred => "inferred",
        }
    }
}

/// One CPU × kind × state: the wake-ups and their latency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The woken CPU.
    pub cpu: u32,
    /// What woke it.
    pub kind: Kind,
    /// The idle state's name, `busy` (not idle when due) or `unknown`.
    pub state: String,
    /// The cpuidle index of the state.
    pub state_index: Option<u32>,
    /// How the state was known.
    pub tagged_by: TagMethod,
    /// Wake-ups.
    pub count: u64,
    /// Mean latency, µs.
    pub mean_us: f64,
    /// Median, µs.
    pub p50_us: f64,
    /// 90th percentile, µs.
    pub p90_us: f64,
    /// 99th percentile, µs.
    pub p99_us: f64,
    /// 99.9th percentile, µs.
    pub p999_us: f64,
    /// Largest, µs.
    pub max_us: f64,
    /// The exit latency the idle driver advertises (`stateN/latency`), µs.
    pub advertised_us: Option<u64>,
    /// p50 ÷ advertised (none where the advertised latency is 0 or unknown).
    pub p50_over_advertised: Option<f64>,
    /// p99 ÷ advertised.
    pub p99_over_advertised: Option<f64>,
    /// The histogram: `[latency ns (highest value of the bucket), count]`
    /// of every non-empty bucket (3 significant digits).
    pub histogram_ns: Vec<(u64, u64)>,
}

/// The context-switch measurement of one CPU (lmbench `lat_ctx`'s method).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CtxRow {
    /// The CPU both processes were pinned to.
    pub cpu: u32,
    /// Round trips timed (after as many to warm up).
    pub rounds: u32,
    /// One byte there and back between two processes on this CPU, µs: two
    /// context switches, two pipe writes and two reads.
    pub one_cpu_round_trip_us: f64,
    /// One pipe write and read by one thread with no switch, µs.
    pub pipe_us: f64,
    /// (round trip − 2 × pipe) ÷ 2, µs.
    pub switch_us: f64,
    /// The housekeeping CPU of the cross-CPU round trip.
    pub cross_cpu: Option<u32>,
    /// Round trips timed across CPUs.
    pub cross_rounds: u32,
    /// The same round trip with one process on `cross_cpu`, µs.
    pub cross_cpu_round_trip_us: Option<f64>,
}

/// What held while the probe measured.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Conditions {
    /// `SCHED_FIFO 50`, or `SCHED_OTHER` with why.
    pub policy: String,
    /// Whether the probe threads ran `SCHED_FIFO`.
    pub fifo: bool,
    /// CPUs noisetop's own thread and the wakers ran on.
    pub housekeeping: Vec<u32>,
    /// How wake-ups were tagged.
    pub tagged_by: Option<TagMethod>,
    /// The CPU latency limit in force, µs (`/dev/cpu_dma_latency`); `None`
    /// when unreadable.
    pub cpu_dma_latency_us: Option<i32>,
    /// Idle states disabled on probed CPUs (`CPU N: NAME`).
    pub disabled_states: Vec<String>,
    /// Idle events the kernel dropped (rings full).
    pub lost_events: u64,
    /// Everything else worth saying, one line each.
    pub notes: Vec<String>,
}

/// Tag of a probe's JSON (and of its recording's sidecar).
pub const FORMAT: &str = "noisetop-probe";

/// Everything one probe measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeReport {
    /// Always [`FORMAT`].
    pub format: String,
    /// noisetop version.
    pub noisetop_version: String,
    /// Probed CPUs.
    pub cpus: Vec<u32>,
    /// Asked duration, s.
    pub duration_s: f64,
    /// Fixed timer interval, µs; `None`: random 0–4 ms gaps.
    pub timer_interval_us: Option<f64>,
    /// The conditions.
    pub conditions: Conditions,
    /// Wake-ups per CPU × kind × state.
    pub rows: Vec<Row>,
    /// Context switches per CPU.
    pub ctx: Vec<CtxRow>,
}
