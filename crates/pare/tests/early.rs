//! Ops done while parsing ([`pare::early`]) give what the walk gives: the same value, the
//! same manifest (what each op removed, by kind) and the same selectors matched, for every
//! example policy at every level, for hand-written policies that mix the ops the parser does
//! with those it leaves to the walk, on random values, on texts with repeated keys, and on a
//! text large enough to be parsed on two threads. And a response written as the text is read
//! (no value built: [`Request::want_value`] off, for policies the stream can do: the parser's
//! ops, and list ops on the lists it wrote) is the response the value gives, page and record.

use crate::common;

use common::arb;
use pare::json;
use pare::policy::Policy;
use pare::respond::{Input, Request, respond};
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
        "scoped drops: members of the items of any `tags` or `meta`, and of the root",
        r#"
[[ops]]
op = "drop"
paths = ["$..['tags','meta'][*]['a','name']", "$..a[*].ty*"]
if_present = ["$['id','b']"]
[[ops]]
op = "prune"
"#,
    ),
    (
        "a scoped drop after a drop by key, then the walk's ops",
        r#"
[[ops]]
op = "drop"
paths = ["$..score"]
[[ops]]
op = "drop"
paths = ["$..value[*]['id','score','type']", "$['c']"]
[[ops]]
op = "prune"
empty_object = false
[[ops]]
op = "hoist"
at = ["$..tags"]
"#,
    ),
    (
        "conditional prunes: on a scalar member, on a parameter, on a list (the walk decides)",
        r#"
[params]
least = 1.0
[[ops]]
op = "drop"
paths = ["$..meta[*]['b']"]
[[ops]]
op = "prune"
empty_object = false
[[ops]]
op = "prune"
where = "type != null"
null = false
empty_string = false
empty_array = false
[[ops]]
op = "prune"
where = "score >= $least || tags"
[[ops]]
op = "hoist"
at = ["$..value"]
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
    let early = pare::shape_text(text, policy, &opts).unwrap();
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
    check_streamed(policy, level, text);
}

/// The response with no value wanted (written as the text is read, when the policy allows)
/// equals the one built from the value: the same page and record; also as a transparent door
/// asks (a proxy: the input text itself when shaping saves nothing). Whether it was streamed.
fn check_streamed(policy: &Policy, level: usize, text: &str) -> bool {
    let mut streamed_both = true;
    for keep_input_text in [false, true] {
        let ask = |want_value| {
            respond(Request {
                level: Some(&policy.levels()[level]),
                want_value,
                keep_input_text,
                ..Request::new(Input::Json(text), policy)
            })
            .map_err(|e| e.to_string())
        };
        streamed_both &= match (ask(true), ask(false)) {
            (Ok(built), Ok(streamed)) => {
                assert_eq!(streamed.page, built.page, "{text}");
                streamed.shaped.is_none() && built.shaped.is_some()
            }
            // A policy that packs search results refuses other input, either way alike.
            (Err(built), Err(streamed)) => {
                assert_eq!(streamed, built, "{text}");
                false
            }
            (built, streamed) => panic!("{text}: {built:?} / {streamed:?}"),
        };
    }
    streamed_both
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

    /// Whole, cut short, or with a byte changed: the stream writes what the value gives, or
    /// hands the text to the parser, which then names the same error.
    #[test]
    fn the_stream_writes_what_the_value_gives(
        v in arb::value(),
        cut in 0.0..1.0f64,
        byte in proptest::sample::select(&b"{}[],:\"\\ an0-e."[..]),
    ) {
        let text = json::to_pretty(&v);
        check_streamed(&adr(), 0, &text);
        let at = text.floor_char_boundary((text.len() as f64 * cut) as usize);
        check_streamed(&adr(), 0, &text[..at]);
        let mut changed = text.clone();
        if at < changed.len() && changed.is_char_boundary(at + 1) {
            changed.replace_range(at..at + 1, &char::from(byte).to_string());
            check_streamed(&adr(), 0, &changed);
        }
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

/// Entity `i` of the large texts below: internal fields, nulls and empties to leave out,
/// some inside a member that is dropped.
fn entity(i: usize) -> String {
    format!(
        r#"{{"id":"e{i}","type":"System","name":"n{i}","owner":null,"tags":[],"created_at":"2024","metadata":{{"_s":null,"k":[{{"created_at":1,"x":null}}]}},"props":{{"a":null,"b":"{}"}}}}"#,
        if i.is_multiple_of(3) { "" } else { "v" }
    )
}

/// Relationship `i` of the large texts below, of seven types.
fn relationship(i: usize) -> String {
    format!(
        r#"{{"type":"T{}","from":"e{i}","created_at":null,"w":{i}}}"#,
        i % 7
    )
}

/// A text over the parser's two-thread size: the helper's elements are left out of as the
/// main parser's are, also inside a dropped member, where the main parser turns them down.
#[test]
fn a_large_text_parsed_on_two_threads() {
    let entities: Vec<String> = (0..12_000).map(entity).collect();
    let relationships: Vec<String> = (0..6_000).map(relationship).collect();
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
    assert!(check_streamed(&adr(), 0, &text), "streamed on two threads");
    // Hoisted and partitioned from what both threads wrote.
    let mixed = Policy::parse(MIXED[0].1).unwrap();
    assert!(
        check_streamed(&mixed, 0, &text),
        "lists streamed on two threads"
    );
    // entities.toml drops only the entities' and relationships' own fields (issue 27: a
    // nested `version` is data), prunes `{}` from relationships only (`where`), and hoists
    // and partitions `$..` lists: the stream follows where each object is, decides the
    // condition as each object closes, and finds the lists at any depth (on one thread: a
    // helper writes elements before it knows whose they are). `check` above holds the
    // parser's way equal to the walk; this, the stream's.
    assert!(
        check_streamed(&self::entities(), 0, &text),
        "entities.toml is written as the text is read"
    );
}

/// A door's own compact text ([`Request::written_by_door`]: no repeated keys, two threads
/// from 512 KB) gives the page any text gives, for every example policy: here between 512 KB
/// and 2 MB, where only the door's text is read on two threads.
#[test]
fn a_doors_own_text_over_512_kb_streams_on_two_threads_as_any_text_does() {
    let entities: Vec<String> = (0..4_000).map(entity).collect();
    let relationships: Vec<String> = (0..3_000).map(relationship).collect();
    let text = format!(
        r#"{{"entities":[{}],"relationships":[{}],"total":4000}}"#,
        entities.join(","),
        relationships.join(",")
    );
    assert!((512 << 10..2 << 20).contains(&text.len()), "{}", text.len());
    for (name, policy) in example_policies() {
        let ask = |written_by_door, want_value| {
            respond(Request {
                written_by_door,
                want_value,
                ..Request::new(Input::Json(&text), &policy)
            })
            .map(|r| r.page)
            .map_err(|e| e.to_string())
        };
        assert_eq!(ask(true, false), ask(false, true), "{name}");
        assert_eq!(ask(true, false), ask(false, false), "{name}");
    }
}

/// Drops that name whose members they take (`$..entities[*]['created_at']`, `$['id']`):
/// the parser follows where each object is and leaves out what the walk drops, no more.
#[test]
fn scoped_drops_are_the_walks_where_the_lists_nest_and_where_they_do_not() {
    let texts = [
        // Items of a list; an item's own list; an object of objects under the name.
        r#"{"entities":[{"id":1,"created_at":"x","entities":[{"created_at":2,"v":1}]}],"created_at":"root"}"#,
        r#"{"entities":{"a":{"created_at":1,"k":2},"created_at":3}}"#,
        // A list of lists: its items are lists, which have no members.
        r#"{"entities":[[{"created_at":1}],{"created_at":2,"metadata":{"created_at":3}}]}"#,
        // The root is a list: `$['id']` names nothing.
        r#"[{"id":1,"entities":[{"created_at":1,"id":2}]}]"#,
        // The name deeper down, under a member that is dropped itself.
        r#"{"id":9,"metadata":{"entities":[{"created_at":1}]},"x":{"relationships":[{"version":"1","id":3,"created_at":null}]}}"#,
        // Repeated keys: the last value, at the first place.
        r#"{"entities":[{"created_at":1,"a":1,"created_at":2}],"entities":[{"version":3,"b":null}]}"#,
        r#"{"entities":[],"relationships":{},"other":[{"created_at":1}]}"#,
    ];
    let policy = Policy::parse(
        r#"
[[ops]]
op = "drop"
paths = ["$..['entities','relationships'][*]['created_at','version','metadata']"]
if_present = ["$['id','created_at']"]
[[ops]]
op = "prune"
"#,
    )
    .unwrap();
    for text in texts {
        check("scoped", &policy, 0, text);
        check("entities.toml", &self::entities(), 0, text);
    }
    // The stream follows where objects are too: this policy is written as the text is read.
    assert!(
        check_streamed(&policy, 0, texts[0]),
        "scoped drops streamed"
    );
    let opts = ShapeOptions::new(&policy);
    let early = pare::shape_text(texts[0], &policy, &opts).unwrap();
    assert_eq!(
        json::to_compact(&early.value),
        r#"{"entities":[{"id":1,"entities":[{"v":1}]}]}"#
    );
}

/// ADR-010's rules: drops by key and a prune, all done by the parser.
fn adr() -> Policy {
    Policy::parse(
        "[[ops]]\nop = \"drop\"\npaths = [\"$..created_at\", \"$..metadata\", \"$..*_at\"]\n[[ops]]\nop = \"prune\"\n",
    )
    .unwrap()
}

#[test]
fn a_policy_the_parser_does_alone_is_written_as_the_text_is_read() {
    let p = adr();
    let wide = wide_object(300, "");
    for text in [
        r#"{"a":{"created_at":1,"b":null,"c":""},"d":[{"metadata":{"x":null}},[],{}],"e":"\u00e9\n"}"#,
        "\u{feff} [1, -0.5e3, true, false, null, \"\", {\"x\": {\"y\": null}}] ",
        r#"{"updated_at":{"a":null},"k":{"z":{"created_at":[1,{"metadata":null}]}}}"#,
        "\"just a string\"",
        // keys written with escapes: dropped by what they decode to, written as the writer would
        r#"{"cr\u0065ated_at":1,"b\n":2,"\u00e9t\u00e9":null,"q\"":{"x":null}}"#,
        // an object of more members than a short list serves
        wide.as_str(),
    ] {
        assert!(check_streamed(&p, 0, text), "{text}");
    }
}

/// What the stream does not write alone, the parser reads: the same response (and errors)
/// either way.
#[test]
fn the_stream_leaves_to_the_parser_what_it_cannot_write_alone() {
    let p = adr();
    let wide = wide_object(300, ",\"k7\":null");
    for text in [
        // a repeated key (the parser keeps the last value and warns)
        r#"{"a":1,"b":null,"a":2}"#,
        r#"{"x":[{"created_at":1,"created_at":2}],"y":null}"#,
        // the same key, once written with an escape
        r#"{"a":1,"\u0061":null}"#,
        // repeated past the short list, in the hash set
        wide.as_str(),
    ] {
        assert!(!check_streamed(&p, 0, text), "{text}");
    }
    let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
    for bad in [
        "{\"a\":nul}",
        "[1,]",
        "{\"a\" 1}",
        "[\"\\x\"]",
        "[1] 2",
        "{\"a\":\"\u{1}\"}",
        &deep,
    ] {
        let err = |want_value| {
            respond(Request {
                want_value,
                ..Request::new(Input::Json(bad), &p)
            })
            .unwrap_err()
            .to_string()
        };
        assert_eq!(err(false), err(true), "{bad}");
    }
}

/// An object of `n` members `"k0":0…`, a `null` among them, and `more` at the end.
fn wide_object(n: usize, more: &str) -> String {
    let members: Vec<String> = (0..n).map(|i| format!("\"k{i}\":{i}")).collect();
    format!("{{{},\"n\":null{more}}}", members.join(","))
}

/// Over its budget, a streamed response is paged from the value, as without the stream.
#[test]
fn a_streamed_response_over_its_budget_is_paged_from_the_value() {
    let p = adr();
    let rows: Vec<String> = (0..400)
        .map(|i| format!(r#"{{"id":{i},"name":"row {i}","created_at":"2024","gone":null}}"#))
        .collect();
    let text = format!("[{}]", rows.join(","));
    let ask = |want_value| {
        respond(Request {
            want_value,
            budget: Some(pare::respond::Budget::tokens(500)),
            ..Request::new(Input::Json(&text), &p)
        })
        .unwrap()
    };
    let (built, streamed) = (ask(true), ask(false));
    assert!(built.page.record.pages > 1);
    assert_eq!(streamed.page, built.page);
    assert_eq!(streamed.rest, built.rest);
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
    let early = pare::shape_text(text, &p, &ShapeOptions::new(&p)).unwrap();
    assert_eq!(early.value, walked.value);
    let v: Value = early.value;
    assert!(json::to_compact(&v).contains("_omitted"));
}

/// List ops on paths of member names: the stream applies them to the lists it wrote
/// ([`pare::json`]'s `lists`), so these policies are streamed too. The second hoist names
/// a field whose key needs an escape, and its siblings are not named after the list.
const LISTS: &str = r#"
[[ops]]
op = "drop"
paths = ["$..at"]
[[ops]]
op = "prune"
[[ops]]
op = "hoist"
at = ["$.e", "$.r", "$.a.b"]
[[ops]]
op = "partition"
at = ["$.r", "$.p", "$.a.b"]
by = "t"
[[ops]]
op = "hoist"
at = ["$.f", "$.p"]
fields = ["t", "q\"x", "é"]
name = "all_{key}"
min_items = 3
"#;

fn lists() -> Policy {
    Policy::parse(LISTS).unwrap()
}

/// The shipped `list_entities` policy: drops, a prune, a hoist and a partition.
fn entities() -> Policy {
    Policy::parse(include_str!("../../../examples/policies/entities.toml")).unwrap()
}

/// A record of a list: a few members from a small set, so that lists share fields and kinds.
fn record() -> impl Strategy<Value = Value> {
    let key = proptest::sample::select(&["t", "v", "id", "at", "q\"x", "é", "n"][..]);
    prop::collection::vec((key.prop_map(str::to_owned), small()), 0..5).prop_map(arb::object_of)
}

fn small() -> impl Strategy<Value = Value> {
    const TEXTS: &[&str] = &[
        "null",
        "\"A\"",
        "\"B\"",
        "\"\"",
        "1",
        "1.0",
        "{}",
        "[]",
        "{\"x\":null}",
        "[1,\"A\"]",
        "\"a\\nb\"",
        "{\"at\":1}",
        "false",
    ];
    proptest::sample::select(TEXTS).prop_map(|t| json::parse(t).unwrap())
}

/// A document whose members are lists of records (mostly), at the paths `LISTS` names and
/// beside them, with members that could clash with a hoist's sibling.
fn listed() -> impl Strategy<Value = Value> {
    let item = prop_oneof![9 => record(), 1 => small()];
    let list = prop_oneof![
        8 => prop::collection::vec(item, 0..7).prop_map(Value::Array),
        1 => small(),
    ];
    let key =
        proptest::sample::select(&["e", "r", "p", "f", "a", "x", "e_common", "all_f", "at"][..]);
    // A member named as a sibling would be is never empty: the walk alone names the
    // sibling before it prunes such a member, the parser after (see `list_ops_on_written_lists`).
    let member = (key.prop_map(str::to_owned), list.clone()).prop_map(|(k, v)| {
        let sibling = k.ends_with("_common") || k.starts_with("all_");
        (
            k,
            if sibling && v.is_empty_like() {
                Value::from(1)
            } else {
                v
            },
        )
    });
    (prop::collection::vec(member, 0..6), list).prop_map(|(mut members, b)| {
        members.push(("a".into(), arb::object_of(vec![("b".into(), b)])));
        let half = members.len() / 2;
        members.rotate_right(half);
        arb::object_of(members)
    })
}

proptest! {
    #![proptest_config(common::proptest_config(256))]

    /// Hoisted and partitioned as the text is read: the page and record the value gives.
    #[test]
    fn the_stream_does_the_list_ops_as_the_walk_does(v in listed()) {
        let text = json::to_pretty(&v);
        check("lists", &lists(), 0, &text);
        check("entities.toml", &entities(), 0, &text);
    }
}

/// The cases the random lists seldom reach, each streamed (or, where the walk would rename
/// a sibling, handed to the parser) with the page the value gives.
#[test]
fn list_ops_on_written_lists() {
    let p = lists();
    let streamed = [
        // a field on every item, hoisted; items left empty keep their places
        r#"{"e":[{"t":"A","v":1},{"t":"A","v":2}],"x":1}"#,
        r#"{"e":[{"t":"A"},{"t":"A"}]}"#,
        // equal values spelt differently in the text, and keys written with escapes
        r#"{"e":[{"\u0074":"\u0041","v":[1, {}]},{"t":"A","v":[1,{}]}]}"#,
        // a number's lexeme is its value: 1 and 1.0 differ
        r#"{"e":[{"t":1,"v":1},{"t":1.0,"v":1}]}"#,
        // an item that is no object: nothing hoisted; a list that is no list
        r#"{"e":[{"t":"A"},"A",{"t":"A"}],"r":{"t":"A"}}"#,
        // hoisted then partitioned: a kind said on every record is hoisted, then nothing to key by
        r#"{"r":[{"t":"A","v":1},{"t":"A","v":2}]}"#,
        r#"{"r":[{"t":"A","v":1},{"t":"B","v":1},{"t":"A","v":2}]}"#,
        // partitioned, then hoisted from the map: a list no more, nothing to hoist
        r#"{"p":[{"t":"A","n":1},{"t":"B","n":1},{"t":"A","n":1}]}"#,
        // a kind that is no string, a record without one: left as a list
        r#"{"p":[{"t":"A"},{"t":1},{"t":"A"}],"a":{"b":[{"t":"A"},{"v":1},{"t":"A"}]}}"#,
        // nested on the path, with dropped and pruned members around
        r#"{"at":{"e":[{"t":1},{"t":1}]},"a":{"at":1,"b":[{"t":"K","at":2,"v":null},{"t":"K","v":""}],"z":null}}"#,
        // fields named, one with an escape, min_items 3
        r#"{"f":[{"q\"x":1,"é":2,"t":3,"v":4},{"é":2,"q\"x":1,"t":3,"v":5},{"t":3,"q\"x":1,"é":2,"v":4}]}"#,
        r#"{"f":[{"t":1},{"t":1}]}"#,
        // the path in an array is not the path
        r#"[{"e":[{"t":1},{"t":1}]}]"#,
        // lists too short to hoist from: none, one item (fewer than min_items), one kept
        r#"{"e":[],"f":[{"t":1}],"r":[{"t":"A","at":1}]}"#,
    ];
    for text in streamed {
        check("lists", &p, 0, text);
        assert!(check_streamed(&p, 0, text), "{text}");
    }
    // The walk would name these siblings `e_common_`/`all_f_`: the parser reads them.
    for text in [
        r#"{"e":[{"t":1},{"t":1}],"e_common":2}"#,
        r#"{"e_common":{"x":1},"e":[{"t":1},{"t":1}]}"#,
        r#"{"all_f":0,"f":[{"t":1},{"t":1},{"t":1}]}"#,
    ] {
        check("lists", &p, 0, text);
        assert!(!check_streamed(&p, 0, text), "{text}");
    }
    // A sibling that clashes only with a member the parser pruned is no clash, streamed as
    // when the value is built. (The walk alone, which prunes after it names the sibling,
    // says `e_common_` here: a difference the early plan had before the stream.)
    let text = r#"{"e_common":null,"e":[{"t":1},{"t":1}]}"#;
    assert!(check_streamed(&p, 0, text), "{text}");
}

/// Policies whose list ops name lists by other selectors stay with the tree.
#[test]
fn list_ops_at_a_name_anywhere_are_done_on_the_written_lists() {
    let p = Policy::parse(
        "[[ops]]\nop = \"prune\"\n[[ops]]\nop = \"hoist\"\nat = [\"$..e\"]\n[[ops]]\nop = \"partition\"\nat = [\"$..r\"]\nby = \"t\"\n",
    )
    .unwrap();
    let texts = [
        r#"{"e":[{"t":1,"n":null},{"t":1}],"r":[{"t":1},{"t":2}]}"#,
        r#"{"a":{"e":[{"t":1,"u":2},{"t":1,"u":3}]},"b":[{"r":[{"t":"x","v":1}]}]}"#,
        // A list of the name inside an item of one being noted: the tree's.
        r#"{"e":[{"t":1,"e":[{"t":2},{"t":2}]},{"t":1}]}"#,
    ];
    for text in texts {
        check("$..e", &p, 0, text);
    }
    assert!(check_streamed(&p, 0, texts[0]));
    assert!(check_streamed(&p, 0, texts[1]));
    assert!(!check_streamed(&p, 0, texts[2]));
}

#[test]
fn list_ops_at_other_selectors_are_left_to_the_tree() {
    for at in ["$..e.x", "$.e[*]", "$.*", "$['e','r']", "$", "$.e_*"] {
        let p = Policy::parse(&format!(
            "[[ops]]\nop = \"prune\"\n[[ops]]\nop = \"hoist\"\nat = [\"{at}\"]\n"
        ))
        .unwrap();
        let text = r#"{"e":[{"t":1,"n":null},{"t":1}],"r":[{"t":1},{"t":1}]}"#;
        check(at, &p, 0, text);
        assert!(!check_streamed(&p, 0, text), "{at}");
    }
}
