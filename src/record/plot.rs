//! `report --plot`: one picture of a recording, readable at 64 CPUs. Three
//! panels share one row per CPU and one time axis: a heatmap of `Avg_MHz`,
//! each CPU's C-state residency stacked in its own strip (busy at the
//! bottom, then each idle state from shallow to deep), and a heatmap of
//! interrupts per second on a log scale. A red mark on a cell says a
//! finding was active on that CPU then; the band above the panels marks
//! machine-wide findings.
//!
//! Drawn with plotters: PNG through its bitmap backend, SVG through its SVG
//! backend, text with `ab_glyph` and `DejaVu` Sans from the `dejavu` crate,
//! so no system font library is needed.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;

use crate::record::digest::{StateCol, states_of};
use crate::record::reader::{ReadError, Recording};

/// Why a plot failed.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// The recording cannot be read.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The output name ends neither in `.svg` nor `.png`.
    #[error("{0}: the plot is drawn as .svg or .png; name the file so")]
    Extension(String),
    /// Drawing or writing failed.
    #[error("{0}")]
    Draw(String),
    /// Nothing to draw.
    #[error("the recording has no CPU rows to draw")]
    Empty,
}

const FONT: &str = "sans-serif";

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
        let _ = plotters::style::register_font(FONT, FontStyle::Bold, dejavu::sans::bold());
    });
}

/// Per-CPU series, binned in time.
struct Binned {
    cpus: Vec<u32>,
    bins: usize,
    t0: f64,
    t1: f64,
    /// `[cpu][bin]` mean `Avg_MHz`.
    mhz: Vec<Vec<Option<f32>>>,
    /// `[cpu][bin]` mean irq/s.
    irq: Vec<Vec<Option<f32>>>,
    /// `[cpu][bin][layer]` residency %: busy, then each state.
    stack: Vec<Vec<Vec<f32>>>,
    /// `[cpu][bin]` a finding was active.
    flag: Vec<Vec<bool>>,
    /// `[bin]` a machine-wide finding was active.
    machine_flag: Vec<bool>,
    /// Finding ids seen.
    ids: Vec<String>,
    states: Vec<StateCol>,
    title: String,
    /// The frequency panel's title: what its figures were read from.
    freq_title: String,
    /// How the colour scales are set.
    scale: Scale,
}

#[derive(Default, Clone)]
struct Cell {
    n_mhz: u32,
    mhz: f64,
    n_irq: u32,
    irq: f64,
    n: u32,
    stack: Vec<f64>,
    flag: bool,
}

fn gather(path: &Path, max_bins: usize) -> Result<Binned, PlotError> {
    let rec = Recording::open(path)?;
    let states = states_of(&rec);
    let (c_mhz, c_busy, c_irq) = (
        rec.col("avg_mhz"),
        rec.col("busy_pct"),
        rec.col("irq_per_s"),
    );
    let c_states: Vec<Option<usize>> = states
        .iter()
        .map(|s| rec.col(&format!("{}_pct", s.column)))
        .collect();
    // first pass: the time span and the CPUs (cheap next to drawing)
    let (mut t0, mut t1) = (f64::INFINITY, f64::NEG_INFINITY);
    let mut cpus = std::collections::BTreeSet::new();
    let mut intervals = 0usize;
    rec.for_each(|r| {
        t0 = t0.min(r.t_s);
        t1 = t1.max(r.t_s);
        match r.cpu {
            Some(c) => {
                cpus.insert(c);
            }
            None => intervals += 1,
        }
    })?;
    let cpus: Vec<u32> = cpus.into_iter().collect();
    if cpus.is_empty() {
        return Err(PlotError::Empty);
    }
    let bins = intervals.clamp(1, max_bins);
    let span = (t1 - t0).max(1e-9);
    let bin_of = |t: f64| {
        (((t - t0) / span) * bins as f64)
            .floor()
            .clamp(0.0, bins as f64 - 1.0) as usize
    };
    let layers = states.len() + 1;
    let mut cells = vec![
        vec![
            Cell {
                stack: vec![0.0; layers],
                ..Cell::default()
            };
            bins
        ];
        cpus.len()
    ];
    let mut machine_flag = vec![false; bins];
    let mut ids: Vec<String> = Vec::new();
    rec.for_each(|r| {
        let b = bin_of(r.t_s);
        for id in r.finding_ids() {
            if !ids.iter().any(|i| i == id) {
                ids.push(id.to_string());
            }
        }
        let Some(cpu) = r.cpu else {
            if r.finding_ids().next().is_some() {
                machine_flag[b] = true;
            }
            return;
        };
        let Ok(k) = cpus.binary_search(&cpu) else {
            return;
        };
        let c = &mut cells[k][b];
        let v = |i: Option<usize>| i.and_then(|i| r.values[i]);
        if let Some(m) = v(c_mhz) {
            c.mhz += m;
            c.n_mhz += 1;
        }
        if let Some(q) = v(c_irq) {
            c.irq += q;
            c.n_irq += 1;
        }
        c.n += 1;
        c.stack[0] += v(c_busy).unwrap_or(0.0);
        for (j, s) in c_states.iter().enumerate() {
            c.stack[j + 1] += v(*s).unwrap_or(0.0);
        }
        c.flag |= r.finding_ids().next().is_some();
    })?;
    let avg = |s: f64, n: u32| (n > 0).then(|| (s / f64::from(n)) as f32);
    let sc = rec.sidecar.as_ref();
    let covered = span + rec.sidecar.as_ref().map_or(0.0, |s| s.interval_s);
    let title = format!(
        "{} · {} CPUs · {}{}",
        path.file_name()
            .map_or_else(String::new, |f| f.to_string_lossy().into_owned()),
        cpus.len(),
        // labelled as the end tick of an axis that long would be
        tick_label(covered, covered * 4.0),
        sc.and_then(|s| s.facts.model.clone())
            .map_or(String::new(), |m| format!(" · {m}"))
    );
    let freq_title = freq_title(sc);
    Ok(Binned {
        bins,
        freq_title,
        scale: Scale::Auto,
        t0: t0 - sc.map_or(0.0, |s| s.interval_s),
        t1,
        mhz: cells
            .iter()
            .map(|r| r.iter().map(|c| avg(c.mhz, c.n_mhz)).collect())
            .collect(),
        irq: cells
            .iter()
            .map(|r| r.iter().map(|c| avg(c.irq, c.n_irq)).collect())
            .collect(),
        stack: cells
            .iter()
            .map(|r| {
                r.iter()
                    .map(|c| {
                        c.stack
                            .iter()
                            .map(|v| {
                                if c.n > 0 {
                                    (v / f64::from(c.n)) as f32
                                } else {
                                    0.0
                                }
                            })
                            .collect()
                    })
                    .collect()
            })
            .collect(),
        flag: cells
            .iter()
            .map(|r| r.iter().map(|c| c.flag).collect())
            .collect(),
        machine_flag,
        ids,
        states,
        title,
        cpus,
    })
}

/// Names what the `avg_mhz` figures are, from the source the sidecar
/// recorded: ΔAPERF/dt only where APERF was read.
fn freq_title(sc: Option<&crate::record::sidecar::Sidecar>) -> String {
    let Some(src) = sc.and_then(|s| s.freq_source()) else {
        return "Avg_MHz (source not recorded)".into();
    };
    match src.source.as_deref() {
        Some(s) if s.to_ascii_lowercase().contains("aperf") => {
            "Avg_MHz (ΔAPERF/dt: clock × busy share)".into()
        }
        Some(s) => format!("Avg_MHz (from {})", s.split(';').next().unwrap_or(s).trim()),
        None => "Avg_MHz (unavailable)".into(),
    }
}

/// Viridis, sampled at five stops and interpolated.
fn viridis(x: f64) -> RGBColor {
    const STOPS: [(u8, u8, u8); 5] = [
        (68, 1, 84),
        (59, 82, 139),
        (33, 145, 140),
        (94, 201, 98),
        (253, 231, 37),
    ];
    ramp(&STOPS, x)
}

/// Magma-like ramp for interrupt rates.
fn heat(x: f64) -> RGBColor {
    const STOPS: [(u8, u8, u8); 5] = [
        (252, 253, 191),
        (254, 176, 120),
        (241, 96, 93),
        (140, 41, 129),
        (30, 12, 60),
    ];
    ramp(&STOPS, x)
}

fn ramp(stops: &[(u8, u8, u8)], x: f64) -> RGBColor {
    // 24 levels: neighbouring cells of one colour merge into one rectangle
    let x = (x.clamp(0.0, 1.0) * 24.0).round() / 24.0;
    let f = x * (stops.len() - 1) as f64;
    let i = (f.floor() as usize).min(stops.len() - 2);
    let t = f - i as f64;
    let mix = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * t).round() as u8;
    let (a, b) = (stops[i], stops[i + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Colours of the residency layers: busy, then idle states shallow → deep.
fn layer_colour(k: usize, layers: usize) -> RGBColor {
    if k == 0 {
        return BUSY;
    }
    let n = (layers - 1).max(1);
    let x = (k - 1) as f64 / (n.max(2) - 1) as f64;
    // light blue (shallow) to dark blue (deep)
    let mix = |a: f64, b: f64| (a + (b - a) * x).round() as u8;
    RGBColor(mix(171.0, 8.0), mix(217.0, 48.0), mix(233.0, 107.0))
}

const GREY: RGBColor = RGBColor(225, 225, 225);
/// Finding marks: red, and nothing else in the plot is red.
const MARK: RGBColor = RGBColor(230, 0, 0);
/// Busy time in the residency strip: amber, apart from the red marks.
const BUSY: RGBColor = RGBColor(240, 165, 40);

/// How the colour scales are set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scale {
    /// From this file's lowest to highest figure.
    #[default]
    Auto,
    /// The same for every file, so plots compare by colour:
    /// 0–6000 MHz, 1–100 000 interrupts/s.
    Fixed,
}

/// Top of the fixed frequency scale, MHz.
pub const FIXED_MHZ: f32 = 6000.0;
/// Top of the fixed interrupt scale, as a power of ten per second.
pub const FIXED_IRQ_DECADES: f64 = 5.0;

/// Draws the plot of `csv` into `out` (`.svg` or `.png`), each scale from
/// the file's own figures.
pub fn plot(csv: &Path, out: &Path) -> Result<(), PlotError> {
    plot_with(csv, out, Scale::Auto)
}

/// Whether `out` names an SVG (else a PNG); an error for any other name.
pub fn check_name(out: &Path) -> Result<bool, PlotError> {
    let ext = out
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("svg") => Ok(true),
        Some("png") => Ok(false),
        _ => Err(PlotError::Extension(out.display().to_string())),
    }
}

/// Draws the plot of `csv` into `out` with the colour scales asked for.
pub fn plot_with(csv: &Path, out: &Path, scale: Scale) -> Result<(), PlotError> {
    register_font();
    let svg = check_name(out)?;
    let mut data = gather(csv, if svg { 240 } else { 440 })?;
    data.scale = scale;
    let layout = Layout::new(data.cpus.len());
    let size = (layout.width, layout.height);
    if svg {
        let root = SVGBackend::new(out, size).into_drawing_area();
        draw(&root, &data, &layout)?;
        root.present().map_err(|x| PlotError::Draw(x.to_string()))
    } else {
        let root = BitMapBackend::new(out, size).into_drawing_area();
        draw(&root, &data, &layout)?;
        root.present().map_err(|x| PlotError::Draw(x.to_string()))
    }
}

struct Layout {
    width: u32,
    height: u32,
    row: i32,
    top: i32,
    left: i32,
    panel: i32,
    gap: i32,
}

impl Layout {
    fn new(cpus: usize) -> Layout {
        let row = (640 / cpus.max(1) as i32).clamp(3, 28);
        let top = 96;
        let rows_h = row * cpus as i32;
        Layout {
            width: 1600,
            height: (top + rows_h + 110) as u32,
            row,
            top,
            left: 56,
            panel: 490,
            gap: 22,
        }
    }

    fn x0(&self, p: i32) -> i32 {
        self.left + p * (self.panel + self.gap)
    }
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    d: &Binned,
    l: &Layout,
) -> Result<(), PlotError> {
    // the backend's error type differs per backend: its words are kept
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| PlotError::Draw(e.to_string());
    root.fill(&WHITE).map_err(err)?;
    let font = |px: u32| (FONT, px).into_font();
    let text = |s: &str, x: i32, y: i32, px: u32| {
        root.draw(&Text::new(s.to_string(), (x, y), font(px).color(&BLACK)))
            .map_err(err)
    };
    text(&d.title, l.left, 10, 20)?;
    let n = d.cpus.len() as i32;
    let rows_h = l.row * n;
    let y_of = |k: usize| l.top + k as i32 * l.row;
    let x_of =
        |p: i32, b: usize| l.x0(p) + (b as f64 * f64::from(l.panel) / d.bins as f64).round() as i32;
    // scales
    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
    for v in d.mhz.iter().flatten().flatten() {
        lo = lo.min(*v);
        hi = hi.max(*v);
    }
    let irq_max = d
        .irq
        .iter()
        .flatten()
        .flatten()
        .fold(1.0f32, |a, v| a.max(*v));
    let mut irq_top = f64::from(irq_max).log10().ceil().max(1.0);
    let have_mhz = hi >= lo;
    let have_irq = d.irq.iter().flatten().any(Option::is_some);
    if d.scale == Scale::Fixed {
        (lo, hi) = (0.0, FIXED_MHZ);
        irq_top = FIXED_IRQ_DECADES;
    }
    let titles = [
        d.freq_title.clone(),
        "C-state residency: busy, then idle states shallow → deep".to_string(),
        "Interrupts per second (log scale)".to_string(),
    ];
    for (p, t) in titles.iter().enumerate() {
        text(t, l.x0(p as i32), l.top - 24, 15)?;
    }
    // machine-wide findings band
    let band_y = l.top - 34;
    for p in 0..3 {
        for (b, f) in d.machine_flag.iter().enumerate() {
            if *f {
                root.draw(&Rectangle::new(
                    [
                        (x_of(p, b), band_y),
                        (x_of(p, b + 1).max(x_of(p, b) + 1), band_y + 4),
                    ],
                    MARK.filled(),
                ))
                .map_err(err)?;
            }
        }
    }
    // CPU labels: every row when there is room, else every 4th or 8th
    let every = match l.row {
        r if r >= 12 => 1,
        r if r >= 7 => 4,
        _ => 8,
    };
    for (k, cpu) in d.cpus.iter().enumerate() {
        if k % every == 0 {
            let y = y_of(k) + (l.row - 12).max(0) / 2 - if l.row < 12 { 2 } else { 0 };
            root.draw(&Text::new(
                cpu.to_string(),
                (l.left - 8, y),
                font(11)
                    .color(&BLACK)
                    .pos(plotters::style::text_anchor::Pos::new(
                        plotters::style::text_anchor::HPos::Right,
                        plotters::style::text_anchor::VPos::Top,
                    )),
            ))
            .map_err(err)?;
        }
    }
    text("CPU", 6, l.top - 24, 13)?;
    for (k, _) in d.cpus.iter().enumerate() {
        let (y0, y1) = (y_of(k), y_of(k) + l.row);
        // panel 0 and 2: heatmaps, runs of one colour as one rectangle
        for p in [0, 2] {
            let colour = |b: usize| -> RGBColor {
                if p == 0 {
                    d.mhz[k][b].map_or(GREY, |v| {
                        viridis(if hi > lo {
                            f64::from((v.clamp(lo, hi) - lo) / (hi - lo))
                        } else {
                            0.5
                        })
                    })
                } else {
                    d.irq[k][b].map_or(GREY, |v| heat(f64::from(v.max(1.0)).log10() / irq_top))
                }
            };
            let mut start = 0;
            while start < d.bins {
                let c = colour(start);
                let mut end = start + 1;
                while end < d.bins && colour(end) == c {
                    end += 1;
                }
                root.draw(&Rectangle::new(
                    [(x_of(p, start), y0), (x_of(p, end), y1)],
                    c.filled(),
                ))
                .map_err(err)?;
                start = end;
            }
        }
        // panel 1: stacked residency strip, one polygon per layer
        let layers = d.states.len() + 1;
        let h = f64::from(l.row - 1);
        let mut below = vec![0.0f64; d.bins];
        for layer in 0..layers {
            let mut top_pts = Vec::with_capacity(d.bins * 2 + 2);
            let mut bottom_pts = Vec::with_capacity(d.bins * 2);
            let mut any = false;
            for (b, lo) in below.iter_mut().enumerate() {
                let v = f64::from(d.stack[k][b][layer]).clamp(0.0, 100.0);
                any |= v > 0.0;
                let lo_v = *lo;
                let hi_v = (lo_v + v).min(100.0);
                let (xa, xb) = (x_of(1, b), x_of(1, b + 1));
                let yv = |pct: f64| y1 - 1 - (pct / 100.0 * h).round() as i32;
                top_pts.push((xa, yv(hi_v)));
                top_pts.push((xb, yv(hi_v)));
                bottom_pts.push((xa, yv(lo_v)));
                bottom_pts.push((xb, yv(lo_v)));
                *lo = hi_v;
            }
            if !any {
                continue;
            }
            bottom_pts.reverse();
            top_pts.extend(bottom_pts);
            root.draw(&Polygon::new(top_pts, layer_colour(layer, layers).filled()))
                .map_err(err)?;
        }
        // finding marks: a red tick on the cell's top edge in each panel
        for p in 0..3 {
            for b in 0..d.bins {
                if d.flag[k][b] {
                    let (xa, xb) = (x_of(p, b), x_of(p, b + 1).max(x_of(p, b) + 2));
                    root.draw(&Rectangle::new(
                        [(xa, y0), (xb, y0 + (l.row / 4).max(1))],
                        MARK.filled(),
                    ))
                    .map_err(err)?;
                }
            }
        }
    }
    // frames and time axes
    let axis_y = l.top + rows_h;
    for p in 0..3 {
        root.draw(&Rectangle::new(
            [(l.x0(p), l.top), (l.x0(p) + l.panel, axis_y)],
            BLACK.mix(0.6).stroke_width(1),
        ))
        .map_err(err)?;
        for i in 0..=4 {
            let x = l.x0(p) + l.panel * i / 4;
            let t = d.t0 + (d.t1 - d.t0) * f64::from(i) / 4.0;
            root.draw(&PathElement::new(vec![(x, axis_y), (x, axis_y + 4)], BLACK))
                .map_err(err)?;
            let label = tick_label(t, d.t1 - d.t0);
            // the end labels sit inside their panel, clear of the next one
            let h = match i {
                0 => plotters::style::text_anchor::HPos::Left,
                4 => plotters::style::text_anchor::HPos::Right,
                _ => plotters::style::text_anchor::HPos::Center,
            };
            root.draw(&Text::new(
                label,
                (x, axis_y + 6),
                font(11)
                    .color(&BLACK)
                    .pos(plotters::style::text_anchor::Pos::new(
                        h,
                        plotters::style::text_anchor::VPos::Top,
                    )),
            ))
            .map_err(err)?;
        }
    }
    // legends
    let ly = axis_y + 34;
    let bar = |p: i32,
               f: &dyn Fn(f64) -> RGBColor,
               left: String,
               right: String|
     -> Result<(), PlotError> {
        let x0 = l.x0(p);
        let w = 200;
        for i in 0..w {
            let c = f(f64::from(i) / f64::from(w - 1));
            root.draw(&Rectangle::new(
                [(x0 + i, ly), (x0 + i + 1, ly + 12)],
                c.filled(),
            ))
            .map_err(err)?;
        }
        text(&left, x0, ly + 16, 12)?;
        root.draw(&Text::new(
            right,
            (x0 + w, ly + 16),
            font(12)
                .color(&BLACK)
                .pos(plotters::style::text_anchor::Pos::new(
                    plotters::style::text_anchor::HPos::Right,
                    plotters::style::text_anchor::VPos::Top,
                )),
        ))
        .map_err(err)?;
        Ok(())
    };
    // a panel without a single figure says so instead of a scale
    let no_data = |p: i32| {
        root.draw(&Text::new(
            "no data".to_string(),
            (l.x0(p) + l.panel / 2, l.top + rows_h / 2),
            font(16)
                .color(&BLACK)
                .pos(plotters::style::text_anchor::Pos::new(
                    plotters::style::text_anchor::HPos::Center,
                    plotters::style::text_anchor::VPos::Center,
                )),
        ))
        .map_err(err)
    };
    if have_mhz {
        bar(0, &viridis, format!("{lo:.0} MHz"), format!("{hi:.0} MHz"))?;
    } else {
        no_data(0)?;
        text("no frequency figures", l.x0(0), ly, 12)?;
    }
    if have_irq {
        bar(
            2,
            &heat,
            "1/s".into(),
            format!("{:.0}/s", 10f64.powf(irq_top)),
        )?;
    } else {
        no_data(2)?;
        text("no interrupt figures", l.x0(2), ly, 12)?;
    }
    // residency legend
    let layers = d.states.len() + 1;
    let mut x = l.x0(1);
    for layer in 0..layers {
        let name = if layer == 0 {
            "busy".to_string()
        } else {
            let s = &d.states[layer - 1];
            match s.latency_us {
                Some(lat) => format!("{} {lat}µs", s.name),
                None => s.name.clone(),
            }
        };
        root.draw(&Rectangle::new(
            [(x, ly), (x + 12, ly + 12)],
            layer_colour(layer, layers).filled(),
        ))
        .map_err(err)?;
        text(&name, x + 16, ly, 12)?;
        x += 22 + 8 * name.chars().count() as i32;
        if x > l.x0(1) + l.panel - 40 {
            break;
        }
    }
    let y2 = ly + 40;
    root.draw(&Rectangle::new(
        [(l.left, y2 + 2), (l.left + 14, y2 + 6)],
        MARK.filled(),
    ))
    .map_err(err)?;
    let ids = if d.ids.is_empty() {
        "no finding in this recording".to_string()
    } else {
        let mut s = d.ids.iter().take(8).cloned().collect::<Vec<_>>().join(", ");
        if d.ids.len() > 8 {
            let _ = write!(s, " and {} more", d.ids.len() - 8);
        }
        s
    };
    text(
        &format!("finding active on that CPU (band above the panels: machine-wide): {ids}"),
        l.left + 20,
        y2 - 2,
        12,
    )?;
    Ok(())
}

/// A time-axis label at `t` seconds on an axis `span` seconds long with
/// ticks at its quarters: minutes from ten minutes up, and as many
/// decimals as make neighbouring ticks differ (a 2 s run: 0.5 s apart;
/// ten minutes: 2.5 min apart).
fn tick_label(t: f64, span: f64) -> String {
    let (v, unit, step) = if span >= 600.0 {
        (t / 60.0, "min", span / 240.0)
    } else {
        (t, "s", span / 4.0)
    };
    let whole = (step - step.round()).abs() < 1e-9;
    let decimals = if step >= 10.0 || (step >= 1.0 && whole) {
        0
    } else if step >= 0.1 {
        1
    } else {
        2
    };
    format!("{v:.decimals$} {unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_ticks_differ_from_their_neighbours() {
        let ticks = |span: f64| -> Vec<String> {
            (0..=4)
                .map(|i| tick_label(span * f64::from(i) / 4.0, span))
                .collect()
        };
        assert_eq!(ticks(2.0), ["0.0 s", "0.5 s", "1.0 s", "1.5 s", "2.0 s"]);
        assert_eq!(
            ticks(0.2),
            ["0.00 s", "0.05 s", "0.10 s", "0.15 s", "0.20 s"]
        );
        assert_eq!(ticks(60.0), ["0 s", "15 s", "30 s", "45 s", "60 s"]);
        assert_eq!(
            ticks(3600.0),
            ["0 min", "15 min", "30 min", "45 min", "60 min"]
        );
        assert_eq!(ticks(600.0)[1], "2.5 min");
    }
}
