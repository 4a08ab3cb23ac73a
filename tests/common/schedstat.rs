//! A task's time on a CPU from its own counter: the first field of
//! /proc/PID/schedstat (`sum_exec_runtime`, ns), the reference the live
//! tests and the tracing-cost example hold noisetop's figures against.
//! Included with `#[path]`.

/// `pid`'s time on a CPU so far, ns; `"self"` for the caller.
pub fn run_ns(pid: impl std::fmt::Display) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/schedstat"))
        .expect("schedstat readable")
        .split_whitespace()
        .next()
        .expect("schedstat has a first field")
        .parse()
        .expect("schedstat's first field is a number")
}
