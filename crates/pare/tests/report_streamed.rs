//! A report written by the stream ([`pare::report::measure_text`]) is the report of the
//! parsed value ([`pare::report::measure`]): the same counts before, after and per op, the
//! same manifest (paths, kinds, counts, order), the same text and the same selectors
//! matched — for every example policy at every level where the stream can do it, for
//! hand-written policies that stress the paths, on random values written compact and
//! pretty. Where the stream cannot do it, it says so (`None`) and the value is measured.

use crate::common;

use common::arb;
use pare::encode::Format;
use pare::json;
use pare::policy::Policy;
use pare::report::{Report, measure, measure_text};
use pare::shape::ShapeOptions;
use proptest::prelude::*;

/// Policies the stream can do, whose manifests have paths worth comparing.
const STREAMED: &[&str] = &[
    // ADR-010's rules (bench/adr010.toml).
    r#"
[[ops]]
op = "drop"
paths = ["$..created_at", "$..updated_at", "$..valid_from", "$..version", "$..metadata"]
[[ops]]
op = "prune"
"#,
    // Keys that need quoting in a path, a glob, and two drops naming one key.
    r#"
[[ops]]
op = "drop"
paths = ["$..['a b']", "$..*_at", "$..x"]
[[ops]]
op = "drop"
paths = ["$..x", "$..['it\\'s']", "$..['']"]
[[ops]]
op = "prune"
empty_string = false
"#,
    // Prune first, then drops: a member the drops empty is not pruned.
    r#"
[[ops]]
op = "prune"
[[ops]]
op = "drop"
paths = ["$..a", "$..b"]
"#,
    // Drops of the root's members and of a list's items' members.
    r#"
[[ops]]
op = "drop"
paths = ["$['a','b']", "$..entities[*]['id']"]
[[ops]]
op = "prune"
"#,
    // One op.
    r#"
[[ops]]
op = "prune"
"#,
    // A conditional prune, decided as each object closes, after a drop.
    r#"
[[ops]]
op = "drop"
paths = ["$..version"]
[[ops]]
op = "prune"
where = "owner == 'team'"
"#,
];

fn policies() -> Vec<(String, Policy)> {
    let mut out = common::example_policies();
    out.extend(
        STREAMED
            .iter()
            .enumerate()
            .map(|(i, text)| (format!("STREAMED[{i}]"), Policy::parse(text).unwrap())),
    );
    out.push(("builtin".into(), Policy::builtin_default()));
    out
}

fn options(policy: &Policy, level: usize) -> ShapeOptions<'static> {
    ShapeOptions {
        level,
        track_paths: true,
        ..ShapeOptions::new(policy)
    }
}

/// What the two reports must agree on, as one comparable value.
fn facts(r: &Report, policy: &Policy, level: usize) -> impl PartialEq + std::fmt::Debug {
    (
        (r.tokens_before, r.tokens_minified, r.tokens_after),
        r.ops.clone(),
        r.manifest.clone(),
        r.text.clone(),
        policy.unmatched_warnings(&r.matches, level),
    )
}

/// Whether the stream measured `text` (then: as the value's report says).
fn check(name: &str, policy: &Policy, level: usize, text: &str) -> bool {
    let opts = options(policy, level);
    let Some(streamed) = measure_text(text, policy, &opts, true) else {
        return false;
    };
    let value = json::parse(text).expect("the stream only measures JSON");
    let walked = measure(&value, policy, &opts, Format::Json, true, true);
    assert_eq!(
        facts(&streamed, policy, level),
        facts(&walked, policy, level),
        "{name} at level {level} on {text}"
    );
    true
}

fn check_all(text: &str) -> usize {
    let mut streamed = 0;
    for (name, policy) in policies() {
        for level in 0..policy.levels().len() {
            streamed += usize::from(check(&name, &policy, level, text));
        }
    }
    streamed
}

fn entity(i: usize) -> String {
    format!(
        r#"{{"id": "e-{i}", "name": "Entity {i}", "created_at": "2026-01-0{}", "a b": {i},
  "owner": {}, "tags": [], "metadata": {{"v": {i}}}, "it's": "", "": 0,
  "nested": {{"updated_at": 1, "x": null, "y": [{{"valid_from": 2}}]}}}}"#,
        i % 9 + 1,
        if i.is_multiple_of(2) {
            "null"
        } else {
            "\"team\""
        },
    )
}

#[test]
fn entity_payloads_are_measured_by_the_stream_as_the_value_measures_them() {
    let items: Vec<String> = (0..40).map(entity).collect();
    let text = format!(
        "{{\"entities\": [\n{}\n], \"a\": 1, \"b\": null, \"total\": 40}}\n",
        items.join(",\n")
    );
    let streamed = check_all(&text);
    // Not vacuous: every STREAMED policy at its level, and some example policies.
    assert!(streamed > STREAMED.len(), "the stream measured {streamed}");
    for (i, p) in STREAMED.iter().enumerate() {
        let policy = Policy::parse(p).unwrap();
        assert!(
            check(&format!("STREAMED[{i}]"), &policy, 0, &text),
            "STREAMED[{i}]"
        );
    }
}

#[test]
fn a_root_array_and_scalars_are_measured_alike() {
    for text in [
        r#"[{"created_at":1,"x":{"metadata":[]}},[{"version":null}],null,"",[]]"#,
        "null",
        "\"just a string\"",
        "[]",
        "{}",
        r#"{"a b":{"a b":{"a b":null}}}"#,
    ] {
        check_all(text);
    }
}

#[test]
fn repeated_keys_and_non_json_are_left_to_the_parsed_value() {
    let policy = Policy::parse(STREAMED[0]).unwrap();
    let opts = options(&policy, 0);
    for text in [r#"{"a":1,"a":2}"#, r#"{"a":1"#, "[1,]", ""] {
        assert!(measure_text(text, &policy, &opts, true).is_none(), "{text}");
    }
}

#[test]
fn a_policy_the_parser_cannot_do_is_left_to_the_parsed_value() {
    let policy = Policy::parse(
        "[[ops]]\nop = \"drop\"\npaths = [\"$..created_at\"]\n[[ops]]\nop = \"hoist\"\nat = [\"$.entities\"]\n",
    )
    .unwrap();
    let text = format!("{{\"entities\": [{}]}}", entity(1));
    assert!(measure_text(&text, &policy, &options(&policy, 0), true).is_none());
}

proptest! {
    #![proptest_config(common::proptest_config(64))]

    #[test]
    fn the_streams_report_is_the_values(v in arb::value()) {
        check_all(&json::to_compact(&v));
        check_all(&json::to_pretty(&v));
    }
}
