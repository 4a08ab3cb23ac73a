//! Cost of one interval: `Engine::step` (read every kernel file and counter
//! of an instant, then the delta with the previous snapshot) on synthetic
//! captures of 2, 64, 256 and 1024 CPUs, Intel server and VM flavours; and
//! the /proc/interrupts parser alone on a 1024-CPU file.
//!
//! `step`: the replay engine is moved back and forth between the capture's
//! two instants; only the forward step (instant 0 → 1, a real interval) is
//! timed, the way back and the loading of each instant's tables are not.
//! A replay opens every file anew (open, fstat, pread, close).
//!
//! `step_kept_open`: the files of instant 1 stay open and are re-read with
//! one `pread` each, as the live sampler reads /proc and /sys; only the
//! clock, perf and MSR tables alternate between the two instants, so the
//! delta does its full work over a one-second interval.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use noisetop::cmd::batch::{advance, open_replay};
use noisetop::collect::interrupts::parse_interrupts;
use noisetop::engine::Engine;
use noisetop::interval::delta_of;
use noisetop::snapshot::Snapshot;
use noisetop::source::capture::Captured;
use noisetop::synth::{self, Flavor, Spec};

/// A replay engine on a fresh two-instant capture, standing at instant 0.
struct Bench {
    _dir: tempfile::TempDir,
    instants: Vec<PathBuf>,
    engine: Engine<Captured>,
}

fn bench_engine(flavor: Flavor, cpus: u32) -> Bench {
    let dir = tempfile::tempdir().expect("temporary folder");
    synth::write_capture(dir.path(), &Spec::new(flavor, cpus)).expect("synthetic capture");
    let (instants, engine) = open_replay(dir.path()).expect("replay opens");
    Bench {
        _dir: dir,
        instants,
        engine,
    }
}

/// Times `iters` forward steps; the step back to instant 0 is untimed.
fn forward_steps(b: &mut Bench, iters: u64) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        advance(&mut b.engine, &b.instants[0]).expect("instant 0 loads");
        black_box(b.engine.step());
        advance(&mut b.engine, &b.instants[1]).expect("instant 1 loads");
        let t = Instant::now();
        let iv = b.engine.step();
        total += t.elapsed();
        assert!(
            iv.is_some_and(|iv| iv.dt_s > 0.0),
            "the forward step yields an interval"
        );
    }
    total
}

/// Times `iters` steps that re-read instant 1's kept-open files.
fn kept_open_steps(b: &mut Bench, iters: u64) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        b.engine.sampler.hw = Captured::load(&b.instants[0]).expect("instant 0 loads");
        black_box(b.engine.step());
        b.engine.sampler.hw = Captured::load(&b.instants[1]).expect("instant 1 loads");
        let t = Instant::now();
        let iv = b.engine.step();
        total += t.elapsed();
        assert!(
            iv.is_some_and(|iv| iv.dt_s > 0.0),
            "the forward step yields an interval"
        );
    }
    total
}

/// A bench engine whose reader stands at instant 1 and keeps its files open.
fn kept_open_engine(flavor: Flavor, cpus: u32) -> Bench {
    let mut b = bench_engine(flavor, cpus);
    advance(&mut b.engine, &b.instants[1]).expect("instant 1 loads");
    b.engine.sampler.fs.set_keep_open(true);
    black_box(b.engine.step());
    b
}

fn step(c: &mut Criterion) {
    let mut group = c.benchmark_group("step");
    for flavor in [Flavor::IntelServer, Flavor::Vm] {
        for cpus in [2, 64, 256, 1024] {
            // made on first use, so a filtered run builds only what it times
            let mut b: Option<Bench> = None;
            group.bench_function(BenchmarkId::new(format!("{flavor:?}"), cpus), |bencher| {
                let b = b.get_or_insert_with(|| bench_engine(flavor, cpus));
                bencher.iter_custom(|iters| forward_steps(b, iters));
            });
        }
    }
    group.finish();
    let mut group = c.benchmark_group("step_kept_open");
    for flavor in [Flavor::IntelServer, Flavor::Vm] {
        for cpus in [2, 64, 256, 1024] {
            let mut b: Option<Bench> = None;
            group.bench_function(BenchmarkId::new(format!("{flavor:?}"), cpus), |bencher| {
                let b = b.get_or_insert_with(|| kept_open_engine(flavor, cpus));
                bencher.iter_custom(|iters| kept_open_steps(b, iters));
            });
        }
    }
    group.finish();
}

/// The snapshots of instants 0 and 1 of a fresh capture, and the engine.
fn snapshots(flavor: Flavor, cpus: u32) -> (Bench, Snapshot, Snapshot) {
    let mut b = bench_engine(flavor, cpus);
    b.engine.step();
    let s0 = b.engine.last().expect("snapshot 0").clone();
    advance(&mut b.engine, &b.instants[1]).expect("instant 1 loads");
    b.engine.step();
    let s1 = b.engine.last().expect("snapshot 1").clone();
    (b, s0, s1)
}

/// The delta alone: no file is read.
fn delta(c: &mut Criterion) {
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
    let dir = tempfile::tempdir().expect("temporary folder");
    let spec = Spec {
        instants: 1,
        ..Spec::new(Flavor::IntelServer, 1024)
    };
    synth::write_capture(dir.path(), &spec).expect("synthetic capture");
    std::fs::read_to_string(dir.path().join("0000/proc/interrupts")).expect("interrupts")
}

criterion_group!(benches, step, delta, parse);
criterion_main!(benches);
