//! Context switches and migrations of watched CPUs, read from samples
//! each CPU writes into its own perf ring: nothing is read across CPUs, so
//! counting costs a watched CPU no IPI.
//!
//! Per CPU one group: perf's `context-switches` software event leads, perf's
//! `cpu-migrations` follows, both sampled with a period of one and each
//! sample carrying the whole group's values (`PERF_SAMPLE_READ` with
//! `PERF_FORMAT_GROUP`). The kernel reads those values on the CPU itself as
//! it writes the sample, so every sample holds the very counts that
//! `perf stat -a -A` reads, cumulative since the ring was opened. A count
//! at a cut (the snapshot's clock stamp) is the one in the last sample
//! written up to it.
//!
//! Why values and not one record per event: on Linux 6.18 (seen on a VM)
//! the kernel writes no sample and no switch record for about one switch in
//! three, while its counters count them all (`perf stat -e
//! context-switches` equals /proc/stat `ctxt`; `sched:sched_switch`, perf's
//! switch records and a period-1 sampler each see 1 036 of 1 466 under a
//! hopping load, and half of an idle CPU's switches). A missed sample
//! loses nothing here: the next one carries the count. What is late is
//! what happened after the last sample before a cut, one switch at most
//! where only switches out of idle go unsampled; it counts at the next
//! cut. A ring that overflows only makes the counts later, never wrong.
//!
//! The tracer keeps its own rings for attribution; these rings count in
//! both modes, traced and `--no-trace`.

use std::io;
use std::os::fd::AsRawFd;

use perf_event::data::Record as DataRecord;
use perf_event::events::Software;
use perf_event::{Builder, Clock, Counter, ReadFormat, SampleFlag, Sampler};

use crate::base::Cause;

/// Bytes of ring per counted CPU (a power of two). A sample is 64 bytes.
/// The ring's size is also its wake-up watermark (the largest the kernel
/// takes), and the kernel queues that wake-up as an `irq_work` on the
/// counted CPU once per ring of data written, read or not: 8 MiB makes it
/// once per 131 000 switches and migrations. Whatever the ring drops, the
/// counts stay exact, only later.
pub const COUNT_RING_BYTES: usize = 8 << 20;

/// The cumulative counts of one watched CPU since its ring was opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SwitchCount {
    /// The CPU.
    pub cpu: u32,
    /// perf's `context-switches` of the CPU, as of the last sample up to the cut.
    pub switches: u64,
    /// perf's `cpu-migrations` of the CPU, likewise.
    pub migrations: u64,
}

/// One sample's values: when, and the group's counts then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    /// `CLOCK_MONOTONIC` ns the sample was written.
    pub time: u64,
    /// `context-switches` then.
    pub switches: u64,
    /// `cpu-migrations` then.
    pub migrations: u64,
    /// The task the sample was written in: for a switch, the one switched
    /// out (0: none named).
    pub tid: u32,
}

/// Counts kept per ring: the counts as of the last cut, and readings
/// written after it (they count at a later cut).
#[derive(Debug, Clone, Default)]
pub struct Tally {
    /// As of the last cut.
    pub count: SwitchCount,
    /// Read, written after the last cut.
    later: Vec<Reading>,
    /// Tasks named by the samples counted since [`Tally::take_named`].
    named: Vec<u32>,
}

impl Tally {
    /// A tally for `cpu`, nothing counted yet.
    pub fn new(cpu: u32) -> Self {
        Tally {
            count: SwitchCount {
                cpu,
                ..SwitchCount::default()
            },
            later: Vec::new(),
            named: Vec::new(),
        }
    }

    /// Takes one reading against the cut `cut`. The values only grow, so
    /// the largest written up to the cut is the last one, whatever the
    /// order the readings arrive in.
    pub fn add(&mut self, r: Reading, cut: u64) {
        if r.time <= cut {
            self.count.switches = self.count.switches.max(r.switches);
            self.count.migrations = self.count.migrations.max(r.migrations);
            // a task's switches come in runs: a run is one entry here,
            // and the rest are merged at the take
            if r.tid != 0 && self.named.last() != Some(&r.tid) {
                self.named.push(r.tid);
            }
        } else {
            self.later.push(r);
        }
    }

    /// The tasks switched out (or migrated away) on this CPU, as its
    /// samples counted since the last call name them, in tid order.
    pub fn take_named(&mut self) -> Vec<u32> {
        let mut named = std::mem::take(&mut self.named);
        named.sort_unstable();
        named.dedup();
        named
    }

    /// Starts a cut at `cut`: readings held back from before count now if
    /// they were written up to it.
    pub fn start_cut(&mut self, cut: u64) {
        for r in std::mem::take(&mut self.later) {
            self.add(r, cut);
        }
    }
}

/// The sample layout of a counting ring: both events write it. `TID`
/// names the task current as the sample is written: for a context switch
/// the one switched out, so the samples name every task that left the CPU.
pub const SAMPLE: SampleFlag = SampleFlag::TIME
    .union(SampleFlag::READ)
    .union(SampleFlag::TID);

/// The group's read layout: values with their ids (perf-event2 adds `ID`
/// to `GROUP`); the leader's value comes first.
fn read_format() -> ReadFormat {
    ReadFormat::GROUP | ReadFormat::ID
}

fn counting(event: Software, cpu: u32) -> Builder<'static> {
    let mut b = Builder::new(event);
    b.one_cpu(cpu as usize)
        .any_pid()
        .include_kernel()
        .sample_period(1)
        .sample(SAMPLE)
        .read_format(read_format())
        .clockid(Clock::MONOTONIC)
        .wakeup_watermark(COUNT_RING_BYTES)
        // enabled at open: an enable later is one more IPI
        .enabled(true);
    b
}

/// The values of a counting sample: `(switches, migrations)`.
pub fn values_of(s: &perf_event::data::Sample<'_>) -> Option<(u64, u64)> {
    let g = s.values()?;
    Some((g.get(0)?.value(), g.get(1)?.value()))
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

struct CountRing {
    sampler: Sampler,
    _migrations: Counter,
    tally: Tally,
}

/// Switch and migration counts of some CPUs: one counting ring per CPU,
/// read on noisetop's own CPU.
pub struct SwitchRings {
    cpus: Vec<u32>,
    rings: Vec<CountRing>,
}

impl std::fmt::Debug for SwitchRings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SwitchRings")
            .field("cpus", &self.cpus)
            .finish_non_exhaustive()
    }
}

/// Why a CPU's counting ring cannot be opened: the step and what the
/// kernel said.
#[derive(Debug, thiserror::Error)]
#[error("{what} on CPU {cpu}: {source}")]
pub struct RingError {
    /// The step that failed (`perf_event_open of context-switches`).
    pub what: &'static str,
    /// The CPU.
    pub cpu: u32,
    /// What the kernel said.
    pub source: io::Error,
}

impl RingError {
    /// The kind of reason: permission, what the kernel lacks, or another
    /// failure (the open file limit, memory for the ring).
    pub fn cause(&self) -> Cause {
        match self.source.raw_os_error() {
            Some(libc::EPERM | libc::EACCES) => Cause::Permission,
            Some(libc::ENOENT | libc::ENODEV | libc::EOPNOTSUPP) => Cause::KernelLacks,
            _ => Cause::Failed,
        }
    }
}

impl SwitchRings {
    /// Opens one counting group per CPU, enabled at open, before the first
    /// sample: each open installs the event on its CPU with one IPI, the
    /// only ones.
    pub fn open(cpus: &[u32]) -> Result<SwitchRings, RingError> {
        let mut rings = Vec::with_capacity(cpus.len());
        for &cpu in cpus {
            let why = |what: &'static str, source: io::Error| RingError { what, cpu, source };
            let mut lead = counting(Software::CONTEXT_SWITCHES, cpu)
                .build()
                .map_err(|e| why("perf_event_open of context-switches", e))?;
            let migrations = counting(Software::CPU_MIGRATIONS, cpu)
                .build_with_group(&mut lead)
                .map_err(|e| why("perf_event_open of cpu-migrations", e))?;
            let sampler = lead
                .sampled(COUNT_RING_BYTES)
                .map_err(|e| why("mmap of a counting ring", e))?;
            set_output(&migrations, sampler.as_counter())
                .map_err(|e| why("redirecting cpu-migrations into the counting ring", e))?;
            rings.push(CountRing {
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

    /// Per CPU, the tasks its samples named since the last call (see
    /// [`Tally::take_named`]).
    pub fn take_named(&mut self) -> Vec<(u32, Vec<u32>)> {
        self.cpus
            .iter()
            .zip(&mut self.rings)
            .map(|(&cpu, r)| (cpu, r.tally.take_named()))
            .collect()
    }

    /// Reads every ring and returns the counts up to `cut` (`CLOCK_MONOTONIC`
    /// ns), one per CPU.
    pub fn counts_at(&mut self, cut: u64) -> Vec<SwitchCount> {
        self.rings
            .iter_mut()
            .map(|r| {
                r.tally.start_cut(cut);
                // a sample the ring dropped costs nothing: the next one
                // carries the counts
                while let Some(rec) = r.sampler.next_record() {
                    let Ok(DataRecord::Sample(s)) = rec.parse_record() else {
                        continue;
                    };
                    if let (Some(time), Some((switches, migrations))) = (s.time(), values_of(&s)) {
                        let reading = Reading {
                            time,
                            switches,
                            migrations,
                            tid: s.tid().unwrap_or(0),
                        };
                        r.tally.add(reading, cut);
                    }
                }
                r.tally.count
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(time: u64, switches: u64, migrations: u64) -> Reading {
        Reading {
            time,
            switches,
            migrations,
            tid: 0,
        }
    }

    #[test]
    fn a_cut_counts_the_last_values_written_up_to_it() {
        let mut t = Tally::new(1);
        t.start_cut(150);
        t.add(at(100, 5, 1), 150);
        // out of order: a handler interrupted the writing of another sample
        t.add(at(90, 4, 1), 150);
        t.add(at(150, 7, 2), 150);
        t.add(at(151, 9, 2), 150);
        assert_eq!((t.count.switches, t.count.migrations), (7, 2));
        // the sample after the cut counts at the next one
        t.start_cut(400);
        assert_eq!((t.count.switches, t.count.migrations), (9, 2));
        // samples the kernel did not write lose nothing: the next carries them
        t.add(at(300, 15, 4), 400);
        assert_eq!((t.count.switches, t.count.migrations), (15, 4));
        // nothing written in a window: the counts stand
        t.start_cut(500);
        assert_eq!((t.count.switches, t.count.migrations), (15, 4));
        assert_eq!(t.count.cpu, 1);
    }

    #[test]
    fn the_tasks_a_cut_counted_are_named_once_each() {
        let by = |time, switches, tid| Reading {
            tid,
            ..at(time, switches, 0)
        };
        let mut t = Tally::new(1);
        t.start_cut(100);
        t.add(by(10, 1, 77), 100);
        t.add(by(20, 2, 88), 100);
        t.add(by(30, 3, 77), 100);
        // the idle task is no one; a sample after the cut names its task
        // at the next one
        t.add(by(40, 4, 0), 100);
        t.add(by(150, 5, 99), 100);
        assert_eq!(t.take_named(), vec![77, 88]);
        assert!(t.take_named().is_empty());
        t.start_cut(200);
        assert_eq!(t.take_named(), vec![99]);
    }
}
