//! Python literal reprs (`str(rows)` of lists and dicts), read into a [`Value`] and printed
//! back by Python's own `repr` rules.
//!
//! Why: many Python MCP servers return `str(result)` instead of JSON — single-quoted
//! strings, `True`/`False`/`None` — and a model pays for that as for JSON. pare shapes such a
//! text only when it can read it back *exactly*: [`parse_leading`] is lenient about layout,
//! and the caller accepts a value only when [`to_repr`] prints the very same text. What
//! `repr` would print differently, or what pare cannot be sure how Python prints (tuples,
//! sets, `inf`, a character whose printability depends on the Python version), is refused,
//! and the text passes unchanged.
//!
//! ```
//! use pare::embedded::py_repr::{parse_leading, to_repr};
//! let text = "[{'id': 1, 'name': \"O'Brien\", 'ok': True, 'note': None, 'x': 1e-05}]";
//! let (value, end) = parse_leading(text).unwrap();
//! assert_eq!(end, text.len());
//! assert_eq!(pare::json::to_compact(&value), r#"[{"id":1,"name":"O'Brien","ok":true,"note":null,"x":1e-05}]"#);
//! assert_eq!(to_repr(&value).as_deref(), Some(text));
//! ```

use crate::value::{Map, Number, Str, Value};

/// Deepest nesting read: hostile input must not overflow the stack.
pub const MAX_DEPTH: usize = 128;

/// Why a text is not a Python literal pare reads (the offset is where reading stopped).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a Python literal pare reads: {what} at byte {at}")]
pub struct ReprError {
    /// Byte offset into the text where reading stopped.
    pub at: usize,
    /// What was expected or found there, e.g. `expected ':'` or `a tuple`.
    pub what: &'static str,
}

/// One list or dict at the start of `text` and the byte offset just after it.
pub fn parse_leading(text: &str) -> Result<(Value, usize), ReprError> {
    let mut p = Parser {
        b: text.as_bytes(),
        text,
        pos: 0,
        depth: MAX_DEPTH,
    };
    match p.peek() {
        Some(b'[' | b'{') => {}
        _ => return Err(p.fail("expected '[' or '{'")),
    }
    let v = p.value()?;
    Ok((v, p.pos))
}

/// `repr(v)` as Python prints it, or `None` when pare cannot be sure of Python's text: a
/// number that is not the repr of an `int` or a `float`, or a character whose
/// printability (raw or escaped) depends on the Unicode version of the Python.
pub fn to_repr(v: &Value) -> Option<String> {
    let mut out = String::new();
    write(v, &mut out)?;
    Some(out)
}

fn write(v: &Value, out: &mut String) -> Option<()> {
    match v {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(n) => out.push_str(number_repr(n)?),
        Value::String(s) => write_str(s, out)?,
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write(item, out)?;
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, (k, item)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_str(k, out)?;
                out.push_str(": ");
                write(item, out)?;
            }
            out.push('}');
        }
    }
    Some(())
}

/// The lexeme itself when it is what Python prints for an `int` or a `float`.
fn number_repr(n: &Number) -> Option<&str> {
    let s = n.as_str();
    let digits = s.strip_prefix('-').unwrap_or(s);
    let is_int = digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'))
        && s != "-0";
    if is_int {
        return Some(s);
    }
    let f: f64 = s.parse().ok()?;
    (f.is_finite() && float_repr(f) == s).then_some(s)
}

/// Python's `repr(float)`: the shortest digits that read back, in positional notation when
/// the decimal exponent is in -4..16 (always with a fractional part, `1.0`), else as
/// `d.ddde±XX` with at least two exponent digits (`1e+16`, `1.5e-05`).
pub fn float_repr(f: f64) -> String {
    // `{:e}` gives the shortest round-trip digits, like Python's, as `d.ddde[-]X`.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').expect("`{:e}` has an exponent");
    let exp: i32 = exp.parse().expect("`{:e}` has an integer exponent");
    let digits: String = mantissa.chars().filter(|&c| c != '.').collect();
    let sign = if f.is_sign_negative() { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let point = exp + 1; // digits before the decimal point
        let body = if point <= 0 {
            format!("0.{}{digits}", "0".repeat(point.unsigned_abs() as usize))
        } else {
            let point = point as usize;
            if digits.len() > point {
                format!("{}.{}", &digits[..point], &digits[point..])
            } else {
                format!("{digits}{}.0", "0".repeat(point - digits.len()))
            }
        };
        format!("{sign}{body}")
    } else {
        let exp_sign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{mantissa}e{exp_sign}{:02}", exp.unsigned_abs())
    }
}

/// Python's `repr(str)`: single quotes unless the string holds `'` and no `"`; `\\`, the
/// quote, `\t`, `\n`, `\r` escaped; other unprintable characters as `\xhh`, `\uhhhh` or
/// `\Uhhhhhhhh`. `None` for a character [`printable`] cannot decide.
fn write_str(s: &str, out: &mut String) -> Option<()> {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            ' '..='\u{7e}' => out.push(c),
            c if u32::from(c) < 0x80 => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            c if printable(c)? => out.push(c),
            c => {
                let n = u32::from(c);
                let escaped = match n {
                    0..=0xff => format!("\\x{n:02x}"),
                    0x100..=0xffff => format!("\\u{n:04x}"),
                    _ => format!("\\U{n:08x}"),
                };
                out.push_str(&escaped);
            }
        }
    }
    out.push(quote);
    Some(())
}

/// Whether Python's `str.isprintable` holds for a non-ASCII character, in every Python 3
/// from 3.6 on: `Some` only for blocks whose characters have been assigned, and their
/// category fixed, since Unicode 9. Anything else is `None`: pare cannot know whether the
/// server's Python printed it raw or escaped, so it does not claim to read it back.
fn printable(c: char) -> Option<bool> {
    const YES: &[(u32, u32)] = &[
        (0xa1, 0xac),
        (0xae, 0x24f),      // Latin-1 letters and signs, Latin Extended-A and -B
        (0x300, 0x36f),     // combining diacritical marks (printable in Python)
        (0x391, 0x3a1),     // Greek capitals
        (0x3a3, 0x3a9),     //
        (0x3b1, 0x3c9),     // Greek small letters
        (0x400, 0x45f),     // Cyrillic
        (0x5d0, 0x5ea),     // Hebrew letters
        (0x2010, 0x2027),   // dashes, quotes, bullets, ellipsis
        (0x20a0, 0x20b9),   // currency signs (€)
        (0x2190, 0x21ff),   // arrows
        (0x2200, 0x22ff),   // mathematical operators
        (0x2500, 0x25ff),   // box drawing, blocks, geometric shapes
        (0x2600, 0x2613),   // ☀ ☁ ★ …
        (0x2713, 0x2718),   // check marks
        (0x3001, 0x3003),   // CJK punctuation
        (0x3008, 0x3011),   // CJK brackets
        (0x3041, 0x3096),   // Hiragana
        (0x30a1, 0x30fa),   // Katakana
        (0x30fc, 0x30fc),   //
        (0x4e00, 0x9fd5),   // CJK unified ideographs (as of Unicode 8)
        (0xac00, 0xd7a3),   // Hangul syllables
        (0xff01, 0xff5e),   // fullwidth forms
        (0xfffd, 0xfffd),   // replacement character
        (0x1f300, 0x1f5ff), // pictographs (🎉)
        (0x1f600, 0x1f64f), // emoticons
    ];
    const NO: &[(u32, u32)] = &[
        (0x80, 0xa0),        // C1 controls, no-break space
        (0xad, 0xad),        // soft hyphen (format)
        (0x2000, 0x200f),    // spaces, zero-width and direction marks
        (0x2028, 0x202f),    // line and paragraph separators, embeddings, narrow space
        (0x205f, 0x206f),    // math space, invisible operators, isolates
        (0x3000, 0x3000),    // ideographic space
        (0xd800, 0xf8ff),    // private use (surrogates never reach a `char`)
        (0xfeff, 0xfeff),    // byte order mark
        (0xfff9, 0xfffb),    // interlinear annotation
        (0xfffe, 0xffff),    // noncharacters
        (0xf0000, 0x10ffff), // private use planes
    ];
    let n = u32::from(c);
    let within = |ranges: &[(u32, u32)]| ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(&n));
    if within(YES) {
        Some(true)
    } else if within(NO) {
        Some(false)
    } else {
        None
    }
}

struct Parser<'t> {
    text: &'t str,
    b: &'t [u8],
    pos: usize,
    depth: usize,
}

impl Parser<'_> {
    fn fail(&self, what: &'static str) -> ReprError {
        ReprError { at: self.pos, what }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    /// Spaces only: `repr` writes no other whitespace, and a newline inside would mean
    /// something else than a one-line repr.
    fn skip_spaces(&mut self) {
        while self.peek() == Some(b' ') {
            self.pos += 1;
        }
    }

    fn value(&mut self) -> Result<Value, ReprError> {
        match self.peek() {
            Some(b'[') => self.list(),
            Some(b'{') => self.dict(),
            Some(b'\'' | b'"') => self.string().map(Value::String),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b'N') => self.word("None", Value::Null),
            Some(b'T') => self.word("True", Value::Bool(true)),
            Some(b'F') => self.word("False", Value::Bool(false)),
            Some(b'(') => Err(self.fail("a tuple")),
            Some(_) => Err(self.fail("expected a value")),
            None => Err(self.fail("unexpected end")),
        }
    }

    fn word(&mut self, word: &str, v: Value) -> Result<Value, ReprError> {
        if self.b[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(v)
        } else {
            Err(self.fail("an unknown name"))
        }
    }

    fn descend(&mut self) -> Result<(), ReprError> {
        self.depth = self
            .depth
            .checked_sub(1)
            .ok_or_else(|| self.fail("nesting too deep"))?;
        self.pos += 1; // the opening bracket
        self.skip_spaces();
        Ok(())
    }

    /// After an item: `,` (then more, or the close) or the close itself. True when closed.
    fn next_or_close(&mut self, close: u8) -> Result<bool, ReprError> {
        self.skip_spaces();
        match self.peek() {
            Some(b',') => {
                self.pos += 1;
                self.skip_spaces();
                Ok(false)
            }
            Some(b) if b == close => Ok(true),
            Some(_) => Err(self.fail("expected ',' or a closing bracket")),
            None => Err(self.fail("unexpected end")),
        }
    }

    fn list(&mut self) -> Result<Value, ReprError> {
        self.descend()?;
        let mut items = Vec::new();
        while self.peek() != Some(b']') {
            items.push(self.value()?);
            if self.next_or_close(b']')? {
                break;
            }
        }
        self.pos += 1;
        self.depth += 1;
        Ok(Value::Array(items))
    }

    fn dict(&mut self) -> Result<Value, ReprError> {
        self.descend()?;
        let mut m = Map::new();
        while self.peek() != Some(b'}') {
            let key = match self.peek() {
                Some(b'\'' | b'"') => self.string()?,
                _ => return Err(self.fail("a key that is not a string, or a set")),
            };
            self.skip_spaces();
            if self.peek() != Some(b':') {
                return Err(self.fail("expected ':'"));
            }
            self.pos += 1;
            self.skip_spaces();
            // A repeated key keeps one value: the printed text then differs and is refused.
            m.insert(key, self.value()?);
            if self.next_or_close(b'}')? {
                break;
            }
        }
        self.pos += 1;
        self.depth += 1;
        Ok(Value::Object(m))
    }

    /// A lexeme of digits, `.`, `e`, signs; kept as the JSON number it is when JSON can
    /// hold it (whether it is Python's repr is [`to_repr`]'s question).
    fn number(&mut self) -> Result<Value, ReprError> {
        let start = self.pos;
        while let Some(b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-' | b'_') = self.peek() {
            self.pos += 1;
        }
        Number::from_lexeme(&self.text[start..self.pos])
            .map(Value::Number)
            .ok_or(ReprError {
                at: start,
                what: "a number JSON cannot hold",
            })
    }

    /// A quoted string with the escapes `repr` writes (`\\ \' \" \t \n \r \xhh \uhhhh
    /// \Uhhhhhhhh`); no prefixes, no raw newlines.
    fn string(&mut self) -> Result<Str, ReprError> {
        let quote = self.b[self.pos];
        self.pos += 1;
        let mut out = String::new();
        loop {
            let run = self.pos;
            while let Some(b) = self.peek()
                && b != quote
                && b != b'\\'
                && b != b'\n'
                && b != b'\r'
            {
                self.pos += 1;
            }
            // The stops are ASCII, so the run ends on a char boundary.
            out.push_str(&self.text[run..self.pos]);
            match self.peek() {
                Some(b) if b == quote => {
                    self.pos += 1;
                    return Ok(Str::from(out));
                }
                Some(b'\\') => out.push(self.escape()?),
                Some(_) => return Err(self.fail("a line break in a string")),
                None => return Err(self.fail("an unterminated string")),
            }
        }
    }

    fn escape(&mut self) -> Result<char, ReprError> {
        let c = match self.b.get(self.pos + 1) {
            Some(b'\\') => '\\',
            Some(b'\'') => '\'',
            Some(b'"') => '"',
            Some(b't') => '\t',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(&x @ (b'x' | b'u' | b'U')) => {
                let len = match x {
                    b'x' => 2,
                    b'u' => 4,
                    _ => 8,
                };
                let hex = self
                    .text
                    .get(self.pos + 2..self.pos + 2 + len)
                    .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
                    .ok_or_else(|| self.fail("a bad hex escape"))?;
                let c = u32::from_str_radix(hex, 16)
                    .ok()
                    .and_then(char::from_u32)
                    .ok_or_else(|| self.fail("a surrogate or out-of-range escape"))?;
                self.pos += 2 + len;
                return Ok(c);
            }
            _ => return Err(self.fail("an escape repr does not write")),
        };
        self.pos += 2;
        Ok(c)
    }
}

#[cfg(test)]
mod tests;
