//! noisetop: per-CPU frequency, C-state and noise monitor for Linux.
//!
//! Data flows one way: `source` → `snapshot` → `interval` → sinks.

pub mod collect;
pub mod counter;
pub mod source;
