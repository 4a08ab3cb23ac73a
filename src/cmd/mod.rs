//! Subcommands: each arm of the one dispatch in `run`, and what they share
//! (where to read, which hardware a tree gets, keeping off watched CPUs).

pub mod batch;
pub mod check;
pub mod compare;
pub mod dashboard;
pub mod help;
pub mod out;
pub mod probe;
pub mod record_sink;
pub mod report;
pub mod run;
pub mod serve;
#[cfg(feature = "shots")]
pub mod shot;
pub mod snapshot;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Parser;

use crate::cli::{Cli, Command, SourceArgs};
use crate::model::machine::Machine;
use crate::noise::config::NoiseConfig;
use crate::os::capture::Captured;
use crate::os::fs::Roots;
use crate::os::hw::Hardware;
use crate::os::live::LiveHw;
use crate::pipeline::wrapped::Wrapped;

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
    }
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

/// What a tree under `--root`/`--procfs` is, which decides where perf
/// counts, MSRs and the clock come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tree {
    /// This machine's kernel (`/`, or its /proc mounted elsewhere).
    Live,
    /// One instant of a capture: its own clock, perf and MSR tables.
    Instant(PathBuf),
    /// Another machine's files, or this one's from another boot: no live
    /// counter describes it, and one instant has no rates.
    Foreign(String),
}

/// The file that tells one boot of one machine from any other.
const BOOT_ID: &str = "sys/kernel/random/boot_id";

/// Tells a live tree from a capture instant and from a foreign tree.
pub fn tree_kind(s: &SourceArgs, roots: &Roots) -> Tree {
    if s.root.is_none() && s.procfs.is_none() && s.sysfs.is_none() {
        return Tree::Live;
    }
    if let Some(r) = &s.root
        && r.join("noisetop/clock").is_file()
    {
        return Tree::Instant(r.clone());
    }
    let read = |p: &Path| crate::os::read_small(p, 64).map(|t| t.trim().to_string());
    let here = read(&Path::new("/proc").join(BOOT_ID));
    let there = read(&roots.procfs.join(BOOT_ID));
    match (here, there) {
        (Ok(a), Ok(b)) if a == b && !a.is_empty() => Tree::Live,
        (Ok(_), Ok(_)) => Tree::Foreign(format!(
            "{} is another machine's, or another boot's (its boot_id differs): \
             live perf and MSR counts would describe this machine, and one \
             instant has no rates (use `noisetop replay` on a capture)",
            roots.procfs.display()
        )),
        (_, Err(e)) => Tree::Foreign(format!(
            "{} has no readable {BOOT_ID} ({e}): it cannot be told from another \
             machine's, so no live perf or MSR count is read, and one instant \
             has no rates",
            roots.procfs.display()
        )),
        (Err(e), _) => Tree::Foreign(format!(
            "this machine's /proc/{BOOT_ID} cannot be read ({e}): no live counter is mixed into {}",
            roots.procfs.display()
        )),
    }
}

/// The hardware side (clock, perf, MSRs) of a tree.
pub type AnyHw = Box<dyn Hardware + Send>;

/// Opens the hardware that belongs with a tree: the live machine's perf
/// groups and MSRs, a capture instant's tables, or nothing (a frozen clock)
/// for a foreign tree.
pub fn open_hw(tree: &Tree, s: &SourceArgs, roots: &Roots, m: &Machine) -> Result<AnyHw> {
    Ok(match tree {
        Tree::Live => Box::new(LiveHw::open(&m.hw_targets(), roots, live_options(s))),
        Tree::Instant(dir) => Box::new(Captured::load(dir).map_err(anyhow::Error::msg)?),
        Tree::Foreign(why) => Box::new(Captured::foreign(why)),
    })
}

/// How who ran is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TraceHow {
    /// Counted in the kernel by BPF programs on every CPU; where they
    /// cannot load, sampled from /proc, with the reason.
    #[default]
    Best,
    /// `--no-trace` (`--no-bpf`): sampled from /proc.
    Sampled,
}

impl TraceHow {
    /// From the `--no-trace` flag.
    pub fn from_flag(no_trace: bool) -> TraceHow {
        if no_trace {
            TraceHow::Sampled
        } else {
            TraceHow::Best
        }
    }
}

/// What finds who ran: the source, why it is not the best one (or none),
/// and the counts of switches it brings along, when it does.
pub struct TraceChoice {
    /// The source.
    pub source: Option<Box<dyn crate::pipeline::TraceSource>>,
    /// Why it is not exact tracing (or there is none).
    pub missing: Option<String>,
    /// Switch and migration counts from the same programs.
    pub switches: Option<Box<dyn crate::pipeline::SwitchSource>>,
}

/// The reader of who ran for a live tree, or why there is none (a tree
/// that is not this machine, `--no-trace`, permissions or the kernel
/// missing something). `owners`: the pids that own the CPUs, when known.
pub fn tracer_for(
    tree: &Tree,
    roots: &Roots,
    watched: &[u32],
    how: TraceHow,
    owners: Vec<u32>,
) -> TraceChoice {
    let none = |why: String| TraceChoice {
        source: None,
        missing: Some(why),
        switches: None,
    };
    if *tree != Tree::Live {
        return none("the tree is not this machine's live kernel".into());
    }
    let sampled = |owners: Vec<u32>| -> Box<dyn crate::pipeline::TraceSource> {
        Box::new(crate::pipeline::sampled::SampledTrace::new(
            &roots.procfs,
            watched,
            owners,
        ))
    };
    // the counters of noisetop's own IPIs may have mounted tracefs: said
    // on the who-ran line, whichever way who ran is found
    let noted =
        |inner: Box<dyn crate::pipeline::TraceSource>| -> Box<dyn crate::pipeline::TraceSource> {
            match mount_tracefs(&roots.sysfs) {
                Some(Ok(note)) => Box::new(Wrapped { inner, add: note }),
                _ => inner,
            }
        };
    if how == TraceHow::Sampled {
        return TraceChoice {
            source: Some(noted(sampled(owners))),
            missing: Some("--no-trace".into()),
            switches: None,
        };
    }
    match crate::pipeline::in_kernel::open(&roots.sysfs, &roots.procfs, watched, owners.clone()) {
        Ok((t, s)) => TraceChoice {
            source: Some(noted(Box::new(t))),
            missing: None,
            switches: Some(Box::new(s)),
        },
        // who ran is still told, sampled from each task's run time
        Err(why) => TraceChoice {
            source: Some(noted(sampled(owners))),
            missing: Some(format!("BPF: {why}")),
            switches: None,
        },
    }
}

/// Mounts tracefs where the kernel documents it, as perf does, when it is
/// mounted nowhere and the tree is this machine's `/sys`: `None` when there
/// was nothing to do, else what was done or why it could not be. Tried
/// once: the counters of noisetop's own IPIs, opened first, need it as the
/// tracer does, and the tracer still says what was done.
fn mount_tracefs(sysfs: &Path) -> Option<Result<String, String>> {
    static ONCE: std::sync::OnceLock<Option<Result<String, String>>> = std::sync::OnceLock::new();
    if sysfs != Path::new("/sys") {
        return None;
    }
    ONCE.get_or_init(|| mount_tracefs_now(sysfs)).clone()
}

fn mount_tracefs_now(sysfs: &Path) -> Option<Result<String, String>> {
    if crate::os::tracepoint::find_tracefs(sysfs).is_some() {
        return None;
    }
    let at = sysfs.join("kernel/tracing");
    if !crate::os::sys::is_root() {
        return Some(Err(format!(
            "noisetop mounts tracefs at {} only as root",
            at.display()
        )));
    }
    Some(match crate::os::sys::mount_tracefs(&at) {
        Ok(()) => Ok(format!(
            "tracefs was not mounted: noisetop mounted it at {} (as perf does)",
            at.display()
        )),
        Err(e) if matches!(e.raw_os_error(), Some(libc::EPERM | libc::EACCES)) => Err(format!(
            "mounting tracefs at {} was refused: {e} (mounting needs CAP_SYS_ADMIN)",
            at.display()
        )),
        Err(e) => Err(format!("mounting tracefs at {} failed: {e}", at.display())),
    })
}

/// The kernel's counters of the IPIs noisetop sends to watched CPUs, on a
/// live tree with tracefs; opened first, so that setup counts too.
pub fn own_ipis(
    tree: &Tree,
    roots: &Roots,
    watched: &[u32],
) -> Result<crate::os::ipi_count::SelfIpis, String> {
    if *tree != Tree::Live {
        return Err("the tree is not this machine's live kernel".into());
    }
    let mounted = mount_tracefs(&roots.sysfs);
    let tracefs = crate::os::tracepoint::find_tracefs(&roots.sysfs).ok_or_else(|| {
        let why = format!(
            "tracefs is not mounted at {}/kernel/tracing",
            roots.sysfs.display()
        );
        match mounted {
            Some(Err(e)) => format!("{why} ({e})"),
            _ => why,
        }
    })?;
    crate::os::ipi_count::SelfIpis::open(&tracefs, watched)
}

/// The driver every live command runs: the engine on this tree, the
/// sampler's file budget, the thresholds and the watched CPUs.
pub fn new_driver<H: Hardware>(
    fs: crate::os::fs::Fs,
    machine: crate::model::machine::Machine,
    hw: H,
    budget: Option<usize>,
    watched: &[u32],
    config: crate::noise::config::NoiseConfig,
) -> crate::pipeline::Driver<H> {
    let mut engine = crate::sample::engine::Engine::new(
        crate::sample::sampler::Sampler::with_machine(fs, machine, hw),
    );
    if let Some(files) = budget {
        engine.sampler.set_budget(files);
    }
    crate::pipeline::Driver::new(engine)
        .with_config(config)
        .watching(watched)
}

/// Gives the driver what watches the watched CPUs without interrupting
/// them: who ran (counted in the kernel, traced, or sampled from /proc),
/// their switches and migrations, and the kernel's count of noisetop's own
/// IPIs.
pub fn watch<H: Hardware>(
    driver: &mut crate::pipeline::Driver<H>,
    tree: &Tree,
    roots: &Roots,
    watched: &[u32],
    how: TraceHow,
    owners: Vec<u32>,
    own_ipis: Result<crate::os::ipi_count::SelfIpis, String>,
) {
    let choice = tracer_for(tree, roots, watched, how, owners);
    driver.set_tracer(choice.source, choice.missing);
    count_switches(driver, tree, choice.switches);
    driver.set_own_ipis(own_ipis);
}

/// Counts the watched CPUs' switches and migrations, on a live tree only:
/// with the in-kernel counts where they loaded, else with counting rings.
pub fn count_switches<H: Hardware>(
    driver: &mut crate::pipeline::Driver<H>,
    tree: &Tree,
    in_kernel: Option<Box<dyn crate::pipeline::SwitchSource>>,
) {
    if *tree != Tree::Live {
        return;
    }
    let s =
        in_kernel.unwrap_or_else(|| Box::new(crate::pipeline::switches::CountingRings::default()));
    driver.set_switches(Some(s), None);
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
