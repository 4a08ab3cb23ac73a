//! Switch and migration counts of the watched CPUs, read hands-off from
//! counting rings ([`SwitchRings`]), traced or not, and put into the
//! snapshot in place of the cross-CPU perf read the sampler leaves out for
//! those CPUs.

use super::SwitchSource;
use crate::base::Unavailable;
use crate::model::snapshot::Snapshot;
use crate::os::switch_ring::{RingError, SwitchCount, SwitchRings};

/// Counting rings of the watched CPUs.
#[derive(Debug, Default)]
pub struct CountingRings {
    rings: Option<SwitchRings>,
}

impl CountingRings {
    /// Opens rings on `cpus` (none when empty); the reason on failure.
    pub fn open(cpus: &[u32]) -> Result<Self, RingError> {
        Ok(CountingRings {
            rings: (!cpus.is_empty())
                .then(|| SwitchRings::open(cpus))
                .transpose()?,
        })
    }
}

impl SwitchSource for CountingRings {
    fn counts_at(&mut self, cut_ns: u64) -> Vec<SwitchCount> {
        self.rings
            .as_mut()
            .map_or_else(Vec::new, |r| r.counts_at(cut_ns))
    }

    fn take_named(&mut self) -> Vec<(u32, Vec<u32>)> {
        self.rings
            .as_mut()
            .map_or_else(Vec::new, SwitchRings::take_named)
    }

    fn retarget(&mut self, cpus: &[u32]) -> Result<(), Unavailable> {
        if self.rings.as_ref().is_some_and(|r| r.cpus() == cpus) {
            return Ok(());
        }
        self.rings = None;
        if !cpus.is_empty() {
            self.rings = Some(
                SwitchRings::open(cpus).map_err(|e| Unavailable::new(e.cause(), e.to_string()))?,
            );
        }
        Ok(())
    }
}

/// What the last fill put in, to tell a count that continues from one
/// that started again (a ring reopened, a CPU newly watched).
#[derive(Debug, Default)]
pub struct Filled {
    /// The rings' generation the last fill read.
    epoch: u64,
    /// CPUs the last fill gave counts for.
    cpus: Vec<u32>,
    /// Whether a snapshot was filled before: the first one has no
    /// predecessor a count could fail to continue.
    started: bool,
}

impl Filled {
    /// Puts `counts` of `cpus` (the hands-off CPUs, or every online CPU
    /// where the counts cover them all) into `snap`. A CPU whose count
    /// does not continue the previous snapshot's (new ring, or counted
    /// another way before) gets none: its rates are unknown for that
    /// interval, never a difference of two unrelated counters. Samples a
    /// ring dropped cost nothing: every sample carries the counts.
    pub fn fill(
        &mut self,
        snap: &mut Snapshot,
        cpus: &[u32],
        epoch: u64,
        counts: Vec<SwitchCount>,
    ) {
        let first = !std::mem::replace(&mut self.started, true);
        let fresh = epoch != self.epoch && !first;
        self.epoch = epoch;
        let mut now = Vec::new();
        for c in counts {
            let cpu = c.cpu;
            if cpus.binary_search(&cpu).is_err() {
                continue;
            }
            now.push(cpu);
            let continues = first || (!fresh && self.cpus.contains(&cpu));
            if continues {
                snap.csw.insert(cpu, c.switches);
                snap.migrations.insert(cpu, c.migrations);
            } else {
                snap.csw.remove(&cpu);
                snap.migrations.remove(&cpu);
            }
        }
        self.cpus = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(cpu: u32, switches: u64, migrations: u64) -> SwitchCount {
        SwitchCount {
            cpu,
            switches,
            migrations,
        }
    }

    fn empty() -> Snapshot {
        Snapshot::unread(crate::os::hw::Stamp::default(), vec![0, 1])
    }

    #[test]
    fn a_count_enters_the_snapshot_only_where_it_continues_the_last_one() {
        let mut f = Filled::default();
        let mut s = empty();
        // the first snapshot has no predecessor to differ from
        f.fill(&mut s, &[1], 1, vec![count(1, 10, 1)]);
        assert_eq!(s.csw.get(&1), Some(&10));
        f.fill(&mut s, &[1], 1, vec![count(1, 25, 2)]);
        assert_eq!((s.csw.get(&1), s.migrations.get(&1)), (Some(&25), Some(&2)));
        // samples the ring dropped: the next one carried the counts
        let mut s = empty();
        f.fill(&mut s, &[1], 1, vec![count(1, 40, 2)]);
        assert_eq!(s.csw.get(&1), Some(&40));
        // a CPU counted before is dropped, then comes back: it starts again
        let mut s = empty();
        f.fill(&mut s, &[1], 1, vec![]);
        f.fill(&mut s, &[1], 1, vec![count(1, 44, 2)]);
        assert_eq!(s.csw.get(&1), None);
        f.fill(&mut s, &[1], 1, vec![count(1, 45, 2)]);
        assert_eq!(s.csw.get(&1), Some(&45));
        // rings reopened: counts start again
        let mut s = empty();
        f.fill(&mut s, &[1], 2, vec![count(1, 2, 0)]);
        assert_eq!(s.csw.get(&1), None);
        // a CPU that is not hands-off keeps the sampler's read
        let mut s = empty();
        s.csw.insert(0, 7);
        f.fill(&mut s, &[1], 2, vec![count(0, 3, 0), count(1, 5, 0)]);
        assert_eq!((s.csw.get(&0), s.csw.get(&1)), (Some(&7), Some(&5)));
        // no count for the CPU
        let mut s = empty();
        f.fill(&mut s, &[1], 2, vec![]);
        assert_eq!(s.csw.get(&1), None);
    }
}
