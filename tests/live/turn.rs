//! One file's tests at a time. Cargo ran each former test file as a binary
//! of its own, one after another, so one file's busy loops, probes, IPI
//! traces and noisetop processes never met another file's, and the tests
//! were written so: a loop on CPU 1 is another test's intruder, and the
//! hands-off test counts every IPI a noisetop process sends. Each test
//! takes its file's turn before anything else; tests of that file run side
//! by side as before (those that need CPU 1 to themselves still take
//! [`crate::cpu1::cpu1`] after it), and the next file's wait until the
//! last of them ends.

use std::panic::Location;
use std::sync::{Condvar, Mutex, PoisonError};

/// The file whose tests run now, and how many of them.
struct Running {
    file: Option<&'static str>,
    tests: usize,
}

static RUNNING: Mutex<Running> = Mutex::new(Running {
    file: None,
    tests: 0,
});
static ENDED: Condvar = Condvar::new();

/// A test's share of its file's turn, given back when dropped (a failed
/// test's too, as the panic unwinds).
#[must_use = "the turn ends when this is dropped: bind it to a named variable"]
pub struct Turn;

/// Waits until no test of another file runs, then counts the calling test
/// in its file's turn. The file is the caller's source file.
#[track_caller]
pub fn take() -> Turn {
    let file = Location::caller().file();
    let mut running = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
    while running.file.is_some_and(|f| f != file) {
        running = ENDED.wait(running).unwrap_or_else(PoisonError::into_inner);
    }
    running.file = Some(file);
    running.tests += 1;
    Turn
}

impl Drop for Turn {
    fn drop(&mut self) {
        let mut running = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
        running.tests -= 1;
        if running.tests == 0 {
            running.file = None;
            ENDED.notify_all();
        }
    }
}
