//! What the live tracer tests on CPU 1 share: why they cannot run here,
//! the lock that runs them one at a time (one test's busy loop would be
//! another's intruder), and how busy others keep CPU 1: a test that needs
//! it quiet skips, saying so, on a machine that is not.
// each test uses the part of this it needs
#![allow(dead_code)]

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};

use noisetop::os::tracepoint::find_tracefs;

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

/// Most of CPU 1 others may keep busy, in per cent, for a test that needs
/// it quiet: an idle VM's CPU shows a few per cent (its kernel threads),
/// a shell loop or a build close to 100.
pub const BUSY_LIMIT_PCT: f64 = 10.0;

/// CPU `cpu`'s busy and total time so far, in /proc/stat ticks: busy is
/// every column but idle and iowait (steal counts: the CPU was not ours).
pub fn cpu_ticks(cpu: u32) -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/stat").expect("/proc/stat");
    let row = text
        .lines()
        .find(|l| l.starts_with(&format!("cpu{cpu} ")))
        .expect("a row per CPU");
    // user nice system idle iowait irq softirq steal (guest is in user)
    let v: Vec<u64> = row
        .split_whitespace()
        .skip(1)
        .take(8)
        .map(|x| x.parse().expect("a number"))
        .collect();
    let total: u64 = v.iter().sum();
    (total - v[3] - v[4], total)
}

/// What a CPU did since a first reading: its busy share, in per cent.
#[derive(Debug, Clone, Copy)]
pub struct BusySince {
    cpu: u32,
    from: (u64, u64),
}

impl BusySince {
    /// Starts counting now.
    pub fn now(cpu: u32) -> BusySince {
        BusySince {
            cpu,
            from: cpu_ticks(cpu),
        }
    }

    /// The CPU's busy share since `now`, %; 0 when no tick passed.
    pub fn pct(&self) -> f64 {
        let (busy, total) = cpu_ticks(self.cpu);
        let dt = total.saturating_sub(self.from.1);
        if dt == 0 {
            return 0.0;
        }
        100.0 * busy.saturating_sub(self.from.0) as f64 / dt as f64
    }
}

/// CPU 1's busy share over half a second, %.
pub fn busy_pct() -> f64 {
    let b = BusySince::now(1);
    std::thread::sleep(std::time::Duration::from_millis(500));
    b.pct()
}

/// Takes CPU 1 for a test that needs it quiet: when the tracer cannot be
/// tested here, or others keep CPU 1 busy beyond [`BUSY_LIMIT_PCT`] (a
/// loop, a build), says why (`CPU 1 busy 34 %: skipped`) and gives `None`.
/// Measured with CPU 1 held, so that another test of the same binary is
/// not what it sees.
pub fn quiet_cpu1() -> Option<MutexGuard<'static, ()>> {
    if let Some(why) = skip_reason() {
        eprintln!("{why}: skipped");
        return None;
    }
    let held = cpu1();
    let busy = busy_pct();
    if busy > BUSY_LIMIT_PCT {
        eprintln!("CPU 1 busy {busy:.0} %: skipped (this test needs it quiet)");
        return None;
    }
    Some(held)
}

/// Time the host stole from `cpu`, ns: /proc/stat's steal column, in
/// `USER_HZ` (100) ticks, so good to 10 ms. With `PARAVIRT_TIME_ACCOUNTING`
/// the scheduler's clock (schedstat, `sched_stat_runtime`) leaves it out,
/// while a trace's clock runs through it.
pub fn steal_ns(cpu: u32) -> u64 {
    let text = std::fs::read_to_string("/proc/stat").unwrap();
    let row = text
        .lines()
        .find(|l| l.starts_with(&format!("cpu{cpu} ")))
        .expect("a row per CPU");
    let ticks: u64 = row.split_whitespace().nth(8).unwrap().parse().unwrap();
    ticks * 10_000_000
}
