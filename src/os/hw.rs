//! The vocabulary of the hardware side of a sample, shared by the live
//! machine and a capture: the clock stamp, what the probes found, the
//! `Hardware` port the sampler reads through, and the CPUs and registers
//! the live side opens (decided above, handed down).

use serde::{Deserialize, Serialize};

use crate::base::Vendor;
use crate::os::perf::{PerfCounts, PerfEvent};

/// When a snapshot was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
pub struct Stamp {
    /// `CLOCK_MONOTONIC` in nanoseconds: the base of every rate.
    pub mono_ns: u64,
    /// Wall-clock time in nanoseconds since the Unix epoch, for display.
    pub wall_ns: u64,
}

/// What the perf and MSR probes found when the sampler started; stored in
/// captures so a replay walks the same ladder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// (cpu, event) pairs that opened.
    pub perf_opened: Vec<(u32, String)>,
    /// Events that did not open, with the reason.
    pub perf_failed: Vec<(String, String)>,
    /// Whether `/dev/cpu/N/msr` can be read, or why not.
    pub msr: Result<(), String>,
    /// Registers that read without error on the first CPU.
    pub msr_regs: Vec<u32>,
}

impl Default for Probe {
    fn default() -> Self {
        Probe {
            perf_opened: Vec::new(),
            perf_failed: Vec::new(),
            msr: Err("MSRs not probed".into()),
            msr_regs: Vec::new(),
        }
    }
}

impl Probe {
    /// Tells whether `event` opened on every CPU in `cpus`.
    pub fn perf_has(&self, event: PerfEvent, cpus: &[u32]) -> bool {
        let name = event.key();
        !cpus.is_empty()
            && cpus.iter().all(|c| {
                self.perf_opened
                    .iter()
                    .any(|(pc, pe)| pc == c && *pe == name)
            })
    }

    /// Tells whether `event` opened on any CPU.
    pub fn perf_any(&self, event: PerfEvent) -> bool {
        let name = event.key();
        self.perf_opened.iter().any(|(_, pe)| *pe == name)
    }

    /// Returns the reason `event` did not open.
    pub fn perf_reason(&self, event: PerfEvent) -> Option<&str> {
        let name = event.key();
        self.perf_failed
            .iter()
            .find(|(e, _)| *e == name || e == "*")
            .map(|(_, r)| r.as_str())
    }

    /// Tells whether a register read on the first CPU at start.
    pub fn msr_has(&self, reg: u32) -> bool {
        self.msr.is_ok() && self.msr_regs.contains(&reg)
    }
}

/// What gives the sampler its clock, perf counts and MSRs.
pub trait Hardware {
    /// Reads the clocks.
    fn now(&mut self) -> Stamp;
    /// Reads every perf group once; the counts stand until the next call.
    fn perf(&mut self) -> &[PerfCounts];
    /// Reads one MSR; `None` when this hardware has no MSR access at all.
    fn msr_read(&mut self, cpu: u32, reg: u32) -> Option<std::io::Result<u64>>;
    /// Returns what the probes found at start.
    fn probe(&self) -> &Probe;
    /// Returns joules per count of a perf energy event.
    fn energy_scale(&self, event: PerfEvent) -> Option<f64>;
    /// Never reads these CPUs' counters from now on (reading a counter of
    /// another CPU interrupts it); returns whether that changes anything
    /// (a capture's tables interrupt nobody).
    fn set_hands_off(&mut self, cpus: &[u32]) -> bool {
        let _ = cpus;
        false
    }
}

/// Any hardware chosen at run time (live, a capture instant, a foreign tree).
impl<T: Hardware + ?Sized> Hardware for Box<T> {
    fn now(&mut self) -> Stamp {
        (**self).now()
    }
    fn perf(&mut self) -> &[PerfCounts] {
        (**self).perf()
    }
    fn msr_read(&mut self, cpu: u32, reg: u32) -> Option<std::io::Result<u64>> {
        (**self).msr_read(cpu, reg)
    }
    fn probe(&self) -> &Probe {
        (**self).probe()
    }
    fn energy_scale(&self, event: PerfEvent) -> Option<f64> {
        (**self).energy_scale(event)
    }
    fn set_hands_off(&mut self, cpus: &[u32]) -> bool {
        (**self).set_hands_off(cpus)
    }
}

/// What the live hardware opens: decided from the machine facts above this
/// floor and handed down, so `source` needs nothing from them.
#[derive(Debug, Clone)]
pub struct HwTargets {
    /// Online CPUs: one perf group each.
    pub online: Vec<u32>,
    /// The first CPU of each package: package-wide perf events open there.
    pub leaders: Vec<u32>,
    /// MSRs exist on x86 only.
    pub vendor: Vendor,
    /// Registers to try on the first CPU; those that read are kept.
    pub msr_candidates: Vec<u32>,
}
