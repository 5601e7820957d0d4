//! Random JSON values for encoding tests: generic trees plus the shapes encoders treat
//! specially (uniform and near-uniform arrays of objects, maps of same-shaped objects,
//! arrays of primitive arrays), with strings, keys and numbers chosen to hit quoting,
//! escaping and number-printing rules.
#![allow(dead_code)]

use pare::{Map, Number, Value};
use proptest::prelude::*;

const STRINGS: &[&str] = &[
    "Ada",
    "hello world",
    "a,b",
    "a|b",
    "a\tb",
    "wip: test",
    "-dash",
    "#hash",
    " pad",
    "pad ",
    "true",
    "false",
    "null",
    "42",
    "-3.5",
    "1e5",
    "05",
    "[x]",
    "{y}",
    "quote\"d",
    "back\\slash",
    "line\nbreak",
    "cr\rx",
    "\u{1}ctl",
    "héllo wörld",
    "日本語",
    "emoji 🎉",
    "\u{feff}bom",
    "",
    "-",
    "a - b",
    "x:y",
    "http://ex.com/a?b=c",
    "2026-02-17T09:00:00Z",
    "  ",
    "null ",
    "0.5x",
];

const KEYS: &[&str] = &[
    "id",
    "name",
    "score",
    "type",
    "a",
    "b",
    "c",
    "x.y",
    "with space",
    "7",
    "10",
    "01",
    "",
    "_under",
    "dash-key",
    "k:colon",
    "naïve",
    "value",
    "tags",
    "meta",
];

pub fn number() -> impl Strategy<Value = Number> {
    prop_oneof![
        4 => (-1000i64..100_000).prop_map(Number::from_i64),
        2 => (-200_000i64..200_000, 1u32..7).prop_map(|(m, d)| {
            let s = format!("{:.*}", d as usize, m as f64 / 10f64.powi(d as i32));
            Number::from_lexeme(&s).expect("a decimal lexeme")
        }),
        1 => prop::sample::select(vec![
            "0", "-0", "1.50", "1e3", "2.5E-2", "-0.0", "1e21", "1e-7", "123456789012345678901",
            "9007199254740993", "0.1", "1e400", "-1e-400", "5e-324", "1.7976931348623157e308",
        ])
        .prop_map(|s| Number::from_lexeme(s).expect("valid lexeme")),
    ]
}

pub fn string() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(STRINGS).prop_map(str::to_owned),
        2 => "[a-zA-Z0-9 _.,:|#-]{0,10}",
        1 => any::<String>().prop_map(|s| s.chars().take(8).collect()),
    ]
}

pub fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        5 => prop::sample::select(KEYS).prop_map(str::to_owned),
        1 => "[a-z0-9 ._-]{0,6}",
    ]
}

pub fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        2 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::Bool),
        3 => number().prop_map(Value::Number),
        4 => string().prop_map(Value::from),
        1 => Just(Value::Array(Vec::new())),
        1 => Just(Value::Object(Map::new())),
    ]
}

pub fn object_of(members: Vec<(String, Value)>) -> Value {
    let mut m = Map::new();
    for (k, v) in members {
        m.insert(k, v);
    }
    Value::Object(m)
}

/// Rows sharing `keys` (each row may lose or gain a member, for near-uniform arrays).
fn rows(cell: BoxedStrategy<Value>) -> impl Strategy<Value = Vec<Value>> {
    (prop::collection::vec(key(), 1..5), 1usize..6).prop_flat_map(move |(keys, n)| {
        let row = keys
            .iter()
            .map(|k| (Just(k.clone()), cell.clone()))
            .collect::<Vec<_>>();
        prop::collection::vec(
            (row, prop::option::weighted(0.15, (key(), leaf()))).prop_map(
                |(mut members, extra)| {
                    if let Some(extra) = extra {
                        members.push(extra);
                    }
                    members
                },
            ),
            n,
        )
        .prop_map(|rows| rows.into_iter().map(object_of).collect())
    })
}

/// Any JSON value, nested up to depth 5, leaning towards tables and maps of records.
pub fn value() -> BoxedStrategy<Value> {
    leaf()
        .prop_recursive(5, 96, 6, |inner| {
            let cell = prop_oneof![6 => leaf(), 1 => inner.clone()].boxed();
            prop_oneof![
                2 => prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                2 => prop::collection::vec((key(), inner.clone()), 0..6).prop_map(object_of),
                3 => rows(cell.clone()).prop_map(Value::Array),
                2 => (prop::collection::vec(key(), 2..5), rows(cell)).prop_map(|(names, rows)| {
                    object_of(names.into_iter().zip(rows).collect())
                }),
                1 => prop::collection::vec(prop::collection::vec(leaf(), 0..4).prop_map(Value::Array), 1..4)
                    .prop_map(Value::Array),
            ]
        })
        .boxed()
}

/// `n` values drawn from [`value`] with a fixed seed (for batch comparisons against a peer).
pub fn sample(n: usize, seed: u8) -> Vec<Value> {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let strategy = value();
    (0..n)
        .map(|_| strategy.new_tree(&mut runner).expect("a value").current())
        .collect()
}

/// Whether `v` holds an empty object below its root (in an array or as a member): the
/// values `{}`'s rendering bugs hide in, which the generators must reach.
pub fn has_nested_empty_object(v: &Value) -> bool {
    let empty = |v: &Value| matches!(v, Value::Object(m) if m.is_empty());
    match v {
        Value::Array(items) => items.iter().any(|i| empty(i) || has_nested_empty_object(i)),
        Value::Object(m) => m.values().any(|i| empty(i) || has_nested_empty_object(i)),
        _ => false,
    }
}
