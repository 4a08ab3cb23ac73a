//! The three header lines: who and what the machine is, the settings that
//! decide how noisy its CPUs are, and what is unavailable. Each line is made
//! of pieces that shorten or go, least important first, to fit the width.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::tui::fit::{ALWAYS, Piece, fit};
use crate::tui::fmt;
use crate::tui::state::{Origin, State};

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
fn counts(m: &crate::model::machine::Machine) -> (String, String) {
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
fn identity(s: &State, room: usize) -> Line<'static> {
    let t = s.theme();
    let m = s.judged().machine();
    let model = m
        .cpuinfo
        .model_name
        .as_deref()
        .map_or_else(|| "unknown CPU".into(), short_model);
    let (pkgs, cores) = counts(m);
    let n = m.online.len();
    let (base, max) = (m.base_mhz.as_ref().map(|b| b.0), m.max_mhz);
    let mut pieces = vec![
        Piece::or_short(
            format!("noisetop {}", env!("CARGO_PKG_VERSION")),
            "noisetop",
            t.title(),
            1,
        ),
        Piece::new(model, t.text(), 6),
        Piece::or_short(
            format!("{pkgs} pkg · {cores} cores · {n} CPUs"),
            format!("{pkgs}p {cores}c {n}t"),
            t.text(),
            7,
        ),
        Piece::or_short(
            clock_limits(base, max, false),
            clock_limits(base, max, true),
            t.text(),
            3,
        ),
    ];
    pieces.push(match s.pacing().origin() {
        Origin::Live => Piece::new(
            format!(
                "every {}",
                fmt::seconds(s.pacing().interval().as_secs_f64())
            ),
            t.text(),
            ALWAYS,
        ),
        Origin::Replay(dir) => {
            let pos = s
                .pacing()
                .position()
                .map_or_else(|| fmt::UNKNOWN.into(), |(i, n)| format!("{i}/{n}"));
            let speed = if (s.pacing().speed() - 1.0).abs() < f64::EPSILON {
                String::new()
            } else {
                format!(" ×{}", s.pacing().speed())
            };
            Piece::or_short(
                format!("replay {dir} {pos}{speed}").replace("  ", " "),
                format!("replay {pos}{speed}"),
                t.text(),
                ALWAYS,
            )
        }
    });
    // a tree of one instant read without a clock has no time to show
    if let Some(iv) = s
        .judged()
        .latest()
        .as_ref()
        .filter(|iv| iv.to.wall_ns > 0 || !s.one_instant())
    {
        pieces.push(Piece::new(fmt::clock(iv.to.wall_ns), t.text(), 5));
    }
    if s.one_instant() {
        pieces.push(Piece::or_short(
            "one instant: rates need two",
            "one instant",
            t.warn(),
            ALWAYS,
        ));
    }
    if s.stale_for().is_some() {
        pieces.push(Piece::new(
            format!(
                "STALE >{}",
                fmt::seconds(2.0 * s.pacing().interval().as_secs_f64())
            ),
            t.warn().add_modifier(ratatui::style::Modifier::REVERSED),
            ALWAYS,
        ));
    }
    fit(" ", pieces, &sep(t), room)
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
pub fn idle_limits(m: &crate::model::machine::Machine) -> Vec<String> {
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
pub fn smt_of(m: &crate::model::machine::Machine) -> Option<bool> {
    m.smt
}

/// Header line 2: the settings that decide how noisy the CPUs are.
fn settings(s: &State, room: usize) -> Line<'static> {
    let t = s.theme();
    let m = s.judged().machine();
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
    let list = |v: &Option<Vec<u32>>| {
        v.as_ref()
            .map_or_else(|| fmt::UNKNOWN.into(), |l| fmt::cpus(l))
    };
    let turbo = m.boost.turbo_allowed();
    let idle = m.idle_driver.driver.as_deref().unwrap_or(fmt::UNKNOWN);
    let governor = m.idle_driver.governor.as_deref().unwrap_or(fmt::UNKNOWN);
    let (iso, nohz) = (list(&m.sets.isolated), list(&m.sets.nohz_full));
    let mut pieces = vec![
        Piece::new(freq, t.text(), 8),
        Piece::new(
            format!("turbo {}", onoff(turbo)),
            if turbo == Some(true) {
                t.warn()
            } else {
                t.text()
            },
            9,
        ),
        Piece::new(format!("SMT {}", onoff(smt_of(m))), t.text(), 7),
        Piece::or_short(
            format!("idle {idle}/{governor}"),
            format!("idle {idle}"),
            t.text(),
            6,
        ),
        Piece::or_short(format!("isolated {iso}"), format!("iso {iso}"), t.text(), 5),
        Piece::or_short(
            format!("nohz_full {nohz}"),
            format!("nohz {nohz}"),
            t.text(),
            5,
        ),
        Piece::new(aslr(m.kernel.aslr), t.text(), 2),
    ];
    let limits = idle_limits(m);
    if !limits.is_empty() {
        pieces.push(Piece::new(limits.join(" "), t.warn(), 9));
    }
    if let Some(h) = m.virtualized() {
        pieces.push(Piece::or_short(format!("guest of {h}"), "VM", t.warn(), 4));
    }
    pieces.push(Piece::new(
        format!(
            "kernel {}",
            m.kernel.osrelease.as_deref().unwrap_or(fmt::UNKNOWN)
        ),
        t.text(),
        1,
    ));
    fit(" ", pieces, &sep(t), room)
}

/// Header line 3: what is unavailable (details behind `u`), and the state
/// of the feed.
fn availability(s: &State, room: usize) -> Line<'static> {
    let t = s.theme();
    let mut missing: Vec<&str> = s
        .judged()
        .statuses()
        .iter()
        .filter(|st| st.rung.is_none())
        .map(|st| st.metric.short())
        .collect();
    // who ran is sampled, not counted in the kernel: said beside the rest
    // (u gives the reason)
    if s.judged().trace_missing().is_some() && !s.judged().statuses().is_empty() {
        missing.push("exact who-ran");
    }
    let mut pieces = vec![if s.judged().statuses().is_empty() {
        Piece::new("waiting for the first snapshot…", t.dim(), ALWAYS)
    } else if missing.is_empty() {
        Piece::new("every metric is available", t.good(), ALWAYS)
    } else {
        Piece::forms(
            vec![
                vec![
                    Span::styled("unavailable: ", t.warn()),
                    Span::raw(missing.join(" · ")),
                    Span::styled("  (u: why)", t.dim()),
                ],
                vec![
                    Span::styled(
                        match missing.len() {
                            1 => "1 metric unavailable".to_string(),
                            n => format!("{n} metrics unavailable"),
                        },
                        t.warn(),
                    ),
                    Span::styled(" (u: why)", t.dim()),
                ],
            ],
            ALWAYS,
        )
    }];
    if s.judged().foreign().is_some() {
        pieces.push(Piece::or_short(
            "another machine's tree: no live counters, no rates",
            "foreign tree",
            t.warn(),
            ALWAYS,
        ));
    }
    if s.judged().latest().is_none() && !s.judged().statuses().is_empty() {
        pieces.push(Piece::new("first interval pending", t.dim(), 3));
    }
    if let Some(why) = s.pacing().ended() {
        pieces.push(Piece::new(why, t.warn(), ALWAYS));
    }
    fit(" ", pieces, &sep(t), room)
}

/// Draws the three header lines into `area`.
pub fn render(s: &State, area: Rect, buf: &mut Buffer) {
    let room = usize::from(area.width);
    let lines = [identity(s, room), settings(s, room), availability(s, room)];
    for (i, line) in lines.iter().enumerate().take(area.height as usize) {
        crate::tui::fit::put(buf, area.x, area.y + i as u16, line, area.width);
    }
}
