//! The opt-in envelope line and the page cursor (seed 004 §4.4, scenario S5).
//!
//! The envelope is one compact JSON line before the chunks: what the reader gets (mode,
//! tokenizer, the exact tokens of this whole response, the budget), what was cut, whether
//! there is more (`has_more`, `next_cursor`, `total`) and warnings about a client's limit:
//!
//! ```text
//! {"mode":"full","tokenizer":"o200k_base","tokens":796,"budget":800,"cut":true,"degraded":3,"left_out":14,"has_more":true,"next_cursor":"3bWq0Kd7nF","page":1,"total":60}
//! ```
//!
//! A cursor is short and opaque: base62 of a 64-bit word holding a check of the response and
//! settings (so a cursor used on another response is refused, not misread) and the page,
//! scrambled by a small Feistel permutation so that the cursors of successive pages don't
//! read as a counter (and nobody is tempted to edit one).
//!
//! ```
//! use pare::pack::envelope::Cursor;
//! let c = Cursor { check: 0xdead_beef_42, page: 2 };
//! let text = c.encode();
//! assert!(text.len() <= 11);
//! assert_eq!(Cursor::decode(&text), Some(c));
//! ```

use serde::Serialize;

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const PAGE_BITS: u32 = 16;
const PAGE_MASK: u64 = (1 << PAGE_BITS) - 1;

/// Where the next page starts: the page number (1-based) and the check of what it pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    /// 48 bits of [`check`] over the chunks and settings.
    pub check: u64,
    pub page: u16,
}

impl Cursor {
    pub fn encode(self) -> String {
        let check = self.check & (u64::MAX >> PAGE_BITS);
        let mut word = scramble((check << PAGE_BITS) | u64::from(self.page));
        let mut digits = Vec::new();
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
        if text.is_empty() || text.len() > 11 {
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
    }
}

/// A stable 48-bit check (FNV-1a) over `parts`: the same input and settings give the same
/// cursor in every process and on every machine.
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

/// The envelope's fields, in the order they are printed.
#[derive(Debug, Clone, Serialize)]
pub struct Envelope {
    pub mode: String,
    pub tokenizer: String,
    /// Tokens of the whole response, this line included.
    pub tokens: usize,
    pub budget: usize,
    /// Whether any chunk shows less than its level allows, or is left out.
    pub cut: bool,
    /// Chunks shown at a lower tier than their level allows, to fit the budget.
    pub degraded: usize,
    /// Chunks not on this page.
    pub left_out: usize,
    pub has_more: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    pub page: usize,
    pub total: usize,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl Envelope {
    pub fn line(&self) -> String {
        serde_json::to_string(self).expect("the envelope serializes")
    }
}

/// Warnings about a client's per-result limit: for this response (`tokens`, `chars`) and
/// for what it would have been unpacked (`full_tokens`).
pub fn limit_warnings(
    limit: usize,
    tokens: usize,
    chars: usize,
    full_tokens: usize,
) -> Vec<String> {
    let estimate = chars.div_ceil(4);
    let mut out = Vec::new();
    if tokens > limit || estimate > limit {
        out.push(format!(
            "this response is {tokens} tokens ({estimate} by chars/4), over a client's \
             {limit}-token limit"
        ));
    }
    if full_tokens > limit {
        out.push(format!(
            "unpacked, the response would be {full_tokens} tokens, over a client's \
             {limit}-token limit"
        ));
    }
    out
}
