//! Draws the pictures of the README and docs/dashboard.md
//! (`noisetop::cmd::shot::PICTURES`) into a folder, `assets/` by default:
//!
//! ```sh
//! cargo run --release --example screenshot -- assets/
//! ```
//!
//! `cores.svg` and `dashboard.svg` replay the capture kept in
//! `assets/captures/vm-2cpu-intruder`; `overview.svg` reads the EPYC tree
//! of the public captures (`../shared/captures`), and is left out, with a
//! message and a failing exit, where they are absent.
//! `tests/library/readme_screenshots.rs` checks that the committed pictures are
//! what this draws.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use noisetop::cmd::shot::{PICTURES, screen, svg};

fn main() -> ExitCode {
    let out = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "assets".into()));
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut failed = false;
    for p in &PICTURES {
        let tree = repo.join(p.tree);
        if !tree.is_dir() {
            eprintln!("{}: {} is absent: not drawn", p.file, p.tree);
            failed = true;
            continue;
        }
        let written = screen(p, repo).map_err(|e| format!("{e:#}")).and_then(|b| {
            let path = out.join(p.file);
            std::fs::write(&path, svg(&b))
                .map(|()| path)
                .map_err(|e| e.to_string())
        });
        match written {
            Ok(path) => eprintln!("wrote {} from {}", path.display(), p.tree),
            Err(e) => {
                eprintln!("{}: {e}", p.file);
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
