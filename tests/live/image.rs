//! The container image, run as the `DaemonSet` runs it. `scripts/build-image`
//! builds it with buildah; its root filesystem is mounted (`buildah from`,
//! `buildah mount`) and its entrypoint started chrooted there the way a
//! container runtime starts this pod: in a mount and a network namespace of
//! its own (the host's pid namespace: `hostPID`), with the runtime's /proc,
//! read-only /sys and /dev, then exactly the manifest's volume mounts
//! (read-only where it says so, `HostToContainer` as slave mounts), the root
//! read-only, its arguments, its user, and only its capabilities (capsh:
//! the bounding set, no new privileges). A real Prometheus in the pod's
//! network namespace scrapes the port and path of the pod's annotations and
//! finds the target up, with every CPU's series, perf's context switches
//! among them (`CAP_PERFMON` was enough to open them).
//!
//! Every one of those settings is read from
//! `assets/kubernetes/noisetop-daemonset.yaml`, so the manifest and this
//! test cannot drift apart. podman cannot run the image on every host (it
//! needs `CAP_SYS_RESOURCE` for rlimits, and a cgroup v2 host): hence the
//! runtime's steps done here by hand.

use crate::packaging;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use packaging::{Kid, missing, repo, root, run, script, text};
use serde_norway::Value;

/// The capabilities by number, as linux/capability.h names them (less `CAP_`).
const CAPS: [&str; 41] = [
    "CHOWN",
    "DAC_OVERRIDE",
    "DAC_READ_SEARCH",
    "FOWNER",
    "FSETID",
    "KILL",
    "SETGID",
    "SETUID",
    "SETPCAP",
    "LINUX_IMMUTABLE",
    "NET_BIND_SERVICE",
    "NET_BROADCAST",
    "NET_ADMIN",
    "NET_RAW",
    "IPC_LOCK",
    "IPC_OWNER",
    "SYS_MODULE",
    "SYS_RAWIO",
    "SYS_CHROOT",
    "SYS_PTRACE",
    "SYS_PACCT",
    "SYS_ADMIN",
    "SYS_BOOT",
    "SYS_NICE",
    "SYS_RESOURCE",
    "SYS_TIME",
    "SYS_TTY_CONFIG",
    "MKNOD",
    "LEASE",
    "AUDIT_WRITE",
    "AUDIT_CONTROL",
    "SETFCAP",
    "MAC_OVERRIDE",
    "MAC_ADMIN",
    "SYSLOG",
    "WAKE_ALARM",
    "BLOCK_SUSPEND",
    "AUDIT_READ",
    "PERFMON",
    "BPF",
    "CHECKPOINT_RESTORE",
];

/// One volume mount of the container, joined with its volume.
#[derive(Debug)]
struct Mount {
    host: String,
    at: String,
    read_only: bool,
    host_to_container: bool,
    create: bool,
}

/// What the manifest says about running the noisetop container.
#[derive(Debug)]
struct PodSpec {
    args: Vec<String>,
    host_pid: bool,
    uid: u64,
    read_only_root: bool,
    no_new_privs: bool,
    caps: Vec<String>,
    mounts: Vec<Mount>,
    scrape_port: u16,
    scrape_path: String,
    readiness: (String, u16),
}

fn manifest_path() -> PathBuf {
    repo().join("assets/kubernetes/noisetop-daemonset.yaml")
}

/// Reads the `DaemonSet` out of the manifest's documents.
fn pod_spec(text: &str) -> PodSpec {
    use serde::Deserialize as _;
    let ds = serde_norway::Deserializer::from_str(text)
        .map(|d| Value::deserialize(d).expect("valid YAML"))
        .find(|d| d["kind"] == "DaemonSet")
        .expect("the manifest has a DaemonSet");
    let tpl = &ds["spec"]["template"];
    let spec = &tpl["spec"];
    let c = spec["containers"]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "noisetop")
        .expect("a container named noisetop");
    let s = |v: &Value| {
        v.as_str()
            .unwrap_or_else(|| panic!("a string: {v:?}"))
            .to_owned()
    };
    let sc = &c["securityContext"];
    let caps = &sc["capabilities"];
    let drop: Vec<String> = caps["drop"].as_sequence().unwrap().iter().map(s).collect();
    assert_eq!(
        drop,
        ["ALL"],
        "every capability is dropped, then the needed ones added"
    );
    assert_ne!(sc["privileged"].as_bool(), Some(true), "not privileged");
    let volumes = spec["volumes"].as_sequence().unwrap();
    let mounts = c["volumeMounts"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|m| {
            let v = volumes
                .iter()
                .find(|v| v["name"] == m["name"])
                .expect("each mount's volume");
            let hp = &v["hostPath"];
            let kind = hp["type"].as_str().unwrap_or("");
            assert!(
                ["", "Directory", "DirectoryOrCreate"].contains(&kind),
                "hostPath type {kind}: the test mounts directories"
            );
            Mount {
                host: s(&hp["path"]),
                at: s(&m["mountPath"]),
                read_only: m["readOnly"].as_bool().unwrap_or(false),
                host_to_container: m["mountPropagation"] == "HostToContainer",
                create: kind == "DirectoryOrCreate",
            }
        })
        .collect();
    let ann = &tpl["metadata"]["annotations"];
    let port_of = |name: &Value| -> u16 {
        name.as_u64().map_or_else(
            || {
                let p = c["ports"]
                    .as_sequence()
                    .unwrap()
                    .iter()
                    .find(|p| p["name"] == *name)
                    .expect("the named port");
                p["containerPort"].as_u64().unwrap() as u16
            },
            |n| n as u16,
        )
    };
    let probe = &c["readinessProbe"]["httpGet"];
    PodSpec {
        args: c["args"].as_sequence().unwrap().iter().map(s).collect(),
        host_pid: spec["hostPID"].as_bool().unwrap_or(false),
        uid: sc["runAsUser"].as_u64().expect("runAsUser"),
        read_only_root: sc["readOnlyRootFilesystem"].as_bool().unwrap_or(false),
        no_new_privs: sc["allowPrivilegeEscalation"].as_bool() == Some(false),
        caps: caps["add"].as_sequence().unwrap().iter().map(s).collect(),
        mounts,
        scrape_port: s(&ann["prometheus.io/port"]).parse().unwrap(),
        scrape_path: s(&ann["prometheus.io/path"]),
        readiness: (s(&probe["path"]), port_of(&probe["port"])),
    }
}

/// The capability mask of these names (as the manifest writes them).
fn mask(names: &[String]) -> u64 {
    names.iter().fold(0, |m, n| {
        let i = CAPS
            .iter()
            .position(|c| c == n)
            .unwrap_or_else(|| panic!("unknown capability {n}"));
        m | 1 << i
    })
}

#[test]
fn the_manifest_reads_as_the_test_expects() {
    let _turn = crate::turn::take();
    let p = pod_spec(&std::fs::read_to_string(manifest_path()).unwrap());
    assert_eq!(p.args[0], "serve");
    assert!(p.host_pid && p.read_only_root && p.no_new_privs);
    assert_eq!(p.uid, 0);
    // PERFMON: perf counters and tracepoints; SYS_RAWIO: MSR reads; BPF:
    // the in-kernel accounting of who ran, whose programs load with
    // CAP_BPF and CAP_PERFMON
    assert_eq!(
        mask(&p.caps),
        1 << 17 | 1 << 38 | 1 << 39,
        "SYS_RAWIO, PERFMON and BPF: {:?}",
        p.caps
    );
    let at: Vec<(&str, &str, bool)> = p
        .mounts
        .iter()
        .map(|m| (m.host.as_str(), m.at.as_str(), m.read_only))
        .collect();
    assert_eq!(
        at,
        [
            ("/proc", "/host/proc", true),
            ("/sys", "/host/sys", true),
            ("/dev/cpu", "/host/dev/cpu", true)
        ]
    );
    assert!(p.args.iter().any(|a| a == "--root=/host"));
    assert_eq!((p.scrape_port, p.scrape_path.as_str()), (9877, "/metrics"));
    assert_eq!(p.readiness, (p.scrape_path.clone(), p.scrape_port));
}

/// Why this machine cannot run the image test, if it cannot.
fn unable() -> Option<String> {
    if !root() {
        return Some("needs root (buildah's storage, namespaces, chroot)".into());
    }
    missing(&[
        "buildah",
        "unshare",
        "nsenter",
        "capsh",
        "ip",
        "prometheus",
        "promtool",
        "readelf",
    ])
}

/// What buildah made, removed when dropped: the working container (its
/// mount too) and the image.
struct Made {
    image: String,
    container: Option<String>,
}

impl Drop for Made {
    fn drop(&mut self) {
        if let Some(c) = &self.container {
            let _ = Command::new("buildah").args(["umount", c]).output();
            let _ = Command::new("buildah").args(["rm", c]).output();
        }
        let _ = Command::new("buildah")
            .args(["rmi", "-f", &self.image])
            .output();
    }
}

/// Quotes a word for sh.
fn q(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The shell steps of a runtime starting the container at `root` as `p`
/// says, ending in the exec of its entrypoint.
fn runtime_script(p: &PodSpec, root: &str, entrypoint: &[String]) -> String {
    let r = q(root);
    let mut s = vec![
        "set -e".to_owned(),
        // the pod's network namespace has its loopback down until told
        "ip link set lo up".to_owned(),
    ];
    // mount points, made in the container's writable layer as runtimes do
    for dir in ["proc", "sys", "dev"]
        .iter()
        .map(|d| format!("/{d}"))
        .chain(p.mounts.iter().map(|m| m.at.clone()))
    {
        s.push(format!("mkdir -p {r}{}", q(&dir)));
    }
    s.push(format!("mount --bind {r} {r}"));
    if p.read_only_root {
        s.push(format!("mount -o remount,bind,ro {r}"));
    }
    s.push(format!("mount -t proc proc {r}/proc"));
    s.push(format!(
        "mount -t sysfs -o ro,nosuid,nodev,noexec sysfs {r}/sys"
    ));
    s.push(format!("mount -t tmpfs -o nosuid,mode=755 tmpfs {r}/dev"));
    for m in &p.mounts {
        let at = format!("{r}{}", q(&m.at));
        if m.create {
            s.push(format!("mkdir -p {}", q(&m.host)));
        }
        s.push(format!("mount --rbind {} {at}", q(&m.host)));
        if m.read_only {
            s.push(format!("mount -o remount,bind,ro {at}"));
        }
        let propagation = if m.host_to_container {
            "--make-rslave"
        } else {
            "--make-rprivate"
        };
        s.push(format!("mount {propagation} {at}"));
    }
    // uid 0 holds after exec exactly its bounding set: every other
    // capability is dropped from it
    let last: usize = std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let keep = mask(&p.caps);
    let drop: Vec<String> = (0..=last)
        .filter(|i| keep & 1 << i == 0)
        .map(|i| i.to_string())
        .collect();
    let mut exec = format!(
        "exec capsh --chroot={r} --uid={} --drop={}",
        p.uid,
        drop.join(",")
    );
    if p.no_new_privs {
        exec.push_str(" --no-new-privs");
    }
    exec.push_str(" --shell=");
    exec.push_str(&q(&entrypoint[0]));
    exec.push_str(" --");
    for a in entrypoint[1..].iter().chain(&p.args) {
        exec.push(' ');
        exec.push_str(&q(a));
    }
    s.push(exec);
    s.join("\n")
}

/// The pod's network namespace, for the processes that join it.
fn in_pod(pid: u32, program: &str) -> Command {
    let mut c = Command::new("nsenter");
    c.arg(format!("--net=/proc/{pid}/ns/net"))
        .arg("--")
        .arg(program);
    c
}

/// An instant query of the Prometheus in the pod's network namespace:
/// each series' labels and value.
fn query(pid: u32, prom: &str, q: &str) -> Vec<(serde_json::Value, f64)> {
    let out = in_pod(pid, "promtool")
        .args(["query", "instant", "-o", "json", prom, q])
        .output()
        .unwrap();
    if !out.status.success() {
        eprintln!("promtool: {}", String::from_utf8_lossy(&out.stderr));
        return Vec::new();
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| {
                    let x = s["value"][1].as_str()?.parse().ok()?;
                    Some((s["metric"].clone(), x))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn online_cpus() -> usize {
    std::fs::read_to_string("/proc/stat")
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .count()
}

#[test]
fn the_image_runs_as_the_daemonset_says_and_prometheus_scrapes_it() {
    let _turn = crate::turn::take();
    if let Some(why) = unable() {
        eprintln!("skipped: {why}");
        return;
    }
    let p = pod_spec(&std::fs::read_to_string(manifest_path()).unwrap());
    assert!(
        p.host_pid,
        "the pod shares the host's pid namespace: the test runs it there"
    );
    let tag = format!("localhost/noisetop-image-test:{}", std::process::id());
    let started = Instant::now();
    let mut made = Made {
        image: tag.clone(),
        container: None,
    };
    let built = run(script("build-image").arg(&tag));
    assert_eq!(text(&built), tag, "the script prints the image's name");
    eprintln!("image built in {:.0} s", started.elapsed().as_secs_f64());

    // the image: a scratch image holding the binary, run as its entrypoint
    let inspect: serde_json::Value = serde_json::from_slice(
        &run(Command::new("buildah").args(["inspect", "--type", "image", &tag])).stdout,
    )
    .unwrap();
    let config = &inspect["OCIv1"]["config"];
    let entrypoint: Vec<String> = config["Entrypoint"]
        .as_array()
        .expect("an entrypoint")
        .iter()
        .map(|a| a.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(entrypoint, ["/noisetop"]);
    assert_eq!(config["User"], "0:0");
    let layers = inspect["OCIv1"]["rootfs"]["diff_ids"]
        .as_array()
        .map_or(0, Vec::len);
    assert_eq!(layers, 1, "one layer: {inspect}");
    let ctr = text(&run(Command::new("buildah").args([
        "from",
        "--pull-never",
        &tag,
    ])));
    made.container = Some(ctr.clone());
    let rootfs = text(&run(Command::new("buildah").args(["mount", &ctr])));
    let files: Vec<String> = std::fs::read_dir(&rootfs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files, ["noisetop"], "the image holds the binary alone");
    let bin = Path::new(&rootfs).join("noisetop");
    let header = text(&run(Command::new("readelf").arg("-l").arg(&bin)));
    assert!(
        !header.contains("interpreter"),
        "statically linked: no dynamic loader"
    );
    eprintln!("binary {} bytes", std::fs::metadata(&bin).unwrap().len());

    // the pod
    let logs = tempfile::tempdir().unwrap();
    let stderr = std::fs::File::create(logs.path().join("noisetop.err")).unwrap();
    let script = runtime_script(&p, &rootfs, &entrypoint);
    let mut pod = Kid(Command::new("unshare")
        .args(["--mount", "--net", "--propagation", "slave", "sh", "-c"])
        .arg(&script)
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .env("HOSTNAME", "noisetop-test")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap());
    let pid = pod.0.id();
    // the pod's network namespace exists once unshare has made it: until
    // then /proc/PID/ns/net is the test's own, and a Prometheus entered
    // there listens and scrapes on the host, where promtool in the pod
    // then finds nothing (every query refused, `up: []`)
    let own_net = std::fs::read_link("/proc/self/ns/net").unwrap();
    let made_at = Instant::now();
    while std::fs::read_link(format!("/proc/{pid}/ns/net")).ok() == Some(own_net.clone()) {
        assert!(
            made_at.elapsed() < Duration::from_secs(10),
            "the pod made no network namespace"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let log = || std::fs::read_to_string(logs.path().join("noisetop.err")).unwrap_or_default();

    // Prometheus beside it, as a scraper of the pod network would be
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("prometheus.yml");
    std::fs::write(
        &cfg,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n\
             scrape_configs:\n  - job_name: noisetop\n    metrics_path: {}\n    \
             static_configs:\n      - targets: ['127.0.0.1:{}']\n",
            p.scrape_path, p.scrape_port
        ),
    )
    .unwrap();
    let prom_at = "127.0.0.1:9090";
    let prom_url = format!("http://{prom_at}");
    let _prom = Kid(in_pod(pid, "prometheus")
        .arg(format!("--config.file={}", cfg.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.path().join("data").display()
        ))
        .arg(format!("--web.listen-address={prom_at}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap());

    // until three scrapes found it up (a loaded machine starts both late,
    // and a scrape before noisetop listens finds it down)
    let start = Instant::now();
    let scrapes = || {
        query(pid, &prom_url, "sum_over_time(up{job=\"noisetop\"}[5m])")
            .first()
            .map_or(0.0, |s| s.1)
    };
    while scrapes() < 3.0 {
        if let Some(end) = pod.0.try_wait().unwrap() {
            panic!("the pod ended ({end}):\n{}", log());
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "Prometheus never found noisetop up three times; noisetop said:\n{}\nup: {:?}",
            log(),
            query(pid, &prom_url, "up")
        );
        std::thread::sleep(Duration::from_secs(1));
    }

    // the process holds what the manifest gives it, and nothing more
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_owned())
            .unwrap_or_default()
    };
    assert_eq!(field("Name:"), "noisetop");
    let want = format!("{:016x}", mask(&p.caps));
    for set in ["CapEff:", "CapPrm:", "CapBnd:"] {
        assert_eq!(field(set), want, "{set}\n{status}");
    }
    assert_eq!(field("CapInh:"), "0000000000000000");
    assert_eq!(field("CapAmb:"), "0000000000000000");
    assert_eq!(field("NoNewPrivs:"), if p.no_new_privs { "1" } else { "0" });
    let uid = field("Uid:");
    assert!(
        uid.split_whitespace().all(|u| u == p.uid.to_string()),
        "{uid}"
    );
    // its mounts as it sees them: read-only where the manifest says
    let mountinfo = std::fs::read_to_string(format!("/proc/{pid}/mountinfo")).unwrap();
    let options = |at: &str| {
        mountinfo
            .lines()
            .rfind(|l| l.split(' ').nth(4) == Some(at))
            .and_then(|l| l.split(' ').nth(5))
            .unwrap_or_else(|| panic!("{at} is mounted:\n{mountinfo}"))
            .to_owned()
    };
    assert_eq!(options("/").starts_with("ro"), p.read_only_root);
    for m in &p.mounts {
        assert_eq!(options(&m.at).starts_with("ro"), m.read_only, "{}", m.at);
    }

    // every CPU's series, perf's among them
    let cpus = online_cpus();
    for metric in [
        "noisetop_cpu_busy_ratio",
        "noisetop_cpu_interrupts_total",
        "noisetop_cpu_context_switches_total",
    ] {
        let series = query(pid, &prom_url, metric);
        assert_eq!(
            series.len(),
            cpus,
            "{metric}: one series per CPU: {series:?}\nnoisetop said:\n{}\nunavailable: {:?}",
            log(),
            query(pid, &prom_url, "noisetop_metric_unavailable")
        );
    }
    // noisetop says it samples, beside Prometheus's own up
    let up = query(pid, &prom_url, "noisetop_up");
    assert_eq!(
        up.iter().map(|u| u.1).collect::<Vec<_>>(),
        [1.0],
        "noisetop_up: {up:?}"
    );
    let version = query(pid, &prom_url, "noisetop_build_info");
    assert_eq!(
        version.first().map(|v| v.0["version"].clone()),
        Some(env!("CARGO_PKG_VERSION").into())
    );
    for (labels, _) in query(pid, &prom_url, "noisetop_metric_unavailable") {
        eprintln!(
            "unavailable here: {} ({})",
            labels["metric"], labels["reason"]
        );
    }
    eprintln!("the pod answered in {:.0} s", start.elapsed().as_secs_f64());
    drop(pod);
    drop(made);
    let left = Command::new("buildah")
        .args(["inspect", "--type", "image", &tag])
        .output()
        .unwrap();
    assert!(!left.status.success(), "the test's image is removed");
}
