//! The detail view of the selected CPU: where it sits, its history over
//! the last minutes (`Avg_MHz`, Busy %, the C-state mix, IRQ/s, CSW/s) and,
//! on wide screens, every current figure and its busiest interrupt sources.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Sparkline, Widget};

use crate::model::interval::CpuRates;
use crate::tui::bars::SHADES;
use crate::tui::fit::{ALWAYS, Piece, fit, put, put_str};
use crate::tui::fmt::{self, left, right};
use crate::tui::history::{CpuHistory, Series};
use crate::tui::state::State;

/// Narrowest figures panel (on screens from 120 columns); it takes a
/// third of wider ones, up to [`PANEL_MAX`], so that a task's name and
/// the owner's fit whole.
const PANEL_W: u16 = 44;
/// Widest figures panel.
const PANEL_MAX: u16 = 60;
/// Columns of a figure's value, right-aligned at the panel's end.
const VALUE_W: u16 = 10;

/// Draws the detail view.
pub fn render(s: &State, area: Rect, buf: &mut Buffer) {
    let t = s.theme();
    let Some(cpu) = s.nav().selected() else {
        return;
    };
    put(
        buf,
        area.x,
        area.y,
        &title(s, cpu, area.width.into()),
        area.width,
    );
    let body = Rect::new(
        area.x,
        area.y + 1,
        area.width,
        area.height.saturating_sub(1),
    );
    let (charts, panel) = if area.width >= 120 {
        let [c, p] = body.layout(&Layout::horizontal([
            Constraint::Fill(1),
            Constraint::Length((area.width / 3).clamp(PANEL_W, PANEL_MAX)),
        ]));
        (c, Some(p))
    } else {
        (body, None)
    };
    match s.judged().history().cpu(cpu) {
        Some(h) if !h.avg.is_empty() => render_charts(s, h, charts, buf),
        _ => put_str(
            buf,
            charts.x + 1,
            charts.y,
            "no history yet",
            t.dim(),
            charts.width.saturating_sub(1),
        ),
    }
    if let Some(p) = panel {
        render_panel(s, cpu, p, buf);
    }
}

fn title(s: &State, cpu: u32, room: usize) -> Line<'static> {
    let t = s.theme();
    let topo = s.judged().machine().topo(cpu);
    // whole pieces: on a narrow screen the topology's far ends go first
    let mut pieces = vec![Piece::new(format!("CPU {cpu}"), t.title(), ALWAYS)];
    if let Some(x) = topo {
        let opt = |v: Option<u32>| v.map_or_else(|| fmt::UNKNOWN.into(), |v| v.to_string());
        pieces.push(Piece::new(format!("core {}", opt(x.core)), t.title(), 6));
        let sibs: Vec<u32> = x.siblings.iter().copied().filter(|c| *c != cpu).collect();
        pieces.push(Piece::or_short(
            format!("SMT sibling {}", fmt::cpus(&sibs)),
            format!("sibling {}", fmt::cpus(&sibs)),
            t.title(),
            5,
        ));
        pieces.push(Piece::new(
            format!("package {}", opt(x.package)),
            t.title(),
            3,
        ));
        pieces.push(Piece::new(format!("node {}", opt(x.node)), t.title(), 2));
        if let Some(k) = &x.core_type {
            pieces.push(Piece::new(format!("{k}-core"), t.title(), 4));
        }
    }
    if s.is_watched(cpu) {
        pieces.push(Piece::new("watched", t.watched(), 7));
    }
    pieces.push(Piece::or_short(
        "(⏎ or esc: back)",
        "(esc: back)",
        t.dim(),
        1,
    ));
    fit(" ", pieces, &Span::styled(" · ", t.title()), room)
}

/// Maps the last `n` values to sparkline bars scaled so `max` is full.
fn bars(series: &Series, n: usize, scale: f64) -> Vec<Option<u64>> {
    series
        .last(n)
        .map(|v| v.map(|x| (f64::from(x).max(0.0) * 1000.0 / scale.max(1e-9)).round() as u64))
        .collect()
}

/// The time axis under the charts: the age of the oldest sample drawn at
/// its column, the midpoint, and `now` at the newest; `n` samples of
/// `dt` seconds each, one column apiece.
pub fn time_axis(n: usize, dt: f64, width: usize) -> String {
    let n = n.min(width);
    if n < 2 {
        return String::new();
    }
    let mut cells: Vec<char> = "─".repeat(n).chars().collect();
    let mut label = |at: usize, text: &str| {
        for (i, c) in text.chars().enumerate() {
            if let Some(x) = cells.get_mut(at + i) {
                *x = c;
            }
        }
    };
    let age = |cols: usize| format!("-{} ", fmt::seconds(cols as f64 * dt).replace(".0 s", " s"));
    let oldest = age(n - 1);
    let mid = age((n - 1) / 2);
    // a label is whole or not there: a few samples get the rule alone
    if oldest.chars().count() > n {
        return cells.into_iter().collect();
    }
    label(0, &oldest);
    // the midpoint label only where it clears both ends
    let mid_at = n / 2 - mid.chars().count().min(n / 2) / 2;
    if mid_at > oldest.chars().count() + 1 && mid_at + mid.chars().count() + 5 < n {
        label(mid_at, &mid);
    }
    if n >= oldest.chars().count() + 5 {
        label(n - 4, " now");
    }
    cells.into_iter().collect()
}

/// The history box under a view that leaves room (as btop puts a graph
/// under its process list): the selected CPU's charts across the width,
/// in a box that names the CPU.
pub fn render_history_box(s: &State, area: Rect, buf: &mut Buffer) {
    let t = s.theme();
    let Some(cpu) = s.nav().selected() else {
        return;
    };
    let watched = if s.is_watched(cpu) { " · watched" } else { "" };
    let block = Block::bordered()
        .title(Span::styled(
            format!(" CPU {cpu} history{watched} "),
            t.title(),
        ))
        .title_bottom(Line::styled(" ⏎: its detail ", t.dim()).right_aligned())
        .border_style(t.dim());
    let inner = block.inner(area);
    block.render(area, buf);
    match s.judged().history().cpu(cpu) {
        Some(h) if !h.avg.is_empty() => render_charts(s, h, inner, buf),
        _ => put_str(
            buf,
            inner.x + 1,
            inner.y,
            "no history yet",
            t.dim(),
            inner.width.saturating_sub(1),
        ),
    }
}

fn render_charts(s: &State, h: &CpuHistory, area: Rect, buf: &mut Buffer) {
    let t = s.theme();
    // the last row is the time axis shared by the five charts
    let dt = s
        .judged()
        .latest()
        .as_ref()
        .map_or(s.pacing().interval().as_secs_f64(), |iv| iv.dt_s);
    let axis = time_axis(h.avg.len(), dt, area.width as usize);
    let area = if area.height > 5 && !axis.is_empty() {
        put_str(
            buf,
            area.x,
            area.y + area.height - 1,
            axis,
            t.dim(),
            area.width,
        );
        Rect::new(area.x, area.y, area.width, area.height - 1)
    } else {
        area
    };
    let [freq, busy, cst, irq, csw] = area.layout(&Layout::vertical([Constraint::Fill(1); 5]));
    let w = area.width as usize;
    let max_mhz = s
        .judged()
        .machine()
        .max_mhz
        .or(s.judged().history().max_bzy)
        .unwrap_or(1.0);
    let last = |x: &Series| x.last(1).next().flatten().map(f64::from);
    let range = match (h.min_bzy, h.max_bzy) {
        (Some(lo), Some(hi)) => format!("session {lo:.0}–{hi:.0}"),
        _ => String::new(),
    };
    let f_label = format!(
        "Avg_MHz {}  Bzy_MHz {}  {range}  (scale 0–{max_mhz:.0} MHz)",
        fmt::whole(last(&h.avg)),
        fmt::whole(last(&h.bzy))
    );
    chart(
        buf,
        freq,
        &f_label,
        &bars(&h.avg, w, max_mhz),
        t.freq(
            last(&h.bzy),
            s.judged().machine().base_mhz.as_ref().map(|b| b.0),
        ),
        s,
    );
    chart(
        buf,
        busy,
        &format!("Busy {} %", fmt::pct(last(&h.busy), 1)),
        &bars(&h.busy, w, 100.0),
        t.cstate(0),
        s,
    );
    cstate_mix(s, h, cst, buf);
    let irq_max = f64::from(h.irq.max_of_last(w).unwrap_or(1.0)).max(1.0);
    let i_label = format!(
        "IRQ/s {}  (device {}, LOC {})  scale 0–{}/s",
        fmt::rate(last(&h.irq)),
        fmt::rate(last(&h.dev)),
        fmt::rate(last(&h.loc)),
        fmt::rate(Some(irq_max))
    );
    chart(buf, irq, &i_label, &bars(&h.irq, w, irq_max), t.warn(), s);
    let csw_max = f64::from(h.csw.max_of_last(w).unwrap_or(1.0)).max(1.0);
    let c_label = format!(
        "CSW/s {}  scale 0–{}/s",
        fmt::rate(last(&h.csw)),
        fmt::rate(Some(csw_max))
    );
    chart(buf, csw, &c_label, &bars(&h.csw, w, csw_max), t.text(), s);
}

/// A label line over a sparkline; unknown samples show as `·`.
fn chart(buf: &mut Buffer, area: Rect, label: &str, data: &[Option<u64>], style: Style, s: &State) {
    if area.height == 0 {
        return;
    }
    put_str(
        buf,
        area.x + 1,
        area.y,
        label,
        s.theme().title(),
        area.width.saturating_sub(1),
    );
    if area.height < 2 {
        return;
    }
    let spark = Rect::new(area.x, area.y + 1, area.width, area.height - 1);
    Sparkline::default()
        .data(data.iter().copied())
        .max(1000)
        .style(style)
        .absent_value_symbol(fmt::UNKNOWN)
        .absent_value_style(s.theme().dim())
        .render(spark, buf);
}

/// The C-state mix over time: one column per sample, C0 at the bottom,
/// deeper states above, each share of the column's height.
fn cstate_mix(s: &State, h: &CpuHistory, area: Rect, buf: &mut Buffer) {
    let t = s.theme();
    if area.height == 0 {
        return;
    }
    let names: Vec<(String, bool)> = s
        .judged()
        .latest()
        .as_ref()
        .and_then(|iv| iv.cpu(s.nav().selected()?))
        .map(|r| {
            r.idle
                .iter()
                .map(|i| (i.name.to_string(), i.disabled == Some(true)))
                .collect()
        })
        .unwrap_or_default();
    let mut label = vec![Span::styled(" C-state mix  ", t.title())];
    label.extend(crate::tui::bars::legend(&names, t));
    put(buf, area.x, area.y, &Line::from(label), area.width);
    let rows = area.height.saturating_sub(1) as usize;
    let w = area.width as usize;
    let busy: Vec<Option<f32>> = h.busy.last(w).collect();
    let idle: Vec<Vec<Option<f32>>> = h.idle.iter().map(|x| x.last(w).collect()).collect();
    let x0 = area.x;
    for (i, b) in busy.iter().enumerate() {
        let mut shares = vec![*b];
        shares.extend(idle.iter().map(|col| col.get(i).copied().flatten()));
        let mut sum = 0.0f64;
        let mut from = 0usize;
        for (k, p) in shares.iter().enumerate() {
            sum += f64::from(p.unwrap_or(0.0).max(0.0));
            let to = ((sum / 100.0).min(1.0) * rows as f64).round() as usize;
            for y in from..to {
                let cy = area.y + area.height - 1 - y as u16;
                buf.set_string(
                    x0 + i as u16,
                    cy,
                    SHADES[k.min(SHADES.len() - 1)].to_string(),
                    t.cstate(k),
                );
            }
            from = from.max(to);
        }
    }
}

/// The current figures of the CPU and its busiest interrupt sources.
fn render_panel(s: &State, cpu: u32, area: Rect, buf: &mut Buffer) {
    let t = s.theme();
    let Some(r) = s.rates(cpu) else { return };
    let mut lines: Vec<(String, String)> = figures(r);
    if let Some(iv) = s.judged().latest()
        && let Some(col) = iv.cpus.iter().position(|c| c.cpu == cpu)
    {
        {
            let mut src: Vec<(String, f64)> = iv
                .irqs
                .iter()
                .chain(&iv.softirqs)
                .filter_map(|x| {
                    let v = x.per_cpu.get(col).copied().flatten()?;
                    (v > 0.0).then(|| (source_name(&x.label, &x.desc), v))
                })
                .collect();
            src.sort_by(|a, b| b.1.total_cmp(&a.1));
            lines.push((String::new(), String::new()));
            lines.push(("busiest sources".into(), "/s".into()));
            lines.extend(
                src.into_iter()
                    .take(8)
                    .map(|(n, v)| (n, fmt::rate(Some(v)))),
            );
        }
    }
    // who ran: on a traced CPU other tasks and interrupts by the time they
    // took over the interval; on any other, the tasks sampled from /proc
    if let Some(tc) = s.judged().trace().and_then(|t| t.shown(cpu)) {
        let ms = |ns: u64| format!("{:.2}", ns as f64 / 1e6);
        lines.push((String::new(), String::new()));
        // an unwatched CPU has no owner: its longest runner is named as
        // such, and no verdict takes the others for intruders
        let watched = s.is_watched(cpu);
        let owner = match (&tc.owner, watched) {
            (Some(o), true) => format!("owner {}[{}]", o.comm, o.pid),
            (Some(o), false) => format!("longest {}[{}]", o.comm, o.pid),
            (None, _) => "owner unknown".into(),
        };
        let how = match (tc.sampled, watched) {
            (true, _) => "who ran (sampled)",
            (false, true) => "who ran",
            (false, false) => "who ran (not watched)",
        };
        // the owner on its own line: beside the heading it was cut
        lines.push((how.into(), "ms".into()));
        lines.push((owner, String::new()));
        for (k, i) in tc
            .intruders
            .iter()
            .take(crate::tui::state::WHO_RAN_ROWS)
            .enumerate()
        {
            let mark = if k == s.nav().task_at() { "▸" } else { " " };
            // its cgroup as an operator knows it, where it is not the root
            let from = crate::collect::cgroup_name::shown(i.task.cgroup.as_deref())
                .map_or_else(String::new, |name| format!(" · {name}"));
            lines.push((
                format!("{mark}{}[{}] ×{}{from}", i.task.comm, i.task.pid, i.slices),
                ms(i.ns),
            ));
        }
        if !tc.intruders.is_empty() {
            lines.push(("t next task · o make it the owner".into(), String::new()));
        }
        // the probe's wake-ups were asked for: its own line, not an intruder
        if let Some(p) = s.judged().trace().and_then(|t| t.probed(cpu)) {
            lines.push((
                format!(
                    "{} (not noise) ×{}",
                    crate::noise::traced::PROBE_LABEL,
                    p.slices
                ),
                ms(p.ns),
            ));
        }
        for x in tc.stolen.iter().take(5) {
            lines.push((format!("{} {} ×{}", x.kind, x.name, x.count), ms(x.ns)));
        }
        if tc.intruders.is_empty() && tc.stolen.is_empty() {
            lines.push(("nothing else ran".into(), String::new()));
        }
        if let Some(k) = &tc.kernel {
            lines.extend(runq_lines(&k.runq));
        }
    }
    if let Some(p) = s.judged().probe() {
        lines.extend(probe_lines(p, cpu));
    }
    // the names take what the values leave (a space each side)
    let key_w = area.width.saturating_sub(VALUE_W + 2);
    for (i, (k, v)) in lines.iter().take(area.height as usize).enumerate() {
        let y = area.y + i as u16;
        buf.set_string(area.x + 1, y, left(k, key_w.into()), t.dim());
        buf.set_string(area.x + 1 + key_w, y, right(v, VALUE_W.into()), t.text());
    }
}

/// Run-queue waits in the interval: how many, p50 / p99 / max, and their
/// shape by powers of two from 1 µs (and below) to 1 s (and past).
pub fn runq_lines(r: &crate::trace::in_kernel::RunqDelay) -> Vec<(String, String)> {
    use crate::probe::sinks::fmt_us;
    let mut v = vec![
        (String::new(), String::new()),
        (
            format!("run-queue wait ×{} · p50 / p99 / max", r.waits),
            "µs".into(),
        ),
    ];
    if let (Some(p50), Some(p99)) = (r.quantile(0.5), r.quantile(0.99)) {
        let us = |ns: u64| fmt_us(ns as f64 / 1e3);
        v.push((
            format!("≤1µs {} ≥1s", spark(&r.by_power(10, 30))),
            format!("{} / {} / {}", us(p50), us(p99), us(r.max_ns)),
        ));
    }
    v
}

/// One cell per count, scaled to the largest (` ` for none).
fn spark(counts: &[u64]) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let top = counts.iter().copied().max().unwrap_or(0).max(1);
    counts
        .iter()
        .map(|&n| {
            if n == 0 {
                ' '
            } else {
                BARS[((n * 7).div_ceil(top)) as usize]
            }
        })
        .collect()
}

/// The last probe's figures of `cpu`: p50 and p99 per kind and state, and
/// the context switch; nothing when the probe did not measure it.
pub fn probe_lines(p: &crate::probe::ProbeReport, cpu: u32) -> Vec<(String, String)> {
    use crate::probe::sinks::fmt_us;
    let rows: Vec<_> = p.rows.iter().filter(|r| r.cpu == cpu).collect();
    let ctx = p.ctx.iter().find(|c| c.cpu == cpu);
    if rows.is_empty() && ctx.is_none() {
        return Vec::new();
    }
    let mut v = vec![
        (String::new(), String::new()),
        ("last probe · p50 / p99".into(), "µs".into()),
    ];
    for r in rows {
        v.push((
            format!("{} {} ×{}", r.kind.name(), r.state, r.count),
            format!("{} / {}", fmt_us(r.p50_us), fmt_us(r.p99_us)),
        ));
    }
    if let Some(c) = ctx {
        v.push(("context switch".into(), fmt_us(c.switch_us)));
    }
    v
}

/// `36 virtio1-req.0` for a device row, `LOC Local timer interrupts` for
/// a named one, `RCU` for a softirq.
fn source_name(label: &str, desc: &str) -> String {
    if label.bytes().all(|b| b.is_ascii_digit()) {
        format!("{label} {}", desc.split_whitespace().last().unwrap_or(""))
    } else if desc.is_empty() {
        label.to_string()
    } else {
        format!("{label} {desc}")
    }
}

fn figures(r: &CpuRates) -> Vec<(String, String)> {
    let mut v = vec![
        ("Avg_MHz".to_string(), fmt::whole(r.avg_mhz)),
        ("Bzy_MHz".into(), fmt::whole(r.bzy_mhz)),
        ("TSC_MHz".into(), fmt::whole(r.tsc_mhz)),
        ("Busy %".into(), fmt::pct(r.busy_pct, 1)),
        ("IRQ/s".into(), fmt::rate(r.irq_per_s)),
        ("  device".into(), fmt::rate(r.dev_per_s)),
        ("  LOC (timer)".into(), fmt::rate(r.loc_per_s)),
        (
            "  RES CAL TLB".into(),
            format!(
                "{} {} {}",
                fmt::rate(r.res_per_s),
                fmt::rate(r.cal_per_s),
                fmt::rate(r.tlb_per_s)
            ),
        ),
        ("softirq/s".into(), fmt::rate(r.softirq_per_s)),
        (
            "CSW/s  MIG/s".into(),
            format!("{} {}", fmt::rate(r.csw_per_s), fmt::rate(r.mig_per_s)),
        ),
        ("steal %".into(), fmt::pct(r.time.and_then(|x| x.steal), 1)),
        (
            "SMI".into(),
            r.smi.map_or_else(|| fmt::UNKNOWN.into(), |x| x.to_string()),
        ),
        ("°C".into(), fmt::whole(r.temp_c)),
        (
            "throttle events".into(),
            r.throttle
                .map_or_else(|| fmt::UNKNOWN.into(), |x| x.to_string()),
        ),
    ];
    // the optional columns the Cores view leaves out unless asked for
    v.extend(
        crate::tui::columns::columns()
            .iter()
            .filter(|c| !c.by_default)
            .map(|c| (c.name.to_string(), c.value(Some(r)))),
    );
    for st in r.idle.iter() {
        let lat = st
            .latency_us
            .map_or_else(|| fmt::UNKNOWN.into(), |l| l.to_string());
        v.push((
            format!("{} ({lat} µs) %  /s", st.name),
            format!("{} {}", fmt::pct(st.pct, 1), fmt::rate(st.per_s)),
        ));
    }
    v
}

#[cfg(test)]
mod axis_tests {
    use super::time_axis;

    #[test]
    fn the_time_axis_ages_the_oldest_column_and_ends_now() {
        // 61 samples a second apart: the oldest is 60 s old
        let a = time_axis(61, 1.0, 78);
        assert_eq!(a.chars().count(), 61);
        assert!(a.starts_with("-60 s "), "{a}");
        assert!(a.ends_with(" now"), "{a}");
        assert!(a.contains("-30 s"), "{a}");
        // more samples than columns: the width decides, 0.5 s each
        let a = time_axis(500, 0.5, 40);
        assert_eq!(a.chars().count(), 40);
        assert!(a.starts_with("-19.5 s "), "{a}");
        assert_eq!(time_axis(1, 1.0, 80), "", "one sample has no time span");
        // three samples: "-2 s " does not fit three columns, and is not cut
        assert_eq!(time_axis(3, 1.0, 80), "───");
    }
}

#[cfg(test)]
mod probe_tests {
    use super::probe_lines;

    #[test]
    fn the_detail_shows_the_last_probe_of_its_cpu_only() {
        let back = crate::probe::sinks::example::example_report();
        assert_eq!(
            probe_lines(&back, 1),
            vec![
                (String::new(), String::new()),
                ("last probe · p50 / p99".to_string(), "µs".to_string()),
                (
                    "timer haltpoll idle ×3".to_string(),
                    "30.0 / 31.0".to_string()
                ),
                ("context switch".to_string(), "2.5".to_string()),
            ]
        );
        assert!(probe_lines(&back, 0).is_empty());
    }
}
