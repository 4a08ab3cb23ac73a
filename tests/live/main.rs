//! The live tests: noisetop on this machine's kernel, held to the kernel's
//! own counters and to peer tools (perf, cyclictest, schedstat, tracefs,
//! Prometheus with `node_exporter`), beside busy loops and probes on CPU 1;
//! who ran without tracefs, as another user, in a cgroup; and the packaging
//! tests, which build and run the image, the .deb, the static binary and
//! the systemd unit as root.
//!
//! One binary, so that a change to the library links it once. Each module
//! was a test file of its own and keeps its name (`cargo test --test live
//! probe_live::`). Every test here takes its file's turn first
//! ([`turn::take`]): tests of one file run side by side, as they did in a
//! binary of their own, and never beside another file's.

#[path = "../common/cpu1.rs"]
mod cpu1;
mod packaging;
#[path = "../common/schedstat.rs"]
mod schedstat;
#[path = "../serve_support/mod.rs"]
mod serve_support;
#[path = "../common/spinner.rs"]
mod spinner;
#[path = "../common/tmux.rs"]
mod tmux;
mod turn;
#[path = "../common/wakeups.rs"]
mod wakeups;

mod batch_watch;
mod capture_replay;
mod cgroup_live;
mod hands_off_counts;
mod hands_off_live;
mod image;
mod in_kernel_live;
mod intruder_live;
mod live_counts;
mod owner_tmux;
mod package_deb;
mod perf_live;
mod probe_beside;
mod probe_live;
mod record_live;
mod record_sources;
mod run_cmd;
mod run_series;
mod serve_cli;
mod serve_prometheus;
mod static_binary;
mod systemd_unit;
mod tui_cost;
mod unprivileged;
mod who_ran_untraced;
