//! The real binary on a terminal: `noisetop replay` of a synthetic capture
//! inside a detached tmux session (160×50), driven with `send-keys` and read
//! back with `capture-pane`. Skipped with a message when tmux is absent.

use crate::tmux;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use noisetop::testkit::synth::{self, Flavor, Spec};
use tmux::Tmux;

fn capture(dir: &Path, instants: u32, interval_ms: u64) {
    let spec = Spec {
        flavor: Flavor::IntelLaptop,
        cpus: 8,
        instants,
        interval_ms,
    };
    synth::write_capture(dir, &spec).unwrap();
}

/// The shell command: run noisetop, then print its exit status and stay.
fn shell(args: &str, pidfile: &Path) -> String {
    format!(
        "sh -c 'echo $$ > {}; exec {} {args}'; echo EXITED rc=$?; sleep 60",
        pidfile.display(),
        env!("CARGO_BIN_EXE_noisetop")
    )
}

#[test]
fn keys_switch_views_select_open_detail_and_quit_restores_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let cap = dir.path().join("cap");
    capture(&cap, 6, 500);
    let pid = dir.path().join("pid");
    let cmd = shell(&format!("replay {} --watch 2-3", cap.display()), &pid);
    let Some(t) = Tmux::start("keys", &cmd) else {
        return;
    };
    // the laptop's header, its rows and the findings of watched CPUs 2-3
    let s = t.wait_for(&[
        "Intel Core i7-8650U",
        "1 pkg · 4 cores · 8 CPUs",
        "┌ Cores",
        "irq-on-watched",
    ]);
    assert!(s.contains("IRQ eth0-TxRx-2"), "CPU 2's noise tag:\n{s}");
    assert!(s.contains("q quit"), "footer from the key table:\n{s}");
    // the replay plays to its end at the recorded pace
    t.wait_for(&["replay", "5/5", "end of capture"]);
    // Cores → Overview → Interrupts
    t.keys(&["Tab"]);
    t.wait_for(&["Busy % (c: next)"]);
    t.keys(&["Tab"]);
    let s = t.wait_for(&["IRQ    source", "eth0-TxRx-2"]);
    assert!(
        s.contains("▸2") && s.contains("▸3"),
        "watched columns:\n{s}"
    );
    // the first watched CPU is selected at start: one up is CPU 1
    t.keys(&["k", "Enter"]);
    let s = t.wait_for(&["│ Detail", "CPU 1 · core 1"]);
    assert!(s.contains("C-state mix"), "{s}");
    t.keys(&["q"]);
    let s = t.wait_for(&["EXITED rc=0"]);
    // the alternate screen is gone: the shell's own screen is back
    assert!(!s.contains("┌ Cores"), "terminal not restored:\n{s}");
}

#[test]
fn sigterm_and_sighup_restore_the_terminal() {
    for sig in ["TERM", "HUP"] {
        let dir = tempfile::tempdir().unwrap();
        let cap = dir.path().join("cap");
        capture(&cap, 3, 1000);
        let pid = dir.path().join("pid");
        let cmd = shell(&format!("replay {}", cap.display()), &pid);
        let Some(t) = Tmux::start(&format!("sig{sig}"), &cmd) else {
            return;
        };
        t.wait_for(&["┌ Cores", "end of capture"]);
        let p = std::fs::read_to_string(&pid).unwrap();
        let ok = Command::new("kill")
            .args([format!("-{sig}"), p.trim().to_string()])
            .status()
            .unwrap();
        assert!(ok.success());
        let s = t.wait_for(&["EXITED rc="]);
        assert!(
            !s.contains("┌ Cores"),
            "SIG{sig}: terminal not restored:\n{s}"
        );
    }
}

#[test]
fn quitting_after_the_window_was_resized_leaves_no_frame_behind() {
    let dir = tempfile::tempdir().unwrap();
    let cap = dir.path().join("cap");
    capture(&cap, 3, 1000);
    let pid = dir.path().join("pid");
    let cmd = shell(&format!("replay {}", cap.display()), &pid);
    let Some(t) = Tmux::start("resize", &cmd) else {
        return;
    };
    t.wait_for(&["┌ Cores"]);
    // width and height both: tmux before 3.4 then copies rows of the
    // alternate screen onto the main one unless they are blank
    for (x, y) in [("60", "15"), ("80", "24"), ("200", "60")] {
        assert!(
            t.tmux(&["resize-window", "-t", "t", "-x", x, "-y", y])
                .status
                .success()
        );
        std::thread::sleep(Duration::from_millis(400));
    }
    t.wait_for(&["┌ Cores"]);
    t.keys(&["q"]);
    let s = t.wait_for(&["EXITED rc=0"]);
    let left: Vec<&str> = s
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("EXITED"))
        .collect();
    assert!(left.is_empty(), "left on the screen:\n{s}");
}

#[test]
fn without_a_terminal_it_points_to_batch() {
    let out = Command::new(env!("CARGO_BIN_EXE_noisetop"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "noisetop: stdout is not a terminal; use --batch for text output\n"
    );
    // a wrong argument is said as such first, terminal or not (exit 2)
    let out = Command::new(env!("CARGO_BIN_EXE_noisetop"))
        .args(["replay", "/nonexistent"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "noisetop: replay /nonexistent: no such folder\n"
    );
}

#[test]
fn a_closed_terminal_ends_noisetop_instead_of_spinning() {
    let dir = tempfile::tempdir().unwrap();
    let cap = dir.path().join("cap");
    capture(&cap, 3, 1000);
    let pid = dir.path().join("pid");
    let cmd = shell(&format!("replay {}", cap.display()), &pid);
    let Some(t) = Tmux::start("closed", &cmd) else {
        return;
    };
    t.wait_for(&["┌ Cores", "end of capture"]);
    let p = std::fs::read_to_string(&pid).unwrap().trim().to_string();
    // kill the tmux server outright: the pane's terminal disappears
    let server = t.tmux(&["display-message", "-p", "#{pid}"]);
    let server = String::from_utf8_lossy(&server.stdout).trim().to_string();
    assert!(
        Command::new("kill")
            .args(["-KILL", &server])
            .status()
            .unwrap()
            .success()
    );
    let end = Instant::now() + Duration::from_secs(5);
    while Path::new(&format!("/proc/{p}")).exists() {
        let state = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
        if state.contains(") Z") {
            break;
        }
        assert!(
            Instant::now() < end,
            "noisetop {p} still runs after its terminal closed"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The clock of the sample on screen: the last `hh:mm:ss` of the header's
/// first line.
fn sample_clock(screen: &str) -> Option<String> {
    let line: Vec<char> = screen.lines().next()?.chars().collect();
    (0..line.len().saturating_sub(7))
        .rev()
        .map(|i| line[i..i + 8].iter().collect::<String>())
        .find(|w| {
            w.chars().enumerate().all(|(k, c)| {
                if k % 3 == 2 {
                    c == ':'
                } else {
                    c.is_ascii_digit()
                }
            })
        })
}

#[test]
fn a_shorter_interval_takes_effect_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let pid = dir.path().join("pid");
    let cmd = shell("", &pid);
    let Some(t) = Tmux::start("interval", &cmd) else {
        return;
    };
    t.wait_for(&["┌ Cores", "every 1.0 s"]);
    // the first interval on screen (its clock ends the header's first line)
    let end = Instant::now() + Duration::from_secs(10);
    while sample_clock(&t.screen()).is_none() {
        assert!(Instant::now() < end, "no first sample:\n{}", t.screen());
        std::thread::sleep(Duration::from_millis(100));
    }
    // + to the longest interval: the sampler's next sleep is a minute
    for _ in 0..5 {
        t.keys(&["+"]);
    }
    t.wait_for(&["every 60.0 s"]);
    std::thread::sleep(Duration::from_millis(2500));
    let shown = t.screen();
    let before =
        sample_clock(&shown).unwrap_or_else(|| panic!("a sample's clock in the header:\n{shown}"));
    for _ in 0..5 {
        t.keys(&["-"]);
    }
    t.wait_for(&["every 1.0 s"]);
    // a new sample within two intervals (and a second of slack)
    let end = Instant::now() + Duration::from_secs(3);
    loop {
        let s = t.screen();
        if sample_clock(&s).is_some_and(|c| c != before) {
            break;
        }
        assert!(
            Instant::now() < end,
            "no new sample 3 s after going back to 1 s; screen:\n{s}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    t.keys(&["q"]);
    t.wait_for(&["EXITED rc=0"]);
}

#[test]
fn sample_clock_reads_the_last_time_of_the_first_line() {
    let screen = " noisetop 0.1.0 │ model │ every 1.0 s │ 12:04:31\n 13:00:00";
    assert_eq!(sample_clock(screen).as_deref(), Some("12:04:31"));
    assert_eq!(sample_clock(" no clock yet"), None);
}
