//! What the `serve` tests share: a free loopback port, a plain HTTP/1.1
//! client over std (so the tests see exactly the bytes on the wire), and a
//! `noisetop serve` child that is killed when dropped.

#![allow(dead_code)]

use std::fmt::Write as _;
use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A loopback port nobody listens on now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// One HTTP response.
#[derive(Debug)]
pub struct Reply {
    /// Status code.
    pub status: u16,
    /// Header lines, lower-cased names.
    pub headers: Vec<(String, String)>,
    /// Body bytes (chunked bodies decoded).
    pub body: Vec<u8>,
}

impl Reply {
    /// Returns a header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Returns the body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Sends a request (`Connection: close`) and reads the whole reply.
pub fn request(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> std::io::Result<Reply> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(20)))?;
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n");
    for (k, v) in headers {
        let _ = write!(req, "{k}: {v}\r\n");
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes())?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    parse(&raw)
}

/// GET with no extra header.
pub fn get(port: u16, path: &str) -> std::io::Result<Reply> {
    request(port, "GET", path, &[])
}

/// Parses a raw HTTP/1.1 response.
pub fn parse(raw: &[u8]) -> std::io::Result<Reply> {
    let bad = |w: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, w.to_string());
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| bad("no end of head"))?;
    let head = String::from_utf8_lossy(&raw[..end]);
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| bad("no status"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let mut body = raw[end + 4..].to_vec();
    if headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"))
    {
        body = dechunk(&body);
    }
    Ok(Reply {
        status,
        headers,
        body,
    })
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(p) = b.windows(2).position(|w| w == b"\r\n") {
        let n = usize::from_str_radix(String::from_utf8_lossy(&b[..p]).trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.extend_from_slice(&b[p + 2..p + 2 + n]);
        b = &b[p + 2 + n + 2..];
    }
    out
}

/// Percent-encodes a query parameter.
pub fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A child process killed (SIGKILL) when dropped.
pub struct Kid(pub Child);

impl Drop for Kid {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `noisetop serve` on a free port with these extra arguments and
/// waits until /metrics has its first interval.
pub fn serve(args: &[&str]) -> (Kid, u16) {
    serve_env(args, &[])
}

/// `noisetop serve` as [`serve`], with more environment (a state folder).
pub fn serve_env(args: &[&str], env: &[(&str, &std::path::Path)]) -> (Kid, u16) {
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let child = Command::new(env!("CARGO_BIN_EXE_noisetop"))
        .args(["serve", "--listen", &listen])
        .args(args)
        .envs(env.iter().map(|(k, v)| (*k, *v)))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("noisetop starts");
    let kid = Kid(child);
    wait_ready(port, &[]);
    (kid, port)
}

/// Waits (at most 30 s) until /metrics answers 200.
pub fn wait_ready(port: u16, headers: &[(&str, &str)]) {
    let start = Instant::now();
    loop {
        if let Ok(r) = request(port, "GET", "/metrics", headers)
            && r.status == 200
        {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "noisetop serve did not answer on port {port}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The value of the one sample of `name{labels}` in an exposition.
pub fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with(series) && l[series.len()..].starts_with(' '))
        .and_then(|l| l[series.len() + 1..].trim().parse().ok())
}

/// Finds a program on PATH.
pub fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(name))
            .find(|f| f.is_file())
    })
}
