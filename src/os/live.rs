//! The live machine's hardware: the clock, per-CPU perf groups and
//! `/dev/cpu/N/msr`, probed once at start.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::base::Vendor;
use crate::os::fs::Roots;
use crate::os::hw::{Hardware, HwTargets, Probe, Stamp};
use crate::os::msr::{DevMsr, MsrAccess};
use crate::os::perf::{PerfCounts, PerfEvent, PerfSet};

/// Which rungs the user allows.
#[derive(Debug, Clone, Copy, Default)]
pub struct LiveOptions {
    /// Skip perf counters (`--no-perf`).
    pub no_perf: bool,
    /// Skip `/dev/cpu/N/msr` (`--no-msr`).
    pub no_msr: bool,
    /// Every CPU's switches and migrations are counted in the kernel by
    /// noisetop's own programs: perf's software counters of them are not
    /// opened. Reading one on another CPU is a function-call IPI to that
    /// CPU, every interval, and opening them patches the kernel's text.
    pub switches_counted: bool,
}

/// Clock, perf and MSR access on the running machine.
pub struct LiveHw {
    perf: Option<PerfSet>,
    /// The last `perf` read.
    counts: Vec<PerfCounts>,
    msr: Option<DevMsr>,
    probe: Probe,
}

impl LiveHw {
    /// Opens perf groups on the machine's online CPUs and probes the MSRs.
    pub fn open(m: &HwTargets, roots: &Roots, opts: LiveOptions) -> LiveHw {
        let mut probe = Probe::default();
        let perf = if opts.no_perf {
            probe
                .perf_failed
                .push(("*".into(), "perf disabled by --no-perf".into()));
            None
        } else {
            let counted: &[PerfEvent] = if opts.switches_counted {
                &[PerfEvent::ContextSwitches, PerfEvent::Migrations]
            } else {
                &[]
            };
            let (set, failed) = PerfSet::open_but(&m.online, &m.leaders, &roots.sysfs, counted);
            probe.perf_opened = set
                .opened()
                .into_iter()
                .map(|(c, e)| (c, e.key()))
                .collect();
            probe.perf_failed = failed.into_iter().map(|(e, why)| (e.key(), why)).collect();
            Some(set)
        };
        let mut msr = None;
        probe.msr = if opts.no_msr {
            Err("MSR reads disabled by --no-msr".into())
        } else if !matches!(m.vendor, Vendor::Intel | Vendor::Amd | Vendor::Hygon) {
            Err("MSRs exist on x86 only".into())
        } else {
            let mut dev = DevMsr::new(&roots.dev);
            match m.online.first().map(|&c| dev.probe(c)) {
                Some(Ok(())) => {
                    probe.msr_regs = probe_regs(&mut dev, m);
                    msr = Some(dev);
                    Ok(())
                }
                Some(Err(e)) => Err(e.to_string()),
                None => Err("no online CPU".into()),
            }
        };
        LiveHw {
            perf,
            counts: Vec::new(),
            msr,
            probe,
        }
    }
}

/// Reads each candidate register once on the first CPU and keeps those the
/// CPU has (the msr driver answers EIO for the others).
fn probe_regs(dev: &mut DevMsr, t: &HwTargets) -> Vec<u32> {
    let Some(&cpu) = t.online.first() else {
        return Vec::new();
    };
    t.msr_candidates
        .iter()
        .copied()
        .filter(|&r| dev.read(cpu, r).is_ok())
        .collect()
}

impl Hardware for LiveHw {
    fn now(&mut self) -> Stamp {
        let wall_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        Stamp {
            mono_ns: crate::os::sys::monotonic_ns(),
            wall_ns,
        }
    }

    fn perf(&mut self) -> &[PerfCounts] {
        self.counts = self.perf.as_mut().map(PerfSet::read).unwrap_or_default();
        &self.counts
    }

    fn msr_read(&mut self, cpu: u32, reg: u32) -> Option<std::io::Result<u64>> {
        Some(self.msr.as_mut()?.read(cpu, reg))
    }

    fn probe(&self) -> &Probe {
        &self.probe
    }

    fn energy_scale(&self, event: PerfEvent) -> Option<f64> {
        self.perf.as_ref()?.energy_scale(event)
    }

    fn set_hands_off(&mut self, cpus: &[u32]) -> bool {
        if let Some(p) = self.perf.as_mut() {
            p.set_hands_off(cpus);
        }
        true
    }
}
