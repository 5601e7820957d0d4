//! Values inside text (`pare::embedded`) through the response pipeline, and the note that
//! says when a policy removed members.
//!
//! Why: a tool result that is JSON after a caption, or a Python `str(rows)`, is shaped like
//! JSON only if pare gives every page back with its caption and trailer, within the budget,
//! and the value part reads back exactly; and once a policy prunes, the model must be told
//! that an absent member is not an empty one. Property tests check that whatever value is
//! framed or printed as Python is found again unchanged; one test compares the Python
//! printer with a real `python3` (ignored unless asked for, like the node peers).

use crate::common;

use common::{arb, needs};
use pare::embedded::{self, Kind, py_repr};
use pare::encode::{Format, expand};
use pare::json::{parse, to_compact, to_pretty};
use pare::respond::{Budget, Input, Page, PageKind, Request, Response, merge::merge, respond};
use pare::tokens::{self, Tokenizer};
use pare::{Map, Number, Policy, Value};
use proptest::prelude::*;
use std::io::Write;
use std::process::{Command, Stdio};

fn o200k() -> &'static dyn Tokenizer {
    tokens::builtin("o200k_base").unwrap()
}

fn chars4() -> &'static dyn Tokenizer {
    tokens::builtin("chars4").unwrap()
}

const PRUNED: &str = r#"pare: absent members may have been null, "", [] or {} (pruned)."#;

/// `levels`: brief prunes and drops `body`; standard prunes; full is the input.
fn pruning_policy() -> Policy {
    Policy::parse(
        r#"levels = ["brief", "standard", "full"]
[[ops]]
op = "prune"
levels = ["brief", "standard"]
[[ops]]
op = "drop"
paths = ["$..body"]
levels = ["brief"]
"#,
    )
    .unwrap()
}

/// Rows with a null, an empty string and a long body each.
fn rows_json(n: usize) -> String {
    let rows: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"id":{i},"owner":null,"tag":"","body":"{}"}}"#,
                format!("line {i} ").repeat(12)
            )
        })
        .collect();
    format!("[{}]", rows.join(","))
}

fn respond_text<'a>(
    text: &'a str,
    policy: &'a Policy,
    level: Option<&'a str>,
    format: Format,
    budget: Option<usize>,
    cursor: Option<&'a str>,
) -> Response {
    respond(Request {
        level,
        format,
        budget: budget.map(Budget::tokens),
        cursor,
        ..Request::new(Input::Text(text), policy)
    })
    .unwrap()
}

/// The page's value part, checked to stand between `prefix` and `suffix`.
fn inner<'p>(page: &'p Page, prefix: &str, suffix: &str) -> &'p str {
    page.text
        .strip_prefix(prefix)
        .and_then(|t| t.strip_suffix(suffix))
        .unwrap_or_else(|| panic!("not framed by {prefix:?} / {suffix:?}: {}", page.text))
}

fn assert_within(pages: &[Page], budget: usize) {
    for p in pages {
        let note = p.note.as_deref().unwrap_or("");
        let real = o200k().count(&p.text) + o200k().count(note);
        let c4 = chars4().count(&p.text) + chars4().count(note);
        assert!(
            real <= budget && c4 <= budget,
            "{real} / {c4} > {budget}: {}",
            p.text
        );
        assert_eq!(p.record.tokens_after, Some(o200k().count(&p.text)));
        assert_eq!(p.record.note_tokens, Some(o200k().count(note)));
    }
}

#[test]
fn a_caption_and_trailer_stand_around_the_shaped_value() {
    let (prefix, suffix) = (
        "Contents of https://example.com/api:\n",
        "\n\n(3 more results available)",
    );
    let text = format!("{prefix}{}{suffix}", rows_json(3));
    let p = pruning_policy();
    let r = respond_text(&text, &p, Some("standard"), Format::Auto, None, None);
    let rec = &r.page.record;
    assert_eq!(
        (rec.kind, rec.embedded, rec.format),
        (PageKind::Value, Some("json-span"), "auto")
    );
    let (value, _) = expand(inner(&r.page, prefix, suffix)).unwrap();
    let want: Vec<String> = (0..3)
        .map(|i| {
            format!(
                r#"{{"id":{i},"body":"{}"}}"#,
                format!("line {i} ").repeat(12)
            )
        })
        .collect();
    assert_eq!(to_compact(&value), format!("[{}]", want.join(",")));
    assert_eq!(r.page.note.as_deref(), Some(PRUNED));
    assert_eq!(rec.note_tokens, Some(o200k().count(PRUNED)));
    assert_eq!(rec.tokens_after, Some(o200k().count(&r.page.text)));
    assert_eq!(rec.tokens_before, Some(o200k().count(&text)));
}

#[test]
fn the_lossless_default_gives_back_exactly_the_embedded_value() {
    let p = Policy::builtin_default();
    let py = "Rows:\n[{'id': 1, 'name': \"O'Brien\", 'ok': True, 'note': None, 'x': 1e-05, 'tags': ['a', 'é']}]\n";
    let texts = [
        format!(
            "Result:\n{}\n(more available)",
            to_pretty(&parse(&rows_json(2)).unwrap())
        ),
        format!("{}\n\ndone", rows_json(2)),
        py.to_owned(),
    ];
    for text in &texts {
        let found = embedded::find(text).unwrap();
        for format in [Format::Json, Format::Toon, Format::Auto] {
            let r = respond_text(text, &p, None, format, None, None);
            assert_eq!(r.page.record.embedded, Some(found.kind.as_str()));
            assert_eq!(r.page.note, None, "nothing was removed");
            let (value, _) = expand(inner(&r.page, found.prefix, found.suffix)).unwrap();
            // TOON holds numbers as doubles (`1e-05` reads back as `0.00001`); JSON and
            // auto keep the lexemes.
            let (value, want) = match format {
                Format::Toon => (as_doubles(value), as_doubles(found.value.clone())),
                _ => (value, found.value.clone()),
            };
            assert_eq!(value, want, "{format:?}: {}", r.page.text);
        }
    }
    let found = embedded::find(py).unwrap();
    assert_eq!(found.kind, Kind::PyRepr);
    assert_eq!(
        to_compact(&found.value),
        r#"[{"id":1,"name":"O'Brien","ok":true,"note":null,"x":1e-05,"tags":["a","é"]}]"#
    );
}

#[test]
fn pages_of_an_embedded_value_each_carry_the_frame_within_the_budget() {
    let (prefix, suffix) = ("Query result:\n", "\n(page 1 of the server's results)");
    let text = format!("{prefix}{}{suffix}", rows_json(40));
    let p = pruning_policy();
    for format in [Format::Json, Format::Toon, Format::Auto] {
        for budget in [120, 300, 900] {
            let run =
                |cursor| respond_text(&text, &p, Some("standard"), format, Some(budget), cursor);
            let first = run(None);
            let mut pages = vec![first.page.clone()];
            pages.extend(first.rest.clone());
            assert!(pages.len() > 1, "{budget}: one page");
            let c = pages[0].record.next_cursor.clone().unwrap();
            assert_eq!(run(Some(&c)).page, pages[1]);
            assert_within(&pages, budget);
            for page in &pages {
                assert_eq!(page.record.embedded, Some("json-span"));
                let note = page.note.as_deref().unwrap();
                assert!(
                    note.starts_with(&format!("{PRUNED}\npare: page ")),
                    "{note}"
                );
            }
            let merged = merge(pages.iter().map(|pg| {
                let (v, _) = expand(inner(pg, prefix, suffix)).unwrap();
                (v, pg.record.continues.clone())
            }))
            .unwrap();
            let whole = respond_text(&text, &p, Some("standard"), Format::Json, None, None);
            assert_eq!(merged, parse(inner(&whole.page, prefix, suffix)).unwrap());
        }
    }
}

#[test]
fn a_frame_too_big_for_the_budget_pages_the_text() {
    let prefix = format!("{}\n", "word ".repeat(39));
    let text = format!("{prefix}{}", rows_json(4));
    let p = Policy::builtin_default();
    let r = respond_text(&text, &p, None, Format::Json, Some(60), None);
    let rec = &r.page.record;
    assert!(
        rec.warnings[0].starts_with("the text around the value leaves no room"),
        "{rec:?}"
    );
    assert!(rec.pages > 1);
}

#[test]
fn text_without_a_value_passes_unchanged() {
    let p = pruning_policy();
    for text in [
        "fn main() {\n    println!(\"{}\", 1);\n}\n",
        "```json\n{\"a\": 1, \"b\": [1, 2, 3], \"c\": \"a long enough value\"}\n```\n",
        "[(1, 2), (3, 4), (5, 6), (7, 8)]",
    ] {
        let r = respond_text(text, &p, Some("brief"), Format::Auto, None, None);
        assert_eq!(r.page.text, text);
        let rec = &r.page.record;
        assert_eq!(
            (rec.kind, rec.format, rec.embedded),
            (PageKind::Input, "text", None)
        );
        assert_eq!(r.page.note, None);
    }
}

#[test]
fn a_transparent_door_keeps_an_embedded_text_that_shaping_does_not_shrink() {
    let text = "Rows:\n[{\"a\":1},{\"a\":2},{\"a\":3},{\"a\":4}]";
    let p = Policy::builtin_default();
    let r = respond(Request {
        keep_input_text: true,
        format: Format::Json,
        ..Request::new(Input::Text(text), &p)
    })
    .unwrap();
    assert_eq!(r.page.text, text);
    assert_eq!(
        (r.page.record.kind, r.page.record.embedded),
        (PageKind::Input, None)
    );
}

#[test]
fn dropping_and_pruning_say_so_and_a_lossless_level_does_not() {
    let text = rows_json(2);
    let p = pruning_policy();
    let note = |level| {
        respond(Request {
            level: Some(level),
            ..Request::new(Input::Json(&text), &p)
        })
        .unwrap()
        .page
        .note
    };
    assert_eq!(
        note("brief").as_deref(),
        Some(
            r#"pare: absent members may have been null, "", [] or {} (pruned), or left out by the policy (dropped)."#
        )
    );
    assert_eq!(note("standard").as_deref(), Some(PRUNED));
    assert_eq!(note("full"), None);
    let drop_only = Policy::parse("[[ops]]\nop = \"drop\"\npaths = [\"$..body\"]\n").unwrap();
    let r = respond(Request::new(Input::Json(&text), &drop_only)).unwrap();
    assert_eq!(
        r.page.note.as_deref(),
        Some("pare: some members were left out by the policy (dropped).")
    );
    // Nothing to prune at this level: no line.
    let clean = r#"[{"id":1,"name":"a"}]"#;
    let r = respond(Request {
        level: Some("standard"),
        ..Request::new(Input::Json(clean), &p)
    })
    .unwrap();
    assert_eq!(r.page.note, None);
}

#[test]
fn the_removed_line_counts_toward_the_budget_when_lowering() {
    let text = rows_json(30);
    let p = pruning_policy();
    let full_cost = o200k().count(&text);
    for budget in [200, 400, full_cost / 2, full_cost - 5] {
        let r = respond(Request {
            budget: Some(Budget::tokens(budget)),
            ..Request::new(Input::Json(&text), &p)
        })
        .unwrap();
        let mut pages = vec![r.page];
        pages.extend(r.rest);
        assert_within(&pages, budget);
        assert!(
            pages[0]
                .note
                .as_deref()
                .unwrap()
                .starts_with("pare: absent members")
        );
    }
}

/// `v` with every number as the double it stands for.
fn as_doubles(v: Value) -> Value {
    match v {
        Value::Number(n) => Value::Number(Number::from_f64(n.as_f64().unwrap()).unwrap()),
        Value::Array(items) => Value::Array(items.into_iter().map(as_doubles).collect()),
        Value::Object(m) => Value::Object(m.into_iter().map(|(k, v)| (k, as_doubles(v))).collect()),
        leaf => leaf,
    }
}

/// A caption, a trailer, or nothing.
fn frame_text() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "",
        "Contents of https://example.com/api:\n",
        "Found rows:\n\n",
        "Result (truncated to 100):\r\n",
        "header\nsecond line\n",
    ])
    .prop_map(str::to_owned)
}

fn trailer_text() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "",
        "\n",
        "\n\n(3 more results available)",
        "  \nnext page: token abc\n",
        "\r\n-- end --\r\n",
    ])
    .prop_map(str::to_owned)
}

/// `v` with every number one Python prints as written and every string one pare can print
/// as Python (a character of uncertain printability becomes `é`).
fn pythonish(v: Value) -> Value {
    match v {
        Value::Number(n) => {
            let s = n.as_str();
            let int = s.parse::<i64>().ok().filter(|i| i.to_string() == s);
            Value::Number(match (int, n.as_f64()) {
                (Some(_), _) => n,
                (None, Some(f)) if f.is_finite() => {
                    Number::from_lexeme(&py_repr::float_repr(f)).expect("a JSON lexeme")
                }
                _ => Number::from_i64(0),
            })
        }
        Value::String(s) => Value::from(python_safe(&s)),
        Value::Array(items) => Value::Array(items.into_iter().map(pythonish).collect()),
        Value::Object(m) => Value::Object(
            m.into_iter()
                .map(|(k, v)| (python_safe(&k), pythonish(v)))
                .collect::<Map>(),
        ),
        leaf => leaf,
    }
}

fn python_safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            let alone = Value::from(c.to_string());
            if c.is_ascii() || py_repr::to_repr(&alone).is_some() {
                c
            } else {
                'é'
            }
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn framed_json_is_found_with_the_same_value(
        v in arb::value(),
        prefix in frame_text(),
        suffix in trailer_text(),
        pretty in any::<bool>(),
    ) {
        prop_assume!(matches!(v, Value::Array(_) | Value::Object(_)));
        let json = if pretty { to_pretty(&v) } else { to_compact(&v) };
        let text = format!("{prefix}{json}{suffix}");
        let framed = !prefix.trim().is_empty() || !suffix.trim().is_empty();
        let small = prefix.trim().len() + suffix.trim().len() > json.len();
        match embedded::find(&text) {
            Some(found) => {
                prop_assert_eq!(found.kind, Kind::JsonSpan);
                prop_assert_eq!(found.prefix, prefix.as_str());
                prop_assert_eq!(found.suffix, suffix.as_str());
                prop_assert_eq!(found.value, v);
            }
            None => prop_assert!(!framed || small, "not found: {:?}", text),
        }
    }

    #[test]
    fn python_reprs_read_back_to_the_same_value(v in arb::value(), prefix in frame_text()) {
        let v = match pythonish(v) {
            container @ (Value::Array(_) | Value::Object(_)) => container,
            leaf => Value::Array(vec![leaf]),
        };
        let text = py_repr::to_repr(&v).expect("a pythonish value prints");
        let (back, end) = py_repr::parse_leading(&text).unwrap();
        prop_assert_eq!(end, text.len());
        prop_assert_eq!(&back, &v);
        let framed = format!("{prefix}{text}");
        match embedded::find(&framed) {
            Some(found) => {
                prop_assert_eq!(found.value, v);
                prop_assert_eq!(found.prefix, prefix.as_str());
            }
            // JSON as a whole (`[1, 2]` is both), or a value shorter than its caption.
            None => prop_assert!(
                (prefix.is_empty() && parse(&text).is_ok()) || prefix.trim().len() > text.len(),
                "not found: {:?}", framed
            ),
        }
    }
}

/// The printer against CPython: `repr(json.loads(j))` for many generated values.
#[test]
#[ignore = "needs python3"]
fn python_repr_matches_cpython() {
    needs::python3();
    let values: Vec<Value> = arb::sample(400, 7).into_iter().map(pythonish).collect();
    let input: String = values.iter().map(|v| to_compact(v) + "\n").collect();
    let script = "import sys, json\nfor line in sys.stdin: print(repr(json.loads(line)))";
    let mut child = Command::new("python3")
        .args(["-c", script])
        .env("PYTHONIOENCODING", "utf-8")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let out = String::from_utf8(out.stdout).unwrap();
    let got: Vec<&str> = out.lines().collect();
    assert_eq!(got.len(), values.len());
    for (v, python) in values.iter().zip(got) {
        assert_eq!(
            py_repr::to_repr(v).as_deref(),
            Some(python),
            "{}",
            to_compact(v)
        );
    }
}
