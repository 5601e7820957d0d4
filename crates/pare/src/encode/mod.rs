//! Rendering a value as the text a model reads.
//!
//! `json` is minified JSON (the cheapest JSON), `pretty` is JSON indented by two spaces as
//! `JSON.stringify(v, null, 2)` writes it. Numbers keep their input lexeme in both.
//!
//! ```
//! use pare::encode::{render, Format};
//! let v = pare::json::parse("{ \"a\": [1, 2] }").unwrap();
//! assert_eq!(render(&v, Format::Json), r#"{"a":[1,2]}"#);
//! ```

use crate::json;
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
}

impl Format {
    pub const NAMES: &[&str] = &["json", "pretty"];

    pub fn parse(name: &str) -> Option<Format> {
        match name {
            "json" => Some(Format::Json),
            "pretty" => Some(Format::Pretty),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Pretty => "pretty",
        }
    }
}

/// The text of `value` in `format`, without a trailing newline.
pub fn render(value: &Value, format: Format) -> String {
    match format {
        Format::Json => json::to_compact(value),
        Format::Pretty => json::to_pretty(value),
    }
}
