//! The path of a cgroup v2 id: the id the kernel gives a task's cgroup
//! (`bpf_get_current_cgroup_id`) is the inode number of its directory in
//! the cgroup2 file system, so one walk of that tree maps every id to its
//! path. The walk is made again when an id is not found, at most once every
//! ten seconds, and the map holds only the cgroups that exist.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Most cgroups mapped: a machine with more maps the first found.
const MAX_CGROUPS: usize = 16_384;

/// How often a missing id may walk the tree again.
const RESCAN: Duration = Duration::from_secs(10);

/// Where the tasks' cgroup paths live, so that a fix can name their cgroup.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CgroupRoot {
    /// The cgroup2 mount (`/sys/fs/cgroup`, `/sys/fs/cgroup/unified` on a
    /// hybrid host).
    pub mount: String,
    /// Whether the cpuset controller is on that hierarchy (its
    /// `cgroup.controllers` lists it): then systemd's `AllowedCPUs=` and
    /// `cpuset.cpus` confine a cgroup; else its tasks are moved one by one.
    pub cpuset: bool,
}

/// Where the cgroup2 hierarchy is mounted, from a `mountinfo` text:
/// `/sys/fs/cgroup` on a unified host, `/sys/fs/cgroup/unified` on a
/// hybrid one.
pub fn cgroup2_mount(mountinfo: &str) -> Option<PathBuf> {
    mountinfo.lines().find_map(|l| {
        // fields before " - " then fstype; the mount point is the 5th
        let (left, right) = l.split_once(" - ")?;
        (right.split_whitespace().next()? == "cgroup2")
            .then(|| left.split_whitespace().nth(4).map(PathBuf::from))
            .flatten()
    })
}

/// Ids to paths, walked from the mount.
#[derive(Debug, Default)]
pub struct CgroupPaths {
    mount: Option<PathBuf>,
    paths: HashMap<u64, String>,
    walked: Option<Instant>,
}

impl CgroupPaths {
    /// Finds the cgroup2 mount through `proc` (`/proc`).
    pub fn new(proc: &Path) -> CgroupPaths {
        let mount = std::fs::read_to_string(proc.join("self/mountinfo"))
            .ok()
            .and_then(|t| cgroup2_mount(&t));
        CgroupPaths {
            mount,
            ..CgroupPaths::default()
        }
    }

    /// A map over the tree under `mount` (tests).
    pub fn at(mount: &Path) -> CgroupPaths {
        CgroupPaths {
            mount: Some(mount.to_path_buf()),
            ..CgroupPaths::default()
        }
    }

    fn walk(&mut self) {
        self.walked = Some(Instant::now());
        let Some(mount) = self.mount.clone() else {
            return;
        };
        self.paths.clear();
        let mut stack = vec![(mount.clone(), String::from("/"))];
        while let Some((dir, path)) = stack.pop() {
            if self.paths.len() >= MAX_CGROUPS {
                break;
            }
            let Ok(meta) = std::fs::metadata(&dir) else {
                continue;
            };
            self.paths.insert(meta.ino(), path.clone());
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    let name = e.file_name().to_string_lossy().into_owned();
                    let child = if path == "/" {
                        format!("/{name}")
                    } else {
                        format!("{path}/{name}")
                    };
                    stack.push((e.path(), child));
                }
            }
        }
    }

    /// The cgroup2 mount and whether the cpuset controller is on it.
    pub fn root(&self) -> Option<CgroupRoot> {
        let mount = self.mount.as_ref()?;
        let controllers =
            std::fs::read_to_string(mount.join("cgroup.controllers")).unwrap_or_default();
        Some(CgroupRoot {
            mount: mount.to_string_lossy().into_owned(),
            cpuset: controllers.split_whitespace().any(|c| c == "cpuset"),
        })
    }

    /// The path of cgroup `id` (`/` is the root), walking the tree again
    /// when it is not known and the last walk is old enough.
    pub fn path(&mut self, id: u64) -> Option<String> {
        if let Some(p) = self.paths.get(&id) {
            return Some(p.clone());
        }
        if self.walked.is_none_or(|t| t.elapsed() >= RESCAN) {
            self.walk();
        }
        self.paths.get(&id).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cgroup2_mount_is_found_on_unified_and_hybrid_hosts() {
        let hybrid = "35 25 0:30 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755\n\
                      36 35 0:31 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw,nsdelegate\n\
                      37 35 0:32 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n";
        assert_eq!(
            cgroup2_mount(hybrid),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
        let unified = "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n";
        assert_eq!(
            cgroup2_mount(unified),
            Some(PathBuf::from("/sys/fs/cgroup"))
        );
        assert_eq!(
            cgroup2_mount("36 35 0:31 / /x rw - cgroup cgroup rw\n"),
            None
        );
    }

    #[test]
    fn ids_are_the_inode_numbers_of_the_directories() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("system.slice/foo.service")).unwrap();
        let ino = |p: &Path| std::fs::metadata(p).unwrap().ino();
        let mut c = CgroupPaths::at(d.path());
        assert_eq!(c.path(ino(d.path())).as_deref(), Some("/"));
        assert_eq!(
            c.path(ino(&d.path().join("system.slice/foo.service")))
                .as_deref(),
            Some("/system.slice/foo.service")
        );
        // a cgroup made after the walk is found at the next one, not at once
        std::fs::create_dir(d.path().join("late")).unwrap();
        assert_eq!(c.path(ino(&d.path().join("late"))), None);
    }
}
