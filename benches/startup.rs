//! Start-up cost against the size of the online CPU list: `Machine::read`
//! and `PerfSet::open` on trees whose `online` file lists 1 024, 4 096 and
//! 16 384 CPUs (a corrupt or hostile `online` file may list 65 536). Both
//! must grow linearly: 4× the CPUs, about 4× the time. Dropping failure
//! reasons that repeat by scanning the list made `PerfSet::open` quadratic
//! (0.7 s at 16 384 CPUs, 26 s at 65 536).
//!
//! The CPUs of the tree do not exist on this machine, so perf refuses each
//! of them at once: what is timed is noisetop's own bookkeeping.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use noisetop::model::machine::Machine;
use noisetop::os::fs::{Fs, Roots};
use noisetop::os::perf::PerfSet;

fn tree(cpus: u32) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let cpu = dir.path().join("sys/devices/system/cpu");
    std::fs::create_dir_all(&cpu).unwrap();
    std::fs::create_dir_all(dir.path().join("proc")).unwrap();
    std::fs::write(cpu.join("online"), format!("0-{}\n", cpus - 1)).unwrap();
    dir
}

fn startup(c: &mut Criterion) {
    let mut g = c.benchmark_group("startup");
    g.sample_size(10);
    for n in [1024u32, 4096, 16_384] {
        let dir = tree(n);
        g.bench_with_input(BenchmarkId::new("machine_read", n), &n, |b, _| {
            b.iter(|| black_box(Machine::read(&mut Fs::new(Roots::under(dir.path())))));
        });
        // past the machine's real CPUs: perf_event_open fails at once
        let cpus: Vec<u32> = (100_000..100_000 + n).collect();
        let sysfs = dir.path().join("sys");
        g.bench_with_input(BenchmarkId::new("perf_open", n), &n, |b, _| {
            b.iter(|| black_box(PerfSet::open(&cpus, &cpus[..1], &sysfs)));
        });
    }
    g.finish();
}

criterion_group!(benches, startup);
criterion_main!(benches);
