//! The request to the upstream, and a response passed back untouched.
//!
//! Headers go through as they came, less the hop-by-hop ones (RFC 9110 §7.6.1:
//! `Connection` and the names it lists, `Keep-Alive`, `Proxy-Connection`, `TE`,
//! `Trailer`, `Transfer-Encoding`, `Upgrade`) and `Expect` (hyper answers `100
//! Continue` itself); on a shaped route pare's own (`X-Pare-*`) stay behind too. `Host`
//! becomes the upstream's; the client's is sent as `X-Forwarded-Host`, its address is
//! appended to `X-Forwarded-For`, and `X-Forwarded-Proto` is set unless a proxy in front
//! set it. The body streams through, capped.

use std::error::Error as _;
use std::net::SocketAddr;

use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::{Request, Response, StatusCode, Uri, Version};
use pare::rest::ask::is_pare_header;

use super::State;
use crate::access::Entry;
use crate::body::{self, Body};

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
    match request(state, req, query, strip_pare, peer).await {
        Ok(resp) => {
            log.set("upstream_status", resp.status().as_u16());
            pass(resp)
        }
        Err(failed) => failed,
    }
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
    if let Some(h) = client_host {
        headers.insert("x-forwarded-host", h);
    }
    let ip = peer.ip().to_string();
    let forwarded_for = match headers.get("x-forwarded-for").and_then(|v| v.to_str().ok()) {
        Some(earlier) => format!("{earlier}, {ip}"),
        None => ip,
    };
    if let Ok(v) = HeaderValue::from_str(&forwarded_for) {
        headers.insert("x-forwarded-for", v);
    }
    if !headers.contains_key("x-forwarded-proto") {
        headers.insert("x-forwarded-proto", HeaderValue::from_static("http"));
    }
    let limit = usize::try_from(opts.max_request_body).unwrap_or(usize::MAX);
    let body: Body = Limited::new(incoming, limit).boxed();
    let mut out = Request::new(body);
    *out.method_mut() = parts.method;
    *out.uri_mut() = uri;
    *out.version_mut() = Version::HTTP_11;
    *out.headers_mut() = headers;
    match tokio::time::timeout(opts.upstream_timeout, state.client.request(out)).await {
        Ok(Ok(resp)) => Ok(resp),
        Ok(Err(e)) => Err(upstream_error(&up.url(), &e)),
        Err(_) => Err(body::error(
            StatusCode::GATEWAY_TIMEOUT,
            &format!(
                "the upstream {} did not answer within {} s",
                up.url(),
                opts.upstream_timeout.as_secs_f64()
            ),
        )),
    }
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
    let why = if e.is_connect() {
        format!("cannot connect to the upstream {url}: {}", root_cause(e))
    } else {
        format!("the upstream {url} failed: {}", root_cause(e))
    };
    body::error(StatusCode::BAD_GATEWAY, &why)
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
/// streamed.
pub fn pass(resp: Response<Incoming>) -> Response<Body> {
    let (mut parts, incoming) = resp.into_parts();
    strip_hop_by_hop(&mut parts.headers);
    Response::from_parts(parts, incoming.map_err(Into::into).boxed())
}

/// Take out the hop-by-hop headers, and those `Connection` names.
pub fn strip_hop_by_hop(headers: &mut HeaderMap) {
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
