//! The terminating signals noisetop gets while it runs a command: handed
//! on to the command running now, which decides when its run ends, and
//! kept, so that a series stops after the run they ended.

use std::sync::Arc;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

use anyhow::{Context, Result};

/// Forwards SIGINT, SIGTERM, SIGHUP and SIGQUIT to the command followed.
pub struct Forwarder {
    pid: Arc<AtomicU32>,
    caught: Arc<AtomicI32>,
    handle: signal_hook::iterator::Handle,
}

impl Forwarder {
    /// Installs the handlers; no command is followed yet.
    pub fn install() -> Result<Forwarder> {
        let mut signals = signal_hook::iterator::Signals::new(crate::os::stop::STOP_SIGNALS)
            .context("cannot install signal handlers")?;
        let handle = signals.handle();
        let pid = Arc::new(AtomicU32::new(0));
        let caught = Arc::new(AtomicI32::new(0));
        let (p, c) = (Arc::clone(&pid), Arc::clone(&caught));
        std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                for sig in signals.forever() {
                    let _ = c.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
                    let to = p.load(Ordering::SeqCst);
                    if to != 0 {
                        let _ = crate::os::sys::kill(to, sig);
                    }
                }
            })
            .context("cannot start a thread")?;
        Ok(Forwarder {
            pid,
            caught,
            handle,
        })
    }

    /// Hands signals on to `pid` from now on (0: to no one).
    pub fn follow(&self, pid: u32) {
        self.pid.store(pid, Ordering::SeqCst);
    }

    /// The first signal caught, if any came.
    pub fn caught(&self) -> Option<i32> {
        Some(self.caught.load(Ordering::SeqCst)).filter(|&s| s != 0)
    }

    /// Stops forwarding; the default actions come back.
    pub fn close(self) {
        self.handle.close();
    }
}
