//! The project's documents as the tests read them: README.md and the pages
//! under docs/, each test checking the text that states what it checks.
// each test uses the part of this it needs
#![allow(dead_code)]

use std::path::Path;

/// The repository's root.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A document's text, by its path from the repository's root.
pub fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Every document, README.md first, then docs/*.md by name: (path, text).
pub fn all() -> Vec<(String, String)> {
    let mut pages: Vec<String> = std::fs::read_dir(root().join("docs"))
        .expect("a docs folder")
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
        .filter_map(|e| e.file_name().into_string().ok())
        .map(|n| format!("docs/{n}"))
        .collect();
    pages.sort();
    std::iter::once("README.md".to_string())
        .chain(pages)
        .map(|p| {
            let text = read(&p);
            (p, text)
        })
        .collect()
}

/// The text of the `## title` section of the document at `rel`, up to the
/// next `## ` heading.
pub fn section(rel: &str, title: &str) -> String {
    let text = read(rel);
    let head = format!("\n## {title}\n");
    let start = text
        .find(&head)
        .unwrap_or_else(|| panic!("{rel} has no section {title:?}"));
    let body = &text[start + head.len()..];
    let end = body.find("\n## ").unwrap_or(body.len());
    body[..end].to_string()
}

/// `text` with every run of white space one space: a sentence the page
/// wraps reads as one line.
pub fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
