//! The systemd unit for `noisetop serve` (`assets/systemd/noisetop.service`)
//! holds what it says. systemd-analyze scores its sandbox offline and finds
//! each setting the unit relies on. noisetop serve started with the unit's
//! capability sets and no new privileges (setpriv, as systemd would set
//! them for `User=root`) holds those capabilities and no other, and opens
//! its per-CPU perf counters; without `CAP_PERFMON` it cannot, so the
//! capability list is what makes them open. Every system call it makes
//! while serving and tracing (strace) is one that `SystemCallFilter=`
//! allows, or one the unit names as refused on purpose.

use crate::packaging;

use std::collections::BTreeSet;
use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use packaging::{Kid, missing, repo, root, run, text};

/// The values of `key` in the unit's `[Service]` section, in order.
fn service(key: &str) -> Vec<String> {
    let unit = std::fs::read_to_string(unit_path()).unwrap();
    let mut section = "";
    let mut out = Vec::new();
    for line in unit.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line;
        } else if section == "[Service]"
            && !line.starts_with('#')
            && let Some((k, v)) = line.split_once('=')
            && k == key
        {
            out.push(v.to_owned());
        }
    }
    out
}

fn unit_path() -> PathBuf {
    repo().join("assets/systemd/noisetop.service")
}

/// The unit's capabilities as setpriv spells them (`+perfmon,+bpf`).
fn caps(key: &str) -> String {
    let v = service(key);
    assert_eq!(v.len(), 1, "one {key}= line");
    v[0].split_whitespace()
        .map(|c| format!("+{}", c.strip_prefix("CAP_").unwrap().to_ascii_lowercase()))
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn systemd_analyze_finds_the_sandbox_the_unit_describes() {
    let _turn = crate::turn::take();
    if let Some(why) = missing(&["systemd-analyze"]) {
        eprintln!("skipped: {why}");
        return;
    }
    let out = Command::new("systemd-analyze")
        .args(["security", "--offline=yes", "--no-pager"])
        .arg(unit_path())
        .output()
        .unwrap();
    let report =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let level: f64 = report
        .lines()
        .find_map(|l| l.split_once("Overall exposure level for noisetop.service: "))
        .and_then(|(_, v)| v.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no exposure level:\n{report}"));
    eprintln!("exposure level {level}");
    assert!(level <= 3.0, "the sandbox loosened: {level}\n{report}");
    // each of these is set, and systemd reads it as set
    for check in [
        "NoNewPrivileges=",
        "ProtectSystem=",
        "PrivateTmp=",
        "ProtectKernelTunables=",
        "ProtectKernelModules=",
        "ProtectControlGroups=",
        "RestrictNamespaces=~user",
        "RestrictSUIDSGID=",
        "MemoryDenyWriteExecute=",
        "LockPersonality=",
        "RestrictRealtime=",
        "SystemCallArchitectures=",
        "CapabilityBoundingSet=~CAP_SYS_ADMIN",
        "CapabilityBoundingSet=~CAP_(DAC_*|FOWNER|IPC_OWNER)",
        "CapabilityBoundingSet=~CAP_SYS_PTRACE",
        "RestrictAddressFamilies=~AF_NETLINK",
    ] {
        let line = report
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(check))
            .unwrap_or_else(|| panic!("{check} not assessed:\n{report}"));
        assert!(line.starts_with('✓'), "{line}");
    }
}

/// The body of GET /metrics, once it answers (at most 30 s).
fn metrics(port: u16) -> String {
    let start = Instant::now();
    loop {
        let got = TcpStream::connect(("127.0.0.1", port)).and_then(|mut s| {
            s.set_read_timeout(Some(Duration::from_secs(10)))?;
            s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")?;
            let mut body = String::new();
            s.read_to_string(&mut body)?;
            Ok(body)
        });
        if let Ok(reply) = got
            && reply.starts_with("HTTP/1.1 200")
            && reply.contains("noisetop_samples_total")
        {
            return reply;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "serve did not answer on {port}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap()
}

/// `ExecStart=`'s arguments after the program, with the installed config
/// read from the repository and `$NOISETOP_ARGS` replaced by `extra`.
fn exec_args(extra: &[String]) -> Vec<String> {
    let exec = service("ExecStart");
    let mut words = exec[0].split_whitespace();
    assert_eq!(words.next(), Some("/usr/bin/noisetop"));
    let mut args = Vec::new();
    for w in words {
        match w {
            "$NOISETOP_ARGS" => args.extend(extra.iter().cloned()),
            "/etc/noisetop/noisetop.toml" => args.push(
                repo()
                    .join("assets/noisetop.toml")
                    .to_string_lossy()
                    .into_owned(),
            ),
            w => args.push(w.to_owned()),
        }
    }
    args
}

/// setpriv's arguments for the unit's capability sets with these
/// capabilities left out of each.
fn setpriv(without: &[&str]) -> Vec<String> {
    let strip = |set: String| {
        set.split(',')
            .filter(|c| !without.contains(&c.trim_start_matches('+')))
            .fold(String::new(), |all, c| all + "," + c)
    };
    let bounding = strip(caps("CapabilityBoundingSet"));
    let ambient = strip(caps("AmbientCapabilities"));
    assert_eq!(service("NoNewPrivileges"), ["yes"]);
    assert_eq!(service("User"), ["root"]);
    vec![
        format!("--bounding-set=-all{bounding}"),
        format!("--inh-caps=-all{ambient}"),
        format!("--ambient-caps=-all{ambient}"),
        "--nnp".into(),
        "--".into(),
    ]
}

#[test]
fn serve_with_the_units_capabilities_holds_them_and_opens_perf() {
    let _turn = crate::turn::take();
    if !root() {
        eprintln!("skipped: needs root (the unit runs as root)");
        return;
    }
    if let Some(why) = missing(&["setpriv"]) {
        eprintln!("skipped: {why}");
        return;
    }
    let start = |without: &[&str]| {
        let port = free_port();
        let kid = Kid(Command::new("setpriv")
            .args(setpriv(without))
            .arg(env!("CARGO_BIN_EXE_noisetop"))
            .args(exec_args(&[
                "--listen".into(),
                format!("127.0.0.1:{port}"),
                "--interval".into(),
                "500ms".into(),
            ]))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap());
        (kid, port)
    };
    let (kid, port) = start(&[]);
    let first = metrics(port);
    let status = std::fs::read_to_string(format!("/proc/{}/status", kid.0.id())).unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_owned())
            .unwrap()
    };
    // PERFMON 38, BPF 39, SYS_RAWIO 17
    let want = format!("{:016x}", 1u64 << 38 | 1 << 39 | 1 << 17);
    for set in ["CapEff:", "CapPrm:", "CapBnd:", "CapAmb:"] {
        assert_eq!(field(set), want, "{set}\n{status}");
    }
    assert_eq!(field("NoNewPrivs:"), "1");
    let cpus = std::fs::read_to_string("/proc/stat")
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .count();
    let csw = |m: &str| {
        m.lines()
            .filter(|l| l.starts_with("noisetop_cpu_context_switches_total{"))
            .count()
    };
    // perf's counters need one interval to give a figure
    let mut m = first;
    let t = Instant::now();
    while csw(&m) < cpus && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(500));
        m = metrics(port);
    }
    assert_eq!(csw(&m), cpus, "every CPU's perf context switches:\n{m}");
    drop(kid);

    // without CAP_PERFMON the same unit opens none (where the kernel
    // keeps per-CPU counters for the privileged: perf_event_paranoid > 0)
    let paranoid: i32 = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .map_or(2, |s| s.trim().parse().unwrap_or(2));
    if paranoid <= 0 {
        eprintln!("perf_event_paranoid {paranoid}: every user opens per-CPU counters, no control");
        return;
    }
    let (_kid, port) = start(&["perfmon"]);
    std::thread::sleep(Duration::from_secs(2));
    let m = metrics(port);
    assert_eq!(csw(&m), 0, "no perf counter without CAP_PERFMON:\n{m}");
}

/// Every system call a `systemd-analyze syscall-filter` group holds, its
/// nested groups opened.
fn group(name: &str, into: &mut BTreeSet<String>) {
    let out = run(Command::new("systemd-analyze").args(["syscall-filter", name]));
    for word in text(&out)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .skip(1)
    {
        if word.starts_with('@') {
            group(word, into);
        } else {
            into.insert(word.to_owned());
        }
    }
}

#[test]
fn every_system_call_of_serve_passes_the_units_filter() {
    let _turn = crate::turn::take();
    if !root() {
        eprintln!("skipped: needs root (tracing the watched CPU as the unit would)");
        return;
    }
    if let Some(why) = missing(&["strace", "systemd-analyze", "setpriv"]) {
        eprintln!("skipped: {why}");
        return;
    }
    let mut allowed = BTreeSet::new();
    let filter = service("SystemCallFilter");
    assert_eq!(filter.len(), 1);
    for w in filter[0].split_whitespace() {
        if w.starts_with('@') {
            group(w, &mut allowed);
        } else {
            allowed.insert(w.to_owned());
        }
    }
    assert_eq!(service("SystemCallErrorNumber"), ["EPERM"]);
    // the calls the unit says it refuses on purpose (its comment names them)
    let refused = ["mount"];
    let unit = std::fs::read_to_string(unit_path()).unwrap();
    for r in refused {
        assert!(unit.contains(&format!("{r}(2)")), "the unit names {r}(2)");
    }
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("strace");
    let watch = if std::thread::available_parallelism().map_or(1, usize::from) > 1 {
        "1"
    } else {
        "0"
    };
    let port = free_port();
    run(Command::new("setpriv")
        .args(setpriv(&[]))
        .args(["strace", "-f", "-qq", "-c", "-o"])
        .arg(&log)
        .arg(env!("CARGO_BIN_EXE_noisetop"))
        .args(exec_args(&[
            "--listen".into(),
            format!("127.0.0.1:{port}"),
            "--interval".into(),
            "300ms".into(),
            "--count".into(),
            "5".into(),
            "--watch".into(),
            watch.into(),
        ]))
        .stdout(Stdio::null()));
    let summary = std::fs::read_to_string(&log).unwrap();
    // the summary's rows end in the call's name; the header, the rules
    // and the total do not name one
    let calls: BTreeSet<String> = summary
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .filter_map(|l| l.split_whitespace().last())
        .filter(|w| *w != "total")
        .map(str::to_owned)
        .collect();
    assert!(
        calls.contains("perf_event_open") && calls.contains("pread64"),
        "strace saw serve's calls: {summary}"
    );
    let outside: Vec<&String> = calls
        .iter()
        .filter(|c| !allowed.contains(*c) && !refused.contains(&c.as_str()))
        .collect();
    eprintln!("{} distinct system calls", calls.len());
    assert!(
        outside.is_empty(),
        "calls SystemCallFilter= refuses (EPERM): {outside:?}"
    );
}
