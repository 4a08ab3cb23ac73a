//! The program as a user runs it: the real binary on captures, replays,
//! fixtures and recordings; its help, man page and errors; output that
//! cannot be written; the exporter's HTTP server; the dashboard in tmux;
//! and the documents' samples, drawn by the binary. What these tests judge
//! does not depend on what else runs on the machine, so their files run
//! side by side.
//!
//! One binary, so that a change to the library links it once. Each module
//! was a test file of its own and keeps its name (`cargo test --test cli
//! record::`).

#[path = "../common/docs.rs"]
mod docs;
#[path = "../common/recordings.rs"]
mod recordings;
#[path = "../serve_support/mod.rs"]
mod serve_support;
#[path = "../common/tmux.rs"]
mod tmux;

mod cli;
mod compare_field;
mod compare_probe;
mod foreign_root;
mod hostile_trees;
mod interval_clock;
mod mutations;
mod observer_cost_script;
mod output_errors;
mod probe_cli;
mod readme_batch;
mod readme_claims;
mod record;
mod record_edges;
mod record_full_disk;
mod serve_http;
mod serve_probe;
mod tui_sigquit;
mod tui_tmux;
