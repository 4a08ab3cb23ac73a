//! Cost of one interval: `Engine::step` (read every kernel file and counter
//! of an instant, then the delta with the previous snapshot) on synthetic
//! captures of 2, 64, 256 and 1024 CPUs, Intel server and VM flavours; and
//! the /proc/interrupts parser alone on a 1024-CPU file.
//!
//! Each capture has seven instants one second apart and the engine cycles
//! through them; only forward steps (real intervals) are timed, the step
//! back to instant 0 and the loading of each instant's perf and MSR tables
//! are not. Seven, because a CPU whose cpuidle counters are read in rounds
//! (every 2nd, 3rd, 10th or 17th sample on these trees with the default
//! budget) must find changed counters, as on a live machine: were the
//! number of rounds a multiple of the number of instants, its last read
//! would be of the same instant, every unchanged `usage` would let the
//! sampler skip the state's other files, and the kept-open steps (into one
//! instant) would all read the same round.
//!
//! `step/<flavour>/kept_open`: the way the live sampler reads /proc and
//! /sys, keeping its files open so that each read is one `pread`; the step
//! into the last instant is timed (see `kept_open_engine`).
//! `step/<flavour>/reopen`: the way a replay reads, opening every file anew
//! (open, fstat, pread, close).
//!
//! The per-CPU counter files are read within the default `--budget`, in
//! rounds on the big trees, as live.

use std::cell::RefCell;
use std::hint::black_box;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use noisetop::collect::interrupts::parse_interrupts;
use noisetop::model::interval::delta_of;
use noisetop::model::snapshot::Snapshot;
use noisetop::os::capture::Captured;
use noisetop::os::fs::{Fs, Roots};
use noisetop::pipeline::replay::{advance_engine as advance, open_engine as open_replay};
use noisetop::sample::engine::Engine;
use noisetop::testkit::synth::{self, Flavor, Spec};

const INSTANTS: usize = 7;

/// A replay engine on a capture, standing at instant 0.
struct Bench {
    _dir: Rc<tempfile::TempDir>,
    instants: Vec<PathBuf>,
    engine: Engine<Captured>,
    /// Kept-open readers, one per instant (empty when files are reopened).
    readers: Vec<Option<Fs>>,
    /// The instant the engine stands at.
    at: usize,
}

/// A temporary folder in memory when the machine has /dev/shm, as /proc and
/// /sys are: on a disk, writing and deleting the 1024-CPU trees (hundreds of
/// thousands of files) leaves block writeback and its interrupts running
/// on the CPU being timed, which moved the figures by a third.
fn scratch() -> tempfile::TempDir {
    let shm = std::path::Path::new("/dev/shm");
    if shm.is_dir()
        && let Ok(dir) = tempfile::tempdir_in(shm)
    {
        return dir;
    }
    tempfile::tempdir().expect("temporary folder")
}

/// Writes a synthetic capture of `INSTANTS` instants one second apart.
fn synthetic(flavor: Flavor, cpus: u32) -> Rc<tempfile::TempDir> {
    let dir = scratch();
    let spec = Spec {
        instants: INSTANTS as u32,
        ..Spec::new(flavor, cpus)
    };
    synth::write_capture(dir.path(), &spec).expect("synthetic capture");
    Rc::new(dir)
}

fn bench_engine(dir: Rc<tempfile::TempDir>) -> Bench {
    let (instants, engine) = open_replay(dir.path()).expect("replay opens");
    Bench {
        _dir: dir,
        instants,
        engine,
        readers: Vec::new(),
        at: 0,
    }
}

/// Steps the engine to instant `i`: a fresh reader at its roots, or its
/// kept-open reader.
fn step_to(b: &mut Bench, i: usize, timed: bool) -> Duration {
    if b.readers.is_empty() {
        advance(&mut b.engine, &b.instants[i]).expect("instant loads");
    } else if i != b.at {
        let fs = b.readers[i].take().expect("reader of the instant");
        let old = std::mem::replace(&mut b.engine.sampler.fs, fs);
        b.readers[b.at] = Some(old);
        b.engine.sampler.hw = Captured::load(&b.instants[i]).expect("instant loads");
    }
    b.at = i;
    let t = Instant::now();
    let iv = b.engine.step();
    let took = t.elapsed();
    if timed {
        assert!(
            iv.is_some_and(|iv| iv.dt_s > 0.0),
            "a forward step yields an interval"
        );
    }
    black_box(took)
}

/// Times `iters` forward steps; the steps back to instant 0 are untimed.
fn forward_steps(b: &mut Bench, iters: u64) -> Duration {
    let mut total = Duration::ZERO;
    let mut done = 0;
    // kept open, only the last instant's reader keeps its files (below)
    let first_timed = if b.readers.is_empty() {
        1
    } else {
        INSTANTS - 1
    };
    while done < iters {
        for i in 0..INSTANTS {
            let timed = i >= first_timed && done < iters;
            let took = step_to(b, i, timed);
            if timed {
                total += took;
                done += 1;
            }
        }
    }
    total
}

/// A bench engine with one reader per instant; the last instant's keeps
/// its files open and only the steps to it are timed. Two readers of a
/// 1024-CPU tree keeping 17 408 files each would pass the descriptor limit
/// (20 000 on the machine the figures come from), and a reader past it
/// reopens files where a live sampler would not.
fn kept_open_engine(dir: Rc<tempfile::TempDir>) -> Bench {
    let mut b = bench_engine(dir);
    // the engine's reader stands at instant 0; forks read the others
    let fs = &b.engine.sampler.fs;
    b.readers = (0..INSTANTS)
        .map(|i| {
            (i > 0).then(|| {
                let mut f = fs.fork(Roots::under(&b.instants[i]));
                f.set_keep_open(i == INSTANTS - 1);
                f
            })
        })
        .collect();
    b.engine.step();
    // open the kept-open reader's files before timing: every round
    let rounds = b.engine.sampler.rounds();
    for _ in 0..=rounds {
        for i in 0..INSTANTS {
            step_to(&mut b, i, false);
        }
    }
    b
}

fn step(c: &mut Criterion) {
    // as the binary does at start
    noisetop::os::sys::keep_freed_memory();
    let mut group = c.benchmark_group("step");
    for flavor in [Flavor::IntelServer, Flavor::Vm] {
        for cpus in [2, 64, 256, 1024] {
            // made on first use, so a filtered run builds only what it
            // times, and shared by the two ways of reading (a 1024-CPU
            // capture takes a minute or more to write)
            let dir: RefCell<Option<Rc<tempfile::TempDir>>> = RefCell::new(None);
            let capture = || {
                dir.borrow_mut()
                    .get_or_insert_with(|| synthetic(flavor, cpus))
                    .clone()
            };
            for kept_open in [true, false] {
                let way = if kept_open { "kept_open" } else { "reopen" };
                let id = BenchmarkId::new(format!("{flavor:?}/{way}"), cpus);
                let mut b: Option<Bench> = None;
                group.bench_function(id, |bencher| {
                    let b = b.get_or_insert_with(|| {
                        if kept_open {
                            kept_open_engine(capture())
                        } else {
                            bench_engine(capture())
                        }
                    });
                    bencher.iter_custom(|iters| forward_steps(b, iters));
                });
            }
        }
    }
    group.finish();
}

/// The snapshots of instants 0 and 1 of a fresh capture, and the engine.
fn snapshots(flavor: Flavor, cpus: u32) -> (Bench, Snapshot, Snapshot) {
    let mut b = bench_engine(synthetic(flavor, cpus));
    b.engine.sampler.set_budget(usize::MAX);
    b.engine.step();
    let s0 = b.engine.last().expect("snapshot 0").clone();
    advance(&mut b.engine, &b.instants[1]).expect("instant 1 loads");
    b.engine.step();
    let s1 = b.engine.last().expect("snapshot 1").clone();
    (b, s0, s1)
}

/// The delta alone: no file is read.
fn delta(c: &mut Criterion) {
    noisetop::os::sys::keep_freed_memory();
    let mut group = c.benchmark_group("delta");
    for flavor in [Flavor::IntelServer, Flavor::Vm] {
        for cpus in [64, 1024] {
            let mut data = None;
            group.bench_function(BenchmarkId::new(format!("{flavor:?}"), cpus), |bencher| {
                let (b, s0, s1) = data.get_or_insert_with(|| snapshots(flavor, cpus));
                let sampler = &b.engine.sampler;
                bencher.iter(|| delta_of(&sampler.machine, sampler.freq_source(), s0, s1));
            });
        }
    }
    group.finish();
}

fn parse(c: &mut Criterion) {
    let mut text: Option<String> = None;
    c.bench_function("parse_interrupts/1024", |b| {
        let text = text.get_or_insert_with(interrupts_1024);
        b.iter(|| parse_interrupts(black_box(text)).expect("parses"));
    });
}

/// The /proc/interrupts of a synthetic 1024-CPU Intel server.
fn interrupts_1024() -> String {
    let dir = scratch();
    let spec = Spec {
        instants: 1,
        ..Spec::new(Flavor::IntelServer, 1024)
    };
    synth::write_capture(dir.path(), &spec).expect("synthetic capture");
    std::fs::read_to_string(dir.path().join("0000/proc/interrupts")).expect("interrupts")
}

criterion_group!(benches, step, delta, parse);
criterion_main!(benches);
