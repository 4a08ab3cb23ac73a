//! The report of a series as text and JSON: the check's warnings, one
//! row per run, the statistics, the outliers explained, the stability
//! line, the fix for recurring noise, and how the time alone is made.

use std::fmt::Write as _;

use serde::Serialize;

use super::analysis::Analysis;
use super::repetition::{Culprit, Repetition};
use super::spread::Spread;
use crate::base::cpulist;

/// A WARN or FAIL item of `check`, as the series shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckItem {
    /// The rule's id.
    pub id: String,
    /// `WARN` or `FAIL`.
    pub status: String,
    /// What it found.
    pub title: String,
    /// The commands that fix it.
    pub fix: Vec<String>,
}

/// A warm-up run: timed, not counted.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Warmup {
    /// Its wall time, s.
    pub wall_s: f64,
    /// Its exit code.
    pub exit_code: Option<i32>,
    /// The signal that ended it.
    pub signal: Option<i32>,
}

/// The series, done.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeriesReport {
    /// The command and its arguments.
    pub command: Vec<String>,
    /// Its CPUs.
    pub cpus: Vec<u32>,
    /// `check`'s WARN and FAIL items before the first run (`None` with
    /// `--no-check`).
    pub check: Option<Vec<CheckItem>>,
    /// Runs asked for.
    pub repeat: u32,
    /// Warm-up runs.
    pub warmup: Vec<Warmup>,
    /// The longest wait for idle CPUs before a run, s.
    pub settle_limit_s: f64,
    /// A CPU counts as idle at or under this busy share, %.
    pub settle_idle_below_pct: f64,
    /// Every run done, in order.
    pub runs: Vec<Repetition>,
    /// The statistics, outliers, stability and recurring noise.
    #[serde(flatten)]
    pub analysis: Analysis,
    /// Whether failed runs are counted (`--ignore-failure`).
    pub ignore_failure: bool,
    /// How the time alone is estimated.
    pub time_alone_how: &'static str,
    /// Why who ran was not traced.
    pub trace_missing: Option<String>,
    /// How the series ended.
    pub ended: String,
    /// The exit status noisetop gives.
    pub exit_code: u8,
}

/// The unit of a table's times: ms for runs under 10 s, else s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Ms,
    S,
}

impl Unit {
    fn for_median(s: f64) -> Unit {
        if s < 10.0 { Unit::Ms } else { Unit::S }
    }

    fn name(self) -> &'static str {
        match self {
            Unit::Ms => "ms",
            Unit::S => "s",
        }
    }

    fn num(self, s: f64) -> String {
        match self {
            Unit::Ms => format!("{:.1}", s * 1e3),
            Unit::S => format!("{s:.3}"),
        }
    }
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map_or_else(|| "?".to_string(), f)
}

/// The top culprit as a table cell (at most 24 characters).
fn top_cell(c: Option<&Culprit>) -> String {
    let t = match c {
        Some(Culprit::Task { name, .. }) => name.clone(),
        Some(Culprit::Interrupts { most, .. }) => {
            format!("irq {}", most.rsplit(' ').next().unwrap_or(most))
        }
        Some(Culprit::Host { .. }) => "the host (steal)".into(),
        None => "-".into(),
    };
    if t.chars().count() > 24 {
        let cut: String = t.chars().take(23).collect();
        format!("{cut}…")
    } else {
        t
    }
}

fn spread_row(o: &mut String, label: &str, s: Option<&Spread>, u: Unit) {
    let Some(s) = s else {
        let _ = writeln!(o, "  {label:<12} {:>4}  -", 0);
        return;
    };
    let n = |v: f64| format!("{} {}", u.num(v), u.name());
    let _ = writeln!(
        o,
        "  {label:<12} {:>4}  {:<22} {:>11} {:>11} {:>11}",
        s.runs,
        format!("{} ± {} {}", u.num(s.mean_s), u.num(s.sd_s), u.name()),
        n(s.median_s),
        n(s.min_s),
        n(s.max_s)
    );
}

impl SeriesReport {
    /// The title and `check`'s items, as they are printed before the first
    /// run.
    pub fn head_text(&self) -> String {
        let mut o = format!(
            "noisetop run: `{}` ×{} on CPU {}\n",
            crate::cmd::run::seen::shell_words(&self.command),
            self.repeat,
            cpulist::format(&self.cpus)
        );
        let Some(items) = &self.check else {
            return o;
        };
        let list = cpulist::format(&self.cpus);
        let count = |s: &str| items.iter().filter(|i| i.status == s).count();
        let _ = writeln!(
            o,
            "check (CPU {list}): {} WARN, {} FAIL; `noisetop check --cpus {list}` shows the \
             evidence, --no-check skips this",
            count("WARN"),
            count("FAIL")
        );
        let width = items.iter().map(|i| i.id.len()).max().unwrap_or(0);
        for i in items {
            let fix = i
                .fix
                .first()
                .map_or_else(String::new, |f| format!(" → {f}"));
            let more = if i.fix.len() > 1 { " (and more)" } else { "" };
            let _ = writeln!(
                o,
                "  {:<4}  {:<width$}  {}{fix}{more}",
                i.status, i.id, i.title
            );
        }
        o
    }

    /// The whole report as text; `with_head` starts it with the title and
    /// the check (not printed before the runs).
    pub fn text(&self, with_head: bool) -> String {
        let mut o = String::new();
        if with_head {
            o.push_str(&self.head_text());
        }
        if !self.warmup.is_empty() {
            let n = self.warmup.len();
            let _ = writeln!(
                o,
                "warm-up: {n} run{} before the series, not counted ({})",
                if n == 1 { "" } else { "s" },
                self.warmup
                    .iter()
                    .map(|w| format!("{:.1} ms", w.wall_s * 1e3))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        self.settle_text(&mut o);
        if let Some(why) = &self.trace_missing {
            let _ = writeln!(o, "not traced: {why}");
        }
        let a = &self.analysis;
        let u = Unit::for_median(a.statistics.all.map_or(0.0, |s| s.median_s));
        let un = u.name();
        let _ = writeln!(
            o,
            "\n{:>3}  {:>9}  {:>9}  {:>9}  {:>5}  {:>9}  {:<24}  {:>7}  {:>4}  {:>7}  verdict",
            "run",
            format!("wall {un}"),
            format!("alone {un}"),
            format!("cpu {un}"),
            "share",
            "others ms",
            "top",
            "irq ms",
            "mig",
            "C-exits"
        );
        for r in &self.runs {
            let mut verdict = r.verdict.label().to_string();
            if !r.succeeded() {
                match (r.exit_code, r.signal) {
                    (Some(c), _) => {
                        let _ = write!(verdict, ", exit {c}");
                    }
                    (None, Some(s)) => {
                        let _ = write!(verdict, ", signal {s}");
                    }
                    _ => {}
                }
            }
            if r.outlier {
                let _ = write!(
                    verdict,
                    ", outlier {}",
                    r.excess_s
                        .map_or_else(String::new, |e| format!("{:+.1} ms", e * 1e3))
                );
            }
            let _ = writeln!(
                o,
                "{:>3}  {:>9}  {:>9}  {:>9}  {:>5}  {:>9}  {:<24}  {:>7}  {:>4}  {:>7}  {verdict}",
                r.run,
                u.num(r.wall_s),
                opt(r.time_alone_s, |v| u.num(v)),
                opt(r.cpu_s, |v| u.num(v)),
                opt(r.share_pct, |p| format!("{p:.0} %")),
                opt(r.others_s, |s| format!("{:.1}", s * 1e3)),
                top_cell(r.top.as_ref()),
                opt(r.irq_s, |s| format!("{:.1}", s * 1e3)),
                r.migrations
                    .map_or_else(|| "?".to_string(), |m| m.to_string()),
                r.cstate_exits
                    .map_or_else(|| "?".to_string(), |m| m.to_string()),
            );
        }
        self.statistics_text(&mut o, u);
        self.outliers_text(&mut o, u);
        if let Some(s) = &a.stability {
            let _ = writeln!(o, "{s}");
        }
        for r in &a.recurring {
            let _ = writeln!(o, "{}", r.text());
        }
        let exits: Option<f64> = self.runs.iter().map(|r| r.cstate_exit_latency_us).sum();
        if let Some(us) = exits.filter(|_| !self.runs.is_empty()) {
            let _ = writeln!(
                o,
                "C-state exits paid: {us:.0} µs of exit latency over the runs (each state's \
                 latency × its exits)"
            );
        }
        let _ = writeln!(o, "alone: {}", self.time_alone_how);
        let unknown: Vec<String> = self
            .runs
            .iter()
            .filter_map(|r| {
                r.verdict_unknown
                    .as_ref()
                    .map(|w| format!("run {}: {w}", r.run))
            })
            .take(3)
            .collect();
        for w in unknown {
            let _ = writeln!(o, "unknown verdict: {w}");
        }
        let _ = writeln!(o, "{}", self.ended);
        o
    }

    fn settle_text(&self, o: &mut String) {
        let list = cpulist::format(&self.cpus);
        let busy: Vec<&Repetition> = self
            .runs
            .iter()
            .filter(|r| r.settle.is_some_and(|s| !s.idle))
            .collect();
        let waited = self
            .runs
            .iter()
            .filter_map(|r| r.settle.map(|s| s.waited_s))
            .fold(0.0, |a, b| a + b);
        if self.settle_limit_s <= 0.0 {
            let _ = writeln!(o, "before each run: no wait for idle CPUs (--settle 0)");
            return;
        }
        let _ = write!(
            o,
            "before each run: waits for CPU {list} to be idle (at most {:.0} % busy over {} ms), \
             {} s at most; {waited:.1} s in all",
            self.settle_idle_below_pct,
            super::super::settle::WINDOW.as_millis(),
            self.settle_limit_s
        );
        if busy.is_empty() {
            let _ = writeln!(o);
        } else {
            let worst = busy
                .iter()
                .filter_map(|r| r.settle.and_then(|s| s.busy_pct))
                .fold(0.0f64, f64::max);
            let _ = writeln!(
                o,
                "; {} run{} started on a busy CPU (up to {worst:.0} % at the limit)",
                busy.len(),
                if busy.len() == 1 { "" } else { "s" }
            );
        }
    }

    fn statistics_text(&self, o: &mut String, u: Unit) {
        let st = &self.analysis.statistics;
        let _ = writeln!(
            o,
            "\n{:<14} {:>4}  {:<22} {:>11} {:>11} {:>11}",
            "", "runs", "mean ± sd", "median", "min", "max"
        );
        spread_row(o, "all runs", st.all.as_ref(), u);
        spread_row(o, "quiet runs", st.quiet.as_ref(), u);
        spread_row(o, "time alone", st.time_alone.as_ref(), u);
        let failed = self.runs.iter().filter(|r| !r.succeeded()).count();
        if failed > 0 {
            let _ = writeln!(
                o,
                "  ({failed} failed run{} {})",
                if failed == 1 { "" } else { "s" },
                if self.ignore_failure {
                    "counted: --ignore-failure"
                } else {
                    "not counted"
                }
            );
        }
    }

    fn outliers_text(&self, o: &mut String, u: Unit) {
        let a = &self.analysis;
        let Some(l) = a.outlier_limit else {
            let _ = writeln!(o, "\noutliers: not judged (fewer than 3 runs)");
            return;
        };
        let flagged: Vec<&Repetition> = self.runs.iter().filter(|r| r.outlier).collect();
        let rule = format!(
            "over {} {}: the median + 3 MAD, 1 % at least",
            u.num(l.limit_s),
            u.name()
        );
        if flagged.is_empty() {
            let _ = writeln!(o, "\noutliers: none ({rule})");
            return;
        }
        let of = if a.typical_of_quiet {
            "the quiet runs' median"
        } else {
            "the median (no run was quiet)"
        };
        let _ = writeln!(o, "\noutliers ({rule}; each against {of}):");
        for r in flagged {
            if let Some(e) = &r.explanation {
                let _ = writeln!(o, "  {e}");
            }
        }
    }
}
