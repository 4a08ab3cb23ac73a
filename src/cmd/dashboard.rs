//! `noisetop` and `noisetop replay DIR` on a terminal: builds the engine,
//! keeps noisetop off the watched CPUs, starts the sampler thread, and owns
//! the terminal's lifecycle (raw mode and alternate screen in, restored on
//! quit, error, panic — ratatui's hook — and SIGINT/SIGTERM/SIGHUP).

use std::io::IsTerminal as _;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::cli::LiveArgs;
use crate::cmd::batch::ReplayOpts;
use crate::cmd::housekeeping;
use crate::model::machine::Machine;
use crate::os::fs::Fs;
use crate::os::stop::Stop;
use crate::pipeline::control::Control;
use crate::pipeline::live::{self, Live};
use crate::pipeline::replay;
use crate::pipeline::setup::{TraceHow, Tree};
use crate::tui::run::{SystemClock, TerminalInput, Wiring};
use crate::tui::state::{Origin, State};
use crate::tui::theme::Theme;

/// Fails with a message that points to `--batch` when stdout is no terminal.
fn require_terminal() -> Result<()> {
    if std::io::stdout().is_terminal() {
        Ok(())
    } else {
        bail!("stdout is not a terminal; use --batch for text output")
    }
}

/// Wakes the terminal wait of the calling (screen) thread when a signal
/// sets `stop`: SIGWINCH sent to that thread interrupts its `poll`.
fn wake_on_stop(stop: &Stop) -> Result<()> {
    let s = stop.clone();
    let screen = crate::os::sys::current_thread();
    std::thread::Builder::new()
        .name("stop-waker".into())
        .spawn(move || {
            let far = Instant::now() + Duration::from_secs(10 * 365 * 86_400);
            if s.sleep_until(far) {
                crate::os::sys::interrupt_thread(screen);
            }
        })
        .context("cannot start a thread")?;
    Ok(())
}

fn state_for(
    machine: Machine,
    origin: Origin,
    interval: Duration,
    watched: &[u32],
    only: Option<Vec<u32>>,
    config: crate::noise::config::NoiseConfig,
) -> State {
    let no_color = std::env::var("NO_COLOR").ok();
    State::new(machine, origin, interval, Theme::new(no_color.as_deref()))
        .with_watched(watched.to_vec())
        .with_only(only)
        .with_config(config)
}

/// Runs the loop between `ratatui::init` and `ratatui::restore`.
fn on_terminal(state: &mut State, wiring: &mut Wiring<'_>) -> Result<()> {
    wake_on_stop(&wiring.stop)?;
    let mut terminal = ratatui::try_init().context("cannot set up the terminal")?;
    crate::tui::restore::on_panic();
    crate::os::stop::before_forced_exit(crate::tui::restore::leave_if_raw);
    let r = crate::tui::run::run(
        &mut terminal,
        state,
        wiring,
        &mut TerminalInput,
        &SystemClock,
    );
    crate::tui::restore::leave();
    wiring.stop.stop();
    Ok(r?)
}

/// Opens the dashboard on the running machine.
pub fn live(a: &LiveArgs) -> Result<()> {
    let saved_at = (!a.no_state)
        .then(crate::tui::saved::default_path)
        .flatten();
    let saved = saved_at.as_deref().and_then(|p| {
        crate::tui::saved::Saved::load(p)
            .map_err(|e| eprintln!("noisetop: {e}; starting without it"))
            .ok()
            .flatten()
    });
    let mut watched = a
        .watch
        .watch
        .as_ref()
        .map(|w| w.0.clone())
        .unwrap_or_default();
    // without --pin, noisetop leaves the watched CPUs to the benchmark
    let pinned = a.watch.pin.is_some();
    let roots = crate::cmd::roots(&a.source);
    let mut fs = Fs::new(roots.clone());
    let machine = Machine::read(&mut fs);
    crate::cmd::check_cpus("--watch", &watched, &machine)?;
    // --watch wins; else the CPUs watched last time that are online now
    if a.watch.watch.is_none()
        && let Some(sv) = &saved
    {
        watched = sv.watch_on(&machine.online);
    }
    let affinity = crate::cmd::keep_off(&watched, pinned)?;
    if let Some(c) = &a.cpus {
        crate::cmd::check_cpus("--cpus", &c.0, &machine)?;
    }
    let config = crate::cmd::load_config(a.watch.config.as_deref())?;
    // after the arguments: a wrong one is said as such, terminal or not
    require_terminal()?;
    let setup = crate::cmd::driver_for(&a.source)
        .watching(&watched)
        .owners(a.watch.owner.clone())
        .trace(TraceHow::from_flag(a.watch.no_trace))
        .budget(a.sample.budget)
        .config(config.clone());
    let tree = setup.tree().clone();
    let sinks = crate::cmd::batch::sinks(&a.record, &machine, a.sample.interval, &watched)?;
    crate::cmd::record_sink::hold_errors_until_end();
    let driver = setup
        .build(fs, machine.clone())
        .map_err(anyhow::Error::msg)?;
    let stop = Stop::on_signals().context("cannot install signal handlers")?;
    let control = Arc::new(Control::new(a.sample.interval));
    let (tx, rx) = live::channel();
    let live_opts = Live {
        control: control.clone(),
        stop: stop.clone(),
        count: a.sample.count,
    };
    let sampler =
        live::spawn(driver, live_opts, sinks, tx).context("cannot start the sampler thread")?;
    let mut state = state_for(
        machine,
        Origin::Live,
        a.sample.interval,
        &watched,
        a.cpus.as_ref().map(|c| c.0.clone()),
        config,
    );
    if let Tree::Foreign(why) = &tree {
        state = state.with_foreign(why.clone());
    }
    // the last probe measured this machine: a foreign tree gets none
    if matches!(tree, Tree::Live) {
        state = state.with_probe(crate::probe::sinks::load_last());
    }
    let ctl = control.clone();
    let mut wiring = Wiring {
        feed: rx,
        stop,
        control: Some(control),
        on_watched: Box::new(move |w: &[u32]| {
            ctl.request_watch(w.to_vec());
            if pinned {
                return;
            }
            if let Some(h) = housekeeping(&affinity, w) {
                // every thread, the sampler's included, before it reads
                let _ = crate::os::sys::pin_all(&h);
                ctl.request_pin(h);
            }
        }),
        measure_self: true,
    };
    if let Some(sv) = &saved {
        state = sv.apply(state);
    }
    if a.show.is_some() || a.hide.is_some() {
        state = state.with_columns(crate::tui::columns::shown(
            a.show.as_ref().map(|c| c.0.as_slice()),
            a.hide.as_ref().map_or(&[], |c| c.0.as_slice()),
        ));
    }
    let r = on_terminal(&mut state, &mut wiring);
    if let Some(p) = &saved_at
        && let Err(e) = crate::tui::saved::Saved::of(&state).save(p)
    {
        eprintln!("noisetop: {e}: the watch set and view choices are not kept");
    }
    if sampler.join().is_err() {
        bail!("the sampler thread panicked (its message is above)");
    }
    crate::cmd::record_sink::print_summary(&a.record, a.summary.quiet, false);
    r?;
    crate::cmd::record_sink::finish(&a.record)
}

/// Opens the dashboard on a capture, played at its recorded pace.
pub fn replay(dir: &Path, o: &ReplayOpts) -> Result<()> {
    let (r, machine) = crate::cmd::batch::open_replay(dir, o)?;
    require_terminal()?;
    let watched = r.driver.watched().to_vec();
    let sinks = crate::cmd::batch::sinks(&o.record, &machine, Duration::from_secs(1), &watched)?;
    crate::cmd::record_sink::hold_errors_until_end();
    let stop = Stop::on_signals().context("cannot install signal handlers")?;
    let (tx, rx) = replay::channel();
    let reader = replay::spawn(r, o.count, sinks, tx).context("cannot start the replay thread")?;
    let mut state = state_for(
        machine,
        Origin::Replay(dir.display().to_string()),
        Duration::from_secs(1),
        &watched,
        o.cpus.clone(),
        o.config.clone(),
    );
    let mut wiring = Wiring {
        feed: rx,
        stop,
        control: None,
        on_watched: Box::new(|_: &[u32]| {}),
        measure_self: true,
    };
    let r = on_terminal(&mut state, &mut wiring);
    // the reader may block on a full channel: dropping the receiver ends it
    drop(wiring);
    if reader.join().is_err() {
        bail!("the replay thread panicked (its message is above)");
    }
    crate::cmd::record_sink::print_summary(&o.record, o.quiet, false);
    r?;
    crate::cmd::record_sink::finish(&o.record)
}
