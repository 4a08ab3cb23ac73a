//! `noisetop probe` on the machine running the tests, beside its peers:
//! timer wake-ups against `cyclictest`, the context switch against `perf
//! bench sched pipe`, and wake-ups tagged by idle state with the deeper
//! state of CPU 1 disabled for the test (and restored, whatever happens)
//! and then kept out by a CPU latency limit of 0 µs held for one run.
//!
//! Needs root, at least 2 CPUs, and for the peers `cyclictest`, `perf` and
//! `chrt`; otherwise each test prints why and skips. The machine may be
//! loaded by other work: each peer comparison runs both tools on CPU 1
//! under the same conditions (cyclictest at the same time, perf bench just
//! after), up to three times, prints every attempt, and passes when one
//! agrees.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard, PoisonError};

use noisetop::probe::ProbeReport;
use noisetop::probe::stats::{from_buckets, new_histogram, percentiles};

const CPU: u32 = 1;

/// One probe at a time: each wants CPU 1 to itself.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

fn skip_reason(tools: &[&str]) -> Option<String> {
    if !is_root() {
        return Some("not root".into());
    }
    if std::thread::available_parallelism().map_or(1, usize::from) < 2 {
        return Some("fewer than 2 CPUs".into());
    }
    for t in tools {
        if Command::new("sh")
            .args(["-c", &format!("command -v {t}")])
            .output()
            .map_or(true, |o| !o.status.success())
        {
            return Some(format!("{t} is not installed (.ci/run installs it)"));
        }
    }
    None
}

fn probe(args: &[&str]) -> ProbeReport {
    let out = Command::new(env!("CARGO_BIN_EXE_noisetop"))
        .arg("probe")
        .args(["--cpus", &CPU.to_string(), "--json"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "noisetop probe {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// p50 and p99 (µs) of a cyclictest `-h` histogram: one line per µs
/// bucket, the overflows above the last counted at the reported maximum.
fn cyclictest_percentiles(text: &str) -> (f64, f64, u64) {
    let mut buckets: Vec<(u64, u64)> = Vec::new();
    let (mut overflow, mut max) = (0u64, 0u32);
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("# Histogram Overflows:") {
            overflow = v.trim().parse().unwrap_or(0);
        } else if let Some(v) = line.strip_prefix("# Max Latencies:") {
            max = v.trim().parse().unwrap_or(0);
        } else if !line.starts_with('#') {
            let f: Vec<&str> = line.split_whitespace().collect();
            if let [v, n] = f[..]
                && let (Ok(v), Ok(n)) = (v.parse::<u64>(), n.parse::<u64>())
            {
                buckets.push((v, n));
            }
        }
    }
    let total: u64 = buckets.iter().map(|b| b.1).sum::<u64>() + overflow;
    let at = |q: f64| {
        let want = (q * total as f64).ceil() as u64;
        let mut seen = 0;
        for &(v, n) in &buckets {
            seen += n;
            if seen >= want.max(1) {
                return v as f64;
            }
        }
        f64::from(max)
    };
    (at(0.5), at(0.99), total)
}

/// CPU `cpu`'s (busy, total) ticks from /proc/stat.
fn cpu_ticks(cpu: u32) -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/stat").unwrap();
    let name = format!("cpu{cpu} ");
    let f: Vec<u64> = text
        .lines()
        .find(|l| l.starts_with(&name))
        .unwrap()
        .split_whitespace()
        .skip(1)
        .filter_map(|v| v.parse().ok())
        .collect();
    // idle and iowait are not busy
    let total: u64 = f.iter().take(8).sum();
    let idle = f.get(3).copied().unwrap_or(0) + f.get(4).copied().unwrap_or(0);
    (total - idle, total)
}

/// The busy share of CPU time between two readings.
fn busy_share(a: (u64, u64), b: (u64, u64)) -> f64 {
    let total = b.1.saturating_sub(a.1);
    if total == 0 {
        return 0.0;
    }
    b.0.saturating_sub(a.0) as f64 / total as f64
}

fn agrees(ours: f64, peer: f64, rel: f64, abs: f64) -> bool {
    (ours - peer).abs() <= (rel * peer).max(abs)
}

#[test]
fn timer_wake_ups_agree_with_cyclictest() {
    let _turn = crate::turn::take();
    if let Some(why) = skip_reason(&["cyclictest"]) {
        println!("skipped: {why}");
        return;
    }
    let _g = serial();
    let mut report = Vec::new();
    let mut loaded_runs = 0;
    for attempt in 1..=3 {
        let busy0 = cpu_ticks(CPU);
        // both at once on CPU 1: on a loaded machine one tool's p99 moves
        // tenfold between consecutive runs with the load's bursts, and only
        // runs that overlap meet the same ones. The probe's grid of 997 µs
        // slides past cyclictest's 1000 µs one (3 µs a period), so the two
        // wake together for a few periods in every 333, never locked.
        let peer_run = Command::new("cyclictest")
            .args([
                "--default-system",
                "-a",
                &CPU.to_string(),
                "-t1",
                "-i",
                "1000",
            ])
            .args(["-l", "3000", "-m", "-q", "-p", "50", "-h", "20000"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let rep = probe(&[
            "--kinds",
            "timer",
            "--timer-interval",
            "997us",
            "--duration",
            "3s",
        ]);
        let out = peer_run.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            rep.conditions.fifo,
            "root gets SCHED_FIFO: {:?}",
            rep.conditions
        );
        let mut ours = new_histogram();
        for r in &rep.rows {
            ours.add(from_buckets(&r.histogram_ns)).unwrap();
        }
        let peer = String::from_utf8_lossy(&out.stdout).into_owned();
        let (c50, c99, n) = cyclictest_percentiles(&peer);
        let p = percentiles(&ours);
        let ok50 = agrees(p[0], c50, 0.25, 5.0);
        let ok99 = agrees(p[2], c99, 0.25, 5.0);
        report.push(format!(
            "attempt {attempt}: probe p50 {:.1} p99 {:.1} µs ({} wake-ups); cyclictest p50 {c50} \
             p99 {c99} µs ({n} wake-ups): p50 {}, p99 {}",
            p[0],
            p[2],
            ours.len(),
            if ok50 { "agree" } else { "differ" },
            if ok99 { "agree" } else { "differ" }
        ));
        println!("{}", report.last().unwrap());
        if ok50 && ok99 {
            return;
        }
        // others kept CPU 1 busy more than half the attempt (a CPU hog
        // beside the test): the two tools' tails then meet the hog's
        // preemption at different moments, so only their medians must
        // agree; an idle or lightly loaded CPU holds the p99 too
        let busy = busy_share(busy0, cpu_ticks(CPU));
        if busy > 0.5 {
            loaded_runs += 1;
            println!(
                "attempt {attempt}: CPU {CPU} was {:.0} % busy with other tasks",
                busy * 100.0
            );
            if ok50 && loaded_runs == 3 {
                println!(
                    "p99 not held: CPU {CPU} was loaded through every attempt; the medians agree"
                );
                return;
            }
        }
    }
    panic!(
        "no attempt agreed within 25 % or 5 µs:\n{}",
        report.join("\n")
    );
}

#[test]
fn cyclictest_histograms_give_exact_percentiles() {
    let _turn = crate::turn::take();
    let one = "# Histogram\n000001 000000\n000002 000050\n000003 000049\n# Total: 000000100\n\
               # Max Latencies: 00900\n# Histogram Overflows: 00001\n";
    assert_eq!(cyclictest_percentiles(one), (2.0, 3.0, 100));
    // the overflows lie above p99.5 here: counted at the maximum
    let over = one
        .replace("000003 000049", "000003 000039")
        .replace("00001\n", "00011\n");
    assert_eq!(cyclictest_percentiles(&over), (2.0, 900.0, 100));
}

#[test]
fn context_switch_agrees_with_perf_bench() {
    let _turn = crate::turn::take();
    if let Some(why) = skip_reason(&["perf", "chrt", "taskset"]) {
        println!("skipped: {why}");
        return;
    }
    let _g = serial();
    let mut report = Vec::new();
    let mut best = (f64::INFINITY, f64::INFINITY);
    for attempt in 1..=3 {
        let rep = probe(&["--kinds", "ctx"]);
        let ours = &rep.ctx[0];
        let rounds = ours.rounds.to_string();
        // the same conditions: pinned to one CPU, the probe's SCHED_FIFO 50
        let out = Command::new("chrt")
            .args(["-f", "50", "taskset", "-c", &CPU.to_string()])
            .args(["perf", "bench", "sched", "pipe", "-l", &rounds])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let peer: f64 = text
            .lines()
            .find_map(|l| l.trim().strip_suffix("usecs/op"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no usecs/op in perf bench's output: {text}"));
        let ok = agrees(ours.one_cpu_round_trip_us, peer, 0.20, 0.0);
        report.push(format!(
            "attempt {attempt}: probe round trip {:.3} µs (per switch {:.3} µs after the pipe's \
             {:.3} µs), perf bench sched pipe {peer:.3} µs/op: {}",
            ours.one_cpu_round_trip_us,
            ours.switch_us,
            ours.pipe_us,
            if ok { "agree" } else { "differ" }
        ));
        println!("{}", report.last().unwrap());
        if ok {
            return;
        }
        best.0 = best.0.min(ours.one_cpu_round_trip_us);
        best.1 = best.1.min(peer);
    }
    // a loaded VM slows either run by a third at times: the fastest of
    // each, the least disturbed, must still agree
    assert!(
        agrees(best.0, best.1, 0.20, 0.0),
        "no attempt agreed within 20 %, nor the fastest of each ({:.3} µs, {:.3} µs):\n{}",
        best.0,
        best.1,
        report.join("\n")
    );
}

/// Disables an idle state for the test's duration; dropping it (also on
/// a failed assertion) writes the old value back.
struct Disabled {
    path: PathBuf,
    old: String,
}

impl Disabled {
    fn new(path: &Path) -> std::io::Result<Disabled> {
        let old = std::fs::read_to_string(path)?;
        std::fs::write(path, "1")?;
        Ok(Disabled {
            path: path.to_path_buf(),
            old,
        })
    }
}

impl Drop for Disabled {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.path, self.old.trim());
    }
}

fn idle_p50(rep: &ProbeReport, index: u32) -> Option<(f64, u64)> {
    let mut h = new_histogram();
    for r in rep
        .rows
        .iter()
        .filter(|r| r.state_index == Some(index) && r.kind == noisetop::probe::Kind::Timer)
    {
        h.add(from_buckets(&r.histogram_ns)).unwrap();
    }
    (!h.is_empty()).then(|| (percentiles(&h)[0], h.len()))
}

/// Holds `/dev/cpu_dma_latency` at 0 µs while it lives: the kernel then
/// lets no CPU into an idle state with an exit latency (the haltpoll
/// governor picks POLL); closing the file ends the request.
struct LatencyHold(#[expect(dead_code, reason = "held open for its effect")] std::fs::File);

impl LatencyHold {
    fn new() -> std::io::Result<LatencyHold> {
        use std::io::Write as _;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/cpu_dma_latency")?;
        f.write_all(&0i32.to_ne_bytes())?;
        Ok(LatencyHold(f))
    }
}

fn usage(dir: &Path, state: u32) -> u64 {
    std::fs::read_to_string(dir.join(format!("state{state}/usage")))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

fn tagged(rep: &ProbeReport, index: u32) -> u64 {
    rep.rows
        .iter()
        .filter(|r| r.state_index == Some(index) && r.kind != noisetop::probe::Kind::RoundTrip)
        .map(|r| r.count)
        .sum()
}

fn show(how: &str, rep: &ProbeReport) {
    for r in &rep.rows {
        println!(
            "{how}: {} {} ({}) ×{} p50 {} µs",
            r.kind.name(),
            r.state,
            r.tagged_by.name(),
            r.count,
            r.p50_us
        );
    }
}

#[test]
fn with_the_deeper_state_disabled_every_wake_up_from_idle_is_shallow() {
    let _turn = crate::turn::take();
    if let Some(why) = skip_reason(&[]) {
        println!("skipped: {why}");
        return;
    }
    let dir = PathBuf::from(format!("/sys/devices/system/cpu/cpu{CPU}/cpuidle"));
    let deep = (1..10)
        .take_while(|k| dir.join(format!("state{k}")).is_dir())
        .last();
    let Some(deep) = deep else {
        println!("skipped: CPU {CPU} has fewer than two idle states");
        return;
    };
    let _g = serial();
    let args = ["--kinds", "timer,remote", "--duration", "2s"];
    let normal = probe(&args);
    show("normal", &normal);
    // the state disabled through sysfs on CPU 1 only
    let before = usage(&dir, deep);
    let disabled = {
        let _off = Disabled::new(&dir.join(format!("state{deep}/disable"))).unwrap();
        probe(&args)
    };
    let entered = usage(&dir, deep) - before;
    let restored = std::fs::read_to_string(dir.join(format!("state{deep}/disable"))).unwrap();
    assert_eq!(restored.trim(), "0", "state{deep} restored");
    show("state disabled", &disabled);
    assert!(
        disabled
            .conditions
            .disabled_states
            .iter()
            .any(|s| s.starts_with(&format!("CPU {CPU}: "))),
        "the disabled state is reported: {:?}",
        disabled.conditions
    );
    // the tags follow what the kernel did: none from the disabled state
    // unless the kernel entered it anyway (the haltpoll governor does not
    // read `disable`), and never more than it entered
    let deep_tags = tagged(&disabled, deep);
    if entered == 0 {
        assert_eq!(deep_tags, 0, "no wake-up from a state never entered");
    } else {
        println!(
            "the idle governor entered state{deep} {entered} times while it was disabled: \
             the kernel ignores `disable` here"
        );
        assert!(deep_tags <= entered, "{deep_tags} tags, {entered} entries");
    }
    // the deeper state kept out the way this governor obeys: a CPU latency
    // limit of 0 µs, held for the run, traced and then inferred
    let (traced, inferred, entered) = {
        let _hold = LatencyHold::new().unwrap();
        // a CPU that went to sleep just before the hold counts no entry
        // after this: the count starts once the limit is in force
        std::thread::sleep(std::time::Duration::from_millis(100));
        let before = usage(&dir, deep);
        let t = probe(&args);
        let i = probe(&[&args[..], &["--no-trace"]].concat());
        (t, i, usage(&dir, deep) - before)
    };
    if entered > 0 {
        println!("state{deep} entered {entered} times under a 0 µs latency limit");
    }
    for (how, rep) in [("traced", &traced), ("inferred", &inferred)] {
        show(&format!("latency held at 0, {how}"), rep);
        assert_eq!(
            rep.conditions.cpu_dma_latency_us,
            Some(0),
            "{how}: the hold is reported"
        );
        // every wake-up from idle is tagged with the shallow state, but for
        // as many as the kernel's own count says entered the deeper one
        let deep_tags = tagged(rep, deep);
        assert!(
            deep_tags <= entered,
            "{how}: {deep_tags} wake-ups tagged state{deep}, entered {entered} times"
        );
        for r in rep.rows.iter().filter(|r| r.state_index.is_some()) {
            assert!(
                r.state_index == Some(0) || (entered > 0 && r.state_index == Some(deep)),
                "{how}: only the shallow state: {r:?}"
            );
        }
    }
    assert_eq!(
        inferred.conditions.tagged_by,
        Some(noisetop::probe::TagMethod::Inferred)
    );
    // A CPU kept busy by other work rarely idles; the latencies are
    // compared when both runs woke from idle often enough for a median.
    // The two runs meet different load, so up to two more pairs are run
    // when the first does not show polling faster; every pair is printed.
    let mut pairs = vec![(normal, vec![traced, inferred])];
    let mut seen = Vec::new();
    for attempt in 1..=3 {
        if attempt > 1 {
            let n = probe(&args);
            let _hold = LatencyHold::new().unwrap();
            pairs.push((n, vec![probe(&args)]));
        }
        let (n, held) = pairs.last().unwrap();
        let mut poll = new_histogram();
        for r in held
            .iter()
            .flat_map(|x| &x.rows)
            .filter(|r| r.state_index == Some(0) && r.kind == noisetop::probe::Kind::Timer)
        {
            poll.add(from_buckets(&r.histogram_ns)).unwrap();
        }
        let poll = (!poll.is_empty()).then(|| (percentiles(&poll)[0], poll.len()));
        match (idle_p50(n, deep), poll) {
            (Some((deep_p50, n)), Some((poll_p50, m))) if n >= 30 && m >= 30 => {
                let line = format!(
                    "attempt {attempt}: timer p50 from state{deep}: {deep_p50} µs ({n}); from POLL: \
                     {poll_p50} µs ({m})"
                );
                println!("{line}");
                seen.push(line);
                if poll_p50 < deep_p50 {
                    return;
                }
            }
            (a, b) => println!(
                "attempt {attempt}: CPU {CPU} seldom idle under this load (state{deep}: {a:?}, \
                 POLL: {b:?}): p50s not compared"
            ),
        }
    }
    assert!(
        seen.is_empty(),
        "polling never woke faster than state{deep}:\n{}",
        seen.join("\n")
    );
}

#[test]
fn without_privileges_the_probe_still_runs_and_says_what_it_lacks() {
    let _turn = crate::turn::take();
    if let Some(why) = skip_reason(&["setpriv"]) {
        println!("skipped: {why}");
        return;
    }
    let _g = serial();
    let out = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
        ])
        .arg(env!("CARGO_BIN_EXE_noisetop"))
        .args(["probe", "--cpus", &CPU.to_string(), "--duration", "500ms"])
        .args(["--kinds", "timer,ctx"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{text}");
    assert!(text.contains("SCHED_FIFO refused ("), "{text}");
    assert!(text.contains("the probe ran SCHED_OTHER"), "{text}");
    assert!(
        text.contains("power:cpu_idle cannot be traced (")
            && text.contains("permission denied: run as root")
            && text.contains("inferred from the cpuidle usage counters"),
        "{text}"
    );
    assert!(
        text.contains("states inferred from cpuidle usage counters"),
        "{text}"
    );
    assert!(
        text.contains("   1  timer       "),
        "wake-ups measured: {text}"
    );
    assert!(text.contains("Context switch, µs"), "{text}");
}
