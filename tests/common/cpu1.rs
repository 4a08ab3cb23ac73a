//! What the live tracer tests on CPU 1 share: why they cannot run here, and
//! the lock that runs them one at a time (one test's busy loop would be
//! another's intruder).

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};

use noisetop::source::tracer::find_tracefs;

/// Why the tracer cannot be tested here, if it cannot.
pub fn skip_reason() -> Option<String> {
    if std::fs::metadata("/proc/self").map_or(true, |m| m.uid() != 0) {
        return Some("not root".into());
    }
    if find_tracefs(Path::new("/sys")).is_none() {
        return Some("tracefs is not mounted".into());
    }
    if std::thread::available_parallelism().map_or(1, usize::from) < 2 {
        return Some("fewer than 2 CPUs".into());
    }
    None
}

static CPU1: Mutex<()> = Mutex::new(());

/// Holds CPU 1 for one test at a time.
pub fn cpu1() -> MutexGuard<'static, ()> {
    CPU1.lock().unwrap_or_else(PoisonError::into_inner)
}
