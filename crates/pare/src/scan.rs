//! Scanning JSON text without building a value: where a string, a container or a value
//! ends, and where a string's raw runs end ([`find_special`], which the parser and the
//! writer use too). It sits below `json` and `query` (which read `\u` escapes with
//! [`hex4`]). One module for every door that skips JSON it does not decode (the MCP proxy
//! copies the members it leaves alone byte for byte; its tolerant look at messages that
//! are not strict JSON) and for the TOON decoder's JSON cells, so they cannot drift apart.
//!
//! Two kinds of scan:
//! - **Strict** ([`string_end`], [`value_end`]): RFC 8259 as `serde_json` takes it —
//!   escapes checked, surrogates paired, no control characters in strings, nesting
//!   bounded. Anything else is `None`, and the caller reads the text the general way.
//! - **Loose** ([`string_end_loose`], [`container_end_loose`]): quotes, backslashes and
//!   brackets only, for text that may not be strict JSON (a lone surrogate escape, bytes
//!   that are not UTF-8) or that a caller has already parsed.
//!
//! ```
//! use pare::scan;
//! let text = br#"{"a":[1,"]"],"b":"\u00e9"} tail"#;
//! assert_eq!(scan::value_end(text, 0, 128), Some(26));
//! assert_eq!(scan::container_end_loose(text, 0), Some(26));
//! assert_eq!(scan::hex4(b"00e9", 0), Some(0xE9));
//! ```

/// Index of the first byte at or after `i` that is `"`, `\` or a control character
/// (< 0x20), or `bytes.len()` if there is none. These are the only bytes a JSON string
/// cannot hold raw, so the parser, the writer and `pare mcp`'s message walker copy or skip
/// the runs in between wholesale.
/// Eight bytes at a time with the usual SWAR zero-byte tests: a borrow only propagates
/// upward from a real match, so the lowest flagged byte is always a real one.
#[inline]
pub fn find_special(bytes: &[u8], mut i: usize) -> usize {
    while let Some(chunk) = bytes.get(i..).and_then(<[u8]>::first_chunk::<8>) {
        let hits = special_bytes(u64::from_le_bytes(*chunk));
        if hits != 0 {
            return i + (hits.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    // The last 0–7 bytes, as one word padded with a plain byte: most strings a writer
    // writes are short, and a byte-by-byte loop over their tails was its hottest line.
    let hits = special_bytes(short_word(bytes.get(i..).unwrap_or_default(), b'A'));
    if hits != 0 {
        return i + (hits.trailing_zeros() / 8) as usize;
    }
    bytes.len()
}

/// Up to 7 bytes as a little-endian word, the rest filled with `pad`: loaded as 4, 2 and 1
/// bytes, by the bits of the length (a copy of a variable length was a call to `memcpy`).
#[inline]
pub fn short_word(t: &[u8], pad: u8) -> u64 {
    debug_assert!(t.len() < 8);
    let mut x = u64::from_le_bytes([pad; 8]);
    let mut at = 0;
    for width in [4usize, 2, 1] {
        if t.len() & width != 0 {
            let mut part = 0u64;
            for (k, &b) in t[at..at + width].iter().enumerate() {
                part |= u64::from(b) << (8 * k);
            }
            let mask = (u64::MAX >> (64 - 8 * width)) << (8 * at);
            x = (x & !mask) | (part << (8 * at));
            at += width;
        }
    }
    x
}

/// Whether byte `b` is one a JSON string cannot hold raw (what [`find_special`] stops at).
#[inline]
pub fn is_special(b: u8) -> bool {
    SPECIAL[usize::from(b)]
}

/// `SPECIAL[b]`: is byte `b` one that [`find_special`] stops at.
static SPECIAL: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = true;
        b += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// The high bit of each byte of `x` that is `"`, `\` or below 0x20 (exact for the lowest
/// such byte; bytes above it may be flagged spuriously). Public for a door that writes
/// strings as the engine does while copying them (`pare-py`'s converter).
#[inline]
pub fn special_bytes(x: u64) -> u64 {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let quote = x ^ (LO * u64::from(b'"'));
    let backslash = x ^ (LO * u64::from(b'\\'));
    let hits = (quote.wrapping_sub(LO) & !quote)
        | (backslash.wrapping_sub(LO) & !backslash)
        | (x.wrapping_sub(LO * 0x20) & !x);
    hits & HI
}

/// The index of the first byte at or after `i` that is not JSON whitespace (space, tab,
/// LF, CR).
pub fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// The four hex digits at `at` (a `\u` escape's) as a number; `None` unless all four are
/// there and hex.
pub fn hex4(b: &[u8], at: usize) -> Option<u32> {
    let digits = b.get(at..at.checked_add(4)?)?;
    digits.iter().try_fold(0, |n, &d| {
        let v = (d as char).to_digit(16)?;
        Some(n << 4 | v)
    })
}

/// Strict: the index after the closing quote of the string whose opening quote is at `i`.
pub fn string_end(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let mut j = i + 1;
    loop {
        // The run up to a quote, a backslash or a control character, skipped whole.
        j = find_special(b, j);
        match *b.get(j)? {
            b'"' => return Some(j + 1),
            b'\\' => j = escape_end(b, j)?,
            c if c < 0x20 => return None,
            _ => j += 1,
        }
    }
}

/// The end of the escape at `j` (a backslash); a surrogate must come in a pair.
fn escape_end(b: &[u8], j: usize) -> Option<usize> {
    match *b.get(j + 1)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(j + 2),
        b'u' => match hex4(b, j + 2)? {
            0xD800..=0xDBFF => {
                let low = (b.get(j + 6) == Some(&b'\\') && b.get(j + 7) == Some(&b'u'))
                    .then(|| hex4(b, j + 8))
                    .flatten()?;
                (0xDC00..=0xDFFF).contains(&low).then_some(j + 12)
            }
            0xDC00..=0xDFFF => None,
            _ => Some(j + 6),
        },
        _ => None,
    }
}

/// Strict: the end of the value starting at `i` (no whitespace before it), containers
/// nested at most `max_depth` deep.
pub fn value_end(b: &[u8], i: usize, max_depth: usize) -> Option<usize> {
    value_end_at(b, i, 0, max_depth)
}

fn value_end_at(b: &[u8], i: usize, depth: usize, max_depth: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => string_end(b, i),
        b'{' | b'[' if depth >= max_depth => None,
        b'{' => {
            let mut j = skip_ws(b, i + 1);
            if b.get(j) == Some(&b'}') {
                return Some(j + 1);
            }
            loop {
                j = skip_ws(b, string_end(b, j)?);
                if b.get(j) != Some(&b':') {
                    return None;
                }
                j = skip_ws(b, value_end_at(b, skip_ws(b, j + 1), depth + 1, max_depth)?);
                match b.get(j)? {
                    b',' => j = skip_ws(b, j + 1),
                    b'}' => return Some(j + 1),
                    _ => return None,
                }
            }
        }
        b'[' => {
            let mut j = skip_ws(b, i + 1);
            if b.get(j) == Some(&b']') {
                return Some(j + 1);
            }
            loop {
                j = skip_ws(b, value_end_at(b, j, depth + 1, max_depth)?);
                match b.get(j)? {
                    b',' => j = skip_ws(b, j + 1),
                    b']' => return Some(j + 1),
                    _ => return None,
                }
            }
        }
        b't' => literal(b, i, b"true"),
        b'f' => literal(b, i, b"false"),
        b'n' => literal(b, i, b"null"),
        _ => number_end(b, i),
    }
}

fn literal(b: &[u8], i: usize, word: &[u8]) -> Option<usize> {
    b[i..].starts_with(word).then_some(i + word.len())
}

/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
fn number_end(b: &[u8], mut i: usize) -> Option<usize> {
    let digits = |b: &[u8], i: usize| {
        let n = b[i.min(b.len())..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        (n > 0).then_some(i + n)
    };
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    i = match b.get(i)? {
        b'0' => i + 1,
        b'1'..=b'9' => digits(b, i)?,
        _ => return None,
    };
    if b.get(i) == Some(&b'.') {
        i = digits(b, i + 1)?;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        i = digits(b, i)?;
    }
    Some(i)
}

/// Loose: the index of the first byte at or after `i` that is not ASCII whitespace (form
/// feed included, which JSON does not allow).
pub fn skip_ws_loose(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// Loose: the index after the closing quote of the string whose opening quote is at `i`;
/// a backslash skips the byte after it, nothing else is checked.
pub fn string_end_loose(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let mut j = i + 1;
    loop {
        j = find_special(b, j);
        match b.get(j)? {
            b'\\' => j += 2,
            b'"' => return Some(j + 1),
            // A control character: not a delimiter here.
            _ => j += 1,
        }
    }
}

/// Loose: the index after the bracket that closes the container opening at `i` (`{` or
/// `[`), brackets counted outside strings ([`string_end_loose`]); their kinds are not
/// checked to match.
pub fn container_end_loose(b: &[u8], i: usize) -> Option<usize> {
    if !matches!(b.get(i), Some(b'{' | b'[')) {
        return None;
    }
    let mut depth = 0usize;
    let mut j = i;
    while j < b.len() {
        match b[j] {
            b'"' => {
                j = string_end_loose(b, j)?;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(j + 1);
                }
            }
            _ => {}
        }
        j += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_special_finds_the_first_special_byte_at_every_length_and_place() {
        let naive =
            |b: &[u8], i: usize| (i..b.len()).find(|&j| is_special(b[j])).unwrap_or(b.len());
        for len in 0..20 {
            for at in 0..=len {
                for special in [b'"', b'\\', 0u8, 0x1f, b'\n'] {
                    // Plain bytes of every kind around it, non-ASCII included.
                    let mut b: Vec<u8> = (0..len)
                        .map(|k| [b'a', 0x20, 0x7f, 0xc3, 0xa9, b'!'][k % 6])
                        .collect();
                    if at < len {
                        b[at] = special;
                    }
                    for start in 0..=len {
                        assert_eq!(
                            find_special(&b, start),
                            naive(&b, start),
                            "{b:?} from {start}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn hex4_reads_four_hex_digits_or_nothing() {
        assert_eq!(hex4(b"\\u00e9", 2), Some(0xE9));
        assert_eq!(hex4(b"DBFF", 0), Some(0xDBFF));
        assert_eq!(hex4(b"00g0", 0), None);
        assert_eq!(hex4(b"00e", 0), None);
        assert_eq!(hex4(b"00e9", usize::MAX - 1), None);
    }

    #[test]
    fn strict_and_loose_ends_agree_on_strict_json_and_differ_where_they_should() {
        for text in [
            &br#""a\"b" "#[..],
            br#"{"a":[1,"]",{"b":null}],"c":-1.5e3} "#,
            br#"[] "#,
            br#"["\ud83d\ude00"] "#,
        ] {
            let end = text.len() - 1;
            assert_eq!(value_end(text, 0, 128), Some(end), "{text:?}");
            let loose = match text[0] {
                b'"' => string_end_loose(text, 0),
                _ => container_end_loose(text, 0),
            };
            assert_eq!(loose, Some(end), "{text:?}");
        }
        // A lone surrogate: not strict JSON, but its end is found loosely.
        let lone = br#"["\ud800"]"#;
        assert_eq!(value_end(lone, 0, 128), None);
        assert_eq!(container_end_loose(lone, 0), Some(lone.len()));
        // Nesting past the bound, a control character, a bad number: strict says no.
        assert_eq!(value_end(b"[[[1]]]", 0, 2), None);
        assert_eq!(value_end(b"[[[1]]]", 0, 3), Some(7));
        assert_eq!(value_end(b"\"a\x01\"", 0, 8), None);
        assert_eq!(value_end(b"012", 0, 8), Some(1));
        assert_eq!(value_end(b"-", 0, 8), None);
        assert_eq!(container_end_loose(b"[1,2", 0), None);
    }
}
