//! The one response body type of the doors: a boxed stream of byte chunks, so a passed
//! through body streams and a shaped one is a single chunk, behind the same type.

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Empty, Full};
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{Response, StatusCode};

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
pub type Body = BoxBody<Bytes, BoxError>;

pub fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).map_err(|e| match e {}).boxed()
}

pub fn empty() -> Body {
    Empty::new().map_err(|e| match e {}).boxed()
}

/// A response with a JSON body (already serialized).
pub fn json(status: StatusCode, body: String) -> Response<Body> {
    let mut r = Response::new(full(body));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

/// pare's own error: `{"error": "pare: …"}` with `status`.
pub fn error(status: StatusCode, message: &str) -> Response<Body> {
    json(
        status,
        serde_json::json!({ "error": format!("pare: {message}") }).to_string(),
    )
}
