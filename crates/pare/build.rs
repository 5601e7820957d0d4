//! Lays out the built-in BPE encodings (o200k_base, cl100k_base) as flat tables the binary
//! embeds and reads in place: no deserialising and no hash map to build at start-up, and a
//! few MB instead of the 47 MB of precomputed automata a general BPE library embeds.
//!
//! Input: `data/<name>.tiktoken.gz`, OpenAI's tiktoken files (one `base64(token) rank` line
//! per token, ranks 0..n). Output `$OUT_DIR/<name>.ranks`, little-endian: `n` and `bits`
//! (u32), `n + 1` u32 offsets into the token bytes, the tokens' bytes in rank order, then
//! `2^bits` u64 hash slots (linear probing from `hash(bytes) >> (64 - bits)`; 0 is empty).
//! See `src/rank_table/mod.rs` for a slot's fields.

use std::io::Read;
use std::path::PathBuf;

#[path = "src/rank_table/hash.rs"]
mod hash;

#[allow(dead_code)]
mod patterns {
    include!("src/tokens/patterns.rs");
}

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    for name in ["o200k_base", "cl100k_base"] {
        let source = format!("data/{name}.tiktoken.gz");
        println!("cargo::rerun-if-changed={source}");
        let tokens = read_tiktoken(&source);
        std::fs::write(out.join(format!("{name}.ranks")), layout(&tokens))
            .unwrap_or_else(|e| panic!("writing {name}.ranks: {e}"));
    }
    std::fs::write(out.join("o200k_base.split.dfa"), splitter_dfa("o200k_base"))
        .unwrap_or_else(|e| panic!("writing o200k_base.split.dfa: {e}"));
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=src/rank_table/hash.rs");
    println!("cargo::rerun-if-changed=src/tokens/patterns.rs");
}

/// An encoding's pre-tokenizer patterns as a sparse DFA for anchored, leftmost-first
/// searches, serialized (see `src/tokens/splitter.rs`): about 140 KB for o200k, read in
/// place, where compiling the patterns at run time cost a process 2–4 ms.
fn splitter_dfa(encoding: &str) -> Vec<u8> {
    use regex_automata::dfa::{StartKind, dense};
    use regex_automata::{MatchKind, nfa::thompson};
    let patterns = patterns::splitter_patterns(encoding);
    let dfa = dense::Builder::new()
        .configure(
            dense::Config::new()
                .match_kind(MatchKind::LeftmostFirst)
                .start_kind(StartKind::Anchored),
        )
        .thompson(thompson::Config::new().which_captures(thompson::WhichCaptures::None))
        .build_many(&patterns)
        .unwrap_or_else(|e| panic!("{encoding}'s patterns: {e}"));
    dfa.to_sparse()
        .unwrap_or_else(|e| panic!("{encoding}'s sparse DFA: {e}"))
        .to_bytes_little_endian()
}

/// The tokens of a tiktoken file, index = rank.
fn read_tiktoken(path: &str) -> Vec<Vec<u8>> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut text = String::new();
    flate2::read::GzDecoder::new(file)
        .read_to_string(&mut text)
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut tokens = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let (b64, rank) = line
            .split_once(' ')
            .unwrap_or_else(|| panic!("{path}:{}: expected `token rank`", i + 1));
        let rank: usize = rank
            .parse()
            .unwrap_or_else(|_| panic!("{path}:{}: bad rank", i + 1));
        // The ranks count up from 0, so a token's rank is its index.
        assert_eq!(
            rank,
            tokens.len(),
            "{path}:{}: ranks must be 0, 1, 2, …",
            i + 1
        );
        tokens.push(base64(b64).unwrap_or_else(|| panic!("{path}:{}: bad base64", i + 1)));
    }
    tokens
}

/// The layout `src/rank_table/mod.rs` reads: each slot holds what a lookup compares (the
/// token's length, a few bits of its hash, and its bytes when they fit in four, else where
/// they are), so a lookup reads one cache line, or two for a token longer than four bytes,
/// instead of three (the slot, then the rank's offset, then the bytes).
fn layout(tokens: &[Vec<u8>]) -> Vec<u8> {
    let n = tokens.len();
    // About three quarters full: 8-byte slots, so a miss's probes stay in a line or two,
    // and the table is half the pages it would be at half full.
    let bits = n.next_power_of_two().trailing_zeros().max(4);
    assert!(
        n < 1 << hash::RANK_BITS,
        "ranks must fit in {} bits",
        hash::RANK_BITS
    );
    let mut slots = vec![0u64; 1 << bits];
    let mask = slots.len() - 1;
    let mut offset = 0u64;
    for (rank, token) in tokens.iter().enumerate() {
        assert!(
            (1..=255).contains(&token.len()),
            "token {rank}: length {}",
            token.len()
        );
        // Where its bytes start among all the tokens' bytes, in rank order.
        let start = offset;
        offset += token.len() as u64;
        // Two-byte tokens are looked up in their own table (below), never here.
        if token.len() == 2 {
            continue;
        }
        let h = hash::hash(token);
        let low = if token.len() <= hash::INLINE {
            let mut word = [0u8; 4];
            word[..token.len()].copy_from_slice(token);
            u64::from(u32::from_le_bytes(word))
        } else {
            start
        };
        assert!(low < 1 << 32, "token bytes past 4 GB");
        let slot = low | (rank as u64) << 32 | hash::tag(token.len(), h);
        let mut i = (h >> (64 - bits)) as usize;
        while slots[i] != 0 {
            i = (i + 1) & mask;
        }
        slots[i] = slot;
    }
    let mut out = Vec::new();
    let put = |v: u32, out: &mut Vec<u8>| out.extend_from_slice(&v.to_le_bytes());
    put(n as u32, &mut out);
    put(bits, &mut out);
    let mut offset = 0u32;
    put(0, &mut out);
    for t in tokens {
        offset += t.len() as u32;
        put(offset, &mut out);
    }
    for t in tokens {
        out.extend_from_slice(t);
    }
    for &s in &slots {
        out.extend_from_slice(&s.to_le_bytes());
    }
    // Two-byte tokens by their bytes: a merge starts by looking up every adjacent pair.
    let mut pairs = vec![hash::EMPTY; 1 << 16];
    for (rank, token) in tokens.iter().enumerate() {
        if let [a, b] = token[..] {
            pairs[usize::from(a) << 8 | usize::from(b)] = rank as u32;
        }
    }
    for p in pairs {
        put(p, &mut out);
    }
    out
}

/// Standard base64 with padding, as tiktoken files are written.
fn base64(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let bytes = text.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let mut acc = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            acc |= value(c)? << (18 - 6 * i);
        }
        let got = chunk.len() * 6 / 8;
        if got == 0 {
            return None;
        }
        out.extend_from_slice(&acc.to_be_bytes()[1..1 + got]);
    }
    Some(out)
}
