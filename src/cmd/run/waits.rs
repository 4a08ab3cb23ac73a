//! The command's run-queue waits: how long its tasks were runnable but not
//! running, from the scheduler's own counter (`run_delay`, the second field
//! of /proc/PID/task/TID/schedstat, read without a lock or an IPI), with
//! their run time beside it (the first field) to say how much of the
//! command was seen.
//!
//! The command's processes are its own and those it started, found by
//! their parent links as they appear. A task's figures are kept as last
//! read: one that ends between two reads loses its last stretch, and a
//! process that starts and ends between them is not seen at all, which
//! [`Waits::seen_pct`] shows against the command's CPU time. The leader's
//! last figures are read after it exits and before it is reaped.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Most tasks followed; more are left out, and so less is seen.
const MOST_TASKS: usize = 1 << 16;

/// Most pids remembered as not the command's (pids are reused: then forgotten).
const MOST_STRANGERS: usize = 1 << 14;

/// The waits of one command's tasks.
#[derive(Debug)]
pub struct Waits {
    proc: PathBuf,
    /// The command and the processes found to descend from it.
    tree: Vec<u32>,
    strangers: HashSet<u32>,
    /// Thread id → (run ns, wait ns) as last read.
    tasks: HashMap<u32, (u64, u64)>,
}

/// `(run ns, wait ns)` of one schedstat file.
pub fn parse_schedstat(text: &str) -> Option<(u64, u64)> {
    let mut f = text.split_whitespace().map(str::parse::<u64>);
    Some((f.next()?.ok()?, f.next()?.ok()?))
}

/// The parent of `pid`, from its leader's own stat (a process-wide
/// /proc/PID/stat sums its threads' run time under their CPUs' locks).
fn parent(proc: &Path, pid: u32) -> Option<u32> {
    let stat = crate::os::read_small(&proc.join(format!("{pid}/task/{pid}/stat")), 4096).ok()?;
    // the fields after the parenthesised comm: state, then ppid
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

impl Waits {
    /// Follows `root` (the command's pid) and what it starts, in `proc`.
    pub fn new(proc: &Path, root: u32) -> Waits {
        Waits {
            proc: proc.to_path_buf(),
            tree: vec![root],
            strangers: HashSet::new(),
            tasks: HashMap::new(),
        }
    }

    /// Finds the processes started since the last read, then reads every
    /// task of every process followed.
    pub fn read(&mut self) {
        self.find_children();
        for i in 0..self.tree.len() {
            let pid = self.tree[i];
            let Ok(dir) = std::fs::read_dir(self.proc.join(format!("{pid}/task"))) else {
                continue;
            };
            for e in dir.flatten() {
                let Some(tid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                    continue;
                };
                if self.tasks.len() >= MOST_TASKS && !self.tasks.contains_key(&tid) {
                    continue;
                }
                let Some(now) = crate::os::read_small(&e.path().join("schedstat"), 256)
                    .ok()
                    .and_then(|t| parse_schedstat(&t))
                else {
                    continue;
                };
                let v = self.tasks.entry(tid).or_insert(now);
                // cumulative counters: the latest read holds the most
                *v = (v.0.max(now.0), v.1.max(now.1));
            }
        }
    }

    fn find_children(&mut self) {
        if self.strangers.len() > MOST_STRANGERS {
            self.strangers.clear();
        }
        let Ok(dir) = std::fs::read_dir(&self.proc) else {
            return;
        };
        let mut new: Vec<(u32, u32)> = Vec::new();
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            if self.tree.contains(&pid) || self.strangers.contains(&pid) {
                continue;
            }
            if let Some(pp) = parent(&self.proc, pid) {
                new.push((pid, pp));
            }
        }
        // a grandchild may be listed before its parent: pass again while
        // the tree grows
        loop {
            let before = self.tree.len();
            new.retain(|&(pid, pp)| {
                if self.tree.contains(&pp) {
                    self.tree.push(pid);
                    false
                } else {
                    true
                }
            });
            if self.tree.len() == before {
                break;
            }
        }
        self.strangers.extend(new.into_iter().map(|(pid, _)| pid));
    }

    /// Run time and waits of every task seen, ns.
    pub fn totals(&self) -> (u64, u64) {
        self.tasks
            .values()
            .fold((0, 0), |(r, w), &(rn, wn)| (r + rn, w + wn))
    }

    /// The run time seen as a share of the command's CPU time `cpu_ns`, %.
    pub fn seen_pct(&self, cpu_ns: u64) -> Option<f64> {
        (cpu_ns > 0).then(|| 100.0 * self.totals().0 as f64 / cpu_ns as f64)
    }
}

/// Least share of the command's CPU time its waits must have been read
/// for, %, for the estimate to stand on them.
pub const SEEN_ENOUGH_PCT: f64 = 80.0;

/// The command's run time and waits for the estimate, ns; the reason
/// instead where too little of it was seen.
pub fn seen_ns(w: &Waits, cpu_ns: Option<u64>) -> Result<(u64, u64), String> {
    let (run, wait) = w.totals();
    if run == 0 && wait == 0 {
        return Err("no schedstat of its tasks could be read".into());
    }
    if let Some(pct) = cpu_ns.and_then(|c| w.seen_pct(c))
        && pct < SEEN_ENOUGH_PCT
    {
        return Err(format!(
            "its tasks' waits were read for {pct:.0} % of its CPU time: processes it started \
             ended between two samples (a shorter --interval sees more)"
        ));
    }
    Ok((run, wait))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// A process `pid` (parent `ppid`) with threads `(tid, run, wait)`.
    fn process(root: &Path, pid: u32, ppid: u32, threads: &[(u32, u64, u64)]) {
        write(
            root,
            &format!("{pid}/task/{pid}/stat"),
            &format!("{pid} (a (b) c) S {ppid} {pid} {pid} 0 -1 4194304 0\n"),
        );
        for &(tid, run, wait) in threads {
            write(
                root,
                &format!("{pid}/task/{tid}/schedstat"),
                &format!("{run} {wait} 7\n"),
            );
        }
    }

    #[test]
    fn the_waits_of_the_command_its_threads_and_its_children_add_up_and_no_one_elses() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        process(p, 100, 1, &[(100, 900, 40), (101, 300, 10)]);
        // a grandchild listed before its parent, and a stranger
        process(p, 90, 120, &[(90, 50, 5)]);
        process(p, 120, 100, &[(120, 20, 1)]);
        process(p, 200, 1, &[(200, 10_000, 9_999)]);
        let mut w = Waits::new(p, 100);
        w.read();
        assert_eq!(w.totals(), (900 + 300 + 50 + 20, 40 + 10 + 5 + 1));
        // thread 101 ends; the leader goes on: kept as last read
        std::fs::remove_dir_all(p.join("100/task/101")).unwrap();
        write(p, "100/task/100/schedstat", "1900 140 9\n");
        w.read();
        assert_eq!(w.totals(), (1900 + 300 + 50 + 20, 140 + 10 + 5 + 1));
        assert_eq!(seen_ns(&w, Some(2270)), Ok((2270, 156)));
        assert_eq!(w.seen_pct(2270), Some(100.0));
    }

    #[test]
    fn too_little_seen_is_said_and_not_used() {
        let d = tempfile::tempdir().unwrap();
        process(d.path(), 100, 1, &[(100, 100, 3)]);
        let mut w = Waits::new(d.path(), 100);
        w.read();
        let why = seen_ns(&w, Some(1000)).unwrap_err();
        assert!(
            why.starts_with("its tasks' waits were read for 10 % of its CPU time"),
            "{why}"
        );
        let none = Waits::new(d.path(), 555);
        assert!(seen_ns(&none, Some(1)).is_err());
        assert_eq!(parse_schedstat("12 34 5\n"), Some((12, 34)));
        assert_eq!(parse_schedstat("12\n"), None);
    }
}
