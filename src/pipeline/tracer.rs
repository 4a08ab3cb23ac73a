//! The tracer as the driver runs it: the rings of `source::tracer` hand
//! up what each watched CPU wrote, and this decodes it and feeds the
//! accounting of `trace` (who ran, what interrupted), window by window.

use std::path::{Path, PathBuf};

use crate::source::tracer::{RawCpu, TraceRings, What};
use crate::sys::monotonic_ns;
use crate::trace::account::{CpuAccount, TraceSession, TraceWindow};
use crate::trace::decode::{Decoded, Decoder, Event, RawSample};

/// Traces some CPUs: their rings, and the accounting of each.
pub struct Tracer {
    rings: TraceRings,
    accounts: Vec<CpuAccount>,
    session: TraceSession,
    proc_root: PathBuf,
}

impl Tracer {
    /// Opens the tracepoints of `cpus` (see [`TraceRings::open`]).
    pub fn open(sysfs: &Path, cpus: &[u32]) -> Result<Tracer, String> {
        let rings = TraceRings::open(sysfs, cpus)?;
        // where the tick may stop under a running task (see `CpuAccount`)
        let nohz_full = std::fs::read_to_string(sysfs.join("devices/system/cpu/nohz_full"))
            .ok()
            .and_then(|l| crate::base::cpulist::parse(l.trim()).ok())
            .unwrap_or_default();
        let start = monotonic_ns();
        let accounts = cpus
            .iter()
            .map(|&cpu| {
                let mut a = CpuAccount::new(cpu, start);
                a.set_tick_stops(nohz_full.contains(&cpu));
                a
            })
            .collect();
        Ok(Tracer {
            rings,
            accounts,
            session: TraceSession::new(),
            proc_root: PathBuf::from("/proc"),
        })
    }

    /// What could not be traced and was left out, one line each.
    pub fn notes(&self) -> &[String] {
        self.rings.notes()
    }

    /// The traced CPUs.
    pub fn cpus(&self) -> &[u32] {
        self.rings.cpus()
    }

    /// Names the owner of `cpu` (thread group or thread ids); empty: the
    /// task that ran longest in each window.
    pub fn set_owner(&mut self, cpu: u32, pids: Vec<u32>) {
        if let Some(i) = self.rings.cpus().iter().position(|&c| c == cpu) {
            self.accounts[i].set_owner(pids);
        }
    }

    /// The session so far (every drained window added up).
    pub fn session(&self) -> TraceWindow {
        self.session.totals()
    }

    /// Reads everything written since the last drain and accounts it up to now.
    pub fn drain(&mut self) -> TraceWindow {
        self.drain_until(monotonic_ns())
    }

    /// Like [`Self::drain`], with the window ending at `now`
    /// (`CLOCK_MONOTONIC` ns, not in the future): a caller that reads the
    /// kernel's own counters just before and after taking `now` holds the
    /// window to them exactly, however long the reading takes.
    pub fn drain_until(&mut self, now: u64) -> TraceWindow {
        let mut out = TraceWindow::default();
        let raw = self.rings.take_until(now);
        for (held, account) in raw.iter().zip(&mut self.accounts) {
            feed(account, self.rings.decoder(), held);
            let mut cpu = account.flush(now);
            fill_from_proc(&self.proc_root, &mut cpu);
            out.lost += cpu.lost;
            out.cpus.push(cpu);
        }
        self.session.add(&out);
        // a child the owner forked on one CPU may run on another watched one
        let mut owners: Vec<u32> = Vec::new();
        for a in &self.accounts {
            for &p in a.owners() {
                if !owners.contains(&p) {
                    owners.push(p);
                }
            }
        }
        if !owners.is_empty() {
            for a in &mut self.accounts {
                if a.owners().len() != owners.len() {
                    a.set_owner(owners.clone());
                }
            }
        }
        out
    }
}

/// Decodes one CPU's records and accounts them.
fn feed(account: &mut CpuAccount, decoder: &Decoder, held: &RawCpu) {
    account.add_lost(held.lost);
    account.add_unmatched(held.unmatched);
    account.add_records(held.read);
    for e in &held.entries {
        let event = match e.what {
            What::Raw { start, len } => decoder.decode(&RawSample {
                time: e.time,
                cpu: held.cpu,
                pid: e.pid,
                tid: e.tid,
                raw: held.payload(start, len),
            }),
            What::SwitchIn { prev_tid } => Ok(Decoded {
                time: e.time,
                cpu: held.cpu,
                pid: e.pid,
                tid: e.tid,
                event: Event::SwitchIn { prev_tid },
            }),
        };
        match event {
            Ok(ev) => account.event(&ev),
            Err(_) => account.add_unmatched(1),
        }
    }
}

/// Fills the thread group and name of tasks no event named, from /proc.
fn fill_from_proc(proc: &Path, cpu: &mut crate::trace::CpuTrace) {
    let fix = |t: &mut crate::trace::TaskId| {
        if t.pid.is_none() || t.comm.is_none() {
            let (tgid, comm) = crate::trace::procinfo::ids(proc, t.tid);
            t.pid = t.pid.or(tgid);
            t.comm = t.comm.take().or(comm);
        }
    };
    for t in &mut cpu.tasks {
        fix(&mut t.task);
    }
    for s in &mut cpu.sources {
        if let Some(t) = s.task.as_mut() {
            fix(t);
            if s.name.starts_with("tid ")
                && let Some(c) = &t.comm
            {
                s.name.clone_from(c);
            }
        }
    }
    if let Some(o) = cpu.owner.as_mut() {
        fix(o);
    }
}
