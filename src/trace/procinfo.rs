//! What /proc says about a task, for display beside its traced name: thread
//! group, command line and cgroup. Plain std reads: three small files do not
//! earn a crate.

use std::path::Path;

use serde::Serialize;

/// A task as /proc shows it; every field is `None` when the task is gone or
/// the file unreadable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct ProcInfo {
    /// `Tgid:` of /proc/TID/status.
    pub tgid: Option<u32>,
    /// /proc/TID/comm.
    pub comm: Option<String>,
    /// /proc/TID/cmdline with NULs as spaces (`None` for kernel threads).
    pub cmdline: Option<String>,
    /// The cgroup v2 path (`0::` line) of /proc/TID/cgroup, else the first line's path.
    pub cgroup: Option<String>,
}

/// Reads what `proc` (normally `/proc`) knows of thread `tid`.
pub fn read(proc: &Path, tid: u32) -> ProcInfo {
    let dir = proc.join(tid.to_string());
    let text = |name: &str| std::fs::read(dir.join(name)).ok();
    let tgid = text("status").and_then(|s| {
        String::from_utf8_lossy(&s)
            .lines()
            .find_map(|l| l.strip_prefix("Tgid:"))
            .and_then(|v| v.trim().parse().ok())
    });
    let comm = text("comm").map(|c| String::from_utf8_lossy(&c).trim_end().to_owned());
    let cmdline = text("cmdline").and_then(|c| {
        let parts: Vec<String> = c
            .split(|&b| b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect();
        (!parts.is_empty()).then(|| parts.join(" "))
    });
    let cgroup = text("cgroup").and_then(|c| {
        let c = String::from_utf8_lossy(&c).into_owned();
        let path = |l: &str| l.splitn(3, ':').nth(2).map(str::to_owned);
        c.lines()
            .find(|l| l.starts_with("0::"))
            .or_else(|| c.lines().next())
            .and_then(path)
    });
    ProcInfo {
        tgid,
        comm,
        cmdline,
        cgroup,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_task_tree() {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("4243");
        std::fs::create_dir(&t).unwrap();
        std::fs::write(
            t.join("status"),
            "Name:\tbusy\nUmask:\t0022\nState:\tR (running)\nTgid:\t4242\nNgid:\t0\nPid:\t4243\n",
        )
        .unwrap();
        std::fs::write(t.join("comm"), "busy\n").unwrap();
        std::fs::write(t.join("cmdline"), b"sh\0-c\0while :; do :; done\0").unwrap();
        std::fs::write(
            t.join("cgroup"),
            "0::/user.slice/user-0.slice/session-3.scope\n",
        )
        .unwrap();
        assert_eq!(
            read(dir.path(), 4243),
            ProcInfo {
                tgid: Some(4242),
                comm: Some("busy".into()),
                cmdline: Some("sh -c while :; do :; done".into()),
                cgroup: Some("/user.slice/user-0.slice/session-3.scope".into()),
            }
        );
        // A kernel thread has an empty cmdline; a v1 hierarchy has no 0:: line.
        std::fs::write(t.join("cmdline"), b"").unwrap();
        std::fs::write(t.join("cgroup"), "12:cpuset:/\n11:memory:/system.slice\n").unwrap();
        let p = read(dir.path(), 4243);
        assert_eq!(p.cmdline, None);
        assert_eq!(p.cgroup.as_deref(), Some("/"));
        assert_eq!(read(dir.path(), 1), ProcInfo::default());
    }
}
