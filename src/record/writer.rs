//! The CSV recorder: one header line, then per interval one row per CPU and
//! one machine row, each interval written with one `write` so that a
//! killed process loses no interval it finished.

use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};

use crate::model::interval::Interval;
use crate::model::machine::Machine;
use crate::record::columns::{self, Kind, Schema, iso_time, write_num};
use crate::record::sidecar::{self, LostRange, RecordMeta, Sidecar};

/// How to treat a file that exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    /// Refuse an existing file.
    New,
    /// Overwrite it.
    Force,
    /// Add rows when its header is this machine's.
    Append,
}

/// Verdict and findings of one row.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RowTags {
    /// The CPU; `None` is the machine row.
    pub cpu: Option<u32>,
    /// The verdict (`quiet`, `noisy`, …).
    pub verdict: String,
    /// Active finding ids.
    pub findings: Vec<String>,
    /// The verdict's causes, or why it is unknown.
    pub why: String,
    /// `comm[pid]:ms` of the other tasks that ran longest (traced CPUs).
    pub intruders: Vec<String>,
    /// The cgroup path of each of them (empty where not known).
    pub intruder_cgroups: Vec<String>,
    /// The run of a series the interval belongs to.
    pub repetition: Option<u32>,
}

/// Why a recording cannot start.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The file is there and neither `--force` nor `--append` was given.
    #[error("--record {0}: the file exists (--force overwrites it, --append adds to it)")]
    Exists(PathBuf),
    /// The file or its sidecar cannot be opened or written.
    // the OS error is said in the message, so it is not also a `source`
    // that `{:#}` would print a second time
    #[error("cannot write {path}: {err}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        err: std::io::Error,
    },
    /// The target exists and is not a regular file (`/dev/full`, a FIFO):
    /// its sidecar would land beside it.
    #[error(
        "{0}: not a regular file; a recording is a file, with its machine facts in FILE.json beside it"
    )]
    NotAFile(PathBuf),
    /// `--append` to a file of another layout.
    #[error("cannot append to {path}: {why}")]
    Mismatch {
        /// The file.
        path: PathBuf,
        /// What differs.
        why: String,
    },
}

/// Writes intervals to a CSV file.
pub struct Recorder {
    path: PathBuf,
    file: File,
    schema: Schema,
    sidecar: Sidecar,
    rows: u64,
    bytes: u64,
    /// Monotonic start of the first interval written by this recorder.
    origin_mono: Option<u64>,
    /// `t_s` of that start (non-zero when appending).
    origin_t: f64,
    line: String,
    csv: csv::Writer<Vec<u8>>,
    /// Whether the last interval could not be written (the next lost one
    /// extends the same range).
    losing: bool,
    /// Lost ranges not yet in the sidecar file.
    unsaved: bool,
    /// Where `noisetop probe` keeps its last results, and that file's time
    /// as last looked at.
    probe_file: Option<PathBuf>,
    probe_seen: Option<std::time::SystemTime>,
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> RecordError + '_ {
    move |err| RecordError::Io {
        path: path.to_path_buf(),
        err,
    }
}

/// Reads the first line of a file (its header), without the line end.
fn first_line(file: &mut File) -> std::io::Result<String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = file.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
        if buf.contains(&b'\n') || buf.len() > 1 << 20 {
            break;
        }
    }
    let end = buf.iter().position(|b| *b == b'\n').unwrap_or(buf.len());
    Ok(String::from_utf8_lossy(&buf[..end])
        .trim_end_matches('\r')
        .to_string())
}

impl Recorder {
    /// Opens the file (and writes its header and sidecar unless appending).
    pub fn create(
        path: &Path,
        mode: OpenMode,
        machine: &Machine,
        meta: &RecordMeta,
    ) -> Result<Recorder, RecordError> {
        Recorder::create_with(path, mode, machine, meta, Schema::for_machine(machine))
    }

    /// [`create`](Self::create) with these columns (the machine's, and a
    /// series' `repetition`).
    pub fn create_with(
        path: &Path,
        mode: OpenMode,
        machine: &Machine,
        meta: &RecordMeta,
        schema: Schema,
    ) -> Result<Recorder, RecordError> {
        if let Ok(meta) = std::fs::metadata(path)
            && !meta.is_file()
        {
            return Err(RecordError::NotAFile(path.to_path_buf()));
        }
        let header: Vec<String> = schema.names().iter().map(|s| (*s).to_string()).collect();
        let mut sidecar = Sidecar::new(machine, meta, header.clone());
        let mut opts = OpenOptions::new();
        match mode {
            OpenMode::New => opts.write(true).create_new(true),
            OpenMode::Force => opts.write(true).create(true).truncate(true),
            OpenMode::Append => opts.read(true).append(true).create(true),
        };
        let mut file = opts.open(path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                RecordError::Exists(path.to_path_buf())
            } else {
                io_err(path)(e)
            }
        })?;
        let mut origin_t = 0.0;
        let mut fresh = true;
        let mut write_sidecar = true;
        let mut bytes = 0;
        if mode == OpenMode::Append {
            bytes = file.metadata().map_err(io_err(path))?.len();
            if bytes > 0 {
                fresh = false;
                file.seek(SeekFrom::Start(0)).map_err(io_err(path))?;
                let have = first_line(&mut file).map_err(io_err(path))?;
                let want = header.join(",");
                if have != want {
                    return Err(RecordError::Mismatch {
                        path: path.to_path_buf(),
                        why: header_difference(&have, &header),
                    });
                }
                let old = Sidecar::read(path).map_err(|e| RecordError::Mismatch {
                    path: path.to_path_buf(),
                    why: e.to_string(),
                })?;
                // keep the first recording's facts and start: t_s goes on
                if let Some(old) = old {
                    sidecar = old;
                    write_sidecar = false;
                }
                origin_t = f64::NAN;
            }
        }
        if write_sidecar {
            sidecar
                .write(path)
                .map_err(io_err(&crate::os::fs::sidecar_path(path)))?;
        }
        let mut rec = Recorder {
            path: path.to_path_buf(),
            file,
            schema,
            sidecar,
            rows: 0,
            bytes,
            origin_mono: None,
            origin_t,
            line: String::new(),
            csv: csv_writer(Vec::new()),
            losing: false,
            unsaved: false,
            probe_file: crate::probe::sinks::last_path(),
            probe_seen: None,
        };
        if fresh {
            rec.csv
                .write_record(&header)
                .map_err(|e| io_err(path)(e.into()))?;
            rec.flush_buf().map_err(io_err(path))?;
        }
        Ok(rec)
    }

    /// Writes one interval (every CPU row, then the machine row) in one
    /// `write`; `tags` gives each row's verdict and findings.
    pub fn write(&mut self, iv: &Interval, tags: &[RowTags]) -> std::io::Result<()> {
        let r = self.write_rows(iv, tags);
        match &r {
            Ok(()) => {
                self.losing = false;
                self.pick_up_probe(iv.to.wall_ns);
                // the first write that works again also saves the lost ranges
                if self.unsaved && self.sidecar.write(&self.path).is_ok() {
                    self.unsaved = false;
                }
            }
            Err(e) => self.note_lost(iv, e),
        }
        r
    }

    /// Follows the probe results at `path` instead of `noisetop probe`'s
    /// own (none: no probe is carried).
    pub fn follow_probe(&mut self, path: Option<PathBuf>) {
        self.probe_file = path;
        self.probe_seen = None;
    }

    /// Carries the last probe in the sidecar when it ended between the
    /// recording's start and `now_wall_ns` (the end of the interval just
    /// written): a probe run while recording is this recording's, an older
    /// one, or one after a replayed capture's time, is not. The file's time
    /// is looked at each interval; it is read only when that changed.
    fn pick_up_probe(&mut self, now_wall_ns: u64) {
        let Some(path) = &self.probe_file else { return };
        let Ok(t) = std::fs::metadata(path).and_then(|m| m.modified()) else {
            return;
        };
        if self.probe_seen == Some(t) {
            return;
        }
        let Some(at) = t
            .duration_since(std::time::UNIX_EPOCH)
            .ok()
            .and_then(|d| u64::try_from(d.as_nanos()).ok())
        else {
            return;
        };
        if at > now_wall_ns {
            // not yet: looked at again after the next interval
            return;
        }
        self.probe_seen = Some(t);
        if at < self.sidecar.started_wall_ns.unwrap_or(u64::MAX) {
            return;
        }
        if let Some(rep) = crate::probe::sinks::load_last_from(path) {
            self.sidecar.probe = Some(rep);
            if self.sidecar.write(&self.path).is_err() {
                self.unsaved = true;
            }
        }
    }

    /// Adds an interval that could not be written to the lost ranges.
    fn note_lost(&mut self, iv: &Interval, e: &std::io::Error) {
        let origin = self.origin_mono.unwrap_or(iv.from.mono_ns);
        let origin_t = if self.origin_t.is_nan() {
            0.0
        } else {
            self.origin_t
        };
        let to = origin_t + iv.to.mono_ns.saturating_sub(origin) as f64 / 1e9;
        let from = to - iv.dt_s;
        match self.sidecar.lost.last_mut() {
            Some(last) if self.losing => {
                last.to_t_s = to;
                last.intervals += 1;
            }
            _ => self.sidecar.lost.push(LostRange {
                from_t_s: from,
                to_t_s: to,
                intervals: 1,
                why: e.to_string(),
            }),
        }
        self.losing = true;
        self.unsaved = true;
    }

    /// Records where each metric comes from; kept from the first
    /// recording when appending.
    pub fn set_sources(&mut self, sources: Vec<sidecar::MetricSource>) {
        if self.sidecar.sources.is_empty() {
            self.sidecar.sources = sources;
            self.unsaved |= self.sidecar.started.is_some();
        }
    }

    /// The intervals that could not be written, in ranges.
    pub fn lost(&self) -> &[LostRange] {
        &self.sidecar.lost
    }

    /// Writes the lost ranges to the sidecar if they are not there yet.
    pub fn save_lost(&mut self) -> std::io::Result<()> {
        if self.unsaved {
            self.sidecar.write(&self.path)?;
            self.unsaved = false;
        }
        Ok(())
    }

    fn write_rows(&mut self, iv: &Interval, tags: &[RowTags]) -> std::io::Result<()> {
        if self.origin_mono.is_none() {
            self.origin_mono = Some(iv.from.mono_ns);
            if self.sidecar.started_wall_ns.is_none() {
                self.sidecar.started_wall_ns = Some(iv.from.wall_ns);
                self.sidecar.started = Some(iso_time(iv.from.wall_ns));
                self.sidecar.write(&self.path)?;
            }
            if self.origin_t.is_nan() {
                let start = self.sidecar.started_wall_ns.unwrap_or(iv.from.wall_ns);
                self.origin_t = (iv.from.wall_ns as f64 - start as f64) / 1e9;
            }
        }
        let origin = self.origin_mono.unwrap_or(iv.from.mono_ns);
        let t_s = self.origin_t + iv.to.mono_ns.saturating_sub(origin) as f64 / 1e9;
        let time = iso_time(iv.to.wall_ns);
        let none = RowTags::default();
        let tag = |cpu: Option<u32>| tags.iter().find(|t| t.cpu == cpu).unwrap_or(&none);
        let mut n = 0;
        for r in &iv.cpus {
            self.row(iv, Some(r), &time, t_s, tag(Some(r.cpu)))?;
            n += 1;
        }
        self.row(iv, None, &time, t_s, tag(None))?;
        self.flush_buf()?;
        self.rows += n + 1;
        Ok(())
    }

    fn row(
        &mut self,
        iv: &Interval,
        cpu: Option<&crate::model::interval::CpuRates>,
        time: &str,
        t_s: f64,
        tag: &RowTags,
    ) -> std::io::Result<()> {
        let states = &self.schema.states;
        for col in &self.schema.columns {
            self.line.clear();
            match col.kind {
                Kind::Time => self.line.push_str(time),
                Kind::Elapsed => write_num(&mut self.line, t_s),
                Kind::Dt => write_num(&mut self.line, iv.dt_s),
                Kind::Cpu => match cpu {
                    Some(r) => write_num(&mut self.line, f64::from(r.cpu)),
                    None => self.line.push_str("all"),
                },
                Kind::Num(f) => {
                    let v = match cpu {
                        Some(r) => columns::cpu_value(f, r, states),
                        None => columns::machine_value(f, iv, states),
                    };
                    if let Some(v) = v {
                        write_num(&mut self.line, v);
                    }
                }
                Kind::Verdict => self.line.push_str(&tag.verdict),
                Kind::Findings => self.line.push_str(&tag.findings.join(";")),
                Kind::Why => self.line.push_str(&tag.why),
                Kind::Intruders => self.line.push_str(&tag.intruders.join(";")),
                Kind::IntruderCgroups => {
                    // nothing at all where no cgroup is known
                    if tag.intruder_cgroups.iter().any(|c| !c.is_empty()) {
                        self.line.push_str(&tag.intruder_cgroups.join(";"));
                    }
                }
                Kind::Repetition => {
                    if let Some(n) = tag.repetition {
                        let _ = write!(self.line, "{n}");
                    }
                }
            }
            self.csv.write_field(&self.line)?;
        }
        self.csv.write_record(None::<&[u8]>)?;
        Ok(())
    }

    fn flush_buf(&mut self) -> std::io::Result<()> {
        let w = std::mem::replace(&mut self.csv, csv_writer(Vec::new()));
        let mut buf = w.into_inner().map_err(csv::IntoInnerError::into_error)?;
        // one write per interval: the kernel has it once this returns
        let r = self.file.write_all(&buf);
        if r.is_ok() {
            self.bytes += buf.len() as u64;
        } else {
            // a full disk can take half an interval: cut it off, so the
            // next interval starts on a line of its own
            let _ = self.file.set_len(self.bytes);
            let _ = self.file.seek(SeekFrom::Start(self.bytes));
        }
        buf.clear();
        self.csv = csv_writer(buf);
        r
    }

    /// The file written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Rows written by this recorder (header excluded).
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Size of the file, bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The schema in use.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }
}

fn csv_writer(buf: Vec<u8>) -> csv::Writer<Vec<u8>> {
    csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(buf)
}

/// Says how an existing header differs from the one this machine needs.
fn header_difference(have: &str, want: &[String]) -> String {
    let have: Vec<&str> = have.split(',').collect();
    let missing: Vec<&str> = want
        .iter()
        .map(String::as_str)
        .filter(|w| !have.contains(w))
        .collect();
    let extra: Vec<&str> = have
        .iter()
        .copied()
        .filter(|h| !want.iter().any(|w| w == h))
        .collect();
    let mut why = "its columns are not this machine's".to_string();
    if !missing.is_empty() {
        let _ = write!(why, "; it lacks {}", missing.join(", "));
    }
    if !extra.is_empty() {
        let _ = write!(
            why,
            "; it has {} that this machine does not",
            extra.join(", ")
        );
    }
    if missing.is_empty() && extra.is_empty() {
        why.push_str("; same columns in another order");
    }
    why.push_str(" (record to a new file, or pass --force to overwrite)");
    why
}
