//! Live checks on the machine the tests run on: noisetop's per-CPU LOC/s and
//! CSW/s agree with the kernel's own counts read independently over the
//! same interval.

use std::collections::BTreeMap;
use std::time::Duration;

use noisetop::engine::{Engine, open_live};
use noisetop::source::fs::{Fs, Roots};
use noisetop::source::live::{LiveHw, LiveOptions};

/// Reads the LOC row of /proc/interrupts with a deliberately separate parser.
fn loc_row() -> BTreeMap<u32, u64> {
    let text = std::fs::read_to_string("/proc/interrupts").unwrap();
    let mut lines = text.lines();
    let cpus: Vec<u32> = lines
        .next()
        .unwrap()
        .split_whitespace()
        .map(|c| c.trim_start_matches("CPU").parse().unwrap())
        .collect();
    let loc = lines
        .find(|l| l.trim_start().starts_with("LOC:"))
        .expect("x86 /proc/interrupts has a LOC row");
    let vals = loc
        .trim_start()
        .trim_start_matches("LOC:")
        .split_whitespace()
        .take(cpus.len())
        .map(|v| v.parse::<u64>().unwrap());
    cpus.iter().copied().zip(vals).collect()
}

fn ctxt() -> u64 {
    let text = std::fs::read_to_string("/proc/stat").unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("ctxt "))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Per-CPU `nr_switches` from the scheduler's debug file, if debugfs is there.
fn nr_switches() -> Option<Vec<u64>> {
    let text = std::fs::read_to_string("/sys/kernel/debug/sched/debug").ok()?;
    let v: Vec<u64> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix(".nr_switches"))
        .filter_map(|l| l.trim().trim_start_matches(':').trim().parse().ok())
        .collect();
    (!v.is_empty()).then_some(v)
}

fn engine() -> Engine<LiveHw> {
    open_live(Fs::new(Roots::default()), LiveOptions::default())
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
}

#[test]
fn loc_per_cpu_matches_proc_interrupts_over_the_same_interval() {
    if !std::fs::read_to_string("/proc/interrupts").is_ok_and(|t| t.contains("LOC:")) {
        eprintln!("no LOC row in /proc/interrupts (not x86): skipped");
        return;
    }
    let mut e = engine();
    let before = loc_row();
    e.step();
    std::thread::sleep(Duration::from_secs(1));
    let iv = e.step().unwrap();
    let after = loc_row();
    for r in &iv.cpus {
        let ours = (r.loc_per_s.unwrap() * iv.dt_s).round() as u64;
        let theirs = after[&r.cpu] - before[&r.cpu];
        // the independent window encloses ours by the few milliseconds one
        // sample takes: never fewer ticks, at most 1 % + 2 more
        assert!(
            ours <= theirs,
            "cpu{}: ours {ours} > kernel {theirs}",
            r.cpu
        );
        assert!(
            theirs - ours <= theirs / 100 + 2,
            "cpu{}: ours {ours} vs kernel {theirs}",
            r.cpu
        );
    }
}

#[test]
fn context_switches_match_the_kernel_counts() {
    if !is_root() {
        eprintln!("not root: per-CPU perf counters need root here: skipped");
        return;
    }
    let mut e = engine();
    let mut sw0 = nr_switches();
    let c0 = ctxt();
    e.step();
    let first = e.last().expect("a first snapshot").clone();
    // make some switches on every CPU
    let workers: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(|| {
                for _ in 0..200 {
                    std::thread::sleep(Duration::from_micros(500));
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let iv = e.step().unwrap();
    let c1 = ctxt();
    let sw1 = nr_switches();
    let second = e.last().expect("a second snapshot");
    // the counts noisetop read, and the rate it shows recomputed from them:
    // CSW/s = Δcount / Δtime_running of the CPU's perf group. Comparing
    // rate × the clock stamps' distance instead would add the sampler's own
    // scheduling delay between reading counters and stamping the time,
    // which on a loaded machine is tens of ms of a short window.
    let ours: Vec<u64> = iv
        .cpus
        .iter()
        .map(|r| {
            let count = second.csw[&r.cpu] - first.csw[&r.cpu];
            let (_, run0) = first.hw[&r.cpu].perf_time.expect("perf group times");
            let (_, run1) = second.hw[&r.cpu].perf_time.expect("perf group times");
            let shown = r.csw_per_s.expect("CSW/s needs perf software counters");
            let recomputed = count as f64 / ((run1 - run0) as f64 / 1e9);
            assert!(
                (shown - recomputed).abs() <= 1e-9 * recomputed.max(1.0),
                "cpu{}: shown {shown}/s, counts give {recomputed}/s",
                r.cpu
            );
            count
        })
        .collect();
    let total: u64 = ours.iter().sum();
    let kernel = c1 - c0;
    // both count prev != next switches, and the kernel's window encloses
    // noisetop's by the few ms one sample takes
    assert!(total <= kernel, "ours {total} > kernel {kernel}");
    assert!(
        kernel - total <= kernel / 20 + 20,
        "ours {total} vs kernel {kernel}"
    );
    if let (Some(a), Some(b)) = (sw0.take(), sw1) {
        for (i, r) in iv.cpus.iter().enumerate() {
            let theirs = b[r.cpu as usize] - a[r.cpu as usize];
            let o = ours[i];
            assert!(
                o.abs_diff(theirs) <= theirs / 20 + 20,
                "cpu{}: ours {o} vs nr_switches {theirs}",
                r.cpu
            );
        }
    } else {
        eprintln!("debugfs sched/debug not mounted: per-CPU check skipped, total checked");
    }
}
