//! Listening, written once for every HTTP door (`pare http`, `pare mcp --listen`).
//!
//! hyper's HTTP/1.1 server does the protocol; this module bounds what a client can cost:
//!
//! - **Loopback unless allowed**: [`bind`] refuses a non-loopback address without
//!   `allow_remote`, and [`check_host`] a `Host` that names no loopback host (DNS
//!   rebinding: a web page whose name resolves to 127.0.0.1 must not reach the door).
//! - **Connections**: at most [`Limits::max_connections`] at once; one more is answered
//!   `503` and closed at once, so a flood is told rather than queued.
//! - **Time**: a request's whole head must arrive within [`Limits::header_deadline`] of
//!   the connection's start (or of the previous response, on a kept-alive connection):
//!   slow-header clients (slowloris) are cut off and their slots freed.
//! - **Size**: the head is at most [`Limits::max_head_bytes`] and
//!   [`Limits::max_headers`] headers (431 beyond). Framing RFC 9112 calls ambiguous is
//!   refused with 400 by [`check_framing`]: more than one `Host` or `Content-Length`, or
//!   no `Host` in HTTP/1.1.

use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use hyper::body::Incoming;
use hyper::header::{CONTENT_LENGTH, HOST};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode, Version};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

use crate::body::Body;

/// What one client may cost.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connections at once; more get 503.
    pub max_connections: usize,
    /// A request's head, whole, within this long.
    pub header_deadline: Duration,
    /// The largest request head, in bytes.
    pub max_head_bytes: usize,
    /// The most header lines in a request.
    pub max_headers: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 1024,
            header_deadline: Duration::from_secs(10),
            max_head_bytes: 64 << 10,
            max_headers: 100,
        }
    }
}

/// A request handler: the request and the peer's address in, the response out.
pub type Handler = Arc<
    dyn Fn(Request<Incoming>, SocketAddr) -> Pin<Box<dyn Future<Output = Response<Body>> + Send>>
        + Send
        + Sync,
>;

/// Listen on `addr`; a non-loopback address only with `allow_remote`.
pub async fn bind(addr: SocketAddr, allow_remote: bool) -> std::io::Result<TcpListener> {
    if !allow_remote && !addr.ip().is_loopback() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("{addr} is not a loopback address; pass --allow-remote to serve other hosts"),
        ));
    }
    TcpListener::bind(addr).await
}

/// Serve connections from `listener` with `handler` until `shutdown` completes.
pub async fn serve(
    listener: TcpListener,
    limits: Limits,
    handler: Handler,
    shutdown: impl Future<Output = ()>,
) {
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                // Out of descriptors and the like: wait a little rather than spin.
                Err(_) => { tokio::time::sleep(Duration::from_millis(50)).await; continue; }
            },
            () = &mut shutdown => return,
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            tokio::spawn(busy(stream));
            continue;
        };
        let handler = handler.clone();
        tokio::spawn(async move {
            serve_connection(stream, peer, limits, handler).await;
            drop(slot);
        });
    }
}

async fn serve_connection(stream: TcpStream, peer: SocketAddr, limits: Limits, handler: Handler) {
    let _ = stream.set_nodelay(true);
    let service = service_fn(move |req: Request<Incoming>| {
        let handler = handler.clone();
        async move {
            if let Err((status, why)) = check_framing(&req) {
                return Ok::<_, Infallible>(crate::body::error(status, why));
            }
            Ok(handler(req, peer).await)
        }
    });
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_deadline)
        .max_buf_size(limits.max_head_bytes.max(8192))
        .max_headers(limits.max_headers)
        .keep_alive(true);
    let _ = builder
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

/// Too many connections: say so and close.
async fn busy(mut stream: TcpStream) {
    const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: 51\r\nConnection: close\r\nRetry-After: 1\r\n\r\n{\"error\":\"pare: too many connections; retry later\"}";
    let _ = tokio::time::timeout(Duration::from_secs(1), stream.write_all(BUSY)).await;
    let _ = stream.shutdown().await;
}

/// Framing RFC 9112 calls ambiguous: more than one `Host` or `Content-Length` line, or
/// an HTTP/1.1 request without `Host`.
pub fn check_framing<B>(req: &Request<B>) -> Result<(), (StatusCode, &'static str)> {
    let hosts = req.headers().get_all(HOST).iter().count();
    if hosts > 1 {
        return Err((StatusCode::BAD_REQUEST, "more than one Host header"));
    }
    if hosts == 0 && req.version() == Version::HTTP_11 {
        return Err((StatusCode::BAD_REQUEST, "no Host header"));
    }
    if req.headers().get_all(CONTENT_LENGTH).iter().count() > 1 {
        return Err((StatusCode::BAD_REQUEST, "more than one Content-Length"));
    }
    Ok(())
}

/// DNS rebinding: without `allow_remote`, the `Host` must name a loopback host.
pub fn check_host<B>(req: &Request<B>, allow_remote: bool) -> Result<(), String> {
    if allow_remote {
        return Ok(());
    }
    match req.headers().get(HOST).map(|h| h.to_str()) {
        None => Ok(()),
        Some(Ok(host)) if is_loopback_name(host_of(host)) => Ok(()),
        Some(Ok(host)) => Err(format!(
            "Host `{host}` is not a loopback name (pass --allow-remote to serve others)"
        )),
        Some(Err(_)) => Err("the Host header is not text".into()),
    }
}

/// The host of `host[:port]` or `[v6]:port`.
pub fn host_of(authority: &str) -> &str {
    let authority = authority.split('/').next().unwrap_or("");
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or("");
    }
    authority.rsplit_once(':').map_or(authority, |(h, _)| h)
}

pub fn is_loopback_name(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Wait for SIGINT or SIGTERM (the end of a door's `serve`).
pub async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => return std::future::pending().await,
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(version: Version, headers: &[(&str, &str)]) -> Request<()> {
        let mut b = Request::builder().uri("/x").version(version);
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(()).unwrap()
    }

    #[test]
    fn ambiguous_framing_is_refused() {
        let ok = |v, h: &[(&str, &str)]| check_framing(&req(v, h)).is_ok();
        assert!(ok(Version::HTTP_11, &[("host", "a")]));
        assert!(ok(Version::HTTP_10, &[]));
        assert!(!ok(Version::HTTP_11, &[]));
        assert!(!ok(Version::HTTP_11, &[("host", "a"), ("host", "b")]));
        assert!(!ok(
            Version::HTTP_11,
            &[
                ("host", "a"),
                ("content-length", "1"),
                ("content-length", "1")
            ]
        ));
    }

    #[test]
    fn hosts_must_be_loopback_unless_remote_is_allowed() {
        let ok =
            |h: &str, remote| check_host(&req(Version::HTTP_11, &[("host", h)]), remote).is_ok();
        assert!(ok("127.0.0.1:8080", false) && ok("localhost", false) && ok("[::1]:1", false));
        assert!(!ok("evil.example:8080", false));
        assert!(ok("api.internal", true));
    }

    #[tokio::test]
    async fn a_remote_address_needs_allow_remote() {
        let err = bind("0.0.0.0:0".parse().unwrap(), false).await.unwrap_err();
        assert!(err.to_string().contains("--allow-remote"));
    }
}
