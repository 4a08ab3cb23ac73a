//! `noisetop serve` end to end with a real Prometheus (Debian's package,
//! started here on loopback) scraping it and Debian's `node_exporter` (with
//! its interrupts collector) every second: the per-CPU series arrive, and
//! over the same window CPU 1's context switches agree with the kernel's
//! per-CPU `nr_switches`, its interrupts with `node_interrupts_total`, and
//! its time by mode with `node_cpu_seconds_total`. Every panel query of the
//! Grafana dashboard returns data (or the exporter says why it cannot; the
//! wake-up latency panel has a fixture probe's histograms to show), and
//! `promtool check metrics` finds nothing wrong with the exposition.
//!
//! Windows are aligned: each noisetop value is paired with the instant it
//! was read (`noisetop_sample_timestamp_seconds` of the same scrape), and
//! the peers' values are interpolated at those instants, so a loaded
//! machine's scheduling delays shift both sides alike.

use crate::serve_support;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use serve_support::{Kid, encode, free_port, get, serve_env, which};

/// Runs an instant or range-vector query; returns the result array.
fn query(port: u16, q: &str) -> Vec<Value> {
    let r = get(port, &format!("/api/v1/query?query={}", encode(q))).expect("prometheus answers");
    assert_eq!(r.status, 200, "{q}: {}", r.text());
    let v: Value = serde_json::from_slice(&r.body).expect("json");
    v["data"]["result"].as_array().cloned().unwrap_or_default()
}

/// The raw samples of one series over a range vector: (time, value).
fn samples(port: u16, q: &str) -> Vec<(f64, f64)> {
    let res = query(port, q);
    assert_eq!(res.len(), 1, "{q}: one series expected, got {res:?}");
    res[0]["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p[0].as_f64().unwrap(),
                p[1].as_str().unwrap().parse().unwrap(),
            )
        })
        .collect()
}

/// Linear interpolation of a step-sampled counter at time `t`.
fn at(series: &[(f64, f64)], t: f64) -> Option<f64> {
    let i = series.iter().position(|&(x, _)| x >= t)?;
    if i == 0 {
        return (series[0].0 - t < 1e-6).then_some(series[0].1);
    }
    let (t0, v0) = series[i - 1];
    let (t1, v1) = series[i];
    Some(v0 + (v1 - v0) * (t - t0) / (t1 - t0))
}

/// The rates of ours and of the peer over the same span: from the first
/// to the last of our readings that the peer's samples surround.
fn rates(ours: &[(f64, f64)], peer: &[(f64, f64)]) -> (f64, f64, f64) {
    let inside: Vec<(f64, f64, f64)> = ours
        .iter()
        .filter_map(|&(t, v)| Some((t, v, at(peer, t)?)))
        .collect();
    assert!(inside.len() >= 8, "too few aligned readings: {inside:?}");
    let (t1, a1, b1) = inside[0];
    let (t2, a2, b2) = inside[inside.len() - 1];
    ((a2 - a1) / (t2 - t1), (b2 - b1) / (t2 - t1), t2 - t1)
}

/// How far apart ours and the peer's growths are, the median over every
/// span of half the readings: a burst near one instant, where the peer's
/// value is interpolated between its scrapes, moves few of these spans.
fn median_off(ours: &[(f64, f64)], peer: &[(f64, f64)]) -> f64 {
    let inside: Vec<(f64, f64)> = ours
        .iter()
        .filter_map(|&(t, v)| Some((v, at(peer, t)?)))
        .collect();
    let k = inside.len() / 2;
    let mut offs: Vec<f64> = (0..inside.len() - k)
        .map(|i| {
            let (a, b) = (inside[i + k].0 - inside[i].0, inside[i + k].1 - inside[i].1);
            (a - b).abs() / b.max(1.0)
        })
        .collect();
    offs.sort_by(f64::total_cmp);
    offs[offs.len() / 2]
}

/// noisetop's values of a series with the instants they were read.
fn read_times(port: u16, series: &str, window: &str) -> Vec<(f64, f64)> {
    let vals = samples(port, &format!("{series}[{window}]"));
    let stamps = samples(
        port,
        &format!("noisetop_sample_timestamp_seconds[{window}]"),
    );
    let by_scrape: BTreeMap<i64, f64> = stamps
        .iter()
        .map(|&(t, v)| ((t * 1000.0) as i64, v))
        .collect();
    let mut out: Vec<(f64, f64)> = vals
        .iter()
        .filter_map(|&(t, v)| Some((*by_scrape.get(&((t * 1000.0) as i64))?, v)))
        .collect();
    // a reading scraped twice is one reading
    out.dedup_by(|a, b| a.0.to_bits() == b.0.to_bits());
    out
}

fn nr_switches() -> Option<BTreeMap<u32, u64>> {
    let text = std::fs::read_to_string("/sys/kernel/debug/sched/debug").ok()?;
    let mut cpu = None;
    let mut out = BTreeMap::new();
    for l in text.lines() {
        if let Some(rest) = l.strip_prefix("cpu#") {
            cpu = rest
                .split(',')
                .next()
                .and_then(|c| c.trim().parse::<u32>().ok());
        } else if let (Some(c), Some(v)) = (cpu, l.trim().strip_prefix(".nr_switches")) {
            let v = v.trim_start_matches([' ', ':']).trim();
            out.insert(c, v.parse().ok()?);
        }
    }
    (!out.is_empty()).then_some(out)
}

fn now_s() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

#[test]
fn prometheus_scrapes_noisetop_and_node_exporter_and_they_agree() {
    let _turn = crate::turn::take();
    let (Some(prom), Some(node), Some(promtool)) = (
        which("prometheus"),
        which("prometheus-node-exporter"),
        which("promtool"),
    ) else {
        eprintln!(
            "prometheus, prometheus-node-exporter or promtool not installed: skipped (.ci/run installs them)"
        );
        return;
    };
    // the online CPUs, as /proc/stat lists them
    let cpus = std::fs::read_to_string("/proc/stat")
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .count();
    if cpus < 2 {
        eprintln!("one CPU: CPU 1 does not exist here, skipped");
        return;
    }
    // two spinners share CPU 1: one owns it, the other intrudes, and the
    // context switches between them give the counters something to count
    let spin = || {
        Kid(Command::new("taskset")
            .args(["-c", "1", "sh", "-c", "while :; do :; done"])
            .stdout(Stdio::null())
            .spawn()
            .expect("taskset"))
    };
    let _spinners = [spin(), spin()];
    // a probe's results in noisetop's state folder (a fixture with known
    // histograms), so the wake-up latency panel has a probe to show
    let state = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(state.path().join("noisetop")).unwrap();
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/probe/a.csv.json"
        ),
        state.path().join("noisetop/last-probe.json"),
    )
    .unwrap();
    let (_ours, port) = serve_env(
        &["--watch", "1", "--interval", "1s"],
        &[("XDG_STATE_HOME", state.path())],
    );
    let node_port = free_port();
    let _node = Kid(Command::new(&node)
        .args([
            &format!("--web.listen-address=127.0.0.1:{node_port}"),
            "--collector.disable-defaults",
            "--collector.cpu",
            "--collector.interrupts",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("node exporter starts"));
    let dir = tempfile::tempdir().unwrap();
    let prom_port = free_port();
    let cfg = dir.path().join("prometheus.yml");
    std::fs::write(
        &cfg,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n\
             scrape_configs:\n\
             \x20 - job_name: noisetop\n    static_configs:\n      - targets: ['127.0.0.1:{port}']\n\
             \x20 - job_name: node\n    static_configs:\n      - targets: ['127.0.0.1:{node_port}']\n"
        ),
    )
    .unwrap();
    let _prom = Kid(Command::new(&prom)
        .arg(format!("--config.file={}", cfg.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.path().join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{prom_port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("prometheus starts"));

    // the kernel's per-CPU switch counts, sampled alongside
    let refs: Arc<Mutex<Vec<(f64, f64)>>> = Arc::default();
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (refs, done) = (Arc::clone(&refs), Arc::clone(&done));
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                let t0 = now_s();
                if let Some(n) = nr_switches().and_then(|m| m.get(&1).copied()) {
                    let t1 = now_s();
                    refs.lock().unwrap().push((t0.midpoint(t1), n as f64));
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    let start = Instant::now();
    let window = "40s";
    // enough scrapes of both: a loaded machine may start Prometheus late
    std::thread::sleep(Duration::from_secs(15));
    let scraped = |q: &str| {
        query(prom_port, &format!("count_over_time({q}[{window}])"))
            .first()
            .and_then(|r| r["value"][1].as_str().and_then(|v| v.parse::<f64>().ok()))
            .unwrap_or(0.0)
    };
    while (scraped("noisetop_sample_timestamp_seconds") < 15.0
        || scraped("node_cpu_seconds_total{cpu=\"1\",mode=\"user\"}") < 15.0)
        && start.elapsed() < Duration::from_secs(90)
    {
        std::thread::sleep(Duration::from_secs(1));
    }
    // both targets up
    let up = query(prom_port, "up");
    assert_eq!(up.len(), 2, "{up:?}");
    for u in &up {
        assert_eq!(u["value"][1], "1", "{u}");
    }
    // per-CPU series, every CPU
    let busy = query(prom_port, "noisetop_cpu_busy_ratio");
    assert_eq!(busy.len(), cpus, "{busy:?}");

    // context switches on CPU 1 against the kernel's nr_switches
    let ours = read_times(
        prom_port,
        "noisetop_cpu_context_switches_total{cpu=\"1\"}",
        window,
    );
    assert!(ours.len() >= 10, "{ours:?}");
    let promql = query(
        prom_port,
        "rate(noisetop_cpu_context_switches_total{cpu=\"1\"}[20s])",
    );
    eprintln!(
        "CPU1 context switches: PromQL rate[20s] {}",
        promql[0]["value"][1]
    );
    let refs = refs.lock().unwrap().clone();
    if refs.len() > 10 {
        let (our_rate, kernel, span) = rates(&ours, &refs);
        eprintln!("  ours {our_rate:.1}/s over {span:.1} s");
        let off = (our_rate - kernel).abs() / kernel;
        eprintln!(
            "  kernel nr_switches {kernel:.1}/s: {:.2} % apart",
            off * 100.0
        );
        assert!(off <= 0.02, "ours {our_rate}/s, nr_switches {kernel}/s");
    } else {
        eprintln!("  /sys/kernel/debug/sched/debug not readable: nr_switches not compared");
    }

    // interrupts of CPU 1 against node_exporter, same instants
    let ours = read_times(
        prom_port,
        "noisetop_cpu_interrupts_total{cpu=\"1\"}",
        window,
    );
    let node_raw = {
        // the subquery resamples; the raw per-row samples share scrape times
        let rows = query(
            prom_port,
            &format!("node_interrupts_total{{cpu=\"1\"}}[{window}]"),
        );
        let mut sum: BTreeMap<i64, f64> = BTreeMap::new();
        for r in &rows {
            for p in r["values"].as_array().unwrap() {
                let t = (p[0].as_f64().unwrap() * 1000.0) as i64;
                *sum.entry(t).or_default() += p[1].as_str().unwrap().parse::<f64>().unwrap();
            }
        }
        sum.into_iter()
            .map(|(t, v)| (t as f64 / 1000.0, v))
            .collect::<Vec<_>>()
    };
    let (our_rate, node_rate, _) = rates(&ours, &node_raw);
    let off = (our_rate - node_rate).abs() / node_rate.max(1.0);
    eprintln!(
        "CPU1 interrupts: ours {our_rate:.1}/s, node_interrupts_total {node_rate:.1}/s: {:.2} % apart",
        off * 100.0
    );
    // over the whole span, or, where a burst fell near one end, over most
    // spans of half of it
    let median = median_off(&ours, &node_raw);
    assert!(
        off <= 0.02 || median <= 0.02,
        "ours {our_rate}, node {node_rate}; {:.2} % apart over half spans",
        median * 100.0
    );

    // time by mode of CPU 1 against node_cpu_seconds_total
    for mode in ["user", "system", "idle", "softirq", "steal"] {
        let ours = read_times(
            prom_port,
            &format!("noisetop_cpu_seconds_total{{cpu=\"1\",mode=\"{mode}\"}}"),
            window,
        );
        let node = samples(
            prom_port,
            &format!("node_cpu_seconds_total{{cpu=\"1\",mode=\"{mode}\"}}[{window}]"),
        );
        let (a, b, _) = rates(&ours, &node);
        eprintln!("CPU1 {mode}: ours {a:.4} s/s, node {b:.4} s/s");
        // ticks are 10 ms: 2 % of the CPU's second, in absolute terms
        assert!((a - b).abs() <= 0.02, "{mode}: ours {a}, node {b}");
    }

    // every panel of the dashboard returns data, or says why it cannot
    let dash: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/assets/grafana/noisetop.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let unavailable: Vec<String> = query(prom_port, "noisetop_metric_unavailable")
        .iter()
        .map(|r| r["metric"]["metric"].as_str().unwrap().to_string())
        .collect();
    let noisy = !query(prom_port, "noisetop_cpu_verdict{verdict=\"noisy\"}").is_empty();
    let mut panels = 0;
    for p in dash["panels"].as_array().unwrap() {
        let needs = p["description"]
            .as_str()
            .and_then(|d| d.split("Needs: ").nth(1))
            .unwrap_or("")
            .trim_end_matches('.')
            .to_string();
        for t in p["targets"].as_array().unwrap() {
            let expr = t["expr"]
                .as_str()
                .unwrap()
                .replace("$__rate_interval", "10s")
                .replace("$instance", ".*");
            let res = query(prom_port, &expr);
            panels += 1;
            if res.is_empty() {
                let excused = needs
                    .split(" or ")
                    .any(|n| unavailable.iter().any(|u| u == n))
                    || (needs == "findings" && !noisy)
                    || (needs == "unavailable" && unavailable.is_empty());
                assert!(
                    excused,
                    "panel {:?}: {expr} returned nothing (needs {needs}; unavailable here: {unavailable:?})",
                    p["title"]
                );
                eprintln!(
                    "panel {:?}: no data, as {needs} is unavailable here",
                    p["title"]
                );
            }
        }
    }
    assert!(panels >= 10, "{panels} queries");

    // the watched CPU's run-queue waits, counted in the kernel, are a
    // histogram a real Prometheus takes quantiles of (absent only where
    // BPF is refused, which the exporter says)
    let q = query(
        prom_port,
        "histogram_quantile(0.99, noisetop_cpu_runqueue_wait_seconds_bucket{cpu=\"1\"})",
    );
    if unavailable.iter().any(|u| u == "who_ran_in_kernel") {
        eprintln!("run-queue waits: BPF refused here, as the exporter says");
    } else {
        let p99: f64 = q
            .first()
            .and_then(|v| v["value"][1].as_str())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no run-queue quantile of CPU 1: {q:?}"));
        // NaN where no task waited there at all (an idle CPU 1)
        assert!(
            p99.is_nan() || (p99 > 0.0 && p99 <= 1.073_741_824),
            "p99 {p99} s"
        );
        eprintln!("run-queue wait p99 on CPU 1: {:.1} µs", p99 * 1e6);
    }

    // promtool on what we serve, both formats
    for accept in ["text/plain", "application/openmetrics-text; version=1.0.0"] {
        let r = serve_support::request(port, "GET", "/metrics", &[("Accept", accept)]).unwrap();
        let mut child = Command::new(&promtool)
            .args(["check", "metrics"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&r.body).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(),
            "promtool on {accept}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if accept.starts_with("text") {
            break; // promtool 2.42 reads the classic format only
        }
    }
    done.store(true, Ordering::Relaxed);
    let _ = sampler.join();
    eprintln!("took {:.1} s", start.elapsed().as_secs_f64());
}
