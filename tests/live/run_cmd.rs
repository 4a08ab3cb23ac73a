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
    let _turn = crate::turn::take();
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
        text.starts_with("noisetop run: `sh -c 'sleep 0.5; exit 3'` (pid "),
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
    let _turn = crate::turn::take();
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
    let _turn = crate::turn::take();
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

/// (distinct `t_s`, last `dt_s`) of the machine rows of a recording.
fn recorded_intervals(csv: &std::path::Path) -> (usize, f64) {
    let text = std::fs::read_to_string(csv).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (cpu, dt) = (col("cpu"), col("dt_s"));
    let rows: Vec<Vec<&str>> = lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|r| r[cpu] == "all")
        .collect();
    let last = rows.last().map_or(f64::NAN, |r| r[dt].parse().unwrap());
    (rows.len(), last)
}

#[test]
fn run_records_exactly_the_intervals_it_reports_the_last_partial_one_included() {
    let _turn = crate::turn::take();
    let dir = tempfile::tempdir().unwrap();
    // a command shorter than the interval (with room for the tracer's setup
    // before the first snapshot), and one of several intervals
    for (interval, secs) in [("1s", "0.8"), ("300ms", "1.0")] {
        let csv = dir.path().join(format!("{interval}.csv"));
        let out = noisetop()
            .args(["run", "--cpus", "0", "--json", "--interval", interval])
            .arg("--record")
            .arg(&csv)
            .args(["--", "sleep", secs])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let reported = v["per_cpu"][0]["intervals"].as_u64().unwrap();
        let (recorded, last_dt) = recorded_intervals(&csv);
        assert_eq!(recorded as u64, reported, "{interval} {secs}");
        assert!(
            reported >= 1,
            "{interval} {secs}: a command of {secs} s is one interval at least"
        );
        // the last interval ends when the command does: no longer than one interval
        let full = noisetop::cli::parse_interval(interval)
            .unwrap()
            .as_secs_f64();
        assert!(
            (0.1..full + 1.0).contains(&last_dt),
            "{interval}: last dt_s {last_dt}"
        );
        let side: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join(format!("{interval}.csv.json"))).unwrap(),
        )
        .unwrap();
        assert!(side["started"].is_string(), "{side}");
    }
    // the 0.45 s command is one partial interval
    let (n, dt) = recorded_intervals(&dir.path().join("1s.csv"));
    assert_eq!(n, 1);
    assert!(dt < 1.0, "partial: {dt}");
}

#[test]
fn the_command_keeps_the_pid_the_report_names_and_runs_only_on_its_cpus() {
    let _turn = crate::turn::take();
    let cpu = if cpus() > 1 { "1" } else { "0" };
    // the command says its own pid and the CPUs it may run on
    let out = noisetop()
        .args(["run", "--cpus", cpu, "--json", "--", "sh", "-c"])
        .arg("echo $$ >&2; grep Cpus_allowed_list /proc/self/status >&2")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let mut lines = err.lines();
    assert_eq!(lines.next(), Some(v["pid"].to_string().as_str()), "{err}");
    let allowed = lines.next().unwrap();
    assert_eq!(allowed.split_whitespace().last(), Some(cpu), "{err}");
}

#[test]
fn a_command_that_cannot_run_exits_127_and_says_only_why() {
    let _turn = crate::turn::take();
    // the one useful line, and no noise report of a run that never was
    let one_line = |args: &[&std::ffi::OsStr], code: i32, says: &str| {
        let out = noisetop().arg("run").arg("--").args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "",
            "{args:?}: nothing on stdout"
        );
        assert_eq!(err, format!("noisetop: cannot run {says}\n"), "{args:?}");
    };
    one_line(
        &["/nonexistent/command".as_ref(), "arg".as_ref()],
        127,
        "/nonexistent/command: No such file or directory",
    );
    one_line(
        &["no-such-command-anywhere".as_ref()],
        127,
        "no-such-command-anywhere: not found in PATH",
    );
    // not executable: 126, as a shell says
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("plain");
    std::fs::write(&f, "not a program\n").unwrap();
    one_line(
        &[f.as_os_str()],
        126,
        &format!("{}: Permission denied", f.display()),
    );
    one_line(
        &[dir.path().as_os_str()],
        126,
        &format!("{}: Is a directory", dir.path().display()),
    );
}
