//! The Debian package (`scripts/build-deb`) installs with `dpkg -i` and
//! runs: `noisetop --version`, `man noisetop`, the bash completion loads,
//! the thresholds are a conffile equal to `assets/noisetop.toml`, the unit
//! for `serve` is the repository's, passes `systemd-analyze verify` and is
//! not enabled. The package is purged afterwards, and nothing of it stays.

use crate::packaging;

use std::path::Path;
use std::process::Command;

use packaging::{missing, repo, root, run, script, text};

/// Purges the package when dropped, whatever the test did before.
struct Installed;

impl Drop for Installed {
    fn drop(&mut self) {
        let _ = Command::new("dpkg").args(["--purge", "noisetop"]).output();
    }
}

/// Why this machine cannot run the package test, if it cannot.
fn unable() -> Option<String> {
    if !root() {
        return Some("needs root (dpkg -i)".into());
    }
    if let Some(why) = missing(&["dpkg", "dpkg-deb", "man", "bash", "gzip"]) {
        return Some(why);
    }
    if !Command::new("cargo")
        .args(["deb", "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
    {
        return Some(
            "cargo-deb not installed (.ci/run installs it: cargo install cargo-deb)".into(),
        );
    }
    let status = Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", "noisetop"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    if status.contains("installed") {
        return Some(format!(
            "a noisetop package is installed here ({status}): the test would replace and purge it"
        ));
    }
    None
}

#[test]
fn the_deb_installs_runs_and_goes_away() {
    let _turn = crate::turn::take();
    if let Some(why) = unable() {
        eprintln!("skipped: {why}");
        return;
    }
    let deb = repo().join(text(&run(&mut script("build-deb"))));
    eprintln!(
        "{}: {} bytes",
        deb.display(),
        std::fs::metadata(&deb).unwrap().len()
    );
    let listing = text(&run(Command::new("dpkg-deb").arg("-c").arg(&deb)));
    let files: Vec<&str> = listing
        .lines()
        .filter(|l| l.starts_with('-'))
        .filter_map(|l| l.split_whitespace().last())
        .collect();
    for want in [
        "./usr/bin/noisetop",
        "./usr/share/man/man1/noisetop.1.gz",
        "./usr/share/bash-completion/completions/noisetop",
        "./usr/share/zsh/vendor-completions/_noisetop",
        "./usr/share/fish/vendor_completions.d/noisetop.fish",
        "./etc/noisetop/noisetop.toml",
        "./etc/default/noisetop",
        "./usr/lib/systemd/system/noisetop.service",
        "./usr/share/doc/noisetop/copyright",
        "./usr/share/doc/noisetop/README.md",
        "./usr/share/doc/noisetop/docs/cost.md",
    ] {
        assert!(files.contains(&want), "{want} missing:\n{listing}");
    }
    let depends = text(&run(Command::new("dpkg-deb")
        .arg("-f")
        .arg(&deb)
        .arg("Depends")));
    assert_eq!(depends, "", "a static binary depends on nothing");

    let _installed = Installed;
    run(Command::new("dpkg").arg("-i").arg(&deb));
    let version = text(&run(Command::new("/usr/bin/noisetop").arg("--version")));
    assert_eq!(version, format!("noisetop {}", env!("CARGO_PKG_VERSION")));
    let page = text(&run(Command::new("man")
        .args(["-P", "cat", "noisetop"])
        .env("MANWIDTH", "80")));
    for part in ["NAME", "noisetop", "SYNOPSIS", "serve"] {
        assert!(page.contains(part), "the man page has {part}:\n{page}");
    }
    let complete = text(&run(Command::new("bash").args([
        "-c",
        "source /usr/share/bash-completion/completions/noisetop && complete -p noisetop",
    ])));
    assert!(complete.ends_with(" noisetop"), "{complete}");
    let conffiles = text(&run(Command::new("dpkg-query").args([
        "-W",
        "-f=${Conffiles}",
        "noisetop",
    ])));
    for c in ["/etc/noisetop/noisetop.toml", "/etc/default/noisetop"] {
        assert!(conffiles.contains(c), "{c} is a conffile: {conffiles}");
    }
    let read = |p: &Path| std::fs::read_to_string(p).unwrap();
    assert_eq!(
        read(Path::new("/etc/noisetop/noisetop.toml")),
        read(&repo().join("assets/noisetop.toml"))
    );
    let unit = Path::new("/usr/lib/systemd/system/noisetop.service");
    assert_eq!(
        read(unit),
        read(&repo().join("assets/systemd/noisetop.service"))
    );
    assert!(
        !Path::new("/etc/systemd/system/multi-user.target.wants/noisetop.service").exists(),
        "installing enables nothing"
    );
    // the installed unit, its binary and config in place
    if missing(&["systemd-analyze"]).is_none() {
        let out = Command::new("systemd-analyze")
            .args(["verify", "--man=no"])
            .arg(unit)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr).into_owned()
            + &String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "systemd-analyze verify: {said}");
        assert!(
            !said.contains("noisetop.service"),
            "systemd-analyze verify found something: {said}"
        );
    } else {
        eprintln!("systemd-analyze not installed: the unit is not verified here");
    }

    run(Command::new("dpkg").args(["--purge", "noisetop"]));
    for gone in [
        "/usr/bin/noisetop",
        "/etc/noisetop",
        "/etc/default/noisetop",
    ] {
        assert!(!Path::new(gone).exists(), "{gone} stays after the purge");
    }
}
