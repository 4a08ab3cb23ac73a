//! Pop-ups over the screen: the help (every key from the key table, and
//! the legend) and the list of metrics with their source or why they are
//! unavailable.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget, Wrap};

use crate::tui::bars::{BASE_MARK, SHADES};
use crate::tui::fmt::left;
use crate::tui::keys::BINDINGS;
use crate::tui::state::State;

/// A rectangle of at most `w`×`h` centred in `area`.
fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let [row] =
        area.layout(&Layout::vertical([Constraint::Length(h.min(area.height))]).flex(Flex::Center));
    let [cell] =
        row.layout(&Layout::horizontal([Constraint::Length(w.min(area.width))]).flex(Flex::Center));
    cell
}

fn show(
    title: &str,
    lines: Vec<Line<'static>>,
    area: Rect,
    width: u16,
    buf: &mut Buffer,
    s: &State,
) {
    let inner_w = usize::from(width.min(area.width).saturating_sub(2)).max(1);
    let rows: usize = lines
        .iter()
        .map(|l| l.width().div_ceil(inner_w).max(1))
        .sum();
    let r = centered(area, width, rows as u16 + 2);
    Clear.render(r, buf);
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .block(Block::bordered().title(Span::styled(format!(" {title} "), s.theme.title())))
        .render(r, buf);
}

/// Draws the help: each binding of the key table, then the legend.
pub fn render_help(s: &State, area: Rect, buf: &mut Buffer) {
    let t = s.theme;
    let mut lines: Vec<Line<'static>> = BINDINGS
        .iter()
        .map(|b| {
            Line::from(vec![
                Span::styled(format!(" {}", left(b.shown, 10)), t.title()),
                Span::raw(b.what),
            ])
        })
        .collect();
    lines.push(Line::from(""));
    let legend = [
        format!(
            " █▌░ {BASE_MARK}   frequency: solid to Avg_MHz, light to Bzy_MHz, {BASE_MARK} base"
        ),
        format!(
            " {}{}{}{}  C-states: C0 (busy), then idle states shallow to deep",
            SHADES[0], SHADES[1], SHADES[2], SHADES[3]
        ),
        " ▸      a watched (benchmark) CPU".to_string(),
        " ·      unknown (u says why)".to_string(),
    ];
    lines.extend(legend.into_iter().map(|l| Line::styled(l, t.dim())));
    show("keys", lines, area, 76, buf, s);
}

/// Draws every metric with its source (rung) or why it is unavailable.
pub fn render_why(s: &State, area: Rect, buf: &mut Buffer) {
    let t = s.theme;
    let mut lines = Vec::new();
    if s.statuses.is_empty() {
        lines.push(Line::styled(" no snapshot yet", t.dim()));
    }
    for st in &s.statuses {
        let name = Span::styled(format!(" {}", left(st.metric.label(), 22)), t.title());
        let mut spans = vec![name];
        match (&st.rung, &st.source) {
            (Some(r), Some(src)) => spans.push(Span::raw(format!("{}: {src}", r.label()))),
            _ => spans.push(Span::styled("unavailable", t.warn())),
        }
        if let Some(n) = &st.note {
            spans.push(Span::styled(format!(" — {n}"), t.dim()));
        }
        lines.push(Line::from(spans));
    }
    let w = area.width.saturating_sub(4).min(150);
    show(
        "where each figure comes from (u: close)",
        lines,
        area,
        w,
        buf,
        s,
    );
}
