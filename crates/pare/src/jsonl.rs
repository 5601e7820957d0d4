//! A block of JSONL shaped in one call: bytes in, bytes out, each line as `pare compact
//! --jsonl` writes it ([`crate::shape::shape_json_line`]).
//!
//! Why: a Dask or Ray partition handed over as a list of Python strings costs a string object
//! per line each way, and the copies in and out cost more than the shaping (a 120 MiB corpus
//! took 2–3× the CLI's time per core). A block of bytes crosses once each way, and is read
//! where it lies.
//!
//! ```
//! use pare::{Policy, shape::ShapeOptions};
//! let policy = Policy::parse("[[ops]]\nop = \"drop\"\npaths = [\"$.debug\"]\n").unwrap();
//! let opts = ShapeOptions::new(&policy);
//! let mut out = Vec::new();
//! let block = b"{\"id\":1,\"debug\":\"x\"}\r\n\n{\"id\": 2}\n";
//! let done = pare::jsonl::shape_jsonl(block, &policy, &opts, false, &mut out).unwrap();
//! assert_eq!(out, b"{\"id\":1}\n{\"id\":2}\n");
//! assert_eq!(done.lines, 2);
//! ```

use crate::encode::Format;
use crate::json::{DuplicateKey, JsonError};
use crate::policy::Policy;
use crate::shape::{ShapeOptions, shape_json_line};

/// What a block's shaping noted.
#[derive(Debug, Default)]
pub struct JsonlBlock {
    /// Lines shaped (blank ones are skipped).
    pub lines: usize,
    /// The keys a line repeats within an object (each keeps its last value), by the line's
    /// 1-based number in the block.
    pub duplicates: Vec<(usize, DuplicateKey)>,
}

/// A line of the block that could not be shaped.
#[derive(Debug, thiserror::Error)]
pub enum JsonlError {
    /// Bytes that are not UTF-8.
    #[error("line {line}: not UTF-8 (at byte {offset} of the block)")]
    NotUtf8 {
        /// The line's 1-based number in the block.
        line: usize,
        /// The first bad byte's offset in the block.
        offset: usize,
    },
    /// Not JSON, or (strict) a key repeated within an object. The error's `line` is the
    /// line's number in the block and its `offset` an offset in the block; its column is
    /// within the line.
    #[error(transparent)]
    Json(JsonError),
}

/// Each line of `block` (lines end at `\n`; a `\r` before it is dropped, blank lines are
/// skipped, the last may lack its `\n`) shaped as [`shape_json_line`] shapes it, in JSON, and
/// written to `out` with a `\n` after it. On an error `out` holds the lines before the bad one.
/// One core: the callers this is for run one partition per core.
pub fn shape_jsonl(
    block: &[u8],
    policy: &Policy,
    opts: &ShapeOptions,
    strict: bool,
    out: &mut Vec<u8>,
) -> Result<JsonlBlock, JsonlError> {
    let mut done = JsonlBlock::default();
    // Shaped text is mostly shorter than its input: one reservation, rarely a second.
    out.reserve(block.len() / 2);
    let mut start = 0;
    let mut number = 0;
    while start < block.len() {
        number += 1;
        let end = memchr::memchr(b'\n', &block[start..]).map_or(block.len(), |i| start + i);
        let mut line = &block[start..end];
        if let [rest @ .., b'\r'] = line {
            line = rest;
        }
        let at = start;
        start = end + 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let text = std::str::from_utf8(line).map_err(|e| JsonlError::NotUtf8 {
            line: number,
            offset: at + e.valid_up_to(),
        })?;
        let shaped =
            shape_json_line(text, policy, opts, Format::Json, strict).map_err(|mut e| {
                e.line = number;
                e.offset += at;
                JsonlError::Json(e)
            })?;
        out.extend_from_slice(shaped.text.as_bytes());
        out.push(b'\n');
        done.lines += 1;
        done.duplicates
            .extend(shaped.duplicates.into_iter().map(|d| (number, d)));
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(block: &[u8], strict: bool) -> (Vec<u8>, Result<JsonlBlock, JsonlError>) {
        let policy = Policy::parse("[[ops]]\nop = \"drop\"\npaths = [\"$.debug\"]\n").unwrap();
        let opts = ShapeOptions::new(&policy);
        let mut out = Vec::new();
        let r = shape_jsonl(block, &policy, &opts, strict, &mut out);
        (out, r)
    }

    /// Each line is what `shape_json_line` gives for it, whatever the line ends.
    #[test]
    fn lines_are_shaped_one_by_one_as_the_cli_writes_them() {
        let (out, r) = run(b"{\"a\": 1, \"debug\": 2}\r\n  \n[1, 2]\n\"s\"", false);
        assert_eq!(out, b"{\"a\":1}\n[1,2]\n\"s\"\n");
        assert_eq!(r.unwrap().lines, 3);
        let (out, r) = run(b"", false);
        assert!(out.is_empty() && r.unwrap().lines == 0);
    }

    /// A bad line is named by its number in the block, and its offset is the block's.
    #[test]
    fn a_bad_line_is_named_by_its_number_and_offset_in_the_block() {
        let (out, r) = run(b"{}\n\n{\"a\":}\n{}\n", false);
        assert_eq!(out, b"{}\n");
        let Err(JsonlError::Json(e)) = r else {
            panic!("{r:?}")
        };
        assert_eq!((e.line, e.column, e.offset), (3, 6, 9));
        assert!(e.to_string().ends_with("at line 3 column 6"), "{e}");
        let (_, r) = run(b"{}\n{\"a\":\"\xff\"}\n", false);
        assert!(
            matches!(r, Err(JsonlError::NotUtf8 { line: 2, offset: 9 })),
            "{r:?}"
        );
    }

    /// Repeated keys are noted by line (kept last), or refused with `strict`.
    #[test]
    fn repeated_keys_are_noted_by_line_or_refused_when_strict() {
        let (out, r) = run(b"{}\n{\"a\":1,\"a\":2}\n", false);
        assert_eq!(out, b"{}\n{\"a\":2}\n");
        let noted = r.unwrap().duplicates;
        assert_eq!(noted.len(), 1);
        assert_eq!(noted[0].0, 2);
        let (_, r) = run(b"{}\n{\"a\":1,\"a\":2}\n", true);
        assert!(matches!(r, Err(JsonlError::Json(e)) if e.line == 2));
    }
}
