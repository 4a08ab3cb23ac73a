//! Captured trees: `noisetop capture` writes one sub-folder per instant
//! (`0000/`, `0001/`, …) holding the kernel files as they were read
//! (`proc/…`, `sys/…`) and, under `noisetop/`, what is not a file: the clock,
//! perf counts, MSR values and what the probes found. Replay reads it back
//! through the same sampler.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::os::fs::{MAX_FILE_BYTES, ReadError, read_capped};
use crate::os::hw::{Hardware, Probe, Stamp};
use crate::os::msr::{self, FakeMsr, MsrAccess, MsrFault, MsrRead};
use crate::os::perf::{self, PerfCounts, PerfEvent};

/// Name of the folder of instant `i`.
pub fn instant_dir(root: &Path, i: usize) -> PathBuf {
    root.join(format!("{i:04}"))
}

/// Records the per-sample file budget a capture was taken with
/// (`noisetop/budget` of instant 0) and the CPUs read every sample
/// whatever the round (`noisetop/always`, a CPU list), so that its replay
/// reads the same rounds.
pub fn write_budget(instant0: &Path, budget: usize, always: &[u32]) -> io::Result<()> {
    let nt = instant0.join("noisetop");
    std::fs::create_dir_all(&nt)?;
    std::fs::write(nt.join("budget"), format!("{budget}\n"))?;
    std::fs::write(
        nt.join("always"),
        format!("{}\n", crate::base::cpulist::format(always)),
    )
}

/// Largest `noisetop/clock`, `budget` or `always` a replay reads: a few
/// numbers, or a CPU list (65 536 CPUs listed one by one stay under it).
const SMALL_FILE_BYTES: usize = 1 << 20;

/// Largest `noisetop/probe.json` a replay reads.
const PROBE_FILE_BYTES: usize = 16 << 20;

/// Reads one capture file through the size cap; the error says which file
/// and why (missing, too large, not a regular file).
fn read_meta(path: &Path, cap: usize) -> Result<String, ReadError> {
    read_capped(path, cap)
}

/// Reads the CPUs [`write_budget`] recorded as read every sample.
pub fn read_always(instant0: &Path) -> Vec<u32> {
    read_meta(&instant0.join("noisetop/always"), SMALL_FILE_BYTES)
        .ok()
        .and_then(|t| crate::base::cpulist::parse(&t).ok())
        .unwrap_or_default()
}

/// Reads the budget [`write_budget`] recorded; `None` for a capture made
/// before it was recorded, or a garbled file.
pub fn read_budget(instant0: &Path) -> Option<usize> {
    read_meta(&instant0.join("noisetop/budget"), SMALL_FILE_BYTES)
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Lists the instant folders of a capture, in order of their number:
/// `9999` comes before `10000` (names are zero-padded to four digits only,
/// so past 9 999 instants an order by name would put `10000` before `1001`).
pub fn instants(root: &Path) -> io::Result<Vec<PathBuf>> {
    let mut dirs: Vec<(u128, PathBuf)> = std::fs::read_dir(root)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter_map(|p| {
            let n = p
                .file_name()
                .and_then(|n| n.to_str())
                .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))?
                .parse::<u128>()
                .ok()?;
            p.is_dir().then_some((n, p))
        })
        .collect();
    dirs.sort();
    Ok(dirs.into_iter().map(|(_, p)| p).collect())
}

/// What a capture stores about the probes (`noisetop/probe.json`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ProbeFile {
    /// What the probes found.
    pub probe: Probe,
    /// Joules per count of each perf energy event.
    pub energy_scale: BTreeMap<String, f64>,
}

/// Wraps live hardware and records everything it returns, per instant.
pub struct CaptureRecorder<H: Hardware> {
    inner: H,
    stamp: Stamp,
    perf: Vec<PerfCounts>,
    msr: Vec<MsrRead>,
}

impl<H: Hardware> CaptureRecorder<H> {
    /// Starts recording around `inner`.
    pub fn new(inner: H) -> Self {
        CaptureRecorder {
            inner,
            stamp: Stamp::default(),
            perf: Vec::new(),
            msr: Vec::new(),
        }
    }

    /// Writes what was read since the last call into `dir/noisetop/`.
    pub fn flush(&mut self, dir: &Path) -> io::Result<()> {
        let nt = dir.join("noisetop");
        std::fs::create_dir_all(&nt)?;
        std::fs::write(
            nt.join("clock"),
            format!("{} {}\n", self.stamp.mono_ns, self.stamp.wall_ns),
        )?;
        std::fs::write(nt.join("perf"), perf::write_table(&self.perf))?;
        std::fs::write(nt.join("msr"), msr::write_table(&self.msr))?;
        let mut scales = BTreeMap::new();
        for ev in [
            PerfEvent::EnergyPkg,
            PerfEvent::EnergyCores,
            PerfEvent::EnergyRam,
            PerfEvent::EnergyGpu,
            PerfEvent::EnergyPsys,
        ] {
            if let Some(s) = self.inner.energy_scale(ev) {
                scales.insert(ev.key(), s);
            }
        }
        let pf = ProbeFile {
            probe: self.inner.probe().clone(),
            energy_scale: scales,
        };
        let json = serde_json::to_string_pretty(&pf).map_err(io::Error::other)?;
        std::fs::write(nt.join("probe.json"), json)?;
        self.perf.clear();
        self.msr.clear();
        Ok(())
    }
}

impl<H: Hardware> Hardware for CaptureRecorder<H> {
    fn now(&mut self) -> Stamp {
        self.stamp = self.inner.now();
        self.stamp
    }

    fn perf(&mut self) -> &[PerfCounts] {
        let p = self.inner.perf();
        self.perf.clear();
        self.perf.extend_from_slice(p);
        &self.perf
    }

    fn msr_read(&mut self, cpu: u32, reg: u32) -> Option<io::Result<u64>> {
        let r = self.inner.msr_read(cpu, reg)?;
        let logged = match &r {
            Ok(v) => Ok(*v),
            // the error's own words, as captures have always stored them
            Err(e) => Err(MsrFault::Other(e.to_string())),
        };
        self.msr.push((cpu, reg, logged));
        Some(r)
    }

    fn probe(&self) -> &Probe {
        self.inner.probe()
    }

    fn energy_scale(&self, event: PerfEvent) -> Option<f64> {
        self.inner.energy_scale(event)
    }
}

/// Hardware read back from one instant of a capture (or built by a test).
#[derive(Debug, Default)]
pub struct Captured {
    /// The clock of this instant.
    pub stamp: Stamp,
    /// perf counts of this instant.
    pub perf: Vec<PerfCounts>,
    /// MSR values of this instant; `None` when the capture had no MSR access.
    pub msr: Option<FakeMsr>,
    /// What the probes found when the capture was made.
    pub probe: Probe,
    /// Joules per count of perf energy events.
    pub energy_scale: BTreeMap<String, f64>,
    /// Whether the wall clock is this machine's now (a foreign tree is read
    /// now, so that is when its figures were seen) while the monotonic one
    /// stands still (no rate between two reads of it).
    pub wall_now: bool,
}

/// Why an instant of a capture cannot be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A table cannot be read (the clock is missing, or a table is not a
    /// file).
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The clock file does not hold its two numbers.
    #[error("{}: expected two integers", .0.display())]
    Clock(PathBuf),
    /// A perf or MSR table does not parse.
    #[error("{}: {source}", .path.display())]
    Table {
        /// The table.
        path: PathBuf,
        /// The line that does not parse, and why.
        source: crate::base::ParseError,
    },
    /// The probe's facts do not parse.
    #[error("{}: {source}", .path.display())]
    Probe {
        /// `probe.json`.
        path: PathBuf,
        /// What the JSON parser said.
        source: serde_json::Error,
    },
}

impl Captured {
    /// Loads `dir/noisetop/*` of one instant; a missing table means that
    /// source was not available when the capture was made.
    pub fn load(dir: &Path) -> Result<Captured, LoadError> {
        let nt = dir.join("noisetop");
        let clock = read_meta(&nt.join("clock"), SMALL_FILE_BYTES)?;
        let mut it = clock.split_whitespace().map(str::parse::<u64>);
        let stamp = match (it.next(), it.next()) {
            (Some(Ok(mono_ns)), Some(Ok(wall_ns))) => Stamp { mono_ns, wall_ns },
            _ => return Err(LoadError::Clock(nt.join("clock"))),
        };
        let table = |name: &str| {
            let path = nt.join(name);
            move |source| LoadError::Table { path, source }
        };
        let perf = match optional(&nt.join("perf"), MAX_FILE_BYTES)? {
            Some(t) => perf::parse_table(&t).map_err(table("perf"))?,
            None => Vec::new(),
        };
        let pf: ProbeFile = match optional(&nt.join("probe.json"), PROBE_FILE_BYTES)? {
            Some(t) => serde_json::from_str(&t).map_err(|source| LoadError::Probe {
                path: nt.join("probe.json"),
                source,
            })?,
            None => ProbeFile {
                probe: Probe {
                    msr: Err("the capture has no MSR table".into()),
                    ..Probe::default()
                },
                ..ProbeFile::default()
            },
        };
        let msr = match optional(&nt.join("msr"), MAX_FILE_BYTES)? {
            Some(t) if pf.probe.msr.is_ok() => Some(msr::parse_table(&t).map_err(table("msr"))?),
            _ => None,
        };
        Ok(Captured {
            stamp,
            perf,
            msr,
            probe: pf.probe,
            energy_scale: pf.energy_scale,
            wall_now: false,
        })
    }
}

/// Reads a table a capture may lack: missing is `None` (that source was
/// not available), anything else that stops the read is an error.
fn optional(path: &Path, cap: usize) -> Result<Option<String>, ReadError> {
    match read_meta(path, cap) {
        Ok(t) => Ok(Some(t)),
        Err(ReadError::Missing(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

impl Hardware for Captured {
    fn now(&mut self) -> Stamp {
        if self.wall_now {
            self.stamp.wall_ns = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
        }
        self.stamp
    }

    fn perf(&mut self) -> &[PerfCounts] {
        &self.perf
    }

    fn msr_read(&mut self, cpu: u32, reg: u32) -> Option<io::Result<u64>> {
        Some(self.msr.as_mut()?.read(cpu, reg))
    }

    fn probe(&self) -> &Probe {
        &self.probe
    }

    fn energy_scale(&self, event: PerfEvent) -> Option<f64> {
        self.energy_scale.get(&event.key()).copied()
    }
}

impl Captured {
    /// The hardware of a tree that is not this machine's: no perf count, no
    /// MSR, a clock that stands still (so no rate), each with the reason.
    pub fn foreign(why: &str) -> Captured {
        Captured {
            probe: Probe {
                perf_failed: vec![("*".into(), why.to_string())],
                msr: Err(why.to_string()),
                ..Probe::default()
            },
            wall_now: true,
            ..Captured::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_are_ordered_by_number_past_9999() {
        let dir = tempfile::tempdir().unwrap();
        for n in ["10000", "1001", "9999", "0000", "0001", "10001", "x12"] {
            std::fs::create_dir(dir.path().join(n)).unwrap();
        }
        // a file with a number for a name is no instant
        std::fs::write(dir.path().join("0002"), "").unwrap();
        let names: Vec<String> = instants(dir.path())
            .unwrap()
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["0000", "0001", "1001", "9999", "10000", "10001"]);
    }

    #[test]
    fn a_missing_table_is_no_source_and_a_broken_one_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let nt = dir.path().join("noisetop");
        std::fs::create_dir_all(&nt).unwrap();
        let err = Captured::load(dir.path()).unwrap_err().to_string();
        assert!(
            err.starts_with("no ") && err.ends_with("noisetop/clock"),
            "{err}"
        );
        std::fs::write(nt.join("clock"), "5 6\n").unwrap();
        let c = Captured::load(dir.path()).unwrap();
        assert_eq!((c.stamp.mono_ns, c.stamp.wall_ns), (5, 6));
        assert!(c.perf.is_empty() && c.msr.is_none());
        std::fs::create_dir(nt.join("perf")).unwrap();
        let err = Captured::load(dir.path()).unwrap_err();
        assert!(matches!(err, LoadError::Read(_)), "{err}");
        let err = err.to_string();
        assert!(err.ends_with("noisetop/perf: is a directory"), "{err}");
        std::fs::remove_dir(nt.join("perf")).unwrap();
        std::fs::write(nt.join("clock"), "5\n").unwrap();
        let err = Captured::load(dir.path()).unwrap_err().to_string();
        assert!(
            err.ends_with("noisetop/clock: expected two integers"),
            "{err}"
        );
    }
}
