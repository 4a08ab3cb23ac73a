//! One CPU's counts as the programs left them, copied out of the mapped
//! area into plain data: the head under its sequence count, the sources
//! that ever counted, and the task slots that changed in the last two
//! windows. Nothing here is a difference: `trace::in_kernel` makes the
//! windows.

use super::Mapping;
use super::layout::{
    CPU_AREA_SIZE, HIST_AT, IRQ_BASE, MAX_DEPTH, NHIST, NIDLE, NSLOTS, NSRC, REMOTE_SIZE, SRC_AT,
    SRC_SIZE, TASK_AT, TASK_SIZE, head, line, src, task,
};

/// The head of a CPU's area: the open slice and the cumulative counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Head {
    /// The task running (0: idle), since `slice_start` ns.
    pub cur_tid: u32,
    /// Its thread group.
    pub cur_tgid: u32,
    /// When it switched in, ns (0: no switch seen yet).
    pub slice_start: u64,
    /// Interruptions that ended in the open slice, ns.
    pub slice_irq: u64,
    /// Open interruptions.
    pub depth: u32,
    /// When the outermost open interruption began, ns (0: none open).
    pub outer_start: u64,
    /// Program runs.
    pub events: u64,
    /// Context switches.
    pub switches: u64,
    /// Of them, switches away from a task still runnable.
    pub preempts: u64,
    /// Tasks that switched in here after running elsewhere last.
    pub mig_in: u64,
    /// Idle time between switches, interruptions not included, ns.
    pub idle_ns: u64,
    /// Slices of tasks no slot was free for: time and count.
    pub others_ns: u64,
    /// See `others_ns`.
    pub others_slices: u64,
    /// Interruptions of IRQs no slot was free for.
    pub src_full: u64,
    /// Exits without their entry.
    pub unmatched: u64,
    /// Switches of tasks that got no storage for their wake-up time.
    pub no_storage: u64,
    /// Waits for the CPU measured (wake-up or preemption to switch in).
    pub rq_waits: u64,
    /// Their total, ns.
    pub rq_delay_ns: u64,
    /// The longest in window `rq_max_gen`, ns.
    pub rq_delay_max: u64,
    /// See `rq_delay_max`.
    pub rq_max_gen: u32,
    /// cpuidle entries.
    pub idle_entries: u64,
    /// Time in each idle state, ns, counted at its exit.
    pub idle_state_ns: [u64; NIDLE],
    /// Exits from each idle state.
    pub idle_state_count: [u64; NIDLE],
    /// Switches out of a task that was not the one switched in (the
    /// kernel showed none between), and the time they spanned, ns.
    pub unseen: u64,
    /// See `unseen`.
    pub unseen_ns: u64,
}

/// One interruption source's counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RawSource {
    /// Its index (see `layout`).
    pub index: usize,
    /// IRQ slots: the IRQ number + 1 (0: not an IRQ slot).
    pub id: u32,
    /// Time, nested interruptions not included, ns.
    pub ns: u64,
    /// Interruptions.
    pub count: u64,
    /// The longest in window `max_gen`, ns.
    pub max_ns: u64,
    /// See `max_ns`.
    pub max_gen: u32,
}

/// One task slot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RawTask {
    /// Its index.
    pub slot: usize,
    /// Thread id.
    pub tid: u32,
    /// Thread group id.
    pub tgid: u32,
    /// Even; a new value is a new task in the slot.
    pub epoch: u32,
    /// The window it last ran in.
    pub touched: u32,
    /// Its cgroup v2 id.
    pub cgroup: u64,
    /// Its name, NUL-padded.
    pub comm: [u8; 16],
    /// Run time between its switches, interruptions not included, ns.
    pub ns: u64,
    /// Slices closed.
    pub slices: u32,
    /// The longest slice in window `max_gen`, ns.
    pub max_ns: u64,
    /// See `max_ns`.
    pub max_gen: u32,
    /// Interruptions while it ran, ns.
    pub irq_ns: u64,
    /// When its last closed slice began, ns.
    pub last_start: u64,
    /// What the scheduler charged it over its closed slices, ns.
    pub charged: u64,
}

/// What one read of a CPU found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawCpu {
    /// The CPU.
    pub cpu: u32,
    /// The head.
    pub head: Head,
    /// Run-queue delay histogram (H2 buckets).
    pub hist: Vec<u64>,
    /// Sources that ever counted.
    pub sources: Vec<RawSource>,
    /// Task slots touched in window `since` or later.
    pub tasks: Vec<RawTask>,
    /// Tasks that left this CPU and switched in on another.
    pub mig_out: u64,
}

/// Tries at a consistent copy of a busy CPU's head before taking the last.
const HEAD_TRIES: usize = 64;

fn read_head(m: &Mapping, b: usize) -> Head {
    let mut h = Head::default();
    for _ in 0..HEAD_TRIES {
        let s1 = m.u64(b + head::SEQ);
        if s1 % 2 == 1 {
            std::hint::spin_loop();
            continue;
        }
        h.cur_tid = m.u32(b + head::CUR_TID);
        h.cur_tgid = m.u32(b + head::CUR_TGID);
        h.slice_start = m.u64(b + head::SLICE_START);
        h.slice_irq = m.u64(b + head::SLICE_IRQ);
        h.depth = m.u32(b + head::DEPTH);
        h.outer_start = if h.depth > 0 && (h.depth as usize) <= MAX_DEPTH {
            m.u64(b + head::STACK + 8)
        } else {
            0
        };
        h.events = m.u64(b + head::EVENTS);
        h.switches = m.u64(b + head::SWITCHES);
        h.preempts = m.u64(b + head::PREEMPTS);
        h.mig_in = m.u64(b + head::MIG_IN);
        h.idle_ns = m.u64(b + head::IDLE_NS);
        h.others_ns = m.u64(b + head::OTHERS_NS);
        h.others_slices = m.u64(b + head::OTHERS_SLICES);
        h.src_full = m.u64(b + head::SRC_FULL);
        h.unmatched = m.u64(b + head::UNMATCHED);
        h.no_storage = m.u64(b + head::NO_STORAGE);
        h.rq_waits = m.u64(b + head::RQ_WAITS);
        h.rq_delay_ns = m.u64(b + head::RQ_DELAY_NS);
        h.rq_delay_max = m.u64(b + head::RQ_DELAY_MAX);
        h.rq_max_gen = m.u32(b + head::RQ_MAX_GEN);
        h.idle_entries = m.u64(b + head::IDLE_ENTRIES);
        for i in 0..NIDLE {
            h.idle_state_ns[i] = m.u64(b + head::IDLE_STATE_NS + 8 * i);
            h.idle_state_count[i] = m.u64(b + head::IDLE_STATE_COUNT + 8 * i);
        }
        h.unseen = m.u64(b + head::UNSEEN);
        h.unseen_ns = m.u64(b + head::UNSEEN_NS);
        if m.u64(b + head::SEQ) == s1 {
            break;
        }
    }
    h
}

/// Reads CPU `cpu`'s area: its head, its sources, and the task slots last
/// touched in window `since` or later (the others have not changed since
/// an earlier read).
pub fn read_cpu(areas: &Mapping, remotes: &Mapping, cpu: u32, since: u32) -> RawCpu {
    let b = cpu as usize * CPU_AREA_SIZE;
    let head = read_head(areas, b);
    let hist = (0..NHIST).map(|i| areas.u64(b + HIST_AT + 8 * i)).collect();
    let mut sources = Vec::new();
    for index in 0..NSRC {
        let o = b + SRC_AT + index * SRC_SIZE;
        let count = areas.u64(o + src::COUNT);
        if count == 0 {
            continue;
        }
        sources.push(RawSource {
            index,
            id: if index >= IRQ_BASE {
                areas.u32(o + src::ID)
            } else {
                0
            },
            ns: areas.u64(o + src::NS),
            count,
            max_ns: areas.u64(o + src::MAX_NS),
            max_gen: areas.u32(o + src::MAX_GEN),
        });
    }
    let mut tasks = Vec::new();
    for slot in 0..NSLOTS {
        let o = b + TASK_AT + slot * TASK_SIZE;
        let touched = areas.u32(o + task::TOUCHED);
        if touched < since || areas.u32(o + task::TID) == 0 {
            continue;
        }
        let epoch = areas.u32(o + task::EPOCH);
        if epoch % 2 == 1 {
            // being claimed this very moment: read at the next window
            continue;
        }
        let mut comm = [0u8; 16];
        areas.bytes(o + task::COMM, &mut comm);
        let t = RawTask {
            slot,
            tid: areas.u32(o + task::TID),
            tgid: areas.u32(o + task::TGID),
            epoch,
            touched,
            cgroup: areas.u64(o + task::CGROUP),
            comm,
            ns: areas.u64(o + task::NS),
            slices: areas.u32(o + task::SLICES),
            max_ns: areas.u64(o + task::MAX_NS),
            max_gen: areas.u32(o + task::MAX_GEN),
            irq_ns: areas.u64(o + task::IRQ_NS),
            last_start: areas.u64(o + task::LAST_START),
            charged: areas.u64(o + task::CHARGED),
        };
        if areas.u32(o + task::EPOCH) == epoch {
            tasks.push(t);
        }
    }
    RawCpu {
        cpu,
        head,
        hist,
        sources,
        tasks,
        mig_out: remotes.u64(cpu as usize * REMOTE_SIZE + line::MIG_OUT),
    }
}
