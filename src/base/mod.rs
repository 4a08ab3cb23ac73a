//! The floor: plain types every layer may use and that import nothing of
//! the crate (a CPU list, a per-CPU map, a parse error, the CPU vendor,
//! why something is unavailable).

pub(crate) mod counter;
pub mod cpu_map;
pub mod cpulist;
mod error;
pub(crate) mod name;
mod unavailable;
mod vendor;

pub use error::{FileError, ParseError};
pub use unavailable::{Cause, Unavailable};
pub use vendor::Vendor;
