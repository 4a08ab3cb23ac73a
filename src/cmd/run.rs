//! `noisetop run -- CMD`: runs a command (pinned to `--cpus` when given),
//! watches the CPUs it runs on with the strict rules while noisetop keeps
//! off them, forwards signals to it, and prints what disturbed it. Exits
//! with the command's status.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};

use crate::cli::RunArgs;
use crate::cmd::out::emit;
use crate::engine::Engine;
use crate::machine::Machine;
use crate::pipeline::live::{self, Live};
use crate::pipeline::{Control, Driver, Flow, Msg, Step};
use crate::sampler::Sampler;
use crate::source::fs::{Fs, Roots};
use crate::source::live::{LiveHw, LiveOptions};
use crate::stop::Stop;

pub mod report;

use report::{Accumulator, RunFacts};

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
    let mine = crate::sys::affinity().context("cannot read noisetop's CPU affinity")?;
    let cpus = match &a.cpus {
        Some(c) => {
            crate::cmd::check_cpus("--cpus", &c.0, &machine)?;
            c.0.clone()
        }
        None => mine.clone(),
    };
    let config = crate::cmd::load_config(a.config.as_deref())?;
    let sinks = crate::cmd::batch::sinks(&a.record, &machine, a.interval, &cpus)?;
    // before any other perf event: installing them is counted too
    let own_ipis = crate::cmd::own_ipis(&crate::cmd::Tree::Live, &roots, &cpus);
    let hw = LiveHw::open(&machine.hw_targets(), &roots, LiveOptions::default());
    let engine = Engine::new(Sampler::with_machine(fs, machine, hw));
    let mut driver = Driver::new(engine).with_config(config).watching(&cpus);

    // noisetop moves off the command's CPUs first and never runs there: the
    // command is started through a trampoline that pins itself and execs it
    // (`sys::spawn_pinned`): no fork of noisetop, whose TLB flush would
    // reach a watched CPU
    let back = crate::cmd::housekeeping(&mine, &cpus).unwrap_or_else(|| mine.clone());
    crate::sys::pin_all(&back).context("cannot move noisetop off the command's CPUs")?;
    // watched and sampled before the command starts: its first
    // milliseconds are in the first interval, not before it
    crate::cmd::watch(
        &mut driver,
        &crate::cmd::Tree::Live,
        &roots,
        &cpus,
        crate::cmd::TraceHow::from_flag(a.no_trace),
        Vec::new(),
        own_ipis,
    );
    let _ = driver.step();
    let first_at = std::time::Instant::now();
    let program = &a.command[0];
    let spawned = crate::sys::spawn_pinned(program, &a.command[1..], &cpus);
    let mut child = spawned.with_context(|| format!("cannot run {}", program.to_string_lossy()))?;
    let pid = child.id();
    let started = std::time::Instant::now();
    driver.set_owners(vec![pid]);

    let forwarder = forward_signals(pid)?;
    let stop = Stop::new();
    let live_opts = Live {
        control: Arc::new(Control::new(a.interval)),
        stop: stop.clone(),
        count: None,
    };
    let mut acc = Accumulator::new(&cpus);
    let mut sinks = sinks;
    let mut migrations: Option<u64> = None;
    let mut own_ipis = Some(Err("no interval was taken".to_string()));
    let status = std::thread::scope(|sc| -> Result<std::process::ExitStatus> {
        let sampler = sc.spawn(|| {
            let mut out = |m: Msg| {
                if let Msg::Sample(s) = m {
                    acc.add(&s);
                    own_ipis.clone_from(&s.own_ipis);
                    // read while it runs: once reaped, its counts are gone
                    if let Some(n) = task_migrations(pid) {
                        migrations = Some(migrations.map_or(n, |m| m.max(n)));
                    }
                }
                Flow::Continue
            };
            // the first interval runs from the snapshot taken before the
            // command started; a command over by then ends in the partial one
            let first_due = first_at + a.interval;
            if !stop.sleep_until_woken(|| first_due) {
                live::run(&mut driver, &live_opts, &mut sinks, None, &mut out);
            }
        });
        let status = child.wait();
        stop.stop();
        let _ = sampler.join();
        Ok(status?)
    })?;
    forwarder.close();
    // the last, partial interval: from the last sample to the command's
    // end; a few milliseconds give rates no threshold can judge. The
    // recording gets exactly what the report counts (`dt_s` says how long).
    if let Step::Sample(mut s) = driver.step() {
        own_ipis.clone_from(&s.own_ipis);
        if s.interval.dt_s >= 0.1 {
            crate::pipeline::feed_sinks(&mut sinks, &mut s);
            acc.add(&s);
        }
    }
    let facts = RunFacts {
        command: a
            .command
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect(),
        pid,
        cpus: cpus.clone(),
        seconds: started.elapsed().as_secs_f64(),
        exit: status.code(),
        signal: std::os::unix::process::ExitStatusExt::signal(&status),
        command_switches: crate::sys::children_switches(),
        command_migrations: migrations,
        trace_missing: driver.trace_missing().map(str::to_string),
        command_cpu_ns: crate::sys::children_cpu_ns(),
        others_limit_pct: driver.config().watched.intruder_pct + driver.config().watched.stolen_pct,
        own_ipis: own_ipis.clone().and_then(Result::ok),
        own_ipis_missing: own_ipis.and_then(Result::err),
    };
    let rep = acc.report(facts);
    let text = if a.json {
        let mut t = serde_json::to_string_pretty(&rep)?;
        t.push('\n');
        t
    } else {
        rep.text()
    };
    emit(&mut std::io::stdout().lock(), &text)?;
    drop(sinks);
    if let Err(e) = crate::record::sink::finish(&a.record) {
        eprintln!("noisetop: {e:#}");
        if status.success() {
            return Ok(ExitCode::FAILURE);
        }
    }
    Ok(match (status.code(), rep.signal) {
        (Some(c), _) => ExitCode::from(u8::try_from(c).unwrap_or(1)),
        (None, Some(sig)) => ExitCode::from(128u8.saturating_add(u8::try_from(sig).unwrap_or(0))),
        (None, None) => ExitCode::FAILURE,
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
        } else if crate::sys::may_execute(p) {
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

/// Forwards the terminating signals noisetop gets to the command, which
/// decides when the run ends; closed when the command has exited.
fn forward_signals(pid: u32) -> Result<signal_hook::iterator::Handle> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP, SIGQUIT])
        .context("cannot install signal handlers")?;
    let handle = signals.handle();
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                let _ = crate::sys::kill(pid, sig);
            }
        })
        .context("cannot start a thread")?;
    Ok(handle)
}

/// Migrations of every thread of `pid` so far: the sum of the scheduler's
/// `se.nr_migrations` in /proc/PID/task/*/sched (`None` when unreadable).
fn task_migrations(pid: u32) -> Option<u64> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut total = None;
    for t in tasks.flatten() {
        let Ok(text) = crate::source::read_small(&t.path().join("sched"), 1 << 16) else {
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
