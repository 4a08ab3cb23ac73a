//! SIGQUIT (Ctrl-\) on the dashboard: the terminal comes back cooked, as it
//! does for SIGINT, SIGTERM and SIGHUP. The real binary runs a replay in a
//! private tmux server; after the signal the shell prints `stty -a`.

use crate::tmux;

use std::path::Path;
use std::process::Command;

use noisetop::testkit::synth::{self, Flavor, Spec};
use tmux::Tmux;

/// The `stty -a` words that say whether the terminal is cooked.
fn modes(screen: &str) -> Vec<&str> {
    screen
        .split(|c: char| c.is_whitespace() || c == ';')
        .filter(|w| matches!(*w, "icanon" | "-icanon" | "echo" | "-echo"))
        .collect()
}

#[test]
fn sigquit_restores_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let cap = dir.path().join("cap");
    synth::write_capture(
        &cap,
        &Spec {
            flavor: Flavor::IntelLaptop,
            cpus: 8,
            instants: 3,
            interval_ms: 1000,
        },
    )
    .unwrap();
    let pid = dir.path().join("pid");
    let cmd = format!(
        "sh -c 'echo $$ > {}; exec {} replay {}'; echo EXITED rc=$?; stty -a; sleep 60",
        pid.display(),
        env!("CARGO_BIN_EXE_noisetop"),
        cap.display()
    );
    let Some(t) = Tmux::start("quit", &cmd) else {
        return;
    };
    t.wait_for(&["┌ Cores", "end of capture"]);
    let p = std::fs::read_to_string(Path::new(&pid)).unwrap();
    assert!(
        Command::new("kill")
            .args(["-QUIT", p.trim()])
            .status()
            .unwrap()
            .success()
    );
    let s = t.wait_for(&["EXITED rc=", "icanon"]);
    assert!(!s.contains("┌ Cores"), "alternate screen still on:\n{s}");
    let m = modes(&s);
    assert!(
        m.contains(&"icanon") && m.contains(&"echo"),
        "terminal left raw ({m:?}):\n{s}"
    );
    assert!(
        !m.contains(&"-icanon") && !m.contains(&"-echo"),
        "{m:?}:\n{s}"
    );
}
