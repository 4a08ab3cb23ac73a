//! The exporter's exposition of a synthetic machine (exact values from the
//! generator's counter model) and its HTTP server under bad clients:
//! oversized heads, unknown paths and methods, a byte-a-second client,
//! 1000 idle connections, wrong passwords, TLS with a certificate made
//! here; scrapes keep being served through all of it.

use crate::serve_support;

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use noisetop::serve::http::{self, Limits};
use noisetop::serve::webconfig::{Tls, WebConfig};
use noisetop::serve::{self, Detail, Shared};
use noisetop::testkit::synth::{self, Flavor, Spec};
use serve_support::{request, value};

fn exporter(detail: Detail) -> (Arc<Shared>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    synth::write_capture(dir.path(), &Spec::new(Flavor::IntelServer, 8)).unwrap();
    let shared = Arc::new(Shared::default());
    serve::replay(dir.path(), detail, Arc::clone(&shared)).unwrap();
    (shared, dir)
}

fn text(shared: &Shared) -> String {
    String::from_utf8(shared.latest().unwrap().classic.to_vec()).unwrap()
}

#[test]
fn the_exposition_carries_the_kernels_counts_and_the_intervals_figures() {
    let (shared, _dir) = exporter(Detail::All);
    let t = text(&shared);
    // perf context switches: CPU3 20 000/s, run for 1001 s at instant 1
    assert_eq!(
        value(&t, "noisetop_cpu_context_switches_total{cpu=\"3\"}"),
        Some(20_000.0 * 1001.0)
    );
    // /proc/stat: CPU2 irq 8 ticks/s → 80.08 s at 1001 s
    assert_eq!(
        value(&t, "noisetop_cpu_seconds_total{cpu=\"2\",mode=\"irq\"}"),
        Some(80.08)
    );
    // busy 40 % on CPU2, 1 % on CPU1
    assert_eq!(value(&t, "noisetop_cpu_busy_ratio{cpu=\"2\"}"), Some(0.4));
    assert_eq!(value(&t, "noisetop_cpu_busy_ratio{cpu=\"1\"}"), Some(0.01));
    // RES 5000/s on CPU3
    assert_eq!(
        value(
            &t,
            "noisetop_cpu_interrupts_by_kind_total{cpu=\"3\",kind=\"reschedule\"}"
        ),
        Some(5000.0 * 1001.0)
    );
    assert_eq!(value(&t, "noisetop_samples_total"), Some(1.0));
    let lines = t.lines().filter(|l| !l.starts_with('#')).count();
    assert_eq!(value(&t, "noisetop_series"), Some(lines as f64));
    let om = String::from_utf8(shared.latest().unwrap().openmetrics.to_vec()).unwrap();
    assert!(om.ends_with("# EOF\n"));
    assert!(om.contains("# TYPE noisetop_cpu_context_switches counter\n"));
}

#[test]
fn detail_follows_the_watched_cpus_and_the_rest_is_summed_per_package() {
    let (all, _d1) = exporter(Detail::All);
    let (watched, _d2) = exporter(Detail::Watched);
    let (a, w) = (text(&all), text(&watched));
    let count = |t: &str, f: &str| t.lines().filter(|l| l.starts_with(f)).count();
    assert_eq!(count(&a, "noisetop_cpu_seconds_total{"), 8 * 8);
    // the synthetic capture watches no CPU and isolates none
    assert_eq!(count(&w, "noisetop_cpu_seconds_total{"), 0);
    assert_eq!(count(&w, "noisetop_cpu_busy_ratio{"), 8);
    // every CPU's switches are in the package sums: 2 packages
    let pkg: f64 = w
        .lines()
        .filter(|l| l.starts_with("noisetop_package_context_switches_total{"))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
        .sum();
    let cpus: f64 = (0..8)
        .map(|c| {
            value(
                &w,
                &format!("noisetop_cpu_context_switches_total{{cpu=\"{c}\"}}"),
            )
            .unwrap()
        })
        .sum();
    // integer counts well below 2^53: the sums are exact
    assert_eq!(pkg as u64, cpus as u64);
}

fn start(shared: &Arc<Shared>, web: &WebConfig, limits: Limits) -> http::Handle {
    http::bind("127.0.0.1:0", web, limits)
        .unwrap()
        .spawn(Arc::clone(shared))
        .unwrap()
}

fn short_limits() -> Limits {
    Limits {
        header_timeout: Duration::from_secs(2),
        ..Limits::default()
    }
}

#[test]
fn bad_requests_are_refused_and_scrapes_go_on() {
    let (shared, _dir) = exporter(Detail::Watched);
    let h = start(&shared, &WebConfig::default(), short_limits());
    let port = h.addr().port();
    let ok = || {
        let r = request(port, "GET", "/metrics", &[]).unwrap();
        assert_eq!(r.status, 200);
        assert!(r.text().contains("noisetop_series "));
    };
    ok();
    assert_eq!(request(port, "GET", "/nope", &[]).unwrap().status, 404);
    let r = request(port, "POST", "/metrics", &[]).unwrap();
    assert_eq!(r.status, 405);
    assert_eq!(r.header("allow"), Some("GET, HEAD"));
    let r = request(port, "GET", "/", &[]).unwrap();
    assert!(r.text().contains("<a href=\"/metrics\">"));
    let big = "x".repeat(64 * 1024);
    let r = request(port, "GET", "/metrics", &[("X-Big", &big)]);
    assert!(
        r.as_ref().map_or(true, |r| r.status == 431),
        "an oversized head is refused: {r:?}"
    );
    // gzip and OpenMetrics when asked
    let r = request(
        port,
        "GET",
        "/metrics",
        &[
            ("Accept-Encoding", "gzip"),
            ("Accept", "application/openmetrics-text"),
        ],
    )
    .unwrap();
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    let mut plain = String::new();
    flate2::read::GzDecoder::new(&r.body[..])
        .read_to_string(&mut plain)
        .unwrap();
    assert!(plain.ends_with("# EOF\n"));

    // a client that sends a byte a second does not hold up scrapes and is cut off
    let mut slow = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let t0 = Instant::now();
    let mut cut = false;
    for b in b"GET /metrics HTTP/1.1\r\nHost: x\r\n" {
        if slow.write_all(&[*b]).is_err() {
            cut = true;
            break;
        }
        ok();
        std::thread::sleep(Duration::from_millis(500));
        if t0.elapsed() > Duration::from_secs(6) {
            break;
        }
    }
    let mut rest = Vec::new();
    slow.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let closed = slow.read_to_end(&mut rest);
    assert!(
        cut || closed.is_ok(),
        "the server closes a head that takes longer than its limit: {closed:?}"
    );

    // 1000 idle connections: scrapes are still served
    let idle: Vec<TcpStream> = (0..1000)
        .filter_map(|_| TcpStream::connect(("127.0.0.1", port)).ok())
        .collect();
    assert!(idle.len() >= 900, "{} connections", idle.len());
    let t = Instant::now();
    ok();
    eprintln!(
        "scrape with {} idle connections open: {:.1} ms",
        idle.len(),
        t.elapsed().as_secs_f64() * 1e3
    );
    drop(idle);
    ok();
    h.stop();
}

#[test]
fn scrapes_never_move_the_sample_count() {
    let (shared, _dir) = exporter(Detail::Watched);
    let h = start(&shared, &WebConfig::default(), Limits::default());
    let port = h.addr().port();
    for _ in 0..50 {
        let r = request(port, "GET", "/metrics", &[]).unwrap();
        assert_eq!(value(&r.text(), "noisetop_samples_total"), Some(1.0));
    }
    assert_eq!(shared.scrapes(), 50);
    h.stop();
}

#[test]
fn basic_auth_and_tls_from_a_web_config() {
    let (shared, _dir) = exporter(Detail::Watched);
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = (dir.path().join("c.pem"), dir.path().join("k.pem"));
    let made = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
        ])
        .args(["-addext", "subjectAltName=IP:127.0.0.1"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output();
    if !made.is_ok_and(|o| o.status.success()) {
        eprintln!("openssl CLI not usable: TLS not tested");
        return;
    }
    let mut web = WebConfig::default();
    web.users
        .insert("prom".into(), bcrypt::hash("right", 4).unwrap());
    web.tls = Some(Tls {
        cert_file: cert.clone(),
        key_file: key,
        tls13_only: false,
    });
    let h = start(&shared, &web, short_limits());
    let port = h.addr().port();
    let curl = |user: &str| {
        std::process::Command::new("curl")
            .args(["-s", "-o", "/dev/null", "-w", "%{http_code}", "--cacert"])
            .arg(&cert)
            .args(["-u", user])
            .arg(format!("https://127.0.0.1:{port}/metrics"))
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    };
    let Ok(code) = curl("prom:right") else {
        eprintln!("curl not installed: TLS not tested");
        return;
    };
    assert_eq!(code, "200", "TLS handshake against the test's certificate");
    assert_eq!(curl("prom:wrong").unwrap(), "401");
    assert_eq!(curl("nobody:right").unwrap(), "401");
    // plain HTTP to a TLS port gets nothing served
    let r = request(port, "GET", "/metrics", &[]);
    assert!(r.map_or(true, |r| r.status != 200));
    h.stop();
}

#[test]
fn a_listen_address_of_only_a_port_takes_every_address() {
    let (shared, _dir) = exporter(Detail::Watched);
    let h = http::bind(":0", &WebConfig::default(), short_limits())
        .unwrap()
        .spawn(Arc::clone(&shared))
        .unwrap();
    // bound to the any address, so IPv4's loopback reaches it
    assert!(h.addr().ip().is_unspecified(), "{}", h.addr());
    let r = request(h.addr().port(), "GET", "/metrics", &[]).unwrap();
    assert_eq!(r.status, 200);
}
