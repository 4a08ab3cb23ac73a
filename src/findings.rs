//! Noise findings: pure rules over one interval and the machine facts that
//! say what disturbs the watched (benchmark) CPUs, with the numbers behind
//! each finding and the command that usually fixes it (printed, never run).
//!
//! The rules tag raw signals only: device interrupts, context switches and
//! migrations on a watched CPU, deep C-states with a long exit latency,
//! steal, thermal throttling, and machine settings (turbo, governor, SMT
//! sibling load, isolation, ASLR). A later set of rules can refine them; the
//! screen and any other sink only read `Finding`s.

use std::fmt::Write as _;

use serde::Serialize;

use crate::collect::cpulist;
use crate::collect::interrupts::IrqKind;
use crate::interval::{CpuRates, Interval};
use crate::machine::Machine;

/// Device interrupts per second on a watched CPU from which a row is reported:
/// one per second already means a device handler runs in the benchmark.
pub const DEVICE_IRQ_MIN_PER_S: f64 = 1.0;
/// Device interrupts per second on a watched CPU that make the finding critical.
pub const DEVICE_IRQ_CRIT_PER_S: f64 = 1000.0;
/// Context switches per second on a watched CPU from which it is reported: a
/// CPU running one pinned thread switches a few times a second (kworker,
/// ksoftirqd); beyond this something else shares it.
pub const CSW_MIN_PER_S: f64 = 50.0;
/// Context switches per second on a watched CPU that make the finding critical.
pub const CSW_CRIT_PER_S: f64 = 1000.0;
/// Migrations per second onto or off a watched CPU from which it is reported.
pub const MIG_MIN_PER_S: f64 = 1.0;
/// Exit latency (µs) from which an idle state counts as deep: waking from it
/// costs as much as a short benchmark iteration.
pub const DEEP_LATENCY_US: u64 = 100;
/// Residency (% of the interval) in a deep state from which it is reported.
pub const DEEP_MIN_PCT: f64 = 1.0;
/// Steal (% of the CPU's time) from which it is reported.
pub const STEAL_MIN_PCT: f64 = 1.0;
/// Steal (%) that makes the finding critical.
pub const STEAL_CRIT_PCT: f64 = 10.0;
/// Busy % of an SMT sibling of a watched CPU from which it is reported: the
/// two threads share the core's execution units and caches.
pub const SMT_BUSY_MIN_PCT: f64 = 10.0;

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Severity {
    /// Worth knowing; not necessarily noise.
    Info,
    /// Noise that skews measurements.
    Warn,
    /// Noise that dominates measurements.
    Crit,
}

impl Severity {
    /// Names the severity in four capitals, as the findings pane prints it.
    pub fn label(self) -> &'static str {
        match self {
            Severity::Info => "INFO",
            Severity::Warn => "WARN",
            Severity::Crit => "CRIT",
        }
    }
}

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// A device interrupt lands on a watched CPU.
    IrqOnWatched,
    /// Other tasks switch in and out of a watched CPU.
    CswOnWatched,
    /// Tasks migrate onto or off a watched CPU.
    MigOnWatched,
    /// Residency in an idle state with a long exit latency.
    DeepCstate,
    /// The hypervisor runs something else on this vCPU.
    Steal,
    /// Thermal throttling events.
    Throttle,
    /// Turbo/boost is allowed.
    TurboOn,
    /// The cpufreq governor is not `performance`.
    Governor,
    /// The SMT sibling of a watched CPU is busy.
    SmtSiblingBusy,
    /// A watched CPU is not in `isolated` or not in `nohz_full`.
    NotIsolated,
    /// Address-space layout randomisation is on.
    AslrOn,
}

impl Kind {
    /// Returns the short tag (`irq-on-watched`).
    pub fn tag(self) -> &'static str {
        match self {
            Kind::IrqOnWatched => "irq-on-watched",
            Kind::CswOnWatched => "csw-on-watched",
            Kind::MigOnWatched => "mig-on-watched",
            Kind::DeepCstate => "deep-cstate",
            Kind::Steal => "steal",
            Kind::Throttle => "throttle",
            Kind::TurboOn => "turbo-on",
            Kind::Governor => "governor",
            Kind::SmtSiblingBusy => "smt-sibling-busy",
            Kind::NotIsolated => "not-isolated",
            Kind::AslrOn => "aslr-on",
        }
    }
}

/// One thing that disturbs (or may disturb) the measured CPUs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The CPUs it concerns; empty when it is machine-wide.
    pub cpus: Vec<u32>,
    /// What it is about.
    pub kind: Kind,
    /// How much it matters.
    pub severity: Severity,
    /// A short, stable label for the CPU's row (`IRQ nvme0q2`); no numbers,
    /// so the same finding keeps its label from one interval to the next.
    pub label: String,
    /// The numbers behind it.
    pub evidence: String,
    /// The usual fix, as a command to print; `None` when there is none.
    pub fix: Option<String>,
}

impl Finding {
    /// Tells whether the finding concerns `cpu` (machine-wide ones do not).
    pub fn touches(&self, cpu: u32) -> bool {
        self.cpus.contains(&cpu)
    }
}

/// Derives every finding of one interval; sorted by severity (highest
/// first), then kind, then CPUs.
pub fn tags(iv: &Interval, m: &Machine, watched: &[u32]) -> Vec<Finding> {
    let mut out = Vec::new();
    for &w in watched {
        let Some(r) = iv.cpu(w) else { continue };
        out.extend(device_irq(iv, m, watched, r));
        out.extend(context_switches(r));
        out.extend(migrations(r));
        out.extend(smt_sibling_busy(iv, m, watched, w));
    }
    out.extend(deep_cstates(iv, watched));
    out.extend(steal(iv));
    out.extend(throttle(iv));
    out.extend(turbo_on(m));
    out.extend(governor(m, watched));
    out.extend(not_isolated(m, watched));
    out.extend(aslr_on(m));
    out.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then(a.kind.cmp(&b.kind))
            .then_with(|| a.cpus.cmp(&b.cpus))
            .then_with(|| a.label.cmp(&b.label))
    });
    out
}

/// Formats a rate: whole numbers from 10 up, one decimal below.
fn rate(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// The CPUs interrupts may be moved to: online and not watched.
fn housekeeping(m: &Machine, watched: &[u32]) -> Vec<u32> {
    m.online
        .iter()
        .copied()
        .filter(|c| !watched.contains(c))
        .collect()
}

/// The device name of an interrupt row: the last word of its description
/// (`IR-PCI-MSI 524288-edge nvme0q2` → `nvme0q2`), else its number.
fn irq_name<'a>(label: &'a str, desc: &'a str) -> &'a str {
    desc.split_whitespace().last().unwrap_or(label)
}

fn device_irq(iv: &Interval, m: &Machine, watched: &[u32], r: &CpuRates) -> Option<Finding> {
    let col = iv.cpus.iter().position(|c| c.cpu == r.cpu)?;
    let (top, top_rate) = iv
        .irqs
        .iter()
        .filter(|s| s.kind == IrqKind::Device)
        .filter_map(|s| Some((s, (*s.per_cpu.get(col)?)?)))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    if top_rate < DEVICE_IRQ_MIN_PER_S {
        return None;
    }
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
    let house = housekeeping(m, watched);
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
        severity: if total >= DEVICE_IRQ_CRIT_PER_S {
            Severity::Crit
        } else {
            Severity::Warn
        },
        label: format!("IRQ {name}"),
        evidence,
        fix,
    })
}

fn context_switches(r: &CpuRates) -> Option<Finding> {
    let csw = r.csw_per_s.filter(|v| *v >= CSW_MIN_PER_S)?;
    Some(Finding {
        cpus: vec![r.cpu],
        kind: Kind::CswOnWatched,
        severity: if csw >= CSW_CRIT_PER_S {
            Severity::Crit
        } else {
            Severity::Warn
        },
        label: "CSW".into(),
        evidence: format!("CPU {}: {} context switches/s", r.cpu, rate(csw)),
        fix: Some(format!(
            "move other tasks off: boot with isolcpus=domain,managed_irq,{} (or taskset -apc <other CPUs> PID)",
            r.cpu
        )),
    })
}

fn migrations(r: &CpuRates) -> Option<Finding> {
    let mig = r.mig_per_s.filter(|v| *v >= MIG_MIN_PER_S)?;
    Some(Finding {
        cpus: vec![r.cpu],
        kind: Kind::MigOnWatched,
        severity: Severity::Warn,
        label: "MIG".into(),
        evidence: format!("CPU {}: {} migrations/s", r.cpu, rate(mig)),
        fix: Some("pin the benchmark's threads: taskset -c <CPU> <cmd>".into()),
    })
}

fn smt_sibling_busy(iv: &Interval, m: &Machine, watched: &[u32], w: u32) -> Option<Finding> {
    let topo = m.topo(w)?;
    let (sib, busy) = topo
        .siblings
        .iter()
        .copied()
        .filter(|s| *s != w && !watched.contains(s))
        .filter_map(|s| Some((s, iv.cpu(s)?.busy_pct?)))
        .filter(|(_, b)| *b >= SMT_BUSY_MIN_PCT)
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    Some(Finding {
        cpus: vec![w],
        kind: Kind::SmtSiblingBusy,
        severity: Severity::Warn,
        label: format!("SMT {sib} busy"),
        evidence: format!("CPU {sib}, the SMT sibling of watched CPU {w}, is {busy:.0} % busy"),
        fix: Some(format!("echo 0 > /sys/devices/system/cpu/cpu{sib}/online")),
    })
}

/// Unwatched CPUs that used the same deep state, with their residency.
struct DeepGroup {
    name: String,
    latency_us: u64,
    cpus: Vec<(u32, f64)>,
}

/// One finding per watched CPU and deep state; the unwatched CPUs in the
/// same state share one finding, so 256 CPUs give a handful of lines.
fn deep_cstates(iv: &Interval, watched: &[u32]) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut groups: Vec<DeepGroup> = Vec::new();
    for r in &iv.cpus {
        for st in r.idle.iter() {
            let (Some(lat), Some(pct)) = (st.latency_us, st.pct) else {
                continue;
            };
            if lat < DEEP_LATENCY_US || pct < DEEP_MIN_PCT {
                continue;
            }
            if watched.contains(&r.cpu) {
                out.push(Finding {
                    cpus: vec![r.cpu],
                    kind: Kind::DeepCstate,
                    severity: Severity::Warn,
                    label: format!("{} {lat}µs", st.name),
                    evidence: format!(
                        "CPU {}: {pct:.0} % in {} (exit latency {lat} µs), {} entries/s",
                        r.cpu,
                        st.name,
                        st.per_s.map_or_else(|| "·".to_string(), rate)
                    ),
                    fix: Some(format!(
                        "cpupower -c {} idle-set -D {DEEP_LATENCY_US}",
                        r.cpu
                    )),
                });
            } else {
                match groups
                    .iter_mut()
                    .find(|g| st.name == g.name && g.latency_us == lat)
                {
                    Some(g) => g.cpus.push((r.cpu, pct)),
                    None => groups.push(DeepGroup {
                        name: st.name.to_string(),
                        latency_us: lat,
                        cpus: vec![(r.cpu, pct)],
                    }),
                }
            }
        }
    }
    for DeepGroup {
        name,
        latency_us: lat,
        cpus,
    } in groups
    {
        let list: Vec<u32> = cpus.iter().map(|c| c.0).collect();
        let mean = cpus.iter().map(|c| c.1).sum::<f64>() / cpus.len() as f64;
        out.push(Finding {
            cpus: list.clone(),
            kind: Kind::DeepCstate,
            severity: Severity::Info,
            label: format!("{name} {lat}µs"),
            evidence: format!(
                "{}: {mean:.0} % on average in {name} (exit latency {lat} µs)",
                cpus_label(&list)
            ),
            fix: Some(format!(
                "cpupower -c {} idle-set -D {DEEP_LATENCY_US}",
                cpulist::format(&list)
            )),
        });
    }
    out
}

fn steal(iv: &Interval) -> Option<Finding> {
    let hit: Vec<(u32, f64)> = iv
        .cpus
        .iter()
        .filter_map(|r| Some((r.cpu, r.time?.steal?)))
        .filter(|(_, s)| *s >= STEAL_MIN_PCT)
        .collect();
    let (worst_cpu, worst) = hit.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1))?;
    let cpus: Vec<u32> = hit.iter().map(|h| h.0).collect();
    Some(Finding {
        severity: if worst >= STEAL_CRIT_PCT {
            Severity::Crit
        } else {
            Severity::Warn
        },
        kind: Kind::Steal,
        label: "steal".into(),
        evidence: if cpus.len() == 1 {
            format!("CPU {worst_cpu}: steal {worst:.1} %: the hypervisor ran something else")
        } else {
            format!(
                "{}: steal up to {worst:.1} % (CPU {worst_cpu}): the hypervisor ran something else",
                cpus_label(&cpus)
            )
        },
        fix: Some("ask for dedicated (pinned, not overcommitted) vCPUs".into()),
        cpus,
    })
}

/// Names CPUs in a sentence: `CPU 5`, `CPUs 0-3`.
fn cpus_label(cpus: &[u32]) -> String {
    match cpus {
        [one] => format!("CPU {one}"),
        _ => format!("CPUs {}", cpulist::format(cpus)),
    }
}

/// Core throttling names its CPUs; package throttling slows every CPU of
/// the package alike, so it is a machine-wide finding (no row tag each).
fn throttle(iv: &Interval) -> Vec<Finding> {
    let mut out = Vec::new();
    let cores: Vec<(u32, u64, Option<f64>)> = iv
        .cpus
        .iter()
        .filter_map(|r| Some((r.cpu, r.throttle?, r.window_s)))
        .filter(|(_, n, _)| *n > 0)
        .collect();
    if !cores.is_empty() {
        let cpus: Vec<u32> = cores.iter().map(|c| c.0).collect();
        let events: u64 = cores.iter().map(|c| c.1).sum();
        // counts read in rounds cover each CPU's window, not the interval
        let window = cores
            .iter()
            .filter_map(|c| c.2)
            .fold(None, |m: Option<f64>, w| Some(m.map_or(w, |m| m.max(w))))
            .map_or_else(String::new, |w| format!(" in the last {w:.0} s"));
        out.push(Finding {
            evidence: format!(
                "{}: {events} core throttling events{window}",
                cpus_label(&cpus)
            ),
            cpus,
            kind: Kind::Throttle,
            severity: Severity::Crit,
            label: "throttle".into(),
            fix: Some("check cooling and power limits; lower the load on the package".into()),
        });
    }
    for p in &iv.pkgs {
        let Some(n) = p.throttle.filter(|n| *n > 0) else {
            continue;
        };
        out.push(Finding {
            cpus: Vec::new(),
            kind: Kind::Throttle,
            severity: Severity::Crit,
            label: "pkg throttle".into(),
            evidence: format!("package {}: {n} package throttling events", p.package),
            fix: Some("check cooling and power limits; lower the load on the package".into()),
        });
    }
    out
}

fn turbo_on(m: &Machine) -> Option<Finding> {
    if m.boost.turbo_allowed() != Some(true) {
        return None;
    }
    let fix = if m.boost.intel_no_turbo.is_some() {
        "echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo"
    } else {
        "echo 0 > /sys/devices/system/cpu/cpufreq/boost"
    };
    Some(Finding {
        cpus: Vec::new(),
        kind: Kind::TurboOn,
        severity: Severity::Info,
        label: "turbo".into(),
        evidence: "turbo/boost is on: the clock depends on load, temperature and other cores"
            .into(),
        fix: Some(fix.into()),
    })
}

/// CPUs (watched ones, or all when none is watched) whose governor is not
/// `performance`, one finding per governor.
fn governor(m: &Machine, watched: &[u32]) -> Vec<Finding> {
    let mut by_gov: Vec<(String, Vec<u32>)> = Vec::new();
    for f in &m.cpufreq {
        if !watched.is_empty() && !watched.contains(&f.cpu) {
            continue;
        }
        let Some(g) = f.governor.as_deref().filter(|g| *g != "performance") else {
            continue;
        };
        match by_gov.iter_mut().find(|(n, _)| n == g) {
            Some(e) => e.1.push(f.cpu),
            None => by_gov.push((g.to_string(), vec![f.cpu])),
        }
    }
    by_gov
        .into_iter()
        .map(|(g, cpus)| {
            let list = cpulist::format(&cpus);
            Finding {
                severity: if watched.is_empty() {
                    Severity::Info
                } else {
                    Severity::Warn
                },
                kind: Kind::Governor,
                label: format!("gov {g}"),
                evidence: format!("CPUs {list}: governor {g}, not performance"),
                fix: Some(format!("cpupower -c {list} frequency-set -g performance")),
                cpus,
            }
        })
        .collect()
}

fn not_isolated(m: &Machine, watched: &[u32]) -> Option<Finding> {
    let missing_from = |set: &Option<Vec<u32>>| -> Vec<u32> {
        match set {
            Some(s) => watched.iter().copied().filter(|w| !s.contains(w)).collect(),
            None => Vec::new(),
        }
    };
    let not_iso = missing_from(&m.sets.isolated);
    let not_nohz = missing_from(&m.sets.nohz_full);
    if not_iso.is_empty() && not_nohz.is_empty() {
        return None;
    }
    let mut cpus: Vec<u32> = not_iso.iter().chain(&not_nohz).copied().collect();
    cpus.sort_unstable();
    cpus.dedup();
    let mut parts = Vec::new();
    if !not_iso.is_empty() {
        parts.push(format!("{} not in isolated", cpus_label(&not_iso)));
    }
    if !not_nohz.is_empty() {
        parts.push(format!("{} not in nohz_full", cpus_label(&not_nohz)));
    }
    let list = cpulist::format(watched);
    Some(Finding {
        cpus,
        kind: Kind::NotIsolated,
        severity: Severity::Info,
        label: "not isolated".into(),
        evidence: parts.join("; "),
        fix: Some(format!(
            "boot with isolcpus=domain,managed_irq,{list} nohz_full={list} rcu_nocbs={list}"
        )),
    })
}

fn aslr_on(m: &Machine) -> Option<Finding> {
    let level = m.kernel.aslr.filter(|a| *a > 0)?;
    Some(Finding {
        cpus: Vec::new(),
        kind: Kind::AslrOn,
        severity: Severity::Info,
        label: "ASLR".into(),
        evidence: format!(
            "randomize_va_space = {level}: code and stack addresses change from run to run"
        ),
        fix: Some(
            "echo 0 > /proc/sys/kernel/randomize_va_space (or run the benchmark under setarch -R)"
                .into(),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::cpufreq::CpuFreqInfo;
    use crate::collect::topology::CpuTopology;
    use crate::interval::{IdleRate, PkgRates, SourceRates, TimeSplit};
    use crate::snapshot::Stamp;
    use crate::source::fs::{Fs, Roots};

    /// A machine read from an empty tree (every fact unknown), then given
    /// `n` online CPUs, two SMT threads per core (cpu i and i + n/2).
    fn machine(n: u32) -> Machine {
        let dir = tempfile::tempdir().unwrap();
        let mut m = Machine::read(&mut Fs::new(Roots::under(dir.path())));
        m.online = (0..n).collect();
        m.topology = (0..n)
            .map(|cpu| {
                let core = cpu % (n / 2);
                CpuTopology {
                    cpu,
                    package: Some(0),
                    die: None,
                    cluster: None,
                    core: Some(core),
                    siblings: vec![core, core + n / 2],
                    core_type: None,
                    node: Some(0),
                }
            })
            .collect();
        m
    }

    fn rates(cpu: u32) -> CpuRates {
        CpuRates {
            cpu,
            ..CpuRates::default()
        }
    }

    fn interval(cpus: Vec<CpuRates>) -> Interval {
        Interval {
            from: Stamp::default(),
            to: Stamp::default(),
            dt_s: 1.0,
            freq_source: None,
            cpus,
            pkgs: Vec::new(),
            irqs: Vec::new(),
            softirqs: Vec::new(),
            gone: Vec::new(),
        }
    }

    fn source(label: &str, desc: &str, kind: IrqKind, per_cpu: Vec<Option<f64>>) -> SourceRates {
        let total = per_cpu.iter().flatten().sum();
        SourceRates {
            label: label.into(),
            desc: desc.into(),
            kind,
            per_cpu,
            total,
        }
    }

    fn idle(name: &str, latency: u64, pct: f64) -> IdleRate {
        IdleRate {
            name: name.into(),
            pct: Some(pct),
            per_s: Some(410.0),
            above_per_s: None,
            below_per_s: None,
            latency_us: Some(latency),
            residency_us: None,
            disabled: Some(false),
        }
    }

    fn kinds(f: &[Finding]) -> Vec<Kind> {
        f.iter().map(|x| x.kind).collect()
    }

    #[test]
    fn top_device_irq_on_a_watched_cpu_names_the_row_and_the_affinity_fix() {
        let m = machine(4);
        let mut r2 = rates(2);
        r2.dev_per_s = Some(1030.0);
        let mut iv = interval(vec![rates(0), rates(1), r2, rates(3)]);
        iv.irqs = vec![
            source(
                "LOC",
                "Local timer interrupts",
                IrqKind::LocalTimer,
                vec![Some(250.0); 4],
            ),
            source(
                "72",
                "IR-PCI-MSI 524288-edge nvme0q2",
                IrqKind::Device,
                vec![Some(0.0), Some(0.0), Some(1010.0), Some(0.0)],
            ),
            source(
                "30",
                "IR-PCI-MSI 1-edge eth0",
                IrqKind::Device,
                vec![Some(5.0), Some(0.0), Some(20.0), Some(0.0)],
            ),
        ];
        let f = tags(&iv, &m, &[2]);
        let irq = f.iter().find(|x| x.kind == Kind::IrqOnWatched).unwrap();
        assert_eq!(irq.cpus, vec![2]);
        assert_eq!(irq.severity, Severity::Crit);
        assert_eq!(irq.label, "IRQ nvme0q2");
        assert_eq!(
            irq.evidence,
            "CPU 2: IRQ 72 nvme0q2 1010/s (all device IRQs 1030/s)"
        );
        assert_eq!(
            irq.fix.as_deref(),
            Some("echo 0-1,3 > /proc/irq/72/smp_affinity_list")
        );
        // the same rates on an unwatched CPU are not noise
        assert!(
            tags(&iv, &m, &[1])
                .iter()
                .all(|x| x.kind != Kind::IrqOnWatched)
        );
    }

    #[test]
    fn device_irq_below_one_per_second_is_quiet() {
        let m = machine(2);
        let mut iv = interval(vec![rates(0), rates(1)]);
        iv.irqs = vec![source(
            "9",
            "IO-APIC 9-fasteoi acpi",
            IrqKind::Device,
            vec![None, Some(0.5)],
        )];
        assert!(tags(&iv, &m, &[1]).is_empty());
    }

    #[test]
    fn context_switches_and_migrations_on_a_watched_cpu() {
        let m = machine(2);
        let mut r = rates(1);
        r.csw_per_s = Some(800.0);
        r.mig_per_s = Some(12.0);
        let f = tags(&interval(vec![rates(0), r.clone()]), &m, &[1]);
        assert_eq!(kinds(&f), vec![Kind::CswOnWatched, Kind::MigOnWatched]);
        assert_eq!(f[0].evidence, "CPU 1: 800 context switches/s");
        assert_eq!(f[0].severity, Severity::Warn);
        assert_eq!(f[1].evidence, "CPU 1: 12 migrations/s");
        // just under both thresholds
        r.csw_per_s = Some(49.0);
        r.mig_per_s = Some(0.9);
        assert!(tags(&interval(vec![rates(0), r]), &m, &[1]).is_empty());
    }

    #[test]
    fn deep_state_on_watched_cpu_is_its_own_finding_and_the_rest_are_grouped() {
        let m = machine(4);
        let mut cpus: Vec<CpuRates> = (0..4).map(rates).collect();
        for r in &mut cpus {
            r.idle = vec![idle("C1", 2, 20.0), idle("C6", 133, 60.0)].into();
        }
        let mut shallow = idle("C6", 133, 60.0);
        shallow.pct = Some(0.5); // below DEEP_MIN_PCT
        cpus[3].idle = vec![idle("C1", 2, 20.0), shallow].into();
        let f = tags(&interval(cpus), &m, &[1]);
        let deep: Vec<&Finding> = f.iter().filter(|x| x.kind == Kind::DeepCstate).collect();
        assert_eq!(deep.len(), 2);
        assert_eq!(deep[0].cpus, vec![1]);
        assert_eq!(deep[0].severity, Severity::Warn);
        assert_eq!(deep[0].label, "C6 133µs");
        assert_eq!(
            deep[0].evidence,
            "CPU 1: 60 % in C6 (exit latency 133 µs), 410 entries/s"
        );
        assert_eq!(
            deep[0].fix.as_deref(),
            Some("cpupower -c 1 idle-set -D 100")
        );
        assert_eq!(deep[1].cpus, vec![0, 2]);
        assert_eq!(deep[1].severity, Severity::Info);
        assert_eq!(
            deep[1].evidence,
            "CPUs 0,2: 60 % on average in C6 (exit latency 133 µs)"
        );
    }

    #[test]
    fn steal_above_one_percent_lists_every_cpu_and_the_worst() {
        let m = machine(4);
        let mut cpus: Vec<CpuRates> = (0..4).map(rates).collect();
        for (r, s) in cpus.iter_mut().zip([0.5, 1.0, 12.5, 3.0]) {
            r.time = Some(TimeSplit {
                steal: Some(s),
                ..TimeSplit::default()
            });
        }
        let f = tags(&interval(cpus), &m, &[]);
        assert_eq!(kinds(&f), vec![Kind::Steal]);
        assert_eq!(f[0].cpus, vec![1, 2, 3]);
        assert_eq!(f[0].severity, Severity::Crit);
        assert_eq!(
            f[0].evidence,
            "CPUs 1-3: steal up to 12.5 % (CPU 2): the hypervisor ran something else"
        );
        let mut one = interval(vec![rates(0)]);
        one.cpus[0].time = Some(TimeSplit {
            steal: Some(2.0),
            ..TimeSplit::default()
        });
        let f = tags(&one, &m, &[]);
        assert_eq!(
            f[0].evidence,
            "CPU 0: steal 2.0 %: the hypervisor ran something else"
        );
        assert_eq!(f[0].severity, Severity::Warn);
    }

    #[test]
    fn core_and_package_throttling_are_critical() {
        let m = machine(4);
        let mut cpus: Vec<CpuRates> = (0..4).map(rates).collect();
        cpus[0].throttle = Some(0);
        cpus[3].throttle = Some(7);
        let mut iv = interval(cpus);
        iv.pkgs = vec![PkgRates {
            package: 0,
            throttle: Some(2),
            ..PkgRates::default()
        }];
        let f = tags(&iv, &m, &[]);
        assert_eq!(kinds(&f), vec![Kind::Throttle, Kind::Throttle]);
        assert!(f[0].cpus.is_empty(), "package throttling is machine-wide");
        assert_eq!(f[0].evidence, "package 0: 2 package throttling events");
        assert_eq!(f[1].cpus, vec![3]);
        assert_eq!(f[1].evidence, "CPU 3: 7 core throttling events");
    }

    #[test]
    fn busy_smt_sibling_of_a_watched_cpu() {
        let m = machine(4); // siblings: 0+2, 1+3
        let mut cpus: Vec<CpuRates> = (0..4).map(rates).collect();
        cpus[3].busy_pct = Some(76.0);
        cpus[2].busy_pct = Some(9.0);
        let iv = interval(cpus);
        let f = tags(&iv, &m, &[1]);
        assert_eq!(kinds(&f), vec![Kind::SmtSiblingBusy]);
        assert_eq!(f[0].cpus, vec![1]);
        assert_eq!(f[0].label, "SMT 3 busy");
        assert_eq!(
            f[0].evidence,
            "CPU 3, the SMT sibling of watched CPU 1, is 76 % busy"
        );
        assert_eq!(
            f[0].fix.as_deref(),
            Some("echo 0 > /sys/devices/system/cpu/cpu3/online")
        );
        // watching both threads of the core is a choice, not noise; CPU 2 is 9 % busy
        assert!(tags(&iv, &m, &[1, 3]).is_empty());
        assert!(tags(&iv, &m, &[0]).is_empty());
    }

    #[test]
    fn machine_facts_turbo_governor_isolation_aslr() {
        let mut m = machine(4);
        m.boost.intel_no_turbo = Some(false);
        m.kernel.aslr = Some(2);
        m.sets.isolated = Some(vec![2, 3]);
        m.sets.nohz_full = None; // unknown: no claim about it
        m.cpufreq = (0..4)
            .map(|cpu| CpuFreqInfo {
                cpu,
                driver: Some("intel_pstate".into()),
                governor: Some(if cpu == 1 { "performance" } else { "powersave" }.into()),
                epp: None,
                scaling_min_khz: None,
                scaling_max_khz: None,
                cpuinfo_min_khz: None,
                cpuinfo_max_khz: None,
                base_khz: None,
                cur_khz: None,
                dir: String::new(),
                cur_path: None,
            })
            .collect();
        let iv = interval((0..4).map(rates).collect());
        let f = tags(&iv, &m, &[1, 2]);
        assert_eq!(
            kinds(&f),
            vec![
                Kind::Governor,
                Kind::TurboOn,
                Kind::NotIsolated,
                Kind::AslrOn
            ]
        );
        assert_eq!(f[0].cpus, vec![2]);
        assert_eq!(f[0].severity, Severity::Warn);
        assert_eq!(
            f[0].fix.as_deref(),
            Some("cpupower -c 2 frequency-set -g performance")
        );
        assert_eq!(
            f[1].fix.as_deref(),
            Some("echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo")
        );
        assert_eq!(f[2].cpus, vec![1]);
        assert_eq!(f[2].evidence, "CPU 1 not in isolated");
        assert_eq!(
            f[3].evidence,
            "randomize_va_space = 2: code and stack addresses change from run to run"
        );
        // nothing watched: governor of every CPU, informational; no isolation claim
        let f = tags(&iv, &m, &[]);
        assert_eq!(kinds(&f), vec![Kind::TurboOn, Kind::Governor, Kind::AslrOn]);
        assert_eq!(f[1].cpus, vec![0, 2, 3]);
        assert_eq!(f[1].severity, Severity::Info);
    }

    #[test]
    fn unknown_facts_and_empty_interval_give_no_finding() {
        let m = machine(2);
        assert!(tags(&interval(Vec::new()), &m, &[0, 1, 7]).is_empty());
        assert!(tags(&interval((0..2).map(rates).collect()), &m, &[0, 1]).is_empty());
    }

    #[test]
    fn kinds_serialize_as_their_tags() {
        for k in [
            Kind::IrqOnWatched,
            Kind::DeepCstate,
            Kind::SmtSiblingBusy,
            Kind::AslrOn,
        ] {
            assert_eq!(
                serde_json::to_string(&k).unwrap(),
                format!("\"{}\"", k.tag())
            );
        }
    }
}
