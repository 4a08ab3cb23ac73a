//! Pop-ups over the screen: the help (every key from the key table, the
//! legend and a glossary of the columns), the list of metrics with their
//! source or why they are unavailable, and one finding in full.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget, Wrap};

use crate::tui::bars::{BASE_MARK, SHADES};
use crate::tui::fmt::{self, left};
use crate::tui::keys::BINDINGS;
use crate::tui::state::{Overlay, State};

/// A rectangle of at most `w`×`h` centred in `area`.
fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let [row] =
        area.layout(&Layout::vertical([Constraint::Length(h.min(area.height))]).flex(Flex::Center));
    let [cell] =
        row.layout(&Layout::horizontal([Constraint::Length(w.min(area.width))]).flex(Flex::Center));
    cell
}

/// The width a popup asking for `width` takes in `area`: a margin of a
/// column or two would leave stray pieces of the screen behind on each
/// side, so such a popup takes the whole width.
fn width_in(area: Rect, width: u16) -> u16 {
    if area.width <= width.saturating_add(6) {
        area.width
    } else {
        width
    }
}

/// The rows `lines` take wrapped in a popup `width` wide, and the popup's
/// place in `area`.
fn frame_of(lines: &[Line<'_>], area: Rect, width: u16) -> (usize, Rect) {
    let width = width_in(area, width);
    let inner_w = usize::from(width.min(area.width).saturating_sub(2)).max(1);
    let rows: usize = lines
        .iter()
        .map(|l| l.width().div_ceil(inner_w).max(1))
        .sum();
    (rows, centered(area, width, rows as u16 + 2))
}

/// Shows `lines` from line `scroll` on; when they do not all fit, the
/// bottom border says which rows show.
fn show_from(
    title: &str,
    lines: Vec<Line<'static>>,
    area: Rect,
    width: u16,
    scroll: u16,
    buf: &mut Buffer,
    s: &State,
) {
    let (rows, r) = frame_of(&lines, area, width);
    let fit = r.height.saturating_sub(2);
    let scroll = if rows as u16 > fit { scroll } else { 0 };
    let scroll = scroll.min((rows as u16).saturating_sub(fit));
    Clear.render(r, buf);
    let mut block = Block::bordered().title(Span::styled(format!(" {title} "), s.theme().title()));
    if rows as u16 > fit {
        let last = (scroll + fit).min(rows as u16);
        block = block.title_bottom(
            Line::styled(
                format!(" rows {}–{last} of {rows} · ↑↓ scroll ", scroll + 1),
                s.theme().dim(),
            )
            .right_aligned(),
        );
    }
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .scroll((scroll, 0))
        .block(block)
        .render(r, buf);
}

/// The glossary of columns: name, what it is, formula, source.
pub const GLOSSARY: &[(&str, &str)] = &[
    (
        "Avg",
        "average clock over the interval, MHz: ΔAPERF/Δt (MSR or perf msr PMU); without APERF Bzy·Busy/100",
    ),
    (
        "Bzy",
        "clock while busy, MHz: base·ΔAPERF/ΔMPERF; without APERF cpufreq scaling_cur_freq, else /proc/cpuinfo MHz",
    ),
    ("min–max", "lowest and highest Bzy seen this session, MHz"),
    (
        "Busy, Bsy%",
        "time not idle, %: 100·ΔMPERF/ΔTSC; /proc/stat non-idle share without MPERF",
    ),
    (
        "C-states",
        "time in C0 then each idle state, %: Δtime of /sys/…/cpuidle/stateN over Δt (C0 = Busy)",
    ),
    (
        "exit µs",
        "exit latency of the shallowest/deepest idle state used (≥ 0.5 %), µs: cpuidle stateN/latency",
    ),
    (
        "res %",
        "C-states view: residency of the state, % of the interval (cpuidle stateN/time)",
    ),
    (
        "entries/s",
        "C-states view: entries into the state per second (cpuidle stateN/usage)",
    ),
    (
        "stay µs",
        "C-states view: average stay per entry = time in state / entries, µs",
    ),
    (
        "above/below",
        "entries per second whose stay was shorter/longer than the state's target (cpuidle above, below)",
    ),
    (
        "IRQ/s",
        "every interrupt on the CPU per second: sum of its /proc/interrupts column",
    ),
    (
        "LOC/s",
        "local timer interrupts per second (/proc/interrupts LOC, arch_timer on arm64)",
    ),
    (
        "CSW/s",
        "context switches per second (perf software counter context-switches)",
    ),
    (
        "MIG/s",
        "task migrations per second (perf software counter cpu-migrations)",
    ),
    (
        "SIRQ",
        "softirqs per second: sum of the CPU's /proc/softirqs column",
    ),
    (
        "stl%",
        "time stolen by the hypervisor, %: Δsteal/Δtotal of /proc/stat",
    ),
    (
        "IPC",
        "instructions per cycle: Δinstructions/Δcycles (perf hardware events instructions, cycles); summary ΣΔinstructions/ΣΔcycles; · without a hardware PMU (VMs)",
    ),
    (
        "°C",
        "core temperature (hwmon coretemp/k10temp, else IA32_THERM_STATUS)",
    ),
    (
        "cur",
        "one instant (no rates): the kernel's current clock, MHz: cpufreq scaling_cur_freq",
    ),
    (
        "MHz via",
        "footer: where the clock figures come from: msr (APERF/MPERF), perf (msr PMU) or kernel (cpufreq, /proc/cpuinfo); u says which and why",
    ),
    (
        "worst of N",
        "the one-line findings ticker on short screens: the worst of the N findings now; tab to Findings for all",
    ),
    (
        "noise",
        "labels of the findings on the CPU (rules over the figures above)",
    ),
    (
        "verdict",
        "the worst finding's severity on the CPU: quiet, info, warn, crit",
    ),
];

/// The glossary: [`GLOSSARY`], then each optional column of the metric
/// catalogue it does not name, in the catalogue's words.
pub fn glossary() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = GLOSSARY
        .iter()
        .map(|(n, w)| ((*n).to_string(), (*w).to_string()))
        .collect();
    for f in crate::metric::tui_columns() {
        let Some(name) = f.tui_header() else { continue };
        if !GLOSSARY
            .iter()
            .any(|(n, _)| n.split(", ").any(|n| n == name))
        {
            out.push((
                name.to_string(),
                format!("{}: {} ({})", f.about, f.formula, f.source),
            ));
        }
    }
    out
}

/// The help's width on a screen `area` wide.
fn help_width(area: Rect) -> u16 {
    area.width.saturating_sub(2).clamp(40, 110)
}

/// Columns inside the borders of a pop-up asking for `width` in `area`.
fn inner_of(area: Rect, width: u16) -> usize {
    usize::from(width_in(area, width).saturating_sub(2))
}

/// The pop-up on screen: its title, its lines and the width it asks for
/// (each pop-up scrolls the same way, with the keys its border shows).
fn content(s: &State, area: Rect) -> Option<(String, Vec<Line<'static>>, u16)> {
    match s.nav().overlay() {
        Overlay::None => None,
        Overlay::Help => Some((
            "keys · legend · columns".into(),
            help_text(
                s,
                usize::from(width_in(area, help_width(area)).saturating_sub(2)),
            ),
            help_width(area),
        )),
        Overlay::Why => {
            let width = area.width.saturating_sub(4).min(150);
            Some((
                "where each figure comes from (u: close)".into(),
                why_text(s, inner_of(area, width)),
                width,
            ))
        }
        Overlay::Finding => {
            let width = area.width.saturating_sub(4).min(110);
            Some((
                "finding".into(),
                finding_text(s, inner_of(area, width)),
                width,
            ))
        }
    }
}

/// The farthest the pop-up on screen scrolls on the screen in `s`: its
/// last row at the pop-up's bottom.
pub fn max_scroll(s: &State) -> u16 {
    let area = Rect::new(0, 0, s.nav().screen().width, s.nav().screen().height);
    let Some((_, lines, width)) = content(s, area) else {
        return 0;
    };
    let (rows, r) = frame_of(&lines, area, width);
    (rows as u16).saturating_sub(r.height.saturating_sub(2))
}

/// Draws the pop-up on screen, if any, from its scroll position on.
pub fn render(s: &State, area: Rect, buf: &mut Buffer) {
    if let Some((title, lines, width)) = content(s, area) {
        show_from(&title, lines, area, width, s.nav().popup_scroll(), buf, s);
    }
}

fn help_text(s: &State, inner: usize) -> Vec<Line<'static>> {
    let t = s.theme();
    let mut lines: Vec<Line<'static>> = BINDINGS
        .iter()
        .map(|b| {
            Line::from(vec![
                Span::styled(format!(" {}", left(b.shown, 10)), t.title()),
                Span::raw(b.what),
            ])
        })
        .collect();
    lines.push(Line::from(""));
    let legend = [
        if s.judged().machine().base_mhz.is_some() {
            format!(
                " █▌░ {BASE_MARK}   frequency: solid to Avg_MHz, light to Bzy_MHz, {BASE_MARK} base"
            )
        } else {
            " █▌░    frequency: solid to Avg_MHz, light to Bzy_MHz (base clock unknown: no mark)"
                .to_string()
        },
        format!(
            " {}{}{}{}  C-states: C0 (busy), then idle states shallow to deep",
            SHADES[0], SHADES[1], SHADES[2], SHADES[3]
        ),
        " ▸      a watched (benchmark) CPU".to_string(),
        " ·      unknown (u says why); none is spelled out".to_string(),
        " off    an idle state disabled in sysfs (stateN/disable = 1)".to_string(),
        format!(
            " {}   overview: a cell per CPU, low to high",
            crate::tui::overview::LEVELS.iter().collect::<String>()
        ),
    ];
    lines.extend(legend.into_iter().map(|l| Line::styled(l, t.dim())));
    lines.push(Line::from(""));
    lines.push(Line::styled(" columns: what, formula, source", t.title()));
    // a long entry goes on under its text, not under the column's name
    for (name, what) in glossary() {
        lines.extend(crate::tui::pane::wrap(
            vec![
                Span::styled(format!(" {} ", left(&name, 11)), t.title()),
                Span::raw(what),
            ],
            inner,
            13,
        ));
    }
    lines
}

/// The selected finding of the Findings view: evidence, history, fix.
fn finding_text(s: &State, inner: usize) -> Vec<Line<'static>> {
    let t = s.theme();
    let entries = s.judged().log().newest_first();
    let Some(e) = entries.get(s.nav().finding_at().min(entries.len().saturating_sub(1))) else {
        return vec![Line::styled(" no finding yet", t.dim())];
    };
    let f = &e.finding;
    let cpus = if f.cpus.is_empty() {
        "the whole machine".to_string()
    } else {
        format!("CPU {}", fmt::cpus(&f.cpus))
    };
    let span_s = e.last_ns.saturating_sub(e.first_ns) as f64 / 1e9;
    // a long value goes on under itself, not under its name
    let row = |k: &str, v: String| {
        crate::tui::pane::wrap(
            vec![
                Span::styled(format!(" {}", left(k, 10)), t.title()),
                Span::raw(v),
            ],
            inner,
            11,
        )
    };
    let mut lines = vec![
        Line::from(vec![
            Span::styled(format!(" {} ", f.severity.label()), t.severity(f.severity)),
            Span::styled(f.kind.tag().to_string(), t.title()),
            Span::raw(format!(" · {cpus} · {}", f.label)),
        ]),
        Line::from(""),
    ];
    lines.extend(row("evidence", f.evidence.clone()));
    lines.extend(row(
        "seen",
        format!(
            "{} intervals, first {} last {} (over {:.0} s)",
            e.count,
            fmt::clock(e.first_ns),
            fmt::clock(e.last_ns),
            span_s
        ),
    ));
    lines.extend(row(
        "fix",
        f.fix.clone().unwrap_or_else(|| {
            "none: no usual setting or command fixes this; the evidence says where to look"
                .to_string()
        }),
    ));
    lines.push(Line::from(""));
    lines.push(Line::styled(" ⏎ or esc: close", t.dim()));
    lines
}

/// Where the text of a line of the `u` pop-up starts: a space and the
/// 22 columns of the metric's name.
const WHY_INDENT: usize = 23;

/// Every metric with its source (rung) or why it is unavailable.
fn why_text(s: &State, inner: usize) -> Vec<Line<'static>> {
    let t = s.theme();
    // a long reason goes on under itself, not at column 0
    let wrap = |spans: Vec<Span<'static>>| crate::tui::pane::wrap(spans, inner, WHY_INDENT);
    let mut lines = Vec::new();
    if s.judged().statuses().is_empty() {
        lines.push(Line::styled(" no snapshot yet", t.dim()));
    }
    // a foreign tree's one cause is said once, on top, not in every metric
    if let Some(why) = s.judged().foreign() {
        lines.extend(wrap(vec![
            Span::styled(format!(" {}", left("tree", 22)), t.title()),
            Span::styled(why.to_string(), t.warn()),
        ]));
    }
    for st in s.judged().statuses() {
        let name = Span::styled(format!(" {}", left(st.metric.label(), 22)), t.title());
        let mut spans = vec![name];
        match (&st.rung, &st.source) {
            (Some(r), Some(src)) => spans.push(Span::raw(format!("{}: {src}", r.label()))),
            _ => spans.push(Span::styled("unavailable", t.warn())),
        }
        if let Some(n) = &st.note {
            let n = match s.judged().foreign() {
                Some(why) => n.replace(why, "not this machine's tree (above)"),
                None => n.clone(),
            };
            spans.push(Span::styled(format!(" — {n}"), t.dim()));
        }
        lines.extend(wrap(spans));
    }
    let m = s.judged().machine();
    let fact = |k: &str, v: String| {
        wrap(vec![
            Span::styled(format!(" {}", left(k, 22)), t.title()),
            Span::raw(v),
        ])
    };
    lines.push(Line::from(""));
    lines.extend(fact(
        "SMT",
        match crate::tui::header::smt_of(m) {
            Some(true) => format!("on ({})", m.smt_note),
            Some(false) => format!("off ({})", m.smt_note),
            None => format!("{}: {}", fmt::UNKNOWN, m.smt_note),
        },
    ));
    if let Some(n) = &m.topology_note {
        lines.extend(fact("topology", n.clone()));
    }
    if let Some(n) = &m.cur_freq_note {
        lines.extend(fact("current frequency", n.clone()));
    }
    lines.extend(fact(
        "who ran",
        s.judged().trace_status().map_or_else(
            || format!("{}: no sample yet", fmt::UNKNOWN),
            str::to_string,
        ),
    ));
    let limits = crate::tui::header::idle_limits(m);
    lines.extend(fact(
        "idle-state limits",
        if limits.is_empty() {
            match m.kernel.cmdline {
                Some(_) => "none on the kernel command line".into(),
                None => format!("{}: /proc/cmdline unreadable", fmt::UNKNOWN),
            }
        } else {
            format!(
                "{} (kernel command line: deeper states are never entered)",
                limits.join(" ")
            )
        },
    ));
    lines
}
