//! The source ladder: for each metric, which rung supplies it (perf PMU,
//! `/dev/cpu/N/msr`, sysfs/procfs) or why none can. The sampler decides
//! the rungs once, from the probe ([`Chosen`]); this module only describes
//! them, with the snapshot as evidence that a chosen rung gave values.

use crate::model::interval::FreqSource;
use crate::os::hw::Probe;
use serde::{Deserialize, Serialize};

use crate::model::machine::Machine;
use crate::model::snapshot::Rung;
use crate::model::snapshot::Snapshot;
use crate::os::perf::PerfEvent;

/// A metric the sampler collects, as the footer names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Metric {
    /// `Avg_MHz`, `Busy%`, `Bzy_MHz`, `TSC_MHz`.
    Frequency,
    /// Instructions per cycle from perf's generic hardware events.
    Ipc,
    /// Core and package C-state residency from hardware counters.
    HwCstates,
    /// cpuidle residency and entries.
    OsCstates,
    /// /proc/interrupts rates.
    Interrupts,
    /// /proc/softirqs rates.
    Softirqs,
    /// /proc/stat CPU time split and steal.
    CpuTime,
    /// Context switches and migrations per CPU.
    Scheduler,
    /// Run-queue waits per CPU.
    RunQueue,
    /// SMI count.
    Smi,
    /// Temperatures.
    Temperature,
    /// Thermal throttling event counts.
    Throttle,
    /// RAPL power.
    Power,
}

impl Metric {
    /// Lists every metric in display order.
    pub const ALL: [Metric; 13] = [
        Metric::Frequency,
        Metric::Ipc,
        Metric::HwCstates,
        Metric::OsCstates,
        Metric::Interrupts,
        Metric::Softirqs,
        Metric::CpuTime,
        Metric::Scheduler,
        Metric::RunQueue,
        Metric::Smi,
        Metric::Temperature,
        Metric::Throttle,
        Metric::Power,
    ];

    /// Names the metric for the footer and the JSON.
    pub fn label(self) -> &'static str {
        match self {
            Metric::Frequency => "Avg_MHz/Busy%/Bzy_MHz",
            Metric::Ipc => "IPC",
            Metric::HwCstates => "HW C-states",
            Metric::OsCstates => "cpuidle C-states",
            Metric::Interrupts => "IRQ/s",
            Metric::Softirqs => "SOFTIRQ/s",
            Metric::CpuTime => "CPU time/steal",
            Metric::Scheduler => "CSW/s MIG/s",
            Metric::RunQueue => "RQwait%",
            Metric::Smi => "SMI",
            Metric::Temperature => "temperature",
            Metric::Throttle => "throttling",
            Metric::Power => "PkgWatt",
        }
    }

    /// Names the metric in the dashboard header's one-line list.
    pub fn short(self) -> &'static str {
        match self {
            Metric::Frequency => "frequency",
            Metric::Ipc => "IPC",
            Metric::HwCstates => "HW C-states",
            Metric::OsCstates => "cpuidle",
            Metric::Interrupts => "IRQs",
            Metric::Softirqs => "softirqs",
            Metric::CpuTime => "CPU time",
            Metric::Scheduler => "CSW/MIG",
            Metric::RunQueue => "RQwait",
            Metric::Smi => "SMI",
            Metric::Temperature => "temperature",
            Metric::Throttle => "throttling",
            Metric::Power => "power",
        }
    }

    /// The exporter's `metric` label for it.
    pub fn id(self) -> &'static str {
        match self {
            Metric::Frequency => "frequency",
            Metric::Ipc => "ipc",
            Metric::HwCstates => "hw_cstates",
            Metric::OsCstates => "os_cstates",
            Metric::Interrupts => "interrupts",
            Metric::Softirqs => "softirqs",
            Metric::CpuTime => "cpu_time",
            Metric::Scheduler => "scheduler",
            Metric::RunQueue => "run_queue",
            Metric::Smi => "smi",
            Metric::Temperature => "temperature",
            Metric::Throttle => "throttle",
            Metric::Power => "power",
        }
    }
}

/// The rungs the sampler chose for the metrics with more than one source:
/// decided once from the probe, read by the sampler's plan and described
/// by [`statuses`], so the two never disagree.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Chosen {
    /// `Avg_MHz`, `Busy%`, `Bzy_MHz`, `TSC_MHz`.
    pub freq: Option<FreqSource>,
    /// Core and package residency counters: perf `cstate_*` or MSRs.
    pub hw_cstates: Option<Rung>,
    /// The SMI count: perf `msr/smi` or MSR 0x34.
    pub smi: Option<Rung>,
    /// Temperatures: `IA32_THERM_STATUS` with a known `TjMax`, else hwmon.
    pub temperature: Option<Rung>,
    /// Energy: perf `power`, RAPL MSRs, else powercap.
    pub power: Option<Rung>,
}

/// How one metric is obtained.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Status {
    /// The metric.
    pub metric: Metric,
    /// The rung in use, `None` when unavailable.
    pub rung: Option<Rung>,
    /// What exactly is read ("perf msr aperf/mperf/tsc").
    pub source: Option<String>,
    /// Why the metric (or its better rungs) is unavailable, and the fix.
    pub note: Option<String>,
}

/// Why power is unknown although its source is read: the counters are
/// there and none moved (a VM's virtual RAPL that stays at 0).
pub const POWER_SILENT: &str =
    "no energy counter moved over the interval (one that never left 0 is unknown, not 0 W)";

/// Whether power's source is read and no package has a power figure for
/// the interval.
pub fn power_silent(statuses: &[Status], iv: &crate::model::interval::Interval) -> bool {
    statuses
        .iter()
        .any(|st| st.metric == Metric::Power && st.rung.is_some())
        && iv
            .pkgs
            .iter()
            .all(|p| p.watts.iter().all(|(_, w)| w.is_none()))
}

/// Gives the power status [`POWER_SILENT`] as its note where
/// [`power_silent`], so that every place that shows the source says why
/// the figure is unknown.
pub fn note_silent_power(statuses: &mut [Status], iv: &crate::model::interval::Interval) {
    if !power_silent(statuses, iv) {
        return;
    }
    for st in statuses
        .iter_mut()
        .filter(|st| st.metric == Metric::Power && st.rung.is_some())
    {
        st.note = Some(match st.note.take() {
            Some(n) => format!("{n}; {POWER_SILENT}"),
            None => POWER_SILENT.to_string(),
        });
    }
}

/// Chooses the frequency source: perf msr PMU, then the msr device, then
/// cpufreq, then cpuinfo.
pub fn freq_source(m: &Machine, p: &Probe) -> Option<FreqSource> {
    use crate::collect::x86::{MSR_APERF, MSR_MPERF};
    if p.perf_has(PerfEvent::Aperf, &m.online) && p.perf_has(PerfEvent::Mperf, &m.online) {
        Some(FreqSource::PerfMsr)
    } else if p.msr_has(MSR_APERF) && p.msr_has(MSR_MPERF) {
        Some(FreqSource::DevMsr)
    } else if m.cpufreq.iter().any(|c| c.cur_khz.is_some()) {
        Some(FreqSource::Cpufreq)
    } else if !m.cpuinfo.mhz.is_empty() {
        Some(FreqSource::Cpuinfo)
    } else {
        None
    }
}

/// Describes how each metric is obtained on this machine, or why it is not.
pub fn statuses(m: &Machine, p: &Probe, chosen: Chosen, snap: &Snapshot) -> Vec<Status> {
    Metric::ALL
        .iter()
        .map(|&metric| status_of(metric, m, p, chosen, snap))
        .collect()
}

/// Says that every CPU's switches and migrations are counted by
/// noisetop's own programs in the kernel (`source` says how), in place of
/// perf's software counters, which are then not opened.
pub fn counted_in_kernel(statuses: &mut [Status], source: &str) {
    for st in statuses
        .iter_mut()
        .filter(|s| s.metric == Metric::Scheduler)
    {
        *st = found(Metric::Scheduler, Rung::Kernel, source, None);
    }
}

fn found(metric: Metric, rung: Rung, source: impl Into<String>, note: Option<String>) -> Status {
    Status {
        metric,
        rung: Some(rung),
        source: Some(source.into()),
        note,
    }
}

fn missing(metric: Metric, note: impl Into<String>) -> Status {
    Status {
        metric,
        rung: None,
        source: None,
        note: Some(note.into()),
    }
}

/// Says why neither perf nor the msr device supplies an MSR-backed event.
fn hw_reason(p: &Probe, event: PerfEvent) -> String {
    let perf = p.perf_reason(event).map_or_else(
        || format!("perf has no {} event", event.name()),
        str::to_string,
    );
    match &p.msr {
        Ok(()) => format!("{perf}; the CPU has no such MSR"),
        // one cause for both (a foreign tree) is said once
        Err(e) if *e == perf => perf,
        Err(e) => format!("{perf}; {e}"),
    }
}

fn status_of(metric: Metric, m: &Machine, p: &Probe, chosen: Chosen, snap: &Snapshot) -> Status {
    use crate::collect::x86::MSR_THERM_STATUS;
    let all = &m.online;
    match metric {
        Metric::Frequency => match chosen.freq {
            Some(FreqSource::PerfMsr) => {
                found(metric, Rung::Perf, "perf msr aperf/mperf/tsc", None)
            }
            Some(FreqSource::DevMsr) => found(
                metric,
                Rung::Msr,
                "/dev/cpu/N/msr APERF 0xE8, MPERF 0xE7, TSC 0x10",
                None,
            ),
            Some(FreqSource::Cpufreq) => found(
                metric,
                Rung::Kernel,
                "cpufreq scaling_cur_freq; Busy% from /proc/stat",
                Some(format!(
                    "not effective frequency: {}",
                    hw_reason(p, PerfEvent::Aperf)
                )),
            ),
            Some(FreqSource::Cpuinfo) => found(
                metric,
                Rung::Kernel,
                "/proc/cpuinfo cpu MHz (nominal); Busy% from /proc/stat",
                Some(format!(
                    "no APERF/MPERF: {}",
                    hw_reason(p, PerfEvent::Aperf)
                )),
            ),
            None => missing(
                metric,
                format!(
                    "no APERF/MPERF ({}), no cpufreq, no cpu MHz",
                    hw_reason(p, PerfEvent::Aperf)
                ),
            ),
        },
        Metric::Ipc => {
            let (i, c) = (PerfEvent::Instructions, PerfEvent::Cycles);
            if p.perf_any(i) && p.perf_any(c) {
                found(
                    metric,
                    Rung::Perf,
                    "perf hardware instructions/cycles",
                    None,
                )
            } else {
                let why = p
                    .perf_reason(i)
                    .or_else(|| p.perf_reason(c))
                    .unwrap_or("perf instructions/cycles did not open");
                missing(metric, why)
            }
        }
        Metric::HwCstates => {
            let msr_values = snap.hw.values().any(|h| !h.cstates.is_empty())
                || snap.pkg.values().any(|k| !k.cstates.is_empty());
            if chosen.hw_cstates == Some(Rung::Perf) {
                found(metric, Rung::Perf, "perf cstate_core/cstate_pkg", None)
            } else if chosen.hw_cstates == Some(Rung::Msr) && msr_values {
                found(metric, Rung::Msr, "/dev/cpu/N/msr residency MSRs", None)
            } else if matches!(
                m.vendor,
                crate::base::Vendor::Amd | crate::base::Vendor::Hygon
            ) {
                missing(
                    metric,
                    "AMD exposes no core C-state residency counters: see cpuidle",
                )
            } else {
                missing(metric, hw_reason(p, PerfEvent::CoreC6))
            }
        }
        Metric::OsCstates => match &m.idle_missing {
            None => found(
                metric,
                Rung::Kernel,
                format!(
                    "cpuidle sysfs ({} / {})",
                    m.idle_driver.driver.as_deref().unwrap_or("?"),
                    m.idle_driver.governor.as_deref().unwrap_or("?")
                ),
                None,
            ),
            Some(why) if !m.idle_states.is_empty() => found(
                metric,
                Rung::Kernel,
                "cpuidle sysfs",
                Some(why.detail().to_string()),
            ),
            Some(why) => missing(metric, why.detail()),
        },
        Metric::Interrupts => match &snap.interrupts {
            Ok(_) => found(metric, Rung::Kernel, "/proc/interrupts", None),
            Err(e) => missing(metric, e.detail()),
        },
        Metric::Softirqs => match &snap.softirqs {
            Ok(_) => found(metric, Rung::Kernel, "/proc/softirqs", None),
            Err(e) => missing(metric, e.detail()),
        },
        Metric::CpuTime => match &snap.stat {
            Ok(s) if s.cpus.values().any(|c| c.steal.is_some()) => {
                found(metric, Rung::Kernel, "/proc/stat", None)
            }
            Ok(_) => found(
                metric,
                Rung::Kernel,
                "/proc/stat",
                Some("this kernel reports no steal column".into()),
            ),
            Err(e) => missing(metric, e.detail()),
        },
        Metric::Scheduler => {
            if p.perf_has(PerfEvent::ContextSwitches, all) {
                found(
                    metric,
                    Rung::Perf,
                    "perf software context-switches, cpu-migrations",
                    None,
                )
            } else {
                let why = p
                    .perf_reason(PerfEvent::ContextSwitches)
                    .or_else(|| p.perf_reason(PerfEvent::Migrations))
                    .unwrap_or("perf software counters did not open");
                missing(metric, why)
            }
        }
        Metric::RunQueue => match &snap.schedstat {
            Ok(s) => found(
                metric,
                Rung::Kernel,
                format!("/proc/schedstat (version {})", s.version),
                None,
            ),
            Err(e) => missing(metric, e.detail()),
        },
        Metric::Smi => {
            if chosen.smi == Some(Rung::Perf) {
                found(metric, Rung::Perf, "perf msr smi", None)
            } else if chosen.smi == Some(Rung::Msr) {
                found(metric, Rung::Msr, "/dev/cpu/N/msr 0x34", None)
            } else if m.vendor != crate::base::Vendor::Intel {
                missing(metric, "SMI count is an Intel MSR")
            } else {
                missing(metric, hw_reason(p, PerfEvent::Smi))
            }
        }
        Metric::Temperature => {
            if chosen.temperature == Some(Rung::Msr) {
                found(
                    metric,
                    Rung::Msr,
                    "IA32_THERM_STATUS 0x19C, TjMax 0x1A2",
                    None,
                )
            } else if chosen.temperature == Some(Rung::Kernel) {
                let chips: Vec<&str> = m
                    .hwmon
                    .iter()
                    .map(|s| s.chip.as_str())
                    .collect::<std::collections::BTreeSet<_>>()
                    .into_iter()
                    .collect();
                found(
                    metric,
                    Rung::Kernel,
                    format!("hwmon {}", chips.join(",")),
                    None,
                )
            } else {
                let msr = match &p.msr {
                    Ok(()) if p.msr_has(MSR_THERM_STATUS) => {
                        "IA32_THERM_STATUS without TjMax (0x1A2)".to_string()
                    }
                    Ok(()) => "no thermal MSR".to_string(),
                    Err(e) => e.clone(),
                };
                missing(metric, format!("no hwmon temperature sensor; {msr}"))
            }
        }
        Metric::Throttle => {
            if snap.files.values().any(|f| f.throttle.is_some()) {
                found(metric, Rung::Kernel, "thermal_throttle counts", None)
            } else {
                missing(
                    metric,
                    "no cpuN/thermal_throttle (Intel thermal driver only)",
                )
            }
        }
        Metric::Power => {
            if chosen.power == Some(Rung::Perf) {
                found(metric, Rung::Perf, "perf power energy-*", None)
            } else if chosen.power == Some(Rung::Msr)
                && snap.pkg.values().any(|k| !k.energy.is_empty())
            {
                found(metric, Rung::Msr, "/dev/cpu/N/msr RAPL", None)
            } else if chosen.power == Some(Rung::Kernel) && !snap.powercap_uj.is_empty() {
                found(metric, Rung::Kernel, "powercap energy_uj", None)
            } else if !m.rapl_zones.is_empty() {
                missing(metric, "powercap energy_uj unreadable: run as root")
            } else {
                missing(
                    metric,
                    format!(
                        "no RAPL: {}; no powercap zones",
                        hw_reason(p, PerfEvent::EnergyPkg)
                    ),
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::interval::{Interval, PkgRates};

    fn power(note: Option<&str>) -> Status {
        Status {
            metric: Metric::Power,
            rung: Some(Rung::Perf),
            source: Some("perf power energy-*".into()),
            note: note.map(str::to_string),
        }
    }

    fn with_watts(w: Option<f64>) -> Interval {
        Interval {
            pkgs: vec![PkgRates {
                package: 0,
                watts: vec![("package".into(), w)],
                ..PkgRates::default()
            }],
            ..Interval::default()
        }
    }

    #[test]
    fn a_power_source_that_gives_no_figure_says_why() {
        let mut st = vec![power(None)];
        note_silent_power(&mut st, &with_watts(None));
        assert_eq!(st[0].note.as_deref(), Some(POWER_SILENT));
        // a figure: nothing to say
        let mut st = vec![power(None)];
        note_silent_power(&mut st, &with_watts(Some(12.5)));
        assert_eq!(st[0].note, None);
        // an earlier note is kept
        let mut st = vec![power(Some("psys absent"))];
        note_silent_power(&mut st, &with_watts(None));
        assert_eq!(
            st[0].note.as_deref(),
            Some(format!("psys absent; {POWER_SILENT}").as_str())
        );
        // no source: its own reason stands
        let mut st = vec![Status {
            rung: None,
            source: None,
            note: Some("no RAPL".into()),
            ..power(None)
        }];
        note_silent_power(&mut st, &with_watts(None));
        assert_eq!(st[0].note.as_deref(), Some("no RAPL"));
    }
}
