//! noisetop: per-CPU frequency, C-state and noise monitor for Linux.
//!
//! Data flows one way: `source` (live files, perf, MSRs, tracepoints, or a
//! capture) → `sampler` → `snapshot` → `engine` (delta into an `interval`)
//! → `pipeline::Driver` (the `noise` rules judge it) → sinks: the `tui`,
//! the batch table in `output`, `record`, the `run` report in `cmd`, and
//! the Prometheus exporter in `serve`.

pub mod base;
pub mod check;
pub mod cli;
pub mod cmd;
pub mod collect;
pub mod config;
pub mod counter;
pub use base::cpu_map;
pub mod engine;
pub mod hands_off;
pub mod interval;
pub mod irq_rates;
pub mod ladder;
pub mod machine;
pub mod metric;
pub mod name;
pub mod noise;
pub mod output;
pub mod pipeline;
pub mod probe;
pub mod record;
pub mod sampler;
pub mod serve;
pub mod snapshot;
pub mod source;
pub mod stop;
#[cfg(any(test, feature = "synth"))]
pub mod synth;
pub mod sys;
pub mod trace;
pub mod tui;
