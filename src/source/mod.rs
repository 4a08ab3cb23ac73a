//! The only code that touches the operating system: kernel files, MSRs and
//! perf counters, live or from a captured tree.

pub mod capture;
pub mod fs;
pub mod live;
pub mod msr;
pub mod perf;
pub mod tracer;
