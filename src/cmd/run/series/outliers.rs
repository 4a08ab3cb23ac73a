//! Runs slower than the rest, and what explains each: a run is flagged
//! when its wall time passes the median by more than 3 MADs (scaled to a
//! standard deviation) and by 1 % at least; its excess over the quiet
//! runs' median is explained by the noise it met when what others took
//! from it, beyond what a quiet run met, makes up half of it or more.
//! Otherwise the run was slow by itself: the command's own work.

use serde::Serialize;

use super::repetition::{Culprit, Repetition};
use super::spread::{MAD_TO_SD, mad, median};

/// Fewer MADs than this above the median is no outlier.
pub const MADS: f64 = 3.0;

/// Nor a run within this share of the median, %: timings this close
/// differ by the clock's grain and the caches, not by noise worth naming.
pub const FLOOR_PCT: f64 = 1.0;

/// Share of the excess the noise must make up to explain it.
pub const EXPLAINS: f64 = 0.5;

/// The wall time above which a run is an outlier.
// the JSON report's field names: the unit in the suffix, as everywhere
#[allow(clippy::struct_field_names)]
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Limit {
    /// Median wall time of the runs judged, s.
    pub median_s: f64,
    /// Their median absolute deviation, s.
    pub mad_s: f64,
    /// The limit: median + max(3 × 1.4826 × MAD, 1 % of the median), s.
    pub limit_s: f64,
}

/// The limit over these wall times; `None` for fewer than 3 runs (no
/// median can stand against one odd run then).
pub fn limit(walls: &[f64]) -> Option<Limit> {
    if walls.len() < 3 {
        return None;
    }
    let median_s = median(walls)?;
    let mad_s = mad(walls)?;
    let by_mad = MADS * MAD_TO_SD * mad_s;
    let floor = FLOOR_PCT / 100.0 * median_s;
    Some(Limit {
        median_s,
        mad_s,
        limit_s: median_s + by_mad.max(floor),
    })
}

/// What a quiet run typically met, to measure a slow run against.
// the JSON report's field names: the unit in the suffix, as everywhere
#[allow(clippy::struct_field_names)]
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Typical {
    /// Median wall time, s.
    pub wall_s: f64,
    /// Median time others took from the command, s.
    pub taken_s: Option<f64>,
    /// Median time others took on its CPUs in all, s.
    pub others_total_s: Option<f64>,
    /// Median of the command's own CPU time, s.
    pub cpu_s: Option<f64>,
}

impl Typical {
    /// The medians of these runs.
    pub fn of(runs: &[&Repetition]) -> Option<Typical> {
        let m = |f: &dyn Fn(&Repetition) -> Option<f64>| -> Option<f64> {
            let v: Option<Vec<f64>> = runs.iter().map(|r| f(r)).collect();
            median(&v?)
        };
        Some(Typical {
            wall_s: m(&|r| Some(r.wall_s))?,
            taken_s: m(&|r| r.taken_s),
            others_total_s: m(&|r| r.others_total_s()),
            cpu_s: m(&|r| r.cpu_s),
        })
    }
}

/// Milliseconds as the explanations say them.
fn ms(s: f64) -> String {
    let v = s * 1e3;
    if v.abs() >= 10.0 {
        format!("{v:.0} ms")
    } else {
        format!("{v:.1} ms")
    }
}

fn cpus_text(cpus: &[u32]) -> String {
    let list = crate::base::cpulist::format(cpus);
    if cpus.len() == 1 {
        format!("CPU {list}")
    } else {
        format!("CPUs {list}")
    }
}

/// Flags `r` and says why it was slow, against the quiet runs' `typical`
/// figures; `cpus` are the command's.
pub fn explain(r: &mut Repetition, typical: &Typical, cpus: &[u32]) {
    let excess = r.wall_s - typical.wall_s;
    r.outlier = true;
    r.excess_s = Some(excess);
    let head = format!(
        "run {}: {}{}",
        r.run,
        if excess >= 0.0 { "+" } else { "" },
        ms(excess)
    );
    // what others took from it beyond a quiet run: while it was runnable
    // where known, else on its CPUs in all
    let extra = match (r.taken_s, typical.taken_s) {
        (Some(t), Some(q)) => Some(t - q),
        _ => r
            .others_total_s()
            .zip(typical.others_total_s)
            .map(|(o, q)| o - q),
    };
    let Some(extra) = extra else {
        r.explained = None;
        r.explanation = Some(format!(
            "{head}; who ran on {} is not known: {}",
            cpus_text(cpus),
            r.verdict_unknown.as_deref().unwrap_or("it was not traced")
        ));
        return;
    };
    if extra >= EXPLAINS * excess {
        r.explained = Some(true);
        r.explanation = Some(format!("{head}; {}", noise_text(r, cpus, excess)));
        return;
    }
    r.explained = Some(false);
    let own = match r.cpu_s.zip(typical.cpu_s) {
        Some((c, q)) => format!(
            "; its own CPU time was {} {} than a quiet run's",
            ms((c - q).abs()),
            if c >= q { "more" } else { "less" }
        ),
        None => String::new(),
    };
    r.explanation = Some(format!(
        "{head}, unexplained: others took {} from it ({} more than in a quiet run){own}: the \
         command's own work (its code and data, caches, the CPU's speed)",
        ms(r.taken_s.or(r.others_total_s()).unwrap_or(0.0)),
        ms(extra.max(0.0))
    ));
}

/// The noise of an explained outlier: its top culprit with its time, and
/// the interrupts and steal where they add a tenth of the excess or more.
fn noise_text(r: &Repetition, cpus: &[u32], excess: f64) -> String {
    let mut parts = Vec::new();
    match &r.top {
        Some(Culprit::Task {
            name, s, cpus: on, ..
        }) => parts.push(format!("{name} took {} of {}", ms(*s), cpus_text(on))),
        Some(c) => parts.push(format!(
            "{} took {} of {}",
            c.label(),
            ms(c.s()),
            cpus_text(cpus)
        )),
        None => {}
    }
    let top_is = |want: fn(&Culprit) -> bool| r.top.as_ref().is_some_and(want);
    if let Some(irq) = r.irq_s
        && irq >= 0.1 * excess
        && !top_is(|c| matches!(c, Culprit::Interrupts { .. }))
    {
        parts.push(format!("interrupts {}", ms(irq)));
    }
    if let Some(st) = r.steal_s
        && st >= 0.1 * excess
        && !top_is(|c| matches!(c, Culprit::Host { .. }))
    {
        parts.push(format!("the host stole {}", ms(st)));
    }
    if parts.is_empty() {
        parts.push(format!(
            "others took {} from it",
            ms(r.taken_s.or(r.others_total_s()).unwrap_or(0.0))
        ));
    }
    parts.join(", ")
}
