//! `pare mcp --upstream-url URL`: the upstream server speaks MCP's streamable HTTP transport
//! (spec 2025-06-18, also 2025-03-26) and pare is its client.
//!
//! The proxy core ([`crate::proxy::run`]) moves newline-delimited messages; this module turns
//! HTTP exchanges into those two line streams, so the core is the same for every transport:
//!
//! - [`Outbox`] is the proxy's `upstream_in`: each line written to it is POSTed to the URL
//!   (`Accept: application/json, text/event-stream`). Requests are POSTed on a thread each,
//!   so a long tool call never blocks a ping; `initialize`, notifications and responses are
//!   POSTed in order, in the caller's thread (so `notifications/initialized` reaches the
//!   server before the next request).
//! - [`Inbox`] is the proxy's `upstream_out`: every message the server sends — a JSON reply
//!   body, each event of an SSE reply (server→client requests and notifications first, then
//!   the response), each event of the optional GET stream — comes out as one line.
//!
//! The `Mcp-Session-Id` of the initialize response and the negotiated `MCP-Protocol-Version`
//! go on every later request; the session is DELETEd when the client leaves. A session the
//! server forgot (404) is renewed once — the client's initialize request sent again — and
//! the message retried. An HTTP error status answers that request with a JSON-RPC error; a
//! server that cannot be reached (or that forgets the renewed session too) ends the proxy
//! like an upstream that exited, every open request answered with an error.
//!
//! The HTTP client is the doors' one client ([`pare_http::client`]: hyper-util, rustls for
//! `https`), driven from threads (one per open request: the proxy is thread-based) through
//! its blocking form, one for the whole process.
//!
//! ```no_run
//! # fn opts() -> pare_mcp::Options { unimplemented!() }
//! pare_mcp::http_upstream::run(opts(), "http://127.0.0.1:3001/mcp").unwrap();
//! ```

use std::io::{self, BufRead, BufReader, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use std::sync::OnceLock;

use hyper::{Method, Request, Response, Uri};
use pare_http::client::{Blocking, BodyReader};
use serde_json::Value as Json;

use crate::proxy::{self, Ending, Options, log};
use crate::rpc::{self, Kind};
use crate::sse::{Events, Item};

/// The `Accept` header of every POST (the spec requires both types).
const ACCEPT: &str = "application/json, text/event-stream";

/// Check that `url` is an absolute `http` or `https` URL with a host.
pub fn check_url(url: &str) -> Result<(), String> {
    let uri: Uri = url.parse().map_err(|e| format!("{e}"))?;
    match uri.scheme_str() {
        Some("http" | "https") => {}
        _ => return Err("the scheme must be http or https".into()),
    }
    if uri.host().is_none_or(str::is_empty) {
        return Err("no host".into());
    }
    Ok(())
}

/// Proxy this process's stdin/stdout to the streamable-HTTP MCP server at `url`.
/// Returns when the client closes stdin (Ok) or the server cannot be reached (Err).
pub fn run(opts: Options, url: &str) -> Result<(), crate::McpError> {
    let drain = opts.drain;
    let (outbox, inbox, link) = connect(url, drain, opts.max_message_bytes);
    let client_in = BufReader::with_capacity(1 << 16, io::stdin());
    let ending = proxy::run(opts, client_in, io::stdout(), outbox, inbox);
    link.delete_session();
    let failure = link.failure.lock().expect("failure").take();
    match (ending, failure) {
        (_, Some(why)) => Err(crate::McpError::UpstreamHttp {
            url: url.to_owned(),
            why,
        }),
        (Ending::ClientClosed, None) => Ok(()),
        // The client left first and pare closed the inbox after its requests settled.
        (Ending::UpstreamExited { .. }, None) if link.client_closed.load(Ordering::SeqCst) => {
            Ok(())
        }
        (Ending::UpstreamExited { pending }, None) => Err(crate::McpError::UpstreamExited {
            status: "the HTTP connection ended".into(),
            pending,
        }),
    }
}

/// Messages (or pieces of one too large to hold) waiting for the proxy, at most: a server
/// faster than the client waits rather than filling memory.
const INBOX_DEPTH: usize = 64;

/// The two line streams of an HTTP upstream at `url`, and the link they share.
/// `drain`: how long to let open requests finish once the client has gone. A reply longer
/// than `cap` bytes is passed on in pieces as it arrives, never held whole.
pub fn connect(url: &str, drain: Duration, cap: usize) -> (Outbox, Inbox, Arc<Link>) {
    let (tx, rx) = mpsc::sync_channel(INBOX_DEPTH);
    let link = Arc::new(Link {
        url: url.to_owned(),
        session: Mutex::new(None),
        version: Mutex::new(None),
        inbox: Mutex::new(Some(tx)),
        failure: Mutex::new(None),
        open: (Mutex::new(0), Condvar::new()),
        client_closed: AtomicBool::new(false),
        drain,
        cap,
        init: Mutex::new(None),
        renewing: Mutex::new(()),
    });
    let outbox = Outbox {
        link: link.clone(),
        buf: Vec::new(),
    };
    let inbox = Inbox::new(rx);
    (outbox, inbox, link)
}

/// How long connecting to the upstream may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The `User-Agent` of every request.
const USER_AGENT: &str = concat!("pare-mcp/", env!("CARGO_PKG_VERSION"));

/// The process's one HTTP client (every session of `--listen` shares its pool), or why it
/// could not start. Never dropped: a runtime must not be dropped inside another.
fn client() -> Result<&'static Blocking, String> {
    static CLIENT: OnceLock<Result<Blocking, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            Blocking::new(CONNECT_TIMEOUT).map_err(|e| format!("cannot start an HTTP client: {e}"))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// What the two streams share: the session, the way back to the proxy.
pub struct Link {
    url: String,
    session: Mutex<Option<String>>,
    version: Mutex<Option<String>>,
    /// Messages for the proxy; `None` once closed (the proxy then reads end of input).
    inbox: Mutex<Option<SyncSender<Feed>>>,
    /// Why the upstream is unusable, if it is.
    failure: Mutex<Option<String>>,
    /// Requests being POSTed.
    open: (Mutex<usize>, Condvar),
    client_closed: AtomicBool,
    drain: Duration,
    cap: usize,
    /// The client's initialize request, sent again if the server forgets the session.
    init: Mutex<Option<Vec<u8>>>,
    renewing: Mutex<()>,
}

impl Link {
    /// Why the upstream became unusable, if it did.
    pub fn failure(&self) -> Option<String> {
        self.failure.lock().expect("failure").clone()
    }

    /// Hand one message to the proxy (dropped once the inbox is closed).
    fn deliver(&self, msg: Vec<u8>) {
        self.feed(Feed::Line(msg));
    }

    /// Hand a message or a piece of one to the proxy. The sender is taken out of the lock
    /// first: a full inbox must not keep others from closing it.
    fn feed(&self, feed: Feed) {
        let tx = self.inbox.lock().expect("inbox").clone();
        if let Some(tx) = tx {
            let _ = tx.send(feed);
        }
    }

    /// The upstream is unusable: remember why and end the proxy's upstream stream.
    fn fail(&self, why: String) {
        let mut failure = self.failure.lock().expect("failure");
        if failure.is_none() && !self.client_closed.load(Ordering::SeqCst) {
            log(&why);
            *failure = Some(why);
        }
        drop(failure);
        self.inbox.lock().expect("inbox").take();
    }

    /// The server forgot session `old` (404): start a new one as the client did — its
    /// initialize request again, then `notifications/initialized` — without the client
    /// seeing it. Whether there is a live session now (another thread may have renewed it).
    fn renew(&self, old: &Option<String>) -> bool {
        let _one_at_a_time = self.renewing.lock().expect("renewing");
        if *self.session.lock().expect("session") != *old {
            return true;
        }
        let Some(init) = self.init.lock().expect("init").clone() else {
            return false;
        };
        *self.session.lock().expect("session") = None;
        let renewed = self.post(&init).ok().and_then(|resp| {
            let ok = (200..300).contains(&resp.status().as_u16());
            let session = resp
                .headers()
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            // The initialize response is pare's own business; read it and let it go.
            let _ = resp.into_body().take(1 << 20).read_to_end(&mut Vec::new());
            ok.then_some(session)?
        });
        let Some(session) = renewed else {
            return false;
        };
        *self.session.lock().expect("session") = Some(session);
        let note = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        if self.post(note).is_err() {
            return false;
        }
        log(
            "the upstream MCP server forgot the session (404); pare started a new one and sent the request again (state the server tied to the old session is gone)",
        );
        true
    }

    fn post(&self, body: &[u8]) -> Result<Response<BodyReader>, String> {
        let req = self
            .request(Method::POST)
            .header("Accept", ACCEPT)
            .header("Content-Type", "application/json");
        let body = pare_http::body::full(body.to_vec());
        self.send(req, body, None)
    }

    /// A request to the server with the session's headers.
    fn request(&self, method: Method) -> hyper::http::request::Builder {
        let mut req = Request::builder()
            .method(method)
            .uri(&self.url)
            .header("User-Agent", USER_AGENT);
        if let Some(s) = &*self.session.lock().expect("session") {
            req = req.header("Mcp-Session-Id", s);
        }
        if let Some(v) = &*self.version.lock().expect("version") {
            req = req.header("MCP-Protocol-Version", v);
        }
        req
    }

    /// Send `req` with `body`; the response head within `timeout`, if given.
    fn send(
        &self,
        req: hyper::http::request::Builder,
        body: pare_http::body::Body,
        timeout: Option<Duration>,
    ) -> Result<Response<BodyReader>, String> {
        // The URL was checked and the header values came from the server as text.
        let req = req.body(body).map_err(|e| e.to_string())?;
        client()?.send(req, timeout).map_err(|e| e.to_string())
    }

    /// POST one client message and hand what comes back to the proxy. `id`: the request's
    /// id (it must be answered, by the server or here).
    /// A session the server has forgotten (404) is renewed once and the message sent again.
    fn exchange(self: &Arc<Self>, body: &[u8], id: Option<&Json>, initialize: bool) {
        self.exchange_once(body, id, initialize, true);
    }

    fn exchange_once(
        self: &Arc<Self>,
        body: &[u8],
        id: Option<&Json>,
        initialize: bool,
        may_renew: bool,
    ) {
        let answer = |why: &str| match id {
            Some(id) => self.deliver(rpc::error(id, rpc::INTERNAL_ERROR, why)),
            None => log(why),
        };
        let sent_in = self.session.lock().expect("session").clone();
        let resp = match self.post(body) {
            Ok(r) => r,
            Err(e) => {
                let why = format!("cannot reach the upstream MCP server at {}: {e}", self.url);
                answer(&format!("pare: {why}"));
                self.fail(why);
                return;
            }
        };
        let status = resp.status().as_u16();
        if status == 404 && may_renew && !initialize && sent_in.is_some() && self.renew(&sent_in) {
            return self.exchange_once(body, id, initialize, false);
        }
        if !(200..300).contains(&status) {
            let mut text = Vec::new();
            let _ = resp.into_body().take(400).read_to_end(&mut text);
            let text = String::from_utf8_lossy(&text);
            let why = format!(
                "the upstream MCP server answered HTTP {status}{}{}",
                if text.trim().is_empty() { "" } else { ": " },
                text.trim()
            );
            answer(&format!("pare: {why}"));
            if status == 404 && self.session.lock().expect("session").is_some() {
                self.fail(format!("{why} (the session has expired)"));
            }
            return;
        }
        if initialize
            && let Some(s) = resp.headers().get("mcp-session-id")
            && let Ok(s) = s.to_str()
        {
            *self.session.lock().expect("session") = Some(s.to_owned());
        }
        let kind = content_type(&resp);
        let reader = BufReader::with_capacity(1 << 16, resp.into_body());
        let answered = match kind.as_str() {
            "text/event-stream" => self.read_events(reader, id, initialize, &mut Seen::default()),
            "application/json" => {
                let mut body = Vec::new();
                let mut reader = reader;
                let read = (&mut reader)
                    .take(self.cap as u64 + 1)
                    .read_to_end(&mut body);
                match read {
                    Ok(_) if body.len() > self.cap => self.stream_through(body, reader, id),
                    Ok(_) => self.forward(&body, id, initialize),
                    Err(e) => {
                        answer(&format!("pare: reading the upstream reply failed: {e}"));
                        return;
                    }
                }
            }
            _ => false,
        };
        if id.is_some() && !answered {
            answer(&format!(
                "pare: the upstream MCP server answered HTTP {status} ({}) without a response to this request",
                if kind.is_empty() { "no body" } else { &kind }
            ));
        }
    }

    /// Pass on a JSON reply over the cap, `head` and then the rest of `reader`, in pieces
    /// (the proxy forwards such a message unchanged). It is taken to be the response to `id`:
    /// a message that size is a result, and its id may come last.
    fn stream_through(&self, head: Vec<u8>, mut reader: impl BufRead, id: Option<&Json>) -> bool {
        log(&format!(
            "a reply of more than {} bytes is passed on in pieces, unshaped",
            self.cap
        ));
        self.feed(Feed::Part(one_line(&head)));
        loop {
            let piece = match reader.fill_buf() {
                Ok([]) | Err(_) => break,
                Ok(buf) => one_line(buf),
            };
            reader.consume(piece.len());
            self.feed(Feed::Part(piece));
        }
        self.feed(Feed::Line(Vec::new()));
        id.is_some()
    }

    /// Forward each event of an SSE stream; stop once the response to `id` has passed.
    /// Whether it did. An event over the cap is passed on in pieces and, like a JSON reply
    /// over the cap, taken to be the response.
    fn read_events(
        &self,
        reader: impl BufRead,
        id: Option<&Json>,
        initialize: bool,
        seen: &mut Seen,
    ) -> bool {
        let mut long = false;
        for item in Events::with_cap(reader, self.cap) {
            let event = match item {
                Ok(Item::Event(event)) => event,
                Ok(Item::Part { data, last }) => {
                    if !long {
                        log(&format!(
                            "an event of more than {} bytes is passed on in pieces, unshaped",
                            self.cap
                        ));
                        long = true;
                    }
                    self.feed(Feed::Part(one_line(&data)));
                    if last {
                        self.feed(Feed::Line(Vec::new()));
                        if id.is_some() {
                            return true;
                        }
                        long = false;
                    }
                    continue;
                }
                Err(_) => return false,
            };
            seen.events += 1;
            if event.id.is_some() {
                seen.last_id = event.id.clone();
            }
            if event.data.trim().is_empty() {
                continue;
            }
            if self.forward(event.data.as_bytes(), id, initialize) && id.is_some() {
                // The server should close the stream now; do not wait for it.
                return true;
            }
        }
        false
    }

    /// Hand the message(s) in `data` (one message or a batch) to the proxy, each on one
    /// line. Whether one of them is the response to `id`.
    fn forward(&self, data: &[u8], id: Option<&Json>, initialize: bool) -> bool {
        let Ok(msg) = serde_json::from_slice::<Json>(data) else {
            // Not JSON: the proxy logs and skips it.
            self.deliver(one_line(data));
            return false;
        };
        let answers = |m: &Json| {
            id.is_some_and(|id| matches!(rpc::kind(m), Some(Kind::Response(r)) if r == id))
        };
        let mut answered = false;
        let mut note = |m: &Json| {
            if answers(m) {
                answered = true;
                if initialize && let Some(v) = m.pointer("/result/protocolVersion") {
                    *self.version.lock().expect("version") = v.as_str().map(str::to_owned);
                }
            }
        };
        match &msg {
            Json::Array(batch) => {
                for m in batch {
                    note(m);
                    self.deliver(serde_json::to_vec(m).expect("serializes"));
                }
            }
            m => {
                note(m);
                self.deliver(one_line(data));
            }
        }
        answered
    }

    /// Open the optional GET stream for messages the server sends on its own, and open it
    /// again whenever it ends while the session lasts (servers and proxies close idle
    /// streams), resuming after the last event id seen (`Last-Event-ID`). Gives up after
    /// [`GET_RETRIES`] tries in a row that bring nothing, waiting longer after each.
    fn listen(self: &Arc<Self>) {
        let link = self.clone();
        thread::spawn(move || {
            let mut seen = Seen::default();
            let mut fruitless = 0;
            while !link.is_over() {
                let before = seen.events;
                match link.open_event_stream(seen.last_id.as_deref()) {
                    Ok(Some(reader)) => {
                        link.read_events(reader, None, false, &mut seen);
                    }
                    Ok(None) => return, // the server offers no such stream
                    Err(why) => {
                        if fruitless + 1 == GET_RETRIES {
                            log(&format!("{why}; messages it sends on its own are lost"));
                        }
                    }
                }
                fruitless = if seen.events > before {
                    0
                } else {
                    fruitless + 1
                };
                if fruitless >= GET_RETRIES {
                    return;
                }
                thread::sleep(Duration::from_millis(250 << fruitless.min(5)));
            }
        });
    }

    /// Whether the link is done: the client left or the upstream failed.
    fn is_over(&self) -> bool {
        self.client_closed.load(Ordering::SeqCst)
            || self.failure.lock().expect("failure").is_some()
            || self.inbox.lock().expect("inbox").is_none()
    }

    /// GET the event stream. `Ok(None)`: the server has none (405).
    fn open_event_stream(
        &self,
        last_id: Option<&str>,
    ) -> Result<Option<impl BufRead + use<>>, String> {
        let mut req = self
            .request(Method::GET)
            .header("Accept", "text/event-stream");
        if let Some(id) = last_id {
            req = req.header("Last-Event-ID", id);
        }
        let resp = self
            .send(req, pare_http::body::empty(), None)
            .map_err(|e| format!("the upstream MCP server's event stream failed: {e}"))?;
        let status = resp.status().as_u16();
        if status == 405 {
            return Ok(None);
        }
        if !(200..300).contains(&status) || content_type(&resp) != "text/event-stream" {
            return Err(format!(
                "the upstream MCP server refused its event stream (HTTP {status})"
            ));
        }
        Ok(Some(BufReader::new(resp.into_body())))
    }

    /// End the session on the server (when the client has gone). Errors are ignored.
    pub fn delete_session(&self) {
        let live = self.session.lock().expect("session").is_some();
        if live && self.failure.lock().expect("failure").is_none() {
            let req = self.request(Method::DELETE);
            let timeout = Some(Duration::from_secs(2));
            let _ = self.send(req, pare_http::body::empty(), timeout);
        }
        self.session.lock().expect("session").take();
    }

    /// One line from the client: POST it (requests on their own thread).
    fn dispatch(self: &Arc<Self>, line: Vec<u8>) {
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let msg = serde_json::from_slice::<Json>(&line).ok();
        let request = msg.as_ref().and_then(|m| match rpc::kind(m) {
            Some(Kind::Request(method, id)) => Some((method == "initialize", id.clone())),
            _ => None,
        });
        match request {
            Some((true, id)) => {
                *self.init.lock().expect("init") = Some(line.clone());
                self.exchange(&line, Some(&id), true);
                if self.failure.lock().expect("failure").is_none() {
                    self.listen();
                }
            }
            Some((false, id)) => {
                *self.open.0.lock().expect("open") += 1;
                let link = self.clone();
                thread::spawn(move || {
                    link.exchange(&line, Some(&id), false);
                    let mut open = link.open.0.lock().expect("open");
                    *open -= 1;
                    link.open.1.notify_all();
                });
            }
            None => self.exchange(&line, None, false),
        }
    }

    /// The client has gone: let open requests finish (up to the drain time), then close.
    fn client_gone(self: &Arc<Self>) {
        self.client_closed.store(true, Ordering::SeqCst);
        let link = self.clone();
        thread::spawn(move || {
            let deadline = Instant::now() + link.drain;
            let mut open = link.open.0.lock().expect("open");
            while *open > 0 {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                open = link.open.1.wait_timeout(open, left).expect("open").0;
            }
            drop(open);
            link.inbox.lock().expect("inbox").take();
        });
    }
}

/// Tries in a row of the GET event stream that bring no event before pare stops opening it.
const GET_RETRIES: u32 = 5;

/// What a reader of events has seen: how many, and the last event id.
#[derive(Default)]
struct Seen {
    events: usize,
    last_id: Option<String>,
}

/// The media type of a response, lower case, without parameters.
fn content_type(resp: &Response<BodyReader>) -> String {
    resp.headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_default()
}

/// A JSON text on one line: raw line breaks in valid JSON are whitespace.
fn one_line(data: &[u8]) -> Vec<u8> {
    data.iter()
        .map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b })
        .collect()
}

/// The proxy's `upstream_in`: lines written here are POSTed to the server.
pub struct Outbox {
    link: Arc<Link>,
    buf: Vec<u8>,
}

impl Write for Outbox {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.link.inbox.lock().expect("inbox").is_none() {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the upstream is gone",
            ));
        }
        let mut rest = data;
        while let Some(at) = memchr::memchr(b'\n', rest) {
            self.buf.extend_from_slice(&rest[..at]);
            let line = std::mem::take(&mut self.buf);
            self.link.dispatch(line);
            rest = &rest[at + 1..];
        }
        self.buf.extend_from_slice(rest);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for Outbox {
    fn drop(&mut self) {
        self.link.client_gone();
    }
}

/// What an [`Inbox`] is fed.
#[derive(Debug)]
pub enum Feed {
    /// A whole message: it becomes one line.
    Line(Vec<u8>),
    /// A piece of a message too large to hold; the next `Line` (maybe empty) ends it.
    Part(Vec<u8>),
}

/// The proxy's `upstream_out`: each message from the server, as one line.
pub struct Inbox {
    rx: Receiver<Feed>,
    cur: Vec<u8>,
    pos: usize,
}

impl Inbox {
    /// Each message received becomes one line; the end of input once every sender is gone.
    pub fn new(rx: Receiver<Feed>) -> Self {
        Inbox {
            rx,
            cur: Vec::new(),
            pos: 0,
        }
    }
}

impl Read for Inbox {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let avail = self.fill_buf()?;
        let n = avail.len().min(out.len());
        out[..n].copy_from_slice(&avail[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Inbox {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.pos >= self.cur.len() {
            let next = match self.rx.recv() {
                Ok(Feed::Line(mut m)) => {
                    m.push(b'\n');
                    m
                }
                Ok(Feed::Part(m)) => m,
                Err(_) => return Ok(&[]), // closed: end of input
            };
            self.cur = next;
            self.pos = 0;
        }
        Ok(&self.cur[self.pos..])
    }

    fn consume(&mut self, n: usize) {
        self.pos += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked() {
        assert!(check_url("http://127.0.0.1:3001/mcp").is_ok());
        assert!(check_url("https://example.com/mcp").is_ok());
        assert!(check_url("ftp://example.com/mcp").is_err());
        assert!(check_url("127.0.0.1:3001").is_err());
        assert!(check_url("not a url").is_err());
    }

    #[test]
    fn a_refused_connection_answers_the_request_and_closes_the_inbox() {
        // A port nothing listens on: bind one, then free it.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let url = format!("http://127.0.0.1:{port}/mcp");
        let (mut outbox, mut inbox, link) = connect(&url, Duration::from_secs(1), 1 << 20);
        outbox
            .write_all(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#)
            .unwrap();
        outbox.write_all(b"\n").unwrap();
        let mut line = String::new();
        inbox.read_line(&mut line).unwrap();
        let v: Json = serde_json::from_str(&line).unwrap();
        assert_eq!(v["id"], 1);
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("cannot reach")
        );
        line.clear();
        assert_eq!(inbox.read_line(&mut line).unwrap(), 0, "{line}");
        assert!(link.failure.lock().unwrap().is_some());
        assert!(outbox.write_all(b"{}\n").is_err());
    }

    #[test]
    fn pretty_json_becomes_one_line() {
        assert_eq!(one_line(b"{\n  \"a\": 1\r\n}"), b"{   \"a\": 1  }");
    }
}
