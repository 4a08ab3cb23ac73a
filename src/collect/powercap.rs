//! Reads RAPL energy counters through the powercap sysfs class: zones
//! (`class/powercap/intel-rapl:N[:M]`, also used by AMD) discovered once, in
//! the flat layout a kernel shows, the nested `intel-rapl/intel-rapl:N/…`
//! layout, or both, without duplicates; then one `energy_uj` read per zone
//! per interval. The counter wraps at `max_energy_range_uj`.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::collect::topology::{opt_text, opt_u64, resolve};
use crate::os::fs::{Base, FileId, Fs, ReadError};

/// Where powercap zones are listed, relative to sysfs.
const POWERCAP_DIR: &str = "class/powercap";

/// The prefix of RAPL zone names (`intel-rapl-mmio:` zones repeat the
/// package counter and are left out).
const PREFIX: &str = "intel-rapl:";

/// One RAPL zone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RaplZone {
    /// The zone's directory name: `intel-rapl:0`, `intel-rapl:0:1`, `intel-rapl:a`.
    pub id: String,
    /// The zone's `name` file: `package-0`, `core`, `uncore`, `dram`, `psys`;
    /// the id when the file is missing.
    pub name: String,
    /// `max_energy_range_uj`: where `energy_uj` wraps to 0.
    pub max_energy_range_uj: Option<u64>,
    /// The zone directory, relative to sysfs, links followed.
    pub path: String,
    /// The package the zone measures, from its own or its parent's
    /// `package-N` name; the zone index does not tell (`intel-rapl:0` may be
    /// `package-1`).
    pub package: Option<u32>,
}

/// Finds every RAPL zone, sorted by index (`intel-rapl:2` before `intel-rapl:a`).
pub fn discover_zones(fs: &mut Fs) -> Vec<RaplZone> {
    let mut dirs: BTreeMap<Vec<u32>, (String, String)> = BTreeMap::new();
    for (id, rel) in flat_dirs(fs).into_iter().chain(nested_dirs(fs)) {
        if let Some(index) = zone_index(&id) {
            dirs.entry(index).or_insert((id, rel));
        }
    }
    let mut zones: Vec<(Vec<u32>, RaplZone)> = dirs
        .into_iter()
        .map(|(index, (id, rel))| (index, read_zone(fs, id, &rel)))
        .collect();
    let packages: BTreeMap<u32, Option<u32>> = zones
        .iter()
        .filter(|(index, _)| index.len() == 1)
        .map(|(index, z)| (index[0], z.package))
        .collect();
    for (index, zone) in &mut zones {
        if index.len() > 1 && zone.package.is_none() {
            zone.package = packages.get(&index[0]).copied().flatten();
        }
    }
    zones.into_iter().map(|(_, z)| z).collect()
}

/// Lists `class/powercap/intel-rapl:*` as (id, resolved path).
fn flat_dirs(fs: &mut Fs) -> Vec<(String, String)> {
    let names = fs.list(Base::Sys, POWERCAP_DIR).unwrap_or_default();
    names
        .into_iter()
        .filter(|n| n.starts_with(PREFIX))
        .map(|n| {
            let rel = resolve(fs, Base::Sys, &format!("{POWERCAP_DIR}/{n}"));
            (n, rel)
        })
        .collect()
}

/// Lists the zones nested under `class/powercap/intel-rapl/`, two levels deep.
fn nested_dirs(fs: &mut Fs) -> Vec<(String, String)> {
    let top = resolve(fs, Base::Sys, &format!("{POWERCAP_DIR}/intel-rapl"));
    let mut out = Vec::new();
    for (id, rel) in zone_children(fs, &top) {
        let subs = zone_children(fs, &rel);
        out.push((id, rel));
        out.extend(subs);
    }
    out
}

fn zone_children(fs: &mut Fs, dir: &str) -> Vec<(String, String)> {
    let names = fs.list(Base::Sys, dir).unwrap_or_default();
    names
        .into_iter()
        .filter(|n| n.starts_with(PREFIX))
        .map(|n| {
            let rel = resolve(fs, Base::Sys, &format!("{dir}/{n}"));
            (n, rel)
        })
        .collect()
}

/// Parses the hex indices of a zone id: `intel-rapl:0:a` is `[0, 10]`.
pub fn zone_index(id: &str) -> Option<Vec<u32>> {
    let rest = id.strip_prefix(PREFIX)?;
    rest.split(':')
        .map(|p| {
            let ok = !p.is_empty() && p.len() <= 8 && p.bytes().all(|b| b.is_ascii_hexdigit());
            ok.then(|| u32::from_str_radix(p, 16).ok()).flatten()
        })
        .collect()
}

fn read_zone(fs: &mut Fs, id: String, rel: &str) -> RaplZone {
    let name = opt_text(fs, Base::Sys, &format!("{rel}/name")).unwrap_or_else(|| id.clone());
    let package = name.strip_prefix("package-").and_then(|n| n.parse().ok());
    RaplZone {
        max_energy_range_uj: opt_u64(fs, &format!("{rel}/max_energy_range_uj")),
        path: rel.to_string(),
        package,
        name,
        id,
    }
}

/// Reads a zone's cumulative energy in µJ (often root-only since 2020).
pub fn read_energy_uj(fs: &mut Fs, z: &RaplZone) -> Result<u64, ReadError> {
    let id = energy_file(fs, z);
    fs.read_u64_id(id)
}

/// Registers a zone's `energy_uj` with `Fs`, to be read each interval.
pub fn energy_file(fs: &mut Fs, z: &RaplZone) -> FileId {
    fs.file_id(Base::Sys, &format!("{}/energy_uj", z.path))
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
        let p = dir.path().join("sys").join(POWERCAP_DIR).join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn zone_ids() {
        assert_eq!(zone_index("intel-rapl:0"), Some(vec![0]));
        assert_eq!(zone_index("intel-rapl:a:1f"), Some(vec![10, 31]));
        assert_eq!(zone_index("intel-rapl"), None);
        assert_eq!(zone_index("intel-rapl:"), None);
        assert_eq!(zone_index("intel-rapl:0:"), None);
        assert_eq!(zone_index("intel-rapl:g"), None);
        assert_eq!(zone_index("intel-rapl:123456789"), None);
        assert_eq!(zone_index("intel-rapl-mmio:0"), None);
    }

    #[test]
    fn nothing_there_means_no_zones() {
        let (_dir, mut fs) = tree();
        assert_eq!(discover_zones(&mut fs), []);
    }

    #[test]
    fn nested_and_flat_symlinks_are_one_zone_each() {
        let (dir, mut fs) = tree();
        put(&dir, "intel-rapl/intel-rapl:1/name", "package-0\n");
        put(&dir, "intel-rapl/intel-rapl:1/energy_uj", "12\n");
        put(
            &dir,
            "intel-rapl/intel-rapl:1/intel-rapl:1:0/name",
            "dram\n",
        );
        put(
            &dir,
            "intel-rapl/intel-rapl:1/intel-rapl:1:0/energy_uj",
            "garbage\n",
        );
        put(
            &dir,
            "intel-rapl-mmio/intel-rapl-mmio:0/name",
            "package-0\n",
        );
        let base = dir.path().join("sys").join(POWERCAP_DIR);
        std::os::unix::fs::symlink("intel-rapl/intel-rapl:1", base.join("intel-rapl:1")).unwrap();
        std::os::unix::fs::symlink(
            "intel-rapl-mmio/intel-rapl-mmio:0",
            base.join("intel-rapl-mmio:0"),
        )
        .unwrap();
        let z = discover_zones(&mut fs);
        let got: Vec<_> = z
            .iter()
            .map(|z| (z.id.as_str(), z.name.as_str(), z.package))
            .collect();
        assert_eq!(
            got,
            [
                ("intel-rapl:1", "package-0", Some(0)),
                ("intel-rapl:1:0", "dram", Some(0))
            ]
        );
        assert_eq!(
            z[0].path, "class/powercap/intel-rapl/intel-rapl:1",
            "a real link is followed, as a link file is"
        );
        assert_eq!(z[0].max_energy_range_uj, None);
        assert_eq!(read_energy_uj(&mut fs, &z[0]).unwrap(), 12);
        assert!(read_energy_uj(&mut fs, &z[1]).is_err());
    }

    #[test]
    fn unreadable_energy_is_an_error() {
        let (dir, mut fs) = tree();
        put(&dir, "intel-rapl:0/name", "package-0\n");
        let zone = dir
            .path()
            .join("sys")
            .join(POWERCAP_DIR)
            .join("intel-rapl:0");
        // A link loop stands in for a root-only file: root can read those.
        std::os::unix::fs::symlink("energy_uj", zone.join("energy_uj")).unwrap();
        let z = discover_zones(&mut fs);
        assert!(matches!(
            read_energy_uj(&mut fs, &z[0]),
            Err(ReadError::Io(..))
        ));
    }

    #[test]
    fn zone_without_name_or_energy() {
        let (dir, mut fs) = tree();
        std::fs::create_dir_all(
            dir.path()
                .join("sys")
                .join(POWERCAP_DIR)
                .join("intel-rapl:2"),
        )
        .unwrap();
        let z = discover_zones(&mut fs);
        assert_eq!((z[0].name.as_str(), z[0].package), ("intel-rapl:2", None));
        assert!(matches!(
            read_energy_uj(&mut fs, &z[0]),
            Err(ReadError::Missing(_))
        ));
    }
}
