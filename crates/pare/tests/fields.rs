//! The caller's `fields` through the response pipeline ([`Request::fields`]): applied after
//! the policy, counted in the budget (every page and its note within it, whichever door's
//! words the note is in), named in every page's note, part of the cursor's check, and never
//! claimed where they were not applied.

use crate::common;

use pare::policy::Policy;
use pare::project::Fields;
use pare::respond::{Budget, Hint, Input, Request, RespondError, respond};

fn rows(n: usize) -> String {
    let rows: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"id":{i},"title":"issue number {i}","user":{{"login":"u{i}","id":{}}},"body":"{}","made_at":null}}"#,
                i * 7,
                "words ".repeat(20)
            )
        })
        .collect();
    format!(r#"{{"items":[{}],"total":{n}}}"#, rows.join(","))
}

const HINTS: [Hint<'static>; 3] = [
    Hint::Flags,
    Hint::Query {
        cursor: "pare_cursor",
        detail: "pare_detail",
    },
    Hint::Tool {
        more: "pare_more",
        detail: "detail",
    },
];

#[test]
fn fields_apply_after_the_policy_and_every_page_says_which() {
    let policy = Policy::parse("[[ops]]\nop = \"prune\"\n").unwrap();
    let fields = Fields::parse_list("id, user.login").unwrap();
    let text = rows(3);
    let r = respond(Request {
        fields: Some(&fields),
        ..Request::new(Input::Json(&text), &policy)
    })
    .unwrap();
    assert_eq!(
        r.page.text,
        r#"{"items":[{"id":0,"user":{"login":"u0","id":0}},{"id":1,"user":{"login":"u1","id":7}},{"id":2,"user":{"login":"u2","id":14}}]}"#
    );
    let note = r.page.note.unwrap();
    assert!(
        note.ends_with("pare: showing only the fields id, user.login; --fields to change."),
        "{note}"
    );
    // title, body, total: 3 + 3 + 1 left out; the prune's null made_at is the policy's.
    assert_eq!(r.page.record.omitted.get("stripped"), Some(&7));
    assert_eq!(r.page.record.omitted.get("empty"), Some(&3));
}

#[test]
fn paged_fields_fit_the_budget_in_every_doors_words_and_the_cursor_walks_them() {
    let policy = Policy::builtin_default();
    let fields = Fields::parse_list("id,title").unwrap();
    let text = rows(80);
    for hint in HINTS {
        let ask = |cursor| {
            respond(Request {
                fields: Some(&fields),
                budget: Some(Budget::tokens(300)),
                cursor,
                hint,
                ..Request::new(Input::Json(&text), &policy)
            })
        };
        let first = ask(None).unwrap();
        assert!(first.page.record.pages > 1);
        let mut texts = vec![first.page.text.clone()];
        for p in std::iter::once(&first.page).chain(&first.rest) {
            let tokens = p.record.tokens_after.unwrap() + p.record.note_tokens.unwrap();
            assert!(tokens <= 300, "{tokens} > 300 with {hint:?}");
            assert!(
                p.note
                    .as_deref()
                    .unwrap()
                    .contains("showing only the fields id, title")
            );
        }
        texts.extend(first.rest.iter().map(|p| p.text.clone()));
        // The same page texts through every door; the cursor names the next.
        let next = first.page.record.next_cursor.clone().unwrap();
        assert_eq!(ask(Some(&next)).unwrap().page.text, texts[1]);
        // A cursor made without the fields is not one of these pages.
        let plain = respond(Request {
            budget: Some(Budget::tokens(300)),
            ..Request::new(Input::Json(&text), &policy)
        })
        .unwrap();
        let other = plain.page.record.next_cursor.unwrap();
        assert!(matches!(ask(Some(&other)), Err(RespondError::Cursor(_))));
    }
}

#[test]
fn fields_that_select_nothing_are_warned_of() {
    let policy = Policy::builtin_default();
    let fields = Fields::parse_list("id, nothing_here").unwrap();
    let text = rows(2);
    let r = respond(Request {
        fields: Some(&fields),
        ..Request::new(Input::Json(&text), &policy)
    })
    .unwrap();
    assert!(
        r.page
            .record
            .warnings
            .iter()
            .any(|w| w == "fields: `nothing_here` selected nothing"),
        "{:?}",
        r.page.record.warnings
    );
}

#[test]
fn fields_on_text_that_is_not_json_show_it_whole_and_say_so() {
    let policy = Policy::builtin_default();
    let fields = Fields::parse_list("id").unwrap();
    let r = respond(Request {
        fields: Some(&fields),
        ..Request::new(Input::Text("just words"), &policy)
    })
    .unwrap();
    assert_eq!(r.page.text, "just words");
    assert!(r.page.note.is_none());
    assert_eq!(
        r.page.record.warnings,
        ["fields: the response is not JSON: shown whole"]
    );
}

#[test]
fn fields_on_a_pack_policy_are_refused() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/policies/search.toml");
    let policy = Policy::parse(&std::fs::read_to_string(path).unwrap()).unwrap();
    let fields = Fields::parse_list("id").unwrap();
    let text = pare::json::to_compact(&common::search_response());
    let e = respond(Request {
        fields: Some(&fields),
        ..Request::new(Input::Json(&text), &policy)
    })
    .unwrap_err();
    assert!(matches!(e, RespondError::Fields(_)), "{e}");
}

#[test]
fn a_transparent_door_shows_the_fields_not_the_input_text() {
    // `keep_input_text` (the proxies) would send the input when shaping saves nothing: not
    // when the caller asked for fields.
    let policy = Policy::builtin_default();
    let fields = Fields::parse_list("total").unwrap();
    let text = rows(2);
    let r = respond(Request {
        fields: Some(&fields),
        keep_input_text: true,
        ..Request::new(Input::Json(&text), &policy)
    })
    .unwrap();
    assert_eq!(r.page.text, r#"{"total":2}"#);
}
