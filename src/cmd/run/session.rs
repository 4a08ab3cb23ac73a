//! One run of the command, watched: what is set up once (the driver, the
//! recording, noisetop moved off the command's CPUs) and what each run
//! does (start the command pinned, sample while it runs, sum what its
//! CPUs saw, read its tasks' waits before it is reaped).

use std::ffi::OsString;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::Serialize;

use super::seen::{Accumulator, RunFacts, RunReport};
use super::signals::Forwarder;
use super::waits::{self, Waits};
use crate::cmd::record_sink::RecordSink;
use crate::os::stop::Stop;
use crate::pipeline::control::Control;
use crate::pipeline::live::{self, Live};
use crate::pipeline::setup::AnyHw;
use crate::pipeline::{Driver, Flow, Msg, Sink, Step};

/// An instant on both clocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Stamp {
    /// `CLOCK_MONOTONIC`, ns.
    pub mono_ns: u64,
    /// The wall clock, ns since the epoch.
    pub wall_ns: u64,
}

impl Stamp {
    /// Now.
    pub fn now() -> Stamp {
        let wall_ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        Stamp {
            mono_ns: crate::os::sys::monotonic_ns(),
            wall_ns,
        }
    }
}

/// What stays set up from one run to the next.
pub struct Session {
    /// The pipeline, watching the command's CPUs.
    pub driver: Driver<AnyHw>,
    /// `--record`, when asked for.
    pub record: Option<RecordSink>,
    /// The command's CPUs.
    pub cpus: Vec<u32>,
    /// `--interval`.
    pub interval: Duration,
    /// The shortest last (partial) interval counted, s: a single run
    /// leaves out a few milliseconds whose rates no threshold can judge; a
    /// series counts every one (its figures are sums of time).
    pub min_last_s: f64,
}

/// One run, done.
pub struct Ran {
    /// What its CPUs saw, and its bottom line.
    pub report: RunReport,
    /// How it ended.
    pub status: ExitStatus,
    /// When it was started.
    pub started: Stamp,
    /// When it was seen to end.
    pub ended: Stamp,
}

/// Context switches of the children waited for so far (both kinds).
fn reaped_switches() -> Option<(u64, u64)> {
    crate::os::sys::children_switches()
}

impl Session {
    /// Runs `command` once on the session's CPUs and reports what they saw.
    pub fn run(&mut self, command: &[OsString], signals: &Forwarder) -> Result<Ran> {
        // the window before is not the run's: cut it here, so the command's
        // first milliseconds fall in its first interval
        let _ = self.driver.step();
        let first_at = Instant::now();
        let cpu_before = crate::os::sys::children_cpu_ns();
        let csw_before = reaped_switches();
        let program = &command[0];
        let spawned = crate::os::sys::spawn_pinned(program, &command[1..], &self.cpus);
        let mut child =
            spawned.with_context(|| format!("cannot run {}", program.to_string_lossy()))?;
        let pid = child.id();
        let t0 = Instant::now();
        let started = Stamp::now();
        signals.follow(pid);
        self.driver.set_owners(vec![pid]);

        let stop = Stop::new();
        let live_opts = Live {
            control: Arc::new(Control::new(self.interval)),
            stop: stop.clone(),
            count: None,
        };
        let waits = Mutex::new(Waits::new(std::path::Path::new("/proc"), pid));
        let mut acc = Accumulator::new(&self.cpus);
        let mut migrations: Option<u64> = None;
        let mut final_migrations: Option<u64> = None;
        let mut own_ipis = Some(Err(crate::base::Unavailable::new(
            crate::base::Cause::Failed,
            "no interval was taken",
        )));
        let interval = self.interval;
        let (driver, record) = (&mut self.driver, &mut self.record);
        let (status, ended, seconds) = std::thread::scope(|sc| -> Result<_> {
            let sampler = sc.spawn(|| {
                let mut out = |m: Msg| {
                    if let Msg::Sample(s) = m {
                        acc.add(&s);
                        if let Some(r) = record.as_mut() {
                            // a failed write is said once by the recorder
                            let _ = r.accept(&s);
                        }
                        own_ipis.clone_from(&s.own_ipis);
                        // read while it runs: once reaped, its counts are gone
                        if let Some(n) = super::task_migrations(pid) {
                            migrations = Some(migrations.map_or(n, |m| m.max(n)));
                        }
                        waits.lock().unwrap_or_else(PoisonError::into_inner).read();
                    }
                    Flow::Continue
                };
                // the first interval runs from the cut before the command
                // started; a command over by then ends in the partial one
                let first_due = first_at + interval;
                if !stop.sleep_until_woken(|| first_due) {
                    let none: &mut [Box<dyn Sink>] = &mut [];
                    live::run(driver, &live_opts, none, None, &mut out);
                }
            });
            // ended, not yet reaped: its leader's last waits are there
            let ended = crate::os::sys::wait_ended(pid);
            let seconds = t0.elapsed().as_secs_f64();
            let ended_at = Stamp::now();
            if ended.is_ok() {
                waits.lock().unwrap_or_else(PoisonError::into_inner).read();
                // a run shorter than an interval was never sampled
                if let Some(n) = super::task_migrations(pid) {
                    final_migrations = Some(n);
                }
            }
            let status = child.wait();
            stop.stop();
            let _ = sampler.join();
            Ok((status?, ended_at, seconds))
        })?;
        signals.follow(0);
        let migrations = match (migrations, final_migrations) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        // the last, partial interval: from the last sample to the command's
        // end. The recording gets exactly what the report counts (`dt_s`
        // says how long).
        if let Step::Sample(s) = self.driver.step() {
            own_ipis.clone_from(&s.own_ipis);
            if s.interval.dt_s >= self.min_last_s && s.interval.dt_s > 0.0 {
                if let Some(r) = self.record.as_mut() {
                    let _ = r.accept(&s);
                }
                acc.add(&s);
            }
        }
        let cpu_ns = crate::os::sys::children_cpu_ns()
            .zip(cpu_before)
            .map(|(a, b)| a.saturating_sub(b));
        let switches = reaped_switches()
            .zip(csw_before)
            .map(|(a, b)| (a.0.saturating_sub(b.0), a.1.saturating_sub(b.1)));
        let facts = RunFacts {
            command: command
                .iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect(),
            pid,
            cpus: self.cpus.clone(),
            seconds,
            exit: status.code(),
            signal: std::os::unix::process::ExitStatusExt::signal(&status),
            command_switches: switches,
            command_migrations: migrations,
            trace_missing: self.driver.trace_missing().map(ToString::to_string),
            command_cpu_ns: cpu_ns,
            others_limit_pct: self.driver.config().watched.intruder_pct
                + self.driver.config().watched.stolen_pct,
            own_ipis: own_ipis.clone().and_then(Result::ok),
            own_ipis_missing: own_ipis.and_then(Result::err),
        };
        let mut report = acc.report(facts);
        let waits = waits.into_inner().unwrap_or_else(PoisonError::into_inner);
        report.estimate_alone(waits::seen_ns(&waits, cpu_ns));
        Ok(Ran {
            report,
            status,
            started,
            ended,
        })
    }
}
