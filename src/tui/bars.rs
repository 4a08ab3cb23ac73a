//! The two corefreq-style bars of a CPU row: frequency (solid to `Avg_MHz`,
//! light shade on to `Bzy_MHz`, `┆` at the base clock) and the stacked
//! C-state residency (C0 then each idle state, shallow to deep).

use ratatui::style::Style;
use ratatui::text::Span;

use crate::model::interval::CpuRates;
use crate::tui::theme::Theme;

/// Partial blocks, 0/8 to 8/8 of a cell.
const EIGHTHS: [char; 9] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉', '█'];
/// C0 then idle states shallow to deep, each its own glyph so the legend
/// matches the bar without colour (Haswell's `intel_idle` has nine states
/// and C0); past twelve the last repeats.
pub const SHADES: [char; 12] = ['█', '▓', '▒', '░', '▞', '▚', '╍', '┅', '⠶', '⠒', '⠂', '⡀'];
/// The base-frequency mark.
pub const BASE_MARK: char = '┆';

/// Scale and reference clocks of the frequency bar, MHz.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FreqScale {
    /// The bar's full width (max MHz, else the highest clock seen).
    pub max: Option<f64>,
    /// Where `┆` goes.
    pub base: Option<f64>,
}

/// Joins cells into spans of equal style.
fn spans(cells: Vec<(char, Style)>) -> Vec<Span<'static>> {
    let mut out: Vec<Span<'static>> = Vec::new();
    let mut text = String::new();
    let mut style = None;
    for (c, s) in cells {
        if style.is_some_and(|st| st != s) {
            out.push(Span::styled(
                std::mem::take(&mut text),
                style.unwrap_or_default(),
            ));
        }
        style = Some(s);
        text.push(c);
    }
    if let Some(s) = style {
        out.push(Span::styled(text, s));
    }
    out
}

/// Cells a share of `width` fills, in eighths.
fn eighths(value: f64, scale: f64, width: usize) -> usize {
    ((value / scale).clamp(0.0, 1.0) * (width * 8) as f64).round() as usize
}

/// Draws the frequency bar of one CPU in `width` cells; `·` when nothing
/// about its clock is known.
pub fn freq(r: Option<&CpuRates>, scale: FreqScale, width: usize, t: Theme) -> Vec<Span<'static>> {
    if width == 0 {
        return Vec::new();
    }
    let avg = r.and_then(|r| r.avg_mhz);
    let bzy = r.and_then(|r| r.bzy_mhz);
    let Some(max) = scale.max.filter(|m| *m > 0.0) else {
        return spans(unknown(width, t));
    };
    if avg.is_none() && bzy.is_none() {
        return spans(unknown(width, t));
    }
    let solid = eighths(avg.unwrap_or(0.0), max, width);
    let light = bzy.map_or(0, |b| eighths(b, max, width).div_ceil(8));
    let base = scale
        .base
        .filter(|b| *b > 0.0 && *b <= max)
        .map(|b| (((b / max) * width as f64) as usize).min(width - 1));
    let fill = t.freq(bzy, scale.base);
    let cells = (0..width)
        .map(|i| {
            let full = solid / 8;
            if i < full {
                ('█', fill)
            } else if i == full && !solid.is_multiple_of(8) {
                (EIGHTHS[solid % 8], fill)
            } else if Some(i) == base {
                (BASE_MARK, t.base_mark())
            } else if i < light {
                ('░', fill)
            } else {
                (' ', t.text())
            }
        })
        .collect();
    spans(cells)
}

fn unknown(width: usize, t: Theme) -> Vec<(char, Style)> {
    let mut cells = vec![(' ', t.text()); width];
    cells[0] = ('·', t.dim());
    cells
}

/// The residency shares a CPU's C-state bar stacks: C0 (busy), then each
/// cpuidle state; hardware core C-states when there is no cpuidle.
pub fn cstate_shares(r: &CpuRates) -> Vec<Option<f64>> {
    let mut v = vec![r.busy_pct];
    if r.idle.is_empty() {
        v.extend(r.hw_cstates.iter().map(|(_, p)| *p));
    } else {
        v.extend(r.idle.iter().map(|s| s.pct));
    }
    v
}

/// Draws the stacked C-state bar in `width` cells. Segment edges are the
/// rounded running sums, so segments never overlap and never exceed the
/// bar; time not accounted for stays blank.
pub fn cstates(r: Option<&CpuRates>, width: usize, t: Theme) -> Vec<Span<'static>> {
    if width == 0 {
        return Vec::new();
    }
    let shares = r.map(cstate_shares).unwrap_or_default();
    if shares.iter().all(Option::is_none) {
        return spans(unknown(width, t));
    }
    let mut cells = vec![(' ', t.text()); width];
    let mut sum = 0.0;
    let mut from = 0;
    for (i, p) in shares.iter().enumerate() {
        sum += p.unwrap_or(0.0).max(0.0);
        let to = ((sum / 100.0).min(1.0) * width as f64).round() as usize;
        for c in cells.iter_mut().take(to).skip(from) {
            *c = (SHADES[i.min(SHADES.len() - 1)], t.cstate(i));
        }
        from = from.max(to);
    }
    spans(cells)
}

/// The legend of the C-state bar: `█C0 ▓C1 ▒C6` for the given state
/// names, whole; a state disabled in sysfs reads `C6(off)`.
pub fn legend(names: &[(String, bool)], t: Theme) -> Vec<Span<'static>> {
    let mut out = vec![Span::styled("█", t.cstate(0)), Span::styled("C0", t.dim())];
    for (i, (n, off)) in names.iter().enumerate() {
        out.push(Span::raw(" "));
        out.push(Span::styled(
            SHADES[(i + 1).min(SHADES.len() - 1)].to_string(),
            t.cstate(i + 1),
        ));
        out.push(Span::styled(n.clone(), t.dim()));
        if *off {
            out.push(Span::styled("(off)", t.warn()));
        }
    }
    out
}

/// Exit latency of the shallowest and deepest idle state the CPU used
/// (≥ 0.5 % of the interval): `2/133`; `·` when none is known.
pub fn exit_latency(r: Option<&CpuRates>) -> String {
    let used: Vec<u64> = r
        .map(|r| {
            r.idle
                .iter()
                .filter(|s| s.pct.is_some_and(|p| p >= 0.5))
                .filter_map(|s| s.latency_us)
                .collect()
        })
        .unwrap_or_default();
    match (used.iter().min(), used.iter().max()) {
        (Some(lo), Some(hi)) if lo == hi => format!("{hi}"),
        (Some(lo), Some(hi)) => format!("{lo}/{hi}"),
        _ => crate::tui::fmt::UNKNOWN.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::interval::IdleRate;

    fn text(s: &[Span<'_>]) -> String {
        s.iter().map(|x| x.content.as_ref()).collect()
    }

    fn cpu(avg: Option<f64>, bzy: Option<f64>) -> CpuRates {
        CpuRates {
            cpu: 0,
            avg_mhz: avg,
            bzy_mhz: bzy,
            ..CpuRates::default()
        }
    }

    fn idle(name: &str, pct: f64, lat: u64) -> IdleRate {
        IdleRate {
            name: name.into(),
            pct: Some(pct),
            per_s: None,
            above_per_s: None,
            below_per_s: None,
            latency_us: Some(lat),
            residency_us: None,
            disabled: None,
        }
    }

    const T: Theme = Theme { color: false };

    #[test]
    fn frequency_bar_solid_to_avg_light_to_busy_clock_and_base_mark() {
        let scale = FreqScale {
            max: Some(4000.0),
            base: Some(2000.0),
        };
        // avg 1000 of 4000 over 20 cells: 5 full cells; bzy 3000: light to 15
        let bar = text(&freq(Some(&cpu(Some(1000.0), Some(3000.0))), scale, 20, T));
        assert_eq!(bar, "█████░░░░░┆░░░░     ");
        // 1050 MHz is 5.25 cells: 5 full and a quarter block
        let bar = text(&freq(Some(&cpu(Some(1050.0), Some(1050.0))), scale, 20, T));
        assert_eq!(bar, "█████▎    ┆         ");
        // turbo past the base covers the mark
        let bar = text(&freq(Some(&cpu(Some(4400.0), Some(4400.0))), scale, 20, T));
        assert_eq!(bar, "████████████████████");
    }

    #[test]
    fn frequency_bar_without_scale_or_values_shows_unknown() {
        let none = FreqScale {
            max: None,
            base: None,
        };
        assert_eq!(
            text(&freq(Some(&cpu(Some(1.0), Some(1.0))), none, 6, T)),
            "·     "
        );
        let scale = FreqScale {
            max: Some(1000.0),
            base: None,
        };
        assert_eq!(text(&freq(Some(&cpu(None, None)), scale, 6, T)), "·     ");
        assert_eq!(text(&freq(None, scale, 6, T)), "·     ");
        assert!(freq(None, scale, 0, T).is_empty());
    }

    #[test]
    fn cstate_bar_stacks_busy_then_states_by_rounded_running_sums() {
        let mut r = cpu(None, None);
        r.busy_pct = Some(25.0);
        r.idle = vec![
            idle("POLL", 0.0, 0),
            idle("C1", 12.5, 2),
            idle("C6", 60.0, 133),
        ]
        .into();
        // 25 % of 16 = 4, +0 = 4, +12.5 % = 6, +60 % = 15.6 → 16 (rounded running sums)
        assert_eq!(text(&cstates(Some(&r), 16, T)), "████▒▒░░░░░░░░░░");
        assert_eq!(exit_latency(Some(&r)), "2/133");
        // unknown busy: the states stack from the left, the rest stays blank
        r.busy_pct = None;
        assert_eq!(text(&cstates(Some(&r), 16, T)), "▒▒░░░░░░░░░░    ");
    }

    #[test]
    fn cstate_bar_over_100_percent_stays_in_width() {
        let mut r = cpu(None, None);
        r.busy_pct = Some(80.0);
        r.idle = vec![idle("C1", 90.0, 1)].into();
        assert_eq!(text(&cstates(Some(&r), 10, T)), "████████▓▓");
        r.idle = Vec::new().into();
        r.busy_pct = None;
        assert_eq!(text(&cstates(Some(&r), 4, T)), "·   ");
        assert_eq!(exit_latency(Some(&r)), "·");
    }

    #[test]
    fn hardware_cstates_stand_in_when_there_is_no_cpuidle() {
        let mut r = cpu(None, None);
        r.busy_pct = Some(50.0);
        r.hw_cstates = vec![("C1", Some(10.0)), ("C6", Some(40.0))];
        assert_eq!(cstate_shares(&r), vec![Some(50.0), Some(10.0), Some(40.0)]);
        assert_eq!(text(&cstates(Some(&r), 10, T)), "█████▓▒▒▒▒");
    }

    #[test]
    fn legend_names_each_shade() {
        let names = [("C1".to_string(), false), ("C6".to_string(), true)];
        assert_eq!(text(&legend(&names, T)), "█C0 ▓C1 ▒C6(off)");
    }

    #[test]
    fn more_than_four_idle_states_keep_distinct_shades_in_bar_and_legend() {
        // intel_idle on Haswell: POLL C1 C1E C3 C6 C7s C8 (as pcp-sysdev-001)
        let names: Vec<(String, bool)> = ["POLL", "C1", "C1E", "C3", "C6", "C7s", "C8"]
            .iter()
            .map(|n| ((*n).to_string(), false))
            .collect();
        let l = text(&legend(&names, T));
        assert_eq!(l, "█C0 ▓POLL ▒C1 ░C1E ▞C3 ▚C6 ╍C7s ┅C8");
        let mut r = cpu(None, None);
        r.busy_pct = Some(0.0);
        r.idle = names
            .iter()
            .map(|(n, _)| idle(n, 100.0 / 7.0, 1))
            .collect::<Vec<_>>()
            .into();
        let bar = text(&cstates(Some(&r), 14, T));
        // every state's glyph in the bar is the one its legend entry shows
        for (i, (n, _)) in names.iter().enumerate() {
            let g = SHADES[i + 1];
            assert!(
                bar.contains(g) && l.contains(&format!("{g}{n}")),
                "{n}: {bar}"
            );
        }
    }
}
