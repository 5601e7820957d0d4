use super::*;
use crate::encode::{Format, expand};
use crate::json::to_compact;
use crate::respond::{Budget, Hint, merge::merge};
use crate::tokens;
use crate::tokens::metered::Metered;

fn o200k() -> &'static dyn Tokenizer {
    tokens::builtin("o200k_base").unwrap()
}

fn chars4() -> &'static dyn Tokenizer {
    tokens::builtin("chars4").unwrap()
}

fn policy(text: &str) -> Policy {
    Policy::parse(text).unwrap()
}

/// `{"items":[…40 items with a long body…]}`; the policy drops `body` at level `brief`.
fn items_and_policy() -> (String, Policy) {
    let items: Vec<String> = (0..40)
        .map(|i| format!(r#"{{"id":{i},"body":"{}"}}"#, format!("{i} ").repeat(60)))
        .collect();
    let text = format!(r#"{{"items":[{}]}}"#, items.join(","));
    let p = policy(
        "levels = [\"brief\", \"standard\", \"full\"]\n[[ops]]\nop = \"drop\"\npaths = [\"$..body\"]\nlevels = [\"brief\"]\n",
    );
    (text, p)
}

/// Every page of a response, walking the cursors, checked against `rest` on the way.
fn walk<'a>(base: impl Fn(Option<&'a str>) -> Request<'a>) -> Vec<Page> {
    let first = respond(base(None)).unwrap();
    let mut pages = vec![first.page.clone()];
    let mut expected_rest = first.rest.clone();
    while let Some(c) = pages.last().unwrap().record.next_cursor.clone() {
        let c: &'a str = Box::leak(c.into_boxed_str());
        let next = respond(base(Some(c))).unwrap();
        assert_eq!(
            next.page,
            expected_rest.remove(0),
            "a cursor gives the page `rest` had"
        );
        pages.push(next.page);
    }
    assert!(expected_rest.is_empty());
    pages
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
    }
}

fn merged(pages: &[Page]) -> Value {
    merge(pages.iter().map(|p| {
        let (v, _) = expand(&p.text).unwrap_or_else(|e| panic!("{e}: {}", p.text));
        (v, p.record.continues.clone())
    }))
    .unwrap()
}

#[test]
fn a_response_that_fits_is_one_page_with_exact_counts() {
    let (text, p) = items_and_policy();
    let r = respond(Request {
        format: Format::Auto,
        ..Request::new(Input::Json(&text), &p)
    })
    .unwrap();
    let rec = &r.page.record;
    assert_eq!(
        (rec.page, rec.pages, rec.next_cursor.as_deref()),
        (1, 1, None)
    );
    assert_eq!(rec.level, "standard");
    assert_eq!(rec.tokens_before, Some(o200k().count(&text)));
    assert_eq!(rec.tokens_after, Some(o200k().count(&r.page.text)));
    assert!(r.page.note.is_none());
}

#[test]
fn over_budget_at_the_default_level_lowers_the_level_with_a_note() {
    let (text, p) = items_and_policy();
    let r = respond(Request {
        budget: Some(Budget::tokens(1500)),
        hint: Hint::Tool {
            more: "pare_more",
            detail: "detail",
        },
        ..Request::new(Input::Json(&text), &p)
    })
    .unwrap();
    let rec = &r.page.record;
    assert_eq!(rec.level, "brief");
    assert_eq!(rec.lowered_from.as_deref(), Some("standard"));
    assert_eq!(rec.pages, 1);
    assert!(!r.page.text.contains("body"));
    let note = r.page.note.as_deref().unwrap();
    assert!(note.contains("detail \"standard\""), "{note}");
    assert_within(std::slice::from_ref(&r.page), 1500);
}

#[test]
fn a_named_level_is_paged_not_lowered_and_the_pages_merge_back() {
    let (text, p) = items_and_policy();
    for format in [Format::Json, Format::Pretty, Format::Toon, Format::Auto] {
        for level in ["standard", "full"] {
            let pages = walk(|cursor| Request {
                level: Some(level),
                format,
                budget: Some(Budget::tokens(1500)),
                cursor,
                ..Request::new(Input::Json(&text), &p)
            });
            assert!(pages.len() > 2, "{format:?} {level}");
            assert!(pages.iter().all(|pg| pg.record.level == level));
            assert_within(&pages, 1500);
            // Both levels keep every member (only `brief` drops `body`). TOON reads numbers
            // back by value; these are integers, so the bytes agree.
            let whole = crate::json::parse(&text).unwrap();
            assert_eq!(
                to_compact(&merged(&pages)),
                to_compact(&whole),
                "{format:?} {level}"
            );
        }
    }
}

#[test]
fn chars4_budgets_bind_when_they_are_the_tighter() {
    let rows: Vec<String> = (0..300)
        .map(|i| format!(r#"{{"word":"internationalization{i}"}}"#))
        .collect();
    let text = format!("[{}]", rows.join(","));
    let p = Policy::builtin_default();
    let budget = Budget {
        tokens: 2000,
        chars4: 600,
    };
    let pages = walk(|cursor| Request {
        budget: Some(budget),
        cursor,
        ..Request::new(Input::Json(&text), &p)
    });
    for pg in &pages {
        let chars = pg.text.chars().count() + pg.note.as_deref().unwrap_or("").chars().count();
        assert!(chars.div_ceil(4) <= 600 + 1, "{chars}");
        assert!(chars4().count(&pg.text) + chars4().count(pg.note.as_deref().unwrap()) <= 600);
    }
}

#[test]
fn plain_text_over_the_budget_is_paged_at_line_ends() {
    let text: String = (0..2000)
        .map(|i| format!("({i}, 'row {i}', None, Decimal('1.50'))\n"))
        .collect();
    let p = Policy::builtin_default();
    let pages = walk(|cursor| Request {
        budget: Some(Budget::tokens(2000)),
        cursor,
        ..Request::new(Input::Text(&text), &p)
    });
    assert!(pages.len() > 5);
    assert_within(&pages, 2000);
    assert!(pages.iter().all(|pg| pg.record.kind == PageKind::Text));
    let joined: String = pages.iter().map(|pg| pg.text.as_str()).collect();
    assert_eq!(joined, text);
    // Within the budget, plain text is itself.
    let small = respond(Request {
        budget: Some(Budget::tokens(2000)),
        ..Request::new(Input::Text("hello, world"), &p)
    })
    .unwrap();
    assert_eq!(small.page.text, "hello, world");
    assert_eq!(small.page.record.kind, PageKind::Input);
}

#[test]
fn a_transparent_door_keeps_the_input_text_at_full_and_when_shaping_saves_nothing() {
    let text = r#"{"a":1,"b":[1,2,3]}"#;
    let p = Policy::builtin_default();
    for level in [Some("full"), None] {
        let r = respond(Request {
            level,
            format: Format::Toon,
            keep_input_text: true,
            budget: Some(Budget::tokens(1000)),
            ..Request::new(Input::Json(text), &p)
        })
        .unwrap();
        assert_eq!(r.page.text, text, "{level:?}");
        assert_eq!(r.page.record.kind, PageKind::Input);
    }
}

#[test]
fn a_cursor_of_another_input_or_budget_is_refused() {
    let (text, p) = items_and_policy();
    let base = |text: &'static str, budget: usize, cursor: Option<&'static str>| {
        respond(Request {
            level: Some("standard"),
            budget: Some(Budget::tokens(budget)),
            cursor,
            ..Request::new(Input::Json(text), &p)
        })
    };
    let text: &'static str = Box::leak(text.into_boxed_str());
    let first = base(text, 1500, None).unwrap();
    let c: &'static str = Box::leak(first.page.record.next_cursor.unwrap().into_boxed_str());
    assert!(base(text, 1500, Some(c)).is_ok());
    let err = base(text, 1600, Some(c)).unwrap_err().to_string();
    assert!(err.contains("does not fit"), "{err}");
    let other: &'static str = Box::leak(text.replace("\"id\":3,", "\"id\":33,").into_boxed_str());
    assert!(base(other, 1500, Some(c)).is_err());
    assert!(base(text, 1500, Some("!!")).is_err());
}

#[test]
fn budgets_too_small_for_a_note_are_refused() {
    let p = Policy::builtin_default();
    let long = format!("[{}]", vec!["1"; 200].join(","));
    let err = respond(Request {
        budget: Some(Budget::tokens(10)),
        ..Request::new(Input::Json(&long), &p)
    })
    .unwrap_err();
    assert!(matches!(err, RespondError::Budget(_)), "{err}");
    // What fits needs no note, so a small budget is enough for it.
    assert!(
        respond(Request {
            budget: Some(Budget::tokens(10)),
            ..Request::new(Input::Json("[1,2,3]"), &p)
        })
        .is_ok()
    );
}

#[test]
fn a_value_input_gives_the_same_pages_as_its_text() {
    let (text, p) = items_and_policy();
    let of = |input| {
        respond(Request {
            level: Some("standard"),
            format: Format::Auto,
            budget: Some(Budget::tokens(1200)),
            ..Request::new(input, &p)
        })
        .unwrap()
    };
    let a = of(Input::Json(&text));
    let b = of(Input::Value(crate::json::parse(&text).unwrap()));
    assert_eq!(a.page.text, b.page.text);
    assert_eq!(a.rest.len(), b.rest.len());
}

#[test]
fn search_results_with_a_pack_section_are_packed_and_paged() {
    let results: Vec<String> = (0..30)
        .map(|i| {
            format!(
                r#"{{"id":"c{i}","score":0.9,"path":"src/m{i}.py","text":"def {}(x):\n    return x + {i}\n"}}"#,
                ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"][i % 6].repeat(i / 6 + 1)
            )
        })
        .collect();
    let text = format!(r#"{{"results":[{}]}}"#, results.join(","));
    let p = policy("[pack]\n");
    let pages = walk(|cursor| Request {
        budget: Some(Budget::tokens(300)),
        cursor,
        ..Request::new(Input::Json(&text), &p)
    });
    assert!(pages.len() > 1);
    assert!(pages.iter().all(|pg| pg.record.kind == PageKind::Packed));
    assert_within(&pages, 300);
    let shown: String = pages
        .iter()
        .flat_map(|pg| pg.text.lines())
        .filter(|l| !l.starts_with("[left out]"))
        .map(|l| format!("{l}\n"))
        .collect();
    for i in 0..30 {
        let id = format!("c{i}");
        assert!(
            shown.contains(&format!("{id} ")) || shown.contains(&format!("{id}\n")),
            "{id} shown on some page:\n{shown}"
        );
    }
}

#[test]
fn plain_input_is_never_parsed_and_pages_merge_back_to_the_text() {
    let policy = policy("[[ops]]\nop = \"prune\"\n");
    let text: String = (0..400)
        .map(|i| format!("{{\"line\": {i}, \"note\": null}}\n"))
        .collect();
    let whole = respond(Request {
        budget: Some(Budget::tokens(100_000)),
        ..Request::new(Input::Plain(&text), &policy)
    })
    .unwrap();
    assert_eq!(whole.page.text, text);
    assert_eq!(whole.page.record.kind, PageKind::Input);
    let pages = walk(|cursor| Request {
        budget: Some(Budget::tokens(500)),
        cursor,
        ..Request::new(Input::Plain(&text), &policy)
    });
    assert!(pages.len() > 2);
    assert!(pages.iter().all(|p| p.record.kind == PageKind::Text));
    assert_eq!(
        pages.iter().map(|p| p.text.as_str()).collect::<String>(),
        text
    );
}

/// Regressions: a cursor given with no budget was ignored (page 1 came back), and a cursor
/// whose input now fits one page got page 1 instead of an error, so a reader walking the
/// pages read page 1 twice.
#[test]
fn a_cursor_without_a_budget_or_past_a_one_page_input_is_refused() {
    let (text, p) = items_and_policy();
    let paged = respond(Request {
        budget: Some(Budget::tokens(300)),
        level: Some("standard"),
        ..Request::new(Input::Json(&text), &p)
    })
    .unwrap();
    let cursor = paged.page.record.next_cursor.clone().unwrap();
    let no_budget = respond(Request {
        cursor: Some(&cursor),
        level: Some("standard"),
        ..Request::new(Input::Json(&text), &p)
    });
    assert!(
        matches!(&no_budget, Err(RespondError::Cursor(m)) if m.contains("budget")),
        "{no_budget:?}"
    );
    let small = r#"{"items":[{"id":1}]}"#;
    let stale = respond(Request {
        cursor: Some(&cursor),
        budget: Some(Budget::tokens(300)),
        level: Some("standard"),
        ..Request::new(Input::Json(small), &p)
    });
    assert!(
        matches!(&stale, Err(RespondError::Cursor(m)) if m.contains("one page")),
        "{stale:?}"
    );
}

/// A response that records no counts (no budget, not measured: `pare compact` alone)
/// counted its note anyway, a process's first count (its rank tables read cold) for a
/// number the record then left out. Measured, the note's count is still there.
#[test]
fn regression_an_uncounted_response_counted_its_note() {
    let (text, p) = items_and_policy();
    let metered = Metered::default();
    let request = |measure| Request {
        level: Some("brief"),
        measure,
        tokenizer: &metered,
        ..Request::new(Input::Json(&text), &p)
    };
    let plain = respond(request(false)).unwrap();
    assert!(plain.page.note.is_some(), "the policy removed something");
    assert_eq!(plain.page.record.note_tokens, None);
    assert_eq!(metered.bytes_read(), 0);
    let measured = respond(request(true)).unwrap();
    let note = measured.page.note.as_deref().unwrap();
    assert_eq!(measured.page.record.note_tokens, Some(o200k().count(note)));
}
