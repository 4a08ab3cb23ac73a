//! `noisetop --batch --capture DIR` and `noisetop replay DIR --batch` print
//! the same numbers; bad capture folders give clear errors.

use std::process::Command;

fn noisetop() -> Command {
    Command::new(env!("CARGO_BIN_EXE_noisetop"))
}

#[test]
fn replay_prints_what_the_live_run_printed() {
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
    let replay = noisetop()
        .arg("replay")
        .arg(&cap)
        .arg("--batch")
        .output()
        .unwrap();
    assert!(
        replay.status.success(),
        "{}",
        String::from_utf8_lossy(&replay.stderr)
    );
    let live = String::from_utf8(live.stdout).unwrap();
    let replay = String::from_utf8(replay.stdout).unwrap();
    // everything but who-ran attribution, which a capture does not hold:
    // the live run says which CPUs it traced, the replay that it cannot
    let untraced = |t: &str| -> String {
        let mut out = String::new();
        for l in t.lines().filter(|l| !l.starts_with("# who ran: ")) {
            out.push_str(l);
            out.push('\n');
        }
        out
    };
    assert_eq!(untraced(&live), untraced(&replay));
    assert!(
        replay.contains("# who ran: not traced: a replay: captures hold no tracepoint records\n"),
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

#[test]
fn capture_refuses_a_folder_that_is_not_empty() {
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
    let out = noisetop()
        .args(["replay", "/nonexistent/capture", "--batch"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read capture folder"));
}

#[test]
fn capture_then_replay_survives_a_damaged_instant() {
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
