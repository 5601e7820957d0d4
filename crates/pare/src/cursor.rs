//! The one cursor codec: every door's "next page" token, for shaped values and for packed
//! search results alike.
//!
//! A cursor is short and opaque: base62 of a 64-bit word that holds a check of the input and
//! of every setting that decides the pages (48 bits), and the page number (16 bits),
//! scrambled by a small Feistel permutation so that the cursors of successive pages don't
//! read as a counter (and nobody is tempted to edit one). Why a check instead of a random
//! id: the same input and settings give the same cursor in every process, so a door that
//! reads the input again (the CLI) needs no state, and a door that caches pages (the
//! proxies) can share them between replicas; a cursor used on another input or with other
//! settings is refused, not misread.
//!
//! ```
//! use pare::respond::cursor::{Cursor, check};
//! let c = Cursor { check: check([b"input".as_slice(), b"settings"]), page: 2 };
//! let text = c.encode();
//! assert!(text.len() <= 11);
//! assert_eq!(Cursor::decode(&text), Some(c));
//! ```

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const PAGE_BITS: u32 = 16;
const PAGE_MASK: u64 = (1 << PAGE_BITS) - 1;

/// The most pages one response can have (the page number's bits).
pub(crate) const MAX_PAGES: usize = PAGE_MASK as usize;

/// The longest cursor text: base62 of a 64-bit word.
pub const MAX_LEN: usize = 11;

/// Where the next page starts: the page number (1-based) and the check of what it pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cursor {
    /// 48 bits of [`check`] over the input and settings.
    pub check: u64,
    /// The page this cursor opens, 1-based.
    pub page: u16,
}

impl Cursor {
    /// The cursor as text: base62, at most [`MAX_LEN`] characters. Only the low 48 bits of
    /// `check` are kept.
    pub fn encode(self) -> String {
        let check = self.check & (u64::MAX >> PAGE_BITS);
        let mut word = scramble((check << PAGE_BITS) | u64::from(self.page));
        let mut digits = Vec::with_capacity(MAX_LEN);
        loop {
            digits.push(BASE62[(word % 62) as usize]);
            word /= 62;
            if word == 0 {
                break;
            }
        }
        digits.reverse();
        String::from_utf8(digits).expect("base62 digits are ASCII")
    }

    /// The cursor `text` names, or `None` when it is not one.
    pub fn decode(text: &str) -> Option<Cursor> {
        if text.is_empty() || text.len() > MAX_LEN {
            return None;
        }
        let mut word: u64 = 0;
        for b in text.bytes() {
            let digit = BASE62.iter().position(|&d| d == b)? as u64;
            word = word.checked_mul(62)?.checked_add(digit)?;
        }
        let word = unscramble(word);
        Some(Cursor {
            check: word >> PAGE_BITS,
            page: (word & PAGE_MASK) as u16,
        })
    }
}

/// A stable 48-bit check (FNV-1a) over `parts`: the same input and settings give the same
/// cursor in every process and on every machine. Each part is followed by a separator byte
/// that UTF-8 text never holds, so `["ab", "c"]` and `["a", "bc"]` differ.
pub fn check<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in part.iter().chain(&[0xff]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h & (u64::MAX >> PAGE_BITS)
}

const ROUND_KEYS: [u32; 4] = [0x9e37_79b9, 0x7f4a_7c15, 0x85eb_ca6b, 0xc2b2_ae35];

fn round(half: u32, key: u32) -> u32 {
    (half ^ key).wrapping_mul(0x2545_f491).rotate_left(13) ^ half.rotate_right(7)
}

/// A bijection on 64-bit words (a four-round Feistel network over the two halves).
fn scramble(word: u64) -> u64 {
    let (mut left, mut right) = ((word >> 32) as u32, word as u32);
    for key in ROUND_KEYS {
        (left, right) = (right, left ^ round(right, key));
    }
    (u64::from(left) << 32) | u64::from(right)
}

fn unscramble(word: u64) -> u64 {
    let (mut left, mut right) = ((word >> 32) as u32, word as u32);
    for key in ROUND_KEYS.iter().rev() {
        (left, right) = (right ^ round(left, *key), left);
    }
    (u64::from(left) << 32) | u64::from(right)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scramble_is_a_bijection_on_samples() {
        let mut x: u64 = 0x0123_4567_89ab_cdef;
        for _ in 0..10_000 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            assert_eq!(unscramble(scramble(x)), x);
        }
    }

    #[test]
    fn successive_pages_have_unrelated_cursors() {
        let a = Cursor { check: 77, page: 2 }.encode();
        let b = Cursor { check: 77, page: 3 }.encode();
        let common = a.bytes().zip(b.bytes()).filter(|(x, y)| x == y).count();
        assert!(common < 4, "{a} vs {b}");
        assert!(Cursor::decode("not a cursor!").is_none());
        assert!(Cursor::decode("").is_none());
        assert!(Cursor::decode("zzzzzzzzzzzz").is_none());
    }

    #[test]
    fn the_check_separates_parts() {
        assert_ne!(
            check([b"ab".as_slice(), b"c"]),
            check([b"a".as_slice(), b"bc"])
        );
        assert_eq!(check([b"x".as_slice()]), check([b"x".as_slice()]));
    }
}
