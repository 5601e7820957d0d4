//! Just enough HTTP/1.1 for MCP's streamable HTTP transport, on a blocking `TcpStream`.
//!
//! Why not a server crate: the proxy is thread-based with no async runtime, and the blocking
//! servers at hand buffer chunked bodies, which would hold back SSE events. What is needed
//! is small: read a request (request line, headers, a `Content-Length` body), write a
//! response with a length, or a chunked one whose chunks are flushed as they come (SSE).
//!
//! Limits keep a bad peer from costing memory or time: 64 KiB of head, 100 headers, a body
//! cap set by the caller, and deadlines for the whole head and the whole body (a peer that
//! sends a byte a second cannot hold a connection: 408). Chunked request bodies are refused
//! (411); MCP clients send a length. Framing RFC 9112 calls ambiguous is refused (400): more
//! than one `Content-Length` or `Host`, a length that is not all digits, no `Host` in
//! HTTP/1.1.
//!
//! ```text
//! POST /mcp HTTP/1.1            HTTP/1.1 200 OK
//! Content-Length: 58            Content-Type: text/event-stream
//!                               Transfer-Encoding: chunked
//! {"jsonrpc":"2.0",...}
//!                               <chunk: event: message\ndata: {...}\n\n> <0-chunk>
//! ```

use std::cell::Cell;
use std::io::{self, BufRead, Read, Write};
use std::net::TcpStream;
use std::rc::Rc;
use std::time::{Duration, Instant};

const MAX_HEAD: usize = 64 << 10;
const MAX_HEADERS: usize = 100;

/// One request.
#[derive(Debug)]
pub struct Request {
    pub method: String,
    /// The path, without the query.
    pub path: String,
    /// Names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Whether the connection may carry another request after this one.
    pub keep_alive: bool,
}

impl Request {
    /// The first header called `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Why no request was read.
#[derive(Debug)]
pub enum ReadError {
    /// The peer closed the connection (or went quiet) between requests.
    Closed,
    /// A request pare refuses: answer with this status and message, then close.
    Refused(u16, &'static str),
}

impl From<io::Error> for ReadError {
    fn from(_: io::Error) -> Self {
        ReadError::Closed
    }
}

/// How long a request may take to arrive.
#[derive(Debug, Clone, Copy)]
pub struct Deadlines {
    /// From its first byte to the end of its head.
    pub head: Duration,
    /// From the end of its head to the end of its body.
    pub body: Duration,
}

/// A connection whose reads fail (`TimedOut`) once the deadline in `deadline` has passed.
pub struct Timed {
    stream: TcpStream,
    deadline: Rc<Cell<Instant>>,
}

impl Timed {
    /// The stream, and the deadline cell its reads obey (the caller and [`read_request`]
    /// move it).
    pub fn new(stream: TcpStream, first: Instant) -> (Timed, Rc<Cell<Instant>>) {
        let deadline = Rc::new(Cell::new(first));
        (
            Timed {
                stream,
                deadline: deadline.clone(),
            },
            deadline,
        )
    }
}

impl Read for Timed {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self
            .deadline
            .get()
            .saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        self.stream.set_read_timeout(Some(left))?;
        self.stream.read(buf)
    }
}

/// Read one request. Its body may be at most `max_body` bytes. `deadline` holds until the
/// request's first byte (then the head and body deadlines take over).
pub fn read_request(
    r: &mut impl BufRead,
    max_body: usize,
    deadline: &Cell<Instant>,
    limits: Deadlines,
) -> Result<Request, ReadError> {
    // Waiting for a request is not an error to answer: a quiet end.
    if r.fill_buf().map_err(|_| ReadError::Closed)?.is_empty() {
        return Err(ReadError::Closed);
    }
    deadline.set(Instant::now() + limits.head);
    let request = read_head(r, max_body)?;
    deadline.set(Instant::now() + limits.body);
    let (head, length) = request;
    let mut body = vec![0; length];
    r.read_exact(&mut body).map_err(late)?;
    Ok(Request { body, ..head })
}

/// A read that failed inside a request: 408 if it was too slow.
fn late(e: io::Error) -> ReadError {
    match e.kind() {
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => {
            ReadError::Refused(408, "the request took too long to arrive")
        }
        _ => ReadError::Closed,
    }
}

/// The request line and headers; the body's length.
fn read_head(r: &mut impl BufRead, max_body: usize) -> Result<(Request, usize), ReadError> {
    let mut head_bytes = 0;
    let mut line = String::new();
    // Blank lines before a request are allowed (RFC 9112 §2.2).
    loop {
        line.clear();
        let n = read_head_line(r, &mut line, &mut head_bytes)?;
        if n == 0 {
            return Err(ReadError::Closed);
        }
        if !line.trim().is_empty() {
            break;
        }
    }
    let mut parts = line.split_ascii_whitespace();
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(ReadError::Refused(400, "malformed request line"));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(ReadError::Refused(505, "only HTTP/1.x is served"));
    }
    let http10 = version == "HTTP/1.0";
    let method = method.to_owned();
    let path = target.split('?').next().unwrap_or("").to_owned();

    let mut headers = Vec::new();
    loop {
        line.clear();
        if read_head_line(r, &mut line, &mut head_bytes)? == 0 {
            return Err(ReadError::Closed);
        }
        let l = line.trim_end_matches(['\r', '\n']);
        if l.is_empty() {
            break;
        }
        if headers.len() == MAX_HEADERS {
            return Err(ReadError::Refused(431, "too many headers"));
        }
        let Some((name, value)) = l.split_once(':') else {
            return Err(ReadError::Refused(400, "malformed header line"));
        };
        if name.is_empty() || name.ends_with(' ') || name.ends_with('\t') {
            return Err(ReadError::Refused(400, "malformed header name"));
        }
        headers.push((name.to_ascii_lowercase(), value.trim().to_owned()));
    }
    let get = |n: &str| {
        headers
            .iter()
            .find(|(h, _)| h == n)
            .map(|(_, v)| v.as_str())
    };
    if get("transfer-encoding").is_some() {
        return Err(ReadError::Refused(
            411,
            "chunked request bodies are not accepted; send Content-Length",
        ));
    }
    let count = |n: &str| headers.iter().filter(|(h, _)| h == n).count();
    if count("content-length") > 1 {
        return Err(ReadError::Refused(400, "more than one Content-Length"));
    }
    let length = match get("content-length") {
        None => 0,
        Some(v) if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => {
            v.parse::<usize>().map_err(|_| {
                ReadError::Refused(413, "the message is larger than --max-message-bytes")
            })?
        }
        Some(_) => return Err(ReadError::Refused(400, "bad Content-Length")),
    };
    if length > max_body {
        return Err(ReadError::Refused(
            413,
            "the message is larger than --max-message-bytes",
        ));
    }
    match count("host") {
        0 if !http10 => return Err(ReadError::Refused(400, "no Host header")),
        0 | 1 => {}
        _ => return Err(ReadError::Refused(400, "more than one Host header")),
    }
    let connection = get("connection").map(str::to_ascii_lowercase);
    let keep_alive = match connection.as_deref() {
        Some(c) if c.contains("close") => false,
        Some(c) if c.contains("keep-alive") => true,
        _ => !http10,
    };
    let request = Request {
        method,
        path,
        headers,
        body: Vec::new(),
        keep_alive,
    };
    Ok((request, length))
}

/// Read one line of the head, counting it against [`MAX_HEAD`].
fn read_head_line(
    r: &mut impl BufRead,
    line: &mut String,
    used: &mut usize,
) -> Result<usize, ReadError> {
    let mut raw = Vec::new();
    let n = io::Read::take(&mut *r, (MAX_HEAD - *used + 1) as u64)
        .read_until(b'\n', &mut raw)
        .map_err(late)?;
    *used += n;
    if *used > MAX_HEAD {
        return Err(ReadError::Refused(431, "request head too large"));
    }
    match String::from_utf8(raw) {
        Ok(s) => {
            line.push_str(&s);
            Ok(n)
        }
        Err(_) => Err(ReadError::Refused(400, "request head is not UTF-8")),
    }
}

/// The reason phrase of the statuses pare sends.
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        411 => "Length Required",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "",
    }
}

/// Write a whole response with a `Content-Length`.
pub fn respond(
    w: &mut impl Write,
    status: u16,
    headers: &[(&str, &str)],
    body: &[u8],
    keep_alive: bool,
) -> io::Result<()> {
    let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    if !keep_alive {
        head.push_str("Connection: close\r\n");
    }
    head.push_str("\r\n");
    w.write_all(head.as_bytes())?;
    w.write_all(body)?;
    w.flush()
}

/// A response whose body is sent in chunks as they come, each flushed at once.
pub struct Chunked<'a, W: Write> {
    w: &'a mut W,
}

impl<'a, W: Write> Chunked<'a, W> {
    /// Write the status line and headers (plus `Transfer-Encoding: chunked`).
    pub fn start(w: &'a mut W, status: u16, headers: &[(&str, &str)]) -> io::Result<Self> {
        let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
        for (n, v) in headers {
            head.push_str(&format!("{n}: {v}\r\n"));
        }
        head.push_str("Transfer-Encoding: chunked\r\n\r\n");
        w.write_all(head.as_bytes())?;
        w.flush()?;
        Ok(Chunked { w })
    }

    /// Send the pieces as one chunk and flush it.
    pub fn send(&mut self, pieces: &[&[u8]]) -> io::Result<()> {
        let len: usize = pieces.iter().map(|p| p.len()).sum();
        if len == 0 {
            return Ok(());
        }
        write!(self.w, "{len:x}\r\n")?;
        for p in pieces {
            self.w.write_all(p)?;
        }
        self.w.write_all(b"\r\n")?;
        self.w.flush()
    }

    /// End the body (the connection may then carry the next request).
    pub fn finish(self) -> io::Result<()> {
        self.w.write_all(b"0\r\n\r\n")?;
        self.w.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(raw: &str, max: usize) -> Result<Request, ReadError> {
        let limits = Deadlines {
            head: Duration::from_secs(10),
            body: Duration::from_secs(10),
        };
        let deadline = Cell::new(Instant::now());
        read_request(
            &mut io::BufReader::new(raw.as_bytes()),
            max,
            &deadline,
            limits,
        )
    }

    #[test]
    fn a_post_with_a_body_is_read_and_the_connection_kept() {
        let r = read(
            "POST /mcp?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nMcp-Session-Id: abc\r\n\r\n{}",
            100,
        )
        .unwrap();
        assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", "/mcp"));
        assert_eq!(r.header("mcp-session-id"), Some("abc"));
        assert_eq!(r.body, b"{}");
        assert!(r.keep_alive);
    }

    #[test]
    fn bad_requests_are_refused_with_a_status() {
        let status = |raw: &str| match read(raw, 10) {
            Err(ReadError::Refused(s, _)) => s,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            status("POST /mcp HTTP/1.1\r\nContent-Length: 11\r\n\r\n"),
            413
        );
        assert_eq!(
            status("POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"),
            411
        );
        assert_eq!(
            status("POST /mcp HTTP/1.1\r\nContent-Length: x\r\n\r\n"),
            400
        );
        assert_eq!(status("GARBAGE\r\n\r\n"), 400);
        assert_eq!(status("GET / HTTP/2.0\r\n\r\n"), 505);
        let long = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(MAX_HEAD));
        assert_eq!(status(&long), 431);
        // RFC 9112: ambiguous framing and hosts are 400.
        assert_eq!(
            status(
                "POST /mcp HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}"
            ),
            400
        );
        assert_eq!(
            status("POST /mcp HTTP/1.1\r\nHost: a\r\nContent-Length: +2\r\n\r\n{}"),
            400
        );
        assert_eq!(
            status("POST /mcp HTTP/1.1\r\nHost: a\r\nHost: b\r\nContent-Length: 2\r\n\r\n{}"),
            400
        );
        assert_eq!(
            status("POST /mcp HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}"),
            400
        );
        assert!(read("GET / HTTP/1.0\r\n\r\n", 10).is_ok());
    }

    #[test]
    fn a_closed_connection_is_not_an_error_to_answer() {
        assert!(matches!(read("", 10), Err(ReadError::Closed)));
        assert!(matches!(
            read("GET / HTTP/1.1\r\n", 10),
            Err(ReadError::Closed)
        ));
    }

    #[test]
    fn chunks_are_framed() {
        let mut out = Vec::new();
        let mut c =
            Chunked::start(&mut out, 200, &[("Content-Type", "text/event-stream")]).unwrap();
        c.send(&[b"ab", b"c"]).unwrap();
        c.send(&[]).unwrap();
        c.finish().unwrap();
        let s = String::from_utf8(out).unwrap();
        assert!(s.starts_with("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"));
        assert!(s.ends_with("\r\n\r\n3\r\nabc\r\n0\r\n\r\n"));
    }
}
