//! Names a cgroup the way an operator knows it: a Kubernetes pod and its
//! container, a Docker or podman container, a systemd unit, else the path
//! itself. Text work only, on the path the kernel prints (the `0::` line of
//! /proc/PID/cgroup, or a v1 hierarchy's line); nothing is read here.
//!
//! The shapes, as their writers make them:
//! * kubelet, systemd driver: `kubepods.slice/kubepods-burstable.slice/`
//!   `kubepods-burstable-pod<uid, - as _>.slice/<runtime>-<id>.scope`, the
//!   runtime's prefix `cri-containerd-`, `crio-` (its monitor
//!   `crio-conmon-`) or `docker-` (cri-dockerd); Guaranteed pods sit
//!   directly under `kubepods.slice` (`kubepods-pod<uid>.slice`).
//! * kubelet, cgroupfs driver: `kubepods/burstable/pod<uid>/<id>`.
//! * Docker: `system.slice/docker-<id>.scope`, or `docker/<id>` (cgroupfs).
//! * podman: `machine.slice/libpod-<id>.scope` (its monitor
//!   `libpod-conmon-<id>.scope`), `libpod_parent/libpod-<id>` (cgroupfs),
//!   and under a user's manager when rootless.
//! * systemd: `system.slice/foo.service`, `user.slice/user-1000.slice/`
//!   `session-3.scope`, `user@1000.service/app.slice/foo.scope`.
//!
//! A path read inside a container that has its own cgroup namespace starts
//! with `/..` components (the path is relative to the namespace's root);
//! they name nothing and are skipped.

use std::fmt;

use serde::Serialize;

/// The container runtime whose cgroup name gave a container's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Runtime {
    /// containerd's CRI plugin (`cri-containerd-ID.scope`).
    Containerd,
    /// CRI-O (`crio-ID.scope`).
    CriO,
    /// Docker, or cri-dockerd under Kubernetes (`docker-ID.scope`, `docker/ID`).
    Docker,
    /// podman (`libpod-ID.scope`, `libpod_parent/libpod-ID`).
    Podman,
}

impl Runtime {
    /// Returns the name the runtime goes by.
    pub fn name(self) -> &'static str {
        match self {
            Runtime::Containerd => "containerd",
            Runtime::CriO => "cri-o",
            Runtime::Docker => "docker",
            Runtime::Podman => "podman",
        }
    }
}

/// A container's cgroup: its id (64 hex digits) and the runtime that named
/// it, where the name says (kubelet's cgroupfs driver writes the bare id).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Container {
    /// The runtime, when the cgroup's name carries its prefix.
    pub runtime: Option<Runtime>,
    /// The full container id, as `docker ps --no-trunc` and `crictl ps -o json` print it.
    pub id: String,
    /// The container's monitor (conmon) rather than its processes.
    pub monitor: bool,
}

/// A pod's quality-of-service class, which decides kubelet's slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Qos {
    /// Requests equal limits for every resource: directly under `kubepods`.
    Guaranteed,
    /// Under `kubepods-burstable`.
    Burstable,
    /// Under `kubepods-besteffort`.
    BestEffort,
}

/// What a cgroup path names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum CgroupName {
    /// A Kubernetes pod, and the container when the path reaches one.
    Pod {
        /// The pod's UID as `kubectl get pod -o jsonpath={.metadata.uid}`
        /// prints it (a static pod's is its manifest's 32-digit hash).
        uid: String,
        /// The pod's quality-of-service class.
        qos: Qos,
        /// The container (or the pod's sandbox, which has an id too).
        container: Option<Container>,
    },
    /// A container outside Kubernetes (Docker, podman).
    Container(Container),
    /// A systemd unit; `uid` for a unit of a user's (under `user-UID.slice`).
    Unit {
        /// The unit's name (`foo.service`, `session-3.scope`).
        unit: String,
        /// The user whose slice holds the unit.
        uid: Option<u32>,
    },
    /// The root cgroup (`/`): kernel threads and tasks nobody placed.
    Root,
    /// A path none of the above shapes fits, as the kernel printed it.
    Path(String),
}

/// The name a table shows for a task's cgroup path: `None` for none known
/// and for the root, which names nothing an operator moves.
pub fn shown(path: Option<&str>) -> Option<CgroupName> {
    path.map(parse).filter(|n| *n != CgroupName::Root)
}

/// Names the cgroup at `path` (the third field of a /proc/PID/cgroup line).
pub fn parse(path: &str) -> CgroupName {
    let path = path.trim();
    // a namespace's `..` and empty or `.` components name nothing
    let parts: Vec<&str> = path
        .split('/')
        .filter(|c| !c.is_empty() && *c != "." && *c != "..")
        .collect();
    if parts.is_empty() {
        return if path.split('/').all(|c| c.is_empty() || c == ".") {
            CgroupName::Root
        } else {
            CgroupName::Path(path.to_owned())
        };
    }
    if let Some(pod) = pod(&parts) {
        return pod;
    }
    // the innermost container: podman's inside a user's manager, Docker's
    // below a daemon's own cgroup
    for (i, c) in parts.iter().enumerate().rev() {
        let parent = i.checked_sub(1).map(|p| parts[p]);
        if let Some(c) = container(c, parent) {
            return CgroupName::Container(c);
        }
    }
    if let Some(unit) = parts.iter().rev().copied().find(|c| is_unit(c)) {
        return CgroupName::Unit {
            unit: unit.to_owned(),
            uid: user_of(&parts),
        };
    }
    CgroupName::Path(path.to_owned())
}

/// A pod's component and the container below it, if the path has one.
fn pod(parts: &[&str]) -> Option<CgroupName> {
    for (i, part) in parts.iter().enumerate() {
        let (uid, slice) = if let Some(stem) = part.strip_suffix(".slice") {
            // systemd driver: `kubepods-burstable-pod<uid>.slice`, the
            // uid's dashes written as underscores (a dash is systemd's
            // slice separator)
            let Some((prefix, uid)) = stem.rsplit_once("-pod") else {
                continue;
            };
            if !prefix.contains("kubepods") {
                continue;
            }
            (uid.replace('_', "-"), prefix.to_owned())
        } else if let Some(uid) = part.strip_prefix("pod") {
            // cgroupfs driver: `kubepods/burstable/pod<uid>`
            if !parts[..i].iter().any(|p| p.contains("kubepods")) {
                continue;
            }
            (uid.to_owned(), parts[..i].join("/"))
        } else {
            continue;
        };
        if !is_pod_uid(&uid) {
            continue;
        }
        let qos = if slice.contains("besteffort") {
            Qos::BestEffort
        } else if slice.contains("burstable") {
            Qos::Burstable
        } else {
            Qos::Guaranteed
        };
        let container = parts.get(i + 1).and_then(|c| in_pod(c));
        return Some(CgroupName::Pod {
            uid,
            qos,
            container,
        });
    }
    None
}

/// A pod's child: `<runtime>-<id>.scope` (systemd driver), `<id>` or
/// `crio-<id>` (cgroupfs driver).
fn in_pod(part: &str) -> Option<Container> {
    let stem = part.strip_suffix(".scope").unwrap_or(part);
    if is_container_id(stem) {
        return Some(Container {
            runtime: None,
            id: stem.to_owned(),
            monitor: false,
        });
    }
    prefixed(stem)
}

/// The runtimes' `prefix-<id>` names, monitors first (their prefix is the
/// longer one).
fn prefixed(stem: &str) -> Option<Container> {
    const PREFIXES: [(&str, Runtime, bool); 6] = [
        ("cri-containerd-", Runtime::Containerd, false),
        ("crio-conmon-", Runtime::CriO, true),
        ("crio-", Runtime::CriO, false),
        ("docker-", Runtime::Docker, false),
        ("libpod-conmon-", Runtime::Podman, true),
        ("libpod-", Runtime::Podman, false),
    ];
    PREFIXES.iter().find_map(|&(prefix, runtime, monitor)| {
        let id = stem.strip_prefix(prefix)?;
        is_container_id(id).then(|| Container {
            runtime: Some(runtime),
            id: id.to_owned(),
            monitor,
        })
    })
}

/// A container outside a pod: a runtime's scope unit, or a cgroupfs
/// manager's child of `docker` or `libpod_parent`.
fn container(part: &str, parent: Option<&str>) -> Option<Container> {
    if let Some(stem) = part.strip_suffix(".scope") {
        return prefixed(stem);
    }
    match parent {
        Some("docker") if is_container_id(part) => Some(Container {
            runtime: Some(Runtime::Docker),
            id: part.to_owned(),
            monitor: false,
        }),
        Some("libpod_parent") => prefixed(part).filter(|c| c.runtime == Some(Runtime::Podman)),
        _ => None,
    }
}

/// A systemd unit's name: a unit type's suffix after characters systemd
/// allows in a name.
fn is_unit(part: &str) -> bool {
    let Some((stem, _)) = [".service", ".scope", ".slice"]
        .iter()
        .find_map(|s| part.strip_suffix(s).map(|stem| (stem, s)))
    else {
        return false;
    };
    !stem.is_empty()
        && stem
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b":-_.\\@".contains(&b))
}

/// The user whose slice (`user-UID.slice`) or manager (`user@UID.service`)
/// holds the path.
fn user_of(parts: &[&str]) -> Option<u32> {
    parts.iter().find_map(|p| {
        p.strip_prefix("user-")
            .and_then(|r| r.strip_suffix(".slice"))
            .or_else(|| {
                p.strip_prefix("user@")
                    .and_then(|r| r.strip_suffix(".service"))
            })
            .and_then(|uid| uid.parse().ok())
    })
}

/// 64 lowercase hex digits: what Docker, containerd, CRI-O and podman name
/// a container by.
fn is_container_id(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A pod UID: a UUID (8-4-4-4-12 hex digits), or the 32 hex digits of a
/// static pod's manifest hash.
fn is_pod_uid(s: &str) -> bool {
    let hex = |p: &str| p.bytes().all(|b| b.is_ascii_hexdigit());
    let groups: Vec<&str> = s.split('-').collect();
    match groups.as_slice() {
        [one] => one.len() == 32 && hex(one),
        [a, b, c, d, e] => {
            [a.len(), b.len(), c.len(), d.len(), e.len()] == [8, 4, 4, 4, 12]
                && groups.iter().all(|g| hex(g))
        }
        _ => false,
    }
}

/// The first `n` characters and `…` (ids are ASCII).
fn short(id: &str, n: usize) -> String {
    if id.len() > n {
        format!("{}…", &id[..n])
    } else {
        id.to_owned()
    }
}

impl fmt::Display for Container {
    /// `container 1a2b3c4d5e6f…`, `docker 1a2b3c4d5e6f…`, `conmon …` for a monitor.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = if self.monitor {
            "conmon"
        } else {
            self.runtime.map_or("container", Runtime::name)
        };
        write!(f, "{what} {}", short(&self.id, 12))
    }
}

impl fmt::Display for CgroupName {
    /// The short form for tables: `pod 7f9c1b2e…/container 1a2b3c4d5e6f…`,
    /// `docker 1a2b3c4d5e6f…`, `foo.service`, `foo.scope (uid 1000)`, `/`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CgroupName::Pod { uid, container, .. } => {
                write!(f, "pod {}", short(uid, 8))?;
                match container {
                    Some(c) if c.monitor => write!(f, "/conmon {}", short(&c.id, 12)),
                    Some(c) => write!(f, "/container {}", short(&c.id, 12)),
                    None => Ok(()),
                }
            }
            CgroupName::Container(c) => c.fmt(f),
            CgroupName::Unit {
                unit,
                uid: Some(uid),
            } => write!(f, "{unit} (uid {uid})"),
            CgroupName::Unit { unit, uid: None } => f.write_str(unit),
            CgroupName::Root => f.write_str("/"),
            CgroupName::Path(p) => f.write_str(p),
        }
    }
}

/// Where the cpuset controller lives, which decides what can confine a
/// cgroup to some CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cpuset<'a> {
    /// On cgroup v2 (a unified host): systemd's `AllowedCPUs=` and a
    /// cgroup's `cpuset.cpus` work.
    Unified,
    /// On a v1 hierarchy (a hybrid or v1 host): systemd cannot set it, so
    /// the tasks are moved one by one. `mount` is where the path was read
    /// (its `cgroup.procs` lists the processes).
    Legacy {
        /// The mount point of the hierarchy the path belongs to.
        mount: &'a str,
    },
}

/// The command that keeps the tasks of the cgroup at `path` on `cpus` (a
/// CPU list, `0-1,4`), away from the CPUs it intruded on. Printed, never run.
pub fn keep_on(path: &str, cpus: &str, cpuset: Cpuset<'_>) -> String {
    let name = parse(path);
    let each_task = |mount: &str| {
        let dir = format!("{}/{}", mount.trim_end_matches('/'), path.trim_matches('/'));
        format!(
            "for p in $(cat {}/cgroup.procs); do taskset -a -c -p {cpus} \"$p\"; done",
            dir.trim_end_matches('/')
        )
    };
    // a container's monitor (conmon) is not in the container: its scope is
    // a systemd unit of its own
    let monitor = match &name {
        CgroupName::Pod {
            container: Some(c), ..
        }
        | CgroupName::Container(c) => c.monitor.then_some(c),
        _ => None,
    };
    if let Some(c) = monitor {
        let prefix = match c.runtime {
            Some(Runtime::CriO) => "crio-conmon",
            _ => "libpod-conmon",
        };
        return match cpuset {
            Cpuset::Unified => {
                format!(
                    "systemctl set-property {prefix}-{}.scope AllowedCPUs={cpus}",
                    c.id
                )
            }
            Cpuset::Legacy { mount } => each_task(mount),
        };
    }
    match (&name, cpuset) {
        // the runtime keeps a container's cpuset on either hierarchy
        (
            CgroupName::Pod {
                container: Some(c), ..
            },
            _,
        ) => format!("crictl update --cpuset-cpus {cpus} {}", c.id),
        (CgroupName::Pod { uid, .. }, _) => format!(
            "crictl pods -q --label io.kubernetes.pod.uid={uid} | xargs -n1 crictl ps -q --pod \
             | xargs crictl update --cpuset-cpus {cpus}"
        ),
        (CgroupName::Container(c), _) => match c.runtime {
            Some(Runtime::Docker) => format!("docker update --cpuset-cpus {cpus} {}", c.id),
            Some(Runtime::Podman) => format!("podman update --cpuset-cpus {cpus} {}", c.id),
            _ => format!("crictl update --cpuset-cpus {cpus} {}", c.id),
        },
        // a user's units: the user's slice, which the system manager
        // holds (the cpuset controller is not delegated to user managers)
        (CgroupName::Unit { uid: Some(uid), .. }, Cpuset::Unified) => {
            format!("systemctl set-property user-{uid}.slice AllowedCPUs={cpus}")
        }
        (CgroupName::Unit { unit, uid: None }, Cpuset::Unified) => {
            format!("systemctl set-property {unit} AllowedCPUs={cpus}")
        }
        (CgroupName::Path(p), Cpuset::Unified) => format!(
            "echo {cpus} > /sys/fs/cgroup/{}/cpuset.cpus (with cpuset in its parent's cgroup.subtree_control)",
            p.trim_matches('/')
        ),
        (CgroupName::Root, Cpuset::Unified) => each_task("/sys/fs/cgroup"),
        (CgroupName::Unit { unit, uid: None }, Cpuset::Legacy { mount })
            if unit.ends_with(".service") =>
        {
            format!(
                "{} (and CPUAffinity={cpus} in {unit}'s [Service] section, which lasts past a restart)",
                each_task(mount)
            )
        }
        (_, Cpuset::Legacy { mount }) => each_task(mount),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CID: &str = "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f809";
    const UID: &str = "7f9c1b2e-3d4a-4b5c-8d6e-0123456789ab";

    fn pod(qos: Qos, runtime: Option<Runtime>) -> CgroupName {
        CgroupName::Pod {
            uid: UID.into(),
            qos,
            container: Some(Container {
                runtime,
                id: CID.into(),
                monitor: false,
            }),
        }
    }

    fn unit(name: &str, uid: Option<u32>) -> CgroupName {
        CgroupName::Unit {
            unit: name.into(),
            uid,
        }
    }

    #[test]
    fn kubelet_systemd_driver_containerd() {
        let p = format!(
            "/kubepods.slice/kubepods-burstable.slice/\
             kubepods-burstable-pod7f9c1b2e_3d4a_4b5c_8d6e_0123456789ab.slice/\
             cri-containerd-{CID}.scope"
        );
        assert_eq!(parse(&p), pod(Qos::Burstable, Some(Runtime::Containerd)));
        assert_eq!(
            parse(&p).to_string(),
            "pod 7f9c1b2e…/container 1a2b3c4d5e6f…"
        );
    }

    #[test]
    fn kubelet_systemd_driver_guaranteed_and_besteffort() {
        let g = format!(
            "/kubepods.slice/kubepods-pod7f9c1b2e_3d4a_4b5c_8d6e_0123456789ab.slice/\
             cri-containerd-{CID}.scope"
        );
        assert_eq!(parse(&g), pod(Qos::Guaranteed, Some(Runtime::Containerd)));
        let b = format!(
            "/kubepods.slice/kubepods-besteffort.slice/\
             kubepods-besteffort-pod7f9c1b2e_3d4a_4b5c_8d6e_0123456789ab.slice/crio-{CID}.scope"
        );
        assert_eq!(parse(&b), pod(Qos::BestEffort, Some(Runtime::CriO)));
    }

    #[test]
    fn kubelet_systemd_driver_crio_monitor_and_cri_dockerd() {
        let m = format!(
            "/kubepods.slice/kubepods-burstable.slice/\
             kubepods-burstable-pod7f9c1b2e_3d4a_4b5c_8d6e_0123456789ab.slice/crio-conmon-{CID}.scope"
        );
        let CgroupName::Pod {
            container: Some(c), ..
        } = parse(&m)
        else {
            panic!("{:?}", parse(&m))
        };
        assert_eq!((c.runtime, c.monitor), (Some(Runtime::CriO), true));
        assert_eq!(parse(&m).to_string(), "pod 7f9c1b2e…/conmon 1a2b3c4d5e6f…");
        let d = format!(
            "/kubepods.slice/kubepods-burstable.slice/\
             kubepods-burstable-pod7f9c1b2e_3d4a_4b5c_8d6e_0123456789ab.slice/docker-{CID}.scope"
        );
        assert_eq!(parse(&d), pod(Qos::Burstable, Some(Runtime::Docker)));
    }

    #[test]
    fn kubelet_cgroupfs_driver() {
        let b = format!("/kubepods/burstable/pod{UID}/{CID}");
        assert_eq!(parse(&b), pod(Qos::Burstable, None));
        assert_eq!(
            parse(&b).to_string(),
            "pod 7f9c1b2e…/container 1a2b3c4d5e6f…"
        );
        let g = format!("/kubepods/pod{UID}/{CID}");
        assert_eq!(parse(&g), pod(Qos::Guaranteed, None));
        let e = format!("/kubepods/besteffort/pod{UID}/{CID}");
        assert_eq!(parse(&e), pod(Qos::BestEffort, None));
        // CRI-O under the cgroupfs manager keeps its prefix, without .scope
        let c = format!("/kubepods/burstable/pod{UID}/crio-{CID}");
        assert_eq!(parse(&c), pod(Qos::Burstable, Some(Runtime::CriO)));
    }

    #[test]
    fn a_pod_without_container_and_a_static_pod() {
        let p = "/kubepods.slice/kubepods-burstable.slice/\
                 kubepods-burstable-pod7f9c1b2e_3d4a_4b5c_8d6e_0123456789ab.slice";
        assert_eq!(
            parse(p),
            CgroupName::Pod {
                uid: UID.into(),
                qos: Qos::Burstable,
                container: None
            }
        );
        assert_eq!(parse(p).to_string(), "pod 7f9c1b2e…");
        // a static pod's UID is its manifest's hash: 32 hex digits
        let s = format!(
            "/kubepods.slice/kubepods-besteffort.slice/\
             kubepods-besteffort-pod0a1b2c3d4e5f60718293a4b5c6d7e8f9.slice/cri-containerd-{CID}.scope"
        );
        let CgroupName::Pod { uid, qos, .. } = parse(&s) else {
            panic!()
        };
        assert_eq!(
            (uid.as_str(), qos),
            ("0a1b2c3d4e5f60718293a4b5c6d7e8f9", Qos::BestEffort)
        );
    }

    #[test]
    fn kind_nodes_and_a_container_with_its_own_cgroup_namespace() {
        // kind runs kubelet with --cgroup-root=/kubelet: every slice gains
        // its prefix
        let k = format!(
            "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-burstable.slice/\
             kubelet-kubepods-burstable-pod7f9c1b2e_3d4a_4b5c_8d6e_0123456789ab.slice/\
             cri-containerd-{CID}.scope"
        );
        assert_eq!(parse(&k), pod(Qos::Burstable, Some(Runtime::Containerd)));
        // read from a pod (noisetop's own) in its own cgroup namespace: the
        // path climbs out of the namespace's root first
        let ns = format!(
            "/../../kubepods-burstable-pod7f9c1b2e_3d4a_4b5c_8d6e_0123456789ab.slice/\
             cri-containerd-{CID}.scope"
        );
        assert_eq!(parse(&ns), pod(Qos::Burstable, Some(Runtime::Containerd)));
    }

    #[test]
    fn docker() {
        let c = CgroupName::Container(Container {
            runtime: Some(Runtime::Docker),
            id: CID.into(),
            monitor: false,
        });
        assert_eq!(parse(&format!("/system.slice/docker-{CID}.scope")), c);
        assert_eq!(parse(&format!("/docker/{CID}")), c);
        assert_eq!(c.to_string(), "docker 1a2b3c4d5e6f…");
        // the daemon itself is a unit
        assert_eq!(
            parse("/system.slice/docker.service"),
            unit("docker.service", None)
        );
        // a docker directory whose child is no id is a plain path
        assert_eq!(
            parse("/docker/buildkit"),
            CgroupName::Path("/docker/buildkit".into())
        );
    }

    #[test]
    fn podman_root_rootless_and_cgroupfs() {
        let c = CgroupName::Container(Container {
            runtime: Some(Runtime::Podman),
            id: CID.into(),
            monitor: false,
        });
        assert_eq!(parse(&format!("/machine.slice/libpod-{CID}.scope")), c);
        // crun's sub-cgroup of the container's scope
        assert_eq!(
            parse(&format!("/machine.slice/libpod-{CID}.scope/container")),
            c
        );
        assert_eq!(parse(&format!("/libpod_parent/libpod-{CID}")), c);
        assert_eq!(
            parse(&format!(
                "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-{CID}.scope"
            )),
            c
        );
        assert_eq!(c.to_string(), "podman 1a2b3c4d5e6f…");
        let m = parse(&format!("/machine.slice/libpod-conmon-{CID}.scope"));
        assert_eq!(m.to_string(), "conmon 1a2b3c4d5e6f…");
    }

    #[test]
    fn systemd_units() {
        assert_eq!(
            parse("/system.slice/foo.service"),
            unit("foo.service", None)
        );
        assert_eq!(
            parse("/system.slice/system-getty.slice/getty@tty1.service"),
            unit("getty@tty1.service", None)
        );
        assert_eq!(parse("/init.scope"), unit("init.scope", None));
        // a delegated unit's own sub-cgroups belong to it
        assert_eq!(
            parse("/system.slice/containerd.service/workers"),
            unit("containerd.service", None)
        );
        assert_eq!(
            parse("/system.slice/foo.service").to_string(),
            "foo.service"
        );
    }

    #[test]
    fn a_users_units_and_sessions() {
        let u = parse("/user.slice/user-1000.slice/user@1000.service/app.slice/foo.scope");
        assert_eq!(u, unit("foo.scope", Some(1000)));
        assert_eq!(u.to_string(), "foo.scope (uid 1000)");
        assert_eq!(
            parse("/user.slice/user-1000.slice/session-3.scope"),
            unit("session-3.scope", Some(1000))
        );
        assert_eq!(
            parse("/user.slice/user-0.slice/user@0.service/init.scope"),
            unit("init.scope", Some(0))
        );
    }

    #[test]
    fn the_root_and_other_paths() {
        assert_eq!(parse("/"), CgroupName::Root);
        assert_eq!(parse("/\n"), CgroupName::Root);
        assert_eq!(parse("/..").to_string(), "/..");
        assert_eq!(
            parse("/process_api/c813833648806abc"),
            CgroupName::Path("/process_api/c813833648806abc".into())
        );
        // a pod-like name outside kubepods, an id one digit short, capitals
        assert!(matches!(
            parse(&format!("/pod{UID}/{CID}")),
            CgroupName::Path(_)
        ));
        assert!(matches!(
            parse(&format!("/docker/{}", &CID[1..])),
            CgroupName::Path(_)
        ));
        assert!(matches!(
            parse(&format!("/docker/{}", CID.to_uppercase())),
            CgroupName::Path(_)
        ));
        assert!(matches!(
            parse("/kubepods/burstable/pod7f9c1b2e-3d4a"),
            CgroupName::Path(_)
        ));
        // a slice with a character systemd refuses is no unit
        assert!(matches!(parse("/foo bar.service"), CgroupName::Path(_)));
    }

    #[test]
    fn fixes_for_containers_on_either_hierarchy() {
        let legacy = Cpuset::Legacy {
            mount: "/sys/fs/cgroup/unified",
        };
        for cpuset in [Cpuset::Unified, legacy] {
            assert_eq!(
                keep_on(&format!("/system.slice/docker-{CID}.scope"), "0-1", cpuset),
                format!("docker update --cpuset-cpus 0-1 {CID}")
            );
            assert_eq!(
                keep_on(&format!("/machine.slice/libpod-{CID}.scope"), "0", cpuset),
                format!("podman update --cpuset-cpus 0 {CID}")
            );
            assert_eq!(
                keep_on(
                    &format!("/kubepods/burstable/pod{UID}/{CID}"),
                    "0,2",
                    cpuset
                ),
                format!("crictl update --cpuset-cpus 0,2 {CID}")
            );
        }
        assert_eq!(
            keep_on(
                "/kubepods.slice/kubepods-burstable.slice/\
                 kubepods-burstable-pod7f9c1b2e_3d4a_4b5c_8d6e_0123456789ab.slice",
                "0",
                Cpuset::Unified
            ),
            format!(
                "crictl pods -q --label io.kubernetes.pod.uid={UID} | xargs -n1 crictl ps -q --pod \
                 | xargs crictl update --cpuset-cpus 0"
            )
        );
        assert_eq!(
            keep_on(
                &format!("/machine.slice/libpod-conmon-{CID}.scope"),
                "0",
                Cpuset::Unified
            ),
            format!("systemctl set-property libpod-conmon-{CID}.scope AllowedCPUs=0")
        );
        // a pod's monitor is outside its containers
        assert_eq!(
            keep_on(
                &format!(
                    "/kubepods.slice/kubepods-burstable.slice/\
                     kubepods-burstable-pod7f9c1b2e_3d4a_4b5c_8d6e_0123456789ab.slice/\
                     crio-conmon-{CID}.scope"
                ),
                "0",
                Cpuset::Unified
            ),
            format!("systemctl set-property crio-conmon-{CID}.scope AllowedCPUs=0")
        );
    }

    #[test]
    fn fixes_for_units_and_paths() {
        let u = Cpuset::Unified;
        assert_eq!(
            keep_on("/system.slice/foo.service", "0-1", u),
            "systemctl set-property foo.service AllowedCPUs=0-1"
        );
        assert_eq!(
            keep_on(
                "/user.slice/user-1000.slice/user@1000.service/app.slice/foo.scope",
                "0",
                u
            ),
            "systemctl set-property user-1000.slice AllowedCPUs=0"
        );
        assert_eq!(
            keep_on("/batch/job7", "0", u),
            "echo 0 > /sys/fs/cgroup/batch/job7/cpuset.cpus \
             (with cpuset in its parent's cgroup.subtree_control)"
        );
        assert_eq!(
            keep_on("/", "0", u),
            "for p in $(cat /sys/fs/cgroup/cgroup.procs); do taskset -a -c -p 0 \"$p\"; done"
        );
        let legacy = Cpuset::Legacy {
            mount: "/sys/fs/cgroup/unified/",
        };
        assert_eq!(
            keep_on("/noisy", "0", legacy),
            "for p in $(cat /sys/fs/cgroup/unified/noisy/cgroup.procs); \
             do taskset -a -c -p 0 \"$p\"; done"
        );
        assert_eq!(
            keep_on("/system.slice/foo.service", "0", legacy),
            "for p in $(cat /sys/fs/cgroup/unified/system.slice/foo.service/cgroup.procs); \
             do taskset -a -c -p 0 \"$p\"; done (and CPUAffinity=0 in foo.service's [Service] \
             section, which lasts past a restart)"
        );
        assert_eq!(
            keep_on("/", "1", legacy),
            "for p in $(cat /sys/fs/cgroup/unified/cgroup.procs); do taskset -a -c -p 1 \"$p\"; done"
        );
    }
}
