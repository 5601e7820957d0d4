//! The request to the upstream, and a response passed back untouched.
//!
//! Headers go through as they came, less the hop-by-hop ones (RFC 9110 §7.6.1:
//! `Connection` and the names it lists, `Keep-Alive`, `Proxy-Connection`, `TE`,
//! `Trailer`, `Transfer-Encoding`, `Upgrade`) and `Expect` (hyper answers `100
//! Continue` itself); on a shaped route pare's own (`X-Pare-*`) stay behind too. `Host`
//! becomes the upstream's; the client's is sent as `X-Forwarded-Host`, its address as
//! `X-Forwarded-For`, and `X-Forwarded-Proto: http` (`https` on a TLS listener). What a client wrote in those is
//! replaced, unless it is a trusted proxy (`--trusted-proxy`), whose values pare adds to.
//! Absolute URLs of the upstream in the response's `Location`, `Content-Location` and
//! `Link` become pare's own, and errors name no upstream address to the client (the
//! access log has it).
//!
//! The request body is read ahead before the upstream is asked, up to
//! [`Options::request_buffer`](super::Options::request_buffer) bytes, with at most
//! `client_body_timeout` between two chunks (408 beyond): a client trickling its body holds
//! a pare slot, not an upstream connection. A longer body streams on after what was read,
//! under the same gap limit, capped at `max_request_body` (413). A response passed back
//! streams, cut off when the upstream sends nothing for `upstream_idle_timeout`.

use std::error::Error as _;
use std::net::SocketAddr;

use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::{Request, Response, StatusCode, Uri, Version};
use pare::rest::ask::is_pare_header;

use super::prefixed::Prefixed;
use super::{Options, State};
use crate::access::Entry;
use crate::body::{self, Body};
use crate::idle::IdleTimeout;

const HOP_BY_HOP: [&str; 8] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "expect",
];

/// Forward and pass the answer back untouched.
pub async fn send(
    state: &State,
    req: Request<Incoming>,
    query: &str,
    strip_pare: bool,
    peer: SocketAddr,
    log: &mut Entry,
) -> Response<Body> {
    let note = what(req.method(), req.uri().path());
    match request(state, req, query, strip_pare, peer).await {
        Ok(resp) => {
            log.set("upstream_status", resp.status().as_u16());
            pass(resp, &state.opts, note)
        }
        Err(failed) => failed,
    }
}

/// How the log names a request's response: `the response to GET /path`.
pub fn what(method: &hyper::Method, path: &str) -> String {
    format!("the response to {method} {path}")
}

/// Send `req` to the upstream with `query`; the upstream's response head, or the error
/// response to give the client (502, 504, 413).
pub async fn request(
    state: &State,
    req: Request<Incoming>,
    query: &str,
    strip_pare: bool,
    peer: SocketAddr,
) -> Result<Response<Incoming>, Response<Body>> {
    let opts = &state.opts;
    let (parts, incoming) = req.into_parts();
    let up = &opts.upstream;
    let sep = if query.is_empty() { "" } else { "?" };
    let uri: Uri = format!(
        "{}://{}{}{}{sep}{query}",
        up.scheme,
        up.authority,
        up.base_path,
        parts.uri.path()
    )
    .parse()
    .map_err(|e| body::error(StatusCode::BAD_REQUEST, &format!("bad request target: {e}")))?;
    let mut headers = parts.headers;
    let client_host = headers.get(header::HOST).cloned();
    strip_hop_by_hop(&mut headers);
    if strip_pare {
        let pare: Vec<HeaderName> = headers
            .keys()
            .filter(|k| is_pare_header(k.as_str()))
            .cloned()
            .collect();
        for k in pare {
            headers.remove(k);
        }
    }
    headers.insert(
        header::HOST,
        HeaderValue::from_str(&up.authority).expect("an authority is a header value"),
    );
    forwarded_headers(
        &mut headers,
        client_host.clone(),
        peer,
        &opts.trusted_proxies,
        opts.scheme(),
    );
    let origin = client_host
        .as_ref()
        .and_then(|h| h.to_str().ok())
        .map(|h| format!("{}://{h}", opts.scheme()));
    let body = read_ahead(incoming, opts).await?;
    let mut out = Request::new(body);
    *out.method_mut() = parts.method;
    *out.uri_mut() = uri;
    *out.version_mut() = Version::HTTP_11;
    *out.headers_mut() = headers;
    match tokio::time::timeout(opts.upstream_timeout, state.client.request(out)).await {
        Ok(Ok(mut resp)) => {
            if let Some(origin) = origin {
                rewrite_locations(resp.headers_mut(), &up.url(), &origin);
            }
            Ok(resp)
        }
        Ok(Err(e)) => Err(upstream_error(&up.url(), &e)),
        Err(_) => {
            let secs = opts.upstream_timeout.as_secs_f64();
            let mut r = body::error(
                StatusCode::GATEWAY_TIMEOUT,
                &format!("the upstream did not answer within {secs} s"),
            );
            let why = format!("{} did not answer within {secs} s", up.url());
            r.extensions_mut().insert(UpstreamFailure(why));
            Err(r)
        }
    }
}

/// What went wrong upstream, in full (with the upstream's address): for the access log,
/// never for the client, whose body says what happened without naming internal addresses.
#[derive(Debug, Clone)]
pub struct UpstreamFailure(pub String);

/// `X-Forwarded-For`, `-Proto` and `-Host` for the upstream. From a trusted proxy (one of
/// `trusted`) pare adds to what it says; from anyone else what the client wrote is
/// replaced, so a client cannot pose as another address or as having come over HTTPS.
fn forwarded_headers(
    headers: &mut HeaderMap,
    client_host: Option<HeaderValue>,
    peer: SocketAddr,
    trusted: &[crate::server::Net],
    scheme: &'static str,
) {
    let ip = peer.ip().to_string();
    let believed = trusted.iter().any(|net| net.contains(peer.ip()));
    if !believed {
        for name in [
            "x-forwarded-for",
            "x-forwarded-proto",
            "x-forwarded-host",
            "forwarded",
        ] {
            headers.remove(name);
        }
    }
    let forwarded_for = match headers.get("x-forwarded-for").and_then(|v| v.to_str().ok()) {
        Some(earlier) => format!("{earlier}, {ip}"),
        None => ip,
    };
    if let Ok(v) = HeaderValue::from_str(&forwarded_for) {
        headers.insert("x-forwarded-for", v);
    }
    if !headers.contains_key("x-forwarded-proto") {
        headers.insert("x-forwarded-proto", HeaderValue::from_static(scheme));
    }
    if let Some(h) = client_host
        && !headers.contains_key("x-forwarded-host")
    {
        headers.insert("x-forwarded-host", h);
    }
}

/// Absolute URLs of the upstream in `Location`, `Content-Location` and `Link` turned into
/// pare's own (`origin`, as the client reached it): a redirect or a next-page link must
/// lead the client back through pare, not around it to an address it may not reach.
/// `upstream`: the upstream's URL with its base path (`http://10.0.0.5:3000/api`).
pub fn rewrite_locations(headers: &mut HeaderMap, upstream: &str, origin: &str) {
    let rewrite = |text: &str| -> Option<String> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        let mut changed = false;
        while let Some(at) = find_ignoring_case(rest, upstream) {
            let after = &rest[at + upstream.len()..];
            out.push_str(&rest[..at]);
            if after.is_empty() || after.starts_with(['/', '?', '#', '>', ';', ',', ' ']) {
                out.push_str(origin);
                changed = true;
            } else {
                out.push_str(&rest[at..at + upstream.len()]);
            }
            rest = after;
        }
        out.push_str(rest);
        changed.then_some(out)
    };
    for name in [header::LOCATION, header::CONTENT_LOCATION, header::LINK] {
        let values: Vec<HeaderValue> = headers.get_all(&name).iter().cloned().collect();
        if values.is_empty() {
            continue;
        }
        let new: Vec<HeaderValue> = values
            .iter()
            .map(|v| {
                v.to_str()
                    .ok()
                    .and_then(rewrite)
                    .and_then(|t| HeaderValue::from_str(&t).ok())
                    .unwrap_or_else(|| v.clone())
            })
            .collect();
        headers.remove(&name);
        for v in new {
            headers.append(&name, v);
        }
    }
}

/// Where `needle` (an ASCII URL prefix) first occurs in `hay`, scheme and host compared
/// without case.
fn find_ignoring_case(hay: &str, needle: &str) -> Option<usize> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    (0..=h.len().checked_sub(n.len())?).find(|&i| h[i..i + n.len()].eq_ignore_ascii_case(n))
}

/// The request body to forward: read whole when it is at most `request_buffer` bytes,
/// else what was read and then the rest as it comes (see the module docs); the error
/// response when the client stalls (408), sends too much (413) or breaks off (400).
async fn read_ahead(mut incoming: Incoming, opts: &Options) -> Result<Body, Response<Body>> {
    use http_body::Body as _;
    if incoming.is_end_stream() {
        return Ok(body::empty());
    }
    let mut read = body::Gather::new(None, 0);
    let limit = usize::try_from(opts.max_request_body).unwrap_or(usize::MAX);
    loop {
        let next = tokio::time::timeout(opts.client_body_timeout, incoming.frame()).await;
        let frame = match next {
            Err(_) => {
                let mut r = body::error(
                    StatusCode::REQUEST_TIMEOUT,
                    &format!(
                        "the request body stalled: nothing for {} s",
                        opts.client_body_timeout.as_secs_f64()
                    ),
                );
                r.headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
                return Err(r);
            }
            Ok(None) => break,
            Ok(Some(Err(e))) => {
                return Err(body::error(
                    StatusCode::BAD_REQUEST,
                    &format!("the request body broke off: {e}"),
                ));
            }
            Ok(Some(Ok(frame))) => frame,
        };
        let Ok(data) = frame.into_data() else {
            continue; // trailers: not forwarded
        };
        read.push(data);
        let held = read.len();
        if held > limit {
            return Err(body::error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "the request body is larger than --max-request-body",
            ));
        }
        if held > opts.request_buffer {
            let rest = Limited::new(incoming, limit - held);
            let rest = IdleTimeout::new(rest, opts.client_body_timeout, "the client", None);
            let read = read.into_chunks();
            return Ok(Prefixed { read, rest }.boxed());
        }
    }
    Ok(body::full(read.into_bytes()))
}

/// The client's answer to a failed upstream request.
fn upstream_error(url: &str, e: &hyper_util::client::legacy::Error) -> Response<Body> {
    let mut source = e.source();
    while let Some(s) = source {
        if s.is::<http_body_util::LengthLimitError>() {
            return body::error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "the request body is larger than --max-request-body",
            );
        }
        source = s.source();
    }
    let (said, why) = if e.is_connect() {
        (
            "cannot connect to the upstream",
            format!("cannot connect to {url}: {}", root_cause(e)),
        )
    } else {
        (
            "the upstream failed",
            format!("{url} failed: {}", root_cause(e)),
        )
    };
    // The cause (`connection refused`) says what happened; the address stays in the log.
    let mut r = body::error(
        StatusCode::BAD_GATEWAY,
        &format!("{said}: {}", root_cause(e)),
    );
    r.extensions_mut().insert(UpstreamFailure(why));
    r
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut last = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        last = s.to_string();
        source = s.source();
    }
    last
}

/// The upstream's response as it is: its status, headers (less hop-by-hop) and body,
/// streamed, cut off if the upstream goes quiet for `upstream_idle_timeout` (`note`: the
/// log's words for it, see [`what`]).
pub fn pass(resp: Response<Incoming>, opts: &Options, note: String) -> Response<Body> {
    let (mut parts, incoming) = resp.into_parts();
    own_head(&mut parts);
    let idle = opts.upstream_idle_timeout;
    let body = IdleTimeout::new(incoming, idle, "the upstream", Some(note));
    Response::from_parts(parts, body.boxed())
}

/// An upstream response's head as pare sends it on: without the hop-by-hop headers, and in
/// pare's own HTTP version, whatever the upstream spoke (the version is the connection's,
/// not the message's: RFC 9110 §6.2).
pub fn own_head(parts: &mut hyper::http::response::Parts) {
    strip_hop_by_hop(&mut parts.headers);
    parts.version = Version::HTTP_11;
}

/// Take out the hop-by-hop headers, and those `Connection` names. A message that came with
/// `Transfer-Encoding` loses its `Content-Length` too: the encoding decided its length
/// (RFC 9112 §6.3), and passed on beside the decoded body the length would cut it short.
pub fn strip_hop_by_hop(headers: &mut HeaderMap) {
    if headers.contains_key(header::TRANSFER_ENCODING) {
        headers.remove(header::CONTENT_LENGTH);
    }
    let named: Vec<String> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|n| n.trim().to_ascii_lowercase())
        .filter(|n| !n.is_empty())
        .collect();
    for name in HOP_BY_HOP
        .iter()
        .copied()
        .chain(named.iter().map(String::as_str))
    {
        headers.remove(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hop_by_hop_headers_and_those_connection_names_stay_behind() {
        let mut h = HeaderMap::new();
        for (k, v) in [
            ("connection", "keep-alive, X-Secret-Hop"),
            ("keep-alive", "timeout=5"),
            ("x-secret-hop", "1"),
            ("transfer-encoding", "chunked"),
            ("te", "trailers"),
            ("accept", "application/json"),
            ("authorization", "Bearer t"),
        ] {
            h.append(k, HeaderValue::from_static(v));
        }
        strip_hop_by_hop(&mut h);
        let mut left: Vec<&str> = h.keys().map(|k| k.as_str()).collect();
        left.sort_unstable();
        assert_eq!(left, ["accept", "authorization"]);
    }
}
