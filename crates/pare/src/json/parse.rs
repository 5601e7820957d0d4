//! The JSON parser: one pass of recursive descent over the bytes, building [`Value`]s
//! directly.
//!
//! Why it is shaped this way: it is on the hot path of every run (payloads of tens of
//! megabytes), so strings are copied in runs between the bytes that need attention, numbers
//! are validated and sliced rather than converted, and errors travel as a 16-byte
//! `(offset, code)` pair that is only turned into a message with line and column once,
//! at the top, when parsing has already failed.
//!
//! ```
//! use pare::json::{parse, JsonErrorKind};
//! let v = parse(r#"{"id": 7, "tags": ["a", "b"]}"#).unwrap();
//! assert_eq!(v.pointer_dotted("id").and_then(|n| n.as_f64()), Some(7.0));
//! let err = parse("{\"a\": 1 \"b\": 2}").unwrap_err();
//! assert_eq!((err.line, err.column, err.kind), (1, 9, JsonErrorKind::Syntax));
//! assert_eq!(err.message, "expected ',' or '}' after object member");
//! ```

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher, RandomState};

use crate::value::{Key, Map, Number, Str, Value};

use super::find_special;
use super::fork::Offers;
use super::omit::{At, Emptiness, KEEP, Omit, Omitted};

/// How deep arrays and objects may nest in [`parse`]. Deep enough for any real payload,
/// shallow enough that neither parsing nor dropping the value can exhaust an 8 MB stack.
pub const MAX_DEPTH: usize = 256;

/// Objects up to this many members look for a repeated key with a small bit filter (and a
/// scan only when the filter says "maybe"); past it, a hash index of the keys takes over so
/// a 100k-member object stays linear. A crafted input can make every filter probe say
/// "maybe", which costs at most LINEAR_KEYS² / 2 comparisons per object.
pub(super) const LINEAR_KEYS: usize = 256;

/// A 256-bit filter of the keys seen so far in one object.
pub(super) type KeyFilter = [u64; 4];

/// The filter bit of a key: a multiplicative hash of its length and its first and last
/// eight bytes — cheap, and distinct for the keys of almost any real object.
#[inline]
pub(super) fn filter_bit(key: &str) -> (usize, u64) {
    let b = key.as_bytes();
    let (head, tail) = match (b.first_chunk::<8>(), b.last_chunk::<8>()) {
        (Some(head), Some(tail)) => (u64::from_le_bytes(*head), u64::from_le_bytes(*tail)),
        _ => {
            let w = crate::scan::short_word(b, 0);
            (w, w)
        }
    };
    let h = (head ^ tail.rotate_left(29) ^ (b.len() as u64)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let bit = (h >> 56) as usize;
    (bit >> 6, 1u64 << (bit & 63))
}

/// Why a JSON text was rejected, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
#[error("{message} at line {line} column {column}")]
pub struct JsonError {
    /// 1-based line of the offending character (lines end at `\n`).
    pub line: usize,
    /// 1-based column, counted in characters (Unicode scalar values) from the line start.
    pub column: usize,
    /// Byte offset of the offending character in the text (the text's length at its end).
    pub offset: usize,
    /// What was expected or what is wrong, e.g. `expected ':' after object key`.
    pub message: String,
    /// The class of the error, for callers that branch on it.
    pub kind: JsonErrorKind,
}

/// A coarse class of [`JsonError`], for callers that react differently to, say, a
/// truncated payload and a malformed one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum JsonErrorKind {
    /// The text ended in the middle of a value (or was empty).
    UnexpectedEnd,
    /// A structural error: a missing comma, colon, key, bracket or value; a bad literal.
    Syntax,
    /// A malformed string: bad escape, raw control character, lone surrogate, no closing quote.
    String,
    /// A malformed number such as `01`, `1.` or `-`.
    Number,
    /// Something other than whitespace after the JSON value.
    TrailingCharacters,
    /// Arrays and objects nested deeper than the limit.
    TooDeep,
    /// A key repeated in one object, where that is refused ([`DuplicateKey::to_error`]).
    DuplicateKey,
}

/// A key written twice (or more) in one object: [`parse`] keeps its last value, as
/// `JSON.parse` does, and [`parse_noting_duplicates`] says where each repeat is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DuplicateKey {
    /// The key, unescaped.
    pub key: String,
    /// 1-based line of the repeat's opening quote.
    pub line: usize,
    /// 1-based column (in characters) of the repeat's opening quote.
    pub column: usize,
    /// Byte offset of the repeat's opening quote.
    pub offset: usize,
}

impl DuplicateKey {
    /// The repeat as an error, for callers that refuse repeated keys (`--strict`).
    pub fn to_error(&self) -> JsonError {
        JsonError {
            line: self.line,
            column: self.column,
            offset: self.offset,
            message: format!("duplicate key {} in an object", quoted(&self.key)),
            kind: JsonErrorKind::DuplicateKey,
        }
    }
}

impl std::fmt::Display for DuplicateKey {
    /// `duplicate key "a" at line 3 column 5 (its last value is kept)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "duplicate key {} at line {} column {} (its last value is kept)",
            quoted(&self.key),
            self.line,
            self.column
        )
    }
}

/// `key` as a JSON string, cut to 60 characters, for messages.
fn quoted(key: &str) -> String {
    let mut out = String::new();
    let cut: String = key.chars().take(60).collect();
    super::write_string(&cut, &mut out);
    if cut.len() < key.len() {
        out.insert(out.len() - 1, '…');
    }
    out
}

/// A parsed text and the keys it repeats.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Parsed {
    /// The value the text holds; a repeated key keeps its last value.
    pub value: Value,
    /// Every repeat of a key within one object, in text order; empty for almost any text.
    pub duplicates: Vec<DuplicateKey>,
}

/// [`parse`], also saying where a key repeats within an object (the value keeps the last,
/// as with [`parse`]). As fast as [`parse`]: a repeat is found anyway, to replace the
/// value, and only its offset is noted then.
pub fn parse_noting_duplicates(text: &str) -> Result<Parsed, JsonError> {
    let (value, offsets, _) = parse_full(text, MAX_DEPTH, super::fork::MIN_BYTES, None)?;
    Ok(Parsed {
        value,
        duplicates: duplicate_keys(text, offsets),
    })
}

/// [`parse_noting_duplicates`], leaving out what `omit` names (see [`super::omit`]), and
/// what it left out. A text that repeats a key is parsed again whole (and `None` is what
/// was left out): what was left out of a value its repeat replaced would be counted, and the
/// walk never sees that value. Such texts are rare, and warned about.
pub(crate) fn parse_omitting(
    text: &str,
    omit: &Omit,
) -> Result<(Parsed, Option<Omitted>), JsonError> {
    let (value, offsets, omitted) =
        parse_full(text, MAX_DEPTH, super::fork::MIN_BYTES, Some(omit))?;
    if !offsets.is_empty() || omitted.undecided {
        drop(value);
        return parse_noting_duplicates(text).map(|parsed| (parsed, None));
    }
    Ok((
        Parsed {
            value,
            duplicates: Vec::new(),
        },
        Some(omitted),
    ))
}

/// The repeated keys at these offsets (of their opening quotes).
fn duplicate_keys(text: &str, offsets: Vec<usize>) -> Vec<DuplicateKey> {
    offsets
        .into_iter()
        .map(|offset| {
            let key = Parser::new(text, offset, 0, None, None)
                .string()
                .map(|s| s.as_str().to_owned())
                .unwrap_or_default();
            let (line, column) = line_column(text, offset);
            DuplicateKey {
                key,
                line,
                column,
                offset,
            }
        })
        .collect()
}

/// Parse exactly one JSON text (RFC 8259): whitespace around the value is allowed, nothing
/// else after it. A leading UTF-8 byte order mark is skipped. Nesting is limited to
/// [`MAX_DEPTH`]. A repeated object key keeps its first position and its last value, as
/// `JSON.parse` does.
pub fn parse(text: &str) -> Result<Value, JsonError> {
    parse_with_max_depth(text, MAX_DEPTH)
}

/// [`parse`] with another nesting limit (0 admits only scalars). Each level costs a few
/// hundred bytes of stack while parsing and while dropping the value, so a limit far above
/// [`MAX_DEPTH`] is the caller's responsibility.
pub fn parse_with_max_depth(text: &str, max_depth: usize) -> Result<Value, JsonError> {
    parse_forking_from(text, max_depth, super::fork::MIN_BYTES).map(|(v, _)| v)
}

/// [`parse_with_max_depth`], with a second thread helping on texts of at least `min_fork`
/// bytes (see [`super::fork`]); tests lower the bar to fork on small texts. Not past
/// [`MAX_DEPTH`]: the stack deeper limits need is the caller's, on the caller's thread.
/// Also the offsets of repeated keys, in text order.
pub(crate) fn parse_forking_from(
    text: &str,
    max_depth: usize,
    min_fork: usize,
) -> Result<(Value, Vec<usize>), JsonError> {
    parse_full(text, max_depth, min_fork, None).map(|(v, dups, _)| (v, dups))
}

/// [`parse_forking_from`], leaving out what `omit` names.
fn parse_full(
    text: &str,
    max_depth: usize,
    min_fork: usize,
    omit: Option<&Omit>,
) -> Result<(Value, Vec<usize>, Omitted), JsonError> {
    let start = after_bom(text);
    // A helper parses elements before it knows whose they are: no help with scoped tests.
    let unscoped = omit.is_none_or(|o| !o.scoped());
    let result =
        if text.len() >= min_fork && max_depth <= MAX_DEPTH && unscoped && crate::has_second_core()
        {
            super::fork::parse_with_help(text, start, max_depth, omit)
        } else {
            let mut p = Parser::new(text, start, max_depth, None, omit);
            p.document().map(|v| (v, p.duplicates, p.omitted))
        };
    result
        .map(|(v, mut dups, omitted)| {
            // In order already, unless a helper's elements came in: sort to be sure.
            dups.sort_unstable();
            (v, dups, omitted)
        })
        .map_err(|fail| fail.into_error(text, max_depth))
}

/// Where the JSON text starts: after a leading UTF-8 byte order mark, if any.
pub(super) fn after_bom(text: &str) -> usize {
    if text.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    }
}

/// One JSON value at the start of `text` (no byte order mark, no leading whitespace) and
/// the byte offset just after it; what follows is the caller's. For values found inside
/// other text ([`crate::embedded`]): one thread, nesting limited to [`MAX_DEPTH`].
pub(crate) fn parse_leading(text: &str) -> Result<(Value, usize), JsonError> {
    let mut p = Parser::new(text, 0, MAX_DEPTH, None, None);
    match p.value() {
        Ok(v) => Ok((v, p.pos)),
        Err(fail) => Err(fail.into_error(text, MAX_DEPTH)),
    }
}

/// Everything that can go wrong; the details (which escape, which character) are read back
/// from the text at the failure offset when the message is built.
#[derive(Debug, Clone, Copy)]
enum Code {
    End,
    ExpectedValue,
    ExpectedCommaOrBracket,
    ExpectedCommaOrBrace,
    ExpectedKey,
    ExpectedColon,
    InvalidLiteral,
    InvalidNumber,
    InvalidEscape,
    InvalidUnicodeEscape,
    ControlChar,
    LoneSurrogate,
    Unterminated,
    Trailing,
    TooDeep,
}

/// A failure on the hot path: where, and which [`Code`].
#[derive(Debug, Clone, Copy)]
pub(super) struct Fail {
    pos: usize,
    code: Code,
}

impl Fail {
    fn new(pos: usize, code: Code) -> Fail {
        Fail { pos, code }
    }

    /// The full error, computing line, column and message from the text. Cold path.
    #[cold]
    pub(super) fn into_error(self, text: &str, max_depth: usize) -> JsonError {
        let rest = text.get(self.pos..).unwrap_or("");
        let (kind, message) = match self.code {
            Code::End => (
                JsonErrorKind::UnexpectedEnd,
                "unexpected end of input".into(),
            ),
            Code::ExpectedValue => (JsonErrorKind::Syntax, "expected a value".into()),
            Code::ExpectedCommaOrBracket => (
                JsonErrorKind::Syntax,
                "expected ',' or ']' after array element".into(),
            ),
            Code::ExpectedCommaOrBrace => (
                JsonErrorKind::Syntax,
                "expected ',' or '}' after object member".into(),
            ),
            Code::ExpectedKey => (JsonErrorKind::Syntax, "expected a string key".into()),
            Code::ExpectedColon => (
                JsonErrorKind::Syntax,
                "expected ':' after object key".into(),
            ),
            Code::InvalidLiteral => {
                let word: String = rest
                    .chars()
                    .take_while(char::is_ascii_alphanumeric)
                    .take(32)
                    .collect();
                let msg = match word.as_str() {
                    "NaN" | "Infinity" => format!("invalid literal {word} (JSON has no {word})"),
                    _ => format!("invalid literal {word}"),
                };
                (JsonErrorKind::Syntax, msg)
            }
            Code::InvalidNumber => {
                let lexeme: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
                    .take(40)
                    .collect();
                (JsonErrorKind::Number, format!("invalid number {lexeme}"))
            }
            Code::InvalidEscape => {
                let msg = match rest.chars().nth(1) {
                    Some(c) if !c.is_control() && !c.is_whitespace() => {
                        format!("invalid escape \\{c}")
                    }
                    Some(c) => format!("invalid escape: '\\' before U+{:04X}", u32::from(c)),
                    None => "invalid escape".into(),
                };
                (JsonErrorKind::String, msg)
            }
            Code::InvalidUnicodeEscape => {
                let shown: String = rest
                    .chars()
                    .take(6)
                    .take_while(|c| !c.is_control() && *c != '"')
                    .collect();
                (
                    JsonErrorKind::String,
                    format!("invalid unicode escape {shown} (expected 4 hex digits)"),
                )
            }
            Code::ControlChar => {
                let c = rest.chars().next().map_or(0, u32::from);
                (
                    JsonErrorKind::String,
                    format!("control character U+{c:04X} in string"),
                )
            }
            Code::LoneSurrogate => {
                let shown = rest.get(..6).unwrap_or(rest);
                (
                    JsonErrorKind::String,
                    format!("lone surrogate {shown} in string"),
                )
            }
            Code::Unterminated => (
                JsonErrorKind::String,
                "unterminated string (no closing '\"')".into(),
            ),
            Code::Trailing => (
                JsonErrorKind::TrailingCharacters,
                "trailing characters after the JSON value".into(),
            ),
            Code::TooDeep => (
                JsonErrorKind::TooDeep,
                format!("nesting deeper than {max_depth} levels"),
            ),
        };
        let (line, column) = line_column(text, self.pos);
        JsonError {
            line,
            column,
            offset: self.pos,
            message,
            kind,
        }
    }
}

/// 1-based line and character column of byte offset `pos`.
pub(crate) fn line_column(text: &str, pos: usize) -> (usize, usize) {
    let mut pos = pos.min(text.len());
    while !text.is_char_boundary(pos) {
        pos -= 1; // never loops past 0, which is always a boundary
    }
    let before = &text.as_bytes()[..pos];
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |nl| nl + 1);
    let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
    let column = 1 + text[line_start..pos].chars().count();
    (line, column)
}

/// Maps a key's precomputed 64-bit hash to itself: the index below is keyed by
/// `RandomState` hashes already, so hashing them again would only cost time.
#[derive(Default)]
pub(crate) struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is used; fold anything else in rather than panic.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// For large objects: key hash → index of the first member with that hash. Another key
/// with the same hash (astronomically rare with a keyed SipHash) falls back to a scan.
pub(crate) type KeyIndex = HashMap<u64, usize, BuildHasherDefault<PassThrough>>;

pub(super) struct Parser<'a> {
    pub(super) text: &'a str,
    pub(super) bytes: &'a [u8],
    pub(super) pos: usize,
    pub(super) depth_left: usize,
    /// The least `depth_left` has been: how deep a helper's elements nest (see [`Tail`]).
    pub(super) min_depth_left: usize,
    /// Elements of the arrays being parsed, innermost last. Each array takes its own off
    /// the top when it closes, in one allocation of the exact size instead of a chain of
    /// doubling reallocations (and no unused capacity left in the value).
    values: Vec<Value>,
    /// The same for object members.
    pub(super) members: Vec<(Key, Value)>,
    /// Created on the first large object; random keys keep crafted collisions out.
    hasher: Option<RandomState>,
    /// What a helper thread parses ahead (see [`super::fork`]).
    pub(super) offers: Option<&'a Offers>,
    /// Offsets of the opening quotes of repeated keys (no allocation while there are none).
    pub(super) duplicates: Vec<usize>,
    /// What to leave out as objects close (see [`super::omit`]).
    pub(super) omit: Option<&'a Omit>,
    /// With `omit`: each member's mark, beside `members`.
    marks: Vec<u16>,
    /// `omit` has tests that look only in some objects ([`Omit::scoped`]): the parser then
    /// keeps, for each open container, which context names its key is...
    pub(super) scoped: bool,
    context: Vec<u64>,
    /// ...and the key of the member whose value is about to be read.
    pub(super) pending: u64,
    /// How many dropped members' values are being parsed: inside them nothing is left out,
    /// as the walk never looks inside what it drops.
    pub(super) suspended: usize,
    /// What was left out.
    pub(super) omitted: Omitted,
    /// Where strings with escapes are decoded ([`Parser::string_slow`]).
    scratch: String,
}

/// Elements of an array a helper parsed: from an offered position (just after a comma)
/// to `end`, which is after the closing `]` when `closed`, or else just after another
/// comma of the same array; and how many levels the elements nest.
pub(super) struct Tail {
    pub(super) items: Items,
    pub(super) end: usize,
    pub(super) closed: bool,
    pub(super) depth: usize,
    /// Offsets of the keys these elements repeat.
    pub(super) duplicates: Vec<usize>,
    /// What was left out of them.
    pub(super) omitted: Omitted,
}

/// A helper's elements: parsed, or written as compact JSON by [`super::stream`] (comma
/// separated, how many, and what it noted of them for the list ops).
pub(super) enum Items {
    Values(Vec<Value>),
    Text(String, usize, super::written::Written),
}

impl<'a> Parser<'a> {
    pub(super) fn new(
        text: &'a str,
        pos: usize,
        max_depth: usize,
        offers: Option<&'a Offers>,
        omit: Option<&'a Omit>,
    ) -> Self {
        Parser {
            text,
            bytes: text.as_bytes(),
            pos,
            depth_left: max_depth,
            min_depth_left: max_depth,
            values: Vec::new(),
            members: Vec::new(),
            hasher: None,
            offers,
            duplicates: Vec::new(),
            omit,
            marks: Vec::new(),
            scoped: omit.is_some_and(Omit::scoped),
            context: Vec::new(),
            pending: 0,
            suspended: 0,
            omitted: omit.map(Omit::nothing_yet).unwrap_or_default(),
            scratch: String::new(),
        }
    }

    /// The whole text: one value and nothing after it but whitespace.
    pub(super) fn document(&mut self) -> Result<Value, Fail> {
        let v = self.value()?;
        self.skip_ws();
        if self.pos < self.bytes.len() {
            Err(Fail::new(self.pos, Code::Trailing))
        } else {
            Ok(v)
        }
    }

    /// At an array element that starts where the helper offered elements: take them (and
    /// any offered right after them) if they parsed and fit in the depth left here. True
    /// when they closed the array.
    #[cold]
    fn take_offers(&mut self, offers: &Offers) -> bool {
        self.take_offers_with(offers, |p, items| match items {
            Items::Values(values) => {
                p.values.extend(values);
                true
            }
            Items::Text(..) => false,
        })
    }

    /// [`Parser::take_offers`], handing each tail's items to `take`, which says whether it
    /// took them (they are of the kind this reader makes). Not inside a dropped member:
    /// nothing is left out there, and the helper did not know.
    pub(super) fn take_offers_with(
        &mut self,
        offers: &Offers,
        mut take: impl FnMut(&mut Self, Items) -> bool,
    ) -> bool {
        while let Some(tail) = offers.take(self.pos) {
            if tail.depth > self.depth_left || self.suspended > 0 || !take(self, tail.items) {
                return false;
            }
            self.duplicates.extend(tail.duplicates);
            self.omitted.add(tail.omitted);
            self.pos = tail.end;
            if tail.closed {
                return true;
            }
            offers.progress(self.pos);
        }
        false
    }

    #[inline]
    pub(super) fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    #[inline]
    pub(super) fn skip_ws(&mut self) {
        match self.peek() {
            // one space, as after a pretty-printed `:`
            Some(b' ') => {
                self.pos += 1;
                if let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
                    self.skip_ws_run();
                }
            }
            Some(b'\n' | b'\r' | b'\t') => self.skip_ws_run(),
            _ => {}
        }
    }

    /// The whitespace run under the cursor. Pretty-printed payloads indent every line, so
    /// runs of spaces are skipped eight bytes at a time.
    #[inline(never)]
    fn skip_ws_run(&mut self) {
        const SPACES: u64 = u64::from_le_bytes([b' '; 8]);
        loop {
            match self.peek() {
                Some(b' ') => match self
                    .bytes
                    .get(self.pos..)
                    .and_then(<[u8]>::first_chunk::<8>)
                {
                    Some(chunk) => {
                        let other = u64::from_le_bytes(*chunk) ^ SPACES;
                        // the first byte is a space, so this advances by 1..=8
                        self.pos += if other == 0 {
                            8
                        } else {
                            (other.trailing_zeros() / 8) as usize
                        };
                    }
                    None => self.pos += 1,
                },
                Some(b'\n' | b'\r' | b'\t') => self.pos += 1,
                _ => return,
            }
        }
    }

    /// A value, after optional whitespace.
    pub(super) fn value(&mut self) -> Result<Value, Fail> {
        self.skip_ws();
        match self.peek() {
            Some(b'"') => self.string().map(Value::String),
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.literal(b"true", Value::Bool(true)),
            Some(b'f') => self.literal(b"false", Value::Bool(false)),
            Some(b'n') => self.literal(b"null", Value::Null),
            Some(b'+' | b'.') => Err(Fail::new(self.pos, Code::InvalidNumber)),
            Some(b) if b.is_ascii_alphabetic() => self.bad_literal(),
            Some(_) => Err(Fail::new(self.pos, Code::ExpectedValue)),
            None => Err(Fail::new(self.pos, Code::End)),
        }
    }

    #[inline]
    pub(super) fn literal(&mut self, word: &[u8], v: Value) -> Result<Value, Fail> {
        if self.bytes.get(self.pos..self.pos + word.len()) == Some(word) {
            self.pos += word.len();
            Ok(v)
        } else {
            self.bad_literal()
        }
    }

    /// A word that is not `true`, `false` or `null`; a cut-off prefix of one is a
    /// truncated text rather than a typo.
    #[cold]
    fn bad_literal(&self) -> Result<Value, Fail> {
        let rest = &self.bytes[self.pos..];
        let len = rest
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric())
            .count();
        let is_cut = len == rest.len()
            && [&b"true"[..], b"false", b"null"]
                .iter()
                .any(|w| w.starts_with(rest));
        if is_cut {
            Err(Fail::new(self.bytes.len(), Code::End))
        } else {
            Err(Fail::new(self.pos, Code::InvalidLiteral))
        }
    }

    /// Validate the number grammar and keep the lexeme as is.
    fn number(&mut self) -> Result<Value, Fail> {
        let start = self.pos;
        self.pos = self.number_end()?;
        Ok(Value::Number(Number::from_checked(
            &self.text[start..self.pos],
        )))
    }

    /// The end of the number under the cursor, its grammar checked (the cursor stays).
    pub(super) fn number_end(&self) -> Result<usize, Fail> {
        let start = self.pos;
        let b = self.bytes;
        let mut i = start;
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        match b.get(i) {
            Some(b'0') => {
                i += 1;
                if b.get(i).is_some_and(u8::is_ascii_digit) {
                    return Err(Fail::new(start, Code::InvalidNumber));
                }
            }
            Some(b'1'..=b'9') => i = skip_digits(b, i + 1),
            None => return Err(Fail::new(i, Code::End)),
            Some(_) => return Err(Fail::new(start, Code::InvalidNumber)),
        }
        if b.get(i) == Some(&b'.') {
            let digits = i + 1;
            i = skip_digits(b, digits);
            if i == digits {
                return Err(self.number_fail(start, i));
            }
        }
        if let Some(b'e' | b'E') = b.get(i) {
            i += 1;
            if let Some(b'+' | b'-') = b.get(i) {
                i += 1;
            }
            let digits = i;
            i = skip_digits(b, digits);
            if i == digits {
                return Err(self.number_fail(start, i));
            }
        }
        Ok(i)
    }

    /// A number missing its digits: cut off by the end of the text, or malformed.
    #[cold]
    fn number_fail(&self, start: usize, at: usize) -> Fail {
        if at == self.bytes.len() {
            Fail::new(at, Code::End)
        } else {
            Fail::new(start, Code::InvalidNumber)
        }
    }

    /// A string starting at the `"` under the cursor; leaves the cursor after its closing `"`.
    /// Kept inline when short (no allocation); a longer one without escapes takes one
    /// allocation of the exact size.
    fn string(&mut self) -> Result<Str, Fail> {
        let open = self.pos;
        let start = open + 1;
        let end = find_special(self.bytes, start);
        if self.bytes.get(end) == Some(&b'"') {
            // The common case: nothing to unescape.
            self.pos = end + 1;
            return Ok(Str::new(&self.text[start..end]));
        }
        self.string_slow(open, end)
    }

    /// An object key: the same as a string value.
    #[inline]
    pub(super) fn key(&mut self) -> Result<Key, Fail> {
        self.string()
    }

    /// The rest of a string that holds escapes (or is malformed); `run_end` is the first
    /// byte after the opening quote that needs attention.
    pub(super) fn string_slow(&mut self, open: usize, mut run_end: usize) -> Result<Str, Fail> {
        let b = self.bytes;
        let mut run_start = open + 1;
        // Decoded into the parser's scratch `String`, then copied once: pushing many short
        // runs and escapes onto a `String` is about twice as fast as onto a `Str` (which
        // checks inline or heap on every push), and the scratch's buffer is reused.
        let mut out = std::mem::take(&mut self.scratch);
        out.clear();
        loop {
            out.push_str(&self.text[run_start..run_end]);
            let i = run_end;
            match b.get(i) {
                Some(b'"') => {
                    self.pos = i + 1;
                    let decoded = Str::new(&out);
                    self.scratch = out;
                    return Ok(decoded);
                }
                Some(b'\\') => {
                    run_start = self.escape(i, &mut out)?;
                }
                Some(_) => return Err(Fail::new(i, Code::ControlChar)),
                None => return Err(Fail::new(open, Code::Unterminated)),
            }
            run_end = find_special(b, run_start);
        }
    }

    /// The escape whose `\` is at `i`: pushes what it stands for and returns the offset after it.
    fn escape(&self, i: usize, out: &mut String) -> Result<usize, Fail> {
        let c = match self.bytes.get(i + 1) {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                let (c, next) = self.unicode_escape(i)?;
                out.push(c);
                return Ok(next);
            }
            Some(_) => return Err(Fail::new(i, Code::InvalidEscape)),
            None => return Err(Fail::new(self.bytes.len(), Code::End)),
        };
        out.push(c);
        Ok(i + 2)
    }

    /// `\uXXXX` at `i`, or a surrogate pair `\uD83D\uDE00`; a surrogate without its partner
    /// is an error because a Rust string cannot hold it (and replacing it with U+FFFD would
    /// silently change the data).
    fn unicode_escape(&self, i: usize) -> Result<(char, usize), Fail> {
        let hi = self.hex4(i)?;
        if let Some(c) = char::from_u32(hi) {
            return Ok((c, i + 6));
        }
        if hi >= 0xDC00 {
            return Err(Fail::new(i, Code::LoneSurrogate));
        }
        let j = i + 6;
        if self.bytes.get(j..j + 2) != Some(b"\\u") {
            return Err(Fail::new(i, Code::LoneSurrogate));
        }
        let lo = self.hex4(j)?;
        if !(0xDC00..0xE000).contains(&lo) {
            return Err(Fail::new(i, Code::LoneSurrogate));
        }
        let code = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
        match char::from_u32(code) {
            Some(c) => Ok((c, j + 6)),
            None => Err(Fail::new(i, Code::LoneSurrogate)), // unreachable by arithmetic
        }
    }

    /// The four hex digits of the `\u` escape whose `\` is at `i`.
    fn hex4(&self, i: usize) -> Result<u32, Fail> {
        if let Some(n) = super::scan::hex4(self.bytes, i + 2) {
            return Ok(n);
        }
        // A digit that is not hex is the escape's fault; running out of input first, the end's.
        let len = self.bytes.len();
        let there = &self.bytes[(i + 2).min(len)..(i + 6).min(len)];
        if there.iter().all(u8::is_ascii_hexdigit) {
            Err(Fail::new(len, Code::End))
        } else {
            Err(Fail::new(i, Code::InvalidUnicodeEscape))
        }
    }

    /// Entering a container at `open`: spend one level of the depth budget.
    #[inline]
    pub(super) fn descend(&mut self, open: usize) -> Result<(), Fail> {
        if self.depth_left == 0 {
            return Err(Fail::new(open, Code::TooDeep));
        }
        self.depth_left -= 1;
        self.min_depth_left = self.min_depth_left.min(self.depth_left);
        Ok(())
    }

    fn array(&mut self) -> Result<Value, Fail> {
        self.descend(self.pos)?;
        self.pos += 1;
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            self.depth_left += 1;
            self.pending = 0;
            return Ok(Value::Array(Vec::new()));
        }
        self.enter_scoped();
        let base = self.values.len();
        loop {
            // An element is under no key.
            self.pending = 0;
            let v = self.value()?;
            self.values.push(v);
            self.skip_ws();
            match self.peek() {
                Some(b',') => {
                    self.pos += 1;
                    if let Some(offers) = self.offers
                        && offers.progress(self.pos)
                        && self.take_offers(offers)
                    {
                        break;
                    }
                }
                Some(b']') => {
                    self.pos += 1;
                    break;
                }
                Some(_) => return Err(Fail::new(self.pos, Code::ExpectedCommaOrBracket)),
                None => return Err(Fail::new(self.pos, Code::End)),
            }
        }
        self.depth_left += 1;
        self.leave_scoped();
        Ok(Value::Array(self.values.split_off(base)))
    }

    fn object(&mut self) -> Result<Value, Fail> {
        self.descend(self.pos)?;
        self.pos += 1;
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            self.depth_left += 1;
            self.pending = 0;
            return Ok(Value::Object(Map::new()));
        }
        let at = self.enter_scoped();
        let base = self.members.len();
        let mut index: Option<KeyIndex> = None;
        let mut filter: KeyFilter = [0; 4];
        loop {
            match self.peek() {
                Some(b'"') => {}
                Some(_) => return Err(Fail::new(self.pos, Code::ExpectedKey)),
                None => return Err(Fail::new(self.pos, Code::End)),
            }
            let key_at = self.pos;
            let key = self.key()?;
            self.skip_ws();
            match self.peek() {
                Some(b':') => self.pos += 1,
                Some(_) => return Err(Fail::new(self.pos, Code::ExpectedColon)),
                None => return Err(Fail::new(self.pos, Code::End)),
            }
            let mark = match self.omit {
                Some(omit) if self.scoped => {
                    self.pending = omit.context_of(&key);
                    if self.suspended == 0 {
                        omit.mark_at(&key, at)
                    } else {
                        KEEP
                    }
                }
                Some(omit) if self.suspended == 0 => omit.mark(&key),
                _ => KEEP,
            };
            let value = if mark == KEEP {
                self.value()?
            } else {
                self.suspended += 1;
                let value = self.value();
                self.suspended -= 1;
                value?
            };
            let mark = match self.omit {
                Some(omit) if self.suspended == 0 => omit.fate(mark, Emptiness::of(&value)),
                _ => mark,
            };
            match self.find_key(base, &mut index, &mut filter, &key) {
                // JSON.parse: the last value, at the first key's position (its fate is the
                // last value's)
                Some(i) => {
                    self.members[i].1 = value;
                    self.duplicates.push(key_at);
                    if self.omit.is_some() {
                        self.marks[i] = mark;
                    }
                }
                None => {
                    self.members.push((key, value));
                    if self.omit.is_some() {
                        self.marks.push(mark);
                    }
                }
            }
            self.skip_ws();
            match self.peek() {
                Some(b',') => {
                    self.pos += 1;
                    self.skip_ws();
                }
                Some(b'}') => {
                    self.pos += 1;
                    break;
                }
                Some(_) => return Err(Fail::new(self.pos, Code::ExpectedCommaOrBrace)),
                None => return Err(Fail::new(self.pos, Code::End)),
            }
        }
        self.depth_left += 1;
        self.leave_scoped();
        let entries = match self.omit {
            Some(omit) => self.close_omitting(base, omit, at),
            None => self.members.split_off(base),
        };
        Ok(Value::Object(Map::from_keyed_unchecked(entries)))
    }

    /// The conditional prunes of the object that starts at `base` on the member stack,
    /// onto its marks (see [`Omit::close_wheres`]).
    fn close_wheres(&mut self, base: usize, omit: &Omit) {
        let members = &self.members[base..];
        let marks = &mut self.marks[base..];
        let may = members
            .iter()
            .zip(marks.iter())
            .any(|((_, v), &m)| m == KEEP && omit.where_may_take(Emptiness::of(v)));
        if !may {
            return;
        }
        let keys: Vec<&str> = members.iter().map(|(k, _)| k.as_str()).collect();
        let empties: Vec<Emptiness> = members.iter().map(|(_, v)| Emptiness::of(v)).collect();
        let mut value = |i: usize| match &members[i].1 {
            Value::Array(_) | Value::Object(_) => None,
            v => Some(v.clone()),
        };
        if omit
            .close_wheres(&keys, &empties, marks, &mut value)
            .is_err()
        {
            self.omitted.undecided = true;
        }
    }

    /// With scoped tests: a container opens (under the key just read, if any); where it is
    /// ([`At`], what an object's members are tested by). `At::default()` otherwise.
    #[inline]
    pub(super) fn enter_scoped(&mut self) -> At {
        if !self.scoped {
            return At::default();
        }
        let key = std::mem::take(&mut self.pending);
        self.context.push(key);
        let depth = self.context.len();
        At {
            root: depth == 1,
            parent: if depth >= 2 {
                self.context[depth - 2]
            } else {
                0
            },
        }
    }

    /// With scoped tests: the container [`Parser::enter_scoped`] opened closes.
    #[inline]
    pub(super) fn leave_scoped(&mut self) {
        if self.scoped {
            self.context.pop();
        }
    }

    /// The members of the object that starts at `base` on the member stack, less those
    /// `omit` leaves out (counted).
    fn close_omitting(&mut self, base: usize, omit: &Omit, at: At) -> Vec<(Key, Value)> {
        if self.suspended == 0 {
            self.close_wheres(base, omit);
        }
        let marks = &self.marks[base..];
        let kept = marks.iter().filter(|&&m| m == KEEP).count();
        if kept == marks.len() {
            self.marks.truncate(base);
            return self.members.split_off(base);
        }
        let mut entries = Vec::with_capacity(kept);
        for (member, m) in self.members.drain(base..).zip(self.marks.drain(base..)) {
            if m == KEEP {
                entries.push(member);
            } else {
                omit.count_at(
                    m,
                    &member.0,
                    Emptiness::of(&member.1),
                    at,
                    &mut self.omitted,
                );
            }
        }
        entries
    }

    /// Where `key` already is among the members of the object that starts at `base` on the
    /// member stack, if anywhere. When it is not there it is about to be pushed, so a
    /// present index records it at the stack's current length.
    #[inline]
    pub(super) fn find_key(
        &mut self,
        base: usize,
        index: &mut Option<KeyIndex>,
        filter: &mut KeyFilter,
        key: &str,
    ) -> Option<usize> {
        let members = &self.members[base..];
        if index.is_none() && members.len() < LINEAR_KEYS {
            let (word, bit) = filter_bit(key);
            if filter[word] & bit == 0 {
                filter[word] |= bit;
                return None;
            }
            return members.iter().position(|(k, _)| k == key).map(|i| base + i);
        }
        let hasher = self.hasher.get_or_insert_with(RandomState::new);
        let index = index.get_or_insert_with(|| {
            let mut idx = KeyIndex::with_capacity_and_hasher(4 * LINEAR_KEYS, Default::default());
            for (i, (k, _)) in members.iter().enumerate() {
                idx.entry(hasher.hash_one(k.as_str())).or_insert(base + i);
            }
            idx
        });
        match index.entry(hasher.hash_one(key)) {
            Entry::Occupied(e) => {
                let i = *e.get();
                if self.members[i].0 == key {
                    Some(i)
                } else {
                    members.iter().position(|(k, _)| k == key).map(|i| base + i)
                }
            }
            Entry::Vacant(e) => {
                e.insert(self.members.len());
                None
            }
        }
    }
}

#[inline]
fn skip_digits(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Value {
        parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"))
    }

    fn err(text: &str) -> JsonError {
        match parse(text) {
            Ok(v) => panic!("{text:?} parsed as {v:?}"),
            Err(e) => e,
        }
    }

    /// (message, line, column) of the error for `text`.
    fn fails(text: &str) -> (String, usize, usize) {
        let e = err(text);
        (e.message, e.line, e.column)
    }

    fn num(s: &str) -> Value {
        Value::Number(Number::from_lexeme(s).unwrap())
    }

    fn obj(members: &[(&str, Value)]) -> Value {
        Value::Object(Map::from_entries_unchecked(
            members
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect(),
        ))
    }

    #[test]
    fn scalars_and_whitespace() {
        assert_eq!(ok("null"), Value::Null);
        assert_eq!(ok(" \t\r\n true \n"), Value::Bool(true));
        assert_eq!(ok("false"), Value::Bool(false));
        assert_eq!(ok("\"\""), Value::String(Str::default()));
        assert_eq!(ok("0"), num("0"));
        assert_eq!(ok(" [ 1 , 2 ] "), Value::Array(vec![num("1"), num("2")]));
        assert_eq!(
            ok("{ \"a\" : [ ] , \"b\" :\n{ } }"),
            obj(&[("a", Value::Array(vec![])), ("b", obj(&[]))])
        );
    }

    #[test]
    fn empty_containers() {
        assert_eq!(ok("[]"), Value::Array(vec![]));
        assert_eq!(ok("{}"), obj(&[]));
        assert_eq!(ok("[ \n ]"), Value::Array(vec![]));
        assert_eq!(ok("{\t}"), obj(&[]));
        assert_eq!(
            ok("[[],{},[{}]]"),
            Value::Array(vec![
                Value::Array(vec![]),
                obj(&[]),
                Value::Array(vec![obj(&[])])
            ])
        );
    }

    #[test]
    fn numbers_keep_their_lexeme() {
        for lexeme in [
            "0",
            "-0",
            "1E+2",
            "1e-2",
            "1.50",
            "-12.340e10",
            "123456789012345678901234567890",
            "0.0",
            "-0.0e0",
        ] {
            match ok(lexeme) {
                Value::Number(n) => assert_eq!(n.as_str(), lexeme),
                other => panic!("{other:?}"),
            }
            // also inside containers, where the number ends at a delimiter
            let arr = ok(&format!("[{lexeme},{lexeme}]"));
            assert_eq!(arr, Value::Array(vec![num(lexeme), num(lexeme)]));
        }
    }

    #[test]
    fn bad_numbers() {
        assert_eq!(fails("01"), ("invalid number 01".into(), 1, 1));
        assert_eq!(fails("[1.]"), ("invalid number 1.".into(), 1, 2));
        assert_eq!(fails("[.5]"), ("invalid number .5".into(), 1, 2));
        assert_eq!(fails("+1"), ("invalid number +1".into(), 1, 1));
        assert_eq!(fails("[-]"), ("invalid number -".into(), 1, 2));
        assert_eq!(fails("[-a]"), ("invalid number -a".into(), 1, 2));
        assert_eq!(fails("[1e]"), ("invalid number 1e".into(), 1, 2));
        assert_eq!(fails("[1e+]"), ("invalid number 1e+".into(), 1, 2));
        assert_eq!(fails("-01"), ("invalid number -01".into(), 1, 1));
        assert_eq!(err("01").kind, JsonErrorKind::Number);
        // cut off by the end of the text: truncated, not malformed
        for cut in ["1.", "-", "1e", "1E-", "[1.5e"] {
            let e = err(cut);
            assert_eq!(e.kind, JsonErrorKind::UnexpectedEnd, "{cut}");
            assert_eq!(e.column, cut.len() + 1, "{cut}");
        }
        assert_eq!(
            fails("NaN"),
            ("invalid literal NaN (JSON has no NaN)".into(), 1, 1)
        );
        assert_eq!(
            fails("[1, Infinity]"),
            (
                "invalid literal Infinity (JSON has no Infinity)".into(),
                1,
                5
            )
        );
        assert_eq!(
            fails("-Infinity"),
            ("invalid number -Infinity".into(), 1, 1)
        );
        // a number followed by junk
        assert_eq!(
            fails("[1x]"),
            ("expected ',' or ']' after array element".into(), 1, 3)
        );
        assert_eq!(
            fails("1.5.2"),
            ("trailing characters after the JSON value".into(), 1, 4)
        );
    }

    #[test]
    fn literals() {
        assert_eq!(fails("tru"), ("unexpected end of input".into(), 1, 4));
        assert_eq!(fails("[nul"), ("unexpected end of input".into(), 1, 5));
        assert_eq!(fails("[True]"), ("invalid literal True".into(), 1, 2));
        assert_eq!(fails("[trUe]"), ("invalid literal trUe".into(), 1, 2));
        assert_eq!(
            fails("nulll"),
            ("trailing characters after the JSON value".into(), 1, 5)
        );
        assert_eq!(
            fails("undefined"),
            ("invalid literal undefined".into(), 1, 1)
        );
    }

    #[test]
    fn escapes() {
        assert_eq!(
            ok(r#""\"\\\/\b\f\n\r\t""#),
            Value::from("\"\\/\u{8}\u{c}\n\r\t")
        );
        assert_eq!(
            ok(r#""\u0041\u00e9\u00E9\u2028""#),
            Value::from("Aéé\u{2028}")
        );
        assert_eq!(ok(r#""a\u0000b""#), Value::from("a\0b"));
        assert_eq!(ok(r#""\ud83d\ude00""#), Value::from("😀"));
        assert_eq!(ok(r#""x\uD83D\uDE00y""#), Value::from("x😀y"));
        assert_eq!(ok(r#""\uffff\uFFFD""#), Value::from("\u{ffff}\u{fffd}"));
        // raw non-ASCII and DEL pass through untouched
        assert_eq!(
            ok("\"héllo 世界 😀 \u{7f}\""),
            Value::from("héllo 世界 😀 \u{7f}")
        );
        // runs between escapes, long enough to cross the 8-byte scanner
        let long = format!(
            "\"{}\\n{}\\\"{}\"",
            "a".repeat(37),
            "é".repeat(20),
            "z".repeat(9)
        );
        assert_eq!(
            ok(&long),
            Value::from(format!(
                "{}\n{}\"{}",
                "a".repeat(37),
                "é".repeat(20),
                "z".repeat(9)
            ))
        );
    }

    #[test]
    fn bad_strings() {
        assert_eq!(fails(r#""a\qb""#), (r"invalid escape \q".into(), 1, 3));
        assert_eq!(fails(r#""é\é""#), (r"invalid escape \é".into(), 1, 3));
        assert_eq!(
            fails("\"a\\\nb\""),
            ("invalid escape: '\\' before U+000A".into(), 1, 3)
        );
        assert_eq!(
            fails("\"ab\ncd\""),
            ("control character U+000A in string".into(), 1, 4)
        );
        assert_eq!(
            fails("[\"\t\"]"),
            ("control character U+0009 in string".into(), 1, 3)
        );
        assert_eq!(
            fails("\"0123456789\u{1f}\""),
            ("control character U+001F in string".into(), 1, 12)
        );
        assert_eq!(
            fails(r#"["\ud800"]"#),
            (r"lone surrogate \ud800 in string".into(), 1, 3)
        );
        assert_eq!(
            fails(r#""ab\uDC00""#),
            (r"lone surrogate \uDC00 in string".into(), 1, 4)
        );
        assert_eq!(
            fails(r#""\ud83d\u0041""#),
            (r"lone surrogate \ud83d in string".into(), 1, 2)
        );
        assert_eq!(
            fails(r#""\ud83dx""#),
            (r"lone surrogate \ud83d in string".into(), 1, 2)
        );
        assert_eq!(
            fails(r#""\u12g4""#),
            (
                r"invalid unicode escape \u12g4 (expected 4 hex digits)".into(),
                1,
                2
            )
        );
        assert_eq!(
            fails(r#""\u12""#),
            (
                r"invalid unicode escape \u12 (expected 4 hex digits)".into(),
                1,
                2
            )
        );
        assert_eq!(err(r#""\q""#).kind, JsonErrorKind::String);
        // cut off
        assert_eq!(
            fails("\"abc"),
            ("unterminated string (no closing '\"')".into(), 1, 1)
        );
        assert_eq!(
            fails("{\"k\": \"abc\\\"}"),
            ("unterminated string (no closing '\"')".into(), 1, 7)
        );
        assert_eq!(fails("\"abc\\"), ("unexpected end of input".into(), 1, 6));
        assert_eq!(fails("\"\\u00"), ("unexpected end of input".into(), 1, 6));
    }

    #[test]
    fn structural_errors() {
        assert_eq!(fails(""), ("unexpected end of input".into(), 1, 1));
        assert_eq!(fails("  \n "), ("unexpected end of input".into(), 2, 2));
        assert_eq!(err("").kind, JsonErrorKind::UnexpectedEnd);
        assert_eq!(fails("["), ("unexpected end of input".into(), 1, 2));
        assert_eq!(fails("[1,"), ("unexpected end of input".into(), 1, 4));
        assert_eq!(fails("[1"), ("unexpected end of input".into(), 1, 3));
        assert_eq!(fails("{"), ("unexpected end of input".into(), 1, 2));
        assert_eq!(fails("{\"a\""), ("unexpected end of input".into(), 1, 5));
        assert_eq!(fails("{\"a\":"), ("unexpected end of input".into(), 1, 6));
        assert_eq!(fails("{\"a\":1"), ("unexpected end of input".into(), 1, 7));
        assert_eq!(fails("{\"a\":1,"), ("unexpected end of input".into(), 1, 8));
        assert_eq!(fails("[1,]"), ("expected a value".into(), 1, 4));
        assert_eq!(fails("[,1]"), ("expected a value".into(), 1, 2));
        assert_eq!(fails("]"), ("expected a value".into(), 1, 1));
        assert_eq!(
            fails("[1 2]"),
            ("expected ',' or ']' after array element".into(), 1, 4)
        );
        assert_eq!(
            fails("[1}"),
            ("expected ',' or ']' after array element".into(), 1, 3)
        );
        assert_eq!(
            fails("{\"a\":1 \"b\":2}"),
            ("expected ',' or '}' after object member".into(), 1, 8)
        );
        assert_eq!(fails("{\"a\":1,}"), ("expected a string key".into(), 1, 8));
        assert_eq!(fails("{a:1}"), ("expected a string key".into(), 1, 2));
        assert_eq!(fails("{'a':1}"), ("expected a string key".into(), 1, 2));
        assert_eq!(
            fails("{\"a\" 1}"),
            ("expected ':' after object key".into(), 1, 6)
        );
        assert_eq!(
            fails("{\"a\"=1}"),
            ("expected ':' after object key".into(), 1, 5)
        );
        assert_eq!(fails("{\"a\":}"), ("expected a value".into(), 1, 6));
        assert_eq!(
            fails("{} {}"),
            ("trailing characters after the JSON value".into(), 1, 4)
        );
        assert_eq!(
            fails("1 2"),
            ("trailing characters after the JSON value".into(), 1, 3)
        );
        assert_eq!(err("[] x").kind, JsonErrorKind::TrailingCharacters);
        assert_eq!(err("[1 2]").kind, JsonErrorKind::Syntax);
        // a NUL byte or a comment are not whitespace
        assert_eq!(
            fails("[1]\0"),
            ("trailing characters after the JSON value".into(), 1, 4)
        );
        assert_eq!(fails("[1, // c\n2]"), ("expected a value".into(), 1, 5));
    }

    #[test]
    fn positions_count_lines_and_characters() {
        // multi-line, with multi-byte characters before the error on the same line
        let text = "{\n  \"naïve\": \"日本語\",\n  \"emoji\": \"😀😀\" \"x\"\n}";
        let e = err(text);
        assert_eq!(e.message, "expected ',' or '}' after object member");
        assert_eq!((e.line, e.column), (3, 17));
        assert_eq!(&text[e.offset..e.offset + 1], "\"");
        // CRLF line ends: the CR is just whitespace at the end of the previous line
        let e = err("[\r\n1,\r\n  x]");
        assert_eq!((e.line, e.column), (3, 3));
        // control character after multi-byte text on line 2
        let e = err("[\"ok\",\n\"é€\u{1}\"]");
        assert_eq!(e.message, "control character U+0001 in string");
        assert_eq!((e.line, e.column), (2, 4));
        // end of input on a later line
        let e = err("[\n1,\n2");
        assert_eq!((e.line, e.column, e.offset), (3, 2, 6));
        assert_eq!(e.to_string(), "unexpected end of input at line 3 column 2");
    }

    #[test]
    fn byte_order_mark_is_skipped() {
        assert_eq!(ok("\u{feff}[1]"), Value::Array(vec![num("1")]));
        assert_eq!(ok("\u{feff} {}"), obj(&[]));
        // only at the very start; the column still counts the BOM as a character
        assert_eq!(fails(" \u{feff}[1]"), ("expected a value".into(), 1, 2));
        assert_eq!(fails("\u{feff}[1,]"), ("expected a value".into(), 1, 5));
        assert_eq!(fails("\u{feff}"), ("unexpected end of input".into(), 1, 2));
    }

    #[test]
    fn duplicate_keys_last_value_first_position() {
        assert_eq!(
            ok(r#"{"a":1,"b":2,"a":3}"#),
            obj(&[("a", num("3")), ("b", num("2"))])
        );
        assert_eq!(
            ok(r#"{"a":1,"a":{"x":1},"a":null}"#),
            obj(&[("a", Value::Null)])
        );
        // keys equal after unescaping are the same key
        assert_eq!(ok(r#"{"é":1,"\u00e9":2}"#), obj(&[("é", num("2"))]));
        // past the linear threshold the hash index takes over; repeats on both sides of it
        let mut text = String::from("{");
        for i in 0..100 {
            text.push_str(&format!("\"k{i}\":{i},"));
        }
        text.push_str("\"k0\":\"a\",\"k50\":\"b\",\"k99\":\"c\",\"k5\":\"d\",\"new\":true}");
        let v = ok(&text);
        let m = v.as_object().unwrap();
        assert_eq!(m.len(), 101);
        assert_eq!(m.position("k0"), Some(0));
        assert_eq!(m.get("k0"), Some(&Value::from("a")));
        assert_eq!(m.position("k50"), Some(50));
        assert_eq!(m.get("k50"), Some(&Value::from("b")));
        assert_eq!(m.get("k99"), Some(&Value::from("c")));
        assert_eq!(m.get("k5"), Some(&Value::from("d")));
        assert_eq!(m.get("k6"), Some(&num("6")));
        assert_eq!(m.position("new"), Some(100));
        // exactly at the threshold
        for n in [LINEAR_KEYS - 1, LINEAR_KEYS, LINEAR_KEYS + 1] {
            let mut text = String::from("{");
            for i in 0..n {
                text.push_str(&format!("\"k{i}\":{i},"));
            }
            text.push_str("\"k0\":true,\"kx\":0,\"kx\":1}");
            let v = ok(&text);
            let m = v.as_object().unwrap();
            assert_eq!(m.len(), n + 1, "{n}");
            assert_eq!(m.position("k0"), Some(0));
            assert_eq!(m.get("k0"), Some(&Value::Bool(true)));
            assert_eq!(m.get("kx"), Some(&num("1")));
        }
    }

    #[test]
    fn regression_duplicate_keys_were_kept_silently() {
        let text = "{\"a\": 1,\n \"b\": {\"x\": 1, \"x\": 2},\n \"a\": 3, \"\\u0061\": 4}";
        let p = parse_noting_duplicates(text).unwrap();
        assert_eq!(p.value, parse(text).unwrap(), "the same value as parse");
        let found: Vec<(&str, usize, usize)> = p
            .duplicates
            .iter()
            .map(|d| (d.key.as_str(), d.line, d.column))
            .collect();
        assert_eq!(found, [("x", 2, 16), ("a", 3, 2), ("a", 3, 10)]);
        assert_eq!(&text[p.duplicates[1].offset..][..3], "\"a\"");
        assert_eq!(
            p.duplicates[0].to_string(),
            "duplicate key \"x\" at line 2 column 16 (its last value is kept)"
        );
        let e = p.duplicates[0].to_error();
        assert_eq!(e.kind, JsonErrorKind::DuplicateKey);
        assert_eq!(
            e.to_string(),
            "duplicate key \"x\" in an object at line 2 column 16"
        );
        // none: nothing noted; the same key in two objects is no repeat
        let p = parse_noting_duplicates(r#"[{"a":1},{"a":2}]"#).unwrap();
        assert!(p.duplicates.is_empty());
        // past the linear threshold too, and a long key is cut in messages
        let mut text = String::from("{");
        for i in 0..300 {
            text.push_str(&format!("\"k{i}\":{i},"));
        }
        let long = "y".repeat(100);
        text.push_str(&format!("\"k7\":0,\"{long}\":1,\"{long}\":2}}"));
        let p = parse_noting_duplicates(&text).unwrap();
        assert_eq!(p.duplicates.len(), 2);
        assert_eq!(p.duplicates[0].key, "k7");
        assert_eq!(p.duplicates[1].key, long);
        assert!(
            p.duplicates[1]
                .to_string()
                .starts_with(&format!("duplicate key \"{}…\" at", "y".repeat(60))),
            "{}",
            p.duplicates[1]
        );
    }

    #[test]
    fn many_keys_stay_fast() {
        // 100k distinct keys, then every key again: must be linear, not quadratic
        let n = 100_000;
        let mut text = String::with_capacity(n * 24);
        text.push('{');
        for pass in 0..2 {
            for i in 0..n {
                text.push_str(&format!("\"key{i}\":{pass},"));
            }
        }
        text.push_str("\"last\":0}");
        let start = std::time::Instant::now();
        let v = ok(&text);
        let elapsed = start.elapsed();
        let m = v.as_object().unwrap();
        assert_eq!(m.len(), n + 1);
        assert_eq!(m.position("key77"), Some(77));
        assert_eq!(m.get("key77"), Some(&num("1")));
        // quadratic would be ~10^10 comparisons; generous bound for debug builds
        assert!(elapsed.as_secs() < 10, "{elapsed:?}");
    }

    #[test]
    fn nesting_limit() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(parse(&deep(MAX_DEPTH)).is_ok());
        let e = err(&deep(MAX_DEPTH + 1));
        assert_eq!(e.message, "nesting deeper than 256 levels");
        assert_eq!((e.kind, e.line, e.column), (JsonErrorKind::TooDeep, 1, 257));
        // objects count too, mixed with arrays
        let mixed = format!("{}1{}", "{\"a\":[".repeat(128), "]}".repeat(128));
        assert!(parse(&mixed).is_ok());
        let mixed = format!("{}{{}}{}", "{\"a\":[".repeat(128), "]}".repeat(128));
        assert_eq!(err(&mixed).kind, JsonErrorKind::TooDeep);
        // siblings do not add up
        let wide = format!("[{}]", vec![deep(MAX_DEPTH - 1); 50].join(","));
        assert!(parse(&wide).is_ok());
        // custom limits
        assert!(parse_with_max_depth("1", 0).is_ok());
        assert_eq!(
            parse_with_max_depth("[]", 0).unwrap_err().message,
            "nesting deeper than 0 levels"
        );
        assert!(parse_with_max_depth(&deep(3), 3).is_ok());
        assert!(parse_with_max_depth(&deep(4), 3).is_err());
    }

    #[test]
    fn hostile_depth_is_an_error_not_a_crash() {
        for open in ["[", "{\"a\":", "[{\"\":"] {
            let text = open.repeat(100_000);
            assert_eq!(err(&text).kind, JsonErrorKind::TooDeep, "{open}");
        }
        // run on a thread with a small stack: parsing and dropping a value at the limit
        // must fit comfortably (the CLI main thread has 8 MB)
        let handle = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(|| {
                let text = format!("{}0{}", "[{\"k\":".repeat(128), "}]".repeat(128));
                let v = parse(&text).unwrap();
                drop(v);
                let v = parse(&format!(
                    "{}{}",
                    "[".repeat(MAX_DEPTH),
                    "]".repeat(MAX_DEPTH)
                ));
                drop(v);
            })
            .unwrap();
        handle.join().unwrap();
    }

    #[test]
    fn error_is_displayed_with_position() {
        let e = err("{\"a\" 1}");
        assert_eq!(
            e.to_string(),
            "expected ':' after object key at line 1 column 6"
        );
    }
}
