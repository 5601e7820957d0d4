//! Round trips and `JSON.stringify` parity for `pare::json`.
//!
//! Why: the writer promises text identical to `JSON.stringify` and the parser promises to
//! read back exactly what the writer wrote. Property tests check the second over arbitrary
//! values (control characters, astral characters, odd keys, any number lexeme); the first
//! is checked against a real `node` (tests ignored unless asked for, which `scripts/test`
//! does where node is installed), on the benchmark corpus, on tricky strings and on
//! generated values whose numbers and keys are already in the form JavaScript would print
//! them.
//!
//! ```text
//! cargo test -p pare-engine --test integration json_roundtrip:: -- --include-ignored
//! ```

use crate::common;

use std::io::Write;
use std::process::{Command, Stdio};

use pare::json::{parse, to_compact, to_pretty};
use pare::value::{Map, Number, Value};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// Characters that exercise the escaper and the parser's string scanner.
fn tricky_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => any::<char>(),
        2 => proptest::char::range('a', 'z'),
        1 => proptest::char::range('\0', '\u{1f}'),
        3 => prop::sample::select(vec![
            '"', '\\', '/', '\u{7f}', '\u{2028}', '\u{2029}', 'é', '€', '😀', '\u{feff}',
            '\u{fffd}', '\u{ffff}', '\u{10ffff}', ' ',
        ]),
    ]
}

fn tricky_string() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::collection::vec(tricky_char(), 0..24).prop_map(|cs| cs.into_iter().collect()),
        // long enough to cross the eight-byte scanner several times
        1 => prop::collection::vec(tricky_char(), 24..120).prop_map(|cs| cs.into_iter().collect()),
    ]
}

/// Any lexeme the JSON number grammar admits.
fn any_number() -> impl Strategy<Value = Number> {
    "-?(0|[1-9][0-9]{0,25})(\\.[0-9]{1,12})?([eE][+-]?[0-9]{1,4})?"
        .prop_map(|s| Number::from_lexeme(&s).expect("the regex follows the grammar"))
}

/// Numbers as JavaScript prints them, so `JSON.stringify` leaves them alone.
fn js_number() -> impl Strategy<Value = Number> {
    prop_oneof![
        any::<i32>().prop_map(|i| Number::from_i64(i.into())),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| Number::from_f64(f).expect("finite")),
        (-1000i32..1000, 1u32..5).prop_map(|(m, d)| {
            Number::from_f64(f64::from(m) / 10f64.powi(d as i32)).expect("finite")
        }),
    ]
}

/// Values built from the given leaves, nested a few levels, with unique keys (as
/// `Map::insert` keeps them).
fn value_with(
    number: impl Strategy<Value = Number> + 'static,
    key: BoxedStrategy<String>,
) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number.prop_map(Value::Number),
        tricky_string().prop_map(Value::from),
    ];
    leaf.prop_recursive(5, 96, 8, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..8).prop_map(|members| {
                let mut m = Map::new();
                for (k, v) in members {
                    m.insert(k, v);
                }
                Value::Object(m)
            }),
        ]
    })
}

fn any_value() -> impl Strategy<Value = Value> {
    value_with(any_number(), tricky_string().boxed())
}

/// Keys JavaScript keeps in insertion order: anything but array indices, which its objects
/// move to the front.
fn js_key() -> impl Strategy<Value = String> {
    tricky_string().prop_filter("not an array index", |k| k.parse::<u32>().is_err())
}

proptest! {
    #![proptest_config(Config { cases: 512, ..Config::default() })]

    #[test]
    fn compact_round_trips(v in any_value()) {
        let text = to_compact(&v);
        prop_assert_eq!(parse(&text)?, v.clone());
        // and it is JSON as serde_json understands it (`IgnoredAny` only checks the
        // syntax, so exponents beyond f64 range do not count against it)
        prop_assert!(serde_json::from_str::<serde::de::IgnoredAny>(&text).is_ok(), "{}", text);
    }

    #[test]
    fn pretty_round_trips(v in any_value()) {
        let text = to_pretty(&v);
        let back = parse(&text)?;
        prop_assert_eq!(&back, &v);
        prop_assert_eq!(to_compact(&back), to_compact(&v));
    }

    #[test]
    fn strings_round_trip_through_serde_json(s in tricky_string()) {
        // serde_json is an independent reader and writer of JSON strings
        let ours = to_compact(&Value::from(s.as_str()));
        prop_assert_eq!(serde_json::from_str::<String>(&ours).ok(), Some(s.clone()));
        let theirs = serde_json::to_string(&s).expect("a string serialises");
        prop_assert_eq!(parse(&theirs).ok(), Some(Value::from(s)));
    }

    #[test]
    fn arbitrary_text_never_panics(s in "[\\[\\]{}\",:0-9eE.+\\-a-z\\\\ \n\t\u{0}é😀]{0,64}") {
        let _ = parse(&s);
    }

    #[test]
    fn damaged_json_never_panics(v in any_value(), at in any::<prop::sample::Index>(), c in tricky_char()) {
        let mut text = to_compact(&v);
        let boundaries: Vec<usize> = (0..=text.len()).filter(|&i| text.is_char_boundary(i)).collect();
        let i = boundaries[at.index(boundaries.len())];
        text.insert(i, c);
        let _ = parse(&text);
        let _ = parse(&text[..i]);
    }

    #[test]
    fn parse_agrees_with_serde_json_on_acceptance(v in value_with(js_number(), tricky_string().boxed()), at in any::<prop::sample::Index>()) {
        // cut a valid text anywhere: both parsers accept or both reject
        let text = to_compact(&v);
        let boundaries: Vec<usize> = (0..=text.len()).filter(|&i| text.is_char_boundary(i)).collect();
        let cut = &text[..boundaries[at.index(boundaries.len())]];
        let ours = parse(cut).is_ok();
        let theirs = serde_json::from_str::<serde::de::IgnoredAny>(cut).is_ok();
        prop_assert_eq!(ours, theirs, "{:?}", cut);
    }
}

/// Run `node`, giving it a JSON array of JSON texts on stdin; it answers with a JSON array
/// of `[JSON.stringify(x), JSON.stringify(x, null, 2)]` for each. Fails if node is missing.
fn node_stringify(texts: &[String]) -> Vec<(String, String)> {
    common::needs::node();
    const SCRIPT: &str = "let s='';process.stdin.setEncoding('utf8');\
        process.stdin.on('data',d=>s+=d);process.stdin.on('end',()=>{\
        const out=JSON.parse(s).map(t=>{const v=JSON.parse(t);\
        return [JSON.stringify(v),JSON.stringify(v,null,2)]});\
        process.stdout.write(JSON.stringify(out));});";
    let mut child = Command::new("node")
        .args(["-e", SCRIPT])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("node runs");
    let input = to_compact(&Value::Array(
        texts.iter().map(|t| Value::from(t.as_str())).collect(),
    ));
    let mut stdin = child.stdin.take().expect("piped");
    let feeder = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().expect("node runs");
    feeder.join().expect("feeder").expect("write to node");
    assert!(output.status.success(), "node failed: {output:?}");
    let answer = parse(std::str::from_utf8(&output.stdout).expect("utf-8")).expect("node's JSON");
    answer
        .as_array()
        .expect("an array")
        .iter()
        .map(|pair| {
            let pair = pair.as_array().expect("a pair");
            (
                pair[0].as_str().expect("string").to_owned(),
                pair[1].as_str().expect("string").to_owned(),
            )
        })
        .collect()
}

/// Our compact and pretty forms of `node`'s own compact output must be node's outputs.
fn assert_matches_node(label: &str, texts: &[String]) {
    let node = node_stringify(texts);
    assert_eq!(node.len(), texts.len());
    for (i, (compact, pretty)) in node.iter().enumerate() {
        // node's compact output has JavaScript's number forms and key order; read it back
        let v = parse(compact).unwrap_or_else(|e| panic!("{label} #{i}: {e}"));
        assert!(
            to_compact(&v) == *compact,
            "{label} #{i}: compact differs from node"
        );
        assert!(
            to_pretty(&v) == *pretty,
            "{label} #{i}: pretty differs from node"
        );
        // and the value is the same one the original text gives, up to number spelling
        let original = parse(&texts[i]).unwrap_or_else(|e| panic!("{label} #{i}: {e}"));
        assert_eq!(
            strip_numbers(&original),
            strip_numbers(&v),
            "{label} #{i}: value differs"
        );
    }
}

/// The value with every number replaced by its f64 value, to compare across spellings.
fn strip_numbers(v: &Value) -> Value {
    match v {
        Value::Number(n) => {
            let f = n.as_f64().expect("a number");
            Value::Number(Number::from_f64(f).expect("finite"))
        }
        Value::Array(items) => Value::Array(items.iter().map(strip_numbers).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), strip_numbers(x)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[test]
#[ignore = "needs node: install node, then scripts/test"]
fn corpus_matches_json_stringify() {
    let texts: Vec<String> = common::corpus::corpus_files()
        .iter()
        .map(|p| std::fs::read_to_string(p).expect("readable corpus file"))
        .collect();
    assert_matches_node("corpus", &texts);
}

#[test]
#[ignore = "needs node: install node, then scripts/test"]
fn tricky_strings_match_json_stringify() {
    let mut strings: Vec<String> = (0u32..0x80)
        .map(|c| format!("a{}b", char::from_u32(c).expect("ASCII")))
        .collect();
    strings.extend(
        [
            "",
            "\"\\/",
            "\u{2028}\u{2029}",
            "😀 é € \u{feff} \u{fffd} \u{ffff} \u{10ffff}",
            "\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}",
            "tab\there\nnew line \r\n and a \u{1b}[31mcolour\u{1b}[0m",
            "1234567\"1234567\\1234567\u{1f}",
            "</script><!-- & ' `",
        ]
        .map(String::from),
    );
    strings.push("x".repeat(1000) + "\n" + &"é".repeat(1000));
    let mut texts: Vec<String> = strings
        .iter()
        .map(|s| to_compact(&Value::from(s.as_str())))
        .collect();
    // the same strings as keys and inside nested structure
    let mut m = Map::new();
    for (i, s) in strings.iter().enumerate() {
        m.insert(
            format!("k{s}"),
            Value::from(vec![Value::from(s.as_str()), Value::from(i as i64)]),
        );
    }
    texts.push(to_compact(&Value::Object(m)));
    assert_matches_node("tricky strings", &texts);
}

#[test]
#[ignore = "needs node: install node, then scripts/test"]
fn generated_values_match_json_stringify() {
    let mut runner = TestRunner::new(Config {
        cases: 300,
        ..Config::default()
    });
    let strategy = value_with(js_number(), js_key().boxed());
    let texts: Vec<String> = (0..300)
        .map(|_| {
            let tree = strategy.new_tree(&mut runner).expect("a value");
            to_compact(&proptest::strategy::ValueTree::current(&tree))
        })
        .collect();
    // node must give back exactly our compact text; assert_matches_node checks pretty too
    for (i, (compact, _)) in node_stringify(&texts).iter().enumerate() {
        assert!(
            *compact == texts[i],
            "#{i}: node printed\n{compact}\nwe printed\n{}",
            texts[i]
        );
    }
    assert_matches_node("generated", &texts);
}
