//! The C-states view: per CPU, C0 (busy) and each idle state's residency
//! and entries per second (and, on wide screens, the average stay), the
//! states' exit latency and target residency in the header, mis-predictions
//! (above/below) per second, the hardware core C-states, and package
//! C-states, power and temperature below.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::model::interval::{CpuRates, IdleRate};
use crate::tui::fit::{put, put_str};
use crate::tui::fmt::{self, left, right};
use crate::tui::state::State;

/// Width of one idle-state column: residency % and entries/s.
const STATE_W: usize = 14;
/// Width of one idle-state column with the average stay too.
const STATE_WIDE_W: usize = 21;
/// From this width the state columns carry the average stay.
const WIDE_FROM: u16 = 120;
/// Header lines: state names, exit latency and target, column names.
const HEAD_ROWS: u16 = 3;
/// Width of each figure inside a state column.
const FIG_W: usize = 6;

/// Draws the C-states view.
pub fn render(s: &State, area: Rect, buf: &mut Buffer) {
    let t = s.theme();
    let Some(iv) = s.judged().latest() else {
        put_str(
            buf,
            area.x + 1,
            area.y,
            "no interval yet",
            t.dim(),
            area.width - 1,
        );
        return;
    };
    let Some(first) = iv.cpus.first() else { return };
    let measured = |r: &CpuRates| {
        r.idle.iter().any(|st| st.pct.is_some()) || r.hw_cstates.iter().any(|h| h.1.is_some())
    };
    if !iv.cpus.iter().any(measured) {
        for (i, l) in static_states(s, area.width).into_iter().enumerate() {
            let y = area.y + i as u16;
            if y >= area.y + area.height {
                break;
            }
            put(buf, area.x, y, &l, area.width);
        }
        return;
    }
    let sw = if area.width >= WIDE_FROM {
        STATE_WIDE_W
    } else {
        STATE_W
    };
    let pkg_rows = iv.pkgs.len().min(2) as u16;
    // read in rounds, most CPUs' cpuidle figures cover the rounds' window
    // (the longest); the watched ones, read every sample, say their own
    let window = iv.cpus.iter().filter_map(|c| c.window_s).reduce(f64::max);
    let [names, units, cols] = header(s, first, window, sw);
    put(buf, area.x, area.y, &names, area.width);
    put(buf, area.x, area.y + 1, &units, area.width);
    put(buf, area.x, area.y + 2, &cols, area.width);
    let order = s.order();
    let rows = area.height.saturating_sub(HEAD_ROWS + pkg_rows) as usize;
    let at = s
        .nav()
        .selected()
        .and_then(|c| order.iter().position(|x| *x == c))
        .unwrap_or(0);
    let start = at.checked_div(rows).map_or(0, |page| page * rows);
    for (i, cpu) in order.iter().skip(start).take(rows).enumerate() {
        let Some(r) = iv.cpu(*cpu) else { continue };
        let y = area.y + HEAD_ROWS + i as u16;
        put(buf, area.x, y, &cpu_row(s, r, window, sw), area.width);
        if Some(*cpu) == s.nav().selected() {
            buf.set_style(Rect::new(area.x, y, area.width, 1), t.selected());
        }
    }
    crate::tui::pane::rows_position(area, buf, start, rows, order.len(), t);
    let py = area.y + area.height - pkg_rows;
    for (i, p) in iv.pkgs.iter().take(pkg_rows as usize).enumerate() {
        let cst: Vec<String> = p
            .cstates
            .iter()
            .map(|(n, v)| format!("{n} {} %", fmt::pct(*v, 1)))
            .collect();
        let watts: Vec<String> = p
            .watts
            .iter()
            .map(|(d, w)| format!("{d} {} W", fmt::pct(*w, 1)))
            .collect();
        let text = format!(
            " pkg {}: {} │ {} │ {} °C",
            p.package,
            if cst.is_empty() {
                "package C-states ·".into()
            } else {
                cst.join("  ")
            },
            if watts.is_empty() {
                "power ·".into()
            } else {
                watts.join("  ")
            },
            fmt::whole(p.temp_c)
        );
        put_str(buf, area.x, py + i as u16, text, t.text(), area.width);
    }
}

/// Height of the box (borders included) that shows every CPU's row, or
/// what one read names when no residency was measured; `None` before an
/// interval.
pub fn wanted_rows(s: &State, width: u16) -> Option<u16> {
    let iv = s.judged().latest()?;
    let measured = iv.cpus.iter().any(|r| {
        r.idle.iter().any(|st| st.pct.is_some()) || r.hw_cstates.iter().any(|h| h.1.is_some())
    });
    let inner = if measured {
        usize::from(HEAD_ROWS) + s.order().len() + iv.pkgs.len().min(2)
    } else {
        static_states(s, width.saturating_sub(2)).len()
    };
    u16::try_from(inner.max(1) + 2).ok()
}

/// What one read can show when no residency was measured: the states
/// sysfs names for the selected CPU, with exit latency and target
/// residency, and why there are no rates; lines for a box `width` wide.
fn static_states(s: &State, width: u16) -> Vec<Line<'static>> {
    let t = s.theme();
    let cpu = s
        .nav()
        .selected()
        .or_else(|| s.judged().machine().online.first().copied());
    let states = cpu.and_then(|c| s.judged().machine().idle_states.get(&c));
    let why = match (states, s.one_instant()) {
        (Some(v), true) if !v.is_empty() => format!(
            "one instant: rates need two. sysfs names {} idle states for CPU {}; residency and \
             entries need a second read: replay a capture of two instants or more",
            v.len(),
            cpu.unwrap_or_default()
        ),
        (Some(v), false) if !v.is_empty() => format!(
            "sysfs names {} idle states but no residency was read for them (u: why)",
            v.len()
        ),
        _ => s.judged().machine().idle_missing.as_ref().map_or_else(
            || "no idle states: this tree has no cpuidle directory".into(),
            |u| u.detail().to_string(),
        ),
    };
    let mut lines: Vec<Line<'static>> = crate::tui::pane::wrap(
        vec![Span::raw(" "), Span::styled(why, t.warn())],
        usize::from(width.saturating_sub(1)),
        1,
    );
    let Some(states) = states.filter(|v| !v.is_empty()) else {
        return lines;
    };
    let opt = |v: Option<u64>| v.map_or_else(|| fmt::UNKNOWN.into(), |v| v.to_string());
    let head = format!(
        " {} {} {} {}",
        left("state", 10),
        right("exit µs", 8),
        right("target µs", 10),
        "description"
    );
    lines.push(Line::styled(head, t.title()));
    for st in states {
        let name = if st.disabled == Some(true) {
            format!("{} (off)", st.name)
        } else {
            st.name.to_string()
        };
        let text = format!(
            " {} {} {} {}",
            left(&name, 10),
            right(&opt(st.latency_us), 8),
            right(&opt(st.residency_us), 10),
            st.desc
        );
        lines.push(Line::styled(text, t.text()));
    }
    lines
}

/// Three header lines: state names (`(off)` when disabled in sysfs), exit
/// latency / target residency, and the names of each state's figures.
fn header(s: &State, first: &CpuRates, window: Option<f64>, sw: usize) -> [Line<'static>; 3] {
    let t = s.theme();
    let mut names = vec![Span::styled("  CPU   C0 %", t.title())];
    let mut units = vec![Span::styled(" exit/tgt µs", t.dim())];
    let mut cols = vec![Span::styled("        busy", t.dim())];
    let opt = |v: Option<u64>| v.map_or_else(|| fmt::UNKNOWN.into(), |v| v.to_string());
    let off = crate::tui::cores::state_names(s);
    for (i, st) in first.idle.iter().enumerate() {
        let name = if off.get(i).is_some_and(|o| o.1) {
            format!("{} (off)", st.name)
        } else {
            st.name.to_string()
        };
        names.push(Span::styled(
            right(&left(&name, sw - 1), sw),
            t.cstate(i + 1),
        ));
        let u = format!("{}/{}", opt(st.latency_us), opt(st.residency_us));
        units.push(Span::styled(right(&u, sw), t.dim()));
        let mut c = format!("{}{}", right("res %", FIG_W), right("ent/s", FIG_W));
        if sw >= STATE_WIDE_W {
            c.push_str(&right("stay µs", FIG_W + 2));
        }
        cols.push(Span::styled(right(&c, sw), t.dim()));
    }
    names.push(Span::styled("   above/s below/s", t.title()));
    units.push(Span::styled("   mis-predicted  ", t.dim()));
    cols.push(Span::styled("   entries/s        ", t.dim()));
    if !first.hw_cstates.is_empty() {
        let hw: Vec<String> = first.hw_cstates.iter().map(|h| right(h.0, 6)).collect();
        names.push(Span::styled(format!(" │{}", hw.join("")), t.title()));
        units.push(Span::styled(" │ hardware core %", t.dim()));
    }
    if let Some(w) = window {
        // a big machine reads cpuidle in rounds: say what the figures cover
        units.push(Span::styled(format!("  cpuidle: last {w:.0} s"), t.dim()));
    }
    [Line::from(names), Line::from(units), Line::from(cols)]
}

/// One state's cell: residency %, entries/s and, when wide, the average
/// stay in µs; the units are in the column header.
fn cell(st: &IdleRate, sw: usize) -> String {
    let base = format!(
        "{}{}",
        right(&fmt::pct(st.pct, 1), FIG_W),
        right(&fmt::rate(st.per_s), FIG_W)
    );
    if sw < STATE_WIDE_W {
        return base;
    }
    // average stay = time in state / entries = pct·10⁴/per_s µs
    let stay = match (st.pct, st.per_s) {
        (Some(p), Some(n)) if n > 0.0 => fmt::rate(Some(p * 1e4 / n)),
        _ => fmt::UNKNOWN.into(),
    };
    format!("{base}{}", right(&stay, FIG_W + 2))
}

fn cpu_row(s: &State, r: &CpuRates, window: Option<f64>, sw: usize) -> Line<'static> {
    let t = s.theme();
    let mark = if s.is_watched(r.cpu) { "▸" } else { " " };
    let mut spans = vec![
        Span::styled(
            format!("{mark}{}", right(&r.cpu.to_string(), 4)),
            if s.is_watched(r.cpu) {
                t.watched()
            } else {
                t.text()
            },
        ),
        Span::raw(right(&fmt::pct(r.busy_pct, 1), 7)),
    ];
    let mut above = None;
    let mut below = None;
    for (i, st) in r.idle.iter().enumerate() {
        let style = if st.disabled == Some(true) {
            t.dim()
        } else {
            t.cstate(i + 1)
        };
        spans.push(Span::styled(right(&cell(st, sw), sw), style));
        above = sum(above, st.above_per_s);
        below = sum(below, st.below_per_s);
    }
    spans.push(Span::raw(format!(
        " {} {}   ",
        right(&fmt::rate(above), 9),
        right(&fmt::rate(below), 7)
    )));
    if !r.hw_cstates.is_empty() {
        let cells: Vec<String> = r
            .hw_cstates
            .iter()
            .map(|h| right(&fmt::pct(h.1, 1), 6))
            .collect();
        spans.push(Span::styled(format!(" │{}", cells.join("")), t.text()));
    }
    if r.idle.is_empty() && r.hw_cstates.is_empty() {
        spans.push(Span::styled("  no C-state figures for this CPU", t.dim()));
    }
    if let (Some(w), Some(common)) = (r.window_s, window)
        && format!("{w:.0}") != format!("{common:.0}")
    {
        spans.push(Span::styled(format!("  cpuidle: last {w:.0} s"), t.dim()));
    }
    Line::from(spans)
}

fn sum(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x + y),
        (x, None) => x,
        (None, y) => y,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(pct: Option<f64>, per_s: Option<f64>) -> IdleRate {
        IdleRate {
            name: "C6".into(),
            pct,
            per_s,
            above_per_s: None,
            below_per_s: None,
            latency_us: Some(133),
            residency_us: Some(600),
            disabled: None,
        }
    }

    #[test]
    fn cells_show_residency_entries_and_average_stay() {
        // 60 % of a second in 200 entries: 3000 µs each
        assert_eq!(
            cell(&st(Some(60.0), Some(200.0)), STATE_WIDE_W),
            "  60.0   200    3000"
        );
        assert_eq!(cell(&st(Some(60.0), Some(200.0)), STATE_W), "  60.0   200");
        // no entries: the stay is unknown, not infinite
        assert_eq!(
            cell(&st(Some(0.0), Some(0.0)), STATE_WIDE_W),
            "   0.0     0       ·"
        );
        assert_eq!(cell(&st(None, None), STATE_W), "     ·     ·");
    }

    #[test]
    fn sums_keep_unknown_only_when_both_are() {
        assert_eq!(sum(None, None), None);
        assert_eq!(sum(Some(1.0), None), Some(1.0));
        assert_eq!(sum(Some(1.0), Some(2.5)), Some(3.5));
    }
}
