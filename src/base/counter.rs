//! Differences of raw hardware and kernel counters: wrap-around at a known
//! width, and counters that went backwards because something reset them.

/// How far a counter counts before it starts again at 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Width {
    /// A 64-bit counter: going backwards means a reset, never a wrap.
    Bits64,
    /// A counter of this many bits that wraps to 0 (RAPL energy: 32).
    Bits(u32),
    /// A counter that wraps after reaching this value (powercap `max_energy_range_uj`).
    Range(u64),
}

/// Returns how much a counter advanced from `prev` to `cur`, or `None` when
/// that cannot be known (a 64-bit counter went backwards: it was reset).
///
/// A narrower counter that went backwards is taken to have wrapped once;
/// the caller bounds the result with what is physically plausible.
pub fn delta(prev: u64, cur: u64, width: Width) -> Option<u64> {
    if cur >= prev {
        return Some(cur - prev);
    }
    match width {
        Width::Bits64 => None,
        Width::Bits(bits) if bits >= 64 => None,
        Width::Bits(bits) => {
            let modulus = 1u64 << bits;
            if prev >= modulus || cur >= modulus {
                return None;
            }
            Some(modulus - prev + cur)
        }
        Width::Range(max) => {
            if prev > max || cur > max || max == 0 {
                return None;
            }
            // powercap counts 0..=max_energy_range_uj, then starts again at 0
            Some(max - prev + cur + 1)
        }
    }
}

/// Divides a count by seconds; `None` for an empty or non-finite interval.
pub fn per_second(count: u64, dt_s: f64) -> Option<f64> {
    if dt_s.is_finite() && dt_s > 0.0 {
        Some(count as f64 / dt_s)
    } else {
        None
    }
}

/// Returns `100 · part / whole`, `None` when `whole` is 0. A result above
/// 100 % by less than `slack` percent (counters read a few µs apart) is
/// clamped to 100; a larger excess means the inputs disagree and gives `None`.
pub fn percent(part: u64, whole: u64, slack: f64) -> Option<f64> {
    if whole == 0 {
        return None;
    }
    let p = 100.0 * part as f64 / whole as f64;
    if p <= 100.0 {
        Some(p)
    } else if p <= 100.0 + slack {
        Some(100.0)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forward_counter_is_a_plain_difference() {
        assert_eq!(delta(100, 250, Width::Bits64), Some(150));
        assert_eq!(delta(7, 7, Width::Bits(32)), Some(0));
    }

    #[test]
    fn backwards_64_bit_counter_is_unknown() {
        assert_eq!(delta(1_000_000, 10, Width::Bits64), None);
    }

    #[test]
    fn thirty_two_bit_counter_wraps() {
        // 0xFFFF_FF00 → 0x100: 0x100 to reach 2^32, then 0x100 more
        assert_eq!(delta(0xFFFF_FF00, 0x100, Width::Bits(32)), Some(0x200));
    }

    #[test]
    fn forty_eight_bit_counter_wraps() {
        let top = (1u64 << 48) - 5;
        assert_eq!(delta(top, 3, Width::Bits(48)), Some(8));
    }

    #[test]
    fn value_wider_than_its_width_is_unknown() {
        assert_eq!(delta(1 << 33, 5, Width::Bits(32)), None);
    }

    #[test]
    fn powercap_range_wraps_after_max() {
        // max_energy_range_uj = 262143328850 (a common package value)
        let max = 262_143_328_850;
        assert_eq!(delta(max - 10, 20, Width::Range(max)), Some(31));
    }

    #[test]
    fn rates_need_a_positive_interval() {
        assert_eq!(per_second(10, 0.5), Some(20.0));
        assert_eq!(per_second(10, 0.0), None);
        assert_eq!(per_second(10, -1.0), None);
        assert_eq!(per_second(10, f64::NAN), None);
    }

    #[test]
    fn percent_clamps_small_excess_and_rejects_large() {
        assert_eq!(percent(50, 200, 1.0), Some(25.0));
        assert_eq!(percent(1005, 1000, 1.0), Some(100.0));
        assert_eq!(percent(1200, 1000, 1.0), None);
        assert_eq!(percent(5, 0, 1.0), None);
    }
}
