//! A value inside text: JSON after a short caption or before a short trailer, and Python
//! literal reprs of lists and dicts.
//!
//! Why: tool results are often *almost* JSON — `Contents of https://…:\n{…}`, `{…}\n\n(3 more
//! results available)`, or a Python server's `str(rows)` (`[{'id': 1, 'ok': True}]`) — and
//! a model pays full price for them. [`find`] reads the value out when pare can read it back
//! exactly, so [`mod@crate::respond`] can shape it like any JSON and put the caption and trailer
//! back around it, byte for byte; anything else is left to pass unchanged.
//!
//! What counts ([`span`] has the bounds and why):
//! - the value is a list or an object (a number in prose is not data) that starts at the
//!   beginning of one of the first lines, and the rest of its last line is blank;
//! - the caption and trailer are short, hold no code fence and no second value, and the
//!   value is at least as long as they are;
//! - JSON is read as JSON ([`crate::json`]), with its number lexemes and key order; a
//!   Python repr only when [`py_repr::to_repr`] prints the identical text back.
//!
//! The first list or object found at a line start decides: when it does not qualify, the
//! text has no embedded value (pare does not go looking further in, where a guess would be
//! a guess).
//!
//! ```
//! use pare::embedded::{find, Kind};
//! let json = r#"{"items":[{"id":1,"name":"Ada"},{"id":2,"name":"Bo"}],"next":null}"#;
//! let text = format!("Contents of https://example.com/api:\n{json}\n\n(3 more results available)");
//! let found = find(&text).unwrap();
//! assert_eq!(found.kind, Kind::JsonSpan);
//! assert_eq!(found.prefix, "Contents of https://example.com/api:\n");
//! assert_eq!(found.suffix, "\n\n(3 more results available)");
//! assert_eq!(pare::json::to_compact(&found.value), json);
//!
//! let rows = find("[{'id': 1, 'name': 'Ada', 'admin': True}]").unwrap();
//! assert_eq!(rows.kind, Kind::PyRepr);
//! assert!(find("fn main() {\n    println!(\"{}\", 1);\n}").is_none());
//! ```

pub mod py_repr;
pub mod span;

use crate::json;
use crate::value::Value;

/// What kind of text the value was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// JSON with a caption before it or a trailer after it.
    JsonSpan,
    /// A Python literal (`repr` of a list or dict), with or without a caption and trailer.
    PyRepr,
}

impl Kind {
    /// The name records and doors use: `json-span` or `py-repr`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::JsonSpan => "json-span",
            Kind::PyRepr => "py-repr",
        }
    }
}

/// A value found in a text: `prefix + <the value's text> + suffix` is the text.
#[derive(Debug, Clone, PartialEq)]
pub struct Embedded<'t> {
    /// The caption: the text before the value, byte for byte (may be empty).
    pub prefix: &'t str,
    /// The value, read exactly (number lexemes and key order as written).
    pub value: Value,
    /// The trailer: the text after the value, byte for byte (may be empty).
    pub suffix: &'t str,
    /// Whether the value was JSON or a Python repr.
    pub kind: Kind,
}

/// The value embedded in `text`, when there is one pare reads back exactly (see the
/// [module docs](self)). A text that is JSON as a whole is not embedded JSON: `None`.
pub fn find(text: &str) -> Option<Embedded<'_>> {
    for start in span::candidates(text) {
        let rest = &text[start..];
        let (value, len, kind) = match json::parse_leading(rest) {
            Ok((v, len)) => (v, len, Kind::JsonSpan),
            Err(_) => match py_repr::parse_leading(rest) {
                Ok((v, len)) if py_repr::to_repr(&v).as_deref() == Some(&rest[..len]) => {
                    (v, len, Kind::PyRepr)
                }
                // A Python literal pare cannot print back exactly: this is the value, and
                // it is not read.
                Ok(_) => return None,
                Err(_) => continue,
            },
        };
        let (prefix, suffix) = span::frame(text, start, start + len)?;
        let blank = |s: &str| s.trim().is_empty();
        if kind == Kind::JsonSpan && blank(prefix) && blank(suffix) {
            return None;
        }
        return Some(Embedded {
            prefix,
            value,
            suffix,
            kind,
        });
    }
    None
}

#[cfg(test)]
mod tests;
