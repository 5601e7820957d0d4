//! Fuzz `pare::jsonl::shape_jsonl` (a block of JSONL bytes, as the Python door's
//! `Policy.shape_jsonl` hands it over): on any bytes it must not panic, and it must give what
//! shaping each line alone gives — the lines' texts, each with a newline, in order, or the
//! first bad line's error with that line's number and the block's offset.
//!
//! Why: the block is cut into lines by bytes (a `\r` before `\n` dropped, blank lines
//! skipped, UTF-8 checked per line), a second way to the lines `pare compact --jsonl` reads;
//! any difference would be a line shaped that the CLI shapes otherwise.
//!
//! ```text
//! scripts/fuzz jsonl
//! ```
use std::sync::LazyLock;

use pare::encode::Format;
use pare::jsonl::{JsonlError, shape_jsonl};
use pare::policy::Policy;
use pare::shape::{ShapeOptions, shape_json_line};

static POLICY: LazyLock<Policy> = LazyLock::new(|| {
    Policy::parse("[[ops]]\nop = \"drop\"\npaths = [\"$..a\"]\n[[ops]]\nop = \"prune\"\n")
        .expect("the policy parses")
});

/// The check on one input: returns, or panics on a fault.
pub fn check(data: &[u8]) {
    let policy = &*POLICY;
    let opts = ShapeOptions::new(policy);
    for strict in [false, true] {
        let mut out = Vec::new();
        let got = shape_jsonl(data, policy, &opts, strict, &mut out);
        // The same, line by line.
        let mut want = Vec::new();
        let mut at = 0;
        for (i, raw) in data.split(|&b| b == b'\n').enumerate() {
            let start = at;
            at += raw.len() + 1;
            let line = raw.strip_suffix(b"\r").unwrap_or(raw);
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let text = match std::str::from_utf8(line) {
                Ok(t) => t,
                Err(e) => {
                    match &got {
                        Err(JsonlError::NotUtf8 { line, offset }) => {
                            assert_eq!((*line, *offset), (i + 1, start + e.valid_up_to()));
                        }
                        other => panic!("line {}: not UTF-8, but {other:?}", i + 1),
                    }
                    assert_eq!(out, want, "the lines before the bad one");
                    return;
                }
            };
            match shape_json_line(text, policy, &opts, Format::Json, strict) {
                Ok(shaped) => {
                    want.extend_from_slice(shaped.text.as_bytes());
                    want.push(b'\n');
                }
                Err(e) => {
                    match &got {
                        Err(JsonlError::Json(g)) => {
                            assert_eq!(
                                (g.line, g.column, g.offset),
                                (i + 1, e.column, start + e.offset)
                            );
                            assert_eq!(g.message, e.message);
                        }
                        other => panic!("line {}: {e}, but {other:?}", i + 1),
                    }
                    assert_eq!(out, want, "the lines before the bad one");
                    return;
                }
            }
        }
        assert!(got.is_ok(), "{got:?}");
        assert_eq!(out, want);
    }
}
