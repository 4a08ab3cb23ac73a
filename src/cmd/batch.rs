//! `--batch`, `capture` and `replay`: the pipeline printed as text tables.

use std::io::Write as _;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::cli::Opts;
use crate::engine::Engine;
use crate::interval::Interval;
use crate::machine::Machine;
use crate::output::batch;
use crate::sampler::Sampler;
use crate::source::capture::{self, Captured, Recorder};
use crate::source::fs::{Fs, Roots};
use crate::source::live::LiveHw;
use crate::stop::Stop;

/// Prints one interval: a header line with the time, then the table.
fn print_interval(
    out: &mut impl std::io::Write,
    iv: &Interval,
    opts: &Opts,
) -> std::io::Result<()> {
    let secs = iv.to.wall_ns / 1_000_000_000;
    writeln!(
        out,
        "# t={}.{:03} dt={:.3}s",
        secs,
        (iv.to.wall_ns / 1_000_000) % 1000,
        iv.dt_s
    )?;
    if let Some(note) = crate::interval::clock_note(iv.from, iv.to) {
        writeln!(out, "# {note}")?;
    }
    let sel = opts.cpus.as_ref().map(|c| c.0.as_slice());
    out.write_all(batch::table(iv, sel).as_bytes())
}

/// Runs on the live machine; prints tables when `print`, captures with `--capture`.
pub fn live(opts: &Opts, print: bool) -> Result<()> {
    let roots = crate::cmd::roots(opts);
    let mut fs = Fs::new(roots.clone());
    if let Some(dir) = &opts.capture {
        prepare_capture_dir(dir)?;
        fs.set_tee(Some(capture::instant_dir(dir, 0)));
    }
    let machine = Machine::read(&mut fs);
    let hw = LiveHw::open(&machine, &roots, crate::cmd::live_options(opts));
    let stop = Stop::on_signals().context("cannot install signal handlers")?;
    let count = opts.count.unwrap_or(u64::MAX);
    let mut engine = Engine::new(Sampler::with_machine(fs, machine, Recorder::new(hw)));
    if let Some(files) = opts.budget {
        engine.sampler.set_budget(files);
    }
    if let Some(w) = &opts.watch {
        engine.sampler.set_always(&w.0);
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let start = Instant::now();
    let mut footer_done = false;
    for i in 0..=count {
        if i > 0 {
            let deadline = start + opts.interval.mul_f64(i as f64);
            if stop.sleep_until(deadline) {
                break;
            }
        }
        if let Some(dir) = &opts.capture {
            engine
                .sampler
                .fs
                .set_tee(Some(capture::instant_dir(dir, i as usize)));
        }
        let iv = engine.step();
        if let Some(dir) = &opts.capture {
            engine
                .sampler
                .hw
                .flush(&capture::instant_dir(dir, i as usize))
                .with_context(|| format!("cannot write capture to {}", dir.display()))?;
            if i == 0 {
                let always = opts
                    .watch
                    .as_ref()
                    .map(|w| w.0.as_slice())
                    .unwrap_or_default();
                let budget = engine.sampler.budget();
                capture::write_budget(&capture::instant_dir(dir, 0), budget, always)
                    .with_context(|| format!("cannot write capture to {}", dir.display()))?;
            }
        }
        if let (Some(iv), true) = (iv, print) {
            if print_interval(&mut out, &iv, opts).is_err() {
                // stdout closed (a pipe into head): stop quietly
                return Ok(());
            }
            if !footer_done {
                let _ = out.write_all(batch::footer(&engine.statuses()).as_bytes());
                footer_done = true;
            }
            let _ = out.flush();
        }
    }
    if let (Some(dir), false) = (&opts.capture, print) {
        eprintln!("capture written to {}", dir.display());
    }
    Ok(())
}

fn prepare_capture_dir(dir: &Path) -> Result<()> {
    if dir.exists() {
        let mut entries =
            std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))?;
        if entries.next().is_some() {
            bail!(
                "{} is not empty: a capture needs a new or empty folder",
                dir.display()
            );
        }
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))
}

/// Opens a capture for replay: the sampler reads instant 0's facts.
pub fn open_replay(dir: &Path) -> Result<(Vec<std::path::PathBuf>, Engine<Captured>)> {
    let instants = capture::instants(dir)
        .with_context(|| format!("cannot read capture folder {}", dir.display()))?;
    let Some(first) = instants.first() else {
        bail!(
            "{} holds no instants (0000/, 0001/, …): was it made by `noisetop capture`?",
            dir.display()
        );
    };
    let hw = Captured::load(first).map_err(anyhow::Error::msg)?;
    let mut fs = Fs::new(Roots::under(first));
    fs.set_keep_open(false);
    let mut sampler = Sampler::new(fs, hw);
    // replay reads the rounds the capture read
    if let Some(files) = capture::read_budget(first) {
        sampler.set_budget(files);
    }
    sampler.set_always(&capture::read_always(first));
    Ok((instants, Engine::new(sampler)))
}

/// Moves a replay engine to instant `dir` (instant 0 is already loaded).
pub fn advance(engine: &mut Engine<Captured>, dir: &Path) -> Result<()> {
    engine.sampler.fs.set_roots(Roots::under(dir));
    engine.sampler.hw = Captured::load(dir).map_err(anyhow::Error::msg)?;
    Ok(())
}

/// Replays a capture; prints the same tables the live run printed.
pub fn replay(opts: &Opts, dir: &Path) -> Result<()> {
    let (instants, mut engine) = open_replay(dir)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut footer_done = false;
    let count = opts.count.unwrap_or(u64::MAX);
    let mut printed = 0;
    for (i, inst) in instants.iter().enumerate() {
        if i > 0 {
            advance(&mut engine, inst)?;
        }
        if let Some(iv) = engine.step() {
            if printed >= count {
                break;
            }
            if print_interval(&mut out, &iv, opts).is_err() {
                return Ok(());
            }
            printed += 1;
            if !footer_done {
                let _ = out.write_all(batch::footer(&engine.statuses()).as_bytes());
                footer_done = true;
            }
        }
    }
    Ok(())
}
