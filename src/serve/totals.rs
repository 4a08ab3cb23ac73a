//! The kernel's own counters, taken from each snapshot on the sampler's
//! tick (a scrape never reads the kernel): per CPU, the /proc/stat times,
//! the /proc/interrupts column summed by kind in one pass over the cells,
//! /proc/softirqs, the perf software counts, cpuidle and throttle counts.
//! Exported as they are, they stay counters across noisetop's restarts.
//! Per-CPU files read in rounds keep their last value until their next read.

use crate::base::cpu_map::CpuMap;
use crate::collect::cpuidle::IdleCounters;
use crate::collect::interrupts::{IrqKind, IrqTable};
use crate::collect::stat::CpuTimes;
use crate::model::snapshot::Snapshot;

/// Interrupt kinds in the order of [`KIND_LABELS`].
pub const KINDS: [IrqKind; 9] = [
    IrqKind::LocalTimer,
    IrqKind::Reschedule,
    IrqKind::FunctionCall,
    IrqKind::TlbShootdown,
    IrqKind::Device,
    IrqKind::IrqWork,
    IrqKind::OtherIpi,
    IrqKind::Nmi,
    IrqKind::Other,
];

/// The `kind` label of each of [`KINDS`].
pub const KIND_LABELS: [&str; 9] = [
    "timer",
    "reschedule",
    "function_call",
    "tlb_shootdown",
    "device",
    "irq_work",
    "other_ipi",
    "nmi",
    "other",
];

fn kind_slot(k: IrqKind) -> usize {
    KINDS
        .iter()
        .position(|&x| x == k)
        .unwrap_or(KINDS.len() - 1)
}

/// One numbered interrupt row's count on one CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceCount {
    /// The IRQ number (`27`).
    pub irq: String,
    /// The device names the row ends with.
    pub device: String,
    /// Interrupts since boot.
    pub count: u64,
}

/// The raw counters of one CPU as last read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuTotals {
    /// /proc/stat, ticks.
    pub times: Option<CpuTimes>,
    /// Every /proc/interrupts row of its column.
    pub irq_all: Option<u64>,
    /// By kind, in [`KINDS`] order; `None` where no row of the kind has a cell.
    pub irq_kind: [Option<u64>; 9],
    /// /proc/softirqs per type, in [`Totals::softirq_types`] order.
    pub softirqs: Vec<Option<u64>>,
    /// perf context switches.
    pub csw: Option<u64>,
    /// perf migrations.
    pub mig: Option<u64>,
    /// cpuidle counters in the order of the machine's states.
    pub idle: Option<Vec<IdleCounters>>,
    /// Core thermal throttle count.
    pub throttle: Option<u64>,
    /// Package thermal throttle count as this CPU's files say.
    pub pkg_throttle: Option<u64>,
    /// SMI count.
    pub smi: Option<u64>,
    /// Numbered interrupt rows with a count on this CPU (detailed CPUs only).
    pub devices: Vec<DeviceCount>,
    /// The counters of the catalogue's figures with a family of their own,
    /// in [`super::catalog::figure_families`] order.
    pub figures: Vec<Option<f64>>,
}

/// Every CPU's raw counters as of the latest snapshot.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Totals {
    /// Per online CPU.
    pub cpus: CpuMap<CpuTotals>,
    /// The /proc/softirqs row labels.
    pub softirq_types: Vec<String>,
}

impl Totals {
    /// Takes the counters of a snapshot; `detail` are the CPUs whose
    /// per-device rows are kept.
    pub fn observe(&mut self, s: &Snapshot, detail: &[u32]) {
        let families = super::catalog::figure_families();
        let mut online = s.online.clone();
        online.sort_unstable();
        self.cpus.retain(|c, _| online.binary_search(&c).is_ok());
        for &cpu in &online {
            let t = self.cpus.get_or_default(cpu);
            t.times = s
                .stat
                .as_ref()
                .ok()
                .and_then(|st| st.cpus.get(&cpu).copied());
            t.csw = s.csw.get(&cpu).copied();
            t.mig = s.migrations.get(&cpu).copied();
            t.smi = s.hw.get(&cpu).and_then(|h| h.smi);
            t.figures.clear();
            t.figures
                .extend(families.iter().map(|(_, total)| total(s, cpu)));
            t.irq_all = None;
            t.irq_kind = [None; 9];
            t.devices.clear();
            if let Some(f) = s.files.get(&cpu) {
                // files read in rounds: a CPU not read this time keeps its last
                if let Some(idle) = &f.idle {
                    t.idle = Some(idle.clone());
                }
                if let Some(th) = &f.throttle {
                    t.throttle = th.core;
                    t.pkg_throttle = th.package;
                }
            }
        }
        if let Ok(table) = &s.interrupts {
            self.take_interrupts(table, detail);
        }
        if let Ok(table) = &s.softirqs {
            self.take_softirqs(table);
        } else {
            self.softirq_types.clear();
            self.cpus.retain(|_, t| {
                t.softirqs.clear();
                true
            });
        }
    }

    /// One pass over the cells: every cell adds to its column's kind sum.
    fn take_interrupts(&mut self, table: &IrqTable, detail: &[u32]) {
        let n = table.cpus.len();
        let mut sums = vec![[0u64; 9]; n];
        let mut seen = vec![0u16; n];
        for row in &table.rows {
            let k = kind_slot(row.kind);
            for (col, &v) in row.counts.iter().enumerate().take(n) {
                sums[col][k] = sums[col][k].wrapping_add(v);
                seen[col] |= 1 << k;
            }
        }
        for (col, &cpu) in table.cpus.iter().enumerate() {
            let Some(t) = self.cpus.get_mut(&cpu) else {
                continue;
            };
            let mut all = 0u64;
            for (k, (&sum, slot)) in sums[col].iter().zip(&mut t.irq_kind).enumerate() {
                if seen[col] & (1 << k) != 0 {
                    *slot = Some(sum);
                    all = all.wrapping_add(sum);
                }
            }
            t.irq_all = (seen[col] != 0).then_some(all);
        }
        for &cpu in detail {
            let (Some(col), Some(t)) = (table.column(cpu), self.cpus.get_mut(&cpu)) else {
                continue;
            };
            for row in table.rows.iter().filter(|r| r.kind == IrqKind::Device) {
                if let Some(&count) = row.counts.get(col).filter(|&&c| c > 0) {
                    t.devices.push(DeviceCount {
                        irq: row.label.clone(),
                        device: row.desc.clone(),
                        count,
                    });
                }
            }
        }
    }

    fn take_softirqs(&mut self, table: &IrqTable) {
        if self.softirq_types.len() != table.rows.len()
            || self
                .softirq_types
                .iter()
                .zip(&table.rows)
                .any(|(a, r)| *a != r.label)
        {
            self.softirq_types = table.rows.iter().map(|r| r.label.clone()).collect();
        }
        self.cpus.retain(|_, t| {
            t.softirqs.clear();
            true
        });
        for (col, &cpu) in table.cpus.iter().enumerate() {
            if let Some(t) = self.cpus.get_mut(&cpu) {
                t.softirqs
                    .extend(table.rows.iter().map(|r| r.counts.get(col).copied()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::interrupts::parse_interrupts;

    #[test]
    fn one_pass_sums_each_column_by_kind() {
        let table = parse_interrupts(
            "           CPU0       CPU1\n\
              0:         10          0   IO-APIC   2-edge      timer\n\
             41:          5        700   PCI-MSI 512000-edge      virtio3-rx\n\
            LOC:        250        260   Local timer interrupts\n\
            RES:          3          4   Rescheduling interrupts\n\
            ERR:          9\n",
        )
        .unwrap();
        let mut t = Totals::default();
        t.cpus.insert(0, CpuTotals::default());
        t.cpus.insert(1, CpuTotals::default());
        t.take_interrupts(&table, &[1]);
        let c0 = t.cpus.get(&0).unwrap();
        let c1 = t.cpus.get(&1).unwrap();
        assert_eq!(c0.irq_all, Some(10 + 5 + 250 + 3 + 9));
        assert_eq!(c1.irq_all, Some(700 + 260 + 4));
        assert_eq!(c1.irq_kind[0], Some(260), "timer");
        assert_eq!(c1.irq_kind[4], Some(700), "device");
        assert_eq!(c1.irq_kind[8], None, "ERR has no CPU1 cell");
        assert_eq!(c0.irq_kind[8], Some(9));
        assert!(c0.devices.is_empty(), "CPU0 is not detailed");
        assert_eq!(
            c1.devices,
            vec![DeviceCount {
                irq: "41".into(),
                device: "PCI-MSI 512000-edge virtio3-rx".into(),
                count: 700
            }],
            "the IRQ 0 row never fired on CPU1: left out"
        );
    }
}
