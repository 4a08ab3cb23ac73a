//! `compare`: two recordings side by side. Each metric's difference is
//! weighed against the interval-to-interval spread within each side, so
//! the differences that matter come first and noise is called noise; a
//! gap in idle exit latency is explained in words from the data and the
//! sidecars, and the settings that differ are listed.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use crate::base::cpulist;
use crate::record::digest::{StateCol, states_of};
use crate::record::reader::{ReadError, Recording};
use crate::record::sidecar::Facts;
use crate::record::stats::{Acc, Stats};
use crate::record::table::{Table, num};

/// How many spreads apart two means must be to matter.
pub const SPREADS: f64 = 2.0;
/// Smallest relative difference that matters (2 % of the larger mean).
pub const REL_FLOOR: f64 = 0.02;
/// Smallest difference of a percentage that matters, points.
pub const PCT_FLOOR: f64 = 1.0;
/// Smallest difference of any other figure that matters.
pub const ABS_FLOOR: f64 = 0.5;

/// One metric of both sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricDiff {
    /// Column name.
    pub metric: String,
    /// Mean on A (0 for an idle state its sidecar says it never enters).
    pub a: Option<f64>,
    /// Mean on B (same).
    pub b: Option<f64>,
    /// Interval-to-interval standard deviation on A.
    pub a_spread: Option<f64>,
    /// Same on B.
    pub b_spread: Option<f64>,
    /// B − A; unknown when a side is, except an idle state its sidecar
    /// says is disabled or absent there (0 %: not entered).
    pub delta: Option<f64>,
    /// Whether the difference is beyond the spread and the floors.
    pub matters: bool,
    /// How many spreads apart (for ranking).
    pub score: f64,
}

/// One setting that differs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SettingDiff {
    /// What.
    pub setting: String,
    /// On A.
    pub a: String,
    /// On B.
    pub b: String,
}

/// One CPU's differences that matter.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CpuDiff {
    /// CPU number.
    pub cpu: u32,
    /// Its metrics that differ beyond the spread, largest first.
    pub diffs: Vec<MetricDiff>,
}

/// Per-CPU differences that are the same on several CPUs, in one line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupDiff {
    /// The CPUs.
    pub cpus: Vec<u32>,
    /// Column name.
    pub metric: String,
    /// Lowest and highest mean on A over these CPUs.
    pub a: (Option<f64>, Option<f64>),
    /// Same on B.
    pub b: (Option<f64>, Option<f64>),
    /// B − A of the first of them.
    pub delta: Option<f64>,
    /// Lowest and highest B − A over them (within 5 % of each other).
    pub delta_range: (Option<f64>, Option<f64>),
}

/// How far apart two CPUs' differences of one metric may be and still
/// share a line: 5 % of the larger.
const SAME_DIFF: f64 = 0.05;

/// Groups the (up to three) largest differences of each CPU by metric and
/// by difference (within [`SAME_DIFF`]), in CPU order.
fn group(cpus: &[CpuDiff]) -> Vec<GroupDiff> {
    let mut out: Vec<GroupDiff> = Vec::new();
    let widen = |r: &mut (Option<f64>, Option<f64>), v: Option<f64>| {
        if let Some(v) = v {
            r.0 = Some(r.0.map_or(v, |x| x.min(v)));
            r.1 = Some(r.1.map_or(v, |x| x.max(v)));
        }
    };
    let same = |g: &GroupDiff, d: Option<f64>| match (g.delta, d) {
        (Some(x), Some(y)) => {
            let lo = g.delta_range.0.unwrap_or(x).min(y);
            let hi = g.delta_range.1.unwrap_or(x).max(y);
            x.signum() == y.signum() && hi - lo <= SAME_DIFF * lo.abs().max(hi.abs())
        }
        (None, None) => true,
        _ => false,
    };
    for c in cpus {
        for d in c.diffs.iter().take(3) {
            let at = out
                .iter()
                .position(|g| g.metric == d.metric && same(g, d.delta));
            let at = at.unwrap_or_else(|| {
                out.push(GroupDiff {
                    cpus: Vec::new(),
                    metric: d.metric.clone(),
                    a: (None, None),
                    b: (None, None),
                    delta: d.delta,
                    delta_range: (None, None),
                });
                out.len() - 1
            });
            let g = &mut out[at];
            g.cpus.push(c.cpu);
            widen(&mut g.a, d.a);
            widen(&mut g.b, d.b);
            widen(&mut g.delta_range, d.delta);
        }
    }
    out
}

/// `12.5`, or `12.1–12.9` when the CPUs of a group differ.
fn range(r: (Option<f64>, Option<f64>)) -> String {
    let (lo, hi) = (num(r.0), num(r.1));
    if lo == hi { lo } else { format!("{lo}–{hi}") }
}

/// `+870`, or `+870…+875` when the CPUs of a group differ.
fn signed_range(r: (Option<f64>, Option<f64>)) -> String {
    let (lo, hi) = (signed(r.0), signed(r.1));
    if lo == hi { lo } else { format!("{lo}…{hi}") }
}

/// `+90`, `-3.2`, `?`.
fn signed(v: Option<f64>) -> String {
    v.map_or_else(
        || "?".into(),
        |v| format!("{}{}", if v > 0.0 { "+" } else { "" }, num(Some(v))),
    )
}

/// Widest line of the text tables.
pub const WIDTH: usize = 100;

/// Cuts text into lines of at most `w` characters at spaces (a longer
/// word is cut where it must be).
fn wrap(text: &str, w: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in text.split_whitespace() {
        let mut word: Vec<char> = word.chars().collect();
        while word.len() > w {
            if !cur.is_empty() {
                lines.push(std::mem::take(&mut cur));
            }
            lines.push(word.drain(..w).collect());
        }
        let word: String = word.into_iter().collect();
        let len = cur.chars().count();
        if len > 0 && len + 1 + word.chars().count() > w {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(&word);
    }
    if !cur.is_empty() || lines.is_empty() {
        lines.push(cur);
    }
    lines
}

/// A long setting (the kernel command line) shown as the words only one
/// side has; short ones as they are.
fn word_diff(s: &SettingDiff, w: usize) -> SettingDiff {
    let long = s.a.chars().count() > w || s.b.chars().count() > w;
    if !long {
        return s.clone();
    }
    let only = |x: &str, y: &str| -> String {
        let other: Vec<&str> = y.split_whitespace().collect();
        let words: Vec<&str> = x
            .split_whitespace()
            .filter(|t| !other.contains(t))
            .collect();
        if words.is_empty() {
            "(no other word)".into()
        } else {
            words.join(" ")
        }
    };
    SettingDiff {
        setting: format!("{}, words only in", s.setting),
        a: only(&s.a, &s.b),
        b: only(&s.b, &s.a),
    }
}

/// Idle-time split of one side.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IdleSplit {
    /// The state most idle time goes to.
    pub state: String,
    /// Its share of idle time, %.
    pub share_pct: f64,
    /// Its exit latency, µs.
    pub latency_us: Option<u64>,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// A's file.
    pub a: String,
    /// B's file.
    pub b: String,
    /// One line per side: model, CPUs, intervals.
    pub sides: Vec<String>,
    /// Plain-language explanations computed from the data.
    pub explanation: Vec<String>,
    /// The conclusion in one sentence.
    pub conclusion: String,
    /// Where each side's idle time goes.
    pub idle: Vec<Option<IdleSplit>>,
    /// Settings that differ.
    pub settings: Vec<SettingDiff>,
    /// Machine-wide metrics (per-CPU means), differences that matter first.
    pub machine: Vec<MetricDiff>,
    /// CPUs present on both sides with differences that matter.
    pub cpus: Vec<CpuDiff>,
    /// The same, one line per difference shared by several CPUs.
    pub cpu_groups: Vec<GroupDiff>,
    /// CPUs compared.
    pub compared_cpus: Vec<u32>,
    /// CPUs only A has.
    pub only_a: Vec<u32>,
    /// CPUs only B has.
    pub only_b: Vec<u32>,
    /// Notes from reading either file.
    pub notes: Vec<String>,
}

struct Side {
    rec: Recording,
    st: Stats,
    states: Vec<StateCol>,
}

impl Side {
    fn open(path: &Path) -> Result<Side, ReadError> {
        let rec = Recording::open(path)?;
        let st = Stats::gather(&rec)?;
        let states = states_of(&rec);
        Ok(Side { rec, st, states })
    }

    fn facts(&self) -> Option<&Facts> {
        self.rec.sidecar.as_ref().map(|s| &s.facts)
    }

    fn is_idle_col(&self, col: &str) -> bool {
        self.states
            .iter()
            .any(|s| col == format!("{}_pct", s.column) || col == format!("{}_per_s", s.column))
    }
}

/// Whether a column is compared: not an identity or bookkeeping (the
/// catalogue says which).
fn compared(col: &str) -> bool {
    crate::metric::by_csv(col, &[]).is_none_or(|f| f.compared)
}

/// Whether one side's sidecar says the idle state of `metric` cannot be
/// entered on `cpu` (all its CPUs when `None`): disabled there, or not a
/// state of that machine at all. Anything else unknown stays unknown.
fn never_entered(s: &Side, metric: &str, cpu: Option<u32>) -> bool {
    let Some(stem) = metric
        .strip_suffix("_pct")
        .or_else(|| metric.strip_suffix("_per_s"))
    else {
        return false;
    };
    let Some(f) = s.facts() else { return false };
    match f.idle_states.iter().find(|st| st.column == stem) {
        Some(st) => {
            st.disabled_known
                && match cpu {
                    Some(c) => st.disabled_cpus.contains(&c),
                    None => {
                        !f.cpus.is_empty() && f.cpus.iter().all(|c| st.disabled_cpus.contains(c))
                    }
                }
        }
        // the machine's states are listed and this is not one of them
        None => !f.idle_states.is_empty(),
    }
}

fn diff(metric: &str, a: Option<&Acc>, b: Option<&Acc>, zero: (bool, bool)) -> Option<MetricDiff> {
    let (am, bm) = (a.and_then(Acc::mean), b.and_then(Acc::mean));
    if am.is_none() && bm.is_none() {
        return None;
    }
    let (asd, bsd) = (a.and_then(Acc::sd), b.and_then(Acc::sd));
    // an idle state a side's sidecar says it never enters is 0 % there;
    // any other missing side leaves the difference unknown
    let (x, y) = (am.or(zero.0.then_some(0.0)), bm.or(zero.1.then_some(0.0)));
    let (delta, matters, score) = match (x, y) {
        (Some(x), Some(y)) => {
            let d = y - x;
            let spread = asd.unwrap_or(0.0).max(bsd.unwrap_or(0.0));
            let floor = if metric.ends_with("_pct") {
                PCT_FLOOR
            } else {
                ABS_FLOOR
            }
            .max(REL_FLOOR * x.abs().max(y.abs()));
            let matters = d.abs() > SPREADS * spread && d.abs() > floor;
            (Some(d), matters, d.abs() / spread.max(floor))
        }
        _ => (None, false, 0.0),
    };
    Some(MetricDiff {
        metric: metric.to_string(),
        a: x,
        b: y,
        a_spread: asd,
        b_spread: bsd,
        delta,
        matters,
        score,
    })
}

fn rank(v: &mut [MetricDiff]) {
    v.sort_by(|x, y| y.matters.cmp(&x.matters).then(y.score.total_cmp(&x.score)));
}

/// Columns both sides can be compared on, A's order then B's extras.
fn metrics(a: &Side, b: &Side) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in a.st.columns.iter().chain(&b.st.columns) {
        if compared(c) && !out.contains(c) {
            out.push(c.clone());
        }
    }
    out
}

/// Where the idle time of `cpus` (all when empty) goes on one side.
fn idle_split(s: &Side, cpus: &[u32]) -> Option<IdleSplit> {
    let mean = |col: &str| -> Option<f64> {
        if cpus.is_empty() {
            return s.st.mean(None, col);
        }
        let v: Vec<f64> = cpus
            .iter()
            .filter_map(|c| s.st.mean(Some(*c), col))
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    let shares: Vec<(&StateCol, f64)> = s
        .states
        .iter()
        .map(|st| (st, mean(&format!("{}_pct", st.column)).unwrap_or(0.0)))
        .collect();
    let total: f64 = shares.iter().map(|x| x.1).sum();
    if total <= 0.0 {
        return None;
    }
    let (st, v) = shares.iter().max_by(|x, y| x.1.total_cmp(&y.1))?;
    Some(IdleSplit {
        state: st.name.clone(),
        share_pct: 100.0 * v / total,
        latency_us: st.latency_us,
    })
}

/// The plain-language line about idle exit latency, when the data shows a gap.
fn latency_line(a: Option<&IdleSplit>, b: Option<&IdleSplit>, scope: &str) -> Option<String> {
    let (a, b) = (a?, b?);
    let (la, lb) = (a.latency_us?, b.latency_us?);
    let line = |slow: (&str, &IdleSplit, u64), fast: (&str, &IdleSplit, u64)| {
        format!(
            "{}'s CPUs{scope} spend {:.0} % of idle time in {} (exit latency {} µs) where {}'s \
             spend {:.0} % in {} ({} µs): a wake-up on {} can cost up to {} µs more.",
            slow.0,
            slow.1.share_pct,
            slow.1.state,
            slow.2,
            fast.0,
            fast.1.share_pct,
            fast.1.state,
            fast.2,
            slow.0,
            slow.2 - fast.2
        )
    };
    if lb >= la + 5 {
        Some(line(("B", b, lb), ("A", a, la)))
    } else if la >= lb + 5 {
        Some(line(("A", a, la), ("B", b, lb)))
    } else {
        Some(format!(
            "Idle exit latency does not differ: A's CPUs{scope} spend {:.0} % of idle time in {} \
             ({la} µs), B's {:.0} % in {} ({lb} µs).",
            a.share_pct, a.state, b.share_pct, b.state
        ))
    }
}

fn opt(v: Option<&String>) -> String {
    v.cloned().unwrap_or_else(|| "unknown".into())
}

/// Settings that differ between two sidecars.
fn settings(a: Option<&Facts>, b: Option<&Facts>) -> Vec<SettingDiff> {
    let mut out = Vec::new();
    let (Some(a), Some(b)) = (a, b) else {
        if a.is_some() != b.is_some() {
            out.push(SettingDiff {
                setting: "machine facts".into(),
                a: if a.is_some() { "sidecar" } else { "no sidecar" }.into(),
                b: if b.is_some() { "sidecar" } else { "no sidecar" }.into(),
            });
        }
        return out;
    };
    let mut push = |setting: &str, x: String, y: String| {
        if x != y {
            out.push(SettingDiff {
                setting: setting.to_string(),
                a: x,
                b: y,
            });
        }
    };
    push("CPU model", opt(a.model.as_ref()), opt(b.model.as_ref()));
    push("CPUs", a.cpus.len().to_string(), b.cpus.len().to_string());
    push("kernel", opt(a.kernel.as_ref()), opt(b.kernel.as_ref()));
    push(
        "cpufreq driver",
        opt(a.cpufreq_driver.as_ref()),
        opt(b.cpufreq_driver.as_ref()),
    );
    push(
        "governor",
        opt(a.governor.as_ref()),
        opt(b.governor.as_ref()),
    );
    push("EPP", opt(a.epp.as_ref()), opt(b.epp.as_ref()));
    push("turbo", opt(a.turbo.as_ref()), opt(b.turbo.as_ref()));
    push(
        "idle driver",
        opt(a.idle_driver.as_ref()),
        opt(b.idle_driver.as_ref()),
    );
    push(
        "idle governor",
        opt(a.idle_governor.as_ref()),
        opt(b.idle_governor.as_ref()),
    );
    let state = |f: &Facts, name: &str| -> String {
        let Some(s) = f.idle_states.iter().find(|s| s.name == name) else {
            return "absent".into();
        };
        let lat = s
            .latency_us
            .map_or_else(|| "latency ?".to_string(), |l| format!("{l} µs"));
        if s.disabled_cpus.is_empty() {
            format!("enabled, {lat}")
        } else if s.disabled_cpus.len() == f.cpus.len() {
            format!("disabled, {lat}")
        } else {
            format!("disabled on {}, {lat}", cpulist::format(&s.disabled_cpus))
        }
    };
    let mut names: Vec<&str> = Vec::new();
    for s in a.idle_states.iter().chain(&b.idle_states) {
        if !names.contains(&s.name.as_str()) {
            names.push(&s.name);
        }
    }
    for n in names {
        push(&format!("idle state {n}"), state(a, n), state(b, n));
    }
    push(
        "kernel command line",
        opt(a.cmdline.as_ref()),
        opt(b.cmdline.as_ref()),
    );
    push(
        "isolated CPUs",
        opt(a.isolated.as_ref()),
        opt(b.isolated.as_ref()),
    );
    push(
        "nohz_full CPUs",
        opt(a.nohz_full.as_ref()),
        opt(b.nohz_full.as_ref()),
    );
    let smt = |f: &Facts| {
        f.smt_active.map_or_else(
            || "unknown".into(),
            |s| if s { "on" } else { "off" }.to_string(),
        )
    };
    push("SMT", smt(a), smt(b));
    push(
        "hypervisor",
        opt(a.hypervisor.as_ref()),
        opt(b.hypervisor.as_ref()),
    );
    let aslr = |f: &Facts| f.aslr.map_or_else(|| "unknown".into(), |v| v.to_string());
    push("ASLR (randomize_va_space)", aslr(a), aslr(b));
    out
}

impl Comparison {
    /// Reads both recordings and compares them; `cpus` limits the per-CPU
    /// part and the idle explanation (all shared CPUs when `None`).
    pub fn build(a: &Path, b: &Path, cpus: Option<&[u32]>) -> Result<Comparison, ReadError> {
        let (sa, sb) = (Side::open(a)?, Side::open(b)?);
        for s in [&sa, &sb] {
            if s.st.intervals == 0 {
                return Err(ReadError {
                    path: s.rec.path.clone(),
                    why: "no interval recorded (a header only): nothing to compare".into(),
                });
            }
        }
        Ok(Comparison::of(&sa, &sb, cpus))
    }

    fn of(a: &Side, b: &Side, cpus: Option<&[u32]>) -> Comparison {
        let cols = metrics(a, b);
        let idle = |c: &str| a.is_idle_col(c) || b.is_idle_col(c);
        let zero = |c: &str, cpu: Option<u32>| {
            let z = idle(c);
            (z && never_entered(a, c, cpu), z && never_entered(b, c, cpu))
        };
        let mut machine: Vec<MetricDiff> = cols
            .iter()
            .filter_map(|c| {
                diff(
                    c,
                    a.st.machine_per_cpu(c),
                    b.st.machine_per_cpu(c),
                    zero(c, None),
                )
            })
            .collect();
        rank(&mut machine);
        let (ca, cb) = (a.st.cpus(), b.st.cpus());
        let wanted = |c: &u32| cpus.is_none_or(|l| l.contains(c));
        let compared: Vec<u32> = ca
            .iter()
            .copied()
            .filter(|c| cb.contains(c) && wanted(c))
            .collect();
        let only_a: Vec<u32> = ca
            .iter()
            .copied()
            .filter(|c| !cb.contains(c) && wanted(c))
            .collect();
        let only_b: Vec<u32> = cb
            .iter()
            .copied()
            .filter(|c| !ca.contains(c) && wanted(c))
            .collect();
        let mut per_cpu = Vec::new();
        for &cpu in &compared {
            let mut diffs: Vec<MetricDiff> = cols
                .iter()
                .filter_map(|c| {
                    diff(
                        c,
                        a.st.acc(Some(cpu), c),
                        b.st.acc(Some(cpu), c),
                        zero(c, Some(cpu)),
                    )
                })
                .filter(|d| d.matters)
                .collect();
            rank(&mut diffs);
            if !diffs.is_empty() {
                per_cpu.push(CpuDiff { cpu, diffs });
            }
        }
        // without --cpus: the CPUs whose idle exit latency differs, when
        // only some do
        let sel: Vec<u32> = if cpus.is_some() {
            compared.clone()
        } else {
            let gap = |c: u32| {
                let lat = |s: &Side| idle_split(s, &[c]).and_then(|x| x.latency_us);
                matches!((lat(a), lat(b)), (Some(x), Some(y)) if x.abs_diff(y) >= 5)
            };
            let differing: Vec<u32> = compared.iter().copied().filter(|&c| gap(c)).collect();
            if differing.len() < compared.len() {
                differing
            } else {
                Vec::new()
            }
        };
        let scope = if sel.is_empty() {
            String::new()
        } else {
            format!(" {}", cpulist::format(&sel))
        };
        let splits = vec![idle_split(a, &sel), idle_split(b, &sel)];
        let mut explanation = Vec::new();
        if let Some(l) = latency_line(splits[0].as_ref(), splits[1].as_ref(), &scope) {
            explanation.push(l);
        }
        let n = machine.iter().filter(|d| d.matters).count();
        let conclusion = if n == 0 {
            "No metric differs beyond the run-to-run spread within each side: as far as these \
             recordings tell, A and B behave the same."
                .to_string()
        } else {
            let top: Vec<&str> = machine
                .iter()
                .filter(|d| d.matters)
                .take(3)
                .map(|d| d.metric.as_str())
                .collect();
            format!(
                "{n} machine-wide metric{} differ{} beyond the run-to-run spread, most: {}.",
                if n == 1 { "" } else { "s" },
                if n == 1 { "s" } else { "" },
                top.join(", ")
            )
        };
        let side = |s: &Side| {
            format!(
                "{}: {} CPUs, {} intervals",
                s.rec.path.display(),
                s.st.cpus().len(),
                s.st.intervals
            ) + &s
                .facts()
                .and_then(|f| f.model.clone())
                .map_or(String::new(), |m| format!(", {m}"))
        };
        let mut notes = Vec::new();
        for (l, s) in [("A", a), ("B", b)] {
            notes.extend(s.st.notes.iter().map(|n| format!("{l}: {n}")));
        }
        Comparison {
            a: a.rec.path.display().to_string(),
            b: b.rec.path.display().to_string(),
            sides: vec![side(a), side(b)],
            explanation,
            conclusion,
            idle: splits,
            settings: settings(a.facts(), b.facts()),
            machine,
            cpu_groups: group(&per_cpu),
            cpus: per_cpu,
            compared_cpus: compared,
            only_a,
            only_b,
            notes,
        }
    }

    /// Renders as text, Markdown or JSON.
    pub fn render(&self, format: crate::record::digest::Format) -> String {
        use crate::record::digest::Format;
        let md = match format {
            Format::Json => return serde_json::to_string_pretty(self).unwrap_or_default() + "\n",
            Format::Md => true,
            Format::Table => false,
        };
        let tbl = |t: &Table| if md { t.markdown() } else { t.text() };
        let mut out = String::new();
        let title = |out: &mut String, t: &str| {
            if md {
                let _ = write!(out, "\n### {t}\n\n");
            } else {
                let _ = write!(out, "\n{t}\n");
            }
        };
        out.push_str(if md {
            "## noisetop compare\n\n"
        } else {
            "noisetop compare\n"
        });
        let _ = write!(out, "A: {}\nB: {}\n", self.sides[0], self.sides[1]);
        for n in &self.notes {
            let _ = writeln!(out, "note: {n}");
        }
        out.push('\n');
        out.push_str(&self.conclusion);
        out.push('\n');
        for e in &self.explanation {
            out.push_str(e);
            out.push('\n');
        }
        title(&mut out, "Settings that differ");
        if self.settings.is_empty() {
            out.push_str("none\n");
        } else {
            let mut t = Table::new(&["setting", "A", "B"]);
            if md {
                for s in &self.settings {
                    t.row(vec![s.setting.clone(), s.a.clone(), s.b.clone()]);
                }
            } else {
                // each value gets half of what the setting names leave
                let value_w = |name_w: usize| (WIDTH - name_w - 4) / 2;
                let short_names = self
                    .settings
                    .iter()
                    .map(|s| s.setting.chars().count())
                    .max()
                    .unwrap_or(0);
                let shown: Vec<SettingDiff> = self
                    .settings
                    .iter()
                    .map(|s| word_diff(s, value_w(short_names)))
                    .collect();
                let name_w = shown
                    .iter()
                    .map(|s| s.setting.chars().count())
                    .max()
                    .unwrap_or(0);
                let w = value_w(name_w);
                for s in &shown {
                    let (la, lb) = (wrap(&s.a, w), wrap(&s.b, w));
                    for i in 0..la.len().max(lb.len()) {
                        let name = if i == 0 {
                            s.setting.clone()
                        } else {
                            String::new()
                        };
                        let cell = |l: &[String]| l.get(i).cloned().unwrap_or_default();
                        t.row(vec![name, cell(&la), cell(&lb)]);
                    }
                }
            }
            out.push_str(&tbl(&t));
        }
        title(
            &mut out,
            "Machine-wide, per CPU (mean ± interval-to-interval spread); differences that matter first",
        );
        let mut t = Table::new(&["metric", "A", "± A", "B", "± B", "B − A", "matters"]);
        for d in &self.machine {
            t.row(vec![
                d.metric.clone(),
                num(d.a),
                num(d.a_spread),
                num(d.b),
                num(d.b_spread),
                signed(d.delta),
                if d.matters { "yes" } else { "" }.into(),
            ]);
        }
        out.push_str(&tbl(&t));
        title(
            &mut out,
            "Per CPU: differences beyond the spread (three largest per CPU; equal ones grouped)",
        );
        if self.cpus.is_empty() {
            let _ = writeln!(
                out,
                "none on CPUs {}",
                if self.compared_cpus.is_empty() {
                    "(none in common)".to_string()
                } else {
                    cpulist::format(&self.compared_cpus)
                }
            );
        } else {
            let mut t = Table::new(&["CPUs", "metric", "A", "B", "B − A"]);
            for g in &self.cpu_groups {
                let cpus = cpulist::format(&g.cpus);
                t.row(vec![
                    if g.cpus.len() == 1 {
                        format!("CPU {cpus}")
                    } else {
                        format!("CPUs {cpus}")
                    },
                    g.metric.clone(),
                    range(g.a),
                    range(g.b),
                    signed_range(g.delta_range),
                ]);
            }
            out.push_str(&tbl(&t));
        }
        if !self.only_a.is_empty() {
            let _ = writeln!(out, "CPUs only A has: {}", cpulist::format(&self.only_a));
        }
        if !self.only_b.is_empty() {
            let _ = writeln!(out, "CPUs only B has: {}", cpulist::format(&self.only_b));
        }
        out
    }
}
