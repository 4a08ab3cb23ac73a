//! The floor: plain types every layer may use and that import nothing of
//! the crate (a CPU list, a per-CPU map, a parse error, the CPU vendor).

pub(crate) mod counter;
pub mod cpu_map;
pub mod cpulist;
mod error;
pub(crate) mod name;
mod vendor;

pub use error::ParseError;
pub use vendor::Vendor;
