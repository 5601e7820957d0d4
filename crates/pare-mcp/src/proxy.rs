//! The proxy: two loops moving newline-delimited JSON-RPC messages between the client and
//! the upstream server.
//!
//! Every message passes byte for byte except the few pare rewrites: the `initialize` result
//! (`capabilities.tools.listChanged`, for `pare_more`), `tools/list` results
//! ([`crate::tools_list`]), `tools/call` requests of shaped tools (the arguments pare added
//! are taken out) and their results, and `pare_more` calls, which pare answers itself
//! ([`crate::calls`]). Requests from the client are tracked by id so that, when the upstream
//! server exits, each one still open gets a JSON-RPC error. Lines from upstream that are not
//! JSON-RPC are logged and skipped; a JSON-RPC message that is not strict JSON (a lone
//! surrogate escape, bytes that are not UTF-8) is recognised by a tolerant scan
//! ([`crate::scan`]) and passed on unchanged, never dropped. Lines longer than the message
//! cap are never held whole (`proxy/oversize.rs`).

mod lazy;
mod oversize;

use std::collections::HashMap;
use std::io::{self, BufRead, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value as Json;

use crate::cache::{Limits, PageCache};
use crate::calls::{self, CallPending, CallRequest};
use crate::config::Config;
use crate::lines::{Line, LineReader};
use crate::originals::Originals;
use crate::rpc::{self, Kind};
use crate::scan;
use crate::shape_result::Budget;
use crate::tools_list::{self, ToolsState};

/// How the proxy runs.
#[derive(Debug)]
pub struct Options {
    pub config: Config,
    pub budget: Budget,
    /// Messages longer than this are forwarded unchanged without being held in memory.
    pub max_message_bytes: usize,
    pub cache: Limits,
    /// How long to wait for the upstream server to finish after the client has gone.
    pub drain: Duration,
    /// Where calls are counted for Prometheus (`--metrics`), if anywhere.
    pub metrics: Option<Arc<crate::metrics::McpMetrics>>,
}

/// Why the proxy stopped.
#[derive(Debug, PartialEq, Eq)]
pub enum Ending {
    /// The client closed its input (a normal end).
    ClientClosed,
    /// The upstream server closed its output; this many open requests got an error.
    UpstreamExited { pending: usize },
}

/// A request from the client that is waiting for its response.
#[derive(Debug)]
enum Pending {
    Initialize,
    ToolsList,
    /// A shaped tool's call, and when it was forwarded.
    Call(CallPending, Instant),
    Other,
}

pub(crate) struct Shared {
    pub(crate) opts: Arc<Options>,
    pending: Mutex<HashMap<String, (Json, Pending)>>,
    pub(crate) tools: Mutex<ToolsState>,
    pub(crate) cache: Mutex<PageCache>,
    pub(crate) originals: Mutex<Originals>,
    client_out: Mutex<Box<dyn Write + Send>>,
    /// Lines from the server being handled: a response taken from `pending` but not yet
    /// written to the client (shaping it takes a while) is still owed to the client.
    answering: AtomicUsize,
    /// The ids of the last [`ANSWERED_KEPT`] requests answered, oldest first: a second
    /// response to one of them is the server's mistake, not passed on to the client.
    answered: Mutex<std::collections::VecDeque<String>>,
}

/// How many answered request ids are remembered to catch a repeated response.
const ANSWERED_KEPT: usize = 1024;

impl Shared {
    /// Write one message line to the client. An error means the client is gone.
    pub(crate) fn to_client(&self, line: &[u8]) -> io::Result<()> {
        let mut out = self.client_out.lock().expect("client writer");
        out.write_all(line)?;
        out.write_all(b"\n")?;
        out.flush()
    }

    /// Wait for the answer to the request `id`, remembering what it asked.
    fn await_answer(&self, id: Json, pending: Pending) {
        let key = rpc::id_key(&id);
        // An id used again after its answer is a new request (JSON-RPC allows that).
        self.answered
            .lock()
            .expect("answered")
            .retain(|k| *k != key);
        self.pending
            .lock()
            .expect("pending")
            .insert(key, (id, pending));
    }

    /// The server answered request `id`: what it asked, if it was open; `Err` when it was
    /// answered already (a second response, which the client must not get).
    fn answer(&self, id: &Json) -> Result<Option<Pending>, &'static str> {
        let key = rpc::id_key(id);
        let open = self.take(id);
        let mut answered = self.answered.lock().expect("answered");
        match open {
            Some(pending) => {
                if answered.len() >= ANSWERED_KEPT {
                    answered.pop_front();
                }
                answered.push_back(key);
                Ok(Some(pending))
            }
            None if answered.contains(&key) => Err("a second response to a request it answered"),
            None => Ok(None),
        }
    }

    /// Stop waiting for the request `id`: what it asked, if it was open.
    fn take(&self, id: &Json) -> Option<Pending> {
        let open = self
            .pending
            .lock()
            .expect("pending")
            .remove(&rpc::id_key(id));
        open.map(|(_, pending)| pending)
    }

    /// Stop waiting for the request `id`; `true` if it was open.
    fn settle(&self, id: &Json) -> bool {
        self.take(id).is_some()
    }

    /// Wait for the answer to a request pare could not read whole (over the cap, or not
    /// strict JSON), so that it is answered if the server exits first.
    fn track_unread(&self, h: &scan::Head) {
        if let (true, Some(id)) = (h.method, &h.id) {
            self.await_answer(id.clone(), Pending::Other);
        }
    }
}

enum Event {
    ClientClosed,
    UpstreamClosed,
}

/// Run the proxy until the client or the upstream server closes.
pub fn run(
    opts: impl Into<Arc<Options>>,
    client_in: impl BufRead + Send + 'static,
    client_out: impl Write + Send + 'static,
    upstream_in: impl Write + Send + 'static,
    upstream_out: impl BufRead + Send + 'static,
) -> Ending {
    let opts = opts.into();
    let drain = opts.drain;
    let shared = Arc::new(Shared {
        cache: Mutex::new(PageCache::new(opts.cache)),
        originals: Mutex::new(Originals::new(opts.cache)),
        opts,
        pending: Mutex::new(HashMap::new()),
        tools: Mutex::new(ToolsState::default()),
        client_out: Mutex::new(Box::new(client_out)),
        answering: AtomicUsize::new(0),
        answered: Mutex::new(std::collections::VecDeque::new()),
    });
    let (tx, rx) = mpsc::channel();
    {
        let shared = shared.clone();
        let tx = tx.clone();
        thread::spawn(move || {
            client_loop(&shared, client_in, upstream_in);
            let _ = tx.send(Event::ClientClosed);
        });
    }
    {
        let shared = shared.clone();
        thread::spawn(move || {
            let event = match upstream_loop(&shared, upstream_out) {
                UpstreamEnd::Closed => Event::UpstreamClosed,
                // The client stopped reading: it is the one that left.
                UpstreamEnd::ClientGone => Event::ClientClosed,
            };
            let _ = tx.send(event);
        });
    }
    match rx.recv() {
        Ok(Event::ClientClosed) => {
            // Let the server answer what it was asked (up to `drain`), then stop. With nothing
            // open there is nothing to wait for: a server that ignores its input closing is
            // stopped at once, not `drain` later.
            let deadline = std::time::Instant::now() + drain;
            // Owed: a request not answered yet, or an answer on its way to the client.
            let owed = || {
                !shared.pending.lock().expect("pending").is_empty()
                    || shared.answering.load(Ordering::SeqCst) > 0
            };
            while owed() {
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                if left.is_zero() {
                    break;
                }
                match rx.recv_timeout(left.min(Duration::from_millis(20))) {
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    _ => break,
                }
            }
            Ending::ClientClosed
        }
        Ok(Event::UpstreamClosed) | Err(_) => {
            let open: Vec<(Json, Pending)> = shared
                .pending
                .lock()
                .expect("pending")
                .drain()
                .map(|(_, v)| v)
                .collect();
            for (id, _) in &open {
                let _ = shared.to_client(&rpc::error(
                    id,
                    rpc::INTERNAL_ERROR,
                    "pare: the upstream MCP server exited before answering",
                ));
            }
            Ending::UpstreamExited {
                pending: open.len(),
            }
        }
    }
}

fn client_loop(shared: &Shared, client_in: impl BufRead, upstream_in: impl Write) {
    let mut reader = LineReader::new(client_in, shared.opts.max_message_bytes);
    let mut upstream = io::BufWriter::new(upstream_in);
    loop {
        let line = match reader.next_line() {
            Ok(Line::Eof) | Err(_) => return,
            Ok(Line::Whole(line)) => line,
            Ok(Line::Oversize(head)) => {
                // Too large to read: pass it on as it is.
                shared.track_unread(&scan::head(&head));
                let sent = upstream
                    .write_all(&head)
                    .and_then(|()| reader.copy_rest(Some(&mut upstream)).map(drop))
                    .and_then(|()| upstream.write_all(b"\n"))
                    .and_then(|()| upstream.flush());
                if sent.is_err() {
                    return;
                }
                continue;
            }
        };
        let to_send = match client_message(shared, &line) {
            Some(out) => out,
            None => continue,
        };
        let sent = upstream
            .write_all(to_send.as_deref().unwrap_or(&line))
            .and_then(|()| upstream.write_all(b"\n"))
            .and_then(|()| upstream.flush());
        if sent.is_err() {
            // The server is gone; the upstream loop answers what is open.
            return;
        }
    }
}

/// Handle one message from the client. `None`: answered here, nothing to forward;
/// `Some(None)`: forward the line unchanged; `Some(Some(bytes))`: forward these instead.
fn client_message(shared: &Shared, line: &[u8]) -> Option<Option<Vec<u8>>> {
    let Ok(mut msg) = serde_json::from_slice::<Json>(line) else {
        // Not ours to judge: the server answers a bad request.
        shared.track_unread(&scan::head(line));
        return Some(None);
    };
    match rpc::kind(&msg) {
        Some(Kind::Request(method, id)) => {
            let id = id.clone();
            let (pending, rewritten) = match method {
                "initialize" => (Pending::Initialize, None),
                "tools/list" => (Pending::ToolsList, None),
                "tools/call" => match calls::call_request(shared, &mut msg, &id) {
                    CallRequest::Answered => return None,
                    CallRequest::Forward(p, changed) => (
                        p.map_or(Pending::Other, |c| Pending::Call(c, Instant::now())),
                        changed.then(|| serde_json::to_vec(&msg).expect("serializes")),
                    ),
                },
                _ => (Pending::Other, None),
            };
            shared.await_answer(id, pending);
            Some(rewritten)
        }
        Some(Kind::Notification("notifications/cancelled")) => {
            // A cancelled request may never be answered: stop waiting for it.
            if let Some(id) = msg.pointer("/params/requestId") {
                shared.settle(id);
            }
            Some(None)
        }
        _ => Some(None),
    }
}

/// A writer that remembers whether a write to it failed, so that a failed copy from the
/// server to the client can tell which side of it broke.
struct Watched<'w> {
    inner: &'w mut (dyn Write + Send),
    failed: bool,
}

impl Write for Watched<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let written = self.inner.write(buf);
        self.failed |= broke(&written);
        written
    }
    fn flush(&mut self) -> io::Result<()> {
        let flushed = self.inner.flush();
        self.failed |= broke(&flushed);
        flushed
    }
}

/// An error other than an interruption, which `write_all` retries.
fn broke<T>(r: &io::Result<T>) -> bool {
    r.as_ref()
        .is_err_and(|e| e.kind() != io::ErrorKind::Interrupted)
}

/// One line from the server being handled ([`Shared::answering`]), until dropped.
struct Answering<'a>(&'a AtomicUsize);

impl<'a> Answering<'a> {
    fn start(count: &'a AtomicUsize) -> Answering<'a> {
        count.fetch_add(1, Ordering::SeqCst);
        Answering(count)
    }
}

impl Drop for Answering<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Why the upstream loop stopped.
enum UpstreamEnd {
    /// The server closed its output (or it could not be read).
    Closed,
    /// Writing to the client failed.
    ClientGone,
}

fn upstream_loop(shared: &Shared, upstream_out: impl BufRead) -> UpstreamEnd {
    let cap = shared.opts.max_message_bytes;
    let mut reader = LineReader::new(upstream_out, cap);
    loop {
        let line = reader.next_line();
        // Counted until the line is handled (its answer written), whatever the way out.
        let _answering = Answering::start(&shared.answering);
        match line {
            Ok(Line::Eof) | Err(_) => return UpstreamEnd::Closed,
            Ok(Line::Whole(line)) => {
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                match upstream_message(shared, &line) {
                    Ok(out) => {
                        if shared.to_client(out.as_deref().unwrap_or(&line)).is_err() {
                            return UpstreamEnd::ClientGone;
                        }
                    }
                    Err(why) => log(&format!(
                        "skipped a line from the server ({why}): {}",
                        preview(&line)
                    )),
                }
            }
            Ok(Line::Oversize(head)) => {
                if let Some(end) = oversize::from_upstream(shared, &mut reader, &head) {
                    return end;
                }
            }
        }
    }
}

/// Handle one message from the server: `Ok(None)` forward it unchanged, `Ok(Some(bytes))`
/// forward these instead, `Err(why)` it is not a JSON-RPC message.
fn upstream_message(shared: &Shared, line: &[u8]) -> Result<Option<Vec<u8>>, &'static str> {
    if let Some(response) = lazy::Response::read(line) {
        let Some(pending) = shared.answer(&response.id)? else {
            return Ok(None);
        };
        return Ok(lazy_response(shared, line, response, pending));
    }
    let Ok(mut msg) = serde_json::from_slice::<Json>(line) else {
        return unreadable_message(shared, line);
    };
    let id = match rpc::kind(&msg) {
        None => return Err("not JSON-RPC 2.0"),
        Some(Kind::Response(id)) => id.clone(),
        Some(_) => return Ok(None),
    };
    let Some(pending) = shared.answer(&id)? else {
        return Ok(None);
    };
    Ok(rewrite_whole(shared, &mut msg, pending))
}

/// A response read whole, with its result acted on for `pending`: the message written
/// again if that changed it.
fn rewrite_whole(shared: &Shared, msg: &mut Json, pending: Pending) -> Option<Vec<u8>> {
    let changed = rewrite(shared, msg.get_mut("result")?, pending);
    changed.then(|| serde_json::to_vec(msg).expect("serializes"))
}

/// Act on the result of the request `pending`; whether it changed.
fn rewrite(shared: &Shared, result: &mut Json, pending: Pending) -> bool {
    match pending {
        Pending::Other => false,
        Pending::Initialize => advertise_list_changed(result),
        Pending::ToolsList => {
            let mut tools = shared.tools.lock().expect("tools");
            for warning in tools_list::rewrite(result, &shared.opts.config, &mut tools) {
                log(&warning);
            }
            true
        }
        Pending::Call(call, started) => matches!(
            calls::call_result(shared, result, None, call, started),
            calls::Rewritten::Yes { .. }
        ),
    }
}

/// [`upstream_message`] for a response read lazily ([`lazy`]): a tool result has only the
/// members shaping reads decoded and written again; an unshaped result is not decoded at all.
fn lazy_response(
    shared: &Shared,
    line: &[u8],
    mut response: lazy::Response,
    pending: Pending,
) -> Option<Vec<u8>> {
    match pending {
        Pending::Other => None,
        Pending::Call(call, started) => {
            let mut result = response.decoded();
            let structured = response.raw(line, "structuredContent");
            match calls::call_result(shared, &mut result, structured, call, started) {
                calls::Rewritten::No => None,
                calls::Rewritten::Yes { drop_structured } => {
                    let drop: &[&str] = if drop_structured {
                        &["structuredContent"]
                    } else {
                        &[]
                    };
                    Some(response.splice(line, &result, drop))
                }
            }
        }
        // Small, and rewritten whole: read the general way.
        pending => rewrite_whole(shared, &mut serde_json::from_slice(line).ok()?, pending),
    }
}

/// `capabilities.tools.listChanged: true` in an `initialize` result, so that the client
/// lists the tools again when pare first needs `pare_more`. Whether it changed anything.
fn advertise_list_changed(result: &mut Json) -> bool {
    let Some(tools) = result
        .pointer_mut("/capabilities/tools")
        .and_then(Json::as_object_mut)
    else {
        return false;
    };
    if tools.get("listChanged") == Some(&Json::Bool(true)) {
        return false;
    }
    tools.insert("listChanged".into(), Json::Bool(true));
    true
}

/// A line from the server that is not strict JSON. A JSON-RPC message all the same (a lone
/// surrogate escape, bytes that are not UTF-8 in a string) goes on unchanged, settling its
/// request: dropped, its request would never be answered.
fn unreadable_message(shared: &Shared, line: &[u8]) -> Result<Option<Vec<u8>>, &'static str> {
    let h = scan::head(line);
    if !(h.complete && h.plausible() && h.jsonrpc == Some(true) && (h.method || h.id.is_some())) {
        return Err("not JSON");
    }
    log(&format!(
        "a message that is not strict JSON (a lone surrogate or bytes that are not UTF-8) is forwarded unchanged: {}",
        preview(line)
    ));
    if let Some(id) = h.response_id() {
        shared.settle(id);
    }
    Ok(None)
}

/// A log line on stderr (never stdout: stdout carries only protocol).
pub fn log(message: &str) {
    eprintln!("pare mcp: {message}");
}

fn preview(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(&line[..line.len().min(80)]);
    let more = if line.len() > 80 { "…" } else { "" };
    format!("{text}{more}")
}
