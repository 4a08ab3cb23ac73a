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
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use thiserror::Error;

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
    /// The file is larger than `MAX_FILE_BYTES`.
    #[error("{0}: larger than {MAX_FILE_BYTES} bytes")]
    TooLarge(PathBuf),
    /// Any other I/O error, with the OS message.
    #[error("{0}: {1}")]
    Io(PathBuf, String),
}

impl ReadError {
    fn from_io(path: &Path, e: &io::Error) -> Self {
        match e.kind() {
            io::ErrorKind::NotFound => ReadError::Missing(path.to_path_buf()),
            io::ErrorKind::PermissionDenied => ReadError::Denied(path.to_path_buf()),
            _ => ReadError::Io(path.to_path_buf(), e.to_string()),
        }
    }
}

/// Reads kernel files under `Roots`, with kept-open handles and an optional tee.
#[derive(Debug)]
pub struct Fs {
    roots: Roots,
    open: HashMap<(Base, String), File>,
    buf: Vec<u8>,
    tee: Option<PathBuf>,
    keep_open: bool,
    max_open: usize,
}

/// How many files to keep open: half the soft descriptor limit, leaving the
/// rest for perf groups (a 1152-CPU machine has tens of thousands of
/// cpuidle files; past the cap files are opened for each read).
fn default_max_open() -> usize {
    let limit = std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("Max open files"))
                .and_then(|l| l.split_whitespace().nth(3))
                .and_then(|v| v.parse::<usize>().ok())
        })
        .unwrap_or(1024);
    (limit / 2).clamp(64, 1 << 16)
}

impl Fs {
    /// Creates a reader over `roots` that keeps files open between reads.
    pub fn new(roots: Roots) -> Self {
        Fs {
            roots,
            open: HashMap::new(),
            buf: Vec::with_capacity(64 << 10),
            tee: None,
            keep_open: true,
            max_open: default_max_open(),
        }
    }

    /// Returns the roots this reader reads from.
    pub fn roots(&self) -> &Roots {
        &self.roots
    }

    /// Points the reader at other roots (the next instant of a capture) and
    /// forgets the kept-open handles of the old ones.
    pub fn set_roots(&mut self, roots: Roots) {
        self.open.clear();
        self.roots = roots;
    }

    /// Copies every later successful read into `dir/<proc|sys|dev>/<rel>`;
    /// `None` stops copying.
    pub fn set_tee(&mut self, dir: Option<PathBuf>) {
        self.tee = dir;
    }

    /// Makes every read open the file anew (for captures whose files change
    /// on disk between reads, and for tests).
    pub fn set_keep_open(&mut self, keep: bool) {
        self.keep_open = keep;
        if !keep {
            self.open.clear();
        }
    }

    /// Reads a whole file as text (invalid UTF-8 is replaced, never an error).
    pub fn read(&mut self, base: Base, rel: &str) -> Result<&str, ReadError> {
        let len = self.read_bytes(base, rel)?;
        let bytes = &self.buf[..len];
        if std::str::from_utf8(bytes).is_err() {
            let owned = String::from_utf8_lossy(bytes).into_owned();
            self.buf.clear();
            self.buf.extend_from_slice(owned.as_bytes());
            let n = self.buf.len();
            return Ok(std::str::from_utf8(&self.buf[..n]).unwrap_or(""));
        }
        Ok(std::str::from_utf8(&self.buf[..len]).unwrap_or(""))
    }

    /// Reads a small file and returns it trimmed and owned; for facts read once.
    pub fn read_trimmed(&mut self, base: Base, rel: &str) -> Result<String, ReadError> {
        Ok(self.read(base, rel)?.trim().to_string())
    }

    /// Reads a file holding one integer (surrounding white space allowed).
    pub fn read_u64(&mut self, base: Base, rel: &str) -> Result<u64, ReadError> {
        let path = self.roots.path(base, rel);
        let text = self.read(base, rel)?.trim();
        text.parse::<u64>()
            .map_err(|_| ReadError::Io(path, format!("not a number: {:?}", truncate(text, 40))))
    }

    /// Reads a file holding one signed integer.
    pub fn read_i64(&mut self, base: Base, rel: &str) -> Result<i64, ReadError> {
        let path = self.roots.path(base, rel);
        let text = self.read(base, rel)?.trim();
        text.parse::<i64>()
            .map_err(|_| ReadError::Io(path, format!("not a number: {:?}", truncate(text, 40))))
    }

    /// Tells whether a path exists (file, directory or resolvable link).
    pub fn exists(&self, base: Base, rel: &str) -> bool {
        self.roots.path(base, rel).exists()
    }

    /// Lists the entry names of a directory, sorted in natural order
    /// (`cpu2` before `cpu10`, `state2` before `state10`).
    pub fn list(&mut self, base: Base, rel: &str) -> Result<Vec<String>, ReadError> {
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

    fn read_bytes(&mut self, base: Base, rel: &str) -> Result<usize, ReadError> {
        let key = (base, rel.to_string());
        let path = self.roots.path(base, rel);
        if !self.open.contains_key(&key) {
            let f = File::open(&path).map_err(|e| ReadError::from_io(&path, &e))?;
            if f.metadata().is_ok_and(|m| m.is_dir()) {
                return Err(ReadError::Io(path, "is a directory".into()));
            }
            self.open.insert(key.clone(), f);
        }
        let file = &self.open[&key];
        let result = pread_all(file, &mut self.buf, &path);
        if !self.keep_open || result.is_err() || self.open.len() > self.max_open {
            self.open.remove(&key);
        }
        let len = result?;
        if let Some(tee) = &self.tee {
            let dest = tee.join(base.dir_name()).join(rel);
            if let Some(parent) = dest.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            let _ = std::fs::write(dest, &self.buf[..len]);
        }
        Ok(len)
    }
}

/// Reads a file from offset 0 into `buf`; a short read is taken as the end
/// (true of procfs seq files, sysfs attributes and regular files), so a file
/// that fits the buffer costs one syscall. The file's bytes are `buf[..len]`;
/// `buf` keeps its whole length initialised between calls, because zeroing a
/// buffer grown to megabytes (by /proc/interrupts) before each of thousands
/// of small sysfs reads cost more than the reads themselves.
fn pread_all(file: &File, buf: &mut Vec<u8>, path: &Path) -> Result<usize, ReadError> {
    let want = buf.capacity().max(4096);
    if buf.len() < want {
        buf.resize(want, 0);
    }
    let mut len = 0;
    loop {
        let n = match file.read_at(&mut buf[len..], len as u64) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(ReadError::from_io(path, &e)),
        };
        len += n;
        if n == 0 || len < buf.len() {
            return Ok(len);
        }
        if len >= MAX_FILE_BYTES {
            return Err(ReadError::TooLarge(path.to_path_buf()));
        }
        buf.resize(len * 2, 0);
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
}
