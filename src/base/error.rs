//! The error of a kernel file whose text did not have the expected shape,
//! and of a file the user named (a config) that cannot be used.

use thiserror::Error;

use crate::base::{Cause, Unavailable};

/// A kernel file whose content did not have the expected shape.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("{file} line {line}: {msg}")]
pub struct ParseError {
    /// The file, as the kernel names it (`/proc/interrupts`).
    pub file: &'static str,
    /// The 1-based line number, 0 when the whole file is at fault.
    pub line: usize,
    /// What was wrong.
    pub msg: String,
}

/// A file whose text does not parse leaves what it holds unknown.
impl From<ParseError> for Unavailable {
    fn from(e: ParseError) -> Unavailable {
        Unavailable::new(Cause::Failed, e.to_string())
    }
}

impl ParseError {
    /// Builds an error for one line of one file.
    pub fn new(file: &'static str, line: usize, msg: impl Into<String>) -> Self {
        ParseError {
            file,
            line,
            msg: msg.into(),
        }
    }
}

/// Why a file the user named (a config file) cannot be used: it cannot be
/// read, or its text is refused for the reason `E` gives.
#[derive(Debug, Error)]
pub enum FileError<E: std::error::Error + 'static> {
    /// The file cannot be read.
    #[error("{}: {err}", .path.display())]
    Unreadable {
        /// The file.
        path: std::path::PathBuf,
        /// What reading it said.
        err: std::io::Error,
    },
    /// Its text is refused.
    #[error("{}: {err}", .path.display())]
    Refused {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        err: E,
    },
}
