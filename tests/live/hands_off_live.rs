//! Hands-off, checked by the kernel: while noisetop watches CPU 1 (batch,
//! `run`, the dashboard; traced and `--no-trace`; CPU 1 idle and busy), the
//! `ipi:ipi_send_cpu` / `ipi:ipi_send_cpumask` tracepoints, recorded in a
//! tracefs instance of this test, show no IPI sent by any noisetop thread to
//! CPU 1 between noisetop's first and last sample (an IPI sent by a hardirq
//! or softirq that happened to run on noisetop's time is printed, not
//! counted against it; so is the wake-up of another task there, by a
//! reschedule or the scheduler's wake list, named with why it is not
//! noisetop's own: on a CPU 1 others keep busy, every wake-up of a task
//! that last ran there costs one). Opening and closing its
//! perf events (before the first sample, after the last) are IPIs too: they
//! are counted and printed, not asserted. Every thread of noisetop stays
//! off CPU 1 (`Cpus_allowed_list`), and its own tracer never sees noisetop
//! on CPU 1.
//!
//! Root only (tracefs instances); mounts tracefs at /sys/kernel/tracing when
//! absent. The windows add up to more than 20 s of watching. Everything of
//! the test itself runs on CPU 0, so that nothing of it waits on CPU 1 for
//! noisetop's output.

use crate::tmux;
use crate::wakeups;
use wakeups::{Waking, parse_waking, woken};

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const WATCHED: u32 = 1;
const BIN: &str = env!("CARGO_BIN_EXE_noisetop");

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
}

fn mono_s() -> f64 {
    noisetop::os::sys::monotonic_ns() as f64 / 1e9
}

/// One IPI send as the kernel printed it.
#[derive(Debug, Clone, PartialEq)]
struct Ipi {
    tgid: u32,
    tid: u32,
    comm: String,
    time_s: f64,
    targets: Vec<u32>,
    callsite: String,
    /// A function-call IPI (a callback to run there), not a reschedule.
    call: bool,
    /// Sent from a hardirq or softirq that interrupted the task (the
    /// flags' third letter: `h`, `s`, `H`), not by the task's own code.
    in_irq: bool,
}

/// The CPUs of a cpumask as tracefs prints it: hex words, most significant
/// first, comma separated (`00000000,00000003`).
fn hex_mask(s: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for (i, d) in s.chars().rev().filter(|c| *c != ',').enumerate() {
        let v = d.to_digit(16).unwrap_or(0);
        for b in 0..4 {
            if v & (1 << b) != 0 {
                out.push(i as u32 * 4 + b);
            }
        }
    }
    out.sort_unstable();
    out
}

/// Parses one line of a tracefs `trace` file with `record-tgid` on:
/// `  noisetop-16193   (  16193) [000] d..2.  1208.496918: ipi_send_cpu: cpu=1 callsite=generic_exec_single+0x36 callback=...`.
fn parse_line(line: &str) -> Option<Ipi> {
    let (head, rest) = line.split_once(") [")?;
    let (task, tgid) = head.rsplit_once('(')?;
    let (comm, tid) = task.trim().rsplit_once('-')?;
    let (_, rest) = rest.split_once("] ")?;
    let mut words = rest.split_whitespace();
    let flags = words.next()?;
    let in_irq = matches!(flags.chars().nth(2), Some('h' | 's' | 'H'));
    let time_s: f64 = words.next()?.trim_end_matches(':').parse().ok()?;
    let event = words.next()?.trim_end_matches(':');
    let mut targets = Vec::new();
    let mut callsite = String::new();
    let mut call = false;
    for w in words {
        if let Some(c) = w.strip_prefix("cpu=") {
            targets.push(c.parse().ok()?);
        } else if let Some(m) = w.strip_prefix("cpumask=") {
            targets = hex_mask(m);
        } else if let Some(c) = w.strip_prefix("callsite=") {
            callsite = c.to_string();
        } else if let Some(c) = w.strip_prefix("callback=") {
            call = c != "0x0" && c != "0";
        }
    }
    if event != "ipi_send_cpu" && event != "ipi_send_cpumask" {
        return None;
    }
    Some(Ipi {
        tgid: tgid.trim().parse().ok()?,
        tid: tid.parse().ok()?,
        comm: comm.to_string(),
        time_s,
        targets,
        callsite,
        call,
        in_irq,
    })
}

/// A tracefs instance of this test recording IPI sends (and, where the
/// kernel has them, `irq_work` and local timer entries), removed on drop.
struct IpiTrace {
    dir: PathBuf,
}

fn write(p: &Path, v: &str) {
    std::fs::write(p, v).unwrap_or_else(|e| panic!("write {v:?} to {}: {e}", p.display()));
}

impl IpiTrace {
    fn start() -> Option<IpiTrace> {
        let root = Path::new("/sys/kernel/tracing");
        if !root.join("events").is_dir() {
            let _ = Command::new("mount")
                .args(["-t", "tracefs", "nodev", "/sys/kernel/tracing"])
                .status();
        }
        if !root.join("events/ipi/ipi_send_cpu").is_dir() {
            eprintln!("no ipi:ipi_send_cpu tracepoint (Linux 6.6+) or no tracefs: skipped");
            return None;
        }
        let dir = root.join(format!("instances/noisetop-ipi-{}", std::process::id()));
        std::fs::create_dir(&dir).expect("a tracefs instance");
        let t = IpiTrace { dir };
        write(&t.dir.join("trace_clock"), "mono");
        write(&t.dir.join("options/record-tgid"), "1");
        write(&t.dir.join("buffer_size_kb"), "16384");
        // only what concerns the watched CPU, so that 35 s of a busy
        // machine fit the buffer: IPI sends are recorded on the sender's
        // CPU and filtered when read
        let only = format!("CPU == {WATCHED}");
        let woken = format!("target_cpu == {WATCHED}");
        for (ev, filter) in [
            ("sched/sched_wakeup", Some(woken.as_str())),
            // written by the waker, where a wake-list wake-up's
            // sched_wakeup is written on the woken task's CPU
            ("sched/sched_waking", Some(woken.as_str())),
            ("ipi/ipi_send_cpu", None),
            ("ipi/ipi_send_cpumask", None),
            ("irq_vectors/irq_work_entry", Some(only.as_str())),
            ("irq_vectors/local_timer_entry", Some(only.as_str())),
        ] {
            let dir = t.dir.join("events").join(ev);
            if dir.join("enable").exists() {
                if let Some(f) = filter {
                    write(&dir.join("filter"), f);
                }
                write(&dir.join("enable"), "1");
            }
        }
        write(&t.dir.join("tracing_on"), "1");
        Some(t)
    }

    /// Stops recording and returns the IPIs sent, the wake-ups onto the
    /// watched CPU, and the `irq_work` and timer entries on the watched CPU
    /// as `(time, kind)`.
    fn finish(&self) -> (Vec<Ipi>, Vec<Waking>, Vec<(f64, String)>) {
        write(&self.dir.join("tracing_on"), "0");
        let text = std::fs::read_to_string(self.dir.join("trace")).unwrap();
        assert!(
            !text.contains("LOST") && !text.contains("#### CPU"),
            "the trace buffer overflowed"
        );
        let mut entries = Vec::new();
        for l in text.lines() {
            for kind in ["irq_work_entry", "local_timer_entry"] {
                if l.contains(&format!(" {kind}:"))
                    && l.contains(&format!("[{WATCHED:03}]"))
                    && let Some(t) = l
                        .split_whitespace()
                        .find(|w| w.ends_with(':') && w.contains('.'))
                        .and_then(|w| w.trim_end_matches(':').parse().ok())
                {
                    entries.push((t, kind.to_string()));
                }
            }
        }
        (
            text.lines().filter_map(parse_line).collect(),
            text.lines()
                .filter_map(|l| parse_waking(l, WATCHED))
                .collect(),
            entries,
        )
    }
}

impl Drop for IpiTrace {
    fn drop(&mut self) {
        let _ = std::fs::write(self.dir.join("tracing_on"), "0");
        let _ = std::fs::write(self.dir.join("events/enable"), "0");
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// What one mode showed.
struct Window {
    mode: &'static str,
    pid: u32,
    /// noisetop's threads while it watched.
    tids: Vec<u32>,
    from_s: f64,
    to_s: f64,
}

/// A busy loop on the watched CPU, killed on drop.
struct Busy(Child);

impl Busy {
    fn start() -> Busy {
        Busy(
            Command::new("taskset")
                .args([
                    "-c",
                    &WATCHED.to_string(),
                    "sh",
                    "-c",
                    "while :; do :; done",
                ])
                .spawn()
                .expect("taskset runs"),
        )
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Every thread of `pid` is kept off the watched CPU; returns their ids.
fn check_affinity(pid: u32, mode: &str) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut seen = 0;
    let mut tids = Vec::new();
    for t in tasks.flatten() {
        let Ok(status) = std::fs::read_to_string(t.path().join("status")) else {
            continue;
        };
        let list = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .expect("status has Cpus_allowed_list")
            .trim();
        let cpus = noisetop::base::cpulist::parse(list).unwrap();
        assert!(
            !cpus.contains(&WATCHED),
            "{mode}: thread {} of noisetop may run on CPU {WATCHED}: {list}",
            t.file_name().display()
        );
        seen += 1;
        tids.extend(t.file_name().to_str().and_then(|n| n.parse::<u32>().ok()));
    }
    assert!(seen > 0, "{mode}: no thread of noisetop found");
    tids
}

/// `--batch --watch 1` for `count` intervals; the window runs from the
/// first interval printed to the last.
fn batch(mode: &'static str, extra: &[&str], count: u32) -> Window {
    let mut child = Command::new(BIN)
        .args(["--batch", "--watch", "1", "--count", &count.to_string()])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = BufReader::new(child.stdout.take().unwrap());
    let (mut first, mut seen) = (None, Vec::new());
    let mut text = String::new();
    let mut tids = Vec::new();
    for line in out.lines() {
        let line = line.unwrap();
        if line.starts_with("# t=") {
            let now = mono_s();
            if first.is_none() {
                tids = check_affinity(pid, mode);
            }
            first.get_or_insert(now);
            seen.push(now);
        }
        text.push_str(&line);
        text.push('\n');
    }
    assert!(child.wait().unwrap().success(), "{mode}: noisetop failed");
    // the tracer's records: noisetop never ran on the CPU it watches
    assert!(
        !text.contains(&format!("noisetop[{pid}]")),
        "{mode}: noisetop was seen on CPU {WATCHED}:\n{text}"
    );
    assert!(
        text.contains("# IPIs to watched CPU 1: "),
        "{mode}: noisetop says what it sent:\n{text}"
    );
    // up to the next-to-last interval read: the last may be read late,
    // when noisetop already closes its events (a second later at least)
    assert!(seen.len() >= 3, "{mode}: intervals printed: {}", seen.len());
    Window {
        mode,
        pid,
        tids,
        from_s: first.expect("an interval printed"),
        to_s: seen[seen.len() - 2],
    }
}

/// `run --cpus 1 -- sh -c SCRIPT`; the window is `from..to` seconds after
/// the start, inside the command's run and after noisetop opened its events.
fn run(mode: &'static str, extra: &[&str], script: &str, from: f64, to: f64) -> Window {
    let start = mono_s();
    let mut child = Command::new(BIN)
        .args(["run", "--cpus", "1"])
        .args(extra)
        .args(["--", "sh", "-c", script])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    std::thread::sleep(Duration::from_secs_f64(from));
    let tids = check_affinity(pid, mode);
    let mut text = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut text).unwrap();
    assert!(child.wait().unwrap().success(), "{mode}: noisetop failed");
    assert!(
        text.contains("noisetop itself: IPIs to watched CPU 1: "),
        "{mode}: the report says what noisetop sent:\n{text}"
    );
    assert!(
        !text.contains(&format!("noisetop[{pid}]")),
        "{mode}: noisetop was seen on CPU {WATCHED}:\n{text}"
    );
    Window {
        mode,
        pid,
        tids,
        from_s: start + from,
        to_s: start + to,
    }
}

/// The dashboard in tmux, watching CPU 1, for `secs` once it shows its
/// first sample.
fn dashboard(secs: u64) -> Option<Window> {
    // the terminal is the user's and stays off the benchmark CPU, as the
    // rest of a quiet setup does: a tmux server that last ran on CPU 1 is
    // woken there by every frame the dashboard writes (ttwu_queue_wakelist),
    // which is its placement's cost, not noisetop's. tmux inherits the
    // affinity of the thread that starts it.
    noisetop::os::sys::pin_to(&[0]).expect("CPU 0 is online");
    // and so are unbound kworkers (the pty's flush work after each frame),
    // as docs/hands-off.md advises for an isolated setup; restored on drop
    let _wq = UnboundOnCpu0::set();
    let t = tmux::Tmux::start("handsoff", &format!("{BIN} --watch 1"))?;
    t.wait_for(&["IPI to watched"]);
    let pid: u32 =
        String::from_utf8_lossy(&t.tmux(&["display", "-p", "-t", "t", "#{pane_pid}"]).stdout)
            .trim()
            .parse()
            .unwrap();
    // a sample or two after the first: setup is over
    std::thread::sleep(Duration::from_millis(1500));
    let tids = check_affinity(pid, "dashboard");
    let from_s = mono_s();
    std::thread::sleep(Duration::from_secs(secs));
    let to_s = mono_s();
    let screen = t.screen();
    assert!(
        screen.contains(" IPI to watched"),
        "the footer shows the IPIs sent:\n{screen}"
    );
    t.keys(&["q"]);
    std::thread::sleep(Duration::from_millis(500));
    Some(Window {
        mode: "dashboard, traced, CPU 1 idle",
        pid,
        tids,
        from_s,
        to_s,
    })
}

#[test]
fn parses_the_kernels_ipi_lines() {
    let _turn = crate::turn::take();
    let l = "        noisetop-16193   (  16193) [000] d..2.  1208.496918: ipi_send_cpu: cpu=1 callsite=generic_exec_single+0x36 callback=generic_smp_call_function_single_interrupt+0x0";
    assert_eq!(
        parse_line(l),
        Some(Ipi {
            tgid: 16193,
            tid: 16193,
            comm: "noisetop".into(),
            time_s: 1_208.496_918,
            targets: vec![1],
            callsite: "generic_exec_single+0x36".into(),
            call: true,
            in_irq: false,
        })
    );
    let l = "   kworker/u8:2-3-77      (     77) [001] d..1. 55.000001: ipi_send_cpumask: cpumask=00000000,00000006 callsite=on_each_cpu_cond_mask+0x20 callback=0x0";
    let ipi = parse_line(l).unwrap();
    assert_eq!(
        (
            ipi.comm.as_str(),
            ipi.tid,
            ipi.tgid,
            ipi.targets,
            ipi.call,
            ipi.in_irq
        ),
        ("kworker/u8:2-3", 77, 77, vec![1, 2], false, false)
    );
    // an RCU softirq that ran on noisetop's time woke a kthread on CPU 1
    let l = "        noisetop-26310   (  26310) [000] d.s4.  2198.608042: ipi_send_cpu: cpu=1 callsite=wakeup_preempt+0x92/0xa0 callback=0x0";
    assert!(parse_line(l).unwrap().in_irq);
    let l = "        noisetop-9488    (   9488) [000] d..3.  2198.604476: sched_wakeup: comm=kworker/u8:1 pid=21 prio=120 target_cpu=001";
    let w = parse_waking(l, WATCHED).unwrap();
    assert_eq!(
        w,
        Waking {
            waker_tid: 9488,
            time_s: 2_198.604_476,
            comm: "kworker/u8:1".into(),
            pid: 21,
        }
    );
    assert_eq!(
        woken(9488, 2_198.604_48, std::slice::from_ref(&w)),
        Some(&w)
    );
    assert_eq!(
        parse_waking(&l.replace("target_cpu=001", "target_cpu=000"), WATCHED),
        None
    );
    // the scheduler's wake list: a function-call IPI whose only work is
    // the wake-up of the task it names
    let l = "        noisetop-9490    (   9488) [000] d..2.  2198.7: ipi_send_cpu: cpu=1 callsite=ttwu_queue_wakelist+0x1b3/0x220 callback=generic_smp_call_function_single_interrupt+0x0";
    let ipi = parse_line(l).unwrap();
    assert!(ipi.call && wakeups::is_wake_up(ipi.call, &ipi.callsite));
    assert_eq!(hex_mask("80000000,00000001"), vec![0, 63]);
    assert_eq!(parse_line("# tracer: nop"), None);
}

#[test]
fn noisetop_sends_no_ipi_to_a_watched_cpu() {
    let _turn = crate::turn::take();
    if !is_root() {
        eprintln!("not root: tracefs instances need root: skipped");
        return;
    }
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    if !noisetop::base::cpulist::parse(online.trim())
        .unwrap()
        .contains(&WATCHED)
    {
        eprintln!("CPU {WATCHED} is not online: skipped");
        return;
    }
    // the test, its recorder and tmux stay off the watched CPU
    noisetop::os::sys::pin_all(&[0]).unwrap();
    let Some(trace) = IpiTrace::start() else {
        return;
    };
    let mut windows = Vec::new();
    windows.push(batch("batch, traced, CPU 1 idle", &[], 7));
    {
        let _busy = Busy::start();
        windows.push(batch("batch, --no-trace, CPU 1 busy", &["--no-trace"], 7));
    }
    let busy = "sleep 1; end=$(($(date +%s) + 5)); while [ $(date +%s) -lt $end ]; do :; done";
    windows.push(run("run, traced, CPU 1 busy", &[], busy, 2.0, 5.0));
    windows.push(run(
        "run, --no-trace, CPU 1 idle",
        &["--no-trace"],
        "sleep 6",
        2.0,
        5.0,
    ));
    if let Some(w) = dashboard(5) {
        windows.push(w);
    }
    let (ipis, wakings, entries) = trace.finish();
    let mut watched_s = 0.0;
    let mut bad = Vec::new();
    for w in &windows {
        let mine: Vec<&Ipi> = ipis
            .iter()
            .filter(|i| i.tgid == w.pid && i.targets.contains(&WATCHED))
            .collect();
        let (inside, interrupted): (Vec<&&Ipi>, Vec<&&Ipi>) = mine
            .iter()
            .filter(|i| (w.from_s..=w.to_s).contains(&i.time_s))
            .partition(|i| !i.in_irq);
        let work: usize = entries
            .iter()
            .filter(|(t, k)| k == "irq_work_entry" && (w.from_s..=w.to_s).contains(t))
            .count();
        let timers: usize = entries
            .iter()
            .filter(|(t, k)| k == "local_timer_entry" && (w.from_s..=w.to_s).contains(t))
            .count();
        eprintln!(
            "{}: {:.1} s watched: {} IPIs from noisetop to CPU {WATCHED} inside, {} sent by \
             interrupts that ran on its time, {} outside (setup and teardown); CPU {WATCHED} \
             had {work} irq_work and {timers} local timer entries from anyone",
            w.mode,
            w.to_s - w.from_s,
            inside.len(),
            interrupted.len(),
            mine.len() - inside.len() - interrupted.len(),
        );
        watched_s += w.to_s - w.from_s;
        // Sent by noisetop's own code: no function call, no wake-up of
        // its own threads. An interrupt that ran on noisetop's time (an
        // RCU softirq waking its kthread there) is the machine's, and only
        // printed. So is the wake-up of another task there, a reschedule
        // or the scheduler's wake list (`wakeups::judge` says which and
        // why): the terminal's flush kworker after the dashboard draws, or
        // on a loaded CPU 1 any task that waited on noisetop and last ran
        // there; an isolated setup keeps such tasks on housekeeping CPUs.
        for i in &inside {
            let k = woken(i.tid, i.time_s, &wakings);
            match wakeups::judge(i.call, &i.callsite, k, &w.tids) {
                Ok(said) => eprintln!("  {said}"),
                Err(why) => bad.push(format!("{}: {why}: {i:?}", w.mode)),
            }
        }
        for i in &interrupted {
            eprintln!("  sent by an interrupt on noisetop's time: {}", i.callsite);
        }
    }
    assert!(
        bad.is_empty(),
        "noisetop sent IPIs to watched CPU {WATCHED}:\n{}",
        bad.join("\n")
    );
    assert!(
        watched_s >= 20.0 || windows.len() < 5,
        "the windows add up to {watched_s:.1} s"
    );
}

/// `/sys/devices/virtual/workqueue/cpumask` narrowed to CPU 0 for a test,
/// and put back as it was when dropped.
struct UnboundOnCpu0(Option<String>);

impl UnboundOnCpu0 {
    const PATH: &str = "/sys/devices/virtual/workqueue/cpumask";

    fn set() -> UnboundOnCpu0 {
        let was = std::fs::read_to_string(Self::PATH).ok();
        if was.is_some() && std::fs::write(Self::PATH, "1").is_err() {
            return UnboundOnCpu0(None);
        }
        UnboundOnCpu0(was)
    }
}

impl Drop for UnboundOnCpu0 {
    fn drop(&mut self) {
        if let Some(was) = &self.0 {
            let _ = std::fs::write(Self::PATH, was.trim());
        }
    }
}
