//! A busy loop on CPU 1 placed in a cgroup of its own (made under the
//! cgroup2 mount, `/sys/fs/cgroup/unified` on a hybrid host) is named by
//! that cgroup wherever who ran is told: `run`'s report, `--batch`'s
//! intruder finding, the recording's `intruder_cgroups` column, and
//! serve's `noisetop_cgroup_cpu_seconds_total`, whose rate is held to the
//! loop's own schedstat within 5 %.
//!
//! The test makes the cgroup and moves the loop into it (as a container
//! runtime would); noisetop only reads. Skipped, saying why, without root,
//! BPF or a cgroup2 mount.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::cpu1;
use crate::schedstat;
use crate::spinner;

use spinner::Spinner;

fn noisetop() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_noisetop"));
    c.stdin(Stdio::null());
    c
}

/// A cgroup of the test's own under the cgroup2 mount, removed when
/// dropped (its tasks are gone by then).
struct TestCgroup {
    dir: PathBuf,
    /// The path as the kernel names it (from the mount's root).
    path: String,
}

impl TestCgroup {
    fn make() -> Result<TestCgroup, String> {
        let mountinfo =
            std::fs::read_to_string("/proc/self/mountinfo").map_err(|e| e.to_string())?;
        let mount = noisetop::os::cgroups::cgroup2_mount(&mountinfo).ok_or("no cgroup2 mount")?;
        let name = format!("noisetop-test-{}", std::process::id());
        let dir = mount.join(&name);
        std::fs::create_dir(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
        Ok(TestCgroup {
            dir,
            path: format!("/{name}"),
        })
    }

    fn take(&self, pid: u32) -> Result<(), String> {
        std::fs::write(self.dir.join("cgroup.procs"), pid.to_string())
            .map_err(|e| format!("cannot move {pid} into {}: {e}", self.dir.display()))
    }
}

impl Drop for TestCgroup {
    fn drop(&mut self) {
        // the killed loop leaves the cgroup as it is reaped
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Why this cannot be tested here, if it cannot.
fn unable() -> Option<String> {
    if let Some(why) = cpu1::skip_reason() {
        return Some(why);
    }
    if !Path::new("/sys/kernel/btf/vmlinux").exists() {
        return Some("the kernel has no BTF: who ran is not counted in the kernel".into());
    }
    None
}

/// A task that owns CPU 1 and sleeps: the loop is then an intruder.
fn owner() -> std::process::Child {
    Command::new("taskset")
        .args(["-c", "1", "sleep", "60"])
        .spawn()
        .unwrap()
}

#[test]
fn a_loop_in_a_cgroup_of_its_own_is_named_by_it_in_run_batch_csv_and_serve() {
    let _turn = crate::turn::take();
    if let Some(why) = unable() {
        eprintln!("skipped: {why}");
        return;
    }
    let _cpu1 = cpu1::cpu1();
    let cg = match TestCgroup::make() {
        Ok(c) => c,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let spin = Spinner::start();
    cg.take(spin.pid()).unwrap();
    let mut own = owner();
    let owner_pid = own.id().to_string();

    // run: the report groups the other tasks by cgroup
    let out = noisetop()
        .args(["run", "--cpus", "1", "--", "sleep", "2"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.lines()
            .any(|l| l.contains("by cgroup on CPU 1: ") && l.contains(&cg.path)),
        "run names the loop's cgroup:\n{text}"
    );

    // --batch and the recording
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("r.csv");
    let out = noisetop()
        .args([
            "--batch", "--watch", "1", "--pin", "0", "-n", "2", "-i", "500ms",
        ])
        .args(["--owner", &owner_pid, "--quiet", "--record"])
        .arg(&csv)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let from = format!("sh[{}] ran ", spin.pid());
    assert!(
        text.lines().any(|l| l.starts_with("# ")
            && l.contains("intruder: CPU 1: ")
            && l.contains(&from)
            && l.contains(&format!("from {}", cg.path))),
        "the intruder finding names the loop's cgroup:\n{text}"
    );
    let mut rdr = csv::Reader::from_path(&csv).unwrap();
    let head = rdr.headers().unwrap().clone();
    let col = |n: &str| head.iter().position(|h| h == n).unwrap();
    let (cpu, who, cgroups) = (col("cpu"), col("intruders"), col("intruder_cgroups"));
    let mut named = 0;
    for r in rdr.records() {
        let r = r.unwrap();
        if &r[cpu] != "1" {
            continue;
        }
        let tasks: Vec<&str> = r[who].split(';').collect();
        let groups: Vec<&str> = r[cgroups].split(';').collect();
        if let Some(i) = tasks
            .iter()
            .position(|t| t.starts_with(&format!("sh[{}]", spin.pid())))
        {
            assert_eq!(groups.get(i), Some(&cg.path.as_str()), "{r:?}");
            named += 1;
        }
    }
    assert!(named >= 1, "the recording names the loop's cgroup");

    // serve: the cgroup's seconds against the loop's schedstat
    let port = 20000 + (std::process::id() % 20000) as u16;
    let mut serve = noisetop()
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .args([
            "--watch", "1", "--pin", "0", "-i", "500ms", "--owner", &owner_pid,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let scrape = || -> Option<(f64, f64)> {
        let body = ureq_get(port)?;
        let value = |prefix: &str| {
            body.lines()
                .find(|l| l.starts_with(prefix))
                .and_then(|l| l.rsplit(' ').next())
                .and_then(|v| v.parse::<f64>().ok())
        };
        let secs = value(&format!(
            "noisetop_cgroup_cpu_seconds_total{{cgroup=\"{}\",cpus=\"watched\"}}",
            cg.path
        ))?;
        Some((value("noisetop_sample_timestamp_seconds")?, secs))
    };
    let first = wait_for(&scrape, Duration::from_secs(20));
    let loop0 = schedstat::run_ns(spin.pid());
    let steal0 = cpu1::steal_ns(1);
    let wall0 = Instant::now();
    std::thread::sleep(Duration::from_secs(4));
    // the next interval after this many seconds
    let (t0, s0) = first.expect("serve wrote the loop's cgroup");
    let (t1, s1) = wait_for(
        || scrape().filter(|(t, _)| *t > t0 + 3.5),
        Duration::from_secs(10),
    )
    .expect("serve went on sampling");
    let loop1 = schedstat::run_ns(spin.pid());
    let stolen = (cpu1::steal_ns(1) - steal0) as f64 / 1e9;
    let wall = wall0.elapsed().as_secs_f64();
    let _ = serve.kill();
    let _ = serve.wait();
    let _ = own.kill();
    let _ = own.wait();
    drop(spin);
    let ours = (s1 - s0) / (t1 - t0);
    let theirs = (loop1 - loop0) as f64 / 1e9 / wall;
    // schedstat leaves out what the host stole while the loop ran (a
    // paravirtualised kernel); the kernel's counts run on the monotonic
    // clock, through it: /proc/stat's steal on CPU 1, and a tick, bound it
    let steal = (stolen + 0.01) / wall;
    eprintln!(
        "{}: serve {ours:.4} s/s over {:.1} s, schedstat {theirs:.4} s/s over {wall:.1} s, \
         steal {steal:.4} s/s",
        cg.path,
        t1 - t0
    );
    assert!(
        ours >= theirs * 0.95 && ours <= theirs * 1.05 + steal,
        "serve's rate {ours:.4} against the loop's schedstat {theirs:.4} (steal {steal:.4})"
    );
}

/// Polls until `f` gives something or the time is up.
fn wait_for<T>(mut f: impl FnMut() -> Option<T>, limit: Duration) -> Option<T> {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if let Some(v) = f() {
            return Some(v);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    None
}

/// GET /metrics, plain HTTP/1.0 over a socket: the body, or `None`.
fn ureq_get(port: u16) -> Option<String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    s.write_all(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
        .ok()?;
    let mut all = String::new();
    s.read_to_string(&mut all).ok()?;
    let (head, body) = all.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.").then(|| body.to_string())
}
