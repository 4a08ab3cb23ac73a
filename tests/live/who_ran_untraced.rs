//! Who ran, without BPF: `noisetop run --cpus 1 -- …` beside a busy loop
//! pinned to CPU 1, in a mount namespace where tracefs is mounted nowhere,
//! without `CAP_SYS_ADMIN`, `CAP_BPF` and `CAP_PERFMON`. The verdict is
//! noisy and names the loop by comm and pid, with its time within 10 % of
//! the loop's own schedstat over the command's run; the report says why
//! the BPF programs could not count.

use std::process::{Child, Command, Stdio};

struct Loop(Child);

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Why this machine cannot run the test, if it cannot.
fn unable() -> Option<&'static str> {
    if std::thread::available_parallelism().map_or(1, usize::from) < 2 {
        return Some("needs CPU 1");
    }
    // root, by /proc/self/status's effective uid
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let euid = status
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .and_then(|l| l.split_whitespace().nth(2));
    if euid != Some("0") {
        return Some("needs root (a mount namespace)");
    }
    if !have("unshare") || !have("setpriv") || !have("taskset") {
        return Some("needs unshare, setpriv and taskset (util-linux)");
    }
    None
}

#[test]
fn without_bpf_or_tracefs_a_pinned_busy_loop_is_named_with_its_schedstat_time() {
    let _turn = crate::turn::take();
    if let Some(why) = unable() {
        eprintln!("skipped: {why}");
        return;
    }
    let spin = Loop(
        Command::new("taskset")
            .args(["-c", "1", "sh", "-c", "while :; do :; done"])
            .spawn()
            .unwrap(),
    );
    let pid = spin.0.id();
    // the command reads the loop's schedstat as it starts and as it ends:
    // the span the report covers, give or take the sampler's wake-ups
    let command = format!("cat /proc/{pid}/schedstat >&2; sleep 3; cat /proc/{pid}/schedstat >&2");
    let script = format!(
        "umount /sys/kernel/tracing 2>/dev/null; umount -l /sys/kernel/debug 2>/dev/null; \
         if [ -e /sys/kernel/tracing/events ] || [ -e /sys/kernel/debug/tracing/events ]; then \
         echo 'tracefs still mounted' >&2; exit 97; fi; \
         exec setpriv --inh-caps=-sys_admin,-bpf,-perfmon --bounding-set=-sys_admin,-bpf,-perfmon -- \"$0\" run --cpus 1 \
         --json -- sh -c '{command}'"
    );
    let out = Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", &script])
        .arg(env!("CARGO_BIN_EXE_noisetop"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    drop(spin);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let around: Vec<u64> = stderr
        .lines()
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect();
    assert_eq!(around.len(), 2, "two schedstat readings: {stderr}");
    let loop_ns = around[1] - around[0];
    let r: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let why = r["trace_missing"].as_str().unwrap_or_default();
    let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/who-ran.md"))
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(page.contains("who ran is still told, **sampled from /proc**"));
    // the reason, as docs/who-ran.md quotes it for a user without CAP_BPF
    assert!(
        page.contains(&format!(
            "`who ran: sampled from /proc (…) on CPU 1: not traced: {}`",
            "BPF: loading BPF type data was refused (Operation not permitted): it needs root, or CAP_BPF with CAP_PERFMON"
        )),
        "docs/who-ran.md quotes the who-ran line"
    );
    assert!(
        why.starts_with("BPF: ")
            && why.ends_with(
                "was refused (Operation not permitted): it needs root, or CAP_BPF with CAP_PERFMON"
            ),
        "the report says why the BPF programs could not count: {why}"
    );
    let verdict = r["verdict"].as_str().unwrap();
    assert!(verdict.starts_with("noisy: "), "{verdict}");
    assert!(verdict.contains(&format!("sh[{pid}]")), "{verdict}");
    let cpu = &r["per_cpu"][0];
    assert_eq!(cpu["cpu"], 1);
    assert_eq!(cpu["sampled"], true);
    let found = cpu["intruders"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["pid"] == pid)
        .unwrap_or_else(|| panic!("the loop among the tasks found: {cpu}"));
    assert_eq!(found["comm"], "sh");
    let ns = found["ns"].as_u64().unwrap();
    let off = (ns as f64 - loop_ns as f64).abs() / loop_ns as f64;
    eprintln!(
        "loop: noisetop {:.1} ms, schedstat {:.1} ms ({:.2} % apart)",
        ns as f64 / 1e6,
        loop_ns as f64 / 1e6,
        off * 100.0
    );
    assert!(
        off <= 0.10,
        "noisetop credits the loop {ns} ns, its schedstat grew {loop_ns} ns"
    );
    // the bound from busy time minus the command's own CPU time holds
    // whatever the sampling saw: the loop alone took more than that limit
    let others = r["others_min_ns"].as_u64().unwrap();
    assert!(others > 0, "{r}");
}

#[test]
fn as_root_noisetop_mounts_tracefs_where_it_is_mounted_nowhere_and_says_so() {
    let _turn = crate::turn::take();
    if let Some(why) = unable() {
        eprintln!("skipped: {why}");
        return;
    }
    // in a private mount namespace: the machine's own mounts stay as they are
    let script = "umount /sys/kernel/tracing 2>/dev/null; umount -l /sys/kernel/debug 2>/dev/null; \
         if [ -e /sys/kernel/tracing/events ]; then echo 'tracefs still mounted' >&2; exit 97; fi; \
         \"$0\" --batch --watch 1 -n 2 -i 300ms && grep -c ' /sys/kernel/tracing tracefs ' /proc/mounts";
    let out = Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", script])
        .arg(env!("CARGO_BIN_EXE_noisetop"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("noisetop mounted it"))
        .collect();
    // on the who-ran line only, which is said again when its other
    // clauses change (on a loaded machine the per-interval cross-check of
    // the traced timer interrupts does)
    assert!(!said.is_empty(), "said: {text}");
    for line in &said {
        assert!(
            line.contains(
                "tracefs was not mounted: noisetop mounted it at /sys/kernel/tracing (as perf does)"
            ) && line.starts_with(
                "# who ran: counted in the kernel (BPF) on every CPU; judged on watched CPU 1"
            ),
            "{text}"
        );
    }
    assert_eq!(text.lines().last(), Some("1"), "mounted once: {text}");
    // docs/who-ran.md says the same words
    let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/who-ran.md"))
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for words in [
        "tracefs was not mounted: noisetop mounted it at /sys/kernel/tracing (as perf does)",
        "mounting tracefs at /sys/kernel/tracing was refused:",
    ] {
        assert!(page.contains(words), "docs/who-ran.md says {words:?}");
    }
}
