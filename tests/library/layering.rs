//! The tree is the data flow: each layer names only the layers before it,
//! and none of them names a sink, the command line, ratatui or clap. Read
//! from the source text, so it holds for code behind any feature or
//! `cfg(test)` too. Only the commands and `main.rs` name anyhow: the
//! library's errors are types that say what failed.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// The layers, lowest first: a module may name itself and those before it.
const LAYERS: [&str; 12] = [
    "base", "os", "collect", "model", "metric", "sample", "trace", "noise", "check", "probe",
    "pipeline", "record",
];

/// What no layer may name: the sinks and the command line are on top.
const ABOVE: [&str; 5] = ["tui", "cmd", "cli", "serve", "output"];

/// Crates that belong to the sinks and the command line.
const SINK_CRATES: [&str; 2] = ["ratatui", "clap"];

/// Files of `dir`, recursively, in order.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The text of a file with its comments blanked (doc comments too: an
/// intra-doc link names a module as much as a `use` does, so those stay).
fn code_of(text: &str) -> String {
    text.lines()
        .map(|l| {
            let t = l.trim_start();
            if t.starts_with("///") || t.starts_with("//!") {
                l.to_string()
            } else if let Some(i) = l.find("// ") {
                l[..i].to_string()
            } else if t.starts_with("//") {
                String::new()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `crate::X` (and `noisetop::X`) a text names, with its line.
fn named_modules(code: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (no, line) in code.lines().enumerate() {
        for prefix in ["crate::", "noisetop::"] {
            let mut rest = line;
            while let Some(i) = rest.find(prefix) {
                let before = rest[..i].chars().last();
                rest = &rest[i + prefix.len()..];
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    continue;
                }
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    out.push((no + 1, name));
                }
            }
        }
    }
    out
}

/// Whether a line uses one of the sink crates (a path, a `use`, a derive).
fn names_sink_crate(line: &str) -> Option<&'static str> {
    SINK_CRATES.into_iter().find(|c| {
        line.match_indices(c).any(|(i, _)| {
            let before = line[..i].chars().last();
            let after = &line[i + c.len()..];
            !before.is_some_and(|b| b.is_alphanumeric() || b == '_' || b == ':')
                && (after.starts_with("::") || after.starts_with(';') || after.starts_with(" as"))
        })
    })
}

/// The upward edges under `src`: `file:line: layer names what`.
fn violations(src: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for (rank, layer) in LAYERS.iter().enumerate() {
        let dir = src.join(layer);
        assert!(dir.is_dir(), "layer {layer} is missing: {}", dir.display());
        for file in rust_files(&dir) {
            let code = code_of(&fs::read_to_string(&file).unwrap());
            let shown = file
                .strip_prefix(src.parent().unwrap())
                .unwrap()
                .display()
                .to_string();
            for (no, name) in named_modules(&code) {
                let upward = match LAYERS.iter().position(|l| *l == name) {
                    Some(r) => r > rank,
                    None => ABOVE.contains(&name.as_str()),
                };
                if upward {
                    out.push(format!("{shown}:{no}: {layer} names {name}"));
                }
            }
            for (no, line) in code.lines().enumerate() {
                if let Some(c) = names_sink_crate(line) {
                    out.push(format!("{shown}:{no}: {layer} names {c}", no = no + 1));
                }
            }
        }
    }
    out
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// A copy of `src/` under `dir`, for a test to plant a line in.
fn copy_of_src(dir: &Path) -> PathBuf {
    let copy = dir.join("src");
    for file in rust_files(&src()) {
        let to = copy.join(file.strip_prefix(src()).unwrap());
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        fs::copy(&file, &to).unwrap();
    }
    copy
}

#[test]
fn no_layer_names_one_above_it_or_a_sink() {
    let v = violations(&src());
    assert!(v.is_empty(), "upward imports:\n{}", v.join("\n"));
}

#[test]
fn a_planted_upward_import_is_caught() {
    // a copy of the tree with one line planted in the OS layer
    let dir = tempfile::tempdir().unwrap();
    let copy = copy_of_src(dir.path());
    let planted = copy.join("os/stop.rs");
    let text = fs::read_to_string(&planted).unwrap();
    fs::write(
        &planted,
        format!("{text}\nfn planted() {{ crate::tui::restore::leave(); }}\n"),
    )
    .unwrap();
    let lines = text.lines().count() + 2;
    let clap = copy.join("record/columns.rs");
    let text = fs::read_to_string(&clap).unwrap();
    fs::write(&clap, format!("use clap::ValueEnum;\n{text}")).unwrap();
    let sample = copy.join("model/snapshot.rs");
    let text = fs::read_to_string(&sample).unwrap();
    fs::write(&sample, format!("use crate::pipeline::Sample;\n{text}")).unwrap();
    assert_eq!(
        violations(&copy),
        vec![
            "src/os/stop.rs:".to_string() + &lines.to_string() + ": os names tui",
            "src/model/snapshot.rs:1: model names pipeline".to_string(),
            "src/record/columns.rs:1: record names clap".to_string(),
        ]
    );
}

/// Files under `src` other than the commands and `main.rs` that name
/// anyhow: `file:line`. The library says what failed in types of its own;
/// the commands wrap them with context for the user.
fn anyhow_outside_the_commands(src: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for file in rust_files(src) {
        let rel = file.strip_prefix(src).unwrap();
        if rel.starts_with("cmd") || rel == Path::new("main.rs") {
            continue;
        }
        let code = code_of(&fs::read_to_string(&file).unwrap());
        for (no, line) in code.lines().enumerate() {
            let t = line.trim_start();
            if t.starts_with("///") || t.starts_with("//!") {
                continue;
            }
            if line.match_indices("anyhow").any(|(i, _)| {
                let before = line[..i].chars().last();
                let after = line[i + "anyhow".len()..].chars().next();
                !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                    && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
            }) {
                out.push(format!("src/{}:{}", rel.display(), no + 1));
            }
        }
    }
    out
}

#[test]
fn only_the_commands_name_anyhow() {
    let v = anyhow_outside_the_commands(&src());
    assert!(
        v.is_empty(),
        "anyhow outside src/cmd and main.rs:\n{}",
        v.join("\n")
    );
}

#[test]
fn a_planted_anyhow_is_caught_and_the_commands_may_keep_theirs() {
    let dir = tempfile::tempdir().unwrap();
    let copy = copy_of_src(dir.path());
    let planted = copy.join("pipeline/replay.rs");
    let text = fs::read_to_string(&planted).unwrap();
    fs::write(&planted, format!("use anyhow::Result;\n{text}")).unwrap();
    let hook = copy.join("tui/run.rs");
    let text = fs::read_to_string(&hook).unwrap();
    fs::write(
        &hook,
        format!("{text}\nfn planted() -> anyhow::Result<()> {{ Ok(()) }}\n"),
    )
    .unwrap();
    let lines = text.lines().count() + 2;
    assert_eq!(
        anyhow_outside_the_commands(&copy),
        vec![
            "src/pipeline/replay.rs:1".to_string(),
            format!("src/tui/run.rs:{lines}"),
        ]
    );
    // the commands' own use is not counted (they hold some already)
    assert!(
        rust_files(&copy.join("cmd"))
            .iter()
            .any(|f| fs::read_to_string(f).unwrap().contains("anyhow"))
    );
}

#[test]
fn only_the_entry_points_sit_at_the_root() {
    let mut loose: Vec<String> = fs::read_dir(src())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    loose.sort();
    assert_eq!(loose, ["cli.rs", "lib.rs", "main.rs"]);
}

#[test]
fn no_item_has_two_public_paths() {
    // a `pub use` may only lift an item out of a private module: then the
    // lifted path is the one path
    let mut twice = Vec::new();
    for file in rust_files(&src()) {
        let code = code_of(&fs::read_to_string(&file).unwrap());
        let public_mods: BTreeSet<String> = code
            .lines()
            .filter_map(|l| l.trim().strip_prefix("pub mod "))
            .map(|m| m.trim_end_matches(';').to_string())
            .collect();
        for (no, line) in code.lines().enumerate() {
            let Some(path) = line.trim().strip_prefix("pub use ") else {
                continue;
            };
            let path = path.strip_prefix("self::").unwrap_or(path);
            let first = path.split("::").next().unwrap_or("");
            let from_elsewhere = matches!(first, "crate" | "super") || public_mods.contains(first);
            if from_elsewhere {
                let shown = file.strip_prefix(src()).unwrap().display();
                twice.push(format!("src/{shown}:{}: {}", no + 1, line.trim()));
            }
        }
    }
    assert!(
        twice.is_empty(),
        "items reachable by two paths:\n{}",
        twice.join("\n")
    );
}
