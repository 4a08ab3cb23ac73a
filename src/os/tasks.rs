//! Who ran where, sampled from /proc: each thread's run time
//! (`/proc/PID/task/TID/schedstat`, ns) and the CPU it ran on last
//! (`/proc/PID/task/TID/stat`, field 39), parsed with the `procfs` crate.
//!
//! This is what is left when tracepoints cannot be had: a thread whose run
//! time grew between two readings is credited on the CPU it was last on, so
//! a thread that moved between CPUs in the window is credited to one of
//! them. Reading these files costs the CPUs read nothing (no IPI): the
//! kernel hands out the figures each task keeps.

use std::fs::File;
use std::os::unix::fs::{FileExt as _, MetadataExt as _};
use std::path::{Path, PathBuf};

use foldhash::HashMap;
use procfs::FromRead as _;
use procfs::process::{Schedstat, Stat};

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

/// Most descriptors a [`TaskClock`] keeps open, whatever the limit: past
/// it, threads are read by path as before.
const KEEP_MAX: usize = 16_384;

/// How far a thread's run time may grow past the wall time between two
/// readings: schedstat's figure is brought up to date at the scheduler's
/// tick, so it can lag by one tick, and on a `nohz_full` CPU running one
/// task by the residual tick's second.
const STALE_MAX_NS: u64 = 1_100_000_000;

/// Bytes read of a thread's `stat` (52 fields, a 16-byte comm: under 700).
const STAT_CAP: usize = 2048;

/// One thread between readings.
struct Thread {
    /// Its `schedstat`, kept open (`None`: over the budget, read by path).
    schedstat: Option<File>,
    /// Its `stat`, opened the first time it ran and kept.
    stat: Option<File>,
    /// Run time ns and slices at the last reading (`None`: not read yet).
    last: Option<(u64, u64)>,
}

/// One process: its threads, and its task folder kept open to tell when
/// they change.
struct Process {
    /// `/proc/PID/task`, kept open: its link count is two plus the
    /// process's threads, so one `fstat` tells a thread was born or died.
    dir: Option<File>,
    nlink: u64,
    tids: Vec<u32>,
    /// The reading that last found it in /proc.
    seen: u64,
}

/// Every thread's run time at the last reading, to tell what grew.
///
/// The threads' `schedstat` and `stat` files are kept open and read again
/// with `pread`, and a process's threads are listed again only when its
/// task folder's link count changes or one of its threads is gone. That
/// is hand-written rather than the `procfs` crate's walk (whose parsers it
/// still uses) for a measured reason: on a 2-vCPU VM with Linux 6.18, 80
/// threads in 66 processes, one open, read and close by path costs 3.5 µs a
/// thread and listing every task folder 260 µs, where a `pread` of a kept
/// file costs 0.8 µs and an `fstat` of each kept folder 25 µs in all. A
/// reading (`benches/tasks.rs`) took 826 µs for 101 threads with the
/// crate's walk and takes 57 µs for 83 this way.
pub struct TaskClock {
    proc: PathBuf,
    threads: HashMap<u32, Thread>,
    procs: HashMap<u32, Process>,
    /// Descriptors kept open, and the most that may be.
    kept: usize,
    keep_max: usize,
    readings: u64,
    /// `CLOCK_MONOTONIC` at the last reading, and the time since the one
    /// before.
    at: u64,
    elapsed: u64,
    /// The last pid handed out, at the last listing (`/proc/loadavg`).
    last_pid: Option<u32>,
    /// Whether `/proc/loadavg` speaks of the pids under `proc`: it gives
    /// the reader's pid namespace, which a host's /proc mounted in a
    /// container need not be.
    same_pids: bool,
    buf: Vec<u8>,
}

impl TaskClock {
    /// Reads under `proc` (`/proc`), keeping at most a quarter of the
    /// open-file limit's descriptors open between readings: the perf
    /// events, the sysfs files and a second clock (the dashboard's browsed
    /// CPU) need the rest.
    pub fn new(proc: &Path) -> Self {
        Self::keeping(
            proc,
            crate::os::sys::fd_limit()
                .map_or(0, |n| n / 4)
                .min(KEEP_MAX),
        )
    }

    /// Reads under `proc`, keeping at most `keep_max` descriptors open.
    pub fn keeping(proc: &Path, keep_max: usize) -> Self {
        TaskClock {
            proc: proc.to_path_buf(),
            threads: HashMap::default(),
            procs: HashMap::default(),
            kept: 0,
            keep_max,
            readings: 0,
            at: 0,
            elapsed: 0,
            last_pid: None,
            same_pids: same_pid_namespace(proc),
            buf: Vec::with_capacity(STAT_CAP),
        }
    }

    /// Descriptors held open between readings.
    pub fn kept(&self) -> usize {
        self.kept
    }

    /// Reads every thread's run time and returns those that ran since the
    /// last call (none on the first, which only sets the start). A thread
    /// born since then is credited its whole run time. `stat` is read only
    /// for threads that ran: most threads sleep, and their one small file
    /// is all a reading costs.
    pub fn read(&mut self) -> Vec<TaskRan> {
        self.readings += 1;
        let now = crate::os::sys::monotonic_ns();
        self.elapsed = now.saturating_sub(self.at);
        self.at = now;
        let mut ran = Vec::new();
        // no pid handed out since the last reading: no process or thread
        // was born, and those that died fail their reads
        let last_pid = last_pid(&self.proc).filter(|_| self.same_pids);
        if self.readings > 1 && last_pid.is_some() && last_pid == self.last_pid {
            let pids: Vec<u32> = self.procs.keys().copied().collect();
            for pid in pids {
                self.read_known(pid, &mut ran);
            }
            self.drop_empty();
            return ran;
        }
        self.last_pid = last_pid;
        let Ok(dir) = std::fs::read_dir(&self.proc) else {
            self.forget_all();
            return ran;
        };
        let pids: Vec<u32> = dir
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse().ok())
            .collect();
        for pid in pids {
            self.read_process(pid, &mut ran);
        }
        // processes that left: their threads' time after the last reading
        // is in no window
        let now = self.readings;
        let gone: Vec<u32> = self
            .procs
            .iter()
            .filter(|(_, p)| p.seen != now)
            .map(|(&pid, _)| pid)
            .collect();
        for pid in gone {
            self.drop_process(pid);
        }
        ran
    }

    fn read_process(&mut self, pid: u32, ran: &mut Vec<TaskRan>) {
        let now = self.readings;
        let p = self.procs.entry(pid).or_insert(Process {
            dir: None,
            nlink: 0,
            tids: Vec::new(),
            seen: now,
        });
        p.seen = now;
        // new here, or its threads changed since the last listing
        let changed = p.dir.as_ref().is_none_or(|d| nlink(d) != Some(p.nlink));
        if changed {
            self.list_threads(pid);
        }
        if self.read_threads(pid, ran) && !changed {
            // a thread died: one may have been born in its place, with the
            // same count of links
            let before = self
                .procs
                .get(&pid)
                .map(|p| p.tids.clone())
                .unwrap_or_default();
            self.list_threads(pid);
            let born: Vec<u32> = self
                .procs
                .get(&pid)
                .map(|p| {
                    p.tids
                        .iter()
                        .copied()
                        .filter(|t| !before.contains(t))
                        .collect()
                })
                .unwrap_or_default();
            for tid in born {
                self.read_thread(pid, tid, ran);
            }
        }
    }

    /// Reads the threads of `pid` known from the last listing; whether
    /// one is gone.
    fn read_threads(&mut self, pid: u32, ran: &mut Vec<TaskRan>) -> bool {
        let Some(tids) = self
            .procs
            .get_mut(&pid)
            .map(|p| std::mem::take(&mut p.tids))
        else {
            return false;
        };
        let mut lost_one = false;
        for &tid in &tids {
            lost_one |= !self.read_thread(pid, tid, ran);
        }
        if let Some(p) = self.procs.get_mut(&pid) {
            p.tids = tids;
        }
        lost_one
    }

    /// Reads a process's known threads when none can have been born, and
    /// forgets those gone.
    fn read_known(&mut self, pid: u32, ran: &mut Vec<TaskRan>) {
        if self.read_threads(pid, ran)
            && let Some(p) = self.procs.get_mut(&pid)
        {
            p.tids.retain(|t| self.threads.contains_key(t));
            // its folder's links changed: listed again at the next birth
            p.nlink = 0;
        }
    }

    /// Forgets processes with no thread left.
    fn drop_empty(&mut self) {
        let empty: Vec<u32> = self
            .procs
            .iter()
            .filter(|(_, p)| p.tids.is_empty())
            .map(|(&pid, _)| pid)
            .collect();
        for pid in empty {
            self.drop_process(pid);
        }
    }

    /// Lists `pid`'s threads anew (its folder opened again, in case the pid
    /// is another process's now) and forgets those that left.
    fn list_threads(&mut self, pid: u32) {
        let path = self.proc.join(pid.to_string()).join("task");
        let tids: Vec<u32> = std::fs::read_dir(&path)
            .map(|d| {
                d.flatten()
                    .filter_map(|e| e.file_name().to_str()?.parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        let Some(p) = self.procs.get_mut(&pid) else {
            return;
        };
        let old = std::mem::replace(&mut p.tids, tids);
        let had_dir = p.dir.take().is_some();
        let left: Vec<u32> = old.into_iter().filter(|t| !p.tids.contains(t)).collect();
        self.kept -= usize::from(had_dir);
        let dir = keep_open(&mut self.kept, self.keep_max, &path);
        if let Some(p) = self.procs.get_mut(&pid) {
            p.nlink = dir.as_ref().and_then(nlink).unwrap_or(0);
            p.dir = dir;
        }
        for tid in left {
            self.drop_thread(tid);
        }
    }

    /// Reads one thread and adds it to `ran` if it ran; false when it is
    /// gone (and forgotten).
    fn read_thread(&mut self, pid: u32, tid: u32, ran: &mut Vec<TaskRan>) -> bool {
        let dir = || self.proc.join(format!("{pid}/task/{tid}"));
        if !self.threads.contains_key(&tid) {
            let schedstat = keep_open(&mut self.kept, self.keep_max, &dir().join("schedstat"));
            self.threads.insert(
                tid,
                Thread {
                    schedstat,
                    stat: None,
                    last: None,
                },
            );
        }
        let first = self.readings == 1;
        let Some(t) = self.threads.get_mut(&tid) else {
            return false;
        };
        let now = read_again(
            t.schedstat.as_ref(),
            || dir().join("schedstat"),
            &mut self.buf,
        )
        .and_then(|()| Schedstat::from_read(self.buf.as_slice()).ok());
        let Some(s) = now else {
            self.drop_thread(tid);
            return false;
        };
        let cur = (s.sum_exec_runtime, s.pcount);
        // born since the last reading: all its time is this window's
        let prev = t.last.replace(cur);
        let before = prev.or(first.then_some(cur)).unwrap_or((0, 0));
        let ns = cur.0.saturating_sub(before.0);
        if ns == 0 {
            return true;
        }
        // more than the wall time since the last reading: another thread
        // behind the same tid, the one that took its process's pid by
        // exec from a thread that was not the leader (the kernel hands it
        // the leader's pid, and its own run time). Its growth since the
        // last reading is not known: it starts again from here.
        if prev.is_some() && ns > self.elapsed + STALE_MAX_NS {
            return true;
        }
        if t.stat.is_none() {
            t.stat = keep_open(&mut self.kept, self.keep_max, &dir().join("stat"));
        }
        let st = read_again(t.stat.as_ref(), || dir().join("stat"), &mut self.buf)
            .and_then(|()| Stat::from_read(self.buf.as_slice()).ok());
        // gone between its two files: its time is in no window
        let Some(st) = st else {
            self.drop_thread(tid);
            return false;
        };
        ran.push(TaskRan {
            pid,
            tid,
            ppid: st.ppid.max(0) as u32,
            comm: st.comm,
            cpu: st.processor.and_then(|c| u32::try_from(c).ok()),
            flags: st.flags,
            ns,
            slices: cur.1.saturating_sub(before.1),
        });
        true
    }

    fn drop_thread(&mut self, tid: u32) {
        if let Some(t) = self.threads.remove(&tid) {
            self.kept -= usize::from(t.schedstat.is_some()) + usize::from(t.stat.is_some());
        }
    }

    fn drop_process(&mut self, pid: u32) {
        if let Some(p) = self.procs.remove(&pid) {
            self.kept -= usize::from(p.dir.is_some());
            for tid in p.tids {
                self.drop_thread(tid);
            }
        }
    }

    fn forget_all(&mut self) {
        self.threads.clear();
        self.procs.clear();
        self.kept = 0;
    }
}

/// Opens `path` to keep, where `kept` is still under `max`, and counts it.
fn keep_open(kept: &mut usize, max: usize, path: &Path) -> Option<File> {
    let f = (*kept < max).then(|| File::open(path).ok()).flatten();
    *kept += usize::from(f.is_some());
    f
}

/// Reads a thread's file into `buf`: from the descriptor kept open, else
/// by path; `None` when the thread is gone.
fn read_again(
    kept: Option<&File>,
    path: impl FnOnce() -> PathBuf,
    buf: &mut Vec<u8>,
) -> Option<()> {
    match kept {
        Some(f) => pread(f, buf),
        None => File::open(path()).and_then(|f| pread(&f, buf)),
    }
    .ok()
    .map(|_| ())
}

/// Reads a /proc file again from its start into `buf` (a seq file makes
/// its text anew at offset 0).
fn pread(f: &File, buf: &mut Vec<u8>) -> std::io::Result<usize> {
    buf.resize(STAT_CAP, 0);
    let n = f.read_at(buf, 0)?;
    buf.truncate(n);
    if n == 0 {
        // a thread that died leaves an empty file on some filesystems
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    Ok(n)
}

/// The last pid the kernel handed out in this pid namespace: the fifth
/// field of `/proc/loadavg` (`0.00 0.01 0.00 1/120 8571`).
fn last_pid(proc: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(proc.join("loadavg")).ok()?;
    text.split_whitespace().nth(4)?.parse().ok()
}

/// Whether `proc` lists the pids of noisetop's own pid namespace: its
/// `self` link names noisetop's pid. A tree with no `self` (a test's) is
/// taken as one.
fn same_pid_namespace(proc: &Path) -> bool {
    let me = proc.join("self");
    if std::fs::symlink_metadata(&me).is_err() {
        return true;
    }
    std::fs::read_link(&me)
        .ok()
        .is_some_and(|l| l.as_os_str() == std::process::id().to_string().as_str())
}

/// A folder's link count.
fn nlink(f: &File) -> Option<u64> {
    f.metadata().ok().map(|m| m.nlink())
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

    fn loadavg(root: &Path, last_pid: u32) {
        std::fs::write(
            root.join("loadavg"),
            format!("0.00 0.01 0.05 1/120 {last_pid}\n"),
        )
        .unwrap();
    }

    /// A thread dying as the kernel shows it to a descriptor kept open: its
    /// file reads nothing (an unlinked test file would still read).
    fn die(root: &Path, pid: u32, tid: u32) {
        let d = root.join(format!("{pid}/task/{tid}"));
        std::fs::write(d.join("schedstat"), "").unwrap();
        std::fs::write(d.join("stat"), "").unwrap();
        std::fs::remove_dir_all(d).unwrap();
    }

    fn ran_of(c: &mut TaskClock) -> Vec<(u32, u64)> {
        let mut r: Vec<(u32, u64)> = c.read().iter().map(|t| (t.tid, t.ns)).collect();
        r.sort_unstable();
        r
    }

    #[test]
    fn files_stay_open_between_readings_and_a_thread_born_where_one_died_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        loadavg(root, 300);
        task(root, 100, 100, "bench", 1, 1_000, 1);
        task(root, 100, 101, "worker", 1, 2_000, 1);
        task(root, 200, 200, "sleeper", 0, 5_000, 1);
        let mut c = TaskClock::keeping(root, 1_000);
        assert!(c.read().is_empty());
        // two task folders and three schedstat files
        assert_eq!(c.kept(), 5);
        task(root, 100, 100, "bench", 1, 9_000, 2);
        assert_eq!(ran_of(&mut c), vec![(100, 8_000)]);
        assert_eq!(
            c.kept(),
            6,
            "the stat of the thread that ran stays open too"
        );
        // one worker dies and another is born: the folder's links are as
        // many as before, and the dead one's read failing tells
        die(root, 100, 101);
        task(root, 100, 102, "worker", 1, 3_000, 1);
        loadavg(root, 302);
        assert_eq!(ran_of(&mut c), vec![(102, 3_000)]);
        // the dead one's file closed, the newborn's schedstat and stat open
        assert_eq!(c.kept(), 7);
        // a process that left is forgotten, its files closed
        die(root, 200, 200);
        std::fs::remove_dir_all(root.join("200")).unwrap();
        assert!(c.read().is_empty());
        assert_eq!(c.kept(), 5);
    }

    #[test]
    fn a_thread_that_took_its_process_pid_by_exec_is_not_credited_the_old_leaders_difference() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        loadavg(root, 300);
        // the leader waits; a worker has run a minute
        task(root, 100, 100, "server", 1, 1_000_000, 10);
        task(root, 100, 101, "worker", 1, 60_000_000_000, 900);
        let mut c = TaskClock::keeping(root, 1_000);
        assert!(c.read().is_empty());
        // the worker execs: it takes pid 100 and keeps its own run time,
        // the old leader takes tid 101 and is reaped; no pid is handed out
        task(root, 100, 100, "server", 1, 60_005_000_000, 901);
        die(root, 100, 101);
        assert_eq!(ran_of(&mut c), vec![], "not 59 s in one reading");
        task(root, 100, 100, "server", 1, 60_010_000_000, 905);
        assert_eq!(ran_of(&mut c), vec![(100, 5_000_000)]);
    }

    #[test]
    fn no_pid_handed_out_means_nothing_is_listed_again() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        loadavg(root, 100);
        task(root, 100, 100, "bench", 1, 1_000, 1);
        let mut c = TaskClock::keeping(root, 1_000);
        c.read();
        // a folder that appears with no pid handed out is not a process the
        // kernel made: /proc is not listed again to find it
        task(root, 150, 150, "stray", 1, 7_000, 1);
        task(root, 100, 100, "bench", 1, 4_000, 2);
        assert_eq!(ran_of(&mut c), vec![(100, 3_000)]);
        // once a pid was handed out, it is found with all its time
        loadavg(root, 150);
        assert_eq!(ran_of(&mut c), vec![(150, 7_000)]);
        // without loadavg every reading lists /proc
        std::fs::remove_file(root.join("loadavg")).unwrap();
        task(root, 160, 160, "new", 0, 600, 1);
        assert_eq!(ran_of(&mut c), vec![(160, 600)]);
    }

    #[test]
    fn a_proc_of_another_pid_namespace_is_listed_every_time() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        loadavg(root, 100);
        task(root, 100, 100, "bench", 1, 1_000, 1);
        // its `self` names another pid: loadavg's pids are not its pids
        std::os::unix::fs::symlink("1", root.join("self")).unwrap();
        let mut c = TaskClock::keeping(root, 1_000);
        c.read();
        task(root, 150, 150, "new", 1, 7_000, 1);
        assert_eq!(ran_of(&mut c), vec![(150, 7_000)]);
        // this process's own /proc is its namespace
        assert!(same_pid_namespace(Path::new("/proc")) || !Path::new("/proc/self").exists());
    }

    #[test]
    fn descriptors_of_processes_that_came_and_went_are_closed() {
        if !Path::new("/proc/self/task").is_dir() {
            eprintln!("skipped: no live /proc here");
            return;
        }
        let mut c = TaskClock::keeping(Path::new("/proc"), 100_000);
        c.read();
        let before = c.kept();
        // 200 processes that run and exit between two readings, then
        // another 200 read while alive and gone by the next reading
        for _ in 0..200 {
            let _ = std::process::Command::new("true").status();
        }
        c.read();
        let mut alive: Vec<std::process::Child> = (0..200)
            .filter_map(|_| std::process::Command::new("sleep").arg("30").spawn().ok())
            .collect();
        c.read();
        let with_them = c.kept();
        for ch in &mut alive {
            let _ = ch.kill();
            let _ = ch.wait();
        }
        c.read();
        c.read();
        let after = c.kept();
        // each live sleeper held its folder and schedstat open; the other
        // processes of the machine may come and go by a few
        assert!(
            with_them >= (before + 2 * alive.len()).saturating_sub(40),
            "{before} → {with_them}"
        );
        assert!(
            after < before + 40,
            "{before} → {with_them} → {after}: not closed"
        );
    }

    #[test]
    fn past_the_descriptor_budget_threads_are_read_by_path_alike() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        task(root, 100, 100, "bench", 1, 1_000, 1);
        task(root, 100, 101, "worker", 0, 2_000, 1);
        let mut kept = TaskClock::keeping(root, 1_000);
        let mut by_path = TaskClock::keeping(root, 0);
        kept.read();
        by_path.read();
        task(root, 100, 100, "bench", 1, 5_000, 2);
        task(root, 100, 101, "worker", 0, 2_500, 3);
        let a = kept.read();
        let b = by_path.read();
        assert_eq!(by_path.kept(), 0);
        let mut a: Vec<_> = a.iter().map(|t| (t.tid, t.ns, t.slices, t.cpu)).collect();
        let mut b: Vec<_> = b.iter().map(|t| (t.tid, t.ns, t.slices, t.cpu)).collect();
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, vec![(100, 4_000, 1, Some(1)), (101, 500, 2, Some(0))]);
        assert_eq!(a, b);
    }

    #[test]
    fn the_live_proc_gives_a_busy_thread_its_schedstat_growth() {
        // this process's own thread: its run time grows between readings
        let me = std::process::id();
        // /proc/thread-self links to PID/task/TID
        let Some(tid) = std::fs::read_link("/proc/thread-self")
            .ok()
            .and_then(|l| l.file_name()?.to_str()?.parse::<u32>().ok())
        else {
            eprintln!("skipped: no /proc/thread-self here");
            return;
        };
        let path = format!("/proc/{me}/task/{tid}/schedstat");
        let mut c = TaskClock::new(Path::new("/proc"));
        c.read();
        let before: u64 = std::fs::read_to_string(&path)
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let spin = std::time::Instant::now();
        while spin.elapsed() < std::time::Duration::from_millis(30) {
            std::hint::black_box(0u64);
        }
        let after: u64 = std::fs::read_to_string(&path)
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let ran = c.read();
        let mine = ran.iter().find(|t| t.tid == tid).expect("this thread ran");
        assert_eq!(mine.pid, me);
        // its growth over the two readings holds the growth read between them
        assert!(
            mine.ns >= after - before,
            "{} < {}",
            mine.ns,
            after - before
        );
        assert!(c.kept() > 0);
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
