//! Which CPUs are listed, in which order, and how each stands in the
//! interval on screen: the `--cpus` list, the filter and the sort, each
//! CPU's verdict and findings, and the judging again with the CPUs
//! watched on screen.

use crate::model::interval::{CpuRates, Interval};
use crate::noise::{self, CpuVerdict, Finding, Severity, VerdictState};

use super::{Filter, Sort, State, Verdict};

impl State {
    /// Returns the CPUs in row order: the `--cpus` list and the filter,
    /// then the sort.
    pub fn order(&self) -> Vec<u32> {
        let keep = |c: &u32| {
            self.nav.only.as_ref().is_none_or(|o| o.contains(c)) && self.passes_filter(*c)
        };
        let Some(iv) = &self.judged.latest else {
            return self
                .judged
                .machine
                .online
                .iter()
                .copied()
                .filter(keep)
                .collect();
        };
        let rows = iv.cpus.iter().filter(|r| keep(&r.cpu));
        match self.nav.sort {
            Sort::Cpu => rows.map(|r| r.cpu).collect(),
            Sort::Noise => {
                let mut score: Vec<(u32, f64)> = rows
                    .map(|r| (r.cpu, noise_score(r, &self.judged.findings)))
                    .collect();
                score.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                score.into_iter().map(|s| s.0).collect()
            }
            Sort::Busy => {
                let mut v: Vec<(u32, f64)> =
                    rows.map(|r| (r.cpu, r.busy_pct.unwrap_or(-1.0))).collect();
                v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                v.into_iter().map(|s| s.0).collect()
            }
        }
    }

    /// Tells whether `cpu` passes the filter (`f`).
    pub fn passes_filter(&self, cpu: u32) -> bool {
        match self.nav.filter {
            Filter::All => true,
            Filter::Watched => self.is_watched(cpu),
            Filter::Noisy => self.verdict_of(cpu).is_some_and(|v| v > Verdict::Quiet),
        }
    }

    /// Returns how `cpu` stands in the interval on screen, from its verdict
    /// (`None` before the first interval or when the verdict is unknown): a
    /// noisy CPU is WARN or, with a critical finding, CRIT; a quiet one
    /// takes the severity of a WARN or CRIT setting that concerns it (a
    /// governor on a watched CPU), else quiet.
    pub fn verdict_of(&self, cpu: u32) -> Option<Verdict> {
        self.judged.latest.as_ref()?;
        let v = self.cpu_verdict(cpu)?;
        let worst = self.tags_of(cpu).map(|f| f.severity).max();
        Some(match (v.state, worst) {
            (VerdictState::Unknown, _) => return None,
            (_, Some(Severity::Crit)) => Verdict::Crit,
            (VerdictState::Noisy, _) | (_, Some(Severity::Warn)) => Verdict::Warn,
            (VerdictState::Quiet, _) => Verdict::Quiet,
        })
    }

    /// Says why no CPU is listed, and what to do, when the filter or
    /// `--cpus` leaves none.
    pub fn why_no_rows(&self) -> Option<String> {
        if !self.order().is_empty() {
            return None;
        }
        Some(match self.nav.filter {
            Filter::Watched if self.judged.watched.is_empty() => {
                "only watched CPUs are shown, and none is watched: f shows all CPUs, \
                 then m watches the selected one (or start with --watch 2-5)"
                    .into()
            }
            Filter::Watched => "no watched CPU is online or within --cpus: f shows all CPUs".into(),
            Filter::Noisy if self.judged.latest.is_none() => {
                "only noisy CPUs are shown, and no interval has been judged yet: f shows all CPUs"
                    .into()
            }
            Filter::Noisy => {
                "only noisy CPUs are shown, and no CPU has a finding in this interval: \
                 f shows all CPUs"
                    .into()
            }
            Filter::All if self.judged.machine.online.is_empty() => {
                "no online CPU found in this tree (check --root or --sysfs, u: why)".into()
            }
            Filter::All => "no online CPU is within --cpus: widen --cpus".into(),
        })
    }

    /// Returns the rates of one CPU in the interval on screen.
    pub fn rates(&self, cpu: u32) -> Option<&CpuRates> {
        self.judged.latest.as_ref()?.cpu(cpu)
    }

    /// Returns the findings of the interval on screen that touch `cpu`.
    pub fn tags_of(&self, cpu: u32) -> impl Iterator<Item = &Finding> {
        self.judged.findings.iter().filter(move |f| f.touches(cpu))
    }

    /// Judges an interval with the CPUs watched on screen (the same pure
    /// rules the pipeline runs).
    pub(super) fn judge(&self, iv: &Interval) -> noise::Judgement {
        noise::judge(
            iv,
            &noise::Context {
                machine: &self.judged.machine,
                watched: &self.judged.watched,
                config: &self.judged.config,
                trace: self.judged.trace.as_ref(),
            },
        )
    }

    /// Returns a CPU's verdict over the interval on screen.
    pub fn cpu_verdict(&self, cpu: u32) -> Option<&CpuVerdict> {
        noise::verdict_in(&self.judged.verdicts, cpu)
    }

    /// Tells whether a CPU was judged noisy.
    pub fn is_noisy(&self, cpu: u32) -> bool {
        self.cpu_verdict(cpu)
            .is_some_and(|v| v.state == VerdictState::Noisy)
    }

    /// Tells whether `cpu` is watched.
    pub fn is_watched(&self, cpu: u32) -> bool {
        self.judged.watched.contains(&cpu)
    }
}

/// Orders CPUs for "noisiest first": each finding weighs by severity far
/// above any rate, then device and IPI interrupts, softirqs, switches and
/// migrations (ten switches' worth each) per second.
pub fn noise_score(r: &CpuRates, findings: &[Finding]) -> f64 {
    let tags: f64 = findings
        .iter()
        .filter(|f| f.touches(r.cpu))
        .map(|f| match f.severity {
            Severity::Crit => 1e9,
            Severity::Warn => 1e8,
            Severity::Info => 1e7,
        })
        .sum();
    let rates = [
        r.dev_per_s,
        r.ipi_per_s,
        r.softirq_per_s,
        r.csw_per_s,
        r.mig_per_s.map(|m| m * 10.0),
    ];
    tags + rates.iter().flatten().sum::<f64>()
}
