//! TOON v4 decoder: TOON text → [`Value`].
//!
//! A port of the reference decoder (`@toon-format/toon` 4.4.0): the same line scanner
//! (indentation, comments, blank lines, CRLF, BOM), the same header grammar (`key[N]:`,
//! `key[N|]{a,b{c,d}}:`, keyed objects `key[N:]{fields}:` with rows `entry: v1,v2`), the
//! same strict-mode checks and the same values. The reference turns lines into an event
//! stream and folds the events into a value; here one recursive descent over the lines
//! builds the value directly, on `&str` slices of the input, so a multi-megabyte document
//! costs one pass and the allocations of the value itself.
//!
//! Where it deliberately differs from the reference:
//! - numbers keep their lexeme (`1.5000` stays `1.5000`, a 30-digit integer stays whole);
//!   `-0` and anything else that is a negative zero in JS becomes `0`, and a literal that
//!   overflows to `Infinity` in JS (`1e999`) is a string, as in the reference;
//! - object keys keep document order (JS lists integer-like keys such as `"42"` first);
//! - in non-strict mode a line whose bracket segment is not a valid header (`key[]: 1`,
//!   `foo[2]extra: x`) is read as a `key: value` line with a literal key, as the spec's
//!   fixtures require; the reference throws there. Strict mode rejects them in both;
//! - containers nested deeper than [`MAX_DEPTH`] are an error instead of a deep stack.
//!
//! It also reads pare's own TOON dialect, the `auto` format's
//! ([`encode_dialect`](crate::encode::auto::encode_dialect)), exactly: with
//! [`Dialect::Auto`] (the default) a document whose first line is the dialect's legend
//! comment (`# pare auto: …`, [`LEGEND_PREFIX`](crate::encode::auto::LEGEND_PREFIX)) is
//! read as the dialect, any other as standard TOON. The dialect adds, on top of TOON:
//! - numbers keep their lexeme exactly, `-0` and `1e999` included;
//! - a member value (`key: …`) or list item (`- …`) starting with `[` or `{` is compact
//!   JSON, unless the list item is an array header (`- [2]: a,b`; a keyless header in a
//!   list item may have fields, and its rows or items sit one level below the hyphen, as
//!   in TOON, or two, where the encoder writes them);
//! - a table header's field may be a constant, `name=value` (a primitive token or JSON):
//!   it has no cell, and every row gets that member at that position;
//! - a table cell may be JSON (`[…]`, `{…}`; delimiters inside it don't split), and an
//!   empty cell is a member the row lacks (the empty string is written `""`);
//! - a row `- {…}` of a table is that whole item as JSON;
//! - a table has exactly its declared rows: every line one level below the header is a
//!   row (JSON cells may hold `:`), no `key: value` heuristic.
//!
//! ```
//! use pare::encode::toon::{decode, DecodeOptions};
//! let text = "# pare auto: an empty cell is an absent field; name=value in a header is that \
//!             value on every row; […] and {…} values are JSON\n\
//!             rows[3]{id,kind=a,x}:\n  1,[2,3]\n  2,\n  3,-0";
//! let v = decode(text, &DecodeOptions::default()).unwrap();
//! assert_eq!(
//!     pare::json::to_compact(&v),
//!     r#"{"rows":[{"id":1,"kind":"a","x":[2,3]},{"id":2,"kind":"a"},{"id":3,"kind":"a","x":-0}]}"#
//! );
//! ```
//!
//! ```
//! use pare::encode::toon::{decode, DecodeOptions};
//! let text = "users[2]{id,name}:\n  1,Ada\n  2,Bob\ntags[2|]: a|b";
//! let v = decode(text, &DecodeOptions::default()).unwrap();
//! assert_eq!(
//!     pare::json::to_compact(&v),
//!     r#"{"users":[{"id":1,"name":"Ada"},{"id":2,"name":"Bob"}],"tags":["a","b"]}"#
//! );
//! let err = decode("items[3]: a,b", &DecodeOptions::default()).unwrap_err();
//! assert_eq!(err.to_string(), "expected 3 inline array values, found 2 at line 1 column 1");
//! ```

use std::collections::HashSet;
use std::collections::hash_map::Entry;
use std::hash::{BuildHasher, RandomState};

use crate::encode::auto::LEGEND_PREFIX;
use crate::json;
use crate::json::KeyIndex;
use crate::value::{Map, Number, Value};

/// How deep objects and arrays may nest (and field groups inside a header). Deep enough
/// for any real document, shallow enough that decoding and dropping cannot exhaust a stack.
pub const MAX_DEPTH: usize = 256;

/// Objects up to this many members find a repeated key by scanning; past it a hash index
/// takes over, so a keyed object with 100k entries stays linear.
const LINEAR_KEYS: usize = 16;

/// How to read a TOON document.
#[derive(Debug, Clone)]
pub struct DecodeOptions {
    /// Spaces per indentation level (the reference's `indentSize`); at least 1.
    pub indent: usize,
    /// Enforce declared counts, exact indentation, no tabs in indentation, no blank lines
    /// inside arrays and unique keys (spec §14). Off, the decoder is lenient as the
    /// reference is: last write wins, counts are not checked.
    pub strict: bool,
    /// Whether to read pare's `auto` dialect: detected by its legend line (the default),
    /// never, or always.
    pub dialect: Dialect,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            indent: 2,
            strict: true,
            dialect: Dialect::Auto,
        }
    }
}

/// When to read a document as pare's `auto` dialect rather than standard TOON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialect {
    /// The dialect when the first line is its legend ([`is_dialect`]), else standard TOON.
    #[default]
    Auto,
    /// Always standard TOON.
    Off,
    /// Always the dialect, legend or not.
    On,
}

/// Whether `text` is a document in pare's `auto` dialect: its first line (after a byte
/// order mark) starts with the legend, `# pare auto:`.
///
/// ```
/// use pare::encode::toon::decode::is_dialect;
/// assert!(is_dialect("# pare auto: an empty cell is an absent field\nrows[2]{a,b}:\n  1,\n  2,3"));
/// assert!(!is_dialect("a: 1\n# pare auto: too late"));
/// ```
pub fn is_dialect(text: &str) -> bool {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    text.starts_with(LEGEND_PREFIX)
}

/// Why a TOON text was rejected, and where.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
#[non_exhaustive]
#[error("{message} at line {line} column {column}")]
pub struct ToonError {
    /// 1-based line (lines end at `\n`).
    pub line: usize,
    /// 1-based column in characters: of the offending token where known, else 1.
    pub column: usize,
    /// What was expected or what is wrong, e.g. `expected 3 tabular rows, found 2`.
    pub message: String,
}

/// Decode one TOON document. An empty document (or one of only comments and blank lines)
/// is `{}`; a single line that is neither a key nor a header is a root primitive.
pub fn decode(text: &str, opts: &DecodeOptions) -> Result<Value, ToonError> {
    if opts.indent == 0 {
        return Err(ToonError {
            line: 1,
            column: 1,
            message: "indent must be at least 1 space".into(),
        });
    }
    let dialect = match opts.dialect {
        Dialect::Auto => is_dialect(text),
        Dialect::Off => false,
        Dialect::On => true,
    };
    let mut decoder = Decoder {
        dialect,
        reader: Reader {
            rest: Some(text),
            line_no: 0,
            indent: opts.indent,
            strict: opts.strict,
            peeked: None,
            last: None,
            blanks: Vec::new(),
        },
        strict: opts.strict,
        nesting: 0,
        hasher: RandomState::new(),
        cells: Vec::new(),
    };
    decoder.document().map_err(|fail| fail.into_error(text))
}

// ---------------------------------------------------------------------------------------
// Errors

/// An error on its way out: the message and the address of the offending byte. Every
/// `&str` the decoder handles is a slice of the input, so the address is enough to find
/// line and column once, at the top, when decoding has already failed.
#[derive(Debug)]
struct Fail {
    addr: usize,
    message: String,
}

/// Fail at the first byte of `at` (a slice of the input).
fn fail_at(at: &str, message: impl Into<String>) -> Fail {
    Fail {
        addr: at.as_ptr() as usize,
        message: message.into(),
    }
}

/// Fail just past the end of `at`.
fn fail_after(at: &str, message: impl Into<String>) -> Fail {
    Fail {
        addr: at.as_ptr() as usize + at.len(),
        message: message.into(),
    }
}

impl Fail {
    fn into_error(self, text: &str) -> ToonError {
        let mut offset = self
            .addr
            .wrapping_sub(text.as_ptr() as usize)
            .min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &text[..offset];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let line = 1 + before.bytes().filter(|&b| b == b'\n').count();
        let in_line = &before[line_start..];
        let in_line = if line == 1 {
            in_line.strip_prefix('\u{feff}').unwrap_or(in_line)
        } else {
            in_line
        };
        ToonError {
            line,
            column: in_line.chars().count() + 1,
            message: self.message,
        }
    }
}

// ---------------------------------------------------------------------------------------
// Line scanner

/// One non-blank, non-comment line.
#[derive(Clone, Copy, Debug)]
struct Line<'a> {
    /// The whole line without its `\r` (and without the BOM on line 1).
    raw: &'a str,
    /// After the indentation, trailing spaces trimmed; never empty. A list item's content
    /// is re-pointed past its `- `.
    content: &'a str,
    depth: usize,
    number: usize,
}

/// Hands out lines one at a time with one line of lookahead, scanning lazily as the
/// reference does, so errors surface in the order the reference finds them.
struct Reader<'a> {
    /// The text not scanned yet; `None` once the last line has been scanned.
    rest: Option<&'a str>,
    line_no: usize,
    indent: usize,
    strict: bool,
    peeked: Option<Line<'a>>,
    /// The last line consumed (the reference's `lastLine`): where a list item ended.
    last: Option<Line<'a>>,
    /// Blank lines seen so far: number and text, for the strict no-blank-lines check.
    blanks: Vec<(usize, &'a str)>,
}

impl<'a> Reader<'a> {
    fn peek(&mut self) -> Result<Option<Line<'a>>, Fail> {
        if self.peeked.is_none() {
            self.peeked = self.scan()?;
        }
        Ok(self.peeked)
    }

    /// Consume the line `peek` returned.
    fn advance(&mut self) {
        if let Some(line) = self.peeked.take() {
            self.last = Some(line);
        }
    }

    fn next(&mut self) -> Result<Option<Line<'a>>, Fail> {
        self.peek()?;
        let line = self.peeked.take();
        if line.is_some() {
            self.last = line;
        }
        Ok(line)
    }

    /// Scan up to the next line with content, recording blank lines and skipping comments.
    fn scan(&mut self) -> Result<Option<Line<'a>>, Fail> {
        while let Some(rest) = self.rest {
            let mut raw = match rest.find('\n') {
                Some(i) => {
                    self.rest = Some(&rest[i + 1..]);
                    &rest[..i]
                }
                None => {
                    self.rest = None;
                    rest
                }
            };
            self.line_no += 1;
            if self.line_no == 1 {
                raw = raw.strip_prefix('\u{feff}').unwrap_or(raw);
            }
            raw = raw.strip_suffix('\r').unwrap_or(raw);

            let bytes = raw.as_bytes();
            let ws = bytes
                .iter()
                .take_while(|&&b| b == b' ' || b == b'\t')
                .count();
            let first_tab = bytes[..ws].iter().position(|&b| b == b'\t');
            // Strict mode measures indentation up to the first tab (then rejects the tab);
            // lenient mode counts each tab as one whole level.
            let indent = match first_tab {
                Some(tab) if self.strict => tab,
                _ => ws,
            };
            let tabs = match first_tab {
                Some(_) if !self.strict => bytes[..ws].iter().filter(|&&b| b == b'\t').count(),
                _ => 0,
            };
            let content = trim_trailing_spaces(&raw[indent..]);
            // `#` after space-only indentation is a comment line, at any indentation.
            if first_tab.is_none() && content.starts_with('#') {
                continue;
            }
            let depth = (indent - tabs) / self.indent + tabs;
            if content.is_empty() {
                self.blanks.push((self.line_no, raw));
                continue;
            }
            if self.strict {
                if let Some(tab) = first_tab {
                    return Err(fail_at(
                        &raw[tab..],
                        "tabs are not allowed in indentation in strict mode",
                    ));
                }
                if indent % self.indent != 0 {
                    return Err(fail_at(
                        content,
                        format!(
                            "expected indentation in multiples of {} spaces, found {indent}",
                            self.indent
                        ),
                    ));
                }
            }
            return Ok(Some(Line {
                raw,
                content,
                depth,
                number: self.line_no,
            }));
        }
        Ok(None)
    }

    /// The first blank line strictly between lines `start` and `end`, if any.
    fn blank_between(&self, start: usize, end: usize) -> Option<&'a str> {
        let i = self.blanks.partition_point(|&(n, _)| n <= start);
        self.blanks
            .get(i)
            .filter(|&&(n, _)| n < end)
            .map(|&(_, raw)| raw)
    }
}

// ---------------------------------------------------------------------------------------
// Headers

/// A parsed array header: `key[N<delim>]{fields}: inline`, or keyed `key[N:<delim>]{fields}:`.
#[derive(Debug)]
struct Header<'a> {
    key: Option<String>,
    /// The declared count; saturates, so an absurd count simply never matches.
    length: usize,
    delimiter: u8,
    fields: Option<Fields>,
    keyed: bool,
    inline: Option<&'a str>,
    /// A problem only strict mode rejects (a repeated field name).
    strict_error: Option<Fail>,
}

#[derive(Debug)]
enum HeaderParse<'a> {
    NotHeader,
    Invalid(Fail),
    Header(Header<'a>),
}

#[derive(Debug)]
struct Field {
    name: String,
    children: Option<Vec<Field>>,
    /// The dialect's `name=value`: every row's value, with no cell of its own.
    constant: Option<Value>,
}

/// A header's field list with what every row needs from it.
#[derive(Debug)]
struct Fields {
    list: Vec<Field>,
    /// Cells per row: leaves of the field tree that are not constants.
    leaves: usize,
    /// No name repeats at any level, so rows can be built without looking keys up.
    unique: bool,
}

/// `parseArrayHeaderLine`: is `content` an array header, a malformed one, or not one at all?
/// Errors in a quoted key are returned as `Err` (the reference throws them in every mode).
/// In the dialect, fields may be constants (`name=value`) and the delimiter check is left
/// out (a constant's unquoted string may hold another delimiter).
fn parse_header(content: &str, dialect: bool) -> Result<HeaderParse<'_>, Fail> {
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
fn gap_error(gap: &str, next: &str) -> Fail {
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
fn parse_bracket_segment(segment: &str) -> Result<(usize, u8, bool), String> {
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

/// `parseFieldEntries`: the names of a field list, descending into `name{sub,fields}`.
fn parse_field_entries(list: &str, delimiter: u8, depth: usize) -> Result<Vec<Field>, Fail> {
    if depth > MAX_DEPTH {
        return Err(fail_at(
            list,
            format!("field groups nested deeper than {MAX_DEPTH} levels"),
        ));
    }
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
fn parse_dialect_fields(list: &str, delimiter: u8, depth: usize) -> Result<Vec<Field>, Fail> {
    if depth > MAX_DEPTH {
        return Err(fail_at(
            list,
            format!("field groups nested deeper than {MAX_DEPTH} levels"),
        ));
    }
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
fn split_dialect_fields(list: &str, delimiter: u8) -> Result<Vec<&str>, Fail> {
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
fn split_field_entries(list: &str, delimiter: u8) -> impl Iterator<Item = &str> {
    let b = list.as_bytes();
    let mut start = 0;
    let mut i = 0;
    let mut in_quotes = false;
    let mut braces: i64 = 0;
    let mut finished = false;
    std::iter::from_fn(move || {
        if finished {
            return None;
        }
        while i < b.len() {
            let c = b[i];
            if c == b'\\' && in_quotes && i + 1 < b.len() {
                i += 2;
                continue;
            }
            if c == b'"' {
                in_quotes = !in_quotes;
            } else if !in_quotes {
                if c == b'{' {
                    braces += 1;
                } else if c == b'}' {
                    braces -= 1;
                } else if c == delimiter && braces == 0 {
                    let entry = &list[start..i];
                    i += 1;
                    start = i;
                    return Some(entry);
                }
            }
            i += 1;
        }
        finished = true;
        Some(&list[start..])
    })
}

/// The first name that repeats within one level of the field tree (each level checked on its own).
fn find_duplicate_field(fields: &[Field]) -> Option<String> {
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

fn count_leaves(fields: &[Field]) -> usize {
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
fn find_mismatched_delimiter(list: &[u8], active: u8) -> Option<(usize, u8)> {
    [b',', b'\t', b'|']
        .into_iter()
        .filter(|&d| d != active)
        .find_map(|d| find_unquoted(list, d, 0).map(|pos| (pos, d)))
}

fn delimiter_name(d: u8) -> &'static str {
    match d {
        b'\t' => "tab",
        b'|' => "'|'",
        _ => "','",
    }
}

// ---------------------------------------------------------------------------------------
// Decoder

struct Decoder<'a> {
    /// Reading pare's `auto` dialect (see the module docs).
    dialect: bool,
    reader: Reader<'a>,
    strict: bool,
    /// Containers open on the current path.
    nesting: usize,
    hasher: RandomState,
    /// Scratch for a row's cells, reused across rows.
    cells: Vec<&'a str>,
}

impl<'a> Decoder<'a> {
    fn document(&mut self) -> Result<Value, Fail> {
        let Some(first) = self.reader.peek()? else {
            return Ok(Value::Object(Map::new()));
        };
        if first.depth != 0 {
            return Err(over_indented(&first, 0));
        }
        if trim_spaces(first.content) == "[]" {
            self.reader.advance();
            self.expect_end()?;
            return Ok(Value::Array(Vec::new()));
        }
        if is_array_header_content(first.content)
            && let Some(header) = self.header(first.content)?
        {
            self.reader.advance();
            let value = self.array_from_header(header, 0, &first)?;
            self.expect_end()?;
            return Ok(value);
        }
        self.reader.advance();
        let following = self.reader.peek()?;
        if !is_key_value_content(first.content) {
            match following {
                None => return parse_primitive(first.content, self.dialect),
                Some(next) if next.depth == 0 => {
                    return Err(fail_at(
                        first.content,
                        "expected a key-value or array-header line at the top level, found a \
                         bare value followed by more lines",
                    ));
                }
                Some(_) => {}
            }
        }
        self.enter(&first)?;
        let mut obj = ObjBuilder::default();
        self.key_value(first, 0, &mut obj)?;
        while let Some(line) = self.reader.peek()? {
            if line.depth != 0 {
                return Err(over_indented(&line, 0));
            }
            self.reader.advance();
            self.key_value(line, 0, &mut obj)?;
        }
        Ok(Value::Object(obj.finish()))
    }

    /// Parse a header candidate with the mode's policy applied: malformed headers are an
    /// error in strict mode and plain `key: value` lines otherwise.
    fn header(&self, content: &'a str) -> Result<Option<Header<'a>>, Fail> {
        match parse_header(content, self.dialect)? {
            HeaderParse::NotHeader => Ok(None),
            HeaderParse::Invalid(fail) if self.strict => Err(fail),
            HeaderParse::Invalid(_) => Ok(None),
            HeaderParse::Header(mut header) => match header.strict_error.take() {
                Some(fail) if self.strict => Err(fail),
                _ => Ok(Some(header)),
            },
        }
    }

    /// `decodeKeyValue`: one `key: value`, `key:` (nested object) or `key[N]...` line into `obj`.
    fn key_value(&mut self, line: Line<'a>, base: usize, obj: &mut ObjBuilder) -> Result<(), Fail> {
        let header = self.header(line.content)?;
        self.key_value_with(line, header, base, obj)
    }

    fn key_value_with(
        &mut self,
        line: Line<'a>,
        header: Option<Header<'a>>,
        base: usize,
        obj: &mut ObjBuilder,
    ) -> Result<(), Fail> {
        let content = line.content;
        if let Some(mut header) = header {
            let Some(key) = header.key.take() else {
                return Err(fail_at(
                    content,
                    if header.keyed {
                        "expected a key before a keyed header's '[' (keyless keyed headers are \
                         only valid at the document root)"
                    } else {
                        "expected a key before '[' (keyless array headers are only valid at \
                         the document root or as a list item)"
                    },
                ));
            };
            let slot = self.claim(obj, &key, content)?;
            let value = self.array_from_header(header, base, &line)?;
            obj.put(slot, key, value);
            return Ok(());
        }
        let (key, end) = parse_key_token(content)?;
        let rest = trim_spaces(&content[end..]);
        let slot = self.claim(obj, &key, content)?;
        let value = if rest.is_empty() {
            match self.reader.peek()? {
                Some(next) if next.depth > base => {
                    self.no_depth_jump(&next, base)?;
                    self.object_fields(base + 1, &line)?
                }
                _ => Value::Object(Map::new()),
            }
        } else if rest == "[]" {
            Value::Array(Vec::new())
        } else if self.dialect && rest.starts_with(['[', '{']) {
            parse_json(rest, self.json_depth_left())?
        } else {
            parse_primitive(rest, self.dialect)?
        };
        obj.put(slot, key, value);
        Ok(())
    }

    /// `decodeObjectFields`: the fields of a nested object, all at the depth of the first.
    fn object_fields(&mut self, base: usize, opener: &Line<'a>) -> Result<Value, Fail> {
        self.enter(opener)?;
        let mut obj = ObjBuilder::default();
        let mut depth = None;
        while let Some(line) = self.reader.peek()? {
            if line.depth < base {
                break;
            }
            let expected = *depth.get_or_insert(line.depth);
            if line.depth != expected {
                return Err(over_indented(&line, expected));
            }
            self.reader.advance();
            self.key_value(line, expected, &mut obj)?;
        }
        self.leave();
        Ok(Value::Object(obj.finish()))
    }

    /// `followSiblingFields`: the fields after the first one of a list-item object.
    fn sibling_fields(&mut self, depth: usize, obj: &mut ObjBuilder) -> Result<(), Fail> {
        while let Some(line) = self.reader.peek()? {
            if line.depth < depth {
                break;
            }
            if line.depth != depth {
                return Err(over_indented(&line, depth));
            }
            self.reader.advance();
            self.key_value(line, depth, obj)?;
        }
        Ok(())
    }

    fn array_from_header(
        &mut self,
        header: Header<'a>,
        base: usize,
        line: &Line<'a>,
    ) -> Result<Value, Fail> {
        self.enter(line)?;
        // A keyed header always has fields, and fields never come with inline values
        // (`parse_header` rejects both), so the order of these tests is the reference's.
        let value = if header.keyed
            && let Some(fields) = &header.fields
        {
            self.keyed_object(&header, fields, base, line)?
        } else if let Some(inline) = header.inline {
            self.inline_array(&header, inline, line)?
        } else if let Some(fields) = header.fields.as_ref().filter(|f| !f.list.is_empty()) {
            self.tabular_array(&header, fields, base, line)?
        } else {
            self.list_array(&header, base, line)?
        };
        self.leave();
        Ok(value)
    }

    /// `key[N]: a,b,c`
    fn inline_array(
        &mut self,
        header: &Header<'a>,
        inline: &'a str,
        line: &Line<'a>,
    ) -> Result<Value, Fail> {
        let mut cells = std::mem::take(&mut self.cells);
        split_delimited(inline, header.delimiter, &mut cells);
        let values = cells
            .iter()
            .map(|cell| parse_primitive(cell, self.dialect))
            .collect::<Result<Vec<_>, _>>()?;
        self.cells = cells;
        if self.strict && values.len() != header.length {
            return Err(fail_at(
                line.raw,
                format!(
                    "expected {} inline array values, found {}",
                    header.length,
                    values.len()
                ),
            ));
        }
        Ok(Value::Array(values))
    }

    /// `key[N:]{fields}:` with rows `entryKey: cells`.
    fn keyed_object(
        &mut self,
        header: &Header<'a>,
        fields: &Fields,
        base: usize,
        header_line: &Line<'a>,
    ) -> Result<Value, Fail> {
        let entry_depth = self.scope_content_depth(base)?;
        let mut obj = ObjBuilder::default();
        let mut count = 0;
        let mut span: Option<(usize, usize)> = None;
        let mut last = *header_line;
        while let Some(line) = self.reader.peek()? {
            if line.depth <= base {
                break;
            }
            if line.depth != entry_depth {
                return Err(over_indented(&line, entry_depth));
            }
            let content = line.content;
            if find_unquoted(content.as_bytes(), b':', 0).is_none() {
                return Err(fail_after(
                    content,
                    "expected an entry row `key: cells` inside the keyed object, found no ':'",
                ));
            }
            self.reader.advance();
            span = Some((span.map_or(line.number, |s| s.0), line.number));
            last = line;
            let (key, end) = parse_key_token(content)?;
            let slot = self.claim(&mut obj, &key, content)?;
            let cells_text = trim_spaces(&content[end..]);
            let row = self.row(
                fields,
                cells_text,
                header.delimiter,
                "keyed entry cells",
                &line,
            )?;
            obj.put(slot, key, row);
            count += 1;
        }
        if self.strict {
            self.check_count(count, header.length, "keyed entries", &last)?;
            self.no_blank_lines(span, "keyed object")?;
        }
        Ok(Value::Object(obj.finish()))
    }

    /// `key[N]{fields}:` with one row of cells per line.
    fn tabular_array(
        &mut self,
        header: &Header<'a>,
        fields: &Fields,
        base: usize,
        header_line: &Line<'a>,
    ) -> Result<Value, Fail> {
        let row_depth = self.scope_content_depth(base)?;
        if self.dialect {
            return self.dialect_rows(header, fields, base, row_depth, header_line);
        }
        let mut rows = Vec::with_capacity(header.length.min(1024));
        let mut span: Option<(usize, usize)> = None;
        let mut last = *header_line;
        while !self.strict || rows.len() < header.length {
            let Some(line) = self.reader.peek()? else {
                break;
            };
            if line.depth <= base {
                break;
            }
            if line.depth != row_depth {
                return Err(over_indented(&line, row_depth));
            }
            if !is_data_row(line.content, header.delimiter) {
                break;
            }
            span = Some((span.map_or(line.number, |s| s.0), line.number));
            last = line;
            self.reader.advance();
            rows.push(self.row(
                fields,
                line.content,
                header.delimiter,
                "tabular row values",
                &line,
            )?);
        }
        if self.strict {
            self.check_count(rows.len(), header.length, "tabular rows", &last)?;
            self.no_blank_lines(span, "tabular array")?;
            if let Some(next) = self.reader.peek()?
                && next.depth == row_depth
                && !next.content.starts_with("- ")
                && is_data_row(next.content, header.delimiter)
            {
                return Err(fail_at(
                    next.raw,
                    format!("expected {} tabular rows, found more", header.length),
                ));
            }
        }
        Ok(Value::Array(rows))
    }

    /// The dialect's table rows: every line below the header is a row (no `key: value`
    /// heuristic), either cells or `- {…}`, the whole item as JSON.
    fn dialect_rows(
        &mut self,
        header: &Header<'a>,
        fields: &Fields,
        base: usize,
        row_depth: usize,
        header_line: &Line<'a>,
    ) -> Result<Value, Fail> {
        let mut rows = Vec::with_capacity(header.length.min(1024));
        let mut span: Option<(usize, usize)> = None;
        let mut last = *header_line;
        while let Some(line) = self.reader.peek()? {
            if line.depth <= base {
                break;
            }
            if line.depth != row_depth {
                return Err(over_indented(&line, row_depth));
            }
            span = Some((span.map_or(line.number, |s| s.0), line.number));
            last = line;
            self.reader.advance();
            if self.strict && rows.len() == header.length {
                return Err(fail_at(
                    line.raw,
                    format!("expected {} tabular rows, found more", header.length),
                ));
            }
            let row = match line.content.strip_prefix("- ") {
                Some(json) => {
                    let json = trim_spaces(json);
                    if !json.starts_with('{') {
                        return Err(fail_at(
                            json,
                            "expected a whole row as a JSON object `- {…}`",
                        ));
                    }
                    parse_json(json, self.json_depth_left())?
                }
                None => self.row(
                    fields,
                    line.content,
                    header.delimiter,
                    "tabular row values",
                    &line,
                )?,
            };
            rows.push(row);
        }
        if self.strict {
            self.check_count(rows.len(), header.length, "tabular rows", &last)?;
            self.no_blank_lines(span, "tabular array")?;
        }
        Ok(Value::Array(rows))
    }

    /// How deep inline JSON may nest here, within [`MAX_DEPTH`] overall.
    fn json_depth_left(&self) -> usize {
        MAX_DEPTH.saturating_sub(self.nesting)
    }

    /// One row of cells into an object shaped by the field tree.
    fn row(
        &mut self,
        fields: &Fields,
        text: &'a str,
        delimiter: u8,
        what: &str,
        line: &Line<'a>,
    ) -> Result<Value, Fail> {
        let mut cells = std::mem::take(&mut self.cells);
        // no cells at all for ""
        let split = if self.dialect {
            split_dialect_cells(text, delimiter, &mut cells)
        } else {
            split_delimited(text, delimiter, &mut cells);
            Ok(())
        };
        if let Err(fail) = split {
            self.cells = cells;
            return Err(fail);
        }
        if cells.len() != fields.leaves {
            let found = cells.len();
            self.cells = cells;
            return Err(fail_at(
                line.raw,
                format!("expected {} {what}, found {found}", fields.leaves),
            ));
        }
        let mut next = 0;
        let row = if self.dialect {
            build_dialect_row(
                &fields.list,
                &cells,
                &mut next,
                fields.unique,
                self.json_depth_left(),
            )
        } else {
            build_row(&fields.list, &cells, &mut next, fields.unique)
        };
        self.cells = cells;
        Ok(Value::Object(row?))
    }

    /// `key[N]:` with `- item` lines.
    fn list_array(
        &mut self,
        header: &Header<'a>,
        base: usize,
        header_line: &Line<'a>,
    ) -> Result<Value, Fail> {
        let item_depth = self.scope_content_depth(base)?;
        let mut items = Vec::with_capacity(header.length.min(1024));
        let mut span: Option<(usize, usize)> = None;
        let mut last = *header_line;
        while !self.strict || items.len() < header.length {
            let Some(line) = self.reader.peek()? else {
                break;
            };
            if line.depth <= base {
                break;
            }
            if line.depth != item_depth {
                return Err(over_indented(&line, item_depth));
            }
            if !(line.content.starts_with("- ") || line.content == "-") {
                break;
            }
            let start = span.map_or(line.number, |s| s.0);
            items.push(self.list_item(item_depth)?);
            // An item ends at the last line it consumed (its fields, nested rows...).
            last = self.reader.last.unwrap_or(line);
            span = Some((start, last.number));
        }
        if self.strict {
            self.check_count(items.len(), header.length, "list items", &last)?;
            self.no_blank_lines(span, "list array")?;
            if let Some(next) = self.reader.peek()?
                && next.depth == item_depth
                && next.content.starts_with("- ")
            {
                return Err(fail_at(
                    next.raw,
                    format!("expected {} list items, found more", header.length),
                ));
            }
        }
        Ok(Value::Array(items))
    }

    /// `decodeListItem`: `- value`, `- key: value` (an object), `- [N]: ...` (an array),
    /// `- key[N]{fields}:` (an object whose first field is a table).
    fn list_item(&mut self, depth: usize) -> Result<Value, Fail> {
        let Some(line) = self.reader.next()? else {
            return Err(Fail {
                addr: usize::MAX,
                message: "expected a list item, found the end of the document".into(),
            });
        };
        if line.content == "-" {
            return Ok(Value::Object(Map::new()));
        }
        let Some(after) = line.content.strip_prefix("- ") else {
            return Err(fail_at(
                line.content,
                "expected a list item to start with \"- \"",
            ));
        };
        let after = after.trim_start_matches(' ');
        let trimmed = trim_spaces(after);
        if trimmed.is_empty() {
            return Ok(Value::Object(Map::new()));
        }
        if trimmed == "[]" {
            return Ok(Value::Array(Vec::new()));
        }
        let item = Line {
            content: after,
            ..line
        };
        if self.dialect && after.starts_with(['[', '{']) {
            return self.dialect_list_item(item, depth);
        }
        // A header starting with '[' is exactly a keyless one (see `parse_header`), so one
        // parse serves the reference's two.
        let header = self.header(after)?;
        if let Some(h) = &header
            && h.key.is_none()
            && (h.keyed || h.fields.is_some())
        {
            return Err(fail_at(
                after,
                if h.keyed {
                    "expected a key before a keyed header's '[' (keyless keyed headers are only \
                     valid at the document root)"
                } else {
                    "expected a key before a header with a field list (keyless ones are only \
                     valid at the document root)"
                },
            ));
        }
        match header {
            // `- [N]: ...`: an array in an array
            Some(h) if h.key.is_none() => return self.array_from_header(h, depth, &item),
            None if !is_key_value_content(after) => return parse_primitive(after, self.dialect),
            _ => {}
        }
        // An object: its first field on the hyphen line, the others one level deeper. The
        // reference's separate path for `- key[N]{fields}:` comes to the same thing: the
        // table's rows sit two levels below the hyphen either way.
        self.enter(&item)?;
        let mut obj = ObjBuilder::default();
        self.key_value_with(item, header, depth + 1, &mut obj)?;
        self.sibling_fields(depth + 1, &mut obj)?;
        self.leave();
        Ok(Value::Object(obj.finish()))
    }

    /// A dialect list item starting with `[` or `{`: a keyless array header (`- [2]: a,b`,
    /// `- [2]:` with items, `- [2]{a,b}:` with rows), or else JSON.
    fn dialect_list_item(&mut self, item: Line<'a>, depth: usize) -> Result<Value, Fail> {
        if item.content.starts_with('[')
            && let HeaderParse::Header(mut header) = parse_header(item.content, true)?
        {
            if let Some(fail) = header.strict_error.take()
                && self.strict
            {
                return Err(fail);
            }
            if header.key.is_none() && !header.keyed {
                // The encoder writes the array's block two levels below the hyphen (as it
                // would as a member); TOON writes a list's items one level below. Either
                // reads: nothing else can sit under an item that is an array.
                let base = match self.reader.peek()? {
                    Some(next) if next.depth == depth + 2 => depth + 1,
                    _ => depth,
                };
                return self.array_from_header(header, base, &item);
            }
        }
        parse_json(item.content, self.json_depth_left())
    }

    /// Where an array's rows or items sit: one level below `base`, or (lenient mode) as
    /// deep as the first of them.
    fn scope_content_depth(&mut self, base: usize) -> Result<usize, Fail> {
        match self.reader.peek()? {
            Some(first) if first.depth > base + 1 => {
                self.no_depth_jump(&first, base)?;
                Ok(first.depth)
            }
            _ => Ok(base + 1),
        }
    }

    fn no_depth_jump(&self, line: &Line<'a>, parent: usize) -> Result<(), Fail> {
        if self.strict && line.depth > parent + 1 {
            return Err(fail_at(
                line.content,
                format!(
                    "expected indentation depth {}, found {} (a jump of more than one level)",
                    parent + 1,
                    line.depth
                ),
            ));
        }
        Ok(())
    }

    fn no_blank_lines(&self, span: Option<(usize, usize)>, inside: &str) -> Result<(), Fail> {
        if let Some((start, end)) = span
            && let Some(raw) = self.reader.blank_between(start, end)
        {
            return Err(fail_at(
                raw,
                format!("expected no blank lines inside a {inside} in strict mode"),
            ));
        }
        Ok(())
    }

    fn check_count(
        &self,
        found: usize,
        expected: usize,
        what: &str,
        line: &Line<'a>,
    ) -> Result<(), Fail> {
        if found != expected {
            return Err(fail_at(
                line.raw,
                format!("expected {expected} {what}, found {found}"),
            ));
        }
        Ok(())
    }

    fn expect_end(&mut self) -> Result<(), Fail> {
        match self.reader.peek()? {
            Some(line) => Err(fail_at(
                line.content,
                "expected the end of the document after the root array, found more content",
            )),
            None => Ok(()),
        }
    }

    /// Where `key` goes in `obj`: its current position (last write wins), or `None` to append.
    /// Strict mode rejects a repeated key instead.
    fn claim(&self, obj: &mut ObjBuilder, key: &str, at: &str) -> Result<Option<usize>, Fail> {
        let slot = obj.find(key, &self.hasher);
        if self.strict && slot.is_some() {
            return Err(fail_at(
                at,
                format!("duplicate key {key:?}: keys must be unique in strict mode"),
            ));
        }
        Ok(slot)
    }

    fn enter(&mut self, line: &Line<'a>) -> Result<(), Fail> {
        self.nesting += 1;
        if self.nesting > MAX_DEPTH {
            return Err(fail_at(
                line.content,
                format!("nesting deeper than {MAX_DEPTH} levels"),
            ));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.nesting -= 1;
    }
}

fn over_indented(line: &Line<'_>, expected: usize) -> Fail {
    fail_at(
        line.content,
        format!(
            "expected indentation depth {expected}, found {} (over-indented line)",
            line.depth
        ),
    )
}

/// Cells to an object, depth-first through nested field groups.
fn build_row(
    fields: &[Field],
    cells: &[&str],
    next: &mut usize,
    unique: bool,
) -> Result<Map, Fail> {
    let mut map = Map::with_capacity(fields.len());
    for field in fields {
        let value = match &field.children {
            Some(children) => Value::Object(build_row(children, cells, next, unique)?),
            None => {
                let cell = cells.get(*next).copied().unwrap_or_default();
                *next += 1;
                parse_primitive(cell, false)?
            }
        };
        if unique {
            map.push_unique(field.name.clone(), value);
        } else {
            map.insert(field.name.clone(), value);
        }
    }
    Ok(map)
}

/// [`build_row`] for the dialect: constants fill their own members, an empty cell is an
/// absent member, a cell starting with `[` or `{` is JSON.
fn build_dialect_row(
    fields: &[Field],
    cells: &[&str],
    next: &mut usize,
    unique: bool,
    depth_left: usize,
) -> Result<Map, Fail> {
    let mut map = Map::with_capacity(fields.len());
    for field in fields {
        let value = match (&field.children, &field.constant) {
            (Some(children), _) => Value::Object(build_dialect_row(
                children,
                cells,
                next,
                unique,
                depth_left.saturating_sub(1),
            )?),
            (None, Some(constant)) => constant.clone(),
            (None, None) => {
                let cell = cells.get(*next).copied().unwrap_or_default();
                *next += 1;
                if cell.is_empty() {
                    continue;
                }
                dialect_value(cell, depth_left)?
            }
        };
        if unique {
            map.push_unique(field.name.clone(), value);
        } else {
            map.insert(field.name.clone(), value);
        }
    }
    Ok(map)
}

// ---------------------------------------------------------------------------------------
// Objects under construction

/// An object's members plus, past [`LINEAR_KEYS`] members, a hash index from key hash to
/// position (a collision falls back to a scan), so repeated-key checks stay linear.
#[derive(Default)]
struct ObjBuilder {
    entries: Vec<(String, Value)>,
    index: Option<KeyIndex>,
}

impl ObjBuilder {
    /// The position of `key`, if present. When absent the caller appends it next, so the
    /// index records it at the current length.
    fn find(&mut self, key: &str, hasher: &RandomState) -> Option<usize> {
        if self.index.is_none() && self.entries.len() < LINEAR_KEYS {
            return self.entries.iter().position(|(k, _)| k == key);
        }
        let entries = &self.entries;
        let index = self.index.get_or_insert_with(|| {
            let mut idx = KeyIndex::with_capacity_and_hasher(4 * LINEAR_KEYS, Default::default());
            for (i, (k, _)) in entries.iter().enumerate() {
                idx.entry(hasher.hash_one(k.as_str())).or_insert(i);
            }
            idx
        });
        match index.entry(hasher.hash_one(key)) {
            Entry::Occupied(e) => {
                let i = *e.get();
                if entries[i].0 == key {
                    Some(i)
                } else {
                    entries.iter().position(|(k, _)| k == key)
                }
            }
            Entry::Vacant(e) => {
                e.insert(entries.len());
                None
            }
        }
    }

    fn put(&mut self, slot: Option<usize>, key: String, value: Value) {
        match slot.and_then(|i| self.entries.get_mut(i)) {
            Some(entry) => entry.1 = value,
            None => self.entries.push((key, value)),
        }
    }

    fn finish(self) -> Map {
        Map::from_entries_unchecked(self.entries)
    }
}

// ---------------------------------------------------------------------------------------
// Tokens

/// `parsePrimitiveToken`: a quoted string, `true`/`false`/`null`, a number, or else the
/// unquoted text itself.
/// With `exact` (the dialect), any JSON number lexeme is that number, as written.
fn parse_primitive(token: &str, exact: bool) -> Result<Value, Fail> {
    let t = trim_spaces(token);
    if t.is_empty() {
        return Ok(Value::String(String::new()));
    }
    if t.starts_with('"') {
        return parse_string_literal(t).map(Value::String);
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
            None => Value::String(t.to_owned()),
        },
    })
}

/// A dialect value: inline JSON when it starts with `[` or `{`, else a primitive token
/// with exact numbers.
fn dialect_value(token: &str, depth_left: usize) -> Result<Value, Fail> {
    let t = trim_spaces(token);
    if t.starts_with(['[', '{']) {
        parse_json(t, depth_left)
    } else {
        parse_primitive(t, true)
    }
}

/// Inline JSON (`text` is all of it), failing where the JSON parser does.
fn parse_json(text: &str, depth_left: usize) -> Result<Value, Fail> {
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
fn js_number(t: &str) -> Option<Number> {
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
fn parse_string_literal(token: &str) -> Result<String, Fail> {
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
fn parse_key_token(content: &str) -> Result<(String, usize), Fail> {
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
fn unescape(s: &str) -> Result<String, Fail> {
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

/// `parseDelimitedValues`: split on the delimiter outside quotes, trimming spaces; quoted
/// cells stay quoted for [`parse_primitive`].
fn split_delimited<'t>(input: &'t str, delimiter: u8, out: &mut Vec<&'t str>) {
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
fn split_dialect_cells<'t>(
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

/// The bracket closing the JSON array or object that opens at `start`, skipping strings.
fn find_json_end(b: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = start;
    while i < b.len() {
        match b[i] {
            b'"' => i = find_closing_quote(b, i)?,
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// A line inside a table is a row unless it has an unquoted ':' before any delimiter
/// (then it is the next `key: value` of the enclosing object).
fn is_data_row(content: &str, delimiter: u8) -> bool {
    let b = content.as_bytes();
    let Some(colon) = find_unquoted(b, b':', 0) else {
        return true;
    };
    find_unquoted(b, delimiter, 0).is_some_and(|d| d < colon)
}

fn is_array_header_content(content: &str) -> bool {
    trim_spaces(content).starts_with('[') && find_unquoted(content.as_bytes(), b':', 0).is_some()
}

fn is_key_value_content(content: &str) -> bool {
    find_unquoted(content.as_bytes(), b':', 0).is_some()
}

/// The closing quote of the string opening at `start`, skipping escapes.
fn find_closing_quote(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' if i + 1 < b.len() => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// The first `ch` at or after `start` outside quoted sections.
fn find_unquoted(b: &[u8], ch: u8, start: usize) -> Option<usize> {
    let mut in_quotes = false;
    let mut i = start;
    while i < b.len() {
        let c = b[i];
        if c == b'\\' && in_quotes && i + 1 < b.len() {
            i += 2;
            continue;
        }
        if c == b'"' {
            in_quotes = !in_quotes;
        } else if c == ch && !in_quotes {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// The `}` matching the `{` at `start`, ignoring braces inside quoted names.
fn find_matching_brace(b: &[u8], start: usize) -> Option<usize> {
    let mut in_quotes = false;
    let mut depth: i64 = 0;
    let mut i = start;
    while i < b.len() {
        let c = b[i];
        if c == b'\\' && in_quotes && i + 1 < b.len() {
            i += 2;
            continue;
        }
        if c == b'"' {
            in_quotes = !in_quotes;
        } else if !in_quotes {
            if c == b'{' {
                depth += 1;
            } else if c == b'}' {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
        }
        i += 1;
    }
    None
}

/// Spaces only: tabs and NBSP are part of a token (spec §12).
fn trim_spaces(s: &str) -> &str {
    s.trim_matches(' ')
}

fn trim_trailing_spaces(s: &str) -> &str {
    s.trim_end_matches(' ')
}
