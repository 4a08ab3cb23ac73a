//! The root of the screen: `impl Widget for &State`, the layout, header,
//! tabs and footer. Every view renders as `render(state, area, buf)`.
//!
//! ```text
//! ┌──────────────────────────────────────────────────────────────────────┐
//! │ noisetop │ model │ pkg·cores·CPUs │ base·max MHz │ interval │ time   │ header
//! │ cpufreq governor │ turbo │ SMT │ idle │ isolated │ nohz_full │ …     │  (3 lines)
//! │ unavailable: … (u: why)                                              │
//! ├ Cores │ Interrupts │ C-states │ Findings ────────── sort · count ────┤
//! │ CPU rows: wide (≥ 150 columns), compact, or two compact columns      │ body
//! │  …                                                                   │
//! ├ Findings ────────────────────────────────────────────────────────────┤ pane (7 lines,
//! │ newest first: time SEV kind evidence → fix                           │  or a one-line
//! ├──────────────────────────────────────────────────────────────────────┤  ticker < 30 rows)
//! │ key hints from the key table                 freq source · own CPU % │ footer
//! └──────────────────────────────────────────────────────────────────────┘
//! ```

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect, Size};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Widget};

use crate::ladder::Metric;
use crate::tui::fmt;
use crate::tui::keys;
use crate::tui::state::{Origin, Overlay, State, View};
use crate::tui::{cores, cstates, detail, irqs, overview, pane, popup};

/// Below this width the header uses short forms.
pub const COMPACT_BELOW: u16 = 120;
/// Header lines.
pub const HEADER_ROWS: u16 = 3;
/// Height of the findings pane on tall screens (borders included).
pub const PANE_ROWS: u16 = 7;
/// From this height the findings pane replaces the one-line ticker.
pub const TALL_FROM: u16 = 30;

/// Rows of the findings area for a screen height.
fn pane_rows(height: u16) -> u16 {
    if height >= TALL_FROM { PANE_ROWS } else { 1 }
}

/// The four stacked areas of the screen. On a tall screen whose CPUs all
/// fit, the Cores box takes what it needs and the findings pane the rest.
fn areas(area: Rect, s: &State) -> [Rect; 4] {
    let pane = pane_rows(area.height);
    let most = area.height.saturating_sub(HEADER_ROWS + pane + 1);
    let body = match cores::wanted_rows(s, area.width) {
        Some(want) if pane > 1 && s.view == View::Cores => want.min(most),
        _ => most,
    };
    area.layout(&Layout::vertical([
        Constraint::Length(HEADER_ROWS),
        Constraint::Length(body),
        Constraint::Fill(1),
        Constraint::Length(1),
    ]))
}

/// Rows left for CPU lines in the body box (borders and column header off).
pub fn body_rows(screen: Size) -> u16 {
    screen
        .height
        .saturating_sub(HEADER_ROWS + pane_rows(screen.height) + 1 + 3)
}

/// Smallest screen the layout is drawn on; below it a one-line notice.
pub const MIN_SIZE: Size = Size::new(40, 10);

impl Widget for &State {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if area.width < MIN_SIZE.width || area.height < MIN_SIZE.height {
            if area.height > 0 {
                let msg = format!("noisetop needs {}×{}", MIN_SIZE.width, MIN_SIZE.height);
                buf.set_stringn(area.x, area.y, msg, area.width as usize, self.theme.warn());
            }
            return;
        }
        let [header, body, findings, footer] = areas(area, self);
        render_header(self, header, buf);
        let block = Block::bordered()
            .title(tabs(self))
            .title_top(Line::from(body_title(self)).right_aligned())
            .border_style(self.theme.dim());
        let inner = block.inner(body);
        block.render(body, buf);
        match self.view {
            View::Cores => cores::render(self, inner, buf),
            View::Overview => overview::render(self, inner, buf),
            View::Interrupts => irqs::render(self, inner, buf),
            View::Cstates => cstates::render(self, inner, buf),
            View::Findings => pane::render_log(self, inner, buf),
            View::Detail => detail::render(self, inner, buf),
        }
        if findings.height > 1 {
            pane::render_pane(self, findings, buf);
        } else {
            pane::render_ticker(self, findings, buf);
        }
        render_footer(self, footer, buf);
        match self.overlay {
            Overlay::Help => popup::render_help(self, area, buf),
            Overlay::Why => popup::render_why(self, area, buf),
            Overlay::Finding => popup::render_finding(self, area, buf),
            Overlay::None => {}
        }
    }
}

/// The tab line on the body's top border; Detail shows as a fifth tab.
fn tabs(s: &State) -> Line<'static> {
    let t = s.theme;
    let mut spans = vec![Span::raw(" ")];
    let mut views = View::TABS.to_vec();
    if s.view == View::Detail {
        views.push(View::Detail);
    }
    let narrow = s.screen.width < COMPACT_BELOW;
    for (i, v) in views.iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(if narrow { "│" } else { " │ " }, t.dim()));
        }
        let style = if *v == s.view {
            t.title().patch(t.selected())
        } else {
            t.dim()
        };
        let label = match (narrow, v) {
            (true, View::Interrupts) => "IRQs",
            _ => v.label(),
        };
        spans.push(Span::styled(label, style));
    }
    spans.push(Span::raw(" "));
    Line::from(spans)
}

/// Right side of the body's top border: order, counts, pause.
fn body_title(s: &State) -> String {
    let mut parts = vec![format!("sort {}", s.sort.label())];
    if s.filter != crate::tui::state::Filter::All {
        parts.push(s.filter.label().to_string());
    }
    parts.push(format!(
        "{} of {} CPUs",
        s.order().len(),
        s.machine.online.len()
    ));
    if !s.watched.is_empty() {
        parts.push(format!("watching {}", fmt::cpus(&s.watched)));
    }
    if s.paused {
        parts.push(if s.held.is_empty() {
            "PAUSED".into()
        } else {
            format!("PAUSED ({} held)", s.held.len())
        });
    }
    format!(" {} ", parts.join(" · "))
}

fn sep(t: crate::tui::theme::Theme) -> Span<'static> {
    Span::styled(" │ ", t.dim())
}

/// Shortens a model name for the header: `Intel(R) Core(TM) i7-8650U CPU @
/// 1.90GHz` → `Intel Core i7-8650U` (the base clock has its own field).
pub fn short_model(name: &str) -> String {
    let name = name.split(" @ ").next().unwrap_or(name);
    let words: Vec<&str> = name
        .split_whitespace()
        .map(|w| {
            w.trim_end_matches("(R)")
                .trim_end_matches("(TM)")
                .trim_end_matches("(tm)")
        })
        .filter(|w| !w.is_empty() && !matches!(*w, "CPU" | "Processor"))
        .collect();
    words.join(" ")
}

/// Counts packages and cores of the topology; `·` when unknown.
fn counts(m: &crate::machine::Machine) -> (String, String) {
    let mut pkgs: Vec<u32> = m.topology.iter().filter_map(|x| x.package).collect();
    pkgs.sort_unstable();
    pkgs.dedup();
    let mut cores: Vec<(Option<u32>, u32)> = m
        .topology
        .iter()
        .filter_map(|x| Some((x.package, x.core?)))
        .collect();
    cores.sort_unstable();
    cores.dedup();
    let n = |n: usize| {
        if n == 0 {
            fmt::UNKNOWN.to_string()
        } else {
            n.to_string()
        }
    };
    (n(pkgs.len()), n(cores.len()))
}

/// Header line 1: who, what, how often, when.
fn identity(s: &State, compact: bool) -> Line<'static> {
    let t = s.theme;
    let m = &s.machine;
    let model = m
        .cpuinfo
        .model_name
        .as_deref()
        .map_or_else(|| "unknown CPU".into(), short_model);
    let (pkgs, cores) = counts(m);
    let clocks = clock_limits(m.base_mhz.as_ref().map(|b| b.0), m.max_mhz, compact);
    let mut spans = if compact {
        vec![
            Span::styled(" noisetop", t.title()),
            sep(t),
            Span::raw(model),
            sep(t),
            Span::raw(format!("{pkgs}p {cores}c {}t", m.online.len())),
            sep(t),
            Span::raw(clocks),
            sep(t),
        ]
    } else {
        vec![
            Span::styled(
                format!(" noisetop {}", env!("CARGO_PKG_VERSION")),
                t.title(),
            ),
            sep(t),
            Span::raw(model),
            sep(t),
            Span::raw(format!(
                "{pkgs} pkg · {cores} cores · {} CPUs",
                m.online.len()
            )),
            sep(t),
            Span::raw(clocks),
            sep(t),
        ]
    };
    match &s.origin {
        Origin::Live => spans.push(Span::raw(format!(
            "every {}",
            fmt::seconds(s.interval.as_secs_f64())
        ))),
        Origin::Replay(dir) => {
            let pos = s
                .position
                .map_or_else(|| fmt::UNKNOWN.into(), |(i, n)| format!("{i}/{n}"));
            let speed = if (s.speed - 1.0).abs() < f64::EPSILON {
                String::new()
            } else {
                format!(" ×{}", s.speed)
            };
            let dir = if compact { "" } else { dir.as_str() };
            spans.push(Span::raw(
                format!("replay {dir} {pos}{speed}").replace("  ", " "),
            ));
        }
    }
    if let Some(iv) = &s.latest {
        spans.push(sep(t));
        spans.push(Span::raw(fmt::clock(iv.to.wall_ns)));
    }
    if s.stale_for().is_some() {
        spans.push(Span::styled(
            format!(" STALE >{}", fmt::seconds(2.0 * s.interval.as_secs_f64())),
            t.warn().add_modifier(ratatui::style::Modifier::REVERSED),
        ));
    }
    Line::from(spans)
}

/// The base and top clocks for the header; a clock that is unknown says so
/// in words rather than as a lone `·` before its unit.
fn clock_limits(base: Option<f64>, max: Option<f64>, compact: bool) -> String {
    match (base, max, compact) {
        (Some(b), Some(m), false) => format!("base {b:.0} MHz · max {m:.0} MHz"),
        (Some(b), Some(m), true) => format!("{b:.0}/{m:.0} MHz"),
        (Some(b), None, _) => format!("base {b:.0} MHz, max unknown"),
        (None, Some(m), _) => format!("base unknown, max {m:.0} MHz"),
        (None, None, _) => "clocks unknown".to_string(),
    }
}

/// Names the ASLR setting (`randomize_va_space`).
pub fn aslr(v: Option<u8>) -> String {
    match v {
        Some(0) => "ASLR off".into(),
        Some(1) => "ASLR partial".into(),
        Some(2) => "ASLR full".into(),
        Some(n) => format!("ASLR mode {n}"),
        None => format!("ASLR {}", fmt::UNKNOWN),
    }
}

/// Kernel parameters that cap idle states, as set on the command line.
pub const IDLE_LIMITS: [&str; 4] = [
    "intel_idle.max_cstate",
    "processor.max_cstate",
    "idle",
    "cpuidle.off",
];

/// The idle-state caps of the kernel command line (`intel_idle.max_cstate=1`).
pub fn idle_limits(m: &crate::machine::Machine) -> Vec<String> {
    let Some(cmd) = m.kernel.cmdline.as_deref() else {
        return Vec::new();
    };
    IDLE_LIMITS
        .iter()
        .filter_map(|k| {
            crate::collect::facts::cmdline_param(cmd, k).map(|v| {
                if v.is_empty() {
                    (*k).to_string()
                } else {
                    format!("{k}={v}")
                }
            })
        })
        .collect()
}

/// Whether SMT is on, from the kernel's switch, else from the sibling
/// lists; `None` when neither is known.
pub fn smt_of(m: &crate::machine::Machine) -> Option<bool> {
    m.smt
}

/// Header line 2: the settings that decide how noisy the CPUs are.
fn settings(s: &State, compact: bool) -> Line<'static> {
    let t = s.theme;
    let m = &s.machine;
    let one = |v: Vec<Option<&String>>| -> String {
        let mut v: Vec<&str> = v.into_iter().flatten().map(String::as_str).collect();
        v.sort_unstable();
        v.dedup();
        match v.len() {
            0 => fmt::UNKNOWN.into(),
            1 => v[0].to_string(),
            _ => "mixed".into(),
        }
    };
    let freq = if m.cpufreq.is_empty() {
        "no cpufreq".to_string()
    } else {
        format!(
            "{} {}",
            one(m.cpufreq.iter().map(|c| c.driver.as_ref()).collect()),
            one(m.cpufreq.iter().map(|c| c.governor.as_ref()).collect())
        )
    };
    let onoff = |b: Option<bool>| match b {
        Some(true) => "on",
        Some(false) => "off",
        None => fmt::UNKNOWN,
    };
    let smt = smt_of(m);
    let list = |v: &Option<Vec<u32>>| {
        v.as_ref()
            .map_or_else(|| fmt::UNKNOWN.into(), |l| fmt::cpus(l))
    };
    let turbo = m.boost.turbo_allowed();
    let idle = m.idle_driver.driver.as_deref().unwrap_or(fmt::UNKNOWN);
    let idle = if compact {
        idle.to_string()
    } else {
        format!(
            "{idle}/{}",
            m.idle_driver.governor.as_deref().unwrap_or(fmt::UNKNOWN)
        )
    };
    let (iso, nohz) = if compact {
        ("iso", "nohz")
    } else {
        ("isolated", "nohz_full")
    };
    let mut spans = vec![
        Span::raw(format!(" {freq}")),
        sep(t),
        Span::styled(
            format!("turbo {}", onoff(turbo)),
            if turbo == Some(true) {
                t.warn()
            } else {
                t.text()
            },
        ),
        sep(t),
        Span::raw(format!("SMT {}", onoff(smt))),
        sep(t),
        Span::raw(format!("idle {idle}")),
        sep(t),
        Span::raw(format!("{iso} {}", list(&m.sets.isolated))),
        sep(t),
        Span::raw(format!("{nohz} {}", list(&m.sets.nohz_full))),
        sep(t),
        Span::raw(aslr(m.kernel.aslr)),
    ];
    let limits = idle_limits(m);
    if !limits.is_empty() {
        spans.push(sep(t));
        spans.push(Span::styled(limits.join(" "), t.warn()));
    }
    if let Some(h) = m.virtualized() {
        spans.push(sep(t));
        spans.push(Span::styled(
            if compact {
                "VM".to_string()
            } else {
                format!("guest of {h}")
            },
            t.warn(),
        ));
    }
    spans.push(sep(t));
    spans.push(Span::raw(format!(
        "kernel {}",
        m.kernel.osrelease.as_deref().unwrap_or(fmt::UNKNOWN)
    )));
    Line::from(spans)
}

/// Header line 3: what is unavailable (details behind `u`), and the state
/// of the feed.
fn availability(s: &State) -> Line<'static> {
    let t = s.theme;
    let missing: Vec<&str> = s
        .statuses
        .iter()
        .filter(|st| st.rung.is_none())
        .map(|st| short_metric(st.metric))
        .collect();
    let mut spans = if s.statuses.is_empty() {
        vec![Span::styled(" waiting for the first snapshot…", t.dim())]
    } else if missing.is_empty() {
        vec![Span::styled(" every metric is available", t.good())]
    } else {
        vec![
            Span::styled(" unavailable: ", t.warn()),
            Span::raw(missing.join(" · ")),
            Span::styled("  (u: why)", t.dim()),
        ]
    };
    if s.latest.is_none() && !s.statuses.is_empty() {
        spans.push(Span::styled("  · first interval pending", t.dim()));
    }
    if let Some(why) = &s.ended {
        spans.push(sep(t));
        spans.push(Span::styled(why.clone(), t.warn()));
    }
    Line::from(spans)
}

/// Short metric names for the header's one-line list.
pub fn short_metric(m: Metric) -> &'static str {
    match m {
        Metric::Frequency => "frequency",
        Metric::HwCstates => "HW C-states",
        Metric::OsCstates => "cpuidle",
        Metric::Interrupts => "IRQs",
        Metric::Softirqs => "softirqs",
        Metric::CpuTime => "CPU time",
        Metric::Scheduler => "CSW/MIG",
        Metric::Smi => "SMI",
        Metric::Temperature => "temperature",
        Metric::Throttle => "throttling",
        Metric::Power => "power",
    }
}

fn render_header(s: &State, area: Rect, buf: &mut Buffer) {
    let compact = area.width < COMPACT_BELOW;
    let lines = [identity(s, compact), settings(s, compact), availability(s)];
    for (i, line) in lines.iter().enumerate().take(area.height as usize) {
        buf.set_line(area.x, area.y + i as u16, line, area.width);
    }
}

/// The footer: key hints that fit, then the frequency source and noisetop's own CPU use.
fn render_footer(s: &State, area: Rect, buf: &mut Buffer) {
    let t = s.theme;
    let rung = s
        .statuses
        .iter()
        .find(|st| st.metric == Metric::Frequency)
        .and_then(|st| st.rung)
        .map_or(fmt::UNKNOWN, |r| r.label());
    // a recorder says its file, rows and size on every sample
    let rec = s.notes.iter().find(|n| n.starts_with("rec "));
    let right = match (area.width < COMPACT_BELOW, rec) {
        (true, _) => format!("freq {rung} "),
        (false, None) => format!("freq: {rung} │ self {} % CPU ", fmt::pct(s.own_cpu, 2)),
        (false, Some(r)) => format!(
            "{r} │ freq: {rung} │ self {} % CPU ",
            fmt::pct(s.own_cpu, 2)
        ),
    };
    let mut spans: Vec<Span> = Vec::new();
    let mut used = 0;
    // a recorder that could not write says so where it cannot be missed
    if let Some(e) = s.notes.iter().find(|n| n.starts_with("recording to ")) {
        let text = format!(" {e} ");
        used += text.chars().count();
        spans.push(Span::styled(text, t.warn()));
    }
    if s.stale_for().is_some() {
        let text = " STALE ".to_string();
        used += text.chars().count();
        spans.push(Span::styled(
            text,
            t.warn().add_modifier(ratatui::style::Modifier::REVERSED),
        ));
    }
    if s.paused {
        spans.push(Span::styled(" PAUSED ", t.selected()));
        used += 8;
    }
    let room = (area.width as usize).saturating_sub(right.chars().count() + 1 + used);
    for (k, what) in keys::hints_that_fit(room, 3) {
        spans.push(Span::styled(format!(" {k}"), t.title()));
        spans.push(Span::styled(format!(" {what} "), t.dim()));
    }
    buf.set_line(area.x, area.y, &Line::from(spans), area.width);
    let x = area.x + area.width.saturating_sub(right.chars().count() as u16);
    buf.set_string(x, area.y, right, t.dim());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_rows_leave_room_for_header_pane_footer_and_borders() {
        // 24 rows: 3 header, 1 ticker, 1 footer, 2 borders, 1 column header
        assert_eq!(body_rows(Size::new(80, 24)), 16);
        // 50 rows: the findings pane takes 7
        assert_eq!(body_rows(Size::new(160, 50)), 36);
        assert_eq!(body_rows(Size::new(10, 3)), 0);
    }
}
