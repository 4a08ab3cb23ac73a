//! Writes one exposition from the latest interval, its judgement and the
//! kernel's counters as last read: families in catalogue order, per-CPU
//! series for every CPU where the budget allows one, per-state, per-mode
//! and per-device series for the detailed CPUs only, and sums per package
//! and core type for the rest.

use std::collections::BTreeMap;

use super::catalog::{self as m, Def};
use super::text::{Format, Writer};
use super::totals::{CpuTotals, KIND_LABELS, Totals};
use crate::collect::stat::CpuTimes;
use crate::model::interval::CpuRates;
use crate::model::machine::Machine;
use crate::noise::VerdictState;
use crate::pipeline::Sample;
use crate::sample::ladder::Metric;

/// `USER_HZ`: /proc/stat counts in hundredths of a second on every
/// architecture Linux runs on (the ABI fixes it, whatever `HZ` is).
pub const USER_HZ: f64 = 100.0;

/// Everything one exposition is written from.
pub struct Input<'a> {
    /// The latest judged interval.
    pub sample: &'a Sample,
    /// The kernel's counters as of the same snapshot.
    pub totals: &'a Totals,
    /// Machine facts (topology, idle states).
    pub machine: &'a Machine,
    /// CPUs with the detailed series, sorted.
    pub detail: &'a [u32],
    /// RAPL energy since start, J, by (package, domain).
    pub energy: &'a BTreeMap<(u32, String), f64>,
    /// Intervals sampled.
    pub samples: u64,
    /// `/metrics` requests served.
    pub scrapes: u64,
    /// noisetop's own CPU time, s.
    pub self_cpu_s: Option<f64>,
    /// The last probe, as of this tick.
    pub probe: Option<&'a super::probe::LastProbe>,
    /// Run-queue waits of each watched CPU since start.
    pub runq: &'a super::runq::PerCpu,
    /// CPU time by cgroup on the watched CPUs since start.
    pub cgroup_time: &'a super::cgroup_time::CgroupTime,
}

/// An exposition and its series count.
pub struct Exposition {
    /// The text.
    pub text: String,
    /// Series it holds, `noisetop_series` included.
    pub series: usize,
}

/// Writes the exposition in one format.
pub fn write(format: Format, inp: &Input<'_>, capacity: usize) -> Exposition {
    let mut w = Writer::new(format, capacity);
    let cpus: Vec<(u32, String)> = inp
        .sample
        .interval
        .cpus
        .iter()
        .map(|c| (c.cpu, c.cpu.to_string()))
        .collect();
    every_cpu(&mut w, inp, &cpus);
    detail_cpus(&mut w, inp);
    packages(&mut w, inp);
    super::probe::write(&mut w, inp.probe, inp.detail);
    machine(&mut w, inp);
    let series = w.series() + 1;
    w.family(m::SERIES);
    w.sample(&[], series as f64);
    Exposition {
        text: w.finish(),
        series,
    }
}

fn per_cpu(
    w: &mut Writer,
    d: Def,
    rates: &[CpuRates],
    cpus: &[(u32, String)],
    f: impl Fn(&CpuRates) -> Option<f64>,
) {
    w.family(d);
    for (r, (_, c)) in rates.iter().zip(cpus) {
        if let Some(v) = f(r) {
            w.sample(&[("cpu", c)], v);
        }
    }
}

fn every_cpu(w: &mut Writer, inp: &Input<'_>, cpus: &[(u32, String)]) {
    let rates = &inp.sample.interval.cpus;
    per_cpu(w, m::CPU_BUSY, rates, cpus, |r| {
        r.busy_pct.map(|p| p / 100.0)
    });
    per_cpu(w, m::CPU_FREQ, rates, cpus, |r| r.avg_mhz.map(|v| v * 1e6));
    per_cpu(w, m::CPU_BUSY_FREQ, rates, cpus, |r| {
        r.bzy_mhz.map(|v| v * 1e6)
    });
    per_cpu(w, m::CPU_IDLE_LATENCY, rates, cpus, idle_exit_latency_s);
    let t = |cpu: u32| inp.totals.cpus.get(&cpu);
    per_cpu(w, m::CPU_CSW, rates, cpus, |r| {
        t(r.cpu)?.csw.map(|v| v as f64)
    });
    per_cpu(w, m::CPU_IRQ, rates, cpus, |r| {
        t(r.cpu)?.irq_all.map(|v| v as f64)
    });
    w.family(m::CPU_VERDICT);
    for (r, (_, c)) in rates.iter().zip(cpus) {
        if let Some(v) = inp.sample.judgement.verdict(r.cpu) {
            let state = match v.state {
                VerdictState::Quiet => "quiet",
                VerdictState::Noisy => "noisy",
                VerdictState::Unknown => "unknown",
            };
            w.sample(&[("cpu", c), ("verdict", state)], 1.0);
        }
    }
}

/// Σ share × exit latency over the idle states, divided by the idle share:
/// what a wake-up would cost on average, given where the CPU slept. A CPU
/// that never slept pays nothing (0); with no state's time known, unknown.
pub fn idle_exit_latency_s(r: &CpuRates) -> Option<f64> {
    let mut known = false;
    let mut idle = 0.0;
    let mut weighted = 0.0;
    for s in r.idle.iter() {
        let (Some(pct), Some(lat)) = (s.pct, s.latency_us) else {
            continue;
        };
        known = true;
        idle += pct;
        weighted += pct * lat as f64 * 1e-6;
    }
    known.then(|| if idle > 0.0 { weighted / idle } else { 0.0 })
}

const MODES: [&str; 8] = [
    "user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal",
];

fn modes(t: &CpuTimes) -> [Option<u64>; 8] {
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
}

fn detail_cpus(w: &mut Writer, inp: &Input<'_>) {
    let rows: Vec<(String, &CpuTotals, Option<&CpuRates>)> = inp
        .detail
        .iter()
        .filter_map(|&c| {
            let t = inp.totals.cpus.get(&c)?;
            Some((c.to_string(), t, inp.sample.interval.cpu(c)))
        })
        .collect();
    w.family(m::CPU_SECONDS);
    for (c, t, _) in &rows {
        if let Some(times) = &t.times {
            for (mode, v) in MODES.iter().zip(modes(times)) {
                if let Some(v) = v {
                    w.sample(&[("cpu", c), ("mode", mode)], v as f64 / USER_HZ);
                }
            }
        }
    }
    w.family(m::CPU_IRQ_KIND);
    for (c, t, _) in &rows {
        for (kind, v) in KIND_LABELS.iter().zip(t.irq_kind) {
            if let Some(v) = v {
                w.sample(&[("cpu", c), ("kind", kind)], v as f64);
            }
        }
    }
    w.family(m::CPU_IRQ_DEVICE);
    for (c, t, _) in &rows {
        for d in &t.devices {
            w.sample(
                &[("cpu", c), ("irq", &d.irq), ("device", &d.device)],
                d.count as f64,
            );
        }
    }
    w.family(m::CPU_SOFTIRQ);
    for (c, t, _) in &rows {
        for (ty, v) in inp.totals.softirq_types.iter().zip(&t.softirqs) {
            if let Some(v) = v {
                w.sample(&[("cpu", c), ("type", ty)], *v as f64);
            }
        }
    }
    w.family(m::CPU_MIG);
    for (c, t, _) in &rows {
        if let Some(v) = t.mig {
            w.sample(&[("cpu", c)], v as f64);
        }
    }
    let states = |cpu: &str| {
        cpu.parse::<u32>()
            .ok()
            .and_then(|c| inp.machine.idle_states.get(&c))
    };
    for (d, pick) in [
        (m::CPU_IDLE_TIME, 0usize),
        (m::CPU_IDLE_USAGE, 1),
        (m::CPU_IDLE_ABOVE, 2),
        (m::CPU_IDLE_BELOW, 3),
    ] {
        w.family(d);
        for (c, t, _) in &rows {
            let (Some(info), Some(counts)) = (states(c), &t.idle) else {
                continue;
            };
            for (s, k) in info.iter().zip(counts) {
                let v = match pick {
                    0 => Some(k.time_us as f64 * 1e-6),
                    1 => Some(k.usage as f64),
                    2 => k.above.map(|v| v as f64),
                    _ => k.below.map(|v| v as f64),
                };
                if let Some(v) = v {
                    w.sample(&[("cpu", c), ("state", s.name.as_str())], v);
                }
            }
        }
    }
    w.family(m::CPU_IDLE_STATE_LATENCY);
    for (c, _, _) in &rows {
        for s in states(c).into_iter().flatten() {
            if let Some(l) = s.latency_us {
                w.sample(&[("cpu", c), ("state", s.name.as_str())], l as f64 * 1e-6);
            }
        }
    }
    w.family(m::CPU_HW_CSTATE);
    for (c, _, r) in &rows {
        for (name, pct) in r.map(|r| r.hw_cstates.as_slice()).unwrap_or_default() {
            if let Some(p) = pct {
                w.sample(&[("cpu", c), ("state", name)], p / 100.0);
            }
        }
    }
    w.family(m::CPU_TEMP);
    for (c, _, r) in &rows {
        if let Some(v) = r.and_then(|r| r.temp_c) {
            w.sample(&[("cpu", c)], v);
        }
    }
    w.family(m::CPU_THROTTLE);
    for (c, t, _) in &rows {
        if let Some(v) = t.throttle {
            w.sample(&[("cpu", c)], v as f64);
        }
    }
    w.family(m::CPU_SMI);
    for (c, t, _) in &rows {
        if let Some(v) = t.smi {
            w.sample(&[("cpu", c)], v as f64);
        }
    }
    catalogued(w, inp);
    traced(w, inp);
}

/// The catalogue's figures with a family of their own: each CPU's counter
/// (every CPU, or the detailed ones, as the entry says).
fn catalogued(w: &mut Writer, inp: &Input<'_>) {
    for (k, (d, _)) in m::figure_families().into_iter().enumerate() {
        w.family(d);
        let every: Vec<u32>;
        let cpus = if d.scope == m::Scope::EveryCpu {
            every = inp.sample.interval.cpus.iter().map(|r| r.cpu).collect();
            &every
        } else {
            inp.detail
        };
        for &cpu in cpus {
            let v = inp.totals.cpus.get(&cpu).and_then(|t| *t.figures.get(k)?);
            if let Some(v) = v {
                w.sample(&[("cpu", &cpu.to_string())], v);
            }
        }
    }
}

/// Top-N lists of the traced CPUs: who ran, and which interrupts took time.
const TOP: usize = 5;

/// The [`TOP`] largest sums by key, largest first (ties by key).
fn top<K: Ord>(items: impl Iterator<Item = (K, u64)>) -> Vec<(K, u64)> {
    let mut by: BTreeMap<K, u64> = BTreeMap::new();
    for (k, ns) in items {
        *by.entry(k).or_default() += ns;
    }
    let mut top: Vec<_> = by.into_iter().collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    top.truncate(TOP);
    top
}

fn traced(w: &mut Writer, inp: &Input<'_>) {
    let Some(tr) = &inp.sample.trace else {
        return;
    };
    w.family(m::CPU_INTRUDER);
    for t in &tr.cpus {
        let c = t.cpu.to_string();
        // threads of one process are one series
        let by = t
            .intruders
            .iter()
            .map(|i| ((i.task.comm.clone(), i.task.pid), i.ns));
        for ((comm, pid), ns) in top(by) {
            let pid = pid.to_string();
            w.sample(
                &[("cpu", &c), ("comm", &comm), ("pid", &pid)],
                ns as f64 * 1e-9,
            );
        }
    }
    w.family(m::CPU_STOLEN);
    for t in &tr.cpus {
        let c = t.cpu.to_string();
        let by = t
            .stolen
            .iter()
            .map(|s| ((s.kind.clone(), s.name.clone()), s.ns));
        for ((kind, source), ns) in top(by) {
            w.sample(
                &[("cpu", &c), ("kind", &kind), ("source", &source)],
                ns as f64 * 1e-9,
            );
        }
    }
    w.family(m::CPU_RUNQ_WAIT);
    super::runq::write(w, inp.runq);
    w.family(m::CGROUP_SECONDS);
    inp.cgroup_time.write(w);
}

/// The CPUs of each (package, core type), from the topology.
fn groups(inp: &Input<'_>) -> BTreeMap<(String, String), Vec<u32>> {
    let mut g: BTreeMap<(String, String), Vec<u32>> = BTreeMap::new();
    for r in &inp.sample.interval.cpus {
        let topo = inp.machine.topo(r.cpu);
        let pkg = topo
            .and_then(|t| t.package)
            .map_or_else(|| "unknown".to_string(), |p| p.to_string());
        let ty = topo
            .and_then(|t| t.core_type.clone())
            .unwrap_or_else(|| "any".to_string());
        g.entry((pkg, ty)).or_default().push(r.cpu);
    }
    g
}

/// Sums a counter over CPUs; `None` when no CPU has it.
fn sum(cpus: &[u32], t: &Totals, f: impl Fn(&CpuTotals) -> Option<u64>) -> Option<u64> {
    cpus.iter()
        .filter_map(|c| f(t.cpus.get(c)?))
        .fold(None, |acc, v| Some(acc.unwrap_or(0u64).wrapping_add(v)))
}

fn packages(w: &mut Writer, inp: &Input<'_>) {
    let groups = groups(inp);
    let t = inp.totals;
    w.family(m::PKG_SECONDS);
    for ((p, ty), cpus) in &groups {
        for (i, mode) in MODES.iter().enumerate() {
            if let Some(v) = sum(cpus, t, |c| modes(c.times.as_ref()?)[i]) {
                w.sample(
                    &[("package", p), ("core_type", ty), ("mode", mode)],
                    v as f64 / USER_HZ,
                );
            }
        }
    }
    w.family(m::PKG_IRQ_KIND);
    for ((p, ty), cpus) in &groups {
        for (i, kind) in KIND_LABELS.iter().enumerate() {
            if let Some(v) = sum(cpus, t, |c| c.irq_kind[i]) {
                w.sample(
                    &[("package", p), ("core_type", ty), ("kind", kind)],
                    v as f64,
                );
            }
        }
    }
    w.family(m::PKG_SOFTIRQ);
    for ((p, ty), cpus) in &groups {
        for (i, kind) in t.softirq_types.iter().enumerate() {
            if let Some(v) = sum(cpus, t, |c| c.softirqs.get(i).copied().flatten()) {
                w.sample(
                    &[("package", p), ("core_type", ty), ("type", kind)],
                    v as f64,
                );
            }
        }
    }
    w.family(m::PKG_CSW);
    for ((p, ty), cpus) in &groups {
        if let Some(v) = sum(cpus, t, |c| c.csw) {
            w.sample(&[("package", p), ("core_type", ty)], v as f64);
        }
    }
    w.family(m::PKG_MIG);
    for ((p, ty), cpus) in &groups {
        if let Some(v) = sum(cpus, t, |c| c.mig) {
            w.sample(&[("package", p), ("core_type", ty)], v as f64);
        }
    }
    for (d, pick) in [
        (m::PKG_IDLE_TIME, 0usize),
        (m::PKG_IDLE_USAGE, 1),
        (m::PKG_IDLE_ABOVE, 2),
        (m::PKG_IDLE_BELOW, 3),
    ] {
        w.family(d);
        for ((p, ty), cpus) in &groups {
            // by state name: CPUs of one group may list different states
            let mut by: BTreeMap<String, f64> = BTreeMap::new();
            for c in cpus {
                let (Some(info), Some(counts)) = (
                    inp.machine.idle_states.get(c),
                    t.cpus.get(c).and_then(|x| x.idle.as_ref()),
                ) else {
                    continue;
                };
                for (s, k) in info.iter().zip(counts) {
                    let v = match pick {
                        0 => Some(k.time_us as f64 * 1e-6),
                        1 => Some(k.usage as f64),
                        2 => k.above.map(|v| v as f64),
                        _ => k.below.map(|v| v as f64),
                    };
                    if let Some(v) = v {
                        *by.entry(s.name.to_string()).or_default() += v;
                    }
                }
            }
            for (state, v) in by {
                w.sample(&[("package", p), ("core_type", ty), ("state", &state)], v);
            }
        }
    }
    w.family(m::PKG_ENERGY);
    for ((p, domain), j) in inp.energy {
        w.sample(&[("package", &p.to_string()), ("domain", domain)], *j);
    }
    let pkgs = &inp.sample.interval.pkgs;
    w.family(m::PKG_POWER);
    for p in pkgs {
        let ps = p.package.to_string();
        for (domain, watts) in &p.watts {
            if let Some(v) = watts {
                w.sample(&[("package", &ps), ("domain", domain)], *v);
            }
        }
    }
    w.family(m::PKG_CSTATE);
    for p in pkgs {
        let ps = p.package.to_string();
        for (state, pct) in &p.cstates {
            if let Some(v) = pct {
                w.sample(&[("package", &ps), ("state", state)], v / 100.0);
            }
        }
    }
    w.family(m::PKG_TEMP);
    for p in pkgs {
        if let Some(v) = p.temp_c {
            w.sample(&[("package", &p.package.to_string())], v);
        }
    }
    w.family(m::PKG_THROTTLE);
    let mut seen = BTreeMap::new();
    for r in &inp.sample.interval.cpus {
        let Some(pkg) = inp.machine.topo(r.cpu).and_then(|t| t.package) else {
            continue;
        };
        if let Some(v) = t.cpus.get(&r.cpu).and_then(|c| c.pkg_throttle) {
            seen.entry(pkg).or_insert(v);
        }
    }
    for (p, v) in seen {
        w.sample(&[("package", &p.to_string())], v as f64);
    }
}

fn machine(w: &mut Writer, inp: &Input<'_>) {
    let s = inp.sample;
    w.family(m::FINDING);
    let mut seen = std::collections::BTreeSet::new();
    for f in &s.judgement.findings {
        let cpus = crate::base::cpulist::format(&f.cpus);
        let sev = f.severity.label().to_ascii_lowercase();
        // one series per (id, cpus, source): the worst severity stands
        if seen.insert((f.kind.tag(), cpus.clone(), f.label.clone())) {
            w.sample(
                &[
                    ("id", f.kind.tag()),
                    ("severity", &sev),
                    ("cpus", &cpus),
                    ("source", &f.label),
                ],
                1.0,
            );
        }
    }
    w.family(m::UNAVAILABLE);
    for st in &s.statuses {
        if st.rung.is_none() {
            let why = st.note.as_deref().unwrap_or("no source on this machine");
            w.sample(&[("metric", st.metric.id()), ("reason", why)], 1.0);
        }
    }
    if let Some(Err(why)) = &s.own_ipis {
        w.sample(
            &[("metric", "watched_cpu_ipis"), ("reason", why.detail())],
            1.0,
        );
    }
    // who ran is counted in the kernel, or this says why not (sampled
    // from /proc instead, where it is said at all)
    if let Some(why) = &s.trace_missing {
        w.sample(
            &[("metric", "who_ran_in_kernel"), ("reason", why.detail())],
            1.0,
        );
    }
    if inp.probe.is_none_or(|p| p.report.is_none()) {
        w.sample(
            &[("metric", "probe"), ("reason", super::probe::NO_PROBE)],
            1.0,
        );
    }
    // a source that gives no figure says why
    if crate::sample::ladder::power_silent(&s.statuses, &s.interval) {
        w.sample(
            &[
                ("metric", Metric::Power.id()),
                ("reason", crate::sample::ladder::POWER_SILENT),
            ],
            1.0,
        );
    }
    w.family(m::SOURCE);
    for st in &s.statuses {
        if let (Some(r), Some(_)) = (st.rung, &st.source) {
            w.sample(&[("metric", st.metric.id()), ("source", r.label())], 1.0);
        }
    }
    w.family(m::WATCHED);
    for c in &s.watched {
        w.sample(&[("cpu", &c.to_string())], 1.0);
    }
    w.family(m::DETAILED);
    for c in inp.detail {
        w.sample(&[("cpu", &c.to_string())], 1.0);
    }
    w.family(m::SAMPLES);
    w.sample(&[], inp.samples as f64);
    w.family(m::INTERVAL);
    w.sample(&[], s.interval.dt_s);
    w.family(m::SAMPLE_TIME);
    w.sample(&[], s.interval.to.wall_ns as f64 / 1e9);
    w.family(m::SAMPLE_COST);
    w.sample(&[], s.took.as_secs_f64());
    w.family(m::SELF_CPU);
    if let Some(v) = inp.self_cpu_s {
        w.sample(&[], v);
    }
    w.family(m::OWN_IPIS);
    if let Some(Ok(i)) = &s.own_ipis {
        w.sample(&[("phase", "setup")], i.setup as f64);
        w.sample(&[("phase", "running")], i.since_first as f64);
    }
    w.family(m::OWN_WAKEUPS);
    if let Some(Ok(i)) = &s.own_ipis {
        w.sample(&[], i.woke_since_first as f64);
    }
    w.family(m::SCRAPES);
    w.sample(&[], inp.scrapes as f64);
    w.family(m::UP);
    w.sample(&[], 1.0);
    w.family(m::BUILD);
    w.sample(&[("version", env!("CARGO_PKG_VERSION"))], 1.0);
}
