//! Who ran on each CPU and what interrupted it: the window every source
//! gives (`window`), made from the in-kernel counts (`in_kernel`), the
//! interruption sources it names (`sources`), and what /proc says of a task
//! for display (`procinfo`).

pub mod in_kernel;
pub mod procinfo;
pub mod sources;
mod window;

pub use window::{CpuTrace, SourceKind, Stolen, TaskId, TaskTime, TraceWindow, add_intruders};
