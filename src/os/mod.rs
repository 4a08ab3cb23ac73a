//! The only code that touches the operating system: kernel files, MSRs and
//! perf counters, live or from a captured tree.

pub mod bpf;
pub mod capture;
pub mod cgroups;
pub mod fs;
pub mod hw;
pub(crate) mod idle_ring;
pub(crate) mod ipi_count;
pub mod live;
pub mod msr;
pub mod perf;
pub(crate) mod probe_os;
pub(crate) mod stop;
pub mod switch_ring;
pub mod sys;
pub mod tasks;
pub(crate) mod tp_format;
pub mod tracepoint;

/// Reads at most `cap` bytes of a regular file as text: a FIFO or a device
/// in its place neither blocks the open (`O_NONBLOCK`) nor fills memory.
pub fn read_small(path: &std::path::Path, cap: u64) -> std::io::Result<String> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut text = String::new();
    f.take(cap).read_to_string(&mut text)?;
    Ok(text)
}
