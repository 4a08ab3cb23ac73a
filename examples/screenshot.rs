//! Renders the README screenshot from a real terminal: plays a synthetic
//! capture in `noisetop replay` inside a detached tmux session, reads the
//! screen back with `tmux capture-pane -e -p` (text plus SGR colours) and
//! converts that to SVG with the small ANSI→SVG converter below.
//!
//! `cargo build --release && cargo run --release --example screenshot --
//! target/release/noisetop assets/dashboard.svg [laptop|server] [keys…]`

use std::fmt::Write as _;
use std::process::Command;
use std::time::{Duration, Instant};

use noisetop::synth::{self, Flavor, Spec};

/// Cell size in SVG user units.
const CELL_W: f64 = 8.4;
/// Line height in SVG user units.
const CELL_H: f64 = 17.0;
/// Background and default foreground.
const BG: &str = "#1c1c1c";
/// Default foreground.
const FG: &str = "#d0d0d0";

/// The 16 ANSI colours (xterm defaults, a little softened).
const ANSI: [&str; 16] = [
    "#1c1c1c", "#d75f5f", "#87af5f", "#d7af5f", "#5f87d7", "#af87d7", "#5fafaf", "#d0d0d0",
    "#767676", "#ff8787", "#afd787", "#ffd787", "#87afff", "#d7afff", "#87d7d7", "#ffffff",
];

/// The style of one cell.
#[derive(Clone, PartialEq, Default)]
struct Style {
    fg: Option<String>,
    bg: Option<String>,
    bold: bool,
    dim: bool,
    reverse: bool,
}

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

/// Applies one SGR parameter list to `st`.
fn sgr(st: &mut Style, params: &str) {
    let p: Vec<u16> = params.split(';').map(|x| x.parse().unwrap_or(0)).collect();
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            0 => *st = Style::default(),
            1 => st.bold = true,
            2 => st.dim = true,
            7 => st.reverse = true,
            22 => (st.bold, st.dim) = (false, false),
            27 => st.reverse = false,
            30..=37 => st.fg = Some(ANSI[(p[i] - 30) as usize].into()),
            90..=97 => st.fg = Some(ANSI[(p[i] - 90 + 8) as usize].into()),
            40..=47 => st.bg = Some(ANSI[(p[i] - 40) as usize].into()),
            100..=107 => st.bg = Some(ANSI[(p[i] - 100 + 8) as usize].into()),
            39 => st.fg = None,
            49 => st.bg = None,
            38 | 48 => {
                // 38;5;n / 38;2;r;g;b (and 48 for the background)
                let (c, used) = match p.get(i + 1) {
                    Some(5) => (p.get(i + 2).map(|n| xterm(*n as u8)), 2),
                    Some(2) => {
                        let v = |k: usize| p.get(i + k).copied().unwrap_or(0);
                        (Some(format!("#{:02x}{:02x}{:02x}", v(2), v(3), v(4))), 4)
                    }
                    _ => (None, 0),
                };
                if p[i] == 38 {
                    st.fg = c;
                } else {
                    st.bg = c;
                }
                i += used;
            }
            _ => {}
        }
        i += 1;
    }
}

/// Splits `capture-pane -e` output into lines of styled cells.
fn parse(text: &str) -> Vec<Vec<(char, Style)>> {
    let mut lines = Vec::new();
    let mut st = Style::default();
    for raw in text.lines() {
        let mut cells = Vec::new();
        let mut it = raw.chars().peekable();
        while let Some(c) = it.next() {
            if c == '\x1b' && it.peek() == Some(&'[') {
                it.next();
                let mut params = String::new();
                for d in it.by_ref() {
                    if d.is_ascii_alphabetic() {
                        if d == 'm' {
                            sgr(&mut st, &params);
                        }
                        break;
                    }
                    params.push(d);
                }
            } else {
                cells.push((c, st.clone()));
            }
        }
        lines.push(cells);
    }
    lines
}

fn escape(c: char) -> String {
    match c {
        '&' => "&amp;".into(),
        '<' => "&lt;".into(),
        '>' => "&gt;".into(),
        _ => c.to_string(),
    }
}

/// Writes the cells as SVG: one background rect and one `<text>` per run of
/// equal style, each run pinned to its columns with `textLength`.
fn svg(lines: &[Vec<(char, Style)>], cols: usize) -> String {
    let (w, h) = (
        cols as f64 * CELL_W + 16.0,
        lines.len() as f64 * CELL_H + 16.0,
    );
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" height=\"{h:.0}\" viewBox=\"0 0 {w:.0} {h:.0}\">\n\
         <rect width=\"100%\" height=\"100%\" rx=\"6\" fill=\"{BG}\"/>\n\
         <g font-family=\"'DejaVu Sans Mono','Menlo','Consolas',monospace\" font-size=\"14\" xml:space=\"preserve\">\n"
    );
    for (y, line) in lines.iter().enumerate() {
        let mut x = 0;
        while x < line.len() {
            let st = &line[x].1;
            let mut end = x;
            while end < line.len() && line[end].1 == *st {
                end += 1;
            }
            let (mut fg, mut bg) = (st.fg.clone().unwrap_or_else(|| FG.into()), st.bg.clone());
            if st.reverse {
                (fg, bg) = (bg.unwrap_or_else(|| BG.into()), Some(fg));
            }
            let (px, py) = (8.0 + x as f64 * CELL_W, 8.0 + y as f64 * CELL_H);
            if let Some(b) = bg {
                let _ = writeln!(
                    out,
                    "<rect x=\"{px:.1}\" y=\"{py:.1}\" width=\"{:.1}\" height=\"{CELL_H}\" fill=\"{b}\"/>",
                    (end - x) as f64 * CELL_W
                );
            }
            let text: String = line[x..end].iter().map(|c| escape(c.0)).collect();
            if !text.trim().is_empty() {
                let weight = if st.bold { " font-weight=\"bold\"" } else { "" };
                let opacity = if st.dim { " opacity=\"0.6\"" } else { "" };
                let _ = writeln!(
                    out,
                    "<text x=\"{px:.1}\" y=\"{:.1}\" fill=\"{fg}\" textLength=\"{:.1}\" lengthAdjust=\"spacingAndGlyphs\"{weight}{opacity}>{text}</text>",
                    py + CELL_H - 4.0,
                    (end - x) as f64 * CELL_W
                );
            }
            x = end;
        }
    }
    out.push_str("</g>\n</svg>\n");
    out
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let bin = args
        .first()
        .map_or("target/release/noisetop", String::as_str);
    let out = args.get(1).map_or("assets/dashboard.svg", String::as_str);
    let server = args.get(2).is_some_and(|a| a == "server");
    let keys: Vec<&str> = args.iter().skip(3).map(String::as_str).collect();
    let dir = tempfile::tempdir().expect("temp dir");
    let cap = dir.path().join("capture");
    let spec = if server {
        Spec {
            flavor: Flavor::IntelServer,
            cpus: 64,
            instants: 6,
            interval_ms: 1000,
        }
    } else {
        Spec {
            flavor: Flavor::IntelLaptop,
            cpus: 8,
            instants: 6,
            interval_ms: 1000,
        }
    };
    synth::write_capture(&cap, &spec).expect("synthetic capture");
    let socket = format!("noisetop-shot-{}", std::process::id());
    let tmux = |a: &[&str]| {
        Command::new("tmux")
            .args(["-L", &socket, "-f", "/dev/null"])
            .args(a)
            .output()
            .expect("tmux runs")
    };
    // run from the capture's parent so the header shows a short name
    let bin = std::fs::canonicalize(bin).expect("the noisetop binary");
    let cmd = format!(
        "cd {} && {} replay capture --watch 2-5; sleep 60",
        dir.path().display(),
        bin.display()
    );
    // TERM with 256 colours so tmux keeps the palette in -e output
    let started = tmux(&[
        "new-session",
        "-d",
        "-x",
        "160",
        "-y",
        "50",
        "-s",
        "s",
        "-e",
        "TERM=xterm-256color",
        &cmd,
    ]);
    assert!(
        started.status.success(),
        "tmux: {}",
        String::from_utf8_lossy(&started.stderr)
    );
    let end = Instant::now() + Duration::from_secs(30);
    loop {
        let s =
            String::from_utf8_lossy(&tmux(&["capture-pane", "-p", "-t", "s"]).stdout).into_owned();
        if s.contains("end of capture") {
            break;
        }
        assert!(Instant::now() < end, "the replay did not finish:\n{s}");
        std::thread::sleep(Duration::from_millis(200));
    }
    if !keys.is_empty() {
        let mut a = vec!["send-keys", "-t", "s"];
        a.extend(keys.iter());
        tmux(&a);
        std::thread::sleep(Duration::from_millis(500));
    }
    let text = String::from_utf8_lossy(&tmux(&["capture-pane", "-e", "-p", "-t", "s"]).stdout)
        .into_owned();
    tmux(&["kill-server"]);
    let lines = parse(&text);
    std::fs::write(out, svg(&lines, 160)).expect("write the SVG");
    eprintln!("wrote {out}");
}
