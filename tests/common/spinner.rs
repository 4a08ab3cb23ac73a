//! A shell spinning on CPU 1, killed when dropped.

use std::process::{Child, Command, Stdio};

/// A shell spinning on CPU 1; killed when dropped.
pub struct Spinner(Child);

impl Spinner {
    fn spawn(args: &[&str]) -> Spinner {
        Spinner(
            Command::new("taskset")
                .args(["-c", "1"])
                .args(args)
                .args(["sh", "-c", "while :; do :; done"])
                .stdout(Stdio::null())
                .spawn()
                .expect("taskset runs"),
        )
    }

    /// The loop at the usual priority.
    pub fn start() -> Spinner {
        Self::spawn(&[])
    }

    /// The same loop at the lowest priority: it gets what the CPU's
    /// owner leaves.
    pub fn start_niced() -> Spinner {
        Self::spawn(&["nice", "-n", "19"])
    }

    /// Its pid.
    pub fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
