//! `pare mcp --listen ADDR`: serve MCP's streamable HTTP transport (spec 2025-06-18, also
//! 2025-03-26) to clients, in front of a stdio server or an HTTP upstream.
//!
//! One endpoint (`/mcp`): a client POSTs each JSON-RPC message; a request's POST is answered
//! with an SSE stream (or one JSON body, if the client does not accept SSE) that carries
//! the server's messages about it and then its response; notifications and responses get
//! 202. A GET opens the stream for everything else the server sends (sampling, elicitation,
//! roots, logging, list changes); a DELETE ends the session. Each session (`Mcp-Session-Id`,
//! 128 random bits, given on the initialize response) has its own upstream and proxy
//! (`session.rs`); messages are routed back by JSON-RPC id (`router.rs`).
//!
//! Safe by default: pare listens on loopback unless `allow_remote`; the `Host` header must
//! name a loopback host unless `allow_remote` (DNS rebinding), and a browser's `Origin`
//! must be loopback or listed (403 otherwise). Sessions, connections and bodies are
//! bounded; a session idle longer than its limit is closed. Not supported: SSE resumption
//! (`Last-Event-ID`) and JSON-RPC batches (answered 400).
//!
//! ```no_run
//! # fn opts() -> pare_mcp::Options { unimplemented!() }
//! use pare_mcp::listen::{Listen, Upstream, serve};
//! let listen = Listen::loopback(8765);
//! serve(opts(), Upstream::Command(vec!["mcp-server".into()]), listen).unwrap();
//! ```

mod http;
mod router;
mod session;

pub use session::Upstream;

use std::collections::HashMap;
use std::io::{BufReader, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value as Json;

pub use self::http::Deadlines;
use self::http::{Chunked, ReadError, Request, Timed, read_request, respond};
use self::router::Delivery;
use self::session::Session;
use crate::McpError;
use crate::proxy::{Options, log};
use crate::rpc::{self, id_key};

/// The one endpoint served.
pub const ENDPOINT: &str = "/mcp";
/// How often an idle SSE stream gets a comment, so a client that left is noticed.
const KEEPALIVE: Duration = Duration::from_secs(15);
/// The JSON-RPC error code of an unknown session (the one MCP's SDKs use).
const SESSION_NOT_FOUND: i64 = -32001;
/// How long a keep-alive connection may wait for its next request.
const CONNECTION_IDLE: Duration = Duration::from_secs(300);
/// How long a request's head may take, from its first byte (and a new connection's first
/// request from the connection's start).
pub const HEAD_DEADLINE: Duration = Duration::from_secs(10);

/// Where and how to listen.
#[derive(Debug, Clone)]
pub struct Listen {
    pub addr: SocketAddr,
    /// Accept connections and `Host` names that are not loopback.
    pub allow_remote: bool,
    /// Browser origins allowed besides loopback ones, e.g. `https://app.example.com`.
    pub allowed_origins: Vec<String>,
    pub max_sessions: usize,
    /// Connections at once, at most; more get 503.
    pub max_connections: usize,
    /// A session with no request for this long is closed.
    pub session_idle: Duration,
    /// How long a request's head and body may take to arrive (a slow peer holds a
    /// connection no longer).
    pub deadlines: Deadlines,
}

impl Listen {
    /// Loopback on `port`, with the default limits.
    pub fn loopback(port: u16) -> Listen {
        Listen {
            addr: SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port),
            allow_remote: false,
            allowed_origins: Vec::new(),
            max_sessions: 64,
            max_connections: 256,
            session_idle: Duration::from_secs(30 * 60),
            deadlines: Deadlines {
                head: HEAD_DEADLINE,
                body: Duration::from_secs(60),
            },
        }
    }
}

struct Server {
    opts: Arc<Options>,
    upstream: Upstream,
    listen: Listen,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    connections: AtomicUsize,
}

/// Listen and serve until the process ends. Errors only if the address cannot be bound or
/// is not loopback without `allow_remote`.
pub fn serve(opts: Options, upstream: Upstream, listen: Listen) -> Result<(), McpError> {
    check_addr(&listen)?;
    let listener = TcpListener::bind(listen.addr).map_err(|e| McpError::Listen {
        addr: listen.addr.to_string(),
        why: e.to_string(),
    })?;
    let local = listener.local_addr().map_err(|e| McpError::Listen {
        addr: listen.addr.to_string(),
        why: e.to_string(),
    })?;
    log(&format!("listening on http://{local}{ENDPOINT}"));
    let server = Arc::new(Server {
        opts: Arc::new(opts),
        upstream,
        listen,
        sessions: Mutex::new(HashMap::new()),
        connections: AtomicUsize::new(0),
    });
    {
        let server = server.clone();
        thread::spawn(move || reap_idle_sessions(&server));
    }
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        if server.connections.fetch_add(1, Ordering::SeqCst) >= server.listen.max_connections {
            server.connections.fetch_sub(1, Ordering::SeqCst);
            let mut s = stream;
            let _ = respond(&mut s, 503, &[], b"too many connections", false);
            continue;
        }
        let server = server.clone();
        thread::spawn(move || {
            serve_connection(&server, stream);
            server.connections.fetch_sub(1, Ordering::SeqCst);
        });
    }
    Ok(())
}

/// Only loopback unless remote clients are allowed.
fn check_addr(listen: &Listen) -> Result<(), McpError> {
    if !listen.allow_remote && !listen.addr.ip().is_loopback() {
        return Err(McpError::Listen {
            addr: listen.addr.to_string(),
            why: "not a loopback address; pass --allow-remote to serve other hosts".into(),
        });
    }
    Ok(())
}

fn reap_idle_sessions(server: &Server) {
    let every =
        (server.listen.session_idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(30));
    loop {
        thread::sleep(every);
        let idle: Vec<Arc<Session>> = server
            .sessions
            .lock()
            .expect("sessions")
            .values()
            .filter(|s| s.idle() > server.listen.session_idle)
            .cloned()
            .collect();
        for s in idle {
            log(&format!("session {}: idle too long, closed", s.id));
            s.close();
        }
    }
}

fn serve_connection(server: &Arc<Server>, stream: TcpStream) {
    let _ = stream.set_nodelay(true);
    let Ok(mut out) = stream.try_clone() else {
        return;
    };
    let limits = server.listen.deadlines;
    // The first request must start within the head deadline: a connection that sends
    // nothing holds a slot no longer than one that sends slowly.
    let (timed, deadline) = Timed::new(stream, Instant::now() + limits.head);
    let mut input = BufReader::with_capacity(1 << 16, timed);
    loop {
        let req = match read_request(&mut input, server.opts.max_message_bytes, &deadline, limits) {
            Ok(r) => r,
            Err(ReadError::Closed) => return,
            Err(ReadError::Refused(status, why)) => {
                let _ = respond(&mut out, status, &[], why.as_bytes(), false);
                return;
            }
        };
        let keep = req.keep_alive;
        match handle(server, req, &mut out) {
            Ok(true) if keep => deadline.set(Instant::now() + CONNECTION_IDLE),
            _ => return,
        }
    }
}

/// Answer one request. `Ok(true)`: the connection may carry another.
fn handle(server: &Arc<Server>, req: Request, out: &mut TcpStream) -> std::io::Result<bool> {
    if req.path != ENDPOINT {
        return refuse(out, 404, "pare serves MCP at /mcp only", req.keep_alive);
    }
    if let Err(why) = check_host_and_origin(&server.listen, &req) {
        return refuse(out, 403, &why, req.keep_alive);
    }
    match req.method.as_str() {
        "POST" => post(server, req, out),
        "GET" => get(server, &req, out),
        "DELETE" => {
            let Some(session) = session_of(server, &req, out)? else {
                return Ok(req.keep_alive);
            };
            session.close();
            respond(out, 200, &[], b"", req.keep_alive)?;
            Ok(req.keep_alive)
        }
        _ => {
            respond(
                out,
                405,
                &[("Allow", "GET, POST, DELETE")],
                b"",
                req.keep_alive,
            )?;
            Ok(req.keep_alive)
        }
    }
}

/// A JSON-RPC error body with the HTTP status; `Ok(keep_alive)`.
fn refuse(out: &mut TcpStream, status: u16, why: &str, keep_alive: bool) -> std::io::Result<bool> {
    let code = if status == 404 {
        SESSION_NOT_FOUND
    } else {
        rpc::INVALID_REQUEST
    };
    let body = rpc::error(&Json::Null, code, &format!("pare: {why}"));
    respond(
        out,
        status,
        &[("Content-Type", "application/json")],
        &body,
        keep_alive,
    )?;
    Ok(keep_alive)
}

/// The request's session: 400 without a session header, 404 for one pare does not know.
fn session_of(
    server: &Server,
    req: &Request,
    out: &mut TcpStream,
) -> std::io::Result<Option<Arc<Session>>> {
    let Some(id) = req.header("mcp-session-id") else {
        refuse(
            out,
            400,
            "no Mcp-Session-Id header (initialize first)",
            req.keep_alive,
        )?;
        return Ok(None);
    };
    let found = server.sessions.lock().expect("sessions").get(id).cloned();
    if found.is_none() {
        refuse(
            out,
            404,
            "no such session (it ended or expired); initialize a new one",
            req.keep_alive,
        )?;
    }
    Ok(found)
}

fn post(server: &Arc<Server>, req: Request, out: &mut TcpStream) -> std::io::Result<bool> {
    let keep = req.keep_alive;
    if req
        .header("content-type")
        .is_some_and(|t| !t.to_ascii_lowercase().contains("json"))
    {
        return refuse(out, 415, "POST bodies must be application/json", keep);
    }
    let msg: Json = match serde_json::from_slice(&req.body) {
        Ok(m) => m,
        Err(e) => {
            let body = rpc::error(
                &Json::Null,
                rpc::PARSE_ERROR,
                &format!("pare: parse error: {e}"),
            );
            respond(
                out,
                400,
                &[("Content-Type", "application/json")],
                &body,
                keep,
            )?;
            return Ok(keep);
        }
    };
    if msg.is_array() {
        return refuse(out, 400, "JSON-RPC batches are not supported", keep);
    }
    let method = msg.get("method").and_then(Json::as_str);
    let request_id = msg.get("id").filter(|_| method.is_some()).cloned();
    let (session, new) = match req.header("mcp-session-id") {
        // An initialize without an id is a notification nobody can be answered on: it
        // must not start a session (and a server) that no one can address or delete.
        None if method == Some("initialize") && request_id.is_none() => {
            return refuse(out, 400, "initialize must be a request (with an id)", keep);
        }
        None if method == Some("initialize") => match new_session(server) {
            Ok(s) => (s, true),
            Err(why) => return refuse(out, 503, &why, keep),
        },
        _ => match session_of(server, &req, out)? {
            Some(s) => (s, false),
            None => return Ok(keep),
        },
    };
    let Some(id) = request_id else {
        // A notification or a response to the server: accepted, nothing to wait for.
        if !session.send(req.body) {
            return refuse(out, 404, "the session has ended", keep);
        }
        respond(out, 202, &[], b"", keep)?;
        return Ok(keep);
    };
    let sse = req
        .header("accept")
        .is_some_and(|a| a.to_ascii_lowercase().contains("text/event-stream"));
    let Some((no, rx)) = session.router.open_post(id_key(&id), sse) else {
        return refuse(out, 404, "the session has ended", keep);
    };
    if !session.send(req.body) {
        session.router.close_post(no);
        return refuse(out, 404, "the session has ended", keep);
    }
    let mut headers = vec![("Cache-Control", "no-cache")];
    if new {
        headers.push(("Mcp-Session-Id", session.id.as_str()));
    }
    let result = if sse {
        headers.push(("Content-Type", "text/event-stream"));
        stream_events(out, &headers, &rx, true)
    } else {
        headers.push(("Content-Type", "application/json"));
        json_response(out, &headers, &rx)
    };
    session.router.close_post(no);
    result.map(|()| keep)
}

/// Start a session for an initialize request.
fn new_session(server: &Arc<Server>) -> Result<Arc<Session>, String> {
    if server.sessions.lock().expect("sessions").len() >= server.listen.max_sessions {
        return Err(format!(
            "too many sessions (at most {})",
            server.listen.max_sessions
        ));
    }
    let id = session_id().map_err(|e| format!("no randomness for a session id: {e}"))?;
    let weak = Arc::downgrade(server);
    let key = id.clone();
    let session = Session::start(id, server.opts.clone(), &server.upstream, move || {
        if let Some(server) = weak.upgrade() {
            server.sessions.lock().expect("sessions").remove(&key);
        }
    })
    .map_err(|e| e.to_string())?;
    log(&format!("session {}: started", session.id));
    server
        .sessions
        .lock()
        .expect("sessions")
        .insert(session.id.clone(), session.clone());
    Ok(session)
}

/// 128 random bits as 32 hex digits (visible ASCII, as the spec asks).
fn session_id() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn get(server: &Arc<Server>, req: &Request, out: &mut TcpStream) -> std::io::Result<bool> {
    let Some(session) = session_of(server, req, out)? else {
        return Ok(req.keep_alive);
    };
    if !req
        .header("accept")
        .is_some_and(|a| a.to_ascii_lowercase().contains("text/event-stream"))
    {
        return refuse(
            out,
            406,
            "the GET stream is text/event-stream; accept it",
            req.keep_alive,
        );
    }
    session.touch();
    let Some((no, rx)) = session.router.open_get() else {
        return refuse(out, 404, "the session has ended", req.keep_alive);
    };
    let headers = [
        ("Content-Type", "text/event-stream"),
        ("Cache-Control", "no-cache"),
    ];
    let result = stream_events(out, &headers, &rx, false);
    session.router.close_get(no);
    result.map(|()| req.keep_alive)
}

/// Write each message from `rx` as an SSE event until the response arrives (`until_response`)
/// or the stream is closed; a comment every [`KEEPALIVE`] while quiet.
fn stream_events(
    out: &mut TcpStream,
    headers: &[(&str, &str)],
    rx: &std::sync::mpsc::Receiver<Delivery>,
    until_response: bool,
) -> std::io::Result<()> {
    let mut body = Chunked::start(out, 200, headers)?;
    let mut in_message = false;
    loop {
        match rx.recv_timeout(KEEPALIVE) {
            Ok(d) => {
                let open: &[u8] = if in_message {
                    b""
                } else {
                    b"event: message\ndata: "
                };
                let close: &[u8] = if d.last { b"\n\n" } else { b"" };
                body.send(&[open, &d.bytes, close])?;
                in_message = !d.last;
                if d.last && d.response && until_response {
                    break;
                }
            }
            Err(RecvTimeoutError::Timeout) if !in_message => body.send(&[b": keepalive\n\n"])?,
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    body.finish()
}

/// Write the response from `rx` as one JSON body (chunked, so a large one is not held).
fn json_response(
    out: &mut TcpStream,
    headers: &[(&str, &str)],
    rx: &std::sync::mpsc::Receiver<Delivery>,
) -> std::io::Result<()> {
    let mut body: Option<Chunked<'_, TcpStream>> = None;
    while let Ok(d) = rx.recv() {
        if !d.response {
            continue; // only SSE streams carry other messages; none are routed here
        }
        if body.is_none() {
            body = Some(Chunked::start(out, 200, headers)?);
        }
        let b = body.as_mut().expect("started");
        b.send(&[&d.bytes])?;
        if d.last {
            break;
        }
    }
    match body {
        Some(b) => b.finish(),
        None => {
            let err = rpc::error(
                &Json::Null,
                rpc::INTERNAL_ERROR,
                "pare: the session ended before the server answered",
            );
            respond(
                out,
                500,
                &[("Content-Type", "application/json")],
                &err,
                true,
            )?;
            out.flush()
        }
    }
}

/// DNS rebinding and cross-site protection: the `Host` must be loopback (unless remote
/// clients are allowed) and a browser's `Origin` loopback or listed.
fn check_host_and_origin(listen: &Listen, req: &Request) -> Result<(), String> {
    if !listen.allow_remote
        && let Some(host) = req.header("host")
        && !is_loopback_name(host_of(host))
    {
        return Err(format!(
            "Host `{host}` is not a loopback name (pass --allow-remote to serve others)"
        ));
    }
    if let Some(origin) = req.header("origin") {
        let allowed = listen
            .allowed_origins
            .iter()
            .any(|o| o.trim_end_matches('/') == origin)
            || origin.split_once("://").is_some_and(|(scheme, rest)| {
                matches!(scheme, "http" | "https") && is_loopback_name(host_of(rest))
            });
        if !allowed {
            return Err(format!(
                "Origin `{origin}` is not allowed (loopback, or --allow-origin)"
            ));
        }
    }
    Ok(())
}

/// The host of `host[:port]` or `[v6]:port`.
fn host_of(authority: &str) -> &str {
    let authority = authority.split('/').next().unwrap_or("");
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or("");
    }
    authority.rsplit_once(':').map_or(authority, |(h, _)| h)
}

fn is_loopback_name(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(headers: &[(&str, &str)]) -> Request {
        Request {
            method: "POST".into(),
            path: ENDPOINT.into(),
            headers: headers
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            body: Vec::new(),
            keep_alive: true,
        }
    }

    #[test]
    fn hosts_and_origins_must_be_loopback_or_listed() {
        let mut l = Listen::loopback(0);
        l.allowed_origins = vec!["https://app.example.com".into()];
        let ok = |h: &[(&str, &str)]| check_host_and_origin(&l, &req(h)).is_ok();
        assert!(ok(&[("host", "127.0.0.1:8765")]));
        assert!(ok(&[
            ("host", "localhost:8765"),
            ("origin", "http://localhost:3000")
        ]));
        assert!(ok(&[
            ("host", "[::1]:8765"),
            ("origin", "http://[::1]:3000")
        ]));
        assert!(ok(&[("origin", "https://app.example.com")]));
        assert!(!ok(&[("host", "evil.example:8765")]));
        assert!(!ok(&[("origin", "http://evil.example")]));
        assert!(!ok(&[("origin", "null")]));
        l.allow_remote = true;
        assert!(check_host_and_origin(&l, &req(&[("host", "pare.internal:8765")])).is_ok());
    }

    #[test]
    fn session_ids_are_32_hex_digits_and_differ() {
        let a = session_id().unwrap();
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(a, session_id().unwrap());
    }

    #[test]
    fn a_remote_address_needs_allow_remote() {
        let mut l = Listen::loopback(0);
        l.addr = "0.0.0.0:0".parse().unwrap();
        let why = match check_addr(&l) {
            Err(McpError::Listen { why, .. }) => why,
            other => panic!("{other:?}"),
        };
        assert!(why.contains("--allow-remote"));
        l.allow_remote = true;
        assert!(check_addr(&l).is_ok());
    }
}
