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
//! HTTP itself is the one stack of pare's network doors (`pare_http::server`, hyper on
//! tokio, shared with `pare http`): connection cap, whole-head deadline, head size caps and
//! ambiguous framing are handled there. The sessions and their proxies stay threads; each
//! response stream is fed from one (`pare_http::body::channel`).
//!
//! Safe by default: pare listens on loopback unless `allow_remote`; the `Host` header must
//! name a loopback host unless `allow_remote` (DNS rebinding), and a browser's `Origin`
//! must be loopback or listed (403 otherwise). Sessions, connections and bodies are
//! bounded, in all and per client address (so one client cannot take every slot); a
//! session idle longer than its limit is closed, and one never used (initialized, then
//! no request and no GET stream) within seconds. Not supported: SSE resumption
//! (`Last-Event-ID`) and JSON-RPC batches (answered 400).
//!
//! ```no_run
//! # fn opts() -> pare_mcp::Options { unimplemented!() }
//! use pare_mcp::listen::{Listen, Upstream, serve};
//! let listen = Listen::loopback(8765);
//! serve(opts(), Upstream::Command(vec!["mcp-server".into()]), listen).unwrap();
//! ```

mod router;
mod session;

pub use session::Upstream;

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use bytes::Bytes;
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use pare_http::body::{self as http_body, Body, Feed, ReadError};
use serde_json::Value as Json;

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
/// How long a request's head may take, from the connection's start (or the previous
/// response on a kept-alive connection).
pub const HEAD_DEADLINE: Duration = Duration::from_secs(10);
/// Chunks of a response stream in flight to a slow client before its feeding thread waits.
const STREAM_CHUNKS: usize = 64;

/// How long a request may take to arrive.
#[derive(Debug, Clone, Copy)]
pub struct Deadlines {
    /// The whole head.
    pub head: Duration,
    /// From the end of its head to the end of its body.
    pub body: Duration,
}

/// Where and how to listen.
#[derive(Debug, Clone)]
pub struct Listen {
    pub addr: SocketAddr,
    /// Accept connections and `Host` names that are not loopback.
    pub allow_remote: bool,
    /// Browser origins allowed besides loopback ones, e.g. `https://app.example.com`.
    pub allowed_origins: Vec<String>,
    pub max_sessions: usize,
    /// Sessions at once from one client ([`pare_http::server::client_of`]); more get 429.
    pub max_sessions_per_client: usize,
    /// Connections at once, at most; more get 503.
    pub max_connections: usize,
    /// Connections at once from one client; more get 429.
    pub max_connections_per_client: usize,
    /// A session with no request for this long is closed.
    pub session_idle: Duration,
    /// A session never used — no request after its initialize, no GET stream — is closed
    /// after this long: opening sessions and leaving them must not lock others out.
    pub session_unused: Duration,
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
            max_sessions_per_client: 16,
            max_connections: 256,
            max_connections_per_client: 64,
            session_idle: Duration::from_secs(30 * 60),
            session_unused: Duration::from_secs(10),
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
}

/// Listen and serve until the process ends. Errors only if the address cannot be bound or
/// is not loopback without `allow_remote`.
pub fn serve(opts: Options, upstream: Upstream, listen: Listen) -> Result<(), McpError> {
    check_addr(&listen)?;
    let addr = listen.addr.to_string();
    let failed = |why: String| McpError::Listen {
        addr: addr.clone(),
        why,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("pare-mcp-http")
        .build()
        .map_err(|e| failed(e.to_string()))?;
    runtime.block_on(async {
        let listener = pare_http::server::bind(listen.addr, listen.allow_remote)
            .await
            .map_err(|e| failed(e.to_string()))?;
        let local = listener.local_addr().map_err(|e| failed(e.to_string()))?;
        log(&format!("listening on http://{local}{ENDPOINT}"));
        let limits = pare_http::server::Limits {
            max_connections: listen.max_connections,
            max_connections_per_client: listen.max_connections_per_client,
            header_deadline: listen.deadlines.head,
            ..pare_http::server::Limits::default()
        };
        let server = Arc::new(Server {
            opts: Arc::new(opts),
            upstream,
            listen,
            sessions: Mutex::new(HashMap::new()),
        });
        {
            let server = server.clone();
            thread::spawn(move || reap_idle_sessions(&server));
        }
        let handler: pare_http::server::Handler = Arc::new(move |req, peer| {
            let server = server.clone();
            Box::pin(async move { handle(&server, req, peer).await })
        });
        pare_http::server::serve(listener, limits, handler, std::future::pending()).await;
        Ok(())
    })
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

/// Close sessions idle past `session_idle`, and those never used past `session_unused`.
fn reap_idle_sessions(server: &Server) {
    let listen = &server.listen;
    let every = (listen.session_idle.min(listen.session_unused) / 4)
        .clamp(Duration::from_millis(50), Duration::from_secs(30));
    loop {
        thread::sleep(every);
        let idle: Vec<(Arc<Session>, &str)> = server
            .sessions
            .lock()
            .expect("sessions")
            .values()
            .filter_map(|s| {
                if s.idle() > listen.session_idle {
                    Some((s.clone(), "idle too long"))
                } else if !s.used() && s.idle() > listen.session_unused {
                    Some((s.clone(), "never used"))
                } else {
                    None
                }
            })
            .collect();
        for (s, why) in idle {
            log(&format!("session {}: {why}, closed", s.id));
            s.close();
        }
    }
}

/// Answer one request.
async fn handle(server: &Arc<Server>, req: Request<Incoming>, peer: SocketAddr) -> Response<Body> {
    if req.uri().path() != ENDPOINT {
        return refuse(StatusCode::NOT_FOUND, "pare serves MCP at /mcp only");
    }
    if let Err(why) = pare_http::server::check_host_and_origin(
        req.headers(),
        server.listen.allow_remote,
        Some(&server.listen.allowed_origins),
    ) {
        return refuse(StatusCode::FORBIDDEN, &why);
    }
    match *req.method() {
        Method::POST => post(server, req, peer).await,
        Method::GET => get(server, req.headers()),
        Method::DELETE => match session_of(server, req.headers()) {
            Ok(session) => {
                session.close();
                response(StatusCode::OK, &[], http_body::empty())
            }
            Err(refused) => refused.answer(),
        },
        _ => response(
            StatusCode::METHOD_NOT_ALLOWED,
            &[("Allow", "GET, POST, DELETE")],
            http_body::empty(),
        ),
    }
}

fn response(status: StatusCode, headers: &[(&str, &str)], body: Body) -> Response<Body> {
    let mut r = Response::new(body);
    *r.status_mut() = status;
    for (k, v) in headers {
        if let (Ok(k), Ok(v)) = (header::HeaderName::try_from(*k), HeaderValue::from_str(v)) {
            r.headers_mut().append(k, v);
        }
    }
    r
}

/// A JSON-RPC error body with the HTTP status.
fn refuse(status: StatusCode, why: &str) -> Response<Body> {
    let code = if status == StatusCode::NOT_FOUND {
        SESSION_NOT_FOUND
    } else {
        rpc::INVALID_REQUEST
    };
    let body = rpc::error(&Json::Null, code, &format!("pare: {why}"));
    response(
        status,
        &[("Content-Type", "application/json")],
        http_body::full(body),
    )
}

fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The request's session: 400 without a session header, 404 for one pare does not know.
fn session_of(server: &Server, headers: &HeaderMap) -> Result<Arc<Session>, Refusal> {
    let Some(id) = header(headers, "mcp-session-id") else {
        return Err(Refusal(
            StatusCode::BAD_REQUEST,
            "no Mcp-Session-Id header (initialize first)",
        ));
    };
    let found = server.sessions.lock().expect("sessions").get(id).cloned();
    found.ok_or(Refusal(
        StatusCode::NOT_FOUND,
        "no such session (it ended or expired); initialize a new one",
    ))
}

/// A request refused: the status and why (answered by [`refuse`]).
struct Refusal(StatusCode, &'static str);

impl Refusal {
    fn answer(self) -> Response<Body> {
        refuse(self.0, self.1)
    }
}

async fn post(server: &Arc<Server>, req: Request<Incoming>, peer: SocketAddr) -> Response<Body> {
    let (parts, incoming) = req.into_parts();
    let headers = &parts.headers;
    if header(headers, "content-type").is_some_and(|t| !t.to_ascii_lowercase().contains("json")) {
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "POST bodies must be application/json",
        );
    }
    let body = match http_body::read_capped(
        incoming,
        server.opts.max_message_bytes,
        server.listen.deadlines.body,
    )
    .await
    {
        Ok(b) => b,
        Err(ReadError::TooLarge) => {
            return refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                "the message is larger than --max-message-bytes",
            );
        }
        Err(e @ ReadError::TooSlow) => return refuse(StatusCode::REQUEST_TIMEOUT, &e.to_string()),
        Err(e @ ReadError::Broken(_)) => return refuse(StatusCode::BAD_REQUEST, &e.to_string()),
    };
    let msg: Json = match serde_json::from_slice(&body) {
        Ok(m) => m,
        Err(e) => {
            let body = rpc::error(
                &Json::Null,
                rpc::PARSE_ERROR,
                &format!("pare: parse error: {e}"),
            );
            return response(
                StatusCode::BAD_REQUEST,
                &[("Content-Type", "application/json")],
                http_body::full(body),
            );
        }
    };
    if msg.is_array() {
        return refuse(
            StatusCode::BAD_REQUEST,
            "JSON-RPC batches are not supported",
        );
    }
    let method = msg.get("method").and_then(Json::as_str);
    let request_id = msg.get("id").filter(|_| method.is_some()).cloned();
    let (session, new) = match header(headers, "mcp-session-id") {
        // An initialize without an id is a notification nobody can be answered on: it
        // must not start a session (and a server) that no one can address or delete.
        None if method == Some("initialize") && request_id.is_none() => {
            return refuse(
                StatusCode::BAD_REQUEST,
                "initialize must be a request (with an id)",
            );
        }
        None if method == Some("initialize") => {
            let server = server.clone();
            // Starting a session starts a process: off the threads that move bytes.
            match tokio::task::spawn_blocking(move || new_session(&server, peer.ip())).await {
                Ok(Ok(s)) => (s, true),
                Ok(Err((status, why))) => return refuse(status, &why),
                Err(e) => return refuse(StatusCode::SERVICE_UNAVAILABLE, &e.to_string()),
            }
        }
        _ => match session_of(server, headers) {
            Ok(s) => (s, false),
            Err(refused) => return refused.answer(),
        },
    };
    if !new && request_id.is_some() {
        session.mark_used();
    }
    let Some(id) = request_id else {
        // A notification or a response to the server: accepted, nothing to wait for.
        if !session.send(body.to_vec()) {
            return refuse(StatusCode::NOT_FOUND, "the session has ended");
        }
        return response(StatusCode::ACCEPTED, &[], http_body::empty());
    };
    let sse = header(headers, "accept")
        .is_some_and(|a| a.to_ascii_lowercase().contains("text/event-stream"));
    let Some((no, rx)) = session.router.open_post(id_key(&id), sse) else {
        return refuse(StatusCode::NOT_FOUND, "the session has ended");
    };
    if !session.send(body.to_vec()) {
        session.router.close_post(no);
        return refuse(StatusCode::NOT_FOUND, "the session has ended");
    }
    let mut out_headers = vec![("Cache-Control", "no-cache")];
    let id_header = session.id.clone();
    if new {
        out_headers.push(("Mcp-Session-Id", id_header.as_str()));
    }
    let router = session.router.clone();
    if sse {
        out_headers.push(("Content-Type", "text/event-stream"));
        let (feed, body) = http_body::channel(STREAM_CHUNKS);
        thread::spawn(move || {
            stream_events(&feed, &rx, true);
            router.close_post(no);
        });
        return response(StatusCode::OK, &out_headers, body);
    }
    out_headers.push(("Content-Type", "application/json"));
    let (feed, body) = http_body::channel(STREAM_CHUNKS);
    let (started_tx, started) = tokio::sync::oneshot::channel();
    thread::spawn(move || {
        json_response(&feed, &rx, started_tx);
        router.close_post(no);
    });
    match started.await {
        Ok(true) => response(StatusCode::OK, &out_headers, body),
        _ => {
            let err = rpc::error(
                &Json::Null,
                rpc::INTERNAL_ERROR,
                "pare: the session ended before the server answered",
            );
            response(
                StatusCode::INTERNAL_SERVER_ERROR,
                &[("Content-Type", "application/json")],
                http_body::full(err),
            )
        }
    }
}

/// Start a session for an initialize request from `peer`: refused with 503 when the
/// server holds `max_sessions`, with 429 when `peer`'s client holds its share.
fn new_session(server: &Arc<Server>, peer: IpAddr) -> Result<Arc<Session>, (StatusCode, String)> {
    let client = pare_http::server::client_of(peer);
    {
        let sessions = server.sessions.lock().expect("sessions");
        if sessions.len() >= server.listen.max_sessions {
            return Err((
                StatusCode::SERVICE_UNAVAILABLE,
                format!("too many sessions (at most {})", server.listen.max_sessions),
            ));
        }
        let mine = sessions.values().filter(|s| s.client == client).count();
        if mine >= server.listen.max_sessions_per_client {
            return Err((
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "too many sessions from your address (at most {}); DELETE one you no longer use",
                    server.listen.max_sessions_per_client
                ),
            ));
        }
    }
    let unavailable = |why: String| (StatusCode::SERVICE_UNAVAILABLE, why);
    let id =
        session_id().map_err(|e| unavailable(format!("no randomness for a session id: {e}")))?;
    let weak = Arc::downgrade(server);
    let key = id.clone();
    let session = Session::start(
        id,
        client,
        server.opts.clone(),
        &server.upstream,
        move || {
            if let Some(server) = weak.upgrade() {
                server.sessions.lock().expect("sessions").remove(&key);
            }
        },
    )
    .map_err(|e| unavailable(e.to_string()))?;
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

fn get(server: &Arc<Server>, headers: &HeaderMap) -> Response<Body> {
    let session = match session_of(server, headers) {
        Ok(s) => s,
        Err(refused) => return refused.answer(),
    };
    if !header(headers, "accept")
        .is_some_and(|a| a.to_ascii_lowercase().contains("text/event-stream"))
    {
        return refuse(
            StatusCode::NOT_ACCEPTABLE,
            "the GET stream is text/event-stream; accept it",
        );
    }
    session.touch();
    session.mark_used();
    let Some((no, rx)) = session.router.open_get() else {
        return refuse(StatusCode::NOT_FOUND, "the session has ended");
    };
    let router = session.router.clone();
    let (feed, body) = http_body::channel(STREAM_CHUNKS);
    thread::spawn(move || {
        stream_events(&feed, &rx, false);
        router.close_get(no);
    });
    response(
        StatusCode::OK,
        &[
            ("Content-Type", "text/event-stream"),
            ("Cache-Control", "no-cache"),
        ],
        body,
    )
}

/// Feed each message from `rx` to `out` as an SSE event until the response arrives
/// (`until_response`), the stream is closed, or the client goes; a comment every
/// [`KEEPALIVE`] while quiet.
fn stream_events(out: &Feed, rx: &Receiver<Delivery>, until_response: bool) {
    let mut in_message = false;
    loop {
        match rx.recv_timeout(KEEPALIVE) {
            Ok(d) => {
                let mut chunk = Vec::with_capacity(d.bytes.len() + 24);
                if !in_message {
                    chunk.extend_from_slice(b"event: message\ndata: ");
                }
                chunk.extend_from_slice(&d.bytes);
                if d.last {
                    chunk.extend_from_slice(b"\n\n");
                }
                if !out.send(Bytes::from(chunk)) {
                    return;
                }
                in_message = !d.last;
                if d.last && d.response && until_response {
                    return;
                }
            }
            Err(RecvTimeoutError::Timeout) if !in_message => {
                if !out.send(Bytes::from_static(b": keepalive\n\n")) {
                    return;
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// Feed the response from `rx` to `out` as one JSON body; `started` says whether one
/// began (the status is decided by then).
fn json_response(out: &Feed, rx: &Receiver<Delivery>, started: tokio::sync::oneshot::Sender<bool>) {
    let mut started = Some(started);
    while let Ok(d) = rx.recv() {
        if !d.response {
            continue; // only SSE streams carry other messages; none are routed here
        }
        if let Some(s) = started.take() {
            let _ = s.send(true);
        }
        if !out.send(Bytes::from(d.bytes)) || d.last {
            return;
        }
    }
    if let Some(s) = started.take() {
        let _ = s.send(false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
