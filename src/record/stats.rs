//! Running statistics over a recording, gathered in one streaming pass:
//! per CPU and for the machine, each column's count, mean, spread, min and
//! max; the quantiles of the frequency and busy columns (kept as `f32`, 4
//! bytes a row each: the only figures that grow with the file); the
//! verdicts and findings seen, with when.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::record::columns::{Kind, Schema};
use crate::record::reader::{Pass, ReadError, Recording, Row};

/// Count, sum, sum of squares, min and max of one column.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Acc {
    /// Known values.
    pub n: u64,
    sum: f64,
    sumsq: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
}

impl Acc {
    /// Adds a value.
    pub fn add(&mut self, v: f64) {
        if self.n == 0 {
            self.min = v;
            self.max = v;
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        self.n += 1;
        self.sum += v;
        self.sumsq += v * v;
    }

    /// Mean of the known values.
    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum / self.n as f64)
    }

    /// Sum of the known values.
    pub fn sum(&self) -> Option<f64> {
        (self.n > 0).then_some(self.sum)
    }

    /// Standard deviation of the values (0 for one value).
    pub fn sd(&self) -> Option<f64> {
        let m = self.mean()?;
        let var = (self.sumsq / self.n as f64 - m * m).max(0.0);
        Some(var.sqrt())
    }
}

/// min / median / p99 / max of one column.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Quantiles {
    /// Smallest.
    pub min: f64,
    /// Median.
    pub median: f64,
    /// 99th percentile (nearest rank).
    pub p99: f64,
    /// Largest.
    pub max: f64,
}

/// Columns whose quantiles the report shows (its first table's layout, in
/// its order: the catalogue's figures summed up by their quantiles).
pub const QUANTILE_COLUMNS: [&str; 3] = ["avg_mhz", "bzy_mhz", "busy_pct"];

fn quantiles(v: &mut [f32]) -> Option<Quantiles> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable_by(f32::total_cmp);
    let rank = |p: f64| {
        let k = (p * v.len() as f64).ceil() as usize;
        f64::from(v[k.clamp(1, v.len()) - 1])
    };
    Some(Quantiles {
        min: f64::from(v[0]),
        median: rank(0.5),
        p99: rank(0.99),
        max: f64::from(v[v.len() - 1]),
    })
}

/// Statistics of one CPU or of the machine row.
#[derive(Debug, Clone, Default)]
pub struct Entity {
    /// Rows seen.
    pub rows: u64,
    /// One accumulator per numeric column.
    pub cols: Vec<Acc>,
    /// Machine row only: values per CPU (sums divided by the CPUs of the
    /// interval), so machines of different sizes compare.
    pub per_cpu: Vec<Acc>,
    quant: Vec<Vec<f32>>,
    /// Verdict → rows.
    pub verdicts: BTreeMap<String, u64>,
}

/// Where and when a finding was seen.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Seen {
    /// The finding id.
    pub id: String,
    /// Rows (CPU-intervals) that carried it.
    pub rows: u64,
    /// Intervals in which it was active.
    pub intervals: u64,
    /// CPUs it was seen on (the machine row is not a CPU).
    pub cpus: Vec<u32>,
    /// First time seen (`time` column).
    pub first: String,
    /// Last time seen.
    pub last: String,
    /// `t_s` of the first and last sighting.
    pub first_t_s: f64,
    /// See `first_t_s`.
    pub last_t_s: f64,
    #[serde(skip)]
    last_counted_t: f64,
}

/// Everything one pass gathered.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// Numeric column names.
    pub columns: Vec<String>,
    /// `None` is the machine row.
    pub entities: BTreeMap<Option<u32>, Entity>,
    /// Quantiles per entity, in [`QUANTILE_COLUMNS`] order.
    pub quantiles: BTreeMap<Option<u32>, Vec<Option<Quantiles>>>,
    /// Findings seen, in order of first sighting.
    pub findings: Vec<Seen>,
    /// Intervals (machine rows).
    pub intervals: u64,
    /// `time` and `t_s` of the first and last row.
    pub first: Option<(String, f64)>,
    /// `dt_s` of the first row: its interval began that much before it.
    pub first_dt: Option<f64>,
    /// See `first`.
    pub last: Option<(String, f64)>,
    /// Mean interval length.
    pub dt: Acc,
    /// The reader's notes.
    pub notes: Vec<String>,
    /// The runs of a series the intervals were tagged with (`run
    /// --repeat`), where the recording is one.
    pub runs: Option<RunsSeen>,
}

/// The runs of a series a recording holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RunsSeen {
    /// The first run's number.
    pub first: u32,
    /// The last run's number.
    pub last: u32,
    /// Runs seen (each change of number starts one).
    pub runs: u64,
}

impl Stats {
    /// Reads a recording once and gathers its statistics.
    pub fn gather(rec: &Recording) -> Result<Stats, ReadError> {
        let ncol = rec.numeric.len();
        let qcols: Vec<Option<usize>> = QUANTILE_COLUMNS.iter().map(|c| rec.col(c)).collect();
        let sums: Vec<bool> = {
            // which machine-row columns are sums over CPUs
            let states: Vec<String> = rec.states.clone();
            let schema = Schema::with_states(states);
            rec.numeric
                .iter()
                .map(|n| {
                    schema
                        .columns
                        .iter()
                        .any(|c| c.name == *n && matches!(c.kind, Kind::Num(f) if f.sums_cpus()))
                })
                .collect()
        };
        let mut st = Stats {
            columns: rec.numeric.clone(),
            notes: rec.notes.clone(),
            ..Stats::default()
        };
        let mut cpu_rows_in_interval = 0u32;
        let mut findings: BTreeMap<String, usize> = BTreeMap::new();
        let pass: Pass = rec.for_each(|row: &Row<'_>| {
            if st.first.is_none() {
                st.first = Some((row.time.to_string(), row.t_s));
                st.first_dt = row.dt_s;
            }
            let e = st.entities.entry(row.cpu).or_insert_with(|| Entity {
                cols: vec![Acc::default(); ncol],
                quant: vec![Vec::new(); qcols.len()],
                per_cpu: if row.cpu.is_none() {
                    vec![Acc::default(); ncol]
                } else {
                    Vec::new()
                },
                ..Entity::default()
            });
            e.rows += 1;
            for (acc, v) in e.cols.iter_mut().zip(row.values) {
                if let Some(v) = v {
                    acc.add(*v);
                }
            }
            for (q, c) in e.quant.iter_mut().zip(&qcols) {
                if let Some(v) = c.and_then(|c| row.values[c]) {
                    q.push(v as f32);
                }
            }
            if !row.verdict.is_empty() {
                if let Some(n) = e.verdicts.get_mut(row.verdict) {
                    *n += 1;
                } else {
                    e.verdicts.insert(row.verdict.to_string(), 1);
                }
            }
            if row.cpu.is_none() {
                let n = f64::from(cpu_rows_in_interval.max(1));
                for ((acc, v), sum) in e.per_cpu.iter_mut().zip(row.values).zip(&sums) {
                    if let Some(v) = v {
                        acc.add(if *sum { v / n } else { *v });
                    }
                }
                cpu_rows_in_interval = 0;
                st.intervals += 1;
                if let Some(r) = row.repetition {
                    match &mut st.runs {
                        Some(seen) if seen.last == r => {}
                        Some(seen) => {
                            seen.last = r;
                            seen.runs += 1;
                        }
                        None => {
                            st.runs = Some(RunsSeen {
                                first: r,
                                last: r,
                                runs: 1,
                            });
                        }
                    }
                }
                if let Some(dt) = row.dt_s {
                    st.dt.add(dt);
                }
            } else {
                cpu_rows_in_interval += 1;
            }
            for id in row.finding_ids() {
                let k = if let Some(k) = findings.get(id) {
                    *k
                } else {
                    findings.insert(id.to_string(), st.findings.len());
                    st.findings.push(Seen {
                        id: id.to_string(),
                        rows: 0,
                        intervals: 0,
                        cpus: Vec::new(),
                        first: row.time.to_string(),
                        last: String::new(),
                        first_t_s: row.t_s,
                        last_t_s: row.t_s,
                        last_counted_t: f64::NAN,
                    });
                    st.findings.len() - 1
                };
                let s = &mut st.findings[k];
                s.rows += 1;
                if s.last_counted_t.to_bits() != row.t_s.to_bits() {
                    s.intervals += 1;
                    s.last_counted_t = row.t_s;
                }
                if let Some(c) = row.cpu
                    && let Err(at) = s.cpus.binary_search(&c)
                {
                    s.cpus.insert(at, c);
                }
                if s.last_t_s.to_bits() != row.t_s.to_bits() || s.last.is_empty() {
                    s.last = row.time.to_string();
                    s.last_t_s = row.t_s;
                }
            }
            // one allocation for the whole pass, not one a row
            match &mut st.last {
                Some((time, t)) => {
                    time.clear();
                    time.push_str(row.time);
                    *t = row.t_s;
                }
                None => st.last = Some((row.time.to_string(), row.t_s)),
            }
        })?;
        st.notes.extend(pass.notes);
        for (k, e) in &mut st.entities {
            let q = e.quant.iter_mut().map(|v| quantiles(v)).collect();
            e.quant = Vec::new();
            st.quantiles.insert(*k, q);
        }
        Ok(st)
    }

    /// Returns a column's accumulator for an entity.
    pub fn acc(&self, who: Option<u32>, col: &str) -> Option<&Acc> {
        let i = self.columns.iter().position(|c| c == col)?;
        self.entities.get(&who)?.cols.get(i)
    }

    /// Returns a column's mean for an entity.
    pub fn mean(&self, who: Option<u32>, col: &str) -> Option<f64> {
        self.acc(who, col)?.mean()
    }

    /// Returns the machine row's per-CPU accumulator of a column.
    pub fn machine_per_cpu(&self, col: &str) -> Option<&Acc> {
        let i = self.columns.iter().position(|c| c == col)?;
        self.entities.get(&None)?.per_cpu.get(i)
    }

    /// The CPUs seen, ascending.
    pub fn cpus(&self) -> Vec<u32> {
        self.entities.keys().filter_map(|k| *k).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quantile_columns_are_the_catalogues() {
        let mut want: Vec<&str> = crate::metric::ALL
            .iter()
            .filter(|f| f.over_time == crate::metric::OverTime::Quantiles)
            .map(|f| f.csv)
            .collect();
        let mut have = QUANTILE_COLUMNS.to_vec();
        want.sort_unstable();
        have.sort_unstable();
        assert_eq!(have, want);
    }
}
