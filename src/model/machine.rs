//! Machine facts read once at start: model, topology, CPU sets, cpufreq and
//! cpuidle setup, kernel settings. They change rarely; a change of the
//! online set makes the sampler read them again.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::base::cpu_map::CpuMap;
use crate::base::{Cause, Unavailable, Vendor};
use crate::collect::cpufreq::{self, Boost, CpuFreqInfo};
use crate::collect::cpuidle::{self, IdleDriver, IdleStateInfo};
use crate::collect::cpuinfo::{self, CpuInfo};
use crate::collect::facts::{self, KernelFacts};
use crate::collect::hwmon::{self, HwmonSensor};
use crate::collect::powercap::{self, RaplZone};
use crate::collect::topology::{self, CpuSets, CpuTopology};
use crate::collect::x86;
use crate::os::fs::{Base, Fs};

/// Everything noisetop knows about the machine that is not a counter.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Machine {
    /// CPUs online when the facts were read, ascending.
    pub online: Vec<u32>,
    /// Why the online set had to be guessed, if it did.
    pub online_note: Option<String>,
    /// `online`/`offline`/`possible`/`present`/`isolated`/`nohz_full` sets.
    pub sets: CpuSets,
    /// /proc/cpuinfo, parsed.
    pub cpuinfo: CpuInfo,
    /// Vendor as far as the MSR tables care.
    pub vendor: Vendor,
    /// Topology of each online CPU.
    pub topology: Vec<CpuTopology>,
    /// Where package and core ids came from when sysfs has no topology
    /// files (`/proc/cpuinfo`), or why they are unknown; `None` when sysfs
    /// gave them.
    pub topology_note: Option<String>,
    /// Whether SMT (hyper-threading) is on; `None` when nothing says.
    pub smt: Option<bool>,
    /// How `smt` is known, or why it is not (for the header and `u` panel).
    pub smt_note: String,
    /// cpufreq setup per online CPU that has one.
    pub cpufreq: Vec<CpuFreqInfo>,
    /// Why cpufreq is missing, when it is.
    pub cpufreq_missing: Option<Unavailable>,
    /// Why the current-frequency file (`scaling_cur_freq`) is not read
    /// each interval even where it is the only frequency rung: one read of
    /// it cost more than [`cpufreq::COSTLY_READ_NS`].
    pub cur_freq_note: Option<String>,
    /// Turbo/boost switches.
    pub boost: Boost,
    /// cpuidle driver and governor.
    pub idle_driver: IdleDriver,
    /// cpuidle states per CPU.
    pub idle_states: CpuMap<Vec<IdleStateInfo>>,
    /// Why cpuidle states are missing, when they are.
    pub idle_missing: Option<Unavailable>,
    /// Kernel command line, ASLR, SMT, hypervisor and similar.
    pub kernel: KernelFacts,
    /// Whether `cpuN/thermal_throttle` exists (checked on the first CPU).
    pub has_throttle: bool,
    /// Temperature sensors found under hwmon.
    pub hwmon: Vec<HwmonSensor>,
    /// RAPL zones found under powercap.
    pub rapl_zones: Vec<RaplZone>,
    /// Nominal (base) frequency in MHz, and where it came from.
    pub base_mhz: Option<(f64, String)>,
    /// Highest frequency the CPUs may reach in MHz.
    pub max_mhz: Option<f64>,
}

impl Machine {
    /// Reads every fact; never fails, a fact it cannot read is `None`.
    pub fn read(fs: &mut Fs) -> Machine {
        Machine::read_with_limit(fs, cpufreq::COSTLY_READ_NS)
    }

    /// [`Machine::read`], with the longest read of the current-frequency
    /// file (ns) that still lets noisetop read it each interval (tests).
    pub fn read_with_limit(fs: &mut Fs, costly_read_ns: u64) -> Machine {
        let sets = topology::read_cpu_sets(fs);
        let cpuinfo = fs
            .read(Base::Proc, "cpuinfo")
            .map(cpuinfo::parse)
            .unwrap_or_default();
        let (online, online_note) = match topology::online_cpus(fs) {
            Ok(cpus) if !cpus.is_empty() => (cpus, None),
            Ok(_) | Err(_) => guess_online(fs, &cpuinfo),
        };
        let mut topology = topology::read_topology(fs, &online);
        topology.sort_by_key(|t| t.cpu);
        let topology_note = topology_from_cpuinfo(&mut topology, &cpuinfo);
        let mut cpufreq = Vec::new();
        let mut cpufreq_missing = None;
        let mut cur_freq_note = None;
        for &cpu in &online {
            match cpufreq::read_info_timed(fs, cpu, cur_freq_note.is_none()) {
                Ok((info, read_ns)) => {
                    if let Some(ns) = read_ns.filter(|&ns| ns > costly_read_ns) {
                        cur_freq_note = Some(costly_note(&info, ns, costly_read_ns));
                    }
                    cpufreq.push(info);
                }
                Err(e) => {
                    cpufreq_missing.get_or_insert_with(|| {
                        Unavailable::new(e.cause(), format!("no cpufreq: {e}"))
                    });
                }
            }
        }
        if cur_freq_note.is_some() {
            // not even as a last rung: each interval would pay it per CPU
            for c in &mut cpufreq {
                (c.cur_khz, c.cur_path) = (None, None);
            }
        }
        if !cpufreq.is_empty() && cpufreq.len() < online.len() {
            cpufreq_missing =
                cpufreq_missing.map(|m| Unavailable::new(m.cause, format!("on some CPUs: {m}")));
        } else if !cpufreq.is_empty() {
            cpufreq_missing = None;
        }
        let idle_driver = cpuidle::read_idle_driver(fs);
        let mut idle_states = CpuMap::new();
        let mut idle_missing = None;
        for &cpu in &online {
            match cpuidle::read_states(fs, cpu) {
                Ok(states) if !states.is_empty() => {
                    idle_states.insert(cpu, states);
                }
                Ok(_) => {
                    idle_missing.get_or_insert_with(|| {
                        Unavailable::new(
                            Cause::KernelLacks,
                            format!("cpu{cpu} has no cpuidle states"),
                        )
                    });
                }
                Err(e) => {
                    idle_missing.get_or_insert_with(|| {
                        Unavailable::new(e.cause(), format!("no cpuidle states: {e}"))
                    });
                }
            }
        }
        if idle_states.is_empty() {
            idle_missing = Some(match idle_driver.driver.as_deref() {
                Some(d) => Unavailable::new(
                    Cause::KernelLacks,
                    format!("no cpuidle states (idle driver: {d})"),
                ),
                None => idle_missing
                    .unwrap_or_else(|| Unavailable::new(Cause::KernelLacks, "no cpuidle driver")),
            });
        } else if idle_states.len() == online.len() {
            idle_missing = None;
        }
        let kernel = facts::read_kernel_facts(fs);
        let (smt, smt_note) = smt_of(kernel.smt_active, &topology, &cpuinfo);
        let has_throttle = online.first().is_some_and(|c| {
            fs.exists(
                Base::Sys,
                &format!("devices/system/cpu/cpu{c}/thermal_throttle"),
            )
        });
        let hwmon = hwmon::discover_temps(fs);
        let rapl_zones = powercap::discover_zones(fs);
        let boost = cpufreq::read_boost(fs);
        let vendor = cpuinfo
            .vendor
            .as_deref()
            .map_or(Vendor::Other, Vendor::from_vendor_id);
        let base_mhz = base_mhz(&cpufreq, &cpuinfo);
        let max_mhz = cpufreq
            .iter()
            .filter_map(|c| c.cpuinfo_max_khz)
            .max()
            .map(|k| k as f64 / 1000.0);
        Machine {
            online,
            online_note,
            sets,
            cpuinfo,
            vendor,
            topology,
            topology_note,
            smt,
            smt_note,
            cpufreq,
            cpufreq_missing,
            cur_freq_note,
            boost,
            idle_driver,
            idle_states,
            idle_missing,
            kernel,
            has_throttle,
            hwmon,
            rapl_zones,
            base_mhz,
            max_mhz,
        }
    }

    /// The CPUs of `cpus` that boot-time isolation (`isolcpus=`,
    /// `nohz_full=`) can set apart. Never the boot CPU, the first online:
    /// the kernel keeps it for housekeeping whatever those say
    /// (`housekeeping_setup` puts it back). When `cpus` is every online CPU,
    /// the boot CPU's whole core stays for housekeeping, or, on a machine
    /// of one core, the boot CPU alone.
    pub fn isolatable(&self, cpus: &[u32]) -> Vec<u32> {
        let Some(&boot) = self.online.first() else {
            return Vec::new();
        };
        let all = self.online.iter().all(|c| cpus.contains(c));
        if !all {
            return cpus.iter().copied().filter(|&c| c != boot).collect();
        }
        let core: Vec<u32> = self
            .topo(boot)
            .map(|t| t.siblings.clone())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| vec![boot]);
        let rest: Vec<u32> = self
            .online
            .iter()
            .copied()
            .filter(|c| !core.contains(c))
            .collect();
        if rest.is_empty() {
            self.online.iter().copied().filter(|&c| c != boot).collect()
        } else {
            rest
        }
    }

    /// The boot arguments that set `cpus` apart, the one isolation advice
    /// `check` and the dashboard's findings give:
    /// `isolcpus=domain,managed_irq,L nohz_full=L rcu_nocbs=L`, with L the
    /// CPUs of `cpus` that can be set apart ([`Machine::isolatable`]) and
    /// those already isolated or tickless, which the new command line would
    /// otherwise give back. `None` when none of `cpus` can be (the boot CPU).
    pub fn isolation_args(&self, cpus: &[u32]) -> Option<String> {
        let mut l = self.isolatable(cpus);
        if l.is_empty() {
            return None;
        }
        let boot = self.online.first().copied();
        for set in [&self.sets.isolated, &self.sets.nohz_full]
            .into_iter()
            .flatten()
        {
            l.extend(set.iter().copied().filter(|c| Some(*c) != boot));
        }
        l.sort_unstable();
        l.dedup();
        let l = crate::base::cpulist::format(&l);
        Some(format!(
            "isolcpus=domain,managed_irq,{l} nohz_full={l} rcu_nocbs={l}"
        ))
    }

    /// Returns the topology of one CPU.
    pub fn topo(&self, cpu: u32) -> Option<&CpuTopology> {
        // sorted by CPU at construction: this runs per CPU per sample
        self.topology
            .binary_search_by_key(&cpu, |t| t.cpu)
            .ok()
            .map(|i| &self.topology[i])
    }

    /// Returns one CPU per package (the lowest), for package-scope counters.
    pub fn package_leaders(&self) -> Vec<u32> {
        let mut seen = BTreeMap::new();
        for t in &self.topology {
            seen.entry(t.package.unwrap_or(0)).or_insert(t.cpu);
        }
        seen.into_values().collect()
    }

    /// Tells whether the CPU runs under a hypervisor, and which one if known.
    pub fn virtualized(&self) -> Option<String> {
        self.kernel.hypervisor.clone().or_else(|| {
            self.cpuinfo
                .hypervisor
                .then(|| "a hypervisor (cpuinfo flag)".to_string())
        })
    }

    /// Returns the x86 family and model when both are known.
    pub fn family_model(&self) -> Option<(u32, u32)> {
        Some((self.cpuinfo.family?, self.cpuinfo.model?))
    }
}

fn costly_note(info: &CpuFreqInfo, ns: u64, limit: u64) -> String {
    let file = info
        .cur_path
        .as_deref()
        .and_then(|p| p.rsplit('/').next())
        .unwrap_or("scaling_cur_freq");
    format!(
        "{file} took {:.3} ms a read on cpu{} (more than {:.3} ms): not read each interval",
        ns as f64 / 1e6,
        info.cpu,
        limit as f64 / 1e6
    )
}

fn guess_online(fs: &mut Fs, cpuinfo: &CpuInfo) -> (Vec<u32>, Option<String>) {
    if let Ok(text) = fs.read(Base::Proc, "stat")
        && let Ok(stat) = crate::collect::stat::parse(text)
        && !stat.cpus.is_empty()
    {
        let cpus = stat.cpus.keys().collect();
        return (cpus, Some("online CPUs taken from /proc/stat".into()));
    }
    if let Ok(text) = fs.read(Base::Proc, "interrupts")
        && let Ok(table) = crate::collect::interrupts::parse_interrupts(text)
        && !table.cpus.is_empty()
    {
        return (
            table.cpus,
            Some("online CPUs taken from the /proc/interrupts header".into()),
        );
    }
    if !cpuinfo.processors.is_empty() {
        return (
            cpuinfo.processors.clone(),
            Some("online CPUs taken from /proc/cpuinfo".into()),
        );
    }
    (Vec::new(), Some("no online CPU list could be read".into()))
}

/// Fills package, core and sibling lists from `/proc/cpuinfo` (`physical
/// id`, `core id`) for CPUs whose sysfs topology is absent: old kernels and
/// dumps that kept only /proc. Siblings are the CPUs with the same package
/// and core id. Returns what was done, or why ids stay unknown.
fn topology_from_cpuinfo(topology: &mut [CpuTopology], info: &CpuInfo) -> Option<String> {
    let bare = |t: &CpuTopology| t.package.is_none() && t.core.is_none() && t.siblings.is_empty();
    let missing = topology.iter().filter(|t| bare(t)).count();
    if missing == 0 {
        return None;
    }
    let mut filled = 0;
    let mut cores: BTreeMap<(u32, u32), Vec<u32>> = BTreeMap::new();
    for t in topology.iter_mut().filter(|t| bare(t)) {
        let Some(place) = info
            .places
            .get(&t.cpu)
            .filter(|p| p.physical_id.is_some() || p.core_id.is_some())
        else {
            continue;
        };
        t.package = place.physical_id;
        t.core = place.core_id;
        if let (Some(p), Some(c)) = (place.physical_id, place.core_id) {
            cores.entry((p, c)).or_default().push(t.cpu);
        }
        filled += 1;
    }
    // topology is sorted by CPU, so each sibling list is too
    for t in topology.iter_mut() {
        if let (Some(p), Some(c)) = (t.package, t.core)
            && t.siblings.is_empty()
            && let Some(list) = cores.get(&(p, c))
        {
            t.siblings.clone_from(list);
        }
    }
    Some(if filled == 0 {
        format!("no sysfs topology for {missing} CPUs and no physical/core id in /proc/cpuinfo")
    } else if filled < missing {
        format!(
            "package and core of {filled} of {missing} CPUs from /proc/cpuinfo (no sysfs topology)"
        )
    } else {
        "package and core from /proc/cpuinfo (no sysfs topology)".into()
    })
}

/// Whether SMT is on, and how that is known: the kernel's `smt/active`,
/// else the sibling lists, else x86 cpuinfo's `siblings` (threads per
/// package) against `cpu cores`. With none of them it is unknown: a CPU
/// list without sibling lists says nothing about SMT.
fn smt_of(
    active: Option<bool>,
    topology: &[CpuTopology],
    info: &CpuInfo,
) -> (Option<bool>, String) {
    if let Some(on) = active {
        return (Some(on), "sysfs smt/active".into());
    }
    if topology.iter().any(|t| !t.siblings.is_empty()) {
        let on = topology.iter().any(|t| t.siblings.len() > 1);
        return (Some(on), "sibling lists".into());
    }
    let counts = info
        .places
        .values()
        .find_map(|p| Some((p.siblings?, p.cpu_cores?)));
    if let Some((threads, cores)) = counts
        && cores > 0
        && threads >= cores
    {
        return (
            Some(threads > cores),
            format!("/proc/cpuinfo: {threads} siblings, {cores} cores per package"),
        );
    }
    (
        None,
        "unknown: no smt/active, no sibling lists, no siblings/cpu cores in /proc/cpuinfo".into(),
    )
}

/// Base frequency: cpufreq `base_frequency` (`intel_pstate`), else the x86
/// nominal frequency in the model name ("@ 2.30GHz"), else None. Without
/// cpufreq, /proc/cpuinfo's `cpu MHz` is the one rate the kernel measured
/// (the TSC's, the same on every CPU): where the model name's nominal is
/// that rate rounded (2.80GHz for 2793.4 MHz), the measured figure is the
/// base, so the header says what every clock and scale shows.
fn base_mhz(cpufreq: &[CpuFreqInfo], info: &CpuInfo) -> Option<(f64, String)> {
    if let Some(k) = cpufreq.iter().find_map(|c| c.base_khz) {
        return Some((k as f64 / 1000.0, "cpufreq base_frequency".into()));
    }
    let name = info.model_name.as_deref()?;
    let at = name.rfind('@')?;
    let ghz: f64 = name[at + 1..]
        .trim()
        .trim_end_matches("GHz")
        .trim()
        .parse()
        .ok()?;
    if !(ghz > 0.0 && ghz < 20.0) {
        return None;
    }
    let nominal = ghz * 1000.0;
    let mut rates = info.mhz.values().copied();
    let fixed = rates
        .next()
        .filter(|&first| cpufreq.is_empty() && info.mhz.values().all(|&m| (m - first).abs() < 0.5));
    match fixed {
        // the label's rounding: within a per cent of what it names
        Some(m) if (m - nominal).abs() <= nominal * 0.01 => Some((
            m,
            format!(
                "/proc/cpuinfo cpu MHz, the measured rate the model name's @ {ghz:.2}GHz rounds"
            ),
        )),
        _ => Some((nominal, "model name".into())),
    }
}

/// Returns the x86 C-state and RAPL register tables for this machine.
pub fn x86_tables(m: &Machine) -> (x86::CstateRegs, Option<x86::RaplRegs>) {
    let (family, model) = m.family_model().unwrap_or((0, 0));
    (
        x86::cstate_regs(m.vendor, family, model),
        x86::rapl_regs(m.vendor, family, model),
    )
}

/// The registers the live side tries on the first CPU: the counters and
/// sensors of the vendor, and the C-state and RAPL tables of the model.
fn msr_candidates(m: &Machine) -> Vec<u32> {
    let (cst, rapl) = x86_tables(m);
    let mut cand = vec![
        x86::MSR_TSC,
        x86::MSR_APERF,
        x86::MSR_MPERF,
        x86::MSR_SMI_COUNT,
        x86::MSR_THERM_STATUS,
        x86::MSR_TEMPERATURE_TARGET,
        x86::MSR_PACKAGE_THERM_STATUS,
    ];
    if m.vendor != crate::base::Vendor::Intel {
        // SMI count, thermal status and TjMax are Intel registers
        cand.retain(|r| {
            ![
                x86::MSR_SMI_COUNT,
                x86::MSR_THERM_STATUS,
                x86::MSR_TEMPERATURE_TARGET,
                x86::MSR_PACKAGE_THERM_STATUS,
            ]
            .contains(r)
        });
    }
    cand.extend(cst.core.iter().map(|(_, r)| *r));
    cand.extend(cst.pkg.iter().map(|(_, r)| *r));
    if let Some(r) = rapl {
        cand.push(r.unit);
        cand.extend(r.domains.iter().map(|(_, r)| *r));
    }
    cand
}

impl Machine {
    /// What the live hardware opens on this machine: perf groups on the
    /// online CPUs and package leaders, the MSRs worth probing.
    pub fn hw_targets(&self) -> crate::os::hw::HwTargets {
        crate::os::hw::HwTargets {
            online: self.online.clone(),
            leaders: self.package_leaders(),
            vendor: self.vendor,
            msr_candidates: msr_candidates(self),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Machine, base_mhz};
    use crate::base::Cause;
    use crate::collect::cpuinfo::CpuInfo;
    use crate::os::fs::{Fs, Roots};

    #[test]
    fn missing_cpufreq_and_cpuidle_say_the_kernel_lacks_them() {
        // a guest's sysfs: two CPUs online, neither cpufreq nor cpuidle
        let dir = tempfile::tempdir().unwrap();
        let cpu = dir.path().join("sys/devices/system/cpu");
        for c in ["cpu0", "cpu1"] {
            std::fs::create_dir_all(cpu.join(c)).unwrap();
        }
        std::fs::write(cpu.join("online"), "0-1\n").unwrap();
        let m = Machine::read(&mut Fs::new(Roots::under(dir.path())));
        let freq = m.cpufreq_missing.unwrap();
        assert_eq!(freq.cause, Cause::KernelLacks);
        assert!(freq.detail().starts_with("no cpufreq: no "), "{freq}");
        let idle = m.idle_missing.unwrap();
        assert_eq!(idle.cause, Cause::KernelLacks);
        assert!(
            idle.detail().starts_with("no cpuidle states: no "),
            "{idle}"
        );
        // one CPU with cpufreq: the other's reason says it is some CPUs
        let policy = cpu.join("cpu0/cpufreq");
        std::fs::create_dir_all(&policy).unwrap();
        std::fs::write(policy.join("scaling_governor"), "performance\n").unwrap();
        let m = Machine::read(&mut Fs::new(Roots::under(dir.path())));
        let freq = m.cpufreq_missing.unwrap();
        assert_eq!(freq.cause, Cause::KernelLacks);
        assert!(
            freq.detail().starts_with("on some CPUs: no cpufreq: no "),
            "{freq}"
        );
    }

    fn info(name: &str, mhz: &[f64]) -> CpuInfo {
        CpuInfo {
            model_name: Some(name.into()),
            mhz: mhz
                .iter()
                .copied()
                .enumerate()
                .map(|(i, m)| (i as u32, m))
                .collect(),
            ..CpuInfo::default()
        }
    }

    #[test]
    fn without_cpufreq_the_base_is_the_rate_the_model_name_rounds() {
        // a guest: no cpufreq, every CPU's cpu MHz the TSC's 2793.436
        let vm = info("Intel(R) Xeon(R) CPU @ 2.80GHz", &[2793.436, 2793.436]);
        let (mhz, from) = base_mhz(&[], &vm).unwrap();
        assert!((mhz - 2793.436).abs() < 1e-9, "{mhz}");
        assert!(from.starts_with("/proc/cpuinfo cpu MHz"), "{from}");
        // a rate the label does not round to (cpufreq-less, but throttled
        // or another clock): the label stays
        let far = info("Intel(R) Xeon(R) CPU @ 2.80GHz", &[2400.0, 2400.0]);
        assert_eq!(base_mhz(&[], &far), Some((2800.0, "model name".into())));
        // rates that differ between CPUs are measurements, not the TSC
        let moving = info("Intel(R) Xeon(R) CPU @ 2.80GHz", &[2793.4, 2801.0]);
        assert_eq!(base_mhz(&[], &moving), Some((2800.0, "model name".into())));
        assert_eq!(base_mhz(&[], &info("AMD EPYC", &[2445.4])), None);
    }
}
