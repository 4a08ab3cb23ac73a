//! The static binary (`scripts/build-static`, the one the image and the
//! .deb carry) runs where nothing else is: chrooted into a directory that
//! holds only it and a captured instant, it prints its version, its help
//! and its man page, and reads the capture exactly as the test build does
//! outside.

use crate::packaging;

use std::process::Command;

use packaging::{missing, repo, root, run, static_binary, text};

#[test]
fn the_static_binary_runs_in_an_empty_root_filesystem() {
    let _turn = crate::turn::take();
    if !root() {
        eprintln!("skipped: needs root (chroot)");
        return;
    }
    if let Some(why) = missing(&["chroot", "readelf", "cp"]) {
        eprintln!("skipped: {why}");
        return;
    }
    let bin = static_binary();
    let size = std::fs::metadata(&bin).unwrap().len();
    eprintln!("static binary: {size} bytes");
    let program = text(&run(Command::new("readelf").arg("-lW").arg(&bin)));
    assert!(!program.contains("interpreter"), "no dynamic loader named");
    let dynamic = text(&run(Command::new("readelf").arg("-dW").arg(&bin)));
    assert!(!dynamic.contains("(NEEDED)"), "no shared library needed");

    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(&bin, dir.path().join("noisetop")).unwrap();
    let tree = repo().join("tests/fixtures/cpu-comes-online/0000");
    run(Command::new("cp")
        .arg("-a")
        .arg(&tree)
        .arg(dir.path().join("tree")));
    let entries: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(entries.len(), 2, "{entries:?}");
    let inside = |args: &[&str]| {
        let out = run(Command::new("chroot")
            .arg(dir.path())
            .arg("/noisetop")
            .args(args)
            .env_clear()
            .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"));
        String::from_utf8(out.stdout).unwrap()
    };
    let outside = |args: &[&str]| {
        let out = run(Command::new(env!("CARGO_BIN_EXE_noisetop")).args(args));
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(
        inside(&["--version"]).trim(),
        format!("noisetop {}", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(inside(&["--help"]), outside(&["--help"]));
    assert_eq!(inside(&["man"]), outside(&["man"]));
    let ours: serde_json::Value =
        serde_json::from_str(&inside(&["snapshot", "--json", "--root", "/tree"])).unwrap();
    // the same document, where it names a file, under the tree's other path
    let at = tree.to_str().unwrap();
    let theirs: serde_json::Value =
        serde_json::from_str(&outside(&["snapshot", "--json", "--root", at]).replace(at, "/tree"))
            .unwrap();
    assert!(
        ours["snapshot"]["stat"]["Ok"]["cpus"].is_object(),
        "the capture's /proc/stat was read: {ours}"
    );
    assert_eq!(ours, theirs);
}
