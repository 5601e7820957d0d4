//! JSON text in and out of [`Value`](crate::value::Value).
//!
//! Why our own parser and writer instead of `serde_json`: pare must hand back exactly what
//! it was given (numbers keep their lexeme, objects keep their order, duplicate keys resolve
//! the way `JSON.parse` does), its output must match `JSON.stringify` byte for byte, and the
//! parser sits on the hot path of every run, so it is a small hand-written byte-level
//! recursive-descent parser with no intermediate tokens.
//!
//! - [`parse`] reads exactly one JSON text (RFC 8259). A leading UTF-8 byte order mark is
//!   skipped (as `jq` does; `JSON.parse` would reject it), since files saved by some editors
//!   carry one and rejecting them helps no one. Nesting is limited to [`MAX_DEPTH`] levels
//!   so hostile input cannot overflow the stack. Errors carry a 1-based line and column.
//! - [`to_compact`] / [`to_pretty`] produce what `JSON.stringify(v)` /
//!   `JSON.stringify(v, null, 2)` would, except that numbers are written as their lexeme.
//!
//! ```
//! use pare::json::{parse, to_compact, to_pretty};
//! let v = parse(r#" {"a": [1.50, "x\u00e9"], "a": true} "#).unwrap();
//! assert_eq!(to_compact(&v), r#"{"a":true}"#);
//! assert_eq!(to_pretty(&parse("[1,{}]").unwrap()), "[\n  1,\n  {}\n]");
//! let err = parse("[1,\n 2,]").unwrap_err();
//! assert_eq!(err.to_string(), "expected a value at line 2 column 4");
//! ```

mod fork;
mod hooks;
mod minify;
pub(crate) mod omit;
mod parse;
pub(crate) mod paths;
pub(crate) mod root_items;
/// The one JSON scanner ([`crate::scan`]), also named here.
pub use crate::scan;
mod stream;
mod write;
mod written;

pub(crate) use hooks::{ListHooks, Narrow, ROOT};
pub(crate) use minify::minified;
pub use parse::{
    DuplicateKey, JsonError, JsonErrorKind, MAX_DEPTH, Parsed, parse, parse_noting_duplicates,
    parse_with_max_depth,
};
pub(crate) use parse::{KeyIndex, parse_leading, parse_omitting};
pub(crate) use stream::{Known, Streamed, compact_noting_paths, compact_omitting};
pub use write::{
    Escape, escape, push_escape, to_compact, to_pretty, write_compact, write_pretty, write_string,
};
pub(crate) use written::Written;

/// The scanner's ([`crate::scan`]): where a JSON string's raw runs end.
pub use crate::scan::find_special;
pub(crate) use crate::scan::is_special;
