//! The sidecar `FILE.csv.json`: the machine facts and the recording's
//! settings, so the CSV stays one plain table. `compare` lists the
//! settings that differ from it; the reader checks its schema version.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::base::cpulist;
use crate::model::machine::Machine;
use crate::record::columns::{self, SCHEMA_VERSION};

/// Tag that says a JSON file is a noisetop recording's sidecar.
pub const FORMAT: &str = "noisetop-record";

/// One cpuidle state as the machine declares it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StateFact {
    /// Kernel name (`C6`, `C1E`, `POLL`).
    pub name: String,
    /// Column stem in the CSV (`c6` → `c6_pct`, `c6_per_s`).
    pub column: String,
    /// Kernel description.
    pub desc: String,
    /// Exit latency, µs.
    pub latency_us: Option<u64>,
    /// Target residency, µs.
    pub residency_us: Option<u64>,
    /// CPUs on which the state is disabled.
    pub disabled_cpus: Vec<u32>,
    /// Whether the `disable` file could be read on any CPU.
    pub disabled_known: bool,
}

/// Machine facts the tools read back.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Facts {
    /// `model name`.
    pub model: Option<String>,
    /// Hostname.
    pub hostname: Option<String>,
    /// Kernel release.
    pub kernel: Option<String>,
    /// Online CPUs.
    pub cpus: Vec<u32>,
    /// Number of packages.
    pub packages: usize,
    /// Number of cores.
    pub cores: usize,
    /// Whether SMT is active.
    pub smt_active: Option<bool>,
    /// Hypervisor, when virtualized.
    pub hypervisor: Option<String>,
    /// cpufreq driver(s), with their CPUs when they differ.
    pub cpufreq_driver: Option<String>,
    /// Governor(s), with their CPUs when they differ.
    pub governor: Option<String>,
    /// Energy-performance preference(s).
    pub epp: Option<String>,
    /// `on`, `off`, or `None` when unknown.
    pub turbo: Option<String>,
    /// cpuidle driver.
    pub idle_driver: Option<String>,
    /// cpuidle governor.
    pub idle_governor: Option<String>,
    /// cpuidle states.
    pub idle_states: Vec<StateFact>,
    /// Kernel command line.
    pub cmdline: Option<String>,
    /// `isolated` CPU list.
    pub isolated: Option<String>,
    /// `nohz_full` CPU list.
    pub nohz_full: Option<String>,
    /// ASLR setting.
    pub aslr: Option<u8>,
}

/// The whole sidecar.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sidecar {
    /// Always [`FORMAT`].
    pub format: String,
    /// CSV layout version.
    pub schema_version: u32,
    /// noisetop version that wrote it.
    pub noisetop_version: String,
    /// Sampling interval, s.
    pub interval_s: f64,
    /// CPUs read every sample (`--watch`).
    pub watched: Vec<u32>,
    /// The command line.
    pub command_line: Vec<String>,
    /// Start of the first interval, ns since the epoch (`t_s` counts from it).
    pub started_wall_ns: Option<u64>,
    /// Same, ISO-8601.
    pub started: Option<String>,
    /// The CSV header.
    pub columns: Vec<String>,
    /// Facts the tools use.
    pub facts: Facts,
    /// Every machine fact noisetop read, as it read them.
    #[serde(default)]
    pub machine: serde_json::Value,
    /// Where each metric came from in the first interval (`Avg_MHz/Busy%/Bzy_MHz`:
    /// `/proc/cpuinfo cpu MHz (nominal)` on a VM without APERF/MPERF).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<MetricSource>,
    /// Intervals sampled but not in the CSV (a write failed: a full disk).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lost: Vec<LostRange>,
    /// The last `noisetop probe` that ended while this recording ran, with
    /// its histograms: `compare` of two recordings that carry one says
    /// what a wake-up cost on each side, measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<crate::probe::ProbeReport>,
}

/// How one metric was read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricSource {
    /// The metric (`Avg_MHz/Busy%/Bzy_MHz`, `IRQ/s`).
    pub metric: String,
    /// What was read; `None` when the metric was unavailable.
    pub source: Option<String>,
    /// Why it (or a better source) was unavailable.
    pub note: Option<String>,
}

impl Sidecar {
    /// What the frequency columns were read from, when recorded.
    pub fn freq_source(&self) -> Option<&MetricSource> {
        self.sources
            .iter()
            .find(|s| s.metric == crate::sample::ladder::Metric::Frequency.label())
    }
}

/// A run of consecutive intervals that could not be written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LostRange {
    /// `t_s` where the first lost interval starts.
    pub from_t_s: f64,
    /// `t_s` where the last lost interval ends.
    pub to_t_s: f64,
    /// How many intervals.
    pub intervals: u64,
    /// The write error of the first one.
    pub why: String,
}

/// Settings of the recording (not of the machine).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RecordMeta {
    /// noisetop version.
    pub version: String,
    /// Sampling interval, s.
    pub interval_s: f64,
    /// Watched CPUs.
    pub watched: Vec<u32>,
    /// The command line.
    pub command_line: Vec<String>,
}

/// Joins distinct values with their CPUs: `performance` when all agree,
/// `powersave (0-3), performance (4-7)` when not.
fn per_cpu_text(vals: &[(u32, Option<String>)]) -> Option<String> {
    let mut groups: Vec<(String, Vec<u32>)> = Vec::new();
    for (cpu, v) in vals {
        let Some(v) = v else { continue };
        match groups.iter_mut().find(|(k, _)| k == v) {
            Some((_, cpus)) => cpus.push(*cpu),
            None => groups.push((v.clone(), vec![*cpu])),
        }
    }
    match groups.len() {
        0 => None,
        1 => Some(groups.remove(0).0),
        _ => Some(
            groups
                .iter()
                .map(|(v, c)| format!("{v} ({})", cpulist::format(c)))
                .collect::<Vec<_>>()
                .join(", "),
        ),
    }
}

impl Facts {
    /// Picks the facts from what the sampler read.
    pub fn of(m: &Machine) -> Facts {
        let mut cores = std::collections::BTreeSet::new();
        for t in &m.topology {
            cores.insert((t.package, t.core));
        }
        let freq = |f: fn(&crate::collect::cpufreq::CpuFreqInfo) -> Option<String>| {
            per_cpu_text(&m.cpufreq.iter().map(|c| (c.cpu, f(c))).collect::<Vec<_>>())
        };
        let b = &m.boost;
        let turbo = match (b.intel_no_turbo, b.cpufreq_boost) {
            (Some(true), _) | (None, Some(false)) => Some("off".to_string()),
            (Some(false), _) | (None, Some(true)) => Some("on".to_string()),
            (None, None) => None,
        };
        let mut idle_states: Vec<StateFact> = columns::machine_states(m)
            .into_iter()
            .map(|name| StateFact {
                column: columns::state_stem(&name),
                name,
                desc: String::new(),
                latency_us: None,
                residency_us: None,
                disabled_cpus: Vec::new(),
                disabled_known: false,
            })
            .collect();
        for (cpu, states) in m.idle_states.iter() {
            for st in states {
                let Some(f) = idle_states.iter_mut().find(|f| f.name == st.name.as_str()) else {
                    continue;
                };
                if f.latency_us.is_none() {
                    f.latency_us = st.latency_us;
                    f.residency_us = st.residency_us;
                    f.desc.clone_from(&st.desc);
                }
                if let Some(d) = st.disabled {
                    f.disabled_known = true;
                    if d {
                        f.disabled_cpus.push(cpu);
                    }
                }
            }
        }
        let list = |v: &Option<Vec<u32>>| v.as_ref().map(|c| cpulist::format(c));
        Facts {
            model: m.cpuinfo.model_name.clone(),
            hostname: m.kernel.hostname.clone(),
            kernel: m.kernel.osrelease.clone(),
            cpus: m.online.clone(),
            packages: m.package_leaders().len(),
            cores: cores.len(),
            smt_active: m.kernel.smt_active,
            hypervisor: m.virtualized(),
            cpufreq_driver: freq(|c| c.driver.clone()),
            governor: freq(|c| c.governor.clone()),
            epp: freq(|c| c.epp.clone()),
            turbo,
            idle_driver: m.idle_driver.driver.clone(),
            idle_governor: m.idle_driver.governor.clone(),
            idle_states,
            cmdline: m.kernel.cmdline.clone(),
            isolated: list(&m.sets.isolated),
            nohz_full: list(&m.sets.nohz_full),
            aslr: m.kernel.aslr,
        }
    }
}

impl Sidecar {
    /// Builds the sidecar of a new recording.
    pub fn new(m: &Machine, meta: &RecordMeta, columns: Vec<String>) -> Sidecar {
        Sidecar {
            format: FORMAT.to_string(),
            schema_version: SCHEMA_VERSION,
            noisetop_version: meta.version.clone(),
            interval_s: meta.interval_s,
            watched: meta.watched.clone(),
            command_line: meta.command_line.clone(),
            started_wall_ns: None,
            started: None,
            columns,
            facts: Facts::of(m),
            machine: serde_json::to_value(m).unwrap_or(serde_json::Value::Null),
            sources: Vec::new(),
            lost: Vec::new(),
            probe: None,
        }
    }

    /// Writes it beside the CSV, through a temporary file and a rename so a
    /// reader never sees half of it.
    pub fn write(&self, csv: &Path) -> std::io::Result<()> {
        let path = crate::os::fs::sidecar_path(csv);
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(&tmp, text + "\n")?;
        std::fs::rename(&tmp, &path)
    }

    /// Reads the sidecar of a CSV; `Ok(None)` when there is none.
    pub fn read(csv: &Path) -> Result<Option<Sidecar>, SidecarError> {
        let path = crate::os::fs::sidecar_path(csv);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(SidecarError::Unreadable { path, err }),
        };
        let v: serde_json::Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(err) => return Err(SidecarError::NotJson { path, err }),
        };
        if v.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
            return Err(SidecarError::NotASidecar(path));
        }
        let version = v.get("schema_version").and_then(serde_json::Value::as_u64);
        if version != Some(u64::from(SCHEMA_VERSION)) {
            return Err(SidecarError::Schema { path, version });
        }
        serde_json::from_value(v)
            .map(Some)
            .map_err(|err| SidecarError::Malformed { path, err })
    }
}

/// Why a recording's sidecar cannot be read.
// each OS or JSON error is said in the message, so it is not also a
// `source` that `{:#}` would print a second time
#[derive(Debug, thiserror::Error)]
pub enum SidecarError {
    /// The file is there but cannot be read.
    #[error("cannot read {}: {err}", .path.display())]
    Unreadable {
        /// The sidecar.
        path: PathBuf,
        /// What reading it said.
        err: std::io::Error,
    },
    /// It is not JSON.
    #[error("{} is not JSON: {err}", .path.display())]
    NotJson {
        /// The sidecar.
        path: PathBuf,
        /// What the parser said.
        err: serde_json::Error,
    },
    /// It is JSON of something else.
    #[error("{} is not a noisetop recording's sidecar (no \"format\": \"{FORMAT}\")", .0.display())]
    NotASidecar(PathBuf),
    /// It was written with another layout.
    #[error(
        "{} was written with recording schema {}; this noisetop reads schema {SCHEMA_VERSION}",
        .path.display(),
        .version.map_or_else(|| "(none)".to_string(), |v| v.to_string())
    )]
    Schema {
        /// The sidecar.
        path: PathBuf,
        /// The `schema_version` it has, if any.
        version: Option<u64>,
    },
    /// It has the format and version but not the fields.
    #[error("{}: {err}", .path.display())]
    Malformed {
        /// The sidecar.
        path: PathBuf,
        /// What the parser said.
        err: serde_json::Error,
    },
}

/// ` (t_s 2.02–4.66, 9.1–9.3)`: the lost ranges, at most five.
pub fn lost_ranges_text(lost: &[LostRange]) -> String {
    if lost.is_empty() {
        return String::new();
    }
    let mut parts: Vec<String> = lost
        .iter()
        .take(5)
        .map(|r| format!("{:.2}–{:.2}", r.from_t_s, r.to_t_s))
        .collect();
    if lost.len() > 5 {
        parts.push(format!("{} more", lost.len() - 5));
    }
    format!(" (t_s {})", parts.join(", "))
}
