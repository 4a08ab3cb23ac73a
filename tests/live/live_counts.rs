//! Live checks on the machine the tests run on: noisetop's per-CPU LOC/s and
//! CSW/s agree with the kernel's own counts read independently over the
//! same interval.

use std::collections::BTreeMap;
use std::time::Duration;

use noisetop::os::fs::{Fs, Roots};
use noisetop::os::live::{LiveHw, LiveOptions};
use noisetop::sample::engine::{Engine, open_live};

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

/// Reads `read` just before and just after one engine step, so that the
/// kernel's count over [after-first, before-second] and over
/// [before-first, after-second] bracket whatever the step read: the
/// comparison needs no tolerance for the time a sample takes.
struct Bracket<T> {
    before: T,
    after: T,
}

fn step_between<T>(
    e: &mut Engine<LiveHw>,
    read: impl Fn() -> T,
) -> (Bracket<T>, Option<noisetop::model::interval::Interval>) {
    let before = read();
    let iv = e.step();
    let after = read();
    (Bracket { before, after }, iv)
}

/// The fewest and the most events the kernel can have counted inside
/// noisetop's window, whose ends lie inside `first` and `second`.
fn bounds(first: (u64, u64), second: (u64, u64)) -> (u64, u64) {
    let ((f_before, f_after), (s_before, s_after)) = (first, second);
    (s_before.saturating_sub(f_after), s_after - f_before)
}

#[test]
fn loc_per_cpu_matches_proc_interrupts_over_the_same_interval() {
    let _turn = crate::turn::take();
    if !std::fs::read_to_string("/proc/interrupts").is_ok_and(|t| t.contains("LOC:")) {
        eprintln!("no LOC row in /proc/interrupts (not x86): skipped");
        return;
    }
    let mut e = engine();
    let (first, _) = step_between(&mut e, loc_row);
    std::thread::sleep(Duration::from_secs(1));
    let (second, iv) = step_between(&mut e, loc_row);
    let iv = iv.unwrap();
    for r in &iv.cpus {
        let ours = (r.loc_per_s.unwrap() * iv.dt_s).round() as u64;
        let at = |b: &Bracket<BTreeMap<u32, u64>>| (b.before[&r.cpu], b.after[&r.cpu]);
        let (least, most) = bounds(at(&first), at(&second));
        assert!(
            (least..=most).contains(&ours),
            "cpu{}: ours {ours}, kernel {least}..={most}",
            r.cpu
        );
    }
}

#[test]
fn context_switches_match_the_kernel_counts() {
    let _turn = crate::turn::take();
    if !is_root() {
        eprintln!("not root: per-CPU perf counters need root here: skipped");
        return;
    }
    let mut e = engine();
    let counts = || (ctxt(), nr_switches());
    let (c0, _) = step_between(&mut e, counts);
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
    let (c1, iv) = step_between(&mut e, counts);
    let iv = iv.unwrap();
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
    // both count prev != next switches: the sum over CPUs lies between
    // the switches strictly inside noisetop's window and those around it
    let total: u64 = ours.iter().sum();
    let (least, most) = bounds((c0.before.0, c0.after.0), (c1.before.0, c1.after.0));
    assert!(
        (least..=most).contains(&total),
        "ours {total}, kernel {least}..={most}"
    );
    // and per CPU against the scheduler's own counter, where debugfs is
    match (&c0.before.1, &c0.after.1, &c1.before.1, &c1.after.1) {
        (Some(fb), Some(fa), Some(sb), Some(sa)) => {
            for (i, r) in iv.cpus.iter().enumerate() {
                let c = r.cpu as usize;
                let (least, most) = bounds((fb[c], fa[c]), (sb[c], sa[c]));
                assert!(
                    (least..=most).contains(&ours[i]),
                    "cpu{c}: ours {}, nr_switches {least}..={most}",
                    ours[i]
                );
            }
        }
        _ => eprintln!("debugfs sched/debug not mounted: per-CPU check skipped, total checked"),
    }
}
