//! The session's findings: each distinct finding once, with how many
//! intervals raised it and when it was first and last seen.

use crate::noise::Finding;

/// Most distinct findings kept; the longest unseen go first.
pub const MAX_ENTRIES: usize = 500;

/// One distinct finding over the session.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The latest instance (its evidence carries the latest numbers).
    pub finding: Finding,
    /// Intervals that raised it.
    pub count: u64,
    /// Wall time of the first interval that raised it, ns.
    pub first_ns: u64,
    /// Wall time of the last interval that raised it, ns.
    pub last_ns: u64,
}

/// Every distinct finding of the session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FindingLog {
    entries: Vec<Entry>,
}

/// Two findings are the same when kind, CPUs and label agree; evidence
/// carries numbers that change every interval.
fn same(a: &Finding, b: &Finding) -> bool {
    a.kind == b.kind && a.cpus == b.cpus && a.label == b.label
}

impl FindingLog {
    /// Records the findings of an interval that ended at `wall_ns`.
    pub fn record(&mut self, findings: &[Finding], wall_ns: u64) {
        for f in findings {
            match self.entries.iter_mut().find(|e| same(&e.finding, f)) {
                Some(e) => {
                    e.finding = f.clone();
                    e.count += 1;
                    e.last_ns = wall_ns;
                }
                None => self.entries.push(Entry {
                    finding: f.clone(),
                    count: 1,
                    first_ns: wall_ns,
                    last_ns: wall_ns,
                }),
            }
        }
        if self.entries.len() > MAX_ENTRIES {
            self.entries.sort_by_key(|e| std::cmp::Reverse(e.last_ns));
            self.entries.truncate(MAX_ENTRIES);
        }
    }

    /// Returns the entries, most recently seen first, then most severe,
    /// then first seen latest.
    pub fn newest_first(&self) -> Vec<&Entry> {
        let mut v: Vec<&Entry> = self.entries.iter().collect();
        v.sort_by(|a, b| {
            b.last_ns
                .cmp(&a.last_ns)
                .then(b.finding.severity.cmp(&a.finding.severity))
                .then(b.first_ns.cmp(&a.first_ns))
                .then(a.finding.kind.cmp(&b.finding.kind))
                .then_with(|| a.finding.cpus.cmp(&b.finding.cpus))
        });
        v
    }

    /// Returns how many distinct findings were seen.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Tells whether nothing was found yet.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::{Kind, Severity};

    fn f(kind: Kind, cpu: u32, evidence: &str) -> Finding {
        Finding {
            cpus: vec![cpu],
            kind,
            severity: Severity::Warn,
            label: "L".into(),
            evidence: evidence.into(),
            numbers: Vec::new(),
            fix: None,
        }
    }

    #[test]
    fn repeats_are_counted_with_first_and_last_seen() {
        let mut log = FindingLog::default();
        log.record(&[f(Kind::CswOnWatched, 2, "800/s")], 10);
        log.record(
            &[f(Kind::CswOnWatched, 2, "900/s"), f(Kind::Steal, 1, "2 %")],
            20,
        );
        log.record(&[f(Kind::CswOnWatched, 3, "60/s")], 30);
        let v = log.newest_first();
        assert_eq!(v.len(), 3);
        assert_eq!(
            (v[0].finding.cpus.clone(), v[0].count, v[0].first_ns),
            (vec![3], 1, 30)
        );
        // CSW on 2 and steal on 1 were both last seen at 20; CSW first seen earlier
        assert_eq!(v[1].finding.kind, Kind::Steal);
        assert_eq!((v[2].count, v[2].first_ns, v[2].last_ns), (2, 10, 20));
        assert_eq!(
            v[2].finding.evidence, "900/s",
            "the latest numbers are kept"
        );
    }

    #[test]
    fn the_log_is_bounded() {
        let mut log = FindingLog::default();
        for i in 0..(MAX_ENTRIES as u32 + 10) {
            log.record(&[f(Kind::MigOnWatched, i, "")], u64::from(i));
        }
        assert_eq!(log.len(), MAX_ENTRIES);
        assert_eq!(log.newest_first().last().unwrap().first_ns, 10);
    }
}
