//! Renders the README screenshots from a real terminal: replays a real
//! machine's capture (`../shared/captures/util-linux-epyc7451-2s-96cpu`,
//! a two-socket EPYC 7451 dumped by lscpu's mk-input.sh) in `noisetop
//! replay` inside a detached tmux session, reads the screen back with
//! `tmux capture-pane -e -p` (text plus SGR colours) and converts that to
//! SVG with the small ANSI→SVG converter below.
//!
//! That capture is one instant of /proc and /sys. A replay needs two, so
//! the second instant is the first with each idle state's `time` and
//! `usage` advanced by one second's worth of a plausible mix (below); the
//! topology, clocks, cpufreq policies and idle-state tables are the real
//! machine's. The README caption says so.
//!
//! `cargo build --release && cargo run --release --example screenshot -- assets/`
//! writes `assets/dashboard.svg` (Cores view) and `assets/overview.svg`.

use std::fmt::Write as _;
use std::process::Command;
use std::time::{Duration, Instant};

use std::path::{Path, PathBuf};

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

/// The real capture the screenshots replay.
const CAPTURE: &str = "util-linux-epyc7451-2s-96cpu";

/// Copies a tree, files and folders (links are skipped: the capture's
/// dangling driver links point nowhere).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create a folder");
    for e in std::fs::read_dir(from).expect("read a folder") {
        let e = e.expect("a folder entry");
        let ty = e.file_type().expect("a file type");
        let dest = to.join(e.file_name());
        if ty.is_dir() {
            copy_tree(&e.path(), &dest);
        } else if ty.is_file() {
            std::fs::copy(e.path(), dest).expect("copy a file");
        }
    }
}

/// A number in [0, 1) from a CPU number, the same on every run.
fn spread(cpu: u64) -> f64 {
    let x = cpu.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17);
    (x % 10_000) as f64 / 10_000.0
}

/// One second of idle for `cpu`: microseconds and entries per state
/// (POLL, C1, C2). Most CPUs sleep in C2 with a few hundred entries a
/// second; one in eight runs busy and naps in C1; the watched 2-5 sit
/// in C2 with few wake-ups.
fn idle_second(cpu: u64) -> [(u64, u64); 3] {
    let h = spread(cpu);
    let (busy, c1_share, stay_c2) = if (2..=5).contains(&cpu) {
        (0.01, 0.02, 20_000.0)
    } else if h < 0.125 {
        (0.6 + 2.0 * h, 0.7, 800.0)
    } else {
        (0.02 + 0.1 * h, 0.1 + 0.3 * h, 1_500.0 + 6_000.0 * h)
    };
    let idle = 1e6 * (1.0 - busy.min(0.97));
    let poll = 5.0 + 50.0 * h;
    let c1 = (idle - poll) * c1_share;
    let c2 = idle - poll - c1;
    [
        (poll as u64, (poll / 2.0) as u64 + 1),
        (c1 as u64, (c1 / 60.0) as u64 + 1),
        (c2 as u64, (c2 / stay_c2) as u64 + 1),
    ]
}

/// Builds a two-instant capture from the real tree in `dir`.
fn two_instants(tree: &Path, dir: &Path) {
    let t0 = dir.join("0000");
    let t1 = dir.join("0001");
    copy_tree(tree, &t0);
    copy_tree(tree, &t1);
    // 2026-11-23 12:00:00 UTC, one second apart
    let wall = 1_795_435_200_000_000_000_u64;
    for (i, d) in [&t0, &t1].into_iter().enumerate() {
        let nt = d.join("noisetop");
        std::fs::create_dir_all(&nt).expect("create noisetop/");
        let i = i as u64;
        let clock = format!("{} {}\n", (1 + i) * 1_000_000_000, wall + i * 1_000_000_000);
        std::fs::write(nt.join("clock"), clock).expect("write the clock");
    }
    // read every CPU's files every sample, as a small machine is read
    noisetop::source::capture::write_budget(&t0, 100_000, &[]).expect("write the budget");
    let cpus = t1.join("sys/devices/system/cpu");
    for cpu in 0..4096u64 {
        let idle = cpus.join(format!("cpu{cpu}/cpuidle"));
        if !idle.is_dir() {
            continue;
        }
        for (k, (us, n)) in idle_second(cpu).into_iter().enumerate() {
            let st = idle.join(format!("state{k}"));
            for (file, add) in [("time", us), ("usage", n)] {
                let p = st.join(file);
                let Ok(v) = std::fs::read_to_string(&p) else {
                    continue;
                };
                let v: u64 = v.trim().parse().unwrap_or(0);
                std::fs::write(&p, format!("{}\n", v + add)).expect("advance a counter");
            }
        }
    }
}

/// A private tmux server.
struct Tmux(String);

impl Tmux {
    fn run(&self, a: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .args(["-L", &self.0, "-f", "/dev/null"])
            .args(a)
            .output()
            .expect("tmux runs")
    }

    fn screen(&self, colours: bool) -> String {
        let args: &[&str] = if colours {
            &["capture-pane", "-e", "-p", "-t", "s"]
        } else {
            &["capture-pane", "-p", "-t", "s"]
        };
        String::from_utf8_lossy(&self.run(args).stdout).into_owned()
    }

    fn wait_for(&self, want: &str) {
        let end = Instant::now() + Duration::from_secs(30);
        while !self.screen(false).contains(want) {
            assert!(
                Instant::now() < end,
                "waited for {want:?}:\n{}",
                self.screen(false)
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn keys(&self, keys: &[&str]) {
        let mut a = vec!["send-keys", "-t", "s"];
        a.extend(keys);
        self.run(&a);
        std::thread::sleep(Duration::from_millis(500));
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.run(&["kill-server"]);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = PathBuf::from(args.first().map_or("assets", String::as_str));
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin = root.join("target/release/noisetop");
    assert!(
        bin.is_file(),
        "{} missing: run cargo build --release first",
        bin.display()
    );
    let tree = root.join("../shared/captures").join(CAPTURE);
    assert!(tree.is_dir(), "{} missing", tree.display());
    let dir = tempfile::tempdir().expect("temp dir");
    let cap = dir.path().join("capture");
    two_instants(&tree, &cap);
    let t = Tmux(format!("noisetop-shot-{}", std::process::id()));
    let cmd = format!(
        "cd {} && {} replay capture --watch 2-5; sleep 60",
        dir.path().display(),
        bin.display()
    );
    let started = t.run(&[
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
    t.wait_for("end of capture");
    // 96 CPUs do not fit 160×50 as rows: noisetop opens on the overview;
    // paint it by the C-state held longest (Busy % → MHz → C-state)
    t.keys(&["c", "c"]);
    t.wait_for("C-state held longest");
    let overview = t.screen(true);
    // back to the Cores view
    t.keys(&["BTab"]);
    t.wait_for("C-states ↓");
    let shots = [("dashboard.svg", t.screen(true))];
    for (name, text) in shots.into_iter().chain([("overview.svg", overview)]) {
        let path = out.join(name);
        std::fs::write(&path, svg(&parse(&text), 160)).expect("write the SVG");
        eprintln!("wrote {}", path.display());
    }
}
