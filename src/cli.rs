//! Command-line definitions.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::collect::cpulist;

/// Live per-CPU frequency, C-state and noise monitor for Linux.
#[derive(Debug, Parser)]
#[command(name = "noisetop", version, about, long_about = None)]
pub struct Cli {
    /// What to do; without one, the live dashboard (or `--batch`).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Sampling options.
    #[command(flatten)]
    pub opts: Opts,
}

/// Options shared by every mode.
#[derive(Debug, Clone, Args)]
pub struct Opts {
    /// Print one table per interval to stdout instead of the dashboard.
    #[arg(long, global = true)]
    pub batch: bool,
    /// Sampling interval: `1s`, `500ms`, `2` (seconds).
    #[arg(short, long, global = true, default_value = "1s", value_parser = parse_interval)]
    pub interval: Duration,
    /// Stop after this many intervals.
    #[arg(short = 'n', long, global = true)]
    pub count: Option<u64>,
    /// Only show these CPUs (`0-3,8`).
    #[arg(long, global = true, value_parser = parse_cpus)]
    pub cpus: Option<CpuList>,
    /// Benchmark CPUs to watch (`2-5`): noise on them is flagged.
    #[arg(long, global = true, value_parser = parse_cpus)]
    pub watch: Option<CpuList>,
    /// Run noisetop itself on this CPU (a housekeeping CPU).
    #[arg(long, global = true)]
    pub pin: Option<u32>,
    /// Read kernel files from DIR/proc, DIR/sys and DIR/dev instead of /.
    #[arg(long, global = true, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Read procfs from DIR (default /proc, or ROOT/proc).
    #[arg(long, global = true, value_name = "DIR")]
    pub procfs: Option<PathBuf>,
    /// Read sysfs from DIR (default /sys, or ROOT/sys).
    #[arg(long, global = true, value_name = "DIR")]
    pub sysfs: Option<PathBuf>,
    /// Do not use perf counters.
    #[arg(long, global = true)]
    pub no_perf: bool,
    /// Do not read /dev/cpu/N/msr.
    #[arg(long, global = true)]
    pub no_msr: bool,
    /// Also write every raw input to DIR as a capture (with --batch).
    #[arg(long, global = true, value_name = "DIR")]
    pub capture: Option<PathBuf>,
    /// Most per-CPU counter files (cpuidle, thermal throttle) one sample
    /// reads; a machine with more reads them in rounds, and each CPU's
    /// C-state and throttle figures then cover several intervals
    /// [default: 448, or the number of CPUs when more]
    #[arg(long, global = true, value_name = "FILES", value_parser = clap::value_parser!(usize))]
    pub budget: Option<usize>,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the raw counters of one instant and the machine facts.
    Snapshot {
        /// Print JSON (the only format so far).
        #[arg(long)]
        json: bool,
    },
    /// Write N instants of every raw input to DIR, for bug reports.
    Capture {
        /// Folder to write (created; must be empty or absent).
        dir: PathBuf,
    },
    /// Run the pipeline on a capture made by `noisetop capture`.
    Replay {
        /// The capture folder.
        dir: PathBuf,
    },
}

/// A parsed CPU list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(pub Vec<u32>);

fn parse_cpus(s: &str) -> Result<CpuList, String> {
    let cpus = cpulist::parse(s)?;
    if cpus.is_empty() {
        return Err("empty CPU list".into());
    }
    Ok(CpuList(cpus))
}

/// Parses `1s`, `250ms`, `1.5`, `2m` into a duration between 10 ms and 1 h.
pub fn parse_interval(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, scale) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60.0)
    } else {
        (s, 1.0)
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a duration (try 1s, 500ms)"))?;
    let secs = v * scale;
    if !(0.01..=3600.0).contains(&secs) {
        return Err(format!("{s:?}: the interval must be between 10ms and 1h"));
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_parse_with_units() {
        assert_eq!(parse_interval("1s").unwrap(), Duration::from_secs(1));
        assert_eq!(parse_interval("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_interval("2").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_interval("1m").unwrap(), Duration::from_secs(60));
        assert!(parse_interval("0").is_err());
        assert!(parse_interval("fast").is_err());
        assert!(parse_interval("5ms").is_err());
    }

    #[test]
    fn cpu_lists_reject_empty_and_garbage() {
        assert_eq!(parse_cpus("0-2,8").unwrap(), CpuList(vec![0, 1, 2, 8]));
        assert!(parse_cpus("").is_err());
        assert!(parse_cpus("a-b").is_err());
    }

    #[test]
    fn cli_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
