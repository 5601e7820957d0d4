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
    pub const NAMES: &[&str] = &["json", "pretty", "toon", "auto"];

    pub fn parse(name: &str) -> Option<Format> {
        match name {
            "json" => Some(Format::Json),
            "pretty" => Some(Format::Pretty),
            "toon" => Some(Format::Toon),
            "auto" => Some(Format::Auto),
            _ => None,
        }
    }
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
pub mod auto;
pub mod toon;
