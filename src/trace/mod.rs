//! Exact attribution on watched CPUs from scheduler and interrupt
//! tracepoints: who ran there, and what interrupted it for how long.
//!
//! `format` reads the payload layouts tracefs publishes, `decode` turns raw
//! perf samples into typed events with them, `account` walks one CPU's events
//! into per-window and per-session times, and `procinfo` adds the command
//! line and cgroup of a task for display. The perf side lives in
//! `source::tracer`.

pub mod account;
pub mod crosscheck;
pub mod decode;
pub mod format;
pub mod in_kernel;
pub mod procinfo;

pub use account::{
    CpuAccount, CpuTrace, SourceKind, Stolen, TaskId, TaskTime, TraceSession, TraceWindow,
};
pub use decode::{Decoder, RawSample, Tracepoint};
