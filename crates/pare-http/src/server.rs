//! Listening, written once for every HTTP door (`pare http`, `pare mcp --listen`).
//!
//! hyper's HTTP/1.1 server does the protocol; this module bounds what a client can cost:
//!
//! - **Loopback unless allowed**: [`bind`] refuses a non-loopback address without
//!   `allow_remote`, and [`check_host_and_origin`] a `Host` that names no loopback host (DNS
//!   rebinding: a web page whose name resolves to 127.0.0.1 must not reach the door).
//! - **Connections**: at most [`Limits::max_connections`] at once; one more is answered
//!   `503` and closed at once, so a flood is told rather than queued. One client (an IPv4
//!   address, or an IPv6 /64, see [`client_of`]) holds at most
//!   [`Limits::max_connections_per_client`] of them; one more is answered `429`, so a
//!   single client's idle sockets cannot take the slots everyone else needs.
//! - **Time**: a request's whole head must arrive within [`Limits::header_deadline`] of
//!   the connection's start (or of the previous response, on a kept-alive connection):
//!   slow-header clients (slowloris) are cut off and their slots freed.
//! - **Size**: the head is at most [`Limits::max_head_bytes`] and
//!   [`Limits::max_headers`] headers (431 beyond, [`check_head_size`]). Framing RFC 9112
//!   calls ambiguous is
//!   refused with 400 by [`check_framing`]: more than one `Host` or `Content-Length`, or
//!   no `Host` in HTTP/1.1.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper::body::Incoming;
use hyper::header::{CONTENT_LENGTH, HOST, HeaderMap, HeaderName, ORIGIN};
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
    /// Connections at once from one client ([`client_of`]); more get 429.
    pub max_connections_per_client: usize,
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
            max_connections_per_client: 256,
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
    serve_tls(listener, limits, handler, None, shutdown).await;
}

/// [`serve`], over TLS when `tls` is given: the handshake counts against the head's
/// deadline, so a client that never finishes it frees its slot like a slow head does.
pub async fn serve_tls(
    listener: TcpListener,
    limits: Limits,
    handler: Handler,
    tls: Option<tokio_rustls::TlsAcceptor>,
    shutdown: impl Future<Output = ()>,
) {
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let per_client = Arc::new(ClientSlots::new(limits.max_connections_per_client));
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
        // A TLS client cannot read a plain answer: it is closed at once instead.
        let plain = tls.is_none();
        let Some(client_slot) = per_client.take(peer.ip()) else {
            if plain {
                tokio::spawn(refuse_connection(stream, TOO_MANY_FROM_CLIENT));
            }
            continue;
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            if plain {
                tokio::spawn(refuse_connection(stream, TOO_MANY));
            }
            continue;
        };
        let handler = handler.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            let _ = stream.set_nodelay(true);
            match tls {
                None => serve_connection(stream, peer, limits, handler).await,
                Some(acceptor) => {
                    let handshake =
                        tokio::time::timeout(limits.header_deadline, acceptor.accept(stream));
                    if let Ok(Ok(stream)) = handshake.await {
                        serve_connection(stream, peer, limits, handler).await;
                    }
                }
            }
            drop(slot);
            drop(client_slot);
        });
    }
}

async fn serve_connection<S>(stream: S, peer: SocketAddr, limits: Limits, handler: Handler)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let max_head = limits.max_head_bytes;
    let service = service_fn(move |req: Request<Incoming>| {
        let handler = handler.clone();
        async move {
            let checked = check_framing(&req).and_then(|()| check_head_size(&req, max_head));
            if let Err((status, why)) = checked {
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

const TOO_MANY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: 51\r\nConnection: close\r\nRetry-After: 1\r\n\r\n{\"error\":\"pare: too many connections; retry later\"}";
const TOO_MANY_FROM_CLIENT: &[u8] = b"HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nContent-Length: 69\r\nConnection: close\r\nRetry-After: 1\r\n\r\n{\"error\":\"pare: too many connections from your address; retry later\"}";

/// Too many connections (in all, or from this client): say so and close.
async fn refuse_connection(mut stream: TcpStream, answer: &'static [u8]) {
    let _ = tokio::time::timeout(Duration::from_secs(1), stream.write_all(answer)).await;
    let _ = stream.shutdown().await;
}

/// A network: an address and how many of its leading bits count (`10.0.0.0/8`,
/// `127.0.0.1` = `/32`, `::1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Net {
    addr: IpAddr,
    bits: u8,
}

impl Net {
    /// `ADDR` or `ADDR/BITS`.
    pub fn parse(text: &str) -> Result<Net, String> {
        let (addr, bits) = match text.split_once('/') {
            Some((a, b)) => (a, Some(b)),
            None => (text, None),
        };
        let addr: IpAddr = addr
            .parse()
            .map_err(|_| format!("`{text}`: not an IP address or ADDR/BITS"))?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let bits = match bits {
            None => max,
            Some(b) => b
                .parse::<u8>()
                .ok()
                .filter(|&b| b <= max)
                .ok_or_else(|| format!("`{text}`: the prefix length must be 0 to {max}"))?,
        };
        Ok(Net { addr, bits })
    }

    /// Whether `ip` is in this network (an IPv4-mapped IPv6 address counts as IPv4).
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 => v4,
        };
        let (a, b, width) = match (self.addr, ip) {
            (IpAddr::V4(a), IpAddr::V4(b)) => (u32::from(a) as u128, u32::from(b) as u128, 32),
            (IpAddr::V6(a), IpAddr::V6(b)) => (u128::from(a), u128::from(b), 128),
            _ => return false,
        };
        let shift = width - u32::from(self.bits);
        shift >= width || (a >> shift) == (b >> shift)
    }
}

/// Who a connection counts against: an IPv4 address, or the /64 of an IPv6 one (one host
/// is commonly given a whole /64, so counting single IPv6 addresses would limit nothing).
/// An IPv4-mapped IPv6 address is its IPv4 address.
pub fn client_of(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
    }
}

/// Connections held per client ([`client_of`]), each at most `max`.
struct ClientSlots {
    max: usize,
    held: Mutex<HashMap<IpAddr, usize>>,
}

impl ClientSlots {
    fn new(max: usize) -> ClientSlots {
        ClientSlots {
            max: max.max(1),
            held: Mutex::new(HashMap::new()),
        }
    }

    /// One more connection from `ip`, or `None` if its client holds `max` already.
    fn take(self: &Arc<Self>, ip: IpAddr) -> Option<ClientSlot> {
        let client = client_of(ip);
        let mut held = self.held.lock().expect("client slots");
        let n = held.entry(client).or_insert(0);
        if *n >= self.max {
            return None;
        }
        *n += 1;
        Some(ClientSlot {
            slots: self.clone(),
            client,
        })
    }
}

/// A connection's place in its client's count, given back on drop.
struct ClientSlot {
    slots: Arc<ClientSlots>,
    client: IpAddr,
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        let mut held = self.slots.held.lock().expect("client slots");
        if let Some(n) = held.get_mut(&self.client) {
            *n -= 1;
            if *n == 0 {
                held.remove(&self.client);
            }
        }
    }
}

/// A head over `max` bytes, as written (request line, each header line with its `: ` and
/// line end): 431. hyper's own limit is on its read buffer, which let one 100,000-byte
/// header through a 64 KiB limit.
pub fn check_head_size<B>(req: &Request<B>, max: usize) -> Result<(), (StatusCode, &'static str)> {
    let line = req.method().as_str().len() + req.uri().to_string().len() + 12;
    let mut size = line;
    for (name, value) in req.headers() {
        size += name.as_str().len() + value.len() + 4;
        if size > max {
            return Err((
                StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
                "the request head is larger than --max-head-bytes",
            ));
        }
    }
    Ok(())
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

/// Who may ask, for both HTTP doors (one check, so they cannot drift apart): without
/// `allow_remote` the `Host` must name a loopback host (DNS rebinding: a web page whose name
/// resolves to 127.0.0.1 must not reach the door); with `origins`, an `Origin` must be a
/// loopback origin or one listed (a page of another site must not drive the door from a
/// browser). A header that is not text is refused, never read as absent.
pub fn check_host_and_origin(
    headers: &HeaderMap,
    allow_remote: bool,
    origins: Option<&[String]>,
) -> Result<(), String> {
    let text = |name: HeaderName| -> Result<Option<&str>, String> {
        headers
            .get(&name)
            .map(|v| {
                v.to_str()
                    .map_err(|_| format!("the {name} header is not text"))
            })
            .transpose()
    };
    if !allow_remote
        && let Some(host) = text(HOST)?
        && !is_loopback_name(host_of(host))
    {
        return Err(format!(
            "Host `{host}` is not a loopback name (pass --allow-remote to serve others)"
        ));
    }
    if let Some(allowed) = origins
        && let Some(origin) = text(ORIGIN)?
    {
        let listed = allowed.iter().any(|o| o.trim_end_matches('/') == origin);
        let loopback = origin.split_once("://").is_some_and(|(scheme, rest)| {
            matches!(scheme, "http" | "https") && is_loopback_name(host_of(rest))
        });
        if !listed && !loopback {
            return Err(format!(
                "Origin `{origin}` is not allowed (loopback, or --allow-origin)"
            ));
        }
    }
    Ok(())
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
    fn regression_a_100000_byte_header_passed_the_64_kib_head_limit() {
        let big = "a".repeat(100_000);
        let r = req(Version::HTTP_11, &[("host", "a"), ("x-big", &big)]);
        let (status, _) = check_head_size(&r, 64 << 10).unwrap_err();
        assert_eq!(status, StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE);
        let small = req(
            Version::HTTP_11,
            &[("host", "a"), ("x-big", &big[..60_000])],
        );
        assert!(check_head_size(&small, 64 << 10).is_ok());
    }

    #[test]
    fn networks_contain_their_addresses() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        let net = |s: &str| Net::parse(s).unwrap();
        assert!(net("10.0.0.0/8").contains(ip("10.1.2.3")));
        assert!(!net("10.0.0.0/8").contains(ip("11.0.0.1")));
        assert!(net("127.0.0.1").contains(ip("127.0.0.1")));
        assert!(!net("127.0.0.1").contains(ip("127.0.0.2")));
        assert!(net("0.0.0.0/0").contains(ip("8.8.8.8")));
        assert!(net("::1").contains(ip("::1")));
        assert!(net("fd00::/8").contains(ip("fd12::1")));
        assert!(net("192.168.0.0/16").contains(ip("::ffff:192.168.3.4")));
        assert!(!net("::/0").contains(ip("1.2.3.4")));
        assert!(Net::parse("10.0.0.0/33").is_err() && Net::parse("nope").is_err());
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

    fn headers(pairs: &[(&str, &[u8])]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (n, v) in pairs {
            h.append(
                HeaderName::try_from(*n).unwrap(),
                hyper::header::HeaderValue::from_bytes(v).unwrap(),
            );
        }
        h
    }

    #[test]
    fn hosts_must_be_loopback_unless_remote_is_allowed() {
        let ok = |h: &str, remote| {
            check_host_and_origin(&headers(&[("host", h.as_bytes())]), remote, None).is_ok()
        };
        assert!(ok("127.0.0.1:8080", false) && ok("localhost", false) && ok("[::1]:1", false));
        assert!(!ok("evil.example:8080", false));
        assert!(ok("api.internal", true));
    }

    #[test]
    fn hosts_and_origins_must_be_loopback_or_listed() {
        let listed = ["https://app.example.com".to_owned()];
        let ok =
            |h: &[(&str, &[u8])]| check_host_and_origin(&headers(h), false, Some(&listed)).is_ok();
        assert!(ok(&[("host", b"127.0.0.1:8765")]));
        assert!(ok(&[
            ("host", b"localhost:8765"),
            ("origin", b"http://localhost:3000")
        ]));
        assert!(ok(&[
            ("host", b"[::1]:8765"),
            ("origin", b"http://[::1]:3000")
        ]));
        assert!(ok(&[("origin", b"https://app.example.com")]));
        assert!(!ok(&[("host", b"evil.example:8765")]));
        assert!(!ok(&[("origin", b"http://evil.example")]));
        assert!(!ok(&[("origin", b"null")]));
        // Without `origins` (pare http) an Origin is not looked at.
        assert!(check_host_and_origin(&headers(&[("origin", b"null")]), false, None).is_ok());
    }

    /// Regression: `pare mcp --listen` read a Host that is not text as no Host at all, so
    /// `Host: evil.example\xff` started a session where `pare http` answered 403 (two
    /// checks that had drifted apart); an Origin that is not text passed the same way.
    #[test]
    fn regression_a_host_that_is_not_text_passed_the_listen_check() {
        for name in ["host", "origin"] {
            let h = headers(&[(name, b"evil.example\xff")]);
            let why = check_host_and_origin(&h, false, Some(&[])).unwrap_err();
            assert!(why.contains("not text"), "{why}");
        }
    }

    #[tokio::test]
    async fn a_remote_address_needs_allow_remote() {
        let err = bind("0.0.0.0:0".parse().unwrap(), false).await.unwrap_err();
        assert!(err.to_string().contains("--allow-remote"));
    }

    #[test]
    fn a_client_is_an_ipv4_address_or_an_ipv6_64() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(client_of(ip("127.0.0.2")), ip("127.0.0.2"));
        assert_eq!(client_of(ip("::ffff:10.0.0.1")), ip("10.0.0.1"));
        assert_eq!(client_of(ip("2001:db8:1:2:aaaa::1")), ip("2001:db8:1:2::"));
        assert_eq!(
            client_of(ip("2001:db8:1:2::1")),
            client_of(ip("2001:db8:1:2:ffff::9"))
        );
        assert_ne!(
            client_of(ip("2001:db8:1:3::1")),
            client_of(ip("2001:db8:1:2::1"))
        );
    }

    #[test]
    fn one_client_holds_at_most_its_share_and_gets_it_back() {
        let slots = Arc::new(ClientSlots::new(2));
        let a: IpAddr = "127.0.0.2".parse().unwrap();
        let b: IpAddr = "127.0.0.1".parse().unwrap();
        let first = slots.take(a).unwrap();
        let _second = slots.take(a).unwrap();
        assert!(slots.take(a).is_none(), "a third from the same client");
        assert!(
            slots.take(b).is_some(),
            "another client is not counted with it"
        );
        drop(first);
        assert!(
            slots.take(a).is_some(),
            "a closed connection gives its place back"
        );
    }
}
