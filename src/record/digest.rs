//! `report`: what one recording saw, per CPU and for the machine, as a text
//! table, Markdown or JSON.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use crate::metric::{self, Each, OverTime};
use crate::record::reader::{ReadError, Recording};
use crate::record::stats::{Quantiles, Seen, Stats};
use crate::record::table::{Table, num};

/// An idle state as the report lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StateCol {
    /// Kernel name (column stem when there is no sidecar).
    pub name: String,
    /// Column stem.
    pub column: String,
    /// Exit latency, µs.
    pub latency_us: Option<u64>,
    /// CPUs on which it is disabled.
    pub disabled_cpus: Vec<u32>,
}

/// One CPU's (or the machine's) figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EntityReport {
    /// CPU number, or `all`.
    pub cpu: String,
    /// Rows read.
    pub rows: u64,
    /// Quantiles of `avg_mhz`.
    pub avg_mhz: Option<Quantiles>,
    /// Quantiles of `bzy_mhz`.
    pub bzy_mhz: Option<Quantiles>,
    /// Quantiles of `busy_pct`.
    pub busy_pct: Option<Quantiles>,
    /// Mean of every other column (machine row: its own figures, where
    /// rates are sums over the CPUs); `None` when never known.
    pub means: BTreeMap<String, Option<f64>>,
    /// SMIs and throttle events over the whole recording.
    pub totals: BTreeMap<String, Option<f64>>,
    /// Verdict → rows.
    pub verdicts: BTreeMap<String, u64>,
}

/// The report of one recording.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The CSV.
    pub file: String,
    /// CPU model, from the sidecar.
    pub model: Option<String>,
    /// Host name, from the sidecar.
    pub host: Option<String>,
    /// CPUs seen.
    pub cpus: usize,
    /// Intervals (machine rows).
    pub intervals: u64,
    /// Mean interval, s, to the millisecond.
    #[serde(serialize_with = "millis")]
    pub interval_s: Option<f64>,
    /// When the first interval began: its row's time less its length
    /// (the row's time where that cannot be read).
    pub first: Option<String>,
    /// When the last interval ended: the last row's time.
    pub last: Option<String>,
    /// Seconds from the first interval's start to the last one's end, to
    /// the millisecond the times are written in.
    #[serde(serialize_with = "millis")]
    pub duration_s: Option<f64>,
    /// Idle states.
    pub states: Vec<StateCol>,
    /// Machine first, then each CPU.
    pub rows: Vec<EntityReport>,
    /// Findings seen.
    pub findings: Vec<Seen>,
    /// Notes from reading.
    pub notes: Vec<String>,
    /// The runs of a series the recording holds (`run --repeat`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repetitions: Option<crate::record::stats::RunsSeen>,
}

/// Writes seconds to the millisecond, as the recording's times are: the
/// sum of rows' lengths is no more exact than that (`4.9999937999999995`).
#[expect(
    clippy::ref_option,
    reason = "serde's serialize_with hands the field by reference"
)]
fn millis<S: serde::Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(x) => s.serialize_f64((x * 1000.0).round() / 1000.0),
        None => s.serialize_none(),
    }
}

/// Output format of `report` and `compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Aligned text.
    Table,
    /// Markdown.
    Md,
    /// JSON.
    Json,
}

/// The idle states of a recording, with latencies from its sidecar.
pub fn states_of(rec: &Recording) -> Vec<StateCol> {
    rec.states
        .iter()
        .map(|stem| {
            let fact = rec
                .sidecar
                .as_ref()
                .and_then(|s| s.facts.idle_states.iter().find(|f| f.column == *stem));
            StateCol {
                name: fact.map_or_else(|| stem.to_uppercase(), |f| f.name.clone()),
                column: stem.clone(),
                latency_us: fact.and_then(|f| f.latency_us),
                disabled_cpus: fact.map(|f| f.disabled_cpus.clone()).unwrap_or_default(),
            }
        })
        .collect()
}

impl Report {
    /// Reads a recording and builds its report.
    pub fn build(path: &Path) -> Result<Report, ReadError> {
        let rec = Recording::open(path)?;
        let st = Stats::gather(&rec)?;
        if st.intervals == 0 {
            return Err(ReadError {
                path: rec.path.clone(),
                why: "no interval recorded (a header only): nothing to report".into(),
            });
        }
        Ok(Report::from_stats(&rec, &st))
    }

    /// Builds the report from gathered statistics.
    pub fn from_stats(rec: &Recording, st: &Stats) -> Report {
        let mut rows = Vec::new();
        for (who, e) in &st.entities {
            let q = st.quantiles.get(who);
            let qa = |i: usize| q.and_then(|q| q.get(i).copied().flatten());
            let mut means = BTreeMap::new();
            let mut totals = BTreeMap::new();
            for (i, c) in st.columns.iter().enumerate() {
                let acc = e.cols[i];
                // as the catalogue sums the figure up over time; columns
                // that are no figure (`t_s`, `dt_s`) by their mean
                match metric::by_csv(c, &rec.states).map(|f| f.over_time) {
                    Some(OverTime::None | OverTime::Quantiles) => {}
                    Some(OverTime::Total) => {
                        totals.insert(c.clone(), acc.sum());
                    }
                    Some(OverTime::Mean) | None => {
                        means.insert(c.clone(), acc.mean());
                    }
                }
            }
            rows.push(EntityReport {
                cpu: who.map_or_else(|| "all".to_string(), |c| c.to_string()),
                rows: e.rows,
                avg_mhz: qa(0),
                bzy_mhz: qa(1),
                busy_pct: qa(2),
                means,
                totals,
                verdicts: e.verdicts.clone(),
            });
        }
        let sc = rec.sidecar.as_ref();
        // the first row ends the first interval: the span begins its
        // length earlier, and so does the time shown for it
        let first_dt = st.first_dt.or(st.dt.mean()).unwrap_or(0.0);
        let duration_s = match (&st.first, &st.last) {
            (Some(a), Some(b)) => Some(b.1 - a.1 + first_dt),
            _ => None,
        };
        let first = st.first.as_ref().map(|(time, _)| {
            crate::record::columns::parse_iso_time(time)
                .and_then(|ns| ns.checked_sub((first_dt * 1e9).round() as u64))
                .map_or_else(|| time.clone(), crate::record::columns::iso_time)
        });
        Report {
            file: rec.path.display().to_string(),
            model: sc.and_then(|s| s.facts.model.clone()),
            host: sc.and_then(|s| s.facts.hostname.clone()),
            cpus: st.cpus().len(),
            intervals: st.intervals,
            interval_s: st.dt.mean(),
            first,
            last: st.last.as_ref().map(|f| f.0.clone()),
            duration_s,
            states: states_of(rec),
            rows,
            findings: st.findings.clone(),
            notes: st.notes.clone(),
            repetitions: st.runs,
        }
    }

    /// Renders the report.
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Json => serde_json::to_string_pretty(self).unwrap_or_default() + "\n",
            Format::Table => self.text(false, None),
            Format::Md => self.text(true, None),
        }
    }

    /// Renders as text or Markdown; `limit` keeps at most that many CPU
    /// rows (the noisiest), for the summary printed on quit.
    pub fn text(&self, md: bool, limit: Option<usize>) -> String {
        let mut out = String::new();
        let title = |out: &mut String, t: &str| {
            if md {
                let _ = write!(out, "\n### {t}\n\n");
            } else {
                let _ = write!(out, "\n{t}\n");
            }
        };
        let tbl = |t: &Table| if md { t.markdown() } else { t.text() };
        if md {
            let _ = write!(out, "## noisetop report: `{}`\n\n", self.file);
        } else {
            let _ = writeln!(out, "noisetop report: {}", self.file);
        }
        let _ = writeln!(
            out,
            "{}{} CPUs · {} intervals of {} s · {} → {}{}",
            self.model
                .as_ref()
                .map_or(String::new(), |m| format!("{m} · ")),
            self.cpus,
            self.intervals,
            num(self.interval_s),
            self.first.as_deref().unwrap_or("?"),
            self.last.as_deref().unwrap_or("?"),
            self.duration_s
                .map_or(String::new(), |d| format!(" ({} s)", num(Some(d))))
        );
        for n in &self.notes {
            let _ = writeln!(out, "note: {n}");
        }
        if let Some(r) = self.repetitions {
            let _ = writeln!(
                out,
                "a series of {} runs ({}–{}), each interval tagged with its run in the \
                 `repetition` column",
                r.runs, r.first, r.last
            );
        }
        let rows = self.shown_rows(limit);
        let hidden = self.rows.len() - rows.len();
        let q = |q: Option<Quantiles>| match q {
            Some(q) => [
                num(Some(q.min)),
                num(Some(q.median)),
                num(Some(q.p99)),
                num(Some(q.max)),
            ],
            None => ["?".into(), "?".into(), "?".into(), "?".into()],
        };
        title(&mut out, "Frequency and load (min / median / p99 / max)");
        let mut t = Table::new(&[
            "CPU", "Avg_MHz", "med", "p99", "max", "Bzy_MHz", "med", "p99", "max", "Busy%", "med",
            "p99", "max",
        ]);
        for r in &rows {
            let mut cells = vec![r.cpu.clone()];
            cells.extend(q(r.avg_mhz));
            cells.extend(q(r.bzy_mhz));
            cells.extend(q(r.busy_pct));
            t.row(cells);
        }
        out.push_str(&tbl(&t));
        if !self.states.is_empty() {
            let lat: Vec<String> = self
                .states
                .iter()
                .map(|s| {
                    let mut l = format!(
                        "{} {} µs",
                        s.name,
                        s.latency_us.map_or("?".to_string(), |l| l.to_string())
                    );
                    if !s.disabled_cpus.is_empty() {
                        let _ = write!(
                            l,
                            " (disabled on {})",
                            crate::base::cpulist::format(&s.disabled_cpus)
                        );
                    }
                    l
                })
                .collect();
            title(
                &mut out,
                &format!(
                    "Idle states: mean % of time and entries/s (exit latency: {})",
                    lat.join(", ")
                ),
            );
            // each cpuidle figure for every state, then the hardware ones
            let mut cols: Vec<(String, String)> = Vec::new();
            for f in metric::ALL.iter().filter(|f| f.report.is_some()) {
                if f.each == Each::IdleState {
                    cols.extend(self.states.iter().map(|s| {
                        (
                            metric::fill(f.name, &s.name, &s.column),
                            metric::fill(f.csv, &s.name, &s.column),
                        )
                    }));
                }
            }
            for f in metric::ALL.iter().filter(|f| f.report.is_some()) {
                if let Each::CoreState(list) = f.each {
                    cols.extend(
                        list.iter()
                            .map(|s| (metric::fill(f.name, s.state, ""), s.csv.to_string())),
                    );
                }
            }
            let mut head = vec!["CPU".to_string()];
            head.extend(cols.iter().map(|c| c.0.clone()));
            let mut t = Table::new(&head);
            for r in &rows {
                let mut cells = vec![r.cpu.clone()];
                cells.extend(
                    cols.iter()
                        .map(|(_, k)| num(r.means.get(k).copied().flatten())),
                );
                t.row(cells);
            }
            // hardware columns no CPU had are dropped
            drop_unknown_columns(&mut t);
            out.push_str(&tbl(&t));
        }
        title(
            &mut out,
            "Interrupts and scheduling: mean per s (the machine row sums the CPUs)",
        );
        let cols: Vec<(&str, &str)> = metric::ALL
            .iter()
            .filter(|f| f.each == Each::One)
            .filter_map(|f| Some((f.report_header()?, f.csv)))
            .collect();
        let mut t = Table::new(
            &std::iter::once("CPU")
                .chain(cols.iter().map(|c| c.0))
                .collect::<Vec<_>>(),
        );
        for r in &rows {
            let mut cells = vec![r.cpu.clone()];
            for &(_, c) in &cols {
                let v = r
                    .means
                    .get(c)
                    .copied()
                    .or_else(|| r.totals.get(c).copied())
                    .flatten();
                cells.push(num(v));
            }
            t.row(cells);
        }
        drop_unknown_columns(&mut t);
        out.push_str(&tbl(&t));
        if hidden > 0 {
            let _ = writeln!(
                out,
                "({hidden} quieter CPUs not shown: `noisetop report FILE` lists every CPU)"
            );
        }
        title(&mut out, "Verdicts (rows)");
        let mut t = Table::new(&["CPU", "verdicts"]);
        for r in &rows {
            let v: Vec<String> = r.verdicts.iter().map(|(k, n)| format!("{k} {n}")).collect();
            t.row(vec![
                r.cpu.clone(),
                if v.is_empty() {
                    "-".into()
                } else {
                    v.join(", ")
                },
            ]);
        }
        out.push_str(&tbl(&t));
        title(&mut out, "Findings");
        if self.findings.is_empty() {
            out.push_str("none seen\n");
        } else {
            let mut t = Table::new(&["finding", "intervals", "CPUs", "first", "last"]);
            for f in &self.findings {
                t.row(vec![
                    f.id.clone(),
                    format!("{} of {}", f.intervals, self.intervals),
                    if f.cpus.is_empty() {
                        "machine".into()
                    } else {
                        crate::base::cpulist::format(&f.cpus)
                    },
                    f.first.clone(),
                    f.last.clone(),
                ]);
            }
            out.push_str(&tbl(&t));
        }
        out
    }

    /// The machine row and the CPUs to show: all, or the `limit` with the
    /// most findings and interrupts.
    fn shown_rows(&self, limit: Option<usize>) -> Vec<&EntityReport> {
        let Some(limit) = limit.filter(|l| *l + 1 < self.rows.len()) else {
            return self.rows.iter().collect();
        };
        let flagged = |r: &EntityReport| {
            let cpu: Option<u32> = r.cpu.parse().ok();
            self.findings
                .iter()
                .filter(|f| cpu.is_some_and(|c| f.cpus.contains(&c)))
                .map(|f| f.rows)
                .sum::<u64>()
        };
        let irq = |r: &EntityReport| r.means.get("irq_per_s").copied().flatten().unwrap_or(0.0);
        let mut cpus: Vec<&EntityReport> = self.rows.iter().filter(|r| r.cpu != "all").collect();
        cpus.sort_by(|a, b| flagged(b).cmp(&flagged(a)).then(irq(b).total_cmp(&irq(a))));
        cpus.truncate(limit);
        cpus.sort_by_key(|r| r.cpu.parse::<u32>().unwrap_or(0));
        self.rows
            .iter()
            .filter(|r| r.cpu == "all")
            .chain(cpus)
            .collect()
    }
}

/// Removes the columns (after the first) in which every cell is `?`.
fn drop_unknown_columns(t: &mut Table) {
    let n = t.head.len();
    let keep: Vec<bool> = (0..n)
        .map(|i| {
            i == 0 || t.rows.is_empty() || t.rows.iter().any(|r| r.get(i).is_some_and(|c| c != "?"))
        })
        .collect();
    let filter = |v: &mut Vec<String>| {
        let mut i = 0;
        v.retain(|_| {
            i += 1;
            keep[i - 1]
        });
    };
    filter(&mut t.head);
    for r in &mut t.rows {
        filter(r);
    }
}

/// The one-screen summary printed when a recording session ends: the
/// report table with the machine and the 16 noisiest CPUs.
pub fn summary(path: &Path) -> String {
    match Report::build(path) {
        Ok(r) => r.text(false, Some(16)),
        Err(e) => format!("cannot summarise the recording: {e}\n"),
    }
}
