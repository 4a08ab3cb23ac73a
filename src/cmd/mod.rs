//! Subcommands: each arm of the one dispatch in `run`, and what they share
//! (where to read, keeping off watched CPUs); every live driver is built
//! by `pipeline::setup::DriverBuilder`.

pub(crate) mod batch;
pub mod check;
pub(crate) mod compare;
pub(crate) mod dashboard;
pub mod help;
pub(crate) mod out;
pub(crate) mod probe;
pub mod record_sink;
pub(crate) mod report;
pub mod run;
pub(crate) mod serve;
#[cfg(feature = "shots")]
pub mod shot;
pub(crate) mod snapshot;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Parser;

use crate::cli::{Cli, Command, SourceArgs};
use crate::model::machine::Machine;
use crate::noise::config::NoiseConfig;
use crate::os::fs::Roots;
use crate::pipeline::setup::{DriverBuilder, Tree};

/// A mistake in the command line found after parsing (a CPU that is not
/// online): reported like clap's own, with exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Parses the command line and runs the chosen mode.
pub fn run() -> Result<ExitCode> {
    if help_of_help(std::env::args_os().skip(1)) {
        return help::help_of_help().map(ok);
    }
    let cli = Cli::parse();
    // every argument is checked before anything runs (the terminal too)
    check_source_of(&cli)?;
    check_paths_of(&cli)?;
    crate::os::sys::raise_fd_limit();
    // before any thread: a table grown later would wake a watched CPU
    let _ = crate::os::sys::size_fd_table(crate::os::sys::fd_table_size(
        crate::os::sys::configured_cpus(),
    ));
    crate::os::sys::keep_freed_memory();
    match cli.command {
        Some(Command::Snapshot { json: _, source }) => snapshot::run(&source).map(ok),
        Some(Command::Capture {
            dir,
            sample,
            watch,
            owner,
            source,
        }) => batch::capture(&dir, &sample, watch.map(|w| w.0), owner, &source).map(ok),
        Some(Command::Replay {
            dir,
            batch,
            count,
            cpus,
            watch,
            config,
            record,
            summary,
        }) => {
            let o = batch::ReplayOpts {
                count,
                cpus: cpus.map(|c| c.0),
                watch: watch.map(|w| w.0),
                config: load_config(config.as_deref())?,
                record,
                quiet: summary.quiet,
            };
            if batch {
                batch::replay(&dir, &o).map(ok)
            } else {
                dashboard::replay(&dir, &o).map(ok)
            }
        }
        Some(Command::Check(args)) => crate::cmd::check_cmd(&args),
        Some(Command::Run(args)) => run::run(&args),
        Some(Command::Report(args)) => report::run(&args),
        Some(Command::Compare(args)) => compare::run(&args),
        Some(Command::Probe(args)) => probe::run(&args),
        Some(Command::Serve(args)) => serve::run(&args).map(ok),
        Some(Command::Man) => help::man().map(ok),
        Some(Command::Completions { shell }) => help::completions(shell).map(ok),
        None => {
            if let Some(cpu) = cli.live.watch.pin {
                pin(cpu, cli.live.watch.watch.as_ref().map_or(&[], |w| &w.0))?;
            }
            if cli.live.batch {
                batch::live(&cli.live).map(ok)
            } else {
                dashboard::live(&cli.live).map(ok)
            }
        }
    }
}

/// `noisetop help --help` (or `-h`): clap's own help command takes no
/// options and would call it a usage error.
fn help_of_help(mut args: impl Iterator<Item = std::ffi::OsString>) -> bool {
    args.next().is_some_and(|a| a == "help")
        && args.next().is_some_and(|a| a == "--help" || a == "-h")
}

/// Runs noisetop on `cpu` (`--pin`): a watched CPU, or one it may not run
/// on, is a usage error naming the CPUs it may use.
fn pin(cpu: u32, watched: &[u32]) -> Result<()> {
    if watched.contains(&cpu) {
        return Err(UsageError(format!(
            "--pin {cpu}: CPU {cpu} is watched (--watch {}); noisetop must run on another CPU",
            crate::base::cpulist::format(watched)
        ))
        .into());
    }
    // every thread, the ones already started too
    crate::os::sys::pin_all(&[cpu]).map_err(|e| {
        let allowed = crate::os::sys::affinity()
            .map_or_else(|_| "unknown".into(), |a| crate::base::cpulist::format(&a));
        if e.raw_os_error() == Some(libc::EINVAL) {
            UsageError(format!(
                "--pin {cpu}: CPU {cpu} is not one noisetop may run on (allowed: {allowed})"
            ))
            .into()
        } else {
            anyhow::anyhow!("--pin {cpu}: cannot run on CPU {cpu}: {e}")
        }
    })
}

/// Checks the source options of the commands that read a tree: see
/// [`check_source`].
fn check_source_of(cli: &Cli) -> Result<()> {
    let source = match &cli.command {
        None => &cli.live.source,
        Some(Command::Snapshot { source, .. } | Command::Capture { source, .. }) => source,
        Some(Command::Check(c)) => &c.source,
        _ => return Ok(()),
    };
    check_source(source)
}

/// Refuses the paths of the command line that cannot be used, as usage
/// errors before anything starts: a recording that exists (without
/// `--force`/`--append`) or is not a file, a capture folder that is not
/// empty, a replay folder that is no capture.
fn check_paths_of(cli: &Cli) -> Result<()> {
    match &cli.command {
        None => {
            if let Some(dir) = &cli.live.capture {
                check_new_folder("--capture", dir)?;
            }
            check_record(&cli.live.record)
        }
        Some(Command::Run(a)) => check_record(&a.record),
        Some(Command::Serve(a)) => check_record(&a.record),
        Some(Command::Replay { dir, record, .. }) => {
            check_capture(dir)?;
            check_record(record)
        }
        Some(Command::Capture { dir, .. }) => check_new_folder("capture", dir),
        _ => Ok(()),
    }
}

/// `--record FILE`: a file that exists needs `--force` or `--append`, and
/// a recording is a regular file.
pub fn check_record(r: &crate::cli::RecordArgs) -> Result<()> {
    use crate::record::writer::RecordError;
    let Some(path) = &r.record else {
        return Ok(());
    };
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    let e = if !meta.is_file() {
        RecordError::NotAFile(path.clone())
    } else if !r.force && !r.append {
        RecordError::Exists(path.clone())
    } else {
        return Ok(());
    };
    Err(UsageError(e.to_string()).into())
}

/// Why `dir` cannot be read as a folder, in a user's words.
fn folder_problem(dir: &Path) -> Option<String> {
    match std::fs::read_dir(dir) {
        Ok(_) => None,
        Err(e) => Some(match e.kind() {
            std::io::ErrorKind::NotFound => "no such folder".into(),
            std::io::ErrorKind::NotADirectory => "not a folder".into(),
            _ => e.to_string(),
        }),
    }
}

/// The folder of `replay`: there, and holding a capture's instants.
fn check_capture(dir: &Path) -> Result<()> {
    if let Some(why) = folder_problem(dir) {
        return Err(UsageError(format!("replay {}: {why}", dir.display())).into());
    }
    if crate::os::capture::instants(dir).is_ok_and(|i| i.is_empty()) {
        return Err(UsageError(format!(
            "replay {}: holds no instants (0000/, 0001/, …): was it made by `noisetop capture`?",
            dir.display()
        ))
        .into());
    }
    Ok(())
}

/// A folder `what` writes into: absent (it is created) or empty.
pub fn check_new_folder(what: &str, dir: &Path) -> Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    if let Some(why) = folder_problem(dir) {
        return Err(UsageError(format!("{what} {}: {why}", dir.display())).into());
    }
    let empty = std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_none());
    if !empty {
        return Err(UsageError(format!(
            "{what} {}: the folder is not empty; a capture needs a new or empty folder",
            dir.display()
        ))
        .into());
    }
    Ok(())
}

/// Refuses `--root`, `--procfs` or `--sysfs` naming what is not a folder,
/// and a `--root` with neither `proc` nor `sys` to read: every table would
/// be empty.
pub fn check_source(s: &SourceArgs) -> Result<()> {
    for (flag, dir) in [
        ("--root", &s.root),
        ("--procfs", &s.procfs),
        ("--sysfs", &s.sysfs),
    ] {
        let Some(dir) = dir else { continue };
        if let Err(e) = std::fs::read_dir(dir) {
            let why = match e.kind() {
                std::io::ErrorKind::NotFound => "no such folder".to_string(),
                std::io::ErrorKind::NotADirectory => "not a folder".to_string(),
                _ => e.to_string(),
            };
            return Err(UsageError(format!("{flag} {}: {why}", dir.display())).into());
        }
    }
    if let Some(root) = &s.root {
        let r = roots(s);
        if !r.procfs.is_dir() && !r.sysfs.is_dir() {
            return Err(UsageError(format!(
                "--root {}: holds neither proc/ nor sys/ to read",
                root.display()
            ))
            .into());
        }
    }
    Ok(())
}

fn ok((): ()) -> ExitCode {
    ExitCode::SUCCESS
}

/// `noisetop check`: the configuration rules of the machine under the roots.
fn check_cmd(a: &crate::cli::CheckCli) -> Result<ExitCode> {
    let cfg = load_config(a.config.as_deref())?;
    check::run_with(&a.args, &roots(&a.source), &cfg.check)
}

/// Reads `--config FILE`, or the built-in thresholds.
pub fn load_config(path: Option<&Path>) -> Result<NoiseConfig> {
    match path {
        Some(p) => NoiseConfig::load(p).map_err(|e| UsageError(format!("--config {e}")).into()),
        None => Ok(NoiseConfig::default()),
    }
}

/// Says which rungs of the source ladder the options allow.
pub fn live_options(s: &SourceArgs) -> crate::os::live::LiveOptions {
    crate::os::live::LiveOptions {
        no_perf: s.no_perf,
        no_msr: s.no_msr,
        // decided by the driver, once it knows whether the programs loaded
        switches_counted: false,
    }
}

/// The tree `--root`, `--procfs` and `--sysfs` name (this machine's
/// without them).
pub fn tree_kind(s: &SourceArgs, roots: &Roots) -> Tree {
    let moved = s.root.is_some() || s.procfs.is_some() || s.sysfs.is_some();
    Tree::detect(s.root.as_deref(), moved, roots)
}

/// A driver's makings from the source options: the roots, the tree they
/// hold and the hardware rungs allowed.
pub fn driver_for(s: &SourceArgs) -> DriverBuilder {
    let roots = roots(s);
    let tree = tree_kind(s, &roots);
    DriverBuilder::new(roots, tree).live_options(live_options(s))
}

/// Works out the kernel roots from `--root`, `--procfs`, `--sysfs`.
pub fn roots(s: &SourceArgs) -> Roots {
    let base = s.root.clone().unwrap_or_else(|| PathBuf::from("/"));
    let mut r = Roots::under(&base);
    if let Some(p) = &s.procfs {
        r.procfs.clone_from(p);
    }
    if let Some(d) = &s.sysfs {
        r.sysfs.clone_from(d);
    }
    r
}

/// Refuses CPUs that are not online, naming the online list.
pub fn check_cpus(flag: &str, cpus: &[u32], m: &Machine) -> Result<()> {
    let missing: Vec<u32> = cpus
        .iter()
        .copied()
        .filter(|c| !m.online.contains(c))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(UsageError(format!(
        "{flag} {}: {} not online (online: {})",
        crate::base::cpulist::format(cpus),
        match missing.as_slice() {
            [one] => format!("CPU {one} is"),
            _ => format!("CPUs {} are", crate::base::cpulist::format(&missing)),
        },
        crate::base::cpulist::format(&m.online)
    ))
    .into())
}

/// The CPUs noisetop may run on to stay off the watched ones: its current
/// affinity minus `watched`; `None` when that leaves nothing.
pub fn housekeeping(affinity: &[u32], watched: &[u32]) -> Option<Vec<u32>> {
    let rest: Vec<u32> = affinity
        .iter()
        .copied()
        .filter(|c| !watched.contains(c))
        .collect();
    (!rest.is_empty()).then_some(rest)
}

/// Moves noisetop (every thread, and those started after this) off the
/// watched CPUs, unless `--pin` placed it already; returns the affinity it
/// had.
pub fn keep_off(watched: &[u32], pinned: bool) -> Result<Vec<u32>> {
    let mine = crate::os::sys::affinity().context("cannot read noisetop's CPU affinity")?;
    if !pinned
        && !watched.is_empty()
        && let Some(h) = housekeeping(&mine, watched)
    {
        crate::os::sys::pin_all(&h).context("cannot move noisetop off the watched CPUs")?;
    }
    Ok(mine)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn housekeeping_is_the_affinity_minus_the_watched_cpus() {
        assert_eq!(housekeeping(&[0, 1, 2, 3], &[2, 3]), Some(vec![0, 1]));
        assert_eq!(housekeeping(&[0, 1, 2, 3], &[]), Some(vec![0, 1, 2, 3]));
        assert_eq!(housekeeping(&[2, 3], &[2, 3]), None, "never pin to nothing");
    }
}
