//! The Interrupts view: interrupt sources (rows, hottest first, then the
//! softirq types) × CPUs (columns, in row order, a page around the
//! selected CPU), rates per second. Watched CPUs are marked `▸`.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::model::irq_rates::SourceRates;
use crate::tui::fit::{put, put_str};
use crate::tui::fmt::{self, left, right};
use crate::tui::state::State;

/// Width of one CPU column.
const CELL: usize = 6;

/// The CPUs that get a column: a page of the row order around the selection.
fn columns(s: &State, fit: usize) -> Vec<u32> {
    let order = s.order();
    let fit = fit.max(1);
    let at = s
        .nav()
        .selected()
        .and_then(|c| order.iter().position(|x| *x == c))
        .unwrap_or(0);
    let first = (at / fit) * fit;
    order.into_iter().skip(first).take(fit).collect()
}

/// Widths of the label, description and total columns: the description
/// takes what the CPU columns leave, up to the longest there is, so that
/// a few CPUs do not cut "Local timer interrupts" short.
fn label_widths(width: usize, cpus: usize, longest: usize) -> (usize, usize, usize) {
    let (lw, dw, tw) = if width >= 120 { (6, 26, 7) } else { (5, 14, 6) };
    let spare = width.saturating_sub(lw + dw + tw + 3 + cpus * CELL);
    (lw, dw + spare.min(longest.saturating_sub(dw)), tw)
}

/// Draws the Interrupts view.
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
    let longest = iv
        .irqs
        .iter()
        .chain(&iv.softirqs)
        .filter(|r| r.total > 0.0)
        .map(|r| desc_of(r).chars().count())
        .max()
        .unwrap_or(0);
    let (lw, dw, tw) = label_widths(area.width as usize, s.order().len(), longest);
    let fit = (area.width as usize).saturating_sub(lw + dw + tw + 3) / CELL;
    let cols = columns(s, fit);
    let index: Vec<Option<usize>> = cols
        .iter()
        .map(|c| iv.cpus.iter().position(|r| r.cpu == *c))
        .collect();
    let mut head = vec![Span::styled(
        format!(
            "{} {} {} ",
            left("IRQ", lw),
            left("source", dw),
            right("all/s", tw)
        ),
        t.title(),
    )];
    for &c in &cols {
        let mark = if s.is_watched(c) { "▸" } else { "" };
        let mut style = if s.is_watched(c) {
            t.watched()
        } else {
            t.title()
        };
        if Some(c) == s.nav().selected() {
            style = style.patch(t.selected());
        }
        head.push(Span::styled(right(&format!("{mark}{c}"), CELL), style));
    }
    put(buf, area.x, area.y, &Line::from(head), area.width);
    let order_len = s.order().len();
    if cols.len() < order_len {
        let at = s
            .order()
            .iter()
            .position(|c| Some(c) == cols.first())
            .unwrap_or(0);
        let text = format!(
            "CPUs {}–{} of {order_len} · ↑↓ pages",
            at + 1,
            at + cols.len()
        );
        crate::tui::pane::position(area, buf, &text, t);
    }
    let busy: Vec<&SourceRates> = iv.irqs.iter().filter(|r| r.total > 0.0).collect();
    let soft: Vec<&SourceRates> = iv.softirqs.iter().filter(|r| r.total > 0.0).collect();
    let mut y = area.y + 1;
    let bottom = area.y + area.height;
    if busy.is_empty() && soft.is_empty() {
        let why = empty_reason(s, iv);
        crate::tui::pane::render_why_empty(
            s,
            &why,
            Rect::new(area.x, y, area.width, area.height.saturating_sub(1)),
            buf,
        );
        return;
    }
    for r in &busy {
        if y >= bottom {
            break;
        }
        put(buf, area.x, y, &row(s, r, &index, (lw, dw, tw)), area.width);
        y += 1;
    }
    let hidden = iv.irqs.len() - busy.len();
    if hidden > 0 && y < bottom {
        let note = format!("({hidden} interrupt sources at 0/s not listed)");
        put_str(buf, area.x, y, note, t.dim(), area.width);
        y += 1;
    }
    if y + 1 < bottom && !soft.is_empty() {
        put_str(buf, area.x, y, "softirqs", t.title(), area.width);
        y += 1;
        for r in &soft {
            if y >= bottom {
                break;
            }
            put(buf, area.x, y, &row(s, r, &index, (lw, dw, tw)), area.width);
            y += 1;
        }
    }
}

/// Height of the box (borders included) that lists every source that
/// fired: the header, the interrupt rows and the note on the silent ones,
/// the softirq heading and rows; `None` before an interval or when none
/// fired (the reason is then said, over the whole box).
pub fn wanted_rows(s: &State) -> Option<u16> {
    let iv = s.judged().latest()?;
    let busy = iv.irqs.iter().filter(|r| r.total > 0.0).count();
    let soft = iv.softirqs.iter().filter(|r| r.total > 0.0).count();
    if busy + soft == 0 {
        return None;
    }
    let hidden = usize::from(iv.irqs.len() > busy);
    let soft_rows = if soft > 0 { 1 + soft } else { 0 };
    u16::try_from(2 + 1 + busy + hidden + soft_rows).ok()
}

/// Why no interrupt source has a row, and what to do.
fn empty_reason(s: &State, iv: &crate::model::interval::Interval) -> String {
    let named = iv.irqs.len() + iv.softirqs.len();
    if s.one_instant() {
        "one instant: rates need two. Replay a capture of two instants or more \
         (noisetop capture) to see which interrupts land on which CPU"
            .into()
    } else if named == 0 {
        "no interrupt source: /proc/interrupts and /proc/softirqs were unreadable or \
         empty (u: why)"
            .into()
    } else {
        format!(
            "all {named} interrupt and softirq sources were at 0/s over this interval: \
             nothing interrupted these CPUs (a longer interval, +, catches rarer ones)"
        )
    }
}

/// A source's description as its row shows it: a numbered IRQ's device
/// (the last word of its /proc/interrupts line), else the kernel's words.
fn desc_of(r: &SourceRates) -> String {
    if r.label.bytes().all(|b| b.is_ascii_digit()) {
        r.desc.split_whitespace().last().unwrap_or("").to_string()
    } else {
        r.desc.clone()
    }
}

fn row(
    s: &State,
    r: &SourceRates,
    index: &[Option<usize>],
    (lw, dw, tw): (usize, usize, usize),
) -> Line<'static> {
    let t = s.theme();
    let name = desc_of(r);
    let mut spans = vec![
        Span::styled(left(&r.label, lw), t.title()),
        Span::raw(format!(" {} ", left(&name, dw))),
        Span::styled(
            format!("{} ", right(&fmt::rate(Some(r.total)), tw)),
            t.heat(Some(r.total)),
        ),
    ];
    for i in index {
        let v = i.and_then(|i| r.per_cpu.get(i).copied().flatten());
        spans.push(Span::styled(right(&fmt::rate(v), CELL), t.heat(v)));
    }
    Line::from(spans)
}
