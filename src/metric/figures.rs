//! The entries of the catalogue, in the recording's column order.

use super::{
    BatchColumn, Combine, Each, Figure, Format, OverTime, Prom, Read, State, TuiColumn, Unit,
};
use crate::model::interval::{CpuRates, PkgRates};
use crate::model::snapshot::Snapshot;

/// An entry with the common defaults: one value per CPU, compared, the
/// mean over time, no turbostat name, in no table but the recording's,
/// not exported.
const fn fig(
    name: &'static str,
    unit: Unit,
    csv: &'static str,
    about: &'static str,
    read: Read,
    over_cpus: Combine,
) -> Figure {
    Figure {
        name,
        unit,
        csv,
        turbostat: None,
        about,
        formula: about,
        source: "",
        each: Each::One,
        read,
        over_cpus,
        fallback: None,
        over_time: OverTime::Mean,
        compared: true,
        tui: None,
        batch: None,
        report: None,
        prometheus: Prom::No("not exported"),
    }
}

const fn batch(rank: u8, format: Format) -> BatchColumn {
    BatchColumn {
        header: None,
        format,
        rank,
        summary: None,
    }
}

const fn tui(rank: u8, width: usize, format: Format) -> TuiColumn {
    TuiColumn {
        header: None,
        width,
        format,
        rank,
        summary: true,
        shown: true,
    }
}

const fn prom(family: &'static str, labels: &'static str) -> Prom {
    Prom::In { family, labels }
}

const INTERRUPTS: &str = "/proc/interrupts";

/// Core id.
pub const CORE: Figure = Figure {
    turbostat: Some("Core"),
    source: "sysfs topology core_id",
    over_time: OverTime::None,
    compared: false,
    batch: Some(BatchColumn {
        header: None,
        format: Format::Decimals(0),
        rank: 0,
        summary: Some(Combine::None),
    }),
    prometheus: Prom::No("an identity: the topology is in the labels"),
    ..fig(
        "Core",
        Unit::Id,
        "core",
        "core id",
        Read::Cpu(|r| r.core.map(f64::from)),
        Combine::None,
    )
};

/// Package id.
pub const PACKAGE: Figure = Figure {
    turbostat: Some("Package"),
    source: "sysfs topology physical_package_id",
    over_time: OverTime::None,
    compared: false,
    prometheus: Prom::No("an identity: the topology is in the labels"),
    ..fig(
        "Package",
        Unit::Id,
        "package",
        "package id",
        Read::Cpu(|r| r.package.map(f64::from)),
        Combine::None,
    )
};

/// Average clock, idle included.
pub const AVG_MHZ: Figure = Figure {
    turbostat: Some("Avg_MHz"),
    formula: "ΔAPERF / dt / 1e6; without APERF, Bzy_MHz · Busy% / 100",
    source: "perf msr aperf, else MSR 0xE8, else cpufreq or /proc/cpuinfo",
    over_time: OverTime::Quantiles,
    batch: Some(batch(10, Format::Decimals(0))),
    prometheus: prom("noisetop_cpu_frequency_hertz", ""),
    ..fig(
        "Avg_MHz",
        Unit::Mhz,
        "avg_mhz",
        "ΔAPERF/dt, MHz",
        Read::Cpu(|r| r.avg_mhz),
        Combine::Mean,
    )
};

/// Share of the interval not idle.
pub const BUSY_PCT: Figure = Figure {
    turbostat: Some("Busy%"),
    formula: "100 · ΔMPERF / ΔTSC; without MPERF, 100 − 100 · Δ(idle + iowait + steal) / Δtotal",
    source: "perf msr mperf/tsc, else MSRs 0xE7/0x10, else /proc/stat",
    over_time: OverTime::Quantiles,
    batch: Some(batch(11, Format::Decimals(2))),
    prometheus: prom("noisetop_cpu_busy_ratio", ""),
    ..fig(
        "Busy%",
        Unit::Pct,
        "busy_pct",
        "100·ΔMPERF/ΔTSC, %",
        Read::Cpu(|r| r.busy_pct),
        Combine::Mean,
    )
};

/// Clock while busy.
pub const BZY_MHZ: Figure = Figure {
    turbostat: Some("Bzy_MHz"),
    formula: "base_MHz · ΔAPERF / ΔMPERF; without them the cpufreq or cpuinfo clock",
    source: "perf msr aperf/mperf, else MSRs 0xE8/0xE7, else cpufreq or /proc/cpuinfo",
    over_time: OverTime::Quantiles,
    batch: Some(batch(12, Format::Decimals(0))),
    prometheus: prom("noisetop_cpu_busy_frequency_hertz", ""),
    ..fig(
        "Bzy_MHz",
        Unit::Mhz,
        "bzy_mhz",
        "base·ΔAPERF/ΔMPERF, MHz",
        Read::Cpu(|r| r.bzy_mhz),
        Combine::Mean,
    )
};

/// The TSC's rate.
pub const TSC_MHZ: Figure = Figure {
    turbostat: Some("TSC_MHz"),
    formula: "ΔTSC / dt / 1e6 (dt: perf's Δtime_enabled where perf counts)",
    source: "perf msr tsc, else MSR 0x10",
    batch: Some(batch(13, Format::Decimals(0))),
    prometheus: Prom::No("a constant of the machine"),
    ..fig(
        "TSC_MHz",
        Unit::Mhz,
        "tsc_mhz",
        "ΔTSC/dt, MHz",
        Read::Cpu(|r| r.tsc_mhz),
        Combine::Mean,
    )
};

/// Instructions per cycle.
pub const IPC: Figure = Figure {
    turbostat: Some("IPC"),
    formula: "Δinstructions / Δcycles; unknown over no cycles",
    source: "perf hardware instructions, cycles",
    tui: Some(tui(6, 5, Format::Decimals(2))),
    batch: Some(batch(14, Format::Decimals(2))),
    ..fig(
        "IPC",
        Unit::Ratio,
        "ipc",
        "instructions per cycle, Δinstructions/Δcycles",
        Read::Cpu(|r| r.ipc),
        Combine::Ratio("ΣΔinstructions / ΣΔcycles", |rows| {
            let (i, c) = crate::model::interval::total_counts(rows);
            crate::model::interval::ipc(i, c)
        }),
    )
};

const fn state(state: &'static str, csv: &'static str, turbostat: &'static str) -> State {
    State {
        state,
        csv,
        turbostat,
    }
}

/// Hardware core C-states a model may count (x86 tables and perf `cstate_core`).
pub const CORE_STATES: [State; 4] = [
    state("C1", "cpu_c1_pct", "CPU%c1"),
    state("C3", "cpu_c3_pct", "CPU%c3"),
    state("C6", "cpu_c6_pct", "CPU%c6"),
    state("C7", "cpu_c7_pct", "CPU%c7"),
];

fn hw_cstate(r: &CpuRates, name: &str) -> Option<f64> {
    r.hw_cstates.iter().find(|(k, _)| *k == name)?.1
}

/// Hardware core C-state residency.
pub const CORE_CSTATE: Figure = Figure {
    report: Some(""),
    formula: "100 · ΔCn / ΔTSC; without a C1 counter C1 = ΔTSC − ΔMPERF − ΣΔCn",
    source: "perf cstate_core, else the model's residency MSRs",
    each: Each::CoreState(&CORE_STATES),
    batch: Some(batch(30, Format::Decimals(2))),
    prometheus: prom("noisetop_cpu_core_cstate_residency_ratio", "state"),
    ..fig(
        "CPU%{lower}",
        Unit::Pct,
        "cpu_{lower}_pct",
        "hardware core C-state residency, % of TSC",
        Read::CpuState(hw_cstate),
        Combine::Mean,
    )
};

/// Hardware module C6 (Atom-class modules).
pub const MODULE_C6: Figure = Figure {
    turbostat: Some("Mod%c6"),
    formula: "100 · ΔMC6 / ΔTSC",
    source: "the model's module C6 residency MSR",
    prometheus: prom("noisetop_cpu_core_cstate_residency_ratio", "state=\"MC6\""),
    ..fig(
        "Mod%c6",
        Unit::Pct,
        "mod_c6_pct",
        "hardware module C6 residency, % of TSC",
        Read::Cpu(|r| hw_cstate(r, "MC6")),
        Combine::Mean,
    )
};

/// cpuidle residency.
pub const IDLE_PCT: Figure = Figure {
    report: Some(""),
    turbostat: Some("{state}%"),
    formula: "100 · Δtime_us / (dt · 1e6), capped at 100 (time is credited on exit)",
    source: "cpuN/cpuidle/stateK/time",
    each: Each::IdleState,
    batch: Some(batch(20, Format::Decimals(2))),
    prometheus: prom("noisetop_cpu_idle_state_seconds", "state"),
    ..fig(
        "{state}%",
        Unit::Pct,
        "{stem}_pct",
        "cpuidle {state}: share of the interval, %",
        Read::IdleState(|s| s.pct),
        Combine::Mean,
    )
};

/// cpuidle entries.
pub const IDLE_PER_S: Figure = Figure {
    report: Some(""),
    turbostat: Some("{state}"),
    formula: "Δusage / dt",
    source: "cpuN/cpuidle/stateK/usage",
    each: Each::IdleState,
    prometheus: prom("noisetop_cpu_idle_state_entries", "state"),
    ..fig(
        "{state}/s",
        Unit::PerS,
        "{stem}_per_s",
        "cpuidle {state}: entries per second (turbostat: per interval)",
        Read::IdleState(|s| s.per_s),
        Combine::Sum,
    )
};

/// A per-second figure of /proc/interrupts, summed over the CPUs.
const fn interrupts(
    name: &'static str,
    csv: &'static str,
    about: &'static str,
    formula: &'static str,
    read: fn(&CpuRates) -> Option<f64>,
) -> Figure {
    Figure {
        formula,
        source: INTERRUPTS,
        ..fig(name, Unit::PerS, csv, about, Read::Cpu(read), Combine::Sum)
    }
}

/// Every interrupt.
pub const IRQ: Figure = Figure {
    turbostat: Some("IRQ"),
    tui: Some(tui(0, 5, Format::Rate)),
    batch: Some(batch(40, Format::Rate)),
    report: Some("IRQ"),
    prometheus: prom("noisetop_cpu_interrupts", ""),
    ..interrupts(
        "IRQ/s",
        "irq_per_s",
        "every /proc/interrupts row, per s (turbostat: per interval)",
        "Δ(sum of the CPU's column over every row) / dt",
        |r| r.irq_per_s,
    )
};

/// Local timer interrupts.
pub const LOC: Figure = Figure {
    tui: Some(tui(1, 6, Format::Rate)),
    batch: Some(batch(41, Format::Rate)),
    report: Some("LOC"),
    prometheus: prom("noisetop_cpu_interrupts_by_kind", "kind=\"timer\""),
    ..interrupts(
        "LOC/s",
        "loc_per_s",
        "local timer interrupts, per s",
        "ΔLOC / dt (arm64 arch_timer)",
        |r| r.loc_per_s,
    )
};

/// Reschedule IPIs.
pub const RES: Figure = Figure {
    batch: Some(batch(42, Format::Rate)),
    report: Some("RES"),
    prometheus: prom("noisetop_cpu_interrupts_by_kind", "kind=\"reschedule\""),
    ..interrupts(
        "RES/s",
        "res_per_s",
        "rescheduling IPIs, per s",
        "ΔRES / dt (arm64 IPI0)",
        |r| r.res_per_s,
    )
};

/// Function-call IPIs.
pub const CAL: Figure = Figure {
    batch: Some(batch(43, Format::Rate)),
    report: Some("CAL"),
    prometheus: prom("noisetop_cpu_interrupts_by_kind", "kind=\"function_call\""),
    ..interrupts(
        "CAL/s",
        "cal_per_s",
        "function call IPIs, per s",
        "ΔCAL / dt (arm64 IPI1)",
        |r| r.cal_per_s,
    )
};

/// TLB shootdowns.
pub const TLB: Figure = Figure {
    report: Some("TLB"),
    prometheus: prom("noisetop_cpu_interrupts_by_kind", "kind=\"tlb_shootdown\""),
    ..interrupts(
        "TLB/s",
        "tlb_per_s",
        "TLB shootdowns, per s",
        "ΔTLB / dt",
        |r| r.tlb_per_s,
    )
};

/// Every IPI class.
pub const IPI: Figure = Figure {
    prometheus: prom(
        "noisetop_cpu_interrupts_by_kind",
        "kind=~\"reschedule|function_call|tlb_shootdown|irq_work|other_ipi\"",
    ),
    ..interrupts(
        "IPI/s",
        "ipi_per_s",
        "every IPI class, per s",
        "Δ(every IPI row) / dt",
        |r| r.ipi_per_s,
    )
};

/// Device interrupts.
pub const DEV: Figure = Figure {
    batch: Some(batch(44, Format::Rate)),
    report: Some("DEV"),
    prometheus: prom("noisetop_cpu_interrupts_by_kind", "kind=\"device\""),
    ..interrupts(
        "DEV/s",
        "dev_per_s",
        "numbered device interrupts, per s",
        "Δ(numbered rows) / dt",
        |r| r.dev_per_s,
    )
};

/// NMIs.
pub const NMI: Figure = Figure {
    turbostat: Some("NMI"),
    report: Some("NMI"),
    prometheus: prom("noisetop_cpu_interrupts_by_kind", "kind=\"nmi\""),
    ..interrupts(
        "NMI/s",
        "nmi_per_s",
        "NMIs, per s (turbostat: per interval)",
        "ΔNMI / dt",
        |r| r.nmi_per_s,
    )
};

/// Softirqs.
pub const SOFTIRQ: Figure = Figure {
    formula: "Δ(sum of the CPU's column) / dt",
    source: "/proc/softirqs",
    tui: Some(TuiColumn {
        header: Some("SIRQ"),
        ..tui(4, 6, Format::Rate)
    }),
    batch: Some(batch(45, Format::Rate)),
    report: Some("SOFTIRQ"),
    prometheus: prom("noisetop_cpu_softirqs", "type"),
    ..fig(
        "SOFTIRQ/s",
        Unit::PerS,
        "softirq_per_s",
        "every softirq, per s",
        Read::Cpu(|r| r.softirq_per_s),
        Combine::Sum,
    )
};

/// Context switches.
pub const CSW: Figure = Figure {
    formula: "Δcontext-switches / dt (dt: the clock's for the in-kernel count, perf's Δtime_running for perf's)",
    source: "the in-kernel count on every CPU (sched_switch); without BPF, perf software context-switches (a watched CPU: its counting ring)",
    tui: Some(tui(2, 6, Format::Rate)),
    batch: Some(batch(46, Format::Rate)),
    report: Some("CSW"),
    prometheus: prom("noisetop_cpu_context_switches", ""),
    ..fig(
        "CSW/s",
        Unit::PerS,
        "csw_per_s",
        "context switches, per s",
        Read::Cpu(|r| r.csw_per_s),
        Combine::Sum,
    )
};

/// Migrations.
pub const MIG: Figure = Figure {
    formula: "Δcpu-migrations / dt (dt: the clock's for the in-kernel count, perf's Δtime_running for perf's)",
    source: "the in-kernel count on every CPU (a task switched in away from its last CPU); without BPF, perf software cpu-migrations (a watched CPU: its counting ring)",
    tui: Some(tui(3, 6, Format::Rate)),
    batch: Some(batch(47, Format::Rate)),
    report: Some("MIG"),
    prometheus: prom("noisetop_cpu_migrations", ""),
    ..fig(
        "MIG/s",
        Unit::PerS,
        "mig_per_s",
        "migrations, per s",
        Read::Cpu(|r| r.mig_per_s),
        Combine::Sum,
    )
};

/// Time tasks waited on the CPU's run queue.
pub const RQWAIT: Figure = Figure {
    formula: "100 · Δrun-queue wait ns / (dt · 1e9): every waiting task counts, so several \
              waiting at once pass 100; a wait is credited when its task gets the CPU",
    source: "/proc/schedstat cpuN field 8 (version 15 on; the file needs CONFIG_SCHEDSTATS)",
    // off the Cores view unless asked for: at 160 columns its 8 would
    // take the room the noise column needs for a device's name
    tui: Some(TuiColumn {
        shown: false,
        ..tui(7, 8, Format::Decimals(1))
    }),
    batch: Some(batch(48, Format::Decimals(2))),
    report: Some(""),
    prometheus: Prom::Counter {
        family: "noisetop_cpu_rqwait_seconds",
        unit: Some("seconds"),
        every_cpu: true,
        help: "Time tasks waited on the CPU's run queue before running since boot, every \
               waiting task counted: /proc/schedstat cpuN field 8 (ns).",
        total: |s: &Snapshot, cpu| {
            let rq = s.schedstat.as_ref().ok()?.cpus.get(&cpu)?;
            Some(rq.wait_ns as f64 / 1e9)
        },
    },
    ..fig(
        "RQwait%",
        Unit::Pct,
        "rqwait_pct",
        "time tasks waited on the CPU's run queue, % of the interval (each waiting task counts)",
        Read::Cpu(|r| r.rq_wait_pct),
        Combine::Mean,
    )
};

/// Stolen time.
pub const STEAL: Figure = Figure {
    formula: "100 · Δsteal / Δtotal (total: user … steal, guest left out)",
    source: "/proc/stat",
    tui: Some(TuiColumn {
        header: Some("stl%"),
        summary: false,
        ..tui(5, 5, Format::Decimals(1))
    }),
    batch: Some(batch(49, Format::Decimals(2))),
    report: Some("steal%"),
    prometheus: prom("noisetop_cpu_seconds", "mode=\"steal\""),
    ..fig(
        "Steal%",
        Unit::Pct,
        "steal_pct",
        "/proc/stat steal, % of the CPU's time",
        Read::Cpu(|r| r.time.and_then(|t| t.steal)),
        Combine::Mean,
    )
};

/// System management interrupts.
pub const SMI: Figure = Figure {
    turbostat: Some("SMI"),
    formula: "ΔSMI_COUNT (32 bits, wraps); the machine's: the most of one CPU (every SMI stops \
              every CPU)",
    source: "perf msr smi, else MSR 0x34 (Intel)",
    over_time: OverTime::Total,
    batch: Some(BatchColumn {
        summary: Some(Combine::Sum),
        ..batch(50, Format::Decimals(0))
    }),
    report: Some("SMI"),
    prometheus: prom("noisetop_cpu_smis", ""),
    ..fig(
        "SMI",
        Unit::Count,
        "smi",
        "SMIs in the interval",
        Read::Cpu(|r| r.smi.map(|v| v as f64)),
        Combine::Max,
    )
};

/// Core temperature.
pub const TEMP: Figure = Figure {
    turbostat: Some("CoreTmp"),
    formula: "TjMax − IA32_THERM_STATUS[22:16], else hwmon tempK_input / 1000",
    source: "MSR 0x19C with TjMax 0x1A2 (Intel), else hwmon coretemp/k10temp",
    batch: Some(batch(51, Format::Decimals(0))),
    report: Some("°C"),
    prometheus: prom("noisetop_cpu_temperature_celsius", ""),
    ..fig(
        "CoreTmp",
        Unit::Celsius,
        "temp_c",
        "core temperature, °C",
        Read::Cpu(|r| r.temp_c),
        Combine::Max,
    )
};

/// Core throttle events.
pub const THROTTLE: Figure = Figure {
    turbostat: Some("CoreThr"),
    formula: "Δcore_throttle_count",
    source: "cpuN/thermal_throttle/core_throttle_count",
    over_time: OverTime::Total,
    prometheus: prom("noisetop_cpu_thermal_throttles", ""),
    ..fig(
        "CoreThr",
        Unit::Count,
        "throttle",
        "core throttle events in the interval",
        Read::Cpu(|r| r.throttle.map(|v| v as f64)),
        Combine::Sum,
    )
};

/// The power of the RAPL domains that map to `names`, summed over the
/// packages; unknown when one of them is (a machine's power is not that of
/// the packages known), and where no package has such a domain.
fn domain_watts(pkgs: &[PkgRates], names: &[&str]) -> Option<f64> {
    let mut sum = None;
    for p in pkgs {
        for (d, w) in &p.watts {
            if names.contains(&d.as_str()) {
                *sum.get_or_insert(0.0) += (*w)?;
            }
        }
    }
    sum
}

/// One package's power of the domain `name`.
fn package_watts(p: &PkgRates, name: &str) -> Option<f64> {
    p.watts
        .iter()
        .find(|(d, _)| d == name)
        .and_then(|(_, w)| *w)
}

const PKG_SUM: Combine = Combine::Packages("sum over packages, unknown if one is");

/// Per-core power.
pub const CORE_WATT: Figure = Figure {
    turbostat: Some("CorWatt"),
    formula: "Δenergy · unit / dt; the machine's: the sum, else the packages' cores domain",
    source: "AMD per-core RAPL MSR 0xC001029A; the packages' cores domain",
    fallback: Some(|p| domain_watts(p, &["cores", "core"])),
    report: Some("CorW"),
    prometheus: Prom::No(
        "the per-core counters are not exported; noisetop_package_power_watts{domain=\"cores\"} \
         is the packages' cores domain",
    ),
    ..fig(
        "CorWatt",
        Unit::Watt,
        "core_watt",
        "core power, W",
        Read::Cpu(|r| r.core_watt),
        Combine::Sum,
    )
};

/// A package's RAPL power of one set of domains.
const fn package_power(
    name: &'static str,
    csv: &'static str,
    about: &'static str,
    each: fn(&PkgRates) -> Option<f64>,
    all: fn(&[PkgRates]) -> Option<f64>,
) -> Figure {
    Figure {
        turbostat: Some(name),
        formula: "Δenergy · unit / dt; 32-bit MSR and powercap counters wrap",
        source: "perf power energy-*, else RAPL MSRs, else powercap energy_uj",
        ..fig(
            name,
            Unit::Watt,
            csv,
            about,
            Read::Package { each, all },
            PKG_SUM,
        )
    }
}

/// Package power.
pub const PKG_WATT: Figure = Figure {
    batch: Some(BatchColumn {
        summary: Some(Combine::Sum),
        ..batch(52, Format::Decimals(2))
    }),
    report: Some("PkgW"),
    prometheus: prom("noisetop_package_power_watts", "domain=\"pkg\""),
    ..package_power(
        "PkgWatt",
        "pkg_watt",
        "package power, all packages, W",
        |p| package_watts(p, "pkg"),
        |p| domain_watts(p, &["pkg", "package"]),
    )
};

/// DRAM power.
pub const RAM_WATT: Figure = Figure {
    report: Some("RAMW"),
    prometheus: prom("noisetop_package_power_watts", "domain=\"ram\""),
    ..package_power(
        "RAMWatt",
        "ram_watt",
        "DRAM power, W",
        |p| package_watts(p, "ram"),
        |p| domain_watts(p, &["ram", "dram"]),
    )
};

/// Graphics or uncore power.
pub const GFX_WATT: Figure = Figure {
    prometheus: prom("noisetop_package_power_watts", "domain=~\"gpu|uncore\""),
    ..package_power(
        "GFXWatt",
        "gfx_watt",
        "graphics/uncore power, W",
        |p| package_watts(p, "gpu"),
        |p| domain_watts(p, &["gpu", "gfx", "uncore"]),
    )
};

/// Platform power.
pub const SYS_WATT: Figure = Figure {
    prometheus: prom("noisetop_package_power_watts", "domain=\"psys\""),
    ..package_power(
        "SysWatt",
        "sys_watt",
        "platform (psys) power, W",
        |p| package_watts(p, "psys"),
        |p| domain_watts(p, &["psys"]),
    )
};

/// Hottest package.
pub const PKG_TEMP: Figure = Figure {
    turbostat: Some("PkgTmp"),
    formula: "TjMax − IA32_PACKAGE_THERM_STATUS[22:16], else hwmon",
    source: "MSR 0x1B1 (Intel), else hwmon",
    prometheus: prom("noisetop_package_temperature_celsius", ""),
    ..fig(
        "PkgTmp",
        Unit::Celsius,
        "pkg_temp_c",
        "hottest package, °C",
        Read::Package {
            each: |p| p.temp_c,
            all: |p| p.iter().filter_map(|p| p.temp_c).reduce(f64::max),
        },
        Combine::Packages("max over packages"),
    )
};

/// Package throttle events.
pub const PKG_THROTTLE: Figure = Figure {
    formula: "Δpackage_throttle_count of the package's first CPU",
    source: "cpuN/thermal_throttle/package_throttle_count",
    over_time: OverTime::Total,
    prometheus: prom("noisetop_package_thermal_throttles", ""),
    ..fig(
        "PkgThr",
        Unit::Count,
        "pkg_throttle",
        "package throttle events in the interval",
        Read::Package {
            each: |p| p.throttle.map(|v| v as f64),
            all: |p| {
                let v: Vec<u64> = p.iter().filter_map(|p| p.throttle).collect();
                (!v.is_empty()).then(|| v.iter().sum::<u64>() as f64)
            },
        },
        Combine::Packages("sum over the packages known"),
    )
};

/// Package C-states (x86 tables and perf `cstate_pkg`).
pub const PACKAGE_STATES: [State; 7] = [
    state("PC2", "pkg_pc2_pct", "Pkg%pc2"),
    state("PC3", "pkg_pc3_pct", "Pkg%pc3"),
    state("PC6", "pkg_pc6_pct", "Pkg%pc6"),
    state("PC7", "pkg_pc7_pct", "Pkg%pc7"),
    state("PC8", "pkg_pc8_pct", "Pkg%pc8"),
    state("PC9", "pkg_pc9_pct", "Pkg%pc9"),
    state("PC10", "pkg_pc10_pct", "Pk%pc10"),
];

/// Package C-state residency.
pub const PKG_CSTATE: Figure = Figure {
    formula: "100 · ΔPCn / ΔTSC of the package's first CPU",
    source: "perf cstate_pkg, else the model's package residency MSRs",
    each: Each::PackageState(&PACKAGE_STATES),
    prometheus: prom("noisetop_package_cstate_residency_ratio", "state"),
    ..fig(
        "Pkg%{lower}",
        Unit::Pct,
        "pkg_{lower}_pct",
        "package C-state residency, % of TSC",
        Read::PackageState(|pkgs, n| {
            let v = pkgs
                .iter()
                .filter_map(|p| p.cstates.iter().find(|(k, _)| *k == n)?.1);
            Combine::Mean.values(v.collect::<Vec<_>>().iter(), |x| Some(*x))
        }),
        Combine::Packages("mean over packages"),
    )
};

/// How long the figures of files read in rounds cover.
pub const WINDOW: Figure = Figure {
    formula: "the time between this CPU's last two reads of its cpuidle and throttle files",
    source: "the sampler's rounds (--budget)",
    compared: false,
    prometheus: Prom::No("bookkeeping of the sampler"),
    ..fig(
        "window_s",
        Unit::Seconds,
        "window_s",
        "s the cpuidle and throttle figures cover when read in rounds",
        Read::Cpu(|r| r.window_s),
        Combine::Max,
    )
};

/// Every entry, in the recording's column order.
pub static ALL: &[Figure] = &[
    CORE,
    PACKAGE,
    AVG_MHZ,
    BUSY_PCT,
    BZY_MHZ,
    TSC_MHZ,
    IPC,
    CORE_CSTATE,
    MODULE_C6,
    IDLE_PCT,
    IDLE_PER_S,
    IRQ,
    LOC,
    RES,
    CAL,
    TLB,
    IPI,
    DEV,
    NMI,
    SOFTIRQ,
    CSW,
    MIG,
    RQWAIT,
    STEAL,
    SMI,
    TEMP,
    THROTTLE,
    CORE_WATT,
    PKG_WATT,
    RAM_WATT,
    GFX_WATT,
    SYS_WATT,
    PKG_TEMP,
    PKG_THROTTLE,
    PKG_CSTATE,
    WINDOW,
];
