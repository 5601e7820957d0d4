//! The JSON writer: compact and pretty text exactly as `JSON.stringify` makes it.
//!
//! Why byte-for-byte `JSON.stringify`: what pare prints is compared with, and token-counted
//! against, what a JavaScript tool server would have sent, so whitespace and escaping must
//! not drift. The one deliberate difference is numbers, written as their lexeme (`1.50`
//! stays `1.50`, where JavaScript would print `1.5`).
//!
//! ```
//! use pare::json::{parse, to_compact, to_pretty, write_string};
//! let v = parse(r#"{"a":[1.50,"tab\there"],"b":{}}"#).unwrap();
//! assert_eq!(to_compact(&v), r#"{"a":[1.50,"tab\there"],"b":{}}"#);
//! assert_eq!(to_pretty(&v), "{\n  \"a\": [\n    1.50,\n    \"tab\\there\"\n  ],\n  \"b\": {}\n}");
//! let mut s = String::new();
//! write_string("\u{1b}/é", &mut s);
//! assert_eq!(s, r#""\u001b/é""#);
//! ```

use crate::value::Value;

use super::find_special;

/// `JSON.stringify(v)`, numbers as their lexeme.
pub fn to_compact(v: &Value) -> String {
    let mut out = String::new();
    write_compact(v, &mut out);
    out
}

/// `JSON.stringify(v, null, 2)`, numbers as their lexeme.
pub fn to_pretty(v: &Value) -> String {
    let mut out = String::new();
    write_pretty(v, &mut out);
    out
}

/// Append `JSON.stringify(v)` to `out`. Recurses once per nesting level (parsed values are
/// at most [`MAX_DEPTH`](super::MAX_DEPTH) deep).
pub fn write_compact(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => out.push_str(n.as_str()),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push('[');
            let mut first = true;
            for item in items {
                if !first {
                    out.push(',');
                }
                first = false;
                write_compact(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            let mut first = true;
            for (k, item) in map.iter() {
                if !first {
                    out.push(',');
                }
                first = false;
                write_string(k, out);
                out.push(':');
                write_compact(item, out);
            }
            out.push('}');
        }
    }
}

/// Append `JSON.stringify(v, null, 2)` to `out`: two-space indent, `"key": value`, empty
/// containers as `[]` and `{}`, no trailing newline.
pub fn write_pretty(v: &Value, out: &mut String) {
    pretty(v, out, 0);
}

fn pretty(v: &Value, out: &mut String, indent: usize) {
    match v {
        Value::Array(items) if !items.is_empty() => {
            out.push('[');
            let mut first = true;
            for item in items {
                out.push_str(if first { "\n" } else { ",\n" });
                first = false;
                push_indent(out, indent + 2);
                pretty(item, out, indent + 2);
            }
            out.push('\n');
            push_indent(out, indent);
            out.push(']');
        }
        Value::Object(map) if !map.is_empty() => {
            out.push('{');
            let mut first = true;
            for (k, item) in map.iter() {
                out.push_str(if first { "\n" } else { ",\n" });
                first = false;
                push_indent(out, indent + 2);
                write_string(k, out);
                out.push_str(": ");
                pretty(item, out, indent + 2);
            }
            out.push('\n');
            push_indent(out, indent);
            out.push('}');
        }
        // Scalars and empty containers print the same as in compact form.
        _ => write_compact(v, out),
    }
}

fn push_indent(out: &mut String, mut n: usize) {
    const SPACES: &str = "                                                                ";
    while n > SPACES.len() {
        out.push_str(SPACES);
        n -= SPACES.len();
    }
    out.push_str(&SPACES[..n]);
}

/// Append `s` as a JSON string literal, escaped as `JSON.stringify` does: `\"`, `\\`,
/// `\b \f \n \r \t`, other control characters as `\u00xx` (lowercase hex), everything
/// else (`/`, DEL, non-ASCII, U+2028) raw.
pub fn write_string(s: &str, out: &mut String) {
    let bytes = s.as_bytes();
    // Room for the common case (nothing to escape) at once, not run by run.
    out.reserve(s.len() + 2);
    out.push('"');
    let mut start = 0;
    loop {
        let i = find_special(bytes, start);
        // `i` is at an ASCII byte or the end, so both slices fall on character boundaries.
        out.push_str(&s[start..i]);
        let Some(&b) = bytes.get(i) else { break };
        push_escape(b, out);
        start = i + 1;
    }
    out.push('"');
}

/// The escape of `b`, a byte [`crate::scan::find_special`] stops at, as [`write_string`]
/// writes it.
pub fn push_escape(b: u8, out: &mut String) {
    out.push_str(&escape(b));
}

/// The escape of `b` as text (`\n`, `\u001f`): for a writer that is not a `String` (the
/// Python package writes `pare.dumps`'s text straight into a `bytes`).
pub fn escape(b: u8) -> Escape {
    let short = |pair: &[u8; 2]| Escape {
        bytes: [pair[0], pair[1], 0, 0, 0, 0],
        len: 2,
    };
    match b {
        b'"' => short(b"\\\""),
        b'\\' => short(b"\\\\"),
        b'\n' => short(b"\\n"),
        b'\r' => short(b"\\r"),
        b'\t' => short(b"\\t"),
        0x08 => short(b"\\b"),
        0x0c => short(b"\\f"),
        _ => {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            Escape {
                bytes: [
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(b >> 4)],
                    HEX[usize::from(b & 0xf)],
                ],
                len: 6,
            }
        }
    }
}

/// What [`escape`] gives: up to six ASCII bytes, read as a `str`.
#[derive(Clone, Copy)]
pub struct Escape {
    bytes: [u8; 6],
    len: u8,
}

impl std::ops::Deref for Escape {
    type Target = str;
    fn deref(&self) -> &str {
        // Only ASCII is ever put in (see `escape`); a failed check would be a bug here.
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;
    use crate::value::{Map, Number};

    fn lit(s: &str) -> String {
        let mut out = String::new();
        write_string(s, &mut out);
        out
    }

    #[test]
    fn string_escapes_match_json_stringify() {
        assert_eq!(lit(""), r#""""#);
        assert_eq!(lit("plain"), r#""plain""#);
        assert_eq!(lit("\"\\"), r#""\"\\""#);
        assert_eq!(lit("\u{8}\u{c}\n\r\t"), r#""\b\f\n\r\t""#);
        assert_eq!(
            lit("\0\u{1}\u{b}\u{1b}\u{1f}"),
            r#""\u0000\u0001\u000b\u001b\u001f""#
        );
        // raw: slash, space, DEL, non-ASCII, line/paragraph separators, astral
        assert_eq!(
            lit("/ \u{7f}é\u{2028}\u{2029}😀"),
            "\"/ \u{7f}é\u{2028}\u{2029}😀\""
        );
        // every control character, one at a time and inside long runs
        for b in 0u8..0x20 {
            let c = char::from(b);
            let want = match c {
                '\u{8}' => "\\b".to_owned(),
                '\u{c}' => "\\f".to_owned(),
                '\n' => "\\n".to_owned(),
                '\r' => "\\r".to_owned(),
                '\t' => "\\t".to_owned(),
                _ => format!("\\u{:04x}", b),
            };
            let pad = "é".repeat(usize::from(b));
            assert_eq!(
                lit(&format!("{pad}{c}{pad}")),
                format!("\"{pad}{want}{pad}\"")
            );
        }
    }

    #[test]
    fn compact_and_pretty_layout() {
        let v =
            parse(r#"{"a":[1,2.50,{"b":null}],"c":{},"d":[],"e":"x","f":[[]],"g":true}"#).unwrap();
        assert_eq!(
            to_compact(&v),
            r#"{"a":[1,2.50,{"b":null}],"c":{},"d":[],"e":"x","f":[[]],"g":true}"#
        );
        assert_eq!(
            to_pretty(&v),
            "{\n  \"a\": [\n    1,\n    2.50,\n    {\n      \"b\": null\n    }\n  ],\n  \"c\": {},\n  \
             \"d\": [],\n  \"e\": \"x\",\n  \"f\": [\n    []\n  ],\n  \"g\": true\n}"
        );
        assert_eq!(to_pretty(&Value::Null), "null");
        assert_eq!(to_pretty(&Value::from("a\nb")), r#""a\nb""#);
        assert_eq!(to_compact(&Value::Array(vec![])), "[]");
        assert_eq!(to_pretty(&Value::Object(Map::new())), "{}");
        let n = Value::Number(Number::from_lexeme("-1.0E+05").unwrap());
        assert_eq!(to_compact(&n), "-1.0E+05");
    }

    #[test]
    fn deep_indentation() {
        // deeper than one chunk of the indentation string
        let depth = 100;
        let text = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
        let pretty = to_pretty(&parse(&text).unwrap());
        let one = pretty.lines().find(|l| l.trim() == "1").unwrap();
        assert_eq!(one.len() - 1, 2 * depth);
        assert_eq!(parse(&pretty).unwrap(), parse(&text).unwrap());
    }

    #[test]
    fn writes_append() {
        let mut out = String::from("x=");
        write_compact(&Value::from(vec![Value::Null]), &mut out);
        write_pretty(&Value::from(vec![Value::Null]), &mut out);
        assert_eq!(out, "x=[null][\n  null\n]");
    }
}
