//! Reads the OS idle states (cpuidle): the driver and governor, each CPU's
//! states (name, exit latency, target residency, disabled) discovered once,
//! and the per-interval counters (`time`, `usage`, `above`, `below`,
//! `rejected`) read with one read per file and no directory listing.

use serde::Serialize;

use crate::collect::topology::{CPU_DIR, numbered, opt_flag, opt_text, opt_u64};
use crate::source::fs::{Base, Fs, ReadError};

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
    pub name: String,
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
    /// Whether `rejected` exists (Linux 5.9+), so counters read it.
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
    /// Entries refused by the driver (`rejected`).
    pub rejected: Option<u64>,
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
            .unwrap_or_else(|| format!("state{index}")),
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

/// Reads the counters of the given states of one CPU, one read per file.
/// `Err` if any `time` or `usage` cannot be read (the CPU went offline).
pub fn read_counters(
    fs: &mut Fs,
    cpu: u32,
    states: &[IdleStateInfo],
) -> Result<Vec<IdleCounters>, ReadError> {
    states
        .iter()
        .map(|s| read_state_counters(fs, cpu, s))
        .collect()
}

fn read_state_counters(
    fs: &mut Fs,
    cpu: u32,
    s: &IdleStateInfo,
) -> Result<IdleCounters, ReadError> {
    let dir = format!("{CPU_DIR}/cpu{cpu}/cpuidle/state{}", s.index);
    let time_us = fs.read_u64(Base::Sys, &format!("{dir}/time"))?;
    let usage = fs.read_u64(Base::Sys, &format!("{dir}/usage"))?;
    let (above, below) = if s.has_above_below {
        (
            opt_u64(fs, &format!("{dir}/above")),
            opt_u64(fs, &format!("{dir}/below")),
        )
    } else {
        (None, None)
    };
    let rejected = if s.has_rejected {
        opt_u64(fs, &format!("{dir}/rejected"))
    } else {
        None
    };
    Ok(IdleCounters {
        time_us,
        usage,
        above,
        below,
        rejected,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::fs::Roots;

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
    fn counters_with_above_below_rejected() {
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
                rejected: None
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
