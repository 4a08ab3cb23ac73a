//! The Cores view: one row per CPU in the corefreq-cli style. Wide rows
//! carry every figure; compact rows (80 columns) the essentials; when the
//! CPUs do not fit and the screen is wide, two columns of compact rows.
//! Pages follow the selection, so 256 CPUs scroll a page at a time.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::model::interval::CpuRates;
use crate::noise::{Severity, VerdictState};
use crate::tui::bars::{self, FreqScale};
use crate::tui::fit::{CUT, put};
use crate::tui::fmt::{self, left, right};
use crate::tui::layout::{Geometry, SUMMARY_ROWS};
use crate::tui::state::State;
use crate::tui::theme::Theme;

/// Fixed part of a wide row (everything but the two bars and the noise
/// column) without the optional columns.
const WIDE_BASE: usize = 71;

/// Fixed part of a wide row with the optional columns on screen.
fn wide_fixed(s: &State) -> usize {
    WIDE_BASE + crate::tui::columns::width(s.nav().columns())
}
/// Fixed part of a compact row (everything but the two bars and the noise column).
const COMPACT_FIXED: usize = 30;

/// What every row of one frame shares.
struct Ctx<'a> {
    s: &'a State,
    t: Theme,
    scale: FreqScale,
    /// The noise column's width the rows need at least: an owner's name
    /// and one more label fit beside it.
    noise_min: usize,
    /// The CPUs listed, which the summary row sums up.
    listed: Vec<&'a CpuRates>,
}

/// Draws the Cores view.
pub fn render(s: &State, area: Rect, buf: &mut Buffer) {
    if area.height < 2 || area.width < 20 {
        return;
    }
    let order = s.order();
    let g = Geometry::of(
        area.height.saturating_sub(1 + SUMMARY_ROWS),
        area.width + 2,
        order.len(),
    );
    // the rows listed, summed up: turbostat's `-` row
    let listed: Vec<&CpuRates> = s
        .judged()
        .latest()
        .map(|iv| order.iter().filter_map(|c| iv.cpu(*c)).collect())
        .unwrap_or_default();
    let all = s
        .judged()
        .latest()
        .map(|_| crate::tui::summary::of(&listed));
    let ctx = Ctx {
        s,
        t: s.theme(),
        scale: FreqScale {
            max: s
                .judged()
                .machine()
                .max_mhz
                .or(s.judged().history().max_bzy),
            base: s.judged().machine().base_mhz.as_ref().map(|b| b.0),
        },
        noise_min: s
            .judged()
            .watched()
            .iter()
            .filter_map(|&c| owner_label(s, c))
            .map(|o| o.chars().count() + 3 + OWNER_AND_ONE)
            .max()
            .unwrap_or(0),
        listed,
    };
    let colw = if g.columns == 1 {
        area.width
    } else {
        (area.width - 1) / 2
    };
    let at = s
        .nav()
        .selected()
        .and_then(|c| order.iter().position(|x| *x == c))
        .unwrap_or(0);
    let slots = g.slots().max(1);
    let first = (at / slots) * slots;
    for col in 0..g.columns {
        let x = area.x + col * (colw + 1);
        let head = if g.wide {
            wide_header(&ctx, colw as usize)
        } else {
            compact_header(&ctx, colw as usize)
        };
        put(buf, x, area.y, &head, colw);
        if col == 0 {
            let line = if g.wide {
                wide_row(&ctx, ALL, all.as_ref(), colw as usize)
            } else {
                compact_row(&ctx, ALL, all.as_ref(), colw as usize)
            };
            put(buf, x, area.y + 1, &line, colw);
        }
        for row in 0..g.rows {
            let i = first + col as usize * g.rows as usize + row as usize;
            let Some(&cpu) = order.get(i) else { break };
            let y = area.y + 1 + SUMMARY_ROWS + row;
            let line = if g.wide {
                wide_row(&ctx, cpu, ctx.s.rates(cpu), colw as usize)
            } else {
                compact_row(&ctx, cpu, ctx.s.rates(cpu), colw as usize)
            };
            put(buf, x, y, &line, colw);
            if Some(cpu) == s.nav().selected() {
                buf.set_style(Rect::new(x, y, colw, 1), ctx.t.selected());
            }
        }
    }
    let shown = order.len().saturating_sub(first).min(slots) as u16;
    bottom_legend(&ctx, g, area, buf);
    crate::tui::pane::rows_position(area, buf, first, shown as usize, order.len(), ctx.t);
    let pkgs = package_rows(s);
    if g.columns == 1 && pkgs > 0 && shown + 1 + pkgs <= g.rows {
        packages(
            &ctx,
            Rect::new(area.x, area.y + 2 + SUMMARY_ROWS + shown, area.width, pkgs),
            buf,
        );
    }
}

/// Writes the C-state legend on the box's bottom border when the column
/// header has no room for it, whole (never cut to a few letters).
fn bottom_legend(ctx: &Ctx<'_>, g: Geometry, area: Rect, buf: &mut Buffer) {
    let names = state_names(ctx.s);
    if names.is_empty() {
        return;
    }
    let (_, cb, _) = if g.wide {
        split_for(ctx, area.width as usize, wide_fixed(ctx.s), 12, 8)
    } else {
        (0, 0, 0)
    };
    let mut legend = bars::legend(&names, ctx.t);
    let w: usize = legend.iter().map(|s| s.content.chars().count()).sum();
    if g.wide && w <= cb {
        return;
    }
    legend.insert(0, Span::styled(" C-states: ", ctx.t.dim()));
    legend.push(Span::raw(" "));
    put(
        buf,
        area.x + 1,
        area.y + area.height,
        &Line::from(legend),
        area.width.saturating_sub(2),
    );
}

/// Package lines under wide rows.
fn package_rows(s: &State) -> u16 {
    s.judged()
        .latest()
        .as_ref()
        .map_or(0, |iv| iv.pkgs.len().min(4) as u16)
}

/// Height of the Cores box (borders included) when every CPU fits in one
/// column: header, rows, and the package lines of wide rows.
pub fn wanted_rows(s: &State, _width: u16) -> Option<u16> {
    let n = u16::try_from(s.order().len()).ok()?;
    let pkgs = if package_rows(s) > 0 {
        1 + package_rows(s)
    } else {
        0
    };
    Some(3 + SUMMARY_ROWS + n.max(1) + pkgs)
}

/// The summary row's stand-in for a CPU number.
const ALL: u32 = u32::MAX;

/// Widths of the two bars and the noise column for a row of `w` cells.
fn split(w: usize, fixed: usize, min_freq: usize, min_cst: usize) -> (usize, usize, usize) {
    let rem = w.saturating_sub(fixed);
    let fb = (rem * 2 / 5).max(min_freq);
    let cb = (rem / 4).max(min_cst);
    (fb, cb, rem.saturating_sub(fb + cb))
}

/// Room a label beside the owner's name gets (`sh[12345]`, `IRQ virtio1`).
const OWNER_AND_ONE: usize = 12;

/// [`split`], with the bars giving up cells (down to their minimum) until
/// the noise column is `noise_min` wide.
fn split_for(
    ctx: &Ctx<'_>,
    w: usize,
    fixed: usize,
    min_freq: usize,
    min_cst: usize,
) -> (usize, usize, usize) {
    // an owner shown beside the noise: the bars may give a few more cells
    // (a frequency bar of 10 still reads), so that a watched row names
    // both its owner and what disturbs it
    let (min_freq, min_cst) = if ctx.noise_min > 0 {
        (min_freq.min(10), min_cst.min(6))
    } else {
        (min_freq, min_cst)
    };
    let (mut fb, mut cb, mut nw) = split(w, fixed, min_freq, min_cst);
    let give_f = fb
        .saturating_sub(min_freq)
        .min(ctx.noise_min.saturating_sub(nw));
    fb -= give_f;
    nw += give_f;
    let give_c = cb
        .saturating_sub(min_cst)
        .min(ctx.noise_min.saturating_sub(nw));
    cb -= give_c;
    nw += give_c;
    (fb, cb, nw)
}

/// `owner sh[9437]` for a watched CPU whose owner is known.
fn owner_label(s: &State, cpu: u32) -> Option<String> {
    owner_of(s, cpu).map(|o| format!("owner {}[{}]", o.comm, o.pid))
}

/// Share of the window from which an unwatched CPU's longest runner is
/// named on its row, %: below it the row stays blank (quiet).
const TOP_RUNNER_PCT: f64 = 5.0;

/// `rustc[16073] 62%` for an unwatched CPU whose longest runner took at
/// least [`TOP_RUNNER_PCT`] of the window, and `pid 16073 62%` for a
/// narrow cell (the detail names it).
fn top_runner(s: &State, cpu: u32) -> Option<(String, String)> {
    let tc = s.judged().trace()?.shown(cpu)?;
    let o = tc.owner.as_ref()?;
    let pct = tc.pct(tc.owner_ns)?;
    (pct >= TOP_RUNNER_PCT).then(|| {
        (
            format!("{}[{}] {pct:.0}%", o.comm, o.pid),
            format!("pid {} {pct:.0}%", o.pid),
        )
    })
}

/// The owner of a watched CPU, when known.
fn owner_of(s: &State, cpu: u32) -> Option<&crate::noise::traced::TracedTask> {
    s.judged()
        .trace()
        .as_ref()
        .filter(|_| s.is_watched(cpu))?
        .cpu(cpu)?
        .owner
        .as_ref()
}

/// The idle states the bar stacks, each with whether it is disabled on
/// any CPU (`stateN/disable`).
pub fn state_names(s: &State) -> Vec<(String, bool)> {
    let Some(iv) = s.judged().latest() else {
        return Vec::new();
    };
    let Some(first) = iv.cpus.first() else {
        return Vec::new();
    };
    if first.idle.is_empty() {
        return first
            .hw_cstates
            .iter()
            .map(|h| (h.0.to_string(), false))
            .collect();
    }
    first
        .idle
        .iter()
        .enumerate()
        .map(|(i, st)| {
            let off = iv
                .cpus
                .iter()
                .any(|r| r.idle.get(i).is_some_and(|x| x.disabled == Some(true)));
            (st.name.to_string(), off)
        })
        .collect()
}

fn freq_title(ctx: &Ctx<'_>, width: usize) -> String {
    let max = ctx
        .scale
        .max
        .map_or_else(|| fmt::UNKNOWN.to_string(), |m| format!("{m:.0}"));
    // the base mark is named only where the bar can draw it
    let long = match (ctx.scale.max, ctx.scale.base) {
        (Some(_), Some(_)) => format!("frequency 0–{max} MHz, {} base", bars::BASE_MARK),
        (Some(_), None) => format!("frequency 0–{max} MHz"),
        (None, _) => "frequency: scale unknown".to_string(),
    };
    if long.chars().count() <= width {
        left(&long, width)
    } else {
        left(&format!("MHz 0–{max}"), width)
    }
}

fn wide_header(ctx: &Ctx<'_>, w: usize) -> Line<'static> {
    let t = ctx.t;
    let (fb, cb, nw) = split_for(ctx, w, wide_fixed(ctx.s), 12, 8);
    let mut legend = bars::legend(&state_names(ctx.s), t);
    let legend_w: usize = legend.iter().map(|s| s.content.chars().count()).sum();
    if legend_w > cb {
        // the whole legend goes on the box's bottom border instead
        legend = vec![Span::styled(left("C-states ↓", cb), t.title())];
    } else {
        legend.push(Span::raw(" ".repeat(cb - legend_w)));
    }
    legend.push(Span::styled(right("exit µs", 9), t.title()));
    let mut spans = vec![
        Span::styled("  CPU core  sib", t.title()),
        Span::styled(" │ ", t.dim()),
        Span::styled(freq_title(ctx, fb), t.title()),
        Span::styled(" │ ", t.dim()),
        Span::styled("  Avg   Bzy   min–max Busy", t.title()),
        Span::styled(" │ ", t.dim()),
    ];
    spans.extend(legend);
    spans.extend([
        Span::styled(" │ ", t.dim()),
        Span::styled(
            ctx.s
                .nav()
                .columns()
                .iter()
                .map(|i| {
                    crate::tui::columns::columns()
                        .get(*i)
                        .map(|c| right(c.name, c.width))
                        .unwrap_or_default()
                })
                .collect::<String>(),
            t.title(),
        ),
        Span::styled(" │ ", t.dim()),
        Span::styled(" °C", t.title()),
        Span::styled(" │ ", t.dim()),
        Span::styled(left("noise", nw), t.title()),
    ]);
    Line::from(spans)
}

fn compact_header(ctx: &Ctx<'_>, w: usize) -> Line<'static> {
    let t = ctx.t;
    let (fb, cb, nw) = split_for(ctx, w, COMPACT_FIXED, 10, 6);
    Line::from(vec![
        Span::styled("  CPU ", t.title()),
        Span::styled(freq_title(ctx, fb), t.title()),
        Span::styled("  Avg Bsy% ", t.title()),
        // whole words only: the legend is under the box when no form fits
        Span::styled(
            left(
                ["C-states ↓", "C-states", "idle"]
                    .into_iter()
                    .find(|h| h.chars().count() <= cb)
                    .unwrap_or(""),
                cb,
            ),
            t.title(),
        ),
        Span::styled(" IRQ/s CSW/s ", t.title()),
        Span::styled(left("noise", nw), t.title()),
    ])
}

/// `▸` for a watched CPU, then its number; `all` on the summary row.
fn cpu_cell(ctx: &Ctx<'_>, cpu: u32, w: usize) -> Vec<Span<'static>> {
    if cpu == ALL {
        return vec![Span::styled(format!(" {}", right("all", w)), ctx.t.title())];
    }
    let watched = ctx.s.is_watched(cpu);
    vec![
        Span::styled(if watched { "▸" } else { " " }, ctx.t.watched()),
        Span::styled(
            right(&cpu.to_string(), w),
            if watched {
                ctx.t.watched()
            } else {
                ctx.t.text()
            },
        ),
    ]
}

/// The noise column: what disturbed the CPU — the labels of its findings
/// of WARN and up, then the causes of its verdict — coloured by severity;
/// blank for a quiet CPU ("quiet" on a watched one), `·` when unknown
/// (the screen's one glyph for it; `u` says why).
/// Machine-wide settings stay out of the rows: a blank cell means quiet.
fn noise(ctx: &Ctx<'_>, cpu: u32, w: usize) -> Vec<Span<'static>> {
    let mut labels: Vec<(String, Style)> = ctx
        .s
        .tags_of(cpu)
        .filter(|f| f.severity >= Severity::Warn)
        .map(|f| (f.label.clone(), ctx.t.severity(f.severity)))
        .collect();
    // a watched CPU names its owner first: the task the verdict takes for
    // the benchmark, which a stray busy loop may have become
    let owner = owner_label(ctx.s, cpu);
    let owned = owner.is_some();
    if let Some(o) = owner {
        labels.insert(0, (o, ctx.t.dim()));
    }
    let verdict = ctx.s.cpu_verdict(cpu);
    if let Some(v) = verdict {
        for c in &v.causes {
            if !labels.iter().any(|(l, _)| *l == c.label) && labels.len() < 4 {
                labels.push((c.label.clone(), ctx.t.severity(Severity::Warn)));
            }
        }
    }
    // an unwatched CPU has no owner, but the task that ran longest there
    // is who keeps it busy: named after its noise, where it took a
    // noticeable share (counted in the kernel on every CPU)
    if !ctx.s.is_watched(cpu)
        && labels.len() < 4
        && let Some((named, by_pid)) = top_runner(ctx.s, cpu)
    {
        let fits = named.chars().count() <= w;
        labels.push((if fits { named } else { by_pid }, ctx.t.dim()));
    }
    // the owner's name is context, and the noise beside it is why the
    // row matters: where both do not fit, the owner goes by its pid
    // (`owner pid 30533`; the detail names it), and only where even that
    // would push the first noise out does the noise keep the cell alone
    let fits = |a: &str, b: &str| a.chars().count() + 3 + b.chars().count() <= w;
    // the first noise may end early at a word (`rustc[16073]…`): its first
    // word and the mark must fit
    let first_word = |b: &str| format!("{}{}", b.split(' ').next().unwrap_or(b), CUT);
    let owned = match labels.get(..2) {
        Some([o, first]) if owned && !fits(&o.0, &first.0) => {
            let short = owner_of(ctx.s, cpu).map(|o| format!("owner pid {}", o.pid));
            let short = short.filter(|sh| fits(sh, &first.0) || fits(sh, &first_word(&first.0)));
            if let Some(sh) = short {
                labels[0].0 = sh;
                true
            } else {
                labels.remove(0);
                false
            }
        }
        _ => owned,
    };
    let mut out = Vec::new();
    let mut used = 0;
    let mut shown = 0;
    for (label, style) in labels {
        let sep = usize::from(!out.is_empty()) * 3;
        let n = label.chars().count();
        if used + sep + n > w {
            // beside the owner, the first noise keeps its words that fit
            let room = w.saturating_sub(used + sep);
            let cut = crate::tui::fit::clip(Line::from(label.clone()), room).to_string();
            let kept = cut.trim_end_matches(CUT);
            let at_word = !kept.is_empty() && label[kept.len()..].starts_with(' ');
            if owned && shown == 1 && at_word {
                out.push(Span::styled(" · ", ctx.t.dim()));
                out.push(Span::styled(cut, style));
                shown += 1;
            }
            break;
        }
        if sep > 0 {
            out.push(Span::styled(" · ", ctx.t.dim()));
        }
        out.push(Span::styled(label, style));
        used += sep + n;
        shown += 1;
    }
    if out.is_empty()
        && ctx.s.one_instant()
        && let Some(khz) = ctx
            .s
            .judged()
            .machine()
            .cpufreq
            .iter()
            .find(|f| f.cpu == cpu)
            .and_then(|f| f.cur_khz)
    {
        // one read has no rate, but the kernel's last word on the clock
        out.push(Span::styled(
            fmt::left(&format!("cur {} MHz", khz / 1000), w),
            ctx.t.dim(),
        ));
        // the clock fills the cell: no verdict mark after it
        return out;
    }
    if shown == usize::from(owned) {
        let state = match verdict.map(|v| v.state) {
            Some(VerdictState::Quiet) if ctx.s.is_watched(cpu) => {
                Some(Span::styled("quiet", ctx.t.good()))
            }
            Some(VerdictState::Unknown) => Some(Span::styled(fmt::UNKNOWN, ctx.t.dim())),
            _ => None,
        };
        if let Some(st) = state {
            if !out.is_empty() {
                out.push(Span::styled(" · ", ctx.t.dim()));
            }
            out.push(st);
        }
    }
    out
}

fn num(v: &str, w: usize, t: Theme, zero_dim: bool) -> Span<'static> {
    let style = if v == fmt::UNKNOWN || (zero_dim && (v == "0.0" || v == "0")) {
        t.dim()
    } else {
        t.text()
    };
    Span::styled(right(v, w), style)
}

fn wide_row(ctx: &Ctx<'_>, cpu: u32, r: Option<&CpuRates>, w: usize) -> Line<'static> {
    let t = ctx.t;
    let topo = ctx.s.judged().machine().topo(cpu);
    let (fb, cb, nw) = split_for(ctx, w, wide_fixed(ctx.s), 12, 8);
    let core = match topo.and_then(|x| x.core) {
        _ if cpu == ALL => String::new(),
        Some(c) => c.to_string(),
        None => fmt::UNKNOWN.into(),
    };
    // a known sibling list holding only this CPU means no SMT sibling
    let sib = match topo.map(|x| &x.siblings) {
        _ if cpu == ALL => String::new(),
        Some(l) if !l.is_empty() => l
            .iter()
            .find(|s| **s != cpu)
            .map_or_else(|| fmt::NONE.into(), u32::to_string),
        _ => fmt::UNKNOWN.into(),
    };
    let h = ctx.s.judged().history().cpu(cpu);
    let minmax = match h.and_then(|h| Some((h.min_bzy?, h.max_bzy?))) {
        Some((lo, hi)) => format!("{lo:.0}–{hi:.0}"),
        None => fmt::UNKNOWN.into(),
    };
    let f = |g: fn(&CpuRates) -> Option<f64>| r.and_then(g);
    let mut spans = cpu_cell(ctx, cpu, 4);
    spans.extend([
        Span::raw(format!(" {} {}", right(&core, 4), right(&sib, 4))),
        Span::styled(" │ ", t.dim()),
    ]);
    spans.extend(bars::freq(r, ctx.scale, fb, t));
    spans.push(Span::styled(" │ ", t.dim()));
    spans.extend([
        num(&fmt::whole(f(|r| r.avg_mhz)), 5, t, false),
        num(&fmt::whole(f(|r| r.bzy_mhz)), 6, t, false),
        num(&minmax, 10, t, false),
        num(&fmt::pct(f(|r| r.busy_pct), 0), 5, t, false),
        Span::styled(" │ ", t.dim()),
    ]);
    spans.extend(bars::cstates(r, cb, t));
    spans.push(num(&bars::exit_latency(r), 9, t, false));
    spans.push(Span::styled(" │ ", t.dim()));
    for c in ctx
        .s
        .nav()
        .columns()
        .iter()
        .filter_map(|i| crate::tui::columns::columns().get(*i))
    {
        let v = if cpu == ALL {
            c.summary(&ctx.listed)
        } else {
            c.value(r)
        };
        spans.push(num(&v, c.width, t, true));
    }
    spans.extend([
        Span::styled(" │ ", t.dim()),
        num(&fmt::whole(f(|r| r.temp_c)), 3, t, false),
        Span::styled(" │ ", t.dim()),
    ]);
    spans.extend(noise(ctx, cpu, nw));
    Line::from(spans)
}

fn compact_row(ctx: &Ctx<'_>, cpu: u32, r: Option<&CpuRates>, w: usize) -> Line<'static> {
    let t = ctx.t;
    let (fb, cb, nw) = split_for(ctx, w, COMPACT_FIXED, 10, 6);
    let f = |g: fn(&CpuRates) -> Option<f64>| r.and_then(g);
    let mut spans = cpu_cell(ctx, cpu, 4);
    spans.push(Span::raw(" "));
    spans.extend(bars::freq(r, ctx.scale, fb, t));
    spans.extend([
        num(&fmt::whole(f(|r| r.avg_mhz)), 5, t, false),
        num(&fmt::pct(f(|r| r.busy_pct), 0), 5, t, false),
        Span::raw(" "),
    ]);
    spans.extend(bars::cstates(r, cb, t));
    spans.extend([
        num(&fmt::rate(f(|r| r.irq_per_s)), 6, t, true),
        num(&fmt::rate(f(|r| r.csw_per_s)), 6, t, true),
        Span::raw(" "),
    ]);
    spans.extend(noise(ctx, cpu, nw));
    Line::from(spans)
}

/// Package rows under the CPUs when they fit: power per domain, package
/// C-states, temperature.
fn packages(ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) {
    let t = ctx.t;
    let Some(iv) = ctx.s.judged().latest() else {
        return;
    };
    for (i, p) in iv.pkgs.iter().enumerate().take(area.height as usize) {
        // turbostat's order: temperature, package C-states, then power;
        // on a narrow screen the power domains are what gives way
        let mut spans = vec![
            Span::styled(format!(" pkg {:<3}", p.package), t.title()),
            Span::styled(" │ ", t.dim()),
            Span::raw(format!("{} °C", fmt::whole(p.temp_c))),
            Span::styled(" │ ", t.dim()),
        ];
        let cst: Vec<String> = p
            .cstates
            .iter()
            .map(|(n, v)| format!("{n} {} %", fmt::pct(*v, 0)))
            .collect();
        spans.push(Span::raw(if cst.is_empty() {
            "package C-states ·".to_string()
        } else {
            cst.join("  ")
        }));
        spans.push(Span::styled(" │ ", t.dim()));
        let watts: Vec<String> = p
            .watts
            .iter()
            .map(|(d, w)| format!("{d} {} W", fmt::pct(*w, 1)))
            .collect();
        spans.push(Span::raw(if watts.is_empty() {
            "power ·".to_string()
        } else {
            watts.join("  ")
        }));
        put(
            buf,
            area.x,
            area.y + i as u16,
            &Line::from(spans),
            area.width,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_uses_two_compact_columns_only_when_the_cpus_do_not_fit() {
        // 8 CPUs on 160 columns: one column of wide rows
        assert_eq!(
            Geometry::of(36, 160, 8),
            Geometry {
                wide: true,
                columns: 1,
                rows: 36
            }
        );
        // 64 CPUs on 160 columns: every column, one set, scrolling
        let g = Geometry::of(36, 160, 64);
        assert_eq!((g.wide, g.columns, g.slots()), (true, 1, 36));
        // 96 CPUs on 240 columns: still one set of every column
        let g = Geometry::of(54, 240, 96);
        assert_eq!((g.wide, g.columns), (true, 1));
        // two wide sets only where both fit whole
        let g = Geometry::of(54, 310, 96);
        assert_eq!((g.wide, g.columns, g.slots()), (true, 2, 108));
        // 64 CPUs on 146 columns: two compact columns, 72 slots
        let g = Geometry::of(36, 146, 64);
        assert_eq!((g.wide, g.columns, g.slots()), (false, 2, 72));
        // 80 columns: compact, one column, scrolling
        assert_eq!(
            Geometry::of(16, 80, 256),
            Geometry {
                wide: false,
                columns: 1,
                rows: 16
            }
        );
    }

    #[test]
    fn bar_widths_grow_with_the_row() {
        // the first seven optional columns shown
        let fixed = WIDE_BASE + crate::tui::columns::width(&[0, 1, 2, 3, 4, 5, 6]);
        assert_eq!(fixed, 110);
        assert_eq!(split(158, fixed, 12, 8), (19, 12, 17));
        assert_eq!(split(78, COMPACT_FIXED, 10, 6), (19, 12, 17));
        // too narrow: the bars keep their minimum, the noise column gives way
        assert_eq!(split(35, COMPACT_FIXED, 10, 6), (10, 6, 0));
    }
}
