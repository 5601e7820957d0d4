//! A shaped body sent as the upstream's arrives (`pare::rest::streamed`): the client's first
//! bytes do not wait for the upstream's last ones.
//!
//! When: the client said it reads trailers (`TE: trailers`), since the counts and the note
//! come after the body; the route's level is one the stream can do and the caller asked for
//! no budget or cursor; the upstream's body is identity-coded, declares its length (so the
//! room it takes of `--max-held-bytes` is known before a byte is sent: pare never has to
//! stop halfway for want of room) within `--max-shape-bytes`; and it is a JSON array (its
//! first byte says so). Anything else is shaped whole, as before.
//!
//! The body is byte for byte the buffered one; the `X-Pare-*` headers known at the start
//! (level, page, pages) come as headers and the rest as trailers. It is sent uncompressed:
//! a compressor would hold back what it has not filled a block with. The response starts
//! once the first items are shaped: a body that is not JSON (or too deep) there goes on as
//! it came, as a body shaped whole would, and one that breaks off there is a 502 (504 when
//! it stalls). When that shows only after the first bytes went out, the response is broken
//! off (its last chunk never comes), which a client sees as an incomplete body, and the log
//! says why.

use std::collections::VecDeque;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{self, HeaderName, HeaderValue};
use hyper::http::response::Parts;
use hyper::{HeaderMap, Response};
use pare::respond::Pushed;
use pare::rest::response;
use pare::rest::streamed::{Streamed, TRAILERS};
use serde_json::{Map, Value};

use super::forward;
use super::prefixed::Prefixed;
use super::respond::Call;
use crate::access::Entry;
use crate::body::{self, Body};
use crate::codec::Coding;
use crate::held::Held;
use crate::idle::IdleTimeout;
use crate::release::Release;

/// The log fields only the end of a streamed body gives, for the access log line and the
/// metrics (written once the body is sent).
/// (Shared, as a response's extensions must be `Clone`; taken once.)
#[derive(Clone)]
pub struct Late(std::sync::Arc<std::sync::Mutex<Option<LateFields>>>);

type LateFields = tokio::sync::oneshot::Receiver<Map<String, Value>>;

impl Late {
    /// The fields' receiver (once).
    pub fn take(&self) -> Option<LateFields> {
        self.0.lock().ok()?.take()
    }
}

/// The `X-Pare-*` headers a streamed response starts with, when this one may be streamed
/// (decided before a byte of its body is read); `None`: it is shaped whole.
pub fn wanted(
    call: &Call,
    status: u16,
    content_type: Option<&str>,
    coding: Option<Coding>,
    declared: Option<u64>,
    cap: usize,
) -> Option<Head> {
    let possible = call.trailers
        && coding == Some(Coding::Identity)
        && declared.is_some_and(|n| n <= cap as u64);
    possible
        .then(|| Streamed::start(&call.route, &call.ask, status, content_type))
        .flatten()
        .map(|s| s.head())
}

/// [`Streamed::head`]: the `X-Pare-*` headers known before the body.
pub type Head = Vec<(&'static str, String)>;

/// Why the upstream's body stopped short, as the pump saw it.
struct Broke {
    why: String,
    /// It sent nothing for `--upstream-idle-timeout` (a 504, not a 502).
    idle: bool,
}

type Chunk = Result<Bytes, Broke>;

/// How the shaping thread's start went.
enum First {
    /// The first items are shaped and on their way.
    Started,
    /// The body is not JSON (or too deep) at its first items: nothing was sent; the body
    /// read so far, and the rest as it comes, go on untouched.
    NotJson {
        read: Vec<u8>,
        rest: tokio::sync::mpsc::Receiver<Chunk>,
        why: String,
    },
    /// The upstream's body broke off (or stalled) before anything was sent.
    Broken(Broke),
}

/// A body of the chunks the pump sends (what is left of the upstream's, untouched).
struct Rest(tokio::sync::mpsc::Receiver<Chunk>);

impl http_body::Body for Rest {
    type Data = Bytes;
    type Error = crate::body::BoxError;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        self.0
            .poll_recv(cx)
            .map(|chunk| chunk.map(|c| c.map(http_body::Frame::data).map_err(|b| b.why.into())))
    }
}

/// The response, its body shaped on the blocking pool as the upstream's arrives: `read` is
/// what came before the decision, `incoming` the rest; `room` is held until the body is sent;
/// `head` is what [`wanted`] gave.
#[allow(clippy::too_many_arguments)]
pub async fn send(
    call: &Call,
    release: Release,
    parts: Parts,
    incoming: IdleTimeout<Incoming>,
    read: VecDeque<Bytes>,
    room: Held,
    head: Head,
    log: &mut Entry,
) -> Response<Body> {
    let status = parts.status.as_u16();
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<usize>().ok());
    let content_type = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let (feed, body) = body::channel(8);
    let (bytes_in, bytes_out) = tokio::sync::mpsc::channel::<Chunk>(8);
    let (late, late_rx) = tokio::sync::oneshot::channel();
    let (first_tx, first_rx) = tokio::sync::oneshot::channel::<First>();
    // The upstream's own head, for a body that goes on untouched after all.
    let original = parts.headers.clone();
    tokio::spawn(pump(incoming, read, bytes_in));
    let (route, ask) = (call.route.clone(), call.ask.clone());
    tokio::task::spawn_blocking(move || {
        let _room = room;
        // Once the body is sent (or broken off), its memory may go back.
        let _give_back = GiveBack(release, declared.unwrap_or(0));
        let mut s = Streamed::start(&route, &ask, status, content_type.as_deref())
            .expect("`wanted` said it streams");
        if let Some(n) = declared {
            s.reserve(n);
        }
        // No line when the body went on untouched (its line was written then).
        if let Some(fields) = shape_as_it_comes(s, bytes_out, first_tx, &feed) {
            let _ = late.send(fields);
        }
    });
    match first_rx.await {
        Ok(First::Started) => {}
        Ok(First::NotJson { read, rest, why }) => {
            // As a body shaped whole that is not JSON: it goes on as it came.
            log.set("pare", "passed");
            log.set("why", why);
            let mut head = parts;
            head.headers = original;
            forward::own_head(&mut head);
            let body = Prefixed {
                read: std::iter::once(Bytes::from(read)).collect(),
                rest: Rest(rest),
            };
            return Response::from_parts(head, BodyExt::boxed(body));
        }
        Ok(First::Broken(broke)) => {
            log.set("upstream_error", broke.why.as_str());
            let status = if broke.idle {
                hyper::StatusCode::GATEWAY_TIMEOUT
            } else {
                hyper::StatusCode::BAD_GATEWAY
            };
            return body::error(status, "the upstream's body broke off");
        }
        Err(_) => {
            return body::error(
                hyper::StatusCode::BAD_GATEWAY,
                "the body could not be shaped",
            );
        }
    }
    log.set("pare", "shaped");
    log.set("streamed", true);
    log.set("page", 1);
    log.set("pages", 1);
    let mut headers = parts.headers;
    forward::strip_hop_by_hop(&mut headers);
    for name in response::NOT_OF_THE_SHAPED_BODY {
        headers.remove(name);
    }
    headers.remove(header::DATE);
    for (k, v) in head {
        if k == "X-Pare-Level" {
            log.set("level", v.as_str());
        }
        if let (Ok(k), Ok(v)) = (HeaderName::try_from(k), HeaderValue::from_str(&v)) {
            headers.insert(k, v);
        }
    }
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if let Ok(v) = HeaderValue::from_str(&TRAILERS.join(", ")) {
        headers.insert(header::TRAILER, v);
    }
    headers.append(header::VARY, HeaderValue::from_static(response::VARY));
    let mut r = Response::new(body);
    *r.status_mut() = parts.status;
    *r.headers_mut() = headers;
    r.extensions_mut()
        .insert(Late(std::sync::Arc::new(std::sync::Mutex::new(Some(
            late_rx,
        )))));
    r
}

/// The shaping thread: the upstream's chunks pushed through `s` and the text sent on
/// `feed`. Until the first item is shaped, `first` hears how the start went (a body that is
/// not JSON, or breaks off, then never started). The log fields of a response that
/// started; `None` for one that did not.
fn shape_as_it_comes(
    mut s: Streamed,
    mut chunks: tokio::sync::mpsc::Receiver<Chunk>,
    first_tx: tokio::sync::oneshot::Sender<First>,
    feed: &body::Feed,
) -> Option<Map<String, Value>> {
    let mut fields = Map::new();
    let mut first = Some(first_tx);
    // Shaped text held until the first item is (`[` alone says nothing yet).
    let mut pending = String::new();
    let mut fail = |why: String| {
        fields.insert("pare".into(), "broken off".into());
        fields.insert("stream_error".into(), why.clone().into());
        feed.fail(why);
        std::mem::take(&mut fields)
    };
    let went_away = || {
        let mut f = Map::new();
        f.insert("pare".into(), "broken off".into());
        f.insert("stream_error".into(), "the client went away".into());
        f
    };
    while let Some(chunk) = chunks.blocking_recv() {
        let bytes = match chunk {
            Ok(bytes) => bytes,
            Err(broke) => {
                if let Some(tx) = first.take() {
                    let _ = tx.send(First::Broken(broke));
                    return None;
                }
                let mut f = fail(broke.why.clone());
                f.insert("upstream_error".into(), broke.why.into());
                return Some(f);
            }
        };
        match s.push(&bytes) {
            Err(e) => {
                let Some(tx) = first.take() else {
                    return Some(fail(format!("the upstream's body is not JSON: {e}")));
                };
                let why = format!("not JSON: {e}");
                let read = s.into_input();
                let _ = tx.send(First::NotJson {
                    read,
                    rest: chunks,
                    why,
                });
                return None;
            }
            Ok(Pushed::Text(t)) => {
                // The response starts with its first shaped item, not with `[` alone: a
                // body that is not JSON there can still go on untouched.
                pending.push_str(&t);
                if first.is_some() && pending.len() <= 1 {
                    continue;
                }
                if let Some(tx) = first.take() {
                    let _ = tx.send(First::Started);
                }
                if !pending.is_empty() && !feed.send(Bytes::from(std::mem::take(&mut pending))) {
                    return Some(went_away());
                }
            }
            Ok(Pushed::Undecided) => {}
            Ok(Pushed::NotAnArray) => unreachable!("the body's first byte was `[`"),
        }
    }
    // A body with no item shaped before its end (`[]`, or items all pruned) starts now;
    // one that fails there goes on untouched.
    let unstarted = first.is_some().then(|| s.input().to_vec());
    match s.finish() {
        Ok((tail, shaped)) => {
            if let Some(tx) = first.take() {
                let _ = tx.send(First::Started);
            }
            feed.send(Bytes::from(pending + &tail));
            send_trailers(feed, &shaped, &mut fields);
            Some(fields)
        }
        Err(e) => match (first.take(), unstarted) {
            (Some(tx), Some(read)) => {
                let why = format!("not JSON: {e}");
                let _ = tx.send(First::NotJson {
                    read,
                    rest: chunks,
                    why,
                });
                None
            }
            _ => Some(fail(format!("the upstream's body is not JSON: {e}"))),
        },
    }
}

/// The trailers of a streamed body (the whole response's counts and note), and the counts
/// for its log line.
fn send_trailers(
    feed: &body::Feed,
    shaped: &pare::rest::response::Shaped,
    fields: &mut Map<String, Value>,
) {
    let mut trailers = HeaderMap::new();
    for (k, v) in &shaped.headers {
        if TRAILERS.contains(k)
            && let (Ok(k), Ok(v)) = (HeaderName::try_from(*k), HeaderValue::from_str(v))
        {
            trailers.insert(k, v);
        }
    }
    feed.trailers(trailers);
    let r = &shaped.record;
    fields.insert("tokens_before".into(), r.tokens_before.unwrap_or(0).into());
    fields.insert("tokens_after".into(), r.tokens_after.unwrap_or(0).into());
}

/// Asks for memory back when the shaping thread is done with a body
/// ([`Release::after`]).
struct GiveBack(Release, usize);

impl Drop for GiveBack {
    fn drop(&mut self) {
        self.0.after(self.1);
    }
}

/// The upstream's body to the shaping thread: what was read first, then the rest.
async fn pump(
    mut incoming: IdleTimeout<Incoming>,
    read: VecDeque<Bytes>,
    to: tokio::sync::mpsc::Sender<Chunk>,
) {
    for chunk in read {
        if to.send(Ok(chunk)).await.is_err() {
            return;
        }
    }
    while let Some(frame) = incoming.frame().await {
        let sent = match frame {
            Ok(f) => match f.into_data() {
                Ok(data) => to.send(Ok(data)).await,
                Err(_) => continue,
            },
            Err(e) => {
                let broke = Broke {
                    idle: e.is::<crate::idle::Idle>(),
                    why: format!("the upstream's body broke off: {e}"),
                };
                let _ = to.send(Err(broke)).await;
                return;
            }
        };
        if sent.is_err() {
            return;
        }
    }
}
