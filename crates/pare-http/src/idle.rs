//! A body that fails when its peer goes quiet: no chunk for the idle timeout ends it with
//! an [`Idle`] error, which hyper turns into a cut connection (a client of a chunked or
//! sized response sees it end early, never a complete-looking one).
//!
//! Why: a peer that sends part of a body and stops (a stalled upstream, a client trickling
//! an upload) would otherwise hold a connection, a slot and its buffers for as long as it
//! likes. nginx bounds the same gaps (`proxy_read_timeout`, `client_body_timeout`, 60 s).
//!
//! ```text
//! upstream: head, 5 KB, then nothing   →   client: head, 5 KB, connection cut after 60 s
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body as HttpBody, Frame, SizeHint};
use tokio::time::{Instant, Sleep};

use crate::access;
use crate::body::BoxError;

/// Bodies cut off because the upstream went quiet, since the process started.
pub static UPSTREAM_CUTS: AtomicU64 = AtomicU64::new(0);
/// Request bodies cut off because the client went quiet, since the process started.
pub static CLIENT_CUTS: AtomicU64 = AtomicU64::new(0);

/// A body's peer sent nothing for the timeout.
#[derive(Debug, thiserror::Error)]
#[error("{what} sent nothing for {} s", secs(*.after))]
pub struct Idle {
    /// Who went quiet: `the upstream`, `the client`.
    pub what: &'static str,
    /// The timeout.
    pub after: Duration,
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// `inner`, failing with [`Idle`] after `after` without a frame. `note`: the log line's
/// words for what was cut (`the response to GET /x`); `None` logs nothing.
pub struct IdleTimeout<B> {
    inner: B,
    after: Duration,
    what: &'static str,
    note: Option<String>,
    sleep: Pin<Box<Sleep>>,
}

impl<B> IdleTimeout<B> {
    /// Watch `inner` for gaps longer than `after` in what `what` sends.
    pub fn new(inner: B, after: Duration, what: &'static str, note: Option<String>) -> Self {
        IdleTimeout {
            inner,
            after,
            what,
            note,
            sleep: Box::pin(tokio::time::sleep(after)),
        }
    }
}

impl<B> HttpBody for IdleTimeout<B>
where
    B: HttpBody<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        match Pin::new(&mut self.inner).poll_frame(cx) {
            Poll::Ready(frame) => {
                let after = self.after;
                self.sleep.as_mut().reset(Instant::now() + after);
                Poll::Ready(frame.map(|f| f.map_err(Into::into)))
            }
            Poll::Pending => match self.sleep.as_mut().poll(cx) {
                Poll::Pending => Poll::Pending,
                Poll::Ready(()) => {
                    let idle = Idle {
                        what: self.what,
                        after: self.after,
                    };
                    let cuts = match self.what {
                        "the client" => &CLIENT_CUTS,
                        _ => &UPSTREAM_CUTS,
                    };
                    cuts.fetch_add(1, Ordering::Relaxed);
                    if let Some(note) = self.note.take() {
                        access::event(&format!("{idle}: {note} was cut off"));
                    }
                    Poll::Ready(Some(Err(Box::new(idle))))
                }
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
