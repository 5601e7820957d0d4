//! A body that replays the chunks already read, then streams the rest: a JSON response
//! found too long to shape after pare began holding it goes on untouched, not lost.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body as HttpBody, Frame};
use hyper::body::Incoming;

use crate::body::BoxError;

pub struct Prefixed {
    pub read: VecDeque<Bytes>,
    pub rest: Incoming,
}

impl HttpBody for Prefixed {
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
