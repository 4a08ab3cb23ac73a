//! The `power:cpu_idle` tracepoint of probed CPUs through perf rings: when
//! each CPU entered an idle state (and which) and when it left it, so the
//! probe can name the state every wake-up came out of.
//!
//! The events are opened as the tracer opens its own (same builder, same
//! error advice) with one ring per CPU; the rings are read from the
//! caller's CPU, which is plain memory access, and the kernel never wakes
//! the reader (the watermark is the whole ring).

use std::path::{Path, PathBuf};

use perf_event::Sampler;
use perf_event::data::Record as DataRecord;

use crate::os::tp_format::{self, IntAt};
use crate::os::tracepoint::{IdError, builder, find_tracefs, open_error, read_id};

/// Bytes of ring per probed CPU: an idle entry and exit are about 80 bytes
/// of records together, so at 10 000 idle periods a second one ring holds
/// more than a second, and the probe reads it every 100 ms.
pub const IDLE_RING_BYTES: usize = 2 << 20;

/// The `state` value the kernel writes when a CPU leaves idle
/// (`PWR_EVENT_EXIT`, `(u32)-1`).
pub const PWR_EVENT_EXIT: i64 = 0xffff_ffff;

/// One `power:cpu_idle` event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleEvent {
    /// `CLOCK_MONOTONIC`, ns.
    pub time: u64,
    /// The state index entered; `None`: the CPU left idle.
    pub state: Option<u32>,
}

/// Where `state` lies in a `power:cpu_idle` payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleLayout {
    state: IntAt,
}

impl IdleLayout {
    /// Reads the layout from the text of `events/power/cpu_idle/format`.
    pub fn parse(text: &str) -> Result<IdleLayout, tp_format::FormatError> {
        Ok(IdleLayout {
            state: tp_format::parse(text)?.int("state")?,
        })
    }

    /// Decodes one payload; `None` when it is too short.
    pub fn decode(self, time: u64, raw: &[u8]) -> Option<IdleEvent> {
        let s = self.state.read(raw)?;
        Some(IdleEvent {
            time,
            state: (s != PWR_EVENT_EXIT).then_some(s as u32),
        })
    }
}

/// Why `power:cpu_idle` cannot be traced, with the command that would
/// fix it where there is one.
#[derive(Debug, thiserror::Error)]
pub enum IdleError {
    /// tracefs is there but this user may not read it.
    #[error(
        "{}: permission denied: run as root, or give this user read access to tracefs \
         (`mount -o remount,gid=GROUP {}`)",
        .dir.display(),
        .dir.display()
    )]
    TracefsDenied {
        /// The tracefs mount point.
        dir: PathBuf,
    },
    /// tracefs is mounted nowhere under this sysfs.
    #[error(
        "tracefs is not mounted at {0}/kernel/tracing: mount it with \
         `mount -t tracefs nodev {0}/kernel/tracing`",
        .sysfs.display()
    )]
    NoTracefs {
        /// The sysfs root.
        sysfs: PathBuf,
    },
    /// The event's format cannot be read.
    #[error("cannot read {}: {source}", .path.display())]
    FormatUnreadable {
        /// The format file.
        path: PathBuf,
        /// What reading it said.
        source: std::io::Error,
    },
    /// The event's format lacks what the decoder needs.
    #[error("{}: {source}", .path.display())]
    BadFormat {
        /// The format file.
        path: PathBuf,
        /// What is wrong with it.
        source: tp_format::FormatError,
    },
    /// The event's id cannot be read.
    #[error(transparent)]
    Id(#[from] IdError),
    /// `perf_event_open` refused (the words say why and what to do).
    #[error("{0}")]
    Open(String),
    /// The ring cannot be mapped.
    #[error(
        "mmap of a {} MiB perf ring for CPU {cpu}: {source} (as a user other than root, \
         raise `sysctl kernel.perf_event_mlock_kb`)",
        IDLE_RING_BYTES >> 20
    )]
    Mmap {
        /// The CPU.
        cpu: u32,
        /// What mmap said.
        source: std::io::Error,
    },
    /// The event cannot be enabled.
    #[error("enabling power:cpu_idle on CPU {cpu}: {source}")]
    Enable {
        /// The CPU.
        cpu: u32,
        /// What the ioctl said.
        source: std::io::Error,
    },
}

/// The open `power:cpu_idle` events of some CPUs.
pub struct IdleTrace {
    layout: IdleLayout,
    rings: Vec<(u32, Sampler)>,
    lost: u64,
}

impl IdleTrace {
    /// Opens `power:cpu_idle` on each of `cpus`. On failure, the reason and
    /// the command that would fix it.
    pub fn open(sysfs: &Path, cpus: &[u32]) -> Result<IdleTrace, IdleError> {
        let tracefs = find_tracefs(sysfs).ok_or_else(|| {
            let dir = sysfs.join("kernel/tracing");
            match std::fs::read_dir(&dir) {
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                    IdleError::TracefsDenied { dir }
                }
                _ => IdleError::NoTracefs {
                    sysfs: sysfs.to_path_buf(),
                },
            }
        })?;
        let path = tracefs.join("events/power/cpu_idle/format");
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(source) => return Err(IdleError::FormatUnreadable { path, source }),
        };
        let layout = match IdleLayout::parse(&text) {
            Ok(l) => l,
            Err(source) => return Err(IdleError::BadFormat { path, source }),
        };
        let id = read_id(&tracefs, "power", "cpu_idle")?;
        let mut rings = Vec::with_capacity(cpus.len());
        for &cpu in cpus {
            let counter = builder(id, cpu, false, IDLE_RING_BYTES)
                .build()
                .map_err(|e| IdleError::Open(open_error(&e, "power:cpu_idle", cpu)))?;
            let mut sampler = counter
                .sampled(IDLE_RING_BYTES)
                .map_err(|source| IdleError::Mmap { cpu, source })?;
            sampler
                .enable()
                .map_err(|source| IdleError::Enable { cpu, source })?;
            rings.push((cpu, sampler));
        }
        Ok(IdleTrace {
            layout,
            rings,
            lost: 0,
        })
    }

    /// Appends everything written since the last drain to `out[cpu]`, in
    /// the order written.
    pub fn drain(&mut self, out: &mut std::collections::BTreeMap<u32, Vec<IdleEvent>>) {
        for (cpu, sampler) in &mut self.rings {
            let list = out.entry(*cpu).or_default();
            while let Some(rec) = sampler.next_record() {
                match rec.parse_record() {
                    Ok(DataRecord::Sample(s)) => {
                        if let (Some(t), Some(raw)) = (s.time(), s.raw())
                            && let Some(ev) = self.layout.decode(t, raw)
                        {
                            list.push(ev);
                        }
                    }
                    Ok(DataRecord::Lost(l)) => self.lost += l.lost,
                    _ => {}
                }
            }
        }
    }

    /// Records the kernel dropped because a ring was full.
    pub fn lost(&self) -> u64 {
        self.lost
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This machine's kernel (6.18) writes the format so.
    const FORMAT: &str = "name: cpu_idle\nID: 568\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
\tfield:u32 state;\toffset:8;\tsize:4;\tsigned:0;\n\
\tfield:u32 cpu_id;\toffset:12;\tsize:4;\tsigned:0;\n\n\
print fmt: \"state=%lu cpu_id=%lu\", (unsigned long)REC->state, (unsigned long)REC->cpu_id\n";

    fn payload(state: u32) -> Vec<u8> {
        let mut p = vec![0u8; 16];
        p[0..2].copy_from_slice(&568u16.to_ne_bytes());
        p[8..12].copy_from_slice(&state.to_ne_bytes());
        p[12..16].copy_from_slice(&1u32.to_ne_bytes());
        p
    }

    #[test]
    fn entries_carry_the_state_and_the_exit_marker_carries_none() {
        let l = IdleLayout::parse(FORMAT).unwrap();
        assert_eq!(
            l.decode(5, &payload(1)),
            Some(IdleEvent {
                time: 5,
                state: Some(1)
            })
        );
        assert_eq!(
            l.decode(9, &payload(u32::MAX)),
            Some(IdleEvent {
                time: 9,
                state: None
            })
        );
        assert_eq!(l.decode(9, &payload(0)[..10]), None);
    }

    #[test]
    fn a_format_without_state_is_refused() {
        let e = IdleLayout::parse(&FORMAT.replace("u32 state;", "u32 level;"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("state"), "{e}");
    }

    #[test]
    fn missing_tracefs_says_how_to_mount_it() {
        let empty = tempfile::tempdir().unwrap();
        let e = IdleTrace::open(empty.path(), &[1])
            .err()
            .unwrap()
            .to_string();
        assert!(e.starts_with("tracefs is not mounted at"), "{e}");
        assert!(e.contains("mount -t tracefs nodev"), "{e}");
    }
}
