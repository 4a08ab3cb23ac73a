//! CPU time by cgroup on the watched CPUs since serve started: every task
//! the kernel counted there (the owner and the others), summed by its
//! cgroup v2 path. What an operator moves is a pod, a container or a
//! unit, so this is where a noisy neighbour shows in Prometheus.
//!
//! Bounded: at most [`KEPT`] cgroups are kept by name; past that the one
//! with the least time is folded into `other`, whose counter only grows,
//! and at most [`EXPORTED`] are written, the rest summed into `other`.

use std::collections::BTreeMap;

use super::text::Writer;
use crate::noise::Traced;

/// Cgroups kept by name.
pub const KEPT: usize = 500;
/// Cgroups written by name, the longest-running first.
pub const EXPORTED: usize = 50;
/// The series the rest are summed into.
pub const OTHER: &str = "other";

/// Time by cgroup, ns.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CgroupTime {
    by: BTreeMap<String, u64>,
    other_ns: u64,
}

impl CgroupTime {
    /// Adds one interval's watched CPUs.
    pub fn observe(&mut self, trace: Option<&Traced>) {
        let Some(t) = trace else {
            return;
        };
        for c in &t.cpus {
            if c.sampled {
                continue;
            }
            let owner = c.owner.as_ref().and_then(|o| o.cgroup.as_deref());
            if let Some(cg) = owner {
                self.add(cg, c.owner_ns);
            }
            for i in &c.intruders {
                if let Some(cg) = i.task.cgroup.as_deref() {
                    self.add(cg, i.ns);
                }
            }
        }
    }

    fn add(&mut self, cgroup: &str, ns: u64) {
        if ns == 0 {
            return;
        }
        if let Some(v) = self.by.get_mut(cgroup) {
            *v += ns;
            return;
        }
        if self.by.len() >= KEPT {
            // the least time goes to `other`, where it is still counted
            if let Some((k, v)) = self
                .by
                .iter()
                .min_by_key(|(_, v)| **v)
                .map(|(k, v)| (k.clone(), *v))
            {
                self.by.remove(&k);
                self.other_ns += v;
            }
        }
        self.by.insert(cgroup.to_string(), ns);
    }

    /// Writes the family's series, labelled with the watched CPUs.
    pub fn write(&self, w: &mut Writer, cpus: &str) {
        let mut v: Vec<(&String, &u64)> = self.by.iter().collect();
        v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let mut other = self.other_ns;
        for (i, (cg, ns)) in v.into_iter().enumerate() {
            if i < EXPORTED {
                w.sample(&[("cgroup", cg), ("cpus", cpus)], *ns as f64 / 1e9);
            } else {
                other += ns;
            }
        }
        if other > 0 {
            w.sample(&[("cgroup", OTHER), ("cpus", cpus)], other as f64 / 1e9);
        }
    }

    /// Cgroups kept by name (tests).
    pub fn kept(&self) -> usize {
        self.by.len()
    }

    /// All the time counted, ns (tests).
    pub fn total_ns(&self) -> u64 {
        self.by.values().sum::<u64>() + self.other_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::traced::Intruder;
    use crate::noise::{TracedCpu, TracedTask};

    fn task(pid: u32, cg: &str) -> TracedTask {
        TracedTask {
            comm: "t".into(),
            pid,
            tid: pid,
            per_cpu_kthread: false,
            exited: false,
            cgroup: Some(cg.into()),
        }
    }

    #[test]
    fn time_adds_up_by_cgroup_and_past_the_cap_goes_to_other() {
        let mut t = CgroupTime::default();
        let trace = Traced {
            cpus: vec![TracedCpu {
                cpu: 1,
                owner: Some(task(1, "/system.slice/bench.service")),
                owner_ns: 700,
                intruders: vec![
                    Intruder {
                        task: task(2, "/system.slice/backup.service"),
                        ns: 200,
                        slices: 1,
                        charged_ns: None,
                    },
                    Intruder {
                        task: task(3, "/system.slice/backup.service"),
                        ns: 50,
                        slices: 1,
                        charged_ns: None,
                    },
                ],
                ..TracedCpu::default()
            }],
            ..Traced::default()
        };
        t.observe(Some(&trace));
        t.observe(Some(&trace));
        assert_eq!(t.by["/system.slice/bench.service"], 1400);
        assert_eq!(t.by["/system.slice/backup.service"], 500);
        // a pod per interval for a day: the cap holds, no time is lost
        for i in 0..(KEPT as u64 + 10) {
            t.add(&format!("/kubepods/pod{i}"), 1 + i);
        }
        assert_eq!(t.kept(), KEPT);
        let pods: u64 = (0..(KEPT as u64 + 10)).map(|i| 1 + i).sum();
        assert_eq!(t.total_ns(), 1900 + pods);
        let mut w = Writer::new(crate::serve::text::Format::Classic, 0);
        w.family(crate::serve::catalog::CGROUP_SECONDS);
        t.write(&mut w, "1");
        let text = w.finish();
        assert_eq!(
            text.lines()
                .filter(|l| l.starts_with("noisetop_cgroup"))
                .count(),
            EXPORTED + 1
        );
        assert!(text.contains(
            "noisetop_cgroup_cpu_seconds_total{cgroup=\"/system.slice/bench.service\",cpus=\"1\"} 0.0000014\n"
        ), "{text}");
    }
}
