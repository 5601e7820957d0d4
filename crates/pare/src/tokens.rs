//! Exact token counts, so budgets are decided on what a model will actually be charged.
//!
//! Every decision pare makes (truncate here, drop that field, is this payload over the
//! limit?) is a token budget, and estimates drift by 10–30 % on JSON. So this module
//! counts exactly, and fast enough to run on whole multi-megabyte payloads and on many
//! small strings:
//!
//! * `o200k_base` (alias `o200k`) and `cl100k_base` (alias `cl100k`): OpenAI's BPE
//!   encodings: tiktoken's byte-pair merges over rank tables laid out at build time
//!   ([`crate::rank_table`], read in place: nothing to load). Counts equal those of the
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
use std::sync::{LazyLock, Mutex};

use crate::rank_table::{self, RankTable};
use regex_automata::meta::{Cache, Regex};
use regex_automata::{Anchored, Input};

/// Counts tokens of text as a model would see it.
pub trait Tokenizer: Send + Sync {
    /// Stable name: "o200k_base", "cl100k_base", "chars4", or "file:<path or name>".
    fn name(&self) -> &str;

    /// Exact token count of `text`.
    fn count(&self, text: &str) -> usize;

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
pub fn from_tokenizer_json(name: &str, bytes: &[u8]) -> Result<Box<dyn Tokenizer>, TokenizerError> {
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

/// A boxable handle on a process-wide tokenizer.
struct Static(&'static dyn Tokenizer);

impl Tokenizer for Static {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn count(&self, text: &str) -> usize {
        self.0.count(text)
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
}

// ---------------------------------------------------------------------------------------
// OpenAI BPE encodings

mod chunks;

/// JavaScript's `\s` (WhiteSpace + LineTerminator), as a character-class body. The
/// reference counter is JavaScript, and its `\s` differs from Unicode `White_Space`.
const JS_WS: &str = r"\t\n\x{0B}\x{0C}\r\x{20}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";

/// gpt-tokenizer's contraction suffix: explicit case pairs, because a Unicode
/// case-insensitive `'s` would also match `'ſ` (long s).
const CONTRACTION: &str = "'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE])";

/// gpt-tokenizer's o200k pattern, minus its `\s+(?!\S)|\s+` tail (see [`Bpe::new`]).
fn o200k_pattern() -> String {
    let c = CONTRACTION;
    let w = JS_WS;
    [
        format!(
            r"[^\r\n\p{{L}}\p{{N}}]?[\p{{Lu}}\p{{Lt}}\p{{Lm}}\p{{Lo}}\p{{M}}]*[\p{{Ll}}\p{{Lm}}\p{{Lo}}\p{{M}}]+(?:{c})?"
        ),
        format!(
            r"[^\r\n\p{{L}}\p{{N}}]?[\p{{Lu}}\p{{Lt}}\p{{Lm}}\p{{Lo}}\p{{M}}]+[\p{{Ll}}\p{{Lm}}\p{{Lo}}\p{{M}}]*(?:{c})?"
        ),
        r"\p{N}{1,3}".to_owned(),
        format!(r" ?[^{w}\p{{L}}\p{{N}}]+[\r\n/]*"),
        format!(r"[{w}]*[\r\n]+"),
        format!(r"[{w}]+$"),
    ]
    .join("|")
}

/// gpt-tokenizer's cl100k pattern, minus its `\s+(?!\S)|\s` tail (see [`Bpe::new`]).
fn cl100k_pattern() -> String {
    let w = JS_WS;
    [
        CONTRACTION.to_owned(),
        r"[^\r\n\p{L}\p{N}]?\p{L}+".to_owned(),
        r"\p{N}{1,3}".to_owned(),
        format!(r" ?[^{w}\p{{L}}\p{{N}}]+[\r\n]*"),
        format!(r"[{w}]+$"),
        format!(r"[{w}]*[\r\n]"),
    ]
    .join("|")
}

static O200K: LazyLock<Bpe> = LazyLock::new(o200k);

/// o200k_base, built (the tests build fresh ones, whose memos no other test touches).
fn o200k() -> Bpe {
    Bpe::new(
        "o200k_base",
        rank_table::o200k_base(),
        &o200k_pattern(),
        &format!("[{JS_WS}]+"),
    )
}

static CL100K: LazyLock<Bpe> = LazyLock::new(|| {
    Bpe::new(
        "cl100k_base",
        rank_table::cl100k_base(),
        &cl100k_pattern(),
        &format!("[{JS_WS}]"),
    )
});

/// A tiktoken-style encoding: a pre-tokenizer regex splits text into pieces, and each
/// piece is BPE-encoded on its own, so a count is the sum of per-piece counts.
/// A built-in encoding that is built on first use: building o200k_base takes tens of
/// milliseconds and tens of megabytes, which a run that never counts should not pay.
struct Deferred {
    name: &'static str,
    bpe: &'static LazyLock<Bpe>,
}

static O200K_HANDLE: Deferred = Deferred {
    name: "o200k_base",
    bpe: &O200K,
};
static CL100K_HANDLE: Deferred = Deferred {
    name: "cl100k_base",
    bpe: &CL100K,
};

impl Tokenizer for Deferred {
    fn name(&self) -> &str {
        self.name
    }
    fn count(&self, text: &str) -> usize {
        self.bpe.count(text)
    }
    fn prefix_len(&self, text: &str, max_tokens: usize) -> usize {
        self.bpe.prefix_len(text, max_tokens)
    }
    fn suffix_start(&self, text: &str, max_tokens: usize) -> usize {
        self.bpe.suffix_start(text, max_tokens)
    }
    fn fits(&self, text: &str, max_tokens: usize) -> bool {
        self.bpe.fits(text, max_tokens)
    }
    fn count_floor(&self, text: &str) -> usize {
        self.bpe.count_floor(text)
    }
    fn count_remembered(&self, text: &str) -> Option<usize> {
        self.bpe.count_remembered(text)
    }
}

struct Bpe {
    name: &'static str,
    bpe: &'static RankTable,
    /// Three patterns, tried in order at each position (leftmost-first): the main
    /// alternation, then `\s+\s` standing in for `\s+(?!\S)`, then the fallback.
    splitter: Regex,
    /// Search caches for `splitter`, taken once per text rather than once per piece (as
    /// the regex's own pool would be): a thread other than the regex's first user pays a
    /// lock and a put-back per search there, which cost a quarter of a count.
    caches: Mutex<Vec<Scratch>>,
    /// Split ASCII stretches by hand ([`o200k_ascii_piece`]) rather than by `splitter`.
    ascii_o200k: bool,
    /// Counts of chunks of texts counted before ([`chunks`]).
    chunks: chunks::ChunkMemo,
    /// The same for floors (pieces).
    floors: chunks::ChunkMemo,
}

/// U+FEFF, the byte-order mark, which gpt-tokenizer treats specially (see `js_merge`).
const BOM: char = '\u{FEFF}';
const BOM_UTF8: &[u8] = b"\xEF\xBB\xBF";

impl Bpe {
    /// The `regex` crates have no look-ahead, so `\s+(?!\S)` is emulated as bpe-openai
    /// does: match `\s+\s` and give back its last character. Where the whitespace run ends
    /// the text, the main pattern's `\s+$` already took it. The emulation is exact: both
    /// forms take all but the last whitespace character before a non-space.
    fn new(name: &'static str, bpe: &'static RankTable, main: &str, fallback: &str) -> Self {
        let lookahead = format!("[{JS_WS}]+[{JS_WS}]");
        let splitter = Regex::new_many(&[main, lookahead.as_str(), fallback])
            // The patterns are constants; the unit tests build both encodings.
            .expect("pre-tokenizer patterns are valid");
        Bpe {
            name,
            bpe,
            splitter,
            caches: Mutex::new(Vec::new()),
            ascii_o200k: name == "o200k_base",
            chunks: chunks::ChunkMemo::default(),
            floors: chunks::ChunkMemo::default(),
        }
    }

    /// Pieces of `text` from byte `at` (a piece boundary) on. Searching the whole text
    /// from `at` equals splitting `&text[at..]`: the patterns never look behind.
    fn pieces_from<'a>(&'a self, text: &'a str, at: usize) -> Pieces<'a> {
        let cache = self
            .caches
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop()
            .unwrap_or_else(|| Scratch {
                cache: self.splitter.create_cache(),
                short: HashMap::default(),
                long: HashMap::default(),
            });
        Pieces {
            bpe: self,
            scratch: Some(cache),
            text,
            at,
        }
    }

    fn pieces<'a>(&'a self, text: &'a str) -> Pieces<'a> {
        self.pieces_from(text, 0)
    }

    /// The sum of the counts of `text`'s pieces; `bom`: whether it holds U+FEFF.
    fn count_whole(&self, text: &str, bom: bool) -> usize {
        let mut pieces = self.pieces(text);
        let mut total = 0;
        while let Some(r) = pieces.next() {
            total += pieces.piece_count(r, bom);
        }
        total
    }

    /// The end of the piece of `text` starting at `at` (a piece boundary), by the regex.
    fn regex_piece_end(&self, cache: &mut Cache, text: &str, at: usize) -> usize {
        let input = Input::new(text).range(at..).anchored(Anchored::Yes);
        let end = match self.splitter.search_with(cache, &input) {
            Some(m) if m.pattern().as_usize() == 1 => {
                // The look-ahead stand-in: give back the last (whitespace) character.
                let matched = &text[at..m.end()];
                m.end() - matched.chars().next_back().map_or(0, char::len_utf8)
            }
            Some(m) => m.end(),
            // Unreachable (every character matches some alternative); if the patterns
            // ever leave a gap, take the rest as one piece rather than lose text.
            None => text.len(),
        };
        // Never stall, even if a match came back empty.
        if end > at {
            end
        } else {
            ceil_char_boundary(text, at + 1)
        }
    }

    /// Tokens of one piece. `bom` says whether the text holds a U+FEFF at all, so the
    /// common case pays for that check once per text, not once per piece.
    fn piece_count(&self, piece: &str, bom: bool) -> usize {
        // Every byte is a token, so one-byte pieces (most JSON punctuation) need no BPE.
        if piece.len() == 1 {
            1
        } else if bom && piece.contains(BOM) {
            self.js_merge(piece.as_bytes()).len()
        } else {
            // A piece that is one token (most are) is settled by the first lookup.
            self.bpe.count(piece.as_bytes())
        }
    }

    /// Byte lengths of one piece's tokens.
    fn piece_token_lens(&self, piece: &str) -> Vec<usize> {
        if piece.contains(BOM) {
            self.js_merge(piece.as_bytes())
        } else {
            self.bpe.token_lens(piece.as_bytes())
        }
    }

    /// gpt-tokenizer's BPE for pieces holding U+FEFF, quirk included; token byte lengths.
    ///
    /// gpt-tokenizer looks up a byte pair's rank by decoding it with `TextDecoder`, which
    /// drops a leading byte-order mark, so pairs starting with U+FEFF get the rank of the
    /// rest (or none): `"\u{FEFF}"` alone is two tokens, not its own one. Every other
    /// piece is plain tiktoken BPE ([`RankTable::count`]); this is the same heap merge
    /// with that rank lookup, so a long run of U+FEFF cannot make it quadratic.
    fn js_merge(&self, piece: &[u8]) -> Vec<usize> {
        let table = self.bpe;
        // The rank gpt-tokenizer finds for `key`: tokens are keyed by their decoded
        // string unless not valid UTF-8 or starting with U+FEFF (those by bytes).
        let rank = |key: &[u8]| -> Option<u32> {
            match std::str::from_utf8(key) {
                Ok(s) => {
                    let s = s.strip_prefix(BOM).unwrap_or(s);
                    if s.starts_with(BOM) {
                        None
                    } else {
                        table.rank(s.as_bytes())
                    }
                }
                Err(_) => table.rank(key),
            }
        };
        // A whole piece found by string is one token (and starts with no U+FEFF).
        if !piece.starts_with(BOM_UTF8) && table.rank(piece).is_some() {
            return vec![piece.len()];
        }
        rank_table::heap_merge(piece, rank)
    }

    /// Where the token sequence of `text` is cut after `n` tokens.
    fn cut(&self, text: &str, n: usize) -> Cut {
        let mut cut = Cut {
            at: 0,
            piece_start: 0,
            tokens_before: 0,
            anchor: 0,
            anchor_tokens: 0,
        };
        if n == 0 {
            return cut;
        }
        let bom = text.contains(BOM);
        let mut used = 0;
        for range in self.pieces(text) {
            let piece = &text[range.clone()];
            let c = self.piece_count(piece, bom);
            if used + c > n {
                // The cut falls inside this piece: a prefix of a piece's BPE tokens is
                // what those bytes encode to, so summing token lengths finds the offset.
                let bytes: usize = self
                    .piece_token_lens(piece)
                    .into_iter()
                    .take(n - used)
                    .sum();
                cut.at = range.start + bytes;
                cut.piece_start = range.start;
                cut.tokens_before = used;
                return cut;
            }
            if piece.chars().any(|c| !is_js_whitespace(c)) {
                cut.anchor = range.start;
                cut.anchor_tokens = used;
            }
            used += c;
            cut.at = range.end;
            cut.piece_start = range.end;
            cut.tokens_before = used;
            if used == n {
                break;
            }
        }
        cut
    }

    /// Tokens of `&text[..end]` counted on its own, given a cut of `text` at or after
    /// `end` whose crossing piece starts at or before `end`.
    ///
    /// Cutting the text can change its split only through `\s+$`, which now matches a
    /// whitespace run that ends at the cut. So pieces starting before the last piece
    /// holding a non-whitespace character before `end` are unchanged, and only the tail
    /// from there is split again.
    fn count_prefix(&self, text: &str, end: usize, cut: &Cut) -> usize {
        let head = &text[..end];
        let (from, tokens) = if cut.piece_start < end
            && head[cut.piece_start..]
                .chars()
                .any(|c| !is_js_whitespace(c))
        {
            (cut.piece_start, cut.tokens_before)
        } else {
            (cut.anchor, cut.anchor_tokens)
        };
        let from = from.min(end);
        let bom = head[from..].contains(BOM);
        tokens
            + self
                .pieces_from(head, from)
                .map(|r| self.piece_count(&head[r], bom))
                .sum::<usize>()
    }

    /// Tokens of `&text[start..]` counted on its own, given a cut of `text` at or before
    /// `start` and the token count of all of `text`.
    ///
    /// Splitting from `start` and splitting the whole text agree again from the first
    /// piece end they share (same position, same text ahead), so walk both until then and
    /// take the rest from the whole text's total.
    fn count_suffix(&self, text: &str, start: usize, cut: &Cut, total: usize) -> usize {
        let mut whole = self.pieces_from(text, cut.piece_start);
        let (mut whole_end, mut whole_tokens) = (cut.piece_start, cut.tokens_before);
        let bom = text[cut.piece_start..].contains(BOM);
        let mut tail = self.pieces_from(text, start);
        let (mut tail_end, mut tail_tokens) = (start, 0);
        loop {
            if tail_end == whole_end {
                return tail_tokens + total.saturating_sub(whole_tokens);
            }
            if tail_end < whole_end {
                match tail.next() {
                    Some(r) => {
                        tail_end = r.end;
                        tail_tokens += self.piece_count(&text[r], bom);
                    }
                    None => return tail_tokens,
                }
            } else {
                match whole.next() {
                    Some(r) => {
                        whole_end = r.end;
                        whole_tokens += self.piece_count(&text[r], bom);
                    }
                    // Unreachable: the whole text's pieces end where the tail's do.
                    None => return tail_tokens,
                }
            }
        }
    }
}

/// A cut of a token sequence after some number of tokens.
struct Cut {
    /// Byte offset of the cut (possibly inside a char).
    at: usize,
    /// Start of the piece the cut falls in (or `at` itself, on a piece boundary)...
    piece_start: usize,
    /// ...and the tokens before it.
    tokens_before: usize,
    /// Start of the last whole piece before `piece_start` holding a non-whitespace
    /// character (0 if none)...
    anchor: usize,
    /// ...and the tokens before it.
    anchor_tokens: usize,
}

impl Tokenizer for Bpe {
    fn name(&self) -> &str {
        self.name
    }

    /// A text of some length is counted by chunks, each remembered ([`chunks`]; a text
    /// holding U+FEFF is counted whole, as its pieces' counts depend on the whole text).
    fn count(&self, text: &str) -> usize {
        let bom = text.contains(BOM);
        if !bom && chunks::worth_it(text) {
            return self
                .chunks
                .count(text, |chunk| self.count_whole(chunk, false));
        }
        self.count_whole(text, bom)
    }

    /// Beyond the trait's contract, the prefix counted on its own is also at most
    /// `max_tokens` tokens: splitting a cut text can differ at the cut (say `they'll`
    /// cut to `they'`), and where it would cost more the cut backs off a token.
    fn prefix_len(&self, text: &str, max_tokens: usize) -> usize {
        let (mut n, mut steps) = (max_tokens, backoff_steps());
        loop {
            let cut = self.cut(text, n);
            let end = floor_char_boundary(text, cut.at);
            if n == 0 || end == text.len() || self.count_prefix(text, end, &cut) <= max_tokens {
                return end;
            }
            n = n.saturating_sub(steps.next().expect("endless"));
        }
    }

    /// As with `prefix_len`, the suffix counted on its own is at most `max_tokens`.
    fn suffix_start(&self, text: &str, max_tokens: usize) -> usize {
        if max_tokens == 0 {
            return text.len();
        }
        let total = self.count(text);
        let mut skip = match total.checked_sub(max_tokens) {
            Some(skip) if skip > 0 => skip,
            _ => return 0,
        };
        let mut steps = backoff_steps();
        loop {
            let cut = self.cut(text, skip);
            let start = ceil_char_boundary(text, cut.at);
            if start == text.len() || self.count_suffix(text, start, &cut, total) <= max_tokens {
                return start;
            }
            skip = skip
                .saturating_add(steps.next().expect("endless"))
                .min(total);
        }
    }

    fn count_remembered(&self, text: &str) -> Option<usize> {
        if text.contains(BOM) || !chunks::worth_it(text) {
            return None;
        }
        self.chunks.remembered(text)
    }

    /// By remembered chunks too (the pieces, as counts, add up across [`chunks`]' splits).
    fn count_floor(&self, text: &str) -> usize {
        if chunks::worth_it(text) {
            return self.floors.count(text, |chunk| self.pieces(chunk).count());
        }
        self.pieces(text).count()
    }

    fn fits(&self, text: &str, max_tokens: usize) -> bool {
        let bom = text.contains(BOM);
        let mut used = 0;
        let mut pieces = self.pieces(text);
        while let Some(r) = pieces.next() {
            used += pieces.piece_count(r, bom);
            if used > max_tokens {
                return false;
            }
        }
        true
    }
}

/// Token-by-token back-off steps of a cut before it doubles its steps.
const LINEAR_BACKOFF: usize = 64;

/// The steps, in tokens, by which a cut that does not fit backs off: one token at a time,
/// so that a larger budget never keeps less text (one step nearly always does); after
/// [`LINEAR_BACKOFF`] steps, doubling bounds the work should some text need more.
fn backoff_steps() -> impl Iterator<Item = usize> {
    std::iter::repeat_n(1, LINEAR_BACKOFF).chain(std::iter::successors(Some(2usize), |s| {
        Some(s.saturating_mul(2))
    }))
}

/// JavaScript's `\s`, the reference's notion of whitespace ([`JS_WS`]).
fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// Pre-tokenizer pieces of a text, as byte ranges.
struct Pieces<'a> {
    bpe: &'a Bpe,
    /// Taken from `bpe.caches` and given back on drop (`None` only while dropping).
    scratch: Option<Scratch>,
    text: &'a str,
    at: usize,
}

/// What a walk over pieces reuses from one text to the next.
struct Scratch {
    /// The splitter's search cache.
    cache: Cache,
    /// Token counts of pieces of two to [`SHORT_PIECE_BYTES`] bytes seen before, keyed by
    /// their bytes and length packed into one integer ([`short_key`]). A text's pieces
    /// repeat (keys, punctuation runs, common words), and this small table answers from
    /// cache where the encoding's rank table of 200,000 tokens misses it.
    short: HashMap<u128, u32, BuildFxHasher>,
    /// The same for longer pieces, up to [`MEMO_PIECE_BYTES`].
    long: HashMap<Box<[u8]>, u32, BuildFxHasher>,
}

/// Pieces remembered per table of a [`Scratch`] (a table starts over when full), and the
/// longest remembered (a long piece is rare, and its BPE outweighs a lookup anyway).
const MEMO_PIECES: usize = 4096;
const MEMO_PIECE_BYTES: usize = 64;
/// Pieces up to this long are keyed by [`short_key`].
const SHORT_PIECE_BYTES: usize = 15;

/// A piece of at most [`SHORT_PIECE_BYTES`] as one integer: its bytes, then its length in
/// the top byte (so trailing NULs still tell pieces apart).
fn short_key(piece: &[u8]) -> u128 {
    let mut key = [0u8; 16];
    key[..piece.len()].copy_from_slice(piece);
    key[15] = piece.len() as u8;
    u128::from_le_bytes(key)
}

/// [`short_key`] of `text[range]`, read as one 16-byte load where the text runs on that
/// far: bytes copied into a key and read back as an integer stall the load that follows
/// (a quarter of a count's time went there).
fn short_key_at(text: &[u8], range: Range<usize>) -> u128 {
    let len = range.len();
    match text.get(range.start..range.start + 16) {
        Some(window) => {
            let bytes = u128::from_le_bytes(window.try_into().expect("16 bytes"));
            (bytes & ((1u128 << (8 * len)) - 1)) | ((len as u128) << 120)
        }
        None => short_key(&text[range]),
    }
}

impl Pieces<'_> {
    /// Tokens of the piece at `range` ([`Bpe::piece_count`], remembered).
    fn piece_count(&mut self, range: Range<usize>, bom: bool) -> usize {
        let piece = &self.text[range.clone()];
        let bytes = piece.as_bytes();
        if bytes.len() == 1 {
            return 1;
        }
        let scratch = self.scratch.as_mut().expect("scratch until dropped");
        if bytes.len() <= SHORT_PIECE_BYTES {
            let key = short_key_at(self.text.as_bytes(), range);
            if let Some(&n) = scratch.short.get(&key) {
                return n as usize;
            }
            let n = self.bpe.piece_count(piece, bom);
            if scratch.short.len() >= MEMO_PIECES {
                scratch.short.clear();
            }
            scratch.short.insert(key, n as u32);
            return n;
        }
        if bytes.len() > MEMO_PIECE_BYTES {
            return self.bpe.piece_count(piece, bom);
        }
        if let Some(&n) = scratch.long.get(bytes) {
            return n as usize;
        }
        let n = self.bpe.piece_count(piece, bom);
        if scratch.long.len() >= MEMO_PIECES {
            scratch.long.clear();
        }
        scratch.long.insert(bytes.into(), n as u32);
        n
    }
}

impl Drop for Pieces<'_> {
    fn drop(&mut self) {
        if let Some(cache) = self.scratch.take() {
            self.bpe
                .caches
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(cache);
        }
    }
}

impl Iterator for Pieces<'_> {
    type Item = Range<usize>;

    fn next(&mut self) -> Option<Range<usize>> {
        if self.at >= self.text.len() {
            return None;
        }
        let start = self.at;
        if self.bpe.ascii_o200k
            && let Some(end) = o200k_ascii_piece(self.text.as_bytes(), start)
        {
            self.at = end;
            return Some(start..end);
        }
        let scratch = self.scratch.as_mut().expect("scratch until dropped");
        let end = self
            .bpe
            .regex_piece_end(&mut scratch.cache, self.text, start);
        self.at = end;
        Some(start..end)
    }
}

/// The end of o200k's piece starting at `at`, found without the regex where the text it
/// looks at is ASCII; `None` (use the regex) where any byte it looked at is not.
///
/// Within ASCII the pattern's classes are plain: letters `A-Z` (`\p{Lu}`) and `a-z`
/// (`\p{Ll}`; no ASCII character is `Lt`, `Lm`, `Lo` or `M`), digits `0-9` (`\p{N}`),
/// JavaScript whitespace `\t \n \x0B \x0C \r` and space, and everything else is
/// "punctuation". Its alternatives are tried in the regex's order, each as the regex's
/// leftmost-first (backtracking-order) semantics decide it:
///
/// 1. `[^\r\n\p{L}\p{N}]?[Lu…]*[Ll…]+(?:contraction)?` — an optional prefix character,
///    capitals, then at least one lower-case letter;
/// 2. `[^\r\n\p{L}\p{N}]?[Lu…]+[Ll…]*(?:contraction)?` — capitals not followed by
///    lower case (else 1 had matched);
/// 3. `\p{N}{1,3}`;
/// 4. ` ?[^\s\p{L}\p{N}]+[\r\n/]*`;
/// 5. `\s*[\r\n]+` — a whitespace run up to and including its last line break;
/// 6. `\s+$` — a whitespace run that ends the text;
/// 7. `\s+(?!\S)`, then `\s+`: all but the last character of a whitespace run of two or
///    more, else the one character.
///
/// A test compares this with the regex on random and corpus text.
fn o200k_ascii_piece(text: &[u8], at: usize) -> Option<usize> {
    let len = text.len();
    let byte = |i: usize| text.get(i).copied();
    let is_ws = |b: u8| matches!(b, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ');
    let is_punct = |b: u8| b.is_ascii() && !is_ws(b) && !b.is_ascii_alphanumeric();
    let run = |from: usize, f: &dyn Fn(u8) -> bool| {
        let mut i = from;
        while i < len && f(text[i]) {
            i += 1;
        }
        i
    };
    let c0 = byte(at)?;
    if !c0.is_ascii() {
        return None;
    }
    // (end of the piece, end of the bytes looked at): the byte at the piece's end (or
    // the run's) decides where it stops, so it must be ASCII too.
    let (end, looked) = 'piece: {
        // 1 and 2: letters, after an optional prefix that is no letter, digit or break.
        let prefix = usize::from(!matches!(c0, b'\r' | b'\n') && !c0.is_ascii_alphanumeric());
        let letters = at + prefix;
        let upper_end = run(letters, &|b| b.is_ascii_uppercase());
        let lower_end = run(upper_end, &|b| b.is_ascii_lowercase());
        if lower_end > upper_end || upper_end > letters {
            let mut end = lower_end;
            if byte(end) == Some(b'\'') {
                let c = |i: usize| byte(end + i).map(|b| b.to_ascii_lowercase());
                match (c(1), c(2)) {
                    (Some(b's' | b'd' | b'm' | b't'), _) => end += 2,
                    (Some(b'l'), Some(b'l')) | (Some(b'v' | b'r'), Some(b'e')) => end += 3,
                    _ => {}
                }
            }
            break 'piece (end, end);
        }
        // 3.
        if c0.is_ascii_digit() {
            let end = run(at, &|b| b.is_ascii_digit()).min(at + 3);
            break 'piece (end, end);
        }
        // 4.
        let space = usize::from(c0 == b' ');
        let punct_end = run(at + space, &is_punct);
        if punct_end > at + space {
            let end = run(punct_end, &|b| matches!(b, b'\r' | b'\n' | b'/'));
            break 'piece (end, end);
        }
        if !is_ws(c0) {
            // Only a byte of a longer character is left, and that is not ASCII.
            return None;
        }
        let ws_end = run(at, &is_ws);
        // 5.
        if let Some(last) = text[at..ws_end]
            .iter()
            .rposition(|&b| matches!(b, b'\r' | b'\n'))
        {
            break 'piece (at + last + 1, ws_end);
        }
        // 6, then 7.
        if ws_end == len {
            break 'piece (len, len);
        }
        (if ws_end - at >= 2 { ws_end - 1 } else { at + 1 }, ws_end)
    };
    let looked = (looked + 1).min(len);
    text[at..looked].is_ascii().then_some(end)
}

// ---------------------------------------------------------------------------------------
// chars4

/// `ceil(chars / 4)`, chars being Unicode scalar values.
struct Chars4;

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

// ---------------------------------------------------------------------------------------
// HuggingFace tokenizer.json

struct HuggingFace {
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
fn spans_prefix(text: &str, spans: &[(usize, usize)], n: usize) -> usize {
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
fn spans_suffix(text: &str, spans: &[(usize, usize)], n: usize) -> usize {
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

/// FxHash (rustc's hasher) over 8-byte words: token lookups hash short byte strings by
/// the million, where SipHash's DoS resistance buys nothing (the keys are the vocabulary).
#[derive(Default, Clone, Copy)]
struct FxHasher(u64);

type BuildFxHasher = BuildHasherDefault<FxHasher>;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    #[inline]
    fn write_u128(&mut self, n: u128) {
        self.add(n as u64);
        self.add((n >> 64) as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

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
mod tests {
    use super::*;

    #[test]
    fn a_floor_is_at_most_the_count_and_close_to_it() {
        for t in all() {
            for s in SAMPLES {
                assert!(t.count_floor(s) <= t.count(s), "{} {s:?}", t.name());
            }
        }
        let o200k = builtin("o200k_base").unwrap();
        let json = r#"{"name":"Organization_0001_kafka","observations":["Beta gamma design."]}"#;
        let (floor, count) = (o200k.count_floor(json), o200k.count(json));
        assert!(floor > 0 && floor * 10 >= count * 7, "{floor} of {count}");
    }

    #[test]
    fn a_short_key_read_in_place_is_the_copied_key() {
        let text = "ab\0\0cdefghijklmnopqrstuvwxyz0123456789 é".as_bytes();
        for start in 0..text.len() {
            for len in 2..=SHORT_PIECE_BYTES.min(text.len() - start) {
                let range = start..start + len;
                assert_eq!(short_key_at(text, range.clone()), short_key(&text[range]));
            }
        }
    }

    fn all() -> Vec<Box<dyn Tokenizer>> {
        NAMES.iter().map(|n| by_name(n).unwrap()).collect()
    }

    const SAMPLES: &[&str] = &[
        "",
        "a",
        "hello world",
        "{\"id\": 12345678901234567890, \"name\": \"Zoë\", \"tags\": [\"x\", \"y\"]}",
        "héllo wörld — ünïcödé “quotes” ",
        "你好，世界！这是一个测试。日本語のテキストも少し。",
        "emoji 👩‍👩‍👧‍👦 🇫🇷 ✨✨✨ mixed with text",
        "مرحبا بالعالم שלום עולם",
        "   leading and trailing   \n\n\n\t\tindent\r\n",
        "they'll've it's WE'RE I'M",
        "a\u{85}b\u{FEFF}c \u{A0} d\u{2028}e",
    ];

    #[test]
    fn empty_text_is_zero_tokens() {
        for t in all() {
            assert_eq!(t.count(""), 0, "{}", t.name());
            assert_eq!(t.prefix_len("", 5), 0);
            assert_eq!(t.suffix_start("", 5), 0);
            assert!(t.fits("", 0));
        }
    }

    #[test]
    fn known_counts() {
        let o = by_name("o200k_base").unwrap();
        let c = by_name("cl100k_base").unwrap();
        assert_eq!(o.count("hello world"), 2);
        assert_eq!(c.count("hello world"), 2);
        // Special-token text is ordinary text.
        assert!(o.count("<|endoftext|>") > 1);
        assert!(c.count("<|endoftext|>") > 1);
        // Aliases resolve to the same encodings.
        assert_eq!(by_name("o200k").unwrap().name(), "o200k_base");
        assert_eq!(by_name("cl100k").unwrap().name(), "cl100k_base");
    }

    #[test]
    fn chars4_rounds_up_in_scalar_values() {
        let t = by_name("chars4").unwrap();
        assert_eq!(t.count("a"), 1);
        assert_eq!(t.count("abcd"), 1);
        assert_eq!(t.count("abcde"), 2);
        assert_eq!(t.count("abcdefgh"), 2);
        // Four chars, twelve bytes: one token.
        assert_eq!(t.count("你好世界"), 1);
        assert_eq!(t.count("你好世界!"), 2);
        assert_eq!(t.prefix_len("你好世界!", 1), "你好世界".len());
        assert_eq!(t.suffix_start("!你好世界", 1), 1);
        assert_eq!(t.suffix_start("abc", 1), 0);
        assert!(t.fits("abcd", 1));
        assert!(!t.fits("abcde", 1));
    }

    #[test]
    fn unknown_name_lists_the_allowed_ones() {
        let err = by_name("gpt2").unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, TokenizerError::Unknown { .. }));
        for name in NAMES {
            assert!(msg.contains(name), "{msg}");
        }
        assert!(msg.contains("gpt2"), "{msg}");
    }

    /// Check the cut contracts for every `max` on every sample.
    fn check_cuts(t: &dyn Tokenizer, text: &str) {
        let total = t.count(text);
        let mut last_prefix = 0;
        let mut last_suffix = text.len();
        for max in 0..=total + 1 {
            let p = t.prefix_len(text, max);
            let s = t.suffix_start(text, max);
            assert!(text.is_char_boundary(p), "{}: {text:?} max {max}", t.name());
            assert!(text.is_char_boundary(s), "{}: {text:?} max {max}", t.name());
            // Monotone: more tokens never keep less text.
            assert!(
                p >= last_prefix && s <= last_suffix,
                "{}: {text:?}",
                t.name()
            );
            last_prefix = p;
            last_suffix = s;
            assert!(
                t.count(&text[..p]) <= max,
                "{}: {text:?} prefix {max}",
                t.name()
            );
            assert!(
                t.count(&text[s..]) <= max,
                "{}: {text:?} suffix {max}",
                t.name()
            );
            assert_eq!(t.fits(text, max), total <= max);
            if max >= total {
                assert_eq!(p, text.len());
                assert_eq!(s, 0);
            }
        }
        assert_eq!(t.prefix_len(text, 0), 0);
        assert_eq!(t.suffix_start(text, 0), text.len());
        assert_eq!(t.prefix_len(text, usize::MAX), text.len());
        assert_eq!(t.suffix_start(text, usize::MAX), 0);
    }

    /// Proptest found it: the back-off doubled past the cut a smaller budget found, so
    /// 3 tokens kept less text than 2 (a BOM before a tab and a ZWJ emoji sequence).
    #[test]
    fn cuts_stay_monotone_around_a_bom_and_a_zwj_sequence() {
        for t in all() {
            check_cuts(t.as_ref(), " \u{feff}\t👩\u{200d}👩");
        }
    }

    #[test]
    fn cuts_respect_max_and_char_boundaries() {
        for t in all() {
            for text in SAMPLES {
                check_cuts(t.as_ref(), text);
            }
        }
    }

    #[test]
    fn cuts_are_token_boundaries_for_bpe() {
        // Cutting "hello world" after one token gives "hello", and the last token " world".
        let o = by_name("o200k_base").unwrap();
        assert_eq!(o.prefix_len("hello world", 1), 5);
        assert_eq!(o.suffix_start("hello world", 1), 5);
        // A multi-byte char split across tokens is dropped from both cuts, never halved.
        let text = "🇫🇷🇫🇷";
        for max in 0..o.count(text) {
            let p = o.prefix_len(text, max);
            let s = o.suffix_start(text, max);
            assert!(text.is_char_boundary(p) && text.is_char_boundary(s));
        }
    }

    /// The plain sum of each piece's BPE count: what `count` computes, without the memo.
    fn unremembered(bpe: &Bpe, text: &str) -> usize {
        let bom = text.contains(BOM);
        let ranges: Vec<Range<usize>> = bpe.pieces(text).collect();
        ranges
            .into_iter()
            .map(|r| bpe.piece_count(&text[r], bom))
            .sum()
    }

    #[test]
    fn remembered_piece_counts_equal_fresh_ones() {
        // Enough distinct pieces to fill both memo tables more than once, repeated pieces,
        // pieces longer than it remembers, U+FEFF pieces; counted on several threads at once, so
        // texts share and swap the pooled scratch.
        let mut text: String = SAMPLES.concat();
        for i in 0..3 * MEMO_PIECES {
            text.push_str(&format!(" w{i}x{}:\u{FEFF}{i}", i % 7));
        }
        for i in 0..MEMO_PIECES + 100 {
            // Distinct pieces longer than a short key: " longerwordpiece" and `i` in letters.
            let letters: String = i
                .to_string()
                .bytes()
                .map(|d| char::from(d - b'0' + b'a'))
                .collect();
            text.push_str(&format!(" longerwordpiece{letters}"));
        }
        text.push_str(&"z".repeat(3 * MEMO_PIECE_BYTES));
        text.push_str("\u{FEFF}\u{FEFF}ab \u{FEFF}");
        for bpe in [&*O200K, &*CL100K] {
            let expected = unremembered(bpe, &text);
            std::thread::scope(|scope| {
                for _ in 0..3 {
                    scope.spawn(|| {
                        for sample in SAMPLES {
                            assert_eq!(bpe.count(sample), unremembered(bpe, sample));
                        }
                        assert_eq!(bpe.count(&text), expected);
                        assert_eq!(bpe.count(&text), expected);
                        assert!(bpe.fits(&text, expected) && !bpe.fits(&text, expected - 1));
                    });
                }
            });
        }
    }

    /// o200k's pieces of `text` by the regex alone (no ASCII shortcut).
    fn regex_pieces(text: &str) -> Vec<Range<usize>> {
        let mut cache = O200K.splitter.create_cache();
        let mut pieces = Vec::new();
        let mut at = 0;
        while at < text.len() {
            let end = O200K.regex_piece_end(&mut cache, text, at);
            pieces.push(at..end);
            at = end;
        }
        pieces
    }

    #[track_caller]
    fn assert_ascii_split_is_the_regex(text: &str) {
        let fast: Vec<Range<usize>> = O200K.pieces(text).collect();
        assert_eq!(fast, regex_pieces(text), "{text:?}");
    }

    #[test]
    fn ascii_split_is_the_regex_split() {
        for text in SAMPLES {
            assert_ascii_split_is_the_regex(text);
        }
        for text in [
            "don't DON'T they'll WE'VE you're I'd it'S O'Neil x'l x' 'sx 'll",
            "ABC ABCdef aBC Abc'S abc'Ll abc'vE  \tHello \x0Bworld\x0Cfoo",
            "12345 -1 3.14e10 \"a\":{\"b\":[1,2,3]},\n  \"c\": null}\n",
            "//comment\r\n  /* x */ a/b/c \n\n\n   \t\n x  ",
            "  \n\r\n\t y \t\t z   ",
            " {\"é\": \"x\u{A0}y\"}  \u{3000}a\u{85}b  \u{FEFF}\u{FEFF}c'ſ d\u{301}",
            "\x00\x01\x7F~`!@#$%^&*()_+=[]{}|\\;:'\",.<>?",
        ] {
            assert_ascii_split_is_the_regex(text);
            // Every suffix too: each start is a position the shortcut may be asked about.
            for (i, _) in text.char_indices() {
                assert_ascii_split_is_the_regex(&text[i..]);
            }
        }
        for path in corpus_texts() {
            let text = std::fs::read_to_string(&path).expect("read corpus file");
            assert_ascii_split_is_the_regex(&text);
        }
    }

    /// The benchmark corpus, checked in (`examples/payloads/`; see
    /// `testdata/README.md`): every JSON file of both.
    fn corpus_texts() -> Vec<std::path::PathBuf> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut files: Vec<_> = ["examples/payloads"]
            .iter()
            .flat_map(|dir| std::fs::read_dir(root.join(dir)).expect("checked-in corpus"))
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        assert!(files.len() >= 10, "checked-in corpus: {files:?}");
        files
    }

    #[test]
    fn pieces_cover_the_text() {
        for bpe in [&*O200K, &*CL100K] {
            for text in SAMPLES {
                let mut at = 0;
                for r in bpe.pieces(text) {
                    assert_eq!(r.start, at);
                    assert!(r.end > r.start);
                    at = r.end;
                }
                assert_eq!(at, text.len());
            }
        }
    }

    #[test]
    fn whitespace_runs_split_like_tiktoken() {
        let pieces = |text: &'static str| -> Vec<&'static str> {
            O200K.pieces(text).map(|r| &text[r]).collect()
        };
        // `\s+(?!\S)`: the last space before a word goes with the word.
        assert_eq!(pieces("a   b"), ["a", "  ", " b"]);
        assert_eq!(pieces("a   "), ["a", "   "]);
        assert_eq!(pieces("a \n\n b"), ["a", " \n\n", " b"]);
        // U+FEFF is whitespace to JavaScript (and so to the reference), U+0085 is not.
        assert_eq!(pieces("a \u{FEFF}b"), ["a", " ", "\u{FEFF}b"]);
        assert_eq!(pieces("a \u{85}b"), ["a", " \u{85}", "b"]);
    }

    const WORD_LEVEL: &str = r#"{
        "version": "1.0", "truncation": {"direction": "Right", "max_length": 2, "strategy": "LongestFirst", "stride": 0},
        "padding": null, "added_tokens": [], "normalizer": null,
        "pre_tokenizer": {"type": "Whitespace"}, "post_processor": null, "decoder": null,
        "model": {"type": "WordLevel", "vocab": {"hello": 0, "world": 1, "[UNK]": 2}, "unk_token": "[UNK]"}
    }"#;

    #[test]
    fn huggingface_tokenizer_json() {
        let t = from_tokenizer_json("tiny.json", WORD_LEVEL.as_bytes()).unwrap();
        assert_eq!(t.name(), "file:tiny.json");
        // Truncation in the file (max_length 2) must not cap counts.
        assert_eq!(t.count("hello world hello wörld 你好"), 5);
        assert_eq!(t.count(""), 0);
        assert_eq!(t.prefix_len("hello world", 1), 5);
        assert_eq!(t.suffix_start("hello world", 1), 6);
        for text in SAMPLES {
            check_cuts(t.as_ref(), text);
        }
        let named = from_tokenizer_json("file:x", WORD_LEVEL.as_bytes()).unwrap();
        assert_eq!(named.name(), "file:x");
    }

    #[test]
    fn invalid_tokenizer_json_is_an_error() {
        let err = from_tokenizer_json("bad.json", b"{not json").unwrap_err();
        assert!(matches!(err, TokenizerError::InvalidFile { .. }));
        assert!(err.to_string().contains("bad.json"));
    }

    #[test]
    fn handles_are_cheap_and_shared() {
        let a = builtin("o200k_base").unwrap();
        let b = builtin("o200k").unwrap();
        assert!(std::ptr::addr_eq(a, b));
        let boxed = by_name("chars4").unwrap();
        assert_eq!(format!("{boxed:?}"), "Tokenizer(\"chars4\")");
    }

    #[test]
    fn a_text_counted_before_is_remembered_chunk_by_chunk() {
        // A fresh o200k_base, whose memo no other test touches.
        let bpe = o200k();
        let rows: String = (0..40)
            .map(|i| format!("  {{\"id\": {i}, \"name\": \"row {i}\"}},\n"))
            .collect();
        let text = format!("[\n{rows}  {{}}\n]\n");
        assert_eq!(bpe.count_remembered(&text), None);
        let n = bpe.count(&text);
        assert_eq!(n, bpe.count_whole(&text, false));
        assert_eq!(bpe.count_remembered(&text), Some(n));
        // One line more at the end: its last chunk was never counted.
        assert_eq!(
            bpe.count_remembered(&format!("{text}  {{\"id\": 40}}\n")),
            None
        );
        // Too short to be remembered, and U+FEFF (counted whole): never.
        bpe.count("[1, 2]");
        assert_eq!(bpe.count_remembered("[1, 2]"), None);
        let bom = format!("\u{feff}{text}");
        bpe.count(&bom);
        assert_eq!(bpe.count_remembered(&bom), None);
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        /// Fragments that stress the pre-tokenizer: case changes, contractions, digit runs,
        /// whitespace of every kind (JavaScript's and not), marks, multi-byte text, U+FEFF.
        const FRAGMENTS: &[&str] = &[
            "a",
            "Z",
            "the",
            "The",
            "HTTP",
            "camelCase",
            " ",
            " ",
            "  ",
            "\t",
            "\n",
            "\r\n",
            "\r",
            "'",
            "'s",
            "'LL",
            "'ve",
            "0",
            "42",
            "12345",
            "\"",
            "{",
            "}",
            ":",
            ",",
            ".",
            "/",
            "-",
            "_",
            "你好",
            "日本",
            "🙂",
            "👩\u{200d}👩",
            "🇫🇷",
            "e\u{301}",
            "\u{308}",
            "ß",
            "İ",
            "ſ",
            "\u{A0}",
            "\u{2028}",
            "\u{3000}",
            "\u{FEFF}",
            "\u{85}",
            "\u{200b}",
            "مرحبا",
            "<|",
        ];

        /// Short ASCII fragments at the pattern's edges, with some of `FRAGMENTS`.
        fn ascii_heavy_text() -> impl Strategy<Value = String> {
            const ASCII: &[&str] = &[
                "a", "z", "A", "Z", "s", "S", "t", "ll", "LL", "lL", "ve", "VE", "re", "rE", "d",
                "m", "'", "'s", "'ll", "'ve", "'re", "'x", "0", "9", "123", " ", "  ", "\t", "\n",
                "\r", "\r\n", "\x0B", "\x0C", "/", "//", "\"", "{", "}", ":", ",", ".", "-", "_",
                "\x00", "\x7F", "~", "é", "ſ", "\u{A0}", "\u{FEFF}", "\u{85}", "\u{301}", "中",
                "🙂", "\u{2028}",
            ];
            prop::collection::vec(
                prop_oneof![
                    4 => prop::sample::select(ASCII),
                    1 => prop::sample::select(FRAGMENTS),
                ],
                0..60,
            )
            .prop_map(|v| v.concat())
        }

        fn text() -> impl Strategy<Value = String> {
            prop::collection::vec(prop::sample::select(FRAGMENTS), 0..40).prop_map(|v| v.concat())
        }

        proptest! {
            #[test]
            fn cuts_hold_their_contract(text in text()) {
                for t in all() {
                    check_cuts(t.as_ref(), &text);
                }
            }

            /// Split at every point [`chunks`] may split at, a text's pieces are its
            /// chunks' pieces, so its count is their counts' sum; and the remembered
            /// counts are those counts.
            #[test]
            fn chunked_counts_are_whole_counts(
                text in prop_oneof![ascii_heavy_text(), text()].prop_map(|t| t.replace('\u{FEFF}', ""))
            ) {
                for bpe in [&*O200K, &*CL100K] {
                    let whole: Vec<Range<usize>> = bpe.pieces(&text).collect();
                    let mut split = Vec::new();
                    let mut at = 0;
                    for chunk in chunks::chunks(&text, 1) {
                        split.extend(bpe.pieces(chunk).map(|r| r.start + at..r.end + at));
                        at += chunk.len();
                    }
                    prop_assert_eq!(&split, &whole, "{:?}", chunks::chunks(&text, 1).collect::<Vec<_>>());
                    let expected = bpe.count_whole(&text, false);
                    // Counted, then from the memo; the same for floors.
                    prop_assert_eq!(bpe.count(&text), expected);
                    prop_assert_eq!(bpe.count(&text), expected);
                    prop_assert_eq!(bpe.count_floor(&text), whole.len());
                    prop_assert_eq!(bpe.count_floor(&text), whole.len());
                }
            }

            /// The ASCII shortcut splits exactly as the regex does.
            #[test]
            fn ascii_split_is_the_regex_split_on_random_text(text in ascii_heavy_text()) {
                let fast: Vec<Range<usize>> = O200K.pieces(&text).collect();
                prop_assert_eq!(fast, regex_pieces(&text));
            }

            /// The shortcuts that recount only the tail of a cut text agree with a full count.
            #[test]
            fn cut_recounts_equal_full_counts(text in text()) {
                for bpe in [&*O200K, &*CL100K] {
                    let total = bpe.count(&text);
                    for n in 0..=total {
                        let cut = bpe.cut(&text, n);
                        let end = floor_char_boundary(&text, cut.at);
                        prop_assert_eq!(bpe.count_prefix(&text, end, &cut), bpe.count(&text[..end]));
                        let start = ceil_char_boundary(&text, cut.at);
                        prop_assert_eq!(
                            bpe.count_suffix(&text, start, &cut, total),
                            bpe.count(&text[start..])
                        );
                    }
                }
            }

            /// The rank-table merges (scan and heap) against the slow path, bpe-openai's
            /// backtracking BPE, token for token; and without U+FEFF, the gpt-tokenizer-style
            /// merge is plain BPE too.
            #[test]
            fn js_merge_is_bpe_without_bom(text in text()) {
                let text = text.replace('\u{FEFF}', "");
                let pairs = [
                    (&*O200K, &bpe_openai::o200k_base().bpe),
                    (&*CL100K, &bpe_openai::cl100k_base().bpe),
                ];
                for (bpe, reference) in pairs {
                    for r in bpe.pieces(&text) {
                        let piece = &text[r];
                        let lens: Vec<usize> = reference
                            .encode_via_backtracking(piece.as_bytes())
                            .iter()
                            .map(|&t| reference.token_len(t))
                            .collect();
                        prop_assert_eq!(bpe.bpe.token_lens(piece.as_bytes()), lens.clone());
                        prop_assert_eq!(bpe.bpe.count(piece.as_bytes()), lens.len());
                        prop_assert_eq!(bpe.js_merge(piece.as_bytes()), lens);
                    }
                }
            }
        }
    }
}
