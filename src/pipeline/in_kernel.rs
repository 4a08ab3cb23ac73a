//! Who ran on every CPU, counted in the kernel ([`crate::os::bpf`])
//! and made into windows ([`crate::trace::in_kernel`]), as the driver's
//! [`TraceSource`] and [`SwitchSource`]: the watched CPUs are judged, the
//! others are shown (their top intruders). One read of the mapped areas
//! per window, from noisetop's own CPU: no system call reaches a watched
//! CPU and no event is copied out.
//!
//! Names come from what the kernel kept (each task's `comm`, thread
//! group and cgroup id); /proc is read only for the tasks shown, to tell
//! per-CPU kernel threads and tasks that have exited, with the answers
//! kept for a while. IRQ names come from `/sys/kernel/irq/N/actions`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use super::trace::{Owners, bound, cpu_with};
use super::{SwitchSource, TraceSource};
use crate::base::Unavailable;
use crate::noise::traced::{Traced, TracedTask};
use crate::os::bpf::{self, Loaded, Refused, read::read_cpu};
use crate::os::cgroups::CgroupPaths;
use crate::os::switch_ring::SwitchCount;
use crate::trace::in_kernel::CpuBook;
use crate::trace::{CpuTrace, SourceKind, TaskId, TraceWindow};

/// Intruders kept for a CPU that is shown, not judged.
const SHOWN_INTRUDERS: usize = 8;

/// Most answers kept about threads (kernel thread or not).
const KEEP_THREADS: usize = 4096;

/// The loaded programs and each CPU's accounting: windows of any CPUs,
/// ending where the caller says.
#[derive(Debug)]
pub struct Counter {
    loaded: Loaded,
    books: Vec<Option<CpuBook>>,
}

impl Counter {
    /// Loads the programs.
    pub fn open(sysfs: &Path) -> Result<Counter, Refused> {
        let loaded = bpf::load(sysfs)?;
        let books = (0..loaded.nr_cpus).map(|_| None).collect();
        Ok(Counter { loaded, books })
    }

    /// The window of each of `cpus` since the last call, ending at `cut`
    /// (`CLOCK_MONOTONIC`, read just before); a CPU read for the first
    /// time only starts its count. `owners` gives each CPU's owner pids
    /// (empty: the longest runner).
    pub fn windows(
        &mut self,
        cpus: &[u32],
        cut: u64,
        owners: &dyn Fn(u32) -> Vec<u32>,
    ) -> Vec<CpuTrace> {
        let ended = self.loaded.generation();
        self.loaded.set_generation(ended + 1);
        self.loaded.set_first_read(cut);
        let mut out = Vec::new();
        for &cpu in cpus {
            let Some(slot) = self.books.get_mut(cpu as usize) else {
                continue;
            };
            if let Some(book) = slot {
                // slots touched in the window before too: a program that
                // read the number just before it moved writes after the
                // last read
                let raw = read_cpu(
                    &self.loaded.areas,
                    &self.loaded.remotes,
                    cpu,
                    ended.saturating_sub(1),
                );
                book.set_owner(owners(cpu));
                out.push(book.window(&raw, cut, ended));
            } else {
                let raw = read_cpu(&self.loaded.areas, &self.loaded.remotes, cpu, 0);
                let mut book = CpuBook::new(cpu);
                book.set_owner(owners(cpu));
                book.start(&raw, cut);
                *slot = Some(book);
            }
        }
        out
    }

    /// A CPU's switches and migrations in, counted so far.
    pub fn switches(&self, cpu: u32) -> Option<(u64, u64)> {
        (cpu < self.loaded.nr_cpus).then(|| bpf::switches(&self.loaded, cpu))
    }

    /// Tracepoints this kernel lacks.
    pub fn absent(&self) -> &[String] {
        &self.loaded.absent
    }
}

/// The in-kernel counts as the driver's trace source.
pub struct InKernelTrace {
    counter: Arc<Mutex<Counter>>,
    proc: PathBuf,
    online: PathBuf,
    watched: Vec<u32>,
    owners: Owners,
    cgroups: CgroupPaths,
    /// The cgroup2 mount and its controllers, read once.
    cgroup_root: Option<crate::os::cgroups::CgroupRoot>,
    irq_names: HashMap<u32, String>,
    sysfs: PathBuf,
    threads: HashMap<u32, bool>,
}

/// The same counts' switches and migrations, for the snapshot: of every
/// CPU, watched or not, since the programs count on all of them.
pub struct InKernelSwitches {
    counter: Arc<Mutex<Counter>>,
}

/// A live task's cgroup v2 path, from the `0::` line of
/// /proc/TID/cgroup.
fn v2_path(proc: &Path, tid: u32) -> Option<String> {
    let text = crate::os::read_small(&proc.join(format!("{tid}/cgroup")), 4096).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("0::"))
        .map(|p| p.trim().to_string())
        .filter(|p| p.starts_with('/'))
}

/// Loads the programs and opens both sources over them.
pub fn open(
    sysfs: &Path,
    proc: &Path,
    watched: &[u32],
    owners: Vec<u32>,
) -> Result<(InKernelTrace, InKernelSwitches), Refused> {
    let counter = Arc::new(Mutex::new(Counter::open(sysfs)?));
    let cgroups = CgroupPaths::new(proc);
    let mut t = InKernelTrace {
        counter: Arc::clone(&counter),
        proc: proc.to_path_buf(),
        online: sysfs.join("devices/system/cpu/online"),
        watched: Vec::new(),
        owners: Owners::new(owners),
        cgroup_root: cgroups.root(),
        cgroups,
        irq_names: HashMap::new(),
        sysfs: sysfs.to_path_buf(),
        threads: HashMap::new(),
    };
    t.retarget(watched)
        .map_err(|why| Refused::KernelLacks(why.detail))?;
    // the first read: every window is a difference from it
    t.drain();
    Ok((t, InKernelSwitches { counter }))
}

impl InKernelTrace {
    fn irq_name(&mut self, irq: u32) -> String {
        if let Some(n) = self.irq_names.get(&irq) {
            return n.clone();
        }
        let path = self.sysfs.join(format!("kernel/irq/{irq}/actions"));
        let name = crate::os::read_small(&path, 256)
            .ok()
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| format!("irq {irq}"));
        // IRQ numbers are few and fixed: no cap needed beyond them
        self.irq_names.insert(irq, name.clone());
        name
    }

    fn name(&mut self, t: &TaskId, cgroup: Option<u64>) -> TracedTask {
        if self.threads.len() > KEEP_THREADS {
            self.threads.clear();
        }
        let proc = self.proc.clone();
        let per_cpu = *self
            .threads
            .entry(t.tid)
            .or_insert_with(|| bound(&proc, t.tid));
        TracedTask {
            comm: t.comm.clone().unwrap_or_else(|| {
                crate::os::read_small(&proc.join(format!("{}/comm", t.tid)), 64)
                    .map_or_else(|_| format!("tid {}", t.tid), |c| c.trim().to_string())
            }),
            pid: t.pid.unwrap_or(t.tid),
            tid: t.tid,
            per_cpu_kthread: per_cpu,
            exited: !crate::os::tasks::alive(&proc, t.tid),
            // a task that has not switched out since its slot was taken
            // has no cgroup id yet: /proc says it while the task lives
            cgroup: cgroup
                .filter(|&id| id != 0)
                .and_then(|id| self.cgroups.path(id))
                .or_else(|| v2_path(&proc, t.tid)),
        }
    }

    fn online(&self) -> Vec<u32> {
        crate::os::read_small(&self.online, 4096)
            .ok()
            .and_then(|t| crate::base::cpulist::parse(t.trim()).ok())
            .unwrap_or_default()
    }

    fn windows(&mut self) -> Vec<CpuTrace> {
        let online = self.online();
        let cut = crate::os::sys::monotonic_ns();
        let (watched, pids) = (&self.watched, &self.owners.pids);
        let owners = |cpu: u32| {
            if watched.contains(&cpu) {
                pids.clone()
            } else {
                Vec::new()
            }
        };
        self.counter
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .windows(&online, cut, &owners)
    }
}

impl TraceSource for InKernelTrace {
    fn drain(&mut self) -> Traced {
        let mut windows = self.windows();
        for w in &mut windows {
            for s in &mut w.sources {
                if let (SourceKind::Irq, Some(n)) = (s.kind, s.irq) {
                    s.name = self.irq_name(n);
                }
            }
        }
        let (judged, shown): (Vec<CpuTrace>, Vec<CpuTrace>) = windows
            .into_iter()
            .partition(|w| self.watched.contains(&w.cpu));
        let mut out = Traced {
            cgroups: self.cgroup_root.clone(),
            ..Traced::default()
        };
        for w in &judged {
            let c = cpu_with(w, usize::MAX, &mut |t, cg| self.name(t, cg));
            out.cpus.push(c);
        }
        for w in &shown {
            let c = cpu_with(w, SHOWN_INTRUDERS, &mut |t, cg| self.name(t, cg));
            out.browsed.push(c);
        }
        let w = TraceWindow { cpus: judged };
        let proc = self.proc.clone();
        // the owner's descendants found here are owned from the next window
        self.owners.settle(&mut out, &w, &proc);
        out
    }

    fn retarget(&mut self, cpus: &[u32]) -> Result<(), Unavailable> {
        self.watched = cpus.to_vec();
        Ok(())
    }

    fn cpus(&self) -> Vec<u32> {
        self.watched.clone()
    }

    fn notes(&self) -> Vec<String> {
        let c = self.counter.lock().unwrap_or_else(PoisonError::into_inner);
        if c.absent().is_empty() {
            return Vec::new();
        }
        vec![format!(
            "this kernel has no tracepoint {}: nothing is counted there",
            c.absent().join(", ")
        )]
    }

    fn set_owners(&mut self, pids: Vec<u32>) {
        self.owners = Owners::new(pids);
    }

    fn owners(&self) -> Vec<u32> {
        self.owners.pids.clone()
    }

    fn in_kernel(&self) -> bool {
        true
    }
}

impl SwitchSource for InKernelSwitches {
    fn counts_at(&mut self, _cut_ns: u64) -> Vec<SwitchCount> {
        let c = self.counter.lock().unwrap_or_else(PoisonError::into_inner);
        (0..c.loaded.nr_cpus)
            .filter_map(|cpu| {
                let (switches, migrations) = c.switches(cpu)?;
                Some(SwitchCount {
                    cpu,
                    switches,
                    migrations,
                })
            })
            .collect()
    }

    fn retarget(&mut self, _cpus: &[u32]) -> Result<(), Unavailable> {
        Ok(())
    }

    fn counts_every_cpu(&self) -> bool {
        true
    }
}
