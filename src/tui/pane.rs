//! Findings on screen: the pane under the cores (newest first, kept for
//! the session, each finding wrapped at word boundaries), the one-line
//! ticker on short screens, and the Findings view with counts and first
//! and last seen, a selection that scrolls, and Enter for one finding.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Widget};

use crate::noise::Finding;
use crate::tui::fit::{put, put_str};
use crate::tui::fmt::{self, left, right};
use crate::tui::log::Entry;
use crate::tui::state::State;
use crate::tui::theme::Theme;

/// Width of the finding kind column: the longest tag (`softirq-on-watched`).
const KIND_W: usize = 18;

/// Writes `text` (a position: "rows 1–16 of 64") right-aligned on the
/// bottom border of the box whose inside is `inner`.
pub fn position(inner: Rect, buf: &mut Buffer, text: &str, t: Theme) {
    let text = format!(" {text} ");
    let n = text.chars().count() as u16;
    if inner.width < n + 2 {
        return;
    }
    let x = inner.x + inner.width - n - 1;
    buf.set_string(x, inner.y + inner.height, text, t.dim());
}

/// Writes "rows a–b of n" when `shown` of `total` rows starting at
/// `first` do not show them all.
pub fn rows_position(
    inner: Rect,
    buf: &mut Buffer,
    first: usize,
    shown: usize,
    total: usize,
    t: Theme,
) {
    if total > shown {
        let last = (first + shown).min(total);
        position(
            inner,
            buf,
            &format!("rows {}–{last} of {total}", first + 1),
            t,
        );
    }
}

/// Splits styled spans into lines of at most `width` columns, breaking at
/// spaces; `indent` columns start every line after the first. A word
/// longer than a line (a long path) goes on over the next lines, broken
/// after a `/` or `,` where it can be: nothing of it is lost.
pub fn wrap(spans: Vec<Span<'static>>, width: usize, indent: usize) -> Vec<Line<'static>> {
    let width = width.max(indent + 8);
    let mut lines: Vec<Vec<Span<'static>>> = vec![Vec::new()];
    let mut used = 0;
    let push = |lines: &mut Vec<Vec<Span<'static>>>, text: &str, style| {
        let last = lines.last_mut().expect("one line at least");
        match last.last_mut() {
            Some(prev) if prev.style == style => prev.content.to_mut().push_str(text),
            _ => last.push(Span::styled(text.to_string(), style)),
        }
    };
    for sp in spans {
        let style = sp.style;
        // keep the separating spaces with the word that follows
        for word in sp.content.split_inclusive(' ') {
            let bare = word.trim_end().chars().count();
            if used + bare > width && used > indent {
                lines.push(vec![Span::raw(" ".repeat(indent))]);
                used = indent;
            }
            let mut rest: &str = word;
            // what does not fit even a fresh line: the part that fits,
            // up to a break after `/` or `,` when there is one, then on
            while rest.trim_end().chars().count() > width - used {
                let room = width - used;
                let cut = rest
                    .char_indices()
                    .take(room)
                    .filter(|(_, c)| matches!(c, '/' | ','))
                    .map(|(i, c)| i + c.len_utf8())
                    .last()
                    .filter(|&i| i > room / 3)
                    .unwrap_or_else(|| {
                        rest.char_indices().nth(room).map_or(rest.len(), |(i, _)| i)
                    });
                push(&mut lines, &rest[..cut], style);
                rest = &rest[cut..];
                lines.push(vec![Span::raw(" ".repeat(indent))]);
                used = indent;
            }
            // the word fits; a space after it only where there is room
            let tail: String = rest.chars().take(width - used).collect();
            push(&mut lines, &tail, style);
            used += tail.chars().count();
        }
    }
    lines.into_iter().map(Line::from).collect()
}

/// One finding on one line: severity, kind, evidence, then the fix.
fn finding_line(s: &State, f: &Finding, prefix: Option<String>) -> Line<'static> {
    Line::from(finding_spans(s, f, prefix))
}

/// The spans of one finding: severity, kind, evidence, then the fix.
fn finding_spans(s: &State, f: &Finding, prefix: Option<String>) -> Vec<Span<'static>> {
    let t = s.theme();
    let mut spans = Vec::new();
    if let Some(p) = prefix {
        spans.push(Span::styled(p, t.dim()));
    }
    spans.push(Span::styled(
        format!("{} ", f.severity.label()),
        t.severity(f.severity),
    ));
    spans.push(Span::styled(
        format!("{} ", left(f.kind.tag(), KIND_W)),
        t.title(),
    ));
    spans.push(Span::raw(f.evidence.clone()));
    if let Some(fix) = &f.fix {
        spans.push(Span::styled(" → ", t.dim()));
        spans.push(Span::styled(fix.clone(), t.good()));
    }
    spans
}

/// What the pane says when there is nothing to show: why, and what to do.
/// Nothing found where figures are missing is not quiet: it says so.
fn nothing(s: &State) -> String {
    let missing = s
        .judged()
        .statuses()
        .iter()
        .filter(|st| st.rung.is_none())
        .count();
    let unmeasured = match missing {
        0 => String::new(),
        1 => " in what could be measured (1 metric unavailable, u: why)".into(),
        n => format!(" in what could be measured ({n} metrics unavailable, u: why)"),
    };
    if s.one_instant() {
        "one instant: no rates to judge; replay a capture of two instants or more".into()
    } else if s.judged().latest().is_none() {
        "findings appear after the first interval".into()
    } else if s.judged().watched().is_empty() {
        format!(
            "no noise found{unmeasured}; mark benchmark CPUs with m (or --watch 2-5) to look for noise on them"
        )
    } else {
        format!("no noise found on the watched CPUs{unmeasured}")
    }
}

/// Says in the body why a view has no rows, and what to do.
pub fn render_why_empty(s: &State, why: &str, area: Rect, buf: &mut Buffer) {
    for (i, l) in wrap(
        vec![Span::styled(why.to_string(), s.theme().warn())],
        usize::from(area.width.saturating_sub(2)),
        0,
    )
    .into_iter()
    .take(usize::from(area.height))
    .enumerate()
    {
        put(
            buf,
            area.x + 1,
            area.y + i as u16,
            &l,
            area.width.saturating_sub(1),
        );
    }
}

/// Draws the findings pane: the session's findings, most recently seen first.
pub fn render_pane(s: &State, area: Rect, buf: &mut Buffer) {
    let t = s.theme();
    let block = Block::bordered()
        .title(Span::styled(
            format!(" Findings · {} this session ", s.judged().log().len()),
            t.title(),
        ))
        .border_style(t.dim());
    let inner = block.inner(area);
    block.render(area, buf);
    let entries = s.judged().log().newest_first();
    if entries.is_empty() {
        put_str(
            buf,
            inner.x + 1,
            inner.y,
            nothing(s),
            t.dim(),
            inner.width.saturating_sub(1),
        );
        return;
    }
    let mut y = inner.y;
    let bottom = inner.y + inner.height;
    let mut shown = 0;
    for e in &entries {
        let spans = finding_spans(s, &e.finding, Some(format!("{} ", fmt::clock(e.last_ns))));
        let lines = wrap(spans, inner.width as usize, 9);
        if y + lines.len() as u16 > bottom && shown > 0 {
            break;
        }
        for l in lines {
            if y >= bottom {
                break;
            }
            put(buf, inner.x, y, &l, inner.width);
            y += 1;
        }
        shown += 1;
    }
    if shown < entries.len() {
        position(
            inner,
            buf,
            &format!("{shown} of {} · tab: Findings view", entries.len()),
            t,
        );
    }
}

/// Draws the one-line ticker: the most severe finding of the interval on screen.
pub fn render_ticker(s: &State, area: Rect, buf: &mut Buffer) {
    let t = s.theme();
    match s.judged().findings().first() {
        Some(f) => {
            // the worst finding stands for all of them: say how many
            let n = s.judged().findings().len();
            let prefix = if n > 1 {
                format!(" worst of {n}: ")
            } else {
                " ".to_string()
            };
            put(
                buf,
                area.x,
                area.y,
                &finding_line(s, f, Some(prefix)),
                area.width,
            );
        }
        None => {
            put_str(
                buf,
                area.x + 1,
                area.y,
                nothing(s),
                t.dim(),
                area.width.saturating_sub(1),
            );
        }
    }
}

/// Draws the Findings view: every finding of the session with its count
/// and first and last seen, the evidence and fix wrapped below, the
/// selected one highlighted and kept on screen.
pub fn render_log(s: &State, area: Rect, buf: &mut Buffer) {
    let mut head = format!(
        " {}  {}  {} SEV  {} evidence → fix",
        left("last", 8),
        left("first", 8),
        right("count", 5),
        left("kind", KIND_W)
    );
    // the hint where it fits whole
    let hint = "   (⏎ details)";
    if head.chars().count() + hint.chars().count() <= usize::from(area.width) {
        head.push_str(hint);
    }
    let t = s.theme();
    put_str(buf, area.x, area.y, head, t.title(), area.width);
    let entries = s.judged().log().newest_first();
    if entries.is_empty() {
        put_str(
            buf,
            area.x + 1,
            area.y + 1,
            nothing(s),
            t.dim(),
            area.width.saturating_sub(1),
        );
        return;
    }
    let at = s.nav().finding_at().min(entries.len() - 1);
    let blocks: Vec<Vec<Line<'static>>> = entries
        .iter()
        .map(|e| entry_lines(s, e, area.width as usize))
        .collect();
    let room = area.height.saturating_sub(1) as usize;
    // the first entry shown: the selection's block ends on screen
    let mut first = 0;
    let mut need: usize = blocks[..=at].iter().map(Vec::len).sum();
    while need > room && first < at {
        need -= blocks[first].len();
        first += 1;
    }
    let mut y = area.y + 1;
    let bottom = area.y + area.height;
    let mut last = first;
    for (i, b) in blocks.iter().enumerate().skip(first) {
        if y >= bottom {
            break;
        }
        for l in b {
            if y >= bottom {
                break;
            }
            put(buf, area.x, y, l, area.width);
            if i == at {
                buf.set_style(Rect::new(area.x, y, area.width, 1), t.selected());
            }
            y += 1;
        }
        last = i + 1;
    }
    if first > 0 || last < entries.len() {
        position(
            area,
            buf,
            &format!("findings {}–{last} of {}", first + 1, entries.len()),
            t,
        );
    }
}

/// The lines of one entry: times, count, severity, kind, the evidence
/// wrapped, then the fix.
fn entry_lines(s: &State, e: &Entry, width: usize) -> Vec<Line<'static>> {
    let t = s.theme();
    let f = &e.finding;
    let spans = vec![
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
        Span::styled(format!("{} ", left(f.kind.tag(), KIND_W)), t.title()),
        Span::raw(f.evidence.clone()),
    ];
    let mut lines = wrap(spans, width, 32);
    // no fix is said as such, never dressed as a command after an arrow
    let fix = match f.fix.as_deref() {
        Some(fix) => vec![
            Span::styled(format!("{}→ ", " ".repeat(30)), t.dim()),
            Span::styled(fix.to_string(), t.good()),
        ],
        None => vec![Span::styled(
            format!(
                "{}no usual fix: the evidence says where to look",
                " ".repeat(32)
            ),
            t.dim(),
        )],
    };
    lines.extend(wrap(fix, width, 32));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn wrapping_breaks_between_words_and_indents_what_follows() {
        let spans = vec![
            Span::raw("WARN "),
            Span::raw("CPU 2: nvme0q2 1010/s lands on a watched CPU"),
        ];
        assert_eq!(
            text(&wrap(spans, 20, 2)),
            vec![
                "WARN CPU 2: nvme0q2 ",
                "  1010/s lands on a ",
                "  watched CPU",
            ]
        );
        // a word longer than the line goes on over the next lines, whole
        // (and no endless loop)
        let long = vec![Span::raw("x".repeat(30))];
        assert_eq!(
            text(&wrap(long, 12, 2)),
            vec![
                "x".repeat(12),
                format!("  {}", "x".repeat(10)),
                format!("  {}", "x".repeat(8))
            ]
        );
        // a path breaks after a slash
        let path = vec![
            Span::raw("unknown: "),
            Span::raw("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq"),
        ];
        assert_eq!(
            text(&wrap(path, 32, 9)),
            vec![
                "unknown: /sys/devices/system/",
                "         cpu/cpu0/cpufreq/",
                "         scaling_cur_freq",
            ]
        );
    }
}
