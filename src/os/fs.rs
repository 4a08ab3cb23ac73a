//! Reads kernel text files under a procfs/sysfs/dev root, keeping each file
//! open and re-reading it with `pread` at offset 0 into one reused buffer.
//!
//! procfs and sysfs regenerate a file's content on a read from offset 0, so a
//! kept-open handle costs one syscall per read. The same code reads a live
//! machine, `--root /host`, and a captured tree; a capture tees every read
//! into a directory laid out the same way.

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use thiserror::Error;

use crate::base::{Cause, Unavailable};

/// Largest file noisetop accepts; /proc/interrupts on 1152 CPUs is 13.4 MB.
pub const MAX_FILE_BYTES: usize = 64 << 20;

/// Which kernel tree a relative path lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Base {
    /// procfs, normally `/proc`.
    Proc,
    /// sysfs, normally `/sys`.
    Sys,
    /// device nodes, normally `/dev`.
    Dev,
}

impl Base {
    /// Returns the directory name this base has in a captured tree.
    pub fn dir_name(self) -> &'static str {
        match self {
            Base::Proc => "proc",
            Base::Sys => "sys",
            Base::Dev => "dev",
        }
    }
}

/// The three roots kernel files are read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roots {
    /// The tree's root (`/`, or `--root DIR`): files of the system beyond
    /// the kernel's trees (the boot loader's) are looked for under it.
    pub root: PathBuf,
    /// procfs mount point (`/proc`).
    pub procfs: PathBuf,
    /// sysfs mount point (`/sys`).
    pub sysfs: PathBuf,
    /// device directory (`/dev`).
    pub dev: PathBuf,
}

impl Default for Roots {
    fn default() -> Self {
        Roots::under(Path::new("/"))
    }
}

impl Roots {
    /// Builds roots for a tree laid out like `/`: `DIR/proc`, `DIR/sys`, `DIR/dev`.
    pub fn under(root: &Path) -> Self {
        Roots {
            root: root.to_path_buf(),
            procfs: root.join("proc"),
            sysfs: root.join("sys"),
            dev: root.join("dev"),
        }
    }

    /// Returns the root directory of one base.
    pub fn base(&self, base: Base) -> &Path {
        match base {
            Base::Proc => &self.procfs,
            Base::Sys => &self.sysfs,
            Base::Dev => &self.dev,
        }
    }

    /// Joins a relative path onto a base.
    pub fn path(&self, base: Base, rel: &str) -> PathBuf {
        self.base(base).join(rel)
    }
}

/// Why a kernel file could not be read; its `Display` is meant for users.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// The file or directory does not exist.
    #[error("no {0}")]
    Missing(PathBuf),
    /// The file exists but this user may not read it.
    #[error("{0}: permission denied")]
    Denied(PathBuf),
    /// The file is larger than its cap (`MAX_FILE_BYTES` for kernel files).
    #[error("{0}: larger than {1} bytes")]
    TooLarge(PathBuf, usize),
    /// Any other I/O error, with the OS message.
    #[error("{0}: {1}")]
    Io(PathBuf, String),
}

impl ReadError {
    /// The kind of reason: a file the kernel lacks, one this user may not
    /// read, or another failure.
    pub fn cause(&self) -> Cause {
        match self {
            ReadError::Missing(_) => Cause::KernelLacks,
            ReadError::Denied(_) => Cause::Permission,
            ReadError::TooLarge(..) | ReadError::Io(..) => Cause::Failed,
        }
    }

    fn from_io(path: &Path, e: &io::Error) -> Self {
        match e.kind() {
            io::ErrorKind::NotFound => ReadError::Missing(path.to_path_buf()),
            io::ErrorKind::PermissionDenied => ReadError::Denied(path.to_path_buf()),
            _ => ReadError::Io(path.to_path_buf(), e.to_string()),
        }
    }
}

/// A file that cannot be read leaves what it holds unknown, for its cause.
impl From<ReadError> for Unavailable {
    fn from(e: ReadError) -> Unavailable {
        Unavailable::new(e.cause(), e.to_string())
    }
}

/// Reads kernel files under `Roots`, with an optional tee.
///
/// Two ways in: by path (`read`, `read_u64`, …) for facts read once, which
/// opens, reads and closes; and by [`FileId`] for counters read every
/// interval, whose files stay open so that a read is one `pread`.
#[derive(Debug)]
pub struct Fs {
    roots: Roots,
    slots: Vec<Slot>,
    slot_of: HashMap<(Base, Box<str>), FileId>,
    buf: Vec<u8>,
    tee: Option<PathBuf>,
    keep_open: bool,
    fd_ceiling: i32,
    log: Option<Vec<(Base, String)>>,
}

/// A counter file registered with [`Fs::file_id`], read again each interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileId(u32);

#[derive(Debug)]
struct Slot {
    base: Base,
    rel: Box<str>,
    file: Option<File>,
}

/// Descriptors left free for what opens after the counter files: perf
/// groups of a CPU that comes online, captures, the terminal.
const FD_RESERVE: i32 = 256;

/// The descriptor number from which a counter file is closed after each read
/// instead of kept open: descriptors are handed out lowest first, so the
/// number says how many are open. Perf groups open before the first sample
/// and so get theirs first.
fn default_fd_ceiling() -> i32 {
    let limit = std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("Max open files"))
                .and_then(|l| l.split_whitespace().nth(3))
                .and_then(|v| v.parse::<i64>().ok())
        })
        .unwrap_or(1024);
    let limit = i32::try_from(limit.min(1 << 30)).unwrap_or(1024);
    (limit - (limit / 8).max(FD_RESERVE)).max(64)
}

impl Fs {
    /// Creates a reader over `roots` that keeps counter files open.
    pub fn new(roots: Roots) -> Self {
        Fs {
            roots,
            slots: Vec::new(),
            slot_of: HashMap::new(),
            buf: Vec::with_capacity(64 << 10),
            tee: None,
            keep_open: true,
            fd_ceiling: default_fd_ceiling(),
            log: None,
        }
    }

    /// Returns the roots this reader reads from.
    pub fn roots(&self) -> &Roots {
        &self.roots
    }

    /// Points the reader at other roots (the next instant of a capture) and
    /// closes the counter files of the old ones; they reopen on next read.
    pub fn set_roots(&mut self, roots: Roots) {
        self.close_all();
        self.roots = roots;
    }

    /// Returns a reader over `roots` with the same registered counter files
    /// (same ids), none of them open yet: a benchmark alternates two of
    /// them to re-read two instants of a capture through kept-open files.
    #[must_use]
    pub fn fork(&self, roots: Roots) -> Fs {
        Fs {
            roots,
            slots: self
                .slots
                .iter()
                .map(|s| Slot {
                    base: s.base,
                    rel: s.rel.clone(),
                    file: None,
                })
                .collect(),
            slot_of: self.slot_of.clone(),
            buf: Vec::with_capacity(64 << 10),
            tee: None,
            keep_open: self.keep_open,
            fd_ceiling: self.fd_ceiling,
            log: None,
        }
    }

    /// Copies every later successful read into `dir/<proc|sys|dev>/<rel>`;
    /// `None` stops copying.
    pub fn set_tee(&mut self, dir: Option<PathBuf>) {
        self.tee = dir;
    }

    /// Makes every counter read open the file anew (for captures whose
    /// files change on disk between reads, and for tests).
    pub fn set_keep_open(&mut self, keep: bool) {
        self.keep_open = keep;
        if !keep {
            self.close_all();
        }
    }

    /// Sets the descriptor number from which counter files are no longer
    /// kept open (tests of the ceiling).
    pub fn set_fd_ceiling(&mut self, ceiling: i32) {
        self.fd_ceiling = ceiling;
    }

    /// Starts (`true`) or stops recording which files and directories are
    /// read, for [`Fs::take_log`]: tests check the files a sample reads
    /// against the list docs/metrics.md gives.
    pub fn set_log(&mut self, on: bool) {
        self.log = on.then(Vec::new);
    }

    /// Returns what was read since the last call (paths relative to their
    /// base, directories listed ending in `/`), in order, and starts anew.
    pub fn take_log(&mut self) -> Vec<(Base, String)> {
        self.log.as_mut().map(std::mem::take).unwrap_or_default()
    }

    fn note(&mut self, base: Base, rel: &str) {
        if let Some(log) = &mut self.log {
            log.push((base, rel.to_string()));
        }
    }

    /// How many counter files are open now.
    pub fn open_count(&self) -> usize {
        self.slots.iter().filter(|s| s.file.is_some()).count()
    }

    fn close_all(&mut self) {
        for s in &mut self.slots {
            s.file = None;
        }
    }

    /// Registers a counter file and returns its id; the same path gives the
    /// same id. Nothing is opened until the first read.
    pub fn file_id(&mut self, base: Base, rel: &str) -> FileId {
        let key = (base, Box::<str>::from(rel));
        if let Some(&id) = self.slot_of.get(&key) {
            return id;
        }
        let id = FileId(u32::try_from(self.slots.len()).unwrap_or(u32::MAX));
        self.slots.push(Slot {
            base,
            rel: rel.into(),
            file: None,
        });
        self.slot_of.insert(key, id);
        id
    }

    /// Returns the path a counter file is read from.
    pub fn id_path(&self, id: FileId) -> PathBuf {
        let s = &self.slots[id.0 as usize];
        self.roots.path(s.base, &s.rel)
    }

    /// Reads a counter file as text.
    pub fn read_id(&mut self, id: FileId) -> Result<&str, ReadError> {
        let len = self.read_id_bytes(id)?;
        Ok(self.text(len))
    }

    /// Reads a counter file holding one unsigned integer.
    pub fn read_u64_id(&mut self, id: FileId) -> Result<u64, ReadError> {
        self.read_number_id(id)
    }

    /// Reads a counter file holding one signed integer.
    pub fn read_i64_id(&mut self, id: FileId) -> Result<i64, ReadError> {
        self.read_number_id(id)
    }

    /// Reads a counter file holding one number. A file of a few bytes (all
    /// of sysfs's counters) is read into the stack: one `pread`, and no
    /// allocation unless it fails.
    fn read_number_id<T: FromStr>(&mut self, id: FileId) -> Result<T, ReadError> {
        let mut small = [0u8; 64];
        if self.tee.is_none() {
            let n = self.with_file(id, |f| pread_once(f, &mut small))?;
            if n < small.len() {
                return number(&String::from_utf8_lossy(&small[..n]), || self.id_path(id));
            }
        }
        let len = self.read_id_bytes(id)?;
        number(&String::from_utf8_lossy(&self.buf[..len]), || {
            self.id_path(id)
        })
    }

    /// Runs `read` on the slot's file, opening it first when it is closed.
    /// A failed read closes the file (it is reopened next time, which is
    /// how a file that went away and came back is found again); past the
    /// descriptor ceiling, or with keep-open off, the file is closed after
    /// the read.
    fn with_file<T>(
        &mut self,
        id: FileId,
        read: impl FnOnce(&File) -> io::Result<T>,
    ) -> Result<T, ReadError> {
        if self.log.is_some() {
            let s = &self.slots[id.0 as usize];
            let (base, rel) = (s.base, s.rel.to_string());
            self.note(base, &rel);
        }
        let slot = &mut self.slots[id.0 as usize];
        if slot.file.is_none() {
            slot.file = Some(open_file(&self.roots.path(slot.base, &slot.rel))?);
        }
        let Some(file) = &slot.file else {
            return Err(ReadError::Missing(self.roots.path(slot.base, &slot.rel)));
        };
        let result = read(file);
        let keep = result.is_ok() && self.keep_open && file.as_raw_fd() < self.fd_ceiling;
        if !keep {
            slot.file = None;
        }
        result.map_err(|e| ReadError::from_io(&self.roots.path(slot.base, &slot.rel), &e))
    }

    fn read_id_bytes(&mut self, id: FileId) -> Result<usize, ReadError> {
        let mut buf = std::mem::take(&mut self.buf);
        let result = self.with_file(id, |f| pread_all(f, &mut buf));
        self.buf = buf;
        let len = match result {
            Ok(Ok(len)) => len,
            Ok(Err(TooLarge)) => return Err(ReadError::TooLarge(self.id_path(id), MAX_FILE_BYTES)),
            Err(e) => return Err(e),
        };
        let slot = &self.slots[id.0 as usize];
        let (base, rel) = (slot.base, slot.rel.clone());
        self.tee_copy(base, &rel, len);
        Ok(len)
    }

    /// Reads a whole file once as text (invalid UTF-8 is replaced, never
    /// an error); the file is closed again.
    pub fn read(&mut self, base: Base, rel: &str) -> Result<&str, ReadError> {
        self.note(base, rel);
        let path = self.roots.path(base, rel);
        let file = open_file(&path)?;
        let len = match pread_all(&file, &mut self.buf) {
            Ok(Ok(len)) => len,
            Ok(Err(TooLarge)) => return Err(ReadError::TooLarge(path, MAX_FILE_BYTES)),
            Err(e) => return Err(ReadError::from_io(&path, &e)),
        };
        self.tee_copy(base, rel, len);
        Ok(self.text(len))
    }

    /// The buffer's first `len` bytes as text, invalid UTF-8 replaced.
    fn text(&mut self, len: usize) -> &str {
        if std::str::from_utf8(&self.buf[..len]).is_err() {
            let owned = String::from_utf8_lossy(&self.buf[..len]).into_owned();
            self.buf.clear();
            self.buf.extend_from_slice(owned.as_bytes());
            let n = self.buf.len();
            return std::str::from_utf8(&self.buf[..n]).unwrap_or("");
        }
        std::str::from_utf8(&self.buf[..len]).unwrap_or("")
    }

    fn tee_copy(&self, base: Base, rel: &str, len: usize) {
        if let Some(tee) = &self.tee {
            let dest = tee.join(base.dir_name()).join(rel);
            if let Some(parent) = dest.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            let _ = std::fs::write(dest, &self.buf[..len]);
        }
    }

    /// Reads a small file and returns it trimmed and owned; for facts read once.
    pub fn read_trimmed(&mut self, base: Base, rel: &str) -> Result<String, ReadError> {
        Ok(self.read(base, rel)?.trim().to_string())
    }

    /// Reads a file holding one integer (surrounding white space allowed).
    pub fn read_u64(&mut self, base: Base, rel: &str) -> Result<u64, ReadError> {
        self.read_number(base, rel)
    }

    /// Reads a file holding one signed integer.
    pub fn read_i64(&mut self, base: Base, rel: &str) -> Result<i64, ReadError> {
        self.read_number(base, rel)
    }

    fn read_number<T: FromStr>(&mut self, base: Base, rel: &str) -> Result<T, ReadError> {
        let path = self.roots.path(base, rel);
        number(self.read(base, rel)?, || path)
    }

    /// Tells whether a path exists (file, directory or resolvable link).
    pub fn exists(&self, base: Base, rel: &str) -> bool {
        self.roots.path(base, rel).exists()
    }

    /// Lists the entry names of a directory, sorted in natural order
    /// (`cpu2` before `cpu10`, `state2` before `state10`).
    pub fn list(&mut self, base: Base, rel: &str) -> Result<Vec<String>, ReadError> {
        self.note(base, &format!("{rel}/"));
        let path = self.roots.path(base, rel);
        let entries = std::fs::read_dir(&path).map_err(|e| ReadError::from_io(&path, &e))?;
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        names.sort_by(|a, b| natural_cmp(a, b));
        if let Some(tee) = &self.tee {
            let _ = std::fs::create_dir_all(tee.join(base.dir_name()).join(rel));
        }
        Ok(names)
    }
}

/// Opens a path without blocking: `O_NONBLOCK` makes `open` of a FIFO
/// return at once instead of waiting for a writer, which nothing would
/// ever interrupt (a stop signal only sets a flag). Regular files ignore
/// the flag, so procfs, sysfs and captured files read as before.
pub fn open_nonblocking(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

/// Opens a file for reading. Anything but a regular file is an error with
/// its kind named: procfs and sysfs files are all regular, and a FIFO, a
/// device such as `/dev/zero` or a directory in their place is a damaged or
/// hostile tree (`/dev/zero` would be read until the size cap, every time).
fn open_file(path: &Path) -> Result<File, ReadError> {
    let f = open_nonblocking(path).map_err(|e| ReadError::from_io(path, &e))?;
    let meta = f.metadata().map_err(|e| ReadError::from_io(path, &e))?;
    if meta.is_dir() {
        return Err(ReadError::Io(path.to_path_buf(), "is a directory".into()));
    }
    if !meta.is_file() {
        return Err(ReadError::Io(
            path.to_path_buf(),
            format!("not a regular file ({})", file_kind(&meta)),
        ));
    }
    Ok(f)
}

/// Names the kind of a file that is not a regular file.
fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

/// Reads a whole regular file of at most `cap` bytes as text (invalid
/// UTF-8 replaced): the one way noisetop reads a file outside [`Fs`]
/// (capture tables, PMU descriptions), so that a file linked to
/// `/dev/zero` or grown without bound cannot take the memory, and a FIFO
/// cannot block.
pub fn read_capped(path: &Path, cap: usize) -> Result<String, ReadError> {
    let file = open_file(path)?;
    let mut buf = Vec::with_capacity(cap.min(64 << 10));
    let len = match pread_all_capped(&file, &mut buf, cap) {
        Ok(Ok(len)) => len,
        Ok(Err(TooLarge)) => return Err(ReadError::TooLarge(path.to_path_buf(), cap)),
        Err(e) => return Err(ReadError::from_io(path, &e)),
    };
    buf.truncate(len);
    Ok(match String::from_utf8(buf) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// A file that outgrew `MAX_FILE_BYTES`.
#[derive(Debug)]
struct TooLarge;

/// One `pread` at offset 0, retried when a signal interrupted it.
fn pread_once(file: &File, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match file.read_at(buf, 0) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            other => return other,
        }
    }
}

/// Parses a file's text as a number, white space around it allowed; the
/// error names the file (`path` is built only then).
fn number<T: FromStr>(text: &str, path: impl FnOnce() -> PathBuf) -> Result<T, ReadError> {
    let text = text.trim();
    text.parse()
        .map_err(|_| ReadError::Io(path(), format!("not a number: {:?}", truncate(text, 40))))
}

/// Reads a file from offset 0 into `buf`; a short read is taken as the end
/// (true of procfs seq files, sysfs attributes and regular files), so a file
/// that fits the buffer costs one syscall. The file's bytes are `buf[..len]`;
/// `buf` keeps its whole length initialised between calls, because zeroing a
/// buffer grown to megabytes (by /proc/interrupts) before each of thousands
/// of small sysfs reads cost more than the reads themselves.
fn pread_all(file: &File, buf: &mut Vec<u8>) -> io::Result<Result<usize, TooLarge>> {
    pread_all_capped(file, buf, MAX_FILE_BYTES)
}

/// [`pread_all`] with its own cap.
fn pread_all_capped(
    file: &File,
    buf: &mut Vec<u8>,
    cap: usize,
) -> io::Result<Result<usize, TooLarge>> {
    let want = buf.capacity().max(4096);
    if buf.len() < want {
        buf.resize(want, 0);
    }
    let mut len = 0;
    loop {
        let n = match file.read_at(&mut buf[len..], len as u64) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        len += n;
        if len > cap {
            return Ok(Err(TooLarge));
        }
        if n == 0 || len < buf.len() {
            return Ok(Ok(len));
        }
        buf.resize((len * 2).min(cap + 1).max(len + 1), 0);
    }
}

fn truncate(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Compares names so that embedded numbers sort by value (`cpu9` < `cpu10`).
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let split = |s: &str| {
        let i = s.find(|c: char| c.is_ascii_digit()).unwrap_or(s.len());
        let (head, tail) = s.split_at(i);
        let j = tail
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(tail.len());
        (
            head.to_string(),
            tail[..j].parse::<u64>().ok(),
            tail[j..].to_string(),
        )
    };
    let (ha, na, ta) = split(a);
    let (hb, nb, tb) = split(b);
    ha.cmp(&hb)
        .then(na.cmp(&nb))
        .then_with(|| natural_cmp_tail(&ta, &tb))
}

fn natural_cmp_tail(a: &str, b: &str) -> std::cmp::Ordering {
    if a.is_empty() || b.is_empty() {
        a.cmp(b)
    } else {
        natural_cmp(a, b)
    }
}

/// Returns the path of a recording's sidecar: `FILE.csv` → `FILE.csv.json`
/// (the recorder's machine facts and the probe's report both sit there).
pub fn sidecar_path(csv: &std::path::Path) -> std::path::PathBuf {
    let mut s = csv.as_os_str().to_owned();
    s.push(".json");
    std::path::PathBuf::from(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> (tempfile::TempDir, Fs) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("proc")).unwrap();
        std::fs::create_dir_all(dir.path().join("sys/devices/system/cpu")).unwrap();
        let fs = Fs::new(Roots::under(dir.path()));
        (dir, fs)
    }

    #[test]
    fn reads_a_file_larger_than_the_initial_buffer() {
        let (dir, mut fs) = tree();
        let text = "x".repeat(200_000);
        std::fs::write(dir.path().join("proc/interrupts"), &text).unwrap();
        assert_eq!(fs.read(Base::Proc, "interrupts").unwrap().len(), 200_000);
    }

    #[test]
    fn rereads_a_kept_open_file_from_offset_zero() {
        let (dir, mut fs) = tree();
        let p = dir.path().join("proc/stat");
        std::fs::write(&p, "one\n").unwrap();
        assert_eq!(fs.read(Base::Proc, "stat").unwrap(), "one\n");
        std::fs::write(&p, "two two\n").unwrap();
        assert_eq!(fs.read(Base::Proc, "stat").unwrap(), "two two\n");
    }

    #[test]
    fn missing_file_names_the_path() {
        let (_dir, mut fs) = tree();
        let err = fs.read(Base::Sys, "devices/system/cpu/online").unwrap_err();
        assert!(matches!(err, ReadError::Missing(_)));
        assert!(err.to_string().starts_with("no "));
        assert!(err.to_string().ends_with("sys/devices/system/cpu/online"));
    }

    #[test]
    fn directory_is_an_error_not_a_panic() {
        let (_dir, mut fs) = tree();
        assert!(fs.read(Base::Sys, "devices/system/cpu").is_err());
    }

    #[test]
    fn read_capped_stops_at_its_cap_and_names_the_file() {
        let (dir, _fs) = tree();
        let p = dir.path().join("proc/clock");
        std::fs::write(&p, "1 2\n").unwrap();
        assert_eq!(read_capped(&p, 4).unwrap(), "1 2\n");
        assert_eq!(
            read_capped(&p, 3).unwrap_err(),
            ReadError::TooLarge(p.clone(), 3)
        );
        let zero = dir.path().join("proc/zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let err = read_capped(&zero, 1 << 20).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "{}: not a regular file (a character device)",
                zero.display()
            )
        );
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let (dir, mut fs) = tree();
        let p = dir.path().join("proc/stat");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&p)
                .status()
                .unwrap()
                .success()
        );
        let err = fs.read(Base::Proc, "stat").unwrap_err();
        assert!(
            err.to_string().ends_with("not a regular file (a FIFO)"),
            "{err}"
        );
        let id = fs.file_id(Base::Proc, "stat");
        assert!(fs.read_u64_id(id).is_err());
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        let (dir, mut fs) = tree();
        std::fs::write(dir.path().join("proc/cmdline"), b"a\xffb\n").unwrap();
        assert_eq!(fs.read(Base::Proc, "cmdline").unwrap(), "a\u{fffd}b\n");
    }

    #[test]
    fn read_u64_rejects_garbage_with_a_reason() {
        let (dir, mut fs) = tree();
        std::fs::write(dir.path().join("proc/n"), "12x\n").unwrap();
        let err = fs.read_u64(Base::Proc, "n").unwrap_err();
        assert!(err.to_string().contains("not a number"), "{err}");
        std::fs::write(dir.path().join("proc/m"), " 42\n").unwrap();
        assert_eq!(fs.read_u64(Base::Proc, "m").unwrap(), 42);
    }

    #[test]
    fn list_sorts_numbers_by_value() {
        let (dir, mut fs) = tree();
        for n in ["cpu10", "cpu2", "cpu1", "cpufreq", "online"] {
            std::fs::create_dir_all(dir.path().join("sys/devices/system/cpu").join(n)).unwrap();
        }
        let names = fs.list(Base::Sys, "devices/system/cpu").unwrap();
        assert_eq!(names, ["cpu1", "cpu2", "cpu10", "cpufreq", "online"]);
    }

    #[test]
    fn tee_copies_what_was_read() {
        let (dir, mut fs) = tree();
        std::fs::write(dir.path().join("proc/softirqs"), "CPU0\n").unwrap();
        let out = tempfile::tempdir().unwrap();
        fs.set_tee(Some(out.path().to_path_buf()));
        fs.read(Base::Proc, "softirqs").unwrap();
        assert_eq!(
            std::fs::read_to_string(out.path().join("proc/softirqs")).unwrap(),
            "CPU0\n"
        );
    }

    #[test]
    fn a_registered_file_is_opened_once_and_reread_from_offset_zero() {
        let (dir, mut fs) = tree();
        let p = dir.path().join("sys/devices/system/cpu/usage");
        std::fs::write(&p, "17\n").unwrap();
        let id = fs.file_id(Base::Sys, "devices/system/cpu/usage");
        assert_eq!(fs.file_id(Base::Sys, "devices/system/cpu/usage"), id);
        assert_eq!(fs.open_count(), 0, "registering opens nothing");
        assert_eq!(fs.read_u64_id(id).unwrap(), 17);
        assert_eq!(fs.open_count(), 1);
        std::fs::write(&p, "18446744073709551615\n").unwrap();
        assert_eq!(fs.read_u64_id(id).unwrap(), u64::MAX);
        assert_eq!(fs.open_count(), 1, "still the one kept-open file");
    }

    #[test]
    fn registered_file_errors_name_the_path_and_reopen_later() {
        let (dir, mut fs) = tree();
        let id = fs.file_id(Base::Sys, "devices/system/cpu/time");
        let err = fs.read_u64_id(id).unwrap_err();
        assert!(matches!(err, ReadError::Missing(_)), "{err}");
        assert!(err.to_string().ends_with("sys/devices/system/cpu/time"));
        let p = dir.path().join("sys/devices/system/cpu/time");
        std::fs::write(&p, "twelve\n").unwrap();
        let err = fs.read_u64_id(id).unwrap_err();
        assert!(
            err.to_string().contains("not a number: \"twelve\""),
            "{err}"
        );
        std::fs::write(&p, "-3\n").unwrap();
        assert!(fs.read_u64_id(id).is_err(), "a counter is never negative");
        assert_eq!(fs.read_i64_id(id).unwrap(), -3);
        std::fs::write(&p, "").unwrap();
        assert!(fs.read_u64_id(id).is_err(), "an empty file is no number");
        // wider than the stack buffer: read whole, still parsed
        std::fs::write(&p, format!("{:>80}\n", 42)).unwrap();
        assert_eq!(fs.read_u64_id(id).unwrap(), 42);
    }

    #[test]
    fn past_the_descriptor_ceiling_files_are_closed_after_each_read() {
        let (dir, mut fs) = tree();
        std::fs::write(dir.path().join("proc/stat"), "1\n").unwrap();
        fs.set_fd_ceiling(0);
        let id = fs.file_id(Base::Proc, "stat");
        assert_eq!(fs.read_u64_id(id).unwrap(), 1);
        assert_eq!(fs.open_count(), 0);
        std::fs::write(dir.path().join("proc/stat"), "2\n").unwrap();
        assert_eq!(fs.read_u64_id(id).unwrap(), 2);
    }

    #[test]
    fn new_roots_close_the_files_and_read_the_same_ids_there() {
        let (dir, mut fs) = tree();
        std::fs::write(dir.path().join("proc/stat"), "1\n").unwrap();
        let id = fs.file_id(Base::Proc, "stat");
        assert_eq!(fs.read_u64_id(id).unwrap(), 1);
        let other = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(other.path().join("proc")).unwrap();
        std::fs::write(other.path().join("proc/stat"), "2\n").unwrap();
        let mut forked = fs.fork(Roots::under(other.path()));
        fs.set_roots(Roots::under(other.path()));
        assert_eq!(fs.open_count(), 0);
        assert_eq!(fs.read_u64_id(id).unwrap(), 2);
        assert_eq!(forked.read_u64_id(id).unwrap(), 2);
    }

    #[test]
    fn tee_copies_registered_reads_byte_for_byte() {
        let (dir, mut fs) = tree();
        std::fs::write(dir.path().join("proc/stat"), " 7 \n").unwrap();
        let out = tempfile::tempdir().unwrap();
        fs.set_tee(Some(out.path().to_path_buf()));
        let id = fs.file_id(Base::Proc, "stat");
        assert_eq!(fs.read_u64_id(id).unwrap(), 7);
        assert_eq!(
            std::fs::read_to_string(out.path().join("proc/stat")).unwrap(),
            " 7 \n"
        );
    }

    #[test]
    fn a_file_read_by_path_is_not_kept_open() {
        let (dir, mut fs) = tree();
        std::fs::write(dir.path().join("proc/cmdline"), "quiet\n").unwrap();
        assert_eq!(fs.read_trimmed(Base::Proc, "cmdline").unwrap(), "quiet");
        assert_eq!(fs.open_count(), 0);
    }
}
