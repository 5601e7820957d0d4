//! A body that replays the chunks already read, then streams the rest: a JSON response
//! found too long to shape after pare began holding it goes on untouched, not lost; a
//! request body longer than pare reads ahead goes to the upstream whole.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::body::BoxError;
use bytes::Bytes;
use http_body::{Body as HttpBody, Frame};

/// The chunks `read`, then what `rest` sends.
pub struct Prefixed<B> {
    pub read: VecDeque<Bytes>,
    pub rest: B,
}

impl<B> HttpBody for Prefixed<B>
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
        if let Some(chunk) = self.read.pop_front() {
            return Poll::Ready(Some(Ok(Frame::data(chunk))));
        }
        Pin::new(&mut self.rest).poll_frame(cx).map_err(Into::into)
    }
}
