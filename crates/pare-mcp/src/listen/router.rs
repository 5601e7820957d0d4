//! Where each message the proxy writes to "the client" goes, when the client is HTTP.
//!
//! Over stdio the proxy writes every message to one pipe. Over streamable HTTP there are
//! several ways back: each POSTed request waits on its own response stream, and the client
//! may hold a GET stream for everything else. The [`Router`] keeps those streams; the
//! [`RouterWriter`] is the proxy's `client_out` and sends each line it gets:
//!
//! - a response → the stream of the POST that asked for it (by JSON-RPC id), which then
//!   closes;
//! - a request or notification from the server (sampling, progress, logging…) → the GET
//!   stream; without one, the newest open SSE POST stream; without one, a bounded backlog
//!   that the next GET stream receives first.
//!
//! A line longer than the message cap is not held in memory: its destination is read from
//! its head and the rest streams through in pieces. When the head does not tell (the id is
//! last) and several requests are open, the line waits in a temporary file until its end
//! names its request, then streams from there.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};

use serde::de::IgnoredAny;
use serde_json::Value as Json;

use crate::lines::{Spool, TAIL};
use crate::proxy::log;
use crate::rpc::id_key;
use crate::scan;

/// Messages the backlog keeps, at most, and their bytes.
const BACKLOG_MESSAGES: usize = 1024;
const BACKLOG_BYTES: usize = 16 << 20;
/// Pieces a POST stream holds before the proxy waits for the client to read, so a large
/// message to a slow client is not buffered whole (a piece is at most a read buffer, 64 KiB,
/// or one message under the cap).
const POST_PIECES: usize = 64;
/// The GET stream's room: above the backlog, which a new GET stream is given at once.
const GET_PIECES: usize = BACKLOG_MESSAGES + 64;

/// A piece of one message for one stream.
#[derive(Debug)]
pub struct Delivery {
    pub bytes: Vec<u8>,
    /// The message ends with this piece.
    pub last: bool,
    /// The message is the response this stream waits for.
    pub response: bool,
}

#[derive(Default)]
struct State {
    /// Request id key → the POST stream waiting for its response.
    waiting: HashMap<String, u64>,
    /// Open POST streams; `bool`: it is SSE, so it may carry other messages too.
    posts: BTreeMap<u64, (SyncSender<Delivery>, bool)>,
    get: Option<(u64, SyncSender<Delivery>)>,
    backlog: VecDeque<Vec<u8>>,
    backlog_bytes: usize,
    next: u64,
    closed: bool,
}

/// The streams of one session.
#[derive(Default)]
pub struct Router {
    state: Mutex<State>,
}

/// Where one message goes.
enum Dest {
    Stream(SyncSender<Delivery>, bool),
    Backlog,
}

impl Router {
    /// Register the stream of a POSTed request with id key `id`. `None` once closed.
    pub fn open_post(&self, id: String, sse: bool) -> Option<(u64, Receiver<Delivery>)> {
        let mut s = self.state.lock().expect("router");
        if s.closed {
            return None;
        }
        let (tx, rx) = mpsc::sync_channel(POST_PIECES);
        s.next += 1;
        let no = s.next;
        s.posts.insert(no, (tx, sse));
        s.waiting.insert(id, no);
        Some((no, rx))
    }

    /// The POST stream `no` has ended (answered, or its client went away).
    pub fn close_post(&self, no: u64) {
        let mut s = self.state.lock().expect("router");
        s.posts.remove(&no);
        s.waiting.retain(|_, n| *n != no);
    }

    /// Open the GET stream (replacing an older one, which then ends); the backlog comes
    /// first. `None` once closed.
    pub fn open_get(&self) -> Option<(u64, Receiver<Delivery>)> {
        let mut s = self.state.lock().expect("router");
        if s.closed {
            return None;
        }
        let (tx, rx) = mpsc::sync_channel(GET_PIECES);
        s.next += 1;
        let no = s.next;
        for bytes in std::mem::take(&mut s.backlog) {
            let _ = tx.send(Delivery {
                bytes,
                last: true,
                response: false,
            });
        }
        s.backlog_bytes = 0;
        s.get = Some((no, tx));
        Some((no, rx))
    }

    /// The GET stream `no` has ended.
    pub fn close_get(&self, no: u64) {
        let mut s = self.state.lock().expect("router");
        if s.get.as_ref().is_some_and(|(n, _)| *n == no) {
            s.get = None;
        }
    }

    /// The session is over: every stream ends, no new one opens.
    pub fn close(&self) {
        let mut s = self.state.lock().expect("router");
        s.closed = true;
        s.posts.clear();
        s.waiting.clear();
        s.get = None;
        s.backlog.clear();
    }

    /// The destination of a message: the response to `response_to`, or something else.
    fn dest(&self, response_to: Option<&str>) -> Dest {
        let mut s = self.state.lock().expect("router");
        if let Some(key) = response_to
            && let Some(no) = s.waiting.remove(key)
            && let Some((tx, _)) = s.posts.remove(&no)
        {
            // Taken out: nothing else goes to a stream once its response is on the way.
            return Dest::Stream(tx, true);
        }
        if let Some((_, tx)) = &s.get {
            return Dest::Stream(tx.clone(), false);
        }
        match s.posts.iter().rev().find(|(_, (_, sse))| *sse) {
            Some((_, (tx, _))) => Dest::Stream(tx.clone(), false),
            None => Dest::Backlog,
        }
    }

    /// The id key of the one request waiting for its response, if exactly one is.
    fn only_waiting(&self) -> Option<String> {
        let s = self.state.lock().expect("router");
        match s.waiting.len() {
            1 => s.waiting.keys().next().cloned(),
            _ => None,
        }
    }

    fn push_backlog(&self, bytes: Vec<u8>) {
        let mut s = self.state.lock().expect("router");
        if s.closed {
            return;
        }
        s.backlog_bytes += bytes.len();
        s.backlog.push_back(bytes);
        while s.backlog.len() > BACKLOG_MESSAGES || s.backlog_bytes > BACKLOG_BYTES {
            let Some(old) = s.backlog.pop_front() else {
                break;
            };
            s.backlog_bytes -= old.len();
            log("no stream open to the client: an older server message was dropped");
        }
    }
}

/// The proxy's `client_out`: splits what it writes into lines and routes them.
pub struct RouterWriter {
    router: Arc<Router>,
    buf: Vec<u8>,
    /// Lines longer than this are streamed on from their head.
    cap: usize,
    /// The destination of the oversize line being streamed (`None` inside: nowhere).
    streaming: Option<Option<(SyncSender<Delivery>, bool)>>,
    /// An oversize line whose destination its head does not tell, waiting for its end.
    held: Option<Held>,
    /// The same, held in memory (no temporary file could be made).
    holding: bool,
}

/// An oversize line waiting in a temporary file, and its last bytes.
struct Held {
    spool: Spool,
    tail: Vec<u8>,
    failed: bool,
}

impl Held {
    fn push(&mut self, bytes: &[u8]) {
        if !self.failed && self.spool.write_all(bytes).is_err() {
            self.failed = true;
        }
        self.tail.extend_from_slice(bytes);
        if self.tail.len() > 2 * TAIL {
            self.tail.drain(..self.tail.len() - TAIL);
        }
    }
}

impl RouterWriter {
    pub fn new(router: Arc<Router>, cap: usize) -> Self {
        RouterWriter {
            router,
            buf: Vec::new(),
            cap,
            streaming: None,
            held: None,
            holding: false,
        }
    }

    fn route_whole(&mut self, line: Vec<u8>) {
        let key = response_key(&line);
        match self.router.dest(key.as_deref()) {
            Dest::Stream(tx, response) => {
                let _ = tx.send(Delivery {
                    bytes: line,
                    last: true,
                    response,
                });
            }
            Dest::Backlog => self.router.push_backlog(line),
        }
    }

    fn start_streaming(&mut self) {
        let h = scan::head(&self.buf);
        let key = match h.response_id() {
            Some(id) => Some(id_key(id)),
            // A request or notification from the server: not a response.
            None if h.method => None,
            // Servers often write the id last. With one request open it can only be that
            // one's response; with several, hold the line until its end names it.
            None => match self.router.only_waiting() {
                Some(key) => Some(key),
                None => {
                    self.hold();
                    return;
                }
            },
        };
        let head = std::mem::take(&mut self.buf);
        let dest = match self.router.dest(key.as_deref()) {
            Dest::Stream(tx, response) => Some((tx, response)),
            Dest::Backlog => {
                log("a message too large to hold had no stream open to the client; dropped");
                None
            }
        };
        send_piece(&dest, head, false);
        self.streaming = Some(dest);
    }

    /// Keep the line being written in a temporary file (in memory if none can be made).
    fn hold(&mut self) {
        match Spool::new() {
            Ok(spool) => {
                let mut held = Held {
                    spool,
                    tail: Vec::new(),
                    failed: false,
                };
                held.push(&std::mem::take(&mut self.buf));
                self.held = Some(held);
            }
            Err(e) => {
                log(&format!(
                    "a message over the cap does not name its request in its head, several requests are open, and no temporary file could be made ({e}); holding it in memory"
                ));
                self.holding = true;
            }
        }
    }

    /// The held line has ended: route it by the id at its end and stream it from the file.
    fn release(&mut self, mut held: Held) {
        let key = scan::id_at_end(&held.tail).map(|id| id_key(&id));
        let dest = match self.router.dest(key.as_deref()) {
            Dest::Stream(tx, response) => Some((tx, response)),
            Dest::Backlog => None,
        };
        let sent = match (&dest, held.failed) {
            (None, _) => Err("no stream open to the client".to_owned()),
            (_, true) => Err("its temporary file failed".to_owned()),
            (Some(_), false) => stream_file(&mut held.spool, &dest).map_err(|e| e.to_string()),
        };
        if let Err(why) = sent {
            log(&format!("a message too large to hold was dropped: {why}"));
            // Whatever reached the stream must end.
            send_piece(&dest, Vec::new(), true);
        }
    }
}

/// Send a spool's contents to `dest` in pieces, the last one marked.
fn stream_file(spool: &mut Spool, dest: &Option<(SyncSender<Delivery>, bool)>) -> io::Result<()> {
    let file = spool.read_back()?;
    let mut piece = vec![0u8; 1 << 16];
    let mut filled = file.read(&mut piece)?;
    loop {
        let mut next = vec![0u8; 1 << 16];
        let n = if filled == 0 {
            0
        } else {
            file.read(&mut next)?
        };
        piece.truncate(filled);
        let last = n == 0;
        send_piece(dest, piece, last);
        if last {
            return Ok(());
        }
        piece = next;
        filled = n;
    }
}

fn send_piece(dest: &Option<(SyncSender<Delivery>, bool)>, bytes: Vec<u8>, last: bool) {
    if let Some((tx, response)) = dest {
        let _ = tx.send(Delivery {
            bytes,
            last,
            response: *response,
        });
    }
}

impl Write for RouterWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let mut rest = data;
        while !rest.is_empty() {
            let newline = memchr::memchr(b'\n', rest);
            if let Some(held) = &mut self.held {
                match newline {
                    Some(i) => {
                        held.push(&rest[..i]);
                        let held = self.held.take().expect("held");
                        self.release(held);
                        rest = &rest[i + 1..];
                    }
                    None => {
                        held.push(rest);
                        rest = &[];
                    }
                }
                continue;
            }
            if let Some(dest) = &self.streaming {
                match newline {
                    Some(i) => {
                        send_piece(dest, rest[..i].to_vec(), true);
                        self.streaming = None;
                        rest = &rest[i + 1..];
                    }
                    None => {
                        send_piece(dest, rest.to_vec(), false);
                        rest = &[];
                    }
                }
                continue;
            }
            match newline {
                Some(i) => {
                    self.buf.extend_from_slice(&rest[..i]);
                    let line = std::mem::take(&mut self.buf);
                    self.holding = false;
                    if !line.is_empty() {
                        self.route_whole(line);
                    }
                    rest = &rest[i + 1..];
                }
                None => {
                    self.buf.extend_from_slice(rest);
                    rest = &[];
                    if self.buf.len() > self.cap && !self.holding {
                        self.start_streaming();
                    }
                }
            }
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The id key of a whole line, if it is a response (an id and no method).
fn response_key(line: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Probe {
        #[serde(default)]
        id: Option<Json>,
        #[serde(default)]
        method: Option<IgnoredAny>,
    }
    let p: Probe = serde_json::from_slice(line).ok()?;
    match (p.id, p.method) {
        (Some(id), None) if !id.is_null() => Some(id_key(&id)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(rx: &Receiver<Delivery>) -> Vec<(String, bool, bool)> {
        rx.try_iter()
            .map(|d| (String::from_utf8(d.bytes).unwrap(), d.last, d.response))
            .collect()
    }

    #[test]
    fn a_response_goes_to_its_post_and_the_rest_to_the_get_stream() {
        let router = Arc::new(Router::default());
        let (_, a) = router.open_post(id_key(&Json::from(1)), true).unwrap();
        let (_, b) = router.open_post(id_key(&Json::from("x")), true).unwrap();
        let mut w = RouterWriter::new(router.clone(), 1 << 20);
        w.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"res")
            .unwrap();
        w.write_all(b"ult\":{}}\n").unwrap();
        // No GET stream: the notification goes to the newest SSE POST stream.
        let got_b = drain(&b);
        assert_eq!(got_b.len(), 2);
        assert!(got_b[0].0.contains("notifications/message") && !got_b[0].2);
        assert!(got_b[1].0.contains("\"id\":\"x\"") && got_b[1].2);
        let (_, get) = router.open_get().unwrap();
        w.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"sampling/createMessage\"}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n")
            .unwrap();
        assert!(drain(&get)[0].0.contains("sampling/createMessage"));
        assert_eq!(
            drain(&a),
            vec![(
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}".into(),
                true,
                true
            )]
        );
    }

    #[test]
    fn without_any_stream_messages_wait_in_the_backlog_for_the_get_stream() {
        let router = Arc::new(Router::default());
        let mut w = RouterWriter::new(router.clone(), 1 << 20);
        w.write_all(b"{\"method\":\"notifications/tools/list_changed\"}\n")
            .unwrap();
        let (_, get) = router.open_get().unwrap();
        assert_eq!(drain(&get).len(), 1);
        router.close();
        assert!(router.open_get().is_none());
        assert!(get.recv().is_err(), "a closed session ends its streams");
    }

    #[test]
    fn an_oversize_response_streams_to_its_post_in_pieces() {
        let router = Arc::new(Router::default());
        let (_, rx) = router.open_post(id_key(&Json::from(5)), false).unwrap();
        let mut w = RouterWriter::new(router.clone(), 16);
        w.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"content\":[")
            .unwrap();
        w.write_all(b"1,2,3]}}\n").unwrap();
        let got = drain(&rx);
        let whole: String = got.iter().map(|g| g.0.as_str()).collect();
        assert_eq!(
            whole,
            "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"content\":[1,2,3]}}"
        );
        assert!(got.last().unwrap().1 && got.iter().all(|g| g.2));
    }

    #[test]
    fn an_oversize_response_with_its_id_last_goes_to_the_one_open_request_or_is_held() {
        let router = Arc::new(Router::default());
        let (_, rx) = router.open_post(id_key(&Json::from(9)), true).unwrap();
        let mut w = RouterWriter::new(router.clone(), 8);
        w.write_all(b"{\"result\":{\"content\":[1,2,3]},").unwrap();
        w.write_all(b"\"jsonrpc\":\"2.0\",\"id\":9}\n").unwrap();
        let got = drain(&rx);
        assert!(got.len() > 1 && got.iter().all(|g| g.2) && got.last().unwrap().1);
        // Two open: held whole, then routed by the id at its end.
        let (_, a) = router.open_post(id_key(&Json::from(1)), true).unwrap();
        let (_, b) = router.open_post(id_key(&Json::from(2)), true).unwrap();
        w.write_all(b"{\"result\":{\"content\":[1,2,3]},").unwrap();
        w.write_all(b"\"id\":1}\n").unwrap();
        assert!(drain(&b).is_empty());
        assert_eq!(
            drain(&a),
            vec![(
                "{\"result\":{\"content\":[1,2,3]},\"id\":1}".into(),
                true,
                true
            )]
        );
    }
}
