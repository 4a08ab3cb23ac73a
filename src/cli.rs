//! Command-line definitions: each option belongs to the commands it
//! affects, grouped by what it is about (where to read, how often, which
//! CPUs are watched, what to show). The man page and the shell completions
//! are generated from these same definitions.

use crate::base::cpulist::{CpuList, parse_cpus};
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

const LONG_ABOUT: &str = "\
Live per-CPU frequency, C-state and noise monitor for Linux.

Per CPU: effective frequency from APERF/MPERF, C-state residency with exit
latencies, interrupts by source, softirqs, context switches, migrations,
steal, SMIs, temperature, throttling and RAPL power. Every CPU gets a
verdict each interval (quiet, noisy because ..., unknown because ...), and
each finding names the noise, its evidence and the usual fix as a command
to copy. noisetop never changes a setting.";

const AFTER_LONG_HELP: &str = "\
Columns (batch table; the dashboard shows the same figures):
  Avg_MHz   ΔAPERF/dt: the average clock over the interval, idle included
  Busy%     100·ΔMPERF/ΔTSC (without APERF/MPERF: /proc/stat busy time)
  Bzy_MHz   base·ΔAPERF/ΔMPERF: the clock while not idle
  TSC_MHz   ΔTSC/dt
  IPC       Δinstructions/Δcycles: perf hardware events instructions, cycles
  C-states  per idle state: % of the interval (cpuidle Δtime) and entries/s
  IRQ/s     every /proc/interrupts row of the CPU; LOC/s the local timer,
            RES/CAL/TLB IPIs, DEV/s numbered device interrupts
  SOFTIRQ/s /proc/softirqs, every type
  CSW/s MIG/s  perf software counters context-switches, cpu-migrations
  Steal%    Δsteal over Δ(user … steal) of /proc/stat
  PkgWatt   RAPL energy over dt

Examples:
  noisetop                              the live dashboard
  noisetop --watch 2-3                  strict rules and tracing for CPUs 2-3
  noisetop --batch -n 5 | less          five tables, findings as # lines
  noisetop check --cpus 2-3             is the machine set up for a benchmark?
  noisetop run --cpus 2 -- ./bench      run a command and report its noise
  noisetop --batch --record a.csv       keep a log; then: noisetop report a.csv
  noisetop compare a.csv b.csv          why is machine B slower than A?

Exit status:
  0 success; 1 an error (or `check` warnings); 2 a usage error (or `check`
  failures); `run` exits with the command's status (127: it cannot be run,
  126: it is not executable).

Privileges:
  Root, or CAP_PERFMON (perf counters, tracepoints with tracefs access) and
  CAP_SYS_RAWIO (/dev/cpu/N/msr, after `modprobe msr`), give every metric:
    sudo setcap cap_perfmon,cap_sys_rawio+ep $(command -v noisetop)
  or lower `kernel.perf_event_paranoid` to 0 for per-CPU counters. Without
  them noisetop runs and says what it cannot read.

Environment:
  NO_COLOR   any value: no colours on the dashboard";

/// Live per-CPU frequency, C-state and noise monitor for Linux.
#[derive(Debug, Parser)]
#[command(
    name = "noisetop",
    version,
    about,
    long_about = LONG_ABOUT,
    after_long_help = AFTER_LONG_HELP,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct Cli {
    /// What to do; without one, the live dashboard (or `--batch`).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The live dashboard's (or `--batch`'s) options.
    #[command(flatten)]
    pub live: LiveArgs,
}

/// Where kernel files and counters are read.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Source")]
pub struct SourceArgs {
    /// Read kernel files from DIR/proc, DIR/sys and DIR/dev instead of /
    /// (a host's tree mounted in a container). A tree that is not this
    /// machine's gets no live perf or MSR counts.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Read procfs from DIR (default /proc, or ROOT/proc).
    #[arg(long, value_name = "DIR")]
    pub procfs: Option<PathBuf>,
    /// Read sysfs from DIR (default /sys, or ROOT/sys).
    #[arg(long, value_name = "DIR")]
    pub sysfs: Option<PathBuf>,
    /// Do not use perf counters.
    #[arg(long)]
    pub no_perf: bool,
    /// Do not read /dev/cpu/N/msr.
    #[arg(long)]
    pub no_msr: bool,
}

/// How often and how much is read.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Sampling")]
pub struct SampleArgs {
    /// Sampling interval: `1s`, `500ms`, `2` (seconds).
    #[arg(short, long, default_value = "1s", value_parser = parse_interval)]
    pub interval: Duration,
    /// Stop after this many intervals.
    #[arg(short = 'n', long, value_parser = parse_count)]
    pub count: Option<u64>,
    /// Most per-CPU counter files (cpuidle, thermal throttle) one sample
    /// reads; a machine with more reads them in rounds, and each CPU's
    /// C-state and throttle figures then cover several intervals
    /// [default: 448, or the number of CPUs when more]
    #[arg(long, value_name = "FILES", value_parser = parse_budget)]
    pub budget: Option<usize>,
}

/// Which CPUs are watched and judged strictly.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Noise")]
pub struct WatchArgs {
    /// Benchmark CPUs (`2-5`): held to the strict rules, traced where
    /// allowed, read every sample; noisetop keeps off them.
    #[arg(long, value_parser = parse_cpus, value_name = "LIST")]
    pub watch: Option<CpuList>,
    /// Run noisetop itself on this CPU (a housekeeping CPU).
    #[arg(long, value_name = "CPU")]
    pub pin: Option<u32>,
    /// Noise thresholds from this TOML file (see assets/noisetop.toml).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Do not count who ran in the kernel (BPF programs on the scheduler
    /// and interrupt tracepoints); it is then sampled from /proc, not
    /// exact.
    #[arg(long, visible_alias = "no-bpf")]
    pub no_trace: bool,
    /// The benchmark's process ids (`4242,4250`): on traced CPUs every other
    /// task is an intruder, and the processes they fork are theirs [default:
    /// the task that ran longest on each CPU in each interval]
    #[arg(long, value_name = "PIDS", value_delimiter = ',', requires = "watch")]
    pub owner: Vec<u32>,
}

/// The dashboard and `--batch`.
#[derive(Debug, Clone, Args)]
pub struct LiveArgs {
    /// Print one table per interval to stdout (findings as `#` lines)
    /// instead of the dashboard.
    #[arg(long)]
    pub batch: bool,
    /// Only show these CPUs (`0-3,8`).
    #[arg(long, value_parser = parse_cpus, value_name = "LIST")]
    pub cpus: Option<CpuList>,
    /// With --batch: also write every raw input to DIR as a capture.
    #[arg(long, value_name = "DIR", requires = "batch")]
    pub capture: Option<PathBuf>,
    // its help lists the columns from the metric catalogue
    #[arg(
        long,
        value_parser = parse_columns,
        value_name = "LIST",
        conflicts_with = "batch",
        help = show_help()
    )]
    pub show: Option<Columns>,
    /// Hide these of the dashboard's wide rows' optional columns
    /// (`MIG,stl%`).
    #[arg(long, value_parser = parse_columns, value_name = "LIST", conflicts_with = "batch")]
    pub hide: Option<Columns>,
    /// Neither restore nor save the dashboard's watched CPUs, sort, filter
    /// and overview metric (noisetop/dashboard.json in the XDG state folder).
    #[arg(long)]
    pub no_state: bool,
    #[command(flatten)]
    pub sample: SampleArgs,
    #[command(flatten)]
    pub watch: WatchArgs,
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub record: RecordArgs,
    #[command(flatten)]
    pub summary: SummaryArgs,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the raw counters of one instant and the machine facts, as JSON.
    Snapshot {
        /// Accepted for scripts written when the output had to be asked
        /// for as JSON; it always is, so the help does not list it.
        #[arg(long, hide = true)]
        json: bool,
        #[command(flatten)]
        source: SourceArgs,
    },
    /// Write N+1 instants of every raw input to DIR, for bug reports.
    Capture {
        /// Folder to write (created; must be empty or absent).
        dir: PathBuf,
        #[command(flatten)]
        sample: SampleArgs,
        /// CPUs read every sample whatever the round, and traced (as
        /// `--watch`): who ran there is kept for the replay.
        #[arg(long, value_parser = parse_cpus, value_name = "LIST")]
        watch: Option<CpuList>,
        /// The benchmark's process ids (as `--owner`): every other task on
        /// the watched CPUs is an intruder.
        #[arg(long, value_name = "PIDS", value_delimiter = ',', requires = "watch")]
        owner: Vec<u32>,
        #[command(flatten)]
        source: SourceArgs,
    },
    /// Run the pipeline on a capture made by `noisetop capture`.
    Replay {
        /// The capture folder.
        dir: PathBuf,
        /// Print the tables instead of the dashboard.
        #[arg(long)]
        batch: bool,
        /// Stop after this many intervals.
        #[arg(short = 'n', long, value_parser = parse_count)]
        count: Option<u64>,
        /// Only show these CPUs.
        #[arg(long, value_parser = parse_cpus, value_name = "LIST")]
        cpus: Option<CpuList>,
        /// Benchmark CPUs (default: those the capture was taken with).
        #[arg(long, value_parser = parse_cpus, value_name = "LIST")]
        watch: Option<CpuList>,
        /// Noise thresholds from this TOML file.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        #[command(flatten)]
        record: RecordArgs,
        #[command(flatten)]
        summary: SummaryArgs,
    },
    /// Check the machine's settings for benchmarking: OK / WARN / FAIL / UNKNOWN.
    Check(CheckCli),
    /// Run a command, watch the CPUs it runs on, and report the noise it met.
    Run(RunArgs),
    /// Summarise a recording: per CPU spreads, C-states, interrupts, findings; plots.
    Report(crate::cmd::report::ReportArgs),
    /// Compare two recordings: what differs beyond the spread, and why it matters.
    Compare(crate::cmd::compare::CompareArgs),
    /// Measure wake-up latency per CPU and idle state, and a context switch's cost.
    Probe(crate::cmd::probe::ProbeArgs),
    /// Serve the live figures over HTTP for Prometheus to scrape (`/metrics`).
    Serve(crate::cmd::serve::ServeArgs),
    /// Print a man page (roff) generated from these definitions.
    Man,
    /// Print shell completions.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
}

/// `noisetop check`.
#[derive(Debug, Clone, Args)]
pub struct CheckCli {
    #[command(flatten)]
    pub args: crate::cmd::check::CheckArgs,
    /// Thresholds from this TOML file (its `[check]` table).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub source: SourceArgs,
}

/// `noisetop run -- CMD`.
#[derive(Debug, Clone, Args)]
// each flag is one switch of its own on the command line
#[allow(clippy::struct_excessive_bools)]
pub struct RunArgs {
    /// Run CMD on these CPUs (taskset) and watch them; noisetop keeps off
    /// them. Default: CMD's own affinity.
    #[arg(long, value_parser = parse_cpus, value_name = "LIST")]
    pub cpus: Option<CpuList>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write the report (text, or JSON with --json) to FILE instead of
    /// standard output, which stays CMD's alone, as its standard error.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub series: SeriesArgs,
    /// Sampling interval while CMD runs.
    #[arg(short, long, default_value = "1s", value_parser = parse_interval)]
    pub interval: Duration,
    /// Noise thresholds from this TOML file.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Do not count who ran in the kernel (BPF programs); it is then
    /// sampled from /proc, not exact.
    #[arg(long, visible_alias = "no-bpf")]
    pub no_trace: bool,
    /// Do not use perf counters.
    #[arg(long)]
    pub no_perf: bool,
    /// Do not read /dev/cpu/N/msr.
    #[arg(long)]
    pub no_msr: bool,
    /// Most per-CPU counter files (cpuidle, thermal throttle) one sample
    /// reads; a machine with more reads them in rounds [default: 448, or
    /// the number of CPUs when more]
    #[arg(long, value_name = "FILES", value_parser = parse_budget)]
    pub budget: Option<usize>,
    /// The command and its arguments.
    // before the flattened recording options, whose heading would
    // otherwise take it in from "Arguments"
    #[arg(required = true, last = true, value_name = "CMD")]
    pub command: Vec<std::ffi::OsString>,
    #[command(flatten)]
    pub record: RecordArgs,
}

/// Parses an interval count: a whole number, at least 1.
pub fn parse_count(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(0) => Err("the count must be at least 1 interval".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{s:?} is not a whole number of intervals")),
    }
}

/// Optional Cores columns by index into the dashboard's column table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Columns(pub Vec<usize>);

/// Parses `--budget`: at least one file a sample.
pub fn parse_budget(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("at least one file a sample".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("{s:?}: {e}")),
    }
}

/// The help of `--show`: the optional columns, as the metric catalogue
/// names them.
fn show_help() -> String {
    let names: Vec<&str> = crate::metric::tui_columns()
        .iter()
        .filter_map(|f| f.tui_header())
        .collect();
    format!(
        "Show only these of the dashboard's wide rows' optional columns (`IRQ,LOC,CSW`): {}",
        names.join(", ")
    )
}

/// Parses a `--show`/`--hide` column list.
pub fn parse_columns(s: &str) -> Result<Columns, crate::tui::columns::UnknownColumn> {
    crate::tui::columns::parse(s).map(Columns)
}

/// Parses `1s`, `250ms`, `1.5`, `2m`, `1h` into a duration between 10 ms and 1 h.
pub fn parse_interval(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, scale) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = s.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (s, 1.0)
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a duration (try 1s, 500ms, 2m, 1h)"))?;
    let secs = v * scale;
    if !(0.01..=3600.0).contains(&secs) {
        return Err(format!("{s:?}: the interval must be between 10ms and 1h"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// `run --repeat N`: a series of runs.
#[derive(Debug, Clone, Args)]
pub struct SeriesArgs {
    /// Run CMD N times: a row per run with the noise it met, statistics
    /// over all runs and over the quiet ones, the slow runs explained.
    #[arg(long, value_name = "N", value_parser = parse_repeat, help_heading = "Series")]
    pub repeat: Option<u32>,
    /// Runs before the series that are timed but not counted.
    #[arg(
        long,
        value_name = "K",
        default_value_t = 0,
        requires = "repeat",
        help_heading = "Series"
    )]
    pub warmup: u32,
    /// Go on after a run fails, and count it [default: a failed run stops
    /// the series with its exit status].
    #[arg(long, requires = "repeat", help_heading = "Series")]
    pub ignore_failure: bool,
    /// Do not print check's WARN and FAIL items before the first run.
    #[arg(long, requires = "repeat", help_heading = "Series")]
    pub no_check: bool,
    /// Before each run, wait up to this long for CMD's CPUs to be idle
    /// (0: do not wait).
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "1s",
        value_parser = parse_settle,
        requires = "repeat",
        help_heading = "Series"
    )]
    pub settle: Duration,
}

/// Parses `--repeat`: a whole number of runs, at least 1.
pub fn parse_repeat(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(0) => Err("at least 1 run".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{s:?} is not a whole number of runs")),
    }
}

/// Parses `--settle`: `0` (no wait), or a duration as `--interval` takes it.
pub fn parse_settle(s: &str) -> Result<Duration, String> {
    if s.trim().trim_end_matches(['m', 's']).trim() == "0" {
        return Ok(Duration::ZERO);
    }
    parse_interval(s).map_err(|e| e.replace("the interval", "the wait"))
}

// The recording options every live subcommand takes (`--record`,
// `--force`, `--append`); the recorder takes the plain values from them.
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

// The recording's own choices, offered on the command line: the recorder
// stays free of the parser, so their names and help live here.
impl clap::ValueEnum for crate::record::plot::Scale {
    fn value_variants<'a>() -> &'a [Self] {
        &[Self::Auto, Self::Fixed]
    }
    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        use clap::builder::PossibleValue;
        Some(match self {
            Self::Auto => PossibleValue::new("auto").help("From this file's lowest to highest figure"),
            Self::Fixed => PossibleValue::new("fixed").help(
                "The same for every file, so plots compare by colour: 0–6000 MHz, 1–100 000 interrupts/s",
            ),
        })
    }
}

impl clap::ValueEnum for crate::record::digest::Format {
    fn value_variants<'a>() -> &'a [Self] {
        &[Self::Table, Self::Md, Self::Json]
    }
    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        use clap::builder::PossibleValue;
        Some(match self {
            Self::Table => PossibleValue::new("table").help("Aligned text"),
            Self::Md => PossibleValue::new("md").help("Markdown"),
            Self::Json => PossibleValue::new("json").help("JSON"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_series_takes_one_run_or_more_and_a_wait_of_zero_or_more() {
        assert_eq!(parse_repeat("10"), Ok(10));
        assert_eq!(parse_repeat("0"), Err("at least 1 run".into()));
        assert!(parse_repeat("-1").is_err());
        assert!(parse_repeat("x").is_err());
        assert_eq!(parse_settle("0"), Ok(Duration::ZERO));
        assert_eq!(parse_settle("0s"), Ok(Duration::ZERO));
        assert_eq!(parse_settle("2s"), Ok(Duration::from_secs(2)));
        assert!(parse_settle("2h").unwrap_err().contains("the wait must be"));
        for argv in [
            &["noisetop", "run", "--warmup", "1", "--", "true"][..],
            &["noisetop", "run", "--no-check", "--", "true"],
            &["noisetop", "run", "--repeat", "0", "--", "true"],
        ] {
            let e = Cli::try_parse_from(argv).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{argv:?}: {e}");
        }
        assert!(
            Cli::try_parse_from([
                "noisetop", "run", "--repeat", "3", "-o", "r.txt", "--", "true"
            ])
            .is_ok()
        );
    }

    #[test]
    fn intervals_parse_with_units() {
        assert_eq!(parse_interval("1s").unwrap(), Duration::from_secs(1));
        assert_eq!(parse_interval("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_interval("2").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_interval("1m").unwrap(), Duration::from_secs(60));
        assert_eq!(parse_interval("1h").unwrap(), Duration::from_secs(3600));
        assert!(parse_interval("61m").is_err());
        assert!(parse_interval("1.01h").is_err());
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

    #[test]
    fn options_of_one_command_are_refused_by_another() {
        for argv in [
            &["noisetop", "snapshot", "--batch"][..],
            &["noisetop", "snapshot", "-n", "3"],
            &["noisetop", "capture", "d", "--capture", "e"],
            &["noisetop", "replay", "d", "--root", "/"],
            &["noisetop", "--capture", "d"],
            &["noisetop", "--force"],
        ] {
            let e = Cli::try_parse_from(argv).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{argv:?}: {e}");
        }
        assert!(Cli::try_parse_from(["noisetop", "--batch", "-n", "2", "--root", "/"]).is_ok());
        assert!(
            Cli::try_parse_from(["noisetop", "run", "--cpus", "1", "--", "sleep", "3"]).is_ok()
        );
    }
}
