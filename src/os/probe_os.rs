//! The system calls of the wake-up probe std does not wrap: real-time
//! priority, timer slack, locked memory, absolute sleeps, the `PM_QOS`
//! request file, and two processes bouncing a byte through pipes.
#![expect(
    unsafe_code,
    reason = "sched_setscheduler, prctl, mlockall, clock_nanosleep, fork and raw pipe \
              I/O have no safe std wrapper"
)]

use std::io;
use std::path::Path;

/// Gives the calling thread `SCHED_FIFO` at `prio`.
pub fn set_fifo(prio: i32) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: prio,
    };
    // SAFETY: param is a valid sched_param; pid 0 is the calling thread.
    let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &raw const param) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Sets the calling thread's timer slack to 1 ns: a normal task's timers
/// may otherwise fire up to 50 µs late on purpose, which is not latency.
pub fn set_timer_slack_1ns() -> io::Result<()> {
    // SAFETY: PR_SET_TIMERSLACK takes an integer and touches no memory.
    let rc = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Locks the process's memory, now and later (as `cyclictest -m`): a page
/// fault in the measuring loop would be counted as wake-up latency.
pub fn lock_memory() -> io::Result<()> {
    // SAFETY: mlockall takes flags only.
    let rc = unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Sleeps until `CLOCK_MONOTONIC` reads `deadline_ns`.
pub fn sleep_until(deadline_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long,
    };
    loop {
        // SAFETY: ts is a valid timespec; no remainder is asked for.
        let rc = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &raw const ts,
                std::ptr::null_mut(),
            )
        };
        if rc != libc::EINTR {
            return;
        }
    }
}

/// The CPU latency limit in force (µs) as `/dev/cpu_dma_latency` reports it,
/// and whether someone holds it below the kernel's default (2000 s, no
/// limit). Reading opens a request at the default value, which changes
/// nothing, and closes it.
pub fn cpu_dma_latency(dev: &Path) -> io::Result<i32> {
    use std::io::Read as _;
    let mut f = std::fs::File::open(dev.join("cpu_dma_latency"))?;
    let mut b = [0u8; 4];
    f.read_exact(&mut b)?;
    Ok(i32::from_ne_bytes(b))
}

/// The kernel's `PM_QOS_CPU_LATENCY_DEFAULT_VALUE`: nobody holds a limit.
pub const NO_LATENCY_LIMIT_US: i32 = 2_000_000_000;

fn pipe() -> io::Result<[libc::c_int; 2]> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: fds has room for the two descriptors pipe2 writes.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    if rc == 0 {
        Ok(fds)
    } else {
        Err(io::Error::last_os_error())
    }
}

fn close(fd: libc::c_int) {
    // SAFETY: fd is a descriptor this module opened and closes once.
    unsafe {
        libc::close(fd);
    }
}

fn write_byte(fd: libc::c_int) -> bool {
    let b = [1u8];
    // SAFETY: b is one readable byte.
    unsafe { libc::write(fd, b.as_ptr().cast(), 1) == 1 }
}

fn read_byte(fd: libc::c_int) -> bool {
    let mut b = [0u8];
    // SAFETY: b is one writable byte.
    unsafe { libc::read(fd, b.as_mut_ptr().cast(), 1) == 1 }
}

/// Two processes bounce a byte through two pipes `rounds` times (after as
/// many again to warm up), as lmbench's `lat_ctx` and `perf bench sched
/// pipe` do; returns the ns of the measured rounds. The calling thread is
/// one end and stays where it is pinned; the child is pinned to
/// `child_cpu` (the same CPU: every round trip is two context switches)
/// and inherits the caller's scheduling policy.
pub fn pipe_ping_pong(child_cpu: u32, rounds: u32) -> io::Result<u64> {
    let ping = pipe()?;
    let pong = pipe().inspect_err(|_| {
        close(ping[0]);
        close(ping[1]);
    })?;
    // SAFETY: the child calls only async-signal-safe functions
    // (sched_setaffinity, read, write, _exit) before it exits.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        let e = io::Error::last_os_error();
        for fd in ping.into_iter().chain(pong) {
            close(fd);
        }
        return Err(e);
    }
    if pid == 0 {
        // SAFETY: the set is plain data written in place; _exit never returns.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(child_cpu as usize, &mut set);
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &raw const set)
                != 0
            {
                libc::_exit(3);
            }
            for _ in 0..u64::from(rounds) * 2 {
                if !read_byte(ping[0]) || !write_byte(pong[1]) {
                    libc::_exit(4);
                }
            }
            libc::_exit(0);
        }
    }
    close(ping[0]);
    close(pong[1]);
    let mut ok = true;
    for _ in 0..rounds {
        ok &= write_byte(ping[1]) && read_byte(pong[0]);
    }
    let t0 = crate::os::sys::monotonic_ns();
    for _ in 0..rounds {
        ok &= write_byte(ping[1]) && read_byte(pong[0]);
    }
    let took = crate::os::sys::monotonic_ns() - t0;
    close(ping[1]);
    close(pong[0]);
    let mut status = 0;
    // SAFETY: pid is our child; status is writable.
    unsafe {
        libc::waitpid(pid, &raw mut status, 0);
    }
    if !ok || !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        return Err(io::Error::other(format!(
            "the ping-pong child on CPU {child_cpu} failed (status {status:#x})"
        )));
    }
    Ok(took)
}

/// One thread writes a byte into a pipe and reads it back `rounds` times:
/// the cost of the pipe calls with no switch, which `lat_ctx` subtracts.
pub fn pipe_self(rounds: u32) -> io::Result<u64> {
    let p = pipe()?;
    let mut ok = true;
    for _ in 0..rounds {
        ok &= write_byte(p[1]) && read_byte(p[0]);
    }
    let t0 = crate::os::sys::monotonic_ns();
    for _ in 0..rounds {
        ok &= write_byte(p[1]) && read_byte(p[0]);
    }
    let took = crate::os::sys::monotonic_ns() - t0;
    close(p[0]);
    close(p[1]);
    if ok {
        Ok(took)
    } else {
        Err(io::Error::other("pipe write/read failed"))
    }
}
