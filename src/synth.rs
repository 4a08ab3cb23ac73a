//! Synthetic capture trees: the kernel files of five kinds of machine, laid
//! out and formatted as the kernel prints them, with every value generated
//! here, so that `noisetop replay DIR --batch`, the scenario tests and the
//! benchmark run the real pipeline on machines this one is not.
//!
//! A tree has one folder per instant (`0000/`, `0001/`, …), as `noisetop
//! capture` writes it: instant 0 holds every file the machine facts are
//! read from; later instants hold what the sampler reads each interval (the
//! counters, `online`, the links it goes through) and `noisetop/`.
//!
//! # The counter model
//!
//! Every counter advances at a constant rate per second; at instant `i` it
//! has run for `t = 1000 s + i·interval`, so its value is `rate·t` and every
//! interval of `dt` seconds advances it by exactly `rate·dt` (for intervals
//! that are whole milliseconds times rates divisible by 1000, as all below
//! are at `interval_ms = 1000`). Per CPU `c` (`c % 4` etc. on the number):
//!
//! | figure | rule |
//! |---|---|
//! | busy % `b` | CPU0 20, CPU1 1, CPU2 40, CPU3 60, other `5·(c%4+1)` |
//! | deep idle % `d` | CPU1 95, other `(100−b)/2` (integer) |
//! | steal % `s` | 3 on `Vm`, else 0 |
//! | /proc/stat ticks/s (`USER_HZ` 100) | system `b/4`, irq and softirq 8 on CPU2 (else 0), user the rest of `b`, steal `s`, idle `100−b−s`, others 0 |
//! | TSC | base MHz·10⁶/s: `IntelServer` 2100, `IntelLaptop` 1900, `AmdServer` 2000, `Vm` 2450 |
//! | busy MHz | base + `100·(c%8)` (`Arm64` base 2000); cpufreq `scaling_cur_freq` says the same in kHz |
//! | MPERF, APERF | `TSC·b/100`, `busy MHz·10⁶·b/100` per second |
//! | perf cycles, instructions (all but `Vm`) | cycles `busy MHz·10⁶·b/100` per second (as APERF); instructions `cycles·(c%4+1)/2`: IPC 0.50, 1.00, 1.50, 2.00 |
//! | core C-states (% of TSC) | `IntelServer` C6 `d`; `IntelLaptop` C3 5 (CPU1 0), C6 10 (CPU1 4), C7 `d` |
//! | package C-states (% of TSC) | `IntelServer` PC2 `10+10p`, PC6 `5+10p`; `IntelLaptop` PC2 20 PC3 5 PC6 10 PC7 5 PC8 15 PC9 0 PC10 30 |
//! | cpuidle time | deepest state `d`% of the interval; the `n` shallow states share `r = 100−b−s−d`: `r/n` % each, the first also the remainder; other states 0 |
//! | cpuidle usage/s | deepest: CPU1 20, other 200; first shallow: CPU2 50 000, other 1000; other shallow 500; `above` = usage/10, `below` = usage/20 |
//! | /proc/interrupts /s | LOC (arm64 `arch_timer`) CPU1 4 else 250; RES (`IPI0`) CPU3 5000 else 20; CAL (`IPI1`) 30; TLB 15; IWI 1; NMI, PMI 2; `HYP` 3 on `Vm`; every other named row 0 |
//! | device IRQs /s | `Q = min(cpus, 8)` queues: disk queue `q` (1..=Q) on CPU `q−1`, 300/s; network queue `q` (0..Q) on CPU `q`, 100/s, 50 000/s on CPU2; legacy rows stay constant |
//! | /proc/softirqs /s | `TIMER` CPU1 2 else 100; `NET_TX` 1; `NET_RX` CPU2 30 000 else 10; `BLOCK` 50; `SCHED` CPU3 2000 else 40; `RCU` 60; `HI`, `IRQ_POLL`, `TASKLET`, `HRTIMER` 0 |
//! | perf software | context switches CPU3 20 000/s else 200/s; migrations CPU3 500/s else 5/s |
//! | /proc/schedstat (version 15, no domain lines) | run-queue wait CPU3 50 ms/s, other `c%4` ms/s; run time `b`% of the time; slices as context switches |
//! | SMI (Intel) | one per second on every CPU |
//! | temperature | Intel core `40 + core_id%16` °C, package `50+p` (`TjMax` 100); laptop coretemp core `k` `45+2k+i%2`, package `55+i%2`; AMD k10temp Tctl `60+2p+i%2` |
//! | thermal throttle | core count +2/s on CPU5; package count +1/s on package 0 |
//! | RAPL (MSR) | Intel unit 2⁻¹⁴ J: package `100+20p` W, DRAM 10⁶ counts/s; AMD unit 2⁻¹⁶ J: package `180+20p` W, each core 3 W |
//! | powercap | laptop package-0 15 W (core 8, uncore 1, dram 2), psys 25 W; server package-p `100+20p` W, dram 15 W |
//!
//! Three counters sit just below their wrap point at instant 0 and wrap in
//! the first interval (of a second or more): the Intel package-1 RAPL MSR
//! (at 2³² − 10⁶), the laptop's package-0 `energy_uj` (at
//! `max_energy_range_uj` − 5·10⁶) and the arm64 `arch_timer` count of CPU0
//! (at 2³² − 100).
//!
//! Topology: `IntelServer`, `AmdServer` and `IntelLaptop` have two threads
//! per core, the sibling of CPU `c` being `c ± cpus/2`; the servers have two
//! packages (core `k = c % (cpus/2)` sits on package `k / (cpus/4)` with
//! `core_id = k % (cpus/4)`), the others one.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::collect::{cpulist, x86};
use crate::ladder::Probe;
use crate::source::capture::instant_dir;
use crate::source::msr::{self, MsrRead};
use crate::source::perf::{self, PerfCounts, PerfEvent};

/// The kind of machine a synthetic tree imitates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Flavor {
    /// Two-socket Xeon Gold 6130 (Skylake-X): `intel_idle`, `intel_pstate`, every MSR.
    IntelServer,
    /// Core i7-8650U laptop: perf `msr`/`cstate` PMUs, powercap RAPL, coretemp; no MSR access.
    IntelLaptop,
    /// Two-socket EPYC (family 17h): `acpi_idle`, `acpi-cpufreq` with boost, AMD RAPL MSRs, k10temp.
    AmdServer,
    /// KVM guest like the build machine: haltpoll, no MSR, perf software and `msr/tsc`, steal.
    Vm,
    /// arm64 server: `psci_idle`, `GICv3` interrupts and IPI rows, cpufreq only.
    Arm64,
}

/// What to generate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Spec {
    /// The kind of machine.
    pub flavor: Flavor,
    /// Number of CPUs, all online (1..=8192).
    pub cpus: u32,
    /// Number of instants (at least 1).
    pub instants: u32,
    /// Milliseconds between instants (0 makes every instant the same).
    pub interval_ms: u64,
}

impl Spec {
    /// Returns a spec of two instants one second apart.
    pub fn new(flavor: Flavor, cpus: u32) -> Spec {
        Spec {
            flavor,
            cpus,
            instants: 2,
            interval_ms: 1000,
        }
    }
}

/// Most CPUs a tree may have (the kernel's usual `NR_CPUS`).
pub const MAX_CPUS: u32 = 8192;

/// Longest time a capture may span, ms (a year): every counter then stays
/// far below 2^64, so the arithmetic here cannot overflow.
pub const MAX_SPAN_MS: u64 = 365 * 24 * 3600 * 1000;

/// Milliseconds every counter has run at instant 0.
pub const UPTIME_MS: u64 = 1_000_000;

/// Wall-clock time of boot, ns since the epoch.
const BOOT_WALL_NS: u64 = 1_700_000_000_000_000_000;

const CPU_DIR: &str = "sys/devices/system/cpu";

/// Writes a capture of `spec.instants` instants under `dir` (created if needed).
pub fn write_capture(dir: &Path, spec: &Spec) -> io::Result<()> {
    if spec.cpus == 0 || spec.cpus > MAX_CPUS {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("cpus must be 1..={MAX_CPUS}, not {}", spec.cpus),
        ));
    }
    let span = u64::from(spec.instants.saturating_sub(1)).checked_mul(spec.interval_ms);
    if span.is_none_or(|ms| ms > MAX_SPAN_MS) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("a capture may span at most {MAX_SPAN_MS} ms"),
        ));
    }
    if spec.instants == 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a capture needs at least one instant",
        ));
    }
    let lay = Layout::new(spec);
    for i in 0..spec.instants {
        let mut t = Tree::new(instant_dir(dir, i as usize));
        lay.write_instant(&mut t, i)?;
    }
    Ok(())
}

/// Returns the `CLOCK_MONOTONIC` stamp, ns, of instant `i`.
pub fn mono_ns(spec: &Spec, i: u32) -> u64 {
    elapsed_ms(spec, i).saturating_mul(1_000_000)
}

fn elapsed_ms(spec: &Spec, i: u32) -> u64 {
    UPTIME_MS.saturating_add(u64::from(i).saturating_mul(spec.interval_ms))
}

/// Value after `ms` milliseconds of a counter advancing `per_s` per second.
fn count(per_s: u64, ms: u64) -> u64 {
    (u128::from(per_s) * u128::from(ms) / 1000) as u64
}

/// Busy share of a CPU, %.
fn busy(cpu: u32) -> u64 {
    match cpu {
        0 => 20,
        1 => 1,
        2 => 40,
        3 => 60,
        n => 5 * (u64::from(n % 4) + 1),
    }
}

/// Share of a CPU's time in its deepest idle state, %.
fn deep(cpu: u32) -> u64 {
    if cpu == 1 { 95 } else { (100 - busy(cpu)) / 2 }
}

/// Writes files under one root, creating each directory once.
struct Tree {
    root: PathBuf,
    made: HashSet<PathBuf>,
}

impl Tree {
    fn new(root: PathBuf) -> Tree {
        Tree {
            root,
            made: HashSet::new(),
        }
    }

    fn dir(&mut self, dir: &Path) -> io::Result<()> {
        if !self.made.contains(dir) {
            std::fs::create_dir_all(dir)?;
            self.made.insert(dir.to_path_buf());
        }
        Ok(())
    }

    fn put(&mut self, rel: &str, text: &str) -> io::Result<()> {
        let path = self.root.join(rel);
        if let Some(parent) = path.parent() {
            self.dir(parent)?;
        }
        std::fs::write(path, text)
    }

    /// Writes a one-line sysfs value.
    fn line(&mut self, rel: &str, value: impl std::fmt::Display) -> io::Result<()> {
        self.put(rel, &format!("{value}\n"))
    }

    /// Makes `rel` a symbolic link to `target`, as sysfs has its class links.
    fn link(&mut self, rel: &str, target: &str) -> io::Result<()> {
        let path = self.root.join(rel);
        if let Some(parent) = path.parent() {
            self.dir(parent)?;
        }
        if std::fs::symlink_metadata(&path).is_ok() {
            std::fs::remove_file(&path)?;
        }
        std::os::unix::fs::symlink(target, path)
    }
}

/// What an idle state does in the model.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Never entered.
    Unused,
    /// Shares the idle time the deepest state leaves.
    Shallow,
    /// The deepest state.
    Deep,
}

/// One cpuidle state: name, desc, exit latency, target residency, role.
type IdleState = (&'static str, &'static str, u64, u64, Role);

const POLL: IdleState = ("POLL", "CPUIDLE CORE POLL IDLE", 0, 0, Role::Unused);

const SKX_STATES: &[IdleState] = &[
    POLL,
    ("C1", "MWAIT 0x00", 2, 2, Role::Shallow),
    ("C1E", "MWAIT 0x01", 10, 20, Role::Shallow),
    ("C6", "MWAIT 0x20", 133, 600, Role::Deep),
];

const KBL_STATES: &[IdleState] = &[
    POLL,
    ("C1", "MWAIT 0x00", 2, 2, Role::Shallow),
    ("C1E", "MWAIT 0x01", 10, 20, Role::Shallow),
    ("C3", "MWAIT 0x10", 70, 100, Role::Unused),
    ("C6", "MWAIT 0x20", 85, 200, Role::Shallow),
    ("C7s", "MWAIT 0x33", 124, 800, Role::Unused),
    ("C8", "MWAIT 0x40", 200, 800, Role::Shallow),
    ("C9", "MWAIT 0x50", 480, 5000, Role::Unused),
    ("C10", "MWAIT 0x60", 890, 5000, Role::Deep),
];

const ACPI_STATES: &[IdleState] = &[
    POLL,
    ("C1", "ACPI HLT", 0, 0, Role::Shallow),
    ("C2", "ACPI IOPORT 0x814", 400, 800, Role::Deep),
];

const HALTPOLL_STATES: &[IdleState] = &[
    ("POLL", "CPUIDLE CORE POLL IDLE", 0, 0, Role::Shallow),
    (
        "haltpoll idle",
        "default architecture idle",
        1,
        1,
        Role::Deep,
    ),
];

const PSCI_STATES: &[IdleState] = &[
    ("WFI", "ARM WFI", 1, 1, Role::Shallow),
    ("cpu-sleep", "cpu-sleep", 300, 1000, Role::Deep),
];

/// Where a machine's MSRs come from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Msrs {
    None,
    Intel,
    Amd,
}

/// Everything that differs between flavours, besides the counter model.
struct Profile {
    vendor: &'static str,
    family: u32,
    model: u32,
    model_name: &'static str,
    base_mhz: u64,
    smt: bool,
    server: bool,
    idle_driver: &'static str,
    idle_governor: &'static str,
    states: &'static [IdleState],
    cpufreq: Option<(&'static str, &'static str)>,
    msrs: Msrs,
    perf_hw: bool,
    hostname: &'static str,
}

fn profile(f: Flavor) -> Profile {
    let intel = |model_name, model, base_mhz, server, states| Profile {
        vendor: "GenuineIntel",
        family: 6,
        model,
        model_name,
        base_mhz,
        smt: true,
        server,
        idle_driver: "intel_idle",
        idle_governor: "menu",
        states,
        cpufreq: Some((
            "intel_pstate",
            if server { "performance" } else { "powersave" },
        )),
        msrs: if server { Msrs::Intel } else { Msrs::None },
        perf_hw: !server,
        hostname: if server { "skx-node01" } else { "thinkpad" },
    };
    match f {
        Flavor::IntelServer => intel(
            "Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz",
            0x55,
            2100,
            true,
            SKX_STATES,
        ),
        Flavor::IntelLaptop => intel(
            "Intel(R) Core(TM) i7-8650U CPU @ 1.90GHz",
            0x8E,
            1900,
            false,
            KBL_STATES,
        ),
        Flavor::AmdServer => Profile {
            vendor: "AuthenticAMD",
            family: 0x17,
            model: 0x31,
            model_name: "AMD EPYC 7702 64-Core Processor",
            base_mhz: 2000,
            smt: true,
            server: true,
            idle_driver: "acpi_idle",
            idle_governor: "menu",
            states: ACPI_STATES,
            cpufreq: Some(("acpi-cpufreq", "performance")),
            msrs: Msrs::Amd,
            perf_hw: false,
            hostname: "rome-node07",
        },
        Flavor::Vm => Profile {
            vendor: "AuthenticAMD",
            family: 25,
            model: 1,
            model_name: "AMD EPYC",
            base_mhz: 2450,
            smt: false,
            server: false,
            idle_driver: "haltpoll",
            idle_governor: "haltpoll",
            states: HALTPOLL_STATES,
            cpufreq: None,
            msrs: Msrs::None,
            perf_hw: false,
            hostname: "vm-builder",
        },
        Flavor::Arm64 => Profile {
            vendor: "",
            family: 0,
            model: 0,
            model_name: "",
            base_mhz: 2000,
            smt: false,
            server: true,
            idle_driver: "psci_idle",
            idle_governor: "menu",
            states: PSCI_STATES,
            cpufreq: Some(("cppc_cpufreq", "schedutil")),
            msrs: Msrs::None,
            perf_hw: false,
            hostname: "arm-node03",
        },
    }
}

/// Where one CPU sits.
#[derive(Clone)]
struct Pos {
    cpu: u32,
    package: u32,
    core_id: u32,
    cluster: u32,
    siblings: Vec<u32>,
}

/// A spec worked out: profile, topology and instants.
struct Layout {
    spec: Spec,
    prof: Profile,
    cpus: Vec<Pos>,
    packages: u32,
    /// Device queues per kind: `min(cpus, 8)`.
    queues: u32,
}

impl Layout {
    fn new(spec: &Spec) -> Layout {
        let prof = profile(spec.flavor);
        let n = spec.cpus;
        let threads = if prof.smt && n >= 2 && n.is_multiple_of(2) {
            2
        } else {
            1
        };
        let cores = n / threads;
        let packages =
            if prof.server && spec.flavor != Flavor::Arm64 && cores >= 2 && cores.is_multiple_of(2)
            {
                2
            } else {
                1
            };
        let per_pkg = cores / packages;
        let cpus = (0..n)
            .map(|cpu| {
                let k = cpu % cores;
                let core_id = k % per_pkg;
                let cluster = match spec.flavor {
                    Flavor::IntelServer | Flavor::IntelLaptop => core_id,
                    Flavor::AmdServer => core_id / 4,
                    Flavor::Vm => 65535,
                    Flavor::Arm64 => cpu / 4,
                };
                Pos {
                    cpu,
                    package: k / per_pkg,
                    core_id,
                    cluster,
                    siblings: if threads == 2 {
                        vec![k, k + cores]
                    } else {
                        vec![cpu]
                    },
                }
            })
            .collect();
        Layout {
            spec: spec.clone(),
            prof,
            cpus,
            packages,
            queues: n.min(8),
        }
    }

    fn leader(&self, package: u32) -> u32 {
        self.cpus
            .iter()
            .find(|p| p.package == package)
            .map_or(0, |p| p.cpu)
    }

    fn is_leader(&self, p: &Pos) -> bool {
        self.leader(p.package) == p.cpu
    }

    fn tsc_hz(&self) -> u64 {
        self.prof.base_mhz * 1_000_000
    }

    fn bzy_mhz(&self, cpu: u32) -> u64 {
        self.prof.base_mhz + 100 * u64::from(cpu % 8)
    }

    fn steal(&self) -> u64 {
        if self.spec.flavor == Flavor::Vm { 3 } else { 0 }
    }

    fn write_instant(&self, t: &mut Tree, i: u32) -> io::Result<()> {
        let full = i == 0;
        let ms = elapsed_ms(&self.spec, i);
        let irqs = self.interrupt_rows(ms);
        let soft = softirq_rows(self.spec.cpus, ms);
        t.put("proc/interrupts", &self.render_interrupts(&irqs))?;
        t.put("proc/softirqs", &render_softirqs(self.spec.cpus, &soft))?;
        t.put("proc/stat", &self.stat_text(ms, &irqs, &soft))?;
        t.put("proc/schedstat", &self.schedstat_text(ms))?;
        if full {
            self.write_proc_facts(t)?;
            self.write_cpu_facts(t)?;
        }
        t.line(
            &format!("{CPU_DIR}/online"),
            cpulist::format(&self.online()),
        )?;
        for p in &self.cpus {
            self.write_cpuidle(t, p.cpu, ms, full)?;
            if self.prof.vendor == "GenuineIntel" {
                write_throttle(t, p, ms)?;
            }
        }
        self.write_cpufreq(t, full)?;
        self.write_hwmon(t, i, full)?;
        self.write_powercap(t, ms, full)?;
        self.write_noisetop(t, i, ms)
    }

    fn online(&self) -> Vec<u32> {
        (0..self.spec.cpus).collect()
    }
}

/// One /proc/interrupts row: how its label is printed, counts, what follows.
struct IrqRow {
    label: Label,
    counts: Vec<u64>,
    tail: String,
}

enum Label {
    /// A numbered device line (` 42:`).
    Number(u32),
    /// An x86 named row (`LOC:`) or the arm64 `Err:` / x86 `ERR:` single value.
    Name(&'static str),
    /// A row with one value, not one per CPU.
    Single(&'static str),
    /// arm64 `IPIn:` (no space after the colon when prec is 3).
    Ipi(u32),
}

/// x86 named rows: label, description, rate per second on a CPU.
fn x86_named(flavor: Flavor) -> Vec<(&'static str, &'static str)> {
    let mut rows = vec![
        ("NMI", "Non-maskable interrupts"),
        ("LOC", "Local timer interrupts"),
        ("SPU", "Spurious interrupts"),
        ("PMI", "Performance monitoring interrupts"),
        ("IWI", "IRQ work interrupts"),
        ("RTR", "APIC ICR read retries"),
        ("RES", "Rescheduling interrupts"),
        ("CAL", "Function call interrupts"),
        ("TLB", "TLB shootdowns"),
        ("TRM", "Thermal event interrupts"),
    ];
    if flavor == Flavor::Vm {
        rows.push(("HYP", "Hypervisor callback interrupts"));
    } else {
        rows.extend([
            ("THR", "Threshold APIC interrupts"),
            ("DFR", "Deferred Error APIC interrupts"),
            ("MCE", "Machine check exceptions"),
            ("MCP", "Machine check polls"),
        ]);
    }
    rows
}

/// Rate per second of a named interrupt row (x86 label or its arm64 twin).
fn named_rate(label: &str, cpu: u32) -> u64 {
    match label {
        "LOC" => {
            if cpu == 1 {
                4
            } else {
                250
            }
        }
        "RES" => {
            if cpu == 3 {
                5000
            } else {
                20
            }
        }
        "CAL" => 30,
        "TLB" => 15,
        "IWI" => 1,
        "NMI" | "PMI" => 2,
        "HYP" => 3,
        _ => 0,
    }
}

/// Value every non-rate row holds on the CPUs it has served.
fn constant(label: &str) -> u64 {
    match label {
        "MCP" => 12,
        _ => 0,
    }
}

impl Layout {
    /// Digits of the IRQ numbers (`prec` in kernel/irq/proc.c), from `nr_irqs`.
    fn prec(&self) -> usize {
        let nr_irqs = 256 + 8 * u64::from(self.spec.cpus);
        let mut prec = 3;
        let mut j = 1000;
        while prec < 10 && j <= nr_irqs {
            prec += 1;
            j *= 10;
        }
        prec
    }

    fn per_cpu(&self, f: impl Fn(u32) -> u64) -> Vec<u64> {
        (0..self.spec.cpus).map(f).collect()
    }

    fn interrupt_rows(&self, ms: u64) -> Vec<IrqRow> {
        let mut rows = self.device_rows(ms);
        if self.spec.flavor == Flavor::Arm64 {
            let ipis = [
                ("RES", "Rescheduling interrupts"),
                ("CAL", "Function call interrupts"),
                ("-", "CPU stop interrupts"),
                ("-", "CPU stop (for crash dump) interrupts"),
                ("-", "Timer broadcast interrupts"),
                ("IWI", "IRQ work interrupts"),
                ("-", "CPU wake-up interrupts"),
            ];
            for (n, (twin, desc)) in (0u32..).zip(ipis) {
                rows.push(IrqRow {
                    label: Label::Ipi(n),
                    counts: self.per_cpu(|c| count(named_rate(twin, c), ms)),
                    tail: format!("      {desc}"),
                });
            }
            rows.push(IrqRow {
                label: Label::Single("Err"),
                counts: vec![0],
                tail: String::new(),
            });
            return rows;
        }
        for (label, desc) in x86_named(self.spec.flavor) {
            let k = constant(label);
            rows.push(IrqRow {
                label: Label::Name(label),
                counts: self.per_cpu(|c| k + count(named_rate(label, c), ms)),
                tail: format!("  {desc}"),
            });
        }
        for label in ["ERR", "MIS"] {
            rows.push(IrqRow {
                label: Label::Single(label),
                counts: vec![0],
                tail: String::new(),
            });
        }
        if matches!(
            self.spec.flavor,
            Flavor::IntelServer | Flavor::IntelLaptop | Flavor::Vm
        ) {
            for (label, desc) in [
                ("PIN", "Posted-interrupt notification event"),
                ("NPI", "Nested posted-interrupt event"),
                ("PIW", "Posted-interrupt wakeup event"),
            ] {
                rows.push(IrqRow {
                    label: Label::Name(label),
                    counts: self.per_cpu(|_| 0),
                    tail: format!("  {desc}"),
                });
            }
        }
        rows
    }

    /// A numbered row whose count only CPU0 has, constant.
    fn legacy(&self, n: u32, tail: String, value: u64) -> IrqRow {
        IrqRow {
            label: Label::Number(n),
            counts: self.per_cpu(|c| if c == 0 { value } else { 0 }),
            tail,
        }
    }

    /// A queue interrupt bound to one CPU.
    fn queue(&self, n: u32, tail: String, cpu: u32, per_s: u64, ms: u64) -> IrqRow {
        IrqRow {
            label: Label::Number(n),
            counts: self.per_cpu(|c| if c == cpu { count(per_s, ms) } else { 0 }),
            tail,
        }
    }

    fn device_rows(&self, ms: u64) -> Vec<IrqRow> {
        let prec = self.prec();
        let q = self.queues;
        let net = |cpu: u32| if cpu == 2 { 50_000 } else { 100 };
        let mut rows = Vec::new();
        match self.spec.flavor {
            Flavor::Arm64 => {
                let gic = |hw: u32, trig: &str, name: &str| {
                    format!("{:>8} {hw:>prec$} {trig:<8}  {name}", "GICv3")
                };
                let its = |hw: u32, name: &str| {
                    format!("{:>8} {hw:>prec$} {:<8}  {name}", "ITS-MSI", "Edge")
                };
                rows.push(IrqRow {
                    label: Label::Number(10),
                    counts: self.per_cpu(|c| {
                        let v = count(named_rate("LOC", c), ms);
                        // CPU0's tick count sits 100 below 2^32 at instant 0
                        if c == 0 {
                            (v - count(250, UPTIME_MS) + (1 << 32) - 100) & 0xFFFF_FFFF
                        } else {
                            v
                        }
                    }),
                    tail: gic(27, "Level", "arch_timer"),
                });
                rows.push(self.legacy(14, gic(37, "Level", "ttyS0"), 7815));
                rows.push(self.legacy(17, gic(48, "Edge", "ACPI:Ged"), 0));
                rows.push(self.legacy(51, its(65536, "nvme0q0"), 13));
                for k in 1..=q {
                    rows.push(self.queue(
                        51 + k,
                        its(65536 + k, &format!("nvme0q{k}")),
                        k - 1,
                        300,
                        ms,
                    ));
                }
                let base = 52 + q;
                rows.push(self.legacy(base, its(81920, "ena-mgmnt@pci:0000:00:05.0"), 51));
                for k in 0..q {
                    rows.push(self.queue(
                        base + 1 + k,
                        its(81921 + k, &format!("eth0-Tx-Rx-{k}")),
                        k,
                        net(k),
                        ms,
                    ));
                }
            }
            Flavor::Vm => {
                let apic = |hw: u32, name: &str| {
                    format!("{:>8} {hw:>prec$}-{:<8}  {name}", "IO-APIC", "edge")
                };
                let msix = |dev: u32, hw: u32, name: &str| {
                    format!(
                        "{} {hw:>prec$}-{:<8}  {name}",
                        format_args!("PCI-MSIX-0000:00:{dev:02x}.0"),
                        "edge"
                    )
                };
                rows.push(self.legacy(24, apic(5, "ACPI:Ged"), 1));
                rows.push(self.legacy(26, apic(4, "ttyS0"), 14));
                rows.push(self.legacy(28, msix(2, 0, "virtio1-config"), 0));
                for k in 0..q {
                    rows.push(self.queue(
                        29 + k,
                        msix(2, k + 1, &format!("virtio1-req.{k}")),
                        k,
                        300,
                        ms,
                    ));
                }
                let base = 29 + q;
                rows.push(self.legacy(base, msix(3, 0, "virtio2-config"), 0));
                for k in 0..q {
                    rows.push(self.queue(
                        base + 1 + 2 * k,
                        msix(3, 2 * k + 1, &format!("virtio2-input.{k}")),
                        k,
                        net(k),
                        ms,
                    ));
                    rows.push(self.legacy(
                        base + 2 + 2 * k,
                        msix(3, 2 * k + 2, &format!("virtio2-output.{k}")),
                        1001,
                    ));
                }
            }
            _ => {
                let chip = |name: &str, hw: u32, trig: &str, action: &str| {
                    format!("{name:>8} {hw:>prec$}-{trig:<8}  {action}")
                };
                rows.push(self.legacy(0, chip("IR-IO-APIC", 2, "edge", "timer"), 38));
                rows.push(self.legacy(8, chip("IR-IO-APIC", 8, "edge", "rtc0"), 1));
                rows.push(self.legacy(9, chip("IR-IO-APIC", 9, "fasteoi", "acpi"), 0));
                if self.prof.vendor == "GenuineIntel" {
                    rows.push(self.legacy(24, chip("DMAR-MSI", 0, "edge", "dmar0"), 0));
                }
                rows.push(self.legacy(40, chip("IR-PCI-MSI", 524_288, "edge", "nvme0q0"), 45));
                for k in 1..=q {
                    rows.push(self.queue(
                        40 + k,
                        chip("IR-PCI-MSI", 524_288 + k, "edge", &format!("nvme0q{k}")),
                        k - 1,
                        300,
                        ms,
                    ));
                }
                let base = 41 + q;
                for k in 0..q {
                    rows.push(self.queue(
                        base + k,
                        chip(
                            "IR-PCI-MSI",
                            1_048_576 + k,
                            "edge",
                            &format!("eth0-TxRx-{k}"),
                        ),
                        k,
                        net(k),
                        ms,
                    ));
                }
                rows.push(self.legacy(
                    base + q,
                    chip("IR-PCI-MSI", 1_048_576 + q, "edge", "eth0"),
                    2,
                ));
            }
        }
        rows
    }

    fn render_interrupts(&self, rows: &[IrqRow]) -> String {
        let prec = self.prec();
        let n = self.spec.cpus as usize;
        let mut out = String::with_capacity((rows.len() + 1) * (n * 11 + 64));
        let _ = write!(out, "{:w$}", "", w = prec + 8);
        for c in 0..self.spec.cpus {
            let _ = write!(out, "CPU{c:<8}");
        }
        out.push('\n');
        for r in rows {
            match r.label {
                Label::Number(num) => {
                    let _ = write!(out, "{num:>prec$}: ");
                }
                Label::Name(name) => {
                    let _ = write!(out, "{name:>prec$}: ");
                }
                Label::Single(name) => {
                    let _ = writeln!(
                        out,
                        "{name:>prec$}: {:>10}",
                        r.counts.first().copied().unwrap_or(0)
                    );
                    continue;
                }
                Label::Ipi(num) => {
                    let _ = write!(
                        out,
                        "{:>w$}{num}:{}",
                        "IPI",
                        if prec >= 4 { " " } else { "" },
                        w = prec - 1
                    );
                }
            }
            for v in &r.counts {
                let _ = write!(out, "{v:>10} ");
            }
            out.push_str(&r.tail);
            out.push('\n');
        }
        out
    }
}

const SOFTIRQS: [&str; 10] = [
    "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU",
];

/// Rate per second of one softirq vector on one CPU.
fn softirq_rate(name: &str, cpu: u32) -> u64 {
    match name {
        "TIMER" => {
            if cpu == 1 {
                2
            } else {
                100
            }
        }
        "NET_TX" => 1,
        "NET_RX" => {
            if cpu == 2 {
                30_000
            } else {
                10
            }
        }
        "BLOCK" => 50,
        "SCHED" => {
            if cpu == 3 {
                2000
            } else {
                40
            }
        }
        "RCU" => 60,
        _ => 0,
    }
}

fn softirq_rows(cpus: u32, ms: u64) -> Vec<Vec<u64>> {
    SOFTIRQS
        .iter()
        .map(|name| {
            (0..cpus)
                .map(|c| count(softirq_rate(name, c), ms))
                .collect()
        })
        .collect()
}

/// /proc/softirqs: the header lists possible CPUs, `%12s:` then ` %10u` each.
fn render_softirqs(cpus: u32, rows: &[Vec<u64>]) -> String {
    let mut out = String::with_capacity(11 * (cpus as usize + 2) * 11);
    out.push_str("                    ");
    for c in 0..cpus {
        let _ = write!(out, "CPU{c:<8}");
    }
    out.push('\n');
    for (name, counts) in SOFTIRQS.iter().zip(rows) {
        let _ = write!(out, "{name:>12}:");
        for v in counts {
            let _ = write!(out, " {v:>10}");
        }
        out.push('\n');
    }
    out
}

impl Layout {
    /// /proc/stat ticks per second of one CPU, in file order
    /// (user nice system idle iowait irq softirq steal guest `guest_nice`).
    fn tick_rates(&self, cpu: u32) -> [u64; 10] {
        let b = busy(cpu);
        let (irq, softirq) = if cpu == 2 { (8, 8) } else { (0, 0) };
        let system = b / 4;
        let user = b - system - irq - softirq;
        let steal = self.steal();
        [
            user,
            0,
            system,
            100 - b - steal,
            0,
            irq,
            softirq,
            steal,
            0,
            0,
        ]
    }

    /// /proc/schedstat version 15: `cpuN` lines whose fields 7–9 are the
    /// run time, the run-queue wait (ns) and the slices; no domain lines.
    fn schedstat_text(&self, ms: u64) -> String {
        let mut out = format!("version 15\ntimestamp {}\n", 4_294_667_296 + ms / 4);
        for c in 0..self.spec.cpus {
            let slices = count(csw_rate(c), ms);
            let _ = writeln!(
                out,
                "cpu{c} 0 0 {slices} 0 0 0 {} {} {slices}",
                count(busy(c) * 10_000_000, ms),
                count(rq_wait_rate(c), ms),
            );
        }
        out
    }

    fn stat_text(&self, ms: u64, irqs: &[IrqRow], soft: &[Vec<u64>]) -> String {
        let per_cpu: Vec<[u64; 10]> = (0..self.spec.cpus)
            .map(|c| self.tick_rates(c).map(|r| count(r, ms)))
            .collect();
        let mut total = [0u64; 10];
        for t in &per_cpu {
            for (sum, v) in total.iter_mut().zip(t) {
                *sum += v;
            }
        }
        let mut out = String::with_capacity(per_cpu.len() * 64 + 32 * 1024);
        let fields = |out: &mut String, v: &[u64; 10]| {
            for x in v {
                let _ = write!(out, " {x}");
            }
            out.push('\n');
        };
        out.push_str("cpu ");
        fields(&mut out, &total);
        for (c, t) in per_cpu.iter().enumerate() {
            let _ = write!(out, "cpu{c}");
            fields(&mut out, t);
        }
        let nr_irqs = 256 + 8 * self.spec.cpus as usize;
        let mut per_irq = vec![0u64; nr_irqs];
        let mut intr = 0u64;
        for r in irqs {
            let sum: u64 = r.counts.iter().sum();
            intr += sum;
            if let Label::Number(n) = r.label
                && let Some(slot) = per_irq.get_mut(n as usize)
            {
                *slot = sum;
            }
        }
        let _ = write!(out, "intr {intr}");
        for v in &per_irq {
            let _ = write!(out, " {v}");
        }
        let ctxt: u64 = (0..self.spec.cpus).map(|c| count(csw_rate(c), ms)).sum();
        let _ = write!(
            out,
            "\nctxt {ctxt}\nbtime {}\nprocesses {}\nprocs_running 3\nprocs_blocked 0\n",
            BOOT_WALL_NS / 1_000_000_000,
            count(40, ms)
        );
        let vectors: Vec<u64> = soft.iter().map(|r| r.iter().sum()).collect();
        let _ = write!(out, "softirq {}", vectors.iter().sum::<u64>());
        for v in vectors {
            let _ = write!(out, " {v}");
        }
        out.push('\n');
        out
    }

    fn write_proc_facts(&self, t: &mut Tree) -> io::Result<()> {
        t.put("proc/cpuinfo", &self.cpuinfo())?;
        let cmdline = match self.spec.flavor {
            Flavor::Vm => {
                "BOOT_IMAGE=/boot/vmlinuz-6.8.0-45-generic root=/dev/vda1 ro console=ttyS0"
            }
            Flavor::Arm64 => {
                "BOOT_IMAGE=/boot/vmlinuz-6.8.0-1015-aws root=UUID=4c2d-a1 ro console=ttyS0 nvme_core.io_timeout=4294967295"
            }
            _ => "BOOT_IMAGE=/boot/vmlinuz-6.8.0-45-generic root=UUID=4c2d-a1 ro quiet splash",
        };
        t.line("proc/cmdline", cmdline)?;
        let release = if self.spec.flavor == Flavor::Arm64 {
            "6.8.0-1015-aws"
        } else {
            "6.8.0-45-generic"
        };
        t.line("proc/sys/kernel/osrelease", release)?;
        t.line("proc/sys/kernel/hostname", self.prof.hostname)?;
        t.line("proc/sys/kernel/randomize_va_space", 2)?;
        t.line(
            "proc/sys/kernel/nmi_watchdog",
            u8::from(self.spec.flavor != Flavor::Vm),
        )?;
        t.line("proc/sys/kernel/perf_event_paranoid", 2)
    }

    fn cpuinfo(&self) -> String {
        let mut out = String::with_capacity(self.cpus.len() * 1600);
        let arm = self.spec.flavor == Flavor::Arm64;
        for p in &self.cpus {
            if arm {
                let _ = write!(
                    out,
                    "processor\t: {}\nBogoMIPS\t: 50.00\nFeatures\t: {ARM_FEATURES}\n\
                     CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\n\
                     CPU part\t: 0xd0c\nCPU revision\t: 1\n\n",
                    p.cpu
                );
                continue;
            }
            let pr = &self.prof;
            let per_pkg = self.cpus.iter().filter(|q| q.package == p.package).count();
            let cores = per_pkg / p.siblings.len();
            let apic =
                p.package * 64 + p.core_id * 2 + u32::from(p.siblings.first() != Some(&p.cpu));
            let flags = if pr.vendor == "GenuineIntel" {
                INTEL_FLAGS
            } else {
                AMD_FLAGS
            };
            let flags = if self.spec.flavor == Flavor::Vm {
                format!("{flags} hypervisor")
            } else {
                flags.to_string()
            };
            let _ = write!(
                out,
                "processor\t: {}\nvendor_id\t: {}\ncpu family\t: {}\nmodel\t\t: {}\nmodel name\t: {}\n\
                 stepping\t: 4\nmicrocode\t: 0x2006e05\ncpu MHz\t\t: {}.000\ncache size\t: 22528 KB\n\
                 physical id\t: {}\nsiblings\t: {per_pkg}\ncore id\t\t: {}\ncpu cores\t: {cores}\n\
                 apicid\t\t: {apic}\ninitial apicid\t: {apic}\nfpu\t\t: yes\nfpu_exception\t: yes\n\
                 cpuid level\t: 22\nwp\t\t: yes\nflags\t\t: {flags}\nbugs\t\t: spectre_v1 spectre_v2 spec_store_bypass\n\
                 bogomips\t: {}.00\nclflush size\t: 64\ncache_alignment\t: 64\n\
                 address sizes\t: 46 bits physical, 48 bits virtual\npower management:\n\n",
                p.cpu,
                pr.vendor,
                pr.family,
                pr.model,
                pr.model_name,
                self.bzy_mhz(p.cpu),
                p.package,
                p.core_id,
                pr.base_mhz * 2,
            );
        }
        out
    }
}

const INTEL_FLAGS: &str = "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts acpi mmx fxsr sse sse2 ss ht tm pbe syscall nx pdpe1gb rdtscp lm constant_tsc art arch_perfmon pebs bts rep_good nopl xtopology nonstop_tsc cpuid aperfmperf pni pclmulqdq dtes64 monitor ds_cpl vmx smx est tm2 ssse3 sdbg fma cx16 xtpr pdcm pcid dca sse4_1 sse4_2 x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand lahf_lm abm 3dnowprefetch cpuid_fault epb cat_l3 cdp_l3 invpcid_single pti intel_ppin ssbd mba ibrs ibpb stibp fsgsbase tsc_adjust bmi1 hle avx2 smep bmi2 erms invpcid rtm cqm mpx rdt_a avx512f avx512dq rdseed adx smap clflushopt clwb intel_pt avx512cd avx512bw avx512vl xsaveopt xsavec xgetbv1 xsaves dtherm ida arat pln pts hwp hwp_act_window hwp_epp hwp_pkg_req pku ospke md_clear flush_l1d arch_capabilities";

const AMD_FLAGS: &str = "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ht syscall nx mmxext fxsr_opt pdpe1gb rdtscp lm constant_tsc rep_good nopl nonstop_tsc cpuid extd_apicid aperfmperf rapl pni pclmulqdq monitor ssse3 fma cx16 sse4_1 sse4_2 x2apic movbe popcnt aes xsave avx f16c rdrand lahf_lm cmp_legacy svm extapic cr8_legacy abm sse4a misalignsse 3dnowprefetch osvw ibs skinit wdt tce topoext perfctr_core perfctr_nb bpext perfctr_llc mwaitx cpb cat_l3 cdp_l3 hw_pstate ssbd mba ibrs ibpb stibp fsgsbase bmi1 avx2 smep bmi2 cqm rdt_a rdseed adx smap clflushopt clwb sha_ni xsaveopt xsavec xgetbv1 xsaves cqm_llc cqm_occup_llc cqm_mbm_total cqm_mbm_local clzero irperf xsaveerptr rdpru wbnoinvd arat npt lbrv svm_lock nrip_save tsc_scale vmcb_clean flushbyasid decodeassists pausefilter pfthreshold avic v_vmsave_vmload vgif umip rdpid overflow_recov succor smca sme sev sev_es";

const ARM_FEATURES: &str = "fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs";

impl Layout {
    fn write_cpu_facts(&self, t: &mut Tree) -> io::Result<()> {
        let all = cpulist::format(&self.online());
        for f in ["possible", "present"] {
            t.line(&format!("{CPU_DIR}/{f}"), &all)?;
        }
        t.put(&format!("{CPU_DIR}/offline"), "\n")?;
        t.put(&format!("{CPU_DIR}/isolated"), "\n")?;
        t.line(&format!("{CPU_DIR}/nohz_full"), "(null)")?;
        t.line(&format!("{CPU_DIR}/kernel_max"), MAX_CPUS - 1)?;
        let smt = self.cpus.first().is_some_and(|p| p.siblings.len() == 2);
        t.line(
            &format!("{CPU_DIR}/smt/control"),
            if smt { "on" } else { "notsupported" },
        )?;
        t.line(&format!("{CPU_DIR}/smt/active"), u8::from(smt))?;
        t.line(
            &format!("{CPU_DIR}/cpuidle/current_driver"),
            self.prof.idle_driver,
        )?;
        t.line(
            &format!("{CPU_DIR}/cpuidle/current_governor"),
            self.prof.idle_governor,
        )?;
        t.line(
            &format!("{CPU_DIR}/cpuidle/available_governors"),
            "ladder menu teo haltpoll",
        )?;
        for node in 0..self.packages {
            let cpus: Vec<u32> = self
                .cpus
                .iter()
                .filter(|p| p.package == node)
                .map(|p| p.cpu)
                .collect();
            t.line(
                &format!("sys/devices/system/node/node{node}/cpulist"),
                cpulist::format(&cpus),
            )?;
        }
        let nodes = cpulist::format(&(0..self.packages).collect::<Vec<_>>());
        t.line("sys/devices/system/node/online", &nodes)?;
        t.line("sys/devices/system/node/possible", &nodes)?;
        for p in &self.cpus {
            self.write_topology(t, p)?;
        }
        let (vendor, product) = match self.spec.flavor {
            Flavor::Vm => ("QEMU", "Standard PC (Q35 + ICH9, 2009)"),
            Flavor::IntelLaptop => ("LENOVO", "20L5CTO1WW"),
            Flavor::Arm64 => ("Ampere(R)", "Mt.Jade"),
            _ => ("Supermicro", "SYS-6029P-TR"),
        };
        t.line("sys/class/dmi/id/sys_vendor", vendor)?;
        t.line("sys/class/dmi/id/product_name", product)
    }

    fn write_topology(&self, t: &mut Tree, p: &Pos) -> io::Result<()> {
        let dir = format!("{CPU_DIR}/cpu{}", p.cpu);
        if p.cpu > 0 {
            t.line(&format!("{dir}/online"), 1)?;
        }
        let pkg: Vec<u32> = if self.packages == 1 {
            self.online()
        } else {
            self.cpus
                .iter()
                .filter(|q| q.package == p.package)
                .map(|q| q.cpu)
                .collect()
        };
        let pkg = cpulist::format(&pkg);
        let sib = cpulist::format(&p.siblings);
        let die = if self.spec.flavor == Flavor::Arm64 {
            "-1".to_string()
        } else {
            "0".to_string()
        };
        for (f, v) in [
            ("physical_package_id", p.package.to_string()),
            ("die_id", die),
            ("cluster_id", p.cluster.to_string()),
            ("core_id", p.core_id.to_string()),
            ("thread_siblings_list", sib.clone()),
            ("core_cpus_list", sib),
            ("core_siblings_list", pkg.clone()),
            ("package_cpus_list", pkg),
        ] {
            t.line(&format!("{dir}/topology/{f}"), v)?;
        }
        t.link(
            &format!("{dir}/node{}", p.package),
            &format!("../../node/node{}", p.package),
        )
    }

    fn write_cpuidle(&self, t: &mut Tree, cpu: u32, ms: u64, full: bool) -> io::Result<()> {
        let states = self.prof.states;
        let shallow = states.iter().filter(|s| s.4 == Role::Shallow).count() as u64;
        let rest = 100 - busy(cpu) - self.steal() - deep(cpu);
        let mut nth_shallow = 0;
        for (k, &(name, desc, latency, residency, role)) in states.iter().enumerate() {
            let (pct, usage) = match role {
                Role::Unused => (0, 0),
                Role::Deep => (deep(cpu), if cpu == 1 { 20 } else { 200 }),
                Role::Shallow => {
                    nth_shallow += 1;
                    if nth_shallow == 1 {
                        (
                            rest - (shallow - 1) * (rest / shallow),
                            if cpu == 2 { 50_000 } else { 1000 },
                        )
                    } else {
                        (rest / shallow, 500)
                    }
                }
            };
            let dir = format!("{CPU_DIR}/cpu{cpu}/cpuidle/state{k}");
            if full {
                t.line(&format!("{dir}/name"), name)?;
                t.line(&format!("{dir}/desc"), desc)?;
                t.line(&format!("{dir}/latency"), latency)?;
                t.line(&format!("{dir}/residency"), residency)?;
                t.line(&format!("{dir}/disable"), 0)?;
                t.line(&format!("{dir}/default_status"), "enabled")?;
                t.line(
                    &format!("{dir}/power"),
                    if role == Role::Unused {
                        4_294_967_295u64
                    } else {
                        0
                    },
                )?;
            }
            t.line(&format!("{dir}/time"), count(pct * 10_000, ms))?;
            t.line(&format!("{dir}/usage"), count(usage, ms))?;
            t.line(&format!("{dir}/above"), count(usage / 10, ms))?;
            t.line(&format!("{dir}/below"), count(usage / 20, ms))?;
            t.line(&format!("{dir}/rejected"), 0)?;
        }
        Ok(())
    }

    fn write_cpufreq(&self, t: &mut Tree, full: bool) -> io::Result<()> {
        let Some((driver, governor)) = self.prof.cpufreq else {
            return Ok(());
        };
        let intel = driver == "intel_pstate";
        let (min, max) = match self.spec.flavor {
            Flavor::IntelServer => (1_000_000, 3_700_000),
            Flavor::IntelLaptop => (400_000, 4_200_000),
            // acpi-cpufreq's maximum is the base clock: boost runs above it
            Flavor::AmdServer => (1_500_000, 2_000_000),
            _ => (1_000_000, 3_000_000),
        };
        for p in &self.cpus {
            let c = p.cpu;
            let pol = format!("{CPU_DIR}/cpufreq/policy{c}");
            t.link(
                &format!("{CPU_DIR}/cpu{c}/cpufreq"),
                &format!("../cpufreq/policy{c}"),
            )?;
            t.line(&format!("{pol}/scaling_cur_freq"), self.bzy_mhz(c) * 1000)?;
            if !full {
                continue;
            }
            let mut files = vec![
                ("affected_cpus", c.to_string()),
                ("related_cpus", c.to_string()),
                ("cpuinfo_min_freq", min.to_string()),
                ("cpuinfo_max_freq", max.to_string()),
                (
                    "cpuinfo_transition_latency",
                    if intel { "0" } else { "10000" }.to_string(),
                ),
                ("scaling_driver", driver.to_string()),
                ("scaling_governor", governor.to_string()),
                ("scaling_min_freq", min.to_string()),
                ("scaling_max_freq", max.to_string()),
                (
                    "scaling_available_governors",
                    if intel {
                        "performance powersave"
                    } else {
                        "conservative ondemand userspace powersave performance schedutil"
                    }
                    .to_string(),
                ),
                ("scaling_setspeed", "<unsupported>".to_string()),
            ];
            if intel {
                let epp = if governor == "performance" {
                    "performance"
                } else {
                    "balance_performance"
                };
                files.push(("base_frequency", (self.prof.base_mhz * 1000).to_string()));
                files.push(("energy_performance_preference", epp.to_string()));
                files.push((
                    "energy_performance_available_preferences",
                    "default performance balance_performance balance_power power".to_string(),
                ));
            }
            for (f, v) in files {
                t.line(&format!("{pol}/{f}"), v)?;
            }
        }
        if full && intel {
            for (f, v) in [
                ("status", "active"),
                ("no_turbo", "0"),
                ("max_perf_pct", "100"),
                ("min_perf_pct", "27"),
                ("hwp_dynamic_boost", "0"),
            ] {
                t.line(&format!("{CPU_DIR}/intel_pstate/{f}"), v)?;
            }
        }
        if full && self.spec.flavor == Flavor::AmdServer {
            t.line(&format!("{CPU_DIR}/cpufreq/boost"), 1)?;
        }
        Ok(())
    }

    /// Temperature sensors: laptop coretemp (and acpitz), AMD k10temp per package.
    fn write_hwmon(&self, t: &mut Tree, i: u32, full: bool) -> io::Result<()> {
        let wobble = u64::from(i % 2);
        match self.spec.flavor {
            Flavor::IntelLaptop => {
                let acpitz = "devices/virtual/thermal/thermal_zone0/hwmon0";
                t.link("sys/class/hwmon/hwmon0", &format!("../../{acpitz}"))?;
                t.line(&format!("sys/{acpitz}/temp1_input"), 27_800)?;
                let dir = "devices/platform/coretemp.0/hwmon/hwmon3";
                t.link("sys/class/hwmon/hwmon3", &format!("../../{dir}"))?;
                if full {
                    t.line(&format!("sys/{acpitz}/name"), "acpitz")?;
                    t.line(&format!("sys/{dir}/name"), "coretemp")?;
                    t.line(&format!("sys/{dir}/temp1_label"), "Package id 0")?;
                }
                t.line(&format!("sys/{dir}/temp1_input"), (55 + wobble) * 1000)?;
                let cores = self.cpus.iter().map(|p| p.core_id).max().unwrap_or(0);
                for k in 0..=cores {
                    let n = k + 2;
                    if full {
                        t.line(&format!("sys/{dir}/temp{n}_label"), format!("Core {k}"))?;
                        t.line(&format!("sys/{dir}/temp{n}_crit"), 100_000)?;
                    }
                    t.line(
                        &format!("sys/{dir}/temp{n}_input"),
                        (45 + 2 * u64::from(k) + wobble) * 1000,
                    )?;
                }
            }
            Flavor::AmdServer => {
                for pkg in 0..self.packages {
                    let n = 2 + pkg;
                    let dir = format!(
                        "devices/pci0000:{:02x}/0000:{:02x}:18.{}/hwmon/hwmon{n}",
                        pkg * 0x40,
                        0,
                        3 + pkg
                    );
                    t.link(
                        &format!("sys/class/hwmon/hwmon{n}"),
                        &format!("../../{dir}"),
                    )?;
                    if full {
                        t.line(&format!("sys/{dir}/name"), "k10temp")?;
                        t.line(&format!("sys/{dir}/temp1_label"), "Tctl")?;
                        t.line(&format!("sys/{dir}/temp3_label"), "Tccd1")?;
                    }
                    let tctl = 60 + 2 * u64::from(pkg) + wobble;
                    t.line(&format!("sys/{dir}/temp1_input"), tctl * 1000)?;
                    t.line(&format!("sys/{dir}/temp3_input"), (tctl - 4) * 1000 + 250)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// powercap RAPL zones: nested under devices/virtual, linked flat from class/powercap.
    fn write_powercap(&self, t: &mut Tree, ms: u64, full: bool) -> io::Result<()> {
        const PKG_RANGE: u64 = 262_143_328_850;
        const DRAM_RANGE: u64 = 65_712_999_613;
        let zones: Vec<(String, String, u64, u64, u64)> = match self.spec.flavor {
            Flavor::IntelLaptop => {
                let pkg =
                    (PKG_RANGE - 5_000_000 + count(15_000_000, ms - UPTIME_MS)) % (PKG_RANGE + 1);
                vec![
                    ("0".into(), "package-0".into(), PKG_RANGE, pkg, 0),
                    (
                        "0:0".into(),
                        "core".into(),
                        PKG_RANGE,
                        count(8_000_000, ms),
                        0,
                    ),
                    (
                        "0:1".into(),
                        "uncore".into(),
                        PKG_RANGE,
                        count(1_000_000, ms),
                        0,
                    ),
                    (
                        "0:2".into(),
                        "dram".into(),
                        PKG_RANGE,
                        count(2_000_000, ms),
                        0,
                    ),
                    (
                        "1".into(),
                        "psys".into(),
                        PKG_RANGE,
                        count(25_000_000, ms) % (PKG_RANGE + 1),
                        0,
                    ),
                ]
            }
            Flavor::IntelServer => (0..self.packages)
                .flat_map(|p| {
                    let w = 100 + 20 * u64::from(p);
                    [
                        (
                            p.to_string(),
                            format!("package-{p}"),
                            PKG_RANGE,
                            count(w * 1_000_000, ms) % (PKG_RANGE + 1),
                            0,
                        ),
                        (
                            format!("{p}:0"),
                            "dram".to_string(),
                            DRAM_RANGE,
                            count(15_000_000, ms) % (DRAM_RANGE + 1),
                            0,
                        ),
                    ]
                })
                .collect(),
            _ => return Ok(()),
        };
        let top = "devices/virtual/powercap/intel-rapl";
        t.link("sys/class/powercap/intel-rapl", &format!("../../{top}"))?;
        for (id, name, range, energy, _) in zones {
            let nested = match id.split_once(':') {
                Some((parent, _)) => format!("{top}/intel-rapl:{parent}/intel-rapl:{id}"),
                None => format!("{top}/intel-rapl:{id}"),
            };
            t.link(
                &format!("sys/class/powercap/intel-rapl:{id}"),
                &format!("../../{nested}"),
            )?;
            t.line(&format!("sys/{nested}/energy_uj"), energy)?;
            if full {
                t.line(&format!("sys/{nested}/name"), name)?;
                t.line(&format!("sys/{nested}/max_energy_range_uj"), range)?;
                t.line(&format!("sys/{nested}/enabled"), 1)?;
            }
        }
        Ok(())
    }
}

/// Writes one CPU's `thermal_throttle` counts.
fn write_throttle(t: &mut Tree, p: &Pos, ms: u64) -> io::Result<()> {
    let dir = format!("{CPU_DIR}/cpu{}/thermal_throttle", p.cpu);
    let core = if p.cpu == 5 { count(2, ms) } else { 0 };
    let pkg = if p.package == 0 {
        100 + count(1, ms)
    } else {
        0
    };
    t.line(&format!("{dir}/core_throttle_count"), core)?;
    t.line(
        &format!("{dir}/core_throttle_max_time_ms"),
        if core > 0 { 20 } else { 0 },
    )?;
    t.line(&format!("{dir}/core_throttle_total_time_ms"), core * 10)?;
    t.line(&format!("{dir}/package_throttle_count"), pkg)?;
    t.line(
        &format!("{dir}/package_throttle_max_time_ms"),
        if pkg > 0 { 40 } else { 0 },
    )?;
    t.line(&format!("{dir}/package_throttle_total_time_ms"), pkg * 20)
}

/// Context switches per second on a CPU.
fn csw_rate(cpu: u32) -> u64 {
    if cpu == 3 { 20_000 } else { 200 }
}

/// Run-queue wait per second on a CPU, ns: tasks queue behind the busy
/// CPU3 (50 ms/s, `RQwait%` 5); elsewhere `c % 4` ms/s.
fn rq_wait_rate(cpu: u32) -> u64 {
    if cpu == 3 {
        50_000_000
    } else {
        u64::from(cpu % 4) * 1_000_000
    }
}

/// Migrations per second on a CPU.
fn mig_rate(cpu: u32) -> u64 {
    if cpu == 3 { 500 } else { 5 }
}

impl Layout {
    fn write_noisetop(&self, t: &mut Tree, i: u32, ms: u64) -> io::Result<()> {
        let mono = mono_ns(&self.spec, i);
        t.put(
            "noisetop/clock",
            &format!("{mono} {}\n", BOOT_WALL_NS.saturating_add(mono)),
        )?;
        t.put("noisetop/perf", &perf::write_table(&self.perf_counts(ms)))?;
        t.put("noisetop/msr", &msr::write_table(&self.msr_reads(ms)))?;
        let file = crate::source::capture::ProbeFile {
            probe: self.probe(),
            energy_scale: std::collections::BTreeMap::new(),
        };
        let json = serde_json::to_string_pretty(&file).map_err(io::Error::other)?;
        t.put("noisetop/probe.json", &json)
    }

    /// perf events opened on one CPU, with their counts at `ms`.
    fn perf_values(&self, p: &Pos, ms: u64) -> Vec<(PerfEvent, u64)> {
        let c = p.cpu;
        let mut v = vec![
            (PerfEvent::ContextSwitches, count(csw_rate(c), ms)),
            (PerfEvent::Migrations, count(mig_rate(c), ms)),
        ];
        let tsc = count(self.tsc_hz(), ms) + u64::from(c) * 7;
        if self.prof.perf_hw {
            let b = busy(c);
            let pct = |x: u64| count(self.tsc_hz() / 100 * x, ms);
            v.extend([
                (PerfEvent::Aperf, count(self.bzy_mhz(c) * 10_000 * b, ms)),
                (PerfEvent::Mperf, pct(b)),
                (PerfEvent::Tsc, tsc),
                (PerfEvent::Smi, 11 + count(1, ms)),
                (PerfEvent::CoreC3, pct(if c == 1 { 0 } else { 5 })),
                (PerfEvent::CoreC6, pct(if c == 1 { 4 } else { 10 })),
                (PerfEvent::CoreC7, pct(deep(c))),
            ]);
            if self.is_leader(p) {
                v.extend([
                    (PerfEvent::PkgC2, pct(20)),
                    (PerfEvent::PkgC3, pct(5)),
                    (PerfEvent::PkgC6, pct(10)),
                    (PerfEvent::PkgC7, pct(5)),
                    (PerfEvent::PkgC8, pct(15)),
                    (PerfEvent::PkgC9, pct(0)),
                    (PerfEvent::PkgC10, pct(30)),
                ]);
            }
        } else if self.spec.flavor == Flavor::Vm {
            v.push((PerfEvent::Tsc, tsc));
        }
        // the guest has no virtual PMU; every other machine a core PMU
        if self.spec.flavor != Flavor::Vm {
            let cycles = self.bzy_mhz(c) * 10_000 * busy(c);
            v.extend([
                (
                    PerfEvent::Instructions,
                    count(cycles * u64::from(c % 4 + 1) / 2, ms),
                ),
                (PerfEvent::Cycles, count(cycles, ms)),
            ]);
        }
        v.sort_by_key(|(e, _)| *e);
        v
    }

    fn perf_counts(&self, ms: u64) -> Vec<PerfCounts> {
        let open_ns = (ms - UPTIME_MS + 1).saturating_mul(1_000_000);
        self.cpus
            .iter()
            .map(|p| PerfCounts {
                cpu: p.cpu,
                values: self.perf_values(p, ms),
                time_enabled_ns: open_ns,
                time_running_ns: open_ns,
            })
            .collect()
    }

    /// Register values of one instant, as a capture records the reads.
    fn msr_reads(&self, ms: u64) -> Vec<MsrRead> {
        let mut out = Vec::new();
        if self.prof.msrs == Msrs::None {
            return out;
        }
        let tsc_hz = self.tsc_hz();
        let pct = |x: u64| count(tsc_hz / 100 * x, ms);
        for p in &self.cpus {
            let c = p.cpu;
            let b = busy(c);
            let mut put = |reg: u32, v: u64| out.push((c, reg, Ok(v)));
            put(x86::MSR_TSC, count(tsc_hz, ms) + u64::from(c) * 7);
            put(x86::MSR_APERF, count(self.bzy_mhz(c) * 10_000 * b, ms));
            put(x86::MSR_MPERF, pct(b));
            let leader = self.is_leader(p);
            if self.prof.msrs == Msrs::Intel {
                put(x86::MSR_SMI_COUNT, 5 + count(1, ms));
                put(x86::MSR_CORE_C6_RESIDENCY, pct(deep(c)));
                put(x86::MSR_TEMPERATURE_TARGET, 100 << 16);
                put(x86::MSR_THERM_STATUS, therm(40 + u64::from(p.core_id % 16)));
                if leader {
                    let k = u64::from(p.package);
                    put(x86::MSR_PKG_C2_RESIDENCY, pct(10 + 10 * k));
                    put(x86::MSR_PKG_C6_RESIDENCY, pct(5 + 10 * k));
                    put(x86::MSR_PACKAGE_THERM_STATUS, therm(50 + k));
                    put(x86::MSR_RAPL_POWER_UNIT, 0x000A_0E03);
                    let rate = (100 + 20 * k) << 14;
                    // package 1 sits 10^6 counts below the wrap at instant 0
                    let energy = if p.package == 1 {
                        (1 << 32) - 1_000_000 + count(rate, ms - UPTIME_MS)
                    } else {
                        count(rate, ms)
                    };
                    put(x86::MSR_PKG_ENERGY_STATUS, energy & 0xFFFF_FFFF);
                    put(
                        x86::MSR_DRAM_ENERGY_STATUS,
                        count(1_000_000, ms) & 0xFFFF_FFFF,
                    );
                }
            } else {
                let core = self
                    .cpus
                    .iter()
                    .position(|q| q.package == p.package && q.core_id == p.core_id)
                    .unwrap_or(0);
                put(
                    x86::MSR_AMD_CORE_ENERGY_STATUS,
                    (count(3 << 16, ms) + core as u64 * 1000) & 0xFFFF_FFFF,
                );
                if leader {
                    put(x86::MSR_AMD_RAPL_POWER_UNIT, 0x000A_1003);
                    let w = 180 + 20 * u64::from(p.package);
                    put(
                        x86::MSR_AMD_PKG_ENERGY_STATUS,
                        count(w << 16, ms) & 0xFFFF_FFFF,
                    );
                }
            }
        }
        out
    }

    fn probe(&self) -> Probe {
        let mut probe = Probe::default();
        let mut opened: HashSet<PerfEvent> = HashSet::new();
        for p in &self.cpus {
            for (ev, _) in self.perf_values(p, UPTIME_MS) {
                opened.insert(ev);
                probe.perf_opened.push((p.cpu, ev.key()));
            }
        }
        for ev in PerfEvent::ALL.into_iter().filter(|e| !opened.contains(e)) {
            probe.perf_failed.push((ev.key(), self.perf_reason(ev)));
        }
        probe.msr = match (self.prof.msrs, self.spec.flavor) {
            (Msrs::Intel | Msrs::Amd, _) => Ok(()),
            (_, Flavor::Arm64) => Err("MSRs exist on x86 only".into()),
            _ => {
                Err("no /dev/cpu/0/msr: load the msr module (modprobe msr) and run as root".into())
            }
        };
        probe.msr_regs = match self.prof.msrs {
            Msrs::Intel => vec![
                x86::MSR_TSC,
                x86::MSR_APERF,
                x86::MSR_MPERF,
                x86::MSR_SMI_COUNT,
                x86::MSR_THERM_STATUS,
                x86::MSR_TEMPERATURE_TARGET,
                x86::MSR_PACKAGE_THERM_STATUS,
                x86::MSR_CORE_C6_RESIDENCY,
                x86::MSR_PKG_C2_RESIDENCY,
                x86::MSR_PKG_C6_RESIDENCY,
                x86::MSR_RAPL_POWER_UNIT,
                x86::MSR_PKG_ENERGY_STATUS,
                x86::MSR_DRAM_ENERGY_STATUS,
            ],
            Msrs::Amd => vec![
                x86::MSR_TSC,
                x86::MSR_APERF,
                x86::MSR_MPERF,
                x86::MSR_AMD_RAPL_POWER_UNIT,
                x86::MSR_AMD_PKG_ENERGY_STATUS,
                x86::MSR_AMD_CORE_ENERGY_STATUS,
            ],
            Msrs::None => Vec::new(),
        };
        probe
    }

    /// Why an event did not open, in the words the live probe uses.
    fn perf_reason(&self, ev: PerfEvent) -> String {
        let pmu = ev.pmu();
        match (self.spec.flavor, pmu) {
            (_, "hardware") => perf::NO_HW_PMU_REASON.into(),
            (Flavor::Vm, "msr") => format!("perf msr PMU has no {} event (VM?)", ev.name()),
            (Flavor::Arm64 | Flavor::IntelServer | Flavor::AmdServer, "msr") => {
                "no perf msr PMU (kernel without the x86 msr PMU)".into()
            }
            (_, "power") => "no perf power PMU (no RAPL in this kernel or CPU, or a VM)".into(),
            (Flavor::IntelLaptop, _) => format!(
                "perf {pmu} PMU has no {} event (not on this CPU model)",
                ev.name()
            ),
            _ => format!("no perf {pmu} PMU (Intel only, absent in VMs)"),
        }
    }
}

/// An `IA32_(PACKAGE_)THERM_STATUS` value for `temp` °C under `TjMax` 100:
/// reading valid (bit 31), resolution 1 °C (bits 30:27), readout 22:16.
fn therm(temp: u64) -> u64 {
    0x8800_0000 | ((100 - temp.min(100)) << 16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::interrupts::parse_interrupts;
    use crate::collect::stat;
    use crate::source::capture::Captured;
    use crate::source::msr::MsrAccess;

    fn tree(spec: &Spec) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        write_capture(dir.path(), spec).unwrap();
        dir
    }

    fn read(dir: &tempfile::TempDir, rel: &str) -> String {
        std::fs::read_to_string(dir.path().join(rel)).unwrap()
    }

    #[test]
    fn spec_without_cpus_or_instants_or_too_long_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut spec = Spec::new(Flavor::Vm, 0);
        let refused = |spec: &Spec| write_capture(dir.path(), spec).unwrap_err().kind();
        assert_eq!(refused(&spec), io::ErrorKind::InvalidInput);
        spec.cpus = MAX_CPUS + 1;
        assert_eq!(refused(&spec), io::ErrorKind::InvalidInput);
        spec.cpus = 2;
        spec.interval_ms = MAX_SPAN_MS;
        spec.instants = 3;
        assert_eq!(refused(&spec), io::ErrorKind::InvalidInput);
        spec.instants = 0;
        assert_eq!(refused(&spec), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn interrupts_are_laid_out_as_the_kernel_prints_them() {
        // the build VM's own /proc/interrupts: `%*s` header of prec + 8
        // spaces, `CPU%-8d` columns, `%10u ` counts, chip `%8s`, hwirq
        // ` %*lu`, `-%-8s` trigger name, two spaces, the action
        let dir = tree(&Spec::new(Flavor::Vm, 2));
        let text = read(&dir, "0000/proc/interrupts");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "           CPU0       CPU1       ");
        assert_eq!(
            lines[1],
            " 24:          1          0  IO-APIC   5-edge      ACPI:Ged"
        );
        assert!(lines.contains(&"ERR:          0"));
        let loc = lines.iter().find(|l| l.starts_with("LOC:")).unwrap();
        // 250 ticks/s for 1000 s on CPU0, 4/s on CPU1
        assert_eq!(*loc, "LOC:     250000       4000   Local timer interrupts");
        let t = parse_interrupts(&text).unwrap();
        assert_eq!(t.cpus, [0, 1]);
    }

    #[test]
    fn arm64_ipi_rows_have_no_space_after_the_colon() {
        let dir = tree(&Spec::new(Flavor::Arm64, 2));
        let text = read(&dir, "0000/proc/interrupts");
        // IPI0 is Rescheduling: 20/s for 1000 s on both CPUs
        assert!(
            text.contains("IPI0:     20000      20000       Rescheduling interrupts\n"),
            "{text}"
        );
        assert!(text.contains(" 10:"));
        assert!(text.contains("    GICv3  27 Level     arch_timer\n"));
        assert!(text.ends_with("Err:          0\n"));
    }

    #[test]
    fn proc_stat_total_line_is_the_sum_of_the_cpus() {
        let dir = tree(&Spec::new(Flavor::IntelServer, 8));
        let st = stat::parse(&read(&dir, "0000/proc/stat")).unwrap();
        let total = st.total.unwrap();
        assert_eq!(st.cpus.len(), 8);
        assert_eq!(total.user, st.cpus.values().map(|c| c.user).sum::<u64>());
        // 100 ticks/s per CPU for 1000 s
        let c0 = st.cpus[&0];
        let all = c0.user + c0.nice + c0.system + c0.idle;
        assert_eq!(all + c0.irq.unwrap() + c0.softirq.unwrap(), 100_000);
        assert_eq!(st.ctxt, Some(1000 * (7 * 200 + 20_000)));
    }

    #[test]
    fn later_instants_hold_only_what_is_read_each_interval() {
        let dir = tree(&Spec::new(Flavor::IntelServer, 4));
        let idle = "sys/devices/system/cpu/cpu1/cpuidle/state3";
        for i in ["0000", "0001"] {
            assert!(dir.path().join(i).join(idle).join("time").is_file());
            assert!(dir.path().join(i).join("proc/stat").is_file());
        }
        assert_eq!(read(&dir, &format!("0000/{idle}/name")), "C6\n");
        assert!(!dir.path().join("0001").join(idle).join("name").exists());
        assert!(!dir.path().join("0001/proc/cpuinfo").exists());
    }

    #[test]
    fn clock_and_msr_table_load_back() {
        let spec = Spec {
            interval_ms: 250,
            ..Spec::new(Flavor::IntelServer, 4)
        };
        let dir = tree(&spec);
        let mut one = Captured::load(&dir.path().join("0001")).unwrap();
        assert_eq!(one.stamp.mono_ns, 1_000_250_000_000);
        assert!(one.probe.msr_has(x86::MSR_APERF));
        // CPU0 APERF: 2100 MHz · 20 % for 1000.25 s
        let msr = one.msr.as_mut().unwrap();
        assert_eq!(msr.read(0, x86::MSR_APERF).unwrap(), 420_105_000_000);
        // package registers live on the package leaders only (CPUs 0 and 1)
        assert!(msr.read(0, x86::MSR_PKG_ENERGY_STATUS).is_ok());
        assert!(msr.read(2, x86::MSR_PKG_ENERGY_STATUS).is_err());
    }
}
