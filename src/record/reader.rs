//! Reads a recording back, one row at a time: the file is never held whole.
//!
//! Reading is forgiving where a recording can be damaged in life (a last
//! line cut short by a crash or a full disk, columns added or missing) and
//! strict where the file is not a recording at all: each case is a clear
//! message, never a panic.

use std::path::{Path, PathBuf};

use crate::record::columns::Schema;
use crate::record::sidecar::Sidecar;

/// Why a recording cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {why}")]
pub struct ReadError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong, in words.
    pub why: String,
}

/// Columns that are not numbers (besides `time` and `t_s`); `repetition`
/// is a series' (`run --repeat`) and read apart.
const TEXT: [&str; 8] = [
    "cpu",
    "dt_s",
    "verdict",
    "findings",
    "why",
    "intruders",
    "intruder_cgroups",
    crate::record::columns::REPETITION,
];

/// Columns without which a file is not a recording.
pub const REQUIRED: [&str; 4] = ["time", "t_s", "dt_s", "cpu"];

/// One row as the reader hands it out; borrowed, valid during the call.
#[derive(Debug)]
pub struct Row<'a> {
    /// `time` as written.
    pub time: &'a str,
    /// Seconds since the recording began.
    pub t_s: f64,
    /// Length of the interval, s.
    pub dt_s: Option<f64>,
    /// The CPU; `None` for the machine row.
    pub cpu: Option<u32>,
    /// Numeric cells in [`Recording::numeric`] order; `None` is empty.
    pub values: &'a [Option<f64>],
    /// `verdict`.
    pub verdict: &'a str,
    /// `findings`, `;`- or space-separated.
    pub findings: &'a str,
    /// The run of a series the interval belongs to (`None` in a
    /// recording of no series, or where the cell is empty).
    pub repetition: Option<u32>,
}

impl Row<'_> {
    /// Returns the finding ids.
    pub fn finding_ids(&self) -> impl Iterator<Item = &str> {
        self.findings
            .split([';', ' '])
            .map(str::trim)
            .filter(|s| !s.is_empty())
    }
}

/// An opened recording: header read, sidecar (if any) checked.
#[derive(Debug)]
pub struct Recording {
    /// The CSV.
    pub path: PathBuf,
    /// The sidecar, when there is one.
    pub sidecar: Option<Sidecar>,
    /// Numeric column names, in the order of [`Row::values`].
    pub numeric: Vec<String>,
    /// cpuidle state stems found (`c1`, `c6`), in file order.
    pub states: Vec<String>,
    /// Things worth telling the reader (ignored columns, a cut last line).
    pub notes: Vec<String>,
    width: usize,
    time: usize,
    t_s: usize,
    dt_s: usize,
    cpu: usize,
    verdict: Option<usize>,
    findings: Option<usize>,
    repetition: Option<usize>,
    /// (CSV index, numeric index).
    nums: Vec<(usize, usize)>,
}

/// What a whole pass read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pass {
    /// Rows handed out.
    pub rows: u64,
    /// Notes found during the pass (a cut last line).
    pub notes: Vec<String>,
}

fn csv_reader(path: &Path) -> Result<csv::Reader<std::fs::File>, ReadError> {
    let file = std::fs::File::open(path).map_err(|e| ReadError {
        path: path.to_path_buf(),
        why: format!("cannot open: {e}"),
    })?;
    Ok(csv::ReaderBuilder::new()
        .flexible(true)
        .has_headers(false)
        .buffer_capacity(1 << 16)
        .from_reader(file))
}

impl Recording {
    /// Opens a recording and checks its header and sidecar.
    pub fn open(path: &Path) -> Result<Recording, ReadError> {
        let err = |why: String| ReadError {
            path: path.to_path_buf(),
            why,
        };
        let sidecar = Sidecar::read(path).map_err(|e| err(e.to_string()))?;
        let mut rdr = csv_reader(path)?;
        let mut head = csv::ByteRecord::new();
        match rdr.read_byte_record(&mut head) {
            Ok(true) => {}
            Ok(false) => return Err(err("the file is empty: no header line".into())),
            Err(e) => return Err(err(format!("cannot read the header: {e}"))),
        }
        let head: Vec<String> = head
            .iter()
            .map(|f| String::from_utf8_lossy(f).trim().to_string())
            .collect();
        let header: Vec<&str> = head.iter().map(String::as_str).collect();
        let find = |n: &str| header.iter().position(|h| *h == n);
        let missing: Vec<&str> = REQUIRED
            .iter()
            .copied()
            .filter(|n| find(n).is_none())
            .collect();
        if !missing.is_empty() {
            let mut start: String = header.join(",").chars().take(60).collect();
            if start.is_empty() {
                start = "(nothing)".into();
            }
            return Err(err(format!(
                "not a noisetop recording: it lacks the column{} {} (its header starts \"{start}\"); \
                 a recording is written by `noisetop --record FILE.csv`",
                if missing.len() > 1 { "s" } else { "" },
                missing.join(", ")
            )));
        }
        // the columns this noisetop knows: the fixed ones and one pair per
        // idle state (from the sidecar, else any `X_pct` with an `X_per_s`)
        let mut states: Vec<String> = match &sidecar {
            Some(s) => s
                .facts
                .idle_states
                .iter()
                .map(|f| f.column.clone())
                .collect(),
            None => Vec::new(),
        };
        let fixed = Schema::with_states(Vec::new());
        let is_fixed = |n: &str| fixed.columns.iter().any(|c| c.name == n);
        if sidecar.is_none() {
            for h in &header {
                if let Some(stem) = h.strip_suffix("_per_s")
                    && !is_fixed(h)
                    && header.contains(&format!("{stem}_pct").as_str())
                    && !states.iter().any(|s| s == stem)
                {
                    states.push(stem.to_string());
                }
            }
        }
        let state_col = |n: &str| {
            states.iter().any(|s| {
                n.strip_prefix(s.as_str())
                    .is_some_and(|rest| rest == "_pct" || rest == "_per_s")
            })
        };
        let mut numeric = Vec::new();
        let mut nums = Vec::new();
        let mut ignored = Vec::new();
        for (i, h) in header.iter().enumerate() {
            if REQUIRED[..2].contains(h) || TEXT.contains(h) {
                continue;
            }
            if is_fixed(h) || state_col(h) {
                nums.push((i, numeric.len()));
                numeric.push((*h).to_string());
            } else {
                ignored.push(*h);
            }
        }
        let mut notes = Vec::new();
        if !ignored.is_empty() {
            notes.push(format!(
                "columns this noisetop does not know, ignored: {}",
                ignored.join(", ")
            ));
        }
        let expected: Vec<String> = match &sidecar {
            Some(s) => s.columns.clone(),
            None => fixed.names().iter().map(|s| (*s).to_string()).collect(),
        };
        let absent: Vec<&str> = expected
            .iter()
            .map(String::as_str)
            .filter(|n| find(n).is_none())
            .collect();
        if !absent.is_empty() {
            notes.push(format!(
                "columns missing, shown as unknown: {}",
                absent.join(", ")
            ));
        }
        Ok(Recording {
            path: path.to_path_buf(),
            sidecar,
            numeric,
            states,
            notes,
            width: header.len(),
            time: find("time").unwrap_or(0),
            t_s: find("t_s").unwrap_or(0),
            dt_s: find("dt_s").unwrap_or(0),
            cpu: find("cpu").unwrap_or(0),
            verdict: find("verdict"),
            findings: find("findings"),
            repetition: find(crate::record::columns::REPETITION),
            nums,
        })
    }

    /// Returns the index of a numeric column in [`Row::values`].
    pub fn col(&self, name: &str) -> Option<usize> {
        self.numeric.iter().position(|n| n == name)
    }

    /// Hands every row to `f`, in file order. A last line cut short is
    /// skipped with a note; any other damage stops with its line number.
    pub fn for_each(&self, mut f: impl FnMut(&Row<'_>)) -> Result<Pass, ReadError> {
        let mut rdr = csv_reader(&self.path)?;
        let err = |line: u64, why: String| ReadError {
            path: self.path.clone(),
            why: format!("line {line}: {why}"),
        };
        let mut recs = [csv::ByteRecord::new(), csv::ByteRecord::new()];
        let read = |rdr: &mut csv::Reader<std::fs::File>, rec: &mut csv::ByteRecord| {
            rdr.read_byte_record(rec).map_err(|e| ReadError {
                path: self.path.clone(),
                why: format!("cannot read: {e}"),
            })
        };
        // the header
        read(&mut rdr, &mut recs[0])?;
        let mut values = vec![None; self.numeric.len()];
        let mut pass = Pass::default();
        let mut have = read(&mut rdr, &mut recs[0])?;
        let mut k = 0;
        let mut gaps = Gaps::default();
        while have {
            let next = read(&mut rdr, &mut recs[1 - k])?;
            let rec = &recs[k];
            let line = rec.position().map_or(0, csv::Position::line);
            if rec.len() != self.width {
                if rec.len() < self.width && !next {
                    pass.notes.push(format!(
                        "the last line ({line}) is cut short ({} of {} fields; the recording \
                         stopped while writing it): ignored",
                        rec.len(),
                        self.width
                    ));
                    break;
                }
                if rec.len() == 1 && rec.get(0).is_some_and(<[u8]>::is_empty) {
                    // a blank line
                    have = next;
                    k = 1 - k;
                    continue;
                }
                return Err(err(
                    line,
                    format!("{} fields where the header has {}", rec.len(), self.width),
                ));
            }
            let text = |i: usize| -> Result<&str, ReadError> {
                std::str::from_utf8(rec.get(i).unwrap_or_default())
                    .map_err(|_| err(line, "not UTF-8 text".into()))
            };
            let num = |i: usize, name: &str| -> Result<Option<f64>, ReadError> {
                let s = text(i)?.trim();
                if s.is_empty() {
                    return Ok(None);
                }
                s.parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .map(Some)
                    .ok_or_else(|| err(line, format!("{name} is \"{s}\", not a number")))
            };
            for &(i, j) in &self.nums {
                values[j] = num(i, &self.numeric[j])?;
            }
            let cpu = match text(self.cpu)?.trim() {
                "all" => None,
                s => Some(s.parse::<u32>().map_err(|_| {
                    err(
                        line,
                        format!("cpu is \"{s}\", neither a CPU number nor `all`"),
                    )
                })?),
            };
            let t_s = num(self.t_s, "t_s")?.ok_or_else(|| err(line, "t_s is empty".into()))?;
            let repetition =
                match self.repetition.map(&text).transpose()?.map(str::trim) {
                    None | Some("") => None,
                    Some(s) => Some(s.parse::<u32>().map_err(|_| {
                        err(line, format!("repetition is \"{s}\", not a run number"))
                    })?),
                };
            let row = Row {
                time: text(self.time)?,
                t_s,
                dt_s: num(self.dt_s, "dt_s")?,
                cpu,
                values: &values,
                verdict: self.verdict.map_or(Ok(""), text)?,
                findings: self.findings.map_or(Ok(""), text)?,
                repetition,
            };
            if row.cpu.is_none() {
                gaps.see(row.t_s, row.dt_s, row.repetition);
            }
            f(&row);
            pass.rows += 1;
            have = next;
            k = 1 - k;
        }
        if let Some(lost) = self.sidecar.as_ref().map(|s| &s.lost)
            && !lost.is_empty()
        {
            let n: u64 = lost.iter().map(|r| r.intervals).sum();
            pass.notes.push(format!(
                "{n} intervals were sampled but not written{}: {}; every figure leaves them out",
                crate::record::sidecar::lost_ranges_text(lost),
                lost[0].why
            ));
        }
        if let Some(note) = gaps.note() {
            pass.notes.push(note);
        }
        Ok(pass)
    }
}

/// Stretches of `t_s` that no interval covers: each interval runs from
/// `t_s - dt_s` to `t_s`, and the next one starts where it ends. Between
/// two runs of a series (the `repetition` changes) nothing is recorded on
/// purpose: no gap.
#[derive(Debug, Default)]
struct Gaps {
    end: Option<f64>,
    repetition: Option<u32>,
    found: Vec<(f64, f64)>,
}

impl Gaps {
    fn see(&mut self, t_s: f64, dt_s: Option<f64>, repetition: Option<u32>) {
        let next_run = repetition != self.repetition;
        self.repetition = repetition;
        let Some(dt) = dt_s else {
            self.end = Some(t_s);
            return;
        };
        let start = t_s - dt;
        // numbers keep 6 significant digits: allow for their rounding
        let slack = 0.25 * dt + 2e-5 * t_s.abs();
        if let Some(end) = self.end
            && start - end > slack
            && !next_run
        {
            self.found.push((end, start));
        }
        self.end = Some(t_s);
    }

    fn note(&self) -> Option<String> {
        if self.found.is_empty() {
            return None;
        }
        let total: f64 = self.found.iter().map(|(a, b)| b - a).sum();
        let mut parts: Vec<String> = self
            .found
            .iter()
            .take(5)
            .map(|(a, b)| format!("{a:.2}–{b:.2} ({:.2} s)", b - a))
            .collect();
        if self.found.len() > 5 {
            parts.push(format!("{} more", self.found.len() - 5));
        }
        Some(format!(
            "t_s has {} gap{} with nothing recorded, {total:.2} s in all: {}",
            self.found.len(),
            if self.found.len() == 1 { "" } else { "s" },
            parts.join(", ")
        ))
    }
}
