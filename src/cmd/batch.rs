//! `--batch`, `capture` and `replay --batch`: the pipeline printed as text
//! tables, each followed by its verdicts and findings as `#` lines.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::cli::{LiveArgs, RecordArgs, SampleArgs, SourceArgs};
use crate::cmd::out::emit;
use crate::model::machine::Machine;
use crate::noise::config::NoiseConfig;
use crate::os::capture::{self, CaptureRecorder};
use crate::os::fs::Fs;
use crate::os::hw::Hardware;
use crate::os::stop::Stop;
use crate::output::{batch, judged};
use crate::pipeline::control::Control;
use crate::pipeline::live::{self, End, Hook, HookError, Live, Phase};
use crate::pipeline::setup::{AnyHw, TraceHow, Tree};
use crate::pipeline::{Driver, Flow, Msg, Sample, Sink, kept_trace, replay};

/// Prints one interval: a header line with the time, the table, then the
/// verdicts and findings as `#` lines.
fn interval_text(s: &Sample, cpus: Option<&[u32]>) -> String {
    let iv = &s.interval;
    let secs = iv.to.wall_ns / 1_000_000_000;
    let mut text = format!(
        "# t={}.{:03} dt={:.3}s\n",
        secs,
        (iv.to.wall_ns / 1_000_000) % 1000,
        iv.dt_s
    );
    if let Some(note) = crate::model::interval::clock_note(iv.from, iv.to) {
        text.push_str("# ");
        text.push_str(&note);
        text.push('\n');
    }
    text.push_str(&batch::table(iv, cpus));
    text.push_str(&judged::lines(&s.judgement, cpus));
    text.push_str(&judged::runq_lines(s.trace.as_ref(), cpus));
    for n in &s.notes {
        let _ = writeln!(text, "# {n}");
    }
    text
}

/// The consumer that prints: the footer after the first table; remembers
/// a write error for the caller.
struct Printer {
    cpus: Option<Vec<u32>>,
    footer_done: bool,
    failed: Option<anyhow::Error>,
    /// Printed once before the first table.
    preface: Option<String>,
}

impl Printer {
    fn new(cpus: Option<Vec<u32>>, preface: Option<String>) -> Self {
        Printer {
            cpus,
            footer_done: false,
            failed: None,
            preface,
        }
    }

    fn take(&mut self, m: Msg) -> Flow {
        let Msg::Sample(s) = m else {
            return Flow::Continue;
        };
        let mut text = self.preface.take().unwrap_or_default();
        text.push_str(&interval_text(&s, self.cpus.as_deref()));
        if !self.footer_done {
            text.push_str(&batch::footer(&s.statuses));
            self.footer_done = true;
        }
        let stdout = std::io::stdout();
        match emit(&mut stdout.lock(), &text) {
            Ok(f) => f,
            Err(e) => {
                self.failed = Some(e);
                Flow::Stop
            }
        }
    }

    fn finish(self) -> Result<()> {
        match self.failed {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// What `replay` takes besides the folder.
#[derive(Debug, Clone)]
pub struct ReplayOpts {
    /// Stop after this many intervals.
    pub count: Option<u64>,
    /// Only show these CPUs.
    pub cpus: Option<Vec<u32>>,
    /// Watched CPUs instead of the capture's.
    pub watch: Option<Vec<u32>>,
    /// Thresholds.
    pub config: NoiseConfig,
    /// A CSV log of the replay.
    pub record: RecordArgs,
    /// No summary of that log at the end.
    pub quiet: bool,
}

/// The sinks besides the printer or the screen: the CSV recorder.
pub fn sinks(
    record: &RecordArgs,
    machine: &Machine,
    interval: std::time::Duration,
    watched: &[u32],
) -> Result<Vec<Box<dyn Sink>>> {
    use crate::record::writer::RecordError;
    let rec = crate::cmd::record_sink::open(record, machine, interval, watched).map_err(|e| {
        // what the command line asked for cannot be done: a usage error,
        // as the same mistake is said before anything starts
        match e {
            RecordError::Io { .. } => anyhow::Error::from(e),
            _ => crate::cmd::UsageError(e.to_string()).into(),
        }
    })?;
    Ok(rec
        .map(|r| Box::new(r) as Box<dyn Sink>)
        .into_iter()
        .collect())
}

/// `noisetop --batch`: tables on the live machine (or `--root`), captured
/// too with `--capture`.
pub fn live(a: &LiveArgs) -> Result<()> {
    sample_live(
        &a.source,
        &a.sample,
        a.watch.watch.as_ref().map(|w| w.0.clone()),
        a.watch.owner.clone(),
        a.watch.pin.is_some(),
        a.capture.as_deref(),
        Some(a),
    )
}

/// `noisetop capture DIR`: every raw input of N+1 instants, nothing printed.
pub fn capture(
    dir: &Path,
    sample: &SampleArgs,
    watch: Option<Vec<u32>>,
    owners: Vec<u32>,
    source: &SourceArgs,
) -> Result<()> {
    sample_live(source, sample, watch, owners, false, Some(dir), None)?;
    eprintln!("capture written to {}", dir.display());
    Ok(())
}

fn sample_live(
    source: &SourceArgs,
    sample: &SampleArgs,
    watch: Option<Vec<u32>>,
    owners: Vec<u32>,
    pinned: bool,
    capture_dir: Option<&Path>,
    print: Option<&LiveArgs>,
) -> Result<()> {
    let watched = watch.unwrap_or_default();
    // like the dashboard: the work of sampling stays off the benchmark
    crate::cmd::keep_off(&watched, pinned)?;
    let roots = crate::cmd::roots(source);
    let mut fs = Fs::new(roots.clone());
    if let Some(dir) = capture_dir {
        prepare_capture_dir(dir)?;
        fs.set_tee(Some(capture::instant_dir(dir, 0)));
    }
    let machine = Machine::read(&mut fs);
    crate::cmd::check_cpus("--watch", &watched, &machine)?;
    if let Some(c) = print.and_then(|a| a.cpus.as_ref()) {
        crate::cmd::check_cpus("--cpus", &c.0, &machine)?;
    }
    let config = crate::cmd::load_config(print.and_then(|a| a.watch.config.as_deref()))?;
    let how = print.map_or(TraceHow::Best, |a| TraceHow::from_flag(a.watch.no_trace));
    let setup = crate::cmd::driver_for(source)
        .watching(&watched)
        .owners(owners)
        .trace(how)
        .budget(sample.budget)
        .config(config);
    let sinks = match print {
        Some(a) => sinks(&a.record, &machine, sample.interval, &watched)?,
        None => Vec::new(),
    };
    let preface = match setup.tree() {
        Tree::Foreign(why) => Some(format!("# foreign tree: {why}\n")),
        _ => None,
    };
    let printer = print.map(|a| Printer::new(a.cpus.as_ref().map(|c| c.0.clone()), preface));
    let stop = Stop::on_signals().context("cannot install signal handlers")?;
    let live = Live {
        control: std::sync::Arc::new(Control::new(sample.interval)),
        stop,
        count: Some(sample.count.unwrap_or(u64::MAX)),
    };
    let r = if let Some(dir) = capture_dir {
        let (mut driver, kept) = setup
            .build_capture(fs, machine)
            .map_err(anyhow::Error::msg)?;
        let dir = dir.to_path_buf();
        let always = watched.clone();
        let mut hook =
            move |p: Phase, d: &mut Driver<CaptureRecorder<AnyHw>>| -> Result<(), HookError> {
                capture_step(p, d, &dir, &always, kept.as_ref())
            };
        go(&mut driver, &live, sinks, Some(&mut hook), printer)
    } else {
        let mut driver = setup.build(fs, machine).map_err(anyhow::Error::msg)?;
        go(&mut driver, &live, sinks, None, printer)
    };
    if let Some(a) = print {
        crate::cmd::record_sink::print_summary(&a.record, a.summary.quiet, true);
        r?;
        return crate::cmd::record_sink::finish(&a.record);
    }
    r
}

fn go<H: Hardware>(
    driver: &mut Driver<H>,
    live: &Live,
    mut sinks: Vec<Box<dyn Sink>>,
    hook: Option<Hook<'_, H>>,
    printer: Option<Printer>,
) -> Result<()> {
    let mut printer = printer;
    let mut out = |m: Msg| match &mut printer {
        Some(p) => p.take(m),
        None => Flow::Continue,
    };
    let end = live::run(driver, live, &mut sinks, hook, &mut out);
    if let Some(p) = printer {
        p.finish()?;
    }
    match end {
        End::Failed(e) => bail!(e),
        _ => Ok(()),
    }
}

/// Before instant `i`: tee every kernel file read into its folder; after
/// it: write the hardware tables (and, at 0, the budget and watched CPUs).
fn capture_step(
    p: Phase,
    d: &mut Driver<CaptureRecorder<AnyHw>>,
    dir: &Path,
    always: &[u32],
    kept: Option<&kept_trace::Kept>,
) -> Result<(), HookError> {
    let s = &mut d.engine.sampler;
    let failed = |err| HookError {
        what: format!("cannot write capture to {}", dir.display()),
        err,
    };
    match p {
        Phase::Before(i) => s.fs.set_tee(Some(capture::instant_dir(dir, i as usize))),
        Phase::After(i) => {
            let inst: PathBuf = capture::instant_dir(dir, i as usize);
            s.hw.flush(&inst).map_err(failed)?;
            if let Some(k) = kept {
                kept_trace::write(k, &inst).map_err(failed)?;
            }
            if i == 0 {
                capture::write_budget(&inst, s.budget(), always).map_err(failed)?;
            }
        }
    }
    Ok(())
}

fn prepare_capture_dir(dir: &Path) -> Result<()> {
    crate::cmd::check_new_folder("capture", dir)?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))
}

/// Opens a capture for `replay` with the options' watched CPUs (else the
/// capture's) and thresholds; refuses CPUs the capture does not have.
pub fn open_replay(dir: &Path, o: &ReplayOpts) -> Result<(replay::Replay, Machine)> {
    let mut r = replay::open(dir)?;
    let machine = r.driver.engine.sampler.machine.clone();
    if let Some(w) = &o.watch {
        crate::cmd::check_cpus("--watch", w, &machine)?;
        r.driver.set_watched(w);
    }
    if let Some(c) = &o.cpus {
        crate::cmd::check_cpus("--cpus", c, &machine)?;
    }
    r.driver = r.driver.with_config(o.config.clone());
    Ok((r, machine))
}

/// `noisetop replay DIR --batch`: prints the same tables the live run printed.
pub fn replay(dir: &Path, o: &ReplayOpts) -> Result<()> {
    let (mut r, machine) = open_replay(dir, o)?;
    let driver = &mut r.driver;
    let interval = std::time::Duration::from_secs(1);
    let mut sinks = sinks(&o.record, &machine, interval, driver.watched())?;
    let mut printer = Printer::new(o.cpus.clone(), None);
    let mut out = |m: Msg| printer.take(m);
    let end = replay::run(&r.instants, driver, o.count, &mut sinks, &mut out);
    printer.finish()?;
    let _ = std::io::stdout().flush();
    drop(sinks);
    crate::cmd::record_sink::print_summary(&o.record, o.quiet, true);
    match end {
        End::Failed(e) => bail!(e),
        _ => crate::cmd::record_sink::finish(&o.record),
    }
}
