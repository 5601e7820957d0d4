//! Counting a text by chunks whose counts are remembered.
//!
//! Why: a long-lived door (the MCP proxy, the REST proxy, a binding in a worker) counts
//! texts that mostly repeat what it counted before — a tool called again returns much the
//! same lines (a graph read again, a list one item longer), and `auto` counts the same rows
//! in several candidates. A chunk seen before costs a hash and a compare instead of its
//! pre-tokenizing and BPE: on the memory server's `read_graph`, called again, the proxy's
//! counts take a fraction of their time. A chunk never seen costs its hash, two locks and
//! a copy on top of its count: a megabyte of JSON never seen counts in about 15% more time
//! than counted whole (9.7 against 8.4 ms in process; 20–24% before a text's chunks shared
//! one walk over its pieces).
//!
//! Why it is exact: a text is split only where no pre-tokenizer piece runs across, so one
//! ends there ([`is_split`]):
//! - at a *line start*: just after a `\n`, where what follows is spaces and then an ASCII
//!   character that is not whitespace (and, with no spaces, not `/`). In both encodings'
//!   patterns the only pieces that hold a `\n` are a punctuation run with the line breaks
//!   after it (o200k also takes `/`) and a whitespace run up to its last line break, and
//!   neither goes on past such a point;
//! - between an ASCII letter or digit and ASCII punctuation other than `'`: letters and
//!   digits make pieces of their own kind (the letters' may end in a contraction, `'s`),
//!   and punctuation is never inside one.
//!
//! The patterns never look behind, so the pieces after the point are those of the rest
//! counted alone. A text's count is then the sum of its chunks' counts (the tests check it
//! against counting whole on random texts, splitting at every such point).
//!
//! ```text
//! "{\n  \"a\": 1,\n  \"b\": 2\n}"  splits as  "{\n" | "  \"a\": 1,\n" | "  \"b\": 2\n" | "}"
//! ```

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::Mutex;

use super::BuildFxHasher;

/// A chunk ends at the first split point at least this many bytes after its start.
const CHUNK_BYTES: usize = 256;
/// Chunks longer than this (a text with few split points, such as minified JSON) are
/// counted but not remembered.
const REMEMBERED_CHUNK_BYTES: usize = 16 << 10;
/// Each shard of the memo starts over once the chunks it holds add up to this many bytes
/// (so a memo holds at most [`SHARDS`] times as much).
const SHARD_BYTES: usize = 512 << 10;
/// The memo is this many maps, each behind its own lock, a chunk's by its hash: threads
/// counting at once (`pare count` of many files, a busy `pare http`) rarely wait for each
/// other, though each chunk takes a lock.
const SHARDS: usize = 16;
/// Texts shorter than this are counted whole: hashing would cost about what it saves.
const FROM_BYTES: usize = 64;
/// Texts longer than this are counted whole: a multi-megabyte text rarely comes again,
/// and remembering its chunks would only churn the memo.
const UP_TO_BYTES: usize = 4 << 20;

/// Counts of chunks seen before ([`SHARDS`] maps).
#[derive(Default)]
pub(super) struct ChunkMemo {
    shards: [Mutex<Shard>; SHARDS],
}

/// Counts of chunks by their bytes' hash (a chunk whose bytes differ from the entry's is a
/// miss, and takes the entry over).
#[derive(Default)]
struct Shard {
    counts: HashMap<u64, (Box<[u8]>, u32), BuildFxHasher>,
    bytes: usize,
}

/// Whether `text` is counted by chunks.
pub(super) fn worth_it(text: &str) -> bool {
    (FROM_BYTES..=UP_TO_BYTES).contains(&text.len())
}

impl ChunkMemo {
    /// The shard of the chunk whose hash is `key`, locked.
    fn shard(&self, key: u64) -> std::sync::MutexGuard<'_, Shard> {
        self.shards[(key >> 60) as usize % SHARDS]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The count of `text`: the sum of its chunks' counts, each remembered or found by
    /// `count` (which counts a text whole).
    pub(super) fn count(&self, text: &str, mut count: impl FnMut(&str) -> usize) -> usize {
        let mut total = 0;
        for chunk in chunks(text, CHUNK_BYTES) {
            // A chunk too long to remember is never looked up either.
            if chunk.len() > REMEMBERED_CHUNK_BYTES {
                total += count(chunk);
                continue;
            }
            let key = key(chunk);
            let known = self.shard(key).get(key, chunk);
            total += match known {
                Some(n) => n,
                None => {
                    let n = count(chunk);
                    self.shard(key).insert(key, chunk, n);
                    n
                }
            };
        }
        total
    }

    /// The count of `text` if every chunk of it is remembered; `None` at the first that
    /// is not.
    pub(super) fn remembered(&self, text: &str) -> Option<usize> {
        chunks(text, CHUNK_BYTES)
            .map(|chunk| {
                if chunk.len() > REMEMBERED_CHUNK_BYTES {
                    return None;
                }
                let key = key(chunk);
                self.shard(key).get(key, chunk)
            })
            .sum::<Option<usize>>()
    }
}

impl Shard {
    fn get(&self, key: u64, chunk: &str) -> Option<usize> {
        self.counts
            .get(&key)
            .filter(|(seen, _)| **seen == *chunk.as_bytes())
            .map(|&(_, n)| n as usize)
    }

    fn insert(&mut self, key: u64, chunk: &str, n: usize) {
        if self.bytes + chunk.len() > SHARD_BYTES {
            self.counts.clear();
            self.bytes = 0;
        }
        self.bytes += chunk.len();
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        if let Some((old, _)) = self.counts.insert(key, (chunk.as_bytes().into(), n)) {
            self.bytes -= old.len();
        }
    }
}

fn key(chunk: &str) -> u64 {
    BuildFxHasher::default().hash_one(Bytes(chunk.as_bytes()))
}

/// Hashes a chunk's bytes without the length prefix `[u8]`'s `Hash` adds.
struct Bytes<'a>(&'a [u8]);

impl std::hash::Hash for Bytes<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write(self.0);
    }
}

/// `text` in chunks, each ending at the first split point at least `min_bytes` after its
/// start (the last at the text's end): a line start if there is one in the next
/// [`LINE_SEARCH_BYTES`], else any. Why lines first: after an edit (a text one item
/// longer), chunks that end at line starts soon end where they ended before, so the rest
/// of the text is found in the memo again; ends between letters and punctuation, a few
/// bytes apart, rarely line up again.
pub(super) fn chunks(text: &str, min_bytes: usize) -> impl Iterator<Item = &str> {
    let b = text.as_bytes();
    let mut start = 0;
    // The next `\n` at or after the last one looked at: each is found once.
    let mut newline = find_newline(b, 0);
    std::iter::from_fn(move || {
        if start >= b.len() {
            return None;
        }
        let from = start + min_bytes.max(1);
        let window = from.saturating_add(LINE_SEARCH_BYTES);
        let mut end = None;
        // A line start before `from` cannot end this chunk: jump past those line breaks
        // rather than visit each (a 24 KB part of pretty JSON holds ~800; cutting the
        // 117 KB corpus file into a report's parts took 26 µs, now 3.3 µs).
        if newline + 1 < from {
            newline = find_newline(b, from - 1);
        }
        while newline < b.len() && newline < window {
            if newline + 1 >= from && is_split(b, newline + 1) {
                end = Some(newline + 1);
                break;
            }
            newline = find_newline(b, newline + 1);
        }
        let end = end
            .or_else(|| (from..b.len()).find(|&p| is_split(b, p)))
            .unwrap_or(b.len());
        let chunk = &text[start..end];
        start = end;
        Some(chunk)
    })
}

/// The first `\n` at or after `i`, or `b.len()`: eight bytes at a time, as
/// [`crate::json`]'s scanner does.
fn find_newline(b: &[u8], mut i: usize) -> usize {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    while let Some(chunk) = b.get(i..).and_then(<[u8]>::first_chunk::<8>) {
        let x = u64::from_le_bytes(*chunk) ^ (LO * u64::from(b'\n'));
        // A borrow only propagates upward from a real zero byte: the lowest flag is real.
        let zero = x.wrapping_sub(LO) & !x & HI;
        if zero != 0 {
            return i + (zero.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    b.get(i..)
        .and_then(|rest| rest.iter().position(|&c| c == b'\n'))
        .map_or(b.len(), |n| i + n)
}

/// How far [`chunks`] looks for a line start.
const LINE_SEARCH_BYTES: usize = 1024;

/// Whether no piece runs across `p`: either it follows a `\n`, and spaces then an ASCII
/// non-whitespace character follow it (not `/` right at `p`, which o200k's punctuation
/// piece would take with the line break); or it is between an ASCII letter or digit and
/// ASCII punctuation other than `'` (which may start a contraction, `'s`, that the
/// letters before it take) — in minified JSON, `kafka|","`.
fn is_split(b: &[u8], p: usize) -> bool {
    let (Some(&before), Some(&at)) = (b.get(p.wrapping_sub(1)), b.get(p)) else {
        return false;
    };
    if before.is_ascii_alphanumeric() {
        return at.is_ascii_punctuation() && at != b'\'';
    }
    if before != b'\n' {
        return false;
    }
    let spaces = b[p..].iter().take_while(|&&c| c == b' ').count();
    match b.get(p + spaces) {
        Some(b'/') => spaces > 0,
        Some(&c) => c.is_ascii() && !matches!(c, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' '),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_line_starts_only_where_no_piece_crosses() {
        let text = "{\n  \"a\": 1,\n  \"b\": 2\n}";
        let parts: Vec<&str> = chunks(text, 1).collect();
        assert_eq!(parts, ["{\n", "  \"a\": 1,\n", "  \"b\": 2\n", "}"]);
        // Without line starts, between letters or digits and punctuation (not `'`).
        let parts: Vec<&str> = chunks(r#"{"ab":"c'd","e":12}"#, 1).collect();
        assert_eq!(parts, [r#"{"ab"#, r#"":"c'd"#, r#"","e"#, r#"":12"#, "}"]);
        // Not before more whitespace, a line break, `/` right after the break, or non-ASCII.
        for text in [
            "a\n\nb",
            "a\n \n b",
            "a\n\tb",
            "a\n/b",
            "a\r\n\r\nb",
            "a\n\u{a0}b",
            "a\né",
        ] {
            let parts: Vec<&str> = chunks(text, 1).collect();
            let expected: &[&str] = match text {
                "a\n\nb" => &["a\n\n", "b"],
                "a\n \n b" => &["a\n \n", " b"],
                "a\r\n\r\nb" => &["a\r\n\r\n", "b"],
                _ => &[text],
            };
            assert_eq!(parts, expected, "{text:?}");
        }
        assert_eq!(chunks("a\n /b", 1).collect::<Vec<_>>(), ["a\n", " /b"]);
        assert_eq!(chunks("", 1).count(), 0);
        for text in [
            "",
            "\n",
            "ab\ncd",
            "0123456\n89abcdef\n",
            "0123456789abcdef0123456789\n",
        ] {
            let naive = text.find('\n').unwrap_or(text.len());
            assert_eq!(find_newline(text.as_bytes(), 0), naive, "{text:?}");
        }
    }

    /// [`chunks`] as its doc says, one split point at a time.
    fn chunks_naive(text: &str, min_bytes: usize) -> Vec<&str> {
        let b = text.as_bytes();
        let (mut out, mut start) = (Vec::new(), 0);
        while start < b.len() {
            let from = start + min_bytes.max(1);
            let window = from.saturating_add(LINE_SEARCH_BYTES);
            let line = (from..b.len().min(window + 1))
                .find(|&p| p > 0 && b[p - 1] == b'\n' && is_split(b, p));
            let end = line
                .or_else(|| (from..b.len()).find(|&p| is_split(b, p)))
                .unwrap_or(b.len());
            out.push(&text[start..end]);
            start = end;
        }
        out
    }

    /// The parts a report's pool counts are cut here: skipping the line breaks before a
    /// chunk's least end (the report's pretty input had ~800 per part) cuts where visiting
    /// each did.
    #[test]
    fn regression_chunks_visited_every_line_break_before_their_least_end() {
        let pretty: String = (0..3000)
            .map(|i| format!("  {{\n    \"id\": {i},\n    \"name\": \"n{i}\"\n  }},\n"))
            .collect();
        let minified = pretty.replace(['\n', ' '], "");
        let long_line = format!("{}\n{}", "x".repeat(5000), "  y\n".repeat(500));
        for text in [&pretty, &minified, &long_line] {
            for min in [1, 7, 64, 256, 1000, 24 << 10] {
                assert_eq!(
                    chunks(text, min).collect::<Vec<_>>(),
                    chunks_naive(text, min),
                    "{min}"
                );
            }
        }
    }

    #[test]
    fn chunks_are_at_least_the_size_asked_but_the_last() {
        let text: String = (0..200).map(|i| format!("line {i}\n")).collect();
        let parts: Vec<&str> = chunks(&text, 100).collect();
        assert_eq!(parts.concat(), text);
        let (last, rest) = parts.split_last().unwrap();
        assert!(
            rest.iter().all(|c| c.len() >= 100 && c.len() < 110),
            "{parts:?}"
        );
        assert!(!last.is_empty());
    }
}
