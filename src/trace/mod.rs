//! Who ran on each CPU and what interrupted it: the window every source
//! gives (`window`), made from the in-kernel counts (`in_kernel`), and the
//! interruption sources it names (`sources`).

pub mod in_kernel;
pub(crate) mod sources;
mod window;

pub use window::{CpuTrace, SourceKind, Stolen, TaskId, TaskTime, TraceWindow, add_intruders};
