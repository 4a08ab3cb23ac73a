//! Windows made from synthetic reads: exact times at every edge a read
//! can meet.

use super::*;
use crate::os::bpf::read::{RawSource, RawTask};

const MS: u64 = 1_000_000;

fn comm(s: &str) -> [u8; 16] {
    let mut c = [0u8; 16];
    c[..s.len()].copy_from_slice(s.as_bytes());
    c
}

fn slot(slot: usize, tid: u32, name: &str, ns: u64, slices: u32, last_start: u64) -> RawTask {
    RawTask {
        slot,
        tid,
        tgid: tid,
        epoch: 2,
        touched: 2,
        cgroup: 77,
        comm: comm(name),
        ns,
        slices,
        max_ns: 0,
        max_gen: 0,
        irq_ns: 0,
        last_start,
        charged: ns + 1000,
    }
}

/// A read whose open slice is `tid`'s since `start`.
fn read(tid: u32, start: u64, idle_ns: u64, tasks: Vec<RawTask>) -> RawCpu {
    RawCpu {
        cpu: 1,
        head: Head {
            cur_tid: tid,
            cur_tgid: tid,
            slice_start: start,
            idle_ns,
            ..Head::default()
        },
        hist: vec![0; crate::os::bpf::layout::NHIST],
        sources: Vec::new(),
        tasks,
        mig_out: 0,
    }
}

fn task(c: &CpuTrace, tid: u32) -> &TaskTime {
    c.tasks
        .iter()
        .find(|t| t.task.tid == tid)
        .unwrap_or_else(|| panic!("no task {tid} in {:?}", c.tasks))
}

#[test]
fn a_task_running_across_windows_gets_each_window_whole() {
    let mut b = CpuBook::new(1);
    // bench (tid 100) switched in at 500 ms; reads at 1 s, 2 s, 3 s
    b.start(&read(100, 500 * MS, 0, vec![]), 1000 * MS);
    let w = b.window(&read(100, 500 * MS, 0, vec![]), 2000 * MS, 3);
    assert_eq!(w.window_ns, 1000 * MS);
    let t = task(&w, 100);
    assert_eq!((t.ns, t.slices, t.carried), (1000 * MS, 1, 1));
    assert_eq!(t.max_ns, 1500 * MS, "the whole slice so far");
    assert_eq!(t.charged_ns, None, "no slice closed: no charge said");
    assert_eq!(w.unknown_ns, 0);
    assert!(t.owner, "the longest runner owns the CPU");
    let w = b.window(&read(100, 500 * MS, 0, vec![]), 3000 * MS, 4);
    assert_eq!(task(&w, 100).ns, 1000 * MS);
}

#[test]
fn a_slice_that_closes_is_taken_out_of_the_window_before() {
    let mut b = CpuBook::new(1);
    b.start(&read(100, 500 * MS, 0, vec![]), 1000 * MS);
    // 100 ran 500 ms to 1400 ms (900 ms: 500 before the cut, 400 after),
    // then sh (200) from 1400 ms on
    let r = read(
        200,
        1400 * MS,
        0,
        vec![slot(5, 100, "bench", 900 * MS, 1, 500 * MS)],
    );
    let w = b.window(&r, 2000 * MS, 3);
    let t = task(&w, 100);
    assert_eq!((t.ns, t.slices, t.carried), (400 * MS, 1, 1));
    assert_eq!(
        t.charged_ns,
        Some(900 * MS + 1000),
        "the whole slice, charged as it closed"
    );
    assert_eq!(t.task.comm.as_deref(), Some("bench"));
    assert_eq!(t.cgroup, Some(77));
    let s = task(&w, 200);
    assert_eq!((s.ns, s.slices, s.carried), (600 * MS, 1, 0));
    assert_eq!(w.unknown_ns, 0);
    assert_eq!(w.owner.as_ref().map(|o| o.tid), Some(200));
    // sh is an intruder of no one here: the owner is sh, bench intrudes
    assert!(
        w.sources
            .iter()
            .any(|x| x.kind == SourceKind::Task && x.ns == 400 * MS && x.name == "bench")
    );
}

#[test]
fn a_slice_closed_after_the_head_was_read_is_counted_once() {
    let mut b = CpuBook::new(1);
    b.start(&read(100, 500 * MS, 0, vec![]), 1000 * MS);
    // the head still says 100 runs since 500 ms, but its slot already holds
    // that slice (it closed between the two reads, at the cut)
    let r = read(
        100,
        500 * MS,
        0,
        vec![slot(5, 100, "bench", 1500 * MS, 1, 500 * MS)],
    );
    let w = b.window(&r, 2000 * MS, 3);
    assert_eq!(task(&w, 100).ns, 1000 * MS);
    assert_eq!(task(&w, 100).slices, 1);
}

#[test]
fn idle_and_interruptions_fill_the_window_and_nothing_is_unknown() {
    let loc = |ns: u64, count: u64| RawSource {
        index: VEC_BASE + 0x0c,
        id: 0,
        ns,
        count,
        max_ns: 100_000,
        max_gen: 3,
    };
    let mut b = CpuBook::new(1);
    // idle since 100 ms; 50 local-timer interrupts (5 ms) before the first cut
    let mut r0 = read(0, 100 * MS, 0, vec![]);
    r0.head.slice_irq = 5 * MS;
    r0.sources = vec![loc(5 * MS, 50)];
    b.start(&r0, 1000 * MS);
    // 30 more of 100 µs each in the window (3 ms), taken from idle's slice
    let mut r1 = read(0, 100 * MS, 0, vec![]);
    r1.head.slice_irq = 8 * MS;
    r1.sources = vec![loc(8 * MS, 80)];
    let w = b.window(&r1, 2000 * MS, 3);
    assert_eq!(w.idle_ns, 1000 * MS - 3 * MS);
    let l = w
        .sources
        .iter()
        .find(|s| s.kind == SourceKind::LocalTimer)
        .unwrap();
    assert_eq!((l.ns, l.count, l.max_ns), (3 * MS, 30, 100_000));
    assert_eq!(l.name, "local_timer");
    assert_eq!(w.unknown_ns, 0);
    assert_eq!(w.owner, None, "idle owns nothing");
}

#[test]
fn an_interruption_open_at_the_cut_is_not_the_task_s_time() {
    let mut b = CpuBook::new(1);
    b.start(&read(100, 500 * MS, 0, vec![]), 1000 * MS);
    let mut r = read(100, 500 * MS, 0, vec![]);
    // an IRQ handler has run since 1990 ms
    r.head.depth = 1;
    r.head.outer_start = 1990 * MS;
    let w = b.window(&r, 2000 * MS, 3);
    assert_eq!(task(&w, 100).ns, 990 * MS);
    assert_eq!(task(&w, 100).irq_ns, 10 * MS);
}

#[test]
fn a_slot_taken_by_another_task_starts_from_zero() {
    let mut b = CpuBook::new(1);
    let old = slot(9, 300, "old", 50 * MS, 4, 10 * MS);
    b.start(&read(0, 900 * MS, 0, vec![old]), 1000 * MS);
    let mut new = slot(9, 301, "new", 20 * MS, 1, 1200 * MS);
    new.epoch = 4;
    let w = b.window(&read(0, 1220 * MS, 0, vec![new]), 2000 * MS, 3);
    let t = task(&w, 301);
    assert_eq!((t.ns, t.slices), (20 * MS, 1));
    assert!(w.tasks.iter().all(|t| t.task.tid != 300));
}

#[test]
fn given_owners_match_thread_groups_and_the_auto_owner_holds_at_half() {
    let mut b = CpuBook::new(1);
    b.set_owner(vec![40]);
    b.start(&read(0, 10, 0, vec![]), 1000 * MS);
    let mut worker = slot(1, 41, "worker", 300 * MS, 3, 1100 * MS);
    worker.tgid = 40;
    let w = b.window(
        &read(
            0,
            1700 * MS,
            0,
            vec![worker, slot(2, 50, "other", 400 * MS, 1, 1300 * MS)],
        ),
        2000 * MS,
        3,
    );
    assert!(w.owner_given);
    assert_eq!(w.owner.as_ref().map(|o| o.tid), Some(41));
    assert_eq!(w.owner_ns, 300 * MS);

    let mut a = CpuBook::new(1);
    a.start(&read(0, 10, 0, vec![]), 1000 * MS);
    let w = a.window(
        &read(
            0,
            1900 * MS,
            0,
            vec![
                slot(1, 7, "a", 500 * MS, 1, 1000 * MS),
                slot(2, 8, "b", 400 * MS, 1, 1500 * MS),
            ],
        ),
        2000 * MS,
        3,
    );
    assert_eq!(w.owner.as_ref().map(|o| o.tid), Some(7));
    // b runs longer now, but a still ran more than half as long: a stays
    let w = a.window(
        &read(
            0,
            2900 * MS,
            0,
            vec![
                slot(1, 7, "a", 900 * MS, 2, 2000 * MS),
                slot(2, 8, "b", 900 * MS, 2, 2400 * MS),
            ],
        ),
        3000 * MS,
        4,
    );
    assert_eq!(w.owner.as_ref().map(|o| o.tid), Some(7));
}

#[test]
fn run_queue_waits_come_as_the_window_s_histogram() {
    let mut b = CpuBook::new(1);
    let mut r0 = read(0, 10, 0, vec![]);
    r0.hist[20] = 5;
    r0.head.rq_waits = 5;
    b.start(&r0, 1000 * MS);
    let mut r1 = r0.clone();
    // 3 more waits in bucket 20 ([64, 72) ns... scaled: bucket bounds),
    // one in bucket 100
    r1.hist[20] = 8;
    r1.hist[100] = 1;
    r1.head.rq_waits = 9;
    r1.head.rq_delay_ns = 1000;
    r1.head.rq_delay_max = 900;
    r1.head.rq_max_gen = 3;
    let w = b.window(&r1, 2000 * MS, 3);
    let k = w.kernel.unwrap();
    assert_eq!(k.runq.waits, 4);
    assert_eq!(
        k.runq.buckets,
        vec![(bucket_bounds(20).1, 3), (bucket_bounds(100).1, 1)]
    );
    assert_eq!(k.runq.max_ns, 900);
    assert_eq!(k.runq.quantile(0.5), Some(bucket_bounds(20).1));
    assert_eq!(k.runq.quantile(1.0), Some(900), "never past the longest");
    assert_eq!(RunqDelay::default().quantile(0.5), None);
}

#[test]
fn slices_past_the_table_are_unknown_and_counted() {
    let mut b = CpuBook::new(1);
    // idle from 900 ms to 1300 ms, seven tasks past the table until 1500 ms,
    // idle since
    b.start(&read(0, 900 * MS, 0, vec![]), 1000 * MS);
    let mut r = read(0, 1500 * MS, 400 * MS, vec![]);
    r.head.others_ns = 200 * MS;
    r.head.others_slices = 7;
    let w = b.window(&r, 2000 * MS, 3);
    assert_eq!(w.idle_ns, 300 * MS + 500 * MS);
    assert_eq!(w.unknown_ns, 200 * MS);
    assert_eq!(w.kernel.unwrap().untabled_slices, 7);
}

#[test]
fn switches_and_migrations_are_differences() {
    let mut b = CpuBook::new(1);
    let mut r0 = read(0, 10, 0, vec![]);
    r0.head.switches = 1000;
    r0.head.mig_in = 10;
    r0.mig_out = 4;
    b.start(&r0, 1000 * MS);
    let mut r1 = r0.clone();
    r1.head.switches = 1234;
    r1.head.mig_in = 15;
    r1.mig_out = 6;
    r1.head.idle_state_count[1] = 3;
    r1.head.idle_state_ns[1] = 9 * MS;
    let k = b.window(&r1, 2000 * MS, 3).kernel.unwrap();
    assert_eq!((k.switches, k.migrations_in, k.migrations_out), (234, 5, 2));
    assert_eq!(
        k.idle_states,
        vec![IdleState {
            state: 1,
            ns: 9 * MS,
            exits: 3
        }]
    );
}

#[test]
fn run_queue_waits_say_their_quantiles_and_shape_by_powers_of_two() {
    let r = RunqDelay {
        waits: 5,
        total_ns: 500 + 2 * 3_000 + 9_000 + 2_000_000_000,
        max_ns: 2_000_000_000,
        // below 1024 ns; two in [2048, 4096); [8192, 9216); past 2^30
        buckets: vec![(512, 1), (4096, 2), (9216, 1), (2_147_483_648, 1)],
    };
    assert_eq!(r.text(), "5 waits, p50 < 4.1 µs, p99 < 2.0 s, max 2.0 s");
    let p = r.by_power(10, 30);
    assert_eq!(p.len(), 21);
    // ≤ 2^10: the 512 ns wait; ≤ 2^12: the two; ≤ 2^14: [8192, 9216)
    assert_eq!((p[0], p[1], p[2], p[4]), (1, 0, 2, 1));
    // past 2^30 lands in the last
    assert_eq!(p[20], 1);
    assert_eq!(p.iter().sum::<u64>(), 5);
    let none = RunqDelay::default();
    assert_eq!(none.text(), "0 waits");
}
