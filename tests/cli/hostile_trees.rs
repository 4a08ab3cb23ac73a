//! Trees that try to hang or swell noisetop: a FIFO in place of a kernel
//! file, a capture table linked to `/dev/zero`, a stop signal while it
//! reads. The real binary runs on each under a deadline.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use noisetop::testkit::synth::{self, Flavor, Spec};

/// How long any run may take before it counts as a hang.
const DEADLINE: Duration = Duration::from_secs(20);

fn capture(dir: &Path, instants: u32) {
    let spec = Spec {
        flavor: Flavor::IntelLaptop,
        cpus: 4,
        instants,
        interval_ms: 100,
    };
    synth::write_capture(dir, &spec).unwrap();
}

fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_noisetop"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for the child up to `limit`; kills it and panics on a hang.
fn finish(mut child: Child, limit: Duration, what: &str) -> Output {
    let end = Instant::now() + limit;
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if Instant::now() > end {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{what}: still running after {limit:?}; stderr:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    assert!(
        Command::new("mkfifo").arg(path).status().unwrap().success(),
        "mkfifo {}",
        path.display()
    );
}

fn link_dev_zero(path: &Path) {
    let _ = std::fs::remove_file(path);
    std::os::unix::fs::symlink("/dev/zero", path).unwrap();
}

fn no_panic(out: &Output, what: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{what} panicked:\n{err}");
}

/// A tree (one instant of a synthetic capture) with FIFOs and `/dev/zero`
/// links in place of the files every sample reads.
fn hostile_tree(dir: &Path) -> PathBuf {
    let cap = dir.join("cap");
    capture(&cap, 2);
    let root = cap.join("0000");
    mkfifo(&root.join("proc/stat"));
    mkfifo(&root.join("sys/devices/system/cpu/online"));
    link_dev_zero(&root.join("proc/interrupts"));
    link_dev_zero(&root.join("proc/cpuinfo"));
    root
}

#[test]
fn fifos_and_dev_zero_in_a_tree_neither_block_nor_swell() {
    let dir = tempfile::tempdir().unwrap();
    let root = hostile_tree(dir.path());
    let root = root.to_str().unwrap();
    let out = finish(
        spawn(&["--batch", "--root", root, "--count", "2", "-i", "100ms"]),
        DEADLINE,
        "--batch --root with FIFOs",
    );
    no_panic(&out, "--batch --root");
    let out = finish(
        spawn(&["snapshot", "--json", "--root", root]),
        DEADLINE,
        "snapshot with FIFOs",
    );
    no_panic(&out, "snapshot");
    let json = String::from_utf8_lossy(&out.stdout);
    assert!(
        json.contains("not a regular file (a FIFO)"),
        "the reason names the FIFO:\n{json}"
    );
    assert!(
        json.contains("not a regular file (a character device)"),
        "the reason names /dev/zero:\n{json}"
    );
}

#[test]
fn sigint_stops_a_batch_run_on_a_hostile_tree() {
    let dir = tempfile::tempdir().unwrap();
    let root = hostile_tree(dir.path());
    let child = spawn(&["--batch", "--root", root.to_str().unwrap(), "-i", "100ms"]);
    std::thread::sleep(Duration::from_millis(1500));
    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success()
    );
    let t = Instant::now();
    let out = finish(child, DEADLINE, "SIGINT on a hostile tree");
    no_panic(&out, "SIGINT");
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "took {:?} to stop",
        t.elapsed()
    );
}

#[test]
fn capture_tables_linked_to_dev_zero_or_fifos_give_a_reason() {
    for (name, fifo) in [
        ("clock", false),
        ("clock", true),
        ("perf", false),
        ("msr", true),
        ("probe.json", false),
        ("budget", false),
        ("always", true),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let cap = dir.path().join("cap");
        capture(&cap, 3);
        let p = cap.join("0000/noisetop").join(name);
        if fifo {
            mkfifo(&p);
        } else {
            link_dev_zero(&p);
        }
        let what = format!(
            "replay with noisetop/{name} a {}",
            if fifo { "FIFO" } else { "/dev/zero link" }
        );
        let out = finish(
            spawn(&["replay", "--batch", cap.to_str().unwrap()]),
            DEADLINE,
            &what,
        );
        no_panic(&out, &what);
        if name == "clock" || name == "perf" || name == "probe.json" || name == "msr" {
            let err = String::from_utf8_lossy(&out.stderr);
            let text = format!("{err}{}", String::from_utf8_lossy(&out.stdout));
            assert!(
                text.contains("not a regular file") && text.contains(name),
                "{what}: no reason naming the file:\n{text}"
            );
        }
    }
}
