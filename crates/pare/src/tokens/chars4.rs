//! `chars4`: the chars/4 estimate some clients gate tool output on.

use super::*;

/// `ceil(chars / 4)`, chars being Unicode scalar values.
pub(super) struct Chars4;

impl Chars4 {
    /// Byte offset of the `n`th char, or the text's length if it has fewer.
    fn char_offset(text: &str, n: usize) -> usize {
        text.char_indices().nth(n).map_or(text.len(), |(i, _)| i)
    }
}

impl Tokenizer for Chars4 {
    fn name(&self) -> &str {
        "chars4"
    }

    fn count(&self, text: &str) -> usize {
        text.chars().count().div_ceil(4)
    }

    fn count_floor(&self, text: &str) -> usize {
        self.count(text)
    }

    /// The first `4 * max_tokens` chars.
    fn prefix_len(&self, text: &str, max_tokens: usize) -> usize {
        Self::char_offset(text, max_tokens.saturating_mul(4))
    }

    /// The last `4 * max_tokens` chars: the longest suffix this estimate puts at
    /// `max_tokens` (its "tokens" are notional, so keep as much text as the budget allows).
    fn suffix_start(&self, text: &str, max_tokens: usize) -> usize {
        let chars = text.chars().count();
        let keep = max_tokens.saturating_mul(4);
        Self::char_offset(text, chars.saturating_sub(keep))
    }

    fn fits(&self, text: &str, max_tokens: usize) -> bool {
        // Stop counting chars as soon as the limit is passed.
        let limit = max_tokens.saturating_mul(4);
        text.chars().nth(limit).is_none()
    }
}
