//! The recording options every live subcommand takes (`--record`,
//! `--force`, `--append`). They live with the recorder, so the recorder
//! takes nothing from the command line's module; `cli` flattens them.

use std::path::PathBuf;

use clap::Args;

/// A CSV log of every interval.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Recording")]
pub struct RecordArgs {
    /// Write every interval to FILE.csv (and the machine facts to
    /// FILE.csv.json), flushed as it happens.
    #[arg(long, value_name = "FILE.csv")]
    pub record: Option<PathBuf>,
    /// Overwrite an existing recording.
    #[arg(long, requires = "record", conflicts_with = "append")]
    pub force: bool,
    /// Append to an existing recording of the same schema.
    #[arg(long, requires = "record")]
    pub append: bool,
}

/// The summary of a recording printed when a session ends (the dashboard,
/// `--batch`, `replay`, `serve`; `run` prints its own report instead).
#[derive(Debug, Clone, Copy, Default, Args)]
#[command(next_help_heading = "Recording")]
pub struct SummaryArgs {
    /// Print no summary of the recording when the session ends (the
    /// summary is what `noisetop report FILE.csv` prints: on stderr after
    /// `--batch` and `serve`, on stdout after the dashboard).
    #[arg(short, long, requires = "record")]
    pub quiet: bool,
}
