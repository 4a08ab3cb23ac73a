//! Thresholds of the noise rules and of `check`, read from one TOML file:
//! the one config type that both `noise/` and `check/` read.
//!
//! The built-in defaults are the values below; `assets/noisetop.toml` ships
//! the same values with a comment on each, and a test parses that file and
//! compares it with `NoiseConfig::default()` so the two cannot drift.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// Every threshold the noise rules use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct NoiseConfig {
    /// Strict limits for watched (benchmark) CPUs.
    pub watched: Limits,
    /// Mild limits for every other CPU.
    pub other: Limits,
    /// A reading this many times its limit makes the finding critical.
    pub crit_factor: f64,
    /// Idle states and their exit latency.
    pub idle: IdleLimits,
    /// SMT siblings of watched CPUs.
    pub smt: SmtLimits,
    /// The configuration rules of `noisetop check`.
    pub check: CheckConfig,
}

/// Per-CPU limits above which a CPU is called noisy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Limits {
    /// Numbered device interrupts per second.
    pub device_irq_per_s: f64,
    /// Inter-processor interrupts (RES, CAL, TLB, IWI, ...) per second.
    pub ipi_per_s: f64,
    /// Softirqs per second (every type).
    pub softirq_per_s: f64,
    /// Local timer ticks per second on a CPU that is idle (below
    /// `idle-busy-pct`): a tickless kernel stops the tick of an idle CPU.
    pub idle_tick_per_s: f64,
    /// Local timer ticks per second on a `nohz_full` CPU running one task:
    /// the kernel keeps a residual 1 Hz tick there.
    pub nohz_tick_per_s: f64,
    /// Busy % below which a CPU counts as idle for the tick rule.
    pub idle_busy_pct: f64,
    /// Context switches per second.
    pub csw_per_s: f64,
    /// Migrations per second.
    pub mig_per_s: f64,
    /// Steal, % of the CPU's time.
    pub steal_pct: f64,
    /// Time other tasks ran on the CPU (traced CPUs), % of the interval.
    pub intruder_pct: f64,
    /// Time interrupts of every kind took from the CPU's owner (traced
    /// CPUs), % of the interval.
    pub stolen_pct: f64,
}

/// When an idle state counts as deep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct IdleLimits {
    /// Exit latency (µs) from which an idle state is deep.
    pub deep_latency_us: u64,
    /// Residency (% of the interval) in a deep state from which it is reported.
    pub deep_min_pct: f64,
}

/// When a sibling of a watched CPU counts as busy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct SmtLimits {
    /// Busy % of the sibling from which it is reported.
    pub sibling_busy_pct: f64,
}

impl Limits {
    /// The strict limits of a watched CPU: one device interrupt a second
    /// already means a handler runs inside the benchmark.
    pub fn watched() -> Self {
        Limits {
            device_irq_per_s: 1.0,
            ipi_per_s: 20.0,
            softirq_per_s: 50.0,
            idle_tick_per_s: 50.0,
            nohz_tick_per_s: 2.0,
            idle_busy_pct: 5.0,
            csw_per_s: 50.0,
            mig_per_s: 1.0,
            steal_pct: 1.0,
            intruder_pct: 0.5,
            stolen_pct: 1.0,
        }
    }

    /// The mild limits of every other CPU: a housekeeping CPU is expected
    /// to take interrupts and switch tasks; these flag a CPU that does
    /// little else.
    pub fn other() -> Self {
        Limits {
            device_irq_per_s: 200.0,
            ipi_per_s: 500.0,
            softirq_per_s: 1000.0,
            idle_tick_per_s: 100.0,
            nohz_tick_per_s: 10.0,
            idle_busy_pct: 5.0,
            csw_per_s: 1000.0,
            mig_per_s: 50.0,
            steal_pct: 5.0,
            intruder_pct: 10.0,
            stolen_pct: 10.0,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits::other()
    }
}

impl Default for IdleLimits {
    fn default() -> Self {
        IdleLimits {
            deep_latency_us: 100,
            deep_min_pct: 1.0,
        }
    }
}

impl Default for SmtLimits {
    fn default() -> Self {
        SmtLimits {
            sibling_busy_pct: 10.0,
        }
    }
}

impl Default for NoiseConfig {
    fn default() -> Self {
        NoiseConfig {
            watched: Limits::watched(),
            other: Limits::other(),
            crit_factor: 10.0,
            idle: IdleLimits::default(),
            smt: SmtLimits::default(),
            check: CheckConfig::default(),
        }
    }
}

/// Why a config file's text is refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// It is not TOML of the known keys.
    #[error("{0}")]
    Toml(toml::de::Error),
    /// A threshold is negative or not a number.
    #[error("{key} must be a number ≥ 0, not {value}")]
    NotANumber {
        /// The key, with its table (`[watched] csw-per-s`).
        key: String,
        /// What it was given.
        value: f64,
    },
    /// `crit-factor` below 1 would make a critical level below the limit.
    #[error("crit-factor must be at least 1, not {0}")]
    CritFactor(f64),
}

/// Why a config file cannot be used: it cannot be read, or is refused.
pub type ConfigFileError = crate::base::FileError<ConfigError>;

impl NoiseConfig {
    /// Parses a config file's text; absent keys keep their defaults.
    pub fn parse(text: &str) -> Result<NoiseConfig, ConfigError> {
        let c: NoiseConfig = toml::from_str(text).map_err(ConfigError::Toml)?;
        c.validate()?;
        Ok(c)
    }

    /// Reads a config file.
    pub fn load(path: &Path) -> Result<NoiseConfig, ConfigFileError> {
        let text =
            crate::os::read_small(path, 1 << 20).map_err(|err| ConfigFileError::Unreadable {
                path: path.to_path_buf(),
                err,
            })?;
        Self::parse(&text).map_err(|err| ConfigFileError::Refused {
            path: path.to_path_buf(),
            err,
        })
    }

    /// Refuses thresholds that would make every reading noisy or none.
    fn validate(&self) -> Result<(), ConfigError> {
        let finite = |name: &str, v: f64| {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(ConfigError::NotANumber {
                    key: name.to_string(),
                    value: v,
                })
            }
        };
        for (side, l) in [("watched", &self.watched), ("other", &self.other)] {
            for (k, v) in [
                ("device-irq-per-s", l.device_irq_per_s),
                ("ipi-per-s", l.ipi_per_s),
                ("softirq-per-s", l.softirq_per_s),
                ("idle-tick-per-s", l.idle_tick_per_s),
                ("nohz-tick-per-s", l.nohz_tick_per_s),
                ("idle-busy-pct", l.idle_busy_pct),
                ("csw-per-s", l.csw_per_s),
                ("mig-per-s", l.mig_per_s),
                ("steal-pct", l.steal_pct),
                ("intruder-pct", l.intruder_pct),
                ("stolen-pct", l.stolen_pct),
            ] {
                finite(&format!("[{side}] {k}"), v)?;
            }
        }
        finite("crit-factor", self.crit_factor)?;
        if self.crit_factor < 1.0 {
            return Err(ConfigError::CritFactor(self.crit_factor));
        }
        finite("[idle] deep-min-pct", self.idle.deep_min_pct)?;
        finite("[smt] sibling-busy-pct", self.smt.sibling_busy_pct)
    }
}

/// Thresholds of the rules; embeddable as a `[check]` table of a TOML file.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct CheckConfig {
    /// Exit latency (µs) from which an enabled idle state counts as deep.
    pub deep_latency_us: u64,
    /// Highest `perf_event_max_sample_rate` that passes (pyperf tunes it to 1).
    pub perf_sample_rate_max: u64,
}

impl Default for CheckConfig {
    fn default() -> Self {
        CheckConfig {
            deep_latency_us: IdleLimits::default().deep_latency_us,
            perf_sample_rate_max: 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_sample_is_exactly_the_defaults() {
        let text = include_str!("../../assets/noisetop.toml");
        assert_eq!(NoiseConfig::parse(text).unwrap(), NoiseConfig::default());
    }

    #[test]
    fn absent_keys_keep_defaults_and_unknown_keys_are_refused() {
        let c = NoiseConfig::parse("[watched]\ncsw-per-s = 5\n").unwrap();
        assert!((c.watched.csw_per_s - 5.0).abs() < f64::EPSILON);
        assert_eq!(c.other, Limits::other());
        let e = NoiseConfig::parse("[watched]\ncsw-per-sec = 5\n").unwrap_err();
        assert!(matches!(e, ConfigError::Toml(_)), "{e}");
        assert!(e.to_string().contains("unknown field `csw-per-sec`"), "{e}");
        let e = NoiseConfig::parse("crit-factor = 0.5\n").unwrap_err();
        assert!(matches!(e, ConfigError::CritFactor(0.5)), "{e}");
        assert_eq!(e.to_string(), "crit-factor must be at least 1, not 0.5");
        let e = NoiseConfig::parse("[other]\nsteal-pct = -1\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "[other] steal-pct must be a number ≥ 0, not -1"
        );
    }
}
