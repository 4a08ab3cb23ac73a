//! Pictures of the dashboard (the README's and docs/dashboard.md's): a
//! tree is played into the dashboard's state as `noisetop replay DIR` or
//! `noisetop --root DIR` would, drawn by the same widget on ratatui's test
//! backend at a fixed size, and written as SVG. Every figure on screen
//! comes from the tree, its clock included, and nothing measures this
//! machine (noisetop's own CPU use is left out), so one tree always draws
//! the same bytes.

use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Size;
use ratatui::style::{Color, Modifier};

use crate::cli::SourceArgs;
use crate::cmd::batch::ReplayOpts;
use crate::cmd::{roots, tree_kind};
use crate::model::machine::Machine;
use crate::noise::config::NoiseConfig;
use crate::os::capture::Captured;
use crate::os::fs::Fs;
use crate::pipeline::setup::Tree;
use crate::pipeline::{Driver, Step, replay};
use crate::sample::engine::Engine;
use crate::sample::sampler::Sampler;
use crate::tui::keys::Action;
use crate::tui::state::{Change, Origin, State};
use crate::tui::theme::Theme;

/// Plays every interval of the capture in `dir` into a fresh dashboard,
/// as `noisetop replay DIR` shows it once the capture has ended; `name`
/// is the folder as the header names it.
pub fn replayed(dir: &Path, name: &str) -> Result<State> {
    let opts = ReplayOpts {
        count: None,
        cpus: None,
        watch: None,
        config: NoiseConfig::default(),
        record: crate::cli::RecordArgs::default(),
        quiet: false,
    };
    let (r, machine) = crate::cmd::batch::open_replay(dir, &opts)?;
    let watched = r.driver.watched().to_vec();
    let mut s = State::new(
        machine,
        Origin::Replay(name.to_string()),
        Duration::from_secs(1),
        Theme { color: true },
    )
    .with_watched(watched);
    // every message fits: the reader never waits for the screen
    let (tx, rx) = std::sync::mpsc::sync_channel(r.instants.len() + 2);
    replay::replay_into(&r.instants, r.driver, None, &mut [], &tx);
    drop(tx);
    let now = Instant::now();
    for m in rx {
        s.update(Change::Feed(m, now));
    }
    Ok(s)
}

/// Reads the tree under `root` twice, as `noisetop --root DIR` does on its
/// first interval: a tree that is not this machine's is one instant, shown
/// as such. `name` stands for `root` in what the screen says.
pub fn rooted(root: &Path, name: &str) -> Result<State> {
    let source = SourceArgs {
        root: Some(root.to_path_buf()),
        ..SourceArgs::default()
    };
    let r = roots(&source);
    let mut fs = Fs::new(r.clone());
    let machine = Machine::read(&mut fs);
    let named = |t: String| t.replace(&root.display().to_string(), name);
    let mut s = State::new(
        machine.clone(),
        Origin::Live,
        Duration::from_secs(1),
        Theme { color: true },
    );
    let hw = match tree_kind(&source, &r) {
        Tree::Foreign(why) => {
            let why = named(why);
            s = s.with_foreign(why.clone());
            // a foreign tree's wall clock is the time it is read: left out,
            // so that the picture does not change with the day it is drawn
            Captured {
                wall_now: false,
                ..Captured::foreign(&why)
            }
        }
        Tree::Instant(dir) => Captured::load(&dir).map_err(anyhow::Error::msg)?,
        Tree::Live => bail!(
            "{}: this machine's live kernel draws a different picture each time",
            root.display()
        ),
    };
    let mut driver = Driver::new(Engine::new(Sampler::with_machine(fs, machine, hw)));
    let rename = |statuses: &mut Vec<crate::sample::ladder::Status>| {
        for st in statuses {
            for t in [&mut st.source, &mut st.note].into_iter().flatten() {
                *t = named(std::mem::take(t));
            }
        }
    };
    let now = Instant::now();
    for _ in 0..2 {
        let msg = match driver.step() {
            Step::Ready(mut statuses) => {
                rename(&mut statuses);
                crate::pipeline::Msg::Ready {
                    statuses,
                    next_at: None,
                }
            }
            Step::Sample(mut x) => {
                // the root's path is said only in how who ran is attributed
                let said = x.notes.iter_mut().filter_map(|n| match n {
                    crate::pipeline::Note::WhoRan(said) => Some(said),
                    _ => None,
                });
                for n in said.chain(&mut x.who_ran) {
                    *n = named(std::mem::take(n));
                }
                rename(&mut x.statuses);
                crate::pipeline::Msg::Sample(x)
            }
        };
        s.update(Change::Feed(msg, now));
    }
    Ok(s)
}

/// Where a picture's tree comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A capture of several instants, as `noisetop replay DIR` plays it.
    Replay,
    /// A tree of files, as `noisetop --root DIR` reads it.
    Root,
}

/// One of the documents' pictures.
#[derive(Debug, Clone, Copy)]
pub struct Picture {
    /// The file written.
    pub file: &'static str,
    /// The tree, relative to the repository's root.
    pub tree: &'static str,
    /// How the tree is read.
    pub source: Source,
    /// The screen's size.
    pub size: Size,
    /// The keys pressed before the picture is taken.
    pub keys: &'static [Action],
}

/// The pictures of the README and docs/dashboard.md: the Cores view and
/// CPU 1's detail in the capture of a benchmark and an intruder on a
/// 2-vCPU VM (kept in the repository), and the overview of a two-socket
/// EPYC's 96 CPUs (from the public captures beside it).
pub const PICTURES: [Picture; 3] = [
    Picture {
        file: "cores.svg",
        tree: "assets/captures/vm-2cpu-intruder",
        source: Source::Replay,
        size: Size::new(136, 30),
        // CPU 1 (the benchmark's) selected
        keys: &[Action::Down],
    },
    Picture {
        file: "dashboard.svg",
        tree: "assets/captures/vm-2cpu-intruder",
        source: Source::Replay,
        size: Size::new(136, 46),
        // CPU 1 (the benchmark's) and its detail
        keys: &[Action::Down, Action::Detail],
    },
    Picture {
        file: "overview.svg",
        tree: "../shared/captures/util-linux-epyc7451-2s-96cpu",
        source: Source::Root,
        size: Size::new(90, 11),
        // the overview opens by itself (96 rows do not fit); paint it by
        // the clock, the figure one instant has
        keys: &[Action::Paint],
    },
];

/// The screen of one picture, its tree found under `repo` (the
/// repository's root): the tree played, the keys pressed, then drawn.
pub fn screen(p: &Picture, repo: &Path) -> Result<Buffer> {
    let tree = repo.join(p.tree);
    let mut s = match p.source {
        Source::Replay => replayed(&tree, p.tree)?,
        Source::Root => rooted(&tree, p.tree)?,
    };
    // the first draw picks the view, as the dashboard's does
    s.update(Change::Screen(p.size));
    for &k in p.keys {
        s.update(k);
    }
    Ok(draw(&s, p.size))
}

/// A screen's characters, one line per row (for checks of what it says).
pub fn text(buf: &Buffer) -> String {
    let mut out = String::new();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            out.push_str(buf[(buf.area.x + x, buf.area.y + y)].symbol());
        }
        out.push('\n');
    }
    out
}

/// Draws `s` on a screen of `size`, as the dashboard's loop draws it.
pub fn draw(s: &State, size: Size) -> Buffer {
    let mut s = s.clone();
    s.update(Change::Screen(size));
    let mut t = Terminal::new(TestBackend::new(size.width, size.height))
        .expect("the test backend always opens");
    t.draw(|f| f.render_widget(&s, f.area()))
        .expect("the test backend always draws");
    t.backend().buffer().clone()
}

/// Width of a cell in SVG user units.
const CELL_W: f64 = 8.4;
/// Height of a line in SVG user units.
const CELL_H: f64 = 17.0;
/// The margin around the screen.
const MARGIN: f64 = 8.0;
/// The terminal's background.
const BG: &str = "#1c1c1c";
/// The terminal's default foreground.
const FG: &str = "#d0d0d0";
/// The 16 ANSI colours (xterm's, a little softened).
const ANSI: [&str; 16] = [
    "#1c1c1c", "#d75f5f", "#87af5f", "#d7af5f", "#5f87d7", "#af87d7", "#5fafaf", "#d0d0d0",
    "#767676", "#ff8787", "#afd787", "#ffd787", "#87afff", "#d7afff", "#87d7d7", "#ffffff",
];

/// An xterm 256-colour index as `#rrggbb`.
fn xterm(n: u8) -> String {
    match n {
        0..=15 => ANSI[n as usize].to_string(),
        16..=231 => {
            let v = |x: u8| if x == 0 { 0 } else { 55 + 40 * x };
            let i = n - 16;
            format!("#{:02x}{:02x}{:02x}", v(i / 36), v((i / 6) % 6), v(i % 6))
        }
        _ => {
            let g = 8 + 10 * (n - 232);
            format!("#{g:02x}{g:02x}{g:02x}")
        }
    }
}

/// A colour as SVG writes it; `None` for the terminal's default.
fn colour(c: Color) -> Option<String> {
    let ansi = |i: usize| Some(ANSI[i].to_string());
    match c {
        Color::Reset => None,
        Color::Black => ansi(0),
        Color::Red => ansi(1),
        Color::Green => ansi(2),
        Color::Yellow => ansi(3),
        Color::Blue => ansi(4),
        Color::Magenta => ansi(5),
        Color::Cyan => ansi(6),
        Color::Gray => ansi(7),
        Color::DarkGray => ansi(8),
        Color::LightRed => ansi(9),
        Color::LightGreen => ansi(10),
        Color::LightYellow => ansi(11),
        Color::LightBlue => ansi(12),
        Color::LightMagenta => ansi(13),
        Color::LightCyan => ansi(14),
        Color::White => ansi(15),
        Color::Indexed(n) => Some(xterm(n)),
        Color::Rgb(r, g, b) => Some(format!("#{r:02x}{g:02x}{b:02x}")),
    }
}

/// How a cell's text is painted.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Ink {
    fg: String,
    bold: bool,
    dim: bool,
    underline: bool,
}

/// A cell's foreground, background (`None`: the terminal's) and ink.
fn inks(c: &ratatui::buffer::Cell) -> (Ink, Option<String>) {
    let (mut fg, mut bg) = (colour(c.fg), colour(c.bg));
    if c.modifier.contains(Modifier::REVERSED) {
        (fg, bg) = (
            Some(bg.unwrap_or_else(|| BG.into())),
            fg.or(Some(FG.into())),
        );
    }
    let ink = Ink {
        fg: fg.unwrap_or_else(|| FG.into()),
        bold: c.modifier.contains(Modifier::BOLD),
        dim: c.modifier.contains(Modifier::DIM),
        underline: c.modifier.contains(Modifier::UNDERLINED),
    };
    (ink, bg)
}

/// The part of its cell a block element fills, as (left, top, width,
/// height) in eighths, and its opacity: drawn as a rectangle, a bar meets
/// the next line's without the gap a font's glyph leaves.
fn block(symbol: &str) -> Option<((u8, u8, u8, u8), f64)> {
    const LOWER: &str = "▁▂▃▄▅▆▇█";
    const LEFT: &str = "▏▎▍▌▋▊▉";
    let mut it = symbol.chars();
    let c = it.next()?;
    if it.next().is_some() {
        return None;
    }
    if let Some(i) = LOWER.chars().position(|x| x == c) {
        let h = i as u8 + 1;
        return Some(((0, 8 - h, 8, h), 1.0));
    }
    if let Some(i) = LEFT.chars().position(|x| x == c) {
        return Some(((0, 0, i as u8 + 1, 8), 1.0));
    }
    match c {
        '░' => Some(((0, 0, 8, 8), 0.3)),
        '▒' => Some(((0, 0, 8, 8), 0.5)),
        '▓' => Some(((0, 0, 8, 8), 0.75)),
        _ => None,
    }
}

fn escape(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            _ => out.push(c),
        }
    }
}

/// Groups a line's cells into runs of equal keys: (key, first column,
/// columns), in order.
fn runs<K: PartialEq>(keys: impl Iterator<Item = K>) -> Vec<(K, u16, u16)> {
    let mut out: Vec<(K, u16, u16)> = Vec::new();
    for (x, k) in keys.enumerate() {
        match out.last_mut() {
            Some(r) if r.0 == k => r.2 += 1,
            _ => out.push((k, x as u16, 1)),
        }
    }
    out
}

/// Writes a screen as SVG. Per line: the backgrounds, then the block
/// elements (bars, the overview's cells) as rectangles, then the text as
/// one `<text>` per run of cells that look alike, held to its columns with
/// `textLength` so that any monospace font keeps the grid.
pub fn svg(buf: &Buffer) -> String {
    let (cols, rows) = (buf.area.width, buf.area.height);
    let w = f64::from(cols) * CELL_W + 2.0 * MARGIN;
    let h = f64::from(rows) * CELL_H + 2.0 * MARGIN;
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" height=\"{h:.0}\" \
         viewBox=\"0 0 {w:.0} {h:.0}\">\n\
         <rect width=\"100%\" height=\"100%\" rx=\"6\" fill=\"{BG}\"/>\n\
         <g font-family=\"'DejaVu Sans Mono','Menlo','Consolas',monospace\" \
         font-size=\"14\" xml:space=\"preserve\">\n"
    );
    let x_of = |x: u16| MARGIN + f64::from(x) * CELL_W;
    for y in 0..rows {
        let cells: Vec<&ratatui::buffer::Cell> = (0..cols)
            .map(|x| &buf[(buf.area.x + x, buf.area.y + y)])
            .collect();
        let looks: Vec<(Ink, Option<String>)> = cells.iter().map(|c| inks(c)).collect();
        let py = MARGIN + f64::from(y) * CELL_H;
        for (bg, x0, n) in runs(looks.iter().map(|l| l.1.clone())) {
            if let Some(bg) = bg {
                let _ = writeln!(
                    out,
                    "<rect x=\"{:.1}\" y=\"{py:.1}\" width=\"{:.1}\" height=\"{CELL_H}\" fill=\"{bg}\"/>",
                    x_of(x0),
                    f64::from(n) * CELL_W
                );
            }
        }
        let blocks = cells
            .iter()
            .zip(&looks)
            .map(|(c, l)| block(c.symbol()).map(|b| (b, l.0.fg.clone(), l.0.dim)));
        for (b, x0, n) in runs(blocks) {
            let Some((((left, top, wide, high), alpha), fg, dim)) = b else {
                continue;
            };
            let alpha = if dim { alpha * 0.6 } else { alpha };
            let opacity = if alpha < 1.0 {
                format!(" fill-opacity=\"{alpha:.2}\"")
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "<rect x=\"{:.2}\" y=\"{:.3}\" width=\"{:.2}\" height=\"{:.3}\" fill=\"{fg}\"{opacity}/>",
                x_of(x0) + f64::from(left) * CELL_W / 8.0,
                py + f64::from(top) * CELL_H / 8.0,
                f64::from(n - 1) * CELL_W + f64::from(wide) * CELL_W / 8.0,
                f64::from(high) * CELL_H / 8.0,
            );
        }
        let texts = cells.iter().zip(&looks).map(|(c, l)| {
            let sym = if block(c.symbol()).is_some() {
                " "
            } else {
                c.symbol()
            };
            (l.0.clone(), sym)
        });
        let mut at = 0;
        let symbols: Vec<&str> = texts.clone().map(|t| t.1).collect();
        for (ink, x0, n) in runs(texts.map(|t| t.0)) {
            let text: String = symbols[at..at + n as usize].concat();
            at += n as usize;
            let (px, len) = (x_of(x0), f64::from(n) * CELL_W);
            if ink.underline {
                let _ = writeln!(
                    out,
                    "<rect x=\"{px:.1}\" y=\"{:.1}\" width=\"{len:.1}\" height=\"1.2\" fill=\"{}\"/>",
                    py + CELL_H - 1.5,
                    ink.fg
                );
            }
            if text.trim().is_empty() {
                continue;
            }
            let mut attrs = String::new();
            if ink.bold {
                attrs.push_str(" font-weight=\"bold\"");
            }
            if ink.dim {
                attrs.push_str(" opacity=\"0.6\"");
            }
            let _ = write!(
                out,
                "<text x=\"{px:.1}\" y=\"{:.1}\" fill=\"{}\" textLength=\"{len:.1}\" \
                 lengthAdjust=\"spacingAndGlyphs\"{attrs}>",
                py + CELL_H - 4.0,
                ink.fg
            );
            escape(&text, &mut out);
            out.push_str("</text>\n");
        }
    }
    out.push_str("</g>\n</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use ratatui::layout::Rect;
    use ratatui::style::Style;

    use super::*;

    fn line(cells: &[(&str, Style)]) -> Buffer {
        let mut b = Buffer::empty(Rect::new(0, 0, cells.len() as u16, 1));
        for (x, (sym, st)) in cells.iter().enumerate() {
            b[(x as u16, 0)].set_symbol(sym).set_style(*st);
        }
        b
    }

    #[test]
    fn blocks_are_rectangles_of_their_share_of_the_cell() {
        let red = Style::new().fg(Color::Red);
        let b = line(&[("a", Style::new()), ("▄", red), ("▄", red), ("▎", red)]);
        let s = svg(&b);
        // two lower halves side by side: one rectangle, half a line high
        assert!(
            s.contains(
                "<rect x=\"16.40\" y=\"16.500\" width=\"16.80\" height=\"8.500\" fill=\"#d75f5f\"/>"
            ),
            "{s}"
        );
        // a left quarter
        assert!(
            s.contains(
                "<rect x=\"33.20\" y=\"8.000\" width=\"2.10\" height=\"17.000\" fill=\"#d75f5f\"/>"
            ),
            "{s}"
        );
        // the text keeps its columns; a block is no glyph
        assert!(s.contains(">a</text>") && !s.contains('▄'), "{s}");
        assert_eq!(s, svg(&b), "the same screen, the same bytes");
    }

    #[test]
    fn text_is_escaped_and_reversed_cells_swap_their_colours() {
        let rev = Style::new()
            .fg(Color::Indexed(238))
            .add_modifier(Modifier::REVERSED | Modifier::BOLD);
        let b = line(&[("<", Style::new()), ("&", Style::new()), ("x", rev)]);
        let s = svg(&b);
        assert!(s.contains(">&lt;&amp;</text>"), "{s}");
        // the foreground becomes the background, the terminal's ground the ink
        assert!(
            s.contains("<rect x=\"24.8\" y=\"8.0\" width=\"8.4\" height=\"17\" fill=\"#444444\"/>"),
            "{s}"
        );
        assert!(
            s.contains("fill=\"#1c1c1c\" textLength=\"8.4\" lengthAdjust=\"spacingAndGlyphs\" font-weight=\"bold\">x</text>"),
            "{s}"
        );
    }
}
