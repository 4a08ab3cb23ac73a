//! Every metric the exporter writes: name, type, unit, labels, help, and
//! which CPUs it covers. The writer takes its headers from here and the
//! README's metric list is generated from here, so the two cannot differ.
//! A figure of the metric catalogue with a family of its own
//! ([`crate::metric::Prom::Counter`]) has its family made here from its
//! entry, and written by `serve::expose` from it.

use std::fmt::Write as _;

/// How Prometheus is to treat a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    /// Only goes up, except when its source restarts; samples end in `_total`.
    Counter,
    /// A value of the latest interval.
    Gauge,
    /// Constant labels with the value 1 (`_info`).
    Info,
    /// Cumulative `_bucket{le}` counts with `_sum` and `_count`.
    Histogram,
}

/// Which series a metric has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// One series (or a few) for the machine.
    Machine,
    /// Every online CPU.
    EveryCpu,
    /// The detailed CPUs only: watched, isolated and `nohz_full` ones by
    /// default, every CPU with `--detail all`.
    DetailCpu,
    /// Summed (or, for gauges, read) per package and core type.
    Package,
}

impl Scope {
    /// Says it in words for the README.
    pub fn text(self) -> &'static str {
        match self {
            Scope::Machine => "machine",
            Scope::EveryCpu => "every CPU",
            Scope::DetailCpu => "detailed CPUs",
            Scope::Package => "package × core type",
        }
    }
}

/// One metric family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Def {
    /// The family name: what samples are called, less `_total` on counters
    /// and `_info` on info metrics.
    pub name: &'static str,
    /// Counter, gauge or info.
    pub kind: Type,
    /// The base unit the name ends in, if any.
    pub unit: Option<&'static str>,
    /// Label names, in the order they are written.
    pub labels: &'static [&'static str],
    /// Which series exist.
    pub scope: Scope,
    /// One line: what it is and where it comes from.
    pub help: &'static str,
}

impl Def {
    /// Returns the name samples carry (`_total` on counters, `_info` on info).
    pub fn sample_name(&self) -> String {
        match self.kind {
            Type::Counter => format!("{}_total", self.name),
            Type::Info => format!("{}_info", self.name),
            Type::Gauge | Type::Histogram => self.name.to_string(),
        }
    }
}

macro_rules! def {
    ($id:ident, $name:literal, $kind:ident, $unit:expr, [$($l:literal),*], $scope:ident, $help:literal) => {
        #[doc = concat!("The `", $name, "` family (its help text is its `help`).")]
        pub const $id: Def = Def {
            name: $name,
            kind: Type::$kind,
            unit: $unit,
            labels: &[$($l),*],
            scope: Scope::$scope,
            help: $help,
        };
    };
}

const S: Option<&str> = Some("seconds");
const H: Option<&str> = Some("hertz");
const R: Option<&str> = Some("ratio");
const C: Option<&str> = Some("celsius");
const J: Option<&str> = Some("joules");
const W: Option<&str> = Some("watts");

def!(
    CPU_BUSY,
    "noisetop_cpu_busy_ratio",
    Gauge,
    R,
    ["cpu"],
    EveryCpu,
    "Share of the latest interval the CPU was not idle: dMPERF/dTSC, else /proc/stat busy time."
);
def!(
    CPU_FREQ,
    "noisetop_cpu_frequency_hertz",
    Gauge,
    H,
    ["cpu"],
    EveryCpu,
    "Average clock over the latest interval, idle included: dAPERF/dt (else the cpufreq fallback)."
);
def!(
    CPU_BUSY_FREQ,
    "noisetop_cpu_busy_frequency_hertz",
    Gauge,
    H,
    ["cpu"],
    EveryCpu,
    "Clock while not idle over the latest interval: base clock x dAPERF/dMPERF."
);
def!(
    CPU_IDLE_LATENCY,
    "noisetop_cpu_idle_exit_latency_seconds",
    Gauge,
    S,
    ["cpu"],
    EveryCpu,
    "C-state depth: exit latency of the idle states the CPU sat in, weighted by the time in each (cpuidle latency and time)."
);
def!(
    CPU_CSW,
    "noisetop_cpu_context_switches",
    Counter,
    None,
    ["cpu"],
    EveryCpu,
    "Context switches on the CPU: perf software counter context-switches, counted since noisetop opened it."
);
def!(
    CPU_IRQ,
    "noisetop_cpu_interrupts",
    Counter,
    None,
    ["cpu"],
    EveryCpu,
    "Interrupts the CPU serviced since boot: the sum of its column over every row of /proc/interrupts."
);
def!(
    CPU_VERDICT,
    "noisetop_cpu_verdict",
    Gauge,
    None,
    ["cpu", "verdict"],
    EveryCpu,
    "The CPU's verdict over the latest interval (quiet, noisy or unknown) as a label; the value is 1."
);
def!(
    CPU_SECONDS,
    "noisetop_cpu_seconds",
    Counter,
    S,
    ["cpu", "mode"],
    DetailCpu,
    "Time the CPU spent in each mode since boot: /proc/stat ticks / USER_HZ (100)."
);
def!(
    CPU_IRQ_KIND,
    "noisetop_cpu_interrupts_by_kind",
    Counter,
    None,
    ["cpu", "kind"],
    DetailCpu,
    "Interrupts since boot by kind: timer (LOC), reschedule (RES), function_call (CAL), tlb_shootdown (TLB), device (numbered rows), irq_work, other_ipi, nmi, other."
);
def!(
    CPU_IRQ_DEVICE,
    "noisetop_cpu_device_interrupts",
    Counter,
    None,
    ["cpu", "irq", "device"],
    DetailCpu,
    "Interrupts since boot per numbered /proc/interrupts row; rows the CPU never serviced are left out."
);
def!(
    CPU_SOFTIRQ,
    "noisetop_cpu_softirqs",
    Counter,
    None,
    ["cpu", "type"],
    DetailCpu,
    "Softirqs since boot by type: /proc/softirqs."
);
def!(
    CPU_MIG,
    "noisetop_cpu_migrations",
    Counter,
    None,
    ["cpu"],
    DetailCpu,
    "Task migrations onto the CPU: perf software counter cpu-migrations, counted since noisetop opened it."
);
def!(
    CPU_IDLE_TIME,
    "noisetop_cpu_idle_state_seconds",
    Counter,
    S,
    ["cpu", "state"],
    DetailCpu,
    "Time in each idle state since boot: cpuidle stateN/time."
);
def!(
    CPU_IDLE_USAGE,
    "noisetop_cpu_idle_state_entries",
    Counter,
    None,
    ["cpu", "state"],
    DetailCpu,
    "Entries into each idle state since boot: cpuidle stateN/usage."
);
def!(
    CPU_IDLE_ABOVE,
    "noisetop_cpu_idle_state_above",
    Counter,
    None,
    ["cpu", "state"],
    DetailCpu,
    "Entries into a state too deep for the idle time that followed: cpuidle stateN/above."
);
def!(
    CPU_IDLE_BELOW,
    "noisetop_cpu_idle_state_below",
    Counter,
    None,
    ["cpu", "state"],
    DetailCpu,
    "Entries into a state shallower than the idle time allowed: cpuidle stateN/below."
);
def!(
    CPU_IDLE_STATE_LATENCY,
    "noisetop_cpu_idle_state_exit_latency_seconds",
    Gauge,
    S,
    ["cpu", "state"],
    DetailCpu,
    "Exit latency the driver advertises for each idle state: cpuidle stateN/latency."
);
def!(
    CPU_HW_CSTATE,
    "noisetop_cpu_core_cstate_residency_ratio",
    Gauge,
    R,
    ["cpu", "state"],
    DetailCpu,
    "Hardware core C-state residency over the latest interval: residency counter / dTSC."
);
def!(
    CPU_TEMP,
    "noisetop_cpu_temperature_celsius",
    Gauge,
    C,
    ["cpu"],
    DetailCpu,
    "Core temperature: IA32_THERM_STATUS, else hwmon."
);
def!(
    CPU_THROTTLE,
    "noisetop_cpu_thermal_throttles",
    Counter,
    None,
    ["cpu"],
    DetailCpu,
    "Core thermal throttle events since boot: thermal_throttle/core_throttle_count."
);
def!(
    CPU_SMI,
    "noisetop_cpu_smis",
    Counter,
    None,
    ["cpu"],
    DetailCpu,
    "System management interrupts: MSR_SMI_COUNT (32 bits, wraps)."
);
def!(
    CPU_INTRUDER,
    "noisetop_cpu_intruder_seconds",
    Gauge,
    S,
    ["cpu", "comm", "pid"],
    DetailCpu,
    "Time another task than the owner ran on a traced CPU in the latest interval, top 5 (counted in the kernel by BPF on sched_switch; sampled from /proc where BPF is refused)."
);
def!(
    CPU_STOLEN,
    "noisetop_cpu_interruption_seconds",
    Gauge,
    S,
    ["cpu", "kind", "source"],
    DetailCpu,
    "Time interrupt sources took from a traced CPU in the latest interval, top 5 (counted in the kernel by BPF on the irq, softirq and irq_vectors tracepoints)."
);
def!(
    CPU_RUNQ_WAIT,
    "noisetop_cpu_runqueue_wait_seconds",
    Histogram,
    S,
    ["cpu"],
    DetailCpu,
    "How long tasks waited for a watched CPU since serve started, from their wake-up or preemption to their switch in (BPF on sched_wakeup and sched_switch); buckets at powers of two of nanoseconds, as the kernel counts them."
);
def!(
    CGROUP_SECONDS,
    "noisetop_cgroup_cpu_seconds",
    Counter,
    S,
    ["cgroup", "cpus"],
    Machine,
    "CPU time the tasks of each cgroup (v2 path) took since serve started, counted in the kernel by BPF, by class of CPU (cpus: watched, isolated or other; other CPUs count their 8 longest tasks): per class the 50 longest by name, the rest summed as cgroup=other (at most 500 kept per class)."
);
def!(
    PKG_SECONDS,
    "noisetop_package_cpu_seconds",
    Counter,
    S,
    ["package", "core_type", "mode"],
    Package,
    "Time the package's CPUs spent in each mode since boot, summed: /proc/stat ticks / USER_HZ (100)."
);
def!(
    PKG_IRQ_KIND,
    "noisetop_package_interrupts",
    Counter,
    None,
    ["package", "core_type", "kind"],
    Package,
    "Interrupts since boot by kind, summed over the package's CPUs: /proc/interrupts."
);
def!(
    PKG_SOFTIRQ,
    "noisetop_package_softirqs",
    Counter,
    None,
    ["package", "core_type", "type"],
    Package,
    "Softirqs since boot by type, summed over the package's CPUs: /proc/softirqs."
);
def!(
    PKG_CSW,
    "noisetop_package_context_switches",
    Counter,
    None,
    ["package", "core_type"],
    Package,
    "Context switches summed over the package's CPUs (perf, since noisetop opened the counters)."
);
def!(
    PKG_MIG,
    "noisetop_package_migrations",
    Counter,
    None,
    ["package", "core_type"],
    Package,
    "Migrations summed over the package's CPUs (perf, since noisetop opened the counters)."
);
def!(
    PKG_IDLE_TIME,
    "noisetop_package_idle_state_seconds",
    Counter,
    S,
    ["package", "core_type", "state"],
    Package,
    "Time in each idle state since boot, summed over the package's CPUs: cpuidle stateN/time."
);
def!(
    PKG_IDLE_USAGE,
    "noisetop_package_idle_state_entries",
    Counter,
    None,
    ["package", "core_type", "state"],
    Package,
    "Entries into each idle state since boot, summed over the package's CPUs: cpuidle stateN/usage."
);
def!(
    PKG_IDLE_ABOVE,
    "noisetop_package_idle_state_above",
    Counter,
    None,
    ["package", "core_type", "state"],
    Package,
    "Too-deep entries per idle state since boot, summed over the package's CPUs: cpuidle stateN/above."
);
def!(
    PKG_IDLE_BELOW,
    "noisetop_package_idle_state_below",
    Counter,
    None,
    ["package", "core_type", "state"],
    Package,
    "Too-shallow entries per idle state since boot, summed over the package's CPUs: cpuidle stateN/below."
);
def!(
    PKG_ENERGY,
    "noisetop_package_energy_joules",
    Counter,
    J,
    ["package", "domain"],
    Package,
    "RAPL energy per domain since noisetop started, wrap-arounds of the 32-bit counters accounted for."
);
def!(
    PKG_POWER,
    "noisetop_package_power_watts",
    Gauge,
    W,
    ["package", "domain"],
    Package,
    "RAPL power per domain over the latest interval."
);
def!(
    PKG_CSTATE,
    "noisetop_package_cstate_residency_ratio",
    Gauge,
    R,
    ["package", "state"],
    Package,
    "Package C-state residency over the latest interval: residency counter / dTSC."
);
def!(
    PKG_TEMP,
    "noisetop_package_temperature_celsius",
    Gauge,
    C,
    ["package"],
    Package,
    "Package temperature: IA32_PACKAGE_THERM_STATUS, else hwmon."
);
def!(
    PKG_THROTTLE,
    "noisetop_package_thermal_throttles",
    Counter,
    None,
    ["package"],
    Package,
    "Package thermal throttle events since boot: thermal_throttle/package_throttle_count of its first CPU."
);
def!(
    PROBE_CPU_LATENCY,
    "noisetop_probe_cpu_wakeup_latency_seconds",
    Histogram,
    S,
    ["cpu", "kind", "state"],
    DetailCpu,
    "The last noisetop probe's wake-up latencies per probed CPU, kind (timer, remote, round_trip) and idle state woken from, in 1-2-5 buckets from 1 us to 100 ms; replaced when a probe runs again."
);
def!(
    PROBE_LATENCY,
    "noisetop_probe_wakeup_latency_seconds",
    Histogram,
    S,
    ["kind", "state"],
    Machine,
    "The last noisetop probe's wake-up latencies per kind and idle state, every probed CPU added up."
);
def!(
    PROBE_CSW,
    "noisetop_probe_context_switch_seconds",
    Gauge,
    S,
    ["cpu"],
    EveryCpu,
    "The last noisetop probe's cost of one context switch per probed CPU: (pipe round trip on the CPU - 2 x pipe write and read) / 2."
);
def!(
    PROBE_TIME,
    "noisetop_probe_timestamp_seconds",
    Gauge,
    S,
    [],
    Machine,
    "When the last noisetop probe ended (Unix time, its result file's time): the age of the probe figures."
);
def!(
    FINDING,
    "noisetop_finding",
    Gauge,
    None,
    ["id", "severity", "cpus", "source"],
    Machine,
    "An active finding of the latest interval (id, severity, the CPUs it concerns, its source); the value is 1."
);
def!(
    UNAVAILABLE,
    "noisetop_metric_unavailable",
    Gauge,
    None,
    ["metric", "reason"],
    Machine,
    "A metric noisetop cannot read here, and why; its series are absent, never 0."
);
def!(
    SOURCE,
    "noisetop_metric_source",
    Gauge,
    None,
    ["metric", "source"],
    Machine,
    "Where a metric is read from (perf, msr, kernel); the value is 1."
);
def!(
    WATCHED,
    "noisetop_cpu_watched",
    Gauge,
    None,
    ["cpu"],
    Machine,
    "The watched CPUs (--watch), held to the strict limits; the value is 1."
);
def!(
    DETAILED,
    "noisetop_cpu_detailed",
    Gauge,
    None,
    ["cpu"],
    Machine,
    "The CPUs with per-state, per-device and per-mode series (watched, isolated, nohz_full, or all with --detail all)."
);
def!(
    SAMPLES,
    "noisetop_samples",
    Counter,
    None,
    [],
    Machine,
    "Intervals noisetop has sampled: it moves with --interval, never with the scrape rate."
);
def!(
    INTERVAL,
    "noisetop_interval_seconds",
    Gauge,
    S,
    [],
    Machine,
    "Length of the latest interval."
);
def!(
    SAMPLE_TIME,
    "noisetop_sample_timestamp_seconds",
    Gauge,
    S,
    [],
    Machine,
    "When the latest interval ended (Unix time): the age of every figure here."
);
def!(
    SAMPLE_COST,
    "noisetop_sample_duration_seconds",
    Gauge,
    S,
    [],
    Machine,
    "Time taking and judging the latest sample took."
);
def!(
    SELF_CPU,
    "noisetop_self_cpu_seconds",
    Counter,
    S,
    [],
    Machine,
    "CPU time noisetop itself has used, every thread: CLOCK_PROCESS_CPUTIME_ID."
);
def!(
    OWN_IPIS,
    "noisetop_watched_cpu_ipis",
    Counter,
    None,
    ["phase"],
    Machine,
    "IPIs noisetop's own threads sent to the watched CPUs, counted by the kernel's ipi_send_cpu and ipi_send_cpumask tracepoints: phase=setup before the first sample (installing perf events), phase=running since (the hands-off promise is 0)."
);
def!(
    OWN_WAKEUPS,
    "noisetop_watched_cpu_wakeups",
    Counter,
    None,
    [],
    Machine,
    "Reschedule and wake-list IPIs noisetop's own threads sent to the watched CPUs since the first sample, counted apart from noisetop_watched_cpu_ipis_total: a task they woke ran there (the terminal's kworker or a pipe's reader after a write)."
);
def!(
    SCRAPES,
    "noisetop_scrapes",
    Counter,
    None,
    [],
    Machine,
    "Requests for /metrics served, as of the latest interval."
);
def!(
    UP,
    "noisetop_up",
    Gauge,
    None,
    [],
    Machine,
    "1 while noisetop samples: this exposition is of an interval it judged (Prometheus's own up says only that the scrape answered)."
);
def!(
    BUILD,
    "noisetop_build",
    Info,
    None,
    ["version"],
    Machine,
    "The noisetop version serving these metrics."
);
def!(
    SERIES,
    "noisetop_series",
    Gauge,
    None,
    [],
    Machine,
    "Series in this exposition, this one included: the cardinality budget is 10 000 at 1152 CPUs."
);

/// Every family written by the exporter's own code, in the order the
/// exposition writes them; [`all`] adds the catalogue's figures.
pub const ALL: &[Def] = &[
    CPU_BUSY,
    CPU_FREQ,
    CPU_BUSY_FREQ,
    CPU_IDLE_LATENCY,
    CPU_CSW,
    CPU_IRQ,
    CPU_VERDICT,
    CPU_SECONDS,
    CPU_IRQ_KIND,
    CPU_IRQ_DEVICE,
    CPU_SOFTIRQ,
    CPU_MIG,
    CPU_IDLE_TIME,
    CPU_IDLE_USAGE,
    CPU_IDLE_ABOVE,
    CPU_IDLE_BELOW,
    CPU_IDLE_STATE_LATENCY,
    CPU_HW_CSTATE,
    CPU_TEMP,
    CPU_THROTTLE,
    CPU_SMI,
    CPU_INTRUDER,
    CPU_STOLEN,
    CPU_RUNQ_WAIT,
    CGROUP_SECONDS,
    PKG_SECONDS,
    PKG_IRQ_KIND,
    PKG_SOFTIRQ,
    PKG_CSW,
    PKG_MIG,
    PKG_IDLE_TIME,
    PKG_IDLE_USAGE,
    PKG_IDLE_ABOVE,
    PKG_IDLE_BELOW,
    PKG_ENERGY,
    PKG_POWER,
    PKG_CSTATE,
    PKG_TEMP,
    PKG_THROTTLE,
    PROBE_CPU_LATENCY,
    PROBE_LATENCY,
    PROBE_CSW,
    PROBE_TIME,
    FINDING,
    UNAVAILABLE,
    SOURCE,
    WATCHED,
    DETAILED,
    SAMPLES,
    INTERVAL,
    SAMPLE_TIME,
    SAMPLE_COST,
    SELF_CPU,
    OWN_IPIS,
    OWN_WAKEUPS,
    SCRAPES,
    UP,
    BUILD,
    SERIES,
];

/// How a catalogued figure's counter is read from a snapshot.
pub type Total = fn(&crate::model::snapshot::Snapshot, u32) -> Option<f64>;

/// The families of the metric catalogue's figures that have one of their
/// own, in its order, each with how its counter is read.
pub fn figure_families() -> Vec<(Def, Total)> {
    crate::metric::ALL
        .iter()
        .filter_map(|f| match f.prometheus {
            crate::metric::Prom::Counter {
                family,
                unit,
                every_cpu,
                help,
                total,
            } => Some((
                Def {
                    name: family,
                    kind: Type::Counter,
                    unit,
                    labels: &["cpu"],
                    scope: if every_cpu {
                        Scope::EveryCpu
                    } else {
                        Scope::DetailCpu
                    },
                    help,
                },
                total,
            )),
            _ => None,
        })
        .collect()
}

/// Every family, in the order the exposition writes them: [`ALL`], with
/// the catalogue's figures after the per-CPU counters ([`CPU_SMI`]).
pub fn all() -> Vec<Def> {
    let mut out = Vec::with_capacity(ALL.len() + 1);
    for d in ALL {
        out.push(*d);
        if d.name == CPU_SMI.name {
            out.extend(figure_families().into_iter().map(|(d, _)| d));
        }
    }
    out
}

/// Writes the README's metric table: one row per family.
pub fn markdown_table() -> String {
    let mut out =
        String::from("| metric | type | labels | series for | what |\n|---|---|---|---|---|\n");
    for d in &all() {
        let kind = match d.kind {
            Type::Counter => "counter",
            Type::Gauge => "gauge",
            Type::Info => "info",
            Type::Histogram => "histogram",
        };
        let _ = writeln!(
            out,
            "| `{}` | {kind} | {} | {} | {} |",
            d.sample_name(),
            d.labels.join(", "),
            d.scope.text(),
            d.help
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_prometheus_conventions() {
        let mut seen = std::collections::HashSet::new();
        for d in &all() {
            assert!(seen.insert(d.name), "{} twice", d.name);
            assert!(d.name.starts_with("noisetop_"), "{}", d.name);
            assert!(
                d.name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                "{}",
                d.name
            );
            assert!(
                !d.name.ends_with("_total"),
                "{}: the family name has no _total",
                d.name
            );
            if let Some(u) = d.unit {
                assert!(
                    d.name.ends_with(&format!("_{u}")),
                    "{} must end in _{u}",
                    d.name
                );
            }
            for bad in ["_ms", "_us", "_mhz", "_pct", "_percent", "_kb"] {
                assert!(!d.name.contains(bad), "{}: base units only", d.name);
            }
            assert!(!d.help.is_empty() && !d.help.contains('\n'));
        }
    }

    #[test]
    fn the_table_has_one_row_per_family() {
        let t = markdown_table();
        assert_eq!(t.lines().count(), all().len() + 2);
        assert!(t.contains("| `noisetop_cpu_context_switches_total` | counter | cpu |"));
        assert!(t.contains("| `noisetop_build_info` | info | version |"));
    }
}
