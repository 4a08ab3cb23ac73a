//! Tells the tests whether the real /proc and /sys captures of other
//! machines are beside the repository (`../shared/captures`): where they
//! are not, the tests that read them are compiled as ignored
//! (`cfg(no_captures)`), so that libtest counts them as ignored instead
//! of passing them without a check.

use std::path::Path;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(no_captures)");
    println!("cargo::rerun-if-changed=build.rs");
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let captures = Path::new(&dir).join("../shared/captures");
    // one small file that is there while the captures are: its going
    // away runs this again (a folder would be scanned file by file)
    let marker = captures.join("SOURCES.md");
    if marker.is_file() {
        println!("cargo::rerun-if-changed={}", marker.display());
    } else {
        println!("cargo::rustc-cfg=no_captures");
    }
}
