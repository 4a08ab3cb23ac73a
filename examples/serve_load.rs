//! Load on loopback: `noisetop serve` (this build's binary, started here)
//! scraped 10 times a second for 60 s; prints errors, p50/p99/max scrape
//! latency and the server's RSS before and after.
//!
//! `cargo build --release && cargo run --release --example serve_load [SECONDS]`

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn scrape(port: u16) -> Result<usize, String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(|e| e.to_string())?;
    s.write_all(
        b"GET /metrics HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n",
    )
    .map_err(|e| e.to_string())?;
    let mut b = Vec::new();
    s.read_to_end(&mut b).map_err(|e| e.to_string())?;
    if b.starts_with(b"HTTP/1.1 200") {
        Ok(b.len())
    } else {
        Err(String::from_utf8_lossy(&b[..b.len().min(40)]).into_owned())
    }
}

fn main() {
    let secs: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(60);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let bin = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/noisetop");
    let mut child = Command::new(&bin)
        .args([
            "serve",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--watch",
            "1",
        ])
        .stderr(Stdio::null())
        .spawn()
        .expect("target/release/noisetop: build it first");
    let pid = child.id();
    let t0 = Instant::now();
    while scrape(port).is_err() {
        assert!(t0.elapsed() < Duration::from_secs(30), "no answer");
        std::thread::sleep(Duration::from_millis(100));
    }
    let before = rss_kb(pid);
    let mut lat = Vec::new();
    let mut errors = 0;
    let start = Instant::now();
    let mut next = start;
    while start.elapsed() < Duration::from_secs(secs) {
        let t = Instant::now();
        match scrape(port) {
            Ok(_) => lat.push(t.elapsed()),
            Err(e) => {
                errors += 1;
                eprintln!("error: {e}");
            }
        }
        next += Duration::from_millis(100);
        if let Some(d) = next.checked_duration_since(Instant::now()) {
            std::thread::sleep(d);
        }
    }
    let after = rss_kb(pid);
    lat.sort();
    let q = |p: f64| lat[((lat.len() as f64 - 1.0) * p) as usize];
    println!(
        "{} scrapes in {secs} s, {errors} errors; latency p50 {:?} p99 {:?} max {:?}; RSS {before} kB before, {after} kB after",
        lat.len(),
        q(0.5),
        q(0.99),
        lat.last().unwrap()
    );
    let _ = child.kill();
    let _ = child.wait();
}
