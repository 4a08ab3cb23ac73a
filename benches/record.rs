//! Reading recordings: `report` of one hour of a 64-CPU machine at 1 s
//! (230 400 CPU rows, target ≤ 1 s) and `compare` of two such (≤ 2 s).
//! The reader streams: memory holds per-CPU sums and four bytes per row
//! for each quantile column, never the rows; the peak resident size is
//! printed after the runs.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use noisetop::record::diff::Comparison;
use noisetop::record::digest::Report;
use noisetop::testkit::synth::Flavor;

#[path = "../tests/common/recordings.rs"]
mod recordings;

fn peak_rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn write_hour(path: &Path, seed: u64) {
    let m = recordings::machine(Flavor::IntelServer, 64);
    recordings::record_with(
        path,
        &m,
        3600,
        1.0,
        seed,
        &recordings::server_hour,
        &recordings::server_hour_findings,
    );
}

fn bench(c: &mut Criterion) {
    // /dev/shm: the figure is the reading, not the disk
    let dir = tempfile::tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .expect("temporary folder");
    let a = dir.path().join("a.csv");
    let b = dir.path().join("b.csv");
    write_hour(&a, 1);
    write_hour(&b, 2);
    let size = std::fs::metadata(&a).map_or(0, |m| m.len());
    let before = peak_rss_kib();
    eprintln!(
        "recording: 64 CPUs × 3600 intervals, {:.1} MB; peak RSS after writing both: {before:?} KiB",
        size as f64 / 1e6
    );
    let mut g = c.benchmark_group("record");
    g.sample_size(10);
    g.bench_function("report_1h_64cpu", |bn| {
        bn.iter(|| black_box(Report::build(&a).expect("report")));
    });
    g.bench_function("compare_1h_64cpu", |bn| {
        bn.iter(|| black_box(Comparison::build(&a, &b, None).expect("compare")));
    });
    g.finish();
    eprintln!("peak RSS after the runs: {:?} KiB", peak_rss_kib());
}

criterion_group!(benches, bench);
criterion_main!(benches);
