//! Reads what the check rules judge: the [`Machine`] facts (cpufreq,
//! cpuidle, topology, CPU sets) plus the files only `check` needs — IRQ
//! affinities, processes, sysctls, THP, power supplies and the CPU latency
//! `QoS` device. Every read goes through [`Fs`] roots, so `--root` trees and
//! captures are judged like the live machine; a fact that cannot be read
//! carries the reason, with the path as the kernel names it.

use std::io::Read as _;

use crate::base::{Cause, Unavailable, cpulist};
use crate::collect::interrupts;
use crate::collect::topology::{CPU_DIR, parse_cpumask};
use crate::model::machine::Machine;
use crate::os::fs::{Base, Fs, ReadError};

/// A value read from the machine, or why it could not be.
pub type Fact<T> = Result<T, Unavailable>;

/// The kernel's default CPU latency `QoS` target (µs): no constraint
/// (`PM_QOS_CPU_LATENCY_DEFAULT_VALUE`, 2000 s).
pub const DMA_LATENCY_DEFAULT_US: i32 = 2_000_000_000;

/// Everything the check rules read.
#[derive(Debug, Clone)]
pub struct CheckFacts {
    /// Topology, cpufreq, cpuidle, CPU sets, cpuinfo, kernel facts.
    pub machine: Machine,
    /// `/proc/cmdline`, trimmed.
    pub cmdline: Fact<String>,
    /// `sys/devices/system/cpu/isolated`.
    pub isolated: Fact<Vec<u32>>,
    /// `sys/devices/system/cpu/nohz_full`.
    pub nohz_full: Fact<Vec<u32>>,
    /// Per-policy `cpuN/cpufreq/boost` (amd-pstate, Linux 6.11+), by CPU.
    pub policy_boost: Vec<(u32, bool)>,
    /// Every numbered device IRQ with its allowed CPUs. When
    /// /proc/interrupts is readable, only the IRQs it lists as devices: an
    /// IRQ without a handler is not listed there and disturbs nothing, and
    /// a per-CPU timer line (arm64 `arch_timer`) cannot be moved.
    pub irqs: Fact<Vec<IrqAffinity>>,
    /// `/proc/irq/default_smp_affinity`: CPUs a new IRQ may use.
    pub default_affinity: Fact<Vec<u32>>,
    /// Processes scanned and the pids whose `comm` is `irqbalance`.
    pub irqbalance: Fact<(usize, Vec<u32>)>,
    /// `/proc/sys/kernel/perf_event_max_sample_rate`.
    pub perf_sample_rate: Fact<u64>,
    /// `/proc/sys/kernel/randomize_va_space`.
    pub aslr: Fact<u64>,
    /// `/proc/sys/kernel/nmi_watchdog`.
    pub nmi_watchdog: Fact<u64>,
    /// `/proc/sys/kernel/timer_migration`.
    pub timer_migration: Fact<u64>,
    /// `/sys/kernel/mm/transparent_hugepage/enabled`, the bracketed choice.
    pub thp_enabled: Fact<String>,
    /// `/sys/kernel/mm/transparent_hugepage/defrag`, the bracketed choice.
    pub thp_defrag: Fact<String>,
    /// Entries of `/sys/class/power_supply`.
    pub power: Fact<Vec<PowerSupply>>,
    /// The CPU latency `QoS` target read from `/dev/cpu_dma_latency`, µs.
    pub dma_latency: Fact<i32>,
    /// The tool that changes the kernel command line there.
    pub boot: crate::check::boot::BootLoader,
    /// DMI `sys_vendor` and `product_name`: `vendor / product`.
    pub dmi: Fact<String>,
}

/// One numbered IRQ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IrqAffinity {
    /// The IRQ number.
    pub irq: u32,
    /// The device name from `/proc/interrupts` (last word of the row).
    pub name: Option<String>,
    /// `smp_affinity_list`, or why it could not be read.
    pub cpus: Fact<Vec<u32>>,
}

/// One entry of `/sys/class/power_supply`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PowerSupply {
    /// The directory name (`AC`, `BAT0`).
    pub name: String,
    /// `type` (`Mains`, `Battery`, `USB`, …).
    pub kind: Option<String>,
    /// `online`, where the file exists.
    pub online: Option<bool>,
    /// `scope`: `Device` for the battery of a peripheral (a wireless mouse).
    pub scope: Option<String>,
}

/// The path as the kernel names it (`/proc/sys/kernel/aslr`), whatever
/// root it was read under: evidence is the same live and in a capture.
pub fn shown(base: Base, rel: &str) -> String {
    format!("/{}/{rel}", base.dir_name())
}

/// Says why a file could not be read, naming its kernel path.
fn why(base: Base, rel: &str, e: &ReadError) -> Unavailable {
    let p = shown(base, rel);
    let detail = match e {
        ReadError::Missing(_) => format!("no {p}"),
        ReadError::Denied(_) => format!("{p}: permission denied"),
        ReadError::TooLarge(..) => format!("{p}: too large"),
        ReadError::Io(_, msg) => format!("{p}: {msg}"),
    };
    Unavailable::new(e.cause(), detail)
}

/// A file whose text is not what the kernel writes there.
fn malformed(detail: String) -> Unavailable {
    Unavailable::new(Cause::Failed, detail)
}

fn text(fs: &mut Fs, base: Base, rel: &str) -> Fact<String> {
    fs.read_trimmed(base, rel).map_err(|e| why(base, rel, &e))
}

fn number(fs: &mut Fs, base: Base, rel: &str) -> Fact<u64> {
    let t = text(fs, base, rel)?;
    t.parse()
        .map_err(|_| malformed(format!("{}: not a number: {t:?}", shown(base, rel))))
}

fn cpu_set(fs: &mut Fs, rel: &str) -> Fact<Vec<u32>> {
    let t = text(fs, Base::Sys, rel)?;
    cpulist::parse(&t).map_err(|e| malformed(format!("{}: {e}", shown(Base::Sys, rel))))
}

/// Returns the bracketed choice of a sysfs selector (`always [madvise] never`).
pub fn selected(t: &str) -> Option<&str> {
    let start = t.find('[')?;
    let end = start + t[start..].find(']')?;
    Some(&t[start + 1..end])
}

fn choice(fs: &mut Fs, rel: &str) -> Fact<String> {
    let t = text(fs, Base::Sys, rel)?;
    selected(&t)
        .map(str::to_string)
        .ok_or_else(|| malformed(format!("{}: no [choice] in {t:?}", shown(Base::Sys, rel))))
}

impl CheckFacts {
    /// Reads every fact once; never fails, a fact it cannot read keeps why.
    pub fn read(fs: &mut Fs) -> CheckFacts {
        let machine = Machine::read(fs);
        let policy_boost = machine
            .online
            .iter()
            .filter_map(|&c| {
                let rel = format!("{CPU_DIR}/cpu{c}/cpufreq/boost");
                match fs.read(Base::Sys, &rel).ok()?.trim() {
                    "0" => Some((c, false)),
                    "1" => Some((c, true)),
                    _ => None,
                }
            })
            .collect();
        CheckFacts {
            cmdline: text(fs, Base::Proc, "cmdline"),
            isolated: cpu_set(fs, &format!("{CPU_DIR}/isolated")),
            nohz_full: cpu_set(fs, &format!("{CPU_DIR}/nohz_full")),
            policy_boost,
            irqs: read_irqs(fs),
            default_affinity: read_default_affinity(fs),
            irqbalance: scan_processes(fs, "irqbalance"),
            perf_sample_rate: number(fs, Base::Proc, "sys/kernel/perf_event_max_sample_rate"),
            aslr: number(fs, Base::Proc, "sys/kernel/randomize_va_space"),
            nmi_watchdog: number(fs, Base::Proc, "sys/kernel/nmi_watchdog"),
            timer_migration: number(fs, Base::Proc, "sys/kernel/timer_migration"),
            thp_enabled: choice(fs, "kernel/mm/transparent_hugepage/enabled"),
            thp_defrag: choice(fs, "kernel/mm/transparent_hugepage/defrag"),
            power: read_power(fs),
            dma_latency: read_dma_latency(fs),
            boot: crate::check::boot::BootLoader::detect(&fs.roots().root),
            dmi: read_dmi(fs),
            machine,
        }
    }
}

fn read_dmi(fs: &mut Fs) -> Fact<String> {
    let vendor = text(fs, Base::Sys, "class/dmi/id/sys_vendor")?;
    let product = text(fs, Base::Sys, "class/dmi/id/product_name").unwrap_or_default();
    Ok(format!("{vendor} / {product}"))
}

fn read_irqs(fs: &mut Fs) -> Fact<Vec<IrqAffinity>> {
    let names = fs
        .list(Base::Proc, "irq")
        .map_err(|e| why(Base::Proc, "irq", &e))?;
    let table = fs
        .read(Base::Proc, "interrupts")
        .ok()
        .and_then(|t| interrupts::parse_interrupts(t).ok())
        .unwrap_or_default();
    let listed = !table.rows.is_empty();
    let mut irqs: Vec<IrqAffinity> = names
        .iter()
        .filter_map(|n| n.parse::<u32>().ok())
        .filter(|irq| {
            !listed
                || table
                    .row(&irq.to_string())
                    .is_some_and(|r| r.kind == interrupts::IrqKind::Device)
        })
        .map(|irq| {
            let label = irq.to_string();
            let name = table
                .row(&label)
                .and_then(|r| r.desc.split_whitespace().last())
                .map(str::to_string);
            let cpus = cpu_set_proc(fs, &format!("irq/{irq}/smp_affinity_list"));
            IrqAffinity { irq, name, cpus }
        })
        .collect();
    irqs.sort_by_key(|i| i.irq);
    Ok(irqs)
}

fn cpu_set_proc(fs: &mut Fs, rel: &str) -> Fact<Vec<u32>> {
    let t = text(fs, Base::Proc, rel)?;
    cpulist::parse(&t).map_err(|e| malformed(format!("{}: {e}", shown(Base::Proc, rel))))
}

fn read_default_affinity(fs: &mut Fs) -> Fact<Vec<u32>> {
    let rel = "irq/default_smp_affinity";
    let t = text(fs, Base::Proc, rel)?;
    parse_cpumask(&t).map_err(|e| malformed(format!("{}: {e}", shown(Base::Proc, rel))))
}

/// Reads `comm` of every process under procfs; returns how many were read
/// and the pids named `name`. Processes that exit meanwhile are skipped.
fn scan_processes(fs: &mut Fs, name: &str) -> Fact<(usize, Vec<u32>)> {
    let entries = fs
        .list(Base::Proc, "")
        .map_err(|e| why(Base::Proc, "", &e))?;
    let mut seen = 0;
    let mut found = Vec::new();
    for pid in entries.iter().filter_map(|n| n.parse::<u32>().ok()) {
        let Ok(comm) = fs.read(Base::Proc, &format!("{pid}/comm")) else {
            continue;
        };
        seen += 1;
        if comm.trim_end_matches('\n') == name {
            found.push(pid);
        }
    }
    if seen == 0 {
        return Err(Unavailable::new(
            Cause::NotLive,
            "no /proc/PID/comm readable (procfs of a capture?)",
        ));
    }
    found.sort_unstable();
    Ok((seen, found))
}

fn read_power(fs: &mut Fs) -> Fact<Vec<PowerSupply>> {
    let dir = "class/power_supply";
    let names = fs
        .list(Base::Sys, dir)
        .map_err(|e| why(Base::Sys, dir, &e))?;
    Ok(names
        .into_iter()
        .map(|name| {
            let kind = text(fs, Base::Sys, &format!("{dir}/{name}/type")).ok();
            let online = match text(fs, Base::Sys, &format!("{dir}/{name}/online")).as_deref() {
                Ok("1") => Some(true),
                Ok("0") => Some(false),
                _ => None,
            };
            let scope = text(fs, Base::Sys, &format!("{dir}/{name}/scope")).ok();
            PowerSupply {
                name,
                kind,
                online,
                scope,
            }
        })
        .collect())
}

/// Reads the CPU latency `QoS` target: 4 bytes, a native-endian s32 in µs.
///
/// Opening the device registers a request at `PM_QOS_DEFAULT_VALUE`, which
/// the kernel replaces with the class default (2000 s), and the target is
/// the minimum of all requests: so opening it to read adds no constraint,
/// and closing it removes the request again (`cpu_latency_qos_open`,
/// `pm_qos_update_target` in kernel/power/qos.c; `pm_qos_interface.rst`).
/// Read with `std::fs`, not `Fs`: the value is binary, not text.
fn read_dma_latency(fs: &Fs) -> Fact<i32> {
    let rel = "cpu_dma_latency";
    let p = shown(Base::Dev, rel);
    let path = fs.roots().path(Base::Dev, rel);
    let mut f = std::fs::File::open(&path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Unavailable::new(Cause::KernelLacks, format!("no {p}")),
        std::io::ErrorKind::PermissionDenied => Unavailable::new(
            Cause::Permission,
            format!("{p}: permission denied (root only)"),
        ),
        _ => Unavailable::new(Cause::Failed, format!("{p}: {e}")),
    })?;
    let mut buf = [0u8; 4];
    let mut len = 0;
    while len < buf.len() {
        match f.read(&mut buf[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Unavailable::new(Cause::Failed, format!("{p}: {e}"))),
        }
    }
    if len < buf.len() {
        return Err(malformed(format!("{p}: read {len} bytes, expected 4")));
    }
    Ok(i32::from_ne_bytes(buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bracketed_choice() {
        assert_eq!(selected("always [madvise] never\n"), Some("madvise"));
        assert_eq!(
            selected("always defer defer+madvise [madvise] never"),
            Some("madvise")
        );
        assert_eq!(selected("[always] madvise never"), Some("always"));
        assert_eq!(selected("always madvise never"), None);
        assert_eq!(selected("[never"), None);
    }
}
