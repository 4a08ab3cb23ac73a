//! One window of who ran on a CPU and what interrupted it, the shape every
//! source of it gives (the in-kernel counts, /proc sampling, a capture's
//! kept windows): tasks with their time between switches and the
//! scheduler's charge, interruption sources with their time, count and
//! longest, and what is not known.

use serde::Serialize;

/// A task: thread group id (when known), thread id and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct TaskId {
    /// Thread group id; `None` when no sample showed it (fill it from /proc).
    pub pid: Option<u32>,
    /// Thread id (the kernel's pid); 0 is idle.
    pub tid: u32,
    /// Name from the events; `None` when no event named it.
    pub comm: Option<String>,
}

/// Time a task spent on the CPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskTime {
    /// Who.
    pub task: TaskId,
    /// ns on the CPU in the window, excluding interrupt handlers.
    pub ns: u64,
    /// Slices (switch-in to switch-out) that overlap the window.
    pub slices: u64,
    /// Of those, the one already running when the window began (0 or 1):
    /// the session does not count it twice.
    pub carried: u64,
    /// Longest slice so far, ns.
    pub max_ns: u64,
    /// Part of the owner of the CPU.
    pub owner: bool,
    /// Run time the scheduler charged it for the slices that closed in the
    /// window, ns: what /proc/PID/schedstat adds up (with the interrupts
    /// that hit it, and from a wake-up that preempted another task rather
    /// than from its switch in). `None` where none of its slices closed in
    /// the window, and for idle.
    pub charged_ns: Option<u64>,
    /// Interrupt handlers that ran while it was the current task, ns (not
    /// in `ns`; the scheduler charges them to it on a kernel without
    /// `CONFIG_IRQ_TIME_ACCOUNTING`).
    pub irq_ns: u64,
    /// Its cgroup v2 id, where the kernel counted it.
    pub cgroup: Option<u64>,
}

/// What took the time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    /// A device IRQ handler.
    Irq,
    /// A softirq.
    Softirq,
    /// The local APIC timer (tick, hrtimers).
    LocalTimer,
    /// An IPI: reschedule, function call, `irq_work`.
    Ipi,
    /// Another system vector (thermal, platform, APIC error, ...).
    Apic,
    /// A task other than the owner and idle.
    Task,
}

/// Time one source took from a CPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Stolen {
    /// Kind of source.
    pub kind: SourceKind,
    /// IRQ action name, softirq name (`NET_RX`), vector (`local_timer`) or comm.
    pub name: String,
    /// The IRQ number of an `Irq`.
    pub irq: Option<u32>,
    /// The task of a `Task`.
    pub task: Option<TaskId>,
    /// ns taken in the window (nested handlers not counted twice).
    pub ns: u64,
    /// Interruptions that ended in the window (slices for a task).
    pub count: u64,
    /// Longest single interruption (or slice), ns.
    pub max_ns: u64,
    /// Of `ns`, the part taken while an owner task was the one interrupted
    /// (for a task: 0).
    pub owner_ns: u64,
}

/// One CPU over one window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CpuTrace {
    /// The CPU.
    pub cpu: u32,
    /// Window start, ns (`CLOCK_MONOTONIC`).
    pub start_ns: u64,
    /// Window length, ns.
    pub window_ns: u64,
    /// The owner task that ran longest (`None`: no owner ran).
    pub owner: Option<TaskId>,
    /// Whether the owner was given by the caller or chosen as the longest runner.
    pub owner_given: bool,
    /// Time all owner tasks ran, ns.
    pub owner_ns: u64,
    /// Time idle (tid 0) ran, ns.
    pub idle_ns: u64,
    /// Time no count accounts for, ns: before a CPU's first event after the
    /// programs were attached, and the slices of tasks past the table.
    pub unknown_ns: u64,
    /// Every task that ran, longest first, idle included.
    pub tasks: Vec<TaskTime>,
    /// Every interruption source and every task other than owner and idle,
    /// most time first.
    pub sources: Vec<Stolen>,
    /// Events the programs counted in the window.
    pub records: u64,
    /// Interruption exits without their entry (the programs were attached
    /// in its middle) and interruptions of IRQs past the table.
    pub unmatched: u64,
    /// Of `idle_ns`, the idle runs that touch the window's start or end,
    /// ns: where cpuidle's residency may not be counted yet (a state is
    /// counted when the CPU leaves it).
    pub idle_edge_ns: u64,
    /// Switches, migrations, idle entries and run-queue waits, where the
    /// kernel counted them.
    pub kernel: Option<super::in_kernel::KernelCounts>,
}

impl CpuTrace {
    /// Total ns taken from the CPU by sources (interrupts and intruding tasks).
    pub fn stolen_ns(&self) -> u64 {
        self.sources.iter().map(|s| s.ns).sum()
    }
}

/// Several CPUs over one window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct TraceWindow {
    /// Per CPU.
    pub cpus: Vec<CpuTrace>,
}

/// Adds every task other than the owner and idle to `sources`, then orders
/// them all by time taken (most first), kind and name.
pub fn add_intruders(sources: &mut Vec<Stolen>, tasks: &[TaskTime]) {
    for t in tasks.iter().filter(|t| !t.owner && t.task.tid != 0) {
        sources.push(Stolen {
            kind: SourceKind::Task,
            name: t
                .task
                .comm
                .clone()
                .unwrap_or_else(|| format!("tid {}", t.task.tid)),
            irq: None,
            task: Some(t.task.clone()),
            ns: t.ns,
            count: t.slices,
            max_ns: t.max_ns,
            owner_ns: 0,
        });
    }
    sources.sort_by(|a, b| {
        b.ns.cmp(&a.ns)
            .then(a.kind.cmp(&b.kind))
            .then(a.name.cmp(&b.name))
    });
}
