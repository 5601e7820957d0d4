//! Exact token counts, so budgets are decided on what a model will actually be charged.
//!
//! Every decision pare makes (truncate here, drop that field, is this payload over the
//! limit?) is a token budget, and estimates drift by 10–30 % on JSON. So this module
//! counts exactly, and fast enough to run on whole multi-megabyte payloads and on many
//! small strings:
//!
//! * `o200k_base` (alias `o200k`) and `cl100k_base` (alias `cl100k`): OpenAI's BPE
//!   encodings: tiktoken's byte-pair merges over rank tables laid out at build time
//!   (`crate::rank_table`, read in place: nothing to load). Counts equal those of the
//!   reference counter, `gpt-tokenizer` v3 (`countTokens`), byte for byte — including
//!   its JavaScript notion of whitespace (see *Divergences* below).
//! * `chars4`: `ceil(chars / 4)` where *chars* are Unicode scalar values (Rust `char`s).
//!   This is the rough estimate clients such as Claude Code apply to MCP tool output
//!   (the `MAX_MCP_OUTPUT_TOKENS` check), so pare can predict whether a payload passes it.
//!   Scalar values rather than bytes because the estimate is of *characters*; note that
//!   JavaScript's `string.length` counts UTF-16 code units, which is larger for characters
//!   outside the Basic Multilingual Plane (emoji, rare CJK): there this estimate is lower.
//! * `file:<name>`: any HuggingFace `tokenizer.json`, loaded offline with
//!   [`from_tokenizer_json`]; counted without adding special tokens.
//!
//! ```
//! use pare::tokens::by_name;
//!
//! let o200k = by_name("o200k_base")?;
//! assert_eq!(o200k.count("hello world"), 2);
//! // Cut to the first token, never inside a character.
//! assert_eq!(&"hello world"[..o200k.prefix_len("hello world", 1)], "hello");
//! assert_eq!(by_name("chars4")?.count("hello world"), 3);
//! # Ok::<(), pare::tokens::TokenizerError>(())
//! ```
//!
//! # Text, not control
//!
//! All text is ordinary text: `<|endoftext|>` inside a payload is counted as the seven or
//! so ordinary tokens it is when a model reads it as data, never as one special token.
//! `gpt-tokenizer`'s `countTokens` instead *throws* ("Disallowed special token found") on
//! such text by default; with `{ disallowedSpecial: new Set() }` it counts it as ordinary
//! text and then agrees with us. HuggingFace tokenizers are the exception: the
//! `tokenizers` library always matches the file's added tokens in the input, so there
//! they count as one token each.
//!
//! # Divergences from the reference
//!
//! The pre-tokenizer patterns are `gpt-tokenizer`'s, with `\s` spelled out as
//! JavaScript's whitespace set (it includes U+FEFF and excludes U+0085, unlike
//! tiktoken's Unicode `White_Space`), so text with those characters counts as the
//! reference counts it, which may differ by a token from tiktoken. What remains: letter
//! and number classes come from the Unicode tables of `regex-syntax` (Unicode 16), while
//! Node's V8 may use a newer Unicode (17 in Node 20.20), so characters first assigned
//! after Unicode 16 may split differently.

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Range;
use std::sync::{LazyLock, Mutex, OnceLock};

use crate::rank_table::{self, RankTable};
use regex_automata::{Anchored, Input};

/// Counts tokens of text as a model would see it.
pub trait Tokenizer: Send + Sync {
    /// Stable name: `o200k_base`, `cl100k_base`, `chars4`, or `file:<path or name>`.
    fn name(&self) -> &str;

    /// Exact token count of `text`.
    fn count(&self, text: &str) -> usize;

    /// `count(text)`, for a text that will not be counted again (a one-shot command's
    /// input and the report's renderings of it): nothing is remembered of it for later,
    /// which costs a long text's count about 15% ([`count`](Self::count) remembers chunks
    /// for a long-lived door, whose tools return much the same text again).
    fn count_once(&self, text: &str) -> usize {
        self.count(text)
    }

    /// Byte length of the longest prefix of `text` (ending on a char boundary) whose tokens
    /// are at most `max_tokens` of the tokens of `text` (i.e. cut the token sequence after
    /// `max_tokens` tokens, then back off to a char boundary).
    fn prefix_len(&self, text: &str, max_tokens: usize) -> usize;

    /// Byte offset where the shortest suffix holding the last `max_tokens` tokens starts
    /// (on a char boundary, moving forward if needed).
    fn suffix_start(&self, text: &str, max_tokens: usize) -> usize;

    /// Whether `text` has at most `max_tokens` tokens. Same answer as
    /// `count(text) <= max_tokens`, but may stop early on text far over the limit.
    fn fits(&self, text: &str, max_tokens: usize) -> bool {
        self.count(text) <= max_tokens
    }

    /// A lower bound of `count(text)` that costs a fraction of it, for deciding which of
    /// several texts is cheapest without counting each whole: a BPE encoding's number of
    /// pre-tokenizer pieces (each is at least one token). `0` where nothing cheaper is known.
    fn count_floor(&self, text: &str) -> usize {
        let _ = text;
        0
    }

    /// `count(text)` if it is remembered from texts counted before, for the cost of
    /// looking it up; else `None` (at once where nothing is remembered). Why: a caller
    /// that would count a long text on another thread need not start one for a text
    /// counted before.
    fn count_remembered(&self, text: &str) -> Option<usize> {
        let _ = text;
        None
    }

    /// Bring the encoding's tables into this process's memory now, so the first count
    /// does not stop at each page of them it reads. Why: a one-shot process (the CLI with
    /// `--report`) spent about a millisecond of its first count on those page faults; a
    /// thread started at once can take them while the input is read and parsed. Counts
    /// are the same either way; a tokenizer with nothing to load does nothing.
    fn warm_up(&self) {}

    /// `text` cut into parts of at least `min_bytes` (the last may be shorter) whose counts
    /// add up to its count, so that parts can be counted on several threads
    /// ([`pool::CountPool`]); the whole text as one part where no such cuts are known (the
    /// default: `chars4` rounds the whole text's length, a `tokenizer.json` has its own
    /// pre-tokenizer).
    fn additive_parts<'a>(&self, text: &'a str, min_bytes: usize) -> Vec<&'a str> {
        let _ = min_bytes;
        vec![text]
    }
}

impl fmt::Debug for dyn Tokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Tokenizer").field(&self.name()).finish()
    }
}

/// The built-in tokenizer names accepted by [`by_name`] (aliases `o200k` and `cl100k` too).
pub const NAMES: &[&str] = &["o200k_base", "cl100k_base", "chars4"];

/// Why a tokenizer could not be had.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TokenizerError {
    /// No built-in tokenizer has this name.
    #[error("unknown tokenizer `{name}`; built-in tokenizers are: {allowed}")]
    Unknown {
        /// The name asked for.
        name: String,
        /// The built-in names, comma separated.
        allowed: String,
    },
    /// A `tokenizer.json` could not be loaded or does not work.
    #[error("invalid tokenizer file `{name}`: {reason}")]
    InvalidFile {
        /// The name (usually the path) it was given under.
        name: String,
        /// What went wrong.
        reason: String,
    },
}

/// A built-in tokenizer by name: `o200k_base`/`o200k`, `cl100k_base`/`cl100k`, `chars4`.
///
/// Cheap to call repeatedly: the encodings are built once per process and shared.
pub fn by_name(name: &str) -> Result<Box<dyn Tokenizer>, TokenizerError> {
    builtin(name).map(|t| Box::new(Static(t)) as Box<dyn Tokenizer>)
}

/// Like [`by_name`], but borrows the process-wide instance instead of boxing a handle.
pub fn builtin(name: &str) -> Result<&'static dyn Tokenizer, TokenizerError> {
    match name {
        "o200k_base" | "o200k" => Ok(&O200K_HANDLE),
        "cl100k_base" | "cl100k" => Ok(&CL100K_HANDLE),
        "chars4" => Ok(&Chars4),
        _ => Err(TokenizerError::Unknown {
            name: name.to_owned(),
            allowed: NAMES.join(", "),
        }),
    }
}

/// A tokenizer from the bytes of a HuggingFace `tokenizer.json` (no network, no file I/O:
/// the caller reads the file). Its [`Tokenizer::name`] is `file:<name>`.
///
/// Truncation and padding configured in the file are switched off, since they would
/// cap or inflate counts.
/// Without the `hf-tokenizer` feature (off in the engine's defaults, on in the `pare`
/// binary and the Python package) this is an error saying so.
pub fn from_tokenizer_json(name: &str, bytes: &[u8]) -> Result<Box<dyn Tokenizer>, TokenizerError> {
    #[cfg(feature = "hf-tokenizer")]
    {
        hf::load(name, bytes)
    }
    #[cfg(not(feature = "hf-tokenizer"))]
    {
        let _ = bytes;
        Err(TokenizerError::InvalidFile {
            name: name.to_owned(),
            reason: "this build of pare reads no tokenizer.json (built without the \
                     `hf-tokenizer` feature)"
                .to_owned(),
        })
    }
}

/// A boxable handle on a process-wide tokenizer.
struct Static(&'static dyn Tokenizer);

impl Tokenizer for Static {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn count(&self, text: &str) -> usize {
        self.0.count(text)
    }
    fn count_once(&self, text: &str) -> usize {
        self.0.count_once(text)
    }
    fn prefix_len(&self, text: &str, max_tokens: usize) -> usize {
        self.0.prefix_len(text, max_tokens)
    }
    fn suffix_start(&self, text: &str, max_tokens: usize) -> usize {
        self.0.suffix_start(text, max_tokens)
    }
    fn fits(&self, text: &str, max_tokens: usize) -> bool {
        self.0.fits(text, max_tokens)
    }
    fn count_floor(&self, text: &str) -> usize {
        self.0.count_floor(text)
    }
    fn count_remembered(&self, text: &str) -> Option<usize> {
        self.0.count_remembered(text)
    }
    fn warm_up(&self) {
        self.0.warm_up()
    }
    fn additive_parts<'a>(&self, text: &'a str, min_bytes: usize) -> Vec<&'a str> {
        self.0.additive_parts(text, min_bytes)
    }
}

mod bpe;
mod chars4;
mod chunks;
mod fx;
#[cfg(feature = "hf-tokenizer")]
mod hf;
mod patterns;
pub mod pool;
mod shared;
mod splitter;

use bpe::*;
use chars4::*;
use fx::*;
use splitter::{SplitCache, Splitter};

// ---------------------------------------------------------------------------------------
// helpers (str::floor_char_boundary is newer than this crate's MSRV)

/// The largest char boundary `<= i`, clamped to the text.
pub(crate) fn floor_char_boundary(text: &str, i: usize) -> usize {
    let mut i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest char boundary `>= i`, clamped to the text.
pub(crate) fn ceil_char_boundary(text: &str, i: usize) -> usize {
    let mut i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
pub(crate) mod metered;
#[cfg(test)]
mod tests;
