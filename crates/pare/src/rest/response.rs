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
//! when lowered `X-Pare-Lowered-From`; when a page continues an item or string of the page
//! before, `X-Pare-Continues` (its JSON Pointer, for `pare::respond::merge`); the note (what the policy removed, how to go on) as
//! `X-Pare-Note`, its lines joined by ` | ` with anything outside printable ASCII escaped
//! (`\u{e9}`), since a JSON body has no room for it.

use crate::encode::Format;
use crate::respond::cursor::Cursor;
use crate::respond::{self, Budget, Hint, Input, Page, Record, Request, RespondError};
use crate::tokens;

use super::ask::Ask;
use super::routes::RoutePolicy;

/// A shaped response.
#[derive(Debug)]
pub struct Shaped {
    /// The page's text, to send as the body.
    pub body: String,
    /// The body's `Content-Type`, by the format used (what `auto` chose).
    pub content_type: &'static str,
    /// `X-Pare-*` headers, in this order.
    pub headers: Vec<(&'static str, String)>,
    /// What the engine did to make the page (the headers say it too).
    pub record: Record,
    /// The page's note, unescaped (`X-Pare-Note` carries it escaped); `None`: no note.
    pub note: Option<String>,
    /// The pages after this one, shaped alike (a door that caches pages stores them under
    /// their cursors, [`Record::next_cursor`] of the page before; one that reads the
    /// response again ignores them).
    pub later: Vec<Shaped>,
}

/// What becomes of a response.
#[derive(Debug)]
pub enum Outcome {
    /// Send the handler's response as it is; why (for a log).
    Pass(&'static str),
    /// Send this shaped body and its headers instead.
    Shaped(Box<Shaped>),
    /// Answer with this status and JSON body instead: `400` for a cursor that is not one or
    /// a budget nothing fits, `410` for a cursor of a response that has changed since (or
    /// of other settings): the caller asks again without it.
    Refuse {
        /// The HTTP status: `400` or `410`.
        status: u16,
        /// The JSON body: `error`, `param` and, for a cursor, `expired`.
        body: String,
    },
}

/// Whether a `Content-Type` is JSON: `application/json` or `application/<x>+json`.
pub(crate) fn is_json(content_type: &str) -> bool {
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

/// The upstream's (or handler's) headers a shaped body does not keep: they describe the
/// body as it was (its length, coding, type, validators and digests, byte ranges).
pub const NOT_OF_THE_SHAPED_BODY: [&str; 9] = [
    "content-length",
    "content-encoding",
    "content-type",
    "etag",
    "content-md5",
    "digest",
    "content-digest",
    "repr-digest",
    "accept-ranges",
];

/// The `Vary` a shaped response carries (every REST door appends it): what chose its bytes
/// besides the URL.
pub const VARY: &str = "Accept, Accept-Encoding, X-Pare-Detail, X-Pare-Format, X-Pare-Max-Tokens, X-Pare-Query, X-Pare-Fields";

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
    let budget = budget(route, ask);
    if let (Some(cursor), None) = (&ask.cursor, budget) {
        // Pages exist only under a budget: ignoring the cursor would answer page 1.
        return Outcome::Refuse {
            status: 400,
            body: serde_json::json!({
                "error": format!("pare_cursor: cursor `{cursor}` needs a budget: this route has none, so give the pare_max_tokens the cursor came with"),
                "param": "pare_cursor",
            })
            .to_string(),
        };
    }
    let request = request(route, ask, budget, Input::Json(text));
    let (page, rest) = match respond::respond(request) {
        Ok(r) => (r.page, r.rest),
        Err(RespondError::Json(_)) => return Outcome::Pass("not JSON"),
        Err(RespondError::Cursor(e)) => {
            let cursor = ask.cursor.as_deref().unwrap_or("");
            // A well-formed cursor that does not fit: most likely the response it paged has
            // changed since (a cursor holds only a check of it, so this cannot be told
            // from a made-up one).
            let expired = Cursor::decode(cursor).is_some();
            let error = if expired {
                format!(
                    "pare_cursor: cursor `{cursor}` has expired: it is not one of this response's pages \
                     (the response has changed since, or the request's settings differ); \
                     ask again without pare_cursor"
                )
            } else {
                format!("pare_cursor: {e}")
            };
            return Outcome::Refuse {
                status: if expired { 410 } else { 400 },
                body:
                    serde_json::json!({"error": error, "param": "pare_cursor", "expired": expired})
                        .to_string(),
            };
        }
        Err(e @ RespondError::Budget(_)) => {
            return Outcome::Refuse {
                status: 400,
                body: serde_json::json!({"error": format!("pare_max_tokens: {e}"), "param": "pare_max_tokens"})
                    .to_string(),
            };
        }
        Err(RespondError::Fields(e)) => {
            return Outcome::Refuse {
                status: 400,
                body: serde_json::json!({"error": format!("pare_fields: {e}"), "param": "pare_fields"})
                    .to_string(),
            };
        }
        Err(_) => return Outcome::Pass("the engine refused it"),
    };
    let mut first = shaped(page);
    first.later = rest.into_iter().map(shaped).collect();
    Outcome::Shaped(Box::new(first))
}

/// The budget a call has on `route`: the least of the caller's and the route's.
pub(crate) fn budget(route: &RoutePolicy, ask: &Ask) -> Option<usize> {
    match (ask.max_tokens, route.max_tokens) {
        (Some(a), Some(r)) => Some(a.min(r)),
        (a, r) => a.or(r),
    }
}

/// The pipeline's request for a response of `route` as `ask` asks.
pub(crate) fn request<'a>(
    route: &'a RoutePolicy,
    ask: &'a Ask,
    budget: Option<usize>,
    input: Input<'a>,
) -> Request<'a> {
    Request {
        level: ask.level.as_deref(),
        default_level: Some(&route.default_level),
        params: &ask.params,
        format: ask.format.unwrap_or(route.format),
        tokenizer: tokens::builtin("o200k_base").expect("o200k_base is built in"),
        budget: budget.map(Budget::tokens),
        cursor: ask.cursor.as_deref(),
        hint: Hint::Query {
            cursor: "pare_cursor",
            detail: "pare_detail",
        },
        // Only the pages are sent: a policy the stream can do is written as it reads.
        want_value: false,
        // Packed search results are text; a caller that asked for JSON gets them as data.
        pack_data: matches!(ask.format, Some(Format::Json | Format::Pretty))
            || ask.accepts_only_json,
        query: ask.query.as_deref(),
        fields: ask.fields.as_ref(),
        ..Request::new(input, &route.policy)
    }
}

/// A page as a response body with its `X-Pare-*` headers.
pub(crate) fn shaped(page: Page) -> Shaped {
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
    if let Some(pointer) = &r.continues {
        // The item or string this page continues (`pare::respond::merge`), so a reader
        // can merge the pages back.
        headers.push(("X-Pare-Continues", header_text(pointer)));
    }
    if let Some(note) = &page.note {
        headers.push(("X-Pare-Note", header_text(note)));
    }
    Shaped {
        content_type: content_type_of(r.format),
        body: page.text,
        headers,
        record: page.record,
        note: page.note,
        later: Vec::new(),
    }
}

/// The `Content-Type` of a shaped body in `format` (the record's: what `auto` chose).
pub(crate) fn content_type_of(format: &str) -> &'static str {
    match format {
        "json" | "pretty" => "application/json",
        "toon" => "text/toon; charset=utf-8",
        // Packed search results: blocks of text with fenced code, as a model reads them.
        "pack" => "text/markdown; charset=utf-8",
        _ => "text/plain; charset=utf-8",
    }
}

/// A `Link` header value without its `rel="next"` links (a link whose relations include
/// `next` loses only that relation); `None` when nothing is left.
///
/// ```
/// use pare::rest::response::without_next;
/// let link = r#"<https://api/x?page=2>; rel="next", <https://api/x?page=9>; rel="last""#;
/// assert_eq!(without_next(link).as_deref(), Some(r#"<https://api/x?page=9>; rel="last""#));
/// assert_eq!(without_next(r#"<https://api/x?page=2>; rel=next"#), None);
/// ```
pub fn without_next(link: &str) -> Option<String> {
    let mut kept = Vec::new();
    for value in split_links(link) {
        let mut params: Vec<String> = Vec::new();
        let mut dropped = false;
        for (i, part) in value.split(';').enumerate() {
            let p = part.trim();
            let is_rel = i > 0
                && p.len() > 3
                && p[..3].eq_ignore_ascii_case("rel")
                && p[3..].trim_start().starts_with('=');
            if !is_rel {
                params.push(p.to_owned());
                continue;
            }
            let rels = p[3..].trim_start()[1..].trim().trim_matches('"');
            let left: Vec<&str> = rels
                .split_ascii_whitespace()
                .filter(|r| !r.eq_ignore_ascii_case("next"))
                .collect();
            if left.is_empty() {
                dropped = true;
            } else {
                params.push(format!("rel=\"{}\"", left.join(" ")));
            }
        }
        // A link that was only `next` goes; one with other relations keeps them.
        if !dropped {
            kept.push(params.join("; "));
        }
    }
    (!kept.is_empty()).then(|| kept.join(", "))
}

/// The link-values of a `Link` header: split at commas outside `<…>` and quotes.
fn split_links(link: &str) -> Vec<&str> {
    let (mut out, mut start, mut in_url, mut in_quote) = (Vec::new(), 0, false, false);
    for (i, c) in link.char_indices() {
        match c {
            '<' if !in_quote => in_url = true,
            '>' if !in_quote => in_url = false,
            '"' if !in_url => in_quote = !in_quote,
            ',' if !in_url && !in_quote => {
                out.push(link[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(link[start..].trim());
    out.retain(|v| !v.is_empty());
    out
}

/// The `Link` header value naming the next page: `path`, the query without pare's
/// parameters (`query`, as [`Ask::parse`] returned it), the settings `ask` named (a cursor
/// is good only with the settings it came from, and a client following a link may not
/// send the headers again), and `pare_cursor=NEXT`.
pub fn link(path: &str, query: &str, ask: &Ask, next: &str) -> String {
    let mut q: Vec<String> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect();
    if let Some(level) = &ask.level {
        q.push(format!("pare_detail={}", encode_component(level)));
    }
    for (name, value) in &ask.params {
        q.push(format!(
            "{}{}={}",
            super::ask::PARAM_QUERY,
            encode_component(name),
            encode_component(value)
        ));
    }
    // A caller whose `Accept` made the pages data gets data on the next page too, even
    // from a client that does not send the header again.
    let format = ask.format.or(ask.accepts_only_json.then_some(Format::Json));
    if let Some(format) = format {
        q.push(format!("pare_format={}", format.name()));
    }
    if let Some(n) = ask.max_tokens {
        q.push(format!("pare_max_tokens={n}"));
    }
    // The next page belongs to the same question.
    if let Some(question) = &ask.query {
        q.push(format!("pare_query={}", encode_component(question)));
    }
    if let Some(fields) = &ask.fields {
        q.push(format!(
            "pare_fields={}",
            encode_component(&fields.given().join(","))
        ));
    }
    q.push(format!("pare_cursor={next}"));
    format!("<{path}?{}>; rel=\"next\"", q.join("&"))
}

/// Percent-encode what is not unreserved (RFC 3986) in a query value.
fn encode_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
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
            name: "test".into(),
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
            cursor: Some("not-base62!".into()),
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
        // A real cursor of another body: expired (410), not malformed.
        let first = shape(
            &r,
            &Ask::default(),
            200,
            Some("application/json"),
            false,
            text.as_bytes(),
        );
        let Outcome::Shaped(first) = first else {
            panic!("not shaped")
        };
        assert_eq!(first.later.len(), first.record.pages - 1);
        assert_eq!(first.later[0].record.page, 2);
        let stale = Ask {
            cursor: first.record.next_cursor.clone(),
            ..Ask::default()
        };
        let other = rows(61);
        match shape(
            &r,
            &stale,
            200,
            Some("application/json"),
            false,
            other.as_bytes(),
        ) {
            Outcome::Refuse { status: 410, body } => assert!(body.contains("expired")),
            o => panic!("{o:?}"),
        }
        assert_eq!(
            link("/a", "x=1", &Ask::default(), "C9"),
            "</a?x=1&pare_cursor=C9>; rel=\"next\""
        );
        let asked = Ask {
            level: Some("my level".into()),
            format: Some(Format::Toon),
            max_tokens: Some(400),
            cursor: Some("old".into()),
            accepts_only_json: false,
            params: Vec::new(),
            query: Some("a b&c".into()),
            fields: Some(crate::project::Fields::parse_list("id,$..['a','b']").unwrap()),
        };
        assert_eq!(
            link("/a", "", &asked, "C9"),
            "</a?pare_detail=my%20level&pare_format=toon&pare_max_tokens=400&pare_query=a%20b%26c&pare_fields=id%2C%24..%5B%27a%27%2C%27b%27%5D&pare_cursor=C9>; rel=\"next\""
        );
        assert_eq!(header_text("é\nb"), "\\u{e9} | b");
    }

    fn search_route() -> RoutePolicy {
        let policy = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/policies/search.toml"
        ))
        .unwrap();
        RoutePolicy {
            name: "test".into(),
            policy: Arc::new(Policy::parse(&policy).unwrap()),
            default_level: "standard".into(),
            format: Format::Json,
            max_tokens: Some(1500),
        }
    }

    fn search_body() -> Vec<u8> {
        std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/payloads/semantic_search_full.json"
        ))
        .unwrap()
    }

    /// Regression: packed search results went out labelled `application/json` (a JSON
    /// client's `json.load` failed) and `pare_format=json` was ignored. Packed text is
    /// labelled as what it is; a caller asking for JSON (the parameter, or an `Accept` of
    /// JSON only) gets each page as data, within the budget, and JSON on every next page.
    #[test]
    fn pack_text_is_labelled_as_text_and_a_json_caller_gets_data() {
        let r = search_route();
        let body = search_body();
        let Outcome::Shaped(text) = shape(
            &r,
            &Ask::default(),
            200,
            Some("application/json"),
            false,
            &body,
        ) else {
            panic!("not shaped")
        };
        assert_eq!(text.content_type, "text/markdown; charset=utf-8");
        assert!(text.body.contains("```"));
        let (json_param, _) = Ask::parse("pare_format=json", &[]).unwrap();
        let (json_accept, _) = Ask::parse("", &[("Accept", "application/json")]).unwrap();
        let (either, _) = Ask::parse("", &[("Accept", "application/json, text/*;q=0.5")]).unwrap();
        assert!(json_accept.accepts_only_json && !either.accepts_only_json);
        for ask in [json_param, json_accept] {
            let Outcome::Shaped(data) =
                shape(&r, &ask, 200, Some("application/json"), false, &body)
            else {
                panic!("not shaped")
            };
            assert_eq!(data.content_type, "application/json");
            let doc: serde_json::Value = serde_json::from_str(&data.body).unwrap();
            assert_eq!(doc["mode"], "standard");
            assert!(doc["chunks"].as_array().unwrap().len() > 1);
            let tokens = tokens::builtin("o200k_base").unwrap();
            for page in std::iter::once(&*data).chain(&data.later) {
                serde_json::from_str::<serde_json::Value>(&page.body).unwrap();
                assert!(tokens.count(&page.body) <= 1500);
            }
            if let Some(next) = &data.record.next_cursor {
                assert!(link("/s", "", &ask, next).contains("pare_format=json"));
            }
        }
        // `full` is the upstream's response, as for every route.
        let (full, _) = Ask::parse("pare_detail=full", &[]).unwrap();
        assert!(full.is_full());
    }
}
