//! Model-specific register access: the `MsrAccess` trait, the live
//! `/dev/cpu/N/msr` reader, a map-backed fake, a recorder for captures, and
//! the text table that stores recorded reads in a captured tree.
//!
//! The msr driver reads register `reg` of CPU N with `pread(fd, 8, reg)`.
//! Registers are not bytes: a sparse file only stands in for the device when
//! the registers in it are at least 8 apart, so unit tests use `FakeMsr`.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::base::cpu_map::CpuMap;
use crate::base::{Cause, ParseError};

/// Reads one 64-bit MSR of one CPU.
pub trait MsrAccess {
    /// Reads register `reg` of CPU `cpu`; EIO means the CPU lacks the register.
    fn read(&mut self, cpu: u32, reg: u32) -> io::Result<u64>;
}

impl<M: MsrAccess + ?Sized> MsrAccess for Box<M> {
    fn read(&mut self, cpu: u32, reg: u32) -> io::Result<u64> {
        (**self).read(cpu, reg)
    }
}

impl<M: MsrAccess + ?Sized> MsrAccess for &mut M {
    fn read(&mut self, cpu: u32, reg: u32) -> io::Result<u64> {
        (**self).read(cpu, reg)
    }
}

/// Reads `<dev>/cpu/N/msr`, opened read-only once per CPU and kept open.
#[derive(Debug)]
pub struct DevMsr {
    dev_root: PathBuf,
    files: HashMap<u32, File>,
}

impl DevMsr {
    /// Creates a reader under a device root (normally `/dev`); opens nothing yet.
    pub fn new(dev_root: &Path) -> Self {
        DevMsr {
            dev_root: dev_root.to_path_buf(),
            files: HashMap::new(),
        }
    }

    /// Returns the device path of one CPU: `<dev>/cpu/N/msr`.
    pub fn path(&self, cpu: u32) -> PathBuf {
        self.dev_root.join("cpu").join(cpu.to_string()).join("msr")
    }

    /// Opens CPU `cpu`'s device and says, for the user, why MSRs are unusable.
    pub fn probe(&mut self, cpu: u32) -> Result<(), MsrOpenError> {
        match self.file(cpu) {
            Ok(_) => Ok(()),
            Err(e) => Err(self.open_reason(cpu, e)),
        }
    }

    fn file(&mut self, cpu: u32) -> io::Result<&File> {
        if !self.files.contains_key(&cpu) {
            // Read-only is enough for rdmsr; the driver checks CAP_SYS_RAWIO at open.
            // O_NONBLOCK: a FIFO put where the device belongs must not block
            // `open`; the msr driver ignores the flag
            let f = crate::os::fs::open_nonblocking(&self.path(cpu))?;
            self.files.insert(cpu, f);
        }
        self.files
            .get(&cpu)
            .ok_or_else(|| io::Error::other("msr file vanished"))
    }

    fn open_reason(&self, cpu: u32, e: io::Error) -> MsrOpenError {
        let path = self.path(cpu);
        match (e.kind(), e.raw_os_error()) {
            (io::ErrorKind::NotFound, _) if cpu != 0 && self.path(0).exists() => {
                MsrOpenError::NoSuchCpu { path, cpu }
            }
            (io::ErrorKind::NotFound, _) => MsrOpenError::NoDriver(path),
            (io::ErrorKind::PermissionDenied, _) => MsrOpenError::Denied(path),
            (_, Some(libc::ENXIO)) => MsrOpenError::Offline { path, cpu },
            (_, Some(libc::EIO)) => MsrOpenError::NoSupport { path, cpu },
            _ => MsrOpenError::Other { path, source: e },
        }
    }
}

/// Why a CPU's msr device cannot be opened, with what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum MsrOpenError {
    /// No device for this CPU while CPU 0 has one.
    #[error("no {}: CPU {cpu} is offline or does not exist", .path.display())]
    NoSuchCpu {
        /// The device.
        path: PathBuf,
        /// The CPU.
        cpu: u32,
    },
    /// No device at all: the msr module is not loaded.
    #[error("no {}: load the msr module (modprobe msr) and run as root", .0.display())]
    NoDriver(PathBuf),
    /// Not root, or without `CAP_SYS_RAWIO`.
    #[error("{}: permission denied: run as root or grant CAP_SYS_RAWIO", .0.display())]
    Denied(PathBuf),
    /// The driver says the CPU is offline (ENXIO).
    #[error("{}: CPU {cpu} is offline", .path.display())]
    Offline {
        /// The device.
        path: PathBuf,
        /// The CPU.
        cpu: u32,
    },
    /// The CPU has no MSRs (EIO).
    #[error("{}: CPU {cpu} has no MSR support", .path.display())]
    NoSupport {
        /// The device.
        path: PathBuf,
        /// The CPU.
        cpu: u32,
    },
    /// Any other failure of the open.
    #[error("{}: {source}", .path.display())]
    Other {
        /// The device.
        path: PathBuf,
        /// What the open said.
        source: io::Error,
    },
}

impl MsrOpenError {
    /// The kind of reason: permission, a kernel or CPU without MSRs, or
    /// another failure.
    pub fn cause(&self) -> Cause {
        match self {
            MsrOpenError::Denied(_) => Cause::Permission,
            MsrOpenError::NoDriver(_) | MsrOpenError::NoSupport { .. } => Cause::KernelLacks,
            MsrOpenError::NoSuchCpu { .. }
            | MsrOpenError::Offline { .. }
            | MsrOpenError::Other { .. } => Cause::Failed,
        }
    }
}

impl MsrAccess for DevMsr {
    fn read(&mut self, cpu: u32, reg: u32) -> io::Result<u64> {
        let mut b = [0u8; 8];
        self.file(cpu)?.read_exact_at(&mut b, u64::from(reg))?;
        Ok(u64::from_le_bytes(b))
    }
}

const NOT_SUPPORTED: &str = "not supported on this CPU";
const DENIED: &str = "permission denied: run as root or grant CAP_SYS_RAWIO";
const NO_DEVICE: &str = "no msr device: load the msr module (modprobe msr) and run as root";
const OFFLINE: &str = "CPU offline";
const SHORT: &str = "short read (not an msr device?)";

/// Why one register read failed, as a capture stores it: the kinds the
/// driver's errno tells apart, or the words of another error.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum MsrFault {
    /// EIO: the CPU lacks the register.
    #[error("{NOT_SUPPORTED}")]
    NotSupported,
    /// ENXIO: the CPU is offline.
    #[error("{OFFLINE}")]
    Offline,
    /// Not root, or without `CAP_SYS_RAWIO`.
    #[error("{DENIED}")]
    Denied,
    /// No msr device.
    #[error("{NO_DEVICE}")]
    NoDevice,
    /// Fewer than 8 bytes came back.
    #[error("{SHORT}")]
    Short,
    /// Another error, in its own words.
    #[error("{0}")]
    Other(String),
}

impl MsrFault {
    /// Reads a fault back from its text (`MsrFault::from_text(&f.to_string()) == f`).
    pub fn from_text(msg: &str) -> MsrFault {
        match msg {
            NOT_SUPPORTED => MsrFault::NotSupported,
            OFFLINE => MsrFault::Offline,
            DENIED => MsrFault::Denied,
            NO_DEVICE => MsrFault::NoDevice,
            SHORT => MsrFault::Short,
            other => MsrFault::Other(other.to_string()),
        }
    }

    /// Rebuilds the error a read gave, so a replayed read fails the way the
    /// recorded one did (`describe(&f.to_io()) == f`).
    pub fn to_io(&self) -> io::Error {
        match self {
            MsrFault::NotSupported => io::Error::from_raw_os_error(libc::EIO),
            MsrFault::Offline => io::Error::from_raw_os_error(libc::ENXIO),
            MsrFault::Denied => io::Error::from_raw_os_error(libc::EACCES),
            MsrFault::NoDevice => io::Error::from_raw_os_error(libc::ENOENT),
            MsrFault::Short => io::Error::new(io::ErrorKind::UnexpectedEof, SHORT),
            MsrFault::Other(words) => io::Error::other(words.clone()),
        }
    }
}

/// Says for the user what a register read error means (EIO: "not supported on this CPU").
pub fn describe(err: &io::Error) -> MsrFault {
    match (err.raw_os_error(), err.kind()) {
        (Some(libc::EIO), _) => MsrFault::NotSupported,
        (Some(libc::ENXIO), _) => MsrFault::Offline,
        (_, io::ErrorKind::PermissionDenied) => MsrFault::Denied,
        (_, io::ErrorKind::NotFound) => MsrFault::NoDevice,
        (_, io::ErrorKind::UnexpectedEof) => MsrFault::Short,
        _ => MsrFault::Other(err.to_string()),
    }
}

/// MSR values from a map; a register that is absent reads as EIO, like the driver.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FakeMsr {
    /// Register values by (cpu, register).
    pub values: RegValues,
    /// Recorded failures by (cpu, register).
    pub errors: BTreeMap<(u32, u32), MsrFault>,
}

impl MsrAccess for FakeMsr {
    fn read(&mut self, cpu: u32, reg: u32) -> io::Result<u64> {
        if let Some(v) = self.values.get(&(cpu, reg)) {
            return Ok(*v);
        }
        match self.errors.get(&(cpu, reg)) {
            Some(fault) => Err(fault.to_io()),
            None => Err(io::Error::from_raw_os_error(libc::EIO)),
        }
    }
}

/// Register values by (cpu, register), stored per CPU: a replay of a
/// 1024-CPU capture looks up eight thousand of them a sample, and a
/// lookup in one map of them all cost more than noisetop's own work.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RegValues {
    /// Per CPU, (register, value) sorted by register.
    cpus: CpuMap<Vec<(u32, u64)>>,
}

impl RegValues {
    /// Sets a register's value; returns the one it replaces.
    pub fn insert(&mut self, (cpu, reg): (u32, u32), value: u64) -> Option<u64> {
        let regs = self.cpus.get_or_default(cpu);
        match regs.binary_search_by_key(&reg, |(r, _)| *r) {
            Ok(i) => Some(std::mem::replace(&mut regs[i].1, value)),
            Err(i) => {
                regs.insert(i, (reg, value));
                None
            }
        }
    }

    /// Returns a register's value.
    pub fn get(&self, (cpu, reg): &(u32, u32)) -> Option<&u64> {
        let regs = self.cpus.get(cpu)?;
        let i = regs.binary_search_by_key(reg, |(r, _)| *r).ok()?;
        Some(&regs[i].1)
    }

    /// Whether a register has a value.
    pub fn contains_key(&self, key: &(u32, u32)) -> bool {
        self.get(key).is_some()
    }

    /// Removes a register's value.
    pub fn remove(&mut self, (cpu, reg): &(u32, u32)) -> Option<u64> {
        let regs = self.cpus.get_mut(cpu)?;
        let i = regs.binary_search_by_key(reg, |(r, _)| *r).ok()?;
        Some(regs.remove(i).1)
    }
}

/// One recorded read: cpu, register, and the value or why it failed.
pub type MsrRead = (u32, u32, Result<u64, MsrFault>);

const TABLE: &str = "msr table";

/// Writes reads as text: a `#` header, then `cpu 0xREG 0xVALUE` or
/// `cpu 0xREG error <reason>` per line (line breaks in a reason become spaces).
pub fn write_table(reads: &[MsrRead]) -> String {
    let mut out =
        String::from("# noisetop msr reads v1: cpu reg value (hex), or cpu reg error <reason>\n");
    for (cpu, reg, r) in reads {
        let _ = match r {
            Ok(v) => writeln!(out, "{cpu} {reg:#x} {v:#x}"),
            Err(fault) => writeln!(
                out,
                "{cpu} {reg:#x} error {}",
                fault.to_string().replace(['\n', '\r'], " ")
            ),
        };
    }
    out
}

/// Reads a table written by `write_table` into a `FakeMsr`; a register listed
/// twice keeps its last line.
pub fn parse_table(text: &str) -> Result<FakeMsr, ParseError> {
    let mut fake = FakeMsr::default();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (cpu, reg, rest) =
            parse_line(line).map_err(|m| ParseError::new(TABLE, i + 1, m.to_string()))?;
        let key = (cpu, reg);
        match rest {
            Ok(v) => {
                fake.errors.remove(&key);
                fake.values.insert(key, v);
            }
            Err(fault) => {
                fake.values.remove(&key);
                fake.errors.insert(key, fault);
            }
        }
    }
    Ok(fake)
}

/// What is wrong with one line of the msr table.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
enum LineError {
    #[error("missing {0}")]
    Missing(&'static str),
    #[error("bad cpu {0:?}")]
    BadCpu(String),
    #[error("register {0} too large")]
    RegisterTooLarge(String),
    #[error("unexpected text after the value: {0:?}")]
    Trailing(String),
    #[error("not a number: {0:?}")]
    NotANumber(String),
}

fn parse_line(line: &str) -> Result<MsrRead, LineError> {
    let (cpu, rest) = next_token(line).ok_or(LineError::Missing("cpu"))?;
    let cpu: u32 = cpu
        .parse()
        .map_err(|_| LineError::BadCpu(cpu.to_string()))?;
    let (reg, rest) = next_token(rest).ok_or(LineError::Missing("register"))?;
    let reg =
        u32::try_from(parse_num(reg)?).map_err(|_| LineError::RegisterTooLarge(reg.to_string()))?;
    let (value, rest) = next_token(rest).ok_or(LineError::Missing("value"))?;
    if value == "error" {
        return Ok((cpu, reg, Err(MsrFault::from_text(rest.trim()))));
    }
    if !rest.trim().is_empty() {
        return Err(LineError::Trailing(rest.trim().to_string()));
    }
    Ok((cpu, reg, Ok(parse_num(value)?)))
}

fn next_token(s: &str) -> Option<(&str, &str)> {
    let s = s.trim_start();
    if s.is_empty() {
        return None;
    }
    let end = s.find(char::is_whitespace).unwrap_or(s.len());
    Some(s.split_at(end))
}

fn parse_num(s: &str) -> Result<u64, LineError> {
    let parsed = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => s.parse(),
    };
    parsed.map_err(|_| LineError::NotANumber(s.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::OpenOptions;

    /// A tempdir used as `<dev>` with a sparse `cpu/0/msr` holding TSC (0x10)
    /// and package energy (0x611); they are far apart, so the bytes do not overlap.
    fn dev_tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("cpu/0")).unwrap();
        let f = OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .open(dir.path().join("cpu/0/msr"))
            .unwrap();
        f.write_all_at(&0x0123_4567_89AB_CDEFu64.to_le_bytes(), 0x10)
            .unwrap();
        f.write_all_at(&0xDEAD_BEEFu64.to_le_bytes(), 0x611)
            .unwrap();
        dir
    }

    #[test]
    fn dev_msr_preads_at_the_register_offset() {
        let dir = dev_tree();
        let mut m = DevMsr::new(dir.path());
        assert!(m.probe(0).is_ok());
        assert_eq!(m.read(0, 0x10).unwrap(), 0x0123_4567_89AB_CDEF);
        assert_eq!(m.read(0, 0x611).unwrap(), 0xDEAD_BEEF);
        // a hole in the sparse file reads as zeros
        assert_eq!(m.read(0, 0x100).unwrap(), 0);
        // past the end: a short read, described rather than a panic
        let e = m.read(0, 0x1000).unwrap_err();
        assert_eq!(describe(&e), MsrFault::Short);
        assert_eq!(describe(&e).to_string(), "short read (not an msr device?)");
    }

    #[test]
    fn dev_msr_keeps_the_file_open() {
        let dir = dev_tree();
        let mut m = DevMsr::new(dir.path());
        assert_eq!(m.read(0, 0x10).unwrap(), 0x0123_4567_89AB_CDEF);
        // the kept handle still reads after the path is gone
        std::fs::remove_file(dir.path().join("cpu/0/msr")).unwrap();
        assert_eq!(m.read(0, 0x611).unwrap(), 0xDEAD_BEEF);
    }

    #[test]
    fn probe_without_the_module_says_modprobe() {
        let dir = tempfile::tempdir().unwrap();
        let mut m = DevMsr::new(dir.path());
        let want = format!(
            "no {}/cpu/0/msr: load the msr module (modprobe msr) and run as root",
            dir.path().display()
        );
        let why = m.probe(0).unwrap_err();
        assert!(matches!(why, MsrOpenError::NoDriver(_)), "{why}");
        assert_eq!(why.cause(), Cause::KernelLacks);
        assert_eq!(why.to_string(), want);
        assert_eq!(
            describe(&m.read(0, 0x10).unwrap_err()).to_string(),
            NO_DEVICE
        );
    }

    #[test]
    fn probe_of_a_missing_cpu_when_cpu0_exists_says_offline() {
        let dir = dev_tree();
        let mut m = DevMsr::new(dir.path());
        let want = format!(
            "no {}/cpu/5/msr: CPU 5 is offline or does not exist",
            dir.path().display()
        );
        let why = m.probe(5).unwrap_err();
        assert!(
            matches!(why, MsrOpenError::NoSuchCpu { cpu: 5, .. }),
            "{why}"
        );
        assert_eq!(why.to_string(), want);
    }

    #[test]
    fn probe_reasons_for_permission_and_driver_errors() {
        let m = DevMsr::new(Path::new("/dev"));
        let denied = m.open_reason(0, io::Error::from_raw_os_error(libc::EACCES));
        assert_eq!(denied.cause(), Cause::Permission);
        assert_eq!(
            denied.to_string(),
            "/dev/cpu/0/msr: permission denied: run as root or grant CAP_SYS_RAWIO"
        );
        let eperm = m.open_reason(3, io::Error::from_raw_os_error(libc::EPERM));
        assert_eq!(eperm.cause(), Cause::Permission);
        assert!(
            eperm
                .to_string()
                .ends_with("run as root or grant CAP_SYS_RAWIO")
        );
        let enxio = m.open_reason(2, io::Error::from_raw_os_error(libc::ENXIO));
        assert_eq!(enxio.to_string(), "/dev/cpu/2/msr: CPU 2 is offline");
        let eio = m.open_reason(2, io::Error::from_raw_os_error(libc::EIO));
        assert_eq!(eio.cause(), Cause::KernelLacks);
        assert_eq!(eio.to_string(), "/dev/cpu/2/msr: CPU 2 has no MSR support");
    }

    #[test]
    fn probe_of_an_unreadable_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = dev_tree();
        let p = dir.path().join("cpu/0/msr");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o000)).unwrap();
        let mut m = DevMsr::new(dir.path());
        // root (CAP_DAC_OVERRIDE) opens a mode-000 file anyway; others must get the reason
        if File::open(&p).is_ok() {
            assert!(m.probe(0).is_ok());
        } else {
            let want = format!(
                "{}: permission denied: run as root or grant CAP_SYS_RAWIO",
                p.display()
            );
            assert_eq!(m.probe(0).unwrap_err().to_string(), want);
        }
    }

    #[test]
    fn eio_reads_as_not_supported() {
        assert_eq!(
            describe(&io::Error::from_raw_os_error(libc::EIO)).to_string(),
            "not supported on this CPU"
        );
        let mut f = FakeMsr::default();
        let e = f.read(0, 0xE2).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EIO));
    }

    #[test]
    fn describe_and_from_text_round_trip() {
        for s in [
            NOT_SUPPORTED,
            DENIED,
            NO_DEVICE,
            OFFLINE,
            SHORT,
            "something odd (os error 99)",
        ] {
            let fault = MsrFault::from_text(s);
            assert_eq!(fault.to_string(), s);
            assert_eq!(describe(&fault.to_io()), fault);
        }
        assert_eq!(MsrFault::from_text(DENIED), MsrFault::Denied);
        assert_eq!(
            MsrFault::NotSupported.to_io().raw_os_error(),
            Some(libc::EIO)
        );
    }

    #[test]
    fn table_text_is_hex_with_a_header() {
        let reads = vec![
            (0, 0x10, Ok(0xFFFF_FFFF_FFFF_FFFF)),
            (3, 0xC001_029B, Ok(0)),
            (1, 0x611, Err(MsrFault::NotSupported)),
        ];
        let text = write_table(&reads);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("# "));
        assert_eq!(
            lines[1..],
            [
                "0 0x10 0xffffffffffffffff",
                "3 0xc001029b 0x0",
                "1 0x611 error not supported on this CPU",
            ]
        );
    }

    #[test]
    fn table_round_trips_values_and_errors() {
        let reads = vec![
            (0, 0x10, Ok(0x1234)),
            (0, 0xE7, Ok(u64::MAX)),
            (1, 0x611, Err(MsrFault::NotSupported)),
            (1, 0x19C, Err(MsrFault::Denied)),
            (2, 0x10, Err(MsrFault::Other("odd (os error 99)".into()))),
        ];
        let mut fake = parse_table(&write_table(&reads)).unwrap();
        let back: Vec<MsrRead> = reads
            .iter()
            .map(|(cpu, reg, _)| (*cpu, *reg, fake.read(*cpu, *reg).map_err(|e| describe(&e))))
            .collect();
        assert_eq!(back, reads);
    }

    #[test]
    fn table_keeps_the_last_line_for_a_register() {
        let fake =
            parse_table("0 0x10 0x1\n0 0x10 error CPU offline\n0 0xe8 5\n0 0xe8 0x6\n").unwrap();
        assert_eq!(fake.errors.get(&(0, 0x10)), Some(&MsrFault::Offline));
        assert!(!fake.values.contains_key(&(0, 0x10)));
        assert_eq!(fake.values.get(&(0, 0xE8)), Some(&6));
    }

    #[test]
    fn table_errors_name_the_line() {
        let cases = [
            ("x 0x10 0x1", "bad cpu"),
            ("0", "missing register"),
            ("0 0x10", "missing value"),
            ("0 0xzz 0x1", "not a number"),
            ("0 0x1ffffffff 0x1", "too large"),
            ("0 0x10 0x1 junk", "unexpected text"),
            ("0 0x10 0x10000000000000000", "not a number"),
        ];
        for (line, want) in cases {
            let text = format!("# header\n\n{line}\n");
            let e = parse_table(&text).unwrap_err();
            assert_eq!((e.file, e.line), ("msr table", 3), "{line}");
            assert!(e.msg.contains(want), "{line}: {}", e.msg);
        }
        assert_eq!(parse_table("").unwrap(), FakeMsr::default());
    }
}
