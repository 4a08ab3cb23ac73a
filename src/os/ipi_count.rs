//! The IPIs noisetop itself sends to the watched CPUs, counted by the
//! kernel: the `ipi:ipi_send_cpu` and `ipi:ipi_send_cpumask` tracepoints
//! (Linux 6.6+), one counter each per noisetop thread (threads started
//! later inherit them), with a tracepoint filter that keeps only IPIs whose
//! target is a watched CPU and that the task's own code sent (not an
//! interrupt that ran on its time). A task-bound counter counts where its thread
//! runs, which is never a watched CPU: reading it interrupts nobody there.
//!
//! Opened before any other perf event, it also counts the IPIs that
//! installing CPU-wide events on the watched CPUs costs (setup).
//!
//! A single-target IPI with no callback (a reschedule) or sent from the
//! scheduler's wake-up path (to run its wake list there) is a wake-up:
//! noisetop's code woke a task the kernel had placed on the watched CPU
//! (the terminal's kworker after a write to it, a pipe's reader). Those are
//! counted apart from the IPIs that run noisetop's requests there (a
//! cross-CPU read, code patching, a TLB flush), which are what the
//! hands-off promise is about.

use std::ffi::CString;
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use perf_event::events::Tracepoint;
use perf_event::{Builder, Counter};

use crate::base::{Cause, cpulist};

/// What noisetop has sent to the watched CPUs since the counters opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct IpiCount {
    /// Single-target IPIs (`ipi_send_cpu`) to a watched CPU that run a
    /// function there, wake-ups apart.
    pub single: u64,
    /// Multi-target sends (`ipi_send_cpumask`) whose mask has a watched CPU.
    pub mask: u64,
    /// Single-target reschedule and wake-list IPIs: a task noisetop woke
    /// runs on the watched CPU.
    pub woke: u64,
}

impl IpiCount {
    /// The IPIs that did noisetop's work on a watched CPU (wake-ups apart).
    pub fn total(self) -> u64 {
        self.single + self.mask
    }
}

/// What tells a wake-up's IPI, most exact first, for kernels that lack a
/// symbol: no callback (a reschedule), or sent from the scheduler's
/// wake-up path (`ttwu_queue_wakelist`, which a build may fold into
/// `try_to_wake_up`) to run the wake list there; the callback of that one is
/// the generic single-call handler, as for any other call. The kernel's
/// filter parser takes a function's name to run to the next blank, hence
/// the one before `)`.
const WAKE_TESTS: [&str; 3] = [
    "callback == 0 || callsite.function == ttwu_queue_wakelist || \
     callsite.function == try_to_wake_up )",
    "callback == 0 || callsite.function == try_to_wake_up )",
    "callback == 0)",
];

/// `common_flags` of a record written in a hardirq (0x08), a softirq
/// (0x10) or an NMI (0x40): an interrupt that ran on noisetop's time (an
/// RCU softirq waking its kthread on the watched CPU), not noisetop's code.
pub const IN_INTERRUPT: u32 = 0x58;

/// The tracepoint filter that keeps single-target IPIs to `cpus` sent by
/// the task itself: those that run a function there when `wakes` is false,
/// the wake-ups when true, told by `WAKE_TESTS[test]`.
pub fn cpu_filter(cpus: &[u32], wakes: bool, test: usize) -> String {
    let any = cpus
        .iter()
        .map(|c| format!("cpu == {c}"))
        .collect::<Vec<_>>()
        .join(" || ");
    let sign = if wakes { "" } else { "!" };
    format!(
        "({any}) && !(common_flags & {IN_INTERRUPT:#x}) && {sign}({}",
        WAKE_TESTS[test]
    )
}

/// The tracepoint filter that keeps multi-target IPIs whose mask meets
/// `cpus` (the kernel's cpumask filter syntax, Linux 6.6+), sent by the
/// task itself.
pub fn mask_filter(cpus: &[u32]) -> String {
    let list: Vec<String> = cpus.iter().map(u32::to_string).collect();
    format!(
        "(cpumask & CPUS{{{}}}) && !(common_flags & {IN_INTERRUPT:#x})",
        list.join(",")
    )
}

/// Counters of the IPIs this process sends to some CPUs.
pub struct SelfIpis {
    tracefs: std::path::PathBuf,
    cpus: Vec<u32>,
    single: Vec<Counter>,
    mask: Vec<Counter>,
    woke: Vec<Counter>,
    /// Counts of the counters closed by a retarget.
    carried: IpiCount,
}

impl std::fmt::Debug for SelfIpis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SelfIpis")
            .field("cpus", &self.cpus)
            .finish_non_exhaustive()
    }
}

/// Why noisetop's own IPIs cannot be counted.
#[derive(Debug, thiserror::Error)]
pub enum IpiError {
    /// The tracepoint's id cannot be read: no such tracepoint (before
    /// Linux 6.6), or no access to tracefs.
    #[error("cannot read {}: {source} (the ipi tracepoints came with Linux 6.6)", .path.display())]
    NoTracepoint {
        /// The id file.
        path: PathBuf,
        /// What reading it said.
        source: io::Error,
    },
    /// The id file holds no number.
    #[error("{}: not an event id", .0.display())]
    NotAnId(PathBuf),
    /// `perf_event_open` refused the tracepoint.
    #[error("perf_event_open of an ipi tracepoint: {0}")]
    Open(io::Error),
    /// The kernel refused a filter (it lacks a field or symbol it names).
    #[error("the kernel refused the filter `{filter}` on CPU {cpus}'s IPIs: {source}")]
    Filter {
        /// The filter.
        filter: String,
        /// The CPUs, as a list.
        cpus: String,
        /// What the ioctl said.
        source: io::Error,
    },
    /// A counter cannot be enabled.
    #[error("enabling an ipi counter: {0}")]
    Enable(io::Error),
}

impl IpiError {
    /// The kind of reason: permission, or what the kernel lacks.
    pub fn cause(&self) -> Cause {
        let e = match self {
            IpiError::NoTracepoint { source, .. } => source,
            IpiError::Open(e) | IpiError::Enable(e) => e,
            IpiError::Filter { .. } | IpiError::NotAnId(_) => return Cause::KernelLacks,
        };
        match e.raw_os_error() {
            Some(libc::EPERM | libc::EACCES) => Cause::Permission,
            Some(libc::ENOENT | libc::ENODEV | libc::EINVAL | libc::EOPNOTSUPP) => {
                Cause::KernelLacks
            }
            _ => Cause::Failed,
        }
    }
}

fn event_id(tracefs: &Path, name: &str) -> Result<u64, IpiError> {
    let path = tracefs.join("events/ipi").join(name).join("id");
    let t = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(source) => return Err(IpiError::NoTracepoint { path, source }),
    };
    t.trim().parse().map_err(|_| IpiError::NotAnId(path))
}

/// `PERF_EVENT_IOC_SET_FILTER`, `_IOW('$', 6, char *)`.
const PERF_EVENT_IOC_SET_FILTER: u64 = 0x4008_2406;

#[expect(unsafe_code, reason = "PERF_EVENT_IOC_SET_FILTER has no safe wrapper")]
fn set_filter(c: &Counter, filter: &str) -> io::Result<()> {
    let f = CString::new(filter).map_err(io::Error::other)?;
    // SAFETY: the fd is an open perf event; the kernel copies the
    // NUL-terminated string and keeps no pointer to it.
    let rc = unsafe { libc::ioctl(c.as_raw_fd(), PERF_EVENT_IOC_SET_FILTER as _, f.as_ptr()) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn threads() -> Vec<i32> {
    std::fs::read_dir("/proc/self/task")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

impl SelfIpis {
    /// Opens the counters for every thread of this process, filtered to
    /// IPIs that target `cpus`; `tracefs` is where the event ids are read.
    /// The reason when the kernel has no such tracepoints or refuses.
    pub fn open(tracefs: &Path, cpus: &[u32]) -> Result<SelfIpis, IpiError> {
        let single_id = event_id(tracefs, "ipi_send_cpu")?;
        let mask_id = event_id(tracefs, "ipi_send_cpumask")?;
        let mut s = SelfIpis {
            tracefs: tracefs.to_path_buf(),
            cpus: cpus.to_vec(),
            single: Vec::new(),
            mask: Vec::new(),
            woke: Vec::new(),
            carried: IpiCount::default(),
        };
        if cpus.is_empty() {
            return Ok(s);
        }
        let list = cpulist::format(cpus);
        let mut test = 0;
        for tid in threads() {
            for (id, wakes, into) in [
                (single_id, Some(false), &mut s.single),
                (single_id, Some(true), &mut s.woke),
                (mask_id, None, &mut s.mask),
            ] {
                let c = Builder::new(Tracepoint::with_id(id))
                    .observe_pid(tid)
                    .any_cpu()
                    // threads started later count too, a command it
                    // starts (`run`) does not (Linux 5.13+)
                    .inherit(true)
                    .inherit_thread(true)
                    .remove_on_exec(true)
                    .include_kernel()
                    .build()
                    .map_err(IpiError::Open)?;
                let filter = |test| match wakes {
                    Some(wakes) => cpu_filter(cpus, wakes, test),
                    None => mask_filter(cpus),
                };
                let mut said = set_filter(&c, &filter(test));
                // a kernel without a symbol the test names: the next test
                while said.is_err() && wakes.is_some() && test + 1 < WAKE_TESTS.len() {
                    test += 1;
                    said = set_filter(&c, &filter(test));
                }
                if let Err(source) = said {
                    return Err(IpiError::Filter {
                        filter: filter(test),
                        cpus: list,
                        source,
                    });
                }
                into.push(c);
            }
        }
        for c in s
            .single
            .iter_mut()
            .chain(s.mask.iter_mut())
            .chain(s.woke.iter_mut())
        {
            c.enable().map_err(IpiError::Enable)?;
        }
        Ok(s)
    }

    /// The CPUs whose IPIs are counted.
    pub fn cpus(&self) -> &[u32] {
        &self.cpus
    }

    /// Counts IPIs to `cpus` from now on; what was counted stays in the
    /// totals.
    pub fn retarget(&mut self, cpus: &[u32]) -> Result<(), IpiError> {
        if cpus == self.cpus {
            return Ok(());
        }
        let so_far = self.read().unwrap_or(self.carried);
        let mut next = SelfIpis::open(&self.tracefs, cpus)?;
        next.carried = so_far;
        *self = next;
        Ok(())
    }

    /// The counts so far (watched CPUs of earlier targets included);
    /// `None` if a counter cannot be read.
    pub fn read(&mut self) -> Option<IpiCount> {
        let sum = |v: &mut Vec<Counter>| -> Option<u64> {
            v.iter_mut().map(|c| c.read().ok()).sum::<Option<u64>>()
        };
        Some(IpiCount {
            single: self.carried.single + sum(&mut self.single)?,
            mask: self.carried.mask + sum(&mut self.mask)?,
            woke: self.carried.woke + sum(&mut self.woke)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_name_each_watched_cpu() {
        assert_eq!(
            cpu_filter(&[1], false, 0),
            "(cpu == 1) && !(common_flags & 0x58) && !(callback == 0 || \
             callsite.function == ttwu_queue_wakelist || callsite.function == try_to_wake_up )"
        );
        assert_eq!(
            cpu_filter(&[1, 3], true, 1),
            "(cpu == 1 || cpu == 3) && !(common_flags & 0x58) && (callback == 0 || \
             callsite.function == try_to_wake_up )"
        );
        assert_eq!(
            cpu_filter(&[1], true, 2),
            "(cpu == 1) && !(common_flags & 0x58) && (callback == 0)"
        );
        assert_eq!(
            mask_filter(&[1, 3]),
            "(cpumask & CPUS{1,3}) && !(common_flags & 0x58)"
        );
    }

    #[test]
    fn without_the_ipi_tracepoints_the_reason_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let e = SelfIpis::open(dir.path(), &[1]).unwrap_err();
        assert_eq!(e.cause(), Cause::KernelLacks, "ENOENT: {e}");
        let e = e.to_string();
        assert!(
            e.starts_with(&format!(
                "cannot read {}/events/ipi/ipi_send_cpu/id: ",
                dir.path().display()
            )),
            "{e}"
        );
        assert!(
            e.ends_with("(the ipi tracepoints came with Linux 6.6)"),
            "{e}"
        );
    }
}
