//! What the tracepoints said about the traced (watched) CPUs over one
//! interval, in the terms the rules need: who ran besides the CPU's owner,
//! and how much time interrupts of each source took from it.

use serde::{Deserialize, Serialize};

/// How the probe is named where its time is listed.
pub const PROBE_LABEL: &str = "noisetop probe";

/// `noisetop probe ran 3.2 ms` (what a verdict adds on a probed CPU).
pub fn probe_ran_text(ns: u64) -> String {
    format!("{PROBE_LABEL} ran {:.1} ms", ns as f64 / 1e6)
}

/// One task, as the scheduler tracepoint named it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct TracedTask {
    /// Command name (`comm`, at most 15 bytes).
    pub comm: String,
    /// Process id (thread group).
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// Whether it is a kernel thread bound to this CPU (a per-CPU kworker,
    /// ksoftirqd, migration): `taskset` cannot move it.
    pub per_cpu_kthread: bool,
    /// It has exited since it ran: no command can move it.
    #[serde(default)]
    pub exited: bool,
    /// Its cgroup (the v2 hierarchy's path, `/system.slice/foo.service`),
    /// where the kernel counted it and the path could be found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<String>,
}

#[cfg(test)]
impl TracedTask {
    /// A live user task whose thread id is its pid.
    pub(crate) fn user(comm: &str, pid: u32) -> TracedTask {
        TracedTask {
            comm: comm.into(),
            pid,
            tid: pid,
            per_cpu_kthread: false,
            exited: false,
            cgroup: None,
        }
    }
}

/// A task other than the owner that ran on the CPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Intruder {
    /// The task.
    pub task: TracedTask,
    /// Time it ran on the CPU between its switches, ns (interrupts not
    /// included).
    pub ns: u64,
    /// How many times it was switched in.
    pub slices: u64,
    /// What the scheduler charged it, ns (what its schedstat counts: from
    /// its wake-ups, and the interrupts that hit it), where the kernel
    /// writes run time records.
    pub charged_ns: Option<u64>,
}

/// Time one interrupt source took from the CPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StolenBy {
    /// `irq`, `softirq`, `timer`, `ipi`.
    pub kind: String,
    /// The source's name (`41:virtio3-rx`, `NET_RX`, `local_timer`).
    pub name: String,
    /// The IRQ number for device interrupts.
    pub irq: Option<u32>,
    /// Total time, ns.
    pub ns: u64,
    /// How many times.
    pub count: u64,
    /// The longest single interruption, ns.
    pub max_ns: u64,
}

/// One traced CPU over the interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct TracedCpu {
    /// The CPU.
    pub cpu: u32,
    /// The span the figures cover, ns.
    pub window_ns: u64,
    /// The task the CPU belongs to (the benchmark), when known.
    pub owner: Option<TracedTask>,
    /// Time the owner (all its tasks) ran on the CPU, ns.
    #[serde(default)]
    pub owner_ns: u64,
    /// Time interrupts took while an owner task was the one running, ns
    /// (not in `owner_ns`; 0 where sampled, which sees no interrupt).
    #[serde(default)]
    pub owner_irq_ns: u64,
    /// Other tasks that ran, longest first (idle is never one).
    pub intruders: Vec<Intruder>,
    /// Interrupt sources, costliest first.
    pub stolen: Vec<StolenBy>,
    /// Time the idle task was current, ns.
    pub idle_ns: u64,
    /// Time no count accounts for, ns: before the CPU's first event after
    /// counting began, and the slices of tasks past the table.
    pub unknown_ns: u64,
    /// Of `idle_ns`, the idle runs at the window's edges, ns.
    pub idle_edge_ns: u64,
    /// The figures are sampled from /proc (each task's run time, on the
    /// watched CPU it was seen leaving or the CPU it ran on last), not
    /// traced: a task that moved between CPUs is credited to one of them,
    /// and no interrupt time is known.
    #[serde(default)]
    pub sampled: bool,
    /// Whether the owner was given (`--owner`, `run`'s command) rather
    /// than taken as the task that ran longest in the window.
    #[serde(default)]
    pub owner_given: bool,
    /// The longest runner of the window before, when the owner is not
    /// given and it has changed since: the new longest runner may be a
    /// stray task, not the benchmark.
    #[serde(default)]
    pub owner_was: Option<TracedTask>,
    /// Switches, migrations, idle entries and run-queue waits, where the
    /// kernel counted them (the BPF programs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<crate::trace::in_kernel::KernelCounts>,
}

/// Every traced CPU of an interval, and what could not be traced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Traced {
    /// Per traced CPU.
    pub cpus: Vec<TracedCpu>,
    /// CPUs sampled from /proc for the screen only (the detail view's CPU
    /// when it is not traced): no rule judges them.
    #[serde(default)]
    pub browsed: Vec<TracedCpu>,
    /// Traced CPUs `noisetop probe` measured on: its threads' time there,
    /// taken out of the intruders (the user asked for those wake-ups).
    pub probed: Vec<Probed>,
    /// The cgroup2 hierarchy the tasks' `cgroup` paths are in, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroups: Option<crate::os::cgroups::CgroupRoot>,
}

/// `noisetop probe`'s threads on one traced CPU over the interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Probed {
    /// The CPU.
    pub cpu: u32,
    /// The probe's processes seen there (its own and the context-switch
    /// partner it forks).
    pub pids: Vec<u32>,
    /// Time they ran between their switches, ns.
    pub ns: u64,
    /// How many times they were switched in.
    pub slices: u64,
    /// What the scheduler charged them, ns, where the kernel says.
    pub charged_ns: Option<u64>,
}

impl Traced {
    /// Returns one CPU's figures.
    pub fn cpu(&self, cpu: u32) -> Option<&TracedCpu> {
        self.cpus.iter().find(|c| c.cpu == cpu)
    }

    /// Returns one CPU's figures, traced or else sampled for the screen.
    pub fn shown(&self, cpu: u32) -> Option<&TracedCpu> {
        self.cpu(cpu)
            .or_else(|| self.browsed.iter().find(|c| c.cpu == cpu))
    }

    /// Whether, and how long, `noisetop probe` ran on one CPU.
    pub fn probed(&self, cpu: u32) -> Option<&Probed> {
        self.probed.iter().find(|p| p.cpu == cpu)
    }
}

impl TracedCpu {
    /// Share of the window, %.
    pub fn pct(&self, ns: u64) -> Option<f64> {
        (self.window_ns > 0).then(|| 100.0 * ns as f64 / self.window_ns as f64)
    }

    /// Time every intruder ran, ns.
    pub fn intruder_ns(&self) -> u64 {
        self.intruders.iter().map(|i| i.ns).sum()
    }

    /// Time every interrupt source took, ns.
    pub fn stolen_ns(&self) -> u64 {
        self.stolen.iter().map(|s| s.ns).sum()
    }
}
