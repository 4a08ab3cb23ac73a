//! SIGQUIT (Ctrl-\) on the dashboard: the terminal comes back cooked, as it
//! does for SIGINT, SIGTERM and SIGHUP. The real binary runs a replay in a
//! private tmux server; after the signal the shell prints `stty -a`.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use noisetop::synth::{self, Flavor, Spec};

struct Tmux {
    socket: String,
}

impl Tmux {
    fn start(cmd: &str) -> Option<Tmux> {
        if Command::new("tmux").arg("-V").output().is_err() {
            eprintln!("tmux absent: skipped (.ci/run installs it)");
            return None;
        }
        let t = Tmux {
            socket: format!("noisetop-test-quit-{}", std::process::id()),
        };
        let ok = t
            .tmux(&["new-session", "-d", "-x", "160", "-y", "50", "-s", "t", cmd])
            .status
            .success();
        assert!(ok, "tmux new-session failed");
        Some(t)
    }

    fn tmux(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .output()
            .expect("tmux runs")
    }

    fn wait_for(&self, want: &[&str]) -> String {
        let end = Instant::now() + Duration::from_secs(20);
        loop {
            let out = self.tmux(&["capture-pane", "-p", "-J", "-t", "t"]);
            let s = String::from_utf8_lossy(&out.stdout).into_owned();
            if want.iter().all(|w| s.contains(w)) {
                return s;
            }
            assert!(Instant::now() < end, "waited for {want:?}; screen:\n{s}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

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
    let Some(t) = Tmux::start(&cmd) else {
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
