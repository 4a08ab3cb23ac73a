//! Interruptions of a watched CPU by the kernel on others' behalf: device
//! interrupts, inter-processor interrupts, softirqs and timer ticks.

use std::fmt::Write as _;

use super::verdict::{CpuVerdict, irq_name, is_ipi, tick_limit, top_source};
use super::{CauseClass, Context, Finding, Kind, Number, rate, severity_of};
use crate::base::cpulist;
use crate::collect::interrupts::IrqKind;
use crate::model::interval::{CpuRates, Interval};
use crate::model::machine::Machine;

/// The findings of one watched CPU's interrupt causes.
pub fn on_watched(iv: &Interval, cx: &Context<'_>, r: &CpuRates, v: &CpuVerdict) -> Vec<Finding> {
    let Some(col) = iv.cpus.iter().position(|c| c.cpu == r.cpu) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for c in &v.causes {
        let f = match c.class {
            CauseClass::DeviceIrq => device_irq(iv, cx, col, r, c.limit),
            CauseClass::Ipi => ipis(iv, cx, col, r, c.limit),
            CauseClass::Softirq => softirqs(iv, cx, col, r, c.limit),
            CauseClass::Tick => ticks(cx, r),
            CauseClass::Stolen => stolen(cx, r.cpu, c.limit),
            _ => None,
        };
        out.extend(f);
    }
    out
}

/// `isolcpus=… nohz_full=… rcu_nocbs=…` for one CPU, the boot-time cure for
/// what the kernel itself runs there; for the boot CPU, which no boot
/// argument sets apart, where to run the benchmark instead.
pub(crate) fn isolate_cmdline(m: &Machine, cpu: u32) -> String {
    isolate_cpus(m, &[cpu])
}

/// [`isolate_cmdline`] for a list of CPUs: the arguments of
/// [`Machine::isolation_args`], the advice `check` gives too.
pub(crate) fn isolate_cpus(m: &Machine, cpus: &[u32]) -> String {
    if let Some(args) = m.isolation_args(cpus) {
        return format!("boot with {args} (kernel command line)");
    }
    let boot = m.online.first().copied().unwrap_or(0);
    let said = format!(
        "CPU {boot} is the boot CPU, which the kernel keeps for its housekeeping whatever \
         isolcpus= says"
    );
    let others = m.isolatable(&m.online);
    match m.isolation_args(&others) {
        None => format!("{said}, and no other CPU is online"),
        Some(args) => format!(
            "{said}: run the benchmark on CPUs {} and boot with {args}",
            cpulist::format(&others),
        ),
    }
}

fn device_irq(
    iv: &Interval,
    cx: &Context<'_>,
    col: usize,
    r: &CpuRates,
    limit: f64,
) -> Option<Finding> {
    let (top, top_rate) = top_source(&iv.irqs, col, |s| s.kind == IrqKind::Device)?;
    let total = r.dev_per_s.unwrap_or(top_rate).max(top_rate);
    let name = irq_name(&top.label, &top.desc);
    let mut evidence = format!(
        "CPU {}: IRQ {} {} {}/s",
        r.cpu,
        top.label,
        name,
        rate(top_rate)
    );
    if total > top_rate {
        let _ = write!(evidence, " (all device IRQs {}/s)", rate(total));
    }
    let house = cx.housekeeping();
    // only numbered rows have an affinity file
    let fix = (top.label.bytes().all(|b| b.is_ascii_digit()) && !house.is_empty()).then(|| {
        format!(
            "echo {} > /proc/irq/{}/smp_affinity_list",
            cpulist::format(&house),
            top.label
        )
    });
    Some(Finding {
        cpus: vec![r.cpu],
        kind: Kind::IrqOnWatched,
        severity: severity_of(total, limit, cx.config),
        label: format!("IRQ {name}"),
        evidence,
        numbers: vec![
            Number::new(format!("irq{}_per_s", top.label), top_rate),
            Number::new("device_irq_per_s", total),
        ],
        fix,
    })
}

fn ipis(iv: &Interval, cx: &Context<'_>, col: usize, r: &CpuRates, limit: f64) -> Option<Finding> {
    let total = r.ipi_per_s?;
    let mut parts: Vec<(String, f64)> = iv
        .irqs
        .iter()
        .filter(|s| is_ipi(s.kind))
        .filter_map(|s| Some((s.label.clone(), (*s.per_cpu.get(col)?)?)))
        .filter(|(_, v)| *v >= 0.05)
        .collect();
    parts.sort_by(|a, b| b.1.total_cmp(&a.1));
    let split: Vec<String> = parts
        .iter()
        .map(|(l, v)| format!("{l} {}/s", rate(*v)))
        .collect();
    let top = parts.first().map_or("IPI", |p| p.0.as_str());
    // reschedule IPIs are wake-ups of tasks on this CPU; the others come
    // from the kernel or from other threads of the same process (TLB
    // shootdowns after munmap/mprotect, function calls)
    let why = match parts.first().map(|p| p.0.as_str()) {
        Some("RES") => "reschedule IPIs wake tasks here: other tasks share this CPU",
        Some("TLB") => "TLB shootdowns: another thread of the same process unmaps memory",
        Some("CAL") => "function-call IPIs: the kernel runs work here on another CPU's behalf",
        _ => "other CPUs interrupt this one",
    };
    Some(Finding {
        cpus: vec![r.cpu],
        kind: Kind::IpiOnWatched,
        severity: severity_of(total, limit, cx.config),
        label: format!("IPI {top}"),
        evidence: format!(
            "CPU {}: {} IPIs/s ({}): {why}",
            r.cpu,
            rate(total),
            split.join(", ")
        ),
        numbers: std::iter::once(Number::new("ipi_per_s", total))
            .chain(
                parts
                    .iter()
                    .map(|(l, v)| Number::new(format!("{}_per_s", l.to_lowercase()), *v)),
            )
            .collect(),
        fix: Some(isolate_cmdline(cx.machine, r.cpu)),
    })
}

fn softirqs(
    iv: &Interval,
    cx: &Context<'_>,
    col: usize,
    r: &CpuRates,
    limit: f64,
) -> Option<Finding> {
    let total = r.softirq_per_s?;
    let (top, top_rate) = top_source(&iv.softirqs, col, |_| true)?;
    let fix = match top.label.as_str() {
        "RCU" => format!(
            "boot with rcu_nocbs={cpu} (kernel command line): RCU callbacks then run elsewhere",
            cpu = r.cpu
        ),
        "NET_RX" | "NET_TX" => format!(
            "network softirqs follow the NIC queue's interrupt: move that IRQ off CPU {} \
             (see irq-on-watched), or {}",
            r.cpu,
            isolate_cmdline(cx.machine, r.cpu)
        ),
        _ => isolate_cmdline(cx.machine, r.cpu),
    };
    Some(Finding {
        cpus: vec![r.cpu],
        kind: Kind::SoftirqOnWatched,
        severity: severity_of(total, limit, cx.config),
        label: format!("softirq {}", top.label),
        evidence: format!(
            "CPU {}: {} softirqs/s, most {} {}/s",
            r.cpu,
            rate(total),
            top.label,
            rate(top_rate)
        ),
        numbers: vec![
            Number::new("softirq_per_s", total),
            Number::new(format!("{}_per_s", top.label.to_lowercase()), top_rate),
        ],
        fix: Some(fix),
    })
}

fn ticks(cx: &Context<'_>, r: &CpuRates) -> Option<Finding> {
    let loc = r.loc_per_s?;
    let (limit, mode) = tick_limit(cx, r, &cx.config.watched)?;
    let busy = r.busy_pct.unwrap_or(0.0);
    let evidence = if mode.contains("idle") {
        format!(
            "CPU {}: {} timer interrupts/s while {busy:.1} % busy: timers keep waking an idle CPU",
            r.cpu,
            rate(loc)
        )
    } else {
        format!(
            "CPU {}: {} timer interrupts/s on a nohz_full CPU (1/s expected with one task)",
            r.cpu,
            rate(loc)
        )
    };
    Some(Finding {
        cpus: vec![r.cpu],
        kind: Kind::TickOnWatched,
        severity: severity_of(loc, limit, cx.config),
        label: "tick".into(),
        evidence,
        numbers: vec![Number::new("loc_per_s", loc), Number::new("busy_pct", busy)],
        fix: Some(format!(
            "boot with nohz_full={cpu} rcu_nocbs={cpu} (kernel command line), and run one task on it",
            cpu = r.cpu
        )),
    })
}

/// The interrupts that took time from a traced CPU's owner: one finding
/// whose id follows the costliest source (a device IRQ, a softirq, the
/// timer, an IPI), with the time each took and the longest single one.
fn stolen(cx: &Context<'_>, cpu: u32, limit: f64) -> Option<Finding> {
    let t = cx.trace?.cpu(cpu)?;
    let total = t.stolen_ns();
    let pct = t.pct(total)?;
    let top = t.stolen.first()?;
    let parts: Vec<String> = t
        .stolen
        .iter()
        .take(4)
        .map(|s| {
            format!(
                "{} {:.2} ms in {} (longest {:.0} µs)",
                s.name,
                s.ns as f64 / 1e6,
                s.count,
                s.max_ns as f64 / 1e3
            )
        })
        .collect();
    let house = cx.housekeeping();
    let (kind, fix) = match (top.kind.as_str(), top.irq) {
        ("irq", Some(n)) if !house.is_empty() => (
            Kind::IrqOnWatched,
            format!(
                "echo {} > /proc/irq/{n}/smp_affinity_list",
                cpulist::format(&house)
            ),
        ),
        ("irq", _) => (Kind::IrqOnWatched, isolate_cmdline(cx.machine, cpu)),
        ("softirq", _) if top.name == "RCU" => (
            Kind::SoftirqOnWatched,
            format!(
                "boot with rcu_nocbs={cpu} (kernel command line): RCU callbacks then run elsewhere"
            ),
        ),
        ("softirq", _) => (Kind::SoftirqOnWatched, isolate_cmdline(cx.machine, cpu)),
        ("timer", _) => (
            Kind::TickOnWatched,
            format!(
                "boot with nohz_full={cpu} rcu_nocbs={cpu} (kernel command line), and run one task on it"
            ),
        ),
        _ => (Kind::IpiOnWatched, isolate_cmdline(cx.machine, cpu)),
    };
    Some(Finding {
        cpus: vec![cpu],
        kind,
        severity: severity_of(pct, limit, cx.config),
        label: top.name.clone(),
        evidence: format!(
            "CPU {cpu}: interrupts took {pct:.2} % of the time: {}",
            parts.join(", ")
        ),
        numbers: std::iter::once(Number::new("stolen_pct", pct))
            .chain(
                t.stolen
                    .iter()
                    .map(|s| Number::new(format!("{}_ns", s.name), s.ns as f64)),
            )
            .collect(),
        fix: Some(fix),
    })
}
