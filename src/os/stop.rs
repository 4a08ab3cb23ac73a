//! A stop flag set by SIGINT, SIGTERM or SIGHUP, and a sleep it cancels:
//! the loops sleep to their next deadline and wake at once on a signal.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The signals that stop noisetop.
pub const STOP_SIGNALS: [i32; 4] = [
    signal_hook::consts::SIGINT,
    signal_hook::consts::SIGTERM,
    signal_hook::consts::SIGHUP,
    signal_hook::consts::SIGQUIT,
];

/// How long after a stop signal the process may take to end by itself:
/// the dashboard closes its perf groups (a few per CPU) and restores the
/// terminal, well under a second on 1 152 CPUs.
pub const GRACE: Duration = Duration::from_secs(3);

/// What must be undone before the process ends by force: the dashboard
/// installs its terminal restore here, so this layer names no screen.
static BEFORE_EXIT: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

/// Sets what a forced exit runs first (the first caller wins: there is one
/// terminal).
pub fn before_forced_exit(f: fn()) {
    let _ = BEFORE_EXIT.set(f);
}

/// Ends the process from the signal thread: runs the hook a sink installed
/// (the dashboard puts a terminal left in raw mode back; with none, as in
/// batch output, nothing is written).
fn force_exit(sig: i32) -> ! {
    if let Some(f) = BEFORE_EXIT.get() {
        f();
    }
    eprintln!("noisetop: stopped by signal {sig} before the current read ended");
    std::process::exit(128 + sig);
}

/// Shared stop flag with a cancellable sleep.
#[derive(Debug, Clone, Default)]
pub struct Stop(Arc<(Mutex<bool>, Condvar)>);

impl Stop {
    /// Creates a flag that no signal sets (tests, replays).
    pub fn new() -> Self {
        Stop::default()
    }

    /// Creates a flag that SIGINT, SIGTERM, SIGHUP and SIGQUIT set: every
    /// terminating signal that can be caught, so that each one restores the
    /// terminal (SIGQUIT's default action would leave it raw).
    ///
    /// A stop signal always stops: the loops see the flag within a sample,
    /// and if the process is still running [`GRACE`] later, or a second
    /// signal comes, the signal thread restores the terminal itself and
    /// ends the process with `128 + signal`, as a death by that signal
    /// would. A read stuck in the kernel cannot then keep noisetop alive.
    pub fn on_signals() -> std::io::Result<Self> {
        let stop = Stop::new();
        let mut signals = signal_hook::iterator::Signals::new(STOP_SIGNALS)?;
        let s = stop.clone();
        std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                let Some(first) = signals.forever().next() else {
                    return;
                };
                s.stop();
                let end = Instant::now() + GRACE;
                while Instant::now() < end {
                    if let Some(again) = signals.pending().next() {
                        force_exit(again);
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                force_exit(first);
            })?;
        Ok(stop)
    }

    /// Sets the flag and wakes every sleeper.
    pub fn stop(&self) {
        let (m, cv) = &*self.0;
        *m.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = true;
        cv.notify_all();
    }

    /// Tells whether the flag is set.
    pub fn is_stopped(&self) -> bool {
        *self
            .0
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Sleeps until `deadline` or until stopped; returns true when stopped.
    pub fn sleep_until(&self, deadline: Instant) -> bool {
        let (m, cv) = &*self.0;
        let mut stopped = m.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        while !*stopped {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            let (g, _) = cv
                .wait_timeout(stopped, deadline - now)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            stopped = g;
        }
        true
    }

    /// Wakes every sleeper of [`Self::sleep_until_woken`] without stopping
    /// them: a changed deadline (a new interval) takes effect at once.
    pub fn wake(&self) {
        let (m, cv) = &*self.0;
        // take the lock so a sleeper between its check and its wait sees it
        drop(m.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        cv.notify_all();
    }

    /// Sleeps until `deadline()` (asked again on every wake-up) or until
    /// stopped; returns true when stopped. A [`Self::wake`] re-reads the
    /// deadline, so one that moved earlier ends the sleep at once.
    pub fn sleep_until_woken(&self, deadline: impl Fn() -> Instant) -> bool {
        let (m, cv) = &*self.0;
        let mut stopped = m.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        while !*stopped {
            let now = Instant::now();
            let at = deadline();
            if now >= at {
                return false;
            }
            let (g, _) = cv
                .wait_timeout(stopped, at - now)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            stopped = g;
        }
        true
    }

    /// Sleeps for `d` or until stopped; returns true when stopped.
    pub fn sleep(&self, d: Duration) -> bool {
        self.sleep_until(Instant::now() + d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_wakes_a_sleeper_early() {
        let s = Stop::new();
        let s2 = s.clone();
        let t = std::thread::spawn(move || s2.sleep(Duration::from_secs(30)));
        std::thread::sleep(Duration::from_millis(20));
        s.stop();
        assert!(t.join().unwrap());
        assert!(s.is_stopped());
    }

    #[test]
    fn wake_rereads_a_deadline_that_moved_earlier() {
        use std::sync::atomic::{AtomicU64, Ordering};
        let s = Stop::new();
        let start = Instant::now();
        let secs = std::sync::Arc::new(AtomicU64::new(60));
        let (s2, secs2) = (s.clone(), secs.clone());
        let t = std::thread::spawn(move || {
            s2.sleep_until_woken(|| start + Duration::from_secs(secs2.load(Ordering::SeqCst)))
        });
        std::thread::sleep(Duration::from_millis(20));
        secs.store(0, Ordering::SeqCst);
        s.wake();
        assert!(!t.join().unwrap(), "woken, not stopped");
        assert!(start.elapsed() < Duration::from_secs(30));
    }

    #[test]
    fn sleep_returns_false_at_the_deadline() {
        assert!(!Stop::new().sleep(Duration::from_millis(1)));
    }
}
