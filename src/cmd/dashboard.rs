//! `noisetop` and `noisetop replay DIR` on a terminal: builds the engine,
//! keeps noisetop off the watched CPUs, starts the sampler thread, and owns
//! the terminal's lifecycle (raw mode and alternate screen in, restored on
//! quit, error, panic — ratatui's hook — and SIGINT/SIGTERM/SIGHUP).

use std::io::IsTerminal as _;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::cli::Opts;
use crate::engine::Engine;
use crate::machine::Machine;
use crate::sampler::Sampler;
use crate::source::fs::Fs;
use crate::source::live::LiveHw;
use crate::stop::Stop;
use crate::tui::feed::{self, Control, Live};
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

/// Wakes the terminal wait of the calling (screen) thread when a signal
/// sets `stop`: SIGWINCH sent to that thread interrupts its `poll`.
fn wake_on_stop(stop: &Stop) -> Result<()> {
    let s = stop.clone();
    let screen = crate::sys::current_thread();
    std::thread::Builder::new()
        .name("stop-waker".into())
        .spawn(move || {
            let far = Instant::now() + Duration::from_secs(10 * 365 * 86_400);
            if s.sleep_until(far) {
                crate::sys::interrupt_thread(screen);
            }
        })
        .context("cannot start a thread")?;
    Ok(())
}

fn state_for(machine: Machine, origin: Origin, opts: &Opts) -> State {
    let no_color = std::env::var("NO_COLOR").ok();
    let mut s = State::new(
        machine,
        origin,
        opts.interval,
        Theme::new(no_color.as_deref()),
    )
    .with_watched(opts.watch.as_ref().map(|w| w.0.clone()).unwrap_or_default());
    s.only = opts.cpus.as_ref().map(|c| c.0.clone());
    s
}

/// Runs the loop between `ratatui::init` and `ratatui::restore`.
fn on_terminal(state: &mut State, wiring: &mut Wiring<'_>) -> Result<()> {
    wake_on_stop(&wiring.stop)?;
    let mut terminal = ratatui::try_init().context("cannot set up the terminal")?;
    let r = crate::tui::run(
        &mut terminal,
        state,
        wiring,
        &mut TerminalInput,
        &SystemClock,
    );
    ratatui::restore();
    wiring.stop.stop();
    r
}

/// Opens the dashboard on the running machine.
pub fn live(opts: &Opts) -> Result<()> {
    require_terminal()?;
    if opts.capture.is_some() {
        bail!("--capture records with --batch (or use `noisetop capture DIR`)");
    }
    let watched = opts.watch.as_ref().map(|w| w.0.clone()).unwrap_or_default();
    // without --pin, noisetop leaves the watched CPUs to the benchmark
    let pinned = opts.pin.is_some();
    if !pinned && !watched.is_empty() {
        let mine = crate::sys::affinity().context("cannot read noisetop's CPU affinity")?;
        if let Some(h) = housekeeping(&mine, &watched) {
            crate::sys::pin_to(&h).context("cannot move noisetop off the watched CPUs")?;
        }
    }
    let roots = crate::cmd::roots(opts);
    let mut fs = Fs::new(roots.clone());
    let machine = Machine::read(&mut fs);
    let hw = LiveHw::open(&machine, &roots, crate::cmd::live_options(opts));
    let mut engine = Engine::new(Sampler::with_machine(fs, machine.clone(), hw));
    if let Some(files) = opts.budget {
        engine.sampler.set_budget(files);
    }
    if let Some(w) = &opts.watch {
        engine.sampler.set_always(&w.0);
    }
    let stop = Stop::on_signals().context("cannot install signal handlers")?;
    let control = Arc::new(Control::new(opts.interval));
    let (tx, rx) = feed::live_channel();
    let live = Live {
        control: control.clone(),
        stop: stop.clone(),
        count: opts.count,
        sinks: Vec::new(),
    };
    let sampler = feed::spawn_live(engine, live, tx).context("cannot start the sampler thread")?;
    let mut state = state_for(machine, Origin::Live, opts);
    let affinity = crate::sys::affinity().unwrap_or_default();
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
                let _ = crate::sys::pin_to(&h);
                ctl.request_pin(h);
            }
        }),
        measure_self: true,
    };
    let r = on_terminal(&mut state, &mut wiring);
    if sampler.join().is_err() {
        bail!("the sampler thread panicked (its message is above)");
    }
    r
}

/// Opens the dashboard on a capture, played at its recorded pace.
pub fn replay(opts: &Opts, dir: &Path) -> Result<()> {
    require_terminal()?;
    let (instants, engine) = crate::cmd::batch::open_replay(dir)?;
    let machine = engine.sampler.machine.clone();
    let stop = Stop::on_signals().context("cannot install signal handlers")?;
    let (tx, rx) = feed::replay_channel();
    let reader = feed::spawn_replay(instants, engine, opts.count, tx)
        .context("cannot start the replay thread")?;
    let mut state = state_for(machine, Origin::Replay(dir.display().to_string()), opts);
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
    r
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
