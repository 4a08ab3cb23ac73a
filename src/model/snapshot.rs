//! Raw counters of one instant, per CPU and per package. No rates, no
//! judgement: everything here is a value as read, or the reason it is missing.

use crate::os::hw::Stamp;
use std::collections::BTreeMap;

use serde::Serialize;

use crate::base::counter::Width;
use crate::base::cpu_map::CpuMap;
use crate::base::{Cause, Unavailable};
use crate::collect::cpuidle::IdleCounters;
use crate::collect::hwmon::ThrottleCounts;
use crate::collect::interrupts::IrqTable;
use crate::collect::schedstat::SchedStat;
use crate::collect::stat::Stat;

/// Where a metric's values came from: a rung of the source ladder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
pub enum Rung {
    /// perf PMU counters (`msr`, `cstate_core`, `cstate_pkg`, `power`, `software`).
    Perf,
    /// `/dev/cpu/N/msr`.
    Msr,
    /// sysfs or procfs files.
    Kernel,
}

impl Rung {
    /// Names the rung as the footer shows it.
    pub fn label(self) -> &'static str {
        match self {
            Rung::Perf => "perf",
            Rung::Msr => "msr",
            Rung::Kernel => "kernel",
        }
    }
}

/// A value, or the reason it could not be read.
pub type Reading<T> = Result<T, Unavailable>;

/// One energy counter as read, with what it takes to turn it into joules.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Energy {
    /// Domain: `pkg`, `cores`, `ram`, `gpu`, `psys`, `core` (AMD per core).
    pub domain: &'static str,
    /// The raw counter value.
    pub raw: u64,
    /// Joules per count.
    pub joules_per_count: f64,
    /// Where the counter wraps.
    pub width: Width,
}

/// APERF/MPERF/TSC and other per-CPU hardware counters of one CPU.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct CpuHw {
    /// Actual cycles while in C0.
    pub aperf: Option<u64>,
    /// Reference cycles while in C0.
    pub mperf: Option<u64>,
    /// Time stamp counter.
    pub tsc: Option<u64>,
    /// SMI count (32-bit).
    pub smi: Option<u64>,
    /// Instructions retired (perf `hardware/instructions`).
    pub instructions: Option<u64>,
    /// Core cycles, not halted (perf `hardware/cycles`).
    pub cycles: Option<u64>,
    /// Core C-state residency counters (TSC rate), by name (`C3`, `C6`…).
    pub cstates: Vec<(&'static str, u64)>,
    /// Core temperature in °C, already decoded.
    pub temp_c: Option<f64>,
    /// Energy counters of this core (AMD per-core RAPL).
    pub energy: Vec<Energy>,
    /// perf's `time_enabled` and `time_running` of this CPU's counters, ns:
    /// the clock its counts are divided by (`None` off the perf rung).
    pub perf_time: Option<(u64, u64)>,
}

/// Package-scope hardware counters.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct PkgHw {
    /// Package id.
    pub package: u32,
    /// Package C-state residency counters (TSC rate), by name (`PC2`…).
    pub cstates: Vec<(&'static str, u64)>,
    /// RAPL energy counters.
    pub energy: Vec<Energy>,
    /// Package temperature in °C.
    pub temp_c: Option<f64>,
}

/// Per-CPU raw values read from files.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct CpuFiles {
    /// cpuidle counters, in the order of the machine's idle states.
    pub idle: Option<Vec<IdleCounters>>,
    /// Current frequency from cpufreq, kHz.
    pub cur_khz: Option<u64>,
    /// `thermal_throttle` event counts.
    pub throttle: Option<ThrottleCounts>,
}

/// Everything read at one instant.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Snapshot {
    /// When the counters were read.
    pub time: Stamp,
    /// CPUs online at this instant.
    pub online: Vec<u32>,
    /// /proc/stat.
    pub stat: Reading<Stat>,
    /// /proc/interrupts.
    pub interrupts: Reading<IrqTable>,
    /// /proc/softirqs.
    pub softirqs: Reading<IrqTable>,
    /// /proc/schedstat.
    pub schedstat: Reading<SchedStat>,
    /// Context switches per CPU: perf's software counter, or the
    /// in-kernel count (see `switches_by_clock`).
    pub csw: CpuMap<u64>,
    /// Migrations per CPU, from the same source.
    pub migrations: CpuMap<u64>,
    /// Whether every CPU's `csw` and `migrations` are the in-kernel
    /// counts, read at this instant: their rates are then over the
    /// clock's interval, not over a perf group's running time.
    #[serde(skip)]
    pub switches_by_clock: bool,
    /// Hardware counters per CPU, and the rung they came from.
    pub hw: CpuMap<CpuHw>,
    /// Package counters by package id.
    pub pkg: BTreeMap<u32, PkgHw>,
    /// Per-CPU values from sysfs files.
    pub files: CpuMap<CpuFiles>,
    /// powercap energy per zone id, µJ.
    pub powercap_uj: BTreeMap<String, u64>,
    /// hwmon temperatures, millidegrees, keyed `hwmonN/tempK`.
    pub hwmon_mc: BTreeMap<String, i64>,
}

impl Snapshot {
    /// A snapshot of `online` at `time` in which nothing was read: what a
    /// test fills in with the counters it is about.
    pub fn unread(time: Stamp, online: Vec<u32>) -> Snapshot {
        const NOT: &str = "not read";
        Snapshot {
            time,
            online,
            stat: Err(Unavailable::new(Cause::Failed, NOT)),
            interrupts: Err(Unavailable::new(Cause::Failed, NOT)),
            softirqs: Err(Unavailable::new(Cause::Failed, NOT)),
            schedstat: Err(Unavailable::new(Cause::Failed, NOT)),
            csw: CpuMap::new(),
            migrations: CpuMap::new(),
            switches_by_clock: false,
            hw: CpuMap::new(),
            pkg: BTreeMap::new(),
            files: CpuMap::new(),
            powercap_uj: BTreeMap::new(),
            hwmon_mc: BTreeMap::new(),
        }
    }
}
