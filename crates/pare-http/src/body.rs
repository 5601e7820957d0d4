//! The one response body type of the doors: a boxed stream of byte chunks, so a passed
//! through body streams and a shaped one is a single chunk, behind the same type.

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Empty, Full};
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{Response, StatusCode};

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
pub type Body = BoxBody<Bytes, BoxError>;

/// A body read whole: into one buffer when its length was declared (each chunk freed as it
/// is copied, so a 52 MB body is held once, not twice), else as chunks joined at the end.
pub struct Gather {
    whole: Option<bytes::BytesMut>,
    chunks: std::collections::VecDeque<Bytes>,
    len: usize,
}

impl Gather {
    /// For a body of `declared` bytes, if said (a buffer is made ahead only up to `cap`).
    pub fn new(declared: Option<u64>, cap: usize) -> Gather {
        let whole = declared
            .filter(|&n| n <= cap as u64)
            .map(|n| bytes::BytesMut::with_capacity(n as usize));
        Gather {
            whole,
            chunks: std::collections::VecDeque::new(),
            len: 0,
        }
    }

    pub fn push(&mut self, data: Bytes) {
        self.len += data.len();
        match &mut self.whole {
            Some(whole) => whole.extend_from_slice(&data),
            None => self.chunks.push_back(data),
        }
    }

    /// The bytes read so far.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// What was read, as chunks to send on.
    pub fn into_chunks(self) -> std::collections::VecDeque<Bytes> {
        match self.whole {
            Some(whole) => std::iter::once(whole.freeze()).collect(),
            None => self.chunks,
        }
    }

    /// What was read, in one piece.
    pub fn into_bytes(self) -> Bytes {
        match self.whole {
            Some(whole) => whole.freeze(),
            None => joined(self.chunks, self.len),
        }
    }
}

/// `chunks` (`len` bytes in all) as one buffer; a single chunk is not copied.
fn joined(mut chunks: std::collections::VecDeque<Bytes>, len: usize) -> Bytes {
    if chunks.len() <= 1 {
        return chunks.pop_front().unwrap_or_default();
    }
    let mut whole = bytes::BytesMut::with_capacity(len);
    for chunk in chunks {
        whole.extend_from_slice(&chunk);
    }
    whole.freeze()
}

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

/// A body fed chunk by chunk from a thread (the MCP sessions' streams are threads, and a
/// response shaped as it arrives): the [`Feed`] side blocks while the client reads slowly
/// (`capacity` chunks in flight) and learns when it has gone (the body was dropped).
pub fn channel(capacity: usize) -> (Feed, Body) {
    let (tx, rx) = tokio::sync::mpsc::channel(capacity.max(1));
    (Feed(tx), ChannelBody(rx).boxed())
}

type FrameResult = Result<http_body::Frame<Bytes>, BoxError>;

/// The sending side of [`channel`].
pub struct Feed(tokio::sync::mpsc::Sender<FrameResult>);

impl Feed {
    /// Send a chunk, waiting for room; `false` once the client has gone. Call it from a
    /// thread, not from async code.
    pub fn send(&self, chunk: Bytes) -> bool {
        self.0
            .blocking_send(Ok(http_body::Frame::data(chunk)))
            .is_ok()
    }

    /// End the body with these trailer fields (sent when the client asked for trailers and
    /// the response's `Trailer` header names them).
    pub fn trailers(&self, fields: hyper::HeaderMap) -> bool {
        self.0
            .blocking_send(Ok(http_body::Frame::trailers(fields)))
            .is_ok()
    }

    /// Break the body off: the client sees it end without its last chunk.
    pub fn fail(&self, why: String) {
        let _ = self.0.blocking_send(Err(why.into()));
    }
}

struct ChannelBody(tokio::sync::mpsc::Receiver<FrameResult>);

impl http_body::Body for ChannelBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<FrameResult>> {
        self.0.poll_recv(cx)
    }
}

/// Read a request body whole: at most `cap` bytes, within `deadline`.
pub async fn read_capped(
    body: hyper::body::Incoming,
    cap: usize,
    deadline: std::time::Duration,
) -> Result<Bytes, ReadError> {
    let limited = http_body_util::Limited::new(body, cap);
    match tokio::time::timeout(deadline, limited.collect()).await {
        Err(_) => Err(ReadError::TooSlow),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(ReadError::TooLarge),
        Ok(Err(e)) => Err(ReadError::Broken(e.to_string())),
    }
}

/// Why a request body could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("the request body is too large")]
    TooLarge,
    #[error("the request took too long to arrive")]
    TooSlow,
    #[error("the request body broke off: {0}")]
    Broken(String),
}
