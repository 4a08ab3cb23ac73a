//! noisetop: per-CPU frequency, C-state and noise monitor for Linux.
//!
//! Data flows one way, and the layers below may only name the ones before
//! them (`tests/library/layering.rs` holds it): `base` (plain types) → `os` (kernel
//! files, perf, BPF, MSRs, or a capture) → `collect` (the kernel's formats
//! parsed) → `model` (machine, snapshot, interval) → `metric` (the
//! catalogue: each figure declared once, for every sink) → `sample` (the sampler
//! and the engine that makes intervals) → `trace` (who ran) → `noise` (the
//! rules that judge) → `check` → `probe` → `pipeline` (the driver) →
//! `record`. The sinks sit on top and name nothing of each other's: the
//! `tui`, the batch table in `output`, the Prometheus exporter in `serve`,
//! and the commands in `cmd` that wire them to the `cli`.

pub mod base;
pub mod check;
pub mod cli;
pub mod cmd;
pub mod collect;
pub mod metric;
pub mod model;
pub mod noise;
pub mod os;
pub mod output;
pub mod pipeline;
pub mod probe;
pub mod record;
pub mod sample;
pub mod serve;
#[cfg(any(test, feature = "synth"))]
pub mod testkit;
pub mod trace;
pub mod tui;
