//! Topology and SMT from `/proc/cpuinfo` when sysfs has none: the 480-CPU
//! HP BL920 Gen8 dump kept only `proc/stat` and `proc/cpuinfo` (16
//! packages × 15 cores × 2 threads), and SMT that nothing tells is unknown.

use std::path::Path;

use noisetop::model::machine::Machine;
use noisetop::os::fs::{Fs, Roots};

fn captures() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/captures")
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn the_480_cpu_dump_gets_packages_cores_and_smt_from_cpuinfo() {
    let tree = captures().join("pcp-hpbl920gen8-480cpu");
    if !tree.exists() {
        eprintln!("{} absent: skipped", tree.display());
        return;
    }
    let m = Machine::read(&mut Fs::new(Roots::under(&tree)));
    assert_eq!(m.online.len(), 480);
    assert_eq!(m.topology.len(), 480);
    assert!(
        m.topology
            .iter()
            .all(|t| t.package.is_some() && t.core.is_some())
    );
    let t0 = m.topo(0).unwrap();
    assert_eq!((t0.package, t0.core), (Some(0), Some(0)));
    assert_eq!(t0.siblings, [0, 240]);
    assert_eq!(m.topo(240).unwrap().siblings, [0, 240]);
    let t15 = m.topo(15).unwrap();
    assert_eq!((t15.package, t15.core), (Some(1), Some(0)));
    assert!(m.topology.iter().all(|t| t.siblings.len() == 2));
    assert_eq!(m.package_leaders().len(), 16);
    assert_eq!(
        m.topology_note.as_deref(),
        Some("package and core from /proc/cpuinfo (no sysfs topology)")
    );
    assert_eq!(m.smt, Some(true));
    assert_eq!(m.smt_note, "sibling lists");
}

#[test]
fn smt_from_cpuinfo_counts_or_unknown_never_off() {
    let dir = tempfile::tempdir().unwrap();
    let proc = dir.path().join("proc");
    std::fs::create_dir_all(&proc).unwrap();
    std::fs::write(
        proc.join("stat"),
        "cpu  1 0 1 10 0 0 0 0 0 0\ncpu0 1 0 1 10 0 0 0 0 0 0\ncpu1 1 0 1 10 0 0 0 0 0 0\n",
    )
    .unwrap();
    // no place at all: unknown, with the reason
    std::fs::write(
        proc.join("cpuinfo"),
        "processor\t: 0\nvendor_id\t: GenuineIntel\n\nprocessor\t: 1\nvendor_id\t: GenuineIntel\n\n",
    )
    .unwrap();
    let m = Machine::read(&mut Fs::new(Roots::under(dir.path())));
    assert_eq!(m.smt, None);
    assert!(m.smt_note.starts_with("unknown: "), "{}", m.smt_note);
    assert!(m.topology.iter().all(|t| t.package.is_none()));
    assert_eq!(
        m.topology_note.as_deref(),
        Some("no sysfs topology for 2 CPUs and no physical/core id in /proc/cpuinfo")
    );
    // siblings and cpu cores without core ids: SMT off, from the counts
    std::fs::write(
        proc.join("cpuinfo"),
        "processor\t: 0\nsiblings\t: 2\ncpu cores\t: 2\n\nprocessor\t: 1\nsiblings\t: 2\ncpu cores\t: 2\n\n",
    )
    .unwrap();
    let m = Machine::read(&mut Fs::new(Roots::under(dir.path())));
    assert_eq!(m.smt, Some(false));
    assert_eq!(m.smt_note, "/proc/cpuinfo: 2 siblings, 2 cores per package");
    assert!(
        m.topology_note
            .unwrap()
            .starts_with("no sysfs topology for 2 CPUs")
    );
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn sysfs_topology_wins_over_cpuinfo() {
    let tree = captures().join("util-linux-epyc7451-2s-96cpu");
    if !tree.exists() {
        eprintln!("{} absent: skipped", tree.display());
        return;
    }
    let m = Machine::read(&mut Fs::new(Roots::under(&tree)));
    assert_eq!(m.topology_note, None);
    assert_eq!(m.smt, Some(true));
    assert_eq!(m.smt_note, "sysfs smt/active");
}
