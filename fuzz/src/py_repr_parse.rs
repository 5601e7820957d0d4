//! Fuzz `pare::embedded`: the Python literal reader and the search for a value inside text
//! must never panic; a Python literal is accepted only when it prints back as the very same
//! text, and whatever is found reads back the same as JSON.
//!
//! Why: every tool result that is not JSON goes through [`pare::embedded::find`] in the
//! MCP proxy, so a panic there takes the proxy down, and a value read wrong would mean pare
//! silently changes data.
//!
//! ```text
//! scripts/fuzz py_repr_parse
//! ```
use pare::embedded::{find, py_repr};
use pare::json::{parse, to_compact};

/// The check on one input: returns, or panics on a fault.
pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok((value, end)) = py_repr::parse_leading(text) {
        assert!(end <= text.len() && text.is_char_boundary(end));
        if let Some(printed) = py_repr::to_repr(&value) {
            // The printer's text reads back to the same value, all of it.
            let (again, len) = py_repr::parse_leading(&printed).expect("printed text parses");
            assert_eq!(len, printed.len());
            assert_eq!(again, value, "print + parse changed the value");
        }
    }
    if let Some(found) = find(text) {
        assert!(text.starts_with(found.prefix) && text.ends_with(found.suffix));
        assert!(found.prefix.len() + found.suffix.len() <= text.len());
        let json = to_compact(&found.value);
        assert_eq!(parse(&json).expect("the value is JSON"), found.value);
    }
}
