//! Who ran on a CPU and what interrupted it, from its time-ordered events.
//!
//! A cursor walks the events of one CPU; the time between two events goes to
//! whatever was running in between: the innermost open interrupt handler if
//! any (so an IRQ inside a softirq counts for the IRQ only, never twice), else
//! the current task. Task times are therefore exclusive of interrupt time,
//! and the tasks, sources and unknown time of a window add up to the window.
//!
//! A switch shows as the `sched_switch` tracepoint (in the task leaving) and
//! as perf's switch-in record (in the task arriving). Where the kernel gives
//! perf no events of some task (the idle task, on some kernels), one of the
//! two still shows the switch. Where neither does, the next event names
//! another task than the current one: the time since the last event is then
//! unknown, given to neither.
//!
//! The owner of the CPU is the caller's set of pids (matched against thread
//! group and thread ids) or, when none is given, the task that ran longest in
//! the window. Idle (tid 0) is never the owner nor an intruder. An interval
//! that straddles the window edge is split at the edge; an interruption is
//! counted in the window where it ends.

// foldhash, not std's SipHash: hashing small integer keys several times
// per record was most of the cost of accounting (benches/trace.rs).
use foldhash::HashMap;
use serde::Serialize;

use super::decode::{Comm, Decoded, Event, Vector, softirq_name};

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
    /// Run time the scheduler charged it in the window, ns, from its own
    /// `sched_stat_runtime` records: what /proc/PID/schedstat adds up (with
    /// the interrupts that hit it, and from its wake-up rather than its
    /// switch in). `None` where the kernel gives no such records, and for
    /// idle. A charge is counted in the window where it is written.
    pub charged_ns: Option<u64>,
    /// Interrupt handlers that ran while it was the current task, ns (not
    /// in `ns`; the scheduler charges them to it on a kernel without
    /// `CONFIG_IRQ_TIME_ACCOUNTING`).
    pub irq_ns: u64,
    /// Of `ns`, the time before its switches out of idle that the kernel
    /// charges it (the interrupt that woke it and the switch to it), ns:
    /// no record of the idle task shows it; its own run time records do.
    pub wake_ns: u64,
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
    /// Time no record accounts for, ns: before the first event, and
    /// [`unseen_ns`](Self::unseen_ns).
    pub unknown_ns: u64,
    /// Of `unknown_ns`, the time around a switch the kernel did not show:
    /// a task whose events perf did not get ran for some of it, and which
    /// part is not known. Given to neither task rather than guessed.
    pub unseen_ns: u64,
    /// Every task that ran, longest first, idle included.
    pub tasks: Vec<TaskTime>,
    /// Every interruption source and every task other than owner and idle,
    /// most time first.
    pub sources: Vec<Stolen>,
    /// Records read in the window: tracepoint samples and switch-in records.
    pub records: u64,
    /// Records the kernel dropped (ring full) in the window.
    pub lost: u64,
    /// Records that could not be decoded or did not match (an exit without
    /// its entry), a sign of lost records.
    pub unmatched: u64,
    /// Switches out of idle that only perf's switch record showed: the
    /// kernel gives perf no samples from the idle task, so an interrupt that
    /// hit this CPU while it idled is counted as idle time.
    pub idle_exits_hidden: u64,
    /// Time taken from idle and given to the tasks it woke (their
    /// [`TaskTime::wake_ns`]), ns: work done while the idle task was
    /// current that the woken task's run time records show.
    pub idle_wake_ns: u64,
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

/// All watched CPUs over one window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct TraceWindow {
    /// Per CPU, in the order they were opened.
    pub cpus: Vec<CpuTrace>,
    /// Records lost on all CPUs.
    pub lost: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Source {
    Irq(u32),
    Softirq(u32),
    Vector(Vector),
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    source: Source,
    /// The task it interrupted.
    tid: Option<u32>,
    /// Its time so far, ns.
    ns: u64,
    /// Of that, the time not yet added to the window's totals: the totals
    /// are updated when it ends or the window does, not on every event.
    pend: u64,
}

#[derive(Debug, Clone, Copy)]
struct Slice {
    tid: u32,
    /// Whether no switch-in record is to come for it: read already, or it
    /// began before the window or was found by a sample, or another event
    /// came first (the record follows its tracepoint at once).
    in_shown: bool,
    ns: u64,
    pend: u64,
    /// When it began (the switch in, or the window start for a slice
    /// already running).
    began: u64,
    /// Of `ns`, the part before this window.
    before_window: u64,
    /// It was running when the window began.
    carried: bool,
    /// The idle run just before it in this window, ns (0: it did not
    /// begin with a switch out of idle in this window).
    idle_before: u64,
    /// The scheduler's run time records of it during the slice, ns.
    runtime: u64,
}

impl Slice {
    fn new(tid: u32, in_shown: bool, began: u64) -> Slice {
        Slice {
            tid,
            in_shown,
            ns: 0,
            pend: 0,
            began,
            before_window: 0,
            carried: false,
            idle_before: 0,
            runtime: 0,
        }
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct TaskAcc {
    ns: u64,
    slices: u64,
    carried: u64,
    max_ns: u64,
    charged: u64,
    wake: u64,
}

#[derive(Debug, Default, Clone, Copy)]
struct SrcAcc {
    ns: u64,
    count: u64,
    max_ns: u64,
}

/// The accounting state of one CPU, carried from window to window.
#[derive(Debug, Clone)]
pub struct CpuAccount {
    cpu: u32,
    owner_pids: Vec<u32>,
    /// The owner taken, when none is given, at the last window a task ran.
    auto_owner: Option<u32>,
    /// The tick may stop while a task runs (`nohz_full`): a running task
    /// can then go a second uncharged.
    tick_stops: bool,
    start: u64,
    last: u64,
    current: Option<Slice>,
    stack: Vec<Frame>,
    tgid: HashMap<u32, u32>,
    comm: HashMap<u32, Comm>,
    irq_names: HashMap<u32, String>,
    tasks: HashMap<u32, TaskAcc>,
    sources: HashMap<Source, SrcAcc>,
    interrupted: HashMap<(Source, u32), u64>,
    unknown_ns: u64,
    unseen_ns: u64,
    records: u64,
    lost: u64,
    unmatched: u64,
    idle_exits_hidden: u64,
    last_tgid: (u32, u32),
    runtime_seen: bool,
    idle_wake_ns: u64,
    idle_edge_ns: u64,
}

/// Run time a task may show beyond the scheduler's charges in a window:
/// the part of its last slice after the last tick (10 ms at HZ=100), and
/// some.
const UNCHARGED_NS: u64 = 12_000_000;

/// Deepest nesting kept; more means exits were lost.
const MAX_DEPTH: usize = 16;

impl CpuAccount {
    /// Starts accounting `cpu` at `start` ns.
    pub fn new(cpu: u32, start: u64) -> CpuAccount {
        CpuAccount {
            cpu,
            owner_pids: Vec::new(),
            auto_owner: None,
            tick_stops: false,
            start,
            last: start,
            current: None,
            stack: Vec::new(),
            tgid: HashMap::default(),
            comm: HashMap::default(),
            irq_names: HashMap::default(),
            tasks: HashMap::default(),
            sources: HashMap::default(),
            interrupted: HashMap::default(),
            unknown_ns: 0,
            unseen_ns: 0,
            records: 0,
            lost: 0,
            unmatched: 0,
            idle_exits_hidden: 0,
            last_tgid: (u32::MAX, u32::MAX),
            runtime_seen: false,
            idle_wake_ns: 0,
            idle_edge_ns: 0,
        }
    }

    /// Sets the owner's pids (thread group or thread ids); empty: the
    /// longest runner of each window.
    pub fn set_owner(&mut self, pids: Vec<u32>) {
        self.owner_pids = pids;
    }

    /// Says the CPU is `nohz_full`: the tick may stop while a task runs.
    pub fn set_tick_stops(&mut self, stops: bool) {
        self.tick_stops = stops;
    }

    /// Counts sample records read.
    pub fn add_records(&mut self, n: u64) {
        self.records += n;
    }

    /// Counts records the kernel dropped.
    pub fn add_lost(&mut self, n: u64) {
        self.lost += n;
    }

    /// Counts a record that could not be decoded.
    pub fn add_unmatched(&mut self, n: u64) {
        self.unmatched += n;
    }

    /// Gives the time since the last event to what was running.
    fn advance(&mut self, t: u64) {
        let dt = t.saturating_sub(self.last);
        self.last = self.last.max(t);
        if dt == 0 {
            return;
        }
        if let Some(top) = self.stack.last_mut() {
            top.ns += dt;
            top.pend += dt;
        } else if let Some(c) = self.current.as_mut() {
            c.ns += dt;
            c.pend += dt;
        } else {
            self.unknown_ns += dt;
        }
    }

    /// Gives the time since the last event to nobody.
    fn unseen(&mut self, t: u64) {
        let dt = t.saturating_sub(self.last);
        self.last = self.last.max(t);
        self.unknown_ns += dt;
        self.unseen_ns += dt;
    }

    fn settle_frame(&mut self, f: &mut Frame) {
        if f.pend > 0 {
            self.sources.entry(f.source).or_default().ns += f.pend;
            if let Some(tid) = f.tid {
                *self.interrupted.entry((f.source, tid)).or_default() += f.pend;
            }
            f.pend = 0;
        }
    }

    fn settle_slice(&mut self) {
        if let Some(c) = self.current.as_mut() {
            let acc = self.tasks.entry(c.tid).or_default();
            acc.ns += c.pend;
            acc.max_ns = acc.max_ns.max(c.ns);
            c.pend = 0;
        }
    }

    fn begin_slice(&mut self, tid: u32, in_shown: bool) {
        self.settle_slice();
        let mut next = Slice::new(tid, in_shown, self.last);
        if let Some(c) = self.current {
            self.end_slice(&c);
            if c.tid == 0 && tid != 0 {
                next.idle_before = c.ns - c.before_window;
            }
        }
        self.current = Some(next);
        self.tasks.entry(tid).or_default().slices += 1;
    }

    /// A slice ends now (`self.last`). The scheduler charged a task that
    /// left idle from its wake-up, in the idle task's interrupt, which no
    /// record of idle shows: its run time records over the slice, less the
    /// slice, is that time. It moves from idle to the task, never more
    /// than the idle run before it.
    fn end_slice(&mut self, c: &Slice) {
        if c.carried && c.tid == 0 {
            self.idle_edge_ns += c.ns - c.before_window;
        }
        if c.idle_before == 0 || c.runtime == 0 {
            return;
        }
        let span = self.last.saturating_sub(c.began);
        let lead = c.runtime.saturating_sub(span).min(c.idle_before);
        if lead == 0 {
            return;
        }
        let idle = self.tasks.entry(0).or_default();
        let lead = lead.min(idle.ns);
        idle.ns -= lead;
        let t = self.tasks.entry(c.tid).or_default();
        t.ns += lead;
        t.wake += lead;
        self.idle_wake_ns += lead;
    }

    fn end_frame(&mut self, mut f: Frame) {
        self.settle_frame(&mut f);
        let acc = self.sources.entry(f.source).or_default();
        acc.count += 1;
        acc.max_ns = acc.max_ns.max(f.ns);
    }

    fn end_all_frames(&mut self) {
        while let Some(f) = self.stack.pop() {
            self.unmatched += 1;
            self.end_frame(f);
        }
    }

    fn push(&mut self, source: Source) {
        if self.stack.len() >= MAX_DEPTH {
            self.unmatched += 1;
            return;
        }
        let tid = self.current.map(|c| c.tid);
        self.stack.push(Frame {
            source,
            tid,
            ns: 0,
            pend: 0,
        });
    }

    fn pop(&mut self, source: Source) {
        if let Some(pos) = self.stack.iter().rposition(|f| f.source == source) {
            // Frames above it lost their exits: they end here too.
            while self.stack.len() > pos + 1 {
                let f = self.stack.pop().expect("len > pos + 1");
                self.unmatched += 1;
                self.end_frame(f);
            }
            let f = self.stack.pop().expect("pos found");
            self.end_frame(f);
        } else {
            self.unmatched += 1;
        }
    }

    /// Feeds one event; events must come in time order (an earlier time is
    /// taken as the last one seen).
    pub fn event(&mut self, e: &Decoded<'_>) {
        // The task the event fired in: a switch names it in its payload; a
        // sample of a task already gone says tid -1 and names nobody.
        let who = match e.event {
            // the sched_switch tracepoint already showed this switch (it
            // fires first, before the switch is done); a second switch into
            // the running task means it left unseen in between
            Event::SwitchIn { .. }
                if self.current.is_some_and(|c| c.tid == e.tid && !c.in_shown) =>
            {
                self.advance(e.time);
                if let Some(c) = self.current.as_mut() {
                    c.in_shown = true;
                }
                return;
            }
            Event::Switch { prev_tid, .. } | Event::SwitchIn { prev_tid } => Some(prev_tid),
            _ => (e.tid != u32::MAX).then_some(e.tid),
        };
        if let Some(c) = self.current.as_mut() {
            c.in_shown = true;
        }
        if e.tid != u32::MAX && (e.tid != 0 || e.pid != 0) && self.last_tgid != (e.tid, e.pid) {
            self.tgid.insert(e.tid, e.pid);
            self.last_tgid = (e.tid, e.pid);
        }
        match (self.current, who) {
            (None, Some(tid)) => {
                // The first event names the task that ran since the start.
                let mut first = Slice::new(tid, true, self.start);
                first.carried = true;
                self.current = Some(first);
                let acc = self.tasks.entry(tid).or_default();
                acc.slices += 1;
                acc.carried += 1;
                self.unknown_ns = 0;
                self.last = self.start;
                // An exit first: the handler was running since the start.
                match e.event {
                    Event::IrqExit { irq } => self.push(Source::Irq(irq)),
                    Event::SoftirqExit { vec } => self.push(Source::Softirq(vec)),
                    Event::VectorExit(v) => self.push(Source::Vector(v)),
                    _ => {}
                }
            }
            (Some(c), Some(tid)) if c.tid != tid => {
                // A switch was not seen (lost, or in a task the kernel gives
                // perf no events of): since the last event, `c` ran and then
                // `tid` did, the split unknown. The sampled task is the
                // current one from here.
                self.unseen(e.time);
                self.unmatched += 1;
                self.end_all_frames();
                self.begin_slice(tid, true);
            }
            _ => {}
        }
        self.advance(e.time);
        match e.event {
            Event::Switch {
                prev_tid,
                prev_comm,
                next_tid,
                next_comm,
                ..
            } => {
                self.comm.insert(prev_tid, prev_comm);
                self.comm.insert(next_tid, next_comm);
                self.end_all_frames();
                self.begin_slice(next_tid, false);
            }
            Event::IrqEntry { irq, name } => {
                if self
                    .irq_names
                    .get(&irq)
                    .is_none_or(|n| n.as_bytes() != name)
                {
                    self.irq_names
                        .insert(irq, String::from_utf8_lossy(name).into_owned());
                }
                self.push(Source::Irq(irq));
            }
            Event::IrqExit { irq } => self.pop(Source::Irq(irq)),
            Event::SoftirqEntry { vec } => self.push(Source::Softirq(vec)),
            Event::SoftirqExit { vec } => self.pop(Source::Softirq(vec)),
            Event::VectorEntry(v) => self.push(Source::Vector(v)),
            Event::VectorExit(v) => self.pop(Source::Vector(v)),
            Event::SwitchIn { prev_tid } => {
                if prev_tid == 0 {
                    self.idle_exits_hidden += 1;
                }
                self.end_all_frames();
                self.begin_slice(e.tid, true);
            }
            Event::Runtime { tid, ns } => {
                self.runtime_seen = true;
                self.tasks.entry(tid).or_default().charged += ns;
                if let Some(c) = self.current.as_mut().filter(|c| c.tid == tid) {
                    c.runtime += ns;
                }
            }
            Event::Fork {
                parent_tid,
                child_tid,
            } => {
                // only given owners grow: a chosen one is chosen per window
                if !self.owner_pids.is_empty()
                    && self.is_owner(parent_tid, None)
                    && !self.owner_pids.contains(&child_tid)
                {
                    self.owner_pids.push(child_tid);
                }
            }
        }
    }

    /// The owner pids, those given and the children they forked since.
    pub fn owners(&self) -> &[u32] {
        &self.owner_pids
    }

    fn is_owner(&self, tid: u32, owner_auto: Option<u32>) -> bool {
        if tid == 0 {
            return false;
        }
        if self.owner_pids.is_empty() {
            return owner_auto == Some(tid);
        }
        self.owner_pids.contains(&tid)
            || self
                .tgid
                .get(&tid)
                .is_some_and(|p| self.owner_pids.contains(p))
    }

    fn task_id(&self, tid: u32) -> TaskId {
        TaskId {
            pid: if tid == 0 {
                Some(0)
            } else {
                self.tgid.get(&tid).copied()
            },
            tid,
            comm: self.comm.get(&tid).map(Comm::to_text),
        }
    }

    /// Ends the window at `end` ns and returns it; the next window starts there.
    pub fn flush(&mut self, end: u64) -> CpuTrace {
        self.advance(end);
        self.settle_slice();
        let mut stack = std::mem::take(&mut self.stack);
        for f in &mut stack {
            self.settle_frame(f);
        }
        self.stack = stack;
        let owner_auto = if self.owner_pids.is_empty() {
            let longest = self
                .tasks
                .iter()
                .filter(|(tid, _)| **tid != 0)
                .max_by_key(|(tid, a)| (a.ns, std::cmp::Reverse(**tid)))
                .map(|(tid, a)| (*tid, a.ns));
            // The owner taken before stays while it runs at least half as
            // long as the longest runner: two tasks sharing the CPU evenly
            // would otherwise swap the owner every window, and each swap
            // would read as a new benchmark.
            let ran = |tid: u32| self.tasks.get(&tid).map_or(0, |a| a.ns);
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
        if let Some(c) = self.current.filter(|c| c.tid == 0) {
            self.idle_edge_ns += c.ns - c.before_window;
        }
        let mut irq_ns: HashMap<u32, u64> = HashMap::default();
        for ((_, tid), ns) in &self.interrupted {
            *irq_ns.entry(*tid).or_default() += ns;
        }
        let mut tasks: Vec<TaskTime> = self
            .tasks
            .iter()
            .map(|(&tid, a)| TaskTime {
                task: self.task_id(tid),
                ns: a.ns,
                slices: a.slices,
                carried: a.carried,
                max_ns: a.max_ns,
                owner: self.is_owner(tid, owner_auto),
                charged_ns: (self.runtime_seen && tid != 0).then_some(a.charged),
                irq_ns: irq_ns.get(&tid).copied().unwrap_or(0),
                wake_ns: a.wake,
                cgroup: None,
            })
            .collect();
        // A task the scheduler charged far less than the trace held it
        // current: its switch out was never written (the kernel writes no
        // record of some switches, see `source::switch_ring`), so the trace
        // kept it running through time it did not run. Where the tick runs,
        // the scheduler charges a running task at every tick, so what
        // exceeds its charge by more than a tick at the window's end is
        // time nobody showed: unseen, given to neither.
        let mut surplus_ns = 0;
        if self.runtime_seen && !self.tick_stops {
            for t in tasks.iter_mut().filter(|t| t.task.tid != 0) {
                let charged = t.charged_ns.unwrap_or(0);
                let surplus = t.ns.saturating_sub(charged.saturating_add(UNCHARGED_NS));
                t.ns -= surplus;
                t.max_ns = t.max_ns.min(t.ns);
                surplus_ns += surplus;
            }
        }
        tasks.sort_by(|a, b| b.ns.cmp(&a.ns).then(a.task.tid.cmp(&b.task.tid)));
        let owner = tasks.iter().find(|t| t.owner).map(|t| t.task.clone());
        let owner_ns = tasks.iter().filter(|t| t.owner).map(|t| t.ns).sum();
        let idle_ns = self.tasks.get(&0).map_or(0, |a| a.ns);

        let mut sources: Vec<Stolen> = Vec::with_capacity(self.sources.len() + tasks.len());
        for (&src, acc) in &self.sources {
            let open_max = self
                .stack
                .iter()
                .filter(|f| f.source == src)
                .map(|f| f.ns)
                .max()
                .unwrap_or(0);
            let owner_ns = self
                .interrupted
                .iter()
                .filter(|((s, tid), _)| *s == src && self.is_owner(*tid, owner_auto))
                .map(|(_, ns)| *ns)
                .sum();
            let (kind, name, irq) = match src {
                Source::Irq(n) => (
                    SourceKind::Irq,
                    self.irq_names
                        .get(&n)
                        .cloned()
                        .unwrap_or_else(|| format!("irq {n}")),
                    Some(n),
                ),
                Source::Softirq(v) => (
                    SourceKind::Softirq,
                    softirq_name(v).map_or_else(|| format!("softirq {v}"), str::to_owned),
                    None,
                ),
                Source::Vector(v) => (
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
            };
            sources.push(Stolen {
                kind,
                name,
                irq,
                task: None,
                ns: acc.ns,
                count: acc.count,
                max_ns: acc.max_ns.max(open_max),
                owner_ns,
            });
        }
        add_intruders(&mut sources, &tasks);

        let out = CpuTrace {
            cpu: self.cpu,
            start_ns: self.start,
            window_ns: end.saturating_sub(self.start),
            owner,
            owner_given: !self.owner_pids.is_empty(),
            owner_ns,
            idle_ns,
            unknown_ns: self.unknown_ns + surplus_ns,
            unseen_ns: self.unseen_ns + surplus_ns,
            tasks,
            sources,
            records: self.records,
            lost: self.lost,
            unmatched: self.unmatched,
            idle_exits_hidden: self.idle_exits_hidden,
            idle_wake_ns: self.idle_wake_ns,
            idle_edge_ns: self.idle_edge_ns,
            kernel: None,
        };

        self.start = end.max(self.start);
        self.last = self.start;
        self.tasks.clear();
        self.sources.clear();
        self.interrupted.clear();
        self.unknown_ns = 0;
        self.unseen_ns = 0;
        self.records = 0;
        self.lost = 0;
        self.unmatched = 0;
        self.idle_exits_hidden = 0;
        self.runtime_seen = false;
        self.idle_wake_ns = 0;
        self.idle_edge_ns = 0;
        if let Some(c) = self.current.as_mut() {
            // what came before this window stays in the one it was counted in
            c.before_window = c.ns;
            c.carried = true;
            c.idle_before = 0;
            let acc = self.tasks.entry(c.tid).or_default();
            acc.slices = 1;
            acc.carried = 1;
            acc.max_ns = c.ns;
        }
        // Names of tasks that are gone must not grow without bound.
        if self.comm.len() > 4096 {
            let keep = self.current.map(|c| c.tid);
            self.comm.retain(|tid, _| Some(*tid) == keep);
            self.tgid.retain(|tid, _| Some(*tid) == keep);
            self.last_tgid = (u32::MAX, u32::MAX);
        }
        out
    }
}

#[derive(Debug, Clone, Default)]
struct SessionCpu {
    cpu: u32,
    start_ns: u64,
    window_ns: u64,
    unknown_ns: u64,
    unseen_ns: u64,
    records: u64,
    lost: u64,
    unmatched: u64,
    idle_exits_hidden: u64,
    idle_wake_ns: u64,
    idle_edge_ns: u64,
    owner_given: bool,
    tasks: HashMap<u32, TaskTime>,
    sources: HashMap<(SourceKind, String, Option<u32>), Stolen>,
}

/// Totals over every window of a session.
#[derive(Debug, Clone, Default)]
pub struct TraceSession {
    cpus: Vec<SessionCpu>,
    lost: u64,
}

impl TraceSession {
    /// An empty session.
    pub fn new() -> TraceSession {
        TraceSession::default()
    }

    /// Adds one window.
    pub fn add(&mut self, w: &TraceWindow) {
        self.lost += w.lost;
        for c in &w.cpus {
            let i = if let Some(i) = self.cpus.iter().position(|s| s.cpu == c.cpu) {
                i
            } else {
                self.cpus.push(SessionCpu {
                    cpu: c.cpu,
                    start_ns: c.start_ns,
                    ..SessionCpu::default()
                });
                self.cpus.len() - 1
            };
            let s = &mut self.cpus[i];
            s.window_ns += c.window_ns;
            s.unknown_ns += c.unknown_ns;
            s.unseen_ns += c.unseen_ns;
            s.records += c.records;
            s.lost += c.lost;
            s.unmatched += c.unmatched;
            s.idle_exits_hidden += c.idle_exits_hidden;
            s.idle_wake_ns += c.idle_wake_ns;
            s.idle_edge_ns += c.idle_edge_ns;
            s.owner_given = c.owner_given;
            for t in &c.tasks {
                let e = s.tasks.entry(t.task.tid).or_insert_with(|| TaskTime {
                    task: t.task.clone(),
                    ns: 0,
                    slices: 0,
                    carried: 0,
                    max_ns: 0,
                    owner: false,
                    charged_ns: None,
                    irq_ns: 0,
                    wake_ns: 0,
                    cgroup: t.cgroup,
                });
                if let Some(c) = t.charged_ns {
                    e.charged_ns = Some(e.charged_ns.unwrap_or(0) + c);
                }
                e.irq_ns += t.irq_ns;
                e.wake_ns += t.wake_ns;
                if t.task.comm.is_some() {
                    e.task.comm.clone_from(&t.task.comm);
                }
                if t.task.pid.is_some() {
                    e.task.pid = t.task.pid;
                }
                e.ns += t.ns;
                // A slice running across the window edge is counted once.
                e.slices += t.slices - if e.slices > 0 { t.carried } else { 0 };
                e.carried = e.carried.max(t.carried);
                e.max_ns = e.max_ns.max(t.max_ns);
                e.owner |= c.owner_given && t.owner;
            }
            for src in c.sources.iter().filter(|x| x.kind != SourceKind::Task) {
                let e = s
                    .sources
                    .entry((src.kind, src.name.clone(), src.irq))
                    .or_insert_with(|| Stolen {
                        ns: 0,
                        count: 0,
                        max_ns: 0,
                        owner_ns: 0,
                        ..src.clone()
                    });
                e.ns += src.ns;
                e.count += src.count;
                e.max_ns = e.max_ns.max(src.max_ns);
                e.owner_ns += src.owner_ns;
            }
        }
    }

    /// The session so far, shaped like one long window. Without given
    /// owners the owner is the task that ran longest over the session.
    pub fn totals(&self) -> TraceWindow {
        let cpus = self
            .cpus
            .iter()
            .map(|s| {
                let mut tasks: Vec<TaskTime> = s.tasks.values().cloned().collect();
                if !s.owner_given {
                    let best = tasks
                        .iter()
                        .filter(|t| t.task.tid != 0)
                        .max_by_key(|t| (t.ns, std::cmp::Reverse(t.task.tid)))
                        .map(|t| t.task.tid);
                    for t in &mut tasks {
                        t.owner = Some(t.task.tid) == best;
                    }
                }
                tasks.sort_by(|a, b| b.ns.cmp(&a.ns).then(a.task.tid.cmp(&b.task.tid)));
                let mut sources: Vec<Stolen> = s.sources.values().cloned().collect();
                add_intruders(&mut sources, &tasks);
                CpuTrace {
                    cpu: s.cpu,
                    start_ns: s.start_ns,
                    window_ns: s.window_ns,
                    owner: tasks.iter().find(|t| t.owner).map(|t| t.task.clone()),
                    owner_given: s.owner_given,
                    owner_ns: tasks.iter().filter(|t| t.owner).map(|t| t.ns).sum(),
                    idle_ns: s.tasks.get(&0).map_or(0, |t| t.ns),
                    unknown_ns: s.unknown_ns,
                    unseen_ns: s.unseen_ns,
                    tasks,
                    sources,
                    records: s.records,
                    lost: s.lost,
                    unmatched: s.unmatched,
                    idle_exits_hidden: s.idle_exits_hidden,
                    idle_wake_ns: s.idle_wake_ns,
                    idle_edge_ns: s.idle_edge_ns,
                    kernel: None,
                }
            })
            .collect();
        TraceWindow {
            cpus,
            lost: self.lost,
        }
    }
}

/// Adds every task other than the owner and idle to `sources`, then orders
/// them all by time taken (most first), kind and name.
pub(crate) fn add_intruders(sources: &mut Vec<Stolen>, tasks: &[TaskTime]) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(time: u64, tid: u32, event: Event<'static>) -> Decoded<'static> {
        Decoded {
            time,
            cpu: 1,
            pid: if tid == 0 { 0 } else { tid + 1000 },
            tid,
            event,
        }
    }

    fn switch(time: u64, prev: (&str, u32), next: (&str, u32)) -> Decoded<'static> {
        ev(
            time,
            prev.1,
            Event::Switch {
                prev_tid: prev.1,
                prev_comm: Comm::new(prev.0.as_bytes()),
                prev_state: 1,
                next_tid: next.1,
                next_comm: Comm::new(next.0.as_bytes()),
            },
        )
    }

    fn source<'a>(c: &'a CpuTrace, name: &str) -> &'a Stolen {
        c.sources
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no source {name} in {:?}", c.sources))
    }

    fn task(c: &CpuTrace, tid: u32) -> &TaskTime {
        c.tasks.iter().find(|t| t.task.tid == tid).unwrap()
    }

    #[test]
    fn irq_nested_in_softirq_is_counted_once() {
        let mut a = CpuAccount::new(1, 0);
        for e in [
            switch(100, ("swapper/1", 0), ("busy", 10)),
            ev(1000, 10, Event::SoftirqEntry { vec: 3 }),
            ev(
                1200,
                10,
                Event::IrqEntry {
                    irq: 41,
                    name: b"virtio3-rx",
                },
            ),
            ev(1250, 10, Event::IrqExit { irq: 41 }),
            ev(1500, 10, Event::SoftirqExit { vec: 3 }),
            ev(2000, 10, Event::VectorEntry(Vector::LocalTimer)),
            ev(2010, 10, Event::VectorExit(Vector::LocalTimer)),
        ] {
            a.event(&e);
        }
        let c = a.flush(3000);
        assert_eq!(c.window_ns, 3000);
        assert_eq!(c.idle_ns, 100);
        assert_eq!(task(&c, 10).ns, 900 + 500 + 990);
        assert_eq!(
            c.owner,
            Some(TaskId {
                pid: Some(1010),
                tid: 10,
                comm: Some("busy".into())
            })
        );
        assert_eq!(c.owner_ns, 2390);
        assert_eq!(
            source(&c, "NET_RX"),
            &Stolen {
                kind: SourceKind::Softirq,
                name: "NET_RX".into(),
                irq: None,
                task: None,
                ns: 450,
                count: 1,
                max_ns: 450,
                owner_ns: 450,
            }
        );
        let irq = source(&c, "virtio3-rx");
        assert_eq!(
            (irq.kind, irq.irq, irq.ns, irq.count, irq.max_ns),
            (SourceKind::Irq, Some(41), 50, 1, 50)
        );
        let loc = source(&c, "local_timer");
        assert_eq!(
            (loc.kind, loc.ns, loc.count),
            (SourceKind::LocalTimer, 10, 1)
        );
        assert_eq!(c.sources.len(), 3, "idle and the owner are no sources");
        let total: u64 = c.tasks.iter().map(|t| t.ns).sum::<u64>() + c.stolen_ns();
        assert_eq!(total, c.window_ns);
        assert_eq!((c.lost, c.unmatched, c.unknown_ns), (0, 0, 0));
    }

    #[test]
    fn window_edge_splits_interruptions_and_slices() {
        let mut a = CpuAccount::new(1, 0);
        a.event(&switch(100, ("swapper/1", 0), ("busy", 10)));
        a.event(&ev(900, 10, Event::SoftirqEntry { vec: 1 }));
        let w1 = a.flush(1000);
        let t1 = source(&w1, "TIMER");
        assert_eq!((t1.ns, t1.count, t1.max_ns), (100, 0, 100));
        assert_eq!(task(&w1, 10).ns, 800);
        assert_eq!((task(&w1, 10).slices, task(&w1, 10).carried), (1, 0));
        a.event(&ev(1300, 10, Event::SoftirqExit { vec: 1 }));
        let w2 = a.flush(2000);
        assert_eq!(w2.start_ns, 1000);
        let t2 = source(&w2, "TIMER");
        assert_eq!((t2.ns, t2.count, t2.max_ns), (300, 1, 400));
        assert_eq!(task(&w2, 10).ns, 700);
        assert_eq!((task(&w2, 10).slices, task(&w2, 10).carried), (1, 1));
        assert_eq!(task(&w2, 10).max_ns, 800 + 700);
        assert!(
            w2.tasks.iter().all(|t| t.task.tid != 0),
            "idle did not run in window 2"
        );

        let mut s = TraceSession::new();
        s.add(&TraceWindow {
            cpus: vec![w1],
            lost: 0,
        });
        s.add(&TraceWindow {
            cpus: vec![w2],
            lost: 2,
        });
        let tot = s.totals();
        assert_eq!(tot.lost, 2);
        let c = &tot.cpus[0];
        assert_eq!(c.window_ns, 2000);
        assert_eq!(task(c, 10).ns, 1500);
        assert_eq!(task(c, 10).slices, 1, "one slice across the edge");
        let t = source(c, "TIMER");
        assert_eq!((t.ns, t.count, t.max_ns), (400, 1, 400));
        assert_eq!(c.owner.as_ref().map(|o| o.tid), Some(10));
    }

    #[test]
    fn owner_is_the_longest_runner_or_the_given_pids() {
        let events = [
            switch(0, ("swapper/1", 0), ("bench", 10)),
            switch(600, ("bench", 10), ("kworker/1:2", 20)),
            switch(700, ("kworker/1:2", 20), ("bench", 10)),
            ev(800, 10, Event::VectorEntry(Vector::Reschedule)),
            ev(805, 10, Event::VectorExit(Vector::Reschedule)),
        ];
        let mut a = CpuAccount::new(1, 0);
        for e in &events {
            a.event(e);
        }
        let c = a.flush(1000);
        assert!(!c.owner_given);
        assert_eq!(c.owner.as_ref().map(|o| o.tid), Some(10));
        assert_eq!(c.owner_ns, 895);
        let k = source(&c, "kworker/1:2");
        assert_eq!(
            (k.kind, k.ns, k.count, k.max_ns),
            (SourceKind::Task, 100, 1, 100)
        );
        assert_eq!(
            k.task,
            Some(TaskId {
                pid: Some(1020),
                tid: 20,
                comm: Some("kworker/1:2".into())
            })
        );
        assert_eq!(task(&c, 10).slices, 2);
        assert_eq!(task(&c, 10).max_ns, 600);
        let res = source(&c, "reschedule");
        assert_eq!((res.kind, res.ns, res.owner_ns), (SourceKind::Ipi, 5, 5));

        // Given by thread group id: the kworker is now the owner, bench intrudes.
        let mut a = CpuAccount::new(1, 0);
        a.set_owner(vec![1020]);
        for e in &events {
            a.event(e);
        }
        let c = a.flush(1000);
        assert!(c.owner_given);
        assert_eq!(c.owner.as_ref().map(|o| o.tid), Some(20));
        assert_eq!(c.owner_ns, 100);
        assert_eq!(source(&c, "bench").ns, 895);
        assert_eq!(source(&c, "reschedule").owner_ns, 0);
    }

    #[test]
    fn a_taken_owner_stays_while_it_runs_half_as_long_as_the_longest() {
        let mut a = CpuAccount::new(1, 0);
        // window 1: bench 600, yes 400 → bench
        a.event(&switch(0, ("swapper/1", 0), ("bench", 10)));
        a.event(&switch(600, ("bench", 10), ("yes", 30)));
        let c = a.flush(1000);
        assert_eq!(c.owner.as_ref().map(|o| o.tid), Some(10));
        // window 2: yes 600, bench 400: bench ran at least half as long
        a.event(&switch(1600, ("yes", 30), ("bench", 10)));
        let c = a.flush(2000);
        assert_eq!(c.owner.as_ref().map(|o| o.tid), Some(10), "kept");
        assert_eq!(source(&c, "yes").ns, 600);
        // window 3: bench 300, yes 700: less than half: yes is taken
        a.event(&switch(2300, ("bench", 10), ("yes", 30)));
        let c = a.flush(3000);
        assert_eq!(c.owner.as_ref().map(|o| o.tid), Some(30));
        // window 4: only yes ran, then bench alone for 500 of 1000 with
        // idle between: yes ran nothing more, bench is taken
        a.event(&switch(3000, ("yes", 30), ("swapper/1", 0)));
        a.event(&switch(3500, ("swapper/1", 0), ("bench", 10)));
        let c = a.flush(4000);
        assert_eq!(c.owner.as_ref().map(|o| o.tid), Some(10));
    }

    #[test]
    fn children_the_owner_forks_are_the_owner_too() {
        // bench (tid 10, tgid 1010) forks 11 at 200; 11 then runs 300 ns,
        // a stranger (40) 100 ns; only the stranger takes time from bench
        let mut a = CpuAccount::new(1, 0);
        a.set_owner(vec![1010]);
        a.event(&switch(100, ("swapper/1", 0), ("bench", 10)));
        a.event(&ev(
            200,
            10,
            Event::Fork {
                parent_tid: 10,
                child_tid: 11,
            },
        ));
        a.event(&switch(300, ("bench", 10), ("sleep", 11)));
        a.event(&switch(600, ("sleep", 11), ("stranger", 40)));
        a.event(&switch(700, ("stranger", 40), ("swapper/1", 0)));
        assert_eq!(a.owners(), &[1010, 11]);
        let c = a.flush(1000);
        assert_eq!(c.owner_ns, 200 + 300);
        let intruders: Vec<&str> = c
            .sources
            .iter()
            .filter(|s| s.kind == SourceKind::Task)
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(intruders, ["stranger"]);
        assert_eq!(source(&c, "stranger").ns, 100);
        // a fork by someone else adds nobody
        a.event(&ev(
            1100,
            40,
            Event::Fork {
                parent_tid: 40,
                child_tid: 41,
            },
        ));
        assert_eq!(a.owners(), &[1010, 11]);
    }

    #[test]
    fn idle_is_never_owner_nor_intruder() {
        let mut a = CpuAccount::new(1, 0);
        a.event(&switch(900, ("swapper/1", 0), ("sshd", 30)));
        a.event(&switch(950, ("sshd", 30), ("swapper/1", 0)));
        let c = a.flush(1000);
        assert_eq!(c.idle_ns, 950);
        assert_eq!(c.owner.as_ref().map(|o| o.tid), Some(30));
        assert!(c.sources.is_empty());
        assert_eq!(task(&c, 0).task.comm.as_deref(), Some("swapper/1"));

        // A quiet CPU: only idle ran, nothing interrupted it.
        let c = a.flush(2000);
        assert_eq!(c.owner, None);
        assert_eq!(c.idle_ns, 1000);
        assert!(c.sources.is_empty());
        assert_eq!(c.tasks.len(), 1);
    }

    #[test]
    fn lost_records_are_counted_and_survived() {
        let mut a = CpuAccount::new(1, 0);
        a.event(&switch(0, ("swapper/1", 0), ("busy", 10)));
        a.add_lost(5);
        // Its entry was lost: not charged, counted.
        a.event(&ev(100, 10, Event::IrqExit { irq: 9 }));
        // The switch to tid 11 was lost: the sample names the current task,
        // and since the last sign of tid 10 (at 100) who ran is not known.
        a.event(&ev(300, 11, Event::VectorEntry(Vector::LocalTimer)));
        a.event(&ev(310, 11, Event::VectorExit(Vector::LocalTimer)));
        let c = a.flush(1000);
        assert_eq!((c.lost, c.unmatched), (5, 2));
        assert_eq!(task(&c, 10).ns, 100);
        assert_eq!((c.unknown_ns, c.unseen_ns), (200, 200));
        assert_eq!(task(&c, 11).ns, 690);
        assert_eq!(source(&c, "local_timer").ns, 10);
        assert!(c.sources.iter().all(|s| s.irq != Some(9)));
        assert_eq!(a.flush(2000).lost, 0, "lost is per window");
    }

    #[test]
    fn exit_first_charges_the_handler_since_the_start() {
        let mut a = CpuAccount::new(1, 1000);
        a.event(&ev(1300, 10, Event::IrqExit { irq: 41 }));
        // A task that is exiting is sampled as tid -1: not a new task.
        let mut gone = ev(1400, 10, Event::VectorEntry(Vector::LocalTimer));
        gone.tid = u32::MAX;
        gone.pid = u32::MAX;
        a.event(&gone);
        a.event(&ev(1410, 10, Event::VectorExit(Vector::LocalTimer)));
        let c = a.flush(2000);
        let irq = source(&c, "irq 41");
        assert_eq!((irq.ns, irq.count, irq.max_ns), (300, 1, 300));
        assert_eq!(task(&c, 10).ns, 690);
        assert_eq!(task(&c, 10).task.pid, Some(1010));
        assert_eq!((c.tasks.len(), c.unmatched), (1, 0));
        assert_eq!(task(&c, 10).task.comm, None);

        // No event at all in the first window: unknown, not idle.
        let mut a = CpuAccount::new(1, 0);
        let c = a.flush(500);
        assert_eq!((c.unknown_ns, c.idle_ns, c.owner), (500, 0, None));
        // Nor when the only event is of a task already gone.
        let mut gone = ev(700, 10, Event::VectorEntry(Vector::LocalTimer));
        gone.tid = u32::MAX;
        a.event(&gone);
        let c = a.flush(1000);
        assert_eq!((c.unknown_ns, c.tasks.len()), (200, 0));
        assert_eq!(source(&c, "local_timer").ns, 300);
    }

    fn switch_in(time: u64, tid: u32, prev_tid: u32) -> Decoded<'static> {
        ev(time, tid, Event::SwitchIn { prev_tid })
    }

    /// Adds up to the window: tasks (idle included), sources, unknown.
    fn accounted(c: &CpuTrace) -> u64 {
        c.tasks.iter().map(|t| t.ns).sum::<u64>()
            + c.sources
                .iter()
                .filter(|s| s.kind != SourceKind::Task)
                .map(|s| s.ns)
                .sum::<u64>()
            + c.unknown_ns
    }

    #[test]
    fn a_switch_out_of_idle_only_its_switch_record_shows_ends_idle_there() {
        // A kernel that gives perf no samples from the idle task: the
        // tracepoint shows tasks going idle, never leaving it.
        let mut a = CpuAccount::new(1, 0);
        a.event(&switch_in(50, 20, 0));
        a.event(&switch(100, ("kworker/1:2", 20), ("swapper/1", 0)));
        a.event(&switch_in(400, 30, 0));
        a.event(&switch(450, ("sshd", 30), ("swapper/1", 0)));
        let c = a.flush(1000);
        assert_eq!(task(&c, 20).ns, 50);
        assert_eq!(task(&c, 30).ns, 50);
        assert_eq!(task(&c, 30).slices, 1);
        // idle from the start to 50, 100 to 400, 450 to the end
        assert_eq!(c.idle_ns, 50 + 300 + 550);
        assert_eq!((c.unmatched, c.unknown_ns, c.idle_exits_hidden), (0, 0, 2));
        assert_eq!(accounted(&c), 1000);
    }

    #[test]
    fn a_switch_record_after_the_tracepoint_of_the_same_switch_changes_nothing() {
        // The tracepoint fires before the switch, perf's record after it.
        let mut a = CpuAccount::new(1, 0);
        a.event(&switch(100, ("swapper/1", 0), ("sshd", 30)));
        a.event(&switch_in(101, 30, 0));
        a.event(&switch(200, ("sshd", 30), ("swapper/1", 0)));
        let c = a.flush(1000);
        assert_eq!((task(&c, 30).ns, task(&c, 30).slices), (100, 1));
        assert_eq!(c.idle_ns, 900);
        assert_eq!((c.unmatched, c.unknown_ns, c.idle_exits_hidden), (0, 0, 0));
    }

    #[test]
    fn time_around_a_switch_nobody_showed_is_unknown_not_given_to_a_task() {
        // Task 75's own events never reach perf: it is seen switched in, and
        // the next sign of life is a switch out of idle. It ran for some of
        // 100..700 and idle for the rest; which part is not known.
        let mut a = CpuAccount::new(1, 0);
        a.event(&switch(100, ("kworker/1:2", 20), ("agent", 75)));
        a.event(&switch_in(700, 20, 0));
        a.event(&switch(710, ("kworker/1:2", 20), ("swapper/1", 0)));
        let c = a.flush(1000);
        assert_eq!(task(&c, 75).ns, 0);
        assert_eq!(task(&c, 20).ns, 110);
        assert_eq!(c.idle_ns, 290);
        assert_eq!((c.unknown_ns, c.unseen_ns, c.unmatched), (600, 600, 1));
        assert_eq!(accounted(&c), 1000);

        // The other way: idle, then a record of a switch from a task never
        // seen switched in.
        a.event(&switch_in(1500, 20, 75));
        a.event(&switch(1600, ("kworker/1:2", 20), ("swapper/1", 0)));
        let c = a.flush(2000);
        assert_eq!((c.unknown_ns, c.unseen_ns, c.unmatched), (500, 500, 1));
        assert_eq!((task(&c, 20).ns, c.idle_ns), (100, 400));
        assert_eq!(accounted(&c), 1000);

        // A task seen running, then seen switched in again from idle: it
        // went idle unseen in between, when is not known.
        let mut a = CpuAccount::new(1, 0);
        a.event(&switch(100, ("swapper/1", 0), ("kworker/1:1", 23)));
        a.event(&ev(150, 23, Event::VectorEntry(Vector::CallFunctionSingle)));
        a.event(&ev(160, 23, Event::VectorExit(Vector::CallFunctionSingle)));
        a.event(&switch_in(800, 23, 0));
        a.event(&switch(810, ("kworker/1:1", 23), ("swapper/1", 0)));
        let c = a.flush(1000);
        assert_eq!((task(&c, 23).ns, task(&c, 23).slices), (60, 2));
        assert_eq!(source(&c, "call_function_single").ns, 10);
        assert_eq!((c.unknown_ns, c.unseen_ns, c.unmatched), (640, 640, 1));
        assert_eq!(c.idle_ns, 100 + 190);
        assert_eq!(accounted(&c), 1000);
    }

    fn runtime(time: u64, tid: u32, ns: u64) -> Decoded<'static> {
        ev(time, tid, Event::Runtime { tid, ns })
    }

    #[test]
    fn time_the_scheduler_never_charged_a_task_is_unseen_where_the_tick_runs() {
        const MS: u64 = 1_000_000;
        // tid 75 switches in at 0, is charged 11 ms, and its switch out
        // was never written: the trace would hold it current for 800 ms
        let run = |tick_stops: bool| {
            let mut a = CpuAccount::new(1, 0);
            a.set_tick_stops(tick_stops);
            a.event(&switch(0, ("swapper/1", 0), ("tokio-rt-worker", 75)));
            a.event(&runtime(11 * MS, 75, 11 * MS));
            a.event(&switch(800 * MS, ("tokio-rt-worker", 75), ("swapper/1", 0)));
            a.flush(1000 * MS)
        };
        let c = run(false);
        let t = task(&c, 75);
        assert_eq!(t.ns, 11 * MS + UNCHARGED_NS);
        assert_eq!(c.unseen_ns, 800 * MS - t.ns);
        assert_eq!(accounted(&c), 1000 * MS);
        // nohz_full: the tick may stop under a running task; the trace stands
        let c = run(true);
        assert_eq!((task(&c, 75).ns, c.unseen_ns), (800 * MS, 0));
    }

    #[test]
    fn a_wake_up_out_of_idle_the_kernel_charges_moves_from_idle_to_the_woken_task() {
        // The timer wakes tid 30 in idle (no record), the switch-in record
        // comes at 400; the scheduler charges 30 from its wake-up at 388:
        // its records add 12 more than its slice (400..450).
        let mut a = CpuAccount::new(1, 0);
        a.event(&switch(0, ("agent", 30), ("swapper/1", 0)));
        a.event(&switch_in(400, 30, 0));
        a.event(&ev(420, 30, Event::VectorEntry(Vector::LocalTimer)));
        a.event(&ev(425, 30, Event::VectorExit(Vector::LocalTimer)));
        a.event(&runtime(449, 30, 62));
        a.event(&switch(450, ("agent", 30), ("swapper/1", 0)));
        let c = a.flush(1000);
        let t = task(&c, 30);
        assert_eq!(
            (t.ns, t.wake_ns, t.irq_ns, t.charged_ns),
            (50 - 5 + 12, 12, 5, Some(62))
        );
        assert_eq!(c.idle_ns, 400 - 12 + 550);
        assert_eq!(c.idle_wake_ns, 12);
        assert_eq!(c.idle_edge_ns, 550, "the idle run at the window's end");
        assert_eq!(t.ns + t.irq_ns, t.charged_ns.unwrap());
        assert_eq!(accounted(&c), 1000);
        assert_eq!(task(&c, 0).charged_ns, None, "idle is never charged");
    }

    #[test]
    fn a_charge_no_larger_than_the_slice_moves_nothing_and_never_more_than_idle_ran() {
        let mut a = CpuAccount::new(1, 0);
        a.event(&switch(0, ("agent", 30), ("swapper/1", 0)));
        a.event(&switch_in(10, 30, 0));
        // charged 500 for a 40 ns slice after 10 ns of idle: 10 at most
        a.event(&runtime(49, 30, 500));
        a.event(&switch(50, ("agent", 30), ("swapper/1", 0)));
        // preempted by a kworker (not out of idle): its own charge
        // beyond its slice stays where the records put the time
        a.event(&switch_in(300, 30, 0));
        a.event(&runtime(330, 30, 30));
        a.event(&switch(340, ("agent", 30), ("kworker/1:2", 20)));
        a.event(&runtime(390, 20, 80));
        a.event(&switch(400, ("kworker/1:2", 20), ("swapper/1", 0)));
        let c = a.flush(1000);
        assert_eq!(task(&c, 30).wake_ns, 10);
        assert_eq!(task(&c, 30).ns, 40 + 10 + 40);
        assert_eq!(task(&c, 30).charged_ns, Some(530));
        assert_eq!((task(&c, 20).ns, task(&c, 20).wake_ns), (60, 0));
        assert_eq!(task(&c, 20).charged_ns, Some(80));
        assert_eq!(c.idle_wake_ns, 10);
        assert_eq!(accounted(&c), 1000);

        // A window without run time records: no charge is known.
        let c = a.flush(2000);
        assert!(c.tasks.iter().all(|t| t.charged_ns.is_none()));
        assert_eq!(c.idle_edge_ns, 1000);
    }

    #[test]
    fn a_slice_across_the_window_edge_moves_nothing_from_the_window_before() {
        let mut a = CpuAccount::new(1, 0);
        a.event(&switch(100, ("agent", 30), ("swapper/1", 0)));
        a.event(&switch_in(900, 30, 0));
        let w1 = a.flush(1000);
        assert_eq!(w1.idle_ns, 800);
        a.event(&runtime(1049, 30, 200));
        a.event(&switch(1050, ("agent", 30), ("swapper/1", 0)));
        let w2 = a.flush(2000);
        assert_eq!((task(&w2, 30).ns, task(&w2, 30).wake_ns), (50, 0));
        assert_eq!(task(&w2, 30).charged_ns, Some(200));
        assert_eq!(w2.idle_ns, 950);
        assert_eq!(accounted(&w2), 1000);
        let mut s = TraceSession::new();
        s.add(&TraceWindow {
            cpus: vec![w1],
            lost: 0,
        });
        s.add(&TraceWindow {
            cpus: vec![w2],
            lost: 0,
        });
        let tot = s.totals();
        assert_eq!(task(&tot.cpus[0], 30).charged_ns, Some(200));
        assert_eq!(
            tot.cpus[0].idle_edge_ns, 950,
            "the idle run at the end of window 2"
        );
    }
}
