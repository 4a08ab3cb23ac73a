//! Live tracepoint attribution on the machine running the tests: a busy loop
//! pinned to CPU 1 is named with its pid and its time on the CPU agrees with
//! its own scheduler statistics; CPU 1 without load is found quiet.
//!
//! Needs root (or `CAP_PERFMON` and tracefs access), tracefs mounted and at
//! least 2 CPUs; otherwise each test prints why and skips. The tracer is
//! drained from CPU 0.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use noisetop::pipeline::tracer::Tracer;
use noisetop::sys::pin_to;
use noisetop::trace::{SourceKind, TraceWindow};

const CPU: u32 = 1;

/// A child killed when the test ends, passed or not.
struct Kill(Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `args` with its affinity set to CPU 1, keeping this thread on CPU 0.
fn spawn_on_cpu1(args: &[&str]) -> Kill {
    pin_to(&[CPU]).unwrap();
    let child = Command::new(args[0])
        .args(&args[1..])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    pin_to(&[0]).unwrap();
    Kill(child)
}

#[path = "common/cpu1.rs"]
mod cpu1;
use cpu1::{quiet_cpu1, steal_ns};

#[path = "common/schedstat.rs"]
mod schedstat;
use schedstat::{ns_at, run_ns};

/// Idle time of a CPU from /proc/stat, iowait included (an idle CPU that
/// waits for a disk is counted there), in `USER_HZ` ticks.
fn idle_ticks(cpu: u32) -> u64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap();
    let line = stat
        .lines()
        .find(|l| l.starts_with(&format!("cpu{cpu} ")))
        .unwrap();
    let field = |i: usize| -> u64 { line.split_whitespace().nth(i).unwrap().parse().unwrap() };
    field(4) + field(5)
}

/// Every thread's time on a CPU so far (`sum_exec_runtime`, ns), by tid.
fn every_thread_ns() -> HashMap<u32, u64> {
    let mut out = HashMap::new();
    let number = |p: &Path| p.file_name()?.to_str()?.parse::<u32>().ok();
    for proc in std::fs::read_dir("/proc").unwrap().flatten() {
        if number(&proc.path()).is_none() {
            continue;
        }
        let Ok(threads) = std::fs::read_dir(proc.path().join("task")) else {
            continue;
        };
        for t in threads.flatten() {
            if let (Some(tid), Some(ns)) = (number(&t.path()), ns_at(&t.path().join("schedstat"))) {
                out.insert(tid, ns);
            }
        }
    }
    out
}

fn one_cpu(w: &TraceWindow) -> &noisetop::trace::CpuTrace {
    assert_eq!(w.cpus.len(), 1);
    assert_eq!(w.cpus[0].cpu, CPU);
    &w.cpus[0]
}

#[test]
fn busy_loop_is_named_and_timed_like_its_schedstat() {
    let Some(_cpu1) = quiet_cpu1() else {
        return;
    };
    pin_to(&[0]).unwrap();
    let owner = spawn_on_cpu1(&["sleep", "5"]);
    let busy = spawn_on_cpu1(&["sh", "-c", "while :; do :; done"]);
    let busy_pid = busy.0.id();
    let mut tracer = Tracer::open(Path::new("/sys"), &[CPU]).unwrap();
    assert_eq!(tracer.cpus(), &[CPU]);
    tracer.set_owner(CPU, vec![owner.0.id()]);
    std::thread::sleep(Duration::from_millis(300));
    let before = run_ns(busy_pid);
    let steal_before = steal_ns(CPU);
    let _ = tracer.drain();
    let mut traced = 0;
    let mut lost = 0;
    let mut last = None;
    for _ in 0..3 {
        std::thread::sleep(Duration::from_secs(1));
        let after = run_ns(busy_pid);
        let w = tracer.drain();
        lost += w.lost;
        let c = one_cpu(&w);
        let t = c.tasks.iter().find(|t| t.task.tid == busy_pid);
        traced += t.map_or(0, |t| t.ns);
        last = Some((after, c.clone()));
    }
    let (after, c) = last.unwrap();
    // one tick of /proc/stat's rounding at each end
    let steal = steal_ns(CPU) - steal_before + 20_000_000;
    drop(busy);
    drop(owner);

    let sched = after - before;
    let diff = traced.abs_diff(sched) as f64 / sched as f64;
    println!(
        "busy loop pid {busy_pid}: traced {traced} ns, schedstat {sched} ns, diff {:.3} %, \
         at most {steal} ns stolen by the host, lost {lost}",
        diff * 100.0
    );
    // On a loaded machine the loop shares CPU 1; it must still have run.
    assert!(sched > 300_000_000, "the busy loop hardly ran: {sched} ns");
    // within 5 %, and above that by no more than the host stole: the
    // trace's clock runs through steal, schedstat's does not
    assert!(
        diff < 0.05 || (traced > sched && traced - sched < sched / 20 + steal),
        "traced {traced} ns vs schedstat {sched} ns, at most {steal} ns stolen"
    );
    assert_eq!(lost, 0);
    assert!(c.records > 0);

    // Named as the intruder of the CPU whose owner is `sleep`.
    assert!(c.owner_given);
    let intruder = c
        .sources
        .iter()
        .find(|s| s.kind == SourceKind::Task && s.task.as_ref().is_some_and(|t| t.tid == busy_pid))
        .unwrap_or_else(|| panic!("busy loop not among {:?}", c.sources));
    assert_eq!(intruder.name, "sh");
    let task = intruder.task.as_ref().unwrap();
    assert_eq!(task.pid, Some(busy_pid));
    assert_eq!(task.comm.as_deref(), Some("sh"));
    assert!(intruder.ns > 100_000_000, "{intruder:?}");
    let accounted: u64 = c.tasks.iter().map(|t| t.ns).sum::<u64>()
        + c.sources
            .iter()
            .filter(|s| s.kind != SourceKind::Task)
            .map(|s| s.ns)
            .sum::<u64>()
        + c.unknown_ns;
    assert_eq!(accounted, c.window_ns);

    let session = tracer.session();
    let s = one_cpu(&session);
    let busy_total = s.tasks.iter().find(|t| t.task.tid == busy_pid).unwrap();
    assert!(busy_total.ns >= traced);
}

#[test]
fn idle_cpu_is_found_quiet() {
    let Some(_cpu1) = quiet_cpu1() else {
        return;
    };
    pin_to(&[0]).unwrap();
    let mut tracer = Tracer::open(Path::new("/sys"), &[CPU]).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let before = every_thread_ns();
    let steal0 = steal_ns(CPU);
    let _ = tracer.drain();
    let idle0 = idle_ticks(CPU);
    std::thread::sleep(Duration::from_secs(2));
    let idle1 = idle_ticks(CPU);
    let w = tracer.drain();
    let after = every_thread_ns();
    // the trace's clock runs through what the host stole, schedstat's does
    // not; one tick of /proc/stat's rounding at each end
    let steal = steal_ns(CPU) - steal0 + 20_000_000;
    let c = one_cpu(&w);
    let hz = 100.0; // USER_HZ on Linux
    let stat_idle = (idle1 - idle0) as f64 / hz;
    let traced_idle = c.idle_ns as f64 / 1e9;
    let unseen = c.unseen_ns as f64 / 1e9;
    let window = c.window_ns as f64 / 1e9;
    println!(
        "CPU {CPU}: idle {traced_idle:.3} s traced, {unseen:.3} s unseen, {stat_idle:.3} s in \
         /proc/stat, window {window:.3} s, stolen {} ns, tasks {:?}",
        c.stolen_ns(),
        c.tasks
            .iter()
            .map(|t| (&t.task.comm, t.task.tid, t.ns))
            .collect::<Vec<_>>()
    );
    // No task is given more time on CPU 1 than its own counter says it
    // ran anywhere (a task caught between the ticks that update that
    // counter may be owed one tick, 10 ms at the slowest HZ), but for what
    // the host stole while it ran.
    for t in c.tasks.iter().filter(|t| t.task.tid != 0) {
        if let (Some(a), Some(b)) = (before.get(&t.task.tid), after.get(&t.task.tid)) {
            assert!(
                t.ns <= b - a + 10_000_000 + steal,
                "{:?}[{}] traced {} ns, its schedstat says {} ns, at most {steal} ns stolen",
                t.task.comm,
                t.task.tid,
                t.ns,
                b - a
            );
        }
    }
    // The traced idle time agrees with the kernel's own idle accounting;
    // the time around a switch the kernel did not show may be either.
    let tol = 0.03 * window + 0.02;
    assert!(
        stat_idle > traced_idle - tol && stat_idle < traced_idle + unseen + tol,
        "traced idle {traced_idle} s (+{unseen} s unseen) vs /proc/stat {stat_idle} s"
    );
    if stat_idle < 0.95 * window {
        println!(
            "CPU {CPU} was busy with other work ({stat_idle:.2} s idle of {window:.2} s): quiet not judged"
        );
        return;
    }
    assert!(c.tasks.iter().any(|t| t.task.tid == 0));
    let others: u64 = c
        .tasks
        .iter()
        .filter(|t| t.task.tid != 0)
        .map(|t| t.ns)
        .sum();
    assert!(others < c.window_ns / 20, "non-idle tasks ran {others} ns");
    let irqs: u64 = c
        .sources
        .iter()
        .filter(|s| s.kind != SourceKind::Task)
        .map(|s| s.ns)
        .sum();
    assert!(irqs < c.window_ns / 100, "interrupts took {irqs} ns");
    assert_eq!(w.lost, 0);
}
