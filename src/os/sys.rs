//! The system calls std does not wrap: clocks, CPU affinity, limits,
//! waiting on stdin, signals to threads and processes, children's usage.
#![expect(
    unsafe_code,
    reason = "clock_gettime and sched_setaffinity have no safe std wrapper"
)]

/// Reads `CLOCK_MONOTONIC` in nanoseconds.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid, writable timespec; CLOCK_MONOTONIC always exists.
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &raw mut ts);
    }
    (ts.tv_sec as u64) * 1_000_000_000 + ts.tv_nsec as u64
}

/// Reads the CPU time this process has used (every thread, user and
/// system), `CLOCK_PROCESS_CPUTIME_ID`, in nanoseconds.
pub fn process_cpu_ns() -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid, writable timespec.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &raw mut ts) };
    (rc == 0).then(|| (ts.tv_sec as u64) * 1_000_000_000 + ts.tv_nsec as u64)
}

/// Restricts the calling process to the given CPUs.
pub fn pin_to(cpus: &[u32]) -> std::io::Result<()> {
    // SAFETY: cpu_set_t is plain data; CPU_ZERO/CPU_SET only write inside it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        for &c in cpus {
            if (c as usize) < libc::CPU_SETSIZE as usize {
                libc::CPU_SET(c as usize, &mut set);
            }
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &raw const set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Restricts every thread of this process to the given CPUs (a thread
/// started later inherits its starter's affinity); `pin_to` moves only the
/// calling thread.
pub fn pin_all(cpus: &[u32]) -> std::io::Result<()> {
    let mut first_err = None;
    for entry in std::fs::read_dir("/proc/self/task")? {
        let Some(tid) = entry
            .ok()
            .and_then(|e| e.file_name().to_str()?.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        if let Err(e) = pin_thread(tid, cpus) {
            // a thread that ended meanwhile is no failure
            if e.raw_os_error() != Some(libc::ESRCH) {
                first_err.get_or_insert(e);
            }
        }
    }
    first_err.map_or(Ok(()), Err)
}

fn pin_thread(tid: libc::pid_t, cpus: &[u32]) -> std::io::Result<()> {
    // SAFETY: cpu_set_t is plain data; CPU_ZERO/CPU_SET only write inside it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        for &c in cpus {
            if (c as usize) < libc::CPU_SETSIZE as usize {
                libc::CPU_SET(c as usize, &mut set);
            }
        }
        if libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &raw const set) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The first argument that makes noisetop a trampoline: `noisetop
/// __exec-pinned CPUS PROGRAM ARGS…` sets its affinity to `CPUS` and execs
/// `PROGRAM` in its own place (same pid).
pub const EXEC_PINNED: &str = "__exec-pinned";

/// Starts `program` restricted to `cpus`, the caller never running there.
/// Forking noisetop would copy its memory map, and write-protecting the
/// copied pages flushes the TLBs of every CPU in the map's CPU mask, where
/// a CPU noisetop ran on stays while it idles: one IPI to a watched CPU
/// after the first sample (`flush_tlb_mm_range` from `dup_mmap`, seen with
/// the `ipi` tracepoints). So noisetop is started again without a fork
/// (`posix_spawn`, which shares the memory map until the exec), as a
/// trampoline that sets its affinity and execs the program: the program
/// keeps the pid the caller sees. A program that cannot be run makes the
/// trampoline say why and exit with 127 (126 when it is not executable),
/// as `env` and `taskset` do.
pub fn spawn_pinned(
    program: &std::ffi::OsStr,
    args: &[std::ffi::OsString],
    cpus: &[u32],
) -> std::io::Result<std::process::Child> {
    // the running binary, even if its file was replaced since
    std::process::Command::new("/proc/self/exe")
        .arg(EXEC_PINNED)
        .arg(crate::base::cpulist::format(cpus))
        .arg(program)
        .args(args)
        .spawn()
}

/// The trampoline's side of [`spawn_pinned`], given the arguments after
/// [`EXEC_PINNED`]: returns only on failure, with the exit status to give.
pub fn exec_pinned(args: &[std::ffi::OsString]) -> u8 {
    use std::os::unix::process::CommandExt as _;
    let (Some(list), Some(program)) = (args.first(), args.get(1)) else {
        eprintln!("noisetop {EXEC_PINNED}: CPUS PROGRAM [ARGS…] expected");
        return 127;
    };
    let Some(cpus) = list
        .to_str()
        .and_then(|l| crate::base::cpulist::parse(l).ok())
    else {
        eprintln!(
            "noisetop {EXEC_PINNED}: not a CPU list: {}",
            list.to_string_lossy()
        );
        return 127;
    };
    if let Err(e) = pin_to(&cpus) {
        eprintln!(
            "noisetop: cannot run {} on CPU {}: {e}",
            program.to_string_lossy(),
            list.to_string_lossy()
        );
        return 127;
    }
    let e = std::process::Command::new(program).args(&args[2..]).exec();
    // the OS's words, as a shell says them, without std's "(os error N)"
    let words = e.to_string();
    let words = words.split(" (os error ").next().unwrap_or(&words);
    eprintln!(
        "noisetop: cannot run {}: {words}",
        program.to_string_lossy()
    );
    if e.kind() == std::io::ErrorKind::PermissionDenied {
        126
    } else {
        127
    }
}

/// Returns the CPUs the calling process may run on.
pub fn affinity() -> std::io::Result<Vec<u32>> {
    // SAFETY: set is written by the kernel; CPU_ISSET only reads inside it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &raw mut set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok((0..libc::CPU_SETSIZE as u32)
            .filter(|&c| libc::CPU_ISSET(c as usize, &set))
            .collect())
    }
}

/// Whether thread `tid` may run on `cpu` only (`None`: it is gone).
pub fn only_on(tid: u32, cpu: u32) -> Option<bool> {
    let tid = libc::pid_t::try_from(tid).ok()?;
    // SAFETY: set is written by the kernel; CPU_ISSET only reads inside it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &raw mut set) != 0 {
            return None;
        }
        let on = (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set));
        Some(on.eq(std::iter::once(cpu as usize)))
    }
}

/// The soft limit of open files (`None`: not known).
pub fn fd_limit() -> Option<usize> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: lim is a valid rlimit the kernel writes.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &raw mut lim) } == 0;
    ok.then(|| usize::try_from(lim.rlim_cur).unwrap_or(usize::MAX))
}

/// Raises the soft limit of open files to the hard limit: perf opens a few
/// descriptors per CPU, past the usual 1024 on machines with 256+ CPUs.
pub fn raise_fd_limit() {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: lim is a valid rlimit the kernel reads and writes.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &raw mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &raw const lim);
        }
    }
}

/// Grows the file table once, before any other thread runs, to hold
/// `want` descriptors: the kernel grows it on the first descriptor past
/// its size (64, then powers of two) and, once a process has more than one
/// thread, waits for an RCU grace period to free the old table
/// (`expand_fdtable` → `synchronize_rcu`), which wakes RCU's thread on
/// whichever CPU it runs, a watched one too. A descriptor duplicated to
/// the last slot and closed again leaves the table at its size: it never
/// shrinks. Held to the soft limit; returns the size asked for, or why not.
pub fn size_fd_table(want: usize) -> Result<usize, FdTableError> {
    let limit = fd_limit().unwrap_or(1024);
    let want = want.min(limit);
    let Ok(last) = libc::c_int::try_from(want.saturating_sub(1)) else {
        return Err(FdTableError::TooMany(want));
    };
    if last < 64 {
        return Ok(want);
    }
    // SAFETY: fcntl duplicates stderr (open for the process's life) to the
    // lowest free descriptor at or past `last`, which is closed at once.
    let fd = unsafe { libc::fcntl(2, libc::F_DUPFD_CLOEXEC, last) };
    if fd < 0 {
        return Err(FdTableError::Refused(std::io::Error::last_os_error()));
    }
    // SAFETY: fd was just opened above and is owned here alone.
    unsafe { libc::close(fd) };
    Ok(want)
}

/// Why the descriptor table could not be grown.
#[derive(Debug, thiserror::Error)]
pub enum FdTableError {
    /// The size asked for does not fit a descriptor number.
    #[error("{0} descriptors do not fit an int")]
    TooMany(usize),
    /// The kernel refused the duplicate.
    #[error("{}", os_words(.0))]
    Refused(std::io::Error),
}

/// How many descriptors noisetop may hold on this machine: 64 of its own
/// (the terminal, /proc and /sys files, BPF maps and links, sockets), 4 per
/// possible CPU (perf counters), and the same again as room.
pub fn fd_table_size(cpus: usize) -> usize {
    2 * (64 + 4 * cpus)
}

/// CPUs the kernel was configured with (online or not), at least 1.
pub fn configured_cpus() -> usize {
    // SAFETY: sysconf reads a constant of the system.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
    usize::try_from(n).unwrap_or(1).max(1)
}

/// Keeps freed memory in the process. glibc gives a freed block of more
/// than 128 KiB back to the kernel and maps it anew on the next allocation;
/// on 1024 CPUs every interval allocates and frees tables of hundreds of
/// KiB to megabytes, and faulting their pages in again took longer than
/// the delta's own arithmetic (580 page faults, about 2.5 ms, a delta). The
/// price is that the heap stays at its high-water mark: tens of MB at most.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; it touches no memory
    // of ours.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 64 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
    }
}

/// What waiting on standard input found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StdinWait {
    /// Input is ready to read.
    Readable,
    /// The terminal is gone (hang-up, error, or end of file).
    Closed,
    /// The timeout passed, or a signal interrupted the wait.
    Nothing,
}

/// Waits until standard input is readable or closed, up to `timeout`.
pub fn wait_stdin(timeout: std::time::Duration) -> StdinWait {
    let mut fds = libc::pollfd {
        fd: libc::STDIN_FILENO,
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
    // SAFETY: fds is one valid pollfd for the duration of the call.
    let n = unsafe { libc::poll(&raw mut fds, 1, ms) };
    if n <= 0 {
        return StdinWait::Nothing;
    }
    if fds.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
        return StdinWait::Closed;
    }
    StdinWait::Readable
}

/// Identifies the calling thread, for `interrupt_thread`.
pub fn current_thread() -> libc::pthread_t {
    // SAFETY: pthread_self has no preconditions.
    unsafe { libc::pthread_self() }
}

/// Sends SIGWINCH to one thread of this process: a blocking `poll` in that
/// thread returns at once (EINTR), and the terminal library sees a resize.
pub fn interrupt_thread(thread: libc::pthread_t) {
    // SAFETY: the thread id came from pthread_self of a thread that lives
    // as long as the process (the screen thread), and SIGWINCH has a handler.
    unsafe {
        libc::pthread_kill(thread, libc::SIGWINCH);
    }
}

/// Sends `sig` to process `pid`; an error when it is gone.
pub fn kill(pid: u32, sig: i32) -> std::io::Result<()> {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return Err(std::io::Error::other("no such process"));
    };
    // SAFETY: kill takes plain integers and touches no memory of ours.
    if unsafe { libc::kill(pid, sig) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Context switches (voluntary, involuntary) of the children waited for.
pub fn children_switches() -> Option<(u64, u64)> {
    // SAFETY: ru is plain data the kernel fills in.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_CHILDREN, &raw mut ru) != 0 {
            return None;
        }
        Some((ru.ru_nvcsw as u64, ru.ru_nivcsw as u64))
    }
}

/// CPU time (user and system) of the children waited for, ns.
pub fn children_cpu_ns() -> Option<u64> {
    // SAFETY: ru is plain data the kernel fills in.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_CHILDREN, &raw mut ru) != 0 {
            return None;
        }
        ru
    };
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000;
    Some(ns(ru.ru_utime) + ns(ru.ru_stime))
}

/// Whether this process may execute `path`: `access(X_OK)`, the check
/// `execve` makes (root passes where any execute bit is set).
pub fn may_execute(path: &std::path::Path) -> bool {
    use std::os::unix::ffi::OsStrExt as _;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: c is a NUL-terminated string that outlives the call.
    unsafe { libc::access(c.as_ptr(), libc::X_OK) == 0 }
}

/// Whether noisetop runs as root (effective uid 0).
pub fn is_root() -> bool {
    // SAFETY: geteuid cannot fail and touches no memory.
    unsafe { libc::geteuid() == 0 }
}

/// Mounts tracefs at `at`, as `mount -t tracefs nodev AT` (and perf) do.
pub fn mount_tracefs(at: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt as _;
    let target = std::ffi::CString::new(at.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::other("a NUL in the path"))?;
    // SAFETY: every pointer is a NUL-terminated string that outlives the
    // call; no mount data is passed.
    let rc = unsafe {
        libc::mount(
            c"nodev".as_ptr(),
            target.as_ptr(),
            c"tracefs".as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Waits until child `pid` has ended without reaping it (`waitid` with
/// `WNOWAIT`): its /proc entries, its leader's last counters among them,
/// stay readable until `Child::wait` reaps it.
pub fn wait_ended(pid: u32) -> std::io::Result<()> {
    let id = libc::id_t::from(pid);
    loop {
        // SAFETY: info is plain data the kernel fills in.
        let rc = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(
                libc::P_PID,
                id,
                &raw mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if rc == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// An OS error in its own words, without std's "(os error N)".
pub fn os_words(e: &std::io::Error) -> String {
    let words = e.to_string();
    words
        .split(" (os error ")
        .next()
        .unwrap_or(&words)
        .to_string()
}

#[cfg(test)]
mod fd_table_tests {
    use super::*;

    /// The table is grown once, to the size asked for: a descriptor opened
    /// past the first 64 afterwards finds the table already that large
    /// (`FDSize` in /proc/self/status).
    #[test]
    fn the_file_table_is_sized_once_at_setup() {
        let fd_size = || -> usize {
            std::fs::read_to_string("/proc/self/status")
                .unwrap()
                .lines()
                .find_map(|l| l.strip_prefix("FDSize:"))
                .unwrap()
                .trim()
                .parse()
                .unwrap()
        };
        let want = fd_table_size(64);
        assert_eq!(want, 2 * (64 + 256));
        assert_eq!(size_fd_table(want).unwrap(), want.min(fd_limit().unwrap()));
        let size = fd_size();
        assert!(size >= want.min(fd_limit().unwrap()), "FDSize {size}");
        // asking again for less changes nothing
        assert!(size_fd_table(100).is_ok());
        assert_eq!(fd_size(), size);
    }
}
