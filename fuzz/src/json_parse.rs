//! Fuzz `pare::json::parse`: it must never panic, and whatever it accepts must survive a
//! round trip through both writers unchanged.
//!
//! Why: the parser reads untrusted tool output on the hot path of every run; a panic there
//! takes the whole proxy down, and a value that does not read back the same would mean
//! pare silently changes data.
//!
//! ```text
//! scripts/fuzz json_parse
//! ```
use pare::json::{parse, to_compact, to_pretty};

/// The check on one input: returns, or panics on a fault.
pub fn check(data: &[u8]) {
    // The parser takes `&str`; invalid UTF-8 is the caller's problem, so skip it.
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(value) = parse(text) else {
        return;
    };
    let compact = to_compact(&value);
    let again = parse(&compact).expect("compact output parses");
    assert_eq!(again, value, "compact round trip changed the value");
    // compact output is a fixed point of parse + write
    assert_eq!(to_compact(&again), compact);
    let pretty = to_pretty(&value);
    assert_eq!(parse(&pretty).expect("pretty output parses"), value);
}
