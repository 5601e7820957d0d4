//! Any HuggingFace `tokenizer.json`, counted with the `tokenizers` library (the
//! `hf-tokenizer` feature: it brings some 40 crates that only `--tokenizer-file` needs).

use super::*;

/// [`super::from_tokenizer_json`].
pub(super) fn load(name: &str, bytes: &[u8]) -> Result<Box<dyn Tokenizer>, TokenizerError> {
    let invalid = |reason: String| TokenizerError::InvalidFile {
        name: name.to_owned(),
        reason,
    };
    let mut inner = tokenizers::Tokenizer::from_bytes(bytes).map_err(|e| invalid(e.to_string()))?;
    inner
        .with_truncation(None)
        .map_err(|e| invalid(e.to_string()))?;
    inner.with_padding(None);
    // A file can parse yet fail on every input (say, a model with no unknown token); find
    // out now rather than on the first payload.
    inner
        .encode("Hello, world! 123 ünïcödé 你好", false)
        .map_err(|e| invalid(format!("cannot encode sample text: {e}")))?;
    let name = match name.strip_prefix("file:") {
        Some(_) => name.to_owned(),
        None => format!("file:{name}"),
    };
    Ok(Box::new(HuggingFace { name, inner }))
}

pub(super) struct HuggingFace {
    name: String,
    inner: tokenizers::Tokenizer,
}

impl HuggingFace {
    /// Byte spans of the tokens of `text`. `None` if the tokenizer fails on this input.
    fn spans(&self, text: &str) -> Option<Vec<(usize, usize)>> {
        let encoding = self.inner.encode(text, false).ok()?;
        Some(encoding.get_offsets().to_vec())
    }
}

/// End of the first `n` of `spans` in `text`. Offsets may be trimmed (byte-level BPE
/// drops a token's leading space from its span) and tokens holding parts of one character
/// share its span, so take the smaller of "end of the kept tokens" and "start of the
/// dropped ones": either way the prefix holds no byte of a dropped token. Empty spans
/// (tokens a normalizer inserted) say nothing and are skipped.
pub(super) fn spans_prefix(text: &str, spans: &[(usize, usize)], n: usize) -> usize {
    if n >= spans.len() {
        return text.len();
    }
    let (kept, dropped) = spans.split_at(n);
    let real = |s: &&(usize, usize)| s.0 < s.1;
    let kept_end = kept.iter().filter(real).map(|s| s.1).max().unwrap_or(0);
    let dropped_start = dropped.iter().filter(real).map(|s| s.0).min();
    floor_char_boundary(text, dropped_start.map_or(kept_end, |d| kept_end.min(d)))
}

/// Start of the last `n` of `spans` in `text`: the mirror of [`spans_prefix`].
pub(super) fn spans_suffix(text: &str, spans: &[(usize, usize)], n: usize) -> usize {
    if n >= spans.len() {
        return 0;
    }
    let (dropped, kept) = spans.split_at(spans.len() - n);
    let real = |s: &&(usize, usize)| s.0 < s.1;
    let kept_start = kept
        .iter()
        .filter(real)
        .map(|s| s.0)
        .min()
        .unwrap_or(text.len());
    let dropped_end = dropped.iter().filter(real).map(|s| s.1).max();
    ceil_char_boundary(text, dropped_end.map_or(kept_start, |d| kept_start.max(d)))
}

impl Tokenizer for HuggingFace {
    fn name(&self) -> &str {
        &self.name
    }

    /// If the tokenizer fails on an input (it was checked on sample text at load, so
    /// this is rare), the byte length stands in: an overestimate, so budgets stay safe.
    fn count(&self, text: &str) -> usize {
        if text.is_empty() {
            return 0;
        }
        match self.inner.encode_fast(text, false) {
            Ok(encoding) => encoding.len(),
            Err(_) => text.len(),
        }
    }

    /// Cut by token offsets, then, as for the built-ins, make sure the prefix counted on
    /// its own is within `max_tokens`, backing off 1, 2, 4, ... tokens where it is not.
    fn prefix_len(&self, text: &str, max_tokens: usize) -> usize {
        if max_tokens == 0 || text.is_empty() {
            return 0;
        }
        let Some(spans) = self.spans(text) else {
            return 0;
        };
        let (mut n, mut step) = (max_tokens, 1);
        loop {
            let end = spans_prefix(text, &spans, n);
            if n == 0 || self.count(&text[..end]) <= max_tokens {
                return end;
            }
            n = n.saturating_sub(step);
            step = step.saturating_mul(2);
        }
    }

    /// Mirror of [`HuggingFace::prefix_len`].
    fn suffix_start(&self, text: &str, max_tokens: usize) -> usize {
        if max_tokens == 0 || text.is_empty() {
            return text.len();
        }
        let Some(spans) = self.spans(text) else {
            return text.len();
        };
        let (mut n, mut step) = (max_tokens, 1);
        loop {
            let start = spans_suffix(text, &spans, n);
            if n == 0 || self.count(&text[start..]) <= max_tokens {
                return start;
            }
            n = n.saturating_sub(step);
            step = step.saturating_mul(2);
        }
    }
}
