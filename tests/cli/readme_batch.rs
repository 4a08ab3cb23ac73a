//! The batch sample in docs/batch.md is what `noisetop replay --batch
//! --watch 2-3 --cpus 0-3` prints for the synthetic 8-CPU laptop capture
//! (two instants), so the page cannot drift from the program. On a mismatch
//! the test prints the block to paste.

use std::path::Path;

use noisetop::testkit::synth::{self, Flavor, Spec};

/// The text between the batch-sample markers of docs/batch.md, without
/// the fence.
fn readme_block() -> String {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/batch.md"))
            .unwrap();
    let start = readme
        .find("<!-- batch-sample -->")
        .expect("docs/batch.md has a batch-sample marker");
    let end = readme
        .find("<!-- /batch-sample -->")
        .expect("docs/batch.md has an end marker");
    let block = &readme[start..end];
    let body = block.split_once("```text\n").expect("a text fence").1;
    body.rsplit_once("```")
        .expect("a closing fence")
        .0
        .to_string()
}

#[test]
fn the_readme_batch_sample_is_what_the_program_prints() {
    let dir = tempfile::tempdir().unwrap();
    let spec = Spec {
        flavor: Flavor::IntelLaptop,
        cpus: 8,
        instants: 2,
        interval_ms: 1000,
    };
    synth::write_capture(dir.path(), &spec).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_noisetop"))
        .args(["replay", "--batch", "--watch", "2-3", "--cpus", "0-3"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        readme_block(),
        want,
        "paste this into docs/batch.md:\n{want}"
    );
}
