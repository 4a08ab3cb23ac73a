//! Where each figure sits in the maps the programs fill: byte offsets
//! into `struct cpu_area`, `struct remote` and `struct ctl` of
//! `bpf/noise.h`. A test holds every offset and size here against the
//! compiled object's own type data, so the two cannot drift apart.

/// Task slots per CPU.
pub const NSLOTS: usize = 512;
/// Interruption sources per CPU.
pub const NSRC: usize = 112;
/// Softirqs, by number, from source 0.
pub const NSOFTIRQ: usize = 10;
/// x86 vectors, by number less [`VEC_FIRST`], from this source.
pub const VEC_BASE: usize = 16;
/// The first vector counted.
pub const VEC_FIRST: u32 = 0xe0;
/// Vectors counted.
pub const NVEC: usize = 32;
/// Device IRQ slots, from this source.
pub const IRQ_BASE: usize = VEC_BASE + NVEC;
/// Nested interruptions kept.
pub const MAX_DEPTH: usize = 8;
/// Run-queue delay buckets.
pub const NHIST: usize = 296;
/// H2 grouping power of the histogram.
pub const HIST_GP: u32 = 3;
/// cpuidle states counted.
pub const NIDLE: usize = 10;

/// `struct cpu_area` and its parts, bytes.
pub const CPU_HEAD_SIZE: usize = 1024;
/// Bytes of one CPU's area.
pub const CPU_AREA_SIZE: usize = CPU_HEAD_SIZE + NHIST * 8 + NSRC * SRC_SIZE + NSLOTS * TASK_SIZE;
/// Where the histogram starts.
pub const HIST_AT: usize = CPU_HEAD_SIZE;
/// Where the sources start.
pub const SRC_AT: usize = HIST_AT + NHIST * 8;
/// Where the task slots start.
pub const TASK_AT: usize = SRC_AT + NSRC * SRC_SIZE;
/// Bytes of a source slot.
pub const SRC_SIZE: usize = 32;
/// Bytes of a task slot.
pub const TASK_SIZE: usize = 88;
/// Bytes of a CPU's line of counts other CPUs add.
pub const REMOTE_SIZE: usize = 64;
/// Bytes of the control line.
pub const CTL_SIZE: usize = 64;

/// `struct cpu_head` fields.
pub mod head {
    pub const SEQ: usize = 0;
    pub const CUR_TID: usize = 8;
    pub const CUR_TGID: usize = 12;
    pub const CUR_SUM0: usize = 16;
    pub const CUR_TASK: usize = 24;
    pub const SLICE_START: usize = 32;
    pub const SLICE_IRQ: usize = 40;
    pub const DEPTH: usize = 48;
    pub const STACK: usize = 56;
    /// Bytes of one `struct frame` (src u32, pad, start u64, inner u64).
    pub const FRAME: usize = 24;
    pub const EVENTS: usize = 248;
    pub const SWITCHES: usize = 256;
    pub const PREEMPTS: usize = 264;
    pub const MIG_IN: usize = 272;
    pub const IDLE_NS: usize = 280;
    pub const IDLE_SLICES: usize = 288;
    pub const OTHERS_NS: usize = 296;
    pub const OTHERS_SLICES: usize = 304;
    pub const SRC_FULL: usize = 312;
    pub const UNMATCHED: usize = 320;
    pub const NO_STORAGE: usize = 328;
    pub const RQ_WAITS: usize = 336;
    pub const RQ_DELAY_NS: usize = 344;
    pub const RQ_DELAY_MAX: usize = 352;
    pub const RQ_MAX_GEN: usize = 360;
    pub const IDLE_ENTRIES: usize = 376;
    pub const IDLE_STATE_NS: usize = 384;
    pub const IDLE_STATE_COUNT: usize = 464;
    pub const UNSEEN: usize = 544;
    pub const UNSEEN_NS: usize = 552;
}

/// `struct src_slot` fields.
pub mod src {
    pub const ID: usize = 0;
    pub const MAX_GEN: usize = 4;
    pub const NS: usize = 8;
    pub const COUNT: usize = 16;
    pub const MAX_NS: usize = 24;
}

/// `struct task_slot` fields.
pub mod task {
    pub const TID: usize = 0;
    pub const TGID: usize = 4;
    pub const EPOCH: usize = 8;
    pub const TOUCHED: usize = 12;
    pub const CGROUP: usize = 16;
    pub const COMM: usize = 24;
    pub const NS: usize = 40;
    pub const SLICES: usize = 48;
    pub const MAX_GEN: usize = 52;
    pub const MAX_NS: usize = 56;
    pub const IRQ_NS: usize = 64;
    pub const LAST_START: usize = 72;
    pub const CHARGED: usize = 80;
}

/// `struct remote` and `struct ctl` fields.
pub mod line {
    pub const MIG_OUT: usize = 0;
    pub const GEN: usize = 0;
    pub const NR_CPUS: usize = 4;
    pub const T0: usize = 8;
}

/// The upper bound of H2 bucket `i` (grouping power [`HIST_GP`]), ns:
/// values `v` with `lower(i) <= v < upper(i)` fall in it.
pub fn bucket_bounds(i: usize) -> (u64, u64) {
    let g = 1u64 << HIST_GP;
    let i = i as u64;
    if i < g {
        return (i, i + 1);
    }
    let h = i / g - 1 + u64::from(HIST_GP);
    let sub = i % g;
    let width = 1u64 << (h - u64::from(HIST_GP));
    let low = (1u64 << h) + sub * width;
    (low, low + width)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::os::bpf::btf::{Btf, kind};

    const OBJECT: &[u8] = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/bpf/noise.bpf.o"));

    /// Byte offset and size of a member of a struct in the object's BTF.
    fn member(b: &Btf<'_>, st: u32, name: &str) -> (usize, usize) {
        let m = b
            .members(st)
            .unwrap()
            .into_iter()
            .find(|m| b.string(m.name_off) == name)
            .unwrap_or_else(|| panic!("no member {name}"));
        ((m.offset / 8) as usize, b.size(m.type_id).unwrap() as usize)
    }

    #[test]
    fn every_offset_matches_the_compiled_object() {
        let obj = crate::os::bpf::object::BpfObject::parse(OBJECT).unwrap();
        let b = Btf::parse(&obj.btf).unwrap();
        let found = b.find(&[
            (kind::STRUCT, "cpu_area"),
            (kind::STRUCT, "cpu_head"),
            (kind::STRUCT, "src_slot"),
            (kind::STRUCT, "task_slot"),
            (kind::STRUCT, "remote"),
            (kind::STRUCT, "ctl"),
            (kind::STRUCT, "frame"),
        ]);
        let id = |n: &str| found[&(kind::STRUCT, n.to_string())];
        assert_eq!(b.size(id("cpu_area")).unwrap() as usize, CPU_AREA_SIZE);
        assert_eq!(b.size(id("cpu_head")).unwrap() as usize, CPU_HEAD_SIZE);
        assert_eq!(b.size(id("src_slot")).unwrap() as usize, SRC_SIZE);
        assert_eq!(b.size(id("task_slot")).unwrap() as usize, TASK_SIZE);
        assert_eq!(b.size(id("remote")).unwrap() as usize, REMOTE_SIZE);
        assert_eq!(b.size(id("ctl")).unwrap() as usize, CTL_SIZE);
        assert_eq!(b.size(id("frame")).unwrap() as usize, head::FRAME);
        let area = id("cpu_area");
        assert_eq!(member(&b, area, "hist"), (HIST_AT, NHIST * 8));
        assert_eq!(member(&b, area, "src"), (SRC_AT, NSRC * SRC_SIZE));
        assert_eq!(member(&b, area, "task"), (TASK_AT, NSLOTS * TASK_SIZE));
        let h = id("cpu_head");
        for (name, at) in [
            ("seq", head::SEQ),
            ("cur_tid", head::CUR_TID),
            ("cur_tgid", head::CUR_TGID),
            ("cur_sum0", head::CUR_SUM0),
            ("cur_task", head::CUR_TASK),
            ("slice_start", head::SLICE_START),
            ("slice_irq", head::SLICE_IRQ),
            ("depth", head::DEPTH),
            ("stack", head::STACK),
            ("events", head::EVENTS),
            ("switches", head::SWITCHES),
            ("preempts", head::PREEMPTS),
            ("mig_in", head::MIG_IN),
            ("idle_ns", head::IDLE_NS),
            ("idle_slices", head::IDLE_SLICES),
            ("others_ns", head::OTHERS_NS),
            ("others_slices", head::OTHERS_SLICES),
            ("src_full", head::SRC_FULL),
            ("unmatched", head::UNMATCHED),
            ("no_storage", head::NO_STORAGE),
            ("rq_waits", head::RQ_WAITS),
            ("rq_delay_ns", head::RQ_DELAY_NS),
            ("rq_delay_max", head::RQ_DELAY_MAX),
            ("rq_max_gen", head::RQ_MAX_GEN),
            ("idle_entries", head::IDLE_ENTRIES),
            ("idle_state_ns", head::IDLE_STATE_NS),
            ("idle_state_count", head::IDLE_STATE_COUNT),
            ("unseen", head::UNSEEN),
            ("unseen_ns", head::UNSEEN_NS),
        ] {
            assert_eq!(member(&b, h, name).0, at, "cpu_head.{name}");
        }
        assert_eq!(member(&b, h, "stack").1, MAX_DEPTH * head::FRAME);
        assert_eq!(member(&b, h, "idle_state_ns").1, NIDLE * 8);
        let s = id("src_slot");
        for (name, at) in [
            ("id", src::ID),
            ("max_gen", src::MAX_GEN),
            ("ns", src::NS),
            ("count", src::COUNT),
            ("max_ns", src::MAX_NS),
        ] {
            assert_eq!(member(&b, s, name).0, at, "src_slot.{name}");
        }
        let t = id("task_slot");
        for (name, at) in [
            ("tid", task::TID),
            ("tgid", task::TGID),
            ("epoch", task::EPOCH),
            ("touched", task::TOUCHED),
            ("cgroup", task::CGROUP),
            ("comm", task::COMM),
            ("ns", task::NS),
            ("slices", task::SLICES),
            ("max_gen", task::MAX_GEN),
            ("max_ns", task::MAX_NS),
            ("irq_ns", task::IRQ_NS),
            ("last_start", task::LAST_START),
            ("charged", task::CHARGED),
        ] {
            assert_eq!(member(&b, t, name).0, at, "task_slot.{name}");
        }
        assert_eq!(member(&b, id("remote"), "mig_out").0, line::MIG_OUT);
        assert_eq!(member(&b, id("ctl"), "gen").0, line::GEN);
        assert_eq!(member(&b, id("ctl"), "nr_cpus").0, line::NR_CPUS);
        assert_eq!(member(&b, id("ctl"), "t0").0, line::T0);
    }

    #[test]
    fn histogram_buckets_tile_the_line_as_the_program_fills_them() {
        // the program's index: exact below 8, then 8 per power of two
        let index = |v: u64| -> usize {
            if v < 8 {
                return v as usize;
            }
            let h = v.ilog2();
            let i = (h - HIST_GP + 1) * 8 + ((v >> (h - HIST_GP)) & 7) as u32;
            (i as usize).min(NHIST - 1)
        };
        for v in [
            0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 1000, 1023, 1024, 65_537, 10_000_000,
        ] {
            let (lo, hi) = bucket_bounds(index(v));
            assert!(lo <= v && v < hi, "{v} in [{lo}, {hi})");
        }
        for i in 0..NHIST - 1 {
            assert_eq!(bucket_bounds(i).1, bucket_bounds(i + 1).0, "bucket {i}");
        }
        assert_eq!(bucket_bounds(8), (8, 9));
        assert_eq!(bucket_bounds(16), (16, 18));
    }
}
