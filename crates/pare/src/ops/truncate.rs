//! `truncate`: cut long strings to a token budget, keeping the head and the tail.
//!
//! Why: one 5,000-token description can cost more than the rest of a response. The cut
//! keeps the start (what a text is about) and the end (its conclusion, a stack trace's last
//! frame) and says how much is missing, counted by the policy's tokenizer. The result —
//! marker included — never exceeds `max_tokens`. Cut strings are recorded.
//!
//! ```toml
//! [[ops]]
//! op = "truncate"
//! at = ["$..description"]
//! max_tokens = 20
//! ```
//!
//! In: `{"id":1,"description":"Redis is an in-memory data store used as a cache, a message broker and a database; this one holds the session tokens of the web tier and is flushed nightly."}`
//! Out: `{"id":1,"description":"Redis is an in-memory data store used …[22 tokens cut]…  is flushed nightly."}`

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::compile::{CompileCx, PolicyError};
use super::{ApplyCx, Op};
use crate::manifest::Kind;
use crate::tokens::{Tokenizer, ceil_char_boundary, floor_char_boundary};
use crate::value::Value;

/// Options of `truncate`. Tokens are counted by the policy's tokenizer.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TruncateSpec {
    /// Levels this op runs at. Default: every level but `full`.
    #[serde(default)]
    pub levels: Option<Vec<String>>,
    /// Selectors of the strings to cut. Default: every string.
    #[serde(default)]
    pub at: Option<Vec<String>>,
    /// The most tokens a string may have, marker included (at least 16).
    pub max_tokens: usize,
    /// The share of kept tokens that goes to the head (0–1). Default: 0.7.
    #[serde(default = "default_head")]
    pub head: f64,
    /// The marker; `{cut}` is the number of tokens left out. Default: ` …[{cut} tokens cut]… `.
    #[serde(default = "default_marker")]
    pub marker: String,
}

fn default_head() -> f64 {
    0.7
}
fn default_marker() -> String {
    " …[{cut} tokens cut]… ".into()
}

#[derive(Debug)]
pub(crate) struct Truncate {
    at: Option<Vec<usize>>,
    max_tokens: usize,
    head: f64,
    marker: String,
}

impl TruncateSpec {
    pub(crate) fn compile(&self, cx: &mut CompileCx) -> Result<Truncate, PolicyError> {
        if self.max_tokens < 16 {
            return Err(cx.error(
                "max_tokens",
                format!("{} is below the minimum 16", self.max_tokens),
            ));
        }
        if !(0.0..=1.0).contains(&self.head) {
            return Err(cx.error("head", format!("{} is outside 0–1", self.head)));
        }
        Ok(Truncate {
            at: match &self.at {
                Some(at) => Some(cx.selectors("at", at)?),
                None => None,
            },
            max_tokens: self.max_tokens,
            head: self.head,
            marker: self.marker.clone(),
        })
    }
}

impl Truncate {
    /// `text` cut to at most `max_tokens` (marker included), or `None` if it fits.
    pub(crate) fn cut(&self, text: &str, tok: &dyn Tokenizer) -> Option<String> {
        let total = tok.count(text);
        if total <= self.max_tokens {
            return None;
        }
        // The marker's own size depends on the number in it; size it for the largest.
        let marker_tokens = tok.count(&self.marker.replace("{cut}", &total.to_string()));
        let mut keep = self.max_tokens.saturating_sub(marker_tokens);
        loop {
            let head_tokens = (keep as f64 * self.head).round() as usize;
            let tail_tokens = keep - head_tokens;
            let head_end = head_len(tok, text, head_tokens);
            let tail_start = tail_start(tok, text, tail_tokens).max(head_end);
            let (head, tail) = (&text[..head_end], &text[tail_start..]);
            let cut = total.saturating_sub(tok.count(head) + tok.count(tail));
            let out = format!(
                "{head}{}{tail}",
                self.marker.replace("{cut}", &cut.to_string())
            );
            // Token boundaries shift where pieces meet; shrink until the whole fits.
            if tok.count(&out) <= self.max_tokens || keep == 0 {
                return Some(out);
            }
            keep -= 1;
        }
    }
}

/// Bytes a window starts with per token: the head and tail are looked for in windows of
/// the text that grow until they hold them, not in the whole text (a megabyte-long piece
/// without a pre-token break was tokenized whole for every try).
const WINDOW_BYTES_PER_TOKEN: usize = 8;

/// `tok.prefix_len(text, n)`, read from the smallest window (doubling) that holds more
/// than `n` tokens. The head is a guess the caller checks by counting what it writes.
fn head_len(tok: &dyn Tokenizer, text: &str, n: usize) -> usize {
    let mut window = n.saturating_mul(WINDOW_BYTES_PER_TOKEN).max(64);
    loop {
        if window >= text.len() {
            return tok.prefix_len(text, n);
        }
        let end = floor_char_boundary(text, window);
        let len = tok.prefix_len(&text[..end], n);
        if len < end {
            return len;
        }
        window = window.saturating_mul(2);
    }
}

/// `tok.suffix_start(text, n)`, from the smallest window at the end that holds more than
/// `n` tokens.
fn tail_start(tok: &dyn Tokenizer, text: &str, n: usize) -> usize {
    let mut window = n.saturating_mul(WINDOW_BYTES_PER_TOKEN).max(64);
    loop {
        if window >= text.len() {
            return tok.suffix_start(text, n);
        }
        let start = ceil_char_boundary(text, text.len() - window);
        let at = tok.suffix_start(&text[start..], n);
        if at > 0 {
            return start + at;
        }
        window = window.saturating_mul(2);
    }
}

impl Op for Truncate {
    fn everywhere(&self) -> bool {
        self.at.is_none()
    }

    fn apply(&self, node: &mut Value, cx: &mut ApplyCx<'_, '_>) {
        let Value::String(s) = node else { return };
        if let Some(at) = &self.at
            && !cx.matches_any(at)
        {
            return;
        }
        if let Some(cut) = self.cut(s, cx.tokenizer) {
            *s = cut.into();
            cx.rec.here(Kind::Truncated, 1);
        }
    }
}
