//! Telling the probe's own wake-ups from noise: a probe names its threads
//! [`THREAD_NAME`] and, while it runs, keeps a small file beside the last
//! probe's saying its pid and CPUs, so the dashboard, `batch` and `run`
//! watching the same CPUs list it as `noisetop probe`, not as an intruder.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::noise::traced::{Intruder, Probed, Traced};
use crate::trace::TraceWindow;

/// The name of every probe thread (and of the context-switch partner it
/// forks, which inherits it): 14 bytes, within the kernel's 15 of `comm`.
pub const THREAD_NAME: &str = "noisetop-probe";

/// Tag of the file.
pub const FORMAT: &str = "noisetop-probe-running";

/// A probe under way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Running {
    /// Always [`FORMAT`].
    pub format: String,
    /// The probe's process.
    pub pid: u32,
    /// The CPUs it measures.
    pub cpus: Vec<u32>,
}

/// `probe-running.json` beside the last probe's file.
pub fn path() -> Option<PathBuf> {
    Some(super::sinks::last_path()?.with_file_name("probe-running.json"))
}

/// Removes the file when the probe ends (also when it is stopped by a
/// signal: the probe then returns what it measured, and this drops).
#[derive(Debug)]
pub struct Guard(PathBuf);

impl Guard {
    /// Writes the file for this process probing `cpus`.
    pub fn write(path: &Path, cpus: &[u32]) -> std::io::Result<Guard> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let r = Running {
            format: FORMAT.into(),
            pid: std::process::id(),
            cpus: cpus.to_vec(),
        };
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        std::fs::write(
            &tmp,
            serde_json::to_string(&r).map_err(std::io::Error::other)?,
        )?;
        std::fs::rename(&tmp, path)?;
        Ok(Guard(path.to_path_buf()))
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The probe under way per the file at `path`, when its process is still
/// alive in `proc` (a probe killed outright leaves the file behind).
pub fn load_from(path: &Path, proc: &Path) -> Option<Running> {
    let text = crate::os::read_small(path, 64 * 1024).ok()?;
    let r: Running = serde_json::from_str(&text).ok()?;
    (r.format == FORMAT && r.pid > 0 && proc.join(r.pid.to_string()).is_dir()).then_some(r)
}

/// Whether a task is the probe's: named as its threads are, or in the
/// process the running file names.
pub fn is_probe(comm: Option<&str>, pid: Option<u32>, running: Option<&Running>) -> bool {
    comm == Some(THREAD_NAME) || running.is_some_and(|r| pid == Some(r.pid))
}

/// Takes the probe's tasks out of `out`'s intruders (and out of the owner,
/// where none was given and the probe ran longest) into `out.probed`, with
/// their time from `w`; a CPU the running probe measures is listed even
/// where its threads did not run this interval.
pub fn split(out: &mut Traced, w: &TraceWindow, running: Option<&Running>) {
    for c in &w.cpus {
        let mut p = Probed {
            cpu: c.cpu,
            ..Probed::default()
        };
        let mut seen = running.is_some_and(|r| r.cpus.contains(&c.cpu));
        for t in c.tasks.iter().filter(|t| t.task.tid != 0 && t.ns > 0) {
            if !is_probe(t.task.comm.as_deref(), t.task.pid, running) {
                continue;
            }
            seen = true;
            let pid = t.task.pid.unwrap_or(t.task.tid);
            if !p.pids.contains(&pid) {
                p.pids.push(pid);
            }
            p.ns += t.ns;
            p.slices += t.slices;
            if let Some(ch) = t.charged_ns {
                p.charged_ns = Some(p.charged_ns.unwrap_or(0) + ch);
            }
        }
        if !seen {
            continue;
        }
        p.pids.sort_unstable();
        if let Some(tc) = out.cpus.iter_mut().find(|x| x.cpu == c.cpu) {
            let mine = |i: &Intruder| is_probe(Some(&i.task.comm), Some(i.task.pid), running);
            tc.intruders.retain(|i| !mine(i));
            if tc
                .owner
                .as_ref()
                .is_some_and(|o| is_probe(Some(&o.comm), Some(o.pid), running))
            {
                tc.owner = None;
            }
        }
        out.probed.push(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::traced::{TracedCpu, TracedTask};
    use crate::trace::{CpuTrace, TaskId, TaskTime};

    fn task(comm: &str, pid: u32, tid: u32, ns: u64, owner: bool) -> TaskTime {
        TaskTime {
            task: TaskId {
                pid: Some(pid),
                tid,
                comm: Some(comm.into()),
            },
            ns,
            slices: 2,
            carried: 0,
            max_ns: ns,
            owner,
            charged_ns: Some(ns + 10),
            irq_ns: 0,
            cgroup: None,
        }
    }

    fn cpu_trace(cpu: u32, tasks: Vec<TaskTime>) -> CpuTrace {
        CpuTrace {
            cpu,
            start_ns: 0,
            window_ns: 1_000_000_000,
            owner: None,
            owner_given: false,
            owner_ns: 0,
            idle_ns: 0,
            unknown_ns: 0,
            tasks,
            sources: Vec::new(),
            records: 0,
            unmatched: 0,
            idle_edge_ns: 0,
            kernel: None,
        }
    }

    fn intruder(comm: &str, pid: u32, ns: u64) -> Intruder {
        Intruder {
            task: TracedTask {
                comm: comm.into(),
                pid,
                tid: pid,
                per_cpu_kthread: false,
                exited: false,
                cgroup: None,
            },
            ns,
            slices: 2,
            charged_ns: Some(ns + 10),
        }
    }

    #[test]
    fn the_probes_threads_leave_the_intruders_with_their_time() {
        let w = TraceWindow {
            cpus: vec![cpu_trace(
                1,
                vec![
                    task("noisetop", 700, 701, 3_000_000, true),
                    task(THREAD_NAME, 900, 903, 1_500_000, false),
                    task("kworker/1:1", 50, 50, 400_000, false),
                ],
            )],
        };
        let mut out = Traced {
            cpus: vec![TracedCpu {
                cpu: 1,
                window_ns: 1_000_000_000,
                owner: Some(TracedTask {
                    comm: "noisetop".into(),
                    pid: 700,
                    tid: 701,
                    per_cpu_kthread: false,
                    exited: false,
                    cgroup: None,
                }),
                intruders: vec![
                    intruder(THREAD_NAME, 900, 1_500_000),
                    intruder("kworker/1:1", 50, 400_000),
                ],
                ..TracedCpu::default()
            }],
            ..Traced::default()
        };
        let running = Running {
            format: FORMAT.into(),
            pid: 700,
            cpus: vec![1, 2],
        };
        split(&mut out, &w, Some(&running));
        // the running file's pid owned the CPU: the probe's, not an owner
        let c = out.cpu(1).unwrap();
        assert_eq!(c.owner, None);
        assert_eq!(c.intruders, vec![intruder("kworker/1:1", 50, 400_000)]);
        assert_eq!(
            out.probed,
            vec![Probed {
                cpu: 1,
                pids: vec![700, 900],
                ns: 4_500_000,
                slices: 4,
                charged_ns: Some(4_500_020),
            }]
        );
        assert_eq!(
            crate::noise::traced::probe_ran_text(out.probed[0].ns),
            "noisetop probe ran 4.5 ms"
        );
    }

    #[test]
    fn a_verdict_says_its_cpu_is_probed_whatever_it_is() {
        use crate::noise::{CpuVerdict, VerdictState};
        let v = |state, probe_ns| CpuVerdict {
            cpu: 1,
            watched: true,
            state,
            causes: Vec::new(),
            reason: (state == VerdictState::Unknown).then(|| "no interval yet".into()),
            probe_ns,
        };
        assert_eq!(v(VerdictState::Quiet, None).text(), "quiet");
        assert_eq!(
            v(VerdictState::Quiet, Some(3_250_000)).text(),
            "quiet; being probed (noisetop probe ran 3.2 ms)"
        );
        assert_eq!(
            v(VerdictState::Unknown, Some(0)).text(),
            "unknown: no interval yet; being probed (noisetop probe ran 0.0 ms)"
        );
    }

    #[test]
    fn without_a_probe_nothing_moves() {
        let w = TraceWindow {
            cpus: vec![cpu_trace(3, vec![task("stress", 42, 42, 9_000_000, false)])],
        };
        let mut out = Traced::default();
        split(&mut out, &w, None);
        assert!(out.probed.is_empty());
        // a CPU the probe measures is listed though its threads slept
        let running = Running {
            format: FORMAT.into(),
            pid: 7,
            cpus: vec![3],
        };
        split(&mut out, &w, Some(&running));
        assert_eq!(
            out.probed,
            vec![Probed {
                cpu: 3,
                ..Probed::default()
            }]
        );
    }

    #[test]
    fn a_file_whose_process_is_gone_is_no_probe() {
        let dir = tempfile::tempdir().unwrap();
        let proc = dir.path().join("proc");
        std::fs::create_dir_all(proc.join("4242")).unwrap();
        let file = dir.path().join("state/noisetop/probe-running.json");
        {
            let g = Guard::write(&file, &[1]).unwrap();
            let mine = std::process::id();
            assert_eq!(
                load_from(&file, &proc),
                None,
                "pid {mine} has no /proc entry here"
            );
            std::fs::create_dir_all(proc.join(mine.to_string())).unwrap();
            assert_eq!(
                load_from(&file, &proc),
                Some(Running {
                    format: FORMAT.into(),
                    pid: mine,
                    cpus: vec![1],
                })
            );
            drop(g);
        }
        assert!(!file.exists(), "the guard removes the file");
        std::fs::write(&file, r#"{"format":"other","pid":4242,"cpus":[1]}"#).unwrap();
        assert_eq!(load_from(&file, &proc), None);
        std::fs::write(&file, "not json").unwrap();
        assert_eq!(load_from(&file, &proc), None);
    }
}
