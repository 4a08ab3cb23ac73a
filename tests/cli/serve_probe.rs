//! The last probe in `noisetop serve`'s exposition: before any probe the
//! exporter names the `probe` metric unavailable (so the dashboard's
//! wake-up latency panel may be empty) and writes no probe family; once a
//! probe's results land in the state folder they are exported on the next
//! tick as histograms with the fixture's exact counts and sums, and
//! `promtool check metrics` (where installed) accepts both formats.

use crate::serve_support;

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serve_support::{request, serve_env, value, which};

fn metrics(port: u16, accept: &str) -> String {
    let r = request(port, "GET", "/metrics", &[("Accept", accept)]).unwrap();
    assert_eq!(r.status, 200);
    String::from_utf8(r.body).unwrap()
}

#[test]
fn a_probe_run_appears_as_histograms_and_its_absence_is_said() {
    let state = tempfile::tempdir().unwrap();
    let (_kid, port) = serve_env(
        &["--interval", "200ms", "--watch", "1"],
        &[("XDG_STATE_HOME", state.path())],
    );
    let before = metrics(port, "text/plain");
    assert!(
        before.contains(
            "noisetop_metric_unavailable{metric=\"probe\",reason=\"no noisetop probe has run on \
             this machine (run noisetop probe)\"} 1\n"
        ),
        "{before}"
    );
    assert!(!before.contains("noisetop_probe_"), "{before}");

    // fixture a: CPU 1 and 2 remote from C1 (500 each, mean 2.1 µs), CPU 1
    // remote while busy (40, mean 1.5 µs), CPU 1 timer from C1 (1000, 4 µs)
    let dir = state.path().join("noisetop");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/probe/a.csv.json"
        ),
        dir.join("last-probe.json"),
    )
    .unwrap();
    let start = Instant::now();
    let text = loop {
        let t = metrics(port, "text/plain");
        if t.contains("noisetop_probe_wakeup_latency_seconds_count") {
            break t;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the probe never appeared: {t}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(!text.contains("metric=\"probe\""), "{text}");
    assert!(text.contains("# TYPE noisetop_probe_wakeup_latency_seconds histogram\n"));
    let count = |labels: &str| {
        value(
            &text,
            &format!("noisetop_probe_wakeup_latency_seconds_count{{{labels}}}"),
        )
    };
    assert_eq!(count("kind=\"remote\",state=\"C1\""), Some(1000.0));
    assert_eq!(count("kind=\"remote\",state=\"busy\""), Some(40.0));
    assert_eq!(count("kind=\"timer\",state=\"C1\""), Some(1000.0));
    let sum = value(
        &text,
        "noisetop_probe_wakeup_latency_seconds_sum{kind=\"remote\",state=\"C1\"}",
    )
    .unwrap();
    assert!((sum - 1000.0 * 2.1e-6).abs() < 1e-9, "{sum}");
    assert_eq!(
        value(
            &text,
            "noisetop_probe_wakeup_latency_seconds_bucket{kind=\"timer\",state=\"C1\",le=\"+Inf\"}"
        ),
        Some(1000.0)
    );
    // CPU 1 is watched, so detailed: its own histograms; CPU 2 is not
    assert_eq!(
        value(
            &text,
            "noisetop_probe_cpu_wakeup_latency_seconds_count{cpu=\"1\",kind=\"remote\",state=\"C1\"}"
        ),
        Some(500.0)
    );
    assert!(!text.contains("noisetop_probe_cpu_wakeup_latency_seconds_count{cpu=\"2\""));

    let Some(promtool) = which("promtool") else {
        eprintln!("promtool not installed: the format check is skipped (.ci/run installs it)");
        return;
    };
    for accept in ["text/plain", "application/openmetrics-text; version=1.0.0"] {
        let body = metrics(port, accept);
        let mut child = Command::new(&promtool)
            .args(["check", "metrics"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(body.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !said.contains("noisetop_probe"),
            "{accept}: promtool on the probe families: {said}"
        );
    }
}
