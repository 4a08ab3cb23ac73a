//! The tracer held against counters that see what it cannot: cpuidle's
//! residency (time a CPU spent in an idle state) and /proc/interrupts.
//!
//! A kernel that gives perf no events of the idle task hides everything
//! that runs while idle is current: the interrupts that hit an idle CPU
//! and the work of waking a task from there. The tracer then counts that
//! time as idle and those interrupts not at all; cpuidle and
//! /proc/interrupts still count them. Where the two disagree by more than
//! the limits below, the user is told, with both numbers.

/// The busy times may differ by this share of the window, %, besides the
/// idle runs at the window's edges (cpuidle counts a state when the CPU
/// leaves it).
pub const BUSY_LIMIT_PCT: f64 = 5.0;

/// The interrupt counts may differ by this share of the kernel's count, %,
/// and by [`COUNT_SLACK`] (an interrupt is traced in the window where it
/// ends, counted where it begins).
pub const COUNT_LIMIT_PCT: f64 = 1.0;

/// Interrupts either side of a window edge.
pub const COUNT_SLACK: u64 = 2;

/// One traced CPU over one window, with the kernel's own counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuCheck {
    /// The CPU.
    pub cpu: u32,
    /// The window, ns.
    pub window_ns: u64,
    /// Traced time not idle: the window less idle and unknown time, ns.
    pub traced_busy_ns: u64,
    /// What may differ without fault, ns: the idle runs at the window's
    /// edges and the time nobody's records cover.
    pub slack_ns: u64,
    /// The window less cpuidle's residency in every state, ns (`None`: no
    /// cpuidle driver, or its figures cover another span).
    pub cpuidle_busy_ns: Option<u64>,
    /// Local timer interrupts traced (ended in the window).
    pub loc_traced: u64,
    /// Local timer interrupts /proc/interrupts counted (`None`: no LOC row).
    pub loc_counted: Option<u64>,
}

fn ms(ns: u64) -> String {
    format!("{:.1} ms", ns as f64 / 1e6)
}

/// What disagrees beyond the limits, one clause each, with both numbers;
/// empty when the tracer agrees with the kernel's counters.
pub fn disagreements(c: &CpuCheck) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(busy) = c.cpuidle_busy_ns {
        let limit = (c.window_ns as f64 * BUSY_LIMIT_PCT / 100.0) as u64 + c.slack_ns;
        if busy.abs_diff(c.traced_busy_ns) > limit {
            let why = if busy > c.traced_busy_ns {
                format!(
                    ": {} ran while the idle task was current (interrupts and wake-ups \
                     no record shows), counted as idle",
                    ms(busy - c.traced_busy_ns)
                )
            } else {
                String::new()
            };
            out.push(format!(
                "CPU {}: traced busy {}, cpuidle busy {}{why}",
                c.cpu,
                ms(c.traced_busy_ns),
                ms(busy)
            ));
        }
    }
    if let Some(n) = c.loc_counted {
        let limit = (n as f64 * COUNT_LIMIT_PCT / 100.0) as u64 + COUNT_SLACK;
        if n.abs_diff(c.loc_traced) > limit {
            let why = if n > c.loc_traced {
                format!(
                    " ({} not traced: they hit the CPU while idle)",
                    n - c.loc_traced
                )
            } else {
                String::new()
            };
            out.push(format!(
                "CPU {}: local timer interrupts traced {}, /proc/interrupts {n}{why}",
                c.cpu, c.loc_traced
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check() -> CpuCheck {
        CpuCheck {
            cpu: 1,
            window_ns: 1_000_000_000,
            traced_busy_ns: 240_100_000,
            slack_ns: 30_000,
            cpuidle_busy_ns: Some(351_200_000),
            loc_traced: 287,
            loc_counted: Some(11_438),
        }
    }

    #[test]
    fn time_and_interrupts_idle_hid_are_said_with_both_numbers() {
        assert_eq!(
            disagreements(&check()),
            [
                "CPU 1: traced busy 240.1 ms, cpuidle busy 351.2 ms: 111.1 ms ran while the \
                 idle task was current (interrupts and wake-ups no record shows), counted as idle",
                "CPU 1: local timer interrupts traced 287, /proc/interrupts 11438 (11151 not \
                 traced: they hit the CPU while idle)",
            ]
        );
    }

    #[test]
    fn within_the_limits_nothing_is_said() {
        // 5 % of the window and the edges' 30 µs; 1 % of 11438 and 2
        let c = CpuCheck {
            traced_busy_ns: 351_200_000 - 50_030_000,
            loc_traced: 11_438 - 116,
            ..check()
        };
        assert!(disagreements(&c).is_empty(), "{:?}", disagreements(&c));
        let c = CpuCheck {
            traced_busy_ns: 351_200_000 - 50_030_001,
            loc_traced: 11_438 - 117,
            ..check()
        };
        assert_eq!(disagreements(&c).len(), 2);
        // more traced than counted is said too, without a cause
        let c = CpuCheck {
            traced_busy_ns: 500_000_000,
            cpuidle_busy_ns: Some(400_000_000),
            loc_traced: 120,
            loc_counted: Some(100),
            ..check()
        };
        assert_eq!(
            disagreements(&c),
            [
                "CPU 1: traced busy 500.0 ms, cpuidle busy 400.0 ms",
                "CPU 1: local timer interrupts traced 120, /proc/interrupts 100",
            ]
        );
        // what is not known is not held against the tracer
        let c = CpuCheck {
            cpuidle_busy_ns: None,
            loc_counted: None,
            ..check()
        };
        assert!(disagreements(&c).is_empty());
    }
}
