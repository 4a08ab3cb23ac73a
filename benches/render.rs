//! Renders one dashboard frame into an off-screen buffer at 8, 64 and 256
//! CPUs (the target is ≤ 2 ms at 256), for the Cores view at 160×50 and
//! 80×24 and the Interrupts view at 160×50. The states come from synthetic
//! captures played through the real pipeline.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use ratatui::buffer::Buffer;
use ratatui::layout::{Rect, Size};
use ratatui::widgets::Widget;

use noisetop::synth::{self, Flavor, Spec};
use noisetop::tui::State;
use noisetop::tui::feed;
use noisetop::tui::state::{Origin, View};
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
    let (instants, engine) = noisetop::cmd::batch::open_replay(dir.path()).expect("replay");
    let mut s = State::new(
        engine.sampler.machine.clone(),
        Origin::Replay("capture".into()),
        Duration::from_secs(1),
        Theme { color: true },
    )
    .with_watched(vec![2, 3, 4, 5]);
    let (tx, rx) = std::sync::mpsc::sync_channel(16);
    feed::replay_into(&instants, engine, None, &tx);
    drop(tx);
    for m in rx {
        s.apply(m);
    }
    s
}

fn frame(s: &State, w: u16, h: u16) -> Buffer {
    let area = Rect::new(0, 0, w, h);
    let mut buf = Buffer::empty(area);
    s.render(area, &mut buf);
    buf
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("render");
    for cpus in [8, 64, 256] {
        let mut s = state(cpus);
        for (w, h) in [(160, 50), (80, 24)] {
            s.screen = Size::new(w, h);
            g.bench_with_input(
                BenchmarkId::new(format!("cores_{w}x{h}"), cpus),
                &s,
                |b, s| {
                    b.iter(|| black_box(frame(s, w, h)));
                },
            );
        }
        s.view = View::Interrupts;
        g.bench_with_input(BenchmarkId::new("interrupts_160x50", cpus), &s, |b, s| {
            b.iter(|| black_box(frame(s, 160, 50)));
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
