//! `noisetop serve` as a user runs it: the live sample count follows the
//! interval whatever the scrape rate, `--record` writes while serving and
//! is flushed on SIGTERM (exit 0), and bad options are refused with a
//! clear message (2 for a usage error).

use crate::serve_support;

use std::process::Command;
use std::time::{Duration, Instant};

use serve_support::{get, serve, value};

#[test]
fn scrapes_do_not_move_the_sample_count_and_sigterm_flushes_the_recording() {
    let _turn = crate::turn::take();
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("serve.csv");
    let (mut kid, port) = serve(&["--interval", "500ms", "--record", csv.to_str().unwrap()]);
    let samples = || {
        value(
            &get(port, "/metrics").unwrap().text(),
            "noisetop_samples_total",
        )
        .unwrap()
    };
    let first = samples();
    let t = Instant::now();
    let mut scrapes = 0u32;
    while t.elapsed() < Duration::from_secs(3) {
        let _ = samples();
        scrapes += 1;
        std::thread::sleep(Duration::from_millis(25));
    }
    let moved = samples() - first;
    let elapsed = t.elapsed().as_secs_f64();
    eprintln!("{scrapes} scrapes in {elapsed:.1} s: the sample count moved by {moved}");
    assert!(scrapes > 40, "{scrapes} scrapes");
    // one sample per 500 ms, one more for the tick in flight; never one per scrape
    assert!(
        moved <= (elapsed / 0.5).ceil() + 1.0,
        "{moved} samples in {elapsed} s"
    );
    assert!(moved >= 1.0, "sampling went on while serving");
    noisetop::os::sys::kill(kid.0.id(), libc::SIGTERM).unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(s) = kid.0.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "SIGTERM did not stop it"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(0), "a clean stop on SIGTERM");
    let rows = std::fs::read_to_string(&csv).unwrap();
    assert!(
        rows.lines().count() >= 2,
        "the recording has its header and rows: {rows}"
    );
    assert!(
        get(port, "/metrics").is_err(),
        "the port is closed after the stop"
    );
}

#[test]
fn bad_options_are_refused_with_a_clear_message() {
    let _turn = crate::turn::take();
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("web.yml");
    std::fs::write(&bad, "basic_auth_users:\n  prom: plaintext\n").unwrap();
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_noisetop"))
            .arg("serve")
            .args(args)
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, err) = run(&["--web-config", bad.to_str().unwrap(), "-n", "1"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("not a bcrypt hash"), "{err}");
    // no port: a usage error, as every bad argument is
    let (code, err) = run(&["--listen", "nowhere", "-n", "1"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("\"nowhere\" is not ADDR:PORT"), "{err}");
    // a well-formed address that cannot be bound is a run-time error
    let (code, err) = run(&["--listen", "192.0.2.1:9877", "-n", "1"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("cannot listen on 192.0.2.1:9877"), "{err}");
    let (code, err) = run(&["--detail", "some"]);
    assert_eq!(code, Some(2), "{err}");
}

/// The IPIs noisetop sent to the watched CPU are exported as the kernel
/// counts them (setup, then running), or said to be unavailable with the
/// reason; never a made-up 0.
#[test]
fn the_ipis_sent_to_watched_cpus_are_exported_or_said_unavailable() {
    let _turn = crate::turn::take();
    if std::thread::available_parallelism().map_or(1, usize::from) < 2 {
        eprintln!("skipped: needs CPU 1 to watch");
        return;
    }
    let (kid, port) = serve(&["--interval", "300ms", "--watch", "1"]);
    let end = Instant::now() + Duration::from_secs(10);
    let text = loop {
        let t = get(port, "/metrics").unwrap().text();
        if value(&t, "noisetop_samples_total").unwrap_or(0.0) >= 2.0 || Instant::now() > end {
            break t;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    drop(kid);
    let setup = value(&text, "noisetop_watched_cpu_ipis_total{phase=\"setup\"}");
    let running = value(&text, "noisetop_watched_cpu_ipis_total{phase=\"running\"}");
    let said = text
        .lines()
        .find(|l| l.starts_with("noisetop_metric_unavailable{metric=\"watched_cpu_ipis\""));
    eprintln!("setup {setup:?}, running {running:?}, unavailable {said:?}");
    match (setup, running) {
        (Some(_), Some(_)) => assert!(said.is_none(), "both counted and unavailable"),
        (None, None) => assert!(said.is_some(), "neither counted nor said why:\n{text}"),
        _ => panic!("one phase without the other:\n{text}"),
    }
}
