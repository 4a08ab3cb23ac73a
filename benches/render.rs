//! Renders one dashboard frame into an off-screen buffer at 8, 64, 256 and
//! 1152 CPUs (the target is ≤ 2 ms at 1152), for the Cores and Overview
//! views at 160×50 and 80×24 and the Interrupts view at 160×50. The states
//! come from synthetic captures played through the real pipeline, and from
//! the real 1152-CPU capture (`../shared/captures/pcp-1152cpu-x86_64`, its
//! /proc/interrupts and /proc/softirqs read twice) when it is there.
//!
//! Criterion measures wall time, which a busy machine inflates; after it,
//! the same frames are timed in this thread's CPU time (utime + stime from
//! `/proc/thread-self/stat`, over at least two CPU seconds each), which
//! other processes do not.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group};
use ratatui::buffer::Buffer;
use ratatui::layout::{Rect, Size};
use ratatui::widgets::Widget;

use noisetop::os::capture::Captured;
use noisetop::os::fs::{Fs, Roots};
use noisetop::pipeline::{Driver, Msg, Step, replay};
use noisetop::sample::engine::Engine;
use noisetop::sample::sampler::Sampler;
use noisetop::testkit::synth::{self, Flavor, Spec};
use noisetop::tui::state::State;
use noisetop::tui::state::{Change, Origin, View};
use noisetop::tui::theme::Theme;

/// Plays a synthetic capture of `cpus` CPUs into a state watching CPUs 2-5.
fn state(cpus: u32) -> State {
    let dir = tempfile::tempdir().expect("temp dir");
    let flavor = if cpus <= 8 {
        Flavor::IntelLaptop
    } else {
        Flavor::IntelServer
    };
    let spec = Spec {
        flavor,
        cpus,
        instants: 3,
        interval_ms: 1000,
    };
    synth::write_capture(dir.path(), &spec).expect("synthetic capture");
    let (instants, engine) = noisetop::pipeline::replay::open_engine(dir.path()).expect("replay");
    let mut s = State::new(
        engine.sampler.machine.clone(),
        Origin::Replay("capture".into()),
        Duration::from_secs(1),
        Theme { color: true },
    )
    .with_watched(vec![2, 3, 4, 5]);
    let (tx, rx) = std::sync::mpsc::sync_channel(16);
    replay::replay_into(
        &instants,
        Driver::new(engine).watching(&[2, 3, 4, 5]),
        None,
        &mut [],
        &tx,
    );
    drop(tx);
    let now = Instant::now();
    for m in rx {
        s.update(Change::Feed(m, now));
    }
    s
}

/// The real 1152-CPU capture read twice one second apart, or `None` when
/// the captures are absent.
fn real_1152() -> Option<State> {
    let tree = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/captures/pcp-1152cpu-x86_64");
    if !tree.is_dir() {
        println!("{} absent: skipped", tree.display());
        return None;
    }
    let hw = Captured {
        stamp: noisetop::os::hw::Stamp {
            mono_ns: 1_000_000_000,
            wall_ns: 0,
        },
        ..Captured::default()
    };
    let e = Engine::new(Sampler::new(Fs::new(Roots::under(&tree)), hw));
    let mut d = Driver::new(e).watching(&[2, 3, 4, 5]);
    d.step();
    d.engine.sampler.hw.stamp.mono_ns += 1_000_000_000;
    let Step::Sample(sample) = d.step() else {
        return None;
    };
    let e = &d.engine;
    let mut s = State::new(
        e.sampler.machine.clone(),
        Origin::Replay("pcp-1152cpu-x86_64".into()),
        Duration::from_secs(1),
        Theme { color: true },
    )
    .with_watched(vec![2, 3, 4, 5]);
    s.update(Change::Feed(Msg::Sample(sample), Instant::now()));
    Some(s)
}

/// The views and sizes each state is drawn at.
const CASES: [(View, u16, u16); 5] = [
    (View::Cores, 160, 50),
    (View::Cores, 80, 24),
    (View::Overview, 160, 50),
    (View::Overview, 80, 24),
    (View::Interrupts, 160, 50),
];

fn frame(s: &State, w: u16, h: u16) -> Buffer {
    let area = Rect::new(0, 0, w, h);
    let mut buf = Buffer::empty(area);
    s.render(area, &mut buf);
    buf
}

/// CPU counts to bench: all three under `cargo bench`; only 8 when
/// `cargo test --all-targets` runs this once as a smoke test (a debug
/// build takes long to replay 256 CPUs).
fn sizes() -> &'static [u32] {
    if std::env::args().any(|a| a == "--bench") {
        &[8, 64, 256, 1152]
    } else {
        &[8]
    }
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("render");
    let mut states: Vec<(String, State)> =
        sizes().iter().map(|&n| (n.to_string(), state(n))).collect();
    if std::env::args().any(|a| a == "--bench")
        && let Some(s) = real_1152()
    {
        states.push(("real1152".into(), s));
    }
    for (name, s) in &states {
        for (view, w, h) in CASES {
            let s = s.clone().with_view(view).with_screen(Size::new(w, h));
            g.bench_with_input(
                BenchmarkId::new(format!("{view:?}_{w}x{h}").to_lowercase(), name),
                &s,
                |b, s| {
                    b.iter(|| black_box(frame(s, w, h)));
                },
            );
        }
    }
    g.finish();
}

/// This thread's user + system time in ticks (`USER_HZ` = 100).
fn thread_ticks() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    let rest = stat.rsplit_once(')')?.1;
    let mut f = rest.split_whitespace().skip(11);
    Some(f.next()?.parse::<u64>().ok()? + f.next()?.parse::<u64>().ok()?)
}

/// Prints the CPU time of one frame for each case.
fn cpu_time_per_frame() {
    println!("CPU time per frame (this thread, /proc/thread-self/stat):");
    let mut states: Vec<(String, State)> = [8, 64, 256, 1152]
        .iter()
        .map(|&n| (format!("{n:>4} CPUs"), state(n)))
        .collect();
    if let Some(s) = real_1152() {
        states.push(("real 1152".into(), s));
    }
    for (name, s) in &states {
        for (view, w, h) in CASES {
            let s = &s.clone().with_view(view).with_screen(Size::new(w, h));
            let Some(t0) = thread_ticks() else {
                println!("  /proc/thread-self/stat unreadable: skipped");
                return;
            };
            let mut frames = 0u64;
            // 200 ticks = 2 s of CPU: the 10 ms tick is then a 0.5 % error
            while thread_ticks().unwrap_or(u64::MAX) < t0 + 200 {
                for _ in 0..50 {
                    black_box(frame(s, w, h));
                }
                frames += 50;
            }
            let ms = (thread_ticks().unwrap_or(t0) - t0) as f64 * 10.0 / frames as f64;
            println!("  {name} {view:?} {w}x{h}: {ms:.3} ms");
        }
    }
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--list" || a == "--test") {
        cpu_time_per_frame();
    }
}
