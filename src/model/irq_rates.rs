//! Interrupt and softirq rates from two tables in one pass over the cells:
//! per source and CPU, and per CPU by class (timer, IPIs, devices…).
//!
//! One pass matters: /proc/interrupts on a 1152-CPU machine has 1.2 million
//! cells, and a pass per class and CPU would visit them dozens of times.

use serde::Serialize;

use crate::base::counter::{Width, delta, per_second};
use crate::collect::interrupts::{IrqKind, IrqRow, IrqTable};

/// One interrupt or softirq source over the interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SourceRates {
    /// Row label (`LOC`, `27`, `NET_RX`).
    pub label: String,
    /// Description (device name for numbered rows).
    pub desc: String,
    /// Class of the source.
    pub kind: IrqKind,
    /// Per CPU (in `Interval::cpus` order), per second.
    pub per_cpu: Vec<Option<f64>>,
    /// Sum over CPUs, per second.
    pub total: f64,
}

/// One CPU's interrupts per second, by class; `None` where no row of the
/// class had a value for the CPU in both tables.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ClassRates {
    /// Every row.
    pub all: Option<f64>,
    /// Local timer.
    pub loc: Option<f64>,
    /// Reschedule IPIs.
    pub res: Option<f64>,
    /// Function call IPIs.
    pub cal: Option<f64>,
    /// TLB shootdowns.
    pub tlb: Option<f64>,
    /// Every IPI class.
    pub ipi: Option<f64>,
    /// Numbered device interrupts.
    pub dev: Option<f64>,
    /// NMIs.
    pub nmi: Option<f64>,
}

/// One CPU's sums by row kind: the class sums are made from these once at
/// the end, so a cell costs one add however many classes its row is in.
#[derive(Debug, Clone, Copy, Default)]
struct KindSums {
    sum: [u64; KINDS],
    /// Bit per kind: some row of the kind had a cell for this CPU.
    any: u16,
    /// Bit per kind: some cell of the kind went backwards (unknown).
    unknown: u16,
}

const KINDS: usize = 9;

fn kind_index(kind: IrqKind) -> usize {
    match kind {
        IrqKind::Device => 0,
        IrqKind::LocalTimer => 1,
        IrqKind::Reschedule => 2,
        IrqKind::FunctionCall => 3,
        IrqKind::TlbShootdown => 4,
        IrqKind::IrqWork => 5,
        IrqKind::OtherIpi => 6,
        IrqKind::Nmi => 7,
        IrqKind::Other => 8,
    }
}

/// Kinds in each class, as bits of `kind_index`.
const ALL: u16 = 0x1FF;
const LOC: u16 = 1 << 1;
const RES: u16 = 1 << 2;
const CAL: u16 = 1 << 3;
const TLB: u16 = 1 << 4;
const IPI: u16 = (1 << 2) | (1 << 3) | (1 << 4) | (1 << 5) | (1 << 6);
const DEV: u16 = 1 << 0;
const NMI: u16 = 1 << 7;

impl KindSums {
    /// A class's rate: unknown when no row of it had a cell for the CPU,
    /// or when one of its cells went backwards (not a low count).
    fn rate(&self, class: u16, dt_s: f64) -> Option<f64> {
        if self.any & class == 0 || self.unknown & class != 0 {
            return None;
        }
        let sum = (0..KINDS)
            .filter(|k| class & (1 << k) != 0)
            .fold(0u64, |acc, k| acc.saturating_add(self.sum[k]));
        per_second(sum, dt_s)
    }
}

/// Rates of both kinds from one table pair.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TableRates {
    /// Per source, hottest first.
    pub sources: Vec<SourceRates>,
    /// Per CPU in `order`, by class.
    pub per_cpu: Vec<ClassRates>,
}

/// The most interrupts one source can raise on one CPU per second; a
/// "wrap" implying more was a counter that went backwards.
pub const MAX_IRQ_RATE: f64 = 1e7;

/// How much one cell advanced: interrupt counts are `unsigned int` in
/// older kernels, so values that fit 32 bits wrap there and wider values
/// are 64-bit; a wrap implying more than `MAX_IRQ_RATE` was a reset.
#[inline]
fn cell_delta(va: u64, vb: u64, dt_s: f64) -> Option<u64> {
    if vb >= va {
        return Some(vb - va);
    }
    let width = if u32::try_from(va).is_ok() {
        Width::Bits(32)
    } else {
        Width::Bits64
    };
    delta(va, vb, width).filter(|&d| d as f64 / dt_s <= MAX_IRQ_RATE)
}

/// Finds the row of `a` with the label of `row`, trying position `hint` first.
fn matching_row<'a>(a: &'a IrqTable, row: &IrqRow, hint: usize) -> Option<&'a IrqRow> {
    match a.rows.get(hint) {
        Some(r) if r.label == row.label => Some(r),
        _ => a.rows.iter().find(|r| r.label == row.label),
    }
}

/// Computes every rate from `a` (before) to `b` (after) for the CPUs in
/// `order`; rows are matched by label, CPUs by id, never by position.
pub fn rates(a: &IrqTable, b: &IrqTable, order: &[u32], dt_s: f64) -> TableRates {
    if dt_s.is_nan() || dt_s <= 0.0 {
        return TableRates {
            sources: Vec::new(),
            per_cpu: vec![ClassRates::default(); order.len()],
        };
    }
    // The usual case: both headers list exactly the CPUs of `order`, so
    // cell k of every row is CPU k and no column is looked up.
    let same_columns = a.cpus == order && b.cpus == order;
    let cols: Vec<(Option<usize>, Option<usize>)> = if same_columns {
        Vec::new()
    } else {
        order.iter().map(|&c| (a.column(c), b.column(c))).collect()
    };
    let mut acc = vec![KindSums::default(); order.len()];
    let mut sources = Vec::with_capacity(b.rows.len());
    for (i, row) in b.rows.iter().enumerate() {
        let prev = matching_row(a, row, i);
        let kind = kind_index(row.kind);
        let bit = 1u16 << kind;
        let mut total = 0.0;
        let mut per_cpu = Vec::with_capacity(order.len());
        let mut cell = |acc: &mut KindSums, va: u64, vb: u64| {
            acc.any |= bit;
            if let Some(d) = cell_delta(va, vb, dt_s) {
                acc.sum[kind] = acc.sum[kind].saturating_add(d);
                let r = d as f64 / dt_s;
                total += r;
                Some(r)
            } else {
                acc.unknown |= bit;
                None
            }
        };
        match prev {
            None => per_cpu.resize(order.len(), None),
            // cell k is CPU k in both rows: one pass over the three arrays
            Some(p) if same_columns => {
                let pairs = p.counts.iter().zip(&row.counts).zip(acc.iter_mut());
                per_cpu.extend(pairs.map(|((&va, &vb), acc)| cell(acc, va, vb)));
                per_cpu.resize(order.len(), None);
            }
            Some(p) => {
                for (acc, &(ca, cb)) in acc.iter_mut().zip(&cols) {
                    let va = ca.and_then(|c| p.counts.get(c));
                    let vb = cb.and_then(|c| row.counts.get(c));
                    per_cpu.push(match (va, vb) {
                        (Some(&va), Some(&vb)) => cell(acc, va, vb),
                        _ => None,
                    });
                }
            }
        }
        sources.push(SourceRates {
            label: row.label.clone(),
            desc: row.desc.clone(),
            kind: row.kind,
            per_cpu,
            total,
        });
    }
    sources.sort_by(|x, y| y.total.total_cmp(&x.total));
    let per_cpu = acc
        .iter()
        .map(|a| ClassRates {
            all: a.rate(ALL, dt_s),
            loc: a.rate(LOC, dt_s),
            res: a.rate(RES, dt_s),
            cal: a.rate(CAL, dt_s),
            tlb: a.rate(TLB, dt_s),
            ipi: a.rate(IPI, dt_s),
            dev: a.rate(DEV, dt_s),
            nmi: a.rate(NMI, dt_s),
        })
        .collect();
    TableRates { sources, per_cpu }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(label: &str, kind: IrqKind, counts: &[u64]) -> IrqRow {
        IrqRow {
            label: label.into(),
            desc: String::new(),
            kind,
            counts: counts.to_vec(),
        }
    }

    fn table(cpus: &[u32], rows: Vec<IrqRow>) -> IrqTable {
        IrqTable {
            cpus: cpus.to_vec(),
            rows,
        }
    }

    #[test]
    fn classes_sum_their_rows_per_cpu() {
        let a = table(
            &[0, 1],
            vec![
                row("LOC", IrqKind::LocalTimer, &[100, 200]),
                row("RES", IrqKind::Reschedule, &[10, 20]),
                row("CAL", IrqKind::FunctionCall, &[1, 2]),
                row("27", IrqKind::Device, &[5, 0]),
            ],
        );
        let b = table(
            &[0, 1],
            vec![
                row("LOC", IrqKind::LocalTimer, &[350, 300]),
                row("RES", IrqKind::Reschedule, &[14, 20]),
                row("CAL", IrqKind::FunctionCall, &[3, 2]),
                row("27", IrqKind::Device, &[1005, 0]),
            ],
        );
        let r = rates(&a, &b, &[0, 1], 0.5);
        // cpu0 over 0.5 s: LOC 250, RES 4, CAL 2, device 1000 → ×2 per second
        assert_eq!(r.per_cpu[0].loc, Some(500.0));
        assert_eq!(r.per_cpu[0].res, Some(8.0));
        assert_eq!(r.per_cpu[0].ipi, Some(12.0));
        assert_eq!(r.per_cpu[0].dev, Some(2000.0));
        assert_eq!(r.per_cpu[0].all, Some(2512.0));
        assert_eq!(r.per_cpu[1].all, Some(200.0));
        assert_eq!(r.per_cpu[0].tlb, None, "no TLB row: unknown, not 0");
        assert_eq!(r.sources[0].label, "27", "hottest first");
        assert!((r.sources[0].total - 2000.0).abs() < 1e-9);
    }

    #[test]
    fn columns_are_matched_by_cpu_id_not_position() {
        // CPU 1 went offline: the second table has columns 0 and 2 only
        let a = table(
            &[0, 1, 2],
            vec![row("LOC", IrqKind::LocalTimer, &[10, 20, 30])],
        );
        let b = table(&[0, 2], vec![row("LOC", IrqKind::LocalTimer, &[11, 33])]);
        let r = rates(&a, &b, &[0, 2], 1.0);
        assert_eq!(r.per_cpu[0].loc, Some(1.0));
        assert_eq!(r.per_cpu[1].loc, Some(3.0));
    }

    #[test]
    fn short_rows_and_new_rows_are_unknown_cells() {
        let a = table(&[0, 1], vec![row("ERR", IrqKind::Other, &[7])]);
        let b = table(
            &[0, 1],
            vec![
                row("ERR", IrqKind::Other, &[9]),
                row("99", IrqKind::Device, &[1, 1]),
            ],
        );
        let r = rates(&a, &b, &[0, 1], 1.0);
        let err = r.sources.iter().find(|s| s.label == "ERR").unwrap();
        assert_eq!(err.per_cpu, [Some(2.0), None]);
        let new = r.sources.iter().find(|s| s.label == "99").unwrap();
        assert_eq!(new.per_cpu, [None, None]);
        assert_eq!(r.per_cpu[1].all, None);
        assert_eq!(r.per_cpu[0].dev, None);
    }

    #[test]
    fn thirty_two_bit_wrap_and_64_bit_reset() {
        let a = table(
            &[0, 1],
            vec![row(
                "LOC",
                IrqKind::LocalTimer,
                &[u64::from(u32::MAX) - 1, 1 << 40],
            )],
        );
        let b = table(&[0, 1], vec![row("LOC", IrqKind::LocalTimer, &[3, 5])]);
        let r = rates(&a, &b, &[0, 1], 1.0);
        assert_eq!(r.per_cpu[0].loc, Some(5.0), "wrapped at 2^32: 2 + 3");
        // a 64-bit counter that went backwards: unknown, not a low rate
        assert_eq!(r.sources[0].per_cpu[1], None);
        assert_eq!(r.per_cpu[1].loc, None);
        assert_eq!(r.per_cpu[1].all, None);
    }

    #[test]
    fn a_backwards_count_far_from_the_top_is_not_a_wrap() {
        // 1000 → 990 would be a wrap of 2^32 − 10 interrupts in one second
        let a = table(&[0], vec![row("LOC", IrqKind::LocalTimer, &[1000])]);
        let b = table(&[0], vec![row("LOC", IrqKind::LocalTimer, &[990])]);
        let r = rates(&a, &b, &[0], 1.0);
        assert_eq!(r.per_cpu[0].loc, None);
        assert_eq!(r.sources[0].per_cpu[0], None);
    }

    #[test]
    fn zero_interval_gives_no_rates() {
        let a = table(&[0], vec![row("LOC", IrqKind::LocalTimer, &[1])]);
        let r = rates(&a, &a, &[0], 0.0);
        assert!(r.sources.is_empty());
        assert_eq!(r.per_cpu, [ClassRates::default()]);
    }
}
