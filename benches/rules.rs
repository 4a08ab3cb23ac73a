//! Cost of judging one interval: every noise rule and every CPU's verdict
//! (`noise::judge`) over a 256-CPU Intel server interval with four watched
//! CPUs, and over the same interval with a traced CPU. Target: 0.5 ms.
//!
//! The interval comes from a generated two-instant capture replayed through
//! the real engine, so its interrupt and softirq tables, idle states and
//! per-CPU rates have the shape and size of a real one.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use noisetop::noise::config::NoiseConfig;
use noisetop::noise::traced::{Intruder, StolenBy, Traced, TracedCpu, TracedTask};
use noisetop::noise::{self, Context};
use noisetop::pipeline::replay::{advance_engine, open_engine};
use noisetop::testkit::synth::{self, Flavor, Spec};

fn traced(cpu: u32) -> Traced {
    let task = |comm: &str, pid| TracedTask {
        comm: comm.into(),
        pid,
        tid: pid,
        per_cpu_kthread: false,
        exited: false,
        cgroup: None,
    };
    Traced {
        cpus: vec![TracedCpu {
            cpu,
            window_ns: 1_000_000_000,
            owner: Some(task("bench", 100)),
            intruders: (0..20)
                .map(|i| Intruder {
                    task: task("kworker", 200 + i),
                    ns: 10_000 * u64::from(i + 1),
                    slices: 3,
                    charged_ns: None,
                })
                .collect(),
            stolen: (0..20)
                .map(|i| StolenBy {
                    kind: "irq".into(),
                    name: format!("{}:dev{i}", 40 + i),
                    irq: Some(40 + i),
                    ns: 5_000 * u64::from(i + 1),
                    count: 10,
                    max_ns: 2_000,
                })
                .collect(),
            ..TracedCpu::default()
        }],
        ..Traced::default()
    }
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    synth::write_capture(
        dir.path(),
        &Spec {
            instants: 2,
            ..Spec::new(Flavor::IntelServer, 256)
        },
    )
    .expect("capture");
    let (instants, mut engine) = open_engine(dir.path()).expect("replay");
    engine.sampler.set_budget(usize::MAX);
    engine.step();
    advance_engine(&mut engine, &instants[1]).expect("instant 1");
    let iv = engine.step().expect("an interval");
    let machine = engine.sampler.machine.clone();
    let config = NoiseConfig::default();
    let watched = [2, 3, 4, 5];
    let trace = traced(2);
    let mut g = c.benchmark_group("judge");
    for (name, trace) in [
        ("256_cpus_4_watched", None),
        ("256_cpus_4_watched_1_traced", Some(&trace)),
    ] {
        let cx = Context {
            machine: &machine,
            watched: &watched,
            config: &config,
            trace,
        };
        g.bench_function(name, |b| {
            b.iter(|| black_box(noise::judge(black_box(&iv), &cx)));
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
