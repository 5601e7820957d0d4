//! Ops done while parsing ([`pare::early`]) give what the walk gives: the same value, the
//! same manifest (what each op removed, by kind) and the same selectors matched, for every
//! example policy at every level, for hand-written policies that mix the ops the parser does
//! with those it leaves to the walk, on random values, on texts with repeated keys, and on a
//! text large enough to be parsed on two threads.

mod common;

use common::arb;
use pare::json;
use pare::policy::Policy;
use pare::shape::{ShapeOptions, Shaped, shape};
use pare::value::Value;
use proptest::prelude::*;

fn example_policies() -> Vec<(String, Policy)> {
    let mut out = common::example_policies();
    out.extend(
        MIXED
            .iter()
            .map(|&(name, text)| (name.to_owned(), Policy::parse(text).unwrap())),
    );
    out.push(("builtin".into(), Policy::builtin_default()));
    out
}

/// Policies where the parser can do some ops and not others, in several orders.
const MIXED: &[(&str, &str)] = &[
    (
        "drop+prune+hoist+partition",
        r#"
[[ops]]
op = "drop"
paths = ["$..created_at", "$..metadata", "$..*_at"]
[[ops]]
op = "prune"
[[ops]]
op = "hoist"
at = ["$.entities"]
[[ops]]
op = "partition"
at = ["$.relationships"]
by = "type"
"#,
    ),
    (
        "prune first, two drops, a second prune",
        r#"
[[ops]]
op = "prune"
null = false
[[ops]]
op = "drop"
paths = ["$..version", "$..['a','b']"]
[[ops]]
op = "drop"
paths = ["$..id", "$..version"]
[[ops]]
op = "prune"
empty_string = false
"#,
    ),
    (
        "a drop the parser cannot do (the walk does both)",
        r#"
[[ops]]
op = "drop"
paths = ["$.entities[*].name"]
[[ops]]
op = "drop"
paths = ["$..created_at"]
[[ops]]
op = "prune"
"#,
    ),
    (
        "prune before an op that changes emptiness (the walk prunes)",
        r#"
[[ops]]
op = "drop"
paths = ["$..metadata"]
[[ops]]
op = "prune"
[[ops]]
op = "keep"
at = ["$..*"]
fields = ["id", "type", "entities"]
"#,
    ),
    (
        "prune with an exception (the walk prunes)",
        r#"
[[ops]]
op = "drop"
paths = ["$..updated_at"]
[[ops]]
op = "prune"
except = ["$..meta_relations.*"]
"#,
    ),
];

/// Shaped by the walk alone and by the parse and the walk, at `level`: equal in value,
/// manifest and selectors matched.
fn check(name: &str, policy: &Policy, level: usize, text: &str) {
    let opts = ShapeOptions {
        level,
        ..ShapeOptions::new(policy)
    };
    let walked = shape(json::parse(text).unwrap(), policy, &opts);
    let early = pare::early::shape_text(text, policy, &opts).unwrap();
    let what = || format!("{name} @ {}: {text}", policy.levels()[level]);
    assert_eq!(
        json::to_compact(&early.value),
        json::to_compact(&walked.value),
        "{}",
        what()
    );
    assert_eq!(early.manifest, walked.manifest, "{}", what());
    assert_eq!(
        matched(policy, &early, level),
        matched(policy, &walked, level),
        "{}",
        what()
    );
}

fn matched(policy: &Policy, s: &Shaped, level: usize) -> Vec<(String, bool)> {
    policy
        .selector_matches(&s.matches, level)
        .into_iter()
        .flat_map(|op| op.selectors.into_iter().map(|m| (m.selector, m.matched)))
        .collect()
}

fn check_everywhere(text: &str) {
    for (name, policy) in example_policies() {
        for level in 0..policy.levels().len() {
            check(&name, &policy, level, text);
        }
    }
}

proptest! {
    #![proptest_config(common::proptest_config(96))]

    #[test]
    fn the_parser_does_what_the_walk_does(v in arb::value()) {
        check_everywhere(&json::to_pretty(&v));
    }
}

#[test]
fn repeated_keys_take_their_last_value_before_anything_is_left_out() {
    for text in [
        r#"{"a":null,"a":1,"b":2}"#,
        r#"{"a":1,"a":null,"b":2}"#,
        r#"{"created_at":{"x":null},"created_at":null,"id":1}"#,
        r#"{"created_at":null,"created_at":{"x":null},"id":1}"#,
        r#"{"metadata":{"a":null,"a":[]},"x":{"y":"","y":"z"},"x":{}}"#,
        r#"{"entities":[{"id":1,"id":null,"type":"t"},{"id":1,"type":"t","type":"t"}]}"#,
    ] {
        check_everywhere(text);
        let (_, dups) = json::parse_noting_duplicates(text)
            .map(|p| ((), p.duplicates))
            .unwrap();
        assert!(!dups.is_empty());
    }
}

/// The walk notes a selector on a member it then removes; the parser leaves such members
/// out before the walk, so these selectors' matches come from a second, plain walk.
#[test]
fn selectors_that_matched_only_what_the_parser_left_out() {
    for text in [
        r#"{"entities":[],"relationships":[]}"#,
        r#"{"entities":null,"relationships":{}}"#,
        r#"{"metadata":{"a":1},"entities":[{"id":1}]}"#,
    ] {
        check_everywhere(text);
    }
    let p = Policy::parse(
        "[[ops]]\nop = \"drop\"\npaths = [\"$..metadata\"]\n[[ops]]\nop = \"hoist\"\nat = [\"$.metadata\"]\n",
    )
    .unwrap();
    check(
        "hoist at a dropped path",
        &p,
        0,
        r#"{"metadata":[{"a":1},{"a":1}]}"#,
    );
}

#[test]
fn a_dropped_member_is_counted_as_it_was_not_as_pruned_inside() {
    // The walk never looks inside what it drops: `metadata` held something (stripped), and
    // nothing inside it was pruned.
    check_everywhere(r#"{"metadata":{"x":null},"b":{"metadata":{}},"c":[{"metadata":null}]}"#);
}

/// A text over the parser's two-thread size: the helper's elements are left out of as the
/// main parser's are, also inside a dropped member, where the main parser turns them down.
#[test]
fn a_large_text_parsed_on_two_threads() {
    let entity = |i: usize| {
        format!(
            r#"{{"id":"e{i}","type":"System","name":"n{i}","owner":null,"tags":[],"created_at":"2024","metadata":{{"_s":null,"k":[{{"created_at":1,"x":null}}]}},"props":{{"a":null,"b":"{}"}}}}"#,
            if i.is_multiple_of(3) { "" } else { "v" }
        )
    };
    let entities: Vec<String> = (0..12_000).map(entity).collect();
    let relationships: Vec<String> = (0..6_000)
        .map(|i| {
            format!(
                r#"{{"type":"T{}","from":"e{i}","created_at":null,"w":{i}}}"#,
                i % 7
            )
        })
        .collect();
    let text = format!(
        "{{\"entities\": [\n{}\n], \"relationships\": [\n{}\n], \"metadata\": {{\"big\": [\n{}\n]}}}}",
        entities.join(",\n"),
        relationships.join(",\n"),
        entities.join(",\n")
    );
    assert!(text.len() > 4 << 20, "{}", text.len());
    for (name, policy) in example_policies() {
        check(&name, &policy, 0, &text);
    }
}

#[test]
fn the_plan_leaves_to_the_walk_what_it_cannot_do_exactly() {
    let text = r#"{"a":{"created_at":1,"b":null,"c":""},"meta_relations":{"m":{}}}"#;
    // With notes, the walk tracks paths: the same result either way.
    let p = Policy::parse(
        "[omitted]\nenabled = true\nat = [\"$.a\"]\n[[ops]]\nop = \"drop\"\npaths = [\"$..created_at\"]\n[[ops]]\nop = \"prune\"\n",
    )
    .unwrap();
    check("notes", &p, 0, text);
    let walked = shape(json::parse(text).unwrap(), &p, &ShapeOptions::new(&p));
    assert!(json::to_compact(&walked.value).contains("_omitted"));
    let early = pare::early::shape_text(text, &p, &ShapeOptions::new(&p)).unwrap();
    assert_eq!(early.value, walked.value);
    let v: Value = early.value;
    assert!(json::to_compact(&v).contains("_omitted"));
}
