//! Context switches and migrations of a watched CPU (and, counted in the
//! kernel, of an unwatched one), counted hands-off
//! (by the BPF programs on the CPU, or from the values it writes into its
//! own counting ring with `--no-trace`), equal the kernel's perf counts
//! over the same window: the
//! software `context-switches` and `cpu-migrations` counters of that CPU,
//! which `perf stat -a -A` reads, are read by this test just before and
//! just after each of noisetop's steps, so that the counts bracket
//! noisetop's window. The one slack: switches after the last sample before
//! a cut (the kernel samples no switch out of idle) count at the next cut,
//! so each end of a window may be a switch or two early.

use std::path::Path;
use std::time::Duration;

use crate::cpu1;

use noisetop::os::fs::{Fs, Roots};
use noisetop::os::live::{LiveHw, LiveOptions};
use noisetop::os::perf::{PerfEvent, PerfSet};
use noisetop::pipeline::switches::CountingRings;
use noisetop::pipeline::{Driver, Step};
use noisetop::sample::engine::open_live;

const WATCHED: u32 = 1;

/// Switches each end of noisetop's window may lag its cut by: those the
/// kernel wrote no sample of since its last one (see the module's
/// comment), one as a rule, two seen at a ring's first cut.
const SLACK: u64 = 3;

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
}

/// The kernel's own counts of `cpu`: (switches, migrations).
fn peer(p: &mut PerfSet, cpu: u32) -> (u64, u64) {
    let c = p.read();
    let c = c
        .iter()
        .find(|c| c.cpu == cpu)
        .expect("the peer counters read");
    (
        c.get(PerfEvent::ContextSwitches).unwrap(),
        c.get(PerfEvent::Migrations).unwrap(),
    )
}

/// Switches and migrations onto the watched CPU: threads that sleep there
/// and hop between CPU 0 and it.
fn churn() {
    let hoppers: Vec<_> = (0..2)
        .map(|_| {
            std::thread::spawn(|| {
                for i in 0..150 {
                    let _ = noisetop::os::sys::pin_to(&[if i % 2 == 0 { WATCHED } else { 0 }]);
                    std::thread::sleep(Duration::from_micros(700));
                }
            })
        })
        .collect();
    for h in hoppers {
        h.join().unwrap();
    }
}

fn check(d: Driver<LiveHw>, how: &str) {
    check_on(d, how, WATCHED);
}

/// Checks `cpu`'s counts in the driver's snapshots against perf's.
fn check_on(mut d: Driver<LiveHw>, how: &str, cpu: u32) {
    let (mut p, failed) = PerfSet::open(&[cpu], &[], Path::new("/sys"));
    assert!(
        !failed
            .iter()
            .any(|(e, _)| matches!(e, PerfEvent::ContextSwitches | PerfEvent::Migrations)),
        "peer counters: {failed:?}"
    );
    let mut stepped = |d: &mut Driver<LiveHw>| {
        let before = peer(&mut p, cpu);
        // a switch is counted a moment before perf writes its record: the
        // snapshot is taken a while after the peer's read, so that every
        // switch the peer counted before it has its record written by then
        std::thread::sleep(Duration::from_millis(20));
        let step = d.step();
        let after = peer(&mut p, cpu);
        let snap = d.engine.last().expect("a snapshot");
        let ours = (
            snap.csw.get(&cpu).copied(),
            snap.migrations.get(&cpu).copied(),
        );
        (before, after, ours, step)
    };
    let (b0, a0, ours0, _) = stepped(&mut d);
    let mut total_ours = (0, 0);
    let mut total_least = (0, 0);
    let mut prev = (b0, a0, ours0);
    for round in 0..3 {
        churn();
        let (b1, a1, ours1, step) = stepped(&mut d);
        assert!(matches!(step, Step::Sample(_)), "{how}: an interval");
        let (Some(c0), Some(m0)) = prev.2 else {
            panic!(
                "{how}: round {round}: no hands-off count before: {:?}",
                prev.2
            )
        };
        let (Some(c1), Some(m1)) = ours1 else {
            panic!("{how}: round {round}: no hands-off count: {ours1:?}")
        };
        let (csw, mig) = (c1 - c0, m1 - m0);
        // the kernel's counts strictly inside noisetop's window, and around it
        let least = (b1.0.saturating_sub(prev.1.0), b1.1.saturating_sub(prev.1.1));
        let most = (a1.0 - prev.0.0, a1.1 - prev.0.1);
        eprintln!(
            "{how}: round {round}: CSW ours {csw}, perf {}..={}; MIG ours {mig}, perf {}..={}",
            least.0, most.0, least.1, most.1
        );
        // each end of noisetop's window may lag its cut (see `SLACK`)
        let (lo, hi) = (least.0.saturating_sub(SLACK), most.0 + SLACK);
        assert!(
            (lo..=hi).contains(&csw),
            "{how}: switches {csw} not in {lo}..={hi} (perf {}..={})",
            least.0,
            most.0
        );
        let (lo, hi) = (least.1.saturating_sub(SLACK), most.1 + SLACK);
        assert!(
            (lo..=hi).contains(&mig),
            "{how}: migrations {mig} not in {lo}..={hi} (perf {}..={})",
            least.1,
            most.1
        );
        total_ours = (total_ours.0 + csw, total_ours.1 + mig);
        total_least = (total_least.0 + least.0, total_least.1 + least.1);
        prev = (b1, a1, ours1);
    }
    assert!(
        total_ours.0 >= 300,
        "{how}: the churn made switches: {total_ours:?}"
    );
    assert!(
        total_ours.1 >= 100,
        "{how}: the churn made migrations: {total_ours:?}"
    );
}

fn driver() -> Driver<LiveHw> {
    let engine = open_live(Fs::new(Roots::default()), LiveOptions::default());
    Driver::new(engine).watching(&[WATCHED])
}

fn online() -> bool {
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    noisetop::base::cpulist::parse(online.trim())
        .unwrap()
        .contains(&WATCHED)
}

#[test]
fn untraced_counting_rings_count_what_perf_counts() {
    let _turn = crate::turn::take();
    if !is_root() || !online() {
        eprintln!("not root, or CPU {WATCHED} offline: skipped");
        return;
    }
    // one at a time: the other test's churn would widen this one's bracket
    let _cpu1 = cpu1::cpu1();
    let mut d = driver();
    d.set_switches(Some(Box::new(CountingRings::default())), None);
    assert_eq!(d.switch_plan(), Ok(noisetop::pipeline::COUNTING_RINGS));
    check(d, "--no-trace");
}

/// A driver watching CPU 1 with the in-kernel counts; `None` (said) when
/// the test cannot run here or BPF is refused.
fn in_kernel_driver() -> Option<Driver<LiveHw>> {
    if !is_root() || !online() {
        eprintln!("not root, or CPU {WATCHED} offline: skipped");
        return None;
    }
    let mut d = driver();
    let (t, s) = match noisetop::pipeline::in_kernel::open(
        Path::new("/sys"),
        Path::new("/proc"),
        &[WATCHED],
        Vec::new(),
    ) {
        Ok(x) => x,
        Err(why) => {
            eprintln!("BPF refused: {why}: skipped");
            return None;
        }
    };
    d.set_tracer(Some(Box::new(t)), None);
    d.set_switches(Some(Box::new(s)), None);
    Some(d)
}

#[test]
fn in_kernel_counts_count_what_perf_counts() {
    let _turn = crate::turn::take();
    let _cpu1 = cpu1::cpu1();
    let Some(d) = in_kernel_driver() else { return };
    assert_eq!(d.switch_plan(), Ok(noisetop::pipeline::IN_KERNEL_COUNTS));
    check(d, "in-kernel");
}

/// The programs count every CPU: an unwatched one's switches and
/// migrations in the snapshots are theirs too, and equal perf's.
#[test]
fn in_kernel_counts_of_an_unwatched_cpu_count_what_perf_counts() {
    let _turn = crate::turn::take();
    let _cpu1 = cpu1::cpu1();
    let Some(d) = in_kernel_driver() else { return };
    assert!(d.counts_every_cpu());
    check_on(d, "in-kernel, unwatched CPU 0", 0);
}

/// The counting ring's samples name the tasks that left the watched CPU:
/// threads that sleep there are named by their thread ids.
#[test]
fn counting_rings_name_the_tasks_that_left_the_cpu() {
    let _turn = crate::turn::take();
    if !is_root() || !online() {
        eprintln!("not root, or CPU {WATCHED} offline: skipped");
        return;
    }
    let _cpu1 = cpu1::cpu1();
    let mut rings =
        noisetop::os::switch_ring::SwitchRings::open(&[WATCHED]).expect("the counting ring opens");
    let (tx, rx) = std::sync::mpsc::channel();
    let sleeper = std::thread::spawn(move || {
        let _ = noisetop::os::sys::pin_to(&[WATCHED]);
        let me = std::fs::read_link("/proc/thread-self")
            .ok()
            .and_then(|l| l.file_name()?.to_str()?.parse::<u32>().ok());
        tx.send(me).unwrap();
        for _ in 0..50 {
            std::thread::sleep(Duration::from_millis(2));
        }
    });
    let tid = rx
        .recv()
        .unwrap()
        .expect("/proc/thread-self names the thread");
    sleeper.join().unwrap();
    rings.counts_at(noisetop::os::sys::monotonic_ns());
    let named = rings.take_named();
    assert_eq!(named.len(), 1);
    assert_eq!(named[0].0, WATCHED);
    assert!(named[0].1.contains(&tid), "{tid} not in {:?}", named[0].1);
    assert!(!named[0].1.contains(&0), "the idle task is no one");
    assert!(
        rings.take_named()[0].1.is_empty(),
        "each name is given once"
    );
}
