//! The error of a kernel file whose text did not have the expected shape.

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
