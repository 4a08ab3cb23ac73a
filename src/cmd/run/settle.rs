//! Before each run of a series: waiting for the command's CPUs to be idle
//! again (what the last run started may still be ending, a cron job may be
//! passing), up to a limit, so that one run's tail is not the next one's
//! noise. Busy time is /proc/stat's (every column but idle and iowait, in
//! `USER_HZ` ticks), read from noisetop's own CPU: it costs the watched
//! CPUs nothing.

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::collect::stat::{self, CpuTimes, Stat};

/// Each look at the CPUs spans this long (20 ticks at `USER_HZ` 100).
pub const WINDOW: Duration = Duration::from_millis(200);

/// A CPU busier than this over a window is not idle, %.
pub const IDLE_BELOW_PCT: f64 = 10.0;

/// How the wait before one run ended.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Settled {
    /// Time waited, s.
    pub waited_s: f64,
    /// The busiest of the CPUs over the last window, %; `None` where
    /// /proc/stat could not be read.
    pub busy_pct: Option<f64>,
    /// Whether the CPUs were idle when the run started (`false`: the
    /// limit was reached, or the CPUs could not be read).
    pub idle: bool,
}

/// Busy ticks and all ticks of one CPU.
fn ticks(t: &CpuTimes) -> (u64, u64) {
    let idle = t.idle + t.iowait.unwrap_or(0);
    let all = t.user
        + t.nice
        + t.system
        + idle
        + t.irq.unwrap_or(0)
        + t.softirq.unwrap_or(0)
        + t.steal.unwrap_or(0);
    (all - idle, all)
}

/// The busiest of `cpus` between two readings, %; `None` where a CPU is
/// missing or no tick passed.
pub fn busiest(prev: &Stat, cur: &Stat, cpus: &[u32]) -> Option<f64> {
    let mut worst: f64 = 0.0;
    for cpu in cpus {
        let (b0, a0) = ticks(prev.cpus.get(cpu)?);
        let (b1, a1) = ticks(cur.cpus.get(cpu)?);
        let all = a1.checked_sub(a0).filter(|&d| d > 0)?;
        let busy = b1.saturating_sub(b0);
        worst = worst.max(100.0 * busy as f64 / all as f64);
    }
    Some(worst)
}

fn read() -> Option<Stat> {
    let text = crate::os::read_small(std::path::Path::new("/proc/stat"), 1 << 20).ok()?;
    stat::parse(&text).ok()
}

/// Waits until `cpus` are idle over a window, `limit` at most; gives up
/// at once when `stopped` says so (a signal came).
pub fn settle(cpus: &[u32], limit: Duration, stopped: &dyn Fn() -> bool) -> Settled {
    let start = Instant::now();
    let done = |busy_pct: Option<f64>, idle: bool| Settled {
        waited_s: start.elapsed().as_secs_f64(),
        busy_pct,
        idle,
    };
    let Some(mut prev) = read() else {
        return done(None, false);
    };
    loop {
        std::thread::sleep(WINDOW);
        let Some(cur) = read() else {
            return done(None, false);
        };
        let busy = busiest(&prev, &cur, cpus);
        if busy.is_some_and(|b| b <= IDLE_BELOW_PCT) {
            return done(busy, true);
        }
        if stopped() || start.elapsed() + WINDOW > limit {
            return done(busy, false);
        }
        prev = cur;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(text: &str) -> Stat {
        stat::parse(text).unwrap()
    }

    #[test]
    fn the_busiest_cpu_counts_steal_as_busy_and_iowait_as_idle() {
        let a = stat(
            "cpu  0 0 0 0 0 0 0 0 0 0\n\
             cpu0 100 0 50 1000 10 0 0 0 0 0\n\
             cpu1 100 0 50 1000 10 0 0 0 0 0\n",
        );
        // 20 ticks each: CPU 0 2 user 1 steal 15 idle 2 iowait; CPU 1 8
        // user 2 irq 10 idle
        let b = stat(
            "cpu  0 0 0 0 0 0 0 0 0 0\n\
             cpu0 102 0 50 1015 12 0 0 1 0 0\n\
             cpu1 108 0 50 1010 10 2 0 0 0 0\n",
        );
        assert_eq!(busiest(&a, &b, &[0]), Some(15.0));
        assert_eq!(busiest(&a, &b, &[0, 1]), Some(50.0));
        assert_eq!(busiest(&a, &b, &[2]), None, "a CPU not in the file");
        assert_eq!(busiest(&a, &a, &[0]), None, "no tick passed");
    }
}
