//! Output that cannot be written is never lost silently and never a panic:
//! a reader that closes the pipe early (`head`) ends noisetop quietly with
//! status 0; a full disk is an error with a non-zero status.

use std::io::Read as _;
use std::process::{Command, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_noisetop"))
}

#[test]
fn a_closed_pipe_ends_quietly() {
    for args in [
        &["snapshot", "--json"][..],
        &["--batch", "-n", "3", "-i", "100ms"],
    ] {
        let mut child = bin()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // read ten bytes, then close the pipe like `head -c 10`
        let mut out = child.stdout.take().unwrap();
        let mut first = [0u8; 10];
        out.read_exact(&mut first).unwrap();
        drop(out);
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let status = child.wait().unwrap();
        assert!(status.success(), "{args:?}: {status:?} {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?}: {err}");
    }
}

#[test]
fn a_full_disk_is_an_error() {
    if !std::path::Path::new("/dev/full").exists() {
        eprintln!("no /dev/full: skipped");
        return;
    }
    for args in [
        &["snapshot", "--json"][..],
        &["--batch", "-n", "1", "-i", "100ms"],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = bin().args(args).stdout(full).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.starts_with("noisetop: cannot write to standard output: "),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
