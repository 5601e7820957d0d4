//! A response written as its input arrives ([`Incremental`]) is the response the whole input
//! gives ([`respond`]): the same text, byte for byte, and the same page (note, record,
//! counts, warnings), however the input is cut into pieces, for every example policy at
//! every level it can stream, on random arrays, on items that repeat keys, and on an array
//! large enough to be read on two threads. What it cannot stream it says at the start.

use crate::common;

use common::arb;
use pare::json;
use pare::policy::Policy;
use pare::respond::{Budget, Incremental, Input, Pushed, Request, respond};
use pare::value::Value;
use proptest::prelude::*;

/// Policies the stream can do whole, besides the examples.
const STREAMABLE: &[(&str, &str)] = &[
    (
        "drops and a prune",
        "[[ops]]\nop = \"drop\"\npaths = [\"$..id\", \"$..*_at\"]\n[[ops]]\nop = \"prune\"\n",
    ),
    (
        "a scoped drop",
        "[[ops]]\nop = \"drop\"\npaths = [\"$..items[*]['a','b']\", \"$['a']\"]\n",
    ),
    ("no ops", ""),
];

fn policies() -> Vec<(String, Policy)> {
    let mut out = common::example_policies();
    out.extend(
        STREAMABLE
            .iter()
            .map(|&(name, text)| (name.to_owned(), Policy::parse(text).unwrap())),
    );
    out.push(("builtin".into(), Policy::builtin_default()));
    out
}

fn request<'a>(input: Input<'a>, policy: &'a Policy, level: &'a str) -> Request<'a> {
    Request {
        level: Some(level),
        want_value: false,
        ..Request::new(input, policy)
    }
}

/// The text an `Incremental` sends for `text` cut at `cuts`, and its page; `None` when it
/// does not stream this request.
fn incremental(
    text: &str,
    cuts: &[usize],
    policy: &Policy,
    level: &str,
) -> Option<Result<(String, pare::respond::Page), json::JsonError>> {
    let mut inc = Incremental::start(request(Input::Json(""), policy, level)).unwrap()?;
    let mut sent = String::new();
    let mut at = 0;
    let mut bounds: Vec<usize> = cuts.iter().map(|c| c % (text.len() + 1)).collect();
    bounds.sort_unstable();
    bounds.push(text.len());
    for b in bounds {
        if b < at {
            continue;
        }
        match inc.push(&text.as_bytes()[at..b]) {
            Ok(Pushed::Text(t)) => sent += &t,
            Ok(Pushed::Undecided) => {}
            Ok(Pushed::NotAnArray) => panic!("an array was taken for something else"),
            Err(e) => return Some(Err(e)),
        }
        at = b;
    }
    Some(inc.finish().map(|f| {
        sent += &f.tail;
        (sent, f.response.page)
    }))
}

fn same_as_whole(text: &str, cuts: &[usize], policy: &Policy, level: &str) -> Option<()> {
    let (sent, page) = incremental(text, cuts, policy, level)?.expect("valid JSON streams");
    let whole = respond(request(Input::Json(text), policy, level)).unwrap();
    assert_eq!(sent, whole.page.text, "level {level}");
    assert_eq!(page, whole.page, "level {level}");
    Some(())
}

fn array_text(items: &[Value], pretty: bool) -> String {
    let v = Value::Array(items.to_vec());
    if pretty {
        json::to_pretty(&v)
    } else {
        json::to_compact(&v)
    }
}

#[test]
fn every_streamable_policy_and_level_gives_the_whole_responses_page() {
    let items = arb::sample(40, 7);
    let mut streamed = 0;
    for (name, policy) in policies() {
        for level in policy.levels() {
            for pretty in [false, true] {
                let text = array_text(&items, pretty);
                let cuts = [1, 7, 300, 301, 2_000, text.len() / 2];
                if same_as_whole(&text, &cuts, &policy, level).is_some() {
                    streamed += 1;
                } else if pretty {
                    eprintln!("{name} at {level}: not streamed");
                }
            }
        }
    }
    assert!(streamed >= 10, "only {streamed} requests streamed");
}

proptest! {
    #![proptest_config(common::proptest_config(48))]

    #[test]
    fn random_arrays_cut_anywhere_give_the_whole_responses_page(
        items in prop::collection::vec(arb::value(), 0..12),
        cuts in prop::collection::vec(any::<usize>(), 0..8),
        pretty in any::<bool>(),
    ) {
        let text = array_text(&items, pretty);
        for (_, policy) in policies().iter().filter(|(n, _)| STREAMABLE.iter().any(|s| s.0 == n)) {
            for level in policy.levels() {
                same_as_whole(&text, &cuts, policy, level);
            }
        }
    }
}

#[test]
fn items_that_repeat_a_key_are_warned_of_where_the_whole_text_has_them() {
    let policy = Policy::parse(STREAMABLE[0].1).unwrap();
    let mut text = String::from("[\n");
    for i in 0..9 {
        text += &format!(
            "  {{\"id\": {i}, \"x\": {{\"made_at\": 1, \"k\": null}}, \"x\": {{\"k\": {i}}}}},\n"
        );
    }
    text += "  {\"é\": \"ü\", \"é\": 2}\n]";
    for cuts in [
        vec![],
        vec![5, 40, 41, 200],
        (0..text.len()).step_by(3).collect(),
    ] {
        let level = policy.default_level().to_owned();
        same_as_whole(&text, &cuts, &policy, &level).unwrap();
    }
    let whole = respond(request(Input::Json(&text), &policy, "full")).unwrap();
    assert!(
        whole
            .page
            .record
            .warnings
            .iter()
            .any(|w| w.contains("more duplicate keys")),
        "{:?}",
        whole.page.record.warnings
    );
}

#[test]
fn an_array_large_enough_for_two_threads_gives_the_whole_responses_page() {
    let row = r#"{"id":1,"name":"a name","at_least":[1,2,3],"made_at":"2024","note":null,"more":{"x":"y"}}"#;
    let text = format!("[{}]", vec![row; 40_000].join(","));
    assert!(text.len() > 2 << 20);
    let policy = Policy::parse(STREAMABLE[0].1).unwrap();
    let level = policy.default_level().to_owned();
    // One piece (one read of it all) and pieces of 64 KiB.
    same_as_whole(&text, &[], &policy, &level).unwrap();
    let cuts: Vec<usize> = (0..text.len()).step_by(64 << 10).collect();
    same_as_whole(&text, &cuts, &policy, &level).unwrap();
}

#[test]
fn what_cannot_stream_says_so_at_the_start() {
    let policy = Policy::parse(STREAMABLE[0].1).unwrap();
    let start = |req: Request| Incremental::start(req).unwrap().is_some();
    let base = || request(Input::Json(""), &policy, "full");
    assert!(start(base()));
    assert!(!start(Request {
        budget: Some(Budget::tokens(500)),
        ..base()
    }));
    assert!(!start(Request {
        want_value: true,
        ..base()
    }));
    assert!(!start(Request {
        format: pare::encode::Format::Toon,
        ..base()
    }));
    let hoist = Policy::parse("[[ops]]\nop = \"hoist\"\nat = [\"$..rows\"]\n").unwrap();
    let level = hoist.default_level().to_owned();
    assert!(!start(request(Input::Json(""), &hoist, &level)));
    let bad = Incremental::start(request(Input::Json(""), &policy, "no-such-level"));
    assert!(bad.is_err());
}

#[test]
fn an_object_is_not_an_array_and_gives_back_what_was_pushed() {
    let policy = Policy::parse(STREAMABLE[0].1).unwrap();
    let mut inc = Incremental::start(request(Input::Json(""), &policy, "full"))
        .unwrap()
        .unwrap();
    assert_eq!(inc.push(b"  ").unwrap(), Pushed::Undecided);
    assert_eq!(inc.push(b"{\"a\":").unwrap(), Pushed::NotAnArray);
    assert_eq!(inc.into_input(), b"  {\"a\":");
}

#[test]
fn a_fault_after_items_were_sent_is_an_error_placed_in_the_whole_text() {
    let policy = Policy::parse(STREAMABLE[0].1).unwrap();
    let text = "[{\"id\":1},\n {\"a\": tru}]";
    let e = incremental(text, &[10], &policy, "full")
        .unwrap()
        .unwrap_err();
    assert_eq!((e.line, e.column), (2, 8), "{e}");
    let e = incremental("[1,2", &[2], &policy, "full")
        .unwrap()
        .unwrap_err();
    assert_eq!(e.kind, json::JsonErrorKind::UnexpectedEnd);
    let e = incremental("[1,\"\u{1}\"]", &[], &policy, "full")
        .unwrap()
        .unwrap_err();
    assert_eq!(e.kind, json::JsonErrorKind::String);
}
