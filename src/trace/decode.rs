//! Turns raw perf tracepoint samples into typed events.
//!
//! Every payload starts with the common fields; `common_type` is the event id
//! from tracefs, which tells the events sharing one ring apart without an
//! extra sample field. All other offsets come from the `format` files
//! ([`super::format`]), read once when the decoder is built.

use std::fmt;
use std::path::Path;

use super::format::{self, Format, IntAt, StrAt};

/// One perf sample record of a tracepoint: the sample fields noisetop asks
/// for (TID, TIME, CPU, RAW) and the raw payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawSample<'a> {
    /// Timestamp in ns (`CLOCK_MONOTONIC` as noisetop opens the events).
    pub time: u64,
    /// CPU the event fired on.
    pub cpu: u32,
    /// Process (thread group) id of the task current when it fired.
    pub pid: u32,
    /// Thread id of that task.
    pub tid: u32,
    /// The tracepoint payload.
    pub raw: &'a [u8],
}

/// A task name as the kernel stores it: up to 15 bytes, NUL-padded.
/// Kept as bytes so decoding allocates nothing.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Comm(pub [u8; 16]);

impl Comm {
    /// Makes a `Comm` from the bytes of a name (cut at 16 bytes).
    pub fn new(name: &[u8]) -> Comm {
        let mut c = [0u8; 16];
        let n = name.len().min(16);
        c[..n].copy_from_slice(&name[..n]);
        Comm(c)
    }

    /// The name as text (invalid UTF-8 replaced).
    pub fn to_text(&self) -> String {
        let end = self.0.iter().position(|&b| b == 0).unwrap_or(16);
        String::from_utf8_lossy(&self.0[..end]).into_owned()
    }
}

impl fmt::Debug for Comm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.to_text())
    }
}

/// The x86 system vectors whose `irq_vectors` entry/exit events noisetop
/// follows (those present on the running kernel).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Vector {
    /// LOC: the local APIC timer (the tick and hrtimers).
    LocalTimer,
    /// RES: rescheduling IPI.
    Reschedule,
    /// CAL: function call IPI.
    CallFunction,
    /// CAL: single-CPU function call IPI.
    CallFunctionSingle,
    /// IWI: `irq_work` self-IPI.
    IrqWork,
    /// TRM: thermal event interrupt.
    ThermalApic,
    /// THR: threshold APIC interrupt.
    ThresholdApic,
    /// DFR: deferred error APIC interrupt.
    DeferredErrorApic,
    /// PLT: platform (hypervisor callback) IPI.
    X86PlatformIpi,
    /// ERR: APIC error.
    ErrorApic,
    /// SPU: spurious interrupt.
    SpuriousApic,
}

impl Vector {
    /// Every vector noisetop knows.
    pub const ALL: [Vector; 11] = [
        Vector::LocalTimer,
        Vector::Reschedule,
        Vector::CallFunction,
        Vector::CallFunctionSingle,
        Vector::IrqWork,
        Vector::ThermalApic,
        Vector::ThresholdApic,
        Vector::DeferredErrorApic,
        Vector::X86PlatformIpi,
        Vector::ErrorApic,
        Vector::SpuriousApic,
    ];

    /// The event name without `_entry`/`_exit` (`local_timer`).
    pub fn event_base(self) -> &'static str {
        match self {
            Vector::LocalTimer => "local_timer",
            Vector::Reschedule => "reschedule",
            Vector::CallFunction => "call_function",
            Vector::CallFunctionSingle => "call_function_single",
            Vector::IrqWork => "irq_work",
            Vector::ThermalApic => "thermal_apic",
            Vector::ThresholdApic => "threshold_apic",
            Vector::DeferredErrorApic => "deferred_error_apic",
            Vector::X86PlatformIpi => "x86_platform_ipi",
            Vector::ErrorApic => "error_apic",
            Vector::SpuriousApic => "spurious_apic",
        }
    }

    /// Its x86 vector number (`arch/x86/include/asm/irq_vectors.h`), which
    /// its tracepoints pass.
    pub fn number(self) -> u32 {
        match self {
            Vector::LocalTimer => 0xec,
            Vector::Reschedule => 0xfd,
            Vector::CallFunction => 0xfc,
            Vector::CallFunctionSingle => 0xfb,
            Vector::IrqWork => 0xf6,
            Vector::ThermalApic => 0xfa,
            Vector::ThresholdApic => 0xf9,
            Vector::DeferredErrorApic => 0xf4,
            Vector::X86PlatformIpi => 0xf7,
            Vector::ErrorApic => 0xfe,
            Vector::SpuriousApic => 0xff,
        }
    }

    /// The vector of an x86 vector number, if noisetop knows it.
    pub fn from_number(n: u32) -> Option<Vector> {
        Vector::ALL.into_iter().find(|v| v.number() == n)
    }

    /// The row of /proc/interrupts that counts it.
    pub fn interrupts_label(self) -> &'static str {
        match self {
            Vector::LocalTimer => "LOC",
            Vector::Reschedule => "RES",
            Vector::CallFunction | Vector::CallFunctionSingle => "CAL",
            Vector::IrqWork => "IWI",
            Vector::ThermalApic => "TRM",
            Vector::ThresholdApic => "THR",
            Vector::DeferredErrorApic => "DFR",
            Vector::X86PlatformIpi => "PLT",
            Vector::ErrorApic => "ERR",
            Vector::SpuriousApic => "SPU",
        }
    }

    /// Whether perf may sample both ends. The kernel refuses to sample
    /// `irq_work_exit` (`TRACE_EVENT_PERF_PERM`): a sample can queue an
    /// `irq_work`, whose exit would be sampled again, without end. Its time
    /// goes to what it interrupted; /proc/interrupts IWI counts it.
    pub fn can_sample(self) -> bool {
        self != Vector::IrqWork
    }

    /// An IPI sent by another CPU (or itself, for `irq_work`).
    pub fn is_ipi(self) -> bool {
        matches!(
            self,
            Vector::Reschedule
                | Vector::CallFunction
                | Vector::CallFunctionSingle
                | Vector::IrqWork
        )
    }
}

/// Softirq names by vector number, as in the kernel's `softirq_to_name`.
pub const SOFTIRQ_NAMES: [&str; 10] = [
    "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU",
];

/// The name of softirq `vec`, `None` for a number this table lacks.
pub fn softirq_name(vec: u32) -> Option<&'static str> {
    SOFTIRQ_NAMES.get(vec as usize).copied()
}

/// A tracepoint noisetop samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tracepoint {
    /// `sched:sched_switch`.
    SchedSwitch,
    /// `irq:irq_handler_entry`.
    IrqEntry,
    /// `irq:irq_handler_exit`.
    IrqExit,
    /// `irq:softirq_entry`.
    SoftirqEntry,
    /// `irq:softirq_exit`.
    SoftirqExit,
    /// `irq_vectors:<vector>_entry`.
    VectorEntry(Vector),
    /// `irq_vectors:<vector>_exit`.
    VectorExit(Vector),
    /// `sched:sched_process_fork`: a task forked a child.
    Fork,
    /// `sched:sched_stat_runtime`: the scheduler charged a task run time.
    Runtime,
}

impl Tracepoint {
    /// `(subsystem, event)` as named under tracefs `events/`.
    pub fn path(self) -> (&'static str, String) {
        match self {
            Tracepoint::SchedSwitch => ("sched", "sched_switch".into()),
            Tracepoint::IrqEntry => ("irq", "irq_handler_entry".into()),
            Tracepoint::IrqExit => ("irq", "irq_handler_exit".into()),
            Tracepoint::SoftirqEntry => ("irq", "softirq_entry".into()),
            Tracepoint::SoftirqExit => ("irq", "softirq_exit".into()),
            Tracepoint::Fork => ("sched", "sched_process_fork".into()),
            Tracepoint::Runtime => ("sched", "sched_stat_runtime".into()),
            Tracepoint::VectorEntry(v) => ("irq_vectors", format!("{}_entry", v.event_base())),
            Tracepoint::VectorExit(v) => ("irq_vectors", format!("{}_exit", v.event_base())),
        }
    }
}

/// A decoded event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event<'a> {
    /// The CPU switched from `prev` to `next`.
    Switch {
        prev_tid: u32,
        prev_comm: Comm,
        /// `prev_state`: 0 means preempted while runnable.
        prev_state: i64,
        next_tid: u32,
        next_comm: Comm,
    },
    /// A device IRQ handler starts.
    IrqEntry { irq: u32, name: &'a [u8] },
    /// A device IRQ handler ends.
    IrqExit { irq: u32 },
    /// A softirq starts (`vec` as in [`SOFTIRQ_NAMES`]).
    SoftirqEntry { vec: u32 },
    /// A softirq ends.
    SoftirqExit { vec: u32 },
    /// A system vector handler starts.
    VectorEntry(Vector),
    /// A system vector handler ends.
    VectorExit(Vector),
    /// Thread `parent_tid` forked `child_tid`: a benchmark's children are
    /// its own, not intruders.
    Fork { parent_tid: u32, child_tid: u32 },
    /// The scheduler added `ns` to task `tid`'s run time (`sum_exec_runtime`,
    /// what /proc/PID/schedstat shows). Written where it charges the
    /// running task, so in that task's own context: it shows what the
    /// scheduler counts from before the switch in (from the task's
    /// wake-up, the interrupt and the switch that ran it), also where the
    /// kernel gives perf no events of the idle task it woke from.
    Runtime { tid: u32, ns: u64 },
    /// The CPU switched from `prev_tid` into the task current when it fired.
    /// Not a tracepoint: perf's own switch record, written in the context of
    /// the task switched in. Some kernels give perf no samples from the idle
    /// task, so a switch out of idle shows only here.
    SwitchIn { prev_tid: u32 },
}

/// An event with the sample fields around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decoded<'a> {
    /// Timestamp in ns.
    pub time: u64,
    /// CPU it fired on.
    pub cpu: u32,
    /// Thread group of the task current when it fired.
    pub pid: u32,
    /// Thread id of that task.
    pub tid: u32,
    /// What happened.
    pub event: Event<'a>,
}

/// Why a sample could not be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    /// The payload's `common_type` is none of the loaded events.
    UnknownType(u16),
    /// The payload is shorter than a field the format puts in it.
    Short(&'static str),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::UnknownType(t) => write!(f, "tracepoint payload of unknown type {t}"),
            DecodeError::Short(what) => write!(f, "tracepoint payload too short for `{what}`"),
        }
    }
}

impl std::error::Error for DecodeError {}

#[derive(Debug, Clone, Copy)]
enum Layout {
    Switch {
        prev_comm: StrAt,
        prev_pid: IntAt,
        prev_state: IntAt,
        next_comm: StrAt,
        next_pid: IntAt,
    },
    IrqEntry {
        irq: IntAt,
        name: StrAt,
    },
    IrqExit {
        irq: IntAt,
    },
    SoftirqEntry {
        vec: IntAt,
    },
    SoftirqExit {
        vec: IntAt,
    },
    VectorEntry(Vector),
    VectorExit(Vector),
    Fork {
        parent: IntAt,
        child: IntAt,
    },
    Runtime {
        pid: IntAt,
        runtime: IntAt,
    },
}

/// Decodes the payloads of the tracepoints it was built for.
#[derive(Debug, Clone)]
pub struct Decoder {
    common_type: IntAt,
    /// `(event id, layout)`, sorted by id: a binary search over a few dozen
    /// entries beats hashing on every record.
    layouts: Vec<(u16, Layout)>,
    events: Vec<(Tracepoint, u32)>,
}

impl Decoder {
    /// Builds a decoder from parsed format files. `sched_switch` is
    /// required; the others are decoded when given.
    pub fn new(formats: &[(Tracepoint, Format)]) -> Result<Decoder, format::FormatError> {
        let mut common_type = None;
        let mut layouts = Vec::new();
        let mut events = Vec::new();
        for (tp, f) in formats {
            let ct = f.int("common_type")?;
            common_type.get_or_insert(ct);
            let layout = match *tp {
                Tracepoint::SchedSwitch => Layout::Switch {
                    prev_comm: f.string("prev_comm")?,
                    prev_pid: f.int("prev_pid")?,
                    prev_state: f.int("prev_state")?,
                    next_comm: f.string("next_comm")?,
                    next_pid: f.int("next_pid")?,
                },
                Tracepoint::IrqEntry => Layout::IrqEntry {
                    irq: f.int("irq")?,
                    name: f.string("name")?,
                },
                Tracepoint::IrqExit => Layout::IrqExit { irq: f.int("irq")? },
                Tracepoint::SoftirqEntry => Layout::SoftirqEntry { vec: f.int("vec")? },
                Tracepoint::SoftirqExit => Layout::SoftirqExit { vec: f.int("vec")? },
                Tracepoint::VectorEntry(v) => Layout::VectorEntry(v),
                Tracepoint::VectorExit(v) => Layout::VectorExit(v),
                Tracepoint::Fork => Layout::Fork {
                    parent: f.int("parent_pid")?,
                    child: f.int("child_pid")?,
                },
                Tracepoint::Runtime => Layout::Runtime {
                    pid: f.int("pid")?,
                    runtime: f.int("runtime")?,
                },
            };
            let Ok(id) = u16::try_from(f.id) else {
                return Err(format::FormatError::Unsupported {
                    event: f.name.clone(),
                    field: "common_type".into(),
                    why: "event id above 65535",
                });
            };
            layouts.push((id, layout));
            events.push((*tp, f.id));
        }
        if !formats.iter().any(|(tp, _)| *tp == Tracepoint::SchedSwitch) {
            return Err(format::FormatError::MissingField {
                event: "sched_switch".into(),
                field: "format".into(),
            });
        }
        layouts.sort_by_key(|(id, _)| *id);
        Ok(Decoder {
            common_type: common_type.expect("sched_switch is present"),
            layouts,
            events,
        })
    }

    /// Reads the format files of every tracepoint noisetop follows from a
    /// tracefs `events` directory: `sched_switch` and the `irq` events are
    /// required, the `irq_vectors` pairs are taken where both ends exist.
    pub fn load(events_dir: &Path) -> Result<Decoder, String> {
        let mut formats = Vec::new();
        let read = |tp: Tracepoint| -> Result<Format, String> {
            let (sys, ev) = tp.path();
            let path = events_dir.join(sys).join(&ev).join("format");
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            format::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
        };
        for tp in [
            Tracepoint::SchedSwitch,
            Tracepoint::IrqEntry,
            Tracepoint::IrqExit,
            Tracepoint::SoftirqEntry,
            Tracepoint::SoftirqExit,
        ] {
            formats.push((tp, read(tp)?));
        }
        // forks tell the owner's children from intruders; without the
        // event they are counted as other tasks
        if let Ok(f) = read(Tracepoint::Fork) {
            formats.push((Tracepoint::Fork, f));
        }
        // the scheduler's own charges: without them a task's time is its
        // slices only (short of its schedstat by what it is charged before
        // it switches in)
        if let Ok(f) = read(Tracepoint::Runtime) {
            formats.push((Tracepoint::Runtime, f));
        }
        for v in Vector::ALL.into_iter().filter(|v| v.can_sample()) {
            let (entry, exit) = (Tracepoint::VectorEntry(v), Tracepoint::VectorExit(v));
            if let (Ok(a), Ok(b)) = (read(entry), read(exit)) {
                formats.push((entry, a));
                formats.push((exit, b));
            }
        }
        Decoder::new(&formats).map_err(|e| e.to_string())
    }

    /// The tracepoints this decoder reads, with their ids.
    pub fn events(&self) -> &[(Tracepoint, u32)] {
        &self.events
    }

    /// Decodes one sample.
    #[inline]
    pub fn decode<'a>(&self, s: &RawSample<'a>) -> Result<Decoded<'a>, DecodeError> {
        let raw = s.raw;
        let ty = self
            .common_type
            .read(raw)
            .ok_or(DecodeError::Short("common_type"))? as u16;
        let layout = match self.layouts.binary_search_by_key(&ty, |(id, _)| *id) {
            Ok(i) => self.layouts[i].1,
            Err(_) => return Err(DecodeError::UnknownType(ty)),
        };
        let int = |at: IntAt, what| at.read(raw).ok_or(DecodeError::Short(what));
        let event = match layout {
            Layout::Switch {
                prev_comm,
                prev_pid,
                prev_state,
                next_comm,
                next_pid,
            } => Event::Switch {
                prev_tid: int(prev_pid, "prev_pid")? as u32,
                prev_comm: Comm::new(prev_comm.read(raw).ok_or(DecodeError::Short("prev_comm"))?),
                prev_state: int(prev_state, "prev_state")?,
                next_tid: int(next_pid, "next_pid")? as u32,
                next_comm: Comm::new(next_comm.read(raw).ok_or(DecodeError::Short("next_comm"))?),
            },
            Layout::IrqEntry { irq, name } => Event::IrqEntry {
                irq: int(irq, "irq")? as u32,
                name: name.read(raw).ok_or(DecodeError::Short("name"))?,
            },
            Layout::IrqExit { irq } => Event::IrqExit {
                irq: int(irq, "irq")? as u32,
            },
            Layout::SoftirqEntry { vec } => Event::SoftirqEntry {
                vec: int(vec, "vec")? as u32,
            },
            Layout::SoftirqExit { vec } => Event::SoftirqExit {
                vec: int(vec, "vec")? as u32,
            },
            Layout::VectorEntry(v) => Event::VectorEntry(v),
            Layout::VectorExit(v) => Event::VectorExit(v),
            Layout::Fork { parent, child } => Event::Fork {
                parent_tid: int(parent, "parent_pid")? as u32,
                child_tid: int(child, "child_pid")? as u32,
            },
            Layout::Runtime { pid, runtime } => Event::Runtime {
                tid: int(pid, "pid")? as u32,
                ns: int(runtime, "runtime")? as u64,
            },
        };
        Ok(Decoded {
            time: s.time,
            cpu: s.cpu,
            pid: s.pid,
            tid: s.tid,
            event,
        })
    }
}

/// Hand-built payloads in this machine's layout, for tests and benches.
pub mod build {
    /// Event ids of the fixture tree (this machine's tracefs).
    pub const SCHED_SWITCH: u16 = 372;
    /// `irq:irq_handler_entry`.
    pub const IRQ_ENTRY: u16 = 225;
    /// `irq:irq_handler_exit`.
    pub const IRQ_EXIT: u16 = 224;
    /// `irq:softirq_entry`.
    pub const SOFTIRQ_ENTRY: u16 = 223;
    /// `irq:softirq_exit`.
    pub const SOFTIRQ_EXIT: u16 = 222;
    /// `irq_vectors:local_timer_entry`.
    pub const LOCAL_TIMER_ENTRY: u16 = 165;
    /// `irq_vectors:local_timer_exit`.
    pub const LOCAL_TIMER_EXIT: u16 = 164;

    fn common(ty: u16, pid: i32, len: usize) -> Vec<u8> {
        let mut r = vec![0u8; len];
        r[0..2].copy_from_slice(&ty.to_ne_bytes());
        r[4..8].copy_from_slice(&pid.to_ne_bytes());
        r
    }

    /// A `sched_switch` payload (6.x layout).
    pub fn switch(prev: (&str, i32), prev_state: i64, next: (&str, i32)) -> Vec<u8> {
        let mut r = common(SCHED_SWITCH, prev.1, 64);
        let n = prev.0.len().min(15);
        r[8..8 + n].copy_from_slice(&prev.0.as_bytes()[..n]);
        r[24..28].copy_from_slice(&prev.1.to_ne_bytes());
        r[32..40].copy_from_slice(&prev_state.to_ne_bytes());
        let n = next.0.len().min(15);
        r[40..40 + n].copy_from_slice(&next.0.as_bytes()[..n]);
        r[56..60].copy_from_slice(&next.1.to_ne_bytes());
        r
    }

    /// An `irq_handler_entry` payload with its `__data_loc` name.
    pub fn irq_entry(irq: i32, name: &str) -> Vec<u8> {
        let mut r = common(IRQ_ENTRY, 0, 16);
        r[8..12].copy_from_slice(&irq.to_ne_bytes());
        let loc = ((name.len() as u32 + 1) << 16) | 16;
        r[12..16].copy_from_slice(&loc.to_ne_bytes());
        r.extend_from_slice(name.as_bytes());
        r.push(0);
        r
    }

    /// An `irq_handler_exit` payload.
    pub fn irq_exit(irq: i32) -> Vec<u8> {
        let mut r = common(IRQ_EXIT, 0, 16);
        r[8..12].copy_from_slice(&irq.to_ne_bytes());
        r[12..16].copy_from_slice(&1i32.to_ne_bytes());
        r
    }

    /// A `softirq_entry` (`exit == false`) or `softirq_exit` payload.
    pub fn softirq(vec: u32, exit: bool) -> Vec<u8> {
        let mut r = common(if exit { SOFTIRQ_EXIT } else { SOFTIRQ_ENTRY }, 0, 12);
        r[8..12].copy_from_slice(&vec.to_ne_bytes());
        r
    }

    /// `sched:sched_stat_runtime`.
    pub const STAT_RUNTIME: u16 = 363;

    /// A `sched_stat_runtime` payload: `tid` charged `ns`, its comm as a
    /// `__data_loc` string after the fixed fields.
    pub fn runtime(comm: &str, tid: i32, ns: u64) -> Vec<u8> {
        let mut r = common(STAT_RUNTIME, tid, 24);
        let loc = ((comm.len() as u32 + 1) << 16) | 0x18;
        r[8..12].copy_from_slice(&loc.to_ne_bytes());
        r[12..16].copy_from_slice(&tid.to_ne_bytes());
        r[16..24].copy_from_slice(&ns.to_ne_bytes());
        r.extend_from_slice(comm.as_bytes());
        r.push(0);
        r
    }

    /// A `local_timer_entry`/`_exit` payload.
    pub fn local_timer(exit: bool) -> Vec<u8> {
        let mut r = common(
            if exit {
                LOCAL_TIMER_EXIT
            } else {
                LOCAL_TIMER_ENTRY
            },
            0,
            12,
        );
        r[8..12].copy_from_slice(&236i32.to_ne_bytes());
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture_events() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/tracefs/sys/kernel/tracing/events")
    }

    fn sample(raw: &[u8]) -> RawSample<'_> {
        RawSample {
            time: 1000,
            cpu: 1,
            pid: 40,
            tid: 41,
            raw,
        }
    }

    #[test]
    fn loads_every_event_of_the_fixture_tree() {
        let d = Decoder::load(&fixture_events()).unwrap();
        let names: Vec<String> = d.events().iter().map(|(tp, _)| tp.path().1).collect();
        assert_eq!(names.len(), 5 + 1 + 2 * 8, "{names:?}");
        assert!(names.contains(&"sched_stat_runtime".to_owned()));
        // The kernel refuses to sample irq_work_exit.
        assert!(!names.contains(&"irq_work_entry".to_owned()));
        assert!(names.contains(&"local_timer_entry".to_owned()));
        assert!(names.contains(&"x86_platform_ipi_exit".to_owned()));
        // threshold_apic and deferred_error_apic are AMD/Intel-MCE events
        // this VM's kernel lacks: skipped, not an error.
        assert!(!names.contains(&"threshold_apic_entry".to_owned()));
        assert!(d.events().contains(&(Tracepoint::SchedSwitch, 372)));
    }

    #[test]
    fn missing_tracefs_is_a_reason() {
        let e = Decoder::load(Path::new("/nonexistent/events")).unwrap_err();
        assert!(
            e.starts_with("cannot read /nonexistent/events/sched/sched_switch/format: "),
            "{e}"
        );
    }

    #[test]
    fn decodes_switch() {
        let d = Decoder::load(&fixture_events()).unwrap();
        let raw = build::switch(("busy", 4242), 1, ("swapper/1", 0));
        let e = d.decode(&sample(&raw)).unwrap();
        assert_eq!(e.time, 1000);
        assert_eq!((e.cpu, e.pid, e.tid), (1, 40, 41));
        assert_eq!(
            e.event,
            Event::Switch {
                prev_tid: 4242,
                prev_comm: Comm::new(b"busy"),
                prev_state: 1,
                next_tid: 0,
                next_comm: Comm::new(b"swapper/1"),
            }
        );
        let Event::Switch { next_comm, .. } = e.event else {
            unreachable!()
        };
        assert_eq!(next_comm.to_text(), "swapper/1");
    }

    #[test]
    fn decodes_irq_softirq_and_vectors() {
        let d = Decoder::load(&fixture_events()).unwrap();
        let raw = build::irq_entry(41, "virtio3-rx");
        assert_eq!(
            d.decode(&sample(&raw)).unwrap().event,
            Event::IrqEntry {
                irq: 41,
                name: b"virtio3-rx"
            }
        );
        let raw = build::irq_exit(41);
        assert_eq!(
            d.decode(&sample(&raw)).unwrap().event,
            Event::IrqExit { irq: 41 }
        );
        let raw = build::softirq(3, false);
        assert_eq!(
            d.decode(&sample(&raw)).unwrap().event,
            Event::SoftirqEntry { vec: 3 }
        );
        assert_eq!(softirq_name(3), Some("NET_RX"));
        assert_eq!(softirq_name(10), None);
        let raw = build::softirq(9, true);
        assert_eq!(
            d.decode(&sample(&raw)).unwrap().event,
            Event::SoftirqExit { vec: 9 }
        );
        let raw = build::local_timer(false);
        assert_eq!(
            d.decode(&sample(&raw)).unwrap().event,
            Event::VectorEntry(Vector::LocalTimer)
        );
        let mut raw = build::local_timer(true);
        // reschedule_entry's id in the fixture tree
        raw[0..2].copy_from_slice(&155u16.to_ne_bytes());
        assert_eq!(
            d.decode(&sample(&raw)).unwrap().event,
            Event::VectorEntry(Vector::Reschedule)
        );
    }

    #[test]
    fn decodes_the_schedulers_run_time_charge() {
        let d = Decoder::load(&fixture_events()).unwrap();
        let raw = build::runtime("stress-ng-timer", 26399, 49_446);
        assert_eq!(
            d.decode(&sample(&raw)).unwrap().event,
            Event::Runtime {
                tid: 26399,
                ns: 49_446
            }
        );
        assert_eq!(
            d.decode(&sample(&raw[..20])),
            Err(DecodeError::Short("runtime"))
        );
    }

    #[test]
    fn older_layout_decodes_at_its_own_offsets() {
        let old = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tracefs/old-2.6.32");
        let f = format::parse(&std::fs::read_to_string(old.join("sched_switch")).unwrap()).unwrap();
        let d = Decoder::new(&[(Tracepoint::SchedSwitch, f)]).unwrap();
        let mut raw = vec![0u8; 72];
        raw[0..2].copy_from_slice(&29u16.to_ne_bytes());
        raw[12..16].copy_from_slice(b"cc1\0");
        raw[28..32].copy_from_slice(&77i32.to_ne_bytes());
        raw[48..53].copy_from_slice(b"make\0");
        raw[64..68].copy_from_slice(&78i32.to_ne_bytes());
        assert_eq!(
            d.decode(&sample(&raw)).unwrap().event,
            Event::Switch {
                prev_tid: 77,
                prev_comm: Comm::new(b"cc1"),
                prev_state: 0,
                next_tid: 78,
                next_comm: Comm::new(b"make"),
            }
        );
    }

    #[test]
    fn bad_records_are_errors() {
        let d = Decoder::load(&fixture_events()).unwrap();
        let mut raw = build::irq_exit(1);
        raw[0..2].copy_from_slice(&9999u16.to_ne_bytes());
        assert_eq!(d.decode(&sample(&raw)), Err(DecodeError::UnknownType(9999)));
        let raw = build::switch(("a", 1), 0, ("b", 2));
        assert_eq!(
            d.decode(&sample(&raw[..50])),
            Err(DecodeError::Short("next_pid"))
        );
        assert_eq!(
            d.decode(&sample(&[1])),
            Err(DecodeError::Short("common_type"))
        );
    }
}
