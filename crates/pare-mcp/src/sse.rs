//! Server-sent events (`text/event-stream`), read incrementally.
//!
//! MCP's streamable HTTP transport carries JSON-RPC messages as SSE events: each event's
//! `data:` lines (joined with `\n`) are one message. [`Events`] reads events one at a time
//! from a [`BufRead`] as they arrive, so a message is handed on while the stream stays open
//! (a server→client request in the middle of a long tool call must reach the client before
//! the call's response). An event whose data outgrows a cap ([`Events::with_cap`]) is not
//! held: it comes out in [`Item::Part`]s as it arrives.
//!
//! ```
//! use pare_mcp::sse::{Events, Item};
//! let body = b"event: message\nid: 1\ndata: {\"a\":1}\n\n: a comment\ndata: x\ndata: y\n\n";
//! let events: Vec<_> = Events::new(&body[..]).map(|e| e.unwrap()).collect();
//! let Item::Event(first) = &events[0] else { panic!() };
//! assert_eq!(first.data, "{\"a\":1}");
//! assert_eq!(first.id.as_deref(), Some("1"));
//! assert!(matches!(&events[1], Item::Event(e) if e.data == "x\ny"));
//! ```

use std::io::{self, BufRead, Read};

/// One event: its `event:` type (default `message`), `id:`, and data.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Event {
    pub event: Option<String>,
    pub id: Option<String>,
    pub data: String,
}

/// What [`Events`] hands out.
#[derive(Debug, PartialEq, Eq)]
pub enum Item {
    /// A whole event.
    Event(Event),
    /// A piece of the data of an event over the cap, in order; `last`: the event ends here.
    /// The pieces joined are the event's data.
    Part { data: Vec<u8>, last: bool },
}

/// The events of a stream, in order; ends at end of input.
pub struct Events<R> {
    inner: R,
    line: Vec<u8>,
    cap: usize,
    /// Inside a data line over the cap: the rest of it comes out as it arrives.
    in_long_line: bool,
    /// Inside an event whose data went out in parts.
    in_long_event: bool,
}

impl<R: BufRead> Events<R> {
    pub fn new(inner: R) -> Self {
        Self::with_cap(inner, usize::MAX)
    }

    /// Events whose data is longer than `cap` bytes come out in parts.
    pub fn with_cap(inner: R, cap: usize) -> Self {
        Events {
            inner,
            line: Vec::new(),
            cap: cap.max(1),
            in_long_line: false,
            in_long_event: false,
        }
    }

    /// The next piece of a long data line.
    fn long_line_part(&mut self) -> io::Result<Item> {
        let buf = self.inner.fill_buf()?;
        if buf.is_empty() {
            // The stream ended inside the event: end it here.
            self.in_long_line = false;
            self.in_long_event = false;
            return Ok(Item::Part {
                data: Vec::new(),
                last: true,
            });
        }
        let (mut data, used) = match memchr::memchr(b'\n', buf) {
            Some(i) => {
                self.in_long_line = false;
                (buf[..i].to_vec(), i + 1)
            }
            None => (buf.to_vec(), buf.len()),
        };
        self.inner.consume(used);
        if !self.in_long_line && data.last() == Some(&b'\r') {
            data.pop();
        }
        Ok(Item::Part { data, last: false })
    }
}

impl<R: BufRead> Iterator for Events<R> {
    type Item = io::Result<Item>;

    fn next(&mut self) -> Option<io::Result<Item>> {
        if self.in_long_line {
            return Some(self.long_line_part());
        }
        let mut ev = Event::default();
        let mut has_data = false;
        loop {
            self.line.clear();
            let limit = ((self.cap - ev.data.len().min(self.cap)) as u64).saturating_add(8);
            match (&mut self.inner)
                .take(limit)
                .read_until(b'\n', &mut self.line)
            {
                Err(e) => return Some(Err(e)),
                // End of input: an event not ended by a blank line is dropped (per the spec).
                Ok(0) if self.in_long_event => {
                    self.in_long_event = false;
                    return Some(Ok(Item::Part {
                        data: Vec::new(),
                        last: true,
                    }));
                }
                Ok(0) => return None,
                Ok(_) => {}
            }
            if self.line.last() != Some(&b'\n') && self.line.len() as u64 == limit {
                // A line over the cap. Only data is worth streaming; other fields are skipped.
                let Some(value) = self.line.strip_prefix(b"data:") else {
                    if let Err(e) = skip_line(&mut self.inner) {
                        return Some(Err(e));
                    }
                    continue;
                };
                let value = value.strip_prefix(b" ").unwrap_or(value);
                let mut data = std::mem::take(&mut ev.data).into_bytes();
                if has_data || self.in_long_event {
                    data.push(b'\n');
                }
                data.extend_from_slice(value);
                self.in_long_line = true;
                self.in_long_event = true;
                return Some(Ok(Item::Part { data, last: false }));
            }
            let mut line = &self.line[..];
            if let Some(l) = line.strip_suffix(b"\n") {
                line = l;
            }
            if let Some(l) = line.strip_suffix(b"\r") {
                line = l;
            }
            if self.in_long_event {
                // The rest of an event that went out in parts.
                if line.is_empty() {
                    self.in_long_event = false;
                    return Some(Ok(Item::Part {
                        data: Vec::new(),
                        last: true,
                    }));
                }
                if let Some(value) = line.strip_prefix(b"data:") {
                    let mut data = vec![b'\n'];
                    data.extend_from_slice(value.strip_prefix(b" ").unwrap_or(value));
                    return Some(Ok(Item::Part { data, last: false }));
                }
                continue;
            }
            if line.is_empty() {
                if has_data {
                    return Some(Ok(Item::Event(ev)));
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

/// Read and drop the rest of a line.
fn skip_line(r: &mut impl BufRead) -> io::Result<()> {
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok(());
        }
        match memchr::memchr(b'\n', buf) {
            Some(i) => {
                r.consume(i + 1);
                return Ok(());
            }
            None => {
                let n = buf.len();
                r.consume(n);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(body: &[u8]) -> Vec<Event> {
        Events::new(body)
            .map(|i| match i.unwrap() {
                Item::Event(e) => e,
                part => panic!("{part:?}"),
            })
            .collect()
    }

    #[test]
    fn an_event_over_the_cap_comes_out_in_parts() {
        let body = b"data: 0123456789abcdef\ndata: tail\n\ndata: small\n\n";
        let items: Vec<Item> = Events::with_cap(io::BufReader::with_capacity(4, &body[..]), 6)
            .map(Result::unwrap)
            .collect();
        let mut joined = Vec::new();
        let mut ends = 0;
        for item in &items[..items.len() - 1] {
            let Item::Part { data, last } = item else {
                panic!("{item:?}")
            };
            joined.extend_from_slice(data);
            ends += usize::from(*last);
        }
        assert_eq!(joined, b"0123456789abcdef\ntail");
        assert_eq!(ends, 1);
        assert!(matches!(items.last(), Some(Item::Event(e)) if e.data == "small"));
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
        assert!(matches!(evs.next().unwrap().unwrap(), Item::Event(e) if e.data == "1"));
        assert!(evs.next().unwrap().is_err());
    }
}
