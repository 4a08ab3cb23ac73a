//! The delta of two snapshots: per-CPU rates and percentages over dt.
//!
//! This is the one place that knows about counter wrap, counters that went
//! backwards, CPUs that came or went, and empty intervals. It never yields
//! NaN, infinity or a negative rate: what it cannot know is `None`.

use crate::model::irq_rates::SourceRates;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::base::counter::{Width, delta, per_second, percent};
use crate::base::name::Name;
use crate::collect::cpuidle::{IdleCounters, IdleStateInfo};
use crate::collect::hwmon::ThrottleCounts;
use crate::collect::interrupts::IrqTable;
use crate::collect::stat::CpuTimes;
use crate::model::irq_rates::{self, ClassRates};
use crate::model::machine::Machine;
use crate::model::snapshot::{Energy, Reading, Snapshot};
use crate::os::hw::Stamp;

/// Where the frequency figures come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FreqSource {
    /// APERF/MPERF/TSC through the perf `msr` PMU.
    PerfMsr,
    /// APERF/MPERF/TSC through `/dev/cpu/N/msr`.
    DevMsr,
    /// cpufreq `scaling_cur_freq`: the requested or last sampled clock.
    Cpufreq,
    /// `/proc/cpuinfo` "cpu MHz".
    Cpuinfo,
}

/// cpuidle figures of one state over the interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IdleRate {
    /// State name (`C1`, `C6`, `POLL`).
    pub name: Name,
    /// Share of the interval spent in the state, %.
    pub pct: Option<f64>,
    /// Entries per second.
    pub per_s: Option<f64>,
    /// Entries per second where the state was too deep for the idle time.
    pub above_per_s: Option<f64>,
    /// Entries per second where a deeper state would have fit.
    pub below_per_s: Option<f64>,
    /// Exit latency, µs.
    pub latency_us: Option<u64>,
    /// Target residency, µs.
    pub residency_us: Option<u64>,
    /// Whether the state is disabled.
    pub disabled: Option<bool>,
}

/// /proc/stat time split over the interval, % of the CPU's time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default)]
pub struct TimeSplit {
    /// user + nice minus nothing (guest is counted inside user by the kernel).
    pub user: Option<f64>,
    /// nice.
    pub nice: Option<f64>,
    /// system.
    pub system: Option<f64>,
    /// idle.
    pub idle: Option<f64>,
    /// iowait.
    pub iowait: Option<f64>,
    /// hard irq.
    pub irq: Option<f64>,
    /// softirq.
    pub softirq: Option<f64>,
    /// steal: time the hypervisor ran something else.
    pub steal: Option<f64>,
}

impl TimeSplit {
    /// Returns the share the CPU ran: everything except idle, iowait and
    /// steal (stolen time is the hypervisor running something else, when
    /// MPERF would not count either).
    pub fn busy(&self) -> Option<f64> {
        let off = self.idle? + self.iowait.unwrap_or(0.0) + self.steal.unwrap_or(0.0);
        Some((100.0 - off).clamp(0.0, 100.0))
    }
}

/// Every rate of one CPU over the interval.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct CpuRates {
    /// CPU number.
    pub cpu: u32,
    /// Core id.
    pub core: Option<u32>,
    /// Package id.
    pub package: Option<u32>,
    /// True when the CPU was not online in the previous snapshot.
    pub new: bool,
    /// ΔAPERF/dt in MHz (or the fallback frequency).
    pub avg_mhz: Option<f64>,
    /// 100·ΔMPERF/ΔTSC (or /proc/stat busy with a fallback source).
    pub busy_pct: Option<f64>,
    /// Frequency while busy: base·ΔAPERF/ΔMPERF.
    pub bzy_mhz: Option<f64>,
    /// ΔTSC/dt in MHz.
    pub tsc_mhz: Option<f64>,
    /// Instructions retired over the interval (perf `hardware/instructions`).
    pub instructions: Option<u64>,
    /// Core cycles, not halted, over the interval (perf `hardware/cycles`).
    pub cycles: Option<u64>,
    /// Instructions per cycle: Δinstructions/Δcycles ([`ipc`]).
    pub ipc: Option<f64>,
    /// Hardware core C-state residency, % (C1 derived when no counter).
    pub hw_cstates: Vec<(&'static str, Option<f64>)>,
    /// cpuidle per state; shared, because on a machine read in rounds
    /// one CPU's figures stand in several intervals.
    pub idle: Arc<[IdleRate]>,
    /// Seconds the `idle` and `throttle` figures cover when that is not
    /// this interval: on a machine whose per-CPU counter files are read in
    /// rounds, the time between this CPU's last two reads (the figures
    /// stand until its next read). `None`: they cover the interval.
    pub window_s: Option<f64>,
    /// All interrupts (every /proc/interrupts row), per second.
    pub irq_per_s: Option<f64>,
    /// Local timer interrupts per second (LOC, arm64 `arch_timer`).
    pub loc_per_s: Option<f64>,
    /// Reschedule IPIs per second.
    pub res_per_s: Option<f64>,
    /// Function call IPIs per second.
    pub cal_per_s: Option<f64>,
    /// TLB shootdowns per second.
    pub tlb_per_s: Option<f64>,
    /// Every IPI class per second.
    pub ipi_per_s: Option<f64>,
    /// Numbered device interrupts per second.
    pub dev_per_s: Option<f64>,
    /// NMIs per second.
    pub nmi_per_s: Option<f64>,
    /// All softirqs per second.
    pub softirq_per_s: Option<f64>,
    /// /proc/stat split.
    pub time: Option<TimeSplit>,
    /// Context switches per second.
    pub csw_per_s: Option<f64>,
    /// Migrations per second.
    pub mig_per_s: Option<f64>,
    /// Time tasks waited on the run queue, % of the interval (summed over
    /// the tasks: several waiting at once pass 100).
    pub rq_wait_pct: Option<f64>,
    /// SMIs during the interval.
    pub smi: Option<u64>,
    /// Temperature, °C.
    pub temp_c: Option<f64>,
    /// Thermal throttle events during the interval (core).
    pub throttle: Option<u64>,
    /// Per-core energy in watts (AMD).
    pub core_watt: Option<f64>,
}

/// Rates of one package.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct PkgRates {
    /// Package id.
    pub package: u32,
    /// Power per RAPL domain, W.
    pub watts: Vec<(String, Option<f64>)>,
    /// Package C-state residency, %.
    pub cstates: Vec<(&'static str, Option<f64>)>,
    /// Package temperature, °C.
    pub temp_c: Option<f64>,
    /// Package throttle events during the interval.
    pub throttle: Option<u64>,
}

/// The delta of two snapshots.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Interval {
    /// Start of the interval.
    pub from: Stamp,
    /// End of the interval.
    pub to: Stamp,
    /// Length in seconds (0 when the clock did not advance).
    pub dt_s: f64,
    /// Where the frequency figures come from.
    pub freq_source: Option<FreqSource>,
    /// Per CPU, for every CPU online at the end.
    pub cpus: Vec<CpuRates>,
    /// Per package.
    pub pkgs: Vec<PkgRates>,
    /// Interrupt sources, hottest first.
    pub irqs: Vec<SourceRates>,
    /// Softirq types, hottest first.
    pub softirqs: Vec<SourceRates>,
    /// CPUs that were online before and are not now.
    pub gone: Vec<u32>,
}

impl Interval {
    /// Returns the rates of one CPU.
    pub fn cpu(&self, cpu: u32) -> Option<&CpuRates> {
        self.cpus.iter().find(|c| c.cpu == cpu)
    }
}

/// Computes the interval from `prev` to `cur`.
pub fn delta_of(
    m: &Machine,
    freq: Option<FreqSource>,
    prev: &Snapshot,
    cur: &Snapshot,
) -> Interval {
    delta_with(m, freq, prev, cur, CpuFileFigures::FromSnapshots)
}

/// Where the figures of the per-CPU counter files (cpuidle and the core
/// throttle count) come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuFileFigures {
    /// From `prev` and `cur`.
    FromSnapshots,
    /// Left empty: the caller fills them in (files read in rounds, each
    /// CPU over its own window), so computing them here would be waste.
    Caller,
}

/// [`delta_of`], with the per-CPU file figures from where `files` says.
pub fn delta_with(
    m: &Machine,
    freq: Option<FreqSource>,
    prev: &Snapshot,
    cur: &Snapshot,
    files: CpuFileFigures,
) -> Interval {
    let dt_ns = cur.time.mono_ns.saturating_sub(prev.time.mono_ns);
    let dt_s = dt_ns as f64 / 1e9;
    // a gap no sampling interval can have (a clock that jumped) gives no
    // rates: averages over months would pass for measurements
    let dt_s_rates = if dt_s > MAX_INTERVAL_S { 0.0 } else { dt_s };
    let order = &cur.online;
    let table = |a: &Reading<IrqTable>, b: &Reading<IrqTable>| match (a, b) {
        (Ok(a), Ok(b)) => irq_rates::rates(a, b, order, dt_s_rates),
        _ => irq_rates::TableRates {
            sources: Vec::new(),
            per_cpu: vec![ClassRates::default(); order.len()],
        },
    };
    let irq = table(&prev.interrupts, &cur.interrupts);
    let soft = table(&prev.softirqs, &cur.softirqs);
    // sorted copies (the kernel's lists are sorted already, so this is one
    // pass): a linear `contains` on 1024 CPUs is a million compares
    let sorted = |v: &[u32]| {
        let mut v = v.to_vec();
        v.sort_unstable();
        v
    };
    let (was, now) = (sorted(&prev.online), sorted(order));
    let was_online = |c: &u32| was.binary_search(c).is_ok();
    let mut cpus = Vec::with_capacity(order.len());
    for (k, &cpu) in order.iter().enumerate() {
        let mut r = CpuRates {
            cpu,
            core: m.topo(cpu).and_then(|t| t.core),
            package: m.topo(cpu).and_then(|t| t.package),
            new: !was_online(&cpu),
            ..CpuRates::default()
        };
        if !r.new && dt_s_rates > 0.0 {
            fill_cpu(&mut r, m, freq, prev, cur, dt_s_rates, files);
            let c = irq.per_cpu[k];
            (r.irq_per_s, r.loc_per_s, r.res_per_s, r.cal_per_s) = (c.all, c.loc, c.res, c.cal);
            (r.tlb_per_s, r.ipi_per_s, r.dev_per_s, r.nmi_per_s) = (c.tlb, c.ipi, c.dev, c.nmi);
            r.softirq_per_s = soft.per_cpu[k].all;
        }
        cpus.push(r);
    }
    let gone = prev
        .online
        .iter()
        .copied()
        .filter(|c| now.binary_search(c).is_err())
        .collect();
    let (irqs, softirqs) = (irq.sources, soft.sources);
    let pkgs = pkg_rates(m, prev, cur, dt_s_rates);
    Interval {
        from: prev.time,
        to: cur.time,
        dt_s,
        freq_source: freq,
        cpus,
        pkgs,
        irqs,
        softirqs,
        gone,
    }
}

fn fill_cpu(
    r: &mut CpuRates,
    m: &Machine,
    freq: Option<FreqSource>,
    prev: &Snapshot,
    cur: &Snapshot,
    dt_s: f64,
    files: CpuFileFigures,
) {
    let cpu = r.cpu;
    r.time = match (&prev.stat, &cur.stat) {
        (Ok(a), Ok(b)) => match (a.cpus.get(&cpu), b.cpus.get(&cpu)) {
            (Some(a), Some(b)) => time_split(a, b),
            _ => None,
        },
        _ => None,
    };
    let perf_s = perf_dt(prev, cur, cpu, dt_s);
    fill_freq(r, m, freq, prev, cur, dt_s, perf_s);
    if r.tsc_mhz.is_none() {
        // perf msr tsc works even where APERF/MPERF do not (VMs); with
        // the MSR device rung the TSC came from a register read, whose
        // time is the clock stamp's
        let tsc_s = if freq == Some(FreqSource::DevMsr) {
            dt_s
        } else {
            perf_s
        };
        r.tsc_mhz = match (
            prev.hw.get(&cpu).and_then(|h| h.tsc),
            cur.hw.get(&cpu).and_then(|h| h.tsc),
        ) {
            (Some(a), Some(b)) => delta(a, b, Width::Bits64)
                .and_then(|d| per_second(d, tsc_s))
                .map(|hz| hz / 1e6),
            _ => None,
        };
    }
    if files == CpuFileFigures::FromSnapshots {
        fill_idle(r, m, prev, cur, dt_s);
        r.throttle = throttle_delta(prev, cur, cpu, |t| t.core);
    }
    let switch_s = if prev.switches_by_clock && cur.switches_by_clock {
        dt_s
    } else {
        perf_s
    };
    r.csw_per_s = count_rate(prev.csw.get(&cpu), cur.csw.get(&cpu), switch_s);
    r.mig_per_s = count_rate(
        prev.migrations.get(&cpu),
        cur.migrations.get(&cpu),
        switch_s,
    );
    r.rq_wait_pct = rq_wait_pct(prev, cur, cpu, dt_s);
    let (ph, ch) = (prev.hw.get(&cpu), cur.hw.get(&cpu));
    r.smi = match (ph.and_then(|h| h.smi), ch.and_then(|h| h.smi)) {
        (Some(a), Some(b)) => delta(a, b, Width::Bits(32)),
        _ => None,
    };
    let d64 = |f: fn(&crate::model::snapshot::CpuHw) -> Option<u64>| {
        delta(ph.and_then(f)?, ch.and_then(f)?, Width::Bits64)
    };
    r.instructions = d64(|h| h.instructions);
    r.cycles = d64(|h| h.cycles);
    r.ipc = ipc(r.instructions, r.cycles);
    r.temp_c = ch
        .and_then(|h| h.temp_c)
        .or_else(|| hwmon_core_temp(m, cpu, cur));
    if let (Some(a), Some(b)) = (ph, ch) {
        r.core_watt = watts(&a.energy, &b.energy, "core", dt_s);
    }
}

/// Instructions per cycle, `Δinstructions/Δcycles`: unknown without both
/// counts or over no cycles (a CPU halted the whole interval has no IPC,
/// not an IPC of 0 or infinity). perf counts both in one group, so a
/// multiplexed group's counts cover the same time and the ratio holds.
pub fn ipc(instructions: Option<u64>, cycles: Option<u64>) -> Option<f64> {
    match (instructions?, cycles?) {
        (_, 0) => None,
        (i, c) => Some(i as f64 / c as f64),
    }
}

/// `ΣΔinstructions` and `ΣΔcycles` over the CPUs that have both: the counts
/// whose ratio is the IPC of them all (a busy CPU weighs more than an idle
/// one, as in turbostat's summary row); `None` when no CPU has both.
pub fn total_counts<'a>(
    rows: impl IntoIterator<Item = &'a CpuRates>,
) -> (Option<u64>, Option<u64>) {
    let pairs = rows
        .into_iter()
        .filter_map(|r| Some((r.instructions?, r.cycles?)));
    pairs.fold((None, None), |(i, c), (di, dc)| {
        let add = |sum: Option<u64>, d: u64| Some(sum.unwrap_or(0).saturating_add(d));
        (add(i, di), add(c, dc))
    })
}

fn time_split(a: &CpuTimes, b: &CpuTimes) -> Option<TimeSplit> {
    let fields = |t: &CpuTimes| {
        [
            Some(t.user),
            Some(t.nice),
            Some(t.system),
            Some(t.idle),
            t.iowait,
            t.irq,
            t.softirq,
            t.steal,
        ]
    };
    let (fa, fb) = (fields(a), fields(b));
    let mut d = [None; 8];
    for i in 0..8 {
        if let (Some(x), Some(y)) = (fa[i], fb[i]) {
            d[i] = delta(x, y, Width::Bits64);
        }
    }
    // a field that went backwards (a CPU re-onlined resets nothing, but
    // hotplug races and buggy hypervisors do) makes the whole split unknown
    if d.iter()
        .zip(fa.iter())
        .any(|(dd, f)| f.is_some() && dd.is_none())
    {
        return None;
    }
    // the kernel's ticks never add up past 64 bits; deltas that do are
    // counters read wrong, and their split is unknown
    let total = d
        .iter()
        .flatten()
        .try_fold(0u64, |sum, &x| sum.checked_add(x))?;
    if total == 0 {
        return None;
    }
    let pct = |x: Option<u64>| x.and_then(|v| percent(v, total, 0.0));
    Some(TimeSplit {
        user: pct(d[0]),
        nice: pct(d[1]),
        system: pct(d[2]),
        idle: pct(d[3]),
        iowait: pct(d[4]),
        irq: pct(d[5]),
        softirq: pct(d[6]),
        steal: pct(d[7]),
    })
}

fn fill_freq(
    r: &mut CpuRates,
    m: &Machine,
    freq: Option<FreqSource>,
    prev: &Snapshot,
    cur: &Snapshot,
    dt_s: f64,
    perf_s: f64,
) {
    let cpu = r.cpu;
    match freq {
        Some(src @ (FreqSource::PerfMsr | FreqSource::DevMsr)) => {
            let dt_s = if src == FreqSource::PerfMsr {
                perf_s
            } else {
                dt_s
            };
            let (Some(a), Some(b)) = (prev.hw.get(&cpu), cur.hw.get(&cpu)) else {
                return;
            };
            let d = |x: Option<u64>, y: Option<u64>| match (x, y) {
                (Some(x), Some(y)) => delta(x, y, Width::Bits64),
                _ => None,
            };
            let daperf = d(a.aperf, b.aperf);
            let dmperf = d(a.mperf, b.mperf);
            let dtsc = d(a.tsc, b.tsc);
            r.avg_mhz = daperf.and_then(|x| per_second(x, dt_s)).map(|hz| hz / 1e6);
            r.tsc_mhz = dtsc.and_then(|x| per_second(x, dt_s)).map(|hz| hz / 1e6);
            if let (Some(mp), Some(ts)) = (dmperf, dtsc) {
                r.busy_pct = percent(mp, ts, 2.0);
            }
            if let (Some(ap), Some(mp)) = (daperf, dmperf)
                && mp > 0
            {
                let ratio = ap as f64 / mp as f64;
                let base = m.base_mhz.as_ref().map(|b| b.0).or(r.tsc_mhz);
                r.bzy_mhz = base.map(|b| b * ratio);
            }
            if let (Some(ts), Some(mp)) = (dtsc, dmperf) {
                r.hw_cstates = hw_cstates(&a.cstates, &b.cstates, ts, mp);
            }
        }
        Some(FreqSource::Cpufreq) => {
            r.busy_pct = r.time.and_then(|t| t.busy());
            r.bzy_mhz = cur
                .files
                .get(&cpu)
                .and_then(|f| f.cur_khz)
                .map(|k| k as f64 / 1000.0);
            r.avg_mhz = match (r.bzy_mhz, r.busy_pct) {
                (Some(f), Some(b)) => Some(f * b / 100.0),
                _ => None,
            };
        }
        Some(FreqSource::Cpuinfo) => {
            r.busy_pct = r.time.and_then(|t| t.busy());
            r.bzy_mhz = m.cpuinfo.mhz.get(&cpu).copied();
            r.avg_mhz = match (r.bzy_mhz, r.busy_pct) {
                (Some(f), Some(b)) => Some(f * b / 100.0),
                _ => None,
            };
        }
        None => r.busy_pct = r.time.and_then(|t| t.busy()),
    }
}

/// Longest gap between two snapshots that rates are computed over: twice
/// the longest sampling interval (`--interval` takes at most 1 h). A
/// longer one is a clock that jumped (a replayed capture edited or pieced
/// together, a suspended machine), not a measurement.
pub const MAX_INTERVAL_S: f64 = 2.0 * 3600.0;

/// Says why an interval has no rates when its clock stamps do not make
/// one: the same time twice, a clock that went back, or a jump forward no
/// sampling interval can have. `None` for an ordinary interval.
pub fn clock_note(from: Stamp, to: Stamp) -> Option<String> {
    let secs = |ns: u64| ns as f64 / 1e9;
    if to.mono_ns == from.mono_ns {
        return Some(format!(
            "same clock ({:.3} s) as the instant before: no rates",
            secs(to.mono_ns)
        ));
    }
    if to.mono_ns < from.mono_ns {
        return Some(format!(
            "clock went back {:.3} s from the instant before: no rates",
            secs(from.mono_ns - to.mono_ns)
        ));
    }
    let dt = secs(to.mono_ns - from.mono_ns);
    (dt > MAX_INTERVAL_S).then(|| {
        format!(
            "clock jumped forward {} from the instant before: no rates",
            human_span(dt)
        )
    })
}

/// A long span in the largest unit that fits: `3.2 years`, `12.0 days`.
fn human_span(s: f64) -> String {
    const DAY: f64 = 86_400.0;
    const YEAR: f64 = 365.25 * DAY;
    if s >= YEAR {
        format!("{:.1} years", s / YEAR)
    } else if s >= DAY {
        format!("{:.1} days", s / DAY)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// Seconds perf counted on `cpu` between two snapshots, which rates of
/// perf counts divide by: `Δtime_running`, equal to `Δtime_enabled` unless
/// the kernel multiplexed the counters (then the counts cover only the
/// running time). The clock stamp is taken next to the reads, not at them,
/// so the time between stamp and read changes from sample to sample and
/// skewed `TSC_MHz` to 2599–2601 on a TSC whose `ΔTSC/Δtime_enabled` is
/// 2600.00; perf's times are taken by the kernel in the same read as the
/// counts, so `ΔTSC/Δtime_enabled` is exact. Without perf times (an older
/// capture, the MSR device rung) it is the clock's `dt_s`; with no rates
/// over this interval (`dt_s` is 0) it is 0 too.
fn perf_dt(prev: &Snapshot, cur: &Snapshot, cpu: u32, dt_s: f64) -> f64 {
    if dt_s <= 0.0 {
        return 0.0;
    }
    let times = |s: &Snapshot| s.hw.get(&cpu).and_then(|h| h.perf_time);
    let (Some((e0, r0)), Some((e1, r1))) = (times(prev), times(cur)) else {
        return dt_s;
    };
    match (delta(e0, e1, Width::Bits64), delta(r0, r1, Width::Bits64)) {
        (Some(de), Some(dr)) if de > 0 && dr > 0 && dr <= de => dr as f64 / 1e9,
        // multiplexed out for the whole interval: the counts say nothing
        (Some(de), Some(0)) if de > 0 => 0.0,
        // counters never ran, or times that went back: the counts
        // themselves are suspect, and the clock is all there is
        _ => dt_s,
    }
}

/// Core C-states from residency counters: `Cn% = 100·ΔCn/ΔTSC`; without a
/// C1 counter, `C1 = ΔTSC − ΔMPERF − ΣΔCn` as turbostat derives it.
fn hw_cstates(
    a: &[(&'static str, u64)],
    b: &[(&'static str, u64)],
    dtsc: u64,
    dmperf: u64,
) -> Vec<(&'static str, Option<f64>)> {
    if b.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut deeper = 0u64;
    let mut known = true;
    for (name, vb) in b {
        let d = a
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, va)| delta(*va, *vb, Width::Bits64));
        match d.and_then(|v| deeper.checked_add(v)) {
            Some(sum) => deeper = sum,
            None => known = false,
        }
        out.push((*name, d.and_then(|v| percent(v, dtsc, 2.0))));
    }
    if !b.iter().any(|(n, _)| *n == "C1") {
        let c1 = known.then(|| dtsc.saturating_sub(dmperf).saturating_sub(deeper));
        out.insert(0, ("C1", c1.and_then(|v| percent(v, dtsc, 2.0))));
    }
    out
}

fn fill_idle(r: &mut CpuRates, m: &Machine, prev: &Snapshot, cur: &Snapshot, dt_s: f64) {
    let Some(states) = m.idle_states.get(&r.cpu) else {
        return;
    };
    let a = prev.files.get(&r.cpu).and_then(|f| f.idle.as_deref());
    let b = cur.files.get(&r.cpu).and_then(|f| f.idle.as_deref());
    r.idle = idle_rates(states, a, b, dt_s).into();
}

/// cpuidle figures of each state between two reads `dt_s` seconds apart;
/// a state missing from either read is unknown.
pub fn idle_rates(
    states: &[IdleStateInfo],
    a: Option<&[IdleCounters]>,
    b: Option<&[IdleCounters]>,
    dt_s: f64,
) -> Vec<IdleRate> {
    let mut out = Vec::with_capacity(states.len());
    for (i, st) in states.iter().enumerate() {
        let pa = a.and_then(|v| v.get(i));
        let pb = b.and_then(|v| v.get(i));
        let d = |f: fn(&IdleCounters) -> Option<u64>| match (pa, pb) {
            (Some(x), Some(y)) if dt_s > 0.0 => match (f(x), f(y)) {
                (Some(x), Some(y)) => delta(x, y, Width::Bits64),
                _ => None,
            },
            _ => None,
        };
        let time = d(|c| Some(c.time_us));
        let usage = d(|c| Some(c.usage));
        // cpuidle time is credited on exit, so a CPU that slept across the
        // whole interval and woke just now can exceed 100 %: cap it
        let pct = time.map(|t| (t as f64 / (dt_s * 1e6) * 100.0).min(100.0));
        out.push(IdleRate {
            name: st.name.clone(),
            pct,
            per_s: usage.and_then(|u| per_second(u, dt_s)),
            above_per_s: d(|c| c.above).and_then(|u| per_second(u, dt_s)),
            below_per_s: d(|c| c.below).and_then(|u| per_second(u, dt_s)),
            latency_us: st.latency_us,
            residency_us: st.residency_us,
            disabled: st.disabled,
        });
    }
    out
}

/// Throttle events of one CPU's counter (`pick`: core or package) between
/// two snapshots.
fn throttle_delta(
    prev: &Snapshot,
    cur: &Snapshot,
    cpu: u32,
    pick: fn(&ThrottleCounts) -> Option<u64>,
) -> Option<u64> {
    let count = |s: &Snapshot| pick(s.files.get(&cpu)?.throttle.as_ref()?);
    delta(count(prev)?, count(cur)?, Width::Bits64)
}

/// `100 · Δwait_ns / (dt · 1e9)` from /proc/schedstat: unknown where
/// either read failed or the counter went back.
fn rq_wait_pct(prev: &Snapshot, cur: &Snapshot, cpu: u32, dt_s: f64) -> Option<f64> {
    let wait = |s: &Snapshot| Some(s.schedstat.as_ref().ok()?.cpus.get(&cpu)?.wait_ns);
    let d = delta(wait(prev)?, wait(cur)?, Width::Bits64)?;
    // one rounding: 2 ms over 1 s is 0.2, not 0.20000000000000004
    (dt_s > 0.0).then(|| d as f64 * 100.0 / (dt_s * 1e9))
}

fn count_rate(a: Option<&u64>, b: Option<&u64>, dt_s: f64) -> Option<f64> {
    per_second(delta(*a?, *b?, Width::Bits64)?, dt_s)
}

fn watts(a: &[Energy], b: &[Energy], domain: &str, dt_s: f64) -> Option<f64> {
    let eb = b.iter().find(|e| e.domain == domain)?;
    let ea = a.iter().find(|e| e.domain == domain)?;
    // a counter still at zero since boot is one the hypervisor does not
    // implement (a guest's energy-psys), not a machine drawing no power
    if ea.raw == 0 && eb.raw == 0 {
        return None;
    }
    let d = delta(ea.raw, eb.raw, eb.width)?;
    let w = d as f64 * eb.joules_per_count / dt_s;
    // a "wrap" that implies more than 10 kW per domain was a reset
    (w.is_finite() && dt_s > 0.0 && w < 10_000.0).then_some(w)
}

fn pkg_rates(m: &Machine, prev: &Snapshot, cur: &Snapshot, dt_s: f64) -> Vec<PkgRates> {
    let mut out: BTreeMap<u32, PkgRates> = BTreeMap::new();
    if dt_s <= 0.0 {
        return Vec::new();
    }
    for (id, b) in &cur.pkg {
        let r = out.entry(*id).or_insert_with(|| PkgRates {
            package: *id,
            ..PkgRates::default()
        });
        r.temp_c = b.temp_c;
        let Some(a) = prev.pkg.get(id) else { continue };
        for e in &b.energy {
            r.watts.push((
                e.domain.to_string(),
                watts(&a.energy, &b.energy, e.domain, dt_s),
            ));
        }
        let leader = m
            .topology
            .iter()
            .find(|t| t.package.unwrap_or(0) == *id)
            .map(|t| t.cpu);
        let dtsc = leader.and_then(|c| {
            let x = prev.hw.get(&c)?.tsc?;
            let y = cur.hw.get(&c)?.tsc?;
            delta(x, y, Width::Bits64)
        });
        for (name, vb) in &b.cstates {
            let d = a
                .cstates
                .iter()
                .find(|(n, _)| n == name)
                .and_then(|(_, va)| delta(*va, *vb, Width::Bits64));
            let pct = match (d, dtsc) {
                (Some(d), Some(t)) => percent(d, t, 2.0),
                _ => None,
            };
            r.cstates.push((*name, pct));
        }
    }
    powercap_rates(m, prev, cur, dt_s, &mut out);
    for r in out.values_mut() {
        let leader = m
            .topology
            .iter()
            .find(|t| t.package.unwrap_or(0) == r.package)
            .map(|t| t.cpu);
        if let Some(c) = leader {
            r.throttle = throttle_delta(prev, cur, c, |t| t.package);
        }
    }
    out.into_values().collect()
}

/// Power from powercap zones: a top-level zone named `package-N` is package
/// N's `pkg`; its sub-zones (`core`, `uncore`, `dram`) are its domains.
fn powercap_rates(
    m: &Machine,
    prev: &Snapshot,
    cur: &Snapshot,
    dt_s: f64,
    out: &mut BTreeMap<u32, PkgRates>,
) {
    for z in &m.rapl_zones {
        let (Some(a), Some(b)) = (prev.powercap_uj.get(&z.id), cur.powercap_uj.get(&z.id)) else {
            continue;
        };
        let width = z.max_energy_range_uj.map_or(Width::Bits64, Width::Range);
        let w = delta(*a, *b, width)
            .map(|d| d as f64 / 1e6 / dt_s)
            .filter(|w| w.is_finite() && *w < 10_000.0);
        let (pkg, domain) = zone_domain(m, z);
        let r = out.entry(pkg).or_insert_with(|| PkgRates {
            package: pkg,
            ..PkgRates::default()
        });
        r.watts.push((domain, w));
    }
}

fn zone_domain(m: &Machine, z: &crate::collect::powercap::RaplZone) -> (u32, String) {
    let parent = z.id.split(':').take(2).collect::<Vec<_>>().join(":");
    let parent_name = m
        .rapl_zones
        .iter()
        .find(|p| p.id == parent)
        .map_or(z.name.as_str(), |p| p.name.as_str());
    let pkg = parent_name
        .strip_prefix("package-")
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let domain = if z.id == parent {
        if z.name.starts_with("package") {
            "pkg".to_string()
        } else {
            z.name.clone()
        }
    } else {
        z.name.clone()
    };
    (pkg, domain)
}

fn hwmon_core_temp(m: &Machine, cpu: u32, cur: &Snapshot) -> Option<f64> {
    let t = m.topo(cpu)?;
    let s = crate::collect::hwmon::core_temp_for(&m.hwmon, t.package, t.core)?.sensor;
    cur.hwmon_mc
        .get(&format!("{}/temp{}", s.dir, s.index))
        .map(|mc| *mc as f64 / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn psys(raw: u64) -> Vec<Energy> {
        vec![Energy {
            domain: "psys",
            raw,
            joules_per_count: 2.0_f64.powi(-32),
            width: Width::Bits64,
        }]
    }

    #[test]
    fn an_energy_counter_that_never_left_zero_is_unknown_not_zero_watts() {
        // a guest's perf power/energy-psys reads 0 at every instant
        assert_eq!(watts(&psys(0), &psys(0), "psys", 1.0), None);
        // a counter that moved, even from zero, has a rate: 2^32 counts = 1 J
        assert_eq!(watts(&psys(0), &psys(1 << 32), "psys", 1.0), Some(1.0));
        assert_eq!(watts(&psys(7), &psys(7), "psys", 1.0), Some(0.0));
    }

    #[test]
    fn ipc_is_instructions_over_cycles_and_unknown_over_no_cycles() {
        assert_eq!(ipc(Some(3_000_000), Some(2_000_000)), Some(1.5));
        assert_eq!(ipc(Some(0), Some(2_000_000)), Some(0.0));
        assert_eq!(ipc(Some(1_000), Some(0)), None, "halted: no IPC, not inf");
        assert_eq!(ipc(Some(0), Some(0)), None, "halted: no IPC, not 0 or NaN");
        assert_eq!(ipc(None, Some(2_000_000)), None);
        assert_eq!(ipc(Some(3_000_000), None), None);
    }

    fn snap(mono_ns: u64, counts: Option<(u64, u64)>) -> Snapshot {
        let mut hw = crate::base::cpu_map::CpuMap::new();
        if let Some((i, c)) = counts {
            hw.insert(
                0,
                crate::model::snapshot::CpuHw {
                    instructions: Some(i),
                    cycles: Some(c),
                    ..Default::default()
                },
            );
        }
        let time = Stamp {
            mono_ns,
            wall_ns: mono_ns,
        };
        Snapshot {
            hw,
            ..Snapshot::unread(time, vec![0])
        }
    }

    #[test]
    fn ipc_of_a_cpu_is_the_delta_of_its_perf_counts() {
        let dir = tempfile::tempdir().unwrap();
        let fs = &mut crate::os::fs::Fs::new(crate::os::fs::Roots::under(dir.path()));
        let m = Machine::read(fs);
        let cpu0 = |a: &Snapshot, b: &Snapshot| delta_of(&m, None, a, b).cpus[0].clone();
        let a = snap(1_000_000_000, Some((10_000_000, 7_000_000)));
        let b = snap(2_000_000_000, Some((13_000_000, 9_000_000)));
        let r = cpu0(&a, &b);
        assert_eq!(
            (r.instructions, r.cycles),
            (Some(3_000_000), Some(2_000_000))
        );
        assert_eq!(r.ipc, Some(1.5));
        // a counter that went back was reset (perf counts are 64-bit and
        // never wrap): that interval's IPC is unknown, as every perf delta
        let reset = snap(2_000_000_000, Some((500, 9_000_000)));
        let r = cpu0(&a, &reset);
        assert_eq!((r.instructions, r.ipc), (None, None));
        // halted over the whole interval: no cycles, no IPC
        let halted = snap(2_000_000_000, Some((10_000_000, 7_000_000)));
        assert_eq!(cpu0(&a, &halted).ipc, None);
        // not read (no PMU, or a watched CPU left unread): unknown
        assert_eq!(cpu0(&a, &snap(2_000_000_000, None)).ipc, None);
        assert_eq!(cpu0(&snap(1_000_000_000, None), &b).ipc, None);
    }

    #[test]
    fn ipc_of_several_cpus_is_their_summed_counts_over_their_summed_cycles() {
        let r = |i, c| CpuRates {
            instructions: i,
            cycles: c,
            ..CpuRates::default()
        };
        let rows = [
            r(Some(3_000_000), Some(1_000_000)),
            r(Some(1_000_000), Some(2_000_000)),
            r(Some(9), None),
        ];
        assert_eq!(total_counts(&rows), (Some(4_000_000), Some(3_000_000)));
        assert_eq!(total_counts(&rows[2..]), (None, None));
    }
}
