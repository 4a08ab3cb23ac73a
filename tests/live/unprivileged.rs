//! A normal user gets a working table and a footer that says why the
//! privileged metrics are missing and how to get them.

use std::process::Command;

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
}

/// Copies the binary where user nobody can run it (the build folder may
/// sit under a home directory nobody cannot enter).
fn world_readable_copy(bin: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("noisetop-unpriv-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let dest = dir.join("noisetop");
    std::fs::copy(bin, &dest).unwrap();
    std::fs::set_permissions(&dest, std::fs::Permissions::from_mode(0o755)).unwrap();
    dest
}

fn run_batch(as_nobody: bool) -> Option<String> {
    let bin = env!("CARGO_BIN_EXE_noisetop");
    let mut cmd = if as_nobody {
        let copy = world_readable_copy(bin);
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(copy);
        c
    } else {
        Command::new(bin)
    };
    let out = cmd
        .args(["--batch", "--count", "3", "--interval", "100ms"])
        .output()
        .ok()?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).unwrap())
}

#[test]
fn batch_as_a_normal_user_explains_what_is_missing() {
    let _turn = crate::turn::take();
    if !is_root() {
        // already unprivileged: run directly
        let text = run_batch(false).unwrap();
        assert_eq!(text.lines().filter(|l| l.starts_with("# t=")).count(), 3);
        return;
    }
    let Some(text) = run_batch(true) else {
        eprintln!("setpriv not available: skipped");
        return;
    };
    assert_eq!(text.lines().filter(|l| l.starts_with("# t=")).count(), 3);
    let csw = text
        .lines()
        .find(|l| l.starts_with("# CSW/s MIG/s:"))
        .expect("footer names the scheduler counters");
    assert!(
        csw.contains("unavailable") && csw.contains("permission denied"),
        "{csw}"
    );
    assert!(
        csw.contains("perf_event_paranoid"),
        "the fix is named: {csw}"
    );
    // every footer line either names a source or says why not
    for l in text
        .lines()
        .filter(|l| l.starts_with("# ") && !l.starts_with("# t="))
    {
        assert!(l.contains(": "), "{l}");
    }
}

#[test]
fn batch_as_root_names_a_source_for_each_metric() {
    let _turn = crate::turn::take();
    if !is_root() {
        eprintln!("not root: skipped");
        return;
    }
    let text = run_batch(false).unwrap();
    // the footer, without the times, verdicts and findings of each interval
    let footer: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("# ") && !l.starts_with("# t="))
        .filter(|l| {
            ![
                "# verdict: ",
                "# INFO ",
                "# WARN ",
                "# CRIT ",
                "# who ran: ",
                "# rec ",
            ]
            .iter()
            .any(|p| l.starts_with(p))
        })
        .collect();
    assert_eq!(
        footer.len(),
        noisetop::sample::ladder::Metric::ALL.len(),
        "{footer:?}"
    );
    // every CPU's switches come from the programs where they loaded, and
    // from perf's software counters where they did not
    let in_kernel = text
        .lines()
        .any(|l| l.starts_with("# who ran: counted in the kernel (BPF)"));
    let want = if in_kernel {
        "# CSW/s MIG/s: in-kernel counts (sched_switch"
    } else {
        "# CSW/s MIG/s: perf software"
    };
    assert!(
        footer.iter().any(|l| l.starts_with(want)),
        "want {want:?} in {footer:?}"
    );
}
