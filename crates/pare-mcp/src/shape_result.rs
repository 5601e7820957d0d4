//! Mapping one `tools/call` result onto the engine's response pipeline and back.
//!
//! The proxy only translates: the result's text becomes a [`pare::respond::Request`] (the
//! tool's policy, format and level, the budget, the proxy's words for "next page"), and the
//! engine's [`Page`] becomes the result's content (the page text, then the note as a second
//! text item) and `_meta.pare` (the record). Levels, budgets, paging and cursors are the
//! engine's; later pages go into the [`PageCache`] for `pare_more`.
//!
//! `structuredContent` is never touched: it must stay valid against the tool's
//! `outputSchema`, and clients hand `content` to the model.

use pare::respond::{self, Hint, Input, Page, PageKind, Request};
use pare::tokens::Tokenizer;
use serde_json::{Map, Value as Json, json};

use crate::cache::{CachedPage, PageCache};
use crate::config::ToolPolicy;
use crate::tools_list::PARE_MORE;

/// Budget and tokenizer, shared by all calls.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    pub max_tokens: usize,
    /// The limit by the chars/4 estimate some clients gate on.
    pub max_chars4: usize,
    pub tokenizer: &'static dyn Tokenizer,
}

impl Budget {
    fn engine(&self) -> respond::Budget {
        respond::Budget {
            tokens: self.max_tokens,
            chars4: self.max_chars4,
        }
    }
}

/// What became of a result.
#[derive(Debug)]
pub enum Shaped {
    /// Forward the upstream bytes unchanged, as the caller asked (`detail: "full"`).
    AsIs,
    /// Forward the upstream bytes unchanged: shaping failed for this reason (logged).
    Unchanged(&'static str),
    /// The new `result` object.
    Result(Json),
}

/// The call a result answers.
#[derive(Debug)]
pub struct Call<'a> {
    pub tool_name: &'a str,
    pub tool: &'a ToolPolicy,
    /// The level the caller named; `None`: the tool's default, lowered to fit.
    pub level: Option<&'a str>,
    /// The argument the caller names a level with (`detail`, or `pare_detail`).
    pub detail_arg: &'a str,
}

impl Call<'_> {
    fn hint(&self) -> Hint<'_> {
        Hint::Tool {
            more: PARE_MORE,
            detail: self.detail_arg,
        }
    }

    fn request<'r>(&'r self, text: &'r str, budget: &Budget, paged: bool) -> Request<'r> {
        let policy = &*self.tool.policy;
        Request {
            level: self.level,
            default_level: Some(&policy.levels()[self.tool.default_level]),
            format: self.tool.format,
            tokenizer: budget.tokenizer,
            budget: paged.then(|| budget.engine()),
            keep_input_text: true,
            hint: self.hint(),
            ..Request::new(Input::Text(text), policy)
        }
    }
}

/// Shape `result` (a `tools/call` result object).
pub fn shape_result(result: &Json, call: &Call, budget: Budget, cache: &mut PageCache) -> Shaped {
    let Some(obj) = result.as_object() else {
        return Shaped::Unchanged("the result is not an object");
    };
    if obj.get("isError") == Some(&Json::Bool(true)) {
        return Shaped::Unchanged("an error result");
    }
    let Some(content) = obj.get("content").and_then(Json::as_array) else {
        return Shaped::Unchanged("the result has no content list");
    };
    let texts: Vec<Option<&str>> = content.iter().map(text_of).collect();
    let (new_content, meta) = match texts.iter().flatten().count() {
        0 => return Shaped::Unchanged("no text content"),
        1 => {
            let at = texts.iter().position(Option::is_some).expect("one text");
            let text = texts[at].expect("a text");
            match one_text(text, call, &budget, cache) {
                Ok((page, meta)) => {
                    let mut items = content.clone();
                    if page.record.kind != PageKind::Input {
                        items[at] = with_text(&content[at], page.text);
                    }
                    items.extend(page.note.map(note));
                    (items, meta)
                }
                Err(Unchanged::AsAsked) => return Shaped::AsIs,
                Err(Unchanged::Failed(why)) => return Shaped::Unchanged(why),
            }
        }
        _ => match several_texts(content, &texts, call, &budget) {
            Ok(shaped) => shaped,
            Err(why) => return Shaped::Unchanged(why),
        },
    };
    let mut out = obj.clone();
    out.insert("content".into(), Json::Array(new_content));
    set_meta(&mut out, meta);
    Shaped::Result(Json::Object(out))
}

/// A result with one text item: the whole pipeline, budget and pages included.
fn one_text(
    text: &str,
    call: &Call,
    budget: &Budget,
    cache: &mut PageCache,
) -> Result<(Page, Map<String, Json>), Unchanged> {
    let response = respond::respond(call.request(text, budget, true))
        .map_err(|_| Unchanged::Failed("the engine refused it"))?;
    let record = &response.page.record;
    if record.kind == PageKind::Input && record.pages == 1 {
        if record.format == "text" {
            return Err(Unchanged::Failed("no content text is JSON"));
        }
        if call.level == Some(pare::ops::compile::FULL) {
            return Err(Unchanged::AsAsked);
        }
    }
    // Each later page is asked for by the cursor the page before it names.
    let mut cursor = response.page.record.next_cursor.clone();
    for later in response.rest {
        let next = later.record.next_cursor.clone();
        if let Some(c) = cursor {
            cache.put(
                c,
                CachedPage {
                    meta: meta_of(call.tool_name, &later),
                    page: later,
                },
            );
        }
        cursor = next;
    }
    let meta = meta_of(call.tool_name, &response.page);
    Ok((response.page, meta))
}

/// Why a result is forwarded as the server sent it.
enum Unchanged {
    /// What the caller asked for (`full` within the budget): nothing to log.
    AsAsked,
    /// Shaping was not possible; the reason is logged.
    Failed(&'static str),
}

/// Several text items: each JSON one shaped at the call's level, none paged; over the
/// budget, the result is left alone.
fn several_texts(
    content: &[Json],
    texts: &[Option<&str>],
    call: &Call,
    budget: &Budget,
) -> Result<(Vec<Json>, Map<String, Json>), &'static str> {
    let gate = respond::budget::Gate::new(budget.tokenizer, budget.engine());
    let (mut before, mut after, mut gate_total) = (0, 0, 0);
    let mut items = Vec::with_capacity(content.len());
    let mut first_json: Option<Page> = None;
    for (item, text) in content.iter().zip(texts) {
        let Some(text) = text else {
            items.push(item.clone());
            continue;
        };
        let page = respond::respond(call.request(text, budget, false))
            .map_err(|_| "the engine refused it")?
            .page;
        let tokens = page.record.tokens_after.unwrap_or(0);
        before += page.record.tokens_before.unwrap_or(0);
        after += tokens;
        gate_total += gate.count_known(&page.text, tokens);
        if page.record.kind == PageKind::Input {
            items.push(item.clone());
        } else {
            items.push(with_text(item, page.text.clone()));
        }
        if page.record.format != "text" {
            first_json.get_or_insert(page);
        }
    }
    let mut page = first_json.ok_or("no content text is JSON")?;
    if gate_total > budget.max_tokens {
        return Err("several text items over the budget (only one can be paged)");
    }
    page.record.tokens_before = Some(before);
    page.record.tokens_after = Some(after);
    page.record.note_tokens = Some(0);
    Ok((items, meta_of(call.tool_name, &page)))
}

/// The `pare_more` answer for a cached page.
pub fn page_result(cached: CachedPage) -> Json {
    let mut content = vec![json!({"type": "text", "text": cached.page.text})];
    content.extend(cached.page.note.map(note));
    let mut out = Map::new();
    out.insert("content".into(), Json::Array(content));
    set_meta(&mut out, cached.meta);
    Json::Object(out)
}

/// `_meta.pare` of a page: the record in the proxy's words.
fn meta_of(tool: &str, page: &Page) -> Map<String, Json> {
    let r = &page.record;
    let mut meta = Map::new();
    meta.insert("tool".into(), json!(tool));
    meta.insert("tokenizer".into(), json!(r.tokenizer));
    meta.insert("tokensBefore".into(), json!(r.tokens_before));
    meta.insert(
        "tokensAfter".into(),
        json!(r.tokens_after.unwrap_or(0) + r.note_tokens.unwrap_or(0)),
    );
    meta.insert("level".into(), json!(r.level));
    if let Some(from) = &r.lowered_from {
        meta.insert("loweredFrom".into(), json!(from));
    }
    meta.insert("format".into(), json!(r.format));
    meta.insert("page".into(), json!(r.page));
    meta.insert("pages".into(), json!(r.pages));
    if let Some(c) = &r.next_cursor {
        meta.insert("nextCursor".into(), json!(c));
    }
    if let Some(c) = &r.continues {
        meta.insert("continues".into(), json!(c));
    }
    meta
}

/// Put `pare` into the result's `_meta`, keeping whatever the server put there.
fn set_meta(result: &mut Map<String, Json>, pare: Map<String, Json>) {
    let meta = result
        .entry("_meta")
        .or_insert_with(|| Json::Object(Map::new()));
    if let Some(m) = meta.as_object_mut() {
        m.insert("pare".into(), Json::Object(pare));
    }
}

fn text_of(item: &Json) -> Option<&str> {
    (item.get("type")?.as_str()? == "text")
        .then(|| item.get("text")?.as_str())
        .flatten()
}

fn with_text(item: &Json, text: String) -> Json {
    let mut item = item.clone();
    item["text"] = Json::String(text);
    item
}

fn note(text: String) -> Json {
    json!({"type": "text", "text": text})
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::cache::Limits;
    use crate::config::ToolPolicy;

    fn setup() -> (ToolPolicy, Json) {
        let policy = pare::Policy::parse(
            "levels = [\"brief\", \"standard\", \"full\"]\n[[ops]]\nop = \"drop\"\npaths = [\"$..body\"]\nlevels = [\"brief\"]\n",
        )
        .unwrap();
        let items: Vec<Json> = (0..40)
            .map(|i| json!({"id": i, "body": format!("{i} ").repeat(60)}))
            .collect();
        let text = serde_json::to_string(&json!({ "items": items })).unwrap();
        let tool = ToolPolicy {
            default_level: 1,
            policy: Arc::new(policy),
            format: pare::encode::Format::Json,
        };
        (tool, json!({"content": [{"type": "text", "text": text}]}))
    }

    fn budget() -> Budget {
        Budget {
            max_tokens: 1500,
            max_chars4: 25_000,
            tokenizer: pare::tokens::builtin("o200k_base").unwrap(),
        }
    }

    /// `tokensAfter` is the tokenizer's count of the texts sent, exactly, and
    /// `tokensBefore` that of the server's texts.
    fn assert_counts_are_exact(before: &Json, after: &Json) {
        let tok = budget().tokenizer;
        let total = |r: &Json| -> usize {
            r["content"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(text_of)
                .map(|t| tok.count(t))
                .sum()
        };
        let meta = &after["_meta"]["pare"];
        assert_eq!(meta["tokensBefore"], total(before));
        assert_eq!(meta["tokensAfter"], total(after));
    }

    #[test]
    fn reported_counts_are_fresh_counts_in_every_format() {
        // Large enough for `auto` to count its candidates on two threads.
        let items: Vec<Json> = (0..400)
            .map(|i| json!({"id": i, "kind": "doc", "title": format!("Report {i}"), "n": i % 7}))
            .collect();
        let text = serde_json::to_string_pretty(&json!({ "items": items })).unwrap();
        let result = json!({"content": [{"type": "text", "text": text}, {"type": "text", "text": "plain words"}]});
        for format in [
            pare::encode::Format::Auto,
            pare::encode::Format::Json,
            pare::encode::Format::Toon,
        ] {
            let (mut tool, _) = setup();
            tool.format = format;
            for (level, explicit) in [(2, false), (1, false), (1, true)] {
                let name = tool.levels()[level].clone();
                let call = Call {
                    tool_name: "t",
                    tool: &tool,
                    level: explicit.then_some(name.as_str()),
                    detail_arg: "detail",
                };
                let mut cache = PageCache::new(Limits::default());
                if let Shaped::Result(r) = shape_result(&result, &call, budget(), &mut cache) {
                    assert_counts_are_exact(&result, &r);
                }
            }
            let (tool_small, small) = setup();
            let tool = ToolPolicy {
                format,
                ..tool_small
            };
            for explicit in [false, true] {
                let call = Call {
                    tool_name: "t",
                    tool: &tool,
                    level: explicit.then_some("standard"),
                    detail_arg: "detail",
                };
                let mut cache = PageCache::new(Limits::default());
                let Shaped::Result(r) = shape_result(&small, &call, budget(), &mut cache) else {
                    panic!("not shaped")
                };
                assert_counts_are_exact(&small, &r);
            }
        }
    }

    #[test]
    fn over_budget_at_the_default_level_lowers_the_level_with_a_note() {
        let (tool, result) = setup();
        let call = Call {
            tool_name: "t",
            tool: &tool,
            level: None,
            detail_arg: "detail",
        };
        let mut cache = PageCache::new(Limits::default());
        let Shaped::Result(r) = shape_result(&result, &call, budget(), &mut cache) else {
            panic!("not shaped")
        };
        assert_eq!(r["_meta"]["pare"]["level"], "brief");
        assert_eq!(r["_meta"]["pare"]["pages"], 1);
        assert!(!r["content"][0]["text"].as_str().unwrap().contains("body"));
        let note = r["content"][1]["text"].as_str().unwrap();
        assert!(note.contains("detail \"standard\""), "{note}");
    }

    #[test]
    fn over_budget_at_a_level_the_caller_chose_is_paged_not_lowered() {
        let (tool, result) = setup();
        let call = Call {
            tool_name: "t",
            tool: &tool,
            level: Some("standard"),
            detail_arg: "detail",
        };
        let mut cache = PageCache::new(Limits::default());
        let Shaped::Result(r) = shape_result(&result, &call, budget(), &mut cache) else {
            panic!("not shaped")
        };
        let meta = &r["_meta"]["pare"];
        assert_eq!(meta["level"], "standard");
        assert!(meta["pages"].as_u64().unwrap() > 1);
        assert!(meta["tokensAfter"].as_u64().unwrap() <= 1500);
        let next = cache.get(meta["nextCursor"].as_str().unwrap()).unwrap();
        assert_eq!(next.page.record.page, 2);
        assert!(next.page.text.contains("body"));
        assert_eq!(next.meta["page"], 2);
    }

    #[test]
    fn error_results_and_non_json_text_are_left_alone() {
        let (tool, _) = setup();
        let call = Call {
            tool_name: "t",
            tool: &tool,
            level: None,
            detail_arg: "detail",
        };
        let mut cache = PageCache::new(Limits::default());
        let err = json!({"isError": true, "content": [{"type": "text", "text": "{}"}]});
        assert!(matches!(
            shape_result(&err, &call, budget(), &mut cache),
            Shaped::Unchanged(_)
        ));
        let text = json!({"content": [{"type": "text", "text": "plain words"}]});
        assert!(matches!(
            shape_result(&text, &call, budget(), &mut cache),
            Shaped::Unchanged(_)
        ));
    }
}
