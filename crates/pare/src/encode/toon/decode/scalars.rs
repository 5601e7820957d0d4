//! Tokens: primitives, quoted strings and keys, numbers as JS reads them, inline JSON.

use super::*;

/// `parsePrimitiveToken`: a quoted string, `true`/`false`/`null`, a number, or else the
/// unquoted text itself.
/// With `exact` (the dialect), any JSON number lexeme is that number, as written.
pub(super) fn parse_primitive(token: &str, exact: bool) -> Result<Value, Fail> {
    let t = trim_spaces(token);
    if t.is_empty() {
        return Ok(Value::from(""));
    }
    if t.starts_with('"') {
        return parse_string_literal(t).map(Value::from);
    }
    Ok(match t {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        "null" => Value::Null,
        _ => match if exact {
            Number::from_lexeme(t)
        } else {
            js_number(t)
        } {
            Some(n) => Value::Number(n),
            None => Value::from(t),
        },
    })
}

/// A dialect value: inline JSON when it starts with `[` or `{`, else a primitive token
/// with exact numbers.
pub(super) fn dialect_value(token: &str, depth_left: usize) -> Result<Value, Fail> {
    let t = trim_spaces(token);
    if t.starts_with(['[', '{']) {
        parse_json(t, depth_left)
    } else {
        parse_primitive(t, true)
    }
}

/// Inline JSON (`text` is all of it), failing where the JSON parser does.
pub(super) fn parse_json(text: &str, depth_left: usize) -> Result<Value, Fail> {
    json::parse_with_max_depth(text, depth_left).map_err(|e| {
        let mut at = e.offset.min(text.len());
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        fail_at(&text[at..], format!("invalid inline JSON: {}", e.message))
    })
}

/// `isNumericLiteral` + `parseFloat`: the JSON number grammar (so `05`, `+1`, `.5`, `1.`
/// are strings), finite in f64 (so `1e999` is a string), negative zero as `0`.
pub(super) fn js_number(t: &str) -> Option<Number> {
    if !t.starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
        return None;
    }
    let n = Number::from_lexeme(t)?;
    let zero = || Number::from_i64(0);
    if !t.contains(['e', 'E']) && t.len() <= 300 {
        // Under 10^300 without an exponent: finite, and zero only if every digit is.
        if t.starts_with('-') && t.bytes().all(|b| matches!(b, b'-' | b'0' | b'.')) {
            return Some(zero());
        }
        return Some(n);
    }
    let f: f64 = t.parse().ok()?;
    if !f.is_finite() {
        return None;
    }
    if f == 0.0 && f.is_sign_negative() {
        return Some(zero());
    }
    Some(n)
}

/// `parseStringLiteral`: a quoted token unescaped (nothing may follow the closing quote),
/// an unquoted one as is; both trimmed of spaces.
pub(super) fn parse_string_literal(token: &str) -> Result<String, Fail> {
    let t = trim_spaces(token);
    if !t.starts_with('"') {
        return Ok(t.to_owned());
    }
    let Some(close) = find_closing_quote(t.as_bytes(), 0) else {
        return Err(fail_after(
            t,
            "unterminated string: expected a closing '\"'",
        ));
    };
    if close != t.len() - 1 {
        return Err(fail_at(
            &t[close + 1..],
            "expected the end of the value after the closing quote",
        ));
    }
    unescape(&t[1..close])
}

/// `parseKeyToken`: the key of a `key: ...` line and where its value starts.
pub(super) fn parse_key_token(content: &str) -> Result<(String, usize), Fail> {
    let b = content.as_bytes();
    if b.first() == Some(&b'"') {
        let Some(close) = find_closing_quote(b, 0) else {
            return Err(fail_after(
                content,
                "unterminated quoted key: expected a closing '\"'",
            ));
        };
        let key = unescape(&content[1..close])?;
        let mut pos = close + 1;
        while b.get(pos) == Some(&b' ') {
            pos += 1;
        }
        if b.get(pos) != Some(&b':') {
            return Err(fail_at(&content[pos..], "expected ':' after key"));
        }
        return Ok((key, pos + 1));
    }
    match find_unquoted(b, b':', 0) {
        Some(colon) => Ok((trim_spaces(&content[..colon]).to_owned(), colon + 1)),
        None => Err(fail_after(content, "expected ':' after key")),
    }
}

/// The text between quotes with `\n \t \r \\ \" \uXXXX` resolved; anything else is an error.
pub(super) fn unescape(s: &str) -> Result<String, Fail> {
    if !s.contains('\\') {
        return Ok(s.to_owned());
    }
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut run = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        out.push_str(&s[run..i]);
        let Some(&next) = b.get(i + 1) else {
            return Err(fail_at(
                &s[i..],
                "invalid escape: backslash at the end of the string",
            ));
        };
        let c = match next {
            b'n' => '\n',
            b't' => '\t',
            b'r' => '\r',
            b'\\' => '\\',
            b'"' => '"',
            b'u' => {
                let hex = b.get(i + 2..i + 6).unwrap_or(&[]);
                if hex.len() < 4 || !hex.iter().all(u8::is_ascii_hexdigit) {
                    return Err(fail_at(
                        &s[i..],
                        "invalid escape: expected 4 hex digits after \\u",
                    ));
                }
                let code = hex.iter().fold(0u32, |acc, &h| {
                    acc * 16 + char::from(h).to_digit(16).unwrap_or(0)
                });
                let Some(c) = char::from_u32(code) else {
                    return Err(fail_at(
                        &s[i..],
                        format!(
                            "invalid escape: \\u{code:04X} is a lone surrogate (characters \
                             outside the BMP must appear as literal UTF-8)"
                        ),
                    ));
                };
                out.push(c);
                i += 6;
                run = i;
                continue;
            }
            _ => {
                let shown = s[i + 1..].chars().next().unwrap_or('?');
                return Err(fail_at(
                    &s[i..],
                    format!(
                        "invalid escape \\{shown}: expected one of \\n \\t \\r \\\\ \\\" \\uXXXX"
                    ),
                ));
            }
        };
        out.push(c);
        i += 2;
        run = i;
    }
    out.push_str(&s[run..]);
    Ok(out)
}
