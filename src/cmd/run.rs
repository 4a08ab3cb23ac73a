//! `noisetop run -- CMD`: runs a command (pinned to `--cpus` when given),
//! watches the CPUs it runs on with the strict rules while noisetop keeps
//! off them, forwards signals to it, and prints what disturbed it and its
//! bottom line (its share of its CPUs, its time alone). Exits with the
//! command's status. `--repeat N` runs it N times (`series`).

use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::cli::RunArgs;
use crate::model::machine::Machine;
use crate::os::fs::{Fs, Roots};
use crate::os::live::LiveOptions;
use crate::pipeline::setup::{DriverBuilder, TraceHow, Tree};

pub(crate) mod alone;
pub(crate) mod output;
pub mod seen;
pub(crate) mod series;
pub(crate) mod session;
pub(crate) mod settle;
pub(crate) mod signals;
pub(crate) mod waits;

use output::Output;
use session::Session;
use signals::Forwarder;

/// Runs CMD and prints the report; returns CMD's exit status.
pub fn run(a: &RunArgs) -> Result<ExitCode> {
    // a command that cannot start gets its one line, as a shell gives it,
    // not a report of a run that never was
    if let Some((code, why)) = unrunnable(&a.command[0], std::env::var_os("PATH").as_deref()) {
        eprintln!("noisetop: cannot run {why}");
        return Ok(ExitCode::from(code));
    }
    let roots = Roots::default();
    let mut fs = Fs::new(roots.clone());
    let machine = Machine::read(&mut fs);
    let mine = crate::os::sys::affinity().context("cannot read noisetop's CPU affinity")?;
    let cpus = match &a.cpus {
        Some(c) => {
            crate::cmd::check_cpus("--cpus", &c.0, &machine)?;
            c.0.clone()
        }
        None => mine.clone(),
    };
    let config = crate::cmd::load_config(a.config.as_deref())?;
    // said before anything runs: where the report cannot go
    let mut output = Output::open(a.output.as_deref())?;
    let record = if a.series.repeat.is_some() {
        crate::cmd::record_sink::open_series(&a.record, &machine, a.interval, &cpus)?
    } else {
        crate::cmd::record_sink::open(&a.record, &machine, a.interval, &cpus)?
    };
    // read before noisetop moves: what check says of the command's CPUs
    let check = (a.series.repeat.is_some() && !a.series.no_check)
        .then(|| series::check_items(&cpus, &config.check));
    let facts = machine.clone();
    // noisetop moves off the command's CPUs first and never runs there: the
    // command is started through a trampoline that pins itself and execs it
    // (`sys::spawn_pinned`): no fork of noisetop, whose TLB flush would
    // reach a watched CPU
    let house = crate::cmd::housekeeping(&mine, &cpus);
    let back = house.clone().unwrap_or_else(|| mine.clone());
    crate::os::sys::pin_all(&back).context("cannot move noisetop off the command's CPUs")?;
    // watched and sampled before the command starts: its first
    // milliseconds are in the first interval, not before it
    let driver = DriverBuilder::new(roots, Tree::Live)
        .live_options(LiveOptions {
            no_perf: a.no_perf,
            no_msr: a.no_msr,
            switches_counted: false,
        })
        .watching(&cpus)
        .trace(TraceHow::from_flag(a.no_trace))
        .budget(a.budget)
        .config(config)
        .build(fs, machine)
        .map_err(anyhow::Error::msg)?;
    let signals = Forwarder::install()?;
    let mut session = Session {
        driver,
        record,
        cpus,
        interval: a.interval,
        min_last_s: if a.series.repeat.is_some() { 0.0 } else { 0.1 },
    };
    let code = if a.series.repeat.is_some() {
        let plan = series::Plan {
            args: a,
            check,
            machine: &facts,
            house: house.unwrap_or_default(),
        };
        series::run(&plan, &mut session, &signals, &mut output)?
    } else {
        single(a, &mut session, &signals, &mut output)?
    };
    signals.close();
    drop(session);
    if let Err(e) = crate::cmd::record_sink::finish(&a.record) {
        eprintln!("noisetop: {e:#}");
        if code == 0 {
            return Ok(ExitCode::FAILURE);
        }
    }
    Ok(ExitCode::from(code))
}

/// One run: its report, and the command's exit status.
fn single(
    a: &RunArgs,
    session: &mut Session,
    signals: &Forwarder,
    output: &mut Output,
) -> Result<u8> {
    let ran = session.run(&a.command, signals)?;
    let rep = &ran.report;
    let text = if a.json {
        let mut t = serde_json::to_string_pretty(rep)?;
        t.push('\n');
        t
    } else {
        rep.text()
    };
    output.write(&text)?;
    Ok(match (ran.status.code(), rep.signal) {
        (Some(c), _) => u8::try_from(c).unwrap_or(1),
        (None, Some(sig)) => 128u8.saturating_add(u8::try_from(sig).unwrap_or(0)),
        (None, None) => 1,
    })
}

/// Why `program` cannot be started, worded as a shell words it, with the
/// exit status a shell gives: 127 when no such file is found (on `path`
/// for a name without a `/`), 126 when the file found is a folder or not
/// executable. `None` when it can start; the trampoline still says why
/// where it fails after all (a file removed meanwhile).
fn unrunnable(program: &std::ffi::OsStr, path: Option<&std::ffi::OsStr>) -> Option<(u8, String)> {
    use std::os::unix::ffi::OsStrExt as _;
    use std::path::{Path, PathBuf};
    let shown = program.to_string_lossy();
    // a file found but not runnable: the status and words for it
    let refused = |p: &Path| -> Option<(u8, String)> {
        if p.is_dir() {
            Some((126, format!("{shown}: Is a directory")))
        } else if crate::os::sys::may_execute(p) {
            None
        } else {
            Some((126, format!("{shown}: Permission denied")))
        }
    };
    if program.as_bytes().contains(&b'/') {
        let p = Path::new(program);
        if p.exists() {
            return refused(p);
        }
        return Some((127, format!("{shown}: No such file or directory")));
    }
    if program.is_empty() {
        return Some((127, "'': No such file or directory".into()));
    }
    // as execvp searches: the first runnable file on PATH wins, a file
    // found but refused is said when none runs (an empty entry is the
    // current folder)
    let dirs = path.map_or_else(
        || {
            vec![
                PathBuf::from("/usr/local/bin"),
                PathBuf::from("/usr/bin"),
                PathBuf::from("/bin"),
            ]
        },
        |p| {
            std::env::split_paths(p)
                .map(|d| {
                    if d.as_os_str().is_empty() {
                        PathBuf::from(".")
                    } else {
                        d
                    }
                })
                .collect()
        },
    );
    let mut first_refusal = None;
    for d in dirs {
        let p = d.join(program);
        if !p.exists() {
            continue;
        }
        match refused(&p) {
            None => return None,
            Some(r) => {
                first_refusal.get_or_insert(r);
            }
        }
    }
    Some(first_refusal.unwrap_or_else(|| (127, format!("{shown}: not found in PATH"))))
}

/// Migrations of every thread of `pid` so far: the sum of the scheduler's
/// `se.nr_migrations` in /proc/PID/task/*/sched (`None` when unreadable).
fn task_migrations(pid: u32) -> Option<u64> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut total = None;
    for t in tasks.flatten() {
        let Ok(text) = crate::os::read_small(&t.path().join("sched"), 1 << 16) else {
            continue;
        };
        let n = text
            .lines()
            .find(|l| l.starts_with("se.nr_migrations"))
            .and_then(|l| l.rsplit(':').next())
            .and_then(|v| v.trim().parse::<u64>().ok());
        if let Some(n) = n {
            total = Some(total.unwrap_or(0) + n);
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::unrunnable;
    use std::ffi::OsStr;

    #[test]
    fn a_program_is_found_as_a_shell_finds_it() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let path = std::env::join_paths([d.join("none"), d.to_path_buf()]).unwrap();
        assert_eq!(
            unrunnable(OsStr::new("nothere"), Some(&path)),
            Some((127, "nothere: not found in PATH".into()))
        );
        std::fs::write(d.join("plain"), "text\n").unwrap();
        assert_eq!(
            unrunnable(OsStr::new("plain"), Some(&path)),
            Some((126, "plain: Permission denied".into()))
        );
        assert_eq!(unrunnable(OsStr::new("sh"), None), None);
        assert_eq!(
            unrunnable(OsStr::new("/nonexistent/x"), None),
            Some((127, "/nonexistent/x: No such file or directory".into()))
        );
        let shown = d.display().to_string();
        assert_eq!(
            unrunnable(d.as_os_str(), None),
            Some((126, format!("{shown}: Is a directory")))
        );
    }
}
