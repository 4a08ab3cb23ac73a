//! Where `run`'s report goes: standard output, or with `-o FILE` a file,
//! leaving the command's own stdout and stderr to it alone (as `perf stat
//! -o` does). The file is created before the command runs, so that a
//! place that cannot be written is said before anything is spent.

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// The report's destination.
pub enum Output {
    /// Standard output.
    Stdout,
    /// `-o FILE`, created (emptied when it exists).
    File(PathBuf, File),
}

impl Output {
    /// Opens `-o FILE` now, or standard output; a file that cannot be
    /// created is a usage error.
    pub fn open(path: Option<&Path>) -> Result<Output> {
        let Some(p) = path else {
            return Ok(Output::Stdout);
        };
        if p.is_dir() {
            return Err(crate::cmd::UsageError(format!(
                "-o {}: a folder; the report is written to a file",
                p.display()
            ))
            .into());
        }
        match File::create(p) {
            Ok(f) => Ok(Output::File(p.to_path_buf(), f)),
            Err(e) => Err(crate::cmd::UsageError(format!(
                "-o {}: cannot write: {}",
                p.display(),
                crate::os::sys::os_words(&e)
            ))
            .into()),
        }
    }

    /// Whether the report goes to standard output.
    pub fn is_stdout(&self) -> bool {
        matches!(self, Output::Stdout)
    }

    /// Writes the whole report.
    pub fn write(&mut self, text: &str) -> Result<()> {
        match self {
            Output::Stdout => {
                crate::cmd::out::emit(&mut std::io::stdout().lock(), text)?;
                Ok(())
            }
            Output::File(p, f) => f
                .write_all(text.as_bytes())
                .and_then(|()| f.flush())
                .with_context(|| format!("cannot write the report to {}", p.display())),
        }
    }
}
