//! Cost of one window of one CPU from the in-kernel counts: the work
//! noisetop does per CPU per interval once the area is read (the read is
//! plain memory access of the mapped area). A busy CPU: 200 tasks that ran
//! in the window, 40 interruption sources, a full run-queue histogram.
//! The bench makes 64 windows in a row; target: at most 50 µs a window,
//! so that 1 152 CPUs take under 60 ms a second.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use noisetop::os::bpf::layout::{IRQ_BASE, NHIST};
use noisetop::os::bpf::read::{Head, RawCpu, RawSource, RawTask};
use noisetop::trace::in_kernel::CpuBook;

const TASKS: usize = 200;
const MS: u64 = 1_000_000;

/// The CPU's counts after `round` windows of the same work.
fn read(round: u64) -> RawCpu {
    let mut comm = [0u8; 16];
    comm[..5].copy_from_slice(b"bench");
    RawCpu {
        cpu: 1,
        head: Head {
            cur_tid: 1000,
            cur_tgid: 1000,
            slice_start: round * 1000 * MS + 990 * MS,
            switches: round * 50_000,
            idle_ns: round * 100 * MS,
            rq_waits: round * 20_000,
            ..Head::default()
        },
        hist: (0..NHIST).map(|i| round * i as u64).collect(),
        sources: (0..40)
            .map(|i| RawSource {
                index: if i < 10 { i } else { IRQ_BASE + i },
                id: if i < 10 { 0 } else { 40 + i as u32 },
                ns: round * 1000 * i as u64,
                count: round * 10,
                max_ns: 900,
                max_gen: round as u32 + 2,
            })
            .collect(),
        tasks: (0..TASKS)
            .map(|i| RawTask {
                slot: i,
                tid: 1000 + i as u32,
                tgid: 1000,
                epoch: 2,
                touched: round as u32 + 2,
                cgroup: 7,
                comm,
                ns: round * 4 * MS,
                slices: round as u32 * 250,
                max_ns: 50_000,
                max_gen: round as u32 + 2,
                irq_ns: round * 10_000,
                last_start: round * 1000 * MS + i as u64,
                charged: round * 4 * MS,
            })
            .collect(),
        mig_out: round * 30,
    }
}

fn window(c: &mut Criterion) {
    let reads: Vec<RawCpu> = (1..=64).map(read).collect();
    c.bench_function(
        "64 in-kernel windows of a CPU, 200 tasks, 40 sources",
        |b| {
            b.iter_batched(
                || {
                    let mut book = CpuBook::new(1);
                    book.start(&read(0), 0);
                    book
                },
                |mut book| {
                    for (i, r) in reads.iter().enumerate() {
                        let cut = (i as u64 + 1) * 1000 * MS;
                        black_box(book.window(r, cut, i as u32 + 3));
                    }
                },
                criterion::BatchSize::SmallInput,
            );
        },
    );
}

criterion_group!(benches, window);
criterion_main!(benches);
