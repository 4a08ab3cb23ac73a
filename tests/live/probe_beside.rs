//! The probe beside the dashboard's own measurement, live: while
//! `noisetop probe --cpus 1` runs, `noisetop run --cpus 1` and
//! `noisetop --batch --watch 1` never name the probe's threads (nor the
//! partner process its context-switch measurement forks) as intruders or
//! as the cause of a finding; they list its time as `noisetop probe`, and
//! the verdict says the CPU is being probed. Whatever else the loaded
//! machine runs on CPU 1 may still make it noisy: that verdict is honest
//! and accepted. Needs root (perf tracepoints), tracefs and two CPUs;
//! skipped with the reason otherwise.

use crate::cpu1;
use cpu1::quiet_cpu1;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `noisetop probe --cpus 1 --duration D` under its own state folder,
/// started once its running file is there (which says its pid).
struct Probe {
    child: Child,
    state: tempfile::TempDir,
}

impl Probe {
    fn start(duration: &str) -> Probe {
        let state = tempfile::tempdir().unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_noisetop"))
            .args(["probe", "--cpus", "1", "--duration", duration, "--json"])
            .env("XDG_STATE_HOME", state.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("noisetop probe runs");
        let file = state.path().join("noisetop/probe-running.json");
        let t0 = Instant::now();
        while !file.exists() {
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "the probe wrote no running file in 10 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(v["pid"], child.id());
        assert_eq!(v["cpus"], serde_json::json!([1]));
        Probe { child, state }
    }

    /// Waits for the probe; the running file is gone once it ends.
    fn finish(self) {
        let out = self.child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !self
                .state
                .path()
                .join("noisetop/probe-running.json")
                .exists(),
            "the running file outlived the probe"
        );
    }
}

/// Whether `text` blames the probe: its threads' name or its pid as a task.
fn blames(text: &str, pid: u32) -> bool {
    text.contains("noisetop-probe") || text.contains(&format!("[{pid}]"))
}

#[test]
fn run_beside_a_probe_lists_it_and_never_calls_it_an_intruder() {
    let _turn = crate::turn::take();
    let Some(_g) = quiet_cpu1() else {
        return;
    };
    let probe = Probe::start("3s");
    let pid = probe.child.id();
    let out = Command::new(env!("CARGO_BIN_EXE_noisetop"))
        .args(["run", "--cpus", "1", "--json", "--", "sleep", "2"])
        .env("XDG_STATE_HOME", probe.state.path())
        .output()
        .expect("noisetop run runs");
    probe.finish();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let verdict = v["verdict"].as_str().unwrap();
    eprintln!("verdict: {verdict}");
    assert!(!blames(verdict, pid), "{verdict}");
    for f in v["findings"].as_array().unwrap() {
        let ev = f["evidence"].as_str().unwrap_or("");
        assert!(!blames(ev, pid), "{ev}");
        assert!(!blames(f["fix"].as_str().unwrap_or(""), pid), "{f}");
    }
    let cpu = &v["per_cpu"][0];
    assert_eq!(cpu["cpu"], 1);
    for i in cpu["intruders"].as_array().unwrap() {
        assert_ne!(i["comm"], "noisetop-probe", "{i}");
        assert_ne!(i["pid"], pid, "{i}");
    }
    if cpu["traced_ns"].as_u64().unwrap_or(0) == 0 {
        eprintln!("CPU 1 was not traced: only the absence of blame is checked");
        return;
    }
    // traced while the probe measured there: listed with its time, said
    let ns = cpu["probe_ns"]
        .as_u64()
        .unwrap_or_else(|| panic!("no probe time on a traced, probed CPU: {cpu}"));
    assert!(
        verdict.ends_with(&format!(
            "CPU 1 being probed (noisetop probe ran {:.1} ms)",
            ns as f64 / 1e6
        )),
        "{verdict}"
    );
}

#[test]
fn batch_beside_a_probe_says_the_cpu_is_probed() {
    let _turn = crate::turn::take();
    let Some(_g) = quiet_cpu1() else {
        return;
    };
    // long enough to outlast the batch however loaded the machine is, then
    // stopped: a stopped probe also takes its running file away
    let probe = Probe::start("20s");
    let pid = probe.child.id();
    let out = Command::new(env!("CARGO_BIN_EXE_noisetop"))
        .args([
            "--batch",
            "--watch",
            "1",
            "--interval",
            "1s",
            "--count",
            "2",
        ])
        .env("XDG_STATE_HOME", probe.state.path())
        .output()
        .expect("noisetop batch runs");
    let term = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    probe.finish();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let judged: Vec<&str> = text.lines().filter(|l| l.starts_with('#')).collect();
    for l in &judged {
        assert!(!blames(l, pid), "{l}");
    }
    let verdicts: Vec<&&str> = judged
        .iter()
        .filter(|l| l.starts_with("# verdict:"))
        .collect();
    assert!(!verdicts.is_empty(), "{text}");
    if text.contains("# who ran: counted in the kernel (BPF) on every CPU; judged on watched CPU 1")
    {
        for l in verdicts {
            assert!(l.contains("being probed (noisetop probe ran "), "{l}");
        }
    }
}
