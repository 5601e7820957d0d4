//! A REST response through pare: a JSON body shaped by the route's policy through the
//! response pipeline ([`crate::respond::respond`], as `pare compact` calls it, so the body
//! is byte for byte what `pare compact` prints, minus its newline), with the record in
//! `X-Pare-*` headers. Anything else passes untouched ([`Outcome::Pass`], with the reason).
//!
//! Passed untouched: `pare_detail=full` (the handler's exact bytes and headers); statuses
//! other than 200, 201, 202 and 203 (errors, redirects, 204, 206 ranges, 304); bodies that
//! are not `application/json` or `application/*+json`, or that are content-encoded; bodies
//! that are not UTF-8 JSON.
//!
//! Headers: `X-Pare-Tokens-Before`, `X-Pare-Tokens-After`, `X-Pare-Level`, `X-Pare-Page`,
//! `X-Pare-Pages`; when paged `X-Pare-Next-Cursor` (and [`link`] builds `Link: rel="next"`);
//! when lowered `X-Pare-Lowered-From`; the note (what the policy removed, how to go on) as
//! `X-Pare-Note`, its lines joined by ` | ` with anything outside printable ASCII escaped
//! (`\u{e9}`), since a JSON body has no room for it.

use crate::respond::{self, Budget, Hint, Input, Record, Request, RespondError};
use crate::tokens;

use super::ask::Ask;
use super::routes::RoutePolicy;

/// A shaped response.
#[derive(Debug)]
pub struct Shaped {
    pub body: String,
    pub content_type: &'static str,
    /// `X-Pare-*` headers, in this order.
    pub headers: Vec<(&'static str, String)>,
    pub record: Record,
    pub note: Option<String>,
}

/// What becomes of a response.
#[derive(Debug)]
pub enum Outcome {
    /// Send the handler's response as it is; why (for a log).
    Pass(&'static str),
    Shaped(Box<Shaped>),
    /// Answer with this status and JSON body instead (a cursor that does not fit).
    Refuse {
        status: u16,
        body: String,
    },
}

/// Whether a `Content-Type` is JSON: `application/json` or `application/<x>+json`.
pub fn is_json(content_type: &str) -> bool {
    let media = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    media == "application/json" || (media.starts_with("application/") && media.ends_with("+json"))
}

/// Why a response with this status and headers passes untouched, if it does: a door that
/// streams asks this at the response's start, before it holds any of the body.
pub fn passes(
    ask: &Ask,
    status: u16,
    content_type: Option<&str>,
    encoded: bool,
) -> Option<&'static str> {
    if ask.is_full() {
        Some("pare_detail=full")
    } else if !matches!(status, 200..=203) {
        Some("status")
    } else if !content_type.is_some_and(is_json) {
        Some("not JSON")
    } else if encoded {
        Some("content-encoded")
    } else {
        None
    }
}

/// Shape a response of `route` as `ask` asks. `encoded`: the body carries a
/// `Content-Encoding` the door did not decode.
pub fn shape(
    route: &RoutePolicy,
    ask: &Ask,
    status: u16,
    content_type: Option<&str>,
    encoded: bool,
    body: &[u8],
) -> Outcome {
    if let Some(why) = passes(ask, status, content_type, encoded) {
        return Outcome::Pass(why);
    }
    let Ok(text) = std::str::from_utf8(body) else {
        return Outcome::Pass("not UTF-8");
    };
    let budget = match (ask.max_tokens, route.max_tokens) {
        (Some(a), Some(r)) => Some(a.min(r)),
        (a, r) => a.or(r),
    };
    let request = Request {
        level: ask.level.as_deref(),
        default_level: Some(&route.default_level),
        format: ask.format.unwrap_or(route.format),
        tokenizer: tokens::builtin("o200k_base").expect("o200k_base is built in"),
        budget: budget.map(Budget::tokens),
        cursor: ask.cursor.as_deref(),
        hint: Hint::Query {
            cursor: "pare_cursor",
            detail: "pare_detail",
        },
        ..Request::new(Input::Json(text), &route.policy)
    };
    let page = match respond::respond(request) {
        Ok(r) => r.page,
        Err(RespondError::Json(_)) => return Outcome::Pass("not JSON"),
        Err(e @ (RespondError::Cursor(_) | RespondError::Budget(_))) => {
            let param = if matches!(e, RespondError::Cursor(_)) {
                "pare_cursor"
            } else {
                "pare_max_tokens"
            };
            return Outcome::Refuse {
                status: 400,
                body: serde_json::json!({"error": format!("{param}: {e}"), "param": param})
                    .to_string(),
            };
        }
        Err(_) => return Outcome::Pass("the engine refused it"),
    };
    let r = &page.record;
    let mut headers = vec![
        (
            "X-Pare-Tokens-Before",
            r.tokens_before.unwrap_or(0).to_string(),
        ),
        (
            "X-Pare-Tokens-After",
            r.tokens_after.unwrap_or(0).to_string(),
        ),
        ("X-Pare-Level", r.level.clone()),
        ("X-Pare-Page", r.page.to_string()),
        ("X-Pare-Pages", r.pages.to_string()),
    ];
    if let Some(c) = &r.next_cursor {
        headers.push(("X-Pare-Next-Cursor", c.clone()));
    }
    if let Some(from) = &r.lowered_from {
        headers.push(("X-Pare-Lowered-From", from.clone()));
    }
    if let Some(note) = &page.note {
        headers.push(("X-Pare-Note", header_text(note)));
    }
    Outcome::Shaped(Box::new(Shaped {
        content_type: content_type_of(r.format),
        body: page.text,
        headers,
        record: page.record,
        note: page.note,
    }))
}

/// The `Content-Type` of a shaped body in `format` (the record's: what `auto` chose).
pub fn content_type_of(format: &str) -> &'static str {
    match format {
        "json" | "pretty" => "application/json",
        "toon" => "text/toon; charset=utf-8",
        _ => "text/plain; charset=utf-8",
    }
}

/// The `Link` header value naming the next page: `path`, the query without pare's
/// parameters (`query`, as [`Ask::parse`] returned it), and `pare_cursor=NEXT`.
pub fn link(path: &str, query: &str, next: &str) -> String {
    let sep = if query.is_empty() { "" } else { "&" };
    format!("<{path}?{query}{sep}pare_cursor={next}>; rel=\"next\"")
}

/// A note as one header line: lines joined by ` | `, anything outside printable ASCII
/// escaped as `\u{…}`.
fn header_text(note: &str) -> String {
    let mut out = String::with_capacity(note.len());
    for (i, line) in note.lines().enumerate() {
        if i > 0 {
            out.push_str(" | ");
        }
        for c in line.chars() {
            if (' '..='~').contains(&c) {
                out.push(c);
            } else {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::encode::Format;
    use crate::policy::Policy;

    fn route(max_tokens: Option<usize>) -> RoutePolicy {
        RoutePolicy {
            policy: Arc::new(Policy::parse("[[ops]]\nop = \"prune\"\n").unwrap()),
            default_level: "standard".into(),
            format: Format::Json,
            max_tokens,
        }
    }

    fn rows(n: usize) -> String {
        let rows: Vec<String> = (0..n)
            .map(|i| {
                format!(
                    r#"{{"id":{i},"note":null,"text":"row {i} é {}"}}"#,
                    "word ".repeat(8)
                )
            })
            .collect();
        format!(r#"{{"rows":[{}]}}"#, rows.join(","))
    }

    #[test]
    fn what_is_not_a_plain_json_success_passes_untouched() {
        let r = route(None);
        let ok = Ask::default();
        let body = br#"{"a":null}"#;
        let full = Ask {
            level: Some("full".into()),
            ..Ask::default()
        };
        assert!(matches!(
            shape(&r, &full, 200, Some("application/json"), false, body),
            Outcome::Pass(_)
        ));
        for (status, ct, enc, b) in [
            (404, "application/json", false, &body[..]),
            (206, "application/json", false, &body[..]),
            (200, "text/html", false, &body[..]),
            (200, "application/json", true, &body[..]),
            (200, "application/json", false, &b"not json"[..]),
            (200, "application/json", false, &b"\xff"[..]),
        ] {
            assert!(
                matches!(shape(&r, &ok, status, Some(ct), enc, b), Outcome::Pass(_)),
                "{status} {ct}"
            );
        }
        assert!(is_json("application/problem+json; charset=utf-8") && !is_json("text/json"));
    }

    #[test]
    fn pages_fit_the_budget_are_json_and_the_cursor_reaches_the_next() {
        let r = route(Some(400));
        let text = rows(60);
        let tok = tokens::builtin("o200k_base").unwrap();
        let mut ask = Ask::default();
        let mut pages = 0;
        loop {
            let Outcome::Shaped(s) = shape(
                &r,
                &ask,
                200,
                Some("application/json"),
                false,
                text.as_bytes(),
            ) else {
                panic!("not shaped")
            };
            pages += 1;
            serde_json::from_str::<serde_json::Value>(&s.body).unwrap();
            let note = s.note.as_deref().map_or(0, |n| tok.count(n));
            assert!(tok.count(&s.body) + note <= 400);
            let h = |name: &str| {
                s.headers
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.clone())
            };
            assert_eq!(h("X-Pare-Page").unwrap(), pages.to_string());
            assert!(h("X-Pare-Note").unwrap().is_ascii());
            match h("X-Pare-Next-Cursor") {
                Some(c) => ask.cursor = Some(c),
                None => break,
            }
        }
        assert!(pages > 1);
        let bad = Ask {
            cursor: Some("zzzz".into()),
            ..Ask::default()
        };
        assert!(matches!(
            shape(
                &r,
                &bad,
                200,
                Some("application/json"),
                false,
                text.as_bytes()
            ),
            Outcome::Refuse { status: 400, .. }
        ));
        assert_eq!(
            link("/a", "x=1", "C9"),
            "</a?x=1&pare_cursor=C9>; rel=\"next\""
        );
        assert_eq!(header_text("é\nb"), "\\u{e9} | b");
    }
}
