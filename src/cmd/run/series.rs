//! `run --repeat N [--warmup K] -- CMD`: the command run N times on the
//! same watched CPUs, each run with the noise it met, then the series
//! judged ([`analysis`]) and reported ([`outcome`]).
//!
//! Before each run noisetop waits for the CPUs to be idle ([`super::settle`]).
//! A signal is handed on to the run in progress and ends the series after
//! it: the runs done are reported and that run is not. A run that fails
//! stops the series with its exit status, unless `--ignore-failure`.

pub(crate) mod analysis;
pub(crate) mod outcome;
pub(crate) mod outliers;
pub(crate) mod repetition;
pub(crate) mod spread;
pub(crate) mod stability;
#[cfg(test)]
mod tests;

use std::path::Path;

use anyhow::Result;

use super::output::Output;
use super::session::Session;
use super::settle::{self, IDLE_BELOW_PCT};
use super::signals::Forwarder;
use crate::base::cpulist;
use crate::cli::RunArgs;
use crate::model::machine::Machine;
use outcome::{CheckItem, SeriesReport, Warmup};
use repetition::{Culprit, Repetition};

/// `check`'s WARN and FAIL items for the command's CPUs.
pub fn check_items(cpus: &[u32], cfg: &crate::noise::config::CheckConfig) -> Vec<CheckItem> {
    let mut fs = crate::os::fs::Fs::new(crate::os::fs::Roots::default());
    let facts = crate::check::facts::CheckFacts::read(&mut fs);
    crate::check::rules(&facts, cpus, cfg)
        .into_iter()
        .filter(|r| {
            matches!(
                r.status,
                crate::check::Outcome::Warn | crate::check::Outcome::Fail
            )
        })
        .map(|r| CheckItem {
            id: r.id.to_string(),
            status: r.status.label().to_string(),
            title: r.title.to_string(),
            fix: r.fix,
        })
        .collect()
}

/// The exit status a run ended with, as a shell gives it (128 + signal).
fn status_code(exit: Option<i32>, signal: Option<i32>) -> u8 {
    match (exit, signal) {
        (Some(c), _) => u8::try_from(c).unwrap_or(1),
        (None, Some(s)) => 128u8.saturating_add(u8::try_from(s).unwrap_or(0)),
        (None, None) => 1,
    }
}

/// What to do about a culprit that came back: move a task that can move
/// to `house`; set the CPUs apart at boot for what cannot (a per-CPU
/// kernel thread, a task gone, interrupts); the host's steal is not this
/// machine's to fix.
fn fix_for(c: &Culprit, house: &[u32], cpus: &[u32], machine: &Machine) -> String {
    let proc = Path::new("/proc");
    match c {
        Culprit::Task { pid, cpus: on, .. } => {
            let movable =
                crate::os::tasks::alive(proc, *pid) && !crate::pipeline::trace::bound(proc, *pid);
            if movable && !house.is_empty() {
                format!("taskset -apc {} {pid}", cpulist::format(house))
            } else {
                crate::noise::isolate_cpus(machine, on)
            }
        }
        Culprit::Interrupts { .. } => format!(
            "{}; device IRQs off them: `noisetop check --cpus {}` gives the commands",
            crate::noise::isolate_cpus(machine, cpus),
            cpulist::format(cpus)
        ),
        Culprit::Host { .. } => "the hypervisor ran others on this VM's CPUs: ask for dedicated \
                                 (pinned) vCPUs"
            .to_string(),
    }
}

/// Everything the series needs besides the session.
pub struct Plan<'a> {
    /// The arguments.
    pub args: &'a RunArgs,
    /// The check's items (`None`: `--no-check`).
    pub check: Option<Vec<CheckItem>>,
    /// The machine, for the fixes.
    pub machine: &'a Machine,
    /// The CPUs noisetop and the tasks moved off run on.
    pub house: Vec<u32>,
}

/// Runs the series and writes its report; returns noisetop's exit status.
pub fn run(
    p: &Plan<'_>,
    session: &mut Session,
    signals: &Forwarder,
    output: &mut Output,
) -> Result<u8> {
    let a = p.args;
    let s = &a.series;
    let repeat = s.repeat.unwrap_or(1);
    let cpus = session.cpus.clone();
    let mut report = SeriesReport {
        command: a
            .command
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect(),
        cpus: cpus.clone(),
        check: p.check.clone(),
        repeat,
        warmup: Vec::new(),
        settle_limit_s: s.settle.as_secs_f64(),
        settle_idle_below_pct: IDLE_BELOW_PCT,
        runs: Vec::new(),
        analysis: analysis::analyse(&mut [], &cpus, s.ignore_failure, &|_| String::new()),
        ignore_failure: s.ignore_failure,
        time_alone_how: super::alone::HOW,
        trace_missing: None,
        ended: String::new(),
        exit_code: 0,
    };
    // the check comes first, before any run, where the report is read as
    // it comes (text on standard output)
    let check_first = output.is_stdout() && !a.json;
    if check_first {
        output.write(&report.head_text())?;
    }
    let stopped = || signals.caught().is_some();
    let settle_now = || {
        if s.settle.is_zero() {
            None
        } else {
            Some(settle::settle(&cpus, s.settle, &stopped))
        }
    };
    let mut ended: Option<(String, u8)> = None;
    for w in 1..=s.warmup {
        settle_now();
        if let Some(sig) = signals.caught() {
            ended = Some((
                format!("stopped by signal {sig} before the first run"),
                status_code(None, Some(sig)),
            ));
            break;
        }
        if let Some(r) = session.record.as_mut() {
            r.set_repetition(None);
        }
        let ran = session.run(&a.command, signals)?;
        let f = &ran.report.facts;
        report.warmup.push(Warmup {
            wall_s: f.seconds,
            exit_code: f.exit,
            signal: f.signal,
        });
        if let Some(sig) = signals.caught() {
            ended = Some((
                format!("stopped by signal {sig} during warm-up run {w}"),
                status_code(None, Some(sig)),
            ));
            break;
        }
        if f.exit != Some(0) && !s.ignore_failure {
            let code = status_code(f.exit, f.signal);
            ended = Some((
                format!("warm-up run {w} failed (exit status {code}): the series stopped"),
                code,
            ));
            break;
        }
    }
    for run in 1..=repeat {
        if ended.is_some() {
            break;
        }
        let settled = settle_now();
        if let Some(sig) = signals.caught() {
            ended = Some((
                format!(
                    "stopped by signal {sig} before run {run}: {} runs done",
                    run - 1
                ),
                status_code(None, Some(sig)),
            ));
            break;
        }
        if let Some(r) = session.record.as_mut() {
            r.set_repetition(Some(run));
        }
        let ran = session.run(&a.command, signals)?;
        report
            .trace_missing
            .clone_from(&ran.report.facts.trace_missing);
        if let Some(sig) = signals.caught() {
            ended = Some((
                format!(
                    "stopped by signal {sig} during run {run}: the {} runs done are reported, \
                     run {run} is not",
                    run - 1
                ),
                status_code(None, Some(sig)),
            ));
            break;
        }
        let rep = Repetition::of(run, &ran.report, ran.started, ran.ended, settled);
        let failed = !rep.succeeded();
        let code = status_code(rep.exit_code, rep.signal);
        report.runs.push(rep);
        if failed && !s.ignore_failure {
            // 127 and 126 are what the trampoline gives a command it cannot
            // start, with the reason on standard error
            let why = if matches!(code, 126 | 127) {
                ": the command was not found or could not be started, as said above"
            } else {
                ""
            };
            ended = Some((
                format!(
                    "run {run} failed (exit status {code}{why}): the series stopped \
                     (--ignore-failure goes on)"
                ),
                code,
            ));
            break;
        }
    }
    let (words, code) = ended.unwrap_or_else(|| (format!("all {repeat} runs done"), 0));
    report.ended = words;
    report.exit_code = code;
    let fix = |c: &Culprit| fix_for(c, &p.house, &cpus, p.machine);
    report.analysis = analysis::analyse(&mut report.runs, &cpus, s.ignore_failure, &fix);
    let text = if a.json {
        let mut t = serde_json::to_string_pretty(&report)?;
        t.push('\n');
        t
    } else {
        report.text(!check_first)
    };
    output.write(&text)?;
    Ok(code)
}
