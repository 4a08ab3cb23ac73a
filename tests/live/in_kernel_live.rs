//! Live: the in-kernel counts held to the kernel's own counters over the
//! same windows, each window bracketed by reads of the peer just before
//! and just after it is cut.
//!
//! - switches and migrations of a loaded CPU 1 (two busy loops, a pipe
//!   ping-pong, threads hopping on and off) against perf's software
//!   counters of CPU 1 (what `perf stat -C 1` reads): within 0.5 %;
//! - the local timer interrupts of CPU 1 against /proc/interrupts LOC,
//!   idle or not: within 1 %;
//! - a busy loop and a thread waking 20 000 times a second against their
//!   schedstat: within 1 % and 2 %, what the host stole allowed for (the
//!   scheduler's clock leaves steal out with `PARAVIRT_TIME_ACCOUNTING`, the
//!   kernel's monotonic clock does not).
//!
//! Whatever else runs on CPU 1 changes what is measured, never the
//! comparison. Needs root and BPF, else prints why and skips.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use noisetop::os::perf::{PerfEvent, PerfSet};
use noisetop::os::sys::{monotonic_ns, pin_to};
use noisetop::pipeline::in_kernel::Counter;
use noisetop::trace::{CpuTrace, SourceKind};

use crate::cpu1;
use cpu1::{cpu1, steal_ns};

use crate::schedstat;
use schedstat::ns_at;

const CPU: u32 = 1;

/// Why the counts cannot be tested here, if they cannot.
fn skip() -> Option<String> {
    use std::os::unix::fs::MetadataExt as _;
    if std::fs::metadata("/proc/self").map_or(true, |m| m.uid() != 0) {
        return Some("not root".into());
    }
    if std::thread::available_parallelism().map_or(1, usize::from) < 2 {
        return Some("fewer than 2 CPUs".into());
    }
    if let Err(why) = Counter::open(Path::new("/sys")) {
        return Some(format!("BPF refused: {why}"));
    }
    None
}

fn gettid() -> u32 {
    std::fs::read_link("/proc/thread-self")
        .ok()
        .and_then(|p| p.file_name()?.to_str()?.parse().ok())
        .unwrap_or(0)
}

/// The LOC count of `cpu` in /proc/interrupts.
fn loc(cpu: u32) -> u64 {
    let text = std::fs::read_to_string("/proc/interrupts").unwrap();
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("LOC:"))
        .expect("an x86 LOC row");
    row.split_whitespace()
        .nth(1 + cpu as usize)
        .unwrap()
        .parse()
        .unwrap()
}

/// Threads that load CPU 1 until dropped.
struct Load {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
    /// Thread ids of the spinners, for their schedstat.
    spinners: Vec<u32>,
}

impl Load {
    fn new() -> Load {
        Load {
            stop: Arc::new(AtomicBool::new(false)),
            threads: Vec::new(),
            spinners: Vec::new(),
        }
    }

    /// A thread pinned to CPU 1 that spins.
    fn spin(mut self) -> Load {
        let (stop, tid) = (Arc::clone(&self.stop), Arc::new(AtomicU32::new(0)));
        let t2 = Arc::clone(&tid);
        self.threads.push(std::thread::spawn(move || {
            pin_to(&[CPU]).unwrap();
            t2.store(gettid(), Ordering::SeqCst);
            while !stop.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        }));
        while tid.load(Ordering::SeqCst) == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        self.spinners.push(tid.load(Ordering::SeqCst));
        self
    }

    /// Two threads on CPU 1 passing a byte back and forth through pipes.
    fn ping_pong(mut self) -> Load {
        use std::io::{Read as _, Write as _};
        let (mut a_rx, mut a_tx) = std::io::pipe().unwrap();
        let (mut b_rx, mut b_tx) = std::io::pipe().unwrap();
        let stop = Arc::clone(&self.stop);
        self.threads.push(std::thread::spawn(move || {
            pin_to(&[CPU]).unwrap();
            let mut byte = [0u8];
            while !stop.load(Ordering::Relaxed) {
                if a_tx.write_all(&[1]).is_err() || b_rx.read_exact(&mut byte).is_err() {
                    break;
                }
            }
        }));
        self.threads.push(std::thread::spawn(move || {
            pin_to(&[CPU]).unwrap();
            let mut byte = [0u8];
            while a_rx.read_exact(&mut byte).is_ok() {
                if b_tx.write_all(&[1]).is_err() {
                    break;
                }
            }
        }));
        self
    }

    /// Threads that sleep and hop between CPU 0 and CPU 1: migrations.
    fn hop(mut self) -> Load {
        for _ in 0..2 {
            let stop = Arc::clone(&self.stop);
            self.threads.push(std::thread::spawn(move || {
                let mut i = 0u32;
                while !stop.load(Ordering::Relaxed) {
                    let _ = pin_to(&[if i.is_multiple_of(2) { CPU } else { 0 }]);
                    std::thread::sleep(Duration::from_micros(700));
                    i += 1;
                }
            }));
        }
        self
    }

    /// A thread pinned to CPU 1 that works a little and sleeps ~50 µs, in
    /// a loop: about 20 000 wake-ups a second.
    fn waker(mut self) -> Load {
        let (stop, tid) = (Arc::clone(&self.stop), Arc::new(AtomicU32::new(0)));
        let t2 = Arc::clone(&tid);
        self.threads.push(std::thread::spawn(move || {
            pin_to(&[CPU]).unwrap();
            t2.store(gettid(), Ordering::SeqCst);
            while !stop.load(Ordering::Relaxed) {
                for _ in 0..200 {
                    std::hint::spin_loop();
                }
                std::thread::sleep(Duration::from_micros(50));
            }
        }));
        while tid.load(Ordering::SeqCst) == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        self.spinners.push(tid.load(Ordering::SeqCst));
        self
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// `secs` one-second windows of CPU 1, each cut between two calls of
/// `peer`: the windows, and the peer's reads (before, after) around each
/// cut, the first one included.
fn windows<T: Copy>(secs: u32, mut peer: impl FnMut() -> T) -> (Vec<CpuTrace>, Vec<(T, T)>) {
    let mut c = Counter::open(Path::new("/sys")).expect("the programs load");
    let none = |_| Vec::new();
    let bracket = |c: &mut Counter, peer: &mut dyn FnMut() -> T| {
        let before = peer();
        let cut = monotonic_ns();
        let w = c.windows(&[CPU], cut, &none);
        let after = peer();
        (w, (before, after))
    };
    std::thread::sleep(Duration::from_millis(100));
    let (_, first) = bracket(&mut c, &mut peer);
    let mut ws = Vec::new();
    let mut reads = vec![first];
    for _ in 0..secs {
        std::thread::sleep(Duration::from_secs(1));
        let (w, r) = bracket(&mut c, &mut peer);
        let w = w.into_iter().next().expect("a window of CPU 1");
        // the window adds up to tasks, interruptions and no unknown time
        let accounted: u64 = w.tasks.iter().map(|t| t.ns).sum::<u64>()
            + w.sources
                .iter()
                .filter(|s| s.kind != SourceKind::Task)
                .map(|s| s.ns)
                .sum::<u64>();
        eprintln!(
            "window {} ns: accounted {accounted}, unknown {}, {} records, {} unmatched, tasks {:?}",
            w.window_ns,
            w.unknown_ns,
            w.records,
            w.unmatched,
            w.tasks
                .iter()
                .map(|t| (t.task.tid, t.task.comm.clone(), t.ns, t.slices))
                .collect::<Vec<_>>()
        );
        assert!(
            w.unknown_ns <= w.window_ns / 1000,
            "unknown {} of {} ns",
            w.unknown_ns,
            w.window_ns
        );
        ws.push(w);
        reads.push(r);
    }
    (ws, reads)
}

/// Whether `x` is within `pct` % of the bracket `lo..=hi`.
fn within(x: u64, lo: u64, hi: u64, pct: f64) -> bool {
    x as f64 >= lo as f64 * (1.0 - pct / 100.0) && x as f64 <= hi as f64 * (1.0 + pct / 100.0)
}

#[test]
fn switches_and_migrations_equal_perf_s_counts_under_load() {
    let _turn = crate::turn::take();
    if let Some(why) = skip() {
        eprintln!("{why}: skipped");
        return;
    }
    let _cpu1 = cpu1();
    let (mut p, failed) = PerfSet::open(&[CPU], &[], Path::new("/sys"));
    assert!(
        !failed
            .iter()
            .any(|(e, _)| matches!(e, PerfEvent::ContextSwitches | PerfEvent::Migrations)),
        "peer counters: {failed:?}"
    );
    let mut peer = || {
        let c = p.read().into_iter().find(|c| c.cpu == CPU).unwrap();
        (
            c.get(PerfEvent::ContextSwitches).unwrap(),
            c.get(PerfEvent::Migrations).unwrap(),
        )
    };
    let _load = Load::new().spin().spin().ping_pong().hop();
    let (ws, reads) = windows(3, &mut peer);
    let (mut ours, mut least, mut most) = ((0, 0), (0, 0), (0, 0));
    for (i, w) in ws.iter().enumerate() {
        let k = w.kernel.as_ref().expect("counted in the kernel");
        let ((b0, a0), (b1, a1)) = (reads[i], reads[i + 1]);
        ours = (ours.0 + k.switches, ours.1 + k.migrations_in);
        least = (least.0 + b1.0 - a0.0, least.1 + b1.1 - a0.1);
        most = (most.0 + a1.0 - b0.0, most.1 + a1.1 - b0.1);
        eprintln!(
            "window {i}: CSW ours {}, perf {}..={}; MIG ours {}, perf {}..={}",
            k.switches,
            b1.0 - a0.0,
            a1.0 - b0.0,
            k.migrations_in,
            b1.1 - a0.1,
            a1.1 - b0.1
        );
    }
    assert!(ours.0 > 10_000, "the ping-pong switched: {ours:?}");
    assert!(ours.1 > 100, "the hoppers migrated: {ours:?}");
    assert!(
        within(ours.0, least.0, most.0, 0.5),
        "switches {ours:?} perf {least:?}..{most:?}"
    );
    assert!(
        within(ours.1, least.1, most.1, 0.5),
        "migrations {ours:?} perf {least:?}..{most:?}"
    );
}

#[test]
fn local_timer_interrupts_equal_proc_interrupts_idle_or_not() {
    let _turn = crate::turn::take();
    if let Some(why) = skip() {
        eprintln!("{why}: skipped");
        return;
    }
    let _cpu1 = cpu1();
    let (ws, reads) = windows(3, || loc(CPU));
    let traced: u64 = ws
        .iter()
        .flat_map(|w| &w.sources)
        .filter(|s| s.kind == SourceKind::LocalTimer)
        .map(|s| s.count)
        .sum();
    let idle: u64 = ws.iter().map(|w| w.idle_ns).sum();
    let window: u64 = ws.iter().map(|w| w.window_ns).sum();
    let (lo, hi) = (
        reads[ws.len()].0 - reads[0].1,
        reads[ws.len()].1 - reads[0].0,
    );
    eprintln!(
        "LOC traced {traced}, /proc/interrupts {lo}..={hi}; CPU {CPU} idle {:.0} %",
        100.0 * idle as f64 / window as f64
    );
    assert!(traced > 0, "no tick counted");
    assert!(
        within(traced, lo, hi, 1.0),
        "LOC traced {traced}, counted {lo}..={hi}"
    );
}

/// Holds a thread's traced time, as `figure` takes it from each window,
/// to its schedstat.
fn held_to_schedstat(load: Load, pct: f64, figure: fn(&noisetop::trace::TaskTime) -> u64) {
    let tid = load.spinners[0];
    let path = format!("/proc/self/task/{tid}/schedstat");
    held(tid, Path::new(&path), pct, figure);
    drop(load);
}

/// Holds task `tid`'s traced time over three windows to what its
/// schedstat file grew.
fn held(tid: u32, path: &Path, pct: f64, figure: fn(&noisetop::trace::TaskTime) -> u64) {
    let (ws, reads) = windows(3, || (ns_at(path).unwrap(), steal_ns(CPU)));
    let n = ws.len();
    let traced: u64 = ws
        .iter()
        .flat_map(|w| &w.tasks)
        .filter(|t| t.task.tid == tid)
        .map(figure)
        .sum();
    let slices: u64 = ws
        .iter()
        .flat_map(|w| &w.tasks)
        .filter(|t| t.task.tid == tid)
        .map(|t| t.slices)
        .sum();
    let lo = reads[n].0.0 - reads[0].1.0;
    let hi = reads[n].1.0 - reads[0].0.0;
    // what the host stole in the windows, one tick of rounding at each end
    let stolen = reads[n].1.1 - reads[0].0.1 + 20_000_000;
    eprintln!(
        "tid {tid}: traced {:.2} ms in {slices} slices, schedstat {:.2}..{:.2} ms, stolen < {:.0} ms",
        traced as f64 / 1e6,
        lo as f64 / 1e6,
        hi as f64 / 1e6,
        stolen as f64 / 1e6
    );
    assert!(lo > 0, "it ran");
    assert!(
        within(traced, lo, hi + stolen, pct),
        "traced {traced} ns, schedstat {lo}..={hi} ns, stolen < {stolen} ns"
    );
}

#[test]
fn a_busy_loop_is_within_one_per_cent_of_its_schedstat() {
    let _turn = crate::turn::take();
    if let Some(why) = skip() {
        eprintln!("{why}: skipped");
        return;
    }
    let _cpu1 = cpu1();
    // its time between switches and the interruptions in it: what ran
    held_to_schedstat(Load::new().spin(), 1.0, |t| t.ns + t.irq_ns);
}

#[test]
fn a_thread_waking_20000_times_a_second_is_within_two_per_cent_of_its_schedstat() {
    let _turn = crate::turn::take();
    if let Some(why) = skip() {
        eprintln!("{why}: skipped");
        return;
    }
    let _cpu1 = cpu1();
    // what the scheduler charged it: from each wake-up that preempted
    // another task (the scheduler skips its clock update there), which
    // schedstat counts and the switches do not show
    held_to_schedstat(Load::new().waker(), 2.0, |t| t.charged_ns.unwrap_or(0));
}

/// A child of `parent` named `comm`, once it is there.
fn child_named(parent: u32, comm: &str) -> Option<u32> {
    for _ in 0..100 {
        let kids = std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children"))
            .unwrap_or_default();
        for pid in kids.split_whitespace() {
            let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            if name.trim() == comm {
                return pid.parse().ok();
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

#[test]
fn stress_ng_timer_wake_ups_are_charged_like_their_schedstat() {
    let _turn = crate::turn::take();
    if let Some(why) = skip() {
        eprintln!("{why}: skipped");
        return;
    }
    let _cpu1 = cpu1();
    pin_to(&[0]).unwrap();
    for freq in ["20000", "2000"] {
        let spawned = std::process::Command::new("stress-ng")
            .args([
                "--timer",
                "1",
                "--timer-freq",
                freq,
                "--taskset",
                "1",
                "-t",
                "8",
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        let Ok(mut child) = spawned else {
            eprintln!("stress-ng is not installed: skipped");
            return;
        };
        let worker = child_named(child.id(), "stress-ng-timer");
        if let Some(worker) = worker {
            let path = format!("/proc/{worker}/schedstat");
            held(worker, Path::new(&path), 2.0, |t| t.charged_ns.unwrap_or(0));
        }
        let _ = child.kill();
        let _ = child.wait();
        assert!(worker.is_some(), "stress-ng started a timer worker");
    }
}
