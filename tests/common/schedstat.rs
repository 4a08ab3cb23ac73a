//! A task's time on a CPU from its own counter: the first field of
//! /proc/PID/schedstat (`sum_exec_runtime`, ns), the reference the live
//! tests hold noisetop's figures against. Declared by their binary.

/// `pid`'s time on a CPU so far, ns; `"self"` for the caller.
pub fn run_ns(pid: impl std::fmt::Display) -> u64 {
    ns_at(std::path::Path::new(&format!("/proc/{pid}/schedstat")))
        .expect("schedstat readable, its first field a number")
}

/// The time on a CPU in one schedstat file (a process's or a thread's,
/// `/proc/PID/task/TID/schedstat`), ns; `None` once the task is gone.
pub fn ns_at(path: &std::path::Path) -> Option<u64> {
    std::fs::read_to_string(path)
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}
