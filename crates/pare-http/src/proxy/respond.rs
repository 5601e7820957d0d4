//! The upstream's answer on a shaped route: shaped when it is a plain JSON success,
//! passed through exactly otherwise.
//!
//! Decided at the head, before any body is held (`pare::rest::response::passes`): a status
//! other than 200–203, a body that is not JSON (SSE, NDJSON, files), or an encoding pare
//! does not read goes on streamed. A JSON body is read whole (it is one document), up to
//! `--max-shape-bytes` decoded; a longer one goes on as it came. The shaped body is sent
//! in the coding the client prefers; the upstream's validators (`ETag`, digests) and
//! `Accept-Ranges` do not describe it and are dropped; `Vary` names what chose it.

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::{Response, StatusCode};
use pare::rest::ask::Ask;
use pare::rest::response::{self, Shaped};
use pare::rest::routes::RoutePolicy;

use super::Options;
use super::forward;
use super::prefixed::Prefixed;
use super::streamed;
use crate::access::Entry;
use crate::body::{self, Body, BoxError};
use crate::cache::{self, CachedPage};
use crate::codec::Coding;
use crate::held::Held;
use crate::idle::{Idle, IdleTimeout};
use crate::reuse::{self, Lookup};

/// The upstream's headers that belong to the one response they came with and never go
/// out again with a cached page: a cookie or authentication state set for one caller.
const NOT_REPLAYED: [&str; 4] = [
    "set-cookie",
    "set-cookie2",
    "authentication-info",
    "proxy-authentication-info",
];

/// What becomes of the upstream's body: the engine's [`response::Outcome`], with the shaped
/// pages shared (they may be [`reuse`]d).
enum Outcome {
    Pass(&'static str),
    Refuse { status: u16, body: String },
    Shaped(Arc<Shaped>),
}

impl From<response::Outcome> for Outcome {
    fn from(o: response::Outcome) -> Outcome {
        match o {
            response::Outcome::Pass(why) => Outcome::Pass(why),
            response::Outcome::Refuse { status, body } => Outcome::Refuse { status, body },
            response::Outcome::Shaped(s) => Outcome::Shaped(Arc::from(s)),
        }
    }
}

/// How the read of an upstream body ended.
enum Read {
    /// It is whole: shape it.
    Whole,
    /// Too long to shape, or over the held-bytes budget: send it on as it came.
    Unshaped,
    /// An array to send as it is shaped ([`streamed`]).
    Stream,
}

/// One request on a shaped route.
pub struct Call {
    pub route: Arc<RoutePolicy>,
    pub ask: Ask,
    /// The client's method.
    pub method: hyper::Method,
    /// The client's path, for `Link`.
    pub path: String,
    /// The query without pare's parameters.
    pub query: String,
    pub accept_encoding: Option<String>,
    /// Method, path and credentials (see `cache::key`).
    pub identity: Vec<Vec<u8>>,
    /// The client reads trailers (`TE: trailers`, HTTP/1.1 or later): a body may be sent
    /// as it is shaped ([`super::streamed`]).
    pub trailers: bool,
}

impl Call {
    /// How the log names this call's response ([`forward::what`]).
    pub fn what(&self) -> String {
        forward::what(&self.method, &self.path)
    }

    pub fn identity_parts<'a>(&'a self, query: &'a str) -> Vec<&'a [u8]> {
        let mut parts: Vec<&[u8]> = self.identity.iter().map(Vec::as_slice).collect();
        parts.push(query.as_bytes());
        parts
    }
}

/// Answer with the upstream's response, shaped if it is one pare shapes.
pub async fn answer(
    opts: &Options,
    call: &Call,
    resp: Response<Incoming>,
    log: &mut Entry,
) -> Response<Body> {
    log.set("upstream_status", resp.status().as_u16());
    let status = resp.status().as_u16();
    let content_type = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let coding = Coding::of(
        resp.headers()
            .get(header::CONTENT_ENCODING)
            .and_then(|v| v.to_str().ok()),
    );
    if let Some(why) =
        response::passes(&call.ask, status, content_type.as_deref(), coding.is_none())
    {
        log.set("pare", "passed");
        log.set("why", why);
        return forward::pass(resp, opts, call.what());
    }
    let cap = opts.max_shape_bytes;
    let declared = resp
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > cap as u64) {
        log.set("pare", "passed");
        log.set("why", "too long to shape");
        return forward::pass(resp, opts, call.what());
    }
    let stream_head =
        streamed::wanted(call, status, content_type.as_deref(), coding, declared, cap);
    let stream_wanted = stream_head.is_some();
    let coding = coding.unwrap_or(Coding::Identity);
    let (parts, incoming) = resp.into_parts();
    // One watch on the upstream's gaps: for the read here, and for the rest if it passes on.
    let idle = opts.upstream_idle_timeout;
    let mut incoming = IdleTimeout::new(incoming, idle, "the upstream", Some(call.what()));
    let mut room = Held::default();
    // A declared length is charged before a byte is read: the buffer made for it is then
    // within the budget too (a length that does not fit passes at once, unread).
    let mut over_budget = declared.is_some_and(|n| !opts.held.hold_body(&mut room, n as usize));
    let mut gathered = body::Gather::new(declared.filter(|_| !over_budget), cap);
    let read = tokio::time::timeout(opts.upstream_timeout, async {
        if over_budget {
            return Ok(Read::Unshaped);
        }
        // While only whitespace has come, the body may yet turn out to be an array to stream.
        let mut deciding = stream_wanted.then(Vec::new);
        while let Some(frame) = incoming.frame().await {
            if let Ok(data) = frame?.into_data() {
                if let Some(prefix) = &mut deciding {
                    prefix.extend_from_slice(&data);
                    match pare::rest::streamed::is_array(prefix) {
                        Some(true) => {
                            gathered.push(data);
                            return Ok(Read::Stream);
                        }
                        Some(false) => deciding = None,
                        None if prefix.len() > 4096 => deciding = None,
                        None => {}
                    }
                }
                gathered.push(data);
                let held = gathered.len();
                if held > cap {
                    return Ok(Read::Unshaped);
                }
                if !opts.held.hold_body(&mut room, held) {
                    over_budget = true;
                    return Ok(Read::Unshaped);
                }
            }
        }
        Ok::<Read, BoxError>(Read::Whole)
    })
    .await;
    match read {
        Ok(Ok(Read::Whole)) => {}
        Ok(Ok(Read::Stream)) => {
            let read = gathered.into_chunks();
            let release = opts.release.clone();
            let head = stream_head.expect("only a wanted stream is read for one");
            return streamed::send(call, release, parts, incoming, read, room, head, log).await;
        }
        Ok(Ok(Read::Unshaped)) => {
            drop(room);
            log.set("pare", "passed");
            let mut parts = parts;
            forward::own_head(&mut parts);
            if over_budget {
                log.set("why", "over --max-held-bytes");
                let note = format!(
                    "not shaped: the bodies pare was shaping took its --max-held-bytes ({} bytes)",
                    opts.held.max()
                );
                if let Ok(v) = header::HeaderValue::from_str(&note) {
                    parts.headers.insert("x-pare-note", v);
                }
            } else {
                log.set("why", "too long to shape");
            }
            let body = Prefixed {
                read: gathered.into_chunks(),
                rest: incoming,
            };
            return Response::from_parts(parts, BodyExt::boxed(body));
        }
        Ok(Err(e)) if e.is::<Idle>() => {
            return body::error(StatusCode::GATEWAY_TIMEOUT, &e.to_string());
        }
        Ok(Err(why)) => {
            return body::error(
                StatusCode::BAD_GATEWAY,
                &format!("the upstream's body broke off: {why}"),
            );
        }
        Err(_) => {
            return body::error(
                StatusCode::GATEWAY_TIMEOUT,
                "the upstream did not send its body in time",
            );
        }
    }
    let raw = gathered.into_bytes();
    let input = reuse::Input {
        route: &call.route,
        ask: &call.ask,
        status,
        content_type: content_type.as_deref(),
        coding,
        body: &raw,
    };
    let outcome = match opts.reuse.lookup(&input) {
        Lookup::Hit(shaped) => {
            log.set("reuse", "hit");
            Outcome::Shaped(shaped)
        }
        found => {
            let route = call.route.clone();
            let ask = call.ask.clone();
            let ct = content_type.clone();
            let raw_for_shaping = raw.clone();
            // Shaping is CPU work: off the threads that move bytes.
            let outcome = tokio::task::spawn_blocking(move || {
                let decoded = match crate::codec::decode(coding, &raw_for_shaping, cap) {
                    Ok(d) => d,
                    Err(_) => return Outcome::Pass("undecodable or too long once decoded"),
                };
                response::shape(&route, &ask, status, ct.as_deref(), false, &decoded).into()
            })
            .await
            .unwrap_or(Outcome::Pass("the shaper failed"));
            if let (Outcome::Shaped(shaped), Lookup::Miss(key)) = (&outcome, found) {
                log.set("reuse", "miss");
                opts.reuse.put(key, &input, shaped.clone());
            }
            outcome
        }
    };
    // Shaped (its tree freed); the body goes out within moments, then its memory can go.
    opts.release.after(raw.len());
    let mut headers = parts.headers;
    forward::strip_hop_by_hop(&mut headers);
    match outcome {
        Outcome::Pass(why) => {
            log.set("pare", "passed");
            log.set("why", why);
            let mut r = Response::new(body::full(raw));
            *r.status_mut() = parts.status;
            *r.headers_mut() = headers;
            r
        }
        Outcome::Refuse { status, body } => {
            log.set("pare", "refused");
            body::json(
                StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST),
                body,
            )
        }
        Outcome::Shaped(shaped) => {
            record(log, &shaped);
            for name in response::NOT_OF_THE_SHAPED_BODY {
                headers.remove(name);
            }
            // `Date` is the moment of sending: hyper sets it, on cached pages too.
            headers.remove(header::DATE);
            let upstream: Vec<(String, String)> = headers
                .iter()
                .map(|(k, v)| {
                    (
                        k.as_str().to_owned(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect();
            let first = page_of(parts.status.as_u16(), &upstream, &shaped);
            store(opts, call, &shaped, &upstream, parts.status.as_u16(), log).await;
            if call.ask.cursor.is_some() {
                log.set("cache", "miss");
            }
            send(call, first, call.ask.cursor.is_some().then_some("miss"))
        }
    }
}

/// A page from the cache.
pub fn cached(call: &Call, page: CachedPage, log: &mut Entry) -> Response<Body> {
    log.set("cache", "hit");
    for (k, v) in &page.headers {
        match k.as_str() {
            "X-Pare-Level" => log.set("level", v.as_str()),
            "X-Pare-Page" | "X-Pare-Pages" => {
                log.set(&k[7..].to_ascii_lowercase(), v.parse::<u64>().unwrap_or(0))
            }
            _ => {}
        }
    }
    send(call, page, Some("hit"))
}

/// The headers and body of one shaped page, for the client and the cache.
fn page_of(status: u16, upstream: &[(String, String)], s: &Shaped) -> CachedPage {
    let mut headers = upstream.to_vec();
    headers.extend(s.headers.iter().map(|(k, v)| ((*k).to_owned(), v.clone())));
    CachedPage {
        status,
        body: s.body.clone(),
        content_type: s.content_type.to_owned(),
        headers,
        next: s.record.next_cursor.clone(),
    }
}

/// Store the pages after this one, each under the cursor the page before it names.
async fn store(
    opts: &Options,
    call: &Call,
    first: &Shaped,
    upstream: &[(String, String)],
    status: u16,
    log: &mut Entry,
) {
    if first.later.is_empty() {
        return;
    }
    let mut cursor = first.record.next_cursor.clone();
    let mut pages = Vec::with_capacity(first.later.len());
    // What the upstream set for this one response is not sent again with a later page.
    let replayable: Vec<(String, String)> = upstream
        .iter()
        .filter(|(k, _)| !NOT_REPLAYED.contains(&k.to_ascii_lowercase().as_str()))
        .cloned()
        .collect();
    for later in &first.later {
        let Some(c) = cursor.take() else { break };
        let key = cache::key(&c, &call.identity_parts(&call.query));
        pages.push((key, page_of(status, &replayable, later)));
        cursor = later.record.next_cursor.clone();
    }
    if let Err(why) = opts.cache.put(pages).await {
        log.set("cache_error", why);
    }
}

fn record(log: &mut Entry, s: &Shaped) {
    let r = &s.record;
    log.set("pare", "shaped");
    log.set("level", r.level.as_str());
    log.set("page", r.page);
    log.set("pages", r.pages);
    log.set("tokens_before", r.tokens_before.unwrap_or(0));
    log.set("tokens_after", r.tokens_after.unwrap_or(0));
}

/// The response for a page: its headers, `Link` to the next, the body in the client's
/// preferred coding.
fn send(call: &Call, page: CachedPage, cache_state: Option<&str>) -> Response<Body> {
    let mut headers = HeaderMap::new();
    for (k, v) in &page.headers {
        // While pare's pages go on, pare's `rel="next"` is the next page: the upstream's
        // (its own next page) follows pare's last page, so a client following `next` walks
        // pare's pages, then the upstream's.
        let v = match (k.eq_ignore_ascii_case("link"), &page.next) {
            (true, Some(_)) => match response::without_next(v) {
                Some(kept) => kept,
                None => continue,
            },
            _ => v.clone(),
        };
        if let (Ok(k), Ok(v)) = (HeaderName::try_from(k.as_str()), HeaderValue::from_str(&v)) {
            headers.append(k, v);
        }
    }
    let set = |headers: &mut HeaderMap, k: &str, v: &str| {
        if let (Ok(k), Ok(v)) = (HeaderName::try_from(k), HeaderValue::from_str(v)) {
            headers.insert(k, v);
        }
    };
    set(&mut headers, "content-type", &page.content_type);
    if let Some(next) = &page.next {
        let link = response::link(&call.path, &call.query, &call.ask, next);
        headers.append(
            header::LINK,
            HeaderValue::from_str(&link).unwrap_or(HeaderValue::from_static("")),
        );
    }
    if let Some(state) = cache_state {
        set(&mut headers, "x-pare-cache", state);
    }
    headers.append(header::VARY, HeaderValue::from_static(response::VARY));
    let coding = Coding::preferred(call.accept_encoding.as_deref());
    let bytes = if coding == Coding::Identity {
        Bytes::from(page.body.into_bytes())
    } else {
        set(&mut headers, "content-encoding", coding.name());
        Bytes::from(crate::codec::encode(coding, page.body.as_bytes()))
    };
    let mut r = Response::new(body::full(bytes));
    *r.status_mut() = StatusCode::from_u16(page.status).unwrap_or(StatusCode::OK);
    *r.headers_mut() = headers;
    r
}
