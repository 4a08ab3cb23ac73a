//! The exporter at 1152 CPUs: the real capture (`../shared/captures/
//! pcp-1152cpu-x86_64`, its /proc/interrupts and /proc/softirqs) read twice
//! through the replay engine, and a synthetic 1152-CPU server with every
//! source (cpuidle, MSRs, RAPL); prints series, bytes (plain and gzip)
//! and the time to take the counters and write both formats of one interval.
//!
//! `cargo run --release --example serve_scale`

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use noisetop::os::capture::Captured;
use noisetop::os::fs::{Fs, Roots};
use noisetop::pipeline::{Driver, Step};
use noisetop::sample::engine::Engine;
use noisetop::sample::sampler::Sampler;
use noisetop::serve::{self, Detail, Exporter, Shared};
use noisetop::testkit::synth::{self, Flavor, Spec};

fn report(name: &str, shared: &Shared) {
    let p = shared.latest().expect("an interval");
    let t = Instant::now();
    let gz = p.body(serve::text::Format::Classic, true).len();
    println!(
        "{name}: {} series, {} bytes classic, {} bytes OpenMetrics, {} bytes gzip (compressed in {:?})",
        p.series,
        p.classic.len(),
        p.openmetrics.len(),
        gz,
        t.elapsed()
    );
}

fn main() {
    let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/captures/pcp-1152cpu-x86_64");
    if real.is_dir() {
        let hw = Captured {
            stamp: noisetop::os::hw::Stamp {
                mono_ns: 1_000_000_000,
                wall_ns: 1_000_000_000,
            },
            ..Captured::default()
        };
        let e = Engine::new(Sampler::new(Fs::new(Roots::under(&real)), hw));
        let mut d = Driver::new(e).watching(&[2, 3, 4, 5]);
        for detail in [Detail::Watched, Detail::All] {
            let shared = Arc::new(Shared::default());
            let m = d.engine.sampler.machine.clone();
            let mut ex = Exporter::new(Arc::clone(&shared), m, &[2, 3, 4, 5], detail);
            d.step();
            ex.observe(d.engine.last().unwrap());
            d.engine.sampler.hw.stamp.mono_ns += 1_000_000_000;
            d.engine.sampler.hw.stamp.wall_ns += 1_000_000_000;
            let Step::Sample(s) = d.step() else {
                panic!("no interval")
            };
            let t = Instant::now();
            ex.observe(d.engine.last().unwrap());
            let observed = t.elapsed();
            let t = Instant::now();
            let runs = 10;
            for _ in 0..runs {
                ex.publish(&s);
            }
            let per: Duration = t.elapsed() / runs;
            report(
                &format!(
                    "real 1152 ({detail:?}, watch 2-5; observe {observed:?}, publish {per:?})"
                ),
                &shared,
            );
        }
    } else {
        println!(
            "{} absent: the real capture is not measured",
            real.display()
        );
    }
    let dir = tempfile::tempdir().unwrap();
    synth::write_capture(dir.path(), &Spec::new(Flavor::IntelServer, 1152)).unwrap();
    let shared = Arc::new(Shared::default());
    let t = Instant::now();
    serve::replay(dir.path(), Detail::Watched, Arc::clone(&shared)).unwrap();
    report(
        &format!("synthetic IntelServer 1152 (replay {:?})", t.elapsed()),
        &shared,
    );
}
