//! What tracepoint attribution costs the CPU it watches, and noisetop.
//!
//! usage: `trace_cost [idle|pingpong] [SECONDS]` (as root; default idle 60)
//!
//! Counts, on CPU 1, the IWI, CAL, RES and LOC interrupts (/proc/interrupts)
//! and the context switches (a per-CPU perf software counter, read once at
//! each end of a window) over SECONDS without tracing, then over SECONDS with
//! a `Tracer` on CPU 1 drained once a second from this process pinned to
//! CPU 0, and prints both as rates. It also prints this process's own CPU
//! time while tracing (/proc/self/schedstat), records decoded per second and
//! records lost. `pingpong` first starts two processes on CPU 1 that pass a
//! byte back and forth over pipes, paced to about 10 000 context switches
//! per second.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use noisetop::pipeline::tracer::Tracer;
use noisetop::sys::pin_to;
use perf_event::Builder;
use perf_event::events::Software;

const CPU: u32 = 1;
const LABELS: [&str; 4] = ["IWI", "CAL", "RES", "LOC"];

fn interrupts(cpu: u32) -> [u64; 4] {
    let text = std::fs::read_to_string("/proc/interrupts").unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    let col = header
        .iter()
        .position(|h| *h == format!("CPU{cpu}"))
        .unwrap();
    let mut out = [0; 4];
    for line in lines {
        let Some((label, rest)) = line.split_once(':') else {
            continue;
        };
        if let Some(i) = LABELS.iter().position(|l| *l == label.trim()) {
            out[i] = rest
                .split_whitespace()
                .nth(col)
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
        }
    }
    out
}

#[path = "../tests/common/schedstat.rs"]
mod schedstat;

fn own_cpu_ns() -> u64 {
    schedstat::run_ns("self")
}

struct Rates {
    irqs: [f64; 4],
    csw: f64,
    own_cpu: f64,
    records: f64,
    lost: u64,
}

fn window(seconds: u64, mut tracer: Option<&mut Tracer>) -> Rates {
    let mut csw = Builder::new(Software::CONTEXT_SWITCHES)
        .one_cpu(CPU as usize)
        .any_pid()
        .include_kernel()
        .build()
        .unwrap();
    csw.enable().unwrap();
    if let Some(t) = tracer.as_deref_mut() {
        let _ = t.drain();
    }
    let c0 = csw.read().unwrap();
    let i0 = interrupts(CPU);
    let own0 = own_cpu_ns();
    let start = Instant::now();
    let mut records = 0u64;
    let mut lost = 0;
    for s in 1..=seconds {
        let until = start + Duration::from_secs(s);
        std::thread::sleep(until.saturating_duration_since(Instant::now()));
        if let Some(t) = tracer.as_deref_mut() {
            let w = t.drain();
            lost += w.lost;
            records += w.cpus.iter().map(|c| c.records).sum::<u64>();
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let own1 = own_cpu_ns();
    let i1 = interrupts(CPU);
    let c1 = csw.read().unwrap();
    let mut irqs = [0.0; 4];
    for k in 0..4 {
        irqs[k] = (i1[k] - i0[k]) as f64 / secs;
    }
    Rates {
        irqs,
        csw: (c1 - c0) as f64 / secs,
        own_cpu: (own1 - own0) as f64 / 1e9 / secs,
        records: records as f64 / secs,
        lost,
    }
}

/// Two processes on CPU 1 passing a byte back and forth; the first paces
/// the round trips.
fn pingpong() -> (Child, Child) {
    let exe = std::env::current_exe().unwrap();
    let (r1, w1) = std::io::pipe().unwrap();
    let (r2, w2) = std::io::pipe().unwrap();
    pin_to(&[CPU]).unwrap();
    let a = Command::new(&exe)
        .arg("--child-ping")
        .stdin(Stdio::from(r2))
        .stdout(Stdio::from(w1))
        .spawn()
        .unwrap();
    let b = Command::new(&exe)
        .arg("--child-pong")
        .stdin(Stdio::from(r1))
        .stdout(Stdio::from(w2))
        .spawn()
        .unwrap();
    pin_to(&[0]).unwrap();
    (a, b)
}

fn child(ping: bool) {
    let mut input = std::io::stdin().lock();
    let mut output = std::io::stdout().lock();
    let mut byte = [0u8; 1];
    // A round trip is 2 switches between the two, and the pacing sleep
    // about 2 more (to idle and back): 2 500 rounds a second.
    let period = Duration::from_micros(400);
    let mut next = Instant::now();
    loop {
        if ping {
            if output
                .write_all(&byte)
                .and_then(|()| output.flush())
                .is_err()
            {
                return;
            }
            if input.read_exact(&mut byte).is_err() {
                return;
            }
            next += period;
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
        } else {
            if input.read_exact(&mut byte).is_err() {
                return;
            }
            if output
                .write_all(&byte)
                .and_then(|()| output.flush())
                .is_err()
            {
                return;
            }
        }
    }
}

fn print(name: &str, r: &Rates) {
    println!(
        "{name:<8} IWI/s {:>8.2}  CAL/s {:>8.2}  RES/s {:>8.2}  LOC/s {:>8.2}  CSW/s {:>9.1}  noisetop CPU {:>6.3} %  records/s {:>8.0}  lost {}",
        r.irqs[0],
        r.irqs[1],
        r.irqs[2],
        r.irqs[3],
        r.csw,
        r.own_cpu * 100.0,
        r.records,
        r.lost
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("--child-ping") => return child(true),
        Some("--child-pong") => return child(false),
        _ => {}
    }
    let mode = args.get(1).cloned().unwrap_or_else(|| "idle".into());
    let seconds: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(60);
    pin_to(&[0]).unwrap();
    let load = (mode == "pingpong").then(pingpong);
    if load.is_some() {
        std::thread::sleep(Duration::from_secs(1));
    }
    println!("mode {mode}, CPU {CPU} watched from CPU 0, {seconds} s per window");
    let without = window(seconds, None);
    print("without", &without);
    let mut tracer = match Tracer::open(Path::new("/sys"), &[CPU]) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("cannot trace: {e}");
            std::process::exit(1);
        }
    };
    for n in tracer.notes() {
        println!("note: {n}");
    }
    let with = window(seconds, Some(&mut tracer));
    print("with", &with);
    let mut diff = Rates {
        irqs: [0.0; 4],
        csw: with.csw - without.csw,
        own_cpu: with.own_cpu,
        records: with.records,
        lost: with.lost,
    };
    for k in 0..4 {
        diff.irqs[k] = with.irqs[k] - without.irqs[k];
    }
    print("added", &diff);
    if let Some((mut a, mut b)) = load {
        let _ = a.kill();
        let _ = b.kill();
        let _ = a.wait();
        let _ = b.wait();
    }
}
