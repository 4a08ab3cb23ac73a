//! `noisetop --batch --capture DIR` and `noisetop replay DIR --batch` print
//! the same numbers; bad capture folders give clear errors.

use std::path::Path;
use std::process::Command;

use crate::cpu1;
use crate::spinner;
use spinner::Spinner;

fn noisetop() -> Command {
    Command::new(env!("CARGO_BIN_EXE_noisetop"))
}

/// What `noisetop replay CAP --batch` prints; it must succeed.
fn replay_batch(cap: &Path) -> String {
    let replay = noisetop()
        .arg("replay")
        .arg(cap)
        .arg("--batch")
        .output()
        .unwrap();
    assert!(
        replay.status.success(),
        "{}",
        String::from_utf8_lossy(&replay.stderr)
    );
    String::from_utf8(replay.stdout).unwrap()
}

/// `text`'s lines but those starting with one of `prefixes`.
fn without(text: &str, prefixes: &[&str]) -> String {
    let mut out = String::new();
    for l in text
        .lines()
        .filter(|l| !prefixes.iter().any(|p| l.starts_with(p)))
    {
        out.push_str(l);
        out.push('\n');
    }
    out
}

#[test]
fn replay_prints_what_the_live_run_printed() {
    let _turn = crate::turn::take();
    let dir = tempfile::tempdir().unwrap();
    let cap = dir.path().join("cap");
    let live = noisetop()
        .args([
            "--batch",
            "--count",
            "2",
            "--interval",
            "200ms",
            "--capture",
        ])
        .arg(&cap)
        .output()
        .unwrap();
    assert!(
        live.status.success(),
        "{}",
        String::from_utf8_lossy(&live.stderr)
    );
    let live = String::from_utf8(live.stdout).unwrap();
    let replay = replay_batch(&cap);
    // line for line: nothing was watched, and both say so in one way
    assert_eq!(live, replay);
    assert!(
        replay.contains("# who ran: not traced: no CPU is watched (--watch)\n"),
        "{replay}"
    );
    // two intervals, each a header line and a table with a summary row
    assert_eq!(live.lines().filter(|l| l.starts_with("# t=")).count(), 2);
    assert_eq!(live.lines().filter(|l| l.starts_with("CPU ")).count(), 2);
    for i in ["0000", "0001", "0002"] {
        for f in [
            "proc/stat",
            "proc/interrupts",
            "noisetop/clock",
            "noisetop/probe.json",
        ] {
            assert!(cap.join(i).join(f).is_file(), "{i}/{f} missing");
        }
    }
}

/// A capture that watches CPU 1 keeps who ran there with each instant,
/// and its replay judges with it: the replay prints the verdicts and
/// findings the live run printed, the intruder named by the same pid.
#[test]
fn replay_of_a_watched_capture_names_whom_the_live_run_named() {
    let _turn = crate::turn::take();
    let Some(_cpu1) = cpu1::quiet_cpu1() else {
        return;
    };
    let (owner, intruder) = (Spinner::start(), Spinner::start());
    let intruder_pid = intruder.pid();
    let dir = tempfile::tempdir().unwrap();
    let cap = dir.path().join("cap");
    let live = noisetop()
        .args(["--batch", "--count", "2", "--interval", "300ms"])
        .args(["--watch", "1", "--owner", &owner.pid().to_string()])
        .arg("--capture")
        .arg(&cap)
        .output()
        .unwrap();
    drop(intruder);
    assert!(
        live.status.success(),
        "{}",
        String::from_utf8_lossy(&live.stderr)
    );
    for i in ["0001", "0002"] {
        assert!(cap.join(i).join("noisetop/traced.json").is_file(), "{i}");
    }
    let live = String::from_utf8(live.stdout).unwrap();
    let replay = replay_batch(&cap);
    // the live run alone counts its own IPIs; each says how it knows who ran
    let judged = |t: &str| without(t, &["# who ran: ", "# IPIs to watched"]);
    assert_eq!(judged(&live), judged(&replay));
    assert!(
        replay
            .lines()
            .any(|l| l.starts_with("# who ran: kept windows on CPU 1")
                && l.ends_with("; as the capture kept them")),
        "{replay}"
    );
    // both name the spinner that is not the owner (another busy task on
    // CPU 1 may come first in the same finding)
    let named = format!("sh[{intruder_pid}] ran ");
    let names = |t: &str| {
        t.lines()
            .any(|l| l.contains(" intruder: CPU 1: ") && l.contains(&named))
    };
    assert!(names(&live), "{named} not in\n{live}");
    assert!(names(&replay), "{named} not in\n{replay}");
}

#[test]
fn capture_refuses_a_folder_that_is_not_empty() {
    let _turn = crate::turn::take();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("keep.txt"), "mine").unwrap();
    let out = noisetop()
        .args(["capture", "--count", "1", "--interval", "100ms"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is not empty"), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("keep.txt")).unwrap(),
        "mine"
    );
}

#[test]
fn replay_of_a_folder_without_instants_says_so() {
    let _turn = crate::turn::take();
    let dir = tempfile::tempdir().unwrap();
    let out = noisetop()
        .arg("replay")
        .arg(dir.path())
        .arg("--batch")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("holds no instants"), "{err}");
}

#[test]
fn replay_of_a_missing_folder_says_so() {
    let _turn = crate::turn::take();
    let out = noisetop()
        .args(["replay", "/nonexistent/capture", "--batch"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "noisetop: replay /nonexistent/capture: no such folder\n"
    );
}

#[test]
fn capture_then_replay_survives_a_damaged_instant() {
    let _turn = crate::turn::take();
    let dir = tempfile::tempdir().unwrap();
    let cap = dir.path().join("cap");
    let st = noisetop()
        .args(["capture", "--count", "2", "--interval", "100ms"])
        .arg(&cap)
        .status()
        .unwrap();
    assert!(st.success());
    // damage the second instant: garbage interrupts, truncated stat, no softirqs
    std::fs::write(cap.join("0001/proc/interrupts"), "garbage\n\0\0\x01").unwrap();
    let stat = std::fs::read_to_string(cap.join("0001/proc/stat")).unwrap();
    std::fs::write(cap.join("0001/proc/stat"), &stat[..stat.len() / 3]).unwrap();
    std::fs::remove_file(cap.join("0001/proc/softirqs")).unwrap();
    let out = noisetop()
        .arg("replay")
        .arg(&cap)
        .arg("--batch")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("IRQ/s: unavailable"), "{text}");
    assert!(text.contains("SOFTIRQ/s: unavailable: no "), "{text}");
}

#[test]
fn snapshot_json_has_machine_sources_and_counters() {
    let _turn = crate::turn::take();
    let out = noisetop().args(["snapshot", "--json"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema"], 2);
    let online = v["machine"]["online"].as_array().unwrap();
    let stat_cpus = v["snapshot"]["stat"]["Ok"]["cpus"].as_object().unwrap();
    assert_eq!(online.len(), stat_cpus.len());
    assert!(v["sources"].as_array().unwrap().len() >= 10);
}
