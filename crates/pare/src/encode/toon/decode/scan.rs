//! Byte scanners: delimited cells, JSON ends, quotes, braces.

use super::*;

/// `parseDelimitedValues`: split on the delimiter outside quotes, trimming spaces; quoted
/// cells stay quoted for [`parse_primitive`].
pub(super) fn split_delimited<'t>(input: &'t str, delimiter: u8, out: &mut Vec<&'t str>) {
    out.clear();
    let b = input.as_bytes();
    let mut start = 0;
    let mut in_quotes = false;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'\\' && in_quotes && i + 1 < b.len() {
            i += 2;
            continue;
        }
        if c == b'"' {
            in_quotes = !in_quotes;
        } else if c == delimiter && !in_quotes {
            out.push(trim_spaces(&input[start..i]));
            start = i + 1;
        }
        i += 1;
    }
    if start < b.len() || !out.is_empty() {
        out.push(trim_spaces(&input[start..]));
    }
}

/// [`split_delimited`] for the dialect's rows: a cell starting with `[` or `{` is JSON and
/// runs to its matching bracket (delimiters and quotes inside it don't count); an
/// unbalanced one is an error.
pub(super) fn split_dialect_cells<'t>(
    input: &'t str,
    delimiter: u8,
    out: &mut Vec<&'t str>,
) -> Result<(), Fail> {
    out.clear();
    let b = input.as_bytes();
    let mut start = 0;
    loop {
        let mut i = start;
        while b.get(i) == Some(&b' ') {
            i += 1;
        }
        if matches!(b.get(i), Some(b'[' | b'{')) {
            match find_json_end(b, i) {
                Some(end) => i = end + 1,
                None => {
                    return Err(fail_at(
                        &input[i..],
                        format!(
                            "unbalanced JSON in a cell: this '{}' is never closed",
                            char::from(b[i])
                        ),
                    ));
                }
            }
        }
        let mut in_quotes = false;
        while i < b.len() {
            let c = b[i];
            if c == b'\\' && in_quotes {
                i += 2;
                continue;
            }
            if c == b'"' {
                in_quotes = !in_quotes;
            } else if c == delimiter && !in_quotes {
                break;
            }
            i += 1;
        }
        let end = i.min(b.len());
        out.push(trim_spaces(&input[start..end]));
        if end == b.len() {
            return Ok(());
        }
        start = end + 1;
    }
}

/// The bracket closing the JSON array or object that opens at `start`, skipping strings
/// (the one loose scanner, [`crate::json::scan::container_end_loose`]).
pub(super) fn find_json_end(b: &[u8], start: usize) -> Option<usize> {
    crate::json::scan::container_end_loose(b, start).map(|end| end - 1)
}

/// A line inside a table is a row unless it has an unquoted ':' before any delimiter
/// (then it is the next `key: value` of the enclosing object).
pub(super) fn is_data_row(content: &str, delimiter: u8) -> bool {
    let b = content.as_bytes();
    let Some(colon) = find_unquoted(b, b':', 0) else {
        return true;
    };
    find_unquoted(b, delimiter, 0).is_some_and(|d| d < colon)
}

pub(super) fn is_array_header_content(content: &str) -> bool {
    trim_spaces(content).starts_with('[') && find_unquoted(content.as_bytes(), b':', 0).is_some()
}

pub(super) fn is_key_value_content(content: &str) -> bool {
    find_unquoted(content.as_bytes(), b':', 0).is_some()
}

/// The closing quote of the string opening at `start` (a quote), skipping escapes
/// ([`crate::json::scan::string_end_loose`]: the runs between quotes, backslashes and
/// control characters are skipped eight bytes at a time, and JSON cells' strings are most
/// of a dialect table's text).
pub(super) fn find_closing_quote(b: &[u8], start: usize) -> Option<usize> {
    crate::json::scan::string_end_loose(b, start).map(|end| end - 1)
}

/// The first `ch` at or after `start` outside quoted sections.
pub(super) fn find_unquoted(b: &[u8], ch: u8, start: usize) -> Option<usize> {
    unquoted_with_depth(b, start)
        .find(|&(_, c, _)| c == ch)
        .map(|(i, ..)| i)
}

/// The bytes of `b` from `start` that lie outside quoted names, each with the `{}` nesting
/// depth after it (inside quotes, a backslash escapes the next byte). Field lists and groups
/// are scanned this way.
pub(super) fn unquoted_with_depth(
    b: &[u8],
    start: usize,
) -> impl Iterator<Item = (usize, u8, i64)> + '_ {
    let mut i = start;
    let mut in_quotes = false;
    let mut depth: i64 = 0;
    std::iter::from_fn(move || {
        while i < b.len() {
            let c = b[i];
            if c == b'\\' && in_quotes && i + 1 < b.len() {
                i += 2;
                continue;
            }
            let at = i;
            i += 1;
            if c == b'"' {
                in_quotes = !in_quotes;
            } else if !in_quotes {
                match c {
                    b'{' => depth += 1,
                    b'}' => depth -= 1,
                    _ => {}
                }
                return Some((at, c, depth));
            }
        }
        None
    })
}

/// The `}` matching the `{` at `start`, ignoring braces inside quoted names.
pub(super) fn find_matching_brace(b: &[u8], start: usize) -> Option<usize> {
    unquoted_with_depth(b, start)
        .find(|&(_, c, depth)| c == b'}' && depth == 0)
        .map(|(i, ..)| i)
}

/// Spaces only: tabs and NBSP are part of a token (spec §12).
pub(super) fn trim_spaces(s: &str) -> &str {
    s.trim_matches(' ')
}

pub(super) fn trim_trailing_spaces(s: &str) -> &str {
    s.trim_end_matches(' ')
}
