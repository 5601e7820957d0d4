//! The input text's token count, taken once: started on another thread as the request comes
//! in when the request will need it (it then runs beside parsing, shaping and rendering, off
//! the path to the answer), looked up when the tokenizer remembers it, else counted when
//! first asked.

use std::cell::{Cell, OnceCell};
use std::thread::ScopedJoinHandle;

use crate::tokens::Tokenizer;

/// Texts shorter than this are counted when asked: starting a thread costs about as much.
pub(super) const EARLY_FROM_BYTES: usize = 4 << 10;

pub(super) struct InputCount<'s, 't> {
    how: How<'s, 't>,
    done: OnceCell<usize>,
}

enum How<'s, 't> {
    /// A thread is counting (taken when joined).
    Running(Cell<Option<ScopedJoinHandle<'s, usize>>>),
    Later(&'t dyn Tokenizer, &'t str),
}

impl<'s, 't> InputCount<'s, 't> {
    /// The count a thread is taking.
    pub(super) fn running(handle: ScopedJoinHandle<'s, usize>) -> Self {
        InputCount {
            how: How::Running(Cell::new(Some(handle))),
            done: OnceCell::new(),
        }
    }

    /// `text` counted by `tok` when first asked.
    pub(super) fn later(tok: &'t dyn Tokenizer, text: &'t str) -> Self {
        InputCount {
            how: How::Later(tok, text),
            done: OnceCell::new(),
        }
    }

    /// The count is `n`, known already.
    pub(super) fn know(&self, n: usize) {
        let _ = self.done.set(n);
    }

    pub(super) fn get(&self) -> usize {
        *self.done.get_or_init(|| match &self.how {
            How::Running(h) => h
                .take()
                .expect("`get_or_init` joins it once")
                .join()
                .expect("counting does not panic"),
            How::Later(tok, text) => tok.count(text),
        })
    }
}
