//! One verdict per CPU per interval: quiet, noisy because of named causes,
//! or unknown with the reason. The same measurement for every CPU; watched
//! CPUs are held to the strict limits, the others to the mild ones.

use serde::Serialize;

use super::config::Limits;
use super::{Context, Finding, Kind, Number, Severity, cpus_label, rate};
use crate::base::cpulist;
use crate::collect::interrupts::IrqKind;
use crate::model::interval::{CpuRates, Interval};
use crate::model::irq_rates::SourceRates;

/// Quiet, noisy or unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum VerdictState {
    /// Every reading known is within its limit.
    Quiet,
    /// At least one reading is over its limit.
    Noisy,
    /// Nothing that judges noise could be read.
    Unknown,
}

impl VerdictState {
    /// Names the state as the CSV and batch print it.
    pub fn label(self) -> &'static str {
        match self {
            VerdictState::Quiet => "quiet",
            VerdictState::Noisy => "noisy",
            VerdictState::Unknown => "unknown",
        }
    }
}

/// What kind of interruption a cause is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CauseClass {
    /// Numbered device interrupts.
    DeviceIrq,
    /// Inter-processor interrupts.
    Ipi,
    /// Softirqs.
    Softirq,
    /// Timer ticks beyond what the CPU's mode needs.
    Tick,
    /// Another task ran (traced).
    Intruder,
    /// Interrupts took time from the owner (traced).
    Stolen,
    /// Context switches.
    Csw,
    /// Migrations.
    Mig,
    /// Steal.
    Steal,
}

/// One reading over its limit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cause {
    /// Its kind.
    pub class: CauseClass,
    /// Who or what, short and without numbers (`IRQ virtio3-rx`, `CSW`).
    pub label: String,
    /// The reading.
    pub value: f64,
    /// The limit it passed.
    pub limit: f64,
    /// The unit of both (`/s`, `%`).
    pub unit: &'static str,
}

impl Cause {
    /// The cause with its reading: `IRQ virtio3-rx 402/s`, `steal 3.1 %`.
    pub fn text(&self) -> String {
        match self.unit {
            "%" => format!("{} {:.1} %", self.label, self.value),
            u => format!("{} {}{u}", self.label, rate(self.value)),
        }
    }
}

/// One CPU's verdict over the interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CpuVerdict {
    /// The CPU.
    pub cpu: u32,
    /// Whether it was held to the strict limits.
    pub watched: bool,
    /// Quiet, noisy or unknown.
    pub state: VerdictState,
    /// The readings over their limits, worst (by reading over limit) first.
    pub causes: Vec<Cause>,
    /// Why the verdict is unknown.
    pub reason: Option<String>,
    /// Time `noisetop probe` ran on the CPU, ns, where it measured there
    /// (its wake-ups are not noise: the user asked for them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe_ns: Option<u64>,
}

impl CpuVerdict {
    /// One line: `quiet`, `noisy: IRQ eth0 402/s, CSW 1487/s`,
    /// `unknown: no interval yet`.
    pub fn text(&self) -> String {
        let probed = self.probe_ns.map_or_else(String::new, |ns| {
            format!(
                "; being probed ({})",
                crate::noise::traced::probe_ran_text(ns)
            )
        });
        let judged = match self.state {
            VerdictState::Quiet => "quiet".into(),
            VerdictState::Noisy => format!(
                "noisy: {}",
                self.causes
                    .iter()
                    .map(Cause::text)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            VerdictState::Unknown => format!(
                "unknown: {}",
                self.reason.as_deref().unwrap_or("no reading")
            ),
        };
        judged + &probed
    }
}

/// The top row of `rows` on the CPU at column `col` among those `keep`s.
pub(crate) fn top_source(
    rows: &[SourceRates],
    col: usize,
    keep: impl Fn(&SourceRates) -> bool,
) -> Option<(&SourceRates, f64)> {
    rows.iter()
        .filter(|s| keep(s))
        .filter_map(|s| Some((s, (*s.per_cpu.get(col)?)?)))
        .filter(|(_, v)| *v > 0.0)
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// The device name of an interrupt row: the last word of its description
/// (`IR-PCI-MSI 524288-edge nvme0q2` → `nvme0q2`), else its number.
pub(crate) fn irq_name<'a>(label: &'a str, desc: &'a str) -> &'a str {
    desc.split_whitespace().last().unwrap_or(label)
}

/// Whether a CPU's interrupt readings are known at all.
fn any_known(r: &CpuRates) -> bool {
    [
        r.dev_per_s,
        r.ipi_per_s,
        r.softirq_per_s,
        r.loc_per_s,
        r.csw_per_s,
        r.time.and_then(|t| t.steal),
    ]
    .iter()
    .any(Option::is_some)
}

/// Every CPU's verdict, in the interval's order.
pub fn verdicts(iv: &Interval, cx: &Context<'_>) -> Vec<CpuVerdict> {
    iv.cpus
        .iter()
        .enumerate()
        .map(|(col, r)| {
            let watched = cx.is_watched(r.cpu);
            let limits = if watched {
                &cx.config.watched
            } else {
                &cx.config.other
            };
            let (state, causes, reason) = if iv.dt_s <= 0.0 {
                (
                    VerdictState::Unknown,
                    Vec::new(),
                    Some("the interval has no length".to_string()),
                )
            } else if !any_known(r) && cx.trace.and_then(|t| t.cpu(r.cpu)).is_none() {
                (
                    VerdictState::Unknown,
                    Vec::new(),
                    Some("no interrupt, softirq, scheduler or steal counter for this CPU".into()),
                )
            } else {
                let mut causes = causes_of(iv, cx, col, r, limits);
                causes.sort_by(|a, b| {
                    let ra = a.value / a.limit.max(f64::MIN_POSITIVE);
                    let rb = b.value / b.limit.max(f64::MIN_POSITIVE);
                    rb.total_cmp(&ra).then(a.class.cmp(&b.class))
                });
                if !causes.is_empty() {
                    (VerdictState::Noisy, causes, None)
                } else if let Some(why) = unseen_reason(cx, r.cpu, limits) {
                    (VerdictState::Unknown, causes, Some(why))
                } else {
                    (VerdictState::Quiet, causes, None)
                }
            };
            CpuVerdict {
                cpu: r.cpu,
                watched,
                state,
                causes,
                reason,
                probe_ns: cx.trace.and_then(|t| t.probed(r.cpu)).map(|p| p.ns),
            }
        })
        .collect()
}

/// Why a traced CPU with no cause cannot be called quiet: the time no
/// count accounts for is more than another task may take.
fn unseen_reason(cx: &Context<'_>, cpu: u32, l: &Limits) -> Option<String> {
    let t = cx.trace?.cpu(cpu)?;
    let pct = t.pct(t.unknown_ns).filter(|p| *p > l.intruder_pct)?;
    let why = match t.kernel.as_ref().map_or(0, |k| k.untabled_slices) {
        0 => "counting began in it, before the CPU's first event".to_string(),
        n => format!("{n} slices of tasks past the table's 512"),
    };
    Some(format!(
        "who ran for {:.1} ms ({pct:.1} %) is not known: {why}",
        t.unknown_ns as f64 / 1e6
    ))
}

/// Adds a cause when `value` passes `limit`; the label (which may search
/// the interrupt tables) is made only then.
fn over(
    out: &mut Vec<Cause>,
    class: CauseClass,
    value: Option<f64>,
    limit: f64,
    unit: &'static str,
    label: impl FnOnce() -> String,
) {
    if let Some(v) = value.filter(|v| *v > limit) {
        out.push(Cause {
            class,
            label: label(),
            value: v,
            limit,
            unit,
        });
    }
}

fn causes_of(iv: &Interval, cx: &Context<'_>, col: usize, r: &CpuRates, l: &Limits) -> Vec<Cause> {
    let mut out = Vec::new();
    let o = &mut out;
    let traced = cx.trace.and_then(|t| t.cpu(r.cpu));
    if let Some(t) = traced {
        // a traced CPU is judged by the time others took from its owner,
        // which the counts below only stand in for; sampled figures know
        // no interrupt time, and the counts still judge that
        let top_task = t.intruders.first();
        over(
            o,
            CauseClass::Intruder,
            top_task.and(t.pct(t.intruder_ns())),
            l.intruder_pct,
            "%",
            || top_task.map_or_else(String::new, |i| format!("{}[{}]", i.task.comm, i.task.pid)),
        );
        let top_irq = t.stolen.first();
        over(
            o,
            CauseClass::Stolen,
            top_irq.and(t.pct(t.stolen_ns())),
            l.stolen_pct,
            "%",
            || top_irq.map_or_else(String::new, |x| format!("interrupts (most {})", x.name)),
        );
    }
    if traced.is_none_or(|t| t.sampled) {
        over(
            o,
            CauseClass::DeviceIrq,
            r.dev_per_s,
            l.device_irq_per_s,
            "/s",
            || {
                top_source(&iv.irqs, col, |s| s.kind == IrqKind::Device).map_or_else(
                    || "IRQ".to_string(),
                    |(s, _)| format!("IRQ {}", irq_name(&s.label, &s.desc)),
                )
            },
        );
        over(o, CauseClass::Ipi, r.ipi_per_s, l.ipi_per_s, "/s", || {
            top_source(&iv.irqs, col, |s| is_ipi(s.kind))
                .map_or_else(|| "IPI".to_string(), |(s, _)| format!("IPI {}", s.label))
        });
        over(
            o,
            CauseClass::Softirq,
            r.softirq_per_s,
            l.softirq_per_s,
            "/s",
            || {
                top_source(&iv.softirqs, col, |_| true).map_or_else(
                    || "softirq".to_string(),
                    |(s, _)| format!("softirq {}", s.label),
                )
            },
        );
        if let Some((limit, label)) = tick_limit(cx, r, l) {
            over(o, CauseClass::Tick, r.loc_per_s, limit, "/s", || {
                label.into()
            });
        }
        over(o, CauseClass::Csw, r.csw_per_s, l.csw_per_s, "/s", || {
            "CSW".into()
        });
        over(o, CauseClass::Mig, r.mig_per_s, l.mig_per_s, "/s", || {
            "MIG".into()
        });
    }
    // the hypervisor's time is no tracepoint's: steal judges both
    over(
        o,
        CauseClass::Steal,
        r.time.and_then(|t| t.steal),
        l.steal_pct,
        "%",
        || "steal".into(),
    );
    out
}

/// Whether an interrupt row counts as an inter-processor interrupt.
pub(crate) fn is_ipi(k: IrqKind) -> bool {
    matches!(
        k,
        IrqKind::Reschedule
            | IrqKind::FunctionCall
            | IrqKind::TlbShootdown
            | IrqKind::IrqWork
            | IrqKind::OtherIpi
    )
}

/// The tick limit of a CPU for its mode, and how to name the cause; `None`
/// where ticks are what the mode needs (a busy CPU with a periodic tick).
pub(crate) fn tick_limit(
    cx: &Context<'_>,
    r: &CpuRates,
    l: &Limits,
) -> Option<(f64, &'static str)> {
    let busy = r.busy_pct?;
    let nohz = cx
        .machine
        .sets
        .nohz_full
        .as_ref()
        .is_some_and(|s| s.contains(&r.cpu));
    if busy < l.idle_busy_pct {
        Some((l.idle_tick_per_s, "tick (idle)"))
    } else if nohz {
        Some((l.nohz_tick_per_s, "tick (nohz_full)"))
    } else {
        None
    }
}

/// The unwatched CPUs over the mild limits, as one informational finding.
pub fn noisy_cpus(verdicts: &[CpuVerdict]) -> Option<Finding> {
    const SHOWN: usize = 3;
    let noisy: Vec<&CpuVerdict> = verdicts
        .iter()
        .filter(|v| !v.watched && v.state == VerdictState::Noisy)
        .collect();
    if noisy.is_empty() {
        return None;
    }
    let cpus: Vec<u32> = noisy.iter().map(|v| v.cpu).collect();
    let quiet: Vec<u32> = verdicts
        .iter()
        .filter(|v| v.state == VerdictState::Quiet)
        .map(|v| v.cpu)
        .collect();
    let mut parts: Vec<String> = noisy
        .iter()
        .take(SHOWN)
        .map(|v| {
            let causes: Vec<String> = v.causes.iter().map(Cause::text).collect();
            format!("CPU {} {}", v.cpu, causes.join(", "))
        })
        .collect();
    if noisy.len() > SHOWN {
        parts.push(format!("{} more", noisy.len() - SHOWN));
    }
    let quiet_now = if quiet.is_empty() {
        "no CPU is quiet".to_string()
    } else {
        // the list is of CPUs: said so, or "quiet now: 1" reads as a count
        let cpus = if quiet.len() == 1 { "CPU" } else { "CPUs" };
        format!("quiet now: {cpus} {}", cpulist::format(&quiet))
    };
    let numbers = noisy
        .iter()
        .flat_map(|v| {
            v.causes.iter().map(move |c| {
                Number::new(
                    format!("cpu{}_{}", v.cpu, serde_json_name(c.class)),
                    c.value,
                )
            })
        })
        .collect();
    Some(Finding {
        evidence: format!(
            "{} over the mild limits: {}; {quiet_now}",
            cpus_label(&cpus),
            parts.join("; ")
        ),
        cpus,
        kind: Kind::NoisyCpus,
        severity: Severity::Info,
        label: "noisy".into(),
        numbers,
        fix: None,
    })
}

/// The class's id as in JSON (`device-irq`).
fn serde_json_name(c: CauseClass) -> &'static str {
    match c {
        CauseClass::DeviceIrq => "device_irq_per_s",
        CauseClass::Ipi => "ipi_per_s",
        CauseClass::Softirq => "softirq_per_s",
        CauseClass::Tick => "loc_per_s",
        CauseClass::Intruder => "intruder_pct",
        CauseClass::Stolen => "stolen_pct",
        CauseClass::Csw => "csw_per_s",
        CauseClass::Mig => "mig_per_s",
        CauseClass::Steal => "steal_pct",
    }
}
