//! Runs the measuring threads: timer sleepers on the probed CPUs, then
//! pipe sleepers there woken from housekeeping CPUs, then the context
//! switch ping-pong; noisetop's own thread reads the idle rings meanwhile
//! from a housekeeping CPU.

use std::collections::BTreeMap;
use std::io::{self, Read as _, Write as _};
use std::time::Duration;

use super::stats::{Latencies, StateDecl};
use super::tag::{self, Tag};
use super::{Conditions, CtxRow, Kind, ProbeReport, TagMethod};
use crate::collect::cpuidle;
use crate::collect::topology::CPU_DIR;
use crate::os::fs::{Base, FileId, Fs, Roots};
use crate::os::idle_ring::{IdleEvent, IdleTrace};
use crate::os::probe_os;
use crate::os::stop::Stop;
use crate::os::sys::{monotonic_ns, pin_to};

/// The real-time priority of the probe threads (cyclictest's examples use
/// 80–99 for a system under test; 50 stays below the kernel's IRQ threads).
pub const FIFO_PRIO: i32 = 50;

/// Round trips of each context-switch measurement.
pub const CTX_ROUNDS: u32 = 20_000;

/// Longest random gap before a timer deadline or a remote wake-up, ns (as
/// wult: long enough for the deepest states).
const MAX_GAP_NS: u64 = 4_000_000;

/// Which measurements to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kinds {
    /// Timer wake-ups.
    pub timer: bool,
    /// Remote wake-ups and round trips.
    pub remote: bool,
    /// Context switch cost.
    pub ctx: bool,
}

/// What to probe and how.
#[derive(Debug, Clone)]
pub struct Opts {
    /// Probed CPUs.
    pub cpus: Vec<u32>,
    /// CPUs for noisetop itself and the wakers (never empty).
    pub housekeeping: Vec<u32>,
    /// Time shared by the wake-up measurements.
    pub duration: Duration,
    /// A fixed timer period instead of random gaps.
    pub timer_interval: Option<Duration>,
    /// What to measure.
    pub kinds: Kinds,
    /// Where kernel files are.
    pub roots: Roots,
    /// Tag from usage counters even where tracing works.
    pub no_trace: bool,
    /// Round trips per context-switch measurement.
    pub ctx_rounds: u32,
    /// Set by a signal: the measurements end early and the report is
    /// made of what was measured.
    pub stop: Stop,
}

/// The cpuidle `usage` counters of one CPU, kept open.
struct Usage {
    fs: Fs,
    ids: Vec<FileId>,
    buf: Vec<u64>,
}

impl Usage {
    fn open(roots: &Roots, cpu: u32, states: usize) -> Usage {
        let mut fs = Fs::new(roots.clone());
        let ids = (0..states)
            .map(|k| {
                fs.file_id(
                    Base::Sys,
                    &format!("{CPU_DIR}/cpu{cpu}/cpuidle/state{k}/usage"),
                )
            })
            .collect();
        Usage {
            fs,
            ids,
            buf: Vec::with_capacity(states),
        }
    }

    /// The counters now; `None` when one cannot be read (the tag is then
    /// unknown, not busy).
    fn read(&mut self) -> Option<Vec<u64>> {
        self.buf.clear();
        for &id in &self.ids {
            self.buf.push(self.fs.read_u64_id(id).ok()?);
        }
        Some(self.buf.clone())
    }
}

/// One wake-up: due (or stamped) at `start`, running at `end`; `tag` when
/// inferred by the woken thread itself.
#[derive(Debug, Clone, Copy)]
struct Wake {
    cpu: u32,
    kind: Kind,
    start: u64,
    end: u64,
    tag: Option<Tag>,
}

/// Why a measuring thread measured nothing, or stopped early.
#[derive(Debug, thiserror::Error)]
pub enum ThreadError {
    /// It cannot be pinned to its CPU (offline, or outside the cpuset).
    #[error("cannot run on CPU {cpu}: {source}")]
    Pin {
        /// The CPU.
        cpu: u32,
        /// What `sched_setaffinity` said.
        source: io::Error,
    },
    /// It cannot have `SCHED_FIFO` (not root, or no real-time budget).
    #[error("{0}")]
    Fifo(io::Error),
    /// A stamp cannot be sent to the sleeper.
    #[error("pipe to CPU {cpu}: {source}")]
    PipeTo {
        /// The sleeper's CPU.
        cpu: u32,
        /// What the write said.
        source: io::Error,
    },
    /// The sleeper's reply cannot be read.
    #[error("pipe from CPU {cpu}: {source}")]
    PipeFrom {
        /// The sleeper's CPU.
        cpu: u32,
        /// What the read said.
        source: io::Error,
    },
    /// The context-switch ping-pong failed.
    #[error("{0}")]
    PingPong(io::Error),
    /// A measuring thread panicked.
    #[error("a probe thread panicked")]
    Panicked,
    /// The ping-pong thread panicked.
    #[error("the ping-pong thread panicked")]
    PingPongPanicked,
}

/// Pins the calling thread and gives it the probe's policy; `Err` says why
/// it kept the normal one.
fn prepare(cpu: u32, fifo: bool) -> Result<(), ThreadError> {
    pin_to(&[cpu]).map_err(|source| ThreadError::Pin { cpu, source })?;
    let _ = probe_os::set_timer_slack_1ns();
    if fifo {
        probe_os::set_fifo(FIFO_PRIO).map_err(ThreadError::Fifo)?;
    }
    Ok(())
}

fn timer_thread(
    cpu: u32,
    fifo: bool,
    end: u64,
    interval: Option<u64>,
    mut usage: Option<Usage>,
    stop: &Stop,
) -> Result<Vec<Wake>, ThreadError> {
    prepare(cpu, fifo)?;
    let span = end.saturating_sub(monotonic_ns());
    let mut out = Vec::with_capacity((span / interval.unwrap_or(1_000_000).max(1)) as usize + 16);
    let mut rng = fastrand::Rng::new();
    let mut next = monotonic_ns();
    loop {
        // read before the deadline is set: a short gap must not pass
        // while the counters are read
        let before = usage.as_mut().and_then(Usage::read);
        let deadline = match interval {
            // cyclictest's schedule: a fixed grid
            Some(i) => {
                next += i;
                next
            }
            None => monotonic_ns() + rng.u64(0..MAX_GAP_NS),
        };
        if deadline > end || stop.is_stopped() {
            break;
        }
        probe_os::sleep_until(deadline);
        let t = monotonic_ns();
        let tag = match (before, usage.as_mut()) {
            (Some(b), Some(u)) => u.read().map(|a| tag::from_usage(&b, &a)),
            _ => None,
        };
        // periods a late wake-up overran are skipped, as cyclictest does:
        // one delay is counted once, not again by every deadline behind it
        if let Some(i) = interval {
            while next + i <= t {
                next += i;
            }
        }
        out.push(Wake {
            cpu,
            kind: Kind::Timer,
            start: deadline,
            end: t,
            tag,
        });
    }
    Ok(out)
}

fn encode(t: Option<Tag>) -> i64 {
    match t {
        None => -3,
        Some(Tag::Unknown) => -2,
        Some(Tag::Busy) => -1,
        Some(Tag::State(s)) => i64::from(s),
    }
}

fn decode(v: i64) -> Option<Tag> {
    match v {
        -3 => None,
        -1 => Some(Tag::Busy),
        s if s >= 0 => Some(Tag::State(s as u32)),
        _ => Some(Tag::Unknown),
    }
}

/// Blocks on the pipe on the probed CPU; answers each stamp with the time
/// it ran and, when inferring, the state its CPU slept in.
fn sleeper_thread(
    cpu: u32,
    fifo: bool,
    mut rx: std::io::PipeReader,
    mut tx: std::io::PipeWriter,
    mut usage: Option<Usage>,
) -> Result<(), ThreadError> {
    prepare(cpu, fifo)?;
    let mut b = [0u8; 8];
    loop {
        let before = usage.as_mut().and_then(Usage::read);
        if rx.read_exact(&mut b).is_err() {
            return Ok(());
        }
        let t = monotonic_ns();
        let tag = match (before, usage.as_mut()) {
            (Some(b), Some(u)) => u.read().map(|a| tag::from_usage(&b, &a)),
            _ => None,
        };
        let mut reply = [0u8; 16];
        reply[..8].copy_from_slice(&t.to_ne_bytes());
        reply[8..].copy_from_slice(&encode(tag).to_ne_bytes());
        if tx.write_all(&reply).is_err() {
            return Ok(());
        }
    }
}

/// On a housekeeping CPU: after a random gap, stamps the time and wakes
/// the sleeper; the reply gives the one-way and the round trip.
fn waker_thread(
    hk: u32,
    cpu: u32,
    fifo: bool,
    end: u64,
    mut tx: std::io::PipeWriter,
    mut rx: std::io::PipeReader,
    stop: &Stop,
) -> Result<Vec<Wake>, ThreadError> {
    prepare(hk, fifo)?;
    let span = end.saturating_sub(monotonic_ns());
    let mut out = Vec::with_capacity((span / 1_000_000) as usize * 2 + 16);
    let mut rng = fastrand::Rng::new();
    loop {
        let at = monotonic_ns() + rng.u64(0..MAX_GAP_NS);
        if at > end || stop.is_stopped() {
            break;
        }
        probe_os::sleep_until(at);
        let t0 = monotonic_ns();
        tx.write_all(&t0.to_ne_bytes())
            .map_err(|source| ThreadError::PipeTo { cpu, source })?;
        let mut reply = [0u8; 16];
        rx.read_exact(&mut reply)
            .map_err(|source| ThreadError::PipeFrom { cpu, source })?;
        let t2 = monotonic_ns();
        let t1 = u64::from_ne_bytes(reply[..8].try_into().expect("8 bytes"));
        let tag = decode(i64::from_ne_bytes(reply[8..].try_into().expect("8 bytes")));
        out.push(Wake {
            cpu,
            kind: Kind::Remote,
            start: t0,
            end: t1.max(t0),
            tag,
        });
        out.push(Wake {
            cpu,
            kind: Kind::RoundTrip,
            start: t0,
            end: t2,
            tag,
        });
    }
    Ok(out)
}

/// Runs `work` threads to their end while reading the idle rings every
/// 100 ms; returns their wake-ups and the errors they gave.
fn run_phase<'s, F>(
    scope: &'s std::thread::Scope<'s, '_>,
    spawn: F,
    trace: &mut Option<IdleTrace>,
    events: &mut BTreeMap<u32, Vec<IdleEvent>>,
    stop: &Stop,
) -> (Vec<Wake>, Vec<ThreadError>)
where
    F: FnOnce(
        &'s std::thread::Scope<'s, '_>,
    ) -> Vec<std::thread::ScopedJoinHandle<'s, Result<Vec<Wake>, ThreadError>>>,
{
    let handles = spawn(scope);
    while handles.iter().any(|h| !h.is_finished()) {
        stop.sleep(Duration::from_millis(100));
        if let Some(t) = trace.as_mut() {
            t.drain(events);
        }
    }
    let mut wakes = Vec::new();
    let mut errors = Vec::new();
    for h in handles {
        match h.join() {
            Ok(Ok(w)) => wakes.extend(w),
            Ok(Err(e)) => errors.push(e),
            Err(_) => errors.push(ThreadError::Panicked),
        }
    }
    (wakes, errors)
}

/// Starts a probe thread under the probe's name, by which the dashboard
/// and `run` know its wake-ups from noise (the child a context-switch
/// measurement forks inherits it).
fn named<'s, 'e, T, F>(
    s: &'s std::thread::Scope<'s, 'e>,
    f: F,
) -> std::thread::ScopedJoinHandle<'s, T>
where
    F: FnOnce() -> T + Send + 's,
    T: Send + 's,
{
    std::thread::Builder::new()
        .name(super::running::THREAD_NAME.into())
        .spawn_scoped(s, f)
        // as `Scope::spawn` does: a thread that cannot start is fatal
        .expect("cannot start a probe thread")
}

fn round(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

fn ctx_of(cpu: u32, hk: Option<u32>, fifo: bool, rounds: u32) -> Result<CtxRow, ThreadError> {
    let rounds = rounds.max(1);
    // each cross-CPU round trip wakes a CPU that may have gone idle: ten
    // times as long, so a tenth as many
    let cross_rounds = (rounds / 10).max(1);
    let (rt, pipe) = std::thread::scope(|s| {
        named(s, || -> Result<(u64, u64), ThreadError> {
            prepare(cpu, fifo)?;
            let pipe = probe_os::pipe_self(rounds).map_err(ThreadError::PingPong)?;
            let rt = probe_os::pipe_ping_pong(cpu, rounds).map_err(ThreadError::PingPong)?;
            Ok((rt, pipe))
        })
        .join()
        .unwrap_or(Err(ThreadError::PingPongPanicked))
    })?;
    let cross = hk.and_then(|hk| {
        std::thread::scope(|s| {
            named(s, || -> Option<u64> {
                prepare(hk, fifo).ok()?;
                probe_os::pipe_ping_pong(cpu, cross_rounds).ok()
            })
            .join()
            .ok()
            .flatten()
        })
    });
    let per = |ns: u64, n: u32| ns as f64 / f64::from(n) / 1000.0;
    let (rt_us, pipe_us) = (per(rt, rounds), per(pipe, rounds));
    Ok(CtxRow {
        cpu,
        rounds,
        one_cpu_round_trip_us: round(rt_us),
        pipe_us: round(pipe_us),
        switch_us: round((rt_us - 2.0 * pipe_us) / 2.0),
        cross_cpu: cross.and(hk),
        cross_rounds,
        cross_cpu_round_trip_us: cross.map(|ns| round(per(ns, cross_rounds))),
    })
}

/// The idle states of the probed CPUs, and what disables or limits them.
fn read_states(opts: &Opts, cond: &mut Conditions) -> BTreeMap<u32, Vec<StateDecl>> {
    let mut fs = Fs::new(opts.roots.clone());
    let mut out = BTreeMap::new();
    for &cpu in &opts.cpus {
        let states = cpuidle::read_states(&mut fs, cpu).unwrap_or_default();
        for s in &states {
            if s.disabled == Some(true) {
                cond.disabled_states
                    .push(format!("CPU {cpu}: {}", s.name.as_str()));
            }
        }
        let rel = format!("{CPU_DIR}/cpu{cpu}/power/pm_qos_resume_latency_us");
        if let Ok(v) = fs.read_trimmed(Base::Sys, &rel)
            && v != "0"
        {
            cond.notes.push(format!(
                "CPU {cpu}: pm_qos_resume_latency_us is {v}: idle states with a longer exit \
                 latency are not used there"
            ));
        }
        out.insert(
            cpu,
            states
                .iter()
                .map(|s| StateDecl {
                    name: s.name.as_str().to_string(),
                    latency_us: s.latency_us,
                })
                .collect(),
        );
    }
    out
}

/// Measures. Never fails as a whole: what could not be done is said in
/// the conditions' notes.
pub fn run(opts: &Opts) -> ProbeReport {
    let mut cond = Conditions {
        housekeeping: opts.housekeeping.clone(),
        ..Conditions::default()
    };
    if let Err(e) = probe_os::lock_memory() {
        cond.notes.push(format!(
            "memory not locked ({e}): a page fault in a probe thread counts as latency"
        ));
    }
    let states = read_states(opts, &mut cond);
    match probe_os::cpu_dma_latency(&opts.roots.dev) {
        Ok(v) => {
            cond.cpu_dma_latency_us = Some(v);
            if v < probe_os::NO_LATENCY_LIMIT_US {
                cond.notes.push(format!(
                    "/dev/cpu_dma_latency is held at {v} µs: idle states with a longer exit \
                     latency are not used while its holder keeps it open"
                ));
            }
        }
        Err(e) => cond.notes.push(format!(
            "cannot read {}: {e}: whether a CPU latency limit is held is unknown",
            opts.roots.dev.join("cpu_dma_latency").display()
        )),
    }
    // whether real-time priority is allowed, asked once on a throwaway thread
    let fifo_err = std::thread::spawn(|| probe_os::set_fifo(FIFO_PRIO))
        .join()
        .unwrap_or_else(|_| Err(std::io::Error::other("panicked")));
    cond.fifo = fifo_err.is_ok();
    cond.policy = match &fifo_err {
        Ok(()) => format!("SCHED_FIFO {FIFO_PRIO}"),
        Err(e) => {
            cond.notes.push(format!(
                "SCHED_FIFO refused ({e}): the probe ran SCHED_OTHER, so a wake-up also waits \
                 for other tasks on its CPU; run as root or with CAP_SYS_NICE (or a raised \
                 `ulimit -r`) for wake-up latency alone"
            ));
            "SCHED_OTHER".into()
        }
    };
    let fifo = cond.fifo;
    let mut trace = None;
    if opts.kinds.timer || opts.kinds.remote {
        if opts.no_trace {
            cond.notes.push(
                "tracing not asked for (--no-trace): states inferred from usage counters".into(),
            );
        } else {
            match IdleTrace::open(&opts.roots.sysfs, &opts.cpus) {
                Ok(t) => trace = Some(t),
                Err(e) => cond.notes.push(format!(
                    "power:cpu_idle cannot be traced ({e}); each wake-up's state is inferred \
                     from the cpuidle usage counters read around it"
                )),
            }
        }
        cond.tagged_by = Some(if trace.is_some() {
            TagMethod::Tracepoint
        } else {
            TagMethod::Inferred
        });
    }
    let inferring = trace.is_none();
    // the counters are read around every wake-up, traced or not: a kernel
    // may not hand perf every idle entry, and the counters show the ones
    // the trace missed
    let usage = |cpu: u32| {
        let n = states.get(&cpu).map_or(0, Vec::len);
        (n > 0).then(|| Usage::open(&opts.roots, cpu, n))
    };
    let phases = u32::from(opts.kinds.timer) + u32::from(opts.kinds.remote);
    let share = opts.duration / phases.max(1);
    let mut events: BTreeMap<u32, Vec<IdleEvent>> = BTreeMap::new();
    let mut wakes = Vec::new();
    std::thread::scope(|s| {
        if opts.kinds.timer {
            let end = monotonic_ns() + share.as_nanos() as u64;
            let interval = opts.timer_interval.map(|d| d.as_nanos() as u64);
            let (w, errs) = run_phase(
                s,
                |s| {
                    opts.cpus
                        .iter()
                        .map(|&cpu| {
                            let u = usage(cpu);
                            named(s, move || {
                                timer_thread(cpu, fifo, end, interval, u, &opts.stop)
                            })
                        })
                        .collect()
                },
                &mut trace,
                &mut events,
                &opts.stop,
            );
            wakes.extend(w);
            cond.notes
                .extend(errs.into_iter().map(|e| format!("timer: {e}")));
        }
        if opts.kinds.remote {
            let end = monotonic_ns() + share.as_nanos() as u64;
            let hk = &opts.housekeeping;
            let (w, errs) = run_phase(
                s,
                |s| {
                    let mut hs = Vec::new();
                    for (i, &cpu) in opts.cpus.iter().enumerate() {
                        let (Ok((r1, w1)), Ok((r2, w2))) = (std::io::pipe(), std::io::pipe())
                        else {
                            continue;
                        };
                        let u = usage(cpu);
                        named(s, move || {
                            let _ = sleeper_thread(cpu, fifo, r1, w2, u);
                        });
                        let h = hk[i % hk.len()];
                        hs.push(named(s, move || {
                            waker_thread(h, cpu, fifo, end, w1, r2, &opts.stop)
                        }));
                    }
                    hs
                },
                &mut trace,
                &mut events,
                &opts.stop,
            );
            wakes.extend(w);
            cond.notes
                .extend(errs.into_iter().map(|e| format!("remote: {e}")));
        }
    });
    if let Some(t) = trace.as_mut() {
        t.drain(&mut events);
        cond.lost_events = t.lost();
        if t.lost() > 0 {
            cond.notes.push(format!(
                "{} idle events were lost (ring full): wake-ups around them are tagged unknown",
                t.lost()
            ));
        }
    }
    for list in events.values_mut() {
        list.sort_by_key(|e| e.time);
    }
    let mut lat = Latencies::default();
    let (mut from_idle, mut missed) = (0u64, 0u64);
    for w in &wakes {
        let (tag, by) = if inferring {
            (w.tag.unwrap_or(Tag::Unknown), TagMethod::Inferred)
        } else {
            let traced = events
                .get(&w.cpu)
                .map_or(Tag::Busy, |ev| tag::from_events(ev, w.start, w.end));
            tag::combine(traced, w.tag)
        };
        if w.kind != Kind::RoundTrip && matches!(tag, Tag::State(_)) {
            from_idle += 1;
            missed += u64::from(!inferring && by == TagMethod::Inferred);
        }
        lat.add(w.cpu, w.kind, tag, by, w.end.saturating_sub(w.start));
    }
    if missed > 0 {
        cond.notes.push(format!(
            "the power:cpu_idle tracepoint missed {missed} of {from_idle} wake-ups from idle that \
             the cpuidle usage counters saw (this kernel does not hand perf every idle entry): \
             those are tagged from the counters, in rows marked inferred"
        ));
    }
    let mut ctx = Vec::new();
    if opts.kinds.ctx {
        for &cpu in &opts.cpus {
            if opts.stop.is_stopped() {
                cond.notes.push(format!(
                    "context switch on CPU {cpu}: not measured (stopped)"
                ));
                continue;
            }
            match ctx_of(
                cpu,
                opts.housekeeping.first().copied(),
                fifo,
                opts.ctx_rounds,
            ) {
                Ok(r) => ctx.push(r),
                Err(e) => cond.notes.push(format!("context switch on CPU {cpu}: {e}")),
            }
        }
    }
    ProbeReport {
        format: super::FORMAT.into(),
        noisetop_version: env!("CARGO_PKG_VERSION").into(),
        cpus: opts.cpus.clone(),
        duration_s: opts.duration.as_secs_f64(),
        timer_interval_us: opts.timer_interval.map(|d| d.as_secs_f64() * 1e6),
        rows: lat.rows(&states),
        conditions: cond,
        ctx,
    }
}
