//! Opening kernel tracepoints as perf events: where tracefs is, an
//! event's id, and the perf event a ring of one CPU is made of (the probe's
//! `power:cpu_idle` ring, `source::idle_ring`). The error texts say which
//! command would fix what is missing.
//!
//! noisetop writes no tracefs knob. The one thing it mounts is tracefs
//! itself, as root where it is mounted nowhere (`crate::os::sys::mount_tracefs`,
//! as perf does).

use std::io;
use std::path::{Path, PathBuf};

use perf_event::events::Tracepoint as PerfTracepoint;
use perf_event::{Builder, Clock, SampleFlag};

/// Where tracefs is mounted under a sysfs root, in the order the kernel
/// documents them (the debugfs path is the pre-4.1 one).
pub fn find_tracefs(sysfs: &Path) -> Option<PathBuf> {
    ["kernel/tracing", "kernel/debug/tracing"]
        .iter()
        .map(|rel| sysfs.join(rel))
        .find(|p| p.join("events").is_dir())
}

pub(crate) fn open_error(e: &io::Error, what: &str, cpu: u32) -> String {
    match e.raw_os_error() {
        Some(libc::EACCES | libc::EPERM) => format!(
            "perf_event_open {what} on CPU {cpu}: permission denied: run as root, or give noisetop \
             CAP_PERFMON (`setcap cap_perfmon+ep noisetop`) or set `sysctl kernel.perf_event_paranoid=-1`"
        ),
        Some(libc::ENODEV | libc::EINVAL | libc::ENXIO) => {
            format!("perf_event_open {what} on CPU {cpu}: {e} (is CPU {cpu} online?)")
        }
        Some(libc::EMFILE) => {
            format!(
                "perf_event_open {what} on CPU {cpu}: {e}: raise the open file limit (`ulimit -n`)"
            )
        }
        _ => format!("perf_event_open {what} on CPU {cpu}: {e}"),
    }
}

/// Why a tracepoint's event id could not be read.
#[derive(Debug, thiserror::Error)]
pub enum IdError {
    /// The id file cannot be read (no such event, or no permission).
    #[error("cannot read {}: {source}{}", .path.display(), denied_hint(.source))]
    Unreadable {
        /// The id file.
        path: PathBuf,
        /// What reading it said.
        source: io::Error,
    },
    /// The file holds no number.
    #[error("{}: not an event id: {text:?}", .path.display())]
    NotAnId {
        /// The id file.
        path: PathBuf,
        /// What it holds, trimmed.
        text: String,
    },
}

/// The command that gives a user read access to tracefs, when that is
/// what was refused.
fn denied_hint(e: &io::Error) -> &'static str {
    if e.kind() == io::ErrorKind::PermissionDenied {
        ": run as root, or give this user read access to tracefs \
         (`mount -o remount,gid=GROUP /sys/kernel/tracing`)"
    } else {
        ""
    }
}

pub(crate) fn read_id(tracefs: &Path, sys: &str, ev: &str) -> Result<u64, IdError> {
    let path = tracefs.join("events").join(sys).join(ev).join("id");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(source) => return Err(IdError::Unreadable { path, source }),
    };
    text.trim().parse().map_err(|_| IdError::NotAnId {
        text: text.trim().to_string(),
        path,
    })
}

/// The sample layout of a tracepoint ring, so that one parser reads its
/// events.
pub const SAMPLE: SampleFlag = SampleFlag::TID
    .union(SampleFlag::TIME)
    .union(SampleFlag::CPU)
    .union(SampleFlag::PERIOD)
    .union(SampleFlag::RAW);

/// `lead`: the event that owns the ring also writes perf's switch records
/// (with their time and task), which show a switch out of idle on kernels
/// that give no samples from the idle task.
pub(crate) fn builder(id: u64, cpu: u32, lead: bool, ring_bytes: usize) -> Builder<'static> {
    let mut b = Builder::new(PerfTracepoint::with_id(id));
    b.one_cpu(cpu as usize)
        .context_switch(lead)
        .sample_id_all(lead)
        .any_pid()
        .include_kernel()
        .sample_period(1)
        // with the period in each sample the kernel writes one sample per
        // event even where the event counts more than 1 (sched_stat_runtime
        // counts its ns: without it, one sample per ns, throttled)
        .sample(SAMPLE)
        .clockid(Clock::MONOTONIC)
        // The largest watermark the kernel accepts is the ring's data size;
        // no wakeup_events (that would wake per sample).
        .wakeup_watermark(ring_bytes);
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_tracefs_in_either_place() {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tracefs/sys");
        assert_eq!(find_tracefs(&fixture), Some(fixture.join("kernel/tracing")));
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("kernel/debug/tracing/events")).unwrap();
        assert_eq!(
            find_tracefs(dir.path()),
            Some(dir.path().join("kernel/debug/tracing"))
        );
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(find_tracefs(empty.path()), None);
    }

    #[test]
    fn an_event_id_is_read_or_the_reason_given() {
        let tracefs =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tracefs/sys/kernel/tracing");
        assert_eq!(read_id(&tracefs, "irq", "softirq_entry").unwrap(), 223);
        let dir = tempfile::tempdir().unwrap();
        let ev = dir.path().join("events/irq/softirq_entry");
        std::fs::create_dir_all(&ev).unwrap();
        std::fs::write(ev.join("id"), "x\n").unwrap();
        let e = read_id(dir.path(), "irq", "softirq_entry")
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with("softirq_entry/id: not an event id: \"x\""),
            "{e}"
        );
        let e = read_id(dir.path(), "irq", "softirq_exit").unwrap_err();
        assert!(matches!(e, IdError::Unreadable { .. }), "{e}");
        assert!(e.to_string().starts_with("cannot read "), "{e}");
        assert!(
            e.to_string()
                .ends_with("softirq_exit/id: No such file or directory (os error 2)"),
            "{e}"
        );
    }
}
