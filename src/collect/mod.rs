//! One module per kernel interface. Each turns raw text (or raw counters)
//! into plain data; none of them computes a rate.

pub mod cpufreq;
pub mod cpuidle;
pub mod cpuinfo;
pub mod cpulist;
pub mod facts;
pub mod hwmon;
pub mod interrupts;
pub mod powercap;
pub mod softirqs;
pub mod stat;
pub mod topology;
pub mod x86;

use thiserror::Error;

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
