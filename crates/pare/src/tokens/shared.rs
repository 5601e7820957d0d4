//! Piece counts every thread shares, behind each walk's own memo.
//!
//! Why: a [`super::bpe::Scratch`]'s memo belongs to one walk at a time, so texts counted
//! at once (a report counts the input as given, as the output's format, after each op
//! prefix and as printed, each on its own thread) each merged the same few hundred pieces
//! from cold: a piece's first merge reads the 4.3 MB rank table where no cache holds it,
//! about a microsecond a piece, and the four walks paid it four times. A piece any thread
//! has merged is now a lock and a lookup for the rest. A walk's own memo still answers
//! first, without a lock, so a walk takes a lock only for a piece new to it.
//!
//! A piece's count depends on its bytes alone (the walks never ask here for a text holding
//! U+FEFF, whose pieces the reference counts differently), so sharing is exact.
//!
//! ```text
//! thread A: "name" → missed here → merged → remembered here
//! thread B: "name" → missed in its own memo → found here, no merge
//! ```

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};
use std::sync::Mutex;

use super::BuildFxHasher;
use super::bpe::MEMO_PIECES;

/// Maps, each behind its own lock, a piece's by its hash: walks on other threads rarely
/// wait for each other.
const SHARDS: usize = 16;

/// Counts of pieces by [`super::bpe::short_key`] (two to
/// [`super::bpe::SHORT_PIECE_BYTES`] bytes) and by their bytes (longer ones).
#[derive(Default)]
pub(super) struct SharedPieces {
    shards: [Mutex<Shard>; SHARDS],
}

#[derive(Default)]
struct Shard {
    short: HashMap<u128, u32, BuildFxHasher>,
    long: HashMap<Box<[u8]>, u32, BuildFxHasher>,
}

impl SharedPieces {
    fn shard<K: Hash + ?Sized>(&self, key: &K) -> std::sync::MutexGuard<'_, Shard> {
        let hash = BuildFxHasher::default().hash_one(key);
        self.shards[(hash >> 59) as usize % SHARDS]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The count of the short piece whose key is `key`: remembered, or `merge`d (outside
    /// the lock, so other walks go on meanwhile) and remembered.
    pub(super) fn short(&self, key: u128, merge: impl FnOnce() -> usize) -> usize {
        if let Some(&n) = self.shard(&key).short.get(&key) {
            return n as usize;
        }
        let n = merge();
        let mut shard = self.shard(&key);
        // Bounded: a shard that filled starts over (a long-lived door sees endless pieces).
        if shard.short.len() >= MEMO_PIECES {
            shard.short.clear();
        }
        shard.short.insert(key, n as u32);
        n
    }

    /// How many pieces are remembered (the tests look).
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| {
                let s = s.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                s.short.len() + s.long.len()
            })
            .sum()
    }

    /// [`Self::short`] for a longer piece, keyed by its bytes.
    pub(super) fn long(&self, piece: &[u8], merge: impl FnOnce() -> usize) -> usize {
        if let Some(&n) = self.shard(piece).long.get(piece) {
            return n as usize;
        }
        let n = merge();
        let mut shard = self.shard(piece);
        if shard.long.len() >= MEMO_PIECES {
            shard.long.clear();
        }
        shard.long.insert(piece.into(), n as u32);
        n
    }
}
