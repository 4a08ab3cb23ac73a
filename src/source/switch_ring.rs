//! Context switches and migrations of watched CPUs, counted from records
//! each CPU writes into its own perf ring: nothing is read across CPUs, so
//! counting costs a watched CPU no IPI.
//!
//! * A switch: perf's `PERF_RECORD_SWITCH_CPU_WIDE` switch-out record. The
//!   kernel writes it in `perf_event_task_sched_out`, the very call that
//!   counts perf's `context-switches`, once per switch with `prev != next`:
//!   the two counts are equal by construction, record for counter.
//! * A migration: a sample of perf's own `cpu-migrations` software event
//!   with a period of one. The kernel counts a migration on the CPU the task
//!   arrives at, when the task first runs there
//!   (`perf_event_task_sched_in`), and writes the sample there at that
//!   moment: again the same count as `perf stat -e cpu-migrations`. (The
//!   `sched:sched_migrate_task` tracepoint fires earlier, at `set_task_cpu`,
//!   on whichever CPU moved the task, and once per move: a task moved twice
//!   before it ran counts twice there and once in perf, and a move shortly
//!   before the end of a window is counted a window earlier than perf
//!   counts it. That is why it is not used.)
//!
//! Counts are cut at a time the caller gives (the snapshot's clock stamp):
//! records written up to it count in this snapshot, later ones in the next.
//! The one boundary difference from a counter read at that instant: perf
//! bumps `context-switches` on entry to its sched-out hook and stamps the
//! switch record a moment later (microseconds; more when a VM's vCPU is
//! held), so a switch that close to the cut counts one interval later here.
//! Migrations have none (the sample is written in the same call that
//! counts). Measured on Linux 6.18 under heavy migration churn, a counting
//! `context-switches` group read from another CPU reported more switches
//! than the kernel wrote switch records for (0.1–1.7 % on a quiet VM, up to
//! 26 % on a loaded one), and exactly as many more than a period-1
//! `context-switches` sampler wrote samples: the cause is not known yet,
//! and `tests/hands_off_counts.rs` prints the shortfall it bounds.
//!
//! [`SwitchRings`] is the lean form for `--no-trace` (and for machines
//! without tracefs): per CPU one ring led by a `dummy` software event that
//! writes only switch records, with the migration sampler redirected into
//! it. The tracer carries the same two records in its rings
//! (`source::tracer`).

use std::io;
use std::os::fd::AsRawFd;

use perf_event::data::Record as DataRecord;
use perf_event::events::Software;
use perf_event::{Builder, Clock, Counter, SampleFlag, Sampler};
use perf_event_open_sys::bindings::{PERF_RECORD_MISC_SWITCH_OUT, PERF_RECORD_SWITCH_CPU_WIDE};

use super::tracer::RING_BYTES;

/// The cumulative counts of one watched CPU since its ring was opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SwitchCount {
    /// The CPU.
    pub cpu: u32,
    /// Switch-out records written up to the cut: perf's `context-switches`.
    pub switches: u64,
    /// Migration samples written up to the cut: perf's `cpu-migrations`.
    pub migrations: u64,
    /// Records the kernel dropped (ring full) since the ring was opened:
    /// while it grows, the counts are low by an unknown amount.
    pub lost: u64,
}

/// Counts kept per ring: what is counted up to the last cut, and what was
/// read after it (it counts at the next cut, which is later).
#[derive(Debug, Clone, Copy, Default)]
pub struct Tally {
    /// Counted up to the last cut.
    pub count: SwitchCount,
    /// Switches read after the last cut.
    pub later_switches: u64,
    /// Migrations read after the last cut.
    pub later_migrations: u64,
}

impl Tally {
    /// A tally for `cpu`, nothing counted yet.
    pub fn new(cpu: u32) -> Self {
        Tally {
            count: SwitchCount {
                cpu,
                ..SwitchCount::default()
            },
            ..Tally::default()
        }
    }

    /// Counts one record written at `time` against the cut `cut`.
    pub fn add(&mut self, kind: Counted, time: u64, cut: u64) {
        let now = time <= cut;
        match (kind, now) {
            (Counted::Switch, true) => self.count.switches += 1,
            (Counted::Switch, false) => self.later_switches += 1,
            (Counted::Migration, true) => self.count.migrations += 1,
            (Counted::Migration, false) => self.later_migrations += 1,
        }
    }

    /// Moves what was read after the previous cut into the count: it was
    /// written before this cut, which is later.
    pub fn start_cut(&mut self) {
        self.count.switches += std::mem::take(&mut self.later_switches);
        self.count.migrations += std::mem::take(&mut self.later_migrations);
    }
}

/// Which of the two counts a record adds to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counted {
    /// A switch-out record.
    Switch,
    /// A `cpu-migrations` sample.
    Migration,
}

/// The sample layout every event of a ring shares, so that one parser reads
/// them all. A software event has no raw payload; the kernel writes an
/// empty one (a size of 4 and four zero bytes), which no tracepoint sample
/// has: that tells a migration sample from a tracepoint sample in one ring.
pub const SAMPLE: SampleFlag = SampleFlag::TID
    .union(SampleFlag::TIME)
    .union(SampleFlag::CPU)
    .union(SampleFlag::PERIOD)
    .union(SampleFlag::RAW);

/// Whether a sample's raw payload is the empty one a software event gets.
pub fn is_software_raw(raw: &[u8]) -> bool {
    raw.len() <= 8 && raw.iter().all(|&b| b == 0)
}

/// The `cpu-migrations` sampler of `cpu`: one sample per migration onto it.
pub fn migration_builder(cpu: u32) -> Builder<'static> {
    let mut b = Builder::new(Software::CPU_MIGRATIONS);
    b.one_cpu(cpu as usize)
        .any_pid()
        .include_kernel()
        .sample_period(1)
        .sample(SAMPLE)
        .clockid(Clock::MONOTONIC)
        .wakeup_watermark(RING_BYTES);
    b
}

/// `PERF_EVENT_IOC_SET_OUTPUT`, `_IO('$', 5)`: perf-event2 does not wrap it.
const PERF_EVENT_IOC_SET_OUTPUT: u64 = 0x2405;

/// Sends `event`'s records into `target`'s ring (same CPU, same clock).
#[expect(
    unsafe_code,
    reason = "PERF_EVENT_IOC_SET_OUTPUT has no safe wrapper in perf-event2"
)]
pub fn set_output(event: &Counter, target: &Counter) -> io::Result<()> {
    // SAFETY: both are open perf event fds owned by the caller; the ioctl
    // takes the target fd by value and touches no user memory.
    let rc = unsafe {
        libc::ioctl(
            event.as_raw_fd(),
            PERF_EVENT_IOC_SET_OUTPUT as _,
            target.as_raw_fd(),
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

struct LeanRing {
    sampler: Sampler,
    _migrations: Counter,
    tally: Tally,
}

/// Switch and migration counts of some CPUs without tracepoints: no
/// tracefs needed, one ring per CPU, read on noisetop's own CPU.
pub struct SwitchRings {
    cpus: Vec<u32>,
    rings: Vec<LeanRing>,
}

impl std::fmt::Debug for SwitchRings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SwitchRings")
            .field("cpus", &self.cpus)
            .finish_non_exhaustive()
    }
}

impl SwitchRings {
    /// Opens and enables one ring per CPU, before the first sample: each
    /// open installs the event on its CPU with one IPI, the only ones.
    pub fn open(cpus: &[u32]) -> Result<SwitchRings, String> {
        let mut rings = Vec::with_capacity(cpus.len());
        for &cpu in cpus {
            let why = |what: &str, e: io::Error| format!("{what} on CPU {cpu}: {e}");
            let mut lead = Builder::new(Software::DUMMY);
            lead.one_cpu(cpu as usize)
                .any_pid()
                .include_kernel()
                .context_switch(true)
                .sample_id_all(true)
                .sample(SAMPLE)
                .clockid(Clock::MONOTONIC)
                .wakeup_watermark(RING_BYTES)
                // enabled at open: an enable later is one more IPI
                .enabled(true);
            let counter = lead
                .build()
                .map_err(|e| why("perf_event_open of switch records", e))?;
            let sampler = counter
                .sampled(RING_BYTES)
                .map_err(|e| why("mmap of a switch ring", e))?;
            let migrations = migration_builder(cpu)
                .enabled(true)
                .build()
                .map_err(|e| why("perf_event_open of cpu-migrations", e))?;
            set_output(&migrations, sampler.as_counter())
                .map_err(|e| why("redirecting cpu-migrations into the switch ring", e))?;
            rings.push(LeanRing {
                sampler,
                _migrations: migrations,
                tally: Tally::new(cpu),
            });
        }
        Ok(SwitchRings {
            cpus: cpus.to_vec(),
            rings,
        })
    }

    /// The CPUs counted.
    pub fn cpus(&self) -> &[u32] {
        &self.cpus
    }

    /// Reads every ring and returns the counts up to `cut` (`CLOCK_MONOTONIC`
    /// ns), one per CPU.
    pub fn counts_at(&mut self, cut: u64) -> Vec<SwitchCount> {
        self.rings
            .iter_mut()
            .map(|r| {
                r.tally.start_cut();
                while let Some(rec) = r.sampler.next_record() {
                    if rec.ty() == PERF_RECORD_SWITCH_CPU_WIDE {
                        if u32::from(rec.misc()) & PERF_RECORD_MISC_SWITCH_OUT == 0 {
                            continue;
                        }
                        match switch_time(&rec) {
                            Some(t) => r.tally.add(Counted::Switch, t, cut),
                            None => r.tally.count.lost += 1,
                        }
                        continue;
                    }
                    match rec.parse_record() {
                        Ok(DataRecord::Sample(s)) => match s.time() {
                            Some(t) => r.tally.add(Counted::Migration, t, cut),
                            None => r.tally.count.lost += 1,
                        },
                        Ok(DataRecord::Lost(l)) => r.tally.count.lost += l.lost,
                        _ => {}
                    }
                }
                r.tally.count
            })
            .collect()
    }
}

/// The time of a switch record: the `sample_id` trailer's `TIME`, which with
/// [`SAMPLE`] sits after `pid, tid` at the trailer's start. A switch record
/// body is `next_prev_pid, next_prev_tid` and then the trailer.
pub fn switch_time(rec: &perf_event::Record<'_>) -> Option<u64> {
    let bytes = rec.to_contiguous();
    // body: next_prev_pid u32, next_prev_tid u32; trailer: pid u32, tid u32, time u64
    let at = 16;
    let b: [u8; 8] = bytes.get(at..at + 8)?.try_into().ok()?;
    Some(u64::from_ne_bytes(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_after_the_cut_count_at_the_next_one() {
        let mut t = Tally::new(1);
        t.start_cut();
        t.add(Counted::Switch, 100, 150);
        t.add(Counted::Switch, 150, 150);
        t.add(Counted::Switch, 151, 150);
        t.add(Counted::Migration, 90, 150);
        t.add(Counted::Migration, 200, 150);
        assert_eq!((t.count.switches, t.count.migrations), (2, 1));
        t.start_cut();
        assert_eq!((t.count.switches, t.count.migrations), (3, 2));
        t.add(Counted::Switch, 300, 400);
        assert_eq!((t.count.switches, t.count.migrations), (4, 2));
        assert_eq!(t.count.cpu, 1);
    }

    #[test]
    fn only_the_empty_raw_payload_of_a_software_event_is_one() {
        assert!(is_software_raw(&[0, 0, 0, 0]));
        assert!(is_software_raw(&[]));
        // a sched_switch payload starts with its common_type, never 0
        assert!(!is_software_raw(&[0x3c, 0x01, 0, 0, 0, 0, 0, 0]));
        assert!(!is_software_raw(&[0; 12]));
    }
}
