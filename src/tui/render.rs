//! The root of the screen: `impl Widget for &State`, the layout, header,
//! tabs and footer. Every view renders as `render(state, area, buf)`.
//!
//! ```text
//! ┌──────────────────────────────────────────────────────────────────────┐
//! │ noisetop │ model │ pkg·cores·CPUs │ base·max MHz │ interval │ time   │ header
//! │ cpufreq governor │ turbo │ SMT │ idle │ isolated │ nohz_full │ …     │  (3 lines)
//! │ unavailable: … (u: why)                                              │
//! ├ Cores │ Interrupts │ C-states │ Findings ────────── sort · count ────┤
//! │ CPU rows: wide (≥ 150 columns), compact, or two compact columns      │ body
//! │  …                                                                   │
//! ├ CPU 1 history ───────────────────────────────────────────────────────┤ history, in the
//! │ the selected CPU's charts (MHz, busy, C-states, IRQ/s, CSW/s)        │  room a view's
//! │  …                                                                   │  rows leave
//! ├ Findings ────────────────────────────────────────────────────────────┤ pane (7 lines,
//! │ newest first: time SEV kind evidence → fix                           │  or a one-line
//! ├──────────────────────────────────────────────────────────────────────┤  ticker < 30 rows)
//! │ key hints from the key table                 freq source · own CPU % │ footer
//! └──────────────────────────────────────────────────────────────────────┘
//! ```

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect, Size};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Widget};

use crate::pipeline::Note;
use crate::sample::ladder::Metric;
use crate::tui::fit::{ALWAYS, Piece, fit};
use crate::tui::fmt;
use crate::tui::keys;
use crate::tui::layout::{HEADER_ROWS, pane_rows};
use crate::tui::state::{SelfIpis, State, View};
use crate::tui::{cores, cstates, detail, header, irqs, overview, pane, popup};

/// Below this width the tabs and the footer use short forms.
pub const COMPACT_BELOW: u16 = 120;
/// The stacked areas of the screen: header, body, the selected CPU's
/// history, findings, footer. A view whose rows all fit takes what it
/// needs, and the room it leaves goes to the history of the selected CPU
/// (what the user watches, as btop puts a graph under its list), or, when
/// too little for charts, to the findings.
fn areas(area: Rect, s: &State) -> [Rect; 5] {
    let pane = pane_rows(area.height);
    let most = area.height.saturating_sub(HEADER_ROWS + pane + 1);
    let (body, history) = match wanted_rows(s, area.width) {
        Some(want) if want < most => {
            let spare = most - want;
            if spare >= HISTORY_MIN && s.nav().selected().is_some() {
                (want, spare)
            } else if pane > 1 {
                // the findings pane takes it
                (want, 0)
            } else {
                (most, 0)
            }
        }
        _ => (most, 0),
    };
    area.layout(&Layout::vertical([
        Constraint::Length(HEADER_ROWS),
        Constraint::Length(body),
        Constraint::Length(history),
        Constraint::Fill(1),
        Constraint::Length(1),
    ]))
}

/// Fewest rows the history box is drawn in: its borders, five charts of a
/// label and a row each, and the time axis.
const HISTORY_MIN: u16 = 13;

/// Rows the view on screen needs, borders included, when it knows.
fn wanted_rows(s: &State, width: u16) -> Option<u16> {
    match s.nav().view() {
        View::Cores => cores::wanted_rows(s, width),
        View::Overview => overview::wanted_rows(s, width),
        View::Interrupts => irqs::wanted_rows(s),
        View::Cstates => cstates::wanted_rows(s, width),
        View::Findings | View::Detail => None,
    }
}

/// Smallest screen the layout is drawn on; below it a one-line notice.
pub const MIN_SIZE: Size = Size::new(40, 10);

impl Widget for &State {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if area.width < MIN_SIZE.width || area.height < MIN_SIZE.height {
            if area.height > 0 {
                let msg = format!("noisetop needs {}×{}", MIN_SIZE.width, MIN_SIZE.height);
                buf.set_stringn(
                    area.x,
                    area.y,
                    msg,
                    area.width as usize,
                    self.theme().warn(),
                );
            }
            return;
        }
        let [header, body, history, findings, footer] = areas(area, self);
        header::render(self, header, buf);
        let block = Block::bordered()
            .title(tabs(self))
            .title_top(body_title(self, body_title_room(self, body.width)).right_aligned())
            .border_style(self.theme().dim());
        let inner = block.inner(body);
        block.render(body, buf);
        let empty = matches!(
            self.nav().view(),
            View::Cores | View::Overview | View::Interrupts | View::Cstates
        );
        match self.why_no_rows() {
            Some(why) if empty => pane::render_why_empty(self, &why, inner, buf),
            _ => self.render_view(inner, buf),
        }
        if history.height > 0 {
            detail::render_history_box(self, history, buf);
        }
        if findings.height > 1 {
            pane::render_pane(self, findings, buf);
        } else {
            pane::render_ticker(self, findings, buf);
        }
        render_footer(self, footer, buf);
        popup::render(self, area, buf);
    }
}

impl State {
    fn render_view(&self, inner: Rect, buf: &mut Buffer) {
        match self.nav().view() {
            View::Cores => cores::render(self, inner, buf),
            View::Overview => overview::render(self, inner, buf),
            View::Interrupts => irqs::render(self, inner, buf),
            View::Cstates => cstates::render(self, inner, buf),
            View::Findings => pane::render_log(self, inner, buf),
            View::Detail => detail::render(self, inner, buf),
        }
    }
}

/// Columns the body's top border leaves right of the tabs (a corner each
/// side and a rule of at least one between).
fn body_title_room(s: &State, width: u16) -> usize {
    usize::from(width).saturating_sub(tabs(s).width() + 3)
}

/// The tab line on the body's top border; Detail shows as a fifth tab.
/// On a narrow screen the tabs farthest from the one on screen go first,
/// whole, so no tab name is ever cut.
fn tabs(s: &State) -> Line<'static> {
    let t = s.theme();
    let mut views = View::TABS.to_vec();
    if s.nav().view() == View::Detail {
        views.push(View::Detail);
    }
    let narrow = s.nav().screen().width < COMPACT_BELOW;
    let at = views.iter().position(|v| *v == s.nav().view()).unwrap_or(0);
    let pieces = views
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let style = if *v == s.nav().view() {
                t.title().patch(t.selected())
            } else {
                t.dim()
            };
            let keep = if i == at {
                ALWAYS
            } else {
                u8::try_from(100 - at.abs_diff(i)).unwrap_or(0)
            };
            match (narrow, v) {
                (true, View::Interrupts) => Piece::new("IRQs", style, keep),
                _ => Piece::new(v.label(), style, keep),
            }
        })
        .collect();
    let sep = Span::styled(if narrow { "│" } else { " │ " }, t.dim());
    // two corners and a rule of at least one column around the tabs
    let room = usize::from(s.nav().screen().width).saturating_sub(4);
    let mut line = fit(" ", pieces, &sep, room);
    line.spans.push(Span::raw(" "));
    line
}

/// Right side of the body's top border: order, filter, counts, watched
/// CPUs, pause; it shortens to the room the tabs leave.
fn body_title(s: &State, room: usize) -> Line<'static> {
    let t = s.theme();
    let mut pieces = vec![Piece::new(
        format!("sort {}", s.nav().sort().label()),
        t.text(),
        3,
    )];
    if s.nav().filter() != crate::tui::state::Filter::All {
        pieces.push(Piece::new(s.nav().filter().label(), t.text(), 8));
    }
    let (shown, n) = (s.order().len(), s.judged().machine().online.len());
    pieces.push(Piece::or_short(
        format!("{shown} of {n} CPUs"),
        format!("{shown}/{n}"),
        t.text(),
        6,
    ));
    if !s.judged().watched().is_empty() {
        let w = fmt::cpus(s.judged().watched());
        pieces.push(Piece::or_short(
            format!("watching {w}"),
            format!("▸{w}"),
            t.text(),
            7,
        ));
    }
    if !s.nav().goto().is_empty() {
        let found = s.nav().selected().map(|c| c.to_string()).as_deref() == Some(s.nav().goto());
        pieces.push(Piece::new(
            if found {
                format!("CPU {}", s.nav().goto())
            } else {
                format!("CPU {}: not listed", s.nav().goto())
            },
            t.title(),
            ALWAYS,
        ));
    }
    if s.pacing().paused() {
        pieces.push(Piece::or_short(
            if s.pacing().held().is_empty() {
                "PAUSED".into()
            } else {
                format!("PAUSED ({} held)", s.pacing().held().len())
            },
            "PAUSED",
            t.text(),
            ALWAYS,
        ));
    }
    let mut line = fit(" ", pieces, &Span::raw(" · "), room.saturating_sub(1));
    line.spans.push(Span::raw(" "));
    line
}

/// The footer: key hints that fit, then the frequency source and noisetop's own CPU use.
fn render_footer(s: &State, area: Rect, buf: &mut Buffer) {
    let t = s.theme();
    let rung = s
        .judged()
        .statuses()
        .iter()
        .find(|st| st.metric == Metric::Frequency)
        .and_then(|st| st.rung)
        .map_or(fmt::UNKNOWN, |r| r.label());
    // a recorder says its file, rows and size on every sample
    let rec = s
        .judged()
        .notes()
        .iter()
        .find(|n| matches!(n, Note::Recording { .. }));
    // the IPIs it sent to watched CPUs, counted by the kernel (0 is the promise)
    let ipis = match (s.pacing().own_ipis(), s.judged().watched().is_empty()) {
        (SelfIpis::NotLive, _) | (_, true) => String::new(),
        (SelfIpis::Counted { sent, woke: 0 }, false) => format!(", {sent} IPI to watched"),
        // wake-ups its writes caused: a task of the terminal's ran there
        (SelfIpis::Counted { sent, woke }, false) => {
            format!(", {sent} IPI (+{woke} wake-ups) to watched")
        }
        (SelfIpis::Uncounted, false) => format!(", {} IPI to watched", fmt::UNKNOWN),
    };
    let right = match (area.width < COMPACT_BELOW, rec) {
        (true, _) => format!("MHz via {rung} "),
        (false, None) => format!(
            "MHz via {rung} │ self {} % CPU{ipis} ",
            fmt::pct(s.pacing().own_cpu(), 2)
        ),
        (false, Some(r)) => format!(
            "{r} │ MHz via {rung} │ self {} % CPU{ipis} ",
            fmt::pct(s.pacing().own_cpu(), 2)
        ),
    };
    let mut spans: Vec<Span> = Vec::new();
    let mut used = 0;
    // a recorder that could not write says so where it cannot be missed
    if let Some(e) = s
        .judged()
        .notes()
        .iter()
        .find(|n| matches!(n, Note::RecordingFailed { .. }))
    {
        let text = format!(" {e} ");
        used += text.chars().count();
        spans.push(Span::styled(text, t.warn()));
    }
    if s.stale_for().is_some() {
        let text = " STALE ".to_string();
        used += text.chars().count();
        spans.push(Span::styled(
            text,
            t.warn().add_modifier(ratatui::style::Modifier::REVERSED),
        ));
    }
    if s.pacing().paused() {
        spans.push(Span::styled(" PAUSED ", t.selected()));
        used += 8;
    }
    let room = (area.width as usize).saturating_sub(right.chars().count() + 1 + used);
    for (k, what) in keys::hints_that_fit(room, 3) {
        spans.push(Span::styled(format!(" {k}"), t.title()));
        spans.push(Span::styled(format!(" {what} "), t.dim()));
    }
    buf.set_line(area.x, area.y, &Line::from(spans), area.width);
    let x = area.x + area.width.saturating_sub(right.chars().count() as u16);
    buf.set_string(x, area.y, right, t.dim());
}
