//! Cost of decoding and accounting 100 000 tracepoint records of one CPU:
//! the work `Tracer::drain` does per record once it holds the raw payloads.
//! Target: at most 10 ms.
//!
//! The records are a busy CPU's mix in this machine's payload layout: every
//! fifth a `sched_switch` among 8 tasks, then device IRQs with their names,
//! softirqs with an IRQ nested inside, and local timer ticks, each opened and
//! closed, 100 ns apart.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use noisetop::trace::CpuAccount;
use noisetop::trace::decode::{Decoder, RawSample, build};

const RECORDS: usize = 100_000;

/// `(tid of the task current when it fired, payload)`.
fn records() -> Vec<(u32, Vec<u8>)> {
    let names = [
        "bench",
        "kworker/1:2",
        "rcu_preempt",
        "sshd",
        "ksoftirqd/1",
        "chronyd",
        "swapper/1",
        "cc1",
    ];
    let tid_of = |i: usize| if i == 6 { 0 } else { 100 + i as i32 };
    let mut out = Vec::with_capacity(RECORDS);
    let mut cur = 0usize;
    while out.len() < RECORDS {
        let tid = tid_of(cur) as u32;
        let next = (cur + 3) % names.len();
        out.push((tid, build::irq_entry(41, "virtio3-rx")));
        out.push((tid, build::irq_exit(41)));
        out.push((tid, build::softirq(3, false)));
        out.push((tid, build::irq_entry(42, "virtio3-tx")));
        out.push((tid, build::irq_exit(42)));
        out.push((tid, build::softirq(3, true)));
        out.push((tid, build::local_timer(false)));
        out.push((tid, build::local_timer(true)));
        out.push((tid, build::softirq(1, false)));
        out.push((tid, build::softirq(1, true)));
        out.push((
            tid,
            build::switch((names[cur], tid_of(cur)), 1, (names[next], tid_of(next))),
        ));
        cur = next;
    }
    out.truncate(RECORDS);
    out
}

fn bench(c: &mut Criterion) {
    let events = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/tracefs/sys/kernel/tracing/events");
    let decoder = Decoder::load(&events).unwrap();
    let recs = records();
    c.bench_function("trace/decode_and_account/100k", |b| {
        b.iter(|| {
            let mut acc = CpuAccount::new(1, 0);
            for (i, (tid, raw)) in recs.iter().enumerate() {
                let s = RawSample {
                    time: i as u64 * 100,
                    cpu: 1,
                    pid: *tid,
                    tid: *tid,
                    raw,
                };
                if let Ok(e) = decoder.decode(&s) {
                    acc.event(&e);
                }
            }
            black_box(acc.flush(RECORDS as u64 * 100))
        });
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
