//! Pages from the response pipeline, for every shape of value: each page and its note is
//! within the budget (by o200k_base and by chars/4), each page decodes alone, and the pages
//! merge back to exactly the value that was paged. Random values × random budgets, and the
//! checked-in corpus payloads at the budgets users meet.

use crate::common;

use common::arb;
use pare::encode::{Format, expand};
use pare::json::{parse, to_compact};
use pare::respond::{Budget, Input, Page, PageKind, Request, Response, merge::merge, respond};
use pare::tokens::{self, Tokenizer};
use pare::{Policy, Value};
use proptest::prelude::*;

fn o200k() -> &'static dyn Tokenizer {
    tokens::builtin("o200k_base").unwrap()
}

fn chars4() -> &'static dyn Tokenizer {
    tokens::builtin("chars4").unwrap()
}

/// Every page of a response: the first, then each `rest` page, with every cursor on the way
/// checked (each cursor gives the page `rest` holds).
fn all_pages(request: impl Fn(Option<&str>) -> Response, check_cursors: usize) -> Vec<Page> {
    let first = request(None);
    let mut pages = vec![first.page];
    pages.extend(first.rest);
    // Walking every cursor costs a full pipeline run each; the first few and the last
    // are walked here, and the `respond` unit tests walk them all on smaller values.
    let n = pages.len();
    let mut picks: Vec<usize> = (1..n).take(check_cursors).collect();
    picks.extend((n > check_cursors + 1).then_some(n - 1));
    for i in picks {
        let cursor = pages[i - 1]
            .record
            .next_cursor
            .clone()
            .expect("a next cursor");
        let again = request(Some(&cursor));
        assert_eq!(again.page, pages[i], "cursor {cursor} gives page {}", i + 1);
    }
    pages
}

/// The unpaged text of `text` at `level`, and its pages under `budget` (walking the first
/// `check_cursors` cursors and the last).
fn paged(
    text: &str,
    policy: &Policy,
    format: Format,
    level: &str,
    budget: usize,
    check_cursors: usize,
) -> (String, Vec<Page>) {
    let run = |budget: Option<Budget>, cursor: Option<&str>| {
        respond(Request {
            format,
            budget,
            level: Some(level),
            cursor,
            ..Request::new(Input::Json(text), policy)
        })
        .unwrap()
    };
    let whole = run(None, None).page.text;
    let pages = all_pages(|c| run(Some(Budget::tokens(budget)), c), check_cursors);
    (whole, pages)
}

/// The three invariants. `whole` is the text of the unpaged response in the same format.
/// TOON carries objects as JavaScript does (integer-like keys first, wherever they were), so
/// a TOON page's keys are compared as a set.
fn check_pages(pages: &[Page], whole: &str, budget: usize) -> Result<(), TestCaseError> {
    let mut parts = Vec::new();
    for p in pages {
        let note = p.note.as_deref().unwrap_or("");
        let real = o200k().count(&p.text) + o200k().count(note);
        let c4 = chars4().count(&p.text) + chars4().count(note);
        prop_assert!(
            real <= budget && c4 <= budget,
            "page {} of {}: {real} tokens, {c4} by chars/4, budget {budget}",
            p.record.page,
            p.record.pages
        );
        if p.record.kind == PageKind::Text {
            // A value no page could hold any part of (a key over the budget): said in the
            // record, and the pages are pieces of the text.
            prop_assert!(!p.record.warnings.is_empty());
            return Ok(());
        }
        let (v, _) = expand(&p.text)
            .map_err(|e| TestCaseError::fail(format!("page {}: {e}", p.record.page)))?;
        parts.push((v, p.record.continues.clone()));
    }
    let merged = merge(parts).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let (expected, _) = expand(whole).unwrap();
    if pages[0].record.format == "toon" {
        prop_assert_eq!(to_compact(&sorted(merged)), to_compact(&sorted(expected)));
    } else {
        prop_assert_eq!(to_compact(&merged), to_compact(&expected));
    }
    Ok(())
}

/// `v` with every object's keys in sorted order.
fn sorted(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(String, Value)> = m
                .into_entries()
                .into_iter()
                .map(|(k, v)| (k.to_string(), sorted(v)))
                .collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

/// Values that need paging: lists and nested lists of generic values, long strings (cut
/// inside), arrays of arrays.
fn pageable() -> BoxedStrategy<Value> {
    let long_string = (arb::string(), 20usize..300)
        .prop_map(|(s, n)| Value::String(format!("{s} line\n").repeat(n).into()));
    let item = prop_oneof![4 => arb::value(), 1 => long_string];
    let list = prop::collection::vec(item, 0..40).prop_map(Value::Array);
    prop_oneof![
        list.clone(),
        (arb::key(), list.clone(), arb::key(), list.clone()).prop_map(|(a, x, b, y)| {
            arb::object_of(vec![
                ("meta".into(), Value::String("page of results".into())),
                (a, x),
                (b, y),
            ])
        }),
        list.clone().prop_map(|l| arb::object_of(vec![(
            "results".into(),
            arb::object_of(vec![("items".into(), l)])
        )])),
        prop::collection::vec(list, 1..4).prop_map(Value::Array),
    ]
    .boxed()
}

proptest! {
    #![proptest_config(common::proptest_config(48))]
    #[test]
    fn random_values_page_within_budget_alone_and_merge_back(
        v in pageable(),
        budget in 80usize..700,
        format in prop::sample::select(vec![Format::Json, Format::Auto, Format::Toon, Format::Pretty]),
    ) {
        let policy = Policy::parse("").unwrap();
        let (whole, pages) = paged(&to_compact(&v), &policy, format, "standard", budget, 1);
        check_pages(&pages, &whole, budget)?;
    }
}

/// The corpus payloads checked in under `examples/payloads/`, with the policy each is for.
const CORPUS: &[(&str, Option<&str>)] = &[
    ("vendor_graph_full.json", None),
    ("entities_systems.json", Some("entities.toml")),
    ("narrative_day.json", Some("narrative.toml")),
    ("search_memory.json", Some("meta_relations.toml")),
    ("website_usage.json", Some("website_usage.toml")),
];

const BUDGETS: &[usize] = &[300, 500, 1000, 3000, 8000];

fn corpus_pages(format: Format) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    for (file, policy) in CORPUS {
        let text = std::fs::read_to_string(root.join("payloads").join(file)).unwrap();
        let policy = match policy {
            Some(p) => {
                Policy::parse(&std::fs::read_to_string(root.join("policies").join(p)).unwrap())
                    .unwrap()
            }
            None => Policy::builtin_default(),
        };
        for &budget in BUDGETS {
            // A named level is paged, never lowered: every page is of the same value.
            let level = policy.default_level().to_owned();
            let (whole, pages) = paged(&text, &policy, format, &level, budget, 2);
            check_pages(&pages, &whole, budget)
                .unwrap_or_else(|e| panic!("{file} at {budget} in {format:?}: {e}"));
            assert!(
                pages.iter().all(|p| p.record.kind == PageKind::Value),
                "{file} at {budget}: every page decodes alone"
            );
            println!(
                "{file:<24} {format:?} budget {budget:>5}: {} pages",
                pages.len()
            );
        }
    }
}

#[test]
fn corpus_payloads_page_as_json() {
    corpus_pages(Format::Json);
}

#[test]
fn corpus_payloads_page_as_auto() {
    corpus_pages(Format::Auto);
}

#[test]
fn corpus_payloads_page_as_toon() {
    corpus_pages(Format::Toon);
}

#[test]
fn regression_vendor_graph_page_one_declares_the_rows_it_holds() {
    // Page 1 of the vendor graph used to declare `relationships[500]` and hold 66 rows,
    // and later pages started mid-table: the nested arrays were cut as text.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/payloads");
    let text = std::fs::read_to_string(root.join("vendor_graph_full.json")).unwrap();
    let policy = Policy::builtin_default();
    let first = respond(Request {
        format: Format::Toon,
        budget: Some(Budget::tokens(3000)),
        level: Some("full"),
        ..Request::new(Input::Json(&text), &policy)
    })
    .unwrap();
    for page in std::iter::once(&first.page).chain(&first.rest) {
        let (v, _) = expand(&page.text).expect("each page decodes alone");
        let rows = v
            .as_object()
            .and_then(|m| m.get("results"))
            .and_then(Value::as_object)
            .and_then(|m| m.get("relationships"))
            .and_then(Value::as_array);
        if let Some(rows) = rows {
            let declared = format!("relationships[{}]", rows.len());
            assert!(
                page.text.contains(&declared),
                "{declared} in page {}",
                page.record.page
            );
        }
    }
    assert!(first.rest.len() > 2);
    let _ = parse(&text).unwrap();
}

/// A cursor names its page in every process, on every machine and with every Rust release:
/// the check it carries hashes the input and settings in pare's own spelling (the policy's
/// options as JSON, once per policy; parameters by their f64 bits), never `Debug` text. This
/// pins one cursor; a change to what the check covers must be deliberate (cursors an older
/// pare gave are then refused as being for other settings, never misread).
#[test]
fn a_cursor_is_the_same_everywhere_and_pinned() {
    let policy = Policy::parse(
        "[params]\nminMinutes = 0.5\n[[ops]]\nop = \"filter\"\nat = [\"$.sites\"]\nremove_where = \"minutes < $minMinutes\"\n",
    )
    .unwrap();
    let sites: Vec<String> = (0..60)
        .map(|i| format!(r#"{{"site":"s{i}.example","minutes":{i}.5}}"#))
        .collect();
    let text = format!(r#"{{"sites":[{}]}}"#, sites.join(","));
    let cursor = |params: &[(String, String)]| {
        respond(Request {
            budget: Some(Budget::tokens(200)),
            params,
            tokenizer: o200k(),
            ..Request::new(Input::Json(&text), &policy)
        })
        .unwrap()
        .page
        .record
        .next_cursor
        .expect("paged")
    };
    let at = |v: &str| vec![("minMinutes".to_owned(), v.to_owned())];
    assert_eq!(cursor(&[]), "J47xebdEbgV");
    assert_eq!(cursor(&at("0.5")), cursor(&[]), "the default, named");
    assert_ne!(cursor(&at("0.50001")), cursor(&[]));
}
