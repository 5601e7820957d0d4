//! The TOON v4 decoder against the spec's decode conformance fixtures, plus a no-panic
//! property over random and mutated input.
//!
//! The fixtures are checked in (`testdata/toon-spec`, spec v4.0); `PARE_TOON_SPEC_DIR`
//! points the test at another copy.

use crate::common;

use std::path::PathBuf;

use pare::encode::toon::{DecodeOptions, decode};
use pare::{Map, Value};
use proptest::prelude::*;

/// Decode fixtures the reference (`@toon-format/toon` 4.4.0) fails itself: non-strict
/// fall-through of a malformed bracket segment to a literal key. The reference throws on
/// all four; we pass them, and would only skip them (not fail) if that ever regressed.
const REFERENCE_FAILS: &[(&str, &str)] = &[
    (
        "treats extra brackets after valid array segment as literal key (non-strict)",
        "reference throws `Unexpected content \"[bar]\" between bracket segment and colon`",
    ),
    (
        "treats bracket segment without a length as literal key (non-strict)",
        "reference throws `Invalid array length: \"\"`",
    ),
    (
        "treats non-integer bracket content as literal key (non-strict)",
        "reference throws `Unexpected content \"[1]\" between bracket segment and colon`",
    ),
    (
        "treats text between bracket segment and colon as literal key (non-strict)",
        "reference throws `Unexpected content \"extra\" between bracket segment and colon`",
    ),
];

fn fixtures_dir() -> PathBuf {
    common::corpus::toon_spec_dir("decode")
}

/// Numbers compare numerically (fixtures write `1.5` where TOON had `1.5000`), everything
/// else exactly, object key order included. Returns where the values first differ.
fn diff(got: &Value, want: &Value, path: &str) -> Option<String> {
    match (got, want) {
        (Value::Number(a), Value::Number(b)) => {
            (a.as_f64() != b.as_f64()).then(|| format!("{path}: got {a}, want {b}"))
        }
        (Value::Array(a), Value::Array(b)) => {
            if a.len() != b.len() {
                return Some(format!("{path}: got {} items, want {}", a.len(), b.len()));
            }
            a.iter()
                .zip(b)
                .enumerate()
                .find_map(|(i, (x, y))| diff(x, y, &format!("{path}[{i}]")))
        }
        (Value::Object(a), Value::Object(b)) => {
            let ka: Vec<_> = a.keys().collect();
            let kb: Vec<_> = b.keys().collect();
            if ka != kb {
                return Some(format!("{path}: got keys {ka:?}, want {kb:?}"));
            }
            a.iter()
                .zip(b.iter())
                .find_map(|((k, x), (_, y))| diff(x, y, &format!("{path}.{k}")))
        }
        _ => (got != want).then(|| {
            format!(
                "{path}: got {}, want {}",
                pare::json::to_compact(got),
                pare::json::to_compact(want)
            )
        }),
    }
}

fn options(case: &Map) -> DecodeOptions {
    let mut opts = DecodeOptions::default();
    if let Some(Value::Object(o)) = case.get("options") {
        if let Some(Value::Bool(strict)) = o.get("strict") {
            opts.strict = *strict;
        }
        for name in ["indent", "indentSize"] {
            if let Some(n) = o.get(name).and_then(Value::as_f64) {
                opts.indent = n as usize;
            }
        }
    }
    opts
}

/// `None` when the case passes, else why not.
fn run_case(case: &Map) -> Option<String> {
    let input = case
        .get("input")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let should_error = matches!(case.get("shouldError"), Some(Value::Bool(true)));
    match (decode(input, &options(case)), should_error) {
        (Ok(got), true) => Some(format!(
            "expected an error, got {}",
            pare::json::to_compact(&got)
        )),
        (Err(_), true) => None,
        (Err(e), false) => Some(format!("unexpected error: {e}")),
        (Ok(got), false) => {
            let want = case.get("expected").cloned().unwrap_or_default();
            diff(&got, &want, "$")
        }
    }
}

#[test]
fn decode_fixtures() {
    let dir = fixtures_dir();
    let entries = std::fs::read_dir(&dir).expect("read the decode fixtures");
    let mut files: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();

    let (mut passed, mut skipped) = (0, Vec::new());
    let mut failures = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("readable fixture");
        let doc = pare::json::parse(&text).expect("fixture is JSON");
        let tests = doc
            .as_object()
            .and_then(|o| o.get("tests"))
            .and_then(Value::as_array)
            .expect("fixture has tests");
        let file_name = file.file_name().unwrap_or_default().to_string_lossy();
        for case in tests {
            let case = case.as_object().expect("case is an object");
            let name = case.get("name").and_then(Value::as_str).unwrap_or("?");
            match run_case(case) {
                None => passed += 1,
                Some(why) => {
                    if let Some((_, reason)) = REFERENCE_FAILS.iter().find(|(n, _)| *n == name) {
                        skipped.push(format!("{file_name}: {name} ({reason})"));
                    } else {
                        let input = case.get("input").and_then(Value::as_str).unwrap_or("");
                        failures.push(format!("{file_name}: {name}\n  input: {input:?}\n  {why}"));
                    }
                }
            }
        }
    }
    println!(
        "toon decode fixtures: {passed} passed, {} skipped (reference fails them too)",
        skipped.len()
    );
    for s in &skipped {
        println!("  skipped {s}");
    }
    assert!(
        failures.is_empty(),
        "{} decode fixtures failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        passed > 300,
        "only {passed} fixtures ran from {}",
        dir.display()
    );
}

fn ok(text: &str) -> Value {
    decode(text, &DecodeOptions::default()).unwrap_or_else(|e| panic!("{text:?}: {e}"))
}

fn err(text: &str) -> pare::encode::toon::ToonError {
    match decode(text, &DecodeOptions::default()) {
        Ok(v) => panic!("{text:?} decoded to {}", pare::json::to_compact(&v)),
        Err(e) => e,
    }
}

#[test]
fn numbers_keep_their_lexeme_except_negative_zero() {
    let v =
        ok("a: 1.5000\nb: -0.0\nc: 123456789012345678901234567890\nd: 1e999\ne: -1e-999\nf: 05");
    assert_eq!(
        pare::json::to_compact(&v),
        r#"{"a":1.5000,"b":0,"c":123456789012345678901234567890,"d":"1e999","e":0,"f":"05"}"#
    );
}

#[test]
fn errors_say_what_was_expected_and_where() {
    let e = err("items[2]{id,name}:\n  1,Ada");
    assert_eq!((e.line, e.column), (2, 1));
    assert_eq!(e.message, "expected 2 tabular rows, found 1");

    let e = err("a:\n  user");
    assert_eq!((e.line, e.column), (2, 7));
    assert_eq!(e.message, "expected ':' after key");

    let e = err("a: 1\n\tb: 2");
    assert_eq!((e.line, e.column), (2, 1));

    let e = err("t: \"ok\\q\"");
    assert_eq!((e.line, e.column), (1, 7));
    assert!(e.message.starts_with("invalid escape \\q"), "{}", e.message);

    let e = err("x[3.7]: a");
    assert_eq!((e.line, e.column), (1, 3));
    assert_eq!(
        e.to_string(),
        "invalid array length \"3.7\": expected a non-negative integer without leading zeros at line 1 column 3"
    );
}

#[test]
fn nesting_is_bounded() {
    let mut text = String::new();
    for depth in 0..300 {
        text.push_str(&"  ".repeat(depth));
        text.push_str("a:\n");
    }
    let e = err(&text);
    assert!(e.message.starts_with("nesting deeper than 256"), "{e}");

    let mut ok_text = String::new();
    for depth in 0..200 {
        ok_text.push_str(&"  ".repeat(depth));
        ok_text.push_str("a:\n");
    }
    ok(&ok_text);

    // arrays of arrays through list items: the deepest frames per level
    let lists = |levels: usize| {
        let mut text = String::from("a[1]:\n");
        for depth in 1..levels {
            text.push_str(&"  ".repeat(depth));
            text.push_str("- [1]:\n");
        }
        text.push_str(&"  ".repeat(levels));
        text.push_str("- x\n");
        text
    };
    ok(&lists(250));
    let e = err(&lists(300));
    assert!(e.message.starts_with("nesting deeper than 256"), "{e}");

    let fields = format!("x[1]{{{}b{}}}:\n  1", "a{".repeat(300), "}".repeat(300));
    assert!(decode(&fields, &DecodeOptions::default()).is_err());
}

#[test]
fn large_keyed_object_with_repeats_stays_linear() {
    let n = 50_000;
    let mut text = format!("m[{}:]{{v}}:\n", 2 * n);
    for pass in 0..2 {
        for i in 0..n {
            text.push_str(&format!("  k{i}: {pass}\n"));
        }
    }
    let lenient = DecodeOptions {
        strict: false,
        ..DecodeOptions::default()
    };
    let start = std::time::Instant::now();
    let v = decode(&text, &lenient).expect("lenient decode");
    assert!(start.elapsed().as_secs() < 10, "{:?}", start.elapsed());
    let m = v.pointer_dotted("m").and_then(Value::as_object).expect("m");
    assert_eq!(m.len(), n);
    assert_eq!(m.position("k77"), Some(77));
    assert_eq!(
        m.get("k77")
            .and_then(|e| e.pointer_dotted("v"))
            .and_then(Value::as_f64),
        Some(1.0)
    );
    let e = decode(&text, &DecodeOptions::default()).unwrap_err();
    assert_eq!(e.line, n + 2);
    assert!(e.message.starts_with("duplicate key \"k0\""), "{e}");
}

const SAMPLES: &[&str] = &[
    "users[2]{id,name}:\n  1,Ada\n  2,Bob\ncount: 2",
    "items[3]:\n  - a\n  - b: 1\n    c[2|]: x|y\n  - [2]: 1,2",
    "m[2:]{host,geo{lat,lon}}:\n  a: h1,1.5,2\n  \"b:c\": h2,-3,4e2",
    "a:\n  b:\n    c: \"q\\\"uo\\u00e9te\"\n  d: []\n# note\ne: null",
    "[2\t]{x\ty}:\n  1\t2\n  3\t4",
    "outer[1]:\n  - inner[2]{a}:\n      1\n      2\n    tail: true",
];

fn mutate(sample: &str, edits: &[(usize, u8, char)]) -> String {
    let mut chars: Vec<char> = sample.chars().collect();
    for &(pos, op, c) in edits {
        let at = pos % (chars.len() + 1);
        match op % 3 {
            0 => chars.insert(at, c),
            1 if at < chars.len() => {
                chars.remove(at);
            }
            _ if at < chars.len() => chars[at] = c,
            _ => chars.push(c),
        }
    }
    chars.into_iter().collect()
}

fn toon_char() -> impl Strategy<Value = char> {
    prop_oneof![
        8 => prop::sample::select(vec![
            ' ', ' ', '\n', '\t', '\r', ':', ',', '|', '-', '[', ']', '{', '}', '"', '\\', '#',
            'a', 'b', 'k', '0', '1', '2', '9', '.', 'e', 'u', 'n', 't',
        ]),
        1 => any::<char>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_text_never_panics(
        chars in prop::collection::vec(toon_char(), 0..120),
        strict in any::<bool>(),
        indent in 1usize..5,
    ) {
        let text: String = chars.into_iter().collect();
        let _ = decode(&text, &DecodeOptions { indent, strict, ..DecodeOptions::default() });
    }

    #[test]
    fn mutated_toon_never_panics(
        sample in prop::sample::select(SAMPLES),
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), toon_char()), 1..6),
        strict in any::<bool>(),
    ) {
        let text = mutate(sample, &edits);
        let _ = decode(&text, &DecodeOptions { indent: 2, strict, ..DecodeOptions::default() });
    }
}
