//! A window of who ran in the terms the rules read ([`Traced`]): its tasks
//! named as the user knows them (per-CPU kernel threads, tasks gone), and
//! the owner's descendants and the probe's threads told from intruders.

use std::path::Path;

use crate::noise::traced::{Intruder, StolenBy, Traced, TracedCpu, TracedTask};
use crate::trace::{CpuTrace, SourceKind, TaskId, TraceWindow};

/// `PF_NO_SETAFFINITY` in /proc/PID/stat's flags: a kernel thread bound to
/// its CPU, which `taskset` cannot move.
const PF_NO_SETAFFINITY: u64 = 0x0400_0000;

/// The pids that own the traced CPUs, and the rules that go with them:
/// the probe's wake-ups are listed as its, and the owner's children and
/// grandchildren (a shell's commands, a benchmark's workers) are the owner
/// too.
#[derive(Debug, Clone, Default)]
pub struct Owners {
    /// The owner's pids; empty: the longest runner of each window.
    pub pids: Vec<u32>,
    /// Processes found not to descend from the owner: a task that keeps
    /// intruding is looked up in /proc once, not every interval.
    strangers: Vec<u32>,
}

impl Owners {
    /// These pids own the CPUs.
    pub fn new(pids: Vec<u32>) -> Owners {
        Owners {
            pids,
            strangers: Vec::new(),
        }
    }

    /// Moves the probe's time and the owner's descendants out of the
    /// intruders; `true` when new descendants joined the owner (the
    /// accounting should own them from the next window on).
    pub fn settle(&mut self, out: &mut Traced, w: &TraceWindow, proc: &Path) -> bool {
        // the probe's wake-ups were asked for: listed as its, not as noise
        let running =
            crate::probe::running::path().and_then(|p| crate::probe::running::load_from(&p, proc));
        crate::probe::running::split(out, w, running.as_ref());
        if self.strangers.len() > 4096 {
            // pids are reused: forget, rather than grow for ever
            self.strangers.clear();
        }
        let Some(&root) = self.pids.first() else {
            return false;
        };
        // those still alive are found by their parents and owned from the
        // next window on
        let mut found = Vec::new();
        for c in &mut out.cpus {
            c.intruders.retain(|i| {
                if self.strangers.contains(&i.task.pid) {
                    return true;
                }
                let mine = descends_from(proc, i.task.pid, root);
                if !mine {
                    self.strangers.push(i.task.pid);
                }
                if mine && !found.contains(&i.task.pid) {
                    found.push(i.task.pid);
                }
                !mine
            });
        }
        let mut grew = false;
        for p in found {
            if !self.pids.contains(&p) {
                self.pids.push(p);
                grew = true;
            }
        }
        grew
    }
}

/// Whether process `pid` is `root` or one of its descendants, by the parent
/// links of /proc/PID/stat (a process already gone cannot be told).
fn descends_from(proc: &Path, pid: u32, root: u32) -> bool {
    let mut p = pid;
    for _ in 0..64 {
        if p == root {
            return true;
        }
        if p <= 1 {
            return false;
        }
        // the thread's own stat: a process-wide /proc/PID/stat sums its
        // threads' run time with task_sched_runtime(), which updates the
        // clock of a thread running on another CPU under that CPU's run
        // queue lock and may send it a reschedule IPI (seen on 6.18)
        let Ok(stat) = crate::os::read_small(&proc.join(format!("{p}/task/{p}/stat")), 4096) else {
            return false;
        };
        // the fields after the parenthesised comm: state, then ppid
        let Some(ppid) = stat
            .rsplit_once(')')
            .and_then(|x| x.1.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
        else {
            return false;
        };
        p = ppid;
    }
    false
}

/// Whether a thread is bound to its CPU for good (a per-CPU kernel thread).
pub fn bound(proc: &Path, tid: u32) -> bool {
    // the thread's own stat, not the process's (see `descends_from`)
    let Ok(stat) = crate::os::read_small(&proc.join(format!("{tid}/task/{tid}/stat")), 4096) else {
        return false;
    };
    // the fields after the parenthesised comm: state is the 3rd, flags the 9th
    let Some(rest) = stat.rsplit_once(')').map(|x| x.1) else {
        return false;
    };
    rest.split_whitespace()
        .nth(6)
        .and_then(|f| f.parse::<u64>().ok())
        .is_some_and(|f| f & PF_NO_SETAFFINITY != 0)
}

fn kind(k: SourceKind) -> &'static str {
    match k {
        SourceKind::Irq => "irq",
        SourceKind::Softirq => "softirq",
        SourceKind::LocalTimer => "timer",
        SourceKind::Ipi => "ipi",
        SourceKind::Apic => "apic",
        SourceKind::Task => "task",
    }
}

/// One CPU's window in the rules' terms, its tasks named by `name` (given
/// the task and its cgroup id), with at most `most` intruders (the
/// longest).
pub fn cpu_with(
    c: &CpuTrace,
    most: usize,
    name: &mut dyn FnMut(&TaskId, Option<u64>) -> TracedTask,
) -> TracedCpu {
    let mut named: Vec<&crate::trace::TaskTime> = c
        .tasks
        .iter()
        .filter(|t| !t.owner && t.task.tid != 0 && t.ns > 0)
        .collect();
    named.sort_by_key(|t| std::cmp::Reverse(t.ns));
    named.truncate(most);
    let intruders: Vec<Intruder> = named
        .into_iter()
        .map(|t| Intruder {
            task: name(&t.task, t.cgroup),
            ns: t.ns,
            slices: t.slices,
            charged_ns: t.charged_ns,
        })
        .collect();
    let stolen = c
        .sources
        .iter()
        .filter(|s| s.kind != SourceKind::Task && s.ns > 0)
        .map(|s| StolenBy {
            kind: kind(s.kind).into(),
            name: match (s.kind, s.irq) {
                (SourceKind::Irq, Some(n)) => format!("{n}:{}", s.name),
                _ => s.name.clone(),
            },
            irq: s.irq,
            ns: s.ns,
            count: s.count,
            max_ns: s.max_ns,
        })
        .collect();
    TracedCpu {
        cpu: c.cpu,
        window_ns: c.window_ns,
        owner: c.owner.as_ref().map(|o| {
            let cg = c
                .tasks
                .iter()
                .find(|t| t.task.tid == o.tid)
                .and_then(|t| t.cgroup);
            name(o, cg)
        }),
        owner_ns: c.tasks.iter().filter(|t| t.owner).map(|t| t.ns).sum(),
        owner_irq_ns: c.tasks.iter().filter(|t| t.owner).map(|t| t.irq_ns).sum(),
        intruders,
        stolen,
        idle_ns: c.idle_ns,
        unknown_ns: c.unknown_ns,
        idle_edge_ns: c.idle_edge_ns,
        sampled: false,
        owner_given: c.owner_given,
        owner_was: None,
        kernel: c.kernel.clone(),
    }
}
