//! Fuzz `pare expand`'s reader (`pare::encode::expand_from`, detecting and as TOON): it
//! must never panic, and whatever it reads must be written back exactly by every lossless
//! writer — JSON and `auto` to the same value, TOON to the same value in value (numbers as
//! doubles, members in any order) unless `inexact_numbers` names the number it cannot carry.
//!
//! Why: `expand` reads text a model or a user wrote — TOON, pare's dialect, JSON, or none
//! of them — and is the reader every lossless claim rests on (`auto` checks its choice by
//! it). A TOON text that decodes to a value the writers cannot reproduce is a lossless
//! format that changes the value.
//!
//! ```text
//! scripts/fuzz toon_expand
//! ```
use std::sync::LazyLock;

use pare::encode::toon::{self, inexact_numbers};
use pare::encode::{Format, Reader, expand, expand_from, render};
use pare::json::{parse, to_compact};
use pare::tokens::{self, Tokenizer};
use pare::value::Value;

static CHARS4: LazyLock<&'static dyn Tokenizer> =
    LazyLock::new(|| tokens::builtin("chars4").expect("chars4 is built in"));

/// The check on one input: returns, or panics on a fault.
pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for reader in [Reader::Detect, Reader::Toon] {
        let Ok((value, _)) = expand_from(text, reader) else {
            continue;
        };
        let json = to_compact(&value);
        assert_eq!(parse(&json).expect("JSON output parses"), value, "json");
        let auto = render(&value, Format::Auto, *CHARS4);
        let back = expand(&auto).expect("auto output reads back").0;
        assert_eq!(back, value, "auto changed the value:\n{auto}");
        let toon_text = toon::encode(&value, &toon::EncodeOptions::default());
        let back = expand_from(&toon_text, Reader::Toon)
            .expect("TOON output reads back")
            .0;
        assert!(
            same_in_value(&back, &value) || !inexact_numbers(&value).is_empty(),
            "TOON lost something silently:\n{toon_text}"
        );
    }
}

/// Equal as TOON promises: numbers by their double, members in any order.
fn same_in_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x.as_f64().map(f64::to_bits) == y.as_f64().map(f64::to_bits)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_in_value(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_in_value(v, w)))
        }
        _ => a == b,
    }
}
