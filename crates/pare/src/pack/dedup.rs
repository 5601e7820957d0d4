//! Near-duplicate chunks: a later chunk that repeats a better one is shown as a reference.
//!
//! Two chunks are near-duplicates when they come from the same path with overlapping line
//! ranges, or when the Jaccard similarity of their word 3-shingles is at least the
//! threshold (0.8 by default). Search results are a few dozen chunks, so the sets are
//! compared exactly (MinHash would only approximate the same number).
//!
//! ```
//! use pare::pack::dedup::jaccard;
//! let a = pare::pack::dedup::shingles("fn main() { println!(\"hi\"); }");
//! assert_eq!(jaccard(&a, &a), 1.0);
//! ```

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};

use super::chunks::Chunk;

/// Hashes of the text's overlapping three-word windows (the words themselves when fewer).
pub fn shingles(text: &str) -> HashSet<u64> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let hash = |w: &[&str]| {
        let mut h = DefaultHasher::new();
        w.hash(&mut h);
        h.finish()
    };
    if words.len() < 3 {
        return words.iter().map(|w| hash(&[w])).collect();
    }
    words.windows(3).map(hash).collect()
}

/// The Jaccard similarity of two shingle sets: shared over all, from 0 to 1; two empty sets
/// are alike (1).
pub fn jaccard(a: &HashSet<u64>, b: &HashSet<u64>) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let common = a.intersection(b).count();
    common as f64 / (a.len() + b.len() - common) as f64
}

/// For each chunk (in `order`, best first), the position in `chunks` of the better chunk it
/// duplicates, if any.
pub fn duplicates(chunks: &[Chunk], order: &[usize], threshold: f64) -> Vec<Option<usize>> {
    let mut of = vec![None; chunks.len()];
    if threshold > 1.0 {
        return of;
    }
    let sets: Vec<HashSet<u64>> = chunks.iter().map(|c| shingles(&c.text)).collect();
    let mut kept: Vec<usize> = Vec::new();
    for &i in order {
        let c = &chunks[i];
        let dup = kept.iter().copied().find(|&k| {
            let o = &chunks[k];
            let overlapping = c.lines_known
                && o.lines_known
                && !c.path.is_empty()
                && c.path == o.path
                && c.line_start <= o.line_end()
                && o.line_start <= c.line_end();
            // Jaccard is at most the ratio of the sets' sizes: skip the ones that can't match
            // (a whole source tree is thousands of chunks).
            let (a, b) = (sets[i].len(), sets[k].len());
            let could = a.min(b) as f64 >= threshold * a.max(b) as f64;
            overlapping
                || (could && !c.text.trim().is_empty() && jaccard(&sets[i], &sets[k]) >= threshold)
        });
        match dup {
            Some(k) => of[i] = Some(k),
            None => kept.push(i),
        }
    }
    of
}
