//! CPU time by cgroup since serve started, by class of CPU: the watched
//! CPUs (every task the kernel counted there, the owner's too), the
//! isolated ones, and the other CPUs (their 8 longest tasks each
//! interval), summed by the task's cgroup v2 path. What an operator moves
//! is a pod, a container or a unit, so this is where a noisy neighbour
//! shows in Prometheus.
//!
//! Bounded, per class: at most [`KEPT`] cgroups are kept by name; past
//! that the one with the least time is folded into `other`, whose counter
//! only grows, and at most [`EXPORTED`] are written, the rest summed into
//! `other`. So a class writes at most 51 series, 153 in all.

use std::collections::BTreeMap;

use super::text::Writer;
use crate::noise::traced::Traced;

/// Cgroups kept by name.
pub const KEPT: usize = 500;
/// Cgroups written by name, the longest-running first.
pub const EXPORTED: usize = 50;
/// The series the rest are summed into.
pub const OTHER: &str = "other";

/// The classes of CPU, as the `cpus` label says them.
pub const CLASSES: [&str; 3] = ["watched", "isolated", "other"];

/// Time by cgroup, ns, of one class of CPU.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ClassTime {
    by: BTreeMap<String, u64>,
    other_ns: u64,
}

/// Time by cgroup for each class of CPU.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CgroupTime {
    classes: [ClassTime; 3],
}

impl CgroupTime {
    /// Adds one interval: the judged CPUs are the watched ones, the
    /// browsed ones isolated (in `isolated`) or other.
    pub fn observe(&mut self, trace: Option<&Traced>, isolated: &[u32]) {
        let Some(t) = trace else {
            return;
        };
        for c in &t.cpus {
            self.classes[0].observe(c);
        }
        for c in &t.browsed {
            let class = if isolated.contains(&c.cpu) { 1 } else { 2 };
            self.classes[class].observe(c);
        }
    }

    /// Writes the family's series, class by class.
    pub fn write(&self, w: &mut Writer) {
        for (class, name) in self.classes.iter().zip(CLASSES) {
            class.write(w, name);
        }
    }

    /// One class (tests).
    #[cfg(test)]
    pub fn class(&self, i: usize) -> &ClassTime {
        &self.classes[i]
    }
}

impl ClassTime {
    fn observe(&mut self, c: &crate::noise::traced::TracedCpu) {
        if c.sampled {
            return;
        }
        if let Some(cg) = c.owner.as_ref().and_then(|o| o.cgroup.as_deref()) {
            self.add(cg, c.owner_ns);
        }
        for i in &c.intruders {
            if let Some(cg) = i.task.cgroup.as_deref() {
                self.add(cg, i.ns);
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

    /// Writes the class's series.
    fn write(&self, w: &mut Writer, cpus: &str) {
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
    #[cfg(test)]
    pub fn kept(&self) -> usize {
        self.by.len()
    }

    /// All the time counted, ns.
    #[cfg(test)]
    pub fn total_ns(&self) -> u64 {
        self.by.values().sum::<u64>() + self.other_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::traced::Intruder;
    use crate::noise::traced::TracedCpu;
    use crate::noise::traced::TracedTask;

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
    fn time_adds_up_by_cgroup_and_class_and_past_the_cap_goes_to_other() {
        let mut t = CgroupTime::default();
        let cpu = |cpu: u32| TracedCpu {
            cpu,
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
        };
        let trace = Traced {
            cpus: vec![cpu(1)],
            browsed: vec![cpu(2), cpu(3)],
            ..Traced::default()
        };
        t.observe(Some(&trace), &[2]);
        t.observe(Some(&trace), &[2]);
        let (w, i, o) = (t.class(0), t.class(1), t.class(2));
        assert_eq!(w.by["/system.slice/bench.service"], 1400);
        assert_eq!(w.by["/system.slice/backup.service"], 500);
        assert_eq!(i.total_ns(), 1900);
        assert_eq!(o.total_ns(), 1900);
        // a pod per interval for a day: the cap holds, no time is lost
        let mut w = w.clone();
        for i in 0..(KEPT as u64 + 10) {
            w.add(&format!("/kubepods/pod{i}"), 1 + i);
        }
        assert_eq!(w.kept(), KEPT);
        let pods: u64 = (0..(KEPT as u64 + 10)).map(|i| 1 + i).sum();
        assert_eq!(w.total_ns(), 1900 + pods);
        let mut out = Writer::new(crate::serve::text::Format::Classic, 0);
        out.family(crate::serve::catalog::CGROUP_SECONDS);
        w.write(&mut out, "watched");
        let text = out.finish();
        assert_eq!(
            text.lines()
                .filter(|l| l.starts_with("noisetop_cgroup"))
                .count(),
            EXPORTED + 1
        );
        assert!(
            text.contains(
                "noisetop_cgroup_cpu_seconds_total{cgroup=\"/system.slice/bench.service\",cpus=\"watched\"} 0.0000014\n"
            ),
            "{text}"
        );
    }
}
