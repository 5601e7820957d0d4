//! A line from the server longer than `--max-message-bytes`.
//!
//! It is not held in memory: its head (the first `cap` bytes) is, and the rest waits in a
//! [`Spool`] until the line ends. Only then is it judged, so that nothing but whole JSON-RPC
//! messages reach the client: the head must read as a JSON-RPC object (its members so far
//! JSON-RPC's), `"jsonrpc":"2.0"` and an id or method must show in the head or at the end,
//! and the line must end with `}` and a newline (a server that died mid-reply leaves a
//! line cut short). A message that passes is forwarded byte for byte and settles its request;
//! one that does not is dropped with a log line, and its request, when its id is known and
//! it is open, gets an error — one answer either way.

use std::io::{self, BufRead, Write};

use super::{Shared, UpstreamEnd, Watched, log, preview};
use crate::lines::{LineReader, Rest, Spool};
use crate::rpc;
use crate::scan;

/// Read the rest of the oversized line whose first bytes are `head`, and forward it or not.
/// `None`: carry on reading the server.
pub(super) fn from_upstream(
    shared: &Shared,
    reader: &mut LineReader<impl BufRead>,
    head: &[u8],
) -> Option<UpstreamEnd> {
    let cap = shared.opts.max_message_bytes;
    let h = scan::head(head);
    if !h.plausible() {
        log(&format!(
            "dropped a line of more than {cap} bytes from the server (not JSON-RPC): {}",
            preview(head)
        ));
        return reader.copy_rest(None).err().map(|_| UpstreamEnd::Closed);
    }
    let mut spool = match Spool::new() {
        Ok(s) => s,
        Err(e) => {
            log(&format!(
                "no temporary file for a message of more than {cap} bytes ({e}); streaming it unchecked"
            ));
            return stream_unchecked(shared, reader, head, &h);
        }
    };
    let mut sink = Sink {
        inner: Some(spool.writer()),
        failed: None,
    };
    let read = reader.copy_rest(Some(&mut sink));
    let spooled = match sink.finish() {
        Ok(()) => Ok(()),
        Err(e) => Err(format!("the temporary file failed: {e}")),
    };
    // A read error is the server's output breaking off: the line is cut short.
    let (rest, broken) = match read {
        Ok(rest) => (rest, false),
        Err(_) => (
            Rest {
                tail: Vec::new(),
                newline: false,
            },
            true,
        ),
    };
    let id = response_id(&h, &rest.tail);
    let verdict = spooled.and_then(|()| judge(&h, &rest, id.is_some()));
    let end = broken.then_some(UpstreamEnd::Closed);
    if let Err(why) = verdict {
        log(&format!(
            "dropped a line of more than {cap} bytes from the server ({why}): {}",
            preview(head)
        ));
        if let Some(id) = id
            && shared.settle(&id)
        {
            let msg = format!("pare: the server's reply could not be passed on ({why})");
            if shared
                .to_client(&rpc::error(&id, rpc::INTERNAL_ERROR, &msg))
                .is_err()
            {
                return Some(UpstreamEnd::ClientGone);
            }
        }
        return end;
    }
    log(&format!(
        "a message of more than {cap} bytes is forwarded unchanged (raise --max-message-bytes to shape it)"
    ));
    let sent = to_client(shared, head, |client| spool.copy_to(client).map(drop));
    if let Some(id) = &id {
        shared.settle(id);
    }
    match sent {
        Ok(()) => end,
        Err(Broke::Client) => Some(UpstreamEnd::ClientGone),
        Err(Broke::Source(e)) => {
            log(&format!("reading back the temporary file failed: {e}"));
            Some(UpstreamEnd::Closed)
        }
    }
}

/// The id of the response whose head is `h` and whose last bytes are `tail`: read in the
/// head, or (unless the head shows a method: a request's id is not a reply's) at the end.
fn response_id(h: &scan::Head, tail: &[u8]) -> Option<serde_json::Value> {
    match h.response_id() {
        Some(id) => Some(id.clone()),
        None if !h.method => scan::id_at_end(tail),
        None => None,
    }
}

/// Why writing a line to the client failed.
enum Broke {
    /// The client stopped reading.
    Client,
    /// Where the rest of the line came from failed.
    Source(io::Error),
}

/// Write one line to the client, under its lock: `head`, what `rest` copies, a newline.
fn to_client<T>(
    shared: &Shared,
    head: &[u8],
    rest: impl FnOnce(&mut Watched) -> io::Result<T>,
) -> Result<T, Broke> {
    let mut out = shared.client_out.lock().expect("client writer");
    let mut client = Watched {
        inner: &mut **out,
        failed: false,
    };
    let sent = client
        .write_all(head)
        .and_then(|()| rest(&mut client))
        .and_then(|v| {
            client
                .write_all(b"\n")
                .and_then(|()| client.flush())
                .map(|()| v)
        });
    // The copy reads one side and writes the other: either may have failed.
    sent.map_err(|e| {
        if client.failed {
            Broke::Client
        } else {
            Broke::Source(e)
        }
    })
}

/// Whether the whole line is one JSON-RPC message; `Err(why)` if not.
fn judge(h: &scan::Head, rest: &Rest, id: bool) -> Result<(), String> {
    let last = rest.tail.iter().rev().find(|b| !b.is_ascii_whitespace());
    if !rest.newline || last != Some(&b'}') {
        return Err("cut short: the server's output ended inside it".into());
    }
    if h.jsonrpc != Some(true) && !scan::jsonrpc_in_tail(&rest.tail) {
        return Err("no \"jsonrpc\":\"2.0\" in its head or at its end".into());
    }
    if !id && !h.method {
        return Err("no id or method in its head or at its end".into());
    }
    Ok(())
}

/// Without a temporary file: stream the line to the client as it comes (the checks on its
/// end cannot be made), settling its request by the id at its head or end.
fn stream_unchecked(
    shared: &Shared,
    reader: &mut LineReader<impl BufRead>,
    head: &[u8],
    h: &scan::Head,
) -> Option<UpstreamEnd> {
    match to_client(shared, head, |client| reader.copy_rest(Some(client))) {
        Ok(rest) => {
            if let Some(id) = response_id(h, &rest.tail) {
                shared.settle(&id);
            }
            None
        }
        Err(Broke::Client) => Some(UpstreamEnd::ClientGone),
        Err(Broke::Source(_)) => Some(UpstreamEnd::Closed),
    }
}

/// A writer that, once it fails, swallows the rest (so the line is still read to its end)
/// and keeps the first error.
struct Sink<W: Write> {
    inner: Option<W>,
    failed: Option<io::Error>,
}

impl<W: Write> Sink<W> {
    fn finish(mut self) -> io::Result<()> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        match self.inner.as_mut() {
            Some(w) => w.flush(),
            None => Ok(()),
        }
    }
}

impl<W: Write> Write for Sink<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Some(w) = self.inner.as_mut()
            && let Err(e) = w.write_all(buf)
        {
            self.failed = Some(e);
            self.inner = None;
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
