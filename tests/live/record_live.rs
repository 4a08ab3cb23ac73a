//! `--record` on this machine, stopped the ways a session ends in life:
//! Ctrl-C on `--batch`, SIGTERM to the dashboard, and the terminal going
//! away (the tmux server killed). Every interval finished before the stop
//! is in the file, whole, and the file loads with Python's csv module.

use crate::tmux;
use tmux::Tmux;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use noisetop::record::reader::Recording;

/// Intervals in the file (machine rows), and whether every interval has
/// one row per CPU plus the machine row.
fn intervals(csv: &Path) -> (usize, bool) {
    let Ok(text) = std::fs::read_to_string(csv) else {
        return (0, true);
    };
    let mut n = 0;
    let mut cpus_in_interval = 0;
    let mut sizes = Vec::new();
    for line in text.lines().skip(1) {
        if line.split(',').nth(3) == Some("all") {
            n += 1;
            sizes.push(cpus_in_interval);
            cpus_in_interval = 0;
        } else {
            cpus_in_interval += 1;
        }
    }
    let whole = text.is_empty() || text.ends_with('\n');
    let same = sizes.windows(2).all(|w| w[0] == w[1]) && sizes.iter().all(|s| *s > 0);
    (n, whole && same && cpus_in_interval == 0)
}

fn wait_for_intervals(csv: &Path, n: usize) -> usize {
    let end = Instant::now() + Duration::from_secs(30);
    loop {
        let (k, _) = intervals(csv);
        if k >= n {
            return k;
        }
        assert!(
            Instant::now() < end,
            "no {n} intervals in {} after 30 s",
            csv.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn signal(pid: u32, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill {sig} {pid}");
}

fn gone(pid: u32) -> bool {
    !Path::new(&format!("/proc/{pid}")).exists()
        || std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| s.split(") ").nth(1).is_some_and(|r| r.starts_with('Z')))
}

/// The file reads back as a recording and with Python's csv module.
fn check_file(csv: &Path, at_least: usize) {
    let (n, whole) = intervals(csv);
    assert!(whole, "an interval is cut in {}", csv.display());
    assert!(
        n >= at_least,
        "{n} intervals, {at_least} were finished before the stop"
    );
    let rec = Recording::open(csv).unwrap();
    let pass = rec.for_each(|_| {}).unwrap();
    assert!(pass.notes.is_empty(), "{:?}", pass.notes);
    let script = "import csv,sys\nrows=list(csv.DictReader(open(sys.argv[1],newline='')))\n\
                  assert rows and all(r['cpu'] for r in rows)\nfloat(rows[0]['t_s'])\n";
    match Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(csv)
        .output()
    {
        Ok(o) => assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr)),
        Err(_) => println!("python3 absent: csv module check skipped"),
    }
}

#[test]
fn batch_interrupted_by_ctrl_c_keeps_every_finished_interval() {
    let _turn = crate::turn::take();
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("run.csv");
    let child = Command::new(env!("CARGO_BIN_EXE_noisetop"))
        .args(["--batch", "--count", "5", "--interval", "300ms", "--record"])
        .arg(&csv)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let before = wait_for_intervals(&csv, 2);
    signal(child.id(), "-INT");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stderr}");
    check_file(&csv, before);
    // every interval printed was recorded first
    let printed = stdout.lines().filter(|l| l.starts_with("# t=")).count();
    let (n, _) = intervals(&csv);
    assert!(
        n >= printed && n < 5,
        "{n} recorded, {printed} printed:\n{stdout}"
    );
    // the summary of the session on stderr
    assert!(stderr.contains("noisetop report:"), "{stderr}");
    assert!(stderr.contains(&format!("{n} intervals")), "{stderr}");
}

#[test]
fn batch_refuses_an_existing_recording_and_appends_when_asked() {
    let _turn = crate::turn::take();
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("run.csv");
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_noisetop"))
            .args(["--batch", "--count", "1", "--interval", "100ms", "--record"])
            .arg(&csv)
            .args(extra)
            .output()
            .unwrap()
    };
    assert!(run(&[]).status.success());
    let first = std::fs::read_to_string(&csv).unwrap();
    let again = run(&[]);
    assert_eq!(again.status.code(), Some(2), "a usage error");
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(
        err.contains(": the file exists (--force overwrites it, --append adds to it)"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), first);
    assert!(run(&["--append"]).status.success());
    assert_eq!(intervals(&csv), (2, true));
    assert!(run(&["--force"]).status.success());
    assert_eq!(intervals(&csv), (1, true));
    let bad = Command::new(env!("CARGO_BIN_EXE_noisetop"))
        .args([
            "--batch",
            "--count",
            "1",
            "--record",
            "/proc/no/such/dir/x.csv",
        ])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("cannot write /proc/no/such/dir/x.csv"));
}

fn dashboard(dir: &Path, csv: &Path) -> String {
    format!(
        "sh -c 'echo $$ > {}; exec {} --interval 300ms --record {}'; echo EXITED rc=$?; sleep 60",
        dir.join("pid").display(),
        env!("CARGO_BIN_EXE_noisetop"),
        csv.display()
    )
}

fn pid_of(dir: &Path) -> u32 {
    let end = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(p) = std::fs::read_to_string(dir.join("pid"))
            && let Ok(p) = p.trim().parse()
        {
            return p;
        }
        assert!(Instant::now() < end, "the dashboard did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn dashboard_stopped_by_sigterm_keeps_every_finished_interval() {
    let _turn = crate::turn::take();
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("dash.csv");
    let Some(t) = Tmux::start("term", &dashboard(dir.path(), &csv)) else {
        return;
    };
    let pid = pid_of(dir.path());
    let before = wait_for_intervals(&csv, 3);
    signal(pid, "-TERM");
    let end = Instant::now() + Duration::from_secs(20);
    while !t.screen().contains("EXITED") {
        assert!(Instant::now() < end, "still running:\n{}", t.screen());
        std::thread::sleep(Duration::from_millis(100));
    }
    check_file(&csv, before);
}

#[test]
fn dashboard_losing_its_terminal_keeps_every_finished_interval() {
    let _turn = crate::turn::take();
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("dash.csv");
    let Some(t) = Tmux::start("hup", &dashboard(dir.path(), &csv)) else {
        return;
    };
    let pid = pid_of(dir.path());
    let before = wait_for_intervals(&csv, 3);
    // the terminal goes away: the kernel sends SIGHUP
    let _ = t.tmux(&["kill-server"]);
    let end = Instant::now() + Duration::from_secs(20);
    while !gone(pid) {
        assert!(
            Instant::now() < end,
            "noisetop {pid} still runs without its terminal"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    check_file(&csv, before);
}
