//! The Overview: every CPU as one cell, laid out by package and core with
//! SMT siblings side by side, painted by one metric (`c` picks it). A
//! cell's height (`▁` to `█`) carries the level, so the grid reads without
//! colour; colour repeats it. The legend names the metric, its unit and
//! the value each glyph stands for; the selected CPU's figures sit under
//! it, and Enter opens its detail.
//!
//! ```text
//!  Busy % (c: next)  ▁ <12.5 ▂ <25 … █ ≥87.5 %  · unknown  ▁ underlined: watched
//!  CPU 37 · core 13 · pkg 0 · busy 12 % · 2300 MHz · C2 88 % · 120 IRQ/s · quiet
//!  pkg 0  ▃▁ ▁▁ ▅▁ ▁▁ ▁▁ ▁▁ …
//!         ▁▁ ▁▁ ▁▁ …
//!  pkg 1  ▁▁ ▁▁ …
//! ```

use ratatui::buffer::Buffer;
use ratatui::layout::{Rect, Size};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use crate::model::interval::CpuRates;
use crate::model::machine::Machine;
use crate::tui::bars::cstate_shares;
use crate::tui::fit::{ALWAYS, Piece, fit, put, put_str};
use crate::tui::fmt;
use crate::tui::state::{State, Verdict};

/// Cell glyphs from the lowest level to the highest.
pub const LEVELS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
/// Lines above the grid: the legend and the selected CPU.
const LEGEND_ROWS: u16 = 2;
/// Width of the package label left of the grid.
const LABEL_W: u16 = 7;
/// Interrupt rates (per second) where each level starts.
const IRQ_STEPS: [f64; 8] = [0.0, 10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0, 10_000.0];

/// The metric the overview paints (the C-state one is the state the CPU
/// spent most of the interval in: C0 when busy, the deepest when asleep).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paint {
    /// Busy %, 0 to 100.
    Busy,
    /// `Avg_MHz`, 0 to the top clock.
    Mhz,
    /// The C-state held longest in the interval (C0 highest).
    Cstate,
    /// Every interrupt per second, on a log scale.
    Irq,
    /// The CPU's worst finding.
    Verdict,
}

impl Paint {
    /// Returns the metric `c` moves to.
    #[must_use]
    pub fn next(self) -> Self {
        match self {
            Paint::Busy => Paint::Mhz,
            Paint::Mhz => Paint::Cstate,
            Paint::Cstate => Paint::Irq,
            Paint::Irq => Paint::Verdict,
            Paint::Verdict => Paint::Busy,
        }
    }

    /// Names the metric and its unit for the legend.
    pub fn label(self) -> &'static str {
        match self {
            Paint::Busy => "Busy %",
            Paint::Mhz => "Avg MHz",
            Paint::Cstate => "C-state held longest",
            Paint::Irq => "interrupts/s",
            Paint::Verdict => "verdict",
        }
    }
}

/// Where each CPU sits: `cells[i] = (cpu, column, row)`, rows counted from
/// the grid's top; packages start on a new row with their label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grid {
    /// Every CPU with its column and row, in topology order.
    pub cells: Vec<(u32, u16, u16)>,
    /// The package labels and the row each starts on.
    pub labels: Vec<(u16, String)>,
    /// Rows the grid needs.
    pub rows: u16,
}

/// Groups CPUs by package, then by core (siblings together, each core at
/// its lowest CPU's place); an unknown package or core stands alone.
fn groups(m: &Machine, cpus: &[u32]) -> Vec<(Option<u32>, Vec<Vec<u32>>)> {
    let mut keyed: Vec<(Option<u32>, u32, u32)> = cpus
        .iter()
        .map(|&c| {
            let t = m.topo(c);
            let pkg = t.and_then(|t| t.package);
            // siblings share their lowest CPU as the core's key
            let lead = t
                .and_then(|t| t.siblings.iter().min().copied())
                .filter(|_| t.is_some_and(|t| t.siblings.contains(&c)))
                .unwrap_or(c);
            (pkg, lead, c)
        })
        .collect();
    keyed.sort_unstable_by_key(|k| (k.0.is_none(), k.0, k.1, k.2));
    let mut out: Vec<(Option<u32>, Vec<Vec<u32>>)> = Vec::new();
    let mut last: Option<(Option<u32>, u32)> = None;
    for (pkg, lead, c) in keyed {
        if out.last().is_none_or(|g| g.0 != pkg) {
            out.push((pkg, Vec::new()));
        }
        let cores = &mut out.last_mut().expect("pushed above").1;
        if last == Some((pkg, lead)) {
            cores.last_mut().expect("a core of this package").push(c);
        } else {
            cores.push(vec![c]);
        }
        last = Some((pkg, lead));
    }
    out
}

/// Lays the CPUs out in `width` columns; a space between cores when the
/// grid then still fits `height` rows.
pub fn layout(m: &Machine, cpus: &[u32], width: u16, height: u16) -> Grid {
    let groups = groups(m, cpus);
    let labelled = groups.len() > 1 || groups.first().is_some_and(|g| g.0.is_some());
    // a space, the longest label ("pkg 15"), a space
    let label_w = if labelled {
        let longest = groups
            .iter()
            .map(|g| g.0.map_or(5, |p| 4 + p.to_string().len()))
            .max()
            .unwrap_or(5);
        LABEL_W.max(longest as u16 + 2)
    } else {
        0
    };
    let room = width.saturating_sub(label_w).max(1);
    let place = |gap: u16| -> Grid {
        let mut g = Grid {
            cells: Vec::with_capacity(cpus.len()),
            labels: Vec::new(),
            rows: 0,
        };
        for (pkg, cores) in &groups {
            let wide = cores.iter().map(Vec::len).max().unwrap_or(1) as u16;
            let per_row = ((room + gap) / (wide + gap)).max(1);
            if labelled {
                let name = pkg.map_or_else(|| "pkg ·".to_string(), |p| format!("pkg {p}"));
                g.labels.push((g.rows, name));
            }
            for (i, core) in cores.iter().enumerate() {
                let i = i as u16;
                let row = g.rows + i / per_row;
                let x0 = label_w + (i % per_row) * (wide + gap);
                for (k, &c) in core.iter().enumerate() {
                    g.cells.push((c, x0 + k as u16, row));
                }
            }
            g.rows += (cores.len() as u16).div_ceil(per_row);
        }
        g
    };
    let spaced = place(1);
    if spaced.rows <= height {
        spaced
    } else {
        place(0)
    }
}

/// Height of the overview's box (borders included) when the whole grid
/// fits: the legend and the grid's rows.
// the one signature of every view's wanted_rows, dispatched in render
#[allow(clippy::unnecessary_wraps)]
pub fn wanted_rows(s: &State, width: u16) -> Option<u16> {
    let g = layout(
        s.judged().machine(),
        &shown(s),
        width.saturating_sub(2),
        u16::MAX,
    );
    Some(2 + LEGEND_ROWS + g.rows.max(1))
}

/// The grid area for a screen: the body box inside its borders, under the legend.
pub fn grid_size(screen: Size) -> Size {
    let body = crate::tui::layout::body_rows(screen) + 1;
    Size::new(
        screen.width.saturating_sub(2),
        body.saturating_sub(LEGEND_ROWS),
    )
}

/// The CPUs the grid shows: every online CPU in `--cpus`.
fn shown(s: &State) -> Vec<u32> {
    s.judged()
        .machine()
        .online
        .iter()
        .copied()
        .filter(|c| s.nav().only().is_none_or(|o| o.contains(c)))
        .collect()
}

/// Returns the CPU one step away from the selection: `dx` along the
/// topology order, `dy` rows up or down (the nearest cell in that row).
pub fn step(s: &State, dx: i64, dy: i64) -> Option<u32> {
    let size = grid_size(s.nav().screen());
    let g = layout(s.judged().machine(), &shown(s), size.width, size.height);
    let at = s
        .nav()
        .selected()
        .and_then(|c| g.cells.iter().position(|x| x.0 == c))
        .unwrap_or(0);
    let &(_, x, y) = g.cells.get(at)?;
    if dy == 0 {
        let to = (at as i64 + dx).clamp(0, g.cells.len() as i64 - 1) as usize;
        return Some(g.cells[to].0);
    }
    let row = i64::from(y) + dy;
    if row < 0 || row >= i64::from(g.rows) {
        return Some(g.cells[at].0);
    }
    g.cells
        .iter()
        .filter(|c| i64::from(c.2) == row)
        .min_by_key(|c| c.1.abs_diff(x))
        .map(|c| c.0)
        .or(Some(g.cells[at].0))
}

/// A CPU's level, 0 to 7, or `None` when its figure is unknown.
fn level(
    s: &State,
    paint: Paint,
    r: Option<&CpuRates>,
    cpu: u32,
    top_mhz: Option<f64>,
) -> Option<usize> {
    let scaled = |v: f64, max: f64| ((v / max).clamp(0.0, 1.0) * 8.0).floor().min(7.0) as usize;
    match paint {
        Paint::Busy => r?.busy_pct.map(|b| scaled(b, 100.0)),
        Paint::Mhz => Some(scaled(mhz(s, r, cpu)?, top_mhz.filter(|m| *m > 0.0)?)),
        Paint::Cstate => {
            let shares = cstate_shares(r?);
            let n = shares.len();
            let (i, _) = shares
                .iter()
                .enumerate()
                .filter_map(|(i, p)| Some((i, (*p)?)))
                .max_by(|a, b| a.1.total_cmp(&b.1))?;
            Some(cstate_level(i, n))
        }
        Paint::Irq => {
            let v = r?.irq_per_s?;
            Some(IRQ_STEPS.iter().rposition(|t| v >= *t).unwrap_or(0))
        }
        Paint::Verdict => Some(match s.verdict_of(cpu)? {
            Verdict::Quiet => 0,
            Verdict::Info => 2,
            Verdict::Warn => 5,
            Verdict::Crit => 7,
        }),
    }
}

/// A CPU's clock for the MHz paint: the interval's average, or on a tree
/// of one instant the kernel's current clock (`cur`), the one clock a
/// single read has.
fn mhz(s: &State, r: Option<&CpuRates>, cpu: u32) -> Option<f64> {
    r.and_then(|r| r.avg_mhz).or_else(|| {
        s.one_instant()
            .then(|| cur_khz(s, cpu))
            .flatten()
            .map(|k| k as f64 / 1000.0)
    })
}

/// The kernel's current clock of `cpu` (`scaling_cur_freq`), kHz.
fn cur_khz(s: &State, cpu: u32) -> Option<u64> {
    s.judged()
        .machine()
        .cpufreq
        .iter()
        .find(|f| f.cpu == cpu)
        .and_then(|f| f.cur_khz)
}

/// The MHz paint's name: on a tree of one instant it is the kernel's
/// current clock, not an average.
fn label(s: &State) -> &'static str {
    match s.nav().paint() {
        Paint::Mhz if s.one_instant() => "cur MHz",
        p => p.label(),
    }
}

/// The level of state `i` of `n` (C0 first): C0 full, the deepest lowest.
fn cstate_level(i: usize, n: usize) -> usize {
    if n <= 1 {
        return 7;
    }
    7 - (i * 7) / (n - 1)
}

/// The colour of a level, cold to hot.
fn colour(level: usize) -> Color {
    const C: [Color; 8] = [
        Color::Blue,
        Color::Blue,
        Color::Cyan,
        Color::Green,
        Color::Green,
        Color::Yellow,
        Color::LightRed,
        Color::Red,
    ];
    C[level.min(7)]
}

fn glyph_style(s: &State, level: usize) -> Style {
    if s.theme().color {
        Style::new().fg(colour(level))
    } else {
        Style::new()
    }
}

/// The idle-state names of the interval on screen (C0 first).
fn state_names(s: &State) -> Vec<String> {
    let mut v = vec!["C0".to_string()];
    if let Some(r) = s.judged().latest().and_then(|iv| iv.cpus.first()) {
        if r.idle.is_empty() {
            v.extend(r.hw_cstates.iter().map(|h| h.0.to_string()));
        } else {
            v.extend(r.idle.iter().map(|i| i.name.to_string()));
        }
    }
    v
}

/// The legend: metric and unit, then what each glyph stands for.
fn legend(s: &State, top_mhz: Option<f64>) -> Line<'static> {
    let t = s.theme();
    let mut spans = vec![
        Span::styled(format!(" {}", label(s)), t.title()),
        Span::styled(" (c: next) ", t.dim()),
    ];
    let mut key = |level: usize, text: String| {
        spans.push(Span::styled(
            LEVELS[level].to_string(),
            glyph_style(s, level),
        ));
        spans.push(Span::raw(format!("{text} ")));
    };
    match s.nav().paint() {
        Paint::Busy => {
            for l in [0, 2, 4, 6, 7] {
                key(l, format!("≥{}", l as f64 * 12.5));
            }
        }
        Paint::Mhz => match top_mhz {
            Some(m) => {
                for l in [0, 2, 4, 6, 7] {
                    key(l, format!("≥{:.0}", m * l as f64 / 8.0));
                }
            }
            None => key(0, "scale unknown".into()),
        },
        Paint::Cstate => {
            let names = state_names(s);
            let n = names.len();
            for (i, name) in names.into_iter().enumerate() {
                key(cstate_level(i, n), name);
            }
        }
        Paint::Irq => {
            for l in [0, 1, 3, 5, 7] {
                key(l, format!("≥{}", fmt::rate(Some(IRQ_STEPS[l]))));
            }
        }
        Paint::Verdict => {
            for (l, v) in [(0, "quiet"), (2, "info"), (5, "warn"), (7, "crit")] {
                key(l, v.into());
            }
        }
    }
    let unit = match s.nav().paint() {
        Paint::Busy => "%",
        Paint::Mhz => "MHz",
        Paint::Irq => "/s",
        Paint::Cstate | Paint::Verdict => "",
    };
    if !unit.is_empty() {
        spans.push(Span::styled(format!("{unit} "), t.text()));
    }
    spans.push(Span::styled(" · unknown", t.dim()));
    spans.push(Span::styled("  underlined: watched", t.dim()));
    Line::from(spans)
}

/// The selected CPU's figures under the legend.
fn summary(s: &State, room: usize) -> Line<'static> {
    let t = s.theme();
    let Some(cpu) = s.nav().selected() else {
        return Line::from("");
    };
    let opt = |v: Option<u32>| v.map_or_else(|| fmt::UNKNOWN.to_string(), |v| v.to_string());
    let topo = s.judged().machine().topo(cpu);
    let r = s.rates(cpu);
    let dominant = r.and_then(|r| {
        let names = state_names(s);
        cstate_shares(r)
            .iter()
            .enumerate()
            .filter_map(|(i, p)| Some((i, (*p)?)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, p)| format!("{} {p:.0} %", names.get(i).map_or("?", String::as_str)))
    });
    let parts = [
        format!("CPU {cpu}"),
        format!("core {}", opt(topo.and_then(|x| x.core))),
        format!("pkg {}", opt(topo.and_then(|x| x.package))),
        format!("busy {} %", fmt::pct(r.and_then(|r| r.busy_pct), 0)),
        match r.and_then(|r| r.avg_mhz) {
            None if s.one_instant() && cur_khz(s, cpu).is_some() => {
                format!("cur {} MHz", fmt::whole(mhz(s, r, cpu)))
            }
            avg => format!("{} MHz", fmt::whole(avg)),
        },
        dominant.unwrap_or_else(|| format!("C-state {}", fmt::UNKNOWN)),
        format!("{} IRQ/s", fmt::rate(r.and_then(|r| r.irq_per_s))),
        s.verdict_of(cpu)
            .map_or(fmt::UNKNOWN, Verdict::label)
            .to_string(),
    ];
    // whole pieces: on a narrow screen the least telling go first
    let keep = [ALWAYS, 3, 2, 9, 8, 5, 6, 7];
    let mut pieces: Vec<Piece> = parts
        .into_iter()
        .zip(keep)
        .map(|(p, k)| Piece::new(p, t.text(), k))
        .collect();
    if s.is_watched(cpu) {
        pieces.push(Piece::new("watched", t.watched(), 4));
    }
    pieces.push(Piece::new("(⏎ detail)", t.dim(), 1));
    fit(" ", pieces, &Span::styled(" │ ", t.dim()), room)
}

/// Draws the overview.
pub fn render(s: &State, area: Rect, buf: &mut Buffer) {
    if area.height <= LEGEND_ROWS || area.width < 10 {
        return;
    }
    let t = s.theme();
    let top_mhz = s
        .judged()
        .machine()
        .max_mhz
        .or(s.judged().history().max_bzy);
    put(buf, area.x, area.y, &legend(s, top_mhz), area.width);
    put(
        buf,
        area.x,
        area.y + 1,
        &summary(s, area.width.into()),
        area.width,
    );
    let grid = Rect::new(
        area.x,
        area.y + LEGEND_ROWS,
        area.width,
        area.height - LEGEND_ROWS,
    );
    let cpus = shown(s);
    let g = layout(s.judged().machine(), &cpus, grid.width, grid.height);
    // rates by CPU number: one pass, not a search per cell
    let mut by_cpu: Vec<Option<&CpuRates>> = Vec::new();
    if let Some(iv) = s.judged().latest() {
        let top = iv
            .cpus
            .iter()
            .map(|r| r.cpu)
            .max()
            .map_or(0, |m| m as usize + 1);
        by_cpu.resize(top, None);
        for r in &iv.cpus {
            by_cpu[r.cpu as usize] = Some(r);
        }
    }
    let sel_row = s
        .nav()
        .selected()
        .and_then(|c| g.cells.iter().find(|x| x.0 == c))
        .map_or(0, |x| x.2);
    let first = (sel_row / grid.height.max(1)) * grid.height.max(1);
    for (row, name) in &g.labels {
        if (first..first + grid.height).contains(row) {
            put_str(
                buf,
                grid.x + 1,
                grid.y + row - first,
                name.clone(),
                t.title(),
                grid.width.saturating_sub(1),
            );
        }
    }
    for &(cpu, x, y) in &g.cells {
        if y < first || y >= first + grid.height || x >= grid.width {
            continue;
        }
        let r = by_cpu.get(cpu as usize).copied().flatten();
        let (ch, mut style) = if s.passes_filter(cpu) {
            match level(s, s.nav().paint(), r, cpu, top_mhz) {
                Some(l) => (LEVELS[l], glyph_style(s, l)),
                None => ('·', t.dim()),
            }
        } else {
            (' ', t.dim())
        };
        if s.is_watched(cpu) {
            style = style.add_modifier(Modifier::UNDERLINED);
        }
        if Some(cpu) == s.nav().selected() {
            style = style.patch(t.selected());
        }
        let cell = &mut buf[(grid.x + x, grid.y + y - first)];
        cell.set_char(ch);
        cell.set_style(style);
    }
    if g.rows > grid.height {
        let last = (first + grid.height).min(g.rows);
        crate::tui::pane::position(
            area,
            buf,
            &format!("rows {}–{last} of {}", first + 1, g.rows),
            t,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::topology::CpuTopology;

    fn machine(topo: &[(u32, Option<u32>, Vec<u32>)]) -> Machine {
        let dir = tempfile::tempdir().unwrap();
        let mut m = Machine::read(&mut crate::os::fs::Fs::new(crate::os::fs::Roots::under(
            dir.path(),
        )));
        m.online = topo.iter().map(|t| t.0).collect();
        m.topology = topo
            .iter()
            .map(|(cpu, pkg, sib)| CpuTopology {
                cpu: *cpu,
                package: *pkg,
                die: None,
                cluster: None,
                core: sib.iter().min().copied(),
                siblings: sib.clone(),
                core_type: None,
                node: None,
            })
            .collect();
        m
    }

    #[test]
    fn siblings_sit_side_by_side_and_packages_start_new_rows() {
        // 2 packages × 2 cores × 2 threads, siblings N and N+4 (as on the EPYC capture)
        let m = machine(&[
            (0, Some(0), vec![0, 4]),
            (1, Some(0), vec![1, 5]),
            (2, Some(1), vec![2, 6]),
            (3, Some(1), vec![3, 7]),
            (4, Some(0), vec![0, 4]),
            (5, Some(0), vec![1, 5]),
            (6, Some(1), vec![2, 6]),
            (7, Some(1), vec![3, 7]),
        ]);
        let g = layout(&m, &m.online, 20, 10);
        // label 7 wide, then cores of 2 cells and a gap
        assert_eq!(
            g.cells,
            vec![
                (0, 7, 0),
                (4, 8, 0),
                (1, 10, 0),
                (5, 11, 0),
                (2, 7, 1),
                (6, 8, 1),
                (3, 10, 1),
                (7, 11, 1),
            ]
        );
        assert_eq!(g.labels, vec![(0, "pkg 0".into()), (1, "pkg 1".into())]);
        assert_eq!(g.rows, 2);
        // too narrow for one core and a gap: cores wrap, still whole
        let g = layout(&m, &m.online, 10, 10);
        assert_eq!(g.rows, 4);
        assert_eq!(g.cells[2], (1, 7, 1));
    }

    #[test]
    fn gaps_go_when_the_grid_would_not_fit() {
        let topo: Vec<_> = (0..64).map(|c| (c, None, Vec::new())).collect();
        let m = machine(&topo);
        // no topology: one unlabelled group, a CPU per core
        let g = layout(&m, &m.online, 32, 3);
        assert!(g.labels.is_empty());
        assert_eq!(g.rows, 2, "without gaps 32 cells a row");
        assert_eq!(g.cells[33], (33, 1, 1));
        let g = layout(&m, &m.online, 32, 8);
        assert_eq!(g.rows, 4, "with gaps 16 cells a row");
    }

    #[test]
    fn two_digit_packages_keep_a_space_before_their_cells() {
        // 16 packages of one CPU each: "pkg 15" is six wide, a space each side
        let topo: Vec<_> = (0..16).map(|c| (c, Some(c), Vec::new())).collect();
        let m = machine(&topo);
        let g = layout(&m, &m.online, 40, 20);
        assert_eq!(g.labels[15], (15, "pkg 15".into()));
        assert!(g.cells.iter().all(|c| c.1 == 8), "{:?}", g.cells);
        // up to pkg 9 the label stays seven wide
        let g = layout(&m, &m.online[..10], 40, 20);
        assert!(g.cells.iter().all(|c| c.1 == 7), "{:?}", g.cells);
    }

    #[test]
    fn cstate_levels_run_from_c0_full_to_the_deepest_lowest() {
        assert_eq!(
            (0..4).map(|i| cstate_level(i, 4)).collect::<Vec<_>>(),
            vec![7, 5, 3, 0]
        );
        assert_eq!(cstate_level(0, 1), 7);
    }
}
