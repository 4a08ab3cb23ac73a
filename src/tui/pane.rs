//! Findings on screen: the pane under the cores (newest first, kept for
//! the session), the one-line ticker on short screens, and the Findings
//! view with counts and first and last seen.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Widget};

use crate::noise::Finding;
use crate::tui::fmt::{self, left, right};
use crate::tui::log::Entry;
use crate::tui::state::State;

/// One finding on one line: severity, kind, evidence, then the fix.
fn finding_line(s: &State, f: &Finding, prefix: Option<String>) -> Line<'static> {
    let t = s.theme;
    let mut spans = Vec::new();
    if let Some(p) = prefix {
        spans.push(Span::styled(p, t.dim()));
    }
    spans.push(Span::styled(
        format!("{} ", f.severity.label()),
        t.severity(f.severity),
    ));
    spans.push(Span::styled(
        format!("{} ", left(f.kind.tag(), 16)),
        t.title(),
    ));
    spans.push(Span::raw(f.evidence.clone()));
    if let Some(fix) = &f.fix {
        spans.push(Span::styled(" → ", t.dim()));
        spans.push(Span::styled(fix.clone(), t.good()));
    }
    Line::from(spans)
}

/// What the pane says when there is nothing to show.
fn nothing(s: &State) -> &'static str {
    if s.latest.is_none() {
        "findings appear after the first interval"
    } else if s.watched.is_empty() {
        "no noise found; mark benchmark CPUs with m (or --watch 2-5) to look for noise on them"
    } else {
        "no noise found on the watched CPUs"
    }
}

/// Draws the findings pane: the session's findings, most recently seen first.
pub fn render_pane(s: &State, area: Rect, buf: &mut Buffer) {
    let t = s.theme;
    let block = Block::bordered()
        .title(Span::styled(
            format!(" Findings · {} this session ", s.log.len()),
            t.title(),
        ))
        .border_style(t.dim());
    let inner = block.inner(area);
    block.render(area, buf);
    let entries = s.log.newest_first();
    if entries.is_empty() {
        buf.set_string(inner.x + 1, inner.y, nothing(s), t.dim());
        return;
    }
    for (i, e) in entries.iter().take(inner.height as usize).enumerate() {
        let line = finding_line(s, &e.finding, Some(format!("{} ", fmt::clock(e.last_ns))));
        buf.set_line(inner.x, inner.y + i as u16, &line, inner.width);
    }
}

/// Draws the one-line ticker: the most severe finding of the interval on screen.
pub fn render_ticker(s: &State, area: Rect, buf: &mut Buffer) {
    let t = s.theme;
    match s.findings.first() {
        Some(f) => {
            let more = s.findings.len() - 1;
            let prefix = if more > 0 {
                format!(" +{more} ")
            } else {
                " ".to_string()
            };
            buf.set_line(
                area.x,
                area.y,
                &finding_line(s, f, Some(prefix)),
                area.width,
            );
        }
        None => {
            buf.set_string(area.x + 1, area.y, nothing(s), t.dim());
        }
    }
}

/// Draws the Findings view: every finding of the session with its count
/// and first and last seen, the fix on the line below.
pub fn render_log(s: &State, area: Rect, buf: &mut Buffer) {
    let head = format!(
        " {}  {}  {} SEV  {} evidence",
        left("last", 8),
        left("first", 8),
        right("count", 5),
        left("kind", 16)
    );
    let t = s.theme;
    buf.set_string(area.x, area.y, head, t.title());
    let entries = s.log.newest_first();
    if entries.is_empty() {
        buf.set_string(area.x + 1, area.y + 1, nothing(s), t.dim());
        return;
    }
    let mut y = area.y + 1;
    for e in entries {
        if y + 1 >= area.y + area.height {
            break;
        }
        entry(s, e, Rect::new(area.x, y, area.width, 2), buf);
        y += 2;
    }
}

fn entry(s: &State, e: &Entry, area: Rect, buf: &mut Buffer) {
    let t = s.theme;
    let f = &e.finding;
    let line = Line::from(vec![
        Span::styled(
            format!(
                " {}  {}  {} ",
                fmt::clock(e.last_ns),
                fmt::clock(e.first_ns),
                right(&e.count.to_string(), 5)
            ),
            t.dim(),
        ),
        Span::styled(format!("{} ", f.severity.label()), t.severity(f.severity)),
        Span::styled(format!("{} ", left(f.kind.tag(), 16)), t.title()),
        Span::raw(f.evidence.clone()),
    ]);
    buf.set_line(area.x, area.y, &line, area.width);
    let fix = f.fix.as_deref().unwrap_or("no usual fix");
    let line = Line::from(vec![
        Span::styled(format!("{}→ ", " ".repeat(32)), t.dim()),
        Span::styled(fix.to_string(), t.good()),
    ]);
    buf.set_line(area.x, area.y + 1, &line, area.width);
}
