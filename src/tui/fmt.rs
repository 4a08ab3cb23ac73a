//! Number formatting for the screen: fixed widths, compact rates, and `·`
//! for a value that is unknown (never a made-up 0).

use crate::base::cpulist;

/// What an unknown value shows.
pub const UNKNOWN: &str = "·";

/// Formats a per-second rate in at most five characters: `0`, `3.5`, `1234`,
/// `12.3k`, `123k`, `1.2M`; `·` when unknown.
pub fn rate(v: Option<f64>) -> String {
    match v {
        Some(x) if x.is_finite() && x >= 0.0 => {
            if x < 0.05 {
                "0".to_string()
            } else if x < 9.95 {
                format!("{x:.1}")
            } else if x < 9999.5 {
                format!("{x:.0}")
            } else if x < 999_500.0 {
                scaled(x / 1e3, 'k')
            } else {
                scaled(x / 1e6, 'M')
            }
        }
        _ => UNKNOWN.to_string(),
    }
}

/// One decimal when it fits five columns, else none.
fn scaled(v: f64, unit: char) -> String {
    let s = format!("{v:.1}{unit}");
    if s.len() <= 5 {
        s
    } else {
        format!("{v:.0}{unit}")
    }
}

/// Formats a whole number (MHz, °C): `·` when unknown.
pub fn whole(v: Option<f64>) -> String {
    match v {
        Some(x) if x.is_finite() => format!("{x:.0}"),
        _ => UNKNOWN.to_string(),
    }
}

/// Formats a percentage with `decimals` places and no sign: `·` when unknown.
pub fn pct(v: Option<f64>, decimals: usize) -> String {
    match v {
        Some(x) if x.is_finite() => format!("{x:.decimals$}"),
        _ => UNKNOWN.to_string(),
    }
}

/// Right-aligns `s` in `w` columns, cutting it (keeping the right end) when
/// it is longer.
pub fn right(s: &str, w: usize) -> String {
    let n = s.chars().count();
    if n >= w {
        s.chars().skip(n - w).collect()
    } else {
        format!("{}{s}", " ".repeat(w - n))
    }
}

/// Left-aligns `s` in `w` columns; a longer `s` ends at a word boundary
/// with `…` (never a word cut at the column's edge).
pub fn left(s: &str, w: usize) -> String {
    let n = s.chars().count();
    match n.cmp(&w) {
        std::cmp::Ordering::Greater => {
            let cut = crate::tui::fit::clip(ratatui::text::Line::raw(s.to_string()), w).to_string();
            let m = cut.chars().count();
            format!("{cut}{}", " ".repeat(w.saturating_sub(m)))
        }
        std::cmp::Ordering::Equal => s.to_string(),
        std::cmp::Ordering::Less => format!("{s}{}", " ".repeat(w - n)),
    }
}

/// What an empty list or a missing thing shows: one word everywhere.
pub const NONE: &str = "none";

/// Formats a CPU list (`0-3,8`), or `none` when empty.
pub fn cpus(list: &[u32]) -> String {
    if list.is_empty() {
        NONE.to_string()
    } else {
        cpulist::format(list)
    }
}

/// Formats wall-clock nanoseconds as `HH:MM:SS` (UTC: noisetop reads no time zone).
pub fn clock(wall_ns: u64) -> String {
    let s = wall_ns / 1_000_000_000;
    format!("{:02}:{:02}:{:02}", (s / 3600) % 24, (s / 60) % 60, s % 60)
}

/// Formats an interval length: `1.0 s`, `250 ms`.
pub fn seconds(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.1} s")
    } else {
        format!("{:.0} ms", s * 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_fit_five_columns() {
        let cases = [
            (None, "·"),
            (Some(f64::NAN), "·"),
            (Some(0.0), "0"),
            (Some(0.04), "0"),
            (Some(0.05), "0.1"),
            (Some(3.46), "3.5"),
            (Some(1234.4), "1234"),
            (Some(9999.4), "9999"),
            (Some(12_345.0), "12.3k"),
            (Some(123_456.0), "123k"),
            (Some(99_960.0), "100k"),
            (Some(999_400.0), "999k"),
            (Some(1_234_567.0), "1.2M"),
            (Some(9_999_999.0), "10.0M"),
            (Some(123_000_000.0), "123M"),
        ];
        for (v, want) in cases {
            assert_eq!(rate(v), want, "{v:?}");
            assert!(rate(v).chars().count() <= 5);
        }
    }

    #[test]
    fn alignment_cuts_and_pads() {
        assert_eq!(right("42", 4), "  42");
        assert_eq!(right("12345", 3), "345");
        // a name too long ends with a cut mark, at a word when it has one
        assert_eq!(left("nvme0q2", 4), "nvm…");
        assert_eq!(left("Local timer interrupts", 14), "Local timer…  ");
        assert_eq!(left("nvme", 4), "nvme");
        assert_eq!(left("ab", 4), "ab  ");
    }

    #[test]
    fn clock_and_lists() {
        // 2026-11-22 19:31:37 UTC
        assert_eq!(clock(1_795_375_897_000_000_000), "19:31:37");
        assert_eq!(cpus(&[]), "none");
        assert_eq!(cpus(&[5, 2, 3, 4]), "2-5");
        assert_eq!(seconds(1.0), "1.0 s");
        assert_eq!(seconds(0.25), "250 ms");
    }
}
