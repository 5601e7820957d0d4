//! Rendering a value as the text a model reads.
//!
//! - `json`: minified JSON (the cheapest JSON); `pretty`: indented by two spaces as
//!   `JSON.stringify(v, null, 2)` writes it. Numbers keep their input lexeme in both.
//! - `toon`: TOON v4, byte for byte what the reference encoder writes ([`toon`]).
//! - `auto`: the cheapest lossless text by the tokenizer's count ([`auto`]).
//!
//! [`expand`] reads any of them back.
//!
//! ```
//! use pare::encode::{render, Format};
//! let tok = pare::tokens::builtin("o200k_base").unwrap();
//! let v = pare::json::parse("{ \"a\": [1, 2] }").unwrap();
//! assert_eq!(render(&v, Format::Json, tok), r#"{"a":[1,2]}"#);
//! assert_eq!(render(&v, Format::Toon, tok), "a[2]: 1,2");
//! ```

use crate::json;
use crate::tokens::Tokenizer;
use crate::value::Value;

/// An output encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Format {
    /// Minified JSON.
    #[default]
    Json,
    /// JSON indented by two spaces.
    Pretty,
    /// TOON v4 with the reference encoder's defaults.
    Toon,
    /// The cheapest of JSON, TOON and pare's TOON dialect, per subtree, by token count.
    Auto,
}

impl Format {
    /// The names [`Format::parse`] accepts, in declaration order.
    pub const NAMES: &[&str] = &["json", "pretty", "toon", "auto"];

    /// The format named `name` (one of [`Format::NAMES`], exact case), or `None` for any other.
    pub fn parse(name: &str) -> Option<Format> {
        match name {
            "json" => Some(Format::Json),
            "pretty" => Some(Format::Pretty),
            "toon" => Some(Format::Toon),
            "auto" => Some(Format::Auto),
            _ => None,
        }
    }
    /// The format's name, the one [`Format::parse`] reads back.
    pub fn name(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Pretty => "pretty",
            Format::Toon => "toon",
            Format::Auto => "auto",
        }
    }
}

/// The text of `value` in `format`, without a trailing newline. `tokenizer` decides
/// `auto`'s choices; the other formats don't use it.
pub fn render(value: &Value, format: Format, tokenizer: &dyn Tokenizer) -> String {
    match format {
        Format::Json => json::to_compact(value),
        Format::Pretty => json::to_pretty(value),
        Format::Toon => toon::encode(value, &toon::EncodeOptions::default()),
        Format::Auto => auto::encode_auto(value, tokenizer),
    }
}

/// [`render`] and the text's exact token count by `tokenizer` (`tokenizer.count(&text)`).
/// `auto` chose its text by that count, so it is not counted again.
pub(crate) fn render_counted(
    value: &Value,
    format: Format,
    tokenizer: &dyn Tokenizer,
) -> (String, usize) {
    match format {
        Format::Auto => auto::encode_auto_counted(value, tokenizer),
        other => {
            let text = render(value, other, tokenizer);
            let tokens = tokenizer.count(&text);
            (text, tokens)
        }
    }
}
pub mod auto;
mod cheapest;
pub mod toon;

/// Which encoding [`expand`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Detected {
    /// JSON, minified or pretty.
    Json,
    /// TOON, or an empty text (TOON's empty document).
    Toon,
    /// pare's `auto` dialect (its text starts with the [`auto::LEGEND_PREFIX`] line).
    Auto,
}

impl Detected {
    /// `json`, `toon` or `auto`: the name of the [`Format`] that writes such text.
    pub fn name(self) -> &'static str {
        match self {
            Detected::Json => "json",
            Detected::Toon => "toon",
            Detected::Auto => "auto",
        }
    }
}

/// Why [`expand`] could not read a text: the error of the reader the text looked like.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExpandError {
    /// The text was read as JSON, or began like JSON, and is not valid JSON.
    #[error("not valid JSON: {0}")]
    Json(#[from] json::JsonError),
    /// The text was read as TOON and is not valid TOON.
    #[error("not valid TOON: {0}")]
    Toon(#[from] toon::ToonError),
    /// The text opened with the `auto` legend line, but its body is not valid TOON.
    #[error("not valid pare auto text: {0}")]
    Auto(toon::ToonError),
}

/// Read back any text pare writes (JSON, pretty JSON, TOON, `auto`) as the value it encodes.
///
/// JSON is tried first: every JSON text that is also TOON (a lone number, string, `[]`)
/// means the same in both. Otherwise the text is TOON (its indentation unit is taken from
/// its first indented line), or pare's dialect when it opens with the legend line.
///
/// JSON and `auto` read back exactly, number lexemes included. TOON carries numbers as
/// JavaScript doubles (`20.0` is written `20`), so it reads back equal in value.
///
/// An empty text (or one of only whitespace, after a byte order mark) is TOON's empty
/// document, `{}` (spec §5): that is what the reference TOON encoder writes for `{}`.
///
/// ```
/// use pare::encode::{expand, Detected};
/// let (v, kind) = expand("a[2]{x,y}:\n  1,b\n  2,c").unwrap();
/// assert_eq!(kind, Detected::Toon);
/// assert_eq!(pare::json::to_compact(&v), r#"{"a":[{"x":1,"y":"b"},{"x":2,"y":"c"}]}"#);
/// assert_eq!(expand("").unwrap(), (pare::Value::Object(pare::Map::new()), Detected::Toon));
/// ```
pub fn expand(text: &str) -> Result<(Value, Detected), ExpandError> {
    expand_from(text, Reader::Detect)
}

/// How [`expand_from`] reads a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reader {
    /// JSON, else `auto`, else TOON (see [`expand`]).
    #[default]
    Detect,
    /// JSON only.
    Json,
    /// TOON (or `auto`) only: a text that begins like JSON is read as TOON too.
    Toon,
}

/// [`expand`] with the reader chosen. Detecting, a text that begins like JSON (`{`, `[`, `"`,
/// or a broken number such as `012`) but is not valid JSON is a JSON error (line and column)
/// unless TOON reads it as more than one string: `[1]]` and `[012]` are broken JSON, not the
/// TOON strings they would be; `[3]: a,b,c` is TOON's root array, and a bare `2026-02-17` is
/// TOON's root string. `Reader::Toon` reads them all as TOON.
///
/// ```
/// use pare::encode::{expand_from, Reader};
/// assert!(expand_from("[1]]", Reader::Detect).unwrap_err().to_string().contains("line 1"));
/// let (v, _) = expand_from("[1]]", Reader::Toon).unwrap();
/// assert_eq!(pare::json::to_compact(&v), r#""[1]]""#);
/// let (v, _) = expand_from("[2]: a,b", Reader::Detect).unwrap();
/// assert_eq!(pare::json::to_compact(&v), r#"["a","b"]"#);
/// ```
pub fn expand_from(text: &str, reader: Reader) -> Result<(Value, Detected), ExpandError> {
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    if reader == Reader::Json {
        return Ok((json::parse(text)?, Detected::Json));
    }
    // Blank is ASCII blank (TOON's and JSON's whitespace): a document of U+00A0 is a string.
    if body
        .trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\r'))
        .is_empty()
    {
        return Ok((Value::Object(crate::value::Map::new()), Detected::Toon));
    }
    if toon::is_dialect(body) {
        let value =
            toon::decode(body, &toon::DecodeOptions::default()).map_err(ExpandError::Auto)?;
        return Ok((value, Detected::Auto));
    }
    let opts = toon::DecodeOptions {
        indent: detected_indent(body),
        ..toon::DecodeOptions::default()
    };
    if reader == Reader::Toon {
        return Ok((toon::decode(body, &opts)?, Detected::Toon));
    }
    let json_error = match json::parse(text) {
        Ok(value) => return Ok((value, Detected::Json)),
        Err(e) => e,
    };
    // A TOON document never opens with `{` (such a key is quoted) or with `[` other than a
    // root array header (`[3]: …`): that text was meant as JSON, and its error is the one
    // that helps.
    let start = body.trim_start_matches([' ', '\t', '\n', '\r']);
    if start.starts_with('{') || (start.starts_with('[') && !toon_root_array_header(start)) {
        return Err(json_error.into());
    }
    let looks_like_json = start.starts_with(['[', '"']) || is_broken_number(start.trim_end());
    match toon::decode(body, &opts) {
        // TOON reads anything as a string; text that began like JSON was meant as JSON.
        Ok(Value::String(_)) | Err(_) if looks_like_json => Err(json_error.into()),
        Ok(value) => Ok((value, Detected::Toon)),
        Err(e) => Err(e.into()),
    }
}

/// A text made only of a JSON number's characters that is not a number (`012`, `1.2.3`,
/// `--5`): a `-` only first or after the exponent's `e`, so a root date `2026-02-17`, which
/// TOON writes bare, is not one.
fn is_broken_number(text: &str) -> bool {
    let b = text.as_bytes();
    !b.is_empty()
        && (b[0] == b'-' || b[0].is_ascii_digit())
        && b.iter().all(|c| c.is_ascii_digit() || b".eE+-".contains(c))
        && b.iter()
            .enumerate()
            .skip(1)
            .all(|(i, &c)| c != b'-' || matches!(b[i - 1], b'e' | b'E'))
}

/// The indentation unit of a TOON text: the leading spaces of its first indented line
/// (encoders indent one level at a time), 2 when nothing is indented.
fn detected_indent(text: &str) -> usize {
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(|l| l.len() - l.trim_start_matches(' ').len())
        .find(|&n| n > 0)
        .unwrap_or(2)
}

/// `[N]…:` — TOON's root array header (`[3]: a,b,c`, `[2]{x,y}:`, `[2|]:`).
fn toon_root_array_header(line: &str) -> bool {
    let line = line.lines().next().unwrap_or("");
    let Some(rest) = line.strip_prefix('[') else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && rest[digits..].starts_with([']', ':', '|', '\t']) && line.contains("]")
}
