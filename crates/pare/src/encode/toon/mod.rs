//! TOON (Token-Oriented Object Notation, spec v4): an indentation-based encoding of JSON
//! that says the keys of a uniform array of objects once, as a table header.
//! [`encode`] writes exactly what the reference encoder (`@toon-format/toon`) writes.

pub mod decode;
mod encode;

pub use decode::{DecodeOptions, Dialect, ToonError, decode, is_dialect};
pub use encode::{Delimiter, EncodeOptions, Inexact, encode, encode_streaming, inexact_numbers};
pub(crate) use encode::{
    in_js_order, is_safe_unquoted_where, push_js_number, push_key, push_primitive, push_quoted,
};
