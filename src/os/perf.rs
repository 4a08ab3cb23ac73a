//! Per-CPU perf counter groups: software context switches and migrations,
//! the `msr` PMU (aperf, mperf, tsc, smi), the generic hardware events
//! `instructions` and `cycles` (the core PMU, for IPC), `cstate_core`
//! residencies, and on one CPU per package `cstate_pkg` residencies and
//! `power` (RAPL) energy. Also the text table that stores counts in a
//! captured tree.
//!
//! Reading a counter of CPU N from another CPU sends CPU N an IPI, so every
//! event of a CPU goes into one group read with one syscall per interval.
//! The kernel refuses to mix two hardware PMUs in one group; an event it
//! refuses there gets a group of its own PMU on that CPU (and a note says so).
//! Within a group the PMU events are opened before the software ones (see
//! `open_cpu`). `instructions` and `cycles` always have a group of their
//! own on each CPU: the core PMU's counters are few and shared (the NMI
//! watchdog, any other perf user), and a group the PMU cannot schedule is
//! multiplexed whole, which would take the msr and software counts with it.

use std::fmt::{self, Write as _};
use std::io;
use std::path::{Path, PathBuf};

use perf_event::events::{Dynamic, Hardware as HwEvent, Software};
use perf_event::{Builder, Counter, Group};
use serde::Serialize;

use crate::base::cpulist::{self, CpuListError};
use crate::base::{Cause, ParseError};
use crate::os::fs::{Base, Fs, ReadError};

/// One counter noisetop knows how to open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum PerfEvent {
    /// software/context-switches, per CPU, all tasks.
    ContextSwitches,
    /// software/cpu-migrations, per CPU, all tasks.
    Migrations,
    /// msr/aperf: actual cycles in C0.
    Aperf,
    /// msr/mperf: reference cycles in C0.
    Mperf,
    /// msr/tsc: time stamp counter.
    Tsc,
    /// msr/smi: SMI count (Intel).
    Smi,
    /// hardware/instructions: instructions retired (`PERF_COUNT_HW_INSTRUCTIONS`).
    Instructions,
    /// hardware/cycles: core clock cycles, not halted (`PERF_COUNT_HW_CPU_CYCLES`).
    Cycles,
    /// `cstate_core/c1-residency`.
    CoreC1,
    /// `cstate_core/c3-residency`.
    CoreC3,
    /// `cstate_core/c6-residency`.
    CoreC6,
    /// `cstate_core/c7-residency`.
    CoreC7,
    /// `cstate_pkg/c2-residency`.
    PkgC2,
    /// `cstate_pkg/c3-residency`.
    PkgC3,
    /// `cstate_pkg/c6-residency`.
    PkgC6,
    /// `cstate_pkg/c7-residency`.
    PkgC7,
    /// `cstate_pkg/c8-residency`.
    PkgC8,
    /// `cstate_pkg/c9-residency`.
    PkgC9,
    /// `cstate_pkg/c10-residency`.
    PkgC10,
    /// power/energy-pkg (RAPL package).
    EnergyPkg,
    /// power/energy-cores (RAPL PP0).
    EnergyCores,
    /// power/energy-ram (RAPL DRAM).
    EnergyRam,
    /// power/energy-gpu (RAPL PP1).
    EnergyGpu,
    /// power/energy-psys (RAPL platform).
    EnergyPsys,
}

const SOFTWARE: &str = "software";
/// perf's generic hardware events (`PERF_TYPE_HARDWARE`), counted by the
/// core PMU whatever its sysfs name (`cpu`, `cpu_core`, `armv8_pmuv3_0`).
const HARDWARE: &str = "hardware";
const MSR: &str = "msr";
const CSTATE_CORE: &str = "cstate_core";
const CSTATE_PKG: &str = "cstate_pkg";
const POWER: &str = "power";

/// Why `instructions` and `cycles` are unknown where no core PMU counts them.
pub const NO_HW_PMU_REASON: &str = "no hardware PMU: perf has no cycles/instructions here (VM?)";

/// The message for EACCES/EPERM from `perf_event_open`.
pub const PERMISSION_REASON: &str = "perf_event_open: permission denied: run as root or set kernel.perf_event_paranoid<=0 / CAP_PERFMON";

impl PerfEvent {
    /// Every event, in the order they are opened and listed.
    pub const ALL: [PerfEvent; 24] = [
        PerfEvent::ContextSwitches,
        PerfEvent::Migrations,
        PerfEvent::Aperf,
        PerfEvent::Mperf,
        PerfEvent::Tsc,
        PerfEvent::Smi,
        PerfEvent::Instructions,
        PerfEvent::Cycles,
        PerfEvent::CoreC1,
        PerfEvent::CoreC3,
        PerfEvent::CoreC6,
        PerfEvent::CoreC7,
        PerfEvent::PkgC2,
        PerfEvent::PkgC3,
        PerfEvent::PkgC6,
        PerfEvent::PkgC7,
        PerfEvent::PkgC8,
        PerfEvent::PkgC9,
        PerfEvent::PkgC10,
        PerfEvent::EnergyPkg,
        PerfEvent::EnergyCores,
        PerfEvent::EnergyRam,
        PerfEvent::EnergyGpu,
        PerfEvent::EnergyPsys,
    ];

    /// The event's name in its PMU's sysfs `events/` directory (`"c6-residency"`).
    pub fn name(self) -> &'static str {
        use PerfEvent as E;
        match self {
            E::ContextSwitches => "context-switches",
            E::Migrations => "cpu-migrations",
            E::Aperf => "aperf",
            E::Mperf => "mperf",
            E::Tsc => "tsc",
            E::Smi => "smi",
            E::Instructions => "instructions",
            E::Cycles => "cycles",
            E::CoreC1 => "c1-residency",
            E::CoreC3 | E::PkgC3 => "c3-residency",
            E::CoreC6 | E::PkgC6 => "c6-residency",
            E::CoreC7 | E::PkgC7 => "c7-residency",
            E::PkgC2 => "c2-residency",
            E::PkgC8 => "c8-residency",
            E::PkgC9 => "c9-residency",
            E::PkgC10 => "c10-residency",
            E::EnergyPkg => "energy-pkg",
            E::EnergyCores => "energy-cores",
            E::EnergyRam => "energy-ram",
            E::EnergyGpu => "energy-gpu",
            E::EnergyPsys => "energy-psys",
        }
    }

    /// The PMU the event belongs to (`"software"`, `"msr"`, `"hardware"`,
    /// `"cstate_core"`, `"cstate_pkg"`, `"power"`).
    pub fn pmu(self) -> &'static str {
        use PerfEvent as E;
        match self {
            E::ContextSwitches | E::Migrations => SOFTWARE,
            E::Aperf | E::Mperf | E::Tsc | E::Smi => MSR,
            E::Instructions | E::Cycles => HARDWARE,
            E::CoreC1 | E::CoreC3 | E::CoreC6 | E::CoreC7 => CSTATE_CORE,
            E::PkgC2 | E::PkgC3 | E::PkgC6 | E::PkgC7 | E::PkgC8 | E::PkgC9 | E::PkgC10 => {
                CSTATE_PKG
            }
            E::EnergyPkg | E::EnergyCores | E::EnergyRam | E::EnergyGpu | E::EnergyPsys => POWER,
        }
    }

    /// `pmu/name`, the unambiguous spelling used in tables (`"cstate_pkg/c6-residency"`).
    pub fn key(self) -> String {
        format!("{}/{}", self.pmu(), self.name())
    }

    /// True for events opened once per package (`cstate_pkg`, `power`).
    pub fn is_package_scope(self) -> bool {
        matches!(self.pmu(), CSTATE_PKG | POWER)
    }

    /// True for RAPL energy events, whose counts need `energy_scale`.
    pub fn is_energy(self) -> bool {
        self.pmu() == POWER
    }

    /// Parses `pmu/name`, or a bare name that only one PMU has
    /// (`"aperf"`; `"c6-residency"` is both core and package, so `None`).
    pub fn parse(s: &str) -> Option<PerfEvent> {
        let s = s.trim();
        if let Some((pmu, name)) = s.split_once('/') {
            return PerfEvent::ALL
                .into_iter()
                .find(|e| e.pmu() == pmu && e.name() == name);
        }
        let mut hits = PerfEvent::ALL.into_iter().filter(|e| e.name() == s);
        match (hits.next(), hits.next()) {
            (Some(e), None) => Some(e),
            _ => None,
        }
    }
}

impl fmt::Display for PerfEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.pmu(), self.name())
    }
}

/// Counts of one CPU's groups at one instant (raw, cumulative since open).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PerfCounts {
    /// The CPU the groups were opened on.
    pub cpu: u32,
    /// Raw counts in `PerfEvent` order; energy counts need `energy_scale`.
    pub values: Vec<(PerfEvent, u64)>,
    /// Nanoseconds the CPU's first group has been enabled.
    pub time_enabled_ns: u64,
    /// Nanoseconds it has been counting (less than enabled means multiplexed).
    pub time_running_ns: u64,
}

impl PerfCounts {
    /// The raw count of one event, if this CPU has it.
    pub fn get(&self, e: PerfEvent) -> Option<u64> {
        self.values.iter().find(|(k, _)| *k == e).map(|(_, v)| *v)
    }
}

/// How one event is built.
#[derive(Clone, Copy)]
enum Kind {
    Soft(Software),
    Hw(HwEvent),
    Pmu(Dynamic),
}

/// One perf group on one CPU and the events in it.
struct CpuGroup {
    cpu: u32,
    /// `None` for the CPU's main group, else the PMU that needed its own group.
    pmu: Option<&'static str>,
    group: Group,
    members: Vec<(PerfEvent, Counter)>,
}

impl fmt::Debug for CpuGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let events: Vec<PerfEvent> = self.members.iter().map(|(e, _)| *e).collect();
        f.debug_struct("CpuGroup")
            .field("cpu", &self.cpu)
            .field("pmu", &self.pmu)
            .field("events", &events)
            .finish_non_exhaustive()
    }
}

/// The open counter groups, one (or, where the kernel insists, a few) per CPU.
#[derive(Debug, Default)]
pub struct PerfSet {
    groups: Vec<CpuGroup>,
    scales: Vec<(PerfEvent, f64)>,
    notes: Vec<String>,
    read_errors: Vec<(u32, String)>,
    /// CPUs whose groups are never read (watched), sorted.
    hands_off: Vec<u32>,
}

/// Collects failure reasons, once per (event, reason), in the order they
/// came. Reasons name their CPU, so there can be one per CPU: a set keeps
/// the check for a repeat constant (a scan of the list made opening
/// quadratic in the CPUs, 13 s at 16 384).
#[derive(Default)]
struct Failures(
    Vec<(PerfEvent, String)>,
    std::collections::HashSet<(PerfEvent, String)>,
);

impl Failures {
    fn add(&mut self, e: PerfEvent, reason: String) {
        if self.1.insert((e, reason.clone())) {
            self.0.push((e, reason));
        }
    }
}

impl PerfSet {
    /// Opens and enables the groups (see the module doc); returns what could
    /// not be opened with a reason per event. Never panics; may be empty.
    pub fn open(
        cpus: &[u32],
        package_cpus: &[u32],
        sysfs: &Path,
    ) -> (PerfSet, Vec<(PerfEvent, String)>) {
        Self::open_but(cpus, package_cpus, sysfs, &[])
    }

    /// Opens them as [`Self::open`] does, but for the events in `counted`:
    /// those are counted elsewhere, and are neither opened nor said to
    /// have failed.
    pub fn open_but(
        cpus: &[u32],
        package_cpus: &[u32],
        sysfs: &Path,
        counted: &[PerfEvent],
    ) -> (PerfSet, Vec<(PerfEvent, String)>) {
        let devices = pmu_root(sysfs);
        let mut failed = Failures::default();
        let mut set = PerfSet::default();
        let mut kinds: Vec<(PerfEvent, Kind)> = Vec::new();
        for e in PerfEvent::ALL.into_iter().filter(|e| !counted.contains(e)) {
            match plan_event(&devices, e, package_cpus) {
                Ok((kind, scale)) => {
                    kinds.push((e, kind));
                    if let Some(s) = scale {
                        set.scales.push((e, s));
                    }
                }
                Err(reason) => failed.add(e, reason.to_string()),
            }
        }
        let sorted = |list: &[u32]| {
            let mut v = list.to_vec();
            v.sort_unstable();
            v.dedup();
            v
        };
        let (per_cpu, per_pkg) = (sorted(cpus), sorted(package_cpus));
        let all = sorted(&[cpus, package_cpus].concat());
        for cpu in all {
            let wanted: Vec<(PerfEvent, Kind)> = kinds
                .iter()
                .filter(|(e, _)| {
                    let list = if e.is_package_scope() {
                        &per_pkg
                    } else {
                        &per_cpu
                    };
                    list.binary_search(&cpu).is_ok()
                })
                .copied()
                .collect();
            set.open_cpu(cpu, &wanted, &mut failed);
        }
        (set, failed.0)
    }

    fn open_cpu(&mut self, cpu: u32, wanted: &[(PerfEvent, Kind)], failed: &mut Failures) {
        let mut main = match new_group(cpu, None) {
            Ok(g) => g,
            Err(e) => {
                for (ev, _) in wanted {
                    failed.add(*ev, open_reason(cpu, *ev, &e));
                }
                return;
            }
        };
        let mut extra: Vec<CpuGroup> = Vec::new();
        // every member opened enabled counts wherever it sits in the group
        // (see `builder`); cycles and instructions go in a group of their own
        for &(ev, kind) in wanted.iter().filter(|(e, _)| e.pmu() != HARDWARE) {
            let b = builder(kind, cpu);
            match main.group.add(&b) {
                Ok(c) => main.members.push((ev, c)),
                Err(e) if is_permission(&e) => failed.add(ev, PERMISSION_REASON.into()),
                Err(refused) => {
                    if let Err(e) = self.add_to_own_group(cpu, ev, &b, &mut extra, &refused) {
                        failed.add(ev, open_reason(cpu, ev, &e));
                    }
                }
            }
        }
        // cycles and instructions: a group of their own (see the module doc)
        let hardware: Vec<_> = wanted.iter().filter(|(e, _)| e.pmu() == HARDWARE).collect();
        if !hardware.is_empty() {
            match new_group(cpu, Some(HARDWARE)) {
                Ok(mut g) => {
                    for &&(ev, kind) in &hardware {
                        match g.group.add(&builder(kind, cpu)) {
                            Ok(c) => g.members.push((ev, c)),
                            Err(e) => failed.add(ev, open_reason(cpu, ev, &e)),
                        }
                    }
                    // IPC needs both: one alone would be read for nothing
                    if g.members.len() == hardware.len() {
                        extra.push(g);
                    } else {
                        for (ev, _) in &g.members {
                            failed.add(
                                *ev,
                                format!("cpu {cpu}: perf {ev}: left closed, its pair did not open"),
                            );
                        }
                    }
                }
                Err(e) => {
                    for &&(ev, _) in &hardware {
                        failed.add(ev, open_reason(cpu, ev, &e));
                    }
                }
            }
        }
        for mut g in std::iter::once(main).chain(extra) {
            if g.members.is_empty() {
                continue;
            }
            match g.group.enable() {
                Ok(()) => self.groups.push(g),
                Err(e) => {
                    for (ev, _) in &g.members {
                        failed.add(*ev, open_reason(cpu, *ev, &e));
                    }
                }
            }
        }
    }

    /// Puts an event the main group refused into a group of its PMU on that CPU.
    fn add_to_own_group(
        &mut self,
        cpu: u32,
        ev: PerfEvent,
        b: &Builder<'_>,
        extra: &mut Vec<CpuGroup>,
        refused: &io::Error,
    ) -> io::Result<()> {
        let pmu = ev.pmu();
        if !extra.iter().any(|g| g.pmu == Some(pmu)) {
            extra.push(new_group(cpu, Some(pmu))?);
        }
        let Some(g) = extra.iter_mut().find(|g| g.pmu == Some(pmu)) else {
            return Err(io::Error::other("group vanished"));
        };
        let counter = g.group.add(b)?;
        g.members.push((ev, counter));
        let note = format!(
            "{pmu} events have their own group per CPU (one more read each): \
             the kernel would not group them with the others ({refused})"
        );
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
        Ok(())
    }

    /// Leaves these CPUs' groups unread from now on: a read from another
    /// CPU is a function-call IPI to the CPU read (`generic_exec_single`).
    /// The groups stay open, so that a CPU watched no longer is read again
    /// without a new open (each open and close is an IPI too).
    pub fn set_hands_off(&mut self, cpus: &[u32]) {
        self.hands_off = cpus.to_vec();
        self.hands_off.sort_unstable();
        self.hands_off.dedup();
    }

    /// Reads every group once, but those of hands-off CPUs; a CPU whose
    /// read fails is left out (see `read_errors`).
    pub fn read(&mut self) -> Vec<PerfCounts> {
        self.read_errors.clear();
        let mut out: Vec<PerfCounts> = Vec::new();
        let mut bad: Vec<u32> = Vec::new();
        let hands_off = &self.hands_off;
        for g in self
            .groups
            .iter_mut()
            .filter(|g| hands_off.binary_search(&g.cpu).is_err())
        {
            let data = match g.group.read() {
                Ok(d) => d,
                Err(e) => {
                    self.read_errors
                        .push((g.cpu, format!("cpu {}: perf group read: {e}", g.cpu)));
                    bad.push(g.cpu);
                    continue;
                }
            };
            if out.last().is_none_or(|c| c.cpu != g.cpu) {
                out.push(PerfCounts {
                    cpu: g.cpu,
                    values: Vec::new(),
                    time_enabled_ns: nanos(data.time_enabled()),
                    time_running_ns: nanos(data.time_running()),
                });
            }
            let Some(counts) = out.last_mut() else {
                continue;
            };
            for (ev, counter) in &g.members {
                if let Some(entry) = data.get(counter) {
                    counts.values.push((*ev, entry.value()));
                }
            }
        }
        out.retain(|c| !bad.contains(&c.cpu));
        for c in &mut out {
            c.values.sort_by_key(|(e, _)| *e);
        }
        out
    }

    /// Why CPUs were missing from the last `read`, one line per failed group.
    pub fn read_errors(&self) -> &[(u32, String)] {
        &self.read_errors
    }

    /// Remarks from `open` that are not failures (events split into extra groups).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Every (cpu, event) that is open, sorted.
    pub fn opened(&self) -> Vec<(u32, PerfEvent)> {
        let mut v: Vec<(u32, PerfEvent)> = self
            .groups
            .iter()
            .flat_map(|g| g.members.iter().map(move |(e, _)| (g.cpu, *e)))
            .collect();
        v.sort_unstable();
        v
    }

    /// True when no counter is open.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Joules per count of an energy event, from its sysfs `.scale` file.
    pub fn energy_scale(&self, e: PerfEvent) -> Option<f64> {
        self.scales.iter().find(|(k, _)| *k == e).map(|(_, s)| *s)
    }
}

/// Why a PMU's `cpumask` gives no CPUs.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum CpumaskError {
    /// The file cannot be read (no such PMU).
    #[error(transparent)]
    Read(#[from] ReadError),
    /// It does not hold a CPU list.
    #[error("{rel}: {source}")]
    Parse {
        /// The file, relative to sysfs.
        rel: String,
        /// What is wrong with the list.
        source: CpuListError,
    },
}

/// The CPUs a package-scope PMU counts on (its sysfs `cpumask`): one per
/// package, the `package_cpus` argument of `PerfSet::open`.
pub fn pmu_cpumask(fs: &mut Fs, pmu: &str) -> Result<Vec<u32>, CpumaskError> {
    let rel = format!("bus/event_source/devices/{pmu}/cpumask");
    let text = fs.read(Base::Sys, &rel)?;
    cpulist::parse(text).map_err(|source| CpumaskError::Parse { rel, source })
}

fn nanos(d: Option<std::time::Duration>) -> u64 {
    d.map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// `<sysfs>/bus/event_source/devices`, made absolute because perf-event2
/// treats a relative PMU path as a name under the real `/sys`.
fn pmu_root(sysfs: &Path) -> PathBuf {
    let abs = std::path::absolute(sysfs).unwrap_or_else(|_| sysfs.to_path_buf());
    abs.join("bus/event_source/devices")
}

fn new_group(cpu: u32, pmu: Option<&'static str>) -> io::Result<CpuGroup> {
    let group = Group::builder()
        .one_cpu(cpu as usize)
        .any_pid()
        .include_kernel()
        .build_group()?;
    Ok(CpuGroup {
        cpu,
        pmu,
        group,
        members: Vec::new(),
    })
}

fn builder(kind: Kind, cpu: u32) -> Builder<'static> {
    let mut b = match kind {
        Kind::Soft(s) => Builder::new(s),
        Kind::Hw(h) => Builder::new(h),
        Kind::Pmu(d) => Builder::new(d),
    };
    // A member opened enabled counts from the moment its leader is
    // enabled. One opened disabled and enabled with the group afterwards
    // can stay unscheduled: the kernel enables the leader, then each
    // member, and reschedules only the member's own PMU, while the group
    // is scheduled with its leader. An msr member enabled last
    // (`{dummy, msr/tsc}`, or after the software counters) then counted
    // 0 on Linux 6.18, where `{dummy, msr/tsc, context-switches}` counted.
    b.one_cpu(cpu as usize).any_pid().enabled(true);
    match kind {
        // Software counters count nothing per CPU unless kernel mode is
        // included; a CPU's instructions and cycles are its kernel's too.
        Kind::Soft(_) | Kind::Hw(_) => b.include_kernel(),
        // msr, cstate and power PMUs reject any exclude_* bit with EINVAL.
        Kind::Pmu(_) => b.exclude_kernel(false).exclude_hv(false),
    };
    b
}

fn is_permission(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EACCES | libc::EPERM))
}

/// The user-facing reason for a failed open of `ev` on `cpu`.
fn open_reason(cpu: u32, ev: PerfEvent, e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::EACCES | libc::EPERM) => PERMISSION_REASON.into(),
        // a kernel with no core PMU driver counts software events only
        Some(libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV) if ev.pmu() == HARDWARE => {
            NO_HW_PMU_REASON.into()
        }
        Some(libc::EINVAL) => {
            format!(
                "cpu {cpu}: perf {ev}: invalid argument (CPU offline or not present, or the kernel rejects the event)"
            )
        }
        Some(libc::ENODEV) => {
            format!("cpu {cpu}: perf {ev}: no such device (CPU not covered by the PMU)")
        }
        Some(libc::ENOENT | libc::EOPNOTSUPP) => {
            format!("perf {ev}: not supported by this kernel or CPU ({e})")
        }
        Some(libc::EMFILE | libc::ENFILE) => {
            format!("cpu {cpu}: perf {ev}: out of file descriptors (raise ulimit -n)")
        }
        _ => format!("cpu {cpu}: perf {ev}: {e}"),
    }
}

/// Why an event is not tried here, found from sysfs before any open.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// No core PMU counts perf's generic hardware events.
    #[error("{NO_HW_PMU_REASON}")]
    NoCorePmu,
    /// The event's PMU is not in sysfs.
    #[error("no perf {pmu} PMU ({why})")]
    NoPmu {
        /// The PMU's sysfs name.
        pmu: &'static str,
        /// Where it is found, and where not.
        why: &'static str,
    },
    /// The PMU is there but lists no such event.
    #[error("perf {pmu} PMU has no {name} event{why}")]
    NoEvent {
        /// The PMU's sysfs name.
        pmu: &'static str,
        /// The event's name.
        name: &'static str,
        /// Where it is missing, with its leading space, or nothing.
        why: &'static str,
    },
    /// A package-scope event was asked for without a CPU of each package.
    #[error("perf {event}: no package CPU given (read it from {pmu}/cpumask)", event = .0, pmu = .0.pmu())]
    NoPackageCpu(PerfEvent),
    /// A `format/*` file of the PMU is not one perf-event2 can use.
    #[error("perf {event}: {source}")]
    Format {
        /// The event.
        event: PerfEvent,
        /// What is wrong with the format.
        source: FormatError,
    },
    /// A file perf-event2 would open to build the event is not a small
    /// regular file.
    #[error("perf {event}: {source}")]
    Description {
        /// The event.
        event: PerfEvent,
        /// Why the file was refused.
        source: ReadError,
    },
    /// perf-event2 cannot build the event from its sysfs description.
    #[error("perf {event}: cannot read its sysfs description: {source}")]
    Dynamic {
        /// The event.
        event: PerfEvent,
        /// What perf-event2 said.
        source: io::Error,
    },
    /// An energy event's `.scale` cannot be read.
    #[error("{0} (energy counts need a scale)")]
    ScaleUnreadable(ReadError),
    /// An energy event's `.scale` holds no positive number.
    #[error("{}: not a positive number: {text:?}", .path.display())]
    BadScale {
        /// The `.scale` file.
        path: PathBuf,
        /// What it holds, trimmed.
        text: String,
    },
}

impl PlanError {
    /// The kind of reason: what this kernel or CPU lacks, or a damaged tree.
    pub fn cause(&self) -> Cause {
        match self {
            PlanError::NoCorePmu | PlanError::NoPmu { .. } | PlanError::NoEvent { .. } => {
                Cause::KernelLacks
            }
            _ => Cause::Failed,
        }
    }
}

/// Why a PMU's `format/*` files were refused.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    /// The `format` directory cannot be listed.
    #[error("{}: {source}", .dir.display())]
    Unlisted {
        /// The directory.
        dir: PathBuf,
        /// What listing it said.
        source: io::Error,
    },
    /// A file does not say `config[12]:LO[-HI]` with bits below 64.
    #[error("{}: unexpected format {text:?}", .path.display())]
    Unexpected {
        /// The file.
        path: PathBuf,
        /// What it holds, trimmed.
        text: String,
    },
}

/// Decides whether an event can be tried here, reading sysfs only.
fn plan_event(
    devices: &Path,
    e: PerfEvent,
    package_cpus: &[u32],
) -> Result<(Kind, Option<f64>), PlanError> {
    match e {
        PerfEvent::ContextSwitches => return Ok((Kind::Soft(Software::CONTEXT_SWITCHES), None)),
        PerfEvent::Migrations => return Ok((Kind::Soft(Software::CPU_MIGRATIONS), None)),
        PerfEvent::Instructions | PerfEvent::Cycles => {
            availability(devices, e)?;
            let hw = if e == PerfEvent::Instructions {
                HwEvent::INSTRUCTIONS
            } else {
                HwEvent::CPU_CYCLES
            };
            return Ok((Kind::Hw(hw), None));
        }
        _ => {}
    }
    availability(devices, e)?;
    if e.is_package_scope() && package_cpus.is_empty() {
        return Err(PlanError::NoPackageCpu(e));
    }
    let dir = devices.join(e.pmu());
    check_format(&dir.join("format")).map_err(|source| PlanError::Format { event: e, source })?;
    check_description(&dir, e.name())
        .map_err(|source| PlanError::Description { event: e, source })?;
    let dynamic = perf_event::events::DynamicBuilder::new(&dir)
        .and_then(|mut b| {
            b.event(e.name())?;
            b.build().map_err(io::Error::other)
        })
        .map_err(|source| PlanError::Dynamic { event: e, source })?;
    let scale = if e.is_energy() {
        Some(read_scale(
            &dir.join("events").join(format!("{}.scale", e.name())),
        )?)
    } else {
        None
    };
    Ok((Kind::Pmu(dynamic), scale))
}

/// Says why an event's PMU or event file is missing from sysfs.
fn availability(devices: &Path, e: PerfEvent) -> Result<(), PlanError> {
    let pmu = e.pmu();
    if pmu == SOFTWARE {
        return Ok(());
    }
    if pmu == HARDWARE {
        return if has_core_pmu(devices) {
            Ok(())
        } else {
            Err(PlanError::NoCorePmu)
        };
    }
    if !devices.join(pmu).is_dir() {
        let why = match pmu {
            MSR => "kernel without the x86 msr PMU",
            POWER => "no RAPL in this kernel or CPU, or a VM",
            _ => "Intel only, absent in VMs",
        };
        return Err(PlanError::NoPmu { pmu, why });
    }
    if !devices.join(pmu).join("events").join(e.name()).exists() {
        let why = match e {
            PerfEvent::Aperf | PerfEvent::Mperf => " (VM?)",
            PerfEvent::Smi => " (Intel only; VMs hide it)",
            _ if pmu == MSR => "",
            _ => " (not on this CPU model)",
        };
        return Err(PlanError::NoEvent {
            pmu,
            name: e.name(),
            why,
        });
    }
    Ok(())
}

/// Whether sysfs lists a core PMU, the one perf's generic hardware events
/// go to: `cpu` (x86), `cpu_core`/`cpu_atom` (hybrid Intel), or one whose
/// events include `cpu_cycles` (the Arm `PMUv3`). A kernel without one lists
/// `software`, `tracepoint`, `msr` and the like only (a VM without a
/// virtual PMU).
fn has_core_pmu(devices: &Path) -> bool {
    if ["cpu", "cpu_core", "cpu_atom"]
        .iter()
        .any(|d| devices.join(d).is_dir())
    {
        return true;
    }
    std::fs::read_dir(devices).is_ok_and(|dir| {
        dir.filter_map(Result::ok)
            .any(|d| d.path().join("events/cpu_cycles").exists())
    })
}

/// Checks a PMU's `format/*` files (`config:0-7`, `config1:12`) before
/// perf-event2 reads them: it shifts by the bit numbers unchecked, so a bit
/// past 63 in a damaged or hand-made tree would panic there.
fn check_format(dir: &Path) -> Result<(), FormatError> {
    let entries = std::fs::read_dir(dir).map_err(|source| FormatError::Unlisted {
        dir: dir.to_path_buf(),
        source,
    })?;
    for entry in entries.filter_map(Result::ok) {
        let text = crate::os::fs::read_capped(&entry.path(), PMU_FILE_BYTES).unwrap_or_default();
        let bad = || FormatError::Unexpected {
            path: entry.path(),
            text: text.trim().to_string(),
        };
        let (target, bits) = text.trim().split_once(':').ok_or_else(bad)?;
        if !matches!(target, "config" | "config1" | "config2") {
            return Err(bad());
        }
        let (lo, hi) = bits.split_once('-').unwrap_or((bits, bits));
        match (lo.parse::<u32>(), hi.parse::<u32>()) {
            (Ok(lo), Ok(hi)) if lo <= hi && hi < 64 => {}
            _ => return Err(bad()),
        }
    }
    Ok(())
}

/// Largest PMU description file (`format/*`, `events/*.scale`) read.
const PMU_FILE_BYTES: usize = 64 << 10;

/// Checks that the files perf-event2 opens to build an event (`type`,
/// `events/NAME` and, where present, its `.scale` and `.unit`) are small
/// regular files: it opens them blocking and reads them whole, so a FIFO
/// in a damaged tree would block start-up and `/dev/zero` would take the
/// memory.
fn check_description(dir: &Path, name: &str) -> Result<(), ReadError> {
    let events = dir.join("events");
    let must = [dir.join("type"), events.join(name)];
    let may = [
        events.join(format!("{name}.scale")),
        events.join(format!("{name}.unit")),
    ];
    for f in &must {
        crate::os::fs::read_capped(f, PMU_FILE_BYTES)?;
    }
    for f in may.iter().filter(|f| std::fs::symlink_metadata(f).is_ok()) {
        crate::os::fs::read_capped(f, PMU_FILE_BYTES)?;
    }
    Ok(())
}

fn read_scale(path: &Path) -> Result<f64, PlanError> {
    let text =
        crate::os::fs::read_capped(path, PMU_FILE_BYTES).map_err(PlanError::ScaleUnreadable)?;
    match text.trim().parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 => Ok(s),
        _ => Err(PlanError::BadScale {
            path: path.to_path_buf(),
            text: text.trim().to_string(),
        }),
    }
}

const TABLE: &str = "perf table";

/// Writes counts as text: a `#` header, then per CPU
/// `cpu enabled_ns running_ns pmu/event=count ...`.
pub fn write_table(counts: &[PerfCounts]) -> String {
    let mut out = String::from(
        "# noisetop perf counts v1: cpu time_enabled_ns time_running_ns pmu/event=count...\n",
    );
    for c in counts {
        let _ = write!(out, "{} {} {}", c.cpu, c.time_enabled_ns, c.time_running_ns);
        for (e, v) in &c.values {
            let _ = write!(out, " {e}={v}");
        }
        out.push('\n');
    }
    out
}

/// Reads a table written by `write_table`; the inverse, exactly.
pub fn parse_table(text: &str) -> Result<Vec<PerfCounts>, ParseError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        out.push(parse_line(line).map_err(|m| ParseError::new(TABLE, i + 1, m.to_string()))?);
    }
    Ok(out)
}

/// What is wrong with one line of the perf table.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
enum LineError {
    #[error("missing {0}")]
    Missing(&'static str),
    #[error("bad {what} {word:?}")]
    BadNumber { what: &'static str, word: String },
    #[error("cpu out of range")]
    CpuRange,
    #[error("expected pmu/event=count, got {0:?}")]
    NotACount(String),
    #[error("unknown event {0:?}")]
    UnknownEvent(String),
    #[error("bad count {count:?} for {event}")]
    BadCount { count: String, event: String },
    #[error("{0} listed twice")]
    Twice(String),
}

fn parse_line(line: &str) -> Result<PerfCounts, LineError> {
    let mut words = line.split_whitespace();
    let mut number = |what: &'static str| -> Result<u64, LineError> {
        let w = words.next().ok_or(LineError::Missing(what))?;
        w.parse().map_err(|_| LineError::BadNumber {
            what,
            word: w.to_string(),
        })
    };
    let cpu = u32::try_from(number("cpu")?).map_err(|_| LineError::CpuRange)?;
    let time_enabled_ns = number("time_enabled_ns")?;
    let time_running_ns = number("time_running_ns")?;
    let mut values: Vec<(PerfEvent, u64)> = Vec::new();
    for w in words {
        let (k, v) = w
            .split_once('=')
            .ok_or_else(|| LineError::NotACount(w.to_string()))?;
        let e = PerfEvent::parse(k).ok_or_else(|| LineError::UnknownEvent(k.to_string()))?;
        let v: u64 = v.parse().map_err(|_| LineError::BadCount {
            count: v.to_string(),
            event: k.to_string(),
        })?;
        if values.iter().any(|(x, _)| *x == e) {
            return Err(LineError::Twice(k.to_string()));
        }
        values.push((e, v));
    }
    Ok(PerfCounts {
        cpu,
        values,
        time_enabled_ns,
        time_running_ns,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_keep_the_first_of_each_reason_in_order() {
        let mut f = Failures::default();
        for cpu in 0..3 {
            f.add(PerfEvent::Tsc, format!("cpu {cpu}: no such device"));
            f.add(PerfEvent::Tsc, "no msr PMU".into());
        }
        f.add(PerfEvent::Aperf, "no msr PMU".into());
        let reasons: Vec<String> =
            f.0.iter()
                .map(|(e, r)| format!("{}: {r}", e.name()))
                .collect();
        assert_eq!(
            reasons,
            [
                "tsc: cpu 0: no such device",
                "tsc: no msr PMU",
                "tsc: cpu 1: no such device",
                "tsc: cpu 2: no such device",
                "aperf: no msr PMU"
            ]
        );
    }

    /// A fake sysfs with the PMUs this VM has: msr with only `tsc`,
    /// plus a `power` PMU with energy-pkg and its scale.
    fn fake_sysfs() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let dev = dir.path().join("bus/event_source/devices");
        for (pmu, ty) in [("msr", "9"), ("power", "24")] {
            std::fs::create_dir_all(dev.join(pmu).join("events")).unwrap();
            std::fs::create_dir_all(dev.join(pmu).join("format")).unwrap();
            std::fs::write(dev.join(pmu).join("type"), format!("{ty}\n")).unwrap();
            std::fs::write(dev.join(pmu).join("format/event"), "config:0-63\n").unwrap();
        }
        std::fs::write(dev.join("msr/events/tsc"), "event=0x00\n").unwrap();
        std::fs::write(dev.join("power/events/energy-pkg"), "event=0x02\n").unwrap();
        std::fs::write(
            dev.join("power/events/energy-pkg.scale"),
            "2.3283064365386962890625e-10\n",
        )
        .unwrap();
        std::fs::write(dev.join("power/events/energy-pkg.unit"), "Joules\n").unwrap();
        std::fs::write(dev.join("power/events/energy-ram"), "event=0x03\n").unwrap();
        std::fs::write(dev.join("power/events/energy-ram.scale"), "garbage\n").unwrap();
        dir
    }

    fn devices(dir: &tempfile::TempDir) -> PathBuf {
        dir.path().join("bus/event_source/devices")
    }

    #[test]
    fn names_keys_and_parse_round_trip() {
        for e in PerfEvent::ALL {
            assert_eq!(PerfEvent::parse(&e.key()), Some(e), "{e}");
            assert_eq!(e.to_string(), e.key());
        }
        assert_eq!(PerfEvent::Aperf.name(), "aperf");
        assert_eq!(PerfEvent::CoreC6.name(), "c6-residency");
        assert_eq!(PerfEvent::EnergyPkg.name(), "energy-pkg");
        assert_eq!(PerfEvent::ContextSwitches.name(), "context-switches");
        assert_eq!(PerfEvent::PkgC10.key(), "cstate_pkg/c10-residency");
        assert_eq!(PerfEvent::parse("aperf"), Some(PerfEvent::Aperf));
        assert_eq!(PerfEvent::Instructions.key(), "hardware/instructions");
        assert_eq!(PerfEvent::parse("cycles"), Some(PerfEvent::Cycles));
        assert_eq!(PerfEvent::parse("c2-residency"), Some(PerfEvent::PkgC2));
        assert_eq!(PerfEvent::parse("c1-residency"), Some(PerfEvent::CoreC1));
        // c6 exists in both cstate PMUs: a bare name cannot say which
        assert_eq!(PerfEvent::parse("c6-residency"), None);
        assert_eq!(PerfEvent::parse("msr/c6-residency"), None);
        assert_eq!(PerfEvent::parse(""), None);
        assert_eq!(PerfEvent::parse("/"), None);
    }

    #[test]
    fn event_order_and_scope() {
        let mut sorted = PerfEvent::ALL;
        sorted.sort();
        assert_eq!(sorted, PerfEvent::ALL);
        let pkg: Vec<PerfEvent> = PerfEvent::ALL
            .into_iter()
            .filter(|e| e.is_package_scope())
            .collect();
        assert_eq!(pkg.len(), 12); // 7 package residencies + 5 energy domains
        assert!(!PerfEvent::CoreC6.is_package_scope());
        assert!(PerfEvent::EnergyPsys.is_energy() && !PerfEvent::PkgC2.is_energy());
    }

    #[test]
    fn availability_reasons_on_a_vm_like_tree() {
        let dir = fake_sysfs();
        let dev = devices(&dir);
        assert!(availability(&dev, PerfEvent::ContextSwitches).is_ok());
        assert!(availability(&dev, PerfEvent::Tsc).is_ok());
        let why = |e| availability(&dev, e).unwrap_err().to_string();
        assert_eq!(
            why(PerfEvent::Aperf),
            "perf msr PMU has no aperf event (VM?)"
        );
        assert_eq!(
            why(PerfEvent::Smi),
            "perf msr PMU has no smi event (Intel only; VMs hide it)"
        );
        assert_eq!(
            why(PerfEvent::CoreC6),
            "no perf cstate_core PMU (Intel only, absent in VMs)"
        );
        assert_eq!(
            why(PerfEvent::EnergyGpu),
            "perf power PMU has no energy-gpu event (not on this CPU model)"
        );
        let none = tempfile::tempdir().unwrap();
        assert_eq!(
            availability(&devices(&none), PerfEvent::EnergyPkg)
                .unwrap_err()
                .to_string(),
            "no perf power PMU (no RAPL in this kernel or CPU, or a VM)"
        );
    }

    #[test]
    fn cycles_and_instructions_need_a_core_pmu_in_sysfs() {
        // the VM-like tree: software, msr and power PMUs, no core PMU
        let dir = fake_sysfs();
        let dev = devices(&dir);
        for e in [PerfEvent::Instructions, PerfEvent::Cycles] {
            let why = availability(&dev, e).unwrap_err();
            assert!(matches!(why, PlanError::NoCorePmu), "{why}");
            assert_eq!(why.cause(), Cause::KernelLacks);
            assert_eq!(
                why.to_string(),
                "no hardware PMU: perf has no cycles/instructions here (VM?)"
            );
            assert_eq!(
                plan_event(&dev, e, &[]).err().unwrap().to_string(),
                NO_HW_PMU_REASON
            );
        }
        let (_, failed) = PerfSet::open(&[], &[], dir.path());
        let why: Vec<(PerfEvent, &str)> = failed
            .iter()
            .filter(|(e, _)| e.pmu() == "hardware")
            .map(|(e, r)| (*e, r.as_str()))
            .collect();
        assert_eq!(
            why,
            [
                (PerfEvent::Instructions, NO_HW_PMU_REASON),
                (PerfEvent::Cycles, NO_HW_PMU_REASON)
            ]
        );
        // x86's `cpu`, hybrid Intel's `cpu_core`, Arm PMUv3 by its events
        for (pmu, event) in [
            ("cpu", None),
            ("cpu_atom", None),
            ("armv8_pmuv3_0", Some("cpu_cycles")),
        ] {
            let d = fake_sysfs();
            let pmu = devices(&d).join(pmu).join("events");
            std::fs::create_dir_all(&pmu).unwrap();
            if let Some(ev) = event {
                std::fs::write(pmu.join(ev), "event=0x0011\n").unwrap();
            }
            assert!(
                availability(&devices(&d), PerfEvent::Cycles).is_ok(),
                "{pmu:?}"
            );
            let (kind, scale) = plan_event(&devices(&d), PerfEvent::Instructions, &[]).unwrap();
            assert!(matches!(kind, Kind::Hw(_)) && scale.is_none());
        }
        // an Arm PMU without cpu_cycles (an uncore PMU) is not a core PMU
        let d = fake_sysfs();
        std::fs::create_dir_all(devices(&d).join("arm_dsu_0/events")).unwrap();
        assert!(availability(&devices(&d), PerfEvent::Cycles).is_err());
    }

    #[test]
    fn plan_reads_the_type_event_and_scale() {
        let dir = fake_sysfs();
        let dev = devices(&dir);
        let (kind, scale) = plan_event(&dev, PerfEvent::EnergyPkg, &[0]).unwrap();
        assert!(matches!(kind, Kind::Pmu(_)));
        assert_eq!(scale, Some(2.328_306_436_538_696_3e-10)); // 2^-32 J
        assert!(plan_event(&dev, PerfEvent::Tsc, &[]).unwrap().1.is_none());
        let bad = plan_event(&dev, PerfEvent::EnergyRam, &[0]).err().unwrap();
        assert!(matches!(bad, PlanError::BadScale { .. }), "{bad}");
        let bad = bad.to_string();
        assert!(
            bad.contains("energy-ram.scale: not a positive number"),
            "{bad}"
        );
        let nopkg = plan_event(&dev, PerfEvent::EnergyPkg, &[]).err().unwrap();
        assert!(matches!(
            nopkg,
            PlanError::NoPackageCpu(PerfEvent::EnergyPkg)
        ));
        assert_eq!(
            nopkg.to_string(),
            "perf power/energy-pkg: no package CPU given (read it from power/cpumask)"
        );
    }

    #[test]
    fn damaged_format_files_are_refused_not_a_panic() {
        let dir = fake_sysfs();
        let fmt = devices(&dir).join("msr/format/event");
        for bad in [
            "config:0-64\n",
            "config:64\n",
            "config:9-3\n",
            "weird:0-7\n",
            "junk",
        ] {
            std::fs::write(&fmt, bad).unwrap();
            let why = plan_event(&devices(&dir), PerfEvent::Tsc, &[])
                .err()
                .unwrap();
            assert!(
                matches!(
                    why,
                    PlanError::Format {
                        source: FormatError::Unexpected { .. },
                        ..
                    }
                ),
                "{bad:?}: {why}"
            );
            let why = why.to_string();
            assert!(why.starts_with("perf msr/tsc: "), "{bad:?}: {why}");
            assert!(why.contains("unexpected format"), "{bad:?}: {why}");
        }
        std::fs::write(&fmt, "config:0-63\n").unwrap();
        assert!(plan_event(&devices(&dir), PerfEvent::Tsc, &[]).is_ok());
    }

    #[test]
    fn a_fifo_or_dev_zero_in_a_pmu_description_is_refused_without_blocking() {
        let dir = fake_sysfs();
        let ty = devices(&dir).join("msr/type");
        std::fs::remove_file(&ty).unwrap();
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&ty)
                .status()
                .unwrap()
                .success()
        );
        let why = plan_event(&devices(&dir), PerfEvent::Tsc, &[])
            .err()
            .unwrap()
            .to_string();
        assert!(
            why.ends_with("msr/type: not a regular file (a FIFO)"),
            "{why}"
        );
        std::fs::remove_file(&ty).unwrap();
        std::fs::write(&ty, "9\n").unwrap();
        let ev = devices(&dir).join("msr/events/tsc");
        std::fs::remove_file(&ev).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &ev).unwrap();
        let why = plan_event(&devices(&dir), PerfEvent::Tsc, &[])
            .err()
            .unwrap()
            .to_string();
        assert!(
            why.ends_with("not a regular file (a character device)"),
            "{why}"
        );
    }

    #[test]
    fn open_with_no_cpus_is_empty_and_lists_missing_events() {
        let dir = fake_sysfs();
        let (mut set, failed) = PerfSet::open(&[], &[0], dir.path());
        assert!(set.is_empty());
        assert!(set.opened().is_empty());
        assert!(set.read().is_empty());
        let reasons = |e: PerfEvent| -> Vec<&str> {
            failed
                .iter()
                .filter(|(k, _)| *k == e)
                .map(|(_, r)| r.as_str())
                .collect()
        };
        assert_eq!(
            reasons(PerfEvent::Mperf),
            ["perf msr PMU has no mperf event (VM?)"]
        );
        assert!(reasons(PerfEvent::Tsc).is_empty());
        assert!(reasons(PerfEvent::ContextSwitches).is_empty());
        assert_eq!(reasons(PerfEvent::PkgC6).len(), 1);
        // planned events still carry their scale even before a CPU opens them
        assert_eq!(
            set.energy_scale(PerfEvent::EnergyPkg),
            Some(2.0f64.powi(-32))
        );
        assert_eq!(set.energy_scale(PerfEvent::Tsc), None);
    }

    #[test]
    fn cpumask_lists_one_cpu_per_package() {
        let dir = tempfile::tempdir().unwrap();
        let pmu = dir.path().join("sys/bus/event_source/devices/power");
        std::fs::create_dir_all(&pmu).unwrap();
        std::fs::write(pmu.join("cpumask"), "0,24\n").unwrap();
        let mut fs = Fs::new(crate::os::fs::Roots::under(dir.path()));
        assert_eq!(pmu_cpumask(&mut fs, "power"), Ok(vec![0, 24]));
        let missing = pmu_cpumask(&mut fs, "cstate_pkg").unwrap_err();
        assert!(matches!(missing, CpumaskError::Read(ReadError::Missing(_))));
        assert!(missing.to_string().starts_with("no "), "{missing}");
        std::fs::write(pmu.join("cpumask"), "0-x\n").unwrap();
        fs.set_keep_open(false);
        let bad = pmu_cpumask(&mut fs, "power").unwrap_err();
        assert!(matches!(bad, CpumaskError::Parse { .. }));
        assert!(
            bad.to_string()
                .starts_with("bus/event_source/devices/power/cpumask: "),
            "{bad}"
        );
    }

    #[test]
    fn open_reasons_per_errno() {
        let e = |n| io::Error::from_raw_os_error(n);
        assert_eq!(
            open_reason(0, PerfEvent::Tsc, &e(libc::EACCES)),
            PERMISSION_REASON
        );
        assert_eq!(
            open_reason(3, PerfEvent::Tsc, &e(libc::EPERM)),
            PERMISSION_REASON
        );
        assert_eq!(
            open_reason(99, PerfEvent::ContextSwitches, &e(libc::EINVAL)),
            "cpu 99: perf software/context-switches: invalid argument \
             (CPU offline or not present, or the kernel rejects the event)"
        );
        assert!(open_reason(1, PerfEvent::EnergyPkg, &e(libc::ENODEV)).contains("no such device"));
        // a kernel without a core PMU driver: software events only
        for errno in [libc::ENOENT, libc::EOPNOTSUPP, libc::ENODEV] {
            assert_eq!(
                open_reason(0, PerfEvent::Cycles, &e(errno)),
                NO_HW_PMU_REASON
            );
        }
        assert_eq!(
            open_reason(0, PerfEvent::Instructions, &e(libc::EACCES)),
            PERMISSION_REASON
        );
    }

    fn sample() -> Vec<PerfCounts> {
        vec![
            PerfCounts {
                cpu: 0,
                values: vec![
                    (PerfEvent::ContextSwitches, 1441),
                    (PerfEvent::Migrations, 14),
                    (PerfEvent::Tsc, 2_445_857_565),
                    (PerfEvent::PkgC6, 7),
                    (PerfEvent::EnergyPkg, u64::MAX),
                ],
                time_enabled_ns: 1_000_191_802,
                time_running_ns: 1_000_191_802,
            },
            PerfCounts {
                cpu: 17,
                values: vec![],
                time_enabled_ns: 0,
                time_running_ns: 0,
            },
        ]
    }

    #[test]
    fn table_text_format() {
        let text = write_table(&sample());
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("# "));
        assert_eq!(
            lines[1],
            "0 1000191802 1000191802 software/context-switches=1441 software/cpu-migrations=14 \
             msr/tsc=2445857565 cstate_pkg/c6-residency=7 power/energy-pkg=18446744073709551615"
        );
        assert_eq!(lines[2], "17 0 0");
        assert_eq!(lines.len(), 3);
    }

    #[test]
    fn table_round_trips_exactly() {
        let counts = sample();
        let text = write_table(&counts);
        let back = parse_table(&text).unwrap();
        assert_eq!(back, counts);
        assert_eq!(write_table(&back), text);
        assert_eq!(parse_table("").unwrap(), vec![]);
    }

    #[test]
    fn table_errors_name_the_line() {
        let cases = [
            ("0", "missing time_enabled_ns"),
            ("x 1 1", "bad cpu"),
            ("4294967296 1 1", "cpu out of range"),
            ("0 1 1 msr/tsc", "expected pmu/event=count"),
            ("0 1 1 msr/nope=1", "unknown event"),
            ("0 1 1 c6-residency=1", "unknown event"),
            ("0 1 1 msr/tsc=-1", "bad count"),
            ("0 1 1 msr/tsc=1 tsc=2", "listed twice"),
        ];
        for (line, want) in cases {
            let e = parse_table(&format!("# h\n{line}\n")).unwrap_err();
            assert_eq!((e.file, e.line), ("perf table", 2), "{line}");
            assert!(e.msg.contains(want), "{line}: {}", e.msg);
        }
    }
}
