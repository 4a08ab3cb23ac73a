//! What the live dashboard costs while it watches: its own CPU time (utime +
//! stime from /proc/PID/stat) and its wake-ups (voluntary context switches
//! of all its threads, /proc/PID/task/*/status) over 60 s at a 1 s interval,
//! the dashboard running in a detached tmux session (a real terminal).
//!
//! Ignored by default (it takes a minute); run it with
//! `cargo test --release --test live tui_cost:: -- --ignored --nocapture`
//! (`NOISETOP_COST_SECS` shortens or lengthens the window).

use std::path::Path;
use std::time::{Duration, Instant};

use crate::tmux;
use tmux::Tmux;

/// Target: at most half a percent of one CPU.
const MAX_CPU_PCT: f64 = 0.5;
/// Target: a sampler and a screen thread waking once per 1 s interval each,
/// plus the odd late sample.
const MAX_WAKEUPS_PER_S: f64 = 4.0;
/// `USER_HZ`: ticks per second of /proc/PID/stat times.
const USER_HZ: f64 = 100.0;

fn cpu_ticks(pid: &str) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("noisetop is running");
    let rest = stat.rsplit_once(')').unwrap().1;
    let f: Vec<u64> = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .map(|v| v.parse().unwrap())
        .collect();
    f[0] + f[1]
}

/// Voluntary and involuntary context switches summed over the threads.
fn switches(pid: &str) -> (u64, u64) {
    let mut v = (0, 0);
    for t in std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
    {
        let Ok(s) = std::fs::read_to_string(t.path().join("status")) else {
            continue;
        };
        for l in s.lines() {
            let num = |l: &str| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|x| x.parse::<u64>().ok())
                    .unwrap_or(0)
            };
            if l.starts_with("voluntary_ctxt_switches") {
                v.0 += num(l);
            } else if l.starts_with("nonvoluntary_ctxt_switches") {
                v.1 += num(l);
            }
        }
    }
    v
}

fn threads(pid: &str) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, Iterator::count)
}

#[test]
#[ignore = "takes a minute: cargo test --release --test live tui_cost:: -- --ignored --nocapture"]
fn live_dashboard_cost_over_a_minute_at_one_second() {
    let _turn = crate::turn::take();
    let secs: u64 = std::env::var("NOISETOP_COST_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let cmd = format!(
        "sh -c 'echo $$ > {}; exec {} --interval 1s --no-state'",
        pidfile.display(),
        env!("CARGO_BIN_EXE_noisetop")
    );
    let Some(t) = Tmux::start("cost", &cmd) else {
        return;
    };
    let wait = Instant::now();
    while !Path::new(&pidfile).exists() && wait.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let pid = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .to_string();
    // past start-up: perf groups opened, first intervals drawn
    std::thread::sleep(Duration::from_secs(3));
    let (t0, w0, k0) = (Instant::now(), switches(&pid), cpu_ticks(&pid));
    std::thread::sleep(Duration::from_secs(secs));
    let (t1, w1, k1) = (Instant::now(), switches(&pid), cpu_ticks(&pid));
    let n_threads = threads(&pid);
    let screen = t.screen();
    t.keys(&["q"]);
    std::thread::sleep(Duration::from_millis(300));
    drop(t);
    let wall = (t1 - t0).as_secs_f64();
    let cpu_s = (k1 - k0) as f64 / USER_HZ;
    let pct = 100.0 * cpu_s / wall;
    let vol = (w1.0 - w0.0) as f64 / wall;
    let invol = (w1.1 - w0.1) as f64 / wall;
    eprintln!("noisetop live, interval 1 s, {wall:.1} s, {n_threads} threads");
    eprintln!("CPU time {cpu_s:.2} s = {pct:.3} % of one CPU");
    eprintln!("wake-ups (voluntary switches) {vol:.2}/s, preemptions {invol:.2}/s");
    eprintln!("last footer: {}", screen.lines().last().unwrap_or(""));
    assert!(
        screen.contains("┌ Cores"),
        "the dashboard was on screen:\n{screen}"
    );
    assert!(pct <= MAX_CPU_PCT, "{pct:.3} % of one CPU");
    assert!(vol <= MAX_WAKEUPS_PER_S, "{vol:.2} wake-ups/s");
}
