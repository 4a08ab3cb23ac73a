//! Who ran on each CPU and what interrupted it, counted in the kernel by
//! BPF programs (`bpf/noise.bpf.c`, compiled into `bpf/noise.bpf.o` and
//! built into noisetop), and read back here from a CPU of noisetop's own:
//! the programs add into one fixed area per CPU, which this maps
//! read-only, so a read is plain memory access that interrupts no one and
//! no event is ever copied out.
//!
//! The loader is noisetop's own, not aya or libbpf-rs, for a measured
//! reason: setup must stay within a few milliseconds of CPU. aya 0.14 reads
//! and parses the whole kernel BTF (5.5 MB here: 6.8 ms to read through
//! sysfs, 16 ms to parse) and verifies one program per tracepoint (30:
//! 394 ms of CPU here); libbpf-rs needs a C toolchain to build. This one
//! maps the kernel BTF (no copy) and scans it once for the three
//! tracepoint ids it needs (under 1 ms), hands the CO-RE relocations to the
//! kernel, which applies them against its own BTF (Linux 5.17+), and
//! attaches one raw-tracepoint program to every vector tracepoint.

pub(crate) mod btf;
pub mod layout;
pub(crate) mod object;
pub mod read;
mod sys;

use std::ffi::CString;
use std::os::fd::OwnedFd;
use std::path::Path;

use self::btf::kind;
use self::layout::{CPU_AREA_SIZE, CTL_SIZE, REMOTE_SIZE};
pub use self::sys::Mapping;
use crate::base::{Cause, Unavailable};

/// The compiled programs.
pub const OBJECT: &[u8] = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/bpf/noise.bpf.o"));

const BPF_PROG_TYPE_RAW_TRACEPOINT: u32 = 17;
const BPF_PROG_TYPE_TRACING: u32 = 26;
const BPF_TRACE_RAW_TP: u32 = 23;

/// The x86 system-vector tracepoints, each passing its vector number
/// (a kernel without one, such as one built without MCE, leaves it out).
const VECTORS: [&str; 11] = [
    "local_timer",
    "reschedule",
    "call_function",
    "call_function_single",
    "irq_work",
    "thermal_apic",
    "threshold_apic",
    "deferred_error_apic",
    "error_apic",
    "spurious_apic",
    "x86_platform_ipi",
];

/// Why the programs could not be loaded: what to tell the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// The kernel publishes no BTF.
    #[error("the kernel has no BTF ({0} is missing: it needs CONFIG_DEBUG_INFO_BTF)")]
    NoBtf(String),
    /// Not allowed: privileges.
    #[error("{0}")]
    Permission(String),
    /// Not allowed even to root: the kernel is locked down.
    #[error("{0}")]
    Lockdown(String),
    /// The kernel lacks something the programs use.
    #[error("{0}")]
    KernelLacks(String),
    /// The object itself is wrong (a build defect).
    #[error("{0}")]
    Object(String),
}

impl Refused {
    /// The kind of reason, for callers that act on it rather than say it.
    pub fn cause(&self) -> Cause {
        match self {
            Refused::NoBtf(_) | Refused::KernelLacks(_) => Cause::KernelLacks,
            Refused::Permission(_) => Cause::Permission,
            Refused::Lockdown(_) => Cause::Lockdown,
            Refused::Object(_) => Cause::Failed,
        }
    }

    /// The refusal as the driver keeps it: its cause, and its words after
    /// `BPF: `.
    pub fn unavailable(&self) -> Unavailable {
        Unavailable::new(self.cause(), format!("BPF: {self}"))
    }
}

/// Classifies what the kernel answered `what` by its errno: EPERM and
/// EACCES are a permission (a lockdown, where the kernel is locked down);
/// anything else is `otherwise`.
fn by_errno(
    what: &str,
    e: &std::io::Error,
    sysfs: &Path,
    otherwise: impl FnOnce() -> Refused,
) -> Refused {
    match e.raw_os_error() {
        Some(libc::EPERM | libc::EACCES) => permission(what, e, sysfs),
        _ => otherwise(),
    }
}

fn permission(what: &str, e: &std::io::Error, sysfs: &Path) -> Refused {
    let lockdown = std::fs::read_to_string(sysfs.join("kernel/security/lockdown"))
        .ok()
        .and_then(|t| {
            let on = t.split_whitespace().find(|w| w.starts_with('['))?;
            (on != "[none]").then(|| on.trim_matches(['[', ']']).to_string())
        });
    match lockdown {
        Some(mode) => Refused::Lockdown(format!(
            "{what} was refused ({ew}): the kernel is locked down ({mode}), which forbids \
             BPF programs that read kernel memory",
            ew = crate::os::sys::os_words(e)
        )),
        None => Refused::Permission(format!(
            "{what} was refused ({ew}): it needs root, or CAP_BPF with CAP_PERFMON",
            ew = crate::os::sys::os_words(e)
        )),
    }
}

/// The programs, loaded and attached, and the maps they fill.
#[derive(Debug)]
pub struct Loaded {
    /// One area per possible CPU.
    pub areas: Mapping,
    /// One line per possible CPU of counts other CPUs add.
    pub remotes: Mapping,
    /// The control line (window number).
    ctl: Mapping,
    /// Possible CPUs (areas).
    pub nr_cpus: u32,
    /// Tracepoints the kernel does not have (not x86): nothing counted there.
    pub absent: Vec<String>,
    // held for their lifetime: closing a link detaches its program
    _links: Vec<OwnedFd>,
    _progs: Vec<OwnedFd>,
    _maps: Vec<OwnedFd>,
    _btf: OwnedFd,
}

impl Loaded {
    /// The window number the programs tag slots and maxima with.
    pub fn generation(&self) -> u32 {
        self.ctl.u32(layout::line::GEN)
    }

    /// Starts a new window number.
    pub fn set_generation(&self, g: u32) {
        self.ctl.set_u32(layout::line::GEN, g);
    }

    /// Says when the areas were first read (`CLOCK_MONOTONIC` ns): a CPU
    /// whose first event comes later ran its current task since then.
    pub fn set_first_read(&self, ns: u64) {
        if self.ctl.u64(layout::line::T0) == 0 {
            self.ctl.set_u64(layout::line::T0, ns);
        }
    }
}

/// A CPU's context switches and migrations in, as counted so far: plain
/// reads of two counters its programs only ever increase.
pub fn switches(l: &Loaded, cpu: u32) -> (u64, u64) {
    let b = cpu as usize * CPU_AREA_SIZE;
    (
        l.areas.u64(b + layout::head::SWITCHES),
        l.areas.u64(b + layout::head::MIG_IN),
    )
}

/// The possible CPUs' count from `possible` (`0-255`): the highest + 1.
pub fn possible_cpus(sysfs: &Path) -> Option<u32> {
    let t = crate::os::read_small(&sysfs.join("devices/system/cpu/possible"), 4096).ok()?;
    crate::base::cpulist::parse(t.trim())
        .ok()?
        .into_iter()
        .max()
        .map(|m| m + 1)
}

/// Loads and attaches the programs. `sysfs` is the live `/sys`.
pub fn load(sysfs: &Path) -> Result<Loaded, Refused> {
    let obj = object::BpfObject::parse(OBJECT).map_err(|e| Refused::Object(e.to_string()))?;
    let nr_cpus = possible_cpus(sysfs)
        .ok_or_else(|| Refused::KernelLacks("the possible CPUs cannot be read".into()))?;

    // the tracepoint ids the BTF programs attach to
    let vmlinux = sysfs.join("kernel/btf/vmlinux");
    let kernel_btf = match sys::FileMap::open(&vmlinux) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Refused::NoBtf(vmlinux.display().to_string()));
        }
        Err(e) => {
            return Err(Refused::KernelLacks(format!(
                "{} cannot be mapped: {ew}",
                vmlinux.display(),
                ew = crate::os::sys::os_words(&e)
            )));
        }
    };
    let tracing: Vec<&object::ProgDef> = obj
        .programs
        .iter()
        .filter(|p| p.section.starts_with("tp_btf/"))
        .collect();
    let typedefs: Vec<String> = tracing
        .iter()
        .map(|p| format!("btf_trace_{}", &p.section["tp_btf/".len()..]))
        .collect();
    let wanted: Vec<(u32, &str)> = typedefs
        .iter()
        .map(|t| (kind::TYPEDEF, t.as_str()))
        .collect();
    let ids =
        btf::scan(kernel_btf.bytes(), &wanted).map_err(|e| Refused::KernelLacks(e.to_string()))?;
    drop(kernel_btf);

    let btf_fd = sys::btf_load(&obj.btf).map_err(|(e, log)| {
        by_errno("loading BPF type data", &e, sysfs, || {
            Refused::Object(format!(
                "the kernel refused the programs' type data: {ew}: {log}",
                ew = crate::os::sys::os_words(&e)
            ))
        })
    })?;
    // the maps, sized for every possible CPU
    let mut maps: Vec<(String, OwnedFd)> = Vec::new();
    for m in &obj.maps {
        let entries = match m.name.as_str() {
            "areas" | "remotes" => nr_cpus,
            _ => m.max_entries,
        };
        let fd = sys::map_create(&sys::MapSpec {
            name: &m.name,
            map_type: m.map_type,
            key_size: m.key_size,
            value_size: m.value_size,
            max_entries: entries,
            flags: m.flags,
            btf: (m.map_type == 29).then_some((&btf_fd, m.key_type, m.value_type)),
        })
        .map_err(|e| {
            by_errno("creating a BPF map", &e, sysfs, || {
                Refused::KernelLacks(if m.map_type == 29 {
                    format!(
                        "the kernel cannot keep task storage for BPF ({ew}): Linux 5.11 or newer",
                        ew = crate::os::sys::os_words(&e)
                    )
                } else {
                    format!(
                        "creating BPF map {}: {ew}",
                        m.name,
                        ew = crate::os::sys::os_words(&e)
                    )
                })
            })
        })?;
        maps.push((m.name.clone(), fd));
    }
    let fd_of = |name: &str| {
        maps.iter()
            .find(|(n, _)| n == name)
            .map(|(_, fd)| fd)
            .ok_or_else(|| Refused::Object(format!("the object defines no map {name}")))
    };
    let map_err = |e: std::io::Error| {
        Refused::KernelLacks(format!(
            "mapping a BPF map: {ew}",
            ew = crate::os::sys::os_words(&e)
        ))
    };
    let areas =
        Mapping::new(fd_of("areas")?, CPU_AREA_SIZE * nr_cpus as usize, false).map_err(map_err)?;
    let remotes =
        Mapping::new(fd_of("remotes")?, REMOTE_SIZE * nr_cpus as usize, false).map_err(map_err)?;
    let ctl = Mapping::new(fd_of("ctls")?, CTL_SIZE, true).map_err(map_err)?;
    // slots are claimable from window 2 on (a slot is free two windows
    // after its task last ran; a fresh one counts as window 0)
    ctl.set_u32(layout::line::GEN, 2);
    ctl.set_u32(layout::line::NR_CPUS, nr_cpus);
    let mut loaded = Vec::new();
    for p in &obj.programs {
        let mut insns = p.insns.clone();
        for (at, map) in &p.map_refs {
            use std::os::fd::AsRawFd as _;
            let fd = fd_of(map)?.as_raw_fd();
            let i = at * 8;
            // ld_imm64 of a map: src_reg BPF_PSEUDO_MAP_FD (1), imm the fd
            insns[i + 1] = (insns[i + 1] & 0x0f) | (1 << 4);
            insns[i + 4..i + 8].copy_from_slice(&fd.to_le_bytes());
        }
        let relos: Vec<u8> = p
            .core_relos
            .iter()
            .flat_map(|r| {
                [r.insn_off, r.type_id, r.access_str_off, r.kind]
                    .into_iter()
                    .flat_map(u32::to_le_bytes)
            })
            .collect();
        let tracepoint = p.section.strip_prefix("tp_btf/");
        let (prog_type, attach_type, attach_btf_id) = match tracepoint {
            Some(tp) => {
                let Some(&id) = ids.get(&(kind::TYPEDEF, format!("btf_trace_{tp}"))) else {
                    return Err(Refused::KernelLacks(format!(
                        "the kernel has no tracepoint {tp} in its BTF"
                    )));
                };
                (BPF_PROG_TYPE_TRACING, BPF_TRACE_RAW_TP, id)
            }
            None => (BPF_PROG_TYPE_RAW_TRACEPOINT, 0, 0),
        };
        let fd = sys::prog_load(&sys::ProgSpec {
            name: &p.name,
            prog_type,
            attach_type,
            attach_btf_id,
            insns: &insns,
            license: &obj.license,
            btf: &btf_fd,
            core_relos: &relos,
            funcs: &p.funcs,
        })
        .map_err(|(e, log)| {
            let lacks = || {
                Refused::KernelLacks(format!(
                    "the kernel refused program {}: {ew}: {log}",
                    p.name,
                    ew = crate::os::sys::os_words(&e)
                ))
            };
            // the verifier's log says what it rejected: the kernel lacks it
            if log.is_empty() {
                by_errno("loading a BPF program", &e, sysfs, lacks)
            } else {
                lacks()
            }
        })?;
        let targets: Vec<String> = match p.name.as_str() {
            "on_irq_entry" => vec!["irq_handler_entry".into()],
            "on_irq_exit" => vec!["irq_handler_exit".into()],
            "on_softirq_entry" => vec!["softirq_entry".into()],
            "on_softirq_exit" => vec!["softirq_exit".into()],
            "on_vector_entry" => VECTORS.iter().map(|v| format!("{v}_entry")).collect(),
            "on_vector_exit" => VECTORS.iter().map(|v| format!("{v}_exit")).collect(),
            "on_cpu_idle" => vec!["cpu_idle".into()],
            _ if tracepoint.is_some() => Vec::new(),
            other => {
                return Err(Refused::Object(format!(
                    "no tracepoint for program {other}"
                )));
            }
        };
        loaded.push((p.name.clone(), tracepoint.is_some(), targets, fd));
    }
    let mut progs = Vec::new();
    let mut links = Vec::new();
    let mut absent = Vec::new();
    // exits before entries (an entry seen without its exit would leave a
    // frame that never ends), the scheduler's last (a slice begins at a
    // switch, and the interruptions in it are then all seen)
    loaded.sort_by_key(|(name, btf_tracepoint, ..)| (*btf_tracepoint, !name.ends_with("_exit")));
    for (name, btf_tracepoint, targets, fd) in loaded {
        if btf_tracepoint {
            links.push(sys::raw_tracepoint_open(&fd, None).map_err(|e| {
                Refused::KernelLacks(format!(
                    "attaching {name}: {ew}",
                    ew = crate::os::sys::os_words(&e)
                ))
            })?);
        }
        for t in targets {
            let tp = CString::new(t.clone()).map_err(|e| Refused::Object(e.to_string()))?;
            match sys::raw_tracepoint_open(&fd, Some(&tp)) {
                Ok(l) => links.push(l),
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => absent.push(t),
                Err(e) => {
                    return Err(Refused::KernelLacks(format!(
                        "attaching {name} to {t}: {ew}",
                        ew = crate::os::sys::os_words(&e)
                    )));
                }
            }
        }
        progs.push(fd);
    }
    Ok(Loaded {
        areas,
        remotes,
        ctl,
        nr_cpus,
        absent,
        _links: links,
        _progs: progs,
        _maps: maps.into_iter().map(|(_, fd)| fd).collect(),
        _btf: btf_fd,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sysfs_locked(mode: Option<&str>) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        if let Some(line) = mode {
            std::fs::create_dir_all(dir.path().join("kernel/security")).unwrap();
            std::fs::write(dir.path().join("kernel/security/lockdown"), line).unwrap();
        }
        dir
    }

    fn lacks() -> Refused {
        Refused::KernelLacks("creating BPF map areas: Invalid argument".into())
    }

    #[test]
    fn eperm_and_eacces_are_a_permission_without_lockdown() {
        for (errno, words) in [
            (libc::EPERM, "Operation not permitted"),
            (libc::EACCES, "Permission denied"),
        ] {
            // no lockdown file, or one that says none
            for dir in [
                sysfs_locked(None),
                sysfs_locked(Some("[none] integrity confidentiality\n")),
            ] {
                let e = std::io::Error::from_raw_os_error(errno);
                let r = by_errno("loading a BPF program", &e, dir.path(), lacks);
                assert_eq!(r.cause(), Cause::Permission, "{r}");
                assert!(
                    r.to_string()
                        .starts_with("loading a BPF program was refused (")
                        && r.to_string().contains(words)
                        && r.to_string()
                            .ends_with("it needs root, or CAP_BPF with CAP_PERFMON"),
                    "{r}"
                );
            }
        }
    }

    #[test]
    fn eperm_under_lockdown_is_a_lockdown_that_names_its_mode() {
        let dir = sysfs_locked(Some("none [integrity] confidentiality\n"));
        let e = std::io::Error::from_raw_os_error(libc::EPERM);
        let r = by_errno("creating a BPF map", &e, dir.path(), lacks);
        assert_eq!(r.cause(), Cause::Lockdown);
        assert!(
            r.to_string()
                .contains("the kernel is locked down (integrity), which forbids BPF programs"),
            "{r}"
        );
    }

    #[test]
    fn other_errnos_are_what_the_caller_says_the_kernel_lacks() {
        let dir = sysfs_locked(None);
        for errno in [libc::ENOENT, libc::EINVAL, libc::EOPNOTSUPP, libc::E2BIG] {
            let e = std::io::Error::from_raw_os_error(errno);
            let r = by_errno("creating a BPF map", &e, dir.path(), lacks);
            assert_eq!(r, lacks(), "errno {errno}");
            assert_eq!(r.cause(), Cause::KernelLacks);
        }
    }

    #[test]
    fn each_refusal_has_its_cause_and_keeps_its_words_after_bpf() {
        let no_btf = Refused::NoBtf("/sys/kernel/btf/vmlinux".into());
        assert_eq!(no_btf.cause(), Cause::KernelLacks);
        assert_eq!(
            no_btf.unavailable().detail,
            "BPF: the kernel has no BTF (/sys/kernel/btf/vmlinux is missing: it needs \
             CONFIG_DEBUG_INFO_BTF)"
        );
        assert_eq!(Refused::Object("x".into()).cause(), Cause::Failed);
        let perm = Refused::Permission("p".into()).unavailable();
        assert_eq!(
            (perm.cause, perm.to_string().as_str()),
            (Cause::Permission, "BPF: p")
        );
    }

    #[test]
    fn the_object_holds_the_programs_and_maps_the_loader_expects() {
        let obj = object::BpfObject::parse(OBJECT).unwrap();
        let mut names: Vec<&str> = obj.programs.iter().map(|p| p.name.as_str()).collect();
        names.sort_unstable();
        assert_eq!(
            names,
            [
                "on_cpu_idle",
                "on_irq_entry",
                "on_irq_exit",
                "on_softirq_entry",
                "on_softirq_exit",
                "on_switch",
                "on_vector_entry",
                "on_vector_exit",
                "on_wakeup_new",
                "on_wakeup_tp"
            ]
        );
        let sw = obj.program("on_switch").unwrap();
        assert_eq!(sw.section, "tp_btf/sched_switch");
        assert!(!sw.core_relos.is_empty(), "the task fields are relocated");
        assert!(sw.map_refs.iter().any(|(_, m)| m == "areas"));
        let areas = obj.maps.iter().find(|m| m.name == "areas").unwrap();
        assert_eq!(
            (areas.map_type, areas.value_size as usize),
            (2, CPU_AREA_SIZE)
        );
        assert_eq!(areas.flags & (1 << 10), 1 << 10, "mmapable");
        let wakes = obj.maps.iter().find(|m| m.name == "wakes").unwrap();
        assert_eq!(
            (wakes.map_type, wakes.key_size, wakes.value_size),
            (29, 4, 16)
        );
        assert_eq!(obj.license.last(), Some(&0));
    }

    /// The slice accounting is one global subprogram: appended once to the
    /// switch program, after its own code, with every call pointing at it,
    /// and its map reference kept.
    #[test]
    fn the_switch_program_carries_its_subprogram_linked() {
        let obj = object::BpfObject::parse(OBJECT).unwrap();
        let sw = obj.program("on_switch").unwrap();
        assert_eq!(sw.funcs.len(), 2, "{:?}", sw.funcs);
        let (own, sub) = (sw.funcs[0], sw.funcs[1]);
        assert_eq!(own.0, 0);
        assert_ne!(own.1, sub.1);
        let n = sw.insns.len() / 8;
        let start = sub.0 as usize;
        assert!(start > 0 && start < n);
        let calls: Vec<usize> = (0..n)
            .filter(|&i| sw.insns[i * 8] == 0x85 && sw.insns[i * 8 + 1] >> 4 == 1)
            .collect();
        assert_eq!(calls.len(), 3, "three calls of add_slice");
        for c in calls {
            assert!(c < start, "the call at {c} is in the program's own code");
            let imm = i32::from_le_bytes(sw.insns[c * 8 + 4..c * 8 + 8].try_into().unwrap());
            assert_eq!(c as i64 + 1 + i64::from(imm), start as i64, "call at {c}");
        }
        assert!(
            sw.map_refs.iter().any(|(i, m)| *i >= start && m == "areas"),
            "the subprogram's lookup of the areas is relocated: {:?}",
            sw.map_refs
        );
        for p in obj.programs.iter().filter(|p| p.name != "on_switch") {
            assert_eq!(p.funcs, [(0, p.funcs[0].1)], "{}", p.name);
        }
    }
}
