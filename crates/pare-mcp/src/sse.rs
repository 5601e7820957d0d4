//! Server-sent events (`text/event-stream`), read incrementally.
//!
//! MCP's streamable HTTP transport carries JSON-RPC messages as SSE events: each event's
//! `data:` lines (joined with `\n`) are one message. [`Events`] reads events one at a time
//! from a [`BufRead`] as they arrive, so a message is handed on while the stream stays open
//! (a server→client request in the middle of a long tool call must reach the client before
//! the call's response).
//!
//! ```
//! use pare_mcp::sse::Events;
//! let body = b"event: message\nid: 1\ndata: {\"a\":1}\n\n: a comment\ndata: x\ndata: y\n\n";
//! let events: Vec<_> = Events::new(&body[..]).map(|e| e.unwrap()).collect();
//! assert_eq!(events[0].data, "{\"a\":1}");
//! assert_eq!(events[0].id.as_deref(), Some("1"));
//! assert_eq!(events[1].data, "x\ny");
//! ```

use std::io::{self, BufRead};

/// One event: its `event:` type (default `message`), `id:`, and data.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Event {
    pub event: Option<String>,
    pub id: Option<String>,
    pub data: String,
}

/// The events of a stream, in order; ends at end of input.
pub struct Events<R> {
    inner: R,
    line: Vec<u8>,
}

impl<R: BufRead> Events<R> {
    pub fn new(inner: R) -> Self {
        Events {
            inner,
            line: Vec::new(),
        }
    }
}

impl<R: BufRead> Iterator for Events<R> {
    type Item = io::Result<Event>;

    fn next(&mut self) -> Option<io::Result<Event>> {
        let mut ev = Event::default();
        let mut has_data = false;
        loop {
            self.line.clear();
            match self.inner.read_until(b'\n', &mut self.line) {
                Err(e) => return Some(Err(e)),
                // End of input: an event not ended by a blank line is dropped (per the spec).
                Ok(0) => return None,
                Ok(_) => {}
            }
            let mut line = &self.line[..];
            if let Some(l) = line.strip_suffix(b"\n") {
                line = l;
            }
            if let Some(l) = line.strip_suffix(b"\r") {
                line = l;
            }
            if line.is_empty() {
                if has_data {
                    return Some(Ok(ev));
                }
                ev = Event::default();
                continue;
            }
            if line.starts_with(b":") {
                continue;
            }
            let text = String::from_utf8_lossy(line);
            let (field, value) = match text.split_once(':') {
                Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
                None => (&*text, ""),
            };
            match field {
                "data" => {
                    if has_data {
                        ev.data.push('\n');
                    }
                    ev.data.push_str(value);
                    has_data = true;
                }
                "event" => ev.event = Some(value.to_owned()),
                "id" => ev.id = Some(value.to_owned()),
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(body: &[u8]) -> Vec<Event> {
        Events::new(body).map(Result::unwrap).collect()
    }

    #[test]
    fn crlf_comments_and_events_without_data() {
        let evs = all(b": ping\r\n\r\nevent: message\r\ndata:{\"x\":1}\r\n\r\nid: 9\n\n");
        assert_eq!(evs.len(), 1);
        assert_eq!(evs[0].data, "{\"x\":1}");
        assert_eq!(evs[0].event.as_deref(), Some("message"));
    }

    #[test]
    fn an_unterminated_event_at_the_end_is_dropped() {
        assert_eq!(all(b"data: a\n\ndata: b\n").len(), 1);
    }

    #[test]
    fn events_are_handed_out_before_the_stream_ends() {
        // A reader that fails after the first event: the first still comes out.
        struct Then<'a>(&'a [u8]);
        impl io::Read for Then<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.0.is_empty() {
                    return Err(io::Error::other("stream still open"));
                }
                let n = self.0.len().min(buf.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut evs = Events::new(io::BufReader::new(Then(b"data: 1\n\n")));
        assert_eq!(evs.next().unwrap().unwrap().data, "1");
        assert!(evs.next().unwrap().is_err());
    }
}
