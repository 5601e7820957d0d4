//! Array headers: `key[N]:`, `key[N|]{a,b{c,d}}:`, keyed `key[N:]{fields}:`, and the
//! dialect's `name=value` constant fields.

use super::*;

/// A parsed array header: `key[N<delim>]{fields}: inline`, or keyed `key[N:<delim>]{fields}:`.
#[derive(Debug)]
pub(super) struct Header<'a> {
    pub(super) key: Option<String>,
    /// The declared count; saturates, so an absurd count simply never matches.
    pub(super) length: usize,
    pub(super) delimiter: u8,
    pub(super) fields: Option<Fields>,
    pub(super) keyed: bool,
    pub(super) inline: Option<&'a str>,
    /// A problem only strict mode rejects (a repeated field name).
    pub(super) strict_error: Option<Fail>,
}

#[derive(Debug)]
pub(super) enum HeaderParse<'a> {
    NotHeader,
    Invalid(Fail),
    Header(Header<'a>),
}

#[derive(Debug)]
pub(super) struct Field {
    pub(super) name: String,
    pub(super) children: Option<Vec<Field>>,
    /// The dialect's `name=value`: every row's value, with no cell of its own.
    pub(super) constant: Option<Value>,
}

/// A header's field list with what every row needs from it.
#[derive(Debug)]
pub(super) struct Fields {
    pub(super) list: Vec<Field>,
    /// Cells per row: leaves of the field tree that are not constants.
    pub(super) leaves: usize,
    /// No name repeats at any level, so rows can be built without looking keys up.
    pub(super) unique: bool,
}

/// `parseArrayHeaderLine`: is `content` an array header, a malformed one, or not one at all?
/// Errors in a quoted key are returned as `Err` (the reference throws them in every mode).
/// In the dialect, fields may be constants (`name=value`) and the delimiter check is left
/// out (a constant's unquoted string may hold another delimiter).
pub(super) fn parse_header(content: &str, dialect: bool) -> Result<HeaderParse<'_>, Fail> {
    use HeaderParse::{Invalid, NotHeader};
    let b = content.as_bytes();
    let bracket_start = if b.first() == Some(&b'"') {
        let Some(close) = find_closing_quote(b, 0) else {
            return Ok(NotHeader);
        };
        if b.get(close + 1) != Some(&b'[') {
            return Ok(NotHeader);
        }
        close + 1
    } else {
        match find_unquoted(b, b'[', 0) {
            Some(i) => i,
            None => return Ok(NotHeader),
        }
    };
    // A colon before the bracket ends the key: `key: foo [2]: bar` is a plain value.
    match find_unquoted(b, b':', 0) {
        Some(colon) if colon >= bracket_start => {}
        _ => return Ok(NotHeader),
    }
    let Some(bracket_end) = find_unquoted(b, b']', bracket_start) else {
        return Ok(Invalid(fail_at(
            &content[bracket_start..],
            "expected ']' to close the bracket segment",
        )));
    };

    let mut brace_end = bracket_end + 1;
    let brace_start = find_unquoted(b, b'{', bracket_end);
    if let Some(bs) = brace_start
        && find_unquoted(b, b':', bracket_end).is_some_and(|colon| bs < colon)
    {
        let gap = &content[bracket_end + 1..bs];
        if !gap.is_empty() {
            return Ok(Invalid(gap_error(gap, "'{'")));
        }
        if let Some(end) = find_matching_brace(b, bs) {
            brace_end = end + 1;
        }
    }
    let Some(colon) = find_unquoted(b, b':', bracket_end.max(brace_end)) else {
        return Ok(Invalid(fail_after(
            content,
            "expected ':' after the array header",
        )));
    };
    let gap = content
        .get((bracket_end + 1).max(brace_end)..colon)
        .unwrap_or("");
    if !gap.is_empty() {
        return Ok(Invalid(gap_error(gap, "':'")));
    }

    let key = if bracket_start > 0 {
        let raw_key = &content[..bracket_start];
        if raw_key.ends_with([' ', '\t']) {
            return Ok(Invalid(fail_at(
                &content[bracket_start..],
                "unexpected whitespace between the key and '['",
            )));
        }
        Some(if raw_key.starts_with('"') {
            parse_string_literal(raw_key)?
        } else {
            raw_key.to_owned()
        })
    } else {
        None
    };

    let after_colon = trim_spaces(&content[colon + 1..]);
    let segment = &content[bracket_start + 1..bracket_end];
    let (length, delimiter, keyed) = match parse_bracket_segment(segment) {
        Ok(parsed) => parsed,
        Err(message) => return Ok(Invalid(fail_at(segment, message))),
    };

    let mut fields = None;
    let mut strict_error = None;
    if let Some(bs) = brace_start
        && bs < colon
        && let Some(be) = find_matching_brace(b, bs)
        && be < colon
    {
        let text = &content[bs + 1..be];
        if !dialect
            && let Some((pos, found)) = find_mismatched_delimiter(text.as_bytes(), delimiter)
        {
            return Ok(Invalid(fail_at(
                &text[pos..],
                format!(
                    "header delimiter mismatch: expected {} between fields as the bracket \
                     declares, found unquoted {}",
                    delimiter_name(delimiter),
                    delimiter_name(found)
                ),
            )));
        }
        let parsed = if dialect {
            parse_dialect_fields(text, delimiter, 1)
        } else {
            parse_field_entries(text, delimiter, 1)
        };
        let list = match parsed {
            Ok(list) => list,
            Err(fail) => return Ok(Invalid(fail)),
        };
        let duplicate = find_duplicate_field(&list);
        strict_error = duplicate.as_ref().map(|name| {
            fail_at(
                text,
                format!("duplicate field name {name:?} in the field list"),
            )
        });
        fields = Some(Fields {
            leaves: count_leaves(&list),
            unique: duplicate.is_none(),
            list,
        });
    }
    if keyed && fields.is_none() {
        return Ok(Invalid(fail_after(
            &content[..=bracket_end],
            "expected a field list `{...}` after a keyed header's bracket segment",
        )));
    }
    if fields.is_some() && !after_colon.is_empty() {
        return Ok(Invalid(strict_error.unwrap_or_else(|| {
            fail_at(
                after_colon,
                "expected rows on the following lines, found content after the header's ':'",
            )
        })));
    }
    Ok(HeaderParse::Header(Header {
        key,
        length,
        delimiter,
        fields,
        keyed,
        inline: (!after_colon.is_empty()).then_some(after_colon),
        strict_error,
    }))
}

/// The error for text between `]` (or `}`) and what must follow it.
pub(super) fn gap_error(gap: &str, next: &str) -> Fail {
    let trimmed = gap.trim_matches([' ', '\t']);
    if trimmed.is_empty() {
        fail_at(
            gap,
            format!("unexpected whitespace before {next} in the array header"),
        )
    } else {
        fail_at(
            trimmed,
            format!("unexpected {trimmed:?} before {next} in the array header"),
        )
    }
}

/// `[N]`, `[N|]`, `[N\t]`, `[N:]`, `[N:|]`: count, delimiter, keyed.
pub(super) fn parse_bracket_segment(segment: &str) -> Result<(usize, u8, bool), String> {
    let mut digits = segment;
    let mut delimiter = b',';
    if let Some(rest) = digits.strip_suffix('\t') {
        delimiter = b'\t';
        digits = rest;
    } else if let Some(rest) = digits.strip_suffix('|') {
        delimiter = b'|';
        digits = rest;
    }
    let keyed = match digits.strip_suffix(':') {
        Some(rest) => {
            digits = rest;
            true
        }
        None => false,
    };
    let well_formed = digits == "0"
        || (digits.starts_with(|c: char| matches!(c, '1'..='9'))
            && digits.bytes().all(|b| b.is_ascii_digit()));
    if !well_formed {
        return Err(format!(
            "invalid array length {segment:?}: expected a non-negative integer without leading zeros"
        ));
    }
    Ok((digits.parse().unwrap_or(usize::MAX), delimiter, keyed))
}

/// Field groups nest at most [`MAX_DEPTH`] deep (both field-list parsers recurse).
fn check_field_depth(list: &str, depth: usize) -> Result<(), Fail> {
    if depth > MAX_DEPTH {
        return Err(fail_at(
            list,
            format!("field groups nested deeper than {MAX_DEPTH} levels"),
        ));
    }
    Ok(())
}

/// `parseFieldEntries`: the names of a field list, descending into `name{sub,fields}`.
pub(super) fn parse_field_entries(
    list: &str,
    delimiter: u8,
    depth: usize,
) -> Result<Vec<Field>, Fail> {
    check_field_depth(list, depth)?;
    let mut fields = Vec::new();
    for entry in split_field_entries(list, delimiter) {
        let entry = trim_spaces(entry);
        if entry.is_empty() {
            return Err(fail_at(entry, "expected a field name, found an empty one"));
        }
        let eb = entry.as_bytes();
        let Some(group_start) = find_unquoted(eb, b'{', 0) else {
            fields.push(Field {
                name: parse_string_literal(entry)?,
                children: None,
                constant: None,
            });
            continue;
        };
        let name = &entry[..group_start];
        if name.is_empty() {
            return Err(fail_at(entry, "expected a field name before '{'"));
        }
        if name.ends_with(' ') {
            return Err(fail_at(
                &entry[group_start..],
                "unexpected whitespace before a nested field group",
            ));
        }
        let Some(group_end) = find_matching_brace(eb, group_start) else {
            return Err(fail_at(
                &entry[group_start..],
                "expected '}' to close the nested field group",
            ));
        };
        if group_end != entry.len() - 1 {
            return Err(fail_at(
                &entry[group_end + 1..],
                "unexpected content after a nested field group",
            ));
        }
        let children =
            parse_field_entries(&entry[group_start + 1..group_end], delimiter, depth + 1)?;
        fields.push(Field {
            name: parse_string_literal(name)?,
            children: Some(children),
            constant: None,
        });
    }
    Ok(fields)
}

/// [`parse_field_entries`] for the dialect: an entry is a name (a key token, quoted or
/// not), a name with a nested group `name{…}`, or a constant `name=value`, where the
/// value is a primitive token or inline JSON.
pub(super) fn parse_dialect_fields(
    list: &str,
    delimiter: u8,
    depth: usize,
) -> Result<Vec<Field>, Fail> {
    check_field_depth(list, depth)?;
    let mut fields = Vec::new();
    for entry in split_dialect_fields(list, delimiter)? {
        let entry = trim_spaces(entry);
        if entry.is_empty() {
            return Err(fail_at(entry, "expected a field name, found an empty one"));
        }
        let eb = entry.as_bytes();
        let name_end = if eb[0] == b'"' {
            match find_closing_quote(eb, 0) {
                Some(close) => close + 1,
                None => {
                    return Err(fail_after(
                        entry,
                        "unterminated quoted field name: expected a closing '\"'",
                    ));
                }
            }
        } else {
            eb.iter()
                .position(|&c| c == b'=' || c == b'{')
                .unwrap_or(eb.len())
        };
        let (name, rest) = entry.split_at(name_end);
        if name.is_empty() {
            return Err(fail_at(entry, "expected a field name before '=' or '{'"));
        }
        let (children, constant) = match rest.as_bytes().first() {
            None => (None, None),
            Some(b'=') => {
                let value = trim_spaces(&rest[1..]);
                if value.is_empty() {
                    return Err(fail_after(
                        rest,
                        "expected a value after '=' in a constant field",
                    ));
                }
                (None, Some(dialect_value(value, MAX_DEPTH)?))
            }
            Some(b'{') => {
                if name.ends_with(' ') {
                    return Err(fail_at(
                        rest,
                        "unexpected whitespace before a nested field group",
                    ));
                }
                let rb = rest.as_bytes();
                let Some(group_end) = find_matching_brace(rb, 0) else {
                    return Err(fail_at(
                        rest,
                        "expected '}' to close the nested field group",
                    ));
                };
                if group_end != rb.len() - 1 {
                    return Err(fail_at(
                        &rest[group_end + 1..],
                        "unexpected content after a nested field group",
                    ));
                }
                let children = parse_dialect_fields(&rest[1..group_end], delimiter, depth + 1)?;
                (Some(children), None)
            }
            Some(_) => {
                return Err(fail_at(
                    trim_spaces(rest),
                    "expected '=', '{', or the end of the field after a field name",
                ));
            }
        };
        fields.push(Field {
            name: parse_string_literal(name)?,
            children,
            constant,
        });
    }
    Ok(fields)
}

/// Split a dialect field list on the delimiter outside quotes, nested groups and the
/// brackets of JSON constants; an unbalanced bracket is an error.
pub(super) fn split_dialect_fields(list: &str, delimiter: u8) -> Result<Vec<&str>, Fail> {
    let b = list.as_bytes();
    let mut entries = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => match find_closing_quote(b, i) {
                Some(close) => i = close,
                None => {
                    return Err(fail_at(
                        &list[i..],
                        "unterminated string: expected a closing '\"'",
                    ));
                }
            },
            b'[' | b'{' => open.push(i),
            c @ (b']' | b'}') => {
                let Some(o) = open.pop() else {
                    return Err(fail_at(
                        &list[i..],
                        format!("unexpected '{}' in the field list", char::from(c)),
                    ));
                };
                if (b[o] == b'[') != (c == b']') {
                    return Err(fail_at(
                        &list[i..],
                        format!(
                            "unexpected '{}': the '{}' before it is not closed",
                            char::from(c),
                            char::from(b[o])
                        ),
                    ));
                }
            }
            c if c == delimiter && open.is_empty() => {
                entries.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if let Some(&o) = open.last() {
        return Err(fail_at(
            &list[o..],
            format!("expected a closing bracket for this '{}'", char::from(b[o])),
        ));
    }
    entries.push(&list[start..]);
    Ok(entries)
}

/// Split a field list on the delimiter outside quotes and outside nested groups.
pub(super) fn split_field_entries(list: &str, delimiter: u8) -> impl Iterator<Item = &str> {
    let mut cuts = unquoted_with_depth(list.as_bytes(), 0)
        .filter(move |&(_, c, depth)| c == delimiter && depth == 0)
        .map(|(i, ..)| i);
    let mut start = 0;
    let mut finished = false;
    std::iter::from_fn(move || {
        if finished {
            return None;
        }
        match cuts.next() {
            Some(i) => {
                let entry = &list[start..i];
                start = i + 1;
                Some(entry)
            }
            None => {
                finished = true;
                Some(&list[start..])
            }
        }
    })
}

/// The first name that repeats within one level of the field tree (each level checked on its own).
pub(super) fn find_duplicate_field(fields: &[Field]) -> Option<String> {
    let mut seen = HashSet::with_capacity(fields.len());
    for field in fields {
        if !seen.insert(field.name.as_str()) {
            return Some(field.name.clone());
        }
        if let Some(children) = &field.children
            && let Some(name) = find_duplicate_field(children)
        {
            return Some(name);
        }
    }
    None
}

pub(super) fn count_leaves(fields: &[Field]) -> usize {
    fields
        .iter()
        .map(|f| match (&f.children, &f.constant) {
            (Some(children), _) => count_leaves(children),
            (None, Some(_)) => 0,
            (None, None) => 1,
        })
        .sum()
}

/// The first delimiter other than the active one that appears unquoted, in the order
/// comma, tab, pipe (as the reference checks them), with its position.
pub(super) fn find_mismatched_delimiter(list: &[u8], active: u8) -> Option<(usize, u8)> {
    [b',', b'\t', b'|']
        .into_iter()
        .filter(|&d| d != active)
        .find_map(|d| find_unquoted(list, d, 0).map(|pos| (pos, d)))
}

pub(super) fn delimiter_name(d: u8) -> &'static str {
    match d {
        b'\t' => "tab",
        b'|' => "'|'",
        _ => "','",
    }
}
