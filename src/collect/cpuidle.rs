//! Reads the OS idle states (cpuidle): the driver and governor, each CPU's
//! states (name, exit latency, target residency, disabled) discovered once,
//! and the per-interval counters (`time`, `usage`, `above`, `below`), each
//! file registered once and then read with one `pread` per interval.
//! `rejected` (driver refusals, Linux 5.9+) is recorded as a fact but not
//! read each interval: nothing shows it, and on a 1024-CPU machine every
//! counter file costs a thousand reads a second.

use serde::Serialize;

use crate::base::name::Name;
use crate::collect::topology::{CPU_DIR, numbered, opt_flag, opt_text, opt_u64};
use crate::os::fs::{Base, FileId, Fs, ReadError};

/// The cpuidle driver and governor in use.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct IdleDriver {
    /// `cpuidle/current_driver` (or the first `cpuN/cpuidle/driver/name`);
    /// the kernel writes `none` when no driver is registered.
    pub driver: Option<String>,
    /// `cpuidle/current_governor`, else `current_governor_ro` (older kernels).
    pub governor: Option<String>,
}

/// One idle state of one CPU, as discovered at start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IdleStateInfo {
    /// K in `stateK`.
    pub index: u32,
    /// `name` (`POLL`, `C1-HSW`, `C2`, `WFI`); `stateK` if the file is missing.
    pub name: Name,
    /// `desc` as the kernel prints it (`<null>` stays); empty if missing.
    pub desc: String,
    /// Exit latency in µs (`latency`).
    pub latency_us: Option<u64>,
    /// Target residency in µs (`residency`; absent on old kernels).
    pub residency_us: Option<u64>,
    /// Whether the state is disabled (`disable`; absent on old kernels).
    pub disabled: Option<bool>,
    /// Whether `above` and `below` exist (Linux 5.1+), so counters read them.
    pub has_above_below: bool,
    /// Whether `rejected` exists (Linux 5.9+).
    pub has_rejected: bool,
}

/// Raw cumulative counters of one idle state at one instant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IdleCounters {
    /// Total time spent in the state, µs (`time`).
    pub time_us: u64,
    /// Number of entries (`usage`).
    pub usage: u64,
    /// Entries where the idle was too short for the state (`above`).
    pub above: Option<u64>,
    /// Entries where a deeper state would have fit (`below`).
    pub below: Option<u64>,
}

/// The counter files of one idle state of one CPU, registered with `Fs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateFiles {
    time: FileId,
    usage: FileId,
    above_below: Option<(FileId, FileId)>,
}

/// Reads the cpuidle driver and governor; each is `None` when unknown.
pub fn read_idle_driver(fs: &mut Fs) -> IdleDriver {
    let dir = format!("{CPU_DIR}/cpuidle");
    let driver = opt_text(fs, Base::Sys, &format!("{dir}/current_driver")).or_else(|| {
        let cpus = crate::collect::topology::cpu_dirs(fs).ok()?;
        cpus.into_iter()
            .find_map(|cpu| read_cpu_idle_driver(fs, cpu))
    });
    let governor = opt_text(fs, Base::Sys, &format!("{dir}/current_governor"))
        .or_else(|| opt_text(fs, Base::Sys, &format!("{dir}/current_governor_ro")));
    IdleDriver { driver, governor }
}

/// Reads the per-CPU driver name `cpuN/cpuidle/driver/name` (arm64 `psci_idle`).
pub fn read_cpu_idle_driver(fs: &mut Fs, cpu: u32) -> Option<String> {
    opt_text(
        fs,
        Base::Sys,
        &format!("{CPU_DIR}/cpu{cpu}/cpuidle/driver/name"),
    )
}

/// Lists and reads the idle states of one CPU, in index order. `Err` when
/// the CPU has no `cpuidle` directory; an empty directory gives no states.
pub fn read_states(fs: &mut Fs, cpu: u32) -> Result<Vec<IdleStateInfo>, ReadError> {
    let dir = format!("{CPU_DIR}/cpu{cpu}/cpuidle");
    let mut indices: Vec<u32> = fs
        .list(Base::Sys, &dir)?
        .iter()
        .filter_map(|n| numbered(n, "state"))
        .collect();
    indices.sort_unstable();
    Ok(indices
        .into_iter()
        .map(|k| read_state(fs, &format!("{dir}/state{k}"), k))
        .collect())
}

fn read_state(fs: &mut Fs, dir: &str, index: u32) -> IdleStateInfo {
    IdleStateInfo {
        index,
        name: opt_text(fs, Base::Sys, &format!("{dir}/name"))
            .unwrap_or_else(|| format!("state{index}"))
            .into(),
        desc: fs
            .read_trimmed(Base::Sys, &format!("{dir}/desc"))
            .unwrap_or_default(),
        latency_us: opt_u64(fs, &format!("{dir}/latency")),
        residency_us: opt_u64(fs, &format!("{dir}/residency")),
        disabled: opt_flag(fs, Base::Sys, &format!("{dir}/disable")),
        has_above_below: fs.exists(Base::Sys, &format!("{dir}/above"))
            && fs.exists(Base::Sys, &format!("{dir}/below")),
        has_rejected: fs.exists(Base::Sys, &format!("{dir}/rejected")),
    }
}

/// Registers the counter files of a CPU's states (nothing is opened yet).
pub fn state_files(fs: &mut Fs, cpu: u32, states: &[IdleStateInfo]) -> Vec<StateFiles> {
    states
        .iter()
        .map(|s| {
            let dir = format!("{CPU_DIR}/cpu{cpu}/cpuidle/state{}", s.index);
            let mut id = |f: &str| fs.file_id(Base::Sys, &format!("{dir}/{f}"));
            StateFiles {
                time: id("time"),
                usage: id("usage"),
                above_below: s.has_above_below.then(|| (id("above"), id("below"))),
            }
        })
        .collect()
}

/// Reads the counters of every state in `files`; an unreadable `time` or
/// `usage` fails the CPU, an unreadable `above`/`below` is `None`.
///
/// `last` is this CPU's previous read. A state's `time`, `above` and
/// `below` change only when the kernel accounts an exit from it, which also
/// increments `usage` (`cpuidle_enter_state`); so when `usage` is unchanged
/// the other three are too and are not read again. States a CPU never uses
/// (POLL on a server, the deep states of a busy core) cost one read.
pub fn read_state_files(
    fs: &mut Fs,
    files: &[StateFiles],
    last: Option<&[IdleCounters]>,
) -> Result<Vec<IdleCounters>, ReadError> {
    files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let usage = fs.read_u64_id(f.usage)?;
            if let Some(prev) = last.and_then(|l| l.get(i))
                && prev.usage == usage
            {
                return Ok(prev.clone());
            }
            let time_us = fs.read_u64_id(f.time)?;
            let (above, below) = match f.above_below {
                Some((a, b)) => (fs.read_u64_id(a).ok(), fs.read_u64_id(b).ok()),
                None => (None, None),
            };
            Ok(IdleCounters {
                time_us,
                usage,
                above,
                below,
            })
        })
        .collect()
}

/// How many counter files `files` registers (the most one read opens).
pub fn file_count(files: &[StateFiles]) -> usize {
    files
        .iter()
        .map(|f| if f.above_below.is_some() { 4 } else { 2 })
        .sum()
}

/// Reads the counters of `states` of `cpu` (registering their files).
pub fn read_counters(
    fs: &mut Fs,
    cpu: u32,
    states: &[IdleStateInfo],
) -> Result<Vec<IdleCounters>, ReadError> {
    let files = state_files(fs, cpu, states);
    read_state_files(fs, &files, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::os::fs::Roots;

    fn tree() -> (tempfile::TempDir, Fs) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("sys").join(CPU_DIR)).unwrap();
        let fs = Fs::new(Roots::under(dir.path()));
        (dir, fs)
    }

    fn put(dir: &tempfile::TempDir, rel: &str, text: &str) {
        let p = dir.path().join("sys").join(CPU_DIR).join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn no_cpuidle_dir_is_an_error_and_empty_dir_has_no_states() {
        let (dir, mut fs) = tree();
        assert!(matches!(
            read_states(&mut fs, 0),
            Err(ReadError::Missing(_))
        ));
        std::fs::create_dir_all(dir.path().join("sys").join(CPU_DIR).join("cpu0/cpuidle")).unwrap();
        assert_eq!(read_states(&mut fs, 0).unwrap(), []);
        assert_eq!(read_counters(&mut fs, 0, &[]).unwrap(), []);
    }

    #[test]
    fn a_state_whose_usage_held_is_not_read_again() {
        let (dir, mut fs) = tree();
        for (f, v) in [
            ("name", "C6"),
            ("time", "500"),
            ("usage", "7"),
            ("above", "1"),
            ("below", "2"),
        ] {
            put(&dir, &format!("cpu0/cpuidle/state3/{f}"), &format!("{v}\n"));
        }
        let states = read_states(&mut fs, 0).unwrap();
        let files = state_files(&mut fs, 0, &states);
        assert_eq!(file_count(&files), 4);
        let first = read_state_files(&mut fs, &files, None).unwrap();
        assert_eq!((first[0].time_us, first[0].usage), (500, 7));
        // the kernel moves time, above and below only with usage; a file
        // changed alone here proves the sampler did not read it
        put(&dir, "cpu0/cpuidle/state3/time", "999\n");
        let held = read_state_files(&mut fs, &files, Some(&first)).unwrap();
        assert_eq!(held, first);
        put(&dir, "cpu0/cpuidle/state3/usage", "8\n");
        put(&dir, "cpu0/cpuidle/state3/below", "3\n");
        let moved = read_state_files(&mut fs, &files, Some(&first)).unwrap();
        assert_eq!(
            moved,
            [IdleCounters {
                time_us: 999,
                usage: 8,
                above: Some(1),
                below: Some(3),
            }]
        );
    }

    #[test]
    fn missing_files_and_garbage_values() {
        let (dir, mut fs) = tree();
        put(&dir, "cpu0/cpuidle/state0/time", "5\n");
        put(&dir, "cpu0/cpuidle/state0/usage", "2\n");
        put(&dir, "cpu0/cpuidle/state0/latency", "lots\n");
        put(&dir, "cpu0/cpuidle/state0/disable", "2\n");
        put(&dir, "cpu0/cpuidle/state10/name", "C10\n");
        put(&dir, "cpu0/cpuidle/state2/name", "C2\n");
        put(&dir, "cpu0/cpuidle/stateX/name", "junk\n");
        let states = read_states(&mut fs, 0).unwrap();
        let idx: Vec<_> = states.iter().map(|s| s.index).collect();
        assert_eq!(idx, [0, 2, 10]);
        assert_eq!(
            states[0].name, "state0",
            "a nameless state keeps its directory name"
        );
        assert_eq!(states[0].desc, "");
        assert_eq!(states[0].latency_us, None);
        assert_eq!(states[0].disabled, None);
        assert!(!states[0].has_above_below);
        let c = read_counters(&mut fs, 0, &states[..1]).unwrap();
        assert_eq!((c[0].time_us, c[0].usage, c[0].above), (5, 2, None));
        assert!(
            read_counters(&mut fs, 0, &states).is_err(),
            "state2 has no time"
        );
    }

    #[test]
    fn counters_with_above_below_and_rejected_not_read() {
        let (dir, mut fs) = tree();
        for (f, v) in [
            ("name", "C1"),
            ("time", "18446744073709551615"),
            ("usage", "0"),
            ("above", "3"),
            ("below", "4"),
            ("rejected", "x"),
        ] {
            put(&dir, &format!("cpu1/cpuidle/state1/{f}"), &format!("{v}\n"));
        }
        let states = read_states(&mut fs, 1).unwrap();
        assert!(states[0].has_above_below && states[0].has_rejected);
        let c = read_counters(&mut fs, 1, &states).unwrap();
        assert_eq!(
            c,
            [IdleCounters {
                time_us: u64::MAX,
                usage: 0,
                above: Some(3),
                below: Some(4),
            }]
        );
    }

    #[test]
    fn unreadable_usage_is_an_error_and_unreadable_name_falls_back() {
        let (dir, mut fs) = tree();
        put(&dir, "cpu0/cpuidle/state0/time", "5\n");
        let state = dir
            .path()
            .join("sys")
            .join(CPU_DIR)
            .join("cpu0/cpuidle/state0");
        // Link loops cannot be opened, even by root.
        std::os::unix::fs::symlink("usage", state.join("usage")).unwrap();
        std::os::unix::fs::symlink("name", state.join("name")).unwrap();
        let states = read_states(&mut fs, 0).unwrap();
        assert_eq!(states[0].name, "state0");
        let err = read_counters(&mut fs, 0, &states).unwrap_err();
        assert!(matches!(err, ReadError::Io(..)), "{err}");
    }

    #[test]
    fn garbage_time_is_an_error() {
        let (dir, mut fs) = tree();
        put(&dir, "cpu0/cpuidle/state0/time", "-1\n");
        put(&dir, "cpu0/cpuidle/state0/usage", "1\n");
        let states = read_states(&mut fs, 0).unwrap();
        let err = read_counters(&mut fs, 0, &states).unwrap_err();
        assert!(err.to_string().contains("not a number"), "{err}");
    }

    #[test]
    fn driver_from_global_file_or_per_cpu_name() {
        let (dir, mut fs) = tree();
        assert_eq!(read_idle_driver(&mut fs), IdleDriver::default());
        put(&dir, "cpu3/cpuidle/driver/name", "psci_idle\n");
        put(&dir, "cpuidle/current_governor_ro", "menu\n");
        let d = read_idle_driver(&mut fs);
        assert_eq!(d.driver.as_deref(), Some("psci_idle"));
        assert_eq!(d.governor.as_deref(), Some("menu"));
        put(&dir, "cpuidle/current_driver", "none\n");
        put(&dir, "cpuidle/current_governor", "teo\n");
        let d = read_idle_driver(&mut fs);
        assert_eq!(d.driver.as_deref(), Some("none"));
        assert_eq!(d.governor.as_deref(), Some("teo"));
    }
}
