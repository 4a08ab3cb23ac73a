//! Reads cpufreq: each CPU's driver, governor, EPP and frequency limits
//! (discovered once), the current frequency (`scaling_cur_freq`, else
//! `cpuinfo_cur_freq`) read per interval, and the machine-wide turbo/boost
//! switches (`intel_pstate/no_turbo`, `cpufreq/boost`, pstate status).
//!
//! `cpuN/cpufreq` is usually a link to `cpufreq/policyM`, shared by every
//! CPU of the policy; the values are the policy's.

use serde::Serialize;

use crate::collect::topology::{CPU_DIR, opt_flag, opt_text, opt_u64, resolve};
use crate::os::fs::{Base, Fs, ReadError};

/// One CPU's cpufreq policy; every value is `None` where its file is absent
/// or does not hold a number. Frequencies are in kHz, as sysfs has them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CpuFreqInfo {
    /// The logical CPU number.
    pub cpu: u32,
    /// `scaling_driver` (`intel_pstate`, `intel_cpufreq`, `acpi-cpufreq`, …).
    pub driver: Option<String>,
    /// `scaling_governor` (`powersave`, `performance`, `schedutil`, …).
    pub governor: Option<String>,
    /// `energy_performance_preference` (`intel_pstate` / `amd-pstate` EPP).
    pub epp: Option<String>,
    /// `scaling_min_freq`.
    pub scaling_min_khz: Option<u64>,
    /// `scaling_max_freq`.
    pub scaling_max_khz: Option<u64>,
    /// `cpuinfo_min_freq`: the hardware minimum.
    pub cpuinfo_min_khz: Option<u64>,
    /// `cpuinfo_max_freq`: the hardware maximum (turbo included on `intel_pstate`,
    /// the base on acpi-cpufreq, so `cur_khz` may exceed it with boost).
    pub cpuinfo_max_khz: Option<u64>,
    /// `base_frequency` (`intel_pstate` only).
    pub base_khz: Option<u64>,
    /// The current frequency when read.
    pub cur_khz: Option<u64>,
    /// The policy directory, relative to sysfs, links followed.
    pub dir: String,
    /// The file `cur_khz` comes from, relative to sysfs; what
    /// [`read_cur_khz_from`] re-reads each interval.
    pub cur_path: Option<String>,
}

/// Machine-wide turbo/boost switches; `None` where the file is absent.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Boost {
    /// `intel_pstate/no_turbo` (true = turbo off).
    pub intel_no_turbo: Option<bool>,
    /// `intel_pstate/status`: `active`, `passive` or `off`.
    pub intel_pstate_status: Option<String>,
    /// `cpufreq/boost` (acpi-cpufreq, cpufreq-dt, …; true = boost allowed).
    pub cpufreq_boost: Option<bool>,
    /// `amd_pstate/status`: `active`, `passive`, `guided` or `disable`.
    pub amd_pstate_status: Option<String>,
}

impl Boost {
    /// Tells whether turbo/boost is allowed, from whichever switch exists.
    pub fn turbo_allowed(&self) -> Option<bool> {
        self.intel_no_turbo.map(|off| !off).or(self.cpufreq_boost)
    }
}

/// Longest a read of the current-frequency file may take for noisetop to
/// read it each interval. A sysfs attribute reads in 1–2.5 µs;
/// `scaling_cur_freq` takes 15–20 ms a core on AMD EPYC and Threadripper
/// (the read can wait for the next frequency sample), which on 96 CPUs
/// would be 1.5–2 s of every interval. 1 ms is 400 times the usual read,
/// far from both.
pub const COSTLY_READ_NS: u64 = 1_000_000;

/// Reads one CPU's cpufreq policy; `Err` when `cpuN/cpufreq` is absent.
pub fn read_info(fs: &mut Fs, cpu: u32) -> Result<CpuFreqInfo, ReadError> {
    read_info_timed(fs, cpu, true).map(|(info, _)| info)
}

/// [`read_info`], and how long reading the current-frequency file took
/// in ns (the cheaper of two reads when the first was slow; `None` when
/// it was not read). `read_cur` false leaves that file unread (`cur_khz`
/// `None`), for when it is known to be costly.
pub fn read_info_timed(
    fs: &mut Fs,
    cpu: u32,
    read_cur: bool,
) -> Result<(CpuFreqInfo, Option<u64>), ReadError> {
    let dir = resolve(fs, Base::Sys, &format!("{CPU_DIR}/cpu{cpu}/cpufreq"));
    let names = fs.list(Base::Sys, &dir)?;
    let has = |f: &str| names.iter().any(|n| n == f);
    let cur_file = ["scaling_cur_freq", "cpuinfo_cur_freq"]
        .into_iter()
        .find(|f| has(f));
    let cur_path = cur_file.map(|f| format!("{dir}/{f}"));
    let (cur_khz, cur_read_ns) = match cur_path.as_deref() {
        Some(p) if read_cur => {
            // the cheaper of two reads: a first read may pay for a cold cache
            let timed = |fs: &mut Fs| {
                let t = std::time::Instant::now();
                let v = opt_u64(fs, p);
                (v, u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX))
            };
            let (v, t1) = timed(fs);
            let (_, t2) = if t1 > COSTLY_READ_NS / 2 {
                timed(fs)
            } else {
                (v, t1)
            };
            (v, Some(t1.min(t2)))
        }
        _ => (None, None),
    };
    let text = |fs: &mut Fs, f: &str| opt_text(fs, Base::Sys, &format!("{dir}/{f}"));
    let num = |fs: &mut Fs, f: &str| opt_u64(fs, &format!("{dir}/{f}"));
    Ok((
        CpuFreqInfo {
            cpu,
            driver: text(fs, "scaling_driver"),
            governor: text(fs, "scaling_governor"),
            epp: text(fs, "energy_performance_preference"),
            scaling_min_khz: num(fs, "scaling_min_freq"),
            scaling_max_khz: num(fs, "scaling_max_freq"),
            cpuinfo_min_khz: num(fs, "cpuinfo_min_freq"),
            cpuinfo_max_khz: num(fs, "cpuinfo_max_freq"),
            base_khz: num(fs, "base_frequency"),
            cur_khz,
            dir,
            cur_path,
        },
        cur_read_ns,
    ))
}

/// Reads the current frequency of one CPU in kHz: `scaling_cur_freq`, else
/// `cpuinfo_cur_freq`. For the per-interval loop prefer
/// [`read_cur_khz_from`], which reads exactly one file.
pub fn read_cur_khz(fs: &mut Fs, cpu: u32) -> Result<u64, ReadError> {
    let dir = format!("{CPU_DIR}/cpu{cpu}/cpufreq");
    match read_cur_in(fs, &dir) {
        Ok(khz) => Ok(khz),
        Err(e) => {
            let real = resolve(fs, Base::Sys, &dir);
            if real == dir {
                Err(e)
            } else {
                read_cur_in(fs, &real)
            }
        }
    }
}

fn read_cur_in(fs: &mut Fs, dir: &str) -> Result<u64, ReadError> {
    match fs.read_u64(Base::Sys, &format!("{dir}/scaling_cur_freq")) {
        // Name the usual file when neither exists.
        Err(first @ ReadError::Missing(_)) => {
            match fs.read_u64(Base::Sys, &format!("{dir}/cpuinfo_cur_freq")) {
                Err(ReadError::Missing(_)) => Err(first),
                other => other,
            }
        }
        other => other,
    }
}

/// Re-reads the current frequency from the file [`read_info`] found.
pub fn read_cur_khz_from(fs: &mut Fs, info: &CpuFreqInfo) -> Result<u64, ReadError> {
    match &info.cur_path {
        Some(path) => fs.read_u64(Base::Sys, path),
        None => Err(ReadError::Missing(
            fs.roots()
                .path(Base::Sys, &format!("{}/scaling_cur_freq", info.dir)),
        )),
    }
}

/// Reads the machine-wide turbo/boost switches.
pub fn read_boost(fs: &mut Fs) -> Boost {
    Boost {
        intel_no_turbo: opt_flag(fs, Base::Sys, &format!("{CPU_DIR}/intel_pstate/no_turbo")),
        intel_pstate_status: opt_text(fs, Base::Sys, &format!("{CPU_DIR}/intel_pstate/status")),
        cpufreq_boost: opt_flag(fs, Base::Sys, &format!("{CPU_DIR}/cpufreq/boost")),
        amd_pstate_status: opt_text(fs, Base::Sys, &format!("{CPU_DIR}/amd_pstate/status")),
    }
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
    fn absent_cpufreq_is_an_error() {
        let (_dir, mut fs) = tree();
        assert!(matches!(read_info(&mut fs, 0), Err(ReadError::Missing(_))));
        let err = read_cur_khz(&mut fs, 0).unwrap_err();
        assert!(
            err.to_string().ends_with("cpu0/cpufreq/scaling_cur_freq"),
            "{err}"
        );
    }

    #[test]
    fn garbage_and_missing_values_are_none() {
        let (dir, mut fs) = tree();
        put(&dir, "cpu0/cpufreq/scaling_max_freq", "<unsupported>\n");
        put(&dir, "cpu0/cpufreq/scaling_min_freq", "-5\n");
        put(&dir, "cpu0/cpufreq/scaling_governor", "\n");
        put(&dir, "cpu0/cpufreq/scaling_cur_freq", "fast\n");
        put(&dir, "cpu0/cpufreq/cpuinfo_cur_freq", "1000\n");
        let info = read_info(&mut fs, 0).unwrap();
        assert_eq!(info.scaling_max_khz, None);
        assert_eq!(info.scaling_min_khz, None);
        assert_eq!(info.governor, None);
        assert_eq!(info.driver, None);
        assert_eq!(
            info.cur_khz, None,
            "garbage scaling_cur_freq is not replaced"
        );
        assert!(read_cur_khz(&mut fs, 0).is_err());
        assert!(read_cur_khz_from(&mut fs, &info).is_err());
    }

    #[test]
    fn cpuinfo_cur_freq_when_scaling_cur_freq_is_absent() {
        let (dir, mut fs) = tree();
        put(&dir, "cpu0/cpufreq/cpuinfo_cur_freq", "876164\n");
        let info = read_info(&mut fs, 0).unwrap();
        assert_eq!(info.cur_khz, Some(876_164));
        assert_eq!(read_cur_khz(&mut fs, 0).unwrap(), 876_164);
        put(&dir, "cpu0/cpufreq/cpuinfo_cur_freq", "900000\n");
        assert_eq!(read_cur_khz_from(&mut fs, &info).unwrap(), 900_000);
    }

    #[test]
    fn empty_policy_has_no_current_file() {
        let (dir, mut fs) = tree();
        std::fs::create_dir_all(dir.path().join("sys").join(CPU_DIR).join("cpu1/cpufreq")).unwrap();
        let info = read_info(&mut fs, 1).unwrap();
        assert_eq!((info.cur_khz, info.cur_path.clone()), (None, None));
        assert!(matches!(
            read_cur_khz_from(&mut fs, &info),
            Err(ReadError::Missing(_))
        ));
    }

    #[test]
    fn boost_switches() {
        let (dir, mut fs) = tree();
        assert_eq!(read_boost(&mut fs), Boost::default());
        assert_eq!(read_boost(&mut fs).turbo_allowed(), None);
        put(&dir, "cpufreq/boost", "1\n");
        put(&dir, "amd_pstate/status", "active\n");
        let b = read_boost(&mut fs);
        assert_eq!(b.turbo_allowed(), Some(true));
        assert_eq!(b.amd_pstate_status.as_deref(), Some("active"));
        put(&dir, "intel_pstate/no_turbo", "1\n");
        assert_eq!(read_boost(&mut fs).turbo_allowed(), Some(false));
        put(&dir, "intel_pstate/no_turbo", "yes\n");
        assert_eq!(read_boost(&mut fs).intel_no_turbo, None);
    }
}
