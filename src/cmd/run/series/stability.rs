//! The series' last words: whether its timings are stable (pyperf calls a
//! benchmark unstable when the standard deviation passes 10 % of the
//! mean), whether the spread is the noise the runs met or the command's
//! own, and the fix for noise that came back run after run.

use serde::Serialize;

use super::repetition::{Repetition, RunVerdict};
use super::spread::Spread;

/// Standard deviation above this share of the mean is unstable, %
/// (pyperf's limit).
pub const UNSTABLE_PCT: f64 = 10.0;

/// One line on the spread.
pub fn stability(all: &Spread, quiet: Option<&Spread>) -> String {
    let Some(cv) = all.sd_pct() else {
        return "stability: unknown (a mean of 0)".into();
    };
    let quiet_cv = quiet.filter(|q| q.runs >= 2).and_then(Spread::sd_pct);
    let noisy = all.runs - quiet.map_or(0, |q| q.runs);
    if cv <= UNSTABLE_PCT {
        return format!(
            "stability: stable: the sd is {cv:.1} % of the mean over all {} runs (pyperf calls a \
             benchmark unstable above {UNSTABLE_PCT:.0} %)",
            all.runs
        );
    }
    match quiet_cv {
        Some(q) if q <= UNSTABLE_PCT => format!(
            "stability: unstable: the sd is {cv:.1} % of the mean over all {} runs, {q:.1} % over \
             the {} quiet ones: the spread is the noise the other {noisy} met",
            all.runs,
            quiet.map_or(0, |s| s.runs)
        ),
        Some(q) => format!(
            "stability: unstable: the sd is {cv:.1} % of the mean over all {} runs and {q:.1} % \
             over the quiet ones too: the spread is the command's own, or noise no CPU of it \
             showed (the host, memory, caches)",
            all.runs
        ),
        None => format!(
            "stability: unstable: the sd is {cv:.1} % of the mean over all {} runs, and too few \
             were quiet to tell the noise from the command's own spread",
            all.runs
        ),
    }
}

/// Noise that disturbed more than one run, and what moves it off.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recurring {
    /// Who (`sh[1234]`, `interrupts (most: timer local_timer)`).
    pub culprit: String,
    /// Runs it was the top noise of a noisy run in.
    pub runs: Vec<u32>,
    /// Of how many runs.
    pub of: usize,
    /// The fix.
    pub fix: String,
}

impl Recurring {
    /// `3 of 10 runs were disturbed by sh[1234] → taskset -apc 0 1234`.
    pub fn text(&self) -> String {
        format!(
            "{} of {} runs were disturbed by {} → {}",
            self.runs.len(),
            self.of,
            self.culprit,
            self.fix
        )
    }
}

/// The top culprits of the noisy runs that came back in two runs or more,
/// the one that took the most time over its runs first (then the most
/// frequent): a loop that took 350 ms in two runs comes before the local
/// timer's 3 ms in three; `fix` gives each one's fix.
pub fn recurring(
    runs: &[Repetition],
    fix: &dyn Fn(&super::repetition::Culprit) -> String,
) -> Vec<Recurring> {
    // (key, time taken over its runs, what is said)
    let mut out: Vec<(String, f64, Recurring)> = Vec::new();
    for r in runs.iter().filter(|r| r.verdict == RunVerdict::Noisy) {
        let Some(c) = &r.top else { continue };
        let key = c.key();
        match out.iter_mut().find(|x| x.0 == key) {
            Some(x) => {
                x.1 += c.s();
                x.2.runs.push(r.run);
            }
            None => out.push((
                key,
                c.s(),
                Recurring {
                    culprit: c.label(),
                    runs: vec![r.run],
                    of: runs.len(),
                    fix: fix(c),
                },
            )),
        }
    }
    out.retain(|x| x.2.runs.len() >= 2);
    out.sort_by(|a, b| {
        b.1.total_cmp(&a.1)
            .then_with(|| b.2.runs.len().cmp(&a.2.runs.len()))
    });
    out.into_iter().map(|x| x.2).collect()
}
