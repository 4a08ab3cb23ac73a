//! Lines made of pieces that fit the width they get: a piece too wide
//! first takes its shorter forms, then the least important pieces go,
//! so a narrow terminal keeps what matters whole instead of cutting the
//! line's end mid-word. Every line a view draws goes through [`put`],
//! which ends a line too wide at a word boundary with `…`.

use ratatui::buffer::Buffer;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// What ends a line cut short.
pub const CUT: &str = "…";

/// A piece that is never dropped.
pub const ALWAYS: u8 = u8::MAX;

/// One piece of a line, in its forms from widest to narrowest; a form is
/// one or more styled spans.
pub struct Piece {
    forms: Vec<Vec<Span<'static>>>,
    /// Pieces with the lowest value shorten and go first.
    keep: u8,
}

impl Piece {
    /// A piece with one form.
    pub fn new(text: impl Into<String>, style: Style, keep: u8) -> Piece {
        Piece::forms(vec![vec![Span::styled(text.into(), style)]], keep)
    }

    /// A piece with a long and a short form.
    pub fn or_short(
        long: impl Into<String>,
        short: impl Into<String>,
        style: Style,
        keep: u8,
    ) -> Piece {
        Piece::forms(
            vec![
                vec![Span::styled(long.into(), style)],
                vec![Span::styled(short.into(), style)],
            ],
            keep,
        )
    }

    /// A piece whose forms are made of several styled spans.
    pub fn forms(forms: Vec<Vec<Span<'static>>>, keep: u8) -> Piece {
        Piece { forms, keep }
    }

    fn width(&self, form: usize) -> usize {
        self.forms[form].iter().map(Span::width).sum()
    }
}

fn width(s: &str) -> usize {
    Span::raw(s).width()
}

/// Joins `pieces` with `sep` after `lead` into at most `room` columns:
/// pieces shorten in order of `keep` (lowest first), then pieces go in
/// that order (the later of equals first); pieces marked [`ALWAYS`] stay
/// even when the line is still too wide.
pub fn fit(lead: &str, pieces: Vec<Piece>, sep: &Span<'static>, room: usize) -> Line<'static> {
    let mut form: Vec<Option<usize>> = vec![Some(0); pieces.len()];
    let total = |form: &[Option<usize>]| -> usize {
        let shown: Vec<usize> = pieces
            .iter()
            .zip(form)
            .filter_map(|(p, f)| f.map(|f| p.width(f)))
            .collect();
        width(lead)
            + shown.iter().sum::<usize>()
            + shown.len().saturating_sub(1) * width(&sep.content)
    };
    let mut order: Vec<usize> = (0..pieces.len()).collect();
    // stable: among equals the later piece goes first
    order.sort_by_key(|i| (pieces[*i].keep, std::cmp::Reverse(*i)));
    for &i in &order {
        while total(&form) > room && form[i].is_some_and(|f| f + 1 < pieces[i].forms.len()) {
            form[i] = form[i].map(|f| f + 1);
        }
    }
    for &i in &order {
        if total(&form) <= room {
            break;
        }
        if pieces[i].keep != ALWAYS {
            form[i] = None;
        }
    }
    let mut spans = vec![Span::raw(lead.to_string())];
    let mut first = true;
    for (p, f) in pieces.into_iter().zip(form) {
        let Some(f) = f else { continue };
        if !first {
            spans.push(sep.clone());
        }
        first = false;
        spans.extend(p.forms.into_iter().nth(f).unwrap_or_default());
    }
    Line::from(spans)
}

/// Cuts `line` to at most `room` columns at a word boundary (a space),
/// ending it with [`CUT`]; a line that fits comes back as it is. A first
/// word wider than the room is cut where the room ends.
pub fn clip(line: Line<'static>, room: usize) -> Line<'static> {
    if line.width() <= room {
        return line;
    }
    if room == 0 {
        return Line::default();
    }
    let keep = room - 1;
    // (span, byte) where each run of spaces starts, and its column
    let mut cut: Option<(usize, usize)> = None;
    let mut hard: Option<(usize, usize)> = None;
    let mut col = 0;
    let mut prev_space = true;
    'spans: for (si, sp) in line.spans.iter().enumerate() {
        for (bi, ch) in sp.content.char_indices() {
            let w = Span::raw(ch.to_string()).width();
            let space = ch == ' ';
            if space && !prev_space && col <= keep {
                cut = Some((si, bi));
            }
            if col + w > keep {
                hard.get_or_insert((si, bi));
                if cut.is_some() {
                    break 'spans;
                }
            }
            prev_space = space;
            col += w;
        }
    }
    let Some((si, bi)) = cut.or(hard) else {
        return line;
    };
    let mut spans: Vec<Span<'static>> = line.spans[..si].to_vec();
    let last = &line.spans[si];
    let style = last.style;
    spans.push(Span::styled(last.content[..bi].to_string(), style));
    spans.push(Span::styled(CUT, style));
    Line::from(spans).style(line.style)
}

/// Draws `line` at (`x`, `y`) in at most `width` columns, cut at a word
/// boundary when it is wider.
pub fn put(buf: &mut Buffer, x: u16, y: u16, line: &Line<'static>, width: u16) {
    buf.set_line(x, y, &clip(line.clone(), usize::from(width)), width);
}

/// Draws `text` in one style, cut at a word boundary like [`put`].
pub fn put_str(
    buf: &mut Buffer,
    x: u16,
    y: u16,
    text: impl Into<String>,
    style: Style,
    width: u16,
) {
    put(buf, x, y, &Line::styled(text.into(), style), width);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(room: usize) -> String {
        fit(
            " ",
            vec![
                Piece::new("noisetop", Style::new(), 1),
                Piece::or_short("isolated 2-5", "iso 2-5", Style::new(), 5),
                Piece::new("kernel 6.1.0", Style::new(), 2),
                Piece::new("STALE", Style::new(), ALWAYS),
            ],
            &Span::raw(" │ "),
            room,
        )
        .to_string()
    }

    #[test]
    fn a_line_that_fits_keeps_every_piece_in_its_long_form() {
        assert_eq!(line(80), " noisetop │ isolated 2-5 │ kernel 6.1.0 │ STALE");
    }

    #[test]
    fn pieces_shorten_then_go_by_importance_and_always_stays() {
        // 47 columns in full; the short form of isolated saves 5
        assert_eq!(line(47).len(), line(80).len());
        assert_eq!(line(46), " noisetop │ iso 2-5 │ kernel 6.1.0 │ STALE");
        assert_eq!(line(42), " noisetop │ iso 2-5 │ kernel 6.1.0 │ STALE");
        // then noisetop (1) goes before the kernel (2), then isolated (5)
        assert_eq!(line(41), " iso 2-5 │ kernel 6.1.0 │ STALE");
        assert_eq!(line(31), " iso 2-5 │ kernel 6.1.0 │ STALE");
        assert_eq!(line(30), " iso 2-5 │ STALE");
        assert_eq!(line(15), " STALE");
        assert_eq!(line(2), " STALE", "ALWAYS stays, cut by the screen");
    }

    #[test]
    fn a_piece_of_several_spans_is_measured_and_separated_whole() {
        let warn = Style::new().fg(ratatui::style::Color::Yellow);
        let pieces = || {
            vec![
                Piece::forms(
                    vec![
                        vec![
                            Span::styled("unavailable: ", warn),
                            Span::raw("SMI · power"),
                            Span::raw("  (u: why)"),
                        ],
                        vec![Span::styled("2 metrics unavailable", warn)],
                    ],
                    ALWAYS,
                ),
                Piece::new("end of capture", Style::new(), ALWAYS),
            ]
        };
        let l = fit(" ", pieces(), &Span::raw(" │ "), 80);
        assert_eq!(
            l.to_string(),
            " unavailable: SMI · power  (u: why) │ end of capture"
        );
        assert_eq!(l.spans[1].style, warn, "each span keeps its style");
        assert_eq!(l.spans[2].style, Style::new());
        // 52 columns in full: one fewer takes the short form
        assert_eq!(l.width(), 52);
        assert_eq!(
            fit(" ", pieces(), &Span::raw(" │ "), 51).to_string(),
            " 2 metrics unavailable │ end of capture"
        );
    }

    #[test]
    fn a_line_too_wide_ends_at_a_word_with_a_cut_mark() {
        let l = |t: &str, room| clip(Line::raw(t.to_string()), room).to_string();
        assert_eq!(l("underlined: watched", 40), "underlined: watched");
        assert_eq!(l("underlined: watched", 19), "underlined: watched");
        assert_eq!(l("underlined: watched", 18), "underlined:…");
        assert_eq!(l("underlined: watched", 12), "underlined:…");
        // a first word wider than the room is cut where the room ends
        assert_eq!(l("underlined: watched", 8), "underli…");
        assert_eq!(l("a  b", 3), "a…");
        assert_eq!(l("abc", 0), "");
        // across spans, each keeps its style
        let warn = Style::new().fg(ratatui::style::Color::Yellow);
        let two = Line::from(vec![
            Span::raw("214 IRQ/s"),
            Span::styled("   (⏎ detail)", warn),
        ]);
        let c = clip(two.clone(), 15);
        assert_eq!(c.to_string(), "214 IRQ/s   (⏎…");
        assert_eq!(c.width(), 15);
        assert_eq!(clip(two, 13).to_string(), "214 IRQ/s…");
        let c = clip(
            Line::from(vec![
                Span::raw("214 IRQ/s"),
                Span::styled(" (⏎ detail)", warn),
            ]),
            19,
        );
        assert_eq!(c.to_string(), "214 IRQ/s (⏎…");
        assert_eq!(c.spans.last().unwrap().style, warn);
    }
}
