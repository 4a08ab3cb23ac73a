//! Who ran where, sampled from /proc: each thread's run time
//! (`/proc/PID/task/TID/schedstat`, ns) and the CPU it ran on last
//! (`/proc/PID/task/TID/stat`, field 39), read with the `procfs` crate.
//!
//! This is what is left when tracepoints cannot be had: a thread whose run
//! time grew between two readings is credited on the CPU it was last on, so
//! a thread that moved between CPUs in the window is credited to one of
//! them. Reading these files costs the CPUs read nothing (no IPI): the
//! kernel hands out the figures each task keeps.

use std::path::{Path, PathBuf};

use foldhash::HashMap;

/// `PF_NO_SETAFFINITY` in /proc/PID/stat's flags: a kernel thread bound to
/// its CPU, which `taskset` cannot move.
pub const PF_NO_SETAFFINITY: u32 = 0x0400_0000;

/// One thread that ran between two readings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskRan {
    /// Thread group (process) id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// The process's parent.
    pub ppid: u32,
    /// Command name.
    pub comm: String,
    /// The CPU it ran on last (`None`: the kernel did not say).
    pub cpu: Option<u32>,
    /// `PF_*` flags.
    pub flags: u32,
    /// Run time gained since the last reading, ns.
    pub ns: u64,
    /// Times it was switched in since the last reading.
    pub slices: u64,
}

impl TaskRan {
    /// Whether `taskset` cannot move it (a per-CPU kernel thread).
    pub fn bound(&self) -> bool {
        self.flags & PF_NO_SETAFFINITY != 0
    }
}

/// Every thread's run time at the last reading, to tell what grew.
pub struct TaskClock {
    proc: PathBuf,
    /// tid → (run time ns, slices).
    last: HashMap<u32, (u64, u64)>,
    read_once: bool,
}

impl TaskClock {
    /// Reads under `proc` (`/proc`).
    pub fn new(proc: &Path) -> Self {
        TaskClock {
            proc: proc.to_path_buf(),
            last: HashMap::default(),
            read_once: false,
        }
    }

    /// Reads every thread's run time and returns those that ran since the
    /// last call (none on the first, which only sets the start). A thread
    /// born since then is credited its whole run time. `stat` is read only
    /// for threads that ran: most threads sleep, and their one small file
    /// is all a reading costs.
    pub fn read(&mut self) -> Vec<TaskRan> {
        let mut now: HashMap<u32, (u64, u64)> = HashMap::default();
        now.reserve(self.last.len());
        let mut ran = Vec::new();
        let Ok(procs) = procfs::process::all_processes_with_root(&self.proc) else {
            return ran;
        };
        for p in procs.flatten() {
            let Ok(tasks) = p.tasks() else { continue };
            for t in tasks.flatten() {
                let Ok(s) = t.schedstat() else { continue };
                let tid = t.tid as u32;
                let cur = (s.sum_exec_runtime, s.pcount);
                now.insert(tid, cur);
                if !self.read_once {
                    continue;
                }
                let before = self.last.get(&tid).copied().unwrap_or((0, 0));
                let ns = cur.0.saturating_sub(before.0);
                if ns == 0 {
                    continue;
                }
                // gone between its two files: its time is in no window
                let Ok(st) = t.stat() else { continue };
                ran.push(TaskRan {
                    pid: t.pid as u32,
                    tid,
                    ppid: st.ppid.max(0) as u32,
                    comm: st.comm,
                    cpu: st.processor.and_then(|c| u32::try_from(c).ok()),
                    flags: st.flags,
                    ns,
                    slices: cur.1.saturating_sub(before.1),
                });
            }
        }
        self.last = now;
        self.read_once = true;
        ran
    }
}

/// Whether a thread or process still exists under `proc`.
pub fn alive(proc: &Path, tid: u32) -> bool {
    proc.join(tid.to_string()).join("stat").exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A /proc/PID/stat line of this kernel's layout (52 fields), with the
    /// fields this reader uses set.
    fn stat_line(pid: u32, comm: &str, ppid: u32, flags: u32, cpu: u32) -> String {
        let mut f: Vec<String> = vec!["0".into(); 52];
        f[0] = pid.to_string();
        f[1] = format!("({comm})");
        f[2] = "R".into();
        f[3] = ppid.to_string();
        f[8] = flags.to_string();
        f[38] = cpu.to_string();
        f.join(" ") + "\n"
    }

    fn task(root: &Path, pid: u32, tid: u32, comm: &str, cpu: u32, ns: u64, slices: u64) {
        let d = root.join(format!("{pid}/task/{tid}"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("stat"), stat_line(tid, comm, 1, 0x0040_0040, cpu)).unwrap();
        std::fs::write(d.join("schedstat"), format!("{ns} 5000 {slices}\n")).unwrap();
        std::fs::write(
            root.join(format!("{pid}/stat")),
            stat_line(pid, comm, 1, 0, cpu),
        )
        .unwrap();
    }

    #[test]
    fn credits_what_grew_to_the_last_cpu_and_a_new_thread_its_whole_time() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        task(root, 100, 100, "yes", 1, 1_000_000, 10);
        task(root, 200, 200, "sleeper", 0, 7_000, 3);
        let mut c = TaskClock::new(root);
        assert!(c.read().is_empty(), "the first reading only sets the start");
        task(root, 100, 100, "yes", 1, 251_000_000, 12);
        task(root, 100, 101, "yes-worker", 0, 4_000, 1);
        let mut ran = c.read();
        ran.sort_by_key(|t| t.tid);
        assert_eq!(ran.len(), 2, "the sleeper did not run: {ran:?}");
        assert_eq!(
            (ran[0].pid, ran[0].tid, ran[0].comm.as_str(), ran[0].cpu),
            (100, 100, "yes", Some(1))
        );
        assert_eq!((ran[0].ns, ran[0].slices), (250_000_000, 2));
        assert_eq!((ran[1].tid, ran[1].ns, ran[1].cpu), (101, 4_000, Some(0)));
        assert!(!ran[0].bound());
        assert!(c.read().is_empty(), "nothing grew since");
    }

    #[test]
    fn a_thread_that_left_is_forgotten_and_a_missing_proc_reads_nothing() {
        let dir = tempfile::tempdir().unwrap();
        task(dir.path(), 100, 100, "yes", 1, 1_000, 1);
        let mut c = TaskClock::new(dir.path());
        c.read();
        std::fs::remove_dir_all(dir.path().join("100")).unwrap();
        assert!(c.read().is_empty());
        assert!(!alive(dir.path(), 100));
        // a tid reused by a new thread starts from zero, not from the old one
        task(dir.path(), 100, 100, "new", 1, 500, 1);
        assert_eq!(c.read()[0].ns, 500);
        let mut none = TaskClock::new(&dir.path().join("absent"));
        assert!(none.read().is_empty());
        assert!(none.read().is_empty());
    }

    #[test]
    fn per_cpu_kernel_threads_are_told_by_pf_no_setaffinity() {
        let t = TaskRan {
            pid: 15,
            tid: 15,
            ppid: 2,
            comm: "ksoftirqd/1".into(),
            cpu: Some(1),
            flags: 0x0420_8040,
            ns: 1,
            slices: 1,
        };
        assert!(t.bound());
    }
}
