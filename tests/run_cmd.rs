//! `noisetop run -- CMD` end to end on this machine: the command's exit
//! status comes back, the report names the CPU and the command, and the
//! JSON report parses.

use std::process::Command;

fn noisetop() -> Command {
    Command::new(env!("CARGO_BIN_EXE_noisetop"))
}

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

#[test]
fn run_exits_with_the_command_status_and_reports_its_cpu() {
    let cpu = if cpus() > 1 { "1" } else { "0" };
    let out = noisetop()
        .args([
            "run",
            "--cpus",
            cpu,
            "--interval",
            "200ms",
            "--",
            "sh",
            "-c",
            "sleep 0.5; exit 3",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.starts_with("noisetop run: `sh -c sleep 0.5; exit 3` (pid "),
        "{text}"
    );
    assert!(text.contains(&format!(" on CPU {cpu}, ")), "{text}");
    assert!(text.contains("exit status 3"), "{text}");
    let verdict = text.lines().nth(1).unwrap();
    assert!(
        verdict.starts_with("verdict: quiet") || verdict.starts_with("verdict: noisy: "),
        "{verdict}"
    );
}

#[test]
fn run_json_report_names_the_command_and_each_watched_cpu() {
    let out = noisetop()
        .args([
            "run",
            "--cpus",
            "0",
            "--json",
            "--interval",
            "200ms",
            "--",
            "sleep",
            "0.5",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["command"], serde_json::json!(["sleep", "0.5"]));
    assert_eq!(v["cpus"], serde_json::json!([0]));
    assert_eq!(v["per_cpu"][0]["cpu"], 0);
    assert!(v["per_cpu"][0]["intervals"].as_u64().unwrap() >= 2);
    assert!(v["verdict"].is_string());
}

#[test]
fn run_refuses_cpus_that_are_not_online_with_exit_2() {
    let out = noisetop()
        .args(["run", "--cpus", "4095", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("noisetop: --cpus 4095: CPU 4095 is not online (online: 0"),
        "{err}"
    );
}
