//! A finished series, judged: statistics over all counted runs and over
//! the quiet ones, the outliers flagged and explained, the stability line
//! and the fix for noise that recurred. Everything here is computed from
//! the runs' rows; nothing reads the machine.

use serde::Serialize;

use super::outliers::{self, Limit, Typical};
use super::repetition::{Culprit, Repetition, RunVerdict};
use super::spread::{Spread, spread};
use super::stability::{self, Recurring};

/// The statistics of the wall time (and of the time alone).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Statistics {
    /// Wall time over every run counted.
    pub all: Option<Spread>,
    /// Wall time over the quiet runs.
    pub quiet: Option<Spread>,
    /// The estimated time alone over every run counted, where each run
    /// has one.
    pub time_alone: Option<Spread>,
}

/// What the series' runs add up to.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Analysis {
    /// The statistics.
    pub statistics: Statistics,
    /// The wall time above which a run is flagged.
    pub outlier_limit: Option<Limit>,
    /// What a run met typically: the quiet runs' medians (all runs'
    /// where none was quiet).
    pub typical: Option<Typical>,
    /// Whether `typical` is the quiet runs'.
    pub typical_of_quiet: bool,
    /// The stability line.
    pub stability: Option<String>,
    /// Noise that disturbed more than one run, with its fix.
    pub recurring: Vec<Recurring>,
}

/// Judges the runs (flagging and explaining outliers in place). Runs that
/// failed are left out of every figure unless `count_failed`.
pub fn analyse(
    runs: &mut [Repetition],
    cpus: &[u32],
    count_failed: bool,
    fix: &dyn Fn(&Culprit) -> String,
) -> Analysis {
    let counted = |r: &Repetition| count_failed || r.succeeded();
    let walls: Vec<f64> = runs
        .iter()
        .filter(|r| counted(r))
        .map(|r| r.wall_s)
        .collect();
    let quiet: Vec<&Repetition> = runs
        .iter()
        .filter(|r| counted(r) && r.verdict == RunVerdict::Quiet)
        .collect();
    let quiet_walls: Vec<f64> = quiet.iter().map(|r| r.wall_s).collect();
    let alone: Option<Vec<f64>> = runs
        .iter()
        .filter(|r| counted(r))
        .map(|r| r.time_alone_s)
        .collect();
    let statistics = Statistics {
        all: spread(&walls),
        quiet: spread(&quiet_walls),
        time_alone: alone.as_deref().and_then(spread),
    };
    let all: Vec<&Repetition> = runs.iter().filter(|r| counted(r)).collect();
    let typical_of_quiet = !quiet.is_empty();
    let typical = if typical_of_quiet {
        Typical::of(&quiet)
    } else {
        Typical::of(&all)
    };
    let outlier_limit = outliers::limit(&walls);
    if let (Some(l), Some(t)) = (outlier_limit, typical) {
        for r in runs
            .iter_mut()
            .filter(|r| counted(r) && r.wall_s > l.limit_s)
        {
            outliers::explain(r, &t, cpus);
        }
    }
    let counted_runs: Vec<Repetition> = runs.iter().filter(|r| counted(r)).cloned().collect();
    Analysis {
        stability: statistics
            .all
            .filter(|a| a.runs >= 2)
            .map(|a| stability::stability(&a, statistics.quiet.as_ref())),
        statistics,
        outlier_limit,
        typical,
        typical_of_quiet,
        recurring: stability::recurring(&counted_runs, fix),
    }
}
