//! The whole pipeline (machine facts, snapshot, interval, batch table, JSON)
//! runs on every real capture in ../shared/captures without a panic, and
//! agrees with the files on what it reports.

use std::path::{Path, PathBuf};

use noisetop::os::capture::Captured;
use noisetop::os::fs::{Fs, Roots};
use noisetop::output::batch;
use noisetop::sample::engine::Engine;
use noisetop::sample::sampler::Sampler;

fn captures() -> Option<Vec<PathBuf>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/captures");
    if !root.is_dir() {
        eprintln!("../shared/captures absent: skipped");
        return None;
    }
    let mut trees: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    trees.sort();
    Some(trees)
}

fn engine(tree: &Path) -> Engine<Captured> {
    let hw = Captured {
        stamp: noisetop::os::hw::Stamp {
            mono_ns: 1_000_000_000,
            wall_ns: 0,
        },
        ..Captured::default()
    };
    Engine::new(Sampler::new(Fs::new(Roots::under(tree)), hw))
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn every_capture_goes_through_the_whole_pipeline() {
    let Some(trees) = captures() else { return };
    assert!(
        trees.len() >= 23,
        "expected the 23 captures, found {}",
        trees.len()
    );
    for tree in trees {
        let name = tree.file_name().unwrap().to_string_lossy().to_string();
        let mut e = engine(&tree);
        assert!(e.step().is_none());
        e.sampler.hw.stamp.mono_ns += 1_000_000_000;
        let iv = e.step().expect("second snapshot gives an interval");
        assert!((iv.dt_s - 1.0).abs() < 1e-12, "{name}");
        // the same files read twice: every rate that is known is exactly 0
        for c in &iv.cpus {
            for v in [c.irq_per_s, c.loc_per_s, c.softirq_per_s, c.csw_per_s] {
                assert!(
                    v.is_none_or(|x| x.abs() < f64::EPSILON),
                    "{name} cpu{}: {v:?}",
                    c.cpu
                );
            }
            for s in c.idle.iter() {
                assert!(
                    s.pct.is_none_or(|x| x == 0.0),
                    "{name} cpu{} {}",
                    c.cpu,
                    s.name
                );
            }
        }
        let snap = e.last().unwrap();
        // without sysfs, the online CPUs are exactly those /proc/stat lists
        let from_stat =
            e.sampler.machine.online_note.as_deref() == Some("online CPUs taken from /proc/stat");
        if let (Ok(stat), true) = (&snap.stat, from_stat) {
            let cpus: Vec<u32> = stat.cpus.keys().collect();
            assert_eq!(e.sampler.machine.online, cpus, "{name}");
        }
        let table = batch::table(&iv, None);
        assert_eq!(
            table.lines().count(),
            iv.cpus.len() + 2,
            "{name}: header, summary, one row per CPU"
        );
        let json = serde_json::to_string(snap).unwrap();
        assert!(json.starts_with('{'), "{name}");
        let _ = batch::footer(&e.statuses());
    }
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn online_cpus_come_from_sysfs_when_present() {
    let Some(trees) = captures() else { return };
    let find = |n: &str| trees.iter().find(|t| t.ends_with(n)).unwrap().clone();
    // util-linux-nehalem-64cpu: online=0-63, offline=64-79
    let e = engine(&find("util-linux-nehalem-64cpu"));
    assert_eq!(e.sampler.machine.online, (0..64).collect::<Vec<u32>>());
    // pcp-hpbl920gen8-480cpu has only /proc: 480 CPUs from /proc/stat
    let e = engine(&find("pcp-hpbl920gen8-480cpu"));
    assert_eq!(e.sampler.machine.online.len(), 480);
    assert_eq!(
        e.sampler.machine.online_note.as_deref(),
        Some("online CPUs taken from /proc/stat")
    );
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn epyc_capture_reports_its_idle_states_and_boost() {
    let Some(trees) = captures() else { return };
    let tree = trees
        .iter()
        .find(|t| t.ends_with("util-linux-epyc7451-2s-96cpu"))
        .unwrap();
    let e = engine(tree);
    let m = &e.sampler.machine;
    assert_eq!(m.online.len(), 96);
    let names: Vec<&str> = m.idle_states[&0].iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["POLL", "C1", "C2"]);
    assert_eq!(m.idle_states[&0][2].latency_us, Some(100));
    assert_eq!(m.boost.cpufreq_boost, Some(true));
    assert_eq!(m.max_mhz, Some(2300.0));
    // the frequency falls back to cpufreq: no perf, no MSR in a capture of files
    assert_eq!(
        e.sampler.freq_source(),
        Some(noisetop::model::interval::FreqSource::Cpufreq)
    );
}
