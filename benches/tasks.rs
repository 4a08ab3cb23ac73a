//! What sampling who ran from /proc costs per interval: one
//! `TaskClock::read` of this machine's /proc (every thread's schedstat, and
//! stat for those that ran), the read the untraced who-ran and the bound
//! of a traced CPU's unseen time make once per interval.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use noisetop::os::tasks::TaskClock;

fn read(c: &mut Criterion) {
    let threads = std::fs::read_dir("/proc").map_or(0, |d| {
        d.flatten()
            .filter_map(|p| std::fs::read_dir(p.path().join("task")).ok())
            .map(Iterator::count)
            .sum::<usize>()
    });
    let mut clock = TaskClock::new(Path::new("/proc"));
    clock.read();
    c.bench_function(&format!("task_clock_read/{threads}_threads"), |b| {
        b.iter(|| black_box(clock.read()));
    });
}

criterion_group!(benches, read);
criterion_main!(benches);
