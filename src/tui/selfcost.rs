//! noisetop's own CPU use, for the footer: user + system time of this
//! process from `/proc/self/stat` between two samples.
//!
//! This is the one read outside the `Fs` roots on purpose: it is about
//! this process, never about the machine being watched (with `--root` or
//! a replay, the roots are someone else's `/proc`).

use std::collections::VecDeque;
use std::time::Instant;

/// Clock ticks per second of `/proc/*/stat` times (`USER_HZ`: 100 on every
/// architecture Linux exposes it for, independent of the kernel's HZ).
pub const USER_HZ: f64 = 100.0;

/// Returns utime + stime in ticks from the text of `/proc/PID/stat`.
pub fn cpu_ticks(stat: &str) -> Option<u64> {
    // the command name may hold spaces and parentheses: split after the last ')'
    let rest = stat.rsplit_once(')')?.1;
    let mut f = rest.split_whitespace();
    // fields after the name: state(3) … utime(14) stime(15), 1-based in proc(5)
    let utime: u64 = f.nth(11)?.parse().ok()?;
    let stime: u64 = f.next()?.parse().ok()?;
    Some(utime + stime)
}

/// Calls (samples) the footer's figure spans.
pub const WINDOW: usize = 30;

/// Tracks this process's CPU time over the last `WINDOW` calls.
#[derive(Debug, Default)]
pub struct SelfCost {
    seen: VecDeque<(Instant, u64)>,
}

impl SelfCost {
    /// Reads the CPU time now; returns the % of one CPU used over the last
    /// `WINDOW` calls (one tick is 10 ms: a single 1 s interval cannot
    /// resolve less than 1 %).
    pub fn update(&mut self, now: Instant) -> Option<f64> {
        let ticks = cpu_ticks(&std::fs::read_to_string("/proc/self/stat").ok()?)?;
        if self.seen.len() == WINDOW {
            self.seen.pop_front();
        }
        self.seen.push_back((now, ticks));
        let (t0, k0) = *self.seen.front()?;
        let dt = now.checked_duration_since(t0)?.as_secs_f64();
        (dt > 0.0).then(|| 100.0 * ticks.saturating_sub(k0) as f64 / USER_HZ / dt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_come_after_the_last_parenthesis() {
        // a real /proc/self/stat line, with a command name holding ") ("
        let line =
            "4242 (a) (b) S 1 4242 4242 0 -1 4194560 1234 0 0 0 37 12 0 0 20 0 3 0 99 1000 200";
        assert_eq!(cpu_ticks(line), Some(49));
        assert_eq!(cpu_ticks("4242 (x) S 1"), None);
        assert_eq!(cpu_ticks(""), None);
    }

    #[test]
    fn first_update_has_no_rate() {
        let mut c = SelfCost::default();
        assert_eq!(c.update(Instant::now()), None);
    }
}
