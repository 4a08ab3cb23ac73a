//! `noisetop probe`'s command line refuses what it cannot do with exit 2
//! and a clear message, and `compare` of two probe recordings gives the
//! measured sentence (fixtures with known histograms).

use std::path::Path;
use std::process::Command;

use noisetop::probe::runner::{CTX_ROUNDS, FIFO_PRIO};

fn noisetop(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_noisetop"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn online() -> Vec<u32> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    noisetop::base::cpulist::parse(text.trim()).unwrap()
}

#[test]
fn usage_errors_exit_2_with_the_reason() {
    let on = noisetop::base::cpulist::format(&online());
    let (code, _, err) = noisetop(&["probe", "--cpus", "4095"]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(
        err,
        format!("noisetop: --cpus 4095: CPU 4095 not online (online: {on})\n")
    );
    let (code, _, err) = noisetop(&["probe", "--duration", "0"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("\"0\": the probe needs time to measure (try 10s)"),
        "{err}"
    );
    let (code, _, err) = noisetop(&["probe", "--kinds", "ping"]);
    assert_eq!(code, 2, "{err}");
    if online().len() >= 2 {
        let (code, _, err) = noisetop(&["probe", "--cpus", "1", "--pin", "1"]);
        assert_eq!(code, 2, "{err}");
        assert_eq!(
            err,
            "noisetop: --cpus 1: CPU 1 is noisetop's own (--pin 1); probe other CPUs or pin \
             noisetop elsewhere\n"
        );
        let (code, _, err) = noisetop(&["probe", "--cpus", &on]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("every online CPU is probed"), "{err}");
    }
}

#[test]
fn an_existing_recording_is_not_overwritten_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("p.csv");
    std::fs::write(&csv, "keep\n").unwrap();
    let (code, _, err) = noisetop(&["probe", "--record", csv.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("the file exists (--force overwrites it)"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), "keep\n");
}

#[test]
fn compare_of_two_probes_gives_the_measured_sentence() {
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/probe");
    let (a, b) = (fx.join("a.csv"), fx.join("b.csv"));
    let (code, out, err) = noisetop(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    // A: 1000 remote wake-ups from C1 at 2 µs (900) and 3.001 µs (100);
    // B: 1000 from C6 at 91.007 µs (800) and 120.063 µs (200), 300 from C1
    assert_eq!(
        out.lines().next().unwrap(),
        "B's wake-ups from C6: p50 91 µs (advertised 133 µs), A's from C1: p50 2 µs — 89 µs \
         more per wake-up, measured"
    );
    assert!(
        out.contains("remote      C6                     0         -         -      1000        91       120         133"),
        "{out}"
    );
    let (code, out, err) = noisetop(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(
        v["sentence"]
            .as_str()
            .unwrap()
            .starts_with("B's wake-ups from C6: p50 91 µs")
    );
    assert_eq!(
        v["b"]["remote"]["C6"],
        serde_json::json!({"count": 1000, "p50_us": 91.007, "p99_us": 120.063, "advertised_us": 133})
    );
    assert_eq!(v["a"]["remote"]["C1"]["count"], 1000);
    assert_eq!(v["a"]["timer"]["C1"]["p50_us"], 4.001);
    // the other way round names A first
    let (_, out, _) = noisetop(&["compare", b.to_str().unwrap(), a.to_str().unwrap()]);
    assert!(
        out.starts_with("A's wake-ups from C6: p50 91 µs (advertised 133 µs), B's from C1"),
        "{out}"
    );
    // a probe against a recording of another kind is refused
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("not-a-probe.csv");
    std::fs::write(&rec, "t_s\n").unwrap();
    let (code, _, err) = noisetop(&["compare", a.to_str().unwrap(), rec.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is a probe recording and"), "{err}");
}

/// docs/probe.md: its CSV header, its compare sentence, its counts and its
/// peer command lines are the code's.
#[test]
fn the_probe_page_is_the_code() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/probe.md")).unwrap();
    assert!(page.starts_with("# noisetop probe\n"), "the probe page");
    let sec = page.as_str();
    let header = noisetop::probe::sinks::CSV_COLUMNS.join(",");
    assert!(sec.contains(&format!("```\n{header}\n```")), "CSV header");
    let fx = root.join("tests/fixtures/probe");
    let (_, out, _) = noisetop(&[
        "compare",
        fx.join("a.csv").to_str().unwrap(),
        fx.join("b.csv").to_str().unwrap(),
    ]);
    let sentence = out.lines().next().unwrap();
    assert!(sec.contains(&format!("```\n{sentence}\n```")), "{sentence}");
    let flat = sec.split_whitespace().collect::<Vec<_>>().join(" ");
    let n = |v: u32| {
        let s = v.to_string();
        if v >= 1000 {
            format!("{} {}", &s[..s.len() - 3], &s[s.len() - 3..])
        } else {
            s
        }
    };
    assert!(flat.contains(&format!("{} round trips after", n(CTX_ROUNDS))));
    assert!(flat.contains(&format!("({} round trips)", n(CTX_ROUNDS / 10))));
    assert!(flat.contains(&format!("`SCHED_FIFO` {FIFO_PRIO}")));
    assert!(flat.contains(&format!("perf bench sched pipe -l {CTX_ROUNDS}")));
    // compared without whitespace: rustfmt lays the arguments out
    let squash = |t: &str| t.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    let live = squash(&std::fs::read_to_string(root.join("tests/live/probe_live.rs")).unwrap());
    for arg in [
        r#""--default-system", "-a", &CPU.to_string(), "-t1", "-i", "1000""#,
        r#""-l", "3000", "-m", "-q", "-p", "50", "-h", "20000""#,
        r#""--timer-interval", "997us""#,
        "agrees(p[0], c50, 0.25, 5.0)",
        "agrees(ours.one_cpu_round_trip_us, peer, 0.20, 0.0)",
        r#""-f", "50", "taskset", "-c""#,
    ] {
        assert!(live.contains(&squash(arg)), "the live test runs {arg}");
    }
    assert!(
        flat.contains(
            "`cyclictest --default-system -a 1 -t1 -i 1000 -l 3000 -m -q -p 50 -h 20000`"
        )
    );
    assert!(flat.contains("(its deadlines every 997 µs)"));
}

/// The fixtures are what the probe would have written: every row's figures
/// are its own histogram's.
#[test]
#[expect(
    clippy::float_cmp,
    reason = "the figures are rounded the same way: exact"
)]
fn the_probe_fixtures_rows_are_their_histograms() {
    use noisetop::probe::stats::{from_buckets, percentiles, to_buckets};
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/probe");
    for name in ["a.csv", "b.csv"] {
        let rep = noisetop::probe::sinks::read_recording(&fx.join(name))
            .unwrap()
            .unwrap();
        for r in &rep.rows {
            let h = from_buckets(&r.histogram_ns);
            assert_eq!(to_buckets(&h), r.histogram_ns, "{name}: {r:?}");
            let p = percentiles(&h);
            assert_eq!(
                [r.p50_us, r.p90_us, r.p99_us, r.p999_us, r.max_us],
                [p[0], p[1], p[2], p[3], p[4]],
                "{name}: {} {} {}",
                r.cpu,
                r.kind.name(),
                r.state
            );
            assert_eq!(r.count, h.len());
        }
    }
}
