//! Reads temperatures from hwmon (`class/hwmon/hwmonN/tempK_input`, sensors
//! discovered once, one read per sensor per interval), the thermal throttle
//! counts of each CPU (`cpuN/thermal_throttle/*_throttle_count`), and maps a
//! CPU to the sensor that measures it.
//!
//! How a CPU maps to a sensor ([`core_temp_for`]):
//! * Intel `coretemp` has one chip per package. The chip's package is the P
//!   of its `Package id P` label (`Physical id P` on old kernels); a CPU's
//!   core sensor is the one labelled `Core C`, C being the CPU's raw
//!   `topology/core_id` (both come from the same APIC core id). Without a
//!   `Core C` sensor the package sensor is used. A lone coretemp chip with
//!   no package label serves every CPU.
//! * AMD `k10temp` (and the out-of-tree `zenpower`) has one chip per
//!   package, in package order, and no per-core sensor: `Tdie` (the real
//!   temperature) else `Tctl` (which may carry a fan-control offset) is the
//!   package's temperature. `TccdN` sensors are per CCD, and sysfs does not
//!   say which cores sit on which CCD, so they are not mapped to CPUs.

use serde::Serialize;

use crate::collect::topology::{CPU_DIR, numbered, opt_text, resolve};
use crate::os::fs::{Base, FileId, Fs, ReadError};

/// Where hwmon chips are listed, relative to sysfs.
const HWMON_DIR: &str = "class/hwmon";

/// One temperature reading.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HwmonTemp {
    /// The chip's `name` (`coretemp`, `k10temp`, `nvme`); the `hwmonN`
    /// directory name when the chip has no `name` file.
    pub chip: String,
    /// The `hwmonN` directory.
    pub dir: String,
    /// K in `tempK_input`.
    pub index: u32,
    /// `tempK_label` (`Core 0`, `Package id 0`, `Tctl`).
    pub label: Option<String>,
    /// The reading in millidegrees Celsius, as the kernel gives it.
    pub millidegrees: i64,
}

/// One temperature sensor found at start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HwmonSensor {
    /// The chip's `name`; the `hwmonN` directory name when it has none.
    pub chip: String,
    /// The `hwmonN` directory.
    pub dir: String,
    /// K in `tempK_input`.
    pub index: u32,
    /// `tempK_label`.
    pub label: Option<String>,
    /// The input file, relative to sysfs, links followed.
    pub path: String,
}

/// Thermal throttle event counts of one CPU (Intel `therm_throt`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct ThrottleCounts {
    /// `core_throttle_count`: times this core was throttled for heat.
    pub core: Option<u64>,
    /// `package_throttle_count`: times its package was; the same on every CPU of it.
    pub package: Option<u64>,
}

/// Which part of the CPU a sensor picked by [`core_temp_for`] measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum TempScope {
    /// The CPU's own core.
    Core,
    /// The whole package the CPU sits on.
    Package,
}

/// The sensor that measures one CPU, and at which scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuTemp<'a> {
    /// The sensor to read.
    pub sensor: &'a HwmonSensor,
    /// What it measures.
    pub scope: TempScope,
}

/// Finds every `tempK_input` under `class/hwmon/*`, following the links
/// (and plain directories) there; old kernels keep the files in `device/`.
pub fn discover_temps(fs: &mut Fs) -> Vec<HwmonSensor> {
    let Ok(names) = fs.list(Base::Sys, HWMON_DIR) else {
        return Vec::new();
    };
    let mut sensors = Vec::new();
    for name in names.iter().filter(|n| numbered(n, "hwmon").is_some()) {
        sensors.extend(chip_sensors(fs, name));
    }
    sensors
}

fn chip_sensors(fs: &mut Fs, name: &str) -> Vec<HwmonSensor> {
    let top = resolve(fs, Base::Sys, &format!("{HWMON_DIR}/{name}"));
    let mut dir = top.clone();
    let mut inputs = temp_inputs(fs, &dir);
    if inputs.is_empty() {
        dir = resolve(fs, Base::Sys, &format!("{top}/device"));
        inputs = temp_inputs(fs, &dir);
    }
    let chip = opt_text(fs, Base::Sys, &format!("{dir}/name"))
        .or_else(|| opt_text(fs, Base::Sys, &format!("{top}/name")))
        .unwrap_or_else(|| name.to_string());
    inputs
        .into_iter()
        .map(|index| HwmonSensor {
            chip: chip.clone(),
            dir: name.to_string(),
            index,
            label: opt_text(fs, Base::Sys, &format!("{dir}/temp{index}_label")),
            path: format!("{dir}/temp{index}_input"),
        })
        .collect()
}

/// Lists the K of every `tempK_input` in a directory, sorted.
fn temp_inputs(fs: &mut Fs, dir: &str) -> Vec<u32> {
    let Ok(names) = fs.list(Base::Sys, dir) else {
        return Vec::new();
    };
    let mut idx: Vec<u32> = names
        .iter()
        .filter_map(|n| numbered(n.strip_suffix("_input")?, "temp"))
        .collect();
    idx.sort_unstable();
    idx
}

/// Reads one sensor, in millidegrees Celsius.
pub fn read_temp(fs: &mut Fs, s: &HwmonSensor) -> Result<i64, ReadError> {
    fs.read_i64(Base::Sys, &s.path)
}

/// Reads every sensor, one result per sensor in the same order.
pub fn read_temps(fs: &mut Fs, sensors: &[HwmonSensor]) -> Vec<Result<HwmonTemp, ReadError>> {
    sensors
        .iter()
        .map(|s| {
            Ok(HwmonTemp {
                chip: s.chip.clone(),
                dir: s.dir.clone(),
                index: s.index,
                label: s.label.clone(),
                millidegrees: read_temp(fs, s)?,
            })
        })
        .collect()
}

/// The `thermal_throttle` count files of one CPU, registered with `Fs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThrottleFiles {
    /// `core_throttle_count`.
    pub core: FileId,
    /// `package_throttle_count`.
    pub package: FileId,
}

/// Registers the throttle count files of one CPU (nothing is opened yet).
pub fn throttle_files(fs: &mut Fs, cpu: u32) -> ThrottleFiles {
    let dir = format!("{CPU_DIR}/cpu{cpu}/thermal_throttle");
    ThrottleFiles {
        core: fs.file_id(Base::Sys, &format!("{dir}/core_throttle_count")),
        package: fs.file_id(Base::Sys, &format!("{dir}/package_throttle_count")),
    }
}

/// Reads the thermal throttle counts of one CPU; absent files give `None`.
pub fn read_throttle(fs: &mut Fs, cpu: u32) -> ThrottleCounts {
    let files = throttle_files(fs, cpu);
    ThrottleCounts {
        core: fs.read_u64_id(files.core).ok(),
        package: fs.read_u64_id(files.package).ok(),
    }
}

/// Picks the sensor for the CPU with raw ids `package` and `core` (see the
/// module documentation for the rules); `None` when no sensor fits.
pub fn core_temp_for(
    sensors: &[HwmonSensor],
    package: Option<u32>,
    core: Option<u32>,
) -> Option<CpuTemp<'_>> {
    if let Some(dir) = coretemp_dir(sensors, package) {
        let in_dir = || sensors.iter().filter(move |s| s.dir == dir);
        if let Some(c) = core {
            let want = format!("Core {c}");
            if let Some(sensor) = in_dir().find(|s| s.label.as_deref() == Some(want.as_str())) {
                return Some(CpuTemp {
                    sensor,
                    scope: TempScope::Core,
                });
            }
        }
        let sensor = in_dir().find(|s| package_label(s).is_some())?;
        return Some(CpuTemp {
            sensor,
            scope: TempScope::Package,
        });
    }
    let sensor = package_temp_for(sensors, package)?;
    Some(CpuTemp {
        sensor,
        scope: TempScope::Package,
    })
}

/// Picks the package temperature sensor: coretemp `Package id P`, or
/// k10temp/zenpower `Tdie` else `Tctl` on the package's chip.
pub fn package_temp_for(sensors: &[HwmonSensor], package: Option<u32>) -> Option<&HwmonSensor> {
    if let Some(dir) = coretemp_dir(sensors, package) {
        return sensors
            .iter()
            .find(|s| s.dir == dir && package_label(s).is_some());
    }
    let dir = amd_dir(sensors, package)?;
    let in_dir = |label: &str| {
        sensors
            .iter()
            .find(|s| s.dir == dir && s.label.as_deref() == Some(label))
    };
    in_dir("Tdie").or_else(|| in_dir("Tctl"))
}

/// Returns the P of a `Package id P` / `Physical id P` label.
fn package_label(s: &HwmonSensor) -> Option<u32> {
    let label = s.label.as_deref()?;
    let id = label
        .strip_prefix("Package id ")
        .or_else(|| label.strip_prefix("Physical id "))?;
    id.trim().parse().ok()
}

/// Finds the coretemp chip directory of a package.
fn coretemp_dir(sensors: &[HwmonSensor], package: Option<u32>) -> Option<&str> {
    let coretemp = || sensors.iter().filter(|s| s.chip == "coretemp");
    if let Some(p) = package
        && let Some(s) = coretemp().find(|s| package_label(s) == Some(p))
    {
        return Some(&s.dir);
    }
    let dirs = unique_dirs(coretemp());
    let lone = dirs.len() == 1 && coretemp().all(|s| package_label(s).is_none());
    lone.then(|| dirs[0])
}

/// Finds the k10temp/zenpower chip directory of a package: the P-th one.
fn amd_dir(sensors: &[HwmonSensor], package: Option<u32>) -> Option<&str> {
    let dirs = unique_dirs(
        sensors
            .iter()
            .filter(|s| s.chip == "k10temp" || s.chip == "zenpower"),
    );
    match package {
        Some(p) => dirs.get(p as usize).copied(),
        None => (dirs.len() == 1).then(|| dirs[0]),
    }
}

/// Lists the distinct chip directories of some sensors, in first-seen order.
fn unique_dirs<'a>(sensors: impl Iterator<Item = &'a HwmonSensor>) -> Vec<&'a str> {
    let mut dirs: Vec<&str> = Vec::new();
    for s in sensors {
        if !dirs.contains(&s.dir.as_str()) {
            dirs.push(&s.dir);
        }
    }
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::os::fs::Roots;

    fn tree() -> (tempfile::TempDir, Fs) {
        let dir = tempfile::tempdir().unwrap();
        let fs = Fs::new(Roots::under(dir.path()));
        (dir, fs)
    }

    fn put(dir: &tempfile::TempDir, rel: &str, text: &str) {
        let p = dir.path().join("sys").join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn sensor(chip: &str, dir: &str, index: u32, label: &str) -> HwmonSensor {
        HwmonSensor {
            chip: chip.into(),
            dir: dir.into(),
            index,
            label: Some(label.into()),
            path: format!("{dir}/temp{index}_input"),
        }
    }

    #[test]
    fn no_hwmon_class_means_no_sensors() {
        let (_dir, mut fs) = tree();
        assert_eq!(discover_temps(&mut fs), []);
    }

    #[test]
    fn real_symlinks_old_device_dir_and_garbage() {
        let (dir, mut fs) = tree();
        put(
            &dir,
            "devices/platform/coretemp.0/hwmon/hwmon1/name",
            "coretemp\n",
        );
        put(
            &dir,
            "devices/platform/coretemp.0/hwmon/hwmon1/temp10_input",
            "-5000\n",
        );
        put(
            &dir,
            "devices/platform/coretemp.0/hwmon/hwmon1/temp2_input",
            "hot\n",
        );
        put(
            &dir,
            "devices/platform/coretemp.0/hwmon/hwmon1/temp2_label",
            "Core 0\n",
        );
        std::fs::create_dir_all(dir.path().join("sys/class/hwmon")).unwrap();
        std::os::unix::fs::symlink(
            "../../devices/platform/coretemp.0/hwmon/hwmon1",
            dir.path().join("sys/class/hwmon/hwmon1"),
        )
        .unwrap();
        put(&dir, "class/hwmon/hwmon0/device/name", "it87\n");
        put(&dir, "class/hwmon/hwmon0/device/temp1_input", "30000\n");
        put(&dir, "class/hwmon/hwmon2/name", "acpi_fan\n");
        let s = discover_temps(&mut fs);
        let got: Vec<_> = s
            .iter()
            .map(|s| (s.chip.as_str(), s.dir.as_str(), s.index))
            .collect();
        assert_eq!(
            got,
            [
                ("it87", "hwmon0", 1),
                ("coretemp", "hwmon1", 2),
                ("coretemp", "hwmon1", 10)
            ]
        );
        assert_eq!(read_temp(&mut fs, &s[0]).unwrap(), 30_000);
        assert!(read_temp(&mut fs, &s[1]).is_err(), "garbage is an error");
        assert_eq!(read_temp(&mut fs, &s[2]).unwrap(), -5_000);
        let all = read_temps(&mut fs, &s);
        assert_eq!(all[0].as_ref().unwrap().millidegrees, 30_000);
        assert!(all[1].is_err());
    }

    #[test]
    fn throttle_counts_missing_and_garbage() {
        let (dir, mut fs) = tree();
        assert_eq!(read_throttle(&mut fs, 0), ThrottleCounts::default());
        put(
            &dir,
            &format!("{CPU_DIR}/cpu0/thermal_throttle/core_throttle_count"),
            "7\n",
        );
        put(
            &dir,
            &format!("{CPU_DIR}/cpu0/thermal_throttle/package_throttle_count"),
            "x\n",
        );
        assert_eq!(
            read_throttle(&mut fs, 0),
            ThrottleCounts {
                core: Some(7),
                package: None
            }
        );
    }

    #[test]
    fn coretemp_mapping_two_packages() {
        let s = [
            sensor("coretemp", "hwmon1", 1, "Package id 1"),
            sensor("coretemp", "hwmon1", 2, "Core 0"),
            sensor("coretemp", "hwmon0", 1, "Package id 0"),
            sensor("coretemp", "hwmon0", 2, "Core 0"),
            sensor("coretemp", "hwmon0", 3, "Core 8"),
        ];
        let t = core_temp_for(&s, Some(0), Some(8)).unwrap();
        assert_eq!(
            (t.sensor.dir.as_str(), t.sensor.index, t.scope),
            ("hwmon0", 3, TempScope::Core)
        );
        let t = core_temp_for(&s, Some(1), Some(0)).unwrap();
        assert_eq!((t.sensor.dir.as_str(), t.sensor.index), ("hwmon1", 2));
        let t = core_temp_for(&s, Some(1), Some(5)).unwrap();
        assert_eq!((t.sensor.index, t.scope), (1, TempScope::Package));
        assert_eq!(core_temp_for(&s, Some(2), Some(0)), None);
        assert_eq!(
            core_temp_for(&s, None, Some(0)),
            None,
            "two chips, package unknown"
        );
        assert_eq!(package_temp_for(&s, Some(1)).unwrap().dir, "hwmon1");
    }

    #[test]
    fn lone_coretemp_without_package_label() {
        let s = [
            sensor("coretemp", "hwmon3", 2, "Core 1"),
            sensor("nvme", "hwmon4", 1, "Composite"),
        ];
        let t = core_temp_for(&s, None, Some(1)).unwrap();
        assert_eq!((t.sensor.index, t.scope), (2, TempScope::Core));
        assert_eq!(
            core_temp_for(&s, Some(0), Some(3)),
            None,
            "no package sensor either"
        );
    }

    #[test]
    fn k10temp_mapping() {
        let s = [
            sensor("k10temp", "hwmon2", 1, "Tctl"),
            sensor("k10temp", "hwmon2", 3, "Tccd1"),
            sensor("k10temp", "hwmon5", 1, "Tctl"),
            sensor("k10temp", "hwmon5", 2, "Tdie"),
        ];
        let t = core_temp_for(&s, Some(0), Some(4)).unwrap();
        assert_eq!(
            (t.sensor.dir.as_str(), t.sensor.index, t.scope),
            ("hwmon2", 1, TempScope::Package)
        );
        let t = core_temp_for(&s, Some(1), Some(4)).unwrap();
        assert_eq!(
            (t.sensor.dir.as_str(), t.sensor.index),
            ("hwmon5", 2),
            "Tdie before Tctl"
        );
        assert_eq!(core_temp_for(&s, Some(2), None), None);
        assert_eq!(core_temp_for(&s, None, None), None);
        assert_eq!(core_temp_for(&[], Some(0), Some(0)), None);
    }
}
