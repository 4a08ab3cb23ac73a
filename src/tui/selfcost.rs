//! noisetop's own CPU use, for the footer: the process's CPU time
//! (`CLOCK_PROCESS_CPUTIME_ID`, every thread, nanoseconds) between samples.
//! It is about this process, never about the machine being watched, so it
//! reads no file under the `Fs` roots (with `--root` or a replay those are
//! someone else's `/proc`). `/proc/self/stat` would serve too, but in 10 ms
//! ticks: a 1 s interval could not resolve less than 1 %.

use std::collections::VecDeque;
use std::time::Instant;

/// Calls (samples) the footer's figure spans.
pub const WINDOW: usize = 30;

/// Tracks this process's CPU time over the last `WINDOW` calls.
#[derive(Debug, Default)]
pub struct SelfCost {
    seen: VecDeque<(Instant, u64)>,
}

impl SelfCost {
    /// Reads the CPU time now; returns the % of one CPU used over the last
    /// `WINDOW` calls.
    pub fn update(&mut self, now: Instant) -> Option<f64> {
        self.add(now, crate::os::sys::process_cpu_ns()?)
    }

    /// Adds a reading of `cpu_ns` taken at `now`; the % of one CPU since
    /// the oldest reading kept.
    fn add(&mut self, now: Instant, cpu_ns: u64) -> Option<f64> {
        if self.seen.len() == WINDOW {
            self.seen.pop_front();
        }
        self.seen.push_back((now, cpu_ns));
        let (t0, c0) = *self.seen.front()?;
        let dt = now.checked_duration_since(t0)?.as_nanos() as f64;
        (dt > 0.0).then(|| 100.0 * cpu_ns.saturating_sub(c0) as f64 / dt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn first_update_has_no_rate() {
        let mut c = SelfCost::default();
        assert_eq!(c.update(Instant::now()), None);
    }

    #[test]
    fn the_share_is_cpu_time_over_wall_time_across_the_window() {
        let t0 = Instant::now();
        let mut c = SelfCost::default();
        assert_eq!(c.add(t0, 5_000_000), None);
        // 670 µs of CPU in one second: 0.067 %, which ticks could not see
        let pct = c.add(t0 + Duration::from_secs(1), 5_670_000).unwrap();
        assert!((pct - 0.067).abs() < 1e-9, "{pct}");
        // the window keeps WINDOW readings: the oldest then drops
        for i in 2..=WINDOW as u64 {
            c.add(t0 + Duration::from_secs(i), 5_000_000 + i * 1_000_000);
        }
        let pct = c
            .add(
                t0 + Duration::from_secs(WINDOW as u64 + 1),
                5_000_000 + (WINDOW as u64 + 1) * 1_000_000,
            )
            .unwrap();
        // readings 2..=31 are kept: 29 ms over 29 s
        assert!((pct - 0.1).abs() < 1e-9, "{pct}");
    }

    #[test]
    fn a_busy_thread_moves_the_process_clock() {
        // spin until the clock has counted 20 ms of work; on a loaded
        // machine that takes longer than 20 ms of wall time, never forever
        let a = crate::os::sys::process_cpu_ns().unwrap();
        let spin = Instant::now();
        let mut b = a;
        while b - a < 20_000_000 && spin.elapsed() < Duration::from_secs(20) {
            b = crate::os::sys::process_cpu_ns().unwrap();
        }
        assert!(b - a >= 20_000_000, "{a} → {b} in {:?}", spin.elapsed());
    }
}
