//! The `bpf(2)` commands the loader uses: create a map, load type data,
//! load a program (with the verifier's log when it refuses), attach it to
//! a raw tracepoint, and map an array read-only or writable.
#![expect(
    unsafe_code,
    reason = "bpf(2) and mmap have no safe wrapper in std or libc"
)]

use std::ffi::CStr;
use std::io;
use std::os::fd::{FromRawFd as _, OwnedFd};

const BPF_MAP_CREATE: libc::c_long = 0;
const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_RAW_TRACEPOINT_OPEN: libc::c_long = 17;
const BPF_BTF_LOAD: libc::c_long = 18;

/// `union bpf_attr`, as the bytes each command reads: 144 are enough for
/// every command here, and the kernel wants the unused tail zero.
#[repr(C, align(8))]
struct Attr([u8; 144]);

impl Attr {
    fn new() -> Attr {
        Attr([0; 144])
    }

    fn u32(&mut self, at: usize, v: u32) -> &mut Attr {
        self.0[at..at + 4].copy_from_slice(&v.to_ne_bytes());
        self
    }

    fn u64(&mut self, at: usize, v: u64) -> &mut Attr {
        self.0[at..at + 8].copy_from_slice(&v.to_ne_bytes());
        self
    }

    fn name(&mut self, at: usize, name: &str) -> &mut Attr {
        // BPF_OBJ_NAME_LEN: 16 with the NUL; letters, digits, '_' and '.'
        let n: Vec<u8> = name
            .bytes()
            .filter(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'.')
            .take(15)
            .collect();
        self.0[at..at + n.len()].copy_from_slice(&n);
        self
    }

    /// Runs the command; the new descriptor it returns.
    fn run(&mut self, cmd: libc::c_long) -> io::Result<OwnedFd> {
        // SAFETY: the attribute is 144 valid, initialised bytes and its size
        // is passed; every pointer in it points into a buffer the caller
        // keeps alive across this call.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_bpf,
                cmd,
                self.0.as_mut_ptr(),
                self.0.len() as libc::c_uint,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a non-negative return of these commands is a new file
        // descriptor that nothing else owns.
        Ok(unsafe { OwnedFd::from_raw_fd(rc as i32) })
    }
}

/// What a map is created with.
#[derive(Debug, Clone, Copy)]
pub struct MapSpec<'a> {
    /// Its name (cut to 15 bytes).
    pub name: &'a str,
    /// `BPF_MAP_TYPE_*`.
    pub map_type: u32,
    /// Key size.
    pub key_size: u32,
    /// Value size.
    pub value_size: u32,
    /// Entries.
    pub max_entries: u32,
    /// `BPF_F_*`.
    pub flags: u32,
    /// Type data and the key's and value's ids in it (0: none).
    pub btf: Option<(&'a OwnedFd, u32, u32)>,
}

/// Creates a map.
pub fn map_create(s: &MapSpec<'_>) -> io::Result<OwnedFd> {
    use std::os::fd::AsRawFd as _;
    let mut a = Attr::new();
    a.u32(0, s.map_type)
        .u32(4, s.key_size)
        .u32(8, s.value_size)
        .u32(12, s.max_entries)
        .u32(16, s.flags)
        .name(28, s.name);
    if let Some((fd, key, value)) = s.btf {
        a.u32(48, fd.as_raw_fd() as u32).u32(52, key).u32(56, value);
    }
    a.run(BPF_MAP_CREATE)
}

/// Loads type data; the kernel's log when it refuses.
pub fn btf_load(blob: &[u8]) -> Result<OwnedFd, (io::Error, String)> {
    let mut log = vec![0u8; 64 * 1024];
    let mut a = Attr::new();
    a.u64(0, blob.as_ptr() as u64).u32(16, blob.len() as u32);
    if let Ok(fd) = a.run(BPF_BTF_LOAD) {
        return Ok(fd);
    }
    a.u64(8, log.as_mut_ptr() as u64)
        .u32(20, log.len() as u32)
        .u32(24, 1);
    match a.run(BPF_BTF_LOAD) {
        Ok(fd) => Ok(fd),
        Err(e) => Err((e, text(&log))),
    }
}

/// What a program is loaded with.
#[derive(Debug, Clone, Copy)]
pub struct ProgSpec<'a> {
    /// Its name.
    pub name: &'a str,
    /// `BPF_PROG_TYPE_*`.
    pub prog_type: u32,
    /// `BPF_*` attach type (tracing programs).
    pub attach_type: u32,
    /// The kernel BTF id it attaches to (tracing programs).
    pub attach_btf_id: u32,
    /// Instructions, with map descriptors in place.
    pub insns: &'a [u8],
    /// License, NUL-terminated.
    pub license: &'a [u8],
    /// The object's type data, for the CO-RE relocations.
    pub btf: &'a OwnedFd,
    /// CO-RE relocations, 16 bytes each (`struct bpf_core_relo`).
    pub core_relos: &'a [u8],
    /// Each function of the program (its own first, then the subprograms
    /// appended to it): its first instruction and its type id in `btf`.
    pub funcs: &'a [(u32, u32)],
}

/// Loads a program; on a refusal, the verifier's log (its last lines).
pub fn prog_load(s: &ProgSpec<'_>) -> Result<OwnedFd, (io::Error, String)> {
    use std::os::fd::AsRawFd as _;
    if s.license.last() != Some(&0) {
        return Err((
            io::Error::from(io::ErrorKind::InvalidInput),
            "license not NUL-terminated".into(),
        ));
    }
    // a `bpf_func_info` per function: its first instruction, its type
    let func_info: Vec<u8> = s
        .funcs
        .iter()
        .flat_map(|&(insn, ty)| [insn, ty].into_iter().flat_map(u32::to_ne_bytes))
        .collect();
    let build = |log: Option<&mut Vec<u8>>| {
        let mut a = Attr::new();
        a.u32(0, s.prog_type)
            .u32(4, (s.insns.len() / 8) as u32)
            .u64(8, s.insns.as_ptr() as u64)
            .u64(16, s.license.as_ptr() as u64)
            .name(48, s.name)
            .u32(68, s.attach_type)
            .u32(72, s.btf.as_raw_fd() as u32)
            .u32(76, 8)
            .u64(80, func_info.as_ptr() as u64)
            .u32(88, s.funcs.len() as u32)
            .u32(108, s.attach_btf_id);
        if !s.core_relos.is_empty() {
            a.u32(116, (s.core_relos.len() / 16) as u32)
                .u64(128, s.core_relos.as_ptr() as u64)
                .u32(136, 16);
        }
        if let Some(log) = log {
            a.u32(24, 1)
                .u32(28, log.len() as u32)
                .u64(32, log.as_mut_ptr() as u64);
        }
        a
    };
    if let Ok(fd) = build(None).run(BPF_PROG_LOAD) {
        return Ok(fd);
    }
    let mut log = vec![0u8; 1 << 20];
    let mut a = build(Some(&mut log));
    match a.run(BPF_PROG_LOAD) {
        Ok(fd) => Ok(fd),
        Err(e) => {
            let t = text(&log);
            let tail: Vec<&str> = t.lines().rev().take(6).collect();
            Err((e, tail.into_iter().rev().collect::<Vec<_>>().join("; ")))
        }
    }
}

/// Attaches a program to a raw tracepoint (`name`), or a BTF tracepoint
/// program to the tracepoint it was loaded for (`None`). The link lasts as
/// long as the descriptor.
pub fn raw_tracepoint_open(prog: &OwnedFd, name: Option<&CStr>) -> io::Result<OwnedFd> {
    use std::os::fd::AsRawFd as _;
    let mut a = Attr::new();
    a.u64(0, name.map_or(0, |n| n.as_ptr() as u64))
        .u32(8, prog.as_raw_fd() as u32);
    a.run(BPF_RAW_TRACEPOINT_OPEN)
}

fn text(log: &[u8]) -> String {
    let n = log.iter().position(|&c| c == 0).unwrap_or(log.len());
    String::from_utf8_lossy(&log[..n]).trim().to_string()
}

/// A shared mapping of a map's values (an array map made with
/// `BPF_F_MMAPABLE`), unmapped when dropped.
#[derive(Debug)]
pub struct Mapping {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain shared memory; every access goes through
// volatile reads and writes of whole words.
unsafe impl Send for Mapping {}

impl Mapping {
    /// Maps `len` bytes of a map, writable or not.
    pub fn new(map: &OwnedFd, len: usize, writable: bool) -> io::Result<Mapping> {
        use std::os::fd::AsRawFd as _;
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
        let len = len.div_ceil(page) * page;
        let prot = if writable {
            libc::PROT_READ | libc::PROT_WRITE
        } else {
            libc::PROT_READ
        };
        // SAFETY: a fresh mapping chosen by the kernel, of a descriptor we
        // hold; nothing else is at the address it returns.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                prot,
                libc::MAP_SHARED,
                map.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr = std::ptr::NonNull::new(p.cast::<u8>())
            .ok_or_else(|| io::Error::other("mmap returned a null address"))?;
        Ok(Mapping { ptr, len })
    }

    /// Reads the 8-byte word at byte `at` (which must be 8-aligned and
    /// inside the mapping; else 0).
    #[expect(
        clippy::cast_ptr_alignment,
        reason = "the mapping is page-aligned and the offset is checked"
    )]
    pub fn u64(&self, at: usize) -> u64 {
        if !at.is_multiple_of(8) || at + 8 > self.len {
            return 0;
        }
        // SAFETY: in bounds and aligned (checked above); the kernel writes
        // these words concurrently, so the read is volatile and may see an
        // older value, never a torn one (aligned 8-byte loads are atomic).
        unsafe { std::ptr::read_volatile(self.ptr.as_ptr().add(at).cast::<u64>()) }
    }

    /// Reads the 4-byte word at byte `at` (4-aligned, inside; else 0).
    #[expect(
        clippy::cast_ptr_alignment,
        reason = "the mapping is page-aligned and the offset is checked"
    )]
    pub fn u32(&self, at: usize) -> u32 {
        if !at.is_multiple_of(4) || at + 4 > self.len {
            return 0;
        }
        // SAFETY: as for `u64`.
        unsafe { std::ptr::read_volatile(self.ptr.as_ptr().add(at).cast::<u32>()) }
    }

    /// Copies bytes out (inside the mapping; else zeros).
    pub fn bytes(&self, at: usize, out: &mut [u8]) {
        for (i, b) in out.iter_mut().enumerate() {
            *b = if at + i < self.len {
                // SAFETY: in bounds (checked).
                unsafe { std::ptr::read_volatile(self.ptr.as_ptr().add(at + i)) }
            } else {
                0
            };
        }
    }

    /// Writes the 8-byte word at byte `at` (a writable mapping).
    #[expect(
        clippy::cast_ptr_alignment,
        reason = "the mapping is page-aligned and the offset is checked"
    )]
    pub fn set_u64(&self, at: usize, v: u64) {
        if !at.is_multiple_of(8) || at + 8 > self.len {
            return;
        }
        // SAFETY: in bounds and aligned; the mapping was made writable by
        // the only caller that writes (the control line).
        unsafe { std::ptr::write_volatile(self.ptr.as_ptr().add(at).cast::<u64>(), v) }
    }

    /// Writes the 4-byte word at byte `at` (a writable mapping).
    #[expect(
        clippy::cast_ptr_alignment,
        reason = "the mapping is page-aligned and the offset is checked"
    )]
    pub fn set_u32(&self, at: usize, v: u32) {
        if !at.is_multiple_of(4) || at + 4 > self.len {
            return;
        }
        // SAFETY: in bounds and aligned; the mapping was made writable by
        // the only caller that writes (the control line).
        unsafe { std::ptr::write_volatile(self.ptr.as_ptr().add(at).cast::<u32>(), v) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the address and length are the mapping's own, unmapped once.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}

/// A read-only view of a file's bytes (the kernel's BTF), unmapped when
/// dropped; `None` where the file cannot be mapped.
#[derive(Debug)]
pub struct FileMap {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
}

impl FileMap {
    /// Maps a file whole.
    pub fn open(path: &std::path::Path) -> io::Result<FileMap> {
        use std::os::fd::AsRawFd as _;
        let f = std::fs::File::open(path)?;
        let len = f.metadata()?.len() as usize;
        if len == 0 {
            return Err(io::Error::other("empty file"));
        }
        // SAFETY: a fresh private read-only mapping of a file we opened.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                f.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr = std::ptr::NonNull::new(p.cast::<u8>())
            .ok_or_else(|| io::Error::other("mmap returned a null address"))?;
        Ok(FileMap { ptr, len })
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: the mapping is `len` readable bytes that live as long as
        // self, and a read-only private mapping of sysfs BTF never changes.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for FileMap {
    fn drop(&mut self) {
        // SAFETY: the address and length are the mapping's own.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}
