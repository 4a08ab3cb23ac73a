//! Tracepoint sampling of watched CPUs through perf ring buffers: the events
//! behind `trace` (who ran, which IRQ, softirq or IPI interrupted).
//!
//! Per watched CPU one ring buffer receives every event: `sched_switch`
//! owns the mapping and the other tracepoints are redirected into it with
//! `PERF_EVENT_IOC_SET_OUTPUT`, so one ring holds the CPU's events in the
//! order they were written, and `common_type` in each payload tells them
//! apart. Timestamps are `CLOCK_MONOTONIC` so a window ends at a time read
//! here. The `sched_switch` event also asks for perf's switch records: some
//! kernels give perf no samples from the idle task, and there the record
//! written as a task switches in is the only sign that the CPU left idle.
//!
//! The rings are read only when the caller calls [`TraceRings::take_until`], from its
//! own CPU: reading a perf ring is plain memory access, no system call and no
//! IPI. The kernel must never wake noisetop from the watched CPU either: no
//! `wakeup_events`, and the wake-up watermark is the whole ring. The kernel
//! then queues its wake-up `irq_work` (an IWI on the traced CPU) once per ring
//! size of data written, counted from the start, read or not; with
//! [`RING_BYTES`] that is once per 16 MiB of records.
//!
//! noisetop writes no tracefs knob. The one thing it mounts is tracefs
//! itself, as root where it is mounted nowhere (`crate::sys::mount_tracefs`,
//! called before this opens, as perf does); where something is still
//! missing, [`TraceRings::open`] says what and which command would fix it.

use std::io;
use std::path::{Path, PathBuf};

use perf_event::data::parse::Parser;
use perf_event::data::{Record as DataRecord, RecordMetadata, SwitchCpuWide, Visitor};
use perf_event::events::Tracepoint as PerfTracepoint;
use perf_event::{Builder, Clock, Counter, SampleFlag, Sampler};

use crate::source::switch_ring;
use crate::trace::decode::{Decoder, Tracepoint};

/// Bytes of ring buffer per watched CPU (a power of two). A sample is about
/// 40 to 110 bytes, so at 10 000 context switches a second plus their
/// interrupts (about 2 MB/s) one ring holds several seconds of events, and the
/// kernel's watermark wake-up comes once per 16 MiB written.
pub const RING_BYTES: usize = 16 << 20;

/// Where tracefs is mounted under a sysfs root, in the order the kernel
/// documents them (the debugfs path is the pre-4.1 one).
pub fn find_tracefs(sysfs: &Path) -> Option<PathBuf> {
    ["kernel/tracing", "kernel/debug/tracing"]
        .iter()
        .map(|rel| sysfs.join(rel))
        .find(|p| p.join("events").is_dir())
}

struct CpuRing {
    cpu: u32,
    sampler: Sampler,
    /// The redirected events: kept open (closing one stops it).
    _others: Vec<Counter>,
    /// Records the kernel dropped, read and not understood, and read,
    /// since the last take.
    lost: u64,
    unmatched: u64,
    read: u64,
    /// Raw payloads of this drain and those held back for the next one.
    arena: Vec<u8>,
    /// This drain's records and those held back, in `arena`'s terms.
    entries: Vec<Entry>,
}

/// One record read from a ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// `CLOCK_MONOTONIC` ns it was written.
    pub time: u64,
    /// Thread group of the task current then.
    pub pid: u32,
    /// The task current then.
    pub tid: u32,
    /// What it is.
    pub what: What,
}

/// What a record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum What {
    /// A tracepoint sample whose payload is `arena[start..start + len]`
    /// of its [`RawCpu`].
    Raw {
        /// Offset of the payload.
        start: u32,
        /// Its length.
        len: u32,
    },
    /// perf's switch record: the CPU switched from `prev_tid` into `tid`.
    SwitchIn {
        /// The task switched away from.
        prev_tid: u32,
    },
}

/// What one CPU's ring held up to a time, undecoded, in time order.
#[derive(Debug, Clone, Default)]
pub struct RawCpu {
    /// The CPU.
    pub cpu: u32,
    /// Its records.
    pub entries: Vec<Entry>,
    /// The tracepoint payloads the entries point into.
    pub arena: Vec<u8>,
    /// Records the kernel dropped (ring full).
    pub lost: u64,
    /// Records read that could not be parsed.
    pub unmatched: u64,
    /// Records read.
    pub read: u64,
}

impl RawCpu {
    /// The payload of a [`What::Raw`] entry.
    pub fn payload(&self, start: u32, len: u32) -> &[u8] {
        &self.arena[start as usize..(start + len) as usize]
    }
}

use perf_event_open_sys::bindings::{
    PERF_RECORD_MISC_SWITCH_OUT, PERF_RECORD_SWITCH_CPU_WIDE, perf_event_header,
};

/// Reads a switch-into record: `(time, pid, tid, prev_tid)`. A switch-out
/// record repeats what `sched_switch` says and is passed over.
struct SwitchInOf;

impl Visitor<'_> for SwitchInOf {
    type Output = Option<(u64, u32, u32, u32)>;

    fn visit_unimplemented(self, _: RecordMetadata) -> Self::Output {
        None
    }

    fn visit_switch_cpu_wide(self, r: SwitchCpuWide, m: RecordMetadata) -> Self::Output {
        // perf names the other task of the switch: for a switch in, the
        // one switched away from
        let SwitchCpuWide::In { tid: prev_tid, .. } = r else {
            return None;
        };
        let id = m.sample_id();
        Some((id.time()?, id.pid()?, id.tid()?, prev_tid))
    }
}

/// Samples the scheduler and interrupt tracepoints of some CPUs into one
/// ring per CPU, and hands up what the rings hold, undecoded: decoding
/// and accounting are the caller's (`pipeline::tracer`).
pub struct TraceRings {
    cpus: Vec<u32>,
    rings: Vec<CpuRing>,
    decoder: Decoder,
    notes: Vec<String>,
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

pub(crate) fn read_id(tracefs: &Path, sys: &str, ev: &str) -> Result<u64, String> {
    let path = tracefs.join("events").join(sys).join(ev).join("id");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        let hint = if e.kind() == io::ErrorKind::PermissionDenied {
            ": run as root, or give this user read access to tracefs \
             (`mount -o remount,gid=GROUP /sys/kernel/tracing`)"
        } else {
            ""
        };
        format!("cannot read {}: {e}{hint}", path.display())
    })?;
    text.trim()
        .parse()
        .map_err(|_| format!("{}: not an event id: {:?}", path.display(), text.trim()))
}

/// Adds a note unless one naming `what` is there already: every CPU
/// refuses alike, and one line says it.
fn note_once(notes: &mut Vec<String>, what: &str, note: impl FnOnce() -> String) {
    if !notes.iter().any(|n| n.contains(what)) {
        notes.push(note());
    }
}

/// The sample layout every event of a tracer ring shares, so that one
/// parser reads them all.
pub const SAMPLE: SampleFlag = SampleFlag::TID
    .union(SampleFlag::TIME)
    .union(SampleFlag::CPU)
    .union(SampleFlag::PERIOD)
    .union(SampleFlag::RAW);

/// `lead`: the event that owns the ring also writes perf's switch records
/// (with their time and task), which show a switch out of idle on kernels
/// that give no samples from the idle task.
pub(crate) fn builder(id: u64, cpu: u32, lead: bool) -> Builder<'static> {
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
        .wakeup_watermark(RING_BYTES);
    b
}

impl TraceRings {
    /// Opens the tracepoints of `cpus`. `sysfs` is the sysfs root (`/sys`)
    /// under which tracefs is looked for. On failure, the reason and the
    /// command that would fix it.
    pub fn open(sysfs: &Path, cpus: &[u32]) -> Result<TraceRings, String> {
        let tracefs = find_tracefs(sysfs).ok_or_else(|| {
            format!(
                "tracefs is not mounted at {0}/kernel/tracing: mount it with \
                 `mount -t tracefs nodev {0}/kernel/tracing`",
                sysfs.display()
            )
        })?;
        let decoder = Decoder::load(&tracefs.join("events"))?;
        let mut ids = Vec::new();
        for &(tp, format_id) in decoder.events() {
            let (sys, ev) = tp.path();
            let id = read_id(&tracefs, sys, &ev)?;
            if id != u64::from(format_id) {
                return Err(format!(
                    "{sys}:{ev}: id file says {id} but its format says {format_id}"
                ));
            }
            ids.push((tp, format!("{sys}:{ev}"), id));
        }
        let mut rings = Vec::with_capacity(cpus.len());
        let mut notes = Vec::new();
        for &cpu in cpus {
            let (_, lead_name, lead_id) = &ids[0];
            // perf's switch records came with Linux 4.3: an older kernel
            // refuses the attribute, and tracing goes on without them
            let counter = match builder(*lead_id, cpu, true).build() {
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                    note_once(&mut notes, "perf switch records", || {
                        format!(
                            "perf switch records refused ({e}): a switch out of idle shows \
                             only where the kernel samples the idle task"
                        )
                    });
                    builder(*lead_id, cpu, false).build()
                }
                other => other,
            }
            .map_err(|e| open_error(&e, lead_name, cpu))?;
            let mut sampler = counter.sampled(RING_BYTES).map_err(|e| {
                format!(
                    "mmap of a {} MiB perf ring for CPU {cpu}: {e} (as a user other than root, \
                     raise `sysctl kernel.perf_event_mlock_kb`)",
                    RING_BYTES >> 20
                )
            })?;
            let mut others = Vec::with_capacity(ids.len() - 1);
            let mut skip_exit = false;
            for (tp, name, id) in &ids[1..] {
                let opened = builder(*id, cpu, false)
                    .build()
                    .map_err(|e| open_error(&e, name, cpu))
                    .and_then(|c| {
                        switch_ring::set_output(&c, sampler.as_counter())
                            .map(|()| c)
                            .map_err(|e| {
                                format!("redirecting {name} on CPU {cpu} into one ring: {e}")
                            })
                    });
                match (tp, opened) {
                    (Tracepoint::VectorExit(_), _) if skip_exit => skip_exit = false,
                    (_, Ok(c)) => others.push(c),
                    // A vector is timed by both ends or not at all.
                    // said for the first CPU only: the others refuse alike
                    (Tracepoint::VectorEntry(_), Err(e)) => {
                        note_once(&mut notes, name, || format!("{e}: left out"));
                        skip_exit = true;
                    }
                    (Tracepoint::VectorExit(_), Err(e)) => {
                        note_once(&mut notes, name, || format!("{e}: left out with its entry"));
                        others.pop();
                    }
                    // without the scheduler's charges a task's time is its
                    // slices: short of its schedstat by its wake-ups
                    (Tracepoint::Runtime, Err(e)) => note_once(&mut notes, name, || {
                        format!(
                            "{e}: left out (a task's time is then its slices, without what \
                             the scheduler charges it before it switches in)"
                        )
                    }),
                    (_, Err(e)) => return Err(e),
                }
            }
            for c in &mut others {
                c.enable()
                    .map_err(|e| format!("enabling a tracepoint on CPU {cpu}: {e}"))?;
            }
            sampler
                .enable()
                .map_err(|e| format!("enabling {lead_name} on CPU {cpu}: {e}"))?;
            rings.push(CpuRing {
                cpu,
                sampler,
                _others: others,
                lost: 0,
                unmatched: 0,
                read: 0,
                arena: Vec::new(),
                entries: Vec::new(),
            });
        }
        Ok(TraceRings {
            cpus: cpus.to_vec(),
            rings,
            decoder,
            notes,
        })
    }

    /// What could not be traced and was left out (a vector the kernel
    /// refused), one line each.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The traced CPUs.
    pub fn cpus(&self) -> &[u32] {
        &self.cpus
    }

    /// The decoder of the tracepoints the rings carry.
    pub fn decoder(&self) -> &Decoder {
        &self.decoder
    }

    /// Everything each ring holds written up to `now` (`CLOCK_MONOTONIC`
    /// ns), one [`RawCpu`] per CPU in the order of [`Self::cpus`]; what was
    /// written later is kept for the next take.
    pub fn take_until(&mut self, now: u64) -> Vec<RawCpu> {
        self.rings.iter_mut().map(|r| take_ring(r, now)).collect()
    }
}

/// Reads what the kernel wrote since the last read into `ring.entries`.
fn pull(ring: &mut CpuRing) {
    let mut lost = 0;
    let mut read = 0;
    let config = ring.sampler.as_counter().config().clone();
    while let Some(rec) = ring.sampler.next_record() {
        if rec.ty() == PERF_RECORD_SWITCH_CPU_WIDE {
            // a switch out repeats what sched_switch said
            if u32::from(rec.misc()) & PERF_RECORD_MISC_SWITCH_OUT != 0 {
                continue;
            }
            let header = perf_event_header {
                type_: rec.ty(),
                misc: rec.misc(),
                size: u16::try_from(rec.len() + 8).unwrap_or(u16::MAX),
            };
            let bytes = rec.to_contiguous();
            let mut parser = Parser::new(bytes.as_ref(), config.clone());
            match parser.parse_record_with_header(SwitchInOf, header) {
                Ok(Some((time, pid, tid, prev_tid))) => {
                    read += 1;
                    ring.entries.push(Entry {
                        time,
                        pid,
                        tid,
                        what: What::SwitchIn { prev_tid },
                    });
                }
                Ok(None) => {}
                Err(_) => ring.unmatched += 1,
            }
            continue;
        }
        match rec.parse_record() {
            Ok(DataRecord::Sample(s)) => {
                let (Some(time), Some(raw)) = (s.time(), s.raw()) else {
                    ring.unmatched += 1;
                    continue;
                };
                read += 1;
                let start = ring.arena.len() as u32;
                ring.arena.extend_from_slice(raw);
                ring.entries.push(Entry {
                    time,
                    pid: s.pid().unwrap_or(0),
                    tid: s.tid().unwrap_or(0),
                    what: What::Raw {
                        start,
                        len: raw.len() as u32,
                    },
                });
            }
            Ok(DataRecord::Lost(l)) => lost += l.lost,
            Ok(_) => {}
            Err(_) => ring.unmatched += 1,
        }
    }
    ring.lost += lost;
    ring.read += read;
    // Records of one CPU are written in time order except where a handler
    // interrupted the writing of another; a stable sort of a nearly sorted
    // list is cheap.
    ring.entries.sort_by_key(|e| e.time);
}

fn take_ring(ring: &mut CpuRing, now: u64) -> RawCpu {
    pull(ring);
    let split = ring.entries.partition_point(|e| e.time <= now);
    // the payloads go up with the entries; those written after `now` are
    // copied back for the next window
    let kept = ring.entries.split_off(split);
    let taken = RawCpu {
        cpu: ring.cpu,
        entries: std::mem::take(&mut ring.entries),
        arena: std::mem::take(&mut ring.arena),
        lost: std::mem::take(&mut ring.lost),
        unmatched: std::mem::take(&mut ring.unmatched),
        read: std::mem::take(&mut ring.read),
    };
    for mut e in kept {
        if let What::Raw { start, len } = e.what {
            let s = ring.arena.len() as u32;
            ring.arena.extend_from_slice(taken.payload(start, len));
            e.what = What::Raw { start: s, len };
        }
        ring.entries.push(e);
    }
    taken
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_tracefs_in_either_place_or_says_how_to_mount_it() {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tracefs/sys");
        assert_eq!(find_tracefs(&fixture), Some(fixture.join("kernel/tracing")));
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("kernel/debug/tracing/events")).unwrap();
        assert_eq!(
            find_tracefs(dir.path()),
            Some(dir.path().join("kernel/debug/tracing"))
        );
        let empty = tempfile::tempdir().unwrap();
        let e = TraceRings::open(empty.path(), &[1]).err().unwrap();
        assert_eq!(
            e,
            format!(
                "tracefs is not mounted at {0}/kernel/tracing: mount it with `mount -t tracefs nodev {0}/kernel/tracing`",
                empty.path().display()
            )
        );
    }

    #[test]
    fn an_id_file_that_disagrees_with_its_format_is_refused() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tracefs/sys");
        let dir = tempfile::tempdir().unwrap();
        copy_tree(&src, dir.path());
        let id = dir
            .path()
            .join("kernel/tracing/events/irq/softirq_entry/id");
        std::fs::write(&id, "7\n").unwrap();
        let e = TraceRings::open(dir.path(), &[1]).err().unwrap();
        assert_eq!(
            e,
            "irq:softirq_entry: id file says 7 but its format says 223"
        );
        std::fs::write(&id, "x\n").unwrap();
        let e = TraceRings::open(dir.path(), &[1]).err().unwrap();
        assert!(
            e.ends_with("softirq_entry/id: not an event id: \"x\""),
            "{e}"
        );
    }

    fn copy_tree(from: &Path, to: &Path) {
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let dest = to.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                std::fs::create_dir_all(&dest).unwrap();
                copy_tree(&entry.path(), &dest);
            } else {
                std::fs::copy(entry.path(), &dest).unwrap();
            }
        }
    }
}
