//! `--root` on a tree that is not this machine's gets no live counter:
//! the tree below has CPUs 0 and 1, like this machine, and perf context
//! switches and migrations from here would fill its rows if noisetop did
//! not tell the two apart. A capture instant under `--root` uses its own
//! clock and tables.

use std::path::Path;
use std::process::Command;

use noisetop::testkit::synth::{self, Flavor, Spec};

fn noisetop(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_noisetop"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A VM tree of two CPUs: instant 0 of a generated capture without its
/// `noisetop/` tables, so nothing says what machine or boot it is.
fn foreign_tree(dir: &Path) -> std::path::PathBuf {
    synth::write_capture(
        dir,
        &Spec {
            instants: 1,
            ..Spec::new(Flavor::Vm, 2)
        },
    )
    .unwrap();
    let inst = dir.join("0000");
    std::fs::remove_dir_all(inst.join("noisetop")).unwrap();
    inst
}

#[test]
fn batch_on_a_foreign_tree_shows_no_live_count_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let tree = foreign_tree(dir.path());
    let (code, out, err) = noisetop(&[
        "--batch",
        "--root",
        tree.to_str().unwrap(),
        "-n",
        "2",
        "-i",
        "100ms",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("# foreign tree: "), "{out}");
    let header = out
        .lines()
        .find(|l| l.trim_start().starts_with("CPU"))
        .expect("a table header");
    let cols: Vec<&str> = header.split_whitespace().collect();
    let csw = cols
        .iter()
        .position(|c| *c == "CSW/s")
        .expect("CSW/s column");
    let irq = cols
        .iter()
        .position(|c| *c == "IRQ/s")
        .expect("IRQ/s column");
    let mut rows = 0;
    for l in out.lines().filter(|l| {
        let w: Vec<&str> = l.split_whitespace().collect();
        w.len() == cols.len() && (w[0] == "0" || w[0] == "1")
    }) {
        let w: Vec<&str> = l.split_whitespace().collect();
        // no live perf count, and no rate from one standing instant
        assert_eq!(w[csw], "-", "{l}");
        assert_eq!(w[irq], "-", "{l}");
        rows += 1;
    }
    assert_eq!(rows, 4, "two CPUs, two intervals:\n{out}");
    assert!(
        out.contains("# CSW/s MIG/s: unavailable: ") && out.contains("boot_id"),
        "{out}"
    );
}

#[test]
fn snapshot_of_a_foreign_tree_has_no_perf_count_nor_this_clock() {
    let dir = tempfile::tempdir().unwrap();
    let tree = foreign_tree(dir.path());
    let (code, out, err) = noisetop(&["snapshot", "--json", "--root", tree.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["snapshot"]["csw"], serde_json::json!({}));
    assert_eq!(v["snapshot"]["time"]["mono_ns"], 0);
    // the tree was read now: its wall time is this machine's, not 1970
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let wall = v["snapshot"]["time"]["wall_ns"].as_u64().unwrap();
    assert!(now.abs_diff(wall) < 60_000_000_000, "{wall} vs {now}");
    // one cause for perf and the MSRs is said once
    let freq = v["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["metric"] == "Frequency")
        .unwrap();
    let note = freq["note"].as_str().unwrap_or_default();
    assert_eq!(note.matches("boot_id").count(), 1, "{note}");
    assert!(
        v["probe"]["msr"]["Err"]
            .as_str()
            .unwrap()
            .contains("boot_id"),
        "{}",
        v["probe"]
    );
}

#[test]
fn snapshot_of_a_capture_instant_uses_its_own_clock() {
    let dir = tempfile::tempdir().unwrap();
    synth::write_capture(
        dir.path(),
        &Spec {
            instants: 2,
            ..Spec::new(Flavor::Vm, 2)
        },
    )
    .unwrap();
    let inst = dir.path().join("0001");
    let clock = std::fs::read_to_string(inst.join("noisetop/clock")).unwrap();
    let mono: u64 = clock.split_whitespace().next().unwrap().parse().unwrap();
    let (code, out, err) = noisetop(&["snapshot", "--json", "--root", inst.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["snapshot"]["time"]["mono_ns"], mono);
}

#[test]
fn this_machines_own_proc_under_root_is_live() {
    // / mounted at / is this machine: its boot_id matches
    let (code, out, err) = noisetop(&["snapshot", "--json", "--root", "/"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["snapshot"]["time"]["mono_ns"].as_u64().unwrap() > 0);
}
