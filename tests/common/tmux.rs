//! A private tmux server for the end-to-end tests of the dashboard: each
//! test starts the real binary in a detached 160×50 session, types with
//! `send-keys`, reads the screen with `capture-pane`, and the server is
//! killed when the value is dropped. Declared by the test binaries whose
//! tests drive a terminal (`cli` and `live`).
// each test uses the part of this it needs
#![allow(dead_code)]

use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// A tmux server of one session, `t`, killed when dropped.
pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// Starts `cmd` in a new 160×50 session; `None` (and says so) when tmux
    /// is not installed.
    pub fn start(name: &str, cmd: &str) -> Option<Tmux> {
        if Command::new("tmux").arg("-V").output().is_err() {
            eprintln!("tmux absent: skipped (.ci/run installs it)");
            return None;
        }
        let t = Tmux {
            socket: format!("noisetop-test-{name}-{}", std::process::id()),
        };
        // a state folder of its own: the watch set a run before saved
        // (`$XDG_STATE_HOME/noisetop`) must not mark or unmark CPUs here
        let state = std::env::temp_dir().join(format!("{}-state", t.socket));
        let _ = std::fs::create_dir_all(&state);
        let ok = Command::new("tmux")
            .env("XDG_STATE_HOME", &state)
            .args(["-L", &t.socket, "-f", "/dev/null"])
            .args(["new-session", "-d", "-x", "160", "-y", "50", "-s", "t", cmd])
            .status()
            .expect("tmux runs")
            .success();
        assert!(ok, "tmux new-session failed");
        Some(t)
    }

    /// Runs a tmux command on this server.
    pub fn tmux(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .output()
            .expect("tmux runs")
    }

    /// The screen as shown, wrapped lines joined.
    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.tmux(&["capture-pane", "-p", "-J", "-t", "t"]).stdout)
            .into_owned()
    }

    /// Types keys.
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        assert!(self.tmux(&args).status.success());
    }

    /// Waits until the screen shows every one of `want`; panics with the
    /// last screen after 20 s.
    pub fn wait_for(&self, want: &[&str]) -> String {
        let end = Instant::now() + Duration::from_secs(20);
        loop {
            let s = self.screen();
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
