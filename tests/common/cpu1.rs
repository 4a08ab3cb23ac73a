//! What the live tracer tests on CPU 1 share: why they cannot run here, and
//! the lock that runs them one at a time (one test's busy loop would be
//! another's intruder).

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};

use noisetop::source::tracepoint::find_tracefs;

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

/// Time the host stole from `cpu`, ns: /proc/stat's steal column, in
/// `USER_HZ` (100) ticks, so good to 10 ms. With `PARAVIRT_TIME_ACCOUNTING`
/// the scheduler's clock (schedstat, `sched_stat_runtime`) leaves it out,
/// while a trace's clock runs through it.
#[allow(dead_code, reason = "not every test that shares CPU 1 compares clocks")]
pub fn steal_ns(cpu: u32) -> u64 {
    let text = std::fs::read_to_string("/proc/stat").unwrap();
    let row = text
        .lines()
        .find(|l| l.starts_with(&format!("cpu{cpu} ")))
        .expect("a row per CPU");
    let ticks: u64 = row.split_whitespace().nth(8).unwrap().parse().unwrap();
    ticks * 10_000_000
}
