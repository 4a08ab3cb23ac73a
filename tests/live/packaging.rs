//! What the packaging tests share: who may run them, the static binary
//! (built once by `scripts/build-static`, then reused from target/), and a
//! child process killed when dropped.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};

/// The repository's root.
pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Whether a program is on PATH.
pub fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether this process runs as root, by /proc/self/status's effective uid.
pub fn root() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .and_then(|l| l.split_whitespace().nth(2))
        == Some("0")
}

/// The tools of `tools` that are not installed, as one line, if any are not.
pub fn missing(tools: &[&str]) -> Option<String> {
    let gone: Vec<&str> = tools.iter().copied().filter(|t| !have(t)).collect();
    (!gone.is_empty()).then(|| format!("{} not installed (.ci/run installs it)", gone.join(", ")))
}

/// Runs a command that must succeed; returns its output.
pub fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A command's standard output, trimmed.
pub fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// One of the repository's scripts, run from its root in the caller's
/// environment less what `cargo test` adds to it (`CARGO_PKG_*` and the
/// like): the crate tracks such a variable, and the script's cargo would
/// otherwise build noisetop again each time it is run from a test after a
/// shell, and the other way round.
pub fn script(name: &str) -> Command {
    let mut c = Command::new(repo().join("scripts").join(name));
    c.current_dir(repo());
    // the static binary in the packaging tests' own profile (Cargo.toml
    // says why): the same link and package as dist, built without the
    // optimiser
    c.env("NOISETOP_PROFILE", "package-test");
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy();
        if k.starts_with("CARGO_") && k != "CARGO_HOME" && k != "CARGO_TARGET_DIR" {
            c.env_remove(&*k);
        }
    }
    c
}

/// The static binary, built by the script that the image and the .deb are
/// made from (minutes the first time; cargo reuses it after).
pub fn static_binary() -> PathBuf {
    repo().join(text(&run(&mut script("build-static"))))
}

/// A child process killed (SIGKILL) when dropped.
pub struct Kid(pub Child);

impl Drop for Kid {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
