//! Windows from the counts the BPF programs keep in the kernel
//! ([`crate::os::bpf`]): each read is cumulative, so a window is the
//! difference of two reads, plus the slice running at each end.
//!
//! A task's slot gains a slice's time when the slice closes; the slice
//! open at a cut is counted from the head (its task and start) up to the
//! cut, and taken back out of the window in which it closes, where the
//! slot holds all of it. Interruptions are counted in the window where
//! they end. Idle (tid 0) is counted like a task but kept apart. What the
//! tasks, idle and interruptions leave of the window is unknown: before
//! the first switch after the programs were attached, and the slices of
//! tasks that found no free slot (said, with their count).
//!
//! Run-queue waits come as an H2 histogram (grouping power 3: each bucket
//! within 12.5 % of its lower bound) whose difference gives the window's.

use foldhash::HashMap;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

use super::sources::{Vector, softirq_name};
use super::window::{CpuTrace, SourceKind, Stolen, TaskId, TaskTime, add_intruders};
use crate::os::bpf::layout::{
    IRQ_BASE, NIDLE, NSLOTS, NSOFTIRQ, NSRC, NVEC, VEC_BASE, VEC_FIRST, bucket_bounds,
};
use crate::os::bpf::read::{Head, RawCpu};

/// What the kernel counted on a CPU in a window, beyond who ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct KernelCounts {
    /// Context switches (perf's `context-switches`).
    pub switches: u64,
    /// Of them, away from a task that was still runnable (preempted).
    pub preempts: u64,
    /// Tasks that switched in here after running on another CPU last
    /// (perf's `cpu-migrations`).
    pub migrations_in: u64,
    /// Tasks that ran here last and switched in on another CPU.
    pub migrations_out: u64,
    /// cpuidle entries.
    pub idle_entries: u64,
    /// Time and exits per idle state (its index), from `power:cpu_idle`.
    pub idle_states: Vec<IdleState>,
    /// How long tasks waited for this CPU, from their wake-up (or
    /// preemption) to their switch in.
    pub runq: RunqDelay,
    /// Slices of tasks that found no free slot (more than 512 tasks in
    /// two windows): their time is in `unknown_ns`.
    pub untabled_slices: u64,
    /// Switches of tasks the kernel gave no storage for a wake-up time.
    pub unstored: u64,
    /// Switches out of a task other than the one that switched in: the
    /// kernel showed no switch between them. The time between went to
    /// the first as far as the scheduler charged it, the rest to the other.
    #[serde(default)]
    pub unseen_switches: u64,
    /// The time those switches spanned, ns.
    #[serde(default)]
    pub unseen_ns: u64,
}

/// One idle state over a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdleState {
    /// cpuidle's index.
    pub state: u32,
    /// Time in it, ns (counted when the CPU leaves it).
    pub ns: u64,
    /// Exits from it.
    pub exits: u64,
}

/// Run-queue waits over a window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct RunqDelay {
    /// Waits that ended (switch ins of woken or preempted tasks).
    pub waits: u64,
    /// Their total, ns.
    pub total_ns: u64,
    /// The longest, ns.
    pub max_ns: u64,
    /// Non-empty buckets: upper bound (exclusive), ns, and count.
    pub buckets: Vec<(u64, u64)>,
}

impl RunqDelay {
    /// `412 waits, p50 < 4.1 µs, p99 < 66 µs, max 210 µs`: a quantile is
    /// its bucket's upper bound (the wait that share did not reach).
    pub fn text(&self) -> String {
        let us = |ns: u64| {
            let (v, unit) = match ns {
                0..1_000_000 => (ns as f64 / 1e3, "µs"),
                1_000_000..1_000_000_000 => (ns as f64 / 1e6, "ms"),
                _ => (ns as f64 / 1e9, "s"),
            };
            if v >= 100.0 {
                format!("{v:.0} {unit}")
            } else {
                format!("{v:.1} {unit}")
            }
        };
        let n = self.waits;
        let mut t = format!("{n} wait{}", if n == 1 { "" } else { "s" });
        if let (Some(p50), Some(p99)) = (self.quantile(0.5), self.quantile(0.99)) {
            let _ = write!(
                t,
                ", p50 < {}, p99 < {}, max {}",
                us(p50),
                us(p99),
                us(self.max_ns)
            );
        }
        t
    }

    /// Waits per power of two of ns from `2^first` to `2^last` (a wait
    /// below `2^first` in the first, one past `2^last` in the last): the
    /// shape of the histogram on one line.
    pub fn by_power(&self, first: u32, last: u32) -> Vec<u64> {
        let mut out = vec![0; (last - first + 1) as usize];
        for &(upper, n) in &self.buckets {
            // the power of two at or past the bucket's end
            let p = 64 - upper.saturating_sub(1).leading_zeros();
            let i = p.clamp(first, last) - first;
            out[i as usize] += n;
        }
        out
    }
    /// The upper bound of the bucket holding quantile `q` (0–1), ns: the
    /// wait that `q` of the waits did not reach. `None` without waits.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        let n: u64 = self.buckets.iter().map(|b| b.1).sum();
        if n == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * n as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for &(upper, count) in &self.buckets {
            seen += count;
            if seen >= rank {
                return Some(upper.min(self.max_ns.max(1)));
            }
        }
        self.buckets.last().map(|b| b.0)
    }
}

/// The slice running at a cut, and how much of it is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Open {
    tid: u32,
    tgid: u32,
    start: u64,
    /// Run time up to the cut, interruptions not included, ns.
    ns: u64,
    /// Interruptions in it up to the cut, ns.
    irq: u64,
}

/// The open slice of a read at `cut`, unless it closed after the head was
/// read (its slot already holds it).
fn open_at(raw: &RawCpu, cut: u64) -> Option<Open> {
    let h = &raw.head;
    if h.slice_start == 0 || h.slice_start > cut {
        return None;
    }
    if h.cur_tid != 0
        && raw
            .tasks
            .iter()
            .any(|t| t.tid == h.cur_tid && t.last_start == h.slice_start)
    {
        return None;
    }
    let span = cut - h.slice_start;
    let running = if h.depth > 0 && h.outer_start > 0 {
        cut.saturating_sub(h.outer_start)
    } else {
        0
    };
    let irq = (h.slice_irq + running).min(span);
    Some(Open {
        tid: h.cur_tid,
        tgid: h.cur_tgid,
        start: h.slice_start,
        ns: span - irq,
        irq,
    })
}

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    epoch: u32,
    tid: u32,
    ns: u64,
    slices: u32,
    irq_ns: u64,
    charged: u64,
}

#[derive(Debug, Default, Clone)]
struct Acc {
    ns: u64,
    slices: u64,
    carried: u64,
    max_ns: u64,
    irq_ns: u64,
    tgid: Option<u32>,
    comm: Option<String>,
    cgroup: Option<u64>,
    /// Slices its slot closed in the window.
    closed: u64,
    /// What the scheduler charged it for those.
    charged: u64,
}

/// The accounting state of one CPU between reads.
#[derive(Debug, Clone)]
pub struct CpuBook {
    cpu: u32,
    cut: u64,
    head: Head,
    hist: Vec<u64>,
    sources: Vec<(u32, u64, u64)>,
    slots: Vec<Slot>,
    open: Option<Open>,
    mig_out: u64,
    owner_pids: Vec<u32>,
    auto_owner: Option<u32>,
}

fn comm_text(c: &[u8; 16]) -> Option<String> {
    let n = c.iter().position(|&b| b == 0).unwrap_or(16);
    (n > 0).then(|| String::from_utf8_lossy(&c[..n]).into_owned())
}

/// What an interruption source is, by its index.
fn source_of(index: usize, id: u32) -> Option<(SourceKind, String, Option<u32>)> {
    if index < NSOFTIRQ {
        let v = index as u32;
        return Some((
            SourceKind::Softirq,
            softirq_name(v).map_or_else(|| format!("softirq {v}"), str::to_owned),
            None,
        ));
    }
    if (VEC_BASE..VEC_BASE + NVEC).contains(&index) {
        let n = VEC_FIRST + (index - VEC_BASE) as u32;
        return Some(match Vector::from_number(n) {
            Some(v) => (
                if v == Vector::LocalTimer {
                    SourceKind::LocalTimer
                } else if v.is_ipi() {
                    SourceKind::Ipi
                } else {
                    SourceKind::Apic
                },
                v.event_base().to_owned(),
                None,
            ),
            None => (SourceKind::Apic, format!("vector {n:#x}"), None),
        });
    }
    if (IRQ_BASE..NSRC).contains(&index) && id > 0 {
        let irq = id - 1;
        return Some((SourceKind::Irq, format!("irq {irq}"), Some(irq)));
    }
    None
}

impl CpuBook {
    /// A CPU not read yet.
    pub fn new(cpu: u32) -> CpuBook {
        CpuBook {
            cpu,
            cut: 0,
            head: Head::default(),
            hist: Vec::new(),
            sources: vec![(0, 0, 0); NSRC],
            slots: vec![Slot::default(); NSLOTS],
            open: None,
            mig_out: 0,
            owner_pids: Vec::new(),
            auto_owner: None,
        }
    }

    /// The CPU.
    pub fn cpu(&self) -> u32 {
        self.cpu
    }

    /// Sets the owner's pids (thread group or thread ids); empty: the
    /// longest runner of each window.
    pub fn set_owner(&mut self, pids: Vec<u32>) {
        self.owner_pids = pids;
    }

    fn remember(&mut self, raw: &RawCpu, cut: u64) {
        self.cut = cut;
        self.head = raw.head.clone();
        self.hist.clone_from(&raw.hist);
        for s in &raw.sources {
            if let Some(e) = self.sources.get_mut(s.index) {
                *e = (s.id, s.ns, s.count);
            }
        }
        for t in &raw.tasks {
            if let Some(e) = self.slots.get_mut(t.slot) {
                *e = Slot {
                    epoch: t.epoch,
                    tid: t.tid,
                    ns: t.ns,
                    slices: t.slices,
                    irq_ns: t.irq_ns,
                    charged: t.charged,
                };
            }
        }
        self.open = open_at(raw, cut);
        self.mig_out = raw.mig_out;
    }

    /// Takes the first read, made at `cut` (every slot read): nothing
    /// before it belongs to a window.
    pub fn start(&mut self, raw: &RawCpu, cut: u64) {
        self.remember(raw, cut);
    }

    fn is_owner(&self, tid: u32, tgid: Option<u32>, auto: Option<u32>) -> bool {
        if tid == 0 {
            return false;
        }
        if self.owner_pids.is_empty() {
            return auto == Some(tid);
        }
        self.owner_pids.contains(&tid) || tgid.is_some_and(|p| self.owner_pids.contains(&p))
    }

    /// The window from the last read to this one, made at `cut`; `window_gen` is
    /// the window number the programs tagged the window's maxima with.
    pub fn window(&mut self, raw: &RawCpu, cut: u64, window_gen: u32) -> CpuTrace {
        let start = self.cut;
        let window_ns = cut.saturating_sub(start);
        let mut acc: HashMap<u32, Acc> = HashMap::default();
        for t in &raw.tasks {
            let Some(p) = self.slots.get(t.slot) else {
                continue;
            };
            let same = p.epoch == t.epoch && p.tid == t.tid;
            let (ns, slices, irq, charged) = if same {
                (
                    t.ns.saturating_sub(p.ns),
                    u64::from(t.slices.saturating_sub(p.slices)),
                    t.irq_ns.saturating_sub(p.irq_ns),
                    t.charged.saturating_sub(p.charged),
                )
            } else {
                (t.ns, u64::from(t.slices), t.irq_ns, t.charged)
            };
            let max = if t.max_gen == window_gen { t.max_ns } else { 0 };
            if ns == 0 && slices == 0 && irq == 0 && max == 0 {
                continue;
            }
            let a = acc.entry(t.tid).or_default();
            a.ns += ns;
            a.slices += slices;
            a.closed += slices;
            a.charged += charged;
            a.irq_ns += irq;
            a.max_ns = a.max_ns.max(max);
            a.tgid = Some(t.tgid);
            a.comm = comm_text(&t.comm).or(a.comm.take());
            a.cgroup = (t.cgroup != 0).then_some(t.cgroup).or(a.cgroup);
        }
        let h = &raw.head;
        let d = |now: u64, then: u64| now.saturating_sub(then);
        let mut idle = Acc {
            ns: d(h.idle_ns, self.head.idle_ns),
            ..Acc::default()
        };
        let untabled_slices = d(h.others_slices, self.head.others_slices);

        let now_open = open_at(raw, cut);
        let prev_open = self.open;
        let same_slice = matches!((prev_open, now_open), (Some(p), Some(n)) if p.tid == n.tid && p.start == n.start);
        let mut idle_edge_ns = 0;
        if let Some(p) = prev_open {
            let a = if p.tid == 0 {
                &mut idle
            } else {
                acc.entry(p.tid).or_default()
            };
            a.carried = 1;
            if !same_slice && (p.tid == 0 || a.closed > 0) {
                // it closed in this window: its slot holds all of it, the
                // part before the window included (a slice that found no
                // slot is in the unknown time, whole)
                a.ns = a.ns.saturating_sub(p.ns);
                a.irq_ns = a.irq_ns.saturating_sub(p.irq);
            }
        }
        if let Some(n) = now_open {
            let a = if n.tid == 0 {
                &mut idle
            } else {
                acc.entry(n.tid).or_default()
            };
            let (ns, irq) = match prev_open.filter(|_| same_slice) {
                Some(p) => (n.ns.saturating_sub(p.ns), n.irq.saturating_sub(p.irq)),
                // a slice the programs took up at a CPU's first event runs
                // from the first read: only its part in the window counts
                None if n.start < start => {
                    let irq = n.irq.min(cut.saturating_sub(start));
                    (cut.saturating_sub(start) - irq, irq)
                }
                None => (n.ns, n.irq),
            };
            a.ns += ns;
            a.irq_ns += irq;
            a.slices += 1;
            a.max_ns = a.max_ns.max(n.ns);
            if n.tid != 0 {
                a.tgid = a.tgid.or(Some(n.tgid));
            } else {
                idle_edge_ns += ns;
            }
        }

        let mut sources = Vec::new();
        let mut source_ns = 0;
        for s in &raw.sources {
            let Some(&(pid, pns, pcount)) = self.sources.get(s.index) else {
                continue;
            };
            let (ns, count) = if pid == s.id {
                (d(s.ns, pns), d(s.count, pcount))
            } else {
                (s.ns, s.count)
            };
            let max_ns = if s.max_gen == window_gen { s.max_ns } else { 0 };
            if count == 0 {
                continue;
            }
            let Some((kind, name, irq)) = source_of(s.index, s.id) else {
                continue;
            };
            source_ns += ns;
            sources.push(Stolen {
                kind,
                name,
                irq,
                task: None,
                ns,
                count,
                max_ns,
                owner_ns: 0,
            });
        }

        // the owner: given, else the longest runner (kept while it runs at
        // least half as long as the longest, so that two tasks sharing the
        // CPU evenly do not swap it every window)
        let auto = if self.owner_pids.is_empty() {
            let longest = acc
                .iter()
                .filter(|(tid, a)| **tid != 0 && a.ns > 0)
                .max_by_key(|(tid, a)| (a.ns, std::cmp::Reverse(**tid)))
                .map(|(tid, a)| (*tid, a.ns));
            let ran = |tid: u32| acc.get(&tid).map_or(0, |a| a.ns);
            let kept = self.auto_owner.filter(|&tid| {
                longest.is_some_and(|(_, ns)| ran(tid) > 0 && ran(tid).saturating_mul(2) >= ns)
            });
            let chosen = kept.or(longest.map(|(tid, _)| tid));
            if chosen.is_some() {
                self.auto_owner = chosen;
            }
            chosen
        } else {
            None
        };
        let mut tasks: Vec<TaskTime> = acc
            .into_iter()
            .filter(|(_, a)| a.ns > 0 || a.slices > 0)
            .map(|(tid, a)| TaskTime {
                owner: self.is_owner(tid, a.tgid, auto),
                task: TaskId {
                    pid: a.tgid,
                    tid,
                    comm: a.comm,
                },
                ns: a.ns,
                slices: a.slices,
                carried: a.carried,
                max_ns: a.max_ns,
                // counted as a slice closes: none for a task whose slices
                // all stay open past the window (a charge of 0 would say
                // it took nothing)
                charged_ns: (a.closed > 0).then_some(a.charged),
                irq_ns: a.irq_ns,
                cgroup: a.cgroup,
            })
            .collect();
        if idle.ns > 0 || idle.slices > 0 {
            tasks.push(TaskTime {
                task: TaskId {
                    pid: Some(0),
                    tid: 0,
                    comm: Some("swapper".into()),
                },
                ns: idle.ns,
                slices: idle.slices,
                carried: idle.carried,
                max_ns: idle.max_ns,
                owner: false,
                charged_ns: None,
                irq_ns: idle.irq_ns,
                cgroup: None,
            });
        }
        tasks.sort_by(|a, b| b.ns.cmp(&a.ns).then(a.task.tid.cmp(&b.task.tid)));
        let task_ns: u64 = tasks.iter().filter(|t| t.task.tid != 0).map(|t| t.ns).sum();
        let owner = tasks.iter().find(|t| t.owner).map(|t| t.task.clone());
        let owner_ns = tasks.iter().filter(|t| t.owner).map(|t| t.ns).sum();
        add_intruders(&mut sources, &tasks);

        let mut buckets = Vec::new();
        for (i, &c) in raw.hist.iter().enumerate() {
            let n = c.saturating_sub(self.hist.get(i).copied().unwrap_or(0));
            if n > 0 {
                buckets.push((bucket_bounds(i).1, n));
            }
        }
        let idle_states = (0..NIDLE)
            .filter_map(|i| {
                let exits = d(h.idle_state_count[i], self.head.idle_state_count[i]);
                (exits > 0).then(|| IdleState {
                    state: i as u32,
                    ns: d(h.idle_state_ns[i], self.head.idle_state_ns[i]),
                    exits,
                })
            })
            .collect();
        let kernel = KernelCounts {
            switches: d(h.switches, self.head.switches),
            preempts: d(h.preempts, self.head.preempts),
            migrations_in: d(h.mig_in, self.head.mig_in),
            migrations_out: d(raw.mig_out, self.mig_out),
            idle_entries: d(h.idle_entries, self.head.idle_entries),
            idle_states,
            runq: RunqDelay {
                waits: d(h.rq_waits, self.head.rq_waits),
                total_ns: d(h.rq_delay_ns, self.head.rq_delay_ns),
                max_ns: if h.rq_max_gen == window_gen {
                    h.rq_delay_max
                } else {
                    0
                },
                buckets,
            },
            untabled_slices,
            unstored: d(h.no_storage, self.head.no_storage),
            unseen_switches: d(h.unseen, self.head.unseen),
            unseen_ns: d(h.unseen_ns, self.head.unseen_ns),
        };
        let out = CpuTrace {
            cpu: self.cpu,
            start_ns: start,
            window_ns,
            owner,
            owner_given: !self.owner_pids.is_empty(),
            owner_ns,
            idle_ns: idle.ns,
            // the slices of tasks past the table are in here too
            unknown_ns: window_ns.saturating_sub(task_ns + idle.ns + source_ns),
            tasks,
            sources,
            records: d(h.events, self.head.events),
            unmatched: d(h.unmatched, self.head.unmatched) + d(h.src_full, self.head.src_full),
            idle_edge_ns,
            kernel: Some(kernel),
        };
        self.remember(raw, cut);
        out
    }
}

#[cfg(test)]
#[path = "in_kernel_tests.rs"]
mod tests;
