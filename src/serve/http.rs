//! The HTTP side of `serve`: hyper on a single-threaded tokio runtime of
//! its own thread, so the sampler never waits for a client. `/metrics`
//! copies the latest exposition, `/` links to it, anything else is 404
//! (405 for another method on those two). Limits: request heads of at most
//! `max_header_bytes` (431 beyond), a deadline for a head to arrive (a
//! client sending a byte a second is cut off; it never holds up others,
//! each connection being its own task), a cap on open connections (those
//! beyond are closed at once), and a lifetime per connection.

use std::collections::HashSet;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use base64::Engine as _;
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{Notify, Semaphore};
use tokio_rustls::rustls;

use super::Shared;
use super::negotiate;
use super::webconfig::WebConfig;

/// What a client may cost the server.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Open connections at once; more are closed as soon as accepted.
    pub max_connections: usize,
    /// Time a request head (or a TLS handshake) may take to arrive.
    pub header_timeout: Duration,
    /// Largest request head, bytes (hyper's floor is 8 KiB).
    pub max_header_bytes: usize,
    /// Longest a connection stays open, keep-alive included.
    pub lifetime: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 1024,
            header_timeout: Duration::from_secs(10),
            max_header_bytes: 16 * 1024,
            lifetime: Duration::from_secs(300),
        }
    }
}

/// A bound server, not yet serving.
pub struct Server {
    listener: std::net::TcpListener,
    tls: Option<Arc<rustls::ServerConfig>>,
    auth: Arc<Auth>,
    limits: Limits,
}

/// A running server: stop it with [`Handle::stop`].
pub struct Handle {
    stop: Arc<Notify>,
    thread: Option<JoinHandle<()>>,
    addr: SocketAddr,
}

impl Handle {
    /// Returns the address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting, drops every connection and waits for the thread.
    pub fn stop(mut self) {
        self.stop.notify_one();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Basic-auth users and the passwords already verified (bcrypt is slow
/// on purpose; a scraper sends the same password every time).
struct Auth {
    users: std::collections::BTreeMap<String, String>,
    verified: Mutex<HashSet<(String, String)>>,
}

impl Auth {
    async fn allows(self: &Arc<Self>, header: Option<&HeaderValue>) -> bool {
        if self.users.is_empty() {
            return true;
        }
        let Some((user, pass)) = header
            .and_then(|h| h.to_str().ok())
            .and_then(|h| h.strip_prefix("Basic "))
            .and_then(|b| {
                base64::engine::general_purpose::STANDARD
                    .decode(b.trim())
                    .ok()
            })
            .and_then(|b| String::from_utf8(b).ok())
            .and_then(|s| {
                s.split_once(':')
                    .map(|(u, p)| (u.to_string(), p.to_string()))
            })
        else {
            return false;
        };
        let Some(hash) = self.users.get(&user).cloned() else {
            return false;
        };
        let key = (user, pass);
        if self.verified.lock().is_ok_and(|v| v.contains(&key)) {
            return true;
        }
        let pass = key.1.clone();
        // off the runtime's thread: a wrong password must not stall scrapes
        let ok = tokio::task::spawn_blocking(move || bcrypt::verify(pass, &hash).unwrap_or(false))
            .await
            .unwrap_or(false);
        if ok && let Ok(mut v) = self.verified.lock() {
            if v.len() > 64 {
                v.clear();
            }
            v.insert(key);
        }
        ok
    }
}

/// Binds `addr`; `:PORT` is every address, as in `node_exporter` and
/// Prometheus: IPv6's any address, which takes IPv4 too, or IPv4's where
/// IPv6 is off.
fn listen(addr: &str) -> std::io::Result<std::net::TcpListener> {
    match addr.strip_prefix(':') {
        Some(port) if !port.contains(':') => std::net::TcpListener::bind(format!("[::]:{port}"))
            .or_else(|_| std::net::TcpListener::bind(format!("0.0.0.0:{port}"))),
        _ => std::net::TcpListener::bind(addr),
    }
}

/// Why the exporter cannot serve: the address, or the TLS files.
// each inner error is said in the message, so it is not also a `source`
// that `{:#}` would print a second time
#[derive(Debug, thiserror::Error)]
pub enum BindError {
    /// The address cannot be bound (in use, not this machine's, a port
    /// below 1024 without the capability).
    #[error("cannot listen on {addr}: {err}")]
    Listen {
        /// The address as given.
        addr: String,
        /// What the kernel said.
        err: std::io::Error,
    },
    /// The certificate file cannot be read as PEM.
    #[error("cert_file {}: {err}", .path.display())]
    Cert {
        /// The file.
        path: std::path::PathBuf,
        /// What the PEM reader said.
        err: rustls_pki_types::pem::Error,
    },
    /// The certificate file holds no certificate.
    #[error("cert_file {}: no certificate", .0.display())]
    NoCert(std::path::PathBuf),
    /// The key file cannot be read as a PEM private key.
    #[error("key_file {}: {err}", .path.display())]
    Key {
        /// The file.
        path: std::path::PathBuf,
        /// What the PEM reader said.
        err: rustls_pki_types::pem::Error,
    },
    /// rustls refuses the protocol versions.
    #[error("{0}")]
    Versions(rustls::Error),
    /// rustls refuses the certificate and key together (a key of another
    /// certificate).
    #[error("{}: {err}", .cert.display())]
    CertAndKey {
        /// The certificate file.
        cert: std::path::PathBuf,
        /// What rustls said.
        err: rustls::Error,
    },
}

/// Binds the address and reads the web config's certificate and key.
pub fn bind(addr: &str, web: &WebConfig, limits: Limits) -> Result<Server, BindError> {
    let refused = |err| BindError::Listen {
        addr: addr.to_string(),
        err,
    };
    let listener = listen(addr).map_err(refused)?;
    listener.set_nonblocking(true).map_err(refused)?;
    let tls = web.tls.as_ref().map(tls_config).transpose()?;
    Ok(Server {
        listener,
        tls,
        auth: Arc::new(Auth {
            users: web.users.clone(),
            verified: Mutex::new(HashSet::new()),
        }),
        limits,
    })
}

fn tls_config(t: &super::webconfig::Tls) -> Result<Arc<rustls::ServerConfig>, BindError> {
    use rustls_pki_types::pem::PemObject as _;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&t.cert_file)
        .and_then(Iterator::collect)
        .map_err(|err| BindError::Cert {
            path: t.cert_file.clone(),
            err,
        })?;
    if certs.is_empty() {
        return Err(BindError::NoCert(t.cert_file.clone()));
    }
    let key = PrivateKeyDer::from_pem_file(&t.key_file).map_err(|err| BindError::Key {
        path: t.key_file.clone(),
        err,
    })?;
    let versions: &[&rustls::SupportedProtocolVersion] = if t.tls13_only {
        &[&rustls::version::TLS13]
    } else {
        &[&rustls::version::TLS13, &rustls::version::TLS12]
    };
    let cfg = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_protocol_versions(versions)
    .map_err(BindError::Versions)?
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .map_err(|err| BindError::CertAndKey {
        cert: t.cert_file.clone(),
        err,
    })?;
    Ok(Arc::new(cfg))
}

impl Server {
    /// Returns the bound address (the port, when 0 was asked).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves `shared` on a thread of its own until stopped.
    pub fn spawn(self, shared: Arc<Shared>) -> std::io::Result<Handle> {
        let addr = self.local_addr()?;
        let stop = Arc::new(Notify::new());
        let stop2 = Arc::clone(&stop);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .max_blocking_threads(4)
            .thread_name("http-auth")
            .build()?;
        let thread = std::thread::Builder::new()
            .name("http".into())
            .spawn(move || {
                rt.block_on(self.serve(shared, stop2));
                // dropping the runtime ends every connection still open
                drop(rt);
            })?;
        Ok(Handle {
            stop,
            thread: Some(thread),
            addr,
        })
    }

    async fn serve(self, shared: Arc<Shared>, stop: Arc<Notify>) {
        let Ok(listener) = tokio::net::TcpListener::from_std(self.listener) else {
            return;
        };
        let slots = Arc::new(Semaphore::new(self.limits.max_connections));
        let acceptor = self.tls.map(tokio_rustls::TlsAcceptor::from);
        let ctx = Arc::new(Ctx {
            shared,
            auth: self.auth,
            limits: self.limits,
        });
        loop {
            let accepted = tokio::select! {
                () = stop.notified() => return,
                a = listener.accept() => a,
            };
            let Ok((tcp, _)) = accepted else {
                // out of descriptors: let the lifetimes free some
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            };
            let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
                drop(tcp);
                continue;
            };
            let _ = tcp.set_nodelay(true);
            let ctx = Arc::clone(&ctx);
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let limits = ctx.limits;
                match acceptor {
                    None => connection(tcp, ctx).await,
                    Some(a) => {
                        if let Ok(Ok(tls)) =
                            tokio::time::timeout(limits.header_timeout, a.accept(tcp)).await
                        {
                            connection(tls, ctx).await;
                        }
                    }
                }
                drop(slot);
            });
        }
    }
}

struct Ctx {
    shared: Arc<Shared>,
    auth: Arc<Auth>,
    limits: Limits,
}

async fn connection<S>(io: S, ctx: Arc<Ctx>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let limits = ctx.limits;
    let svc = hyper::service::service_fn(move |req| {
        let ctx = Arc::clone(&ctx);
        async move { Ok::<_, Infallible>(respond(&req, &ctx).await) }
    });
    let mut b = hyper::server::conn::http1::Builder::new();
    b.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_buf_size(limits.max_header_bytes.max(8192));
    let conn = b.serve_connection(TokioIo::new(io), svc);
    let _ = tokio::time::timeout(limits.lifetime, conn).await;
}

const INDEX: &str = "<!DOCTYPE html>\n<html><head><title>noisetop exporter</title></head>\n\
<body><h1>noisetop exporter</h1>\n<p><a href=\"/metrics\">Metrics</a></p></body></html>\n";

fn plain(status: StatusCode, text: &str) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(text.to_string())));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

async fn respond(req: &Request<Incoming>, ctx: &Arc<Ctx>) -> Response<Full<Bytes>> {
    let path = req.uri().path();
    if path != "/" && path != "/metrics" {
        return plain(StatusCode::NOT_FOUND, "404 not found: try /metrics\n");
    }
    let head = req.method() == Method::HEAD;
    if req.method() != Method::GET && !head {
        let mut r = plain(StatusCode::METHOD_NOT_ALLOWED, "405 method not allowed\n");
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    if !ctx
        .auth
        .allows(req.headers().get(header::AUTHORIZATION))
        .await
    {
        let mut r = plain(StatusCode::UNAUTHORIZED, "401 unauthorized\n");
        r.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"noisetop\""),
        );
        return r;
    }
    if path == "/" {
        let mut r = Response::new(Full::new(Bytes::from_static(INDEX.as_bytes())));
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        return r;
    }
    ctx.shared.count_scrape();
    let Some(latest) = ctx.shared.latest() else {
        let mut r = plain(
            StatusCode::SERVICE_UNAVAILABLE,
            "no interval yet: the first comes one --interval after start\n",
        );
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        return r;
    };
    let text = |h| {
        req.headers()
            .get(h)
            .and_then(|v: &HeaderValue| v.to_str().ok())
    };
    let format = negotiate::format(text(header::ACCEPT));
    let gzip = negotiate::gzip(text(header::ACCEPT_ENCODING));
    let body = latest.body(format, gzip);
    let len = body.len();
    let mut r = Response::new(Full::new(if head {
        Bytes::new()
    } else {
        Bytes::from_owner(body)
    }));
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(format.content_type()),
    );
    if gzip {
        h.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
    h.insert(
        header::VARY,
        HeaderValue::from_static("Accept, Accept-Encoding"),
    );
    if head {
        h.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    }
    r
}
