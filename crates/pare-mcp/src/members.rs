//! The members of a JSON object as spans of its bytes, found by a strict walk that allocates
//! nothing but the keys.
//!
//! Why: a tool result is mostly what pare never changes (`structuredContent` often repeats
//! the whole result as an object, the JSON-RPC envelope), and building a tree of it only to
//! write it back cost more than shaping the text. The proxy decodes the members it acts on
//! and copies the rest byte for byte ([`crate::proxy`]). The walk accepts what
//! `serde_json` accepts: RFC 8259 JSON, nested at most 128 deep, valid UTF-8, no lone
//! surrogate escape (a caller checks UTF-8 once for the whole line); anything else is
//! `None`, and the caller reads the message the general way.

use std::ops::Range;

use pare::json::scan::{self, skip_ws as ws, string_end};
use serde_json::Value as Json;

/// `serde_json`'s nesting limit: deeper input is refused, as it refuses it.
const MAX_DEPTH: usize = 128;

/// How a walk reads one member's value.
pub enum Read {
    /// Checked and stepped over.
    Skip,
    /// Decoded (the one pass over it both checks and decodes it).
    Decode,
    /// An object whose own members are walked.
    Members,
}

/// One member of an object: its key (decoded), where its key and value are, and its value
/// decoded or its members, as the walk was told.
#[derive(Debug, PartialEq)]
pub struct Member {
    pub key: String,
    /// The key as written, quotes included.
    pub key_span: Range<usize>,
    pub value: Range<usize>,
    pub decoded: Option<Json>,
    pub members: Option<Vec<Member>>,
}

/// The members of the top-level object that is all of `line` (whitespace around allowed),
/// in order, each read as `how(depth, key)` says (the line's members are at depth 0);
/// `None` when the line is not a strict JSON object.
pub fn of_line(line: &[u8], how: &dyn Fn(usize, &str) -> Read) -> Option<Vec<Member>> {
    std::str::from_utf8(line).ok()?;
    let start = ws(line, 0);
    let (members, end) = of_object(line, start, 0, how)?;
    (ws(line, end) == line.len()).then_some(members)
}

/// The members of the object at `i` (`depth` objects deep) and the end of the object.
fn of_object(
    b: &[u8],
    mut i: usize,
    depth: usize,
    how: &dyn Fn(usize, &str) -> Read,
) -> Option<(Vec<Member>, usize)> {
    if b.get(i) != Some(&b'{') {
        return None;
    }
    let mut members = Vec::new();
    i = ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        return Some((members, i + 1));
    }
    loop {
        let key_start = i;
        let key_end = string_end(b, i)?;
        let raw = &b[key_start..key_end];
        let key = if raw.contains(&b'\\') {
            serde_json::from_slice::<String>(raw).ok()?
        } else {
            // Checked as UTF-8 with the whole line.
            std::str::from_utf8(&raw[1..raw.len() - 1]).ok()?.to_owned()
        };
        i = ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        let start = ws(b, i + 1);
        let (mut decoded, mut nested) = (None, None);
        let end = match how(depth, &key) {
            // Containers nested at most MAX_DEPTH deep in all.
            Read::Skip => scan::value_end(b, start, MAX_DEPTH.saturating_sub(depth))?,
            Read::Decode => {
                let mut values = serde_json::Deserializer::from_slice(&b[start..]).into_iter();
                decoded = Some(values.next()?.ok()?);
                start + values.byte_offset()
            }
            Read::Members => {
                let (inner, end) = of_object(b, start, depth + 1, how)?;
                nested = Some(inner);
                end
            }
        };
        members.push(Member {
            key,
            key_span: key_start..key_end,
            value: start..end,
            decoded,
            members: nested,
        });
        i = ws(b, end);
        match b.get(i) {
            Some(b',') => i = ws(b, i + 1),
            Some(b'}') => return Some((members, i + 1)),
            _ => return None,
        }
    }
}

/// Whether the keys are all different (an object with a repeated key is read the general
/// way, which keeps the last value).
pub fn distinct(members: &[Member]) -> bool {
    members
        .iter()
        .enumerate()
        .all(|(n, m)| members[..n].iter().all(|o| o.key != m.key))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where a byte-by-byte reader ends the string at 0 (its escapes have no quote in them).
    fn naive_end(s: &[u8]) -> Option<usize> {
        let mut j = 1;
        loop {
            match *s.get(j)? {
                b'"' => return Some(j + 1),
                b'\\' => j += 2,
                c if c < 0x20 => return None,
                _ => j += 1,
            }
        }
    }

    /// A plain run broken at any offset by the closing quote, an escape, a control character
    /// or a non-ASCII character is read as a byte-by-byte reader reads it.
    #[test]
    fn strings_end_where_a_byte_by_byte_reader_ends_them() {
        for at in 0..20 {
            for special in [&b"\""[..], b"\\n", b"\\u00e9", b"\x01", "é".as_bytes()] {
                let mut s = b"\"".to_vec();
                s.extend(std::iter::repeat_n(b'a', at));
                s.extend_from_slice(special);
                s.extend_from_slice(b"bcdefghijklmnop\" tail");
                assert_eq!(string_end(&s, 0), naive_end(&s), "{at} {special:?}");
            }
        }
    }
}
