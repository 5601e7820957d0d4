//! JSON text in and out of [`Value`](crate::value::Value).
//!
//! Why our own parser and writer instead of `serde_json`: pare must hand back exactly what
//! it was given (numbers keep their lexeme, objects keep their order, duplicate keys resolve
//! the way `JSON.parse` does), its output must match `JSON.stringify` byte for byte, and the
//! parser sits on the hot path of every run, so it is a small hand-written byte-level
//! recursive-descent parser with no intermediate tokens.
//!
//! - [`parse`] reads exactly one JSON text (RFC 8259). A leading UTF-8 byte order mark is
//!   skipped (as `jq` does; `JSON.parse` would reject it), since files saved by some editors
//!   carry one and rejecting them helps no one. Nesting is limited to [`MAX_DEPTH`] levels
//!   so hostile input cannot overflow the stack. Errors carry a 1-based line and column.
//! - [`to_compact`] / [`to_pretty`] produce what `JSON.stringify(v)` /
//!   `JSON.stringify(v, null, 2)` would, except that numbers are written as their lexeme.
//!
//! ```
//! use pare::json::{parse, to_compact, to_pretty};
//! let v = parse(r#" {"a": [1.50, "x\u00e9"], "a": true} "#).unwrap();
//! assert_eq!(to_compact(&v), r#"{"a":true}"#);
//! assert_eq!(to_pretty(&parse("[1,{}]").unwrap()), "[\n  1,\n  {}\n]");
//! let err = parse("[1,\n 2,]").unwrap_err();
//! assert_eq!(err.to_string(), "expected a value at line 2 column 4");
//! ```

mod fork;
pub(crate) mod lists;
pub(crate) mod omit;
mod parse;
pub mod scan;
mod stream;
mod write;

pub use parse::{
    DuplicateKey, JsonError, JsonErrorKind, MAX_DEPTH, Parsed, parse, parse_noting_duplicates,
    parse_with_max_depth,
};
pub(crate) use parse::{KeyIndex, parse_leading, parse_omitting};
pub(crate) use stream::{Streamed, compact_omitting};
pub(crate) use write::push_escape;
pub use write::{to_compact, to_pretty, write_compact, write_pretty, write_string};

/// Index of the first byte at or after `i` that is `"`, `\` or a control character
/// (< 0x20), or `bytes.len()` if there is none. These are the only bytes a JSON string
/// cannot hold raw, so the parser, the writer and `pare mcp`'s message walker copy or skip
/// the runs in between wholesale.
/// Eight bytes at a time with the usual SWAR zero-byte tests: a borrow only propagates
/// upward from a real match, so the lowest flagged byte is always a real one.
#[inline]
pub fn find_special(bytes: &[u8], mut i: usize) -> usize {
    while let Some(chunk) = bytes.get(i..).and_then(<[u8]>::first_chunk::<8>) {
        let hits = special_bytes(u64::from_le_bytes(*chunk));
        if hits != 0 {
            return i + (hits.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&b) = bytes.get(i) {
        if is_special(b) {
            return i;
        }
        i += 1;
    }
    bytes.len()
}

/// Whether byte `b` is one a JSON string cannot hold raw (what [`find_special`] stops at).
#[inline]
pub(crate) fn is_special(b: u8) -> bool {
    SPECIAL[usize::from(b)]
}

/// `SPECIAL[b]`: is byte `b` one that [`find_special`] stops at.
static SPECIAL: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = true;
        b += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// The high bit of each byte of `x` that is `"`, `\` or below 0x20 (exact for the lowest
/// such byte; bytes above it may be flagged spuriously).
#[inline]
fn special_bytes(x: u64) -> u64 {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let quote = x ^ (LO * u64::from(b'"'));
    let backslash = x ^ (LO * u64::from(b'\\'));
    let hits = (quote.wrapping_sub(LO) & !quote)
        | (backslash.wrapping_sub(LO) & !backslash)
        | (x.wrapping_sub(LO * 0x20) & !x);
    hits & HI
}
