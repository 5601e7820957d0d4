//! TOON v4 decoder: TOON text → [`Value`].
//!
//! A port of the reference decoder (`@toon-format/toon` 4.4.0): the same line scanner
//! (indentation, comments, blank lines, CRLF, BOM), the same header grammar (`key[N]:`,
//! `key[N|]{a,b{c,d}}:`, keyed objects `key[N:]{fields}:` with rows `entry: v1,v2`), the
//! same strict-mode checks and the same values. The reference turns lines into an event
//! stream and folds the events into a value; here one recursive descent over the lines
//! builds the value directly, on `&str` slices of the input, so a multi-megabyte document
//! costs one pass and the allocations of the value itself.
//!
//! Where it deliberately differs from the reference:
//! - numbers keep their lexeme (`1.5000` stays `1.5000`, a 30-digit integer stays whole);
//!   `-0` and anything else that is a negative zero in JS becomes `0`, and a literal that
//!   overflows to `Infinity` in JS (`1e999`) is a string, as in the reference;
//! - object keys keep document order (JS lists integer-like keys such as `"42"` first);
//! - in non-strict mode a line whose bracket segment is not a valid header (`key[]: 1`,
//!   `foo[2]extra: x`) is read as a `key: value` line with a literal key, as the spec's
//!   fixtures require; the reference throws there. Strict mode rejects them in both;
//! - containers nested deeper than [`MAX_DEPTH`] are an error instead of a deep stack.
//!
//! It also reads pare's own TOON dialect, the `auto` format's
//! ([`encode_dialect`](crate::encode::auto::encode_dialect)), exactly: with
//! [`Dialect::Auto`] (the default) a document whose first line is the dialect's legend
//! comment (`# pare auto: …`, [`crate::encode::auto::LEGEND_PREFIX`]) is
//! read as the dialect, any other as standard TOON. The dialect adds, on top of TOON:
//! - numbers keep their lexeme exactly, `-0` and `1e999` included;
//! - a member value (`key: …`) or list item (`- …`) starting with `[` or `{` is compact
//!   JSON, unless the list item is an array header (`- [2]: a,b`; a keyless header in a
//!   list item may have fields, and its rows or items sit one level below the hyphen, as
//!   in TOON, or two, where the encoder writes them);
//! - a table header's field may be a constant, `name=value` (a primitive token or JSON):
//!   it has no cell, and every row gets that member at that position;
//! - a table cell may be JSON (`[…]`, `{…}`; delimiters inside it don't split), and an
//!   empty cell is a member the row lacks (the empty string is written `""`);
//! - a row `- {…}` of a table is that whole item as JSON;
//! - a table has exactly its declared rows: every line one level below the header is a
//!   row (JSON cells may hold `:`), no `key: value` heuristic;
//! - a top-level member's table may have its rows at the header's own indentation (flat
//!   rows): exactly as many lines as the header declares are its rows.
//!
//! ```
//! use pare::encode::toon::{decode, DecodeOptions};
//! let text = "# pare auto: an empty cell is an absent field; name=value in a header is that \
//!             value on every row; […] and {…} values are JSON\n\
//!             rows[3]{id,kind=a,x}:\n  1,[2,3]\n  2,\n  3,-0";
//! let v = decode(text, &DecodeOptions::default()).unwrap();
//! assert_eq!(
//!     pare::json::to_compact(&v),
//!     r#"{"rows":[{"id":1,"kind":"a","x":[2,3]},{"id":2,"kind":"a"},{"id":3,"kind":"a","x":-0}]}"#
//! );
//! ```
//!
//! ```
//! use pare::encode::toon::{decode, DecodeOptions};
//! let text = "users[2]{id,name}:\n  1,Ada\n  2,Bob\ntags[2|]: a|b";
//! let v = decode(text, &DecodeOptions::default()).unwrap();
//! assert_eq!(
//!     pare::json::to_compact(&v),
//!     r#"{"users":[{"id":1,"name":"Ada"},{"id":2,"name":"Bob"}],"tags":["a","b"]}"#
//! );
//! let err = decode("items[3]: a,b", &DecodeOptions::default()).unwrap_err();
//! assert_eq!(err.to_string(), "expected 3 inline array values, found 2 at line 1 column 1");
//! ```

use std::collections::HashSet;
use std::collections::hash_map::Entry;
use std::hash::{BuildHasher, RandomState};

use crate::encode::auto::LEGEND_PREFIX;
use crate::json;
use crate::json::KeyIndex;
use crate::value::{Map, Number, Value};

mod decoder;
mod header;
mod reader;
mod rows;
mod scalars;
mod scan;

use decoder::*;
use header::*;
use reader::*;
use rows::*;
use scalars::*;
use scan::*;

/// How deep objects and arrays may nest (and field groups inside a header). Deep enough
/// for any real document, shallow enough that decoding and dropping cannot exhaust a stack.
pub const MAX_DEPTH: usize = 256;

/// Objects up to this many members find a repeated key by scanning; past it a hash index
/// takes over, so a keyed object with 100k entries stays linear.
const LINEAR_KEYS: usize = 16;

/// How to read a TOON document.
#[derive(Debug, Clone)]
pub struct DecodeOptions {
    /// Spaces per indentation level (the reference's `indentSize`); at least 1.
    pub indent: usize,
    /// Enforce declared counts, exact indentation, no tabs in indentation, no blank lines
    /// inside arrays and unique keys (spec §14). Off, the decoder is lenient as the
    /// reference is: last write wins, counts are not checked.
    pub strict: bool,
    /// Whether to read pare's `auto` dialect: detected by its legend line (the default),
    /// never, or always.
    pub dialect: Dialect,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            indent: 2,
            strict: true,
            dialect: Dialect::Auto,
        }
    }
}

/// When to read a document as pare's `auto` dialect rather than standard TOON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialect {
    /// The dialect when the first line is its legend ([`is_dialect`]), else standard TOON.
    #[default]
    Auto,
    /// Always standard TOON.
    Off,
    /// Always the dialect, legend or not.
    On,
}

/// Whether `text` is a document in pare's `auto` dialect: its first line (after a byte
/// order mark) starts with the legend, `# pare auto:`.
///
/// ```
/// use pare::encode::toon::decode::is_dialect;
/// assert!(is_dialect("# pare auto: an empty cell is an absent field\nrows[2]{a,b}:\n  1,\n  2,3"));
/// assert!(!is_dialect("a: 1\n# pare auto: too late"));
/// ```
pub fn is_dialect(text: &str) -> bool {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    text.starts_with(LEGEND_PREFIX)
}

/// Why a TOON text was rejected, and where.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
#[non_exhaustive]
#[error("{message} at line {line} column {column}")]
pub struct ToonError {
    /// 1-based line (lines end at `\n`).
    pub line: usize,
    /// 1-based column in characters: of the offending token where known, else 1.
    pub column: usize,
    /// What was expected or what is wrong, e.g. `expected 3 tabular rows, found 2`.
    pub message: String,
}

/// Decode one TOON document. An empty document (or one of only comments and blank lines)
/// is `{}`; a single line that is neither a key nor a header is a root primitive.
pub fn decode(text: &str, opts: &DecodeOptions) -> Result<Value, ToonError> {
    if opts.indent == 0 {
        return Err(ToonError {
            line: 1,
            column: 1,
            message: "indent must be at least 1 space".into(),
        });
    }
    let dialect = match opts.dialect {
        Dialect::Auto => is_dialect(text),
        Dialect::Off => false,
        Dialect::On => true,
    };
    let mut decoder = Decoder {
        dialect,
        reader: Reader {
            rest: Some(text),
            line_no: 0,
            indent: opts.indent,
            strict: opts.strict,
            peeked: None,
            last: None,
            blanks: Vec::new(),
        },
        strict: opts.strict,
        nesting: 0,
        hasher: RandomState::new(),
        cells: Vec::new(),
    };
    decoder.document().map_err(|fail| fail.into_error(text))
}

// ---------------------------------------------------------------------------------------
// Errors

/// An error on its way out: the message and the address of the offending byte. Every
/// `&str` the decoder handles is a slice of the input, so the address is enough to find
/// line and column once, at the top, when decoding has already failed.
#[derive(Debug)]
struct Fail {
    addr: usize,
    message: String,
}

/// Fail at the first byte of `at` (a slice of the input).
fn fail_at(at: &str, message: impl Into<String>) -> Fail {
    Fail {
        addr: at.as_ptr() as usize,
        message: message.into(),
    }
}

/// Fail just past the end of `at`.
fn fail_after(at: &str, message: impl Into<String>) -> Fail {
    Fail {
        addr: at.as_ptr() as usize + at.len(),
        message: message.into(),
    }
}

impl Fail {
    fn into_error(self, text: &str) -> ToonError {
        let mut offset = self
            .addr
            .wrapping_sub(text.as_ptr() as usize)
            .min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &text[..offset];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let line = 1 + before.bytes().filter(|&b| b == b'\n').count();
        let in_line = &before[line_start..];
        let in_line = if line == 1 {
            in_line.strip_prefix('\u{feff}').unwrap_or(in_line)
        } else {
            in_line
        };
        ToonError {
            line,
            column: in_line.chars().count() + 1,
            message: self.message,
        }
    }
}
