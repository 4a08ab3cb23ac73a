//! Who ran on the watched CPUs when tracepoints cannot be had: each
//! interval, the tasks whose run time grew ([`crate::os::tasks`]),
//! credited to a watched CPU whose counting ring saw them leave it in the
//! interval, else to the CPU they ran on last. The figures are marked
//! sampled: a task
//! that moved between CPUs in the window is credited to one of them (and
//! where that makes a CPU's tasks add up to more than the window, the
//! others' times are scaled down to it), and interrupt time is not known.

use std::path::{Path, PathBuf};

use super::TraceSource;
use crate::base::Unavailable;
use crate::noise::traced::{Intruder, Traced, TracedCpu, TracedTask};
use crate::os::tasks::{TaskClock, TaskRan};

/// One line for the who-ran status: how the sampled figures are made.
pub const HOW: &str = "sampled from /proc (each task's run time, on the watched CPU it was seen \
                       leaving, else the CPU it ran on last; not exact: a task that moved is \
                       credited to one CPU, interrupts unknown)";

/// The tasks that ran on each CPU, from /proc.
pub struct SampledTrace {
    proc: PathBuf,
    clock: TaskClock,
    cpus: Vec<u32>,
    owners: Vec<u32>,
    /// Processes found not to descend from an owner.
    strangers: Vec<u32>,
    /// When the last reading was taken (`CLOCK_MONOTONIC`, ns).
    last_ns: Option<u64>,
    /// Per watched CPU, the tasks its counting ring saw leave it in the
    /// window about to be drained.
    leaving: Vec<(u32, Vec<u32>)>,
}

impl SampledTrace {
    /// Samples `cpus` from `proc` (`/proc`); `owners`: the pids that own
    /// them (empty: the task that ran longest in each window).
    pub fn new(proc: &Path, cpus: &[u32], owners: Vec<u32>) -> Self {
        let mut t = SampledTrace {
            proc: proc.to_path_buf(),
            clock: TaskClock::new(proc),
            cpus: Vec::new(),
            owners,
            strangers: Vec::new(),
            last_ns: None,
            leaving: Vec::new(),
        };
        let _ = t.retarget(cpus);
        t
    }

    fn is_owner(&mut self, t: &TaskRan) -> bool {
        if self.owners.is_empty() {
            return false;
        }
        if self.owners.contains(&t.pid) || self.owners.contains(&t.tid) {
            return true;
        }
        if self.strangers.contains(&t.pid) {
            return false;
        }
        let mine = self
            .owners
            .clone()
            .iter()
            .any(|&o| o != 0 && descends_from(&self.proc, t.ppid, o));
        if mine {
            self.owners.push(t.pid);
        } else {
            if self.strangers.len() > 4096 {
                self.strangers.clear();
            }
            self.strangers.push(t.pid);
        }
        mine
    }
}

/// Whether `pid` is `root` or descends from it, by the parent links of
/// /proc/PID/stat (a process already gone cannot be told).
pub fn descends_from(proc: &Path, pid: u32, root: u32) -> bool {
    let mut p = pid;
    for _ in 0..64 {
        if p == root {
            return true;
        }
        if p <= 1 {
            return false;
        }
        let Ok(s) = procfs::process::Process::new_with_root(proc.join(p.to_string()))
            .and_then(|x| x.stat())
        else {
            return false;
        };
        p = s.ppid.max(0) as u32;
    }
    false
}

fn task_of(t: &TaskRan) -> TracedTask {
    TracedTask {
        comm: t.comm.clone(),
        pid: t.pid,
        tid: t.tid,
        per_cpu_kthread: t.bound(),
        exited: false,
        cgroup: None,
    }
}

/// One window's tasks in the rules' terms, per CPU of `cpus`: the owner is
/// a task `owner` says is one, or (none given) the one that ran longest.
/// `pinned` tells a task that may run on its CPU only, whose time is all
/// that CPU's.
pub fn per_cpu(
    ran: &[TaskRan],
    cpus: &[u32],
    window_ns: u64,
    given: bool,
    mut owner: impl FnMut(&TaskRan) -> bool,
    pinned: impl Fn(&TaskRan) -> bool,
) -> Vec<TracedCpu> {
    cpus.iter()
        .map(|&cpu| {
            let mut here: Vec<(&TaskRan, bool)> = ran
                .iter()
                .filter(|t| t.cpu == Some(cpu))
                .map(|t| (t, given && owner(t)))
                .collect();
            here.sort_by(|a, b| b.0.ns.cmp(&a.0.ns).then(a.0.tid.cmp(&b.0.tid)));
            if !given && let Some(first) = here.first_mut() {
                first.1 = true;
            }
            // threads of one process are one intruder, as `taskset -ap` moves them
            let mut intruders: Vec<Intruder> = Vec::new();
            for (t, _) in here.iter().filter(|(_, o)| !o) {
                match intruders.iter_mut().find(|i| i.task.pid == t.pid) {
                    Some(i) => {
                        i.ns += t.ns;
                        i.slices += t.slices;
                    }
                    None => intruders.push(Intruder {
                        task: task_of(t),
                        ns: t.ns,
                        // the sampled time is the scheduler's charge itself
                        charged_ns: None,
                        slices: t.slices,
                    }),
                }
            }
            intruders.sort_by_key(|i| std::cmp::Reverse(i.ns));
            // tasks that moved here late bring time they ran elsewhere: where
            // the CPU's tasks add up to more than the window, those not
            // pinned to it are scaled down to what the pinned ones leave
            let total: u64 = here.iter().map(|(t, _)| t.ns).sum();
            if window_ns > 0 && total > window_ns {
                let fixed: Vec<u32> = here
                    .iter()
                    .filter(|(t, _)| pinned(t))
                    .map(|(t, _)| t.tid)
                    .collect();
                let exact: u64 = here
                    .iter()
                    .filter(|(t, _)| fixed.contains(&t.tid))
                    .map(|(t, _)| t.ns)
                    .sum();
                let room = u128::from(window_ns.saturating_sub(exact));
                let moved = u128::from(total - exact).max(1);
                for i in &mut intruders {
                    let (mut keep, mut scale) = (0u64, 0u64);
                    for (t, _) in here.iter().filter(|(t, _)| t.pid == i.task.pid) {
                        if fixed.contains(&t.tid) {
                            keep += t.ns;
                        } else {
                            scale += t.ns;
                        }
                    }
                    i.ns = keep + (u128::from(scale) * room / moved) as u64;
                }
                intruders.sort_by_key(|i| std::cmp::Reverse(i.ns));
            }
            TracedCpu {
                cpu,
                window_ns,
                owner: here.iter().find(|(_, o)| *o).map(|(t, _)| task_of(t)),
                owner_ns: here.iter().filter(|(_, o)| *o).map(|(t, _)| t.ns).sum(),
                owner_irq_ns: 0,
                intruders,
                stolen: Vec::new(),
                // /proc keeps no record of idle
                idle_ns: 0,
                unknown_ns: 0,
                idle_edge_ns: 0,
                sampled: true,
                owner_given: given,
                owner_was: None,
                kernel: None,
            }
        })
        .collect()
}

/// Credits a task to a watched CPU its counting ring saw it leave in the
/// window, where /proc says it ran last on a CPU the rings did not see it
/// on: a task that ran on a watched CPU and moved on is that CPU's
/// intruder, not the other CPU's. Of several such CPUs, the first named.
pub fn credit_where_seen(ran: &mut [TaskRan], leaving: &[(u32, Vec<u32>)]) {
    for t in ran.iter_mut() {
        let seen = |cpu: u32| {
            leaving
                .iter()
                .any(|(c, tids)| *c == cpu && tids.contains(&t.tid))
        };
        if t.cpu.is_some_and(seen) {
            continue;
        }
        if let Some((cpu, _)) = leaving.iter().find(|(_, tids)| tids.contains(&t.tid)) {
            t.cpu = Some(*cpu);
        }
    }
}

impl TraceSource for SampledTrace {
    fn drain(&mut self) -> Traced {
        if self.cpus.is_empty() {
            // nothing watched: /proc is not read at all
            return Traced::default();
        }
        let mut ran = self.clock.read();
        credit_where_seen(&mut ran, &std::mem::take(&mut self.leaving));
        let now = crate::os::sys::monotonic_ns();
        let window_ns = self.last_ns.map_or(0, |l| now.saturating_sub(l));
        self.last_ns = Some(now);
        let given = !self.owners.is_empty();
        let mut owner_tids = Vec::new();
        for t in &ran {
            if self.is_owner(t) {
                owner_tids.push(t.tid);
            }
        }
        Traced {
            cpus: per_cpu(
                &ran,
                &self.cpus,
                window_ns,
                given,
                |t| owner_tids.contains(&t.tid),
                |t| t.cpu.and_then(|c| crate::os::sys::only_on(t.tid, c)) == Some(true),
            ),
            ..Traced::default()
        }
    }

    fn retarget(&mut self, cpus: &[u32]) -> Result<(), Unavailable> {
        if self.cpus.is_empty() && !cpus.is_empty() {
            // the start of the first window: what ran before is no one's
            self.clock = TaskClock::new(&self.proc);
            self.clock.read();
            self.last_ns = Some(crate::os::sys::monotonic_ns());
        }
        self.cpus = cpus.to_vec();
        Ok(())
    }

    fn cpus(&self) -> Vec<u32> {
        self.cpus.clone()
    }

    fn owners(&self) -> Vec<u32> {
        self.owners.clone()
    }

    fn set_owners(&mut self, pids: Vec<u32>) {
        self.owners = pids;
        self.strangers.clear();
    }

    fn sampled(&self) -> bool {
        true
    }

    fn seen_leaving(&mut self, named: Vec<(u32, Vec<u32>)>) {
        self.leaving = named;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(pid: u32, tid: u32, comm: &str, cpu: u32, ms: u64) -> TaskRan {
        TaskRan {
            pid,
            tid,
            ppid: 1,
            comm: comm.into(),
            cpu: Some(cpu),
            flags: 0,
            ns: ms * 1_000_000,
            slices: 2,
        }
    }

    #[test]
    fn the_longest_runner_owns_a_cpu_when_no_owner_is_given() {
        let r = [
            ran(10, 10, "bench", 1, 900),
            ran(20, 20, "yes", 1, 80),
            ran(20, 21, "yes", 1, 15),
            ran(30, 30, "elsewhere", 0, 500),
        ];
        let c = per_cpu(&r, &[1], 1_000_000_000, false, |_| false, |_| false);
        assert_eq!(c.len(), 1);
        let c = &c[0];
        assert!(c.sampled && !c.owner_given);
        assert_eq!(c.owner.as_ref().map(|o| o.pid), Some(10));
        assert_eq!(
            c.intruders.len(),
            1,
            "two threads of one process: one intruder"
        );
        assert_eq!(
            (
                c.intruders[0].task.pid,
                c.intruders[0].ns,
                c.intruders[0].slices
            ),
            (20, 95_000_000, 4)
        );
        assert!(c.stolen.is_empty(), "no interrupt time is known from /proc");
    }

    #[test]
    fn time_that_adds_up_to_more_than_the_window_is_scaled_to_it() {
        // two tasks that each ran 600 ms, last seen on CPU 1, in 1 s
        let r = [ran(10, 10, "bench", 1, 600), ran(20, 20, "make", 1, 600)];
        let c = per_cpu(&r, &[1], 1_000_000_000, true, |t| t.pid == 10, |_| false).remove(0);
        assert_eq!(c.intruders[0].ns, 500_000_000);
        assert_eq!(c.pct(c.intruder_ns()), Some(50.0));
        // a loop pinned to CPU 1 ran there all it ran: a compiler that
        // came late gets what is left of the window
        let r = [ran(20, 20, "loop", 1, 700), ran(30, 30, "rustc", 1, 900)];
        let c = per_cpu(&r, &[1], 1_000_000_000, true, |_| false, |t| t.pid == 20).remove(0);
        let ns: Vec<(u32, u64)> = c.intruders.iter().map(|i| (i.task.pid, i.ns)).collect();
        assert_eq!(ns, vec![(20, 700_000_000), (30, 300_000_000)]);
    }

    #[test]
    fn a_task_seen_leaving_a_watched_cpu_is_credited_there_wherever_it_ran_last() {
        // `make` ran on CPU 1, left it (its ring named it) and ran last on
        // CPU 0; `yes` left CPU 1 and is still last there; `cc` was never
        // seen on a watched CPU
        let mut r = [
            ran(20, 21, "make", 0, 300),
            ran(30, 30, "yes", 1, 200),
            ran(40, 40, "cc", 0, 500),
        ];
        credit_where_seen(&mut r, &[(1, vec![21, 30]), (2, vec![30])]);
        let cpus: Vec<Option<u32>> = r.iter().map(|t| t.cpu).collect();
        assert_eq!(cpus, vec![Some(1), Some(1), Some(0)]);
        let c = per_cpu(&r, &[1], 1_000_000_000, false, |_| false, |_| false).remove(0);
        assert_eq!(c.owner.as_ref().map(|o| o.pid), Some(20));
        assert_eq!(c.intruders[0].task.comm, "yes");
        // nothing seen: every task stays where /proc put it
        let mut r2 = r.clone();
        r2[0].cpu = Some(0);
        credit_where_seen(&mut r2, &[]);
        assert_eq!(r2[0].cpu, Some(0));
    }

    #[test]
    fn a_given_owner_leaves_every_other_task_an_intruder_however_long_it_ran() {
        let r = [ran(10, 10, "sleep", 1, 1), ran(20, 20, "yes", 1, 990)];
        let c = per_cpu(&r, &[1, 2], 1_000_000_000, true, |t| t.pid == 10, |_| false);
        assert_eq!(c[0].owner.as_ref().map(|o| o.comm.as_str()), Some("sleep"));
        assert_eq!(c[0].intruders[0].task.comm, "yes");
        assert_eq!(c[0].intruders[0].ns, 990_000_000);
        assert_eq!(c[0].pct(c[0].intruder_ns()), Some(99.0));
        assert!(c[1].owner.is_none() && c[1].intruders.is_empty());
    }
}
