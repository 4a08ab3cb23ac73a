//! The C-states view: per CPU, C0 (busy) and each idle state's residency
//! and entries per second, the states' exit latency and target residency
//! in the header, mis-predictions (above/below) per second, the hardware
//! core C-states, and package C-states, power and temperature below.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::interval::CpuRates;
use crate::tui::fmt::{self, left, right};
use crate::tui::state::State;

/// Width of one idle-state column: residency % and entries/s.
const STATE_W: usize = 13;

/// Draws the C-states view.
pub fn render(s: &State, area: Rect, buf: &mut Buffer) {
    let t = s.theme;
    let Some(iv) = &s.latest else {
        buf.set_string(area.x + 1, area.y, "no interval yet", t.dim());
        return;
    };
    let Some(first) = iv.cpus.first() else { return };
    let pkg_rows = iv.pkgs.len().min(2) as u16;
    // header: each state's name and exit latency / target residency
    let mut head = vec![Span::styled("  CPU   C0 %", t.title())];
    for st in &first.idle {
        let lat = st
            .latency_us
            .map_or_else(|| fmt::UNKNOWN.into(), |v| v.to_string());
        let res = st
            .residency_us
            .map_or_else(|| fmt::UNKNOWN.into(), |v| v.to_string());
        head.push(Span::styled(
            right(&format!("{} {lat}/{res}µs", st.name), STATE_W + 1),
            t.title(),
        ));
    }
    head.push(Span::styled(" above/s below/s", t.title()));
    if !first.hw_cstates.is_empty() {
        let names: Vec<String> = first
            .hw_cstates
            .iter()
            .map(|h| right(&format!("{}%", h.0), 6))
            .collect();
        head.push(Span::styled(format!(" │ hw{}", names.join("")), t.title()));
    }
    buf.set_line(area.x, area.y, &Line::from(head), area.width);
    let order = s.order();
    let rows = area
        .height
        .saturating_sub(1 + pkg_rows + u16::from(pkg_rows > 0)) as usize;
    let at = s
        .selected
        .and_then(|c| order.iter().position(|x| *x == c))
        .unwrap_or(0);
    let start = at.checked_div(rows).map_or(0, |page| page * rows);
    for (i, cpu) in order.iter().skip(start).take(rows).enumerate() {
        let Some(r) = iv.cpu(*cpu) else { continue };
        let y = area.y + 1 + i as u16;
        buf.set_line(area.x, y, &cpu_row(s, r), area.width);
        if Some(*cpu) == s.selected {
            buf.set_style(Rect::new(area.x, y, area.width, 1), t.selected());
        }
    }
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
        buf.set_string(area.x, py + i as u16, text, t.text());
    }
}

fn cpu_row(s: &State, r: &CpuRates) -> Line<'static> {
    let t = s.theme;
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
        let cell = format!("{}% {}/s", fmt::pct(st.pct, 1), fmt::rate(st.per_s));
        spans.push(Span::styled(right(&cell, STATE_W + 1), style));
        above = sum(above, st.above_per_s);
        below = sum(below, st.below_per_s);
    }
    spans.push(Span::raw(format!(
        " {} {}",
        right(&fmt::rate(above), 7),
        right(&fmt::rate(below), 7)
    )));
    if !r.hw_cstates.is_empty() {
        let cells: Vec<String> = r
            .hw_cstates
            .iter()
            .map(|h| right(&fmt::pct(h.1, 1), 6))
            .collect();
        spans.push(Span::styled(format!(" │   {}", cells.join("")), t.text()));
    }
    if r.idle.is_empty() && r.hw_cstates.is_empty() {
        spans.push(Span::styled(
            left("  no C-state figures for this CPU", 40),
            t.dim(),
        ));
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
