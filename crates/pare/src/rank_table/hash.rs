// The hash the rank tables are laid out by, and the slots' fields. `build.rs` includes
// this file too, so the table it writes and the lookups that read it cannot disagree.

/// FxHash's step (rustc's hasher): one 8-byte word into the state. The rank tables' hash
/// and the tokenizer's memo tables (`tokens::fx`) both take it from here.
#[inline]
pub(crate) fn step(h: u64, word: u64) -> u64 {
    (h.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95)
}

/// A multiply-rotate hash over 8-byte words (FxHash's step), seeded with the length.
#[inline]
pub(super) fn hash(bytes: &[u8]) -> u64 {
    let mut h = bytes.len() as u64;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let word = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        h = step(h, word);
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        h = step(h, u64::from_le_bytes(word));
    }
    // Fold the high bits down: the slot index takes the top bits, which the last
    // multiply mixes best, but short keys need the low word's bits there too.
    h ^ (h >> 29)
}

/// No rank: an empty entry of the pair table, and a pair no merge can make.
pub(super) const EMPTY: u32 = u32::MAX;
/// Tokens up to this many bytes are held in their slot.
pub(super) const INLINE: usize = 4;
/// Bits of a slot's rank field (bits 32 up).
pub(super) const RANK_BITS: u32 = 18;
/// Where a slot's check fields start: its length (8 bits), then six bits of its hash.
pub(super) const TAG_SHIFT: u32 = 32 + RANK_BITS;

/// A slot's check fields for a token of `len` bytes whose [`hash`] is `h`: its length
/// and six bits of its hash (bits 50–57 and 58–63), compared before any bytes are.
#[inline]
pub(super) fn tag(len: usize, h: u64) -> u64 {
    (len as u64 & 0xFF) << TAG_SHIFT | (h & 0x3F) << (TAG_SHIFT + 8)
}
