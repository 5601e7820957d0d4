//! A BPE encoding's ranks as a flat table read in place, and byte-pair merging over it.
//!
//! Why: the built-in encodings were a general BPE library's precomputed automata, 47 MB
//! of the binary, deserialised into ~100 MB on every first count (70 ms before a one-shot
//! `pare encode --format auto` could count anything). Counting needs only "which rank has
//! these bytes", so `build.rs` lays out each encoding as a hash table over its token
//! bytes (o200k_base: 4.6 MB, of which a count reads 3.8) that is used where it lies in
//! the binary: the first lookup costs nothing to prepare, and the pages of the table a text
//! never touches are never read.
//!
//! A lookup reads one cache line where it can ([`RankTable`]'s slots; a table of every
//! two-byte token for the pairs a merge starts from), since a process's first count is
//! mostly lookups that miss every cache: with three reads a lookup (slot, the rank's
//! offset, the bytes), a first count of the 45 KB output of the corpus file took 560 µs
//! against 150 µs warm; with one or two, 430 µs (`pare compact --budget` 0.86× the time).
//!
//! Merging is tiktoken's: start from single bytes and merge the adjacent pair of lowest
//! rank (leftmost on ties) until no pair is a token. Short pieces use a scan of a small
//! array; longer ones a heap; pieces longer than a window (a megabyte without a pre-token
//! break: one letter repeated) merge window by window, so their time is linear.
//!
//! ```text
//! o200k_base().rank(b"hello")               Some(24912)
//! o200k_base().token_lens(b"unbelievably")  [2, 3, 7]   "un", "bel", "ievably" (gpt-tokenizer's)
//! ```

mod hash;

pub(crate) use hash::step;

use hash::{EMPTY, INLINE};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A slot's rank field, once shifted down from bit 32.
const RANK_MASK: u64 = (1 << hash::RANK_BITS) - 1;
/// A slot's length and hash bits ([`hash::tag`]).
const TAG_MASK: u64 = !((1 << hash::TAG_SHIFT) - 1);

/// One encoding's tokens: rank ↔ bytes.
///
/// A slot (every token but the two-byte ones, which `pairs` holds) is a little-endian u64,
/// 0 when empty: bits 0–31 the token's bytes (zero-padded) when it is at most [`INLINE`]
/// bytes long, else the offset of its bytes in `bytes`; bits 32–49 its rank; then [`hash::tag`]'s length and hash bits. Why: a lookup reads the
/// slot's cache line, and `bytes` only for a longer token whose length and hash bits match.
/// Cold (a process's first count), each line read costs a miss, and three reads a lookup
/// (slot, rank's offset, bytes) made the first count of a text several times its second.
pub(crate) struct RankTable {
    /// Where each rank's bytes start in `bytes`: to spell out a token (the tests do).
    #[cfg_attr(not(test), allow(dead_code))]
    offsets: &'static [u8],
    slots: &'static [u8],
    bytes: &'static [u8],
    /// The rank of each two-byte token at `256 * first + second` (u32, `EMPTY` if none).
    pairs: &'static [u8],
    #[cfg_attr(not(test), allow(dead_code))]
    len: usize,
    shift: u32,
    mask: usize,
}

static O200K_BASE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.ranks"));
static CL100K_BASE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_base.ranks"));

/// o200k_base (GPT-4o and later): 199,998 tokens.
pub(crate) fn o200k_base() -> &'static RankTable {
    static T: std::sync::LazyLock<RankTable> =
        std::sync::LazyLock::new(|| RankTable::new(O200K_BASE));
    &T
}

/// cl100k_base (GPT-4, GPT-3.5): 100,256 tokens.
pub(crate) fn cl100k_base() -> &'static RankTable {
    static T: std::sync::LazyLock<RankTable> =
        std::sync::LazyLock::new(|| RankTable::new(CL100K_BASE));
    &T
}

#[inline]
fn word(bytes: &[u8], i: usize) -> u32 {
    let at = 4 * i;
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

/// Pieces up to this many bytes merge by scanning a stack array; longer ones by a heap.
const SCAN_MAX: usize = 128;

/// Pieces longer than this merge window by window ([`windowed_merge`]).
const WINDOW: usize = 1 << 16;

/// How far back into the tokens merged so far each next window starts.
const OVERLAP: usize = 1 << 10;

impl RankTable {
    fn new(blob: &'static [u8]) -> RankTable {
        let len = word(blob, 0) as usize;
        let bits = word(blob, 1);
        let (offsets, rest) = blob[8..].split_at(4 * (len + 1));
        let (bytes, rest) = rest.split_at(word(offsets, len) as usize);
        let (slots, pairs) = rest.split_at(8 << bits);
        debug_assert_eq!(pairs.len(), 4 << 16);
        RankTable {
            offsets,
            slots,
            bytes,
            pairs,
            len,
            shift: 64 - bits,
            mask: (1 << bits) - 1,
        }
    }

    /// Read one byte of each page of the tables, so the pages are mapped before the
    /// first lookups need them ([`crate::tokens::Tokenizer::warm_up`]). Plain reads, not
    /// `madvise(MADV_POPULATE_READ)`: the engine has no `unsafe`; the reads took 0.4 ms,
    /// populating measured 0.25 ms in an earlier round.
    pub(crate) fn warm_up(&self) {
        const PAGE: usize = 4096;
        let mut sum = 0u8;
        // The offsets are read only to spell out a rank's token, never by a count.
        for table in [self.slots, self.bytes, self.pairs] {
            for byte in table.iter().step_by(PAGE) {
                sum = sum.wrapping_add(*byte);
            }
        }
        std::hint::black_box(sum);
    }

    /// How many tokens the encoding has (the tests check the tables' sizes).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The bytes of the token of rank `rank` (< [`Self::len`]).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn token(&self, rank: u32) -> &'static [u8] {
        let r = rank as usize;
        &self.bytes[word(self.offsets, r) as usize..word(self.offsets, r + 1) as usize]
    }

    /// The rank of the token whose bytes are `bytes`, if one is.
    #[inline]
    pub(crate) fn rank(&self, bytes: &[u8]) -> Option<u32> {
        if let [a, b] = *bytes {
            let rank = word(self.pairs, usize::from(a) << 8 | usize::from(b));
            return (rank != EMPTY).then_some(rank);
        }
        let len = bytes.len();
        if !(1..=255).contains(&len) {
            return None;
        }
        let h = hash::hash(bytes);
        let tag = hash::tag(len, h);
        let inline = (len <= INLINE).then(|| {
            let mut word = [0u8; 4];
            word[..len].copy_from_slice(bytes);
            u32::from_le_bytes(word)
        });
        let mut i = (h >> self.shift) as usize;
        loop {
            let at = 8 * i;
            let slot = u64::from_le_bytes(
                self.slots[at..at + 8]
                    .try_into()
                    .expect("a slot is eight bytes"),
            );
            if slot == 0 {
                return None;
            }
            if slot & TAG_MASK == tag {
                let low = slot as u32;
                let found = match inline {
                    Some(word) => low == word,
                    None => self.bytes.get(low as usize..low as usize + len) == Some(bytes),
                };
                if found {
                    return Some(((slot >> 32) & RANK_MASK) as u32);
                }
            }
            i = (i + 1) & self.mask;
        }
    }

    /// How many tokens `piece` (one pre-tokenizer piece) encodes to.
    pub(crate) fn count(&self, piece: &[u8]) -> usize {
        if piece.len() <= 1 || self.rank(piece).is_some() {
            return piece.len().min(1);
        }
        if piece.len() <= SCAN_MAX {
            self.scan_merge(piece, |_| {})
        } else {
            windowed_merge(piece, |b| self.rank(b), WINDOW).len()
        }
    }

    /// The byte lengths of `piece`'s tokens, in order.
    pub(crate) fn token_lens(&self, piece: &[u8]) -> Vec<usize> {
        if piece.len() <= 1 || self.rank(piece).is_some() {
            return if piece.is_empty() {
                Vec::new()
            } else {
                vec![piece.len()]
            };
        }
        if piece.len() <= SCAN_MAX {
            let mut lens = Vec::new();
            self.scan_merge(piece, |len| lens.push(len));
            lens
        } else {
            windowed_merge(piece, |b| self.rank(b), WINDOW)
        }
    }

    /// tiktoken's merge loop over a stack array of part starts and the rank of the pair
    /// each part starts; calls `each` with every final token's length and returns the count.
    fn scan_merge(&self, piece: &[u8], mut each: impl FnMut(usize)) -> usize {
        let n = piece.len();
        debug_assert!((2..=SCAN_MAX).contains(&n));
        // parts[i] = (start of part i, rank of part i joined with part i + 1).
        let mut parts = [(0u32, EMPTY); SCAN_MAX + 1];
        for (i, part) in parts.iter_mut().enumerate().take(n - 1) {
            *part = (i as u32, self.rank(&piece[i..i + 2]).unwrap_or(EMPTY));
        }
        parts[n - 1] = ((n - 1) as u32, EMPTY);
        parts[n] = (n as u32, EMPTY);
        let mut len = n + 1; // parts in use, the end marker included
        let pair_rank = |parts: &[(u32, u32)], len: usize, i: usize| -> u32 {
            if i + 3 < len {
                let (a, b) = (parts[i].0 as usize, parts[i + 3].0 as usize);
                self.rank(&piece[a..b]).unwrap_or(EMPTY)
            } else {
                EMPTY
            }
        };
        loop {
            let mut best = (EMPTY, 0);
            for (i, &(_, r)) in parts[..len - 1].iter().enumerate() {
                if r < best.0 {
                    best = (r, i);
                }
            }
            if best.0 == EMPTY {
                break;
            }
            let i = best.1;
            if i > 0 {
                parts[i - 1].1 = pair_rank(&parts, len, i - 1);
            }
            parts[i].1 = pair_rank(&parts, len, i);
            parts.copy_within(i + 2..len, i + 1);
            len -= 1;
        }
        for w in parts[..len].windows(2) {
            each((w[1].0 - w[0].0) as usize);
        }
        len - 1
    }
}

/// [`heap_merge`]'s tokens for a piece of any length in time linear in it: the piece is
/// merged `window` bytes at a time and the windows' tokens are spliced where they agree.
///
/// Why it is exact: a token sequence is tiktoken's BPE of its text if and only if every
/// adjacent pair of its tokens is the BPE of the pair's bytes (the pair property that
/// bpe-openai's backtracking encoder rests on; `windowed_merge_is_heap_merge` checks it
/// with windows of a few bytes). The tokens kept so far are such a sequence. The next window
/// starts at one of their boundaries about [`OVERLAP`] bytes back; where a kept token and
/// the window's token cover the same bytes, the kept tokens stop after it and the window's
/// go on: the pair across that seam is adjacent in the window's BPE, so every pair is still
/// valid. When no token agrees (never seen in text; a construction could do it) the window
/// starts further back, and from the piece's start it simply replaces what was kept.
///
/// Windows matter for one piece of megabytes without a pre-token break: `a` repeated 16 MB
/// took 28 times as long as 1 MB through one heap (n log n, and a heap larger than cache).
pub(crate) fn windowed_merge(
    piece: &[u8],
    rank: impl Fn(&[u8]) -> Option<u32> + Copy,
    window: usize,
) -> Vec<usize> {
    let n = piece.len();
    let window = window.max(2);
    // Token ends of the kept BPE of piece[..done], in order.
    let mut ends: Vec<usize> = Vec::new();
    let mut done = 0;
    // How far back a window starts; doubled while no token agrees, reset after a splice.
    let overlap = OVERLAP.min(window / 2).max(1);
    let mut back = overlap;
    while done < n {
        // The window starts at a kept boundary at least `back` bytes before `done`.
        let kept_before = ends.partition_point(|&end| end + back <= done);
        let start = if kept_before == 0 {
            0
        } else {
            ends[kept_before - 1]
        };
        let end = (done + window).min(n);
        let mut merged = Vec::new();
        let mut at = start;
        for len in heap_merge(&piece[start..end], rank) {
            at += len;
            merged.push(at);
        }
        if start == 0 {
            ends = merged;
        } else {
            // The last kept token that the window has too: same start, same end.
            let Some((kept, window_at)) = last_agreement(&ends[kept_before - 1..], &merged) else {
                back *= 2;
                continue;
            };
            ends.truncate(kept_before + kept);
            ends.extend_from_slice(&merged[window_at + 1..]);
        }
        done = end;
        back = overlap;
    }
    let mut lens = Vec::with_capacity(ends.len());
    let mut at = 0;
    for end in ends {
        lens.push(end - at);
        at = end;
    }
    lens
}

/// The last token two merges share, given `kept` (token ends, the first being the window's
/// start) and `merged` (the window's token ends): the index of its end in `kept` and in
/// `merged`.
fn last_agreement(kept: &[usize], merged: &[usize]) -> Option<(usize, usize)> {
    let mut found = None;
    let (mut i, mut j) = (1, 0);
    while i < kept.len() && j < merged.len() {
        if kept[i] < merged[j] {
            i += 1;
        } else if kept[i] > merged[j] {
            j += 1;
        } else {
            // Same end; same start when the ends before agree too.
            let window_start = if j == 0 { kept[0] } else { merged[j - 1] };
            if kept[i - 1] == window_start {
                found = Some((i, j));
            }
            i += 1;
            j += 1;
        }
    }
    found
}

/// Lowest-rank-first merging with a heap over a linked list of parts (leftmost on ties):
/// the same tokens as the scan, in n log n. `rank` answers for a candidate pair's bytes,
/// so a caller can look ranks up its own way (gpt-tokenizer's U+FEFF quirk does).
///
/// A heap entry is one `u64`, the pair's rank above its start, so the heap orders by rank
/// then leftmost with one comparison; `pair_rank[start]` holds the rank of the pair that
/// starts there now, and an entry that no longer matches it is stale. (Entries of three
/// `usize`s made sifting most of the time on a long piece without pre-token breaks.)
pub(crate) fn heap_merge(piece: &[u8], rank: impl Fn(&[u8]) -> Option<u32>) -> Vec<usize> {
    let n = piece.len();
    assert!(u32::try_from(n).is_ok(), "a piece of 4 GiB or more");
    let entry = |r: u32, start: usize| Reverse((u64::from(r) << 32) | start as u64);
    // Parts as a linked list over their start offsets; `next[n]` is the end.
    let mut next: Vec<u32> = (1..=n as u32 + 1).collect();
    let mut prev: Vec<u32> = (0..=n as u32).map(|i| i.wrapping_sub(1)).collect();
    let mut pair_rank = vec![EMPTY; n + 1];
    let mut first = Vec::with_capacity(n);
    for i in 0..n.saturating_sub(1) {
        if let Some(r) = rank(&piece[i..i + 2]) {
            pair_rank[i] = r;
            first.push(entry(r, i));
        }
    }
    // Heapified at once (linear), not pushed one by one (n log n).
    let mut heap = BinaryHeap::from(first);
    while let Some(Reverse(key)) = heap.pop() {
        let (r, start) = ((key >> 32) as u32, (key & 0xffff_ffff) as usize);
        // Stale: the part is gone (its rank was cleared) or its pair has changed since.
        if pair_rank[start] != r {
            continue;
        }
        // Merge the part after `start` into it.
        let mid = next[start] as usize;
        let end = next[mid] as usize;
        pair_rank[mid] = EMPTY;
        next[start] = end as u32;
        prev[end] = start as u32;
        pair_rank[start] = EMPTY;
        if end < n
            && let Some(r) = rank(&piece[start..next[end] as usize])
        {
            pair_rank[start] = r;
            heap.push(entry(r, start));
        }
        if start > 0 {
            let p = prev[start] as usize;
            pair_rank[p] = EMPTY;
            if let Some(r) = rank(&piece[p..end]) {
                pair_rank[p] = r;
                heap.push(entry(r, p));
            }
        }
    }
    let mut lens = Vec::new();
    let mut at = 0;
    while at < n {
        let to = next[at] as usize;
        lens.push(to - at);
        at = to;
    }
    lens
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_token_is_found_at_its_rank() {
        for t in [o200k_base(), cl100k_base()] {
            for rank in 0..t.len() as u32 {
                assert_eq!(t.rank(t.token(rank)), Some(rank));
            }
        }
        assert_eq!(o200k_base().len(), 199_998);
        // The module docs' example.
        assert_eq!(o200k_base().rank(b"hello"), Some(24912));
        assert_eq!(o200k_base().token_lens(b"unbelievably"), vec![2, 3, 7]);
        assert_eq!(cl100k_base().len(), 100_256);
    }

    #[test]
    fn scan_and_heap_merge_agree() {
        let t = o200k_base();
        let text = "unbelievably  {\"created_at\":\"2026-02-17T08:46:57\"} 你好 ünïcödé 🇫🇷🇫🇷 aaaaaaaaaaaaaaaa";
        for start in 0..text.len() {
            for end in start + 2..=text.len().min(start + SCAN_MAX) {
                let piece = &text.as_bytes()[start..end];
                let mut scanned = Vec::new();
                let n = t.scan_merge(piece, |l| scanned.push(l));
                assert_eq!(n, scanned.len());
                assert_eq!(scanned, heap_merge(piece, |b| t.rank(b)), "{piece:?}");
            }
        }
    }

    /// Lookups of strings near tokens (one byte short, one more, one changed) agree with
    /// a map of every token: a slot's length and hash bits, the bytes held in it and the
    /// pair table never take one string for another.
    #[test]
    fn lookups_agree_with_a_map_of_every_token() {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        for t in [o200k_base(), cl100k_base()] {
            let all: std::collections::HashMap<&[u8], u32> =
                (0..t.len() as u32).map(|r| (t.token(r), r)).collect();
            let mut tried = 0;
            for rank in (0..t.len() as u32).step_by(7) {
                let token = t.token(rank);
                let byte = xorshift(&mut seed) as u8;
                let mut near = vec![token[..token.len() - 1].to_vec(), token.to_vec()];
                near.push([token, &[byte]].concat());
                near.push([&[byte][..], token].concat());
                let mut changed = token.to_vec();
                let at = xorshift(&mut seed) as usize % changed.len();
                changed[at] ^= 1 << (xorshift(&mut seed) % 8);
                near.push(changed);
                near.push(vec![0; token.len()]);
                for s in near {
                    assert_eq!(t.rank(&s), all.get(&s[..]).copied(), "{s:?}");
                    tried += 1;
                }
            }
            assert!(tried > 80_000, "{tried}");
            assert_eq!(t.rank(b""), None);
            assert_eq!(t.rank(&[b'a'; 300]), None);
        }
    }

    fn xorshift(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    /// Windows of a few bytes put a seam every few tokens, so every way two windows can
    /// meet (agreeing at once, late, or not at all and starting further back) is exercised
    /// against one heap over the whole piece.
    #[test]
    fn windowed_merge_is_heap_merge() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut pieces: Vec<Vec<u8>> = [b'a', b' ', b'\n', b'0']
            .iter()
            .map(|&b| vec![b; 3000])
            .collect();
        pieces.push("é".repeat(1500).into_bytes());
        pieces.push("abc".repeat(1000).into_bytes());
        pieces.push("unbelievably".repeat(300).into_bytes());
        pieces.push("你好🇫🇷".repeat(300).into_bytes());
        for alphabet in [
            &b"ab"[..],
            b"abc",
            b"xyzzy",
            b"0123456789",
            b"aaaaaaab",
            b" \n\t",
        ] {
            for len in [300, 3000] {
                pieces.push(
                    (0..len)
                        .map(|_| alphabet[(xorshift(&mut seed) % alphabet.len() as u64) as usize])
                        .collect(),
                );
            }
        }
        for t in [o200k_base(), cl100k_base()] {
            for piece in &pieces {
                let whole = heap_merge(piece, |b| t.rank(b));
                for window in [2, 3, 5, 8, 13, 64, 100, 257, 1000] {
                    assert_eq!(
                        windowed_merge(piece, |b| t.rank(b), window),
                        whole,
                        "window {window}: {:?}…",
                        &piece[..8]
                    );
                }
            }
        }
    }

    /// Long pieces without a pre-token break (runs of one character, of a few) are where
    /// the heap does the work: token for token what bpe-openai's backtracking BPE gives.
    #[test]
    fn heap_merge_of_long_pieces_is_bpe() {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut pieces: Vec<Vec<u8>> = [b'a', b'\n', b' ', b'0', b'=']
            .iter()
            .map(|&b| vec![b; 5000])
            .collect();
        pieces.push("é".repeat(3000).into_bytes());
        // Longer than a window: merged window by window.
        pieces.push(vec![b'a'; 3 * WINDOW + 17]);
        pieces.push("ab".repeat(2 * WINDOW).into_bytes());
        for alphabet in [&b"ab"[..], b"abc", b"xyzzy", b"0123456789"] {
            let run: Vec<u8> = (0..20_000)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    alphabet[(seed % alphabet.len() as u64) as usize]
                })
                .collect();
            pieces.push(run);
        }
        for (t, reference) in [
            (o200k_base(), &bpe_openai::o200k_base().bpe),
            (cl100k_base(), &bpe_openai::cl100k_base().bpe),
        ] {
            for piece in &pieces {
                let lens: Vec<usize> = reference
                    .encode_via_backtracking(piece)
                    .iter()
                    .map(|&tok| reference.token_len(tok))
                    .collect();
                assert_eq!(t.token_lens(piece), lens, "{:?}…", &piece[..8]);
                assert_eq!(t.count(piece), lens.len());
            }
        }
    }
}
