//! Takes snapshots: reads every kernel file and counter of one instant,
//! from the live machine or from one instant of a captured tree.

use crate::os::hw::Hardware;
use std::collections::BTreeMap;

use crate::base::counter::Width;
use crate::base::cpu_map::CpuMap;
use crate::base::{Cause, Unavailable};
use crate::collect::cpuidle::IdleCounters;
use crate::collect::hwmon::ThrottleCounts;
use crate::collect::interrupts::IrqTable;
use crate::collect::{cpuidle, hwmon, interrupts, powercap, schedstat, softirqs, stat, x86};
use crate::model::interval::FreqSource;
use crate::model::machine::{self, Machine};
use crate::model::snapshot::{CpuFiles, Energy, PkgHw, Rung, Snapshot};
use crate::os::fs::{Base, FileId, Fs};
use crate::os::perf::PerfEvent;
use crate::sample::ladder;

/// Reads snapshots through `Fs` and a `Hardware`.
pub struct Sampler<H: Hardware> {
    /// Kernel file reader.
    pub fs: Fs,
    /// Clock, perf and MSR access.
    pub hw: H,
    /// Machine facts, read at start and again when the online set changes.
    pub machine: Machine,
    chosen: ladder::Chosen,
    plan: MsrPlan,
    files: FilePlan,
    spare: Spare,
    /// Samples taken, which picks the cpuidle round.
    samples: u64,
    /// Most per-CPU counter files one sample reads; see [`Self::rounds`].
    /// `None`: [`default_budget`] of the machine.
    budget: Option<usize>,
    /// Each CPU's last cpuidle read, to skip states whose `usage` held.
    idle_last: CpuMap<Vec<IdleCounters>>,
    /// CPUs read every sample whatever the round (the watched ones), sorted.
    always: Vec<u32>,
    /// The CPUs whose per-CPU counter files the last sample read.
    last_round: Vec<u32>,
    /// Joules per count of the perf energy events that have one: fixed
    /// once the events are open, so looked up per plan, not per sample.
    energy_scales: Vec<(PerfEvent, f64)>,
    /// CPUs read hands-off (the watched ones, on live hardware), sorted:
    /// no perf group read, no MSR read, no `scaling_cur_freq` there.
    hands_off: Vec<u32>,
}

/// The least default budget: 448 files, 0.6–1.1 ms of reads, so that one
/// sample and its delta stay within 1 ms on a 64-CPU machine.
pub const DEFAULT_BUDGET_MIN: usize = 448;

/// The budget when `--budget` is not given: [`DEFAULT_BUDGET_MIN`] files,
/// or one a CPU on a machine with more CPUs than that. A server with four
/// idle states (17 files a CPU) is read whole up to 26 CPUs, a VM with two
/// (8) up to 56; a 64-CPU server takes three rounds and a 1024-CPU one
/// seventeen (about 1.5 ms of its 4 ms sample).
pub fn default_budget(cpus: usize) -> usize {
    DEFAULT_BUDGET_MIN.max(cpus)
}

/// The kernel files read every interval, registered with `Fs` once per
/// plan so that each read is one `pread` on a kept-open file.
#[derive(Debug)]
struct FilePlan {
    stat: FileId,
    interrupts: FileId,
    softirqs: FileId,
    schedstat: FileId,
    cpus: Vec<CpuFileIds>,
    powercap: Vec<(String, FileId)>,
    hwmon: Vec<(String, FileId)>,
    /// Sum of the per-CPU counter files read in rounds, over every CPU.
    round_files: usize,
}

#[derive(Debug)]
struct CpuFileIds {
    cpu: u32,
    idle: Option<Vec<cpuidle::StateFiles>>,
    cur_khz: Option<FileId>,
    throttle_core: Option<FileId>,
    /// Only on the package's first CPU, the one the package rate reads.
    throttle_pkg: Option<FileId>,
}

impl FilePlan {
    /// The /proc files alone: what a sampler reads before its first plan.
    fn proc_only(fs: &mut Fs) -> Self {
        FilePlan {
            stat: fs.file_id(Base::Proc, "stat"),
            interrupts: fs.file_id(Base::Proc, "interrupts"),
            softirqs: fs.file_id(Base::Proc, "softirqs"),
            schedstat: fs.file_id(Base::Proc, "schedstat"),
            cpus: Vec::new(),
            powercap: Vec::new(),
            hwmon: Vec::new(),
            round_files: 0,
        }
    }

    fn new(fs: &mut Fs, m: &Machine, freq: Option<FreqSource>, powercap: bool) -> Self {
        let want_cur = matches!(freq, Some(FreqSource::Cpufreq));
        let leaders = m.package_leaders();
        let cpus: Vec<CpuFileIds> = m
            .online
            .iter()
            .map(|&cpu| {
                let idle = m
                    .idle_states
                    .get(&cpu)
                    .map(|states| cpuidle::state_files(fs, cpu, states));
                let cur_khz = want_cur
                    .then(|| m.cpufreq.iter().find(|c| c.cpu == cpu))
                    .flatten()
                    .and_then(|info| info.cur_path.as_deref())
                    .map(|p| fs.file_id(Base::Sys, p));
                let (throttle_core, throttle_pkg) = if m.has_throttle {
                    let t = hwmon::throttle_files(fs, cpu);
                    (Some(t.core), leaders.contains(&cpu).then_some(t.package))
                } else {
                    (None, None)
                };
                CpuFileIds {
                    cpu,
                    idle,
                    cur_khz,
                    throttle_core,
                    throttle_pkg,
                }
            })
            .collect();
        let powercap = if powercap {
            m.rapl_zones
                .iter()
                .map(|z| (z.id.clone(), powercap::energy_file(fs, z)))
                .collect()
        } else {
            Vec::new()
        };
        let hwmon = m
            .hwmon
            .iter()
            .map(|s| {
                (
                    format!("{}/temp{}", s.dir, s.index),
                    fs.file_id(Base::Sys, &s.path),
                )
            })
            .collect();
        let round_files = cpus
            .iter()
            .map(|c| {
                c.idle.as_deref().map_or(0, cpuidle::file_count)
                    + usize::from(c.throttle_core.is_some())
            })
            .sum();
        FilePlan {
            cpus,
            powercap,
            hwmon,
            round_files,
            ..FilePlan::proc_only(fs)
        }
    }
}

/// Tables of a snapshot no longer needed, refilled in place by the next
/// sample: /proc/interrupts on 1000+ CPUs is megabytes of rows.
#[derive(Debug, Default)]
struct Spare {
    interrupts: Option<IrqTable>,
    softirqs: Option<IrqTable>,
}

/// Registers to read each interval, decided once from the probe.
#[derive(Debug, Default)]
struct MsrPlan {
    per_cpu: Vec<(&'static str, u32)>,
    per_pkg: Vec<(&'static str, u32)>,
    /// Whether powercap is the energy rung (no perf power PMU, no RAPL MSRs).
    powercap: bool,
    /// RAPL registers and the raw unit MSR, when energy comes from MSRs.
    rapl: Option<(x86::RaplRegs, u64)>,
    tjmax: Option<u32>,
}

impl<H: Hardware> Sampler<H> {
    /// Reads the machine facts and decides what to read each interval.
    pub fn new(mut fs: Fs, hw: H) -> Self {
        let machine = Machine::read(&mut fs);
        Self::with_machine(fs, machine, hw)
    }

    /// Starts from facts already read (the hardware probe needs them first).
    pub fn with_machine(mut fs: Fs, machine: Machine, hw: H) -> Self {
        // `plan` below registers the rest
        let files = FilePlan::proc_only(&mut fs);
        let mut s = Sampler {
            fs,
            hw,
            machine,
            chosen: ladder::Chosen::default(),
            plan: MsrPlan::default(),
            files,
            spare: Spare::default(),
            samples: 0,
            budget: None,
            idle_last: CpuMap::new(),
            always: Vec::new(),
            last_round: Vec::new(),
            energy_scales: Vec::new(),
            hands_off: Vec::new(),
        };
        s.plan();
        s
    }

    /// Sets the most per-CPU counter files (cpuidle `time`, `usage`,
    /// `above`, `below`; `core_throttle_count`) one sample reads, at least
    /// one. A machine with more reads them in rounds: round `r` of `n` reads
    /// the CPUs at positions `r, r+n, …` of the online list, so each CPU is
    /// read every `n`th sample and its C-state and throttle figures cover
    /// `n` intervals (the engine computes them).
    ///
    /// Each file is one `pread` of 1–2.5 µs, as many as 17 a CPU: reading
    /// them all each second on 1024 CPUs would cost 20–40 ms a sample.
    pub fn set_budget(&mut self, files: usize) {
        self.budget = Some(files.max(1));
    }

    /// How many rounds the per-CPU counter files are read in (1: all of
    /// them every sample); at most one a CPU, since a round reads whole
    /// CPUs, so a budget below one CPU's files still reads one CPU a sample
    /// rather than leaving samples that read none.
    pub fn rounds(&self) -> usize {
        let most = self.files.cpus.len().max(1);
        self.files
            .round_files
            .div_ceil(self.budget())
            .clamp(1, most)
    }

    /// Reads these CPUs' per-CPU files every sample, whatever the round:
    /// the benchmark CPUs a user watches keep one-interval figures.
    pub fn set_always(&mut self, cpus: &[u32]) {
        self.always = cpus.to_vec();
        self.always.sort_unstable();
        self.always.dedup();
    }

    /// Reads these CPUs hands-off from the next sample on: nothing that
    /// would interrupt them (a cross-CPU perf read or MSR read is an IPI;
    /// some cpufreq drivers IPI for `scaling_cur_freq`). Their figures from
    /// those sources become unknown, or come from what the CPU writes
    /// itself (`source::switch_ring`). A capture's hardware interrupts
    /// nobody and keeps its figures.
    pub fn set_hands_off(&mut self, cpus: &[u32]) {
        let mut v = cpus.to_vec();
        v.sort_unstable();
        v.dedup();
        self.hands_off = if self.hw.set_hands_off(&v) {
            v
        } else {
            Vec::new()
        };
    }

    /// The CPUs read hands-off, sorted.
    pub fn hands_off(&self) -> &[u32] {
        &self.hands_off
    }

    /// Returns the per-sample file budget: the one set, else the default
    /// for the machine's online CPUs.
    pub fn budget(&self) -> usize {
        self.budget
            .unwrap_or_else(|| default_budget(self.machine.online.len()))
    }

    /// Returns the per-CPU counter files a CPU has (the mean over CPUs,
    /// rounded up).
    pub fn files_per_cpu(&self) -> usize {
        self.files
            .round_files
            .div_ceil(self.files.cpus.len().max(1))
    }

    /// The CPUs whose per-CPU counter files the last sample read.
    pub fn last_round(&self) -> &[u32] {
        &self.last_round
    }

    /// Returns the frequency source in use.
    pub fn freq_source(&self) -> Option<FreqSource> {
        self.chosen.freq
    }

    /// Returns the rung chosen for each metric with more than one source.
    pub fn chosen(&self) -> ladder::Chosen {
        self.chosen
    }

    fn plan(&mut self) {
        let probe = self.hw.probe().clone();
        let freq = ladder::freq_source(&self.machine, &probe);
        let mut chosen = ladder::Chosen {
            freq,
            ..ladder::Chosen::default()
        };
        // a guest may expose only energy-psys: any energy event is the rung
        let perf_energy = PerfEvent::ALL
            .iter()
            .any(|e| e.is_energy() && probe.perf_any(*e));
        let perf_core = probe.perf_any(PerfEvent::CoreC6) || probe.perf_any(PerfEvent::CoreC3);
        let perf_pkg = probe.perf_any(PerfEvent::PkgC2) || probe.perf_any(PerfEvent::PkgC6);
        if perf_core || perf_pkg {
            chosen.hw_cstates = Some(Rung::Perf);
        }
        if probe.perf_any(PerfEvent::Smi) {
            chosen.smi = Some(Rung::Perf);
        }
        if perf_energy {
            chosen.power = Some(Rung::Perf);
        }
        let mut plan = MsrPlan::default();
        if probe.msr.is_ok() {
            let (cst, rapl) = machine::x86_tables(&self.machine);
            let want = |reg: u32| probe.msr_has(reg);
            if freq == Some(FreqSource::DevMsr) {
                plan.per_cpu.push(("aperf", x86::MSR_APERF));
                plan.per_cpu.push(("mperf", x86::MSR_MPERF));
                if want(x86::MSR_TSC) {
                    plan.per_cpu.push(("tsc", x86::MSR_TSC));
                }
            }
            if chosen.smi.is_none() && want(x86::MSR_SMI_COUNT) {
                plan.per_cpu.push(("smi", x86::MSR_SMI_COUNT));
                chosen.smi = Some(Rung::Msr);
            }
            let n = plan.per_cpu.len() + plan.per_pkg.len();
            if !perf_core {
                plan.per_cpu
                    .extend(cst.core.iter().filter(|(_, r)| want(*r)).copied());
            }
            if !perf_pkg {
                plan.per_pkg
                    .extend(cst.pkg.iter().filter(|(_, r)| want(*r)).copied());
            }
            if chosen.hw_cstates.is_none() && plan.per_cpu.len() + plan.per_pkg.len() > n {
                chosen.hw_cstates = Some(Rung::Msr);
            }
            plan.tjmax = self
                .read_msr_first(x86::MSR_TEMPERATURE_TARGET)
                .and_then(x86::tjmax);
            if plan.tjmax.is_some() && want(x86::MSR_THERM_STATUS) {
                plan.per_cpu.push(("therm", x86::MSR_THERM_STATUS));
                if want(x86::MSR_PACKAGE_THERM_STATUS) {
                    plan.per_pkg.push(("therm", x86::MSR_PACKAGE_THERM_STATUS));
                }
                chosen.temperature = Some(Rung::Msr);
            }
            if let (Some(r), false) = (rapl, perf_energy)
                && let (true, Some(unit)) = (want(r.unit), self.read_msr_first(r.unit))
            {
                for (name, reg) in r.domains.iter().copied().filter(|(_, r)| want(*r)) {
                    if r.per_core.contains(&name) {
                        plan.per_cpu.push(("energy-core", reg));
                    } else {
                        plan.per_pkg.push((name, reg));
                    }
                }
                plan.rapl = Some((r, unit));
                chosen.power = Some(Rung::Msr);
            }
        }
        if chosen.temperature.is_none() && !self.machine.hwmon.is_empty() {
            chosen.temperature = Some(Rung::Kernel);
        }
        // powercap is the last energy rung: never read it beside a better one
        plan.powercap = chosen.power.is_none();
        if plan.powercap && !self.machine.rapl_zones.is_empty() {
            chosen.power = Some(Rung::Kernel);
        }
        self.files = FilePlan::new(&mut self.fs, &self.machine, freq, plan.powercap);
        self.idle_last.clear();
        self.plan = plan;
        self.chosen = chosen;
        self.energy_scales = ENERGY_EVENTS
            .iter()
            .filter_map(|&ev| Some((ev, self.hw.energy_scale(ev)?)))
            .collect();
    }

    fn read_msr_first(&mut self, reg: u32) -> Option<u64> {
        let cpu = *self.machine.online.first()?;
        self.hw.msr_read(cpu, reg)?.ok()
    }

    /// Reads one snapshot. Never fails: what cannot be read is recorded as
    /// missing in the snapshot.
    pub fn sample(&mut self) -> Snapshot {
        let time = self.hw.now();
        let online = crate::collect::topology::online_cpus(&mut self.fs)
            .ok()
            .filter(|c| !c.is_empty())
            .unwrap_or_else(|| self.machine.online.clone());
        if online != self.machine.online {
            self.machine = Machine::read(&mut self.fs);
            self.plan();
        }
        let fs = &mut self.fs;
        let stat = fs
            .read_id(self.files.stat)
            .map_err(Unavailable::from)
            .and_then(|t| stat::parse(t).map_err(Unavailable::from));
        let mut table = self.spare.interrupts.take().unwrap_or_default();
        let interrupts = fs
            .read_id(self.files.interrupts)
            .map_err(Unavailable::from)
            .and_then(|t| {
                interrupts::parse_interrupts_into(t, &mut table).map_err(Unavailable::from)
            })
            .map(|()| table);
        let mut table = self.spare.softirqs.take().unwrap_or_default();
        let softirqs = fs
            .read_id(self.files.softirqs)
            .map_err(Unavailable::from)
            .and_then(|t| softirqs::parse_softirqs_into(t, &mut table).map_err(Unavailable::from))
            .map(|()| table);
        let schedstat = read_schedstat(fs, self.files.schedstat);
        let files = self.read_cpu_files();
        self.samples += 1;
        let powercap_uj = self.read_powercap();
        let hwmon_mc = self.read_hwmon();
        let mut snap = Snapshot {
            time,
            online,
            stat,
            interrupts,
            softirqs,
            schedstat,
            csw: CpuMap::new(),
            migrations: CpuMap::new(),
            switches_by_clock: false,
            hw: CpuMap::new(),
            pkg: BTreeMap::new(),
            files,
            powercap_uj,
            hwmon_mc,
        };
        self.read_perf(&mut snap);
        self.read_msrs(&mut snap);
        snap
    }

    /// Takes back a snapshot the caller is done with, to reuse its tables.
    pub fn recycle(&mut self, old: Snapshot) {
        self.spare.interrupts = old.interrupts.ok();
        self.spare.softirqs = old.softirqs.ok();
    }

    fn read_cpu_files(&mut self) -> CpuMap<CpuFiles> {
        let rounds = self.rounds();
        let round = usize::try_from(self.samples % rounds as u64).unwrap_or(0);
        let fs = &mut self.fs;
        let mut out = CpuMap::new();
        self.last_round.clear();
        let hands_off = &self.hands_off;
        for (i, ids) in self.files.cpus.iter().enumerate() {
            let in_round = i % rounds == round || self.always.binary_search(&ids.cpu).is_ok();
            if in_round {
                self.last_round.push(ids.cpu);
            }
            let idle = match &ids.idle {
                Some(files) if in_round => {
                    let last = self.idle_last.get(&ids.cpu).map(Vec::as_slice);
                    let read = cpuidle::read_state_files(fs, files, last).ok();
                    match &read {
                        // in place: no allocation once every CPU has been read
                        Some(v) => self.idle_last.get_or_default(ids.cpu).clone_from(v),
                        None => drop(self.idle_last.remove(&ids.cpu)),
                    }
                    read
                }
                _ => None,
            };
            let mut f = CpuFiles {
                idle,
                cur_khz: ids
                    .cur_khz
                    .filter(|_| hands_off.binary_search(&ids.cpu).is_err())
                    .and_then(|id| fs.read_u64_id(id).ok()),
                throttle: None,
            };
            if ids.throttle_core.is_some() || ids.throttle_pkg.is_some() {
                let t = ThrottleCounts {
                    core: ids
                        .throttle_core
                        .filter(|_| in_round)
                        .and_then(|id| fs.read_u64_id(id).ok()),
                    package: ids.throttle_pkg.and_then(|id| fs.read_u64_id(id).ok()),
                };
                if t.core.is_some() || t.package.is_some() {
                    f.throttle = Some(t);
                }
            }
            out.insert(ids.cpu, f);
        }
        out
    }

    fn read_powercap(&mut self) -> BTreeMap<String, u64> {
        let fs = &mut self.fs;
        self.files
            .powercap
            .iter()
            .filter_map(|(zone, id)| Some((zone.clone(), fs.read_u64_id(*id).ok()?)))
            .collect()
    }

    fn read_hwmon(&mut self) -> BTreeMap<String, i64> {
        let fs = &mut self.fs;
        self.files
            .hwmon
            .iter()
            .filter_map(|(key, id)| Some((key.clone(), fs.read_i64_id(*id).ok()?)))
            .collect()
    }

    fn read_perf(&mut self, snap: &mut Snapshot) {
        let leaders = self.machine.package_leaders();
        let scales = &self.energy_scales;
        for pc in self.hw.perf() {
            let hw = snap.hw.get_or_default(pc.cpu);
            hw.perf_time = Some((pc.time_enabled_ns, pc.time_running_ns));
            let pkg_id = self
                .machine
                .topo(pc.cpu)
                .and_then(|t| t.package)
                .unwrap_or(0);
            for &(ev, v) in &pc.values {
                match ev {
                    PerfEvent::ContextSwitches => {
                        snap.csw.insert(pc.cpu, v);
                    }
                    PerfEvent::Migrations => {
                        snap.migrations.insert(pc.cpu, v);
                    }
                    PerfEvent::Aperf => hw.aperf = Some(v),
                    PerfEvent::Mperf => hw.mperf = Some(v),
                    PerfEvent::Tsc => hw.tsc = Some(v),
                    PerfEvent::Smi => hw.smi = Some(v),
                    PerfEvent::Instructions => hw.instructions = Some(v),
                    PerfEvent::Cycles => hw.cycles = Some(v),
                    PerfEvent::CoreC1
                    | PerfEvent::CoreC3
                    | PerfEvent::CoreC6
                    | PerfEvent::CoreC7 => {
                        hw.cstates.push((cstate_label(ev), v));
                    }
                    PerfEvent::PkgC2
                    | PerfEvent::PkgC3
                    | PerfEvent::PkgC6
                    | PerfEvent::PkgC7
                    | PerfEvent::PkgC8
                    | PerfEvent::PkgC9
                    | PerfEvent::PkgC10 => {
                        if leaders.contains(&pc.cpu) {
                            let p = pkg_entry(&mut snap.pkg, pkg_id);
                            p.cstates.push((cstate_label(ev), v));
                        }
                    }
                    PerfEvent::EnergyPkg
                    | PerfEvent::EnergyCores
                    | PerfEvent::EnergyRam
                    | PerfEvent::EnergyGpu
                    | PerfEvent::EnergyPsys => {
                        // perf accumulates RAPL in 64 bits in the kernel
                        let Some(&(_, scale)) = scales.iter().find(|(e, _)| *e == ev) else {
                            continue;
                        };
                        let p = pkg_entry(&mut snap.pkg, pkg_id);
                        p.energy.push(Energy {
                            domain: energy_domain(ev),
                            raw: v,
                            joules_per_count: scale,
                            width: Width::Bits64,
                        });
                    }
                }
            }
        }
    }

    fn read_msrs(&mut self, snap: &mut Snapshot) {
        if self.plan.per_cpu.is_empty() && self.plan.per_pkg.is_empty() {
            return;
        }
        let (plan, msr) = (&self.plan, &mut self.hw);
        let leaders = self.machine.package_leaders();
        for &cpu in &snap.online {
            if self.hands_off.binary_search(&cpu).is_ok() {
                // rdmsr_on_cpu is an IPI: unknown, not read
                continue;
            }
            let hw = snap.hw.get_or_default(cpu);
            for &(name, reg) in &plan.per_cpu {
                let Some(Ok(v)) = msr.msr_read(cpu, reg) else {
                    continue;
                };
                match name {
                    "aperf" => hw.aperf = Some(v),
                    "mperf" => hw.mperf = Some(v),
                    "tsc" => hw.tsc = Some(v),
                    "smi" => hw.smi = Some(v & 0xFFFF_FFFF),
                    "therm" => {
                        hw.temp_c = plan
                            .tjmax
                            .and_then(|tj| x86::decode_therm_status(v, tj).temp_c.map(f64::from));
                    }
                    "energy-core" => {
                        if let Some((r, unit)) = &plan.rapl {
                            let unit = r.domain_unit_joules("core", *unit);
                            hw.energy.push(Energy {
                                domain: "core",
                                raw: v & 0xFFFF_FFFF,
                                joules_per_count: unit,
                                width: Width::Bits(32),
                            });
                        }
                    }
                    _ => hw.cstates.push((name, v)),
                }
            }
            if leaders.contains(&cpu) {
                let pkg = self.machine.topo(cpu).and_then(|t| t.package);
                let p = pkg_entry(&mut snap.pkg, pkg.unwrap_or(0));
                for &(name, reg) in &plan.per_pkg {
                    let Some(Ok(v)) = msr.msr_read(cpu, reg) else {
                        continue;
                    };
                    if name == "therm" {
                        p.temp_c = plan
                            .tjmax
                            .and_then(|tj| x86::decode_therm_status(v, tj).temp_c.map(f64::from));
                    } else if name.starts_with("PC") {
                        p.cstates.push((name, v));
                    } else if let Some((r, unit)) = &plan.rapl {
                        let unit = r.domain_unit_joules(name, *unit);
                        p.energy.push(Energy {
                            domain: name,
                            raw: v & 0xFFFF_FFFF,
                            joules_per_count: unit,
                            width: Width::Bits(32),
                        });
                    }
                }
            }
        }
    }
}

/// Reads `/proc/schedstat`: one file for every CPU, read by noisetop's own
/// thread without a lock or an IPI on the CPUs it describes. Where it is
/// absent the reason says what it takes.
fn read_schedstat(
    fs: &mut Fs,
    id: FileId,
) -> crate::model::snapshot::Reading<schedstat::SchedStat> {
    match fs.read_id(id) {
        Ok(t) => schedstat::parse(t).map_err(Unavailable::from),
        Err(crate::os::fs::ReadError::Missing(_)) => Err(Unavailable::new(
            Cause::KernelLacks,
            "no /proc/schedstat: the kernel was built without CONFIG_SCHEDSTATS (or the capture has none)",
        )),
        Err(e) => Err(e.into()),
    }
}

fn pkg_entry(map: &mut BTreeMap<u32, PkgHw>, id: u32) -> &mut PkgHw {
    map.entry(id).or_insert_with(|| PkgHw {
        package: id,
        ..PkgHw::default()
    })
}

fn cstate_label(ev: PerfEvent) -> &'static str {
    match ev {
        PerfEvent::CoreC1 => "C1",
        PerfEvent::CoreC3 => "C3",
        PerfEvent::CoreC6 => "C6",
        PerfEvent::CoreC7 => "C7",
        PerfEvent::PkgC2 => "PC2",
        PerfEvent::PkgC3 => "PC3",
        PerfEvent::PkgC6 => "PC6",
        PerfEvent::PkgC7 => "PC7",
        PerfEvent::PkgC8 => "PC8",
        PerfEvent::PkgC9 => "PC9",
        PerfEvent::PkgC10 => "PC10",
        _ => "?",
    }
}

const ENERGY_EVENTS: [PerfEvent; 5] = [
    PerfEvent::EnergyPkg,
    PerfEvent::EnergyCores,
    PerfEvent::EnergyRam,
    PerfEvent::EnergyGpu,
    PerfEvent::EnergyPsys,
];

fn energy_domain(ev: PerfEvent) -> &'static str {
    match ev {
        PerfEvent::EnergyPkg => "pkg",
        PerfEvent::EnergyCores => "cores",
        PerfEvent::EnergyRam => "ram",
        PerfEvent::EnergyGpu => "gpu",
        _ => "psys",
    }
}
