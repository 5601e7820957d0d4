//! A tokenizer for tests: o200k_base, adding up the bytes it is asked to read, so a test
//! can say how much counting a piece of work did (none at all, or a bounded multiple).
//!
//! ```text
//! let m = Metered::default();  m.count("abc");  m.0.into_inner() == 3
//! ```

use std::sync::atomic::{AtomicUsize, Ordering};

use super::{Tokenizer, builtin};

/// o200k_base, adding up the bytes it is asked to read.
#[derive(Default)]
pub(crate) struct Metered(pub(crate) AtomicUsize);

impl Metered {
    fn read(&self, text: &str) {
        self.0.fetch_add(text.len(), Ordering::Relaxed);
    }

    /// The bytes read so far.
    pub(crate) fn bytes_read(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }
}

fn tok() -> &'static dyn Tokenizer {
    builtin("o200k_base").expect("o200k_base is built in")
}

impl Tokenizer for Metered {
    fn name(&self) -> &str {
        "o200k_base"
    }
    fn count(&self, text: &str) -> usize {
        self.read(text);
        tok().count(text)
    }
    fn prefix_len(&self, text: &str, max_tokens: usize) -> usize {
        self.read(text);
        tok().prefix_len(text, max_tokens)
    }
    fn suffix_start(&self, text: &str, max_tokens: usize) -> usize {
        self.read(text);
        tok().suffix_start(text, max_tokens)
    }
    fn fits(&self, text: &str, max_tokens: usize) -> bool {
        self.read(text);
        tok().fits(text, max_tokens)
    }
}
