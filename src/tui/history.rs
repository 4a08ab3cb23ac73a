//! What the detail view charts: the last `HISTORY_LEN` values of each
//! CPU's figures, and the busy-clock range seen over the whole session.

use std::collections::{BTreeMap, VecDeque};

use crate::model::interval::{CpuRates, Interval};

/// Samples kept per series: ten minutes at the default 1 s interval.
pub const HISTORY_LEN: usize = 600;

/// One figure over time, oldest first; unknown samples stay `None`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series(VecDeque<Option<f32>>);

impl Series {
    /// Appends a value, dropping the oldest beyond `HISTORY_LEN`.
    pub fn push(&mut self, v: Option<f64>) {
        if self.0.len() == HISTORY_LEN {
            self.0.pop_front();
        }
        self.0
            .push_back(v.filter(|x| x.is_finite()).map(|x| x as f32));
    }

    /// Returns the last `n` values, oldest first.
    pub fn last(&self, n: usize) -> impl Iterator<Item = Option<f32>> + '_ {
        self.0.iter().skip(self.0.len().saturating_sub(n)).copied()
    }

    /// Returns the largest known value among the last `n`.
    pub fn max_of_last(&self, n: usize) -> Option<f32> {
        self.last(n).flatten().reduce(f32::max)
    }

    /// Returns how many samples are held.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Tells whether no sample is held.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The series of one CPU.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuHistory {
    /// `Avg_MHz`.
    pub avg: Series,
    /// `Bzy_MHz`.
    pub bzy: Series,
    /// Busy %.
    pub busy: Series,
    /// All interrupts per second.
    pub irq: Series,
    /// Device interrupts per second.
    pub dev: Series,
    /// Local timer interrupts per second.
    pub loc: Series,
    /// Context switches per second.
    pub csw: Series,
    /// Residency % of each idle state, by state index.
    pub idle: Vec<Series>,
    /// Lowest `Bzy_MHz` seen this session.
    pub min_bzy: Option<f64>,
    /// Highest `Bzy_MHz` seen this session.
    pub max_bzy: Option<f64>,
}

impl CpuHistory {
    fn record(&mut self, r: &CpuRates) {
        self.avg.push(r.avg_mhz);
        self.bzy.push(r.bzy_mhz);
        self.busy.push(r.busy_pct);
        self.irq.push(r.irq_per_s);
        self.dev.push(r.dev_per_s);
        self.loc.push(r.loc_per_s);
        self.csw.push(r.csw_per_s);
        // a state that appears later starts with as many unknowns as came before
        let before = self.avg.len() - 1;
        while self.idle.len() < r.idle.len() {
            let mut s = Series::default();
            for _ in 0..before {
                s.push(None);
            }
            self.idle.push(s);
        }
        for (i, s) in self.idle.iter_mut().enumerate() {
            s.push(r.idle.get(i).and_then(|st| st.pct));
        }
        if let Some(f) = r.bzy_mhz.filter(|f| f.is_finite() && *f > 0.0) {
            self.min_bzy = Some(self.min_bzy.map_or(f, |m| m.min(f)));
            self.max_bzy = Some(self.max_bzy.map_or(f, |m| m.max(f)));
        }
    }
}

/// Every CPU's history.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct History {
    cpus: BTreeMap<u32, CpuHistory>,
    /// Highest `Bzy_MHz` of any CPU this session: the bar scale when the
    /// machine's maximum is unknown.
    pub max_bzy: Option<f64>,
}

impl History {
    /// Adds one interval; a CPU first seen now starts its series here.
    pub fn record(&mut self, iv: &Interval) {
        for r in &iv.cpus {
            let h = self.cpus.entry(r.cpu).or_default();
            h.record(r);
            if let Some(m) = h.max_bzy {
                self.max_bzy = Some(self.max_bzy.map_or(m, |x| x.max(m)));
            }
        }
    }

    /// Returns one CPU's history.
    pub fn cpu(&self, cpu: u32) -> Option<&CpuHistory> {
        self.cpus.get(&cpu)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::interval::IdleRate;
    use crate::os::hw::Stamp;

    fn iv(bzy: Option<f64>, states: usize) -> Interval {
        let idle = (0..states)
            .map(|i| IdleRate {
                name: format!("C{i}").into(),
                pct: Some(10.0 * (i + 1) as f64),
                per_s: None,
                above_per_s: None,
                below_per_s: None,
                latency_us: None,
                residency_us: None,
                disabled: None,
            })
            .collect();
        Interval {
            from: Stamp::default(),
            to: Stamp::default(),
            dt_s: 1.0,
            freq_source: None,
            cpus: vec![CpuRates {
                cpu: 3,
                bzy_mhz: bzy,
                idle,
                ..CpuRates::default()
            }],
            pkgs: Vec::new(),
            irqs: Vec::new(),
            softirqs: Vec::new(),
            gone: Vec::new(),
        }
    }

    #[test]
    fn series_keep_the_last_history_len_values() {
        let mut s = Series::default();
        for i in 0..(HISTORY_LEN + 5) {
            s.push(Some(i as f64));
        }
        assert_eq!(s.len(), HISTORY_LEN);
        assert_eq!(
            s.last(2).collect::<Vec<_>>(),
            vec![Some(603.0), Some(604.0)]
        );
        assert_eq!(s.last(1).next(), Some(Some((HISTORY_LEN + 4) as f32)));
        s.push(Some(f64::NAN));
        assert_eq!(s.last(1).next(), Some(None), "NaN is stored as unknown");
    }

    #[test]
    fn min_max_ignore_unknown_and_late_states_are_padded() {
        let mut h = History::default();
        h.record(&iv(Some(2400.0), 1));
        h.record(&iv(None, 1));
        h.record(&iv(Some(3100.0), 2));
        let c = h.cpu(3).unwrap();
        assert_eq!((c.min_bzy, c.max_bzy), (Some(2400.0), Some(3100.0)));
        assert_eq!(h.max_bzy, Some(3100.0));
        assert_eq!(c.idle.len(), 2);
        assert_eq!(
            c.idle[1].last(3).collect::<Vec<_>>(),
            vec![None, None, Some(20.0)]
        );
        assert_eq!(c.bzy.max_of_last(2), Some(3100.0));
    }
}
