//! Mapping one `tools/call` result onto the engine's response pipeline and back.
//!
//! The proxy only translates: the result's text becomes a [`crate::respond::Request`] (the
//! tool's policy, format and level, the caller's parameters, the budget, the proxy's words
//! for "next page"), and the engine's [`Page`] becomes the result's content (the page text,
//! then the note as a second text item) and `_meta.pare` (the record). Levels, budgets,
//! paging and cursors are the engine's; later pages go into the [`PageCache`] for
//! `pare_more`.
//!
//! - **Verbatim tools** ([`crate::mcp::verbatim`]): the text is never parsed; it passes as it is,
//!   or, over the budget, in pages cut at line ends.
//! - **Originals**: when the text shown is not the whole result (a level that removes
//!   something, a lowered level, packed search results), the server's text is kept
//!   ([`crate::mcp::originals`]) and the note item ends with a line naming it:
//!   `pare: original: pare_more {"cursor":"r7"} (add "path": a JSONPath, or "detail")`,
//!   also in `_meta.pare.original`. The line is within the budget: when it would not fit,
//!   the result is shaped again (and paged, if need be) under the budget less the line.
//!
//! `structuredContent` is never touched: it must stay valid against the tool's
//! `outputSchema`, and clients hand `content` to the model.

use std::sync::Arc;

use crate::respond::{self, Hint, Input, Page, PageKind, Request, RespondError};
use crate::tokens::Tokenizer;
use serde_json::{Map, Value as Json, json};

use crate::mcp::config::ToolPolicy;
use crate::mcp::originals::{Original, Originals};
use crate::mcp::store::{CachedPage, PageCache};
use crate::mcp::tools_list::PARE_MORE;

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

    /// Real tokens and chars/4 of `texts`, each counted alone (they are separate items).
    fn cost<'t>(&self, texts: impl IntoIterator<Item = &'t str>) -> (usize, usize) {
        let c4 = crate::tokens::builtin("chars4").expect("chars4 is built in");
        texts.into_iter().fold((0, 0), |(t, c), s| {
            (t + self.tokenizer.count(s), c + c4.count(s))
        })
    }
}

/// What became of a result.
#[derive(Debug)]
pub enum Shaped {
    /// Forward the upstream bytes unchanged, as the caller asked (`detail: "full"`) or as a
    /// verbatim tool's text that fits.
    AsIs,
    /// Forward the upstream bytes unchanged: shaping failed for this reason (logged).
    Unchanged(&'static str),
    /// The new `result` object; `needs_more`: it names a page or an original, so
    /// `pare_more` must be listed.
    Result { result: Json, needs_more: bool },
}

/// The call a result answers.
#[derive(Debug)]
pub struct Call<'a> {
    pub tool_name: &'a str,
    pub tool: &'a Arc<ToolPolicy>,
    /// The level the caller named; `None`: the tool's default, lowered to fit.
    pub level: Option<&'a str>,
    /// The argument the caller names a level with (`detail`, or `pare_detail`).
    pub detail_arg: &'a str,
    /// The caller's policy parameters (`maxGapMinutes` = `5`).
    pub params: &'a [(String, String)],
    /// The text passes byte for byte ([`crate::mcp::verbatim`]).
    pub verbatim: bool,
}

impl Call<'_> {
    fn hint(&self) -> Hint<'_> {
        Hint::Tool {
            more: PARE_MORE,
            detail: self.detail_arg,
        }
    }

    fn request<'r>(
        &'r self,
        input: Input<'r>,
        budget: Option<respond::Budget>,
        tokenizer: &'r dyn Tokenizer,
    ) -> Request<'r> {
        let tool = &**self.tool;
        Request {
            level: self.level,
            default_level: Some(&tool.levels()[tool.default_level]),
            params: self.params,
            format: tool.format,
            tokenizer,
            budget,
            keep_input_text: true,
            hint: self.hint(),
            // Only the pages go back: a policy the stream can do is written as it reads.
            want_value: false,
            ..Request::new(input, &tool.policy)
        }
    }
}

/// Where pages and originals wait for `pare_more`.
pub struct Stores<'s> {
    pub pages: &'s mut PageCache,
    pub originals: &'s mut Originals,
}

/// Shape `result` (a `tools/call` result object).
pub fn shape_result(result: &Json, call: &Call, budget: Budget, stores: Stores) -> Shaped {
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
    let (new_content, meta, needs_more) = match texts.iter().flatten().count() {
        0 => return Shaped::Unchanged("no text content"),
        1 => {
            let at = texts.iter().position(Option::is_some).expect("one text");
            let text = texts[at].expect("a text");
            match one_text(text, call, &budget, stores) {
                Ok(one) => {
                    let mut items = content.clone();
                    if one.page.record.kind != PageKind::Input {
                        items[at] = with_text(&content[at], one.page.text);
                    }
                    // One note item: the engine's lines, then the handle's.
                    let lines = match (one.page.note, one.handle_line) {
                        (Some(n), Some(h)) => Some(format!("{n}\n{h}")),
                        (n, h) => n.or(h),
                    };
                    items.extend(lines.map(note));
                    (items, one.meta, one.needs_more)
                }
                Err(Unchanged::AsAsked) => return Shaped::AsIs,
                Err(Unchanged::Failed(why)) => return Shaped::Unchanged(why),
            }
        }
        // Each file of a verbatim result stays as it is; several items cannot be paged.
        _ if call.verbatim => return Shaped::AsIs,
        _ => match several_texts(content, &texts, call, &budget) {
            Ok((items, meta)) => (items, meta, false),
            Err(why) => return Shaped::Unchanged(why),
        },
    };
    let mut out = obj.clone();
    out.insert("content".into(), Json::Array(new_content));
    set_meta(&mut out, meta);
    Shaped::Result {
        result: Json::Object(out),
        needs_more,
    }
}

/// A one-text result, shaped.
struct OneText {
    page: Page,
    meta: Map<String, Json>,
    /// The line naming the original, when it is shown.
    handle_line: Option<String>,
    needs_more: bool,
}

/// A result with one text item: the whole pipeline, budget, pages and original included.
fn one_text(
    text: &str,
    call: &Call,
    budget: &Budget,
    stores: Stores,
) -> Result<OneText, Unchanged> {
    let refused = |_: RespondError| Unchanged::Failed("the engine refused it");
    let engine = Some(budget.engine());
    if call.verbatim {
        let response = respond::respond(call.request(Input::Plain(text), engine, budget.tokenizer))
            .map_err(refused)?;
        if response.page.record.pages == 1 {
            return Err(Unchanged::AsAsked);
        }
        let (page, meta) = keep_pages(call.tool_name, response, stores.pages);
        return Ok(OneText {
            page,
            meta,
            handle_line: None,
            needs_more: true,
        });
    }
    let mut response = respond::respond(call.request(Input::Text(text), engine, budget.tokenizer))
        .map_err(refused)?;
    let record = &response.page.record;
    if record.kind == PageKind::Input && record.pages == 1 {
        if record.format == "text" {
            return Err(Unchanged::Failed("no content text is JSON"));
        }
        if call.level == Some(crate::ops::compile::FULL) {
            return Err(Unchanged::AsAsked);
        }
    }
    let mut handle = None;
    if lossy(call.tool, &response.page) {
        let h = stores.originals.keep(Original {
            tool_name: call.tool_name.to_owned(),
            tool: call.tool.clone(),
            text: text.into(),
            params: call.params.to_vec(),
            detail_arg: call.detail_arg.to_owned(),
        });
        let line = handle_line(&h, call.tool);
        // Costed with the newline that joins it to a note.
        let line_cost = budget.cost([format!("\n{line}").as_str()]);
        if !fits(budget, &response.page, line_cost) {
            // Room for the line: shape again under the budget less what it costs (a paged
            // result's pages are then all that much smaller, so the model sees the handle
            // on page 1 rather than only in `_meta`).
            let less = respond::Budget {
                tokens: budget.max_tokens.saturating_sub(line_cost.0),
                chars4: budget.max_chars4.saturating_sub(line_cost.1),
            };
            response =
                respond::respond(call.request(Input::Text(text), Some(less), budget.tokenizer))
                    .map_err(refused)?;
        }
        let shown = lossy(call.tool, &response.page) && fits(budget, &response.page, line_cost);
        handle = Some((h, shown.then_some(line)));
    }
    let paged = response.page.record.pages > 1;
    let (page, mut meta) = keep_pages(call.tool_name, response, stores.pages);
    let mut handle_line = None;
    if let Some((h, line)) = handle {
        meta.insert("original".into(), json!(h));
        if let Some(line) = &line {
            // Counted as sent: the handle's line joins the note's item, if there is one.
            let r = &page.record;
            let note = match &page.note {
                Some(n) => budget.tokenizer.count(&format!("{n}\n{line}")),
                None => budget.tokenizer.count(line),
            };
            let after = r.tokens_after.unwrap_or(0) + note;
            meta.insert("tokensAfter".into(), json!(after));
        }
        handle_line = line;
    }
    Ok(OneText {
        needs_more: paged || handle_line.is_some(),
        page,
        meta,
        handle_line,
    })
}

/// Whether `page` shows less than the server's whole result: packed, lowered, or at a
/// level that runs ops. The input text itself and plain-text pages are all of it.
fn lossy(tool: &ToolPolicy, page: &Page) -> bool {
    let r = &page.record;
    match r.kind {
        PageKind::Input | PageKind::Text => false,
        PageKind::Packed => true,
        PageKind::Value => {
            r.lowered_from.is_some()
                || tool
                    .policy
                    .level_index(&r.level)
                    .is_ok_and(|i| !tool.is_lossless(i))
        }
    }
}

/// The page, its note and one more line of `cost` within the budget.
fn fits(budget: &Budget, page: &Page, cost: (usize, usize)) -> bool {
    let (t, c) = budget.cost([page.text.as_str()].into_iter().chain(page.note.as_deref()));
    t + cost.0 <= budget.max_tokens && c + cost.1 <= budget.max_chars4
}

/// The line that names an original.
fn handle_line(handle: &str, tool: &ToolPolicy) -> String {
    let detail = if tool.distinct_levels().len() > 1 {
        ", or \"detail\""
    } else {
        ""
    };
    format!(
        "pare: original: {PARE_MORE} {{\"cursor\":\"{handle}\"}} (add \"path\": a JSONPath{detail})"
    )
}

/// Store the pages after the first under the cursors that name them; the first page and
/// its `_meta.pare`.
fn keep_pages(
    tool_name: &str,
    response: respond::Response,
    cache: &mut PageCache,
) -> (Page, Map<String, Json>) {
    // Each later page is asked for by the cursor the page before it names.
    let mut cursor = response.page.record.next_cursor.clone();
    for later in response.rest {
        let next = later.record.next_cursor.clone();
        if let Some(c) = cursor {
            cache.put(
                c,
                CachedPage {
                    meta: meta_of(tool_name, &later),
                    page: later,
                },
            );
        }
        cursor = next;
    }
    let meta = meta_of(tool_name, &response.page);
    (response.page, meta)
}

/// Why a result is forwarded as the server sent it.
enum Unchanged {
    /// What the caller asked for (`full` within the budget): nothing to log.
    AsAsked,
    /// Shaping was not possible; the reason is logged.
    Failed(&'static str),
}

/// What `pare_more` is asked of an original: all of it, a JSONPath subtree (shown whole, at
/// `full`), or another level.
pub enum Ask<'a> {
    Whole,
    Path(&'a str),
    Level(&'a str),
}

/// The `pare_more` answer for an original: the engine's first page (later ones cached), or
/// why the request is bad.
pub fn original_result(
    original: &Original,
    ask: Ask,
    budget: Budget,
    pages: &mut PageCache,
) -> Result<Json, String> {
    let tool = &original.tool;
    let full = crate::ops::compile::FULL;
    let call = Call {
        tool_name: &original.tool_name,
        tool,
        level: Some(match ask {
            Ask::Level(l) => l,
            _ => full,
        }),
        detail_arg: &original.detail_arg,
        params: &original.params,
        verbatim: false,
    };
    if let Ask::Level(l) = ask {
        tool.policy.level_index(l).map_err(|_| {
            format!(
                "`detail` must be one of: {} (got {l:?})",
                tool.levels().join(", ")
            )
        })?;
    }
    let input = match ask {
        Ask::Path(path) => Input::Value(subtree(&original.text, path)?),
        _ => Input::Text(&original.text),
    };
    let mut request = call.request(input, Some(budget.engine()), budget.tokenizer);
    // A subtree is not the server's text: it is rendered, whole, in the tool's format.
    request.keep_input_text = !matches!(ask, Ask::Path(_));
    let response = respond::respond(request).map_err(|e| e.to_string())?;
    let (page, meta) = keep_pages(&original.tool_name, response, pages);
    let mut content = vec![json!({"type": "text", "text": page.text})];
    content.extend(page.note.map(note));
    let mut out = Map::new();
    out.insert("content".into(), Json::Array(content));
    set_meta(&mut out, meta);
    Ok(Json::Object(out))
}

/// What `path` selects in the JSON `text`: the node, or an array of the nodes when several.
fn subtree(text: &str, path: &str) -> Result<crate::Value, String> {
    let selector =
        crate::query::selector::Selector::parse(path).map_err(|e| format!("`path`: {e}"))?;
    let value = crate::json::parse(text)
        .map_err(|_| "`path` needs a JSON original; this one is plain text".to_owned())?;
    let mut found = crate::query::select(&value, &selector).map_err(|e| format!("`path`: {e}"))?;
    match found.len() {
        0 => Err(format!("`path` {path} selects nothing in the original")),
        1 => Ok(found.remove(0).clone()),
        _ => Ok(crate::Value::Array(found.into_iter().cloned().collect())),
    }
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
        let page = respond::respond(call.request(Input::Text(text), None, budget.tokenizer))
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
    use crate::mcp::config::ToolPolicy;
    use crate::mcp::store::Limits;

    fn setup() -> (ToolPolicy, Json) {
        let policy = crate::Policy::parse(
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
            format: crate::encode::Format::Json,
            verbatim: None,
            params: Vec::new(),
        };
        (tool, json!({"content": [{"type": "text", "text": text}]}))
    }

    /// The page and original stores a test's calls share, as the proxy's do.
    struct Held {
        pages: PageCache,
        originals: Originals,
    }

    impl Held {
        fn new() -> Held {
            Held {
                pages: PageCache::new(Limits::default()),
                originals: Originals::new(Limits::default()),
            }
        }

        fn shape(&mut self, result: &Json, call: &Call) -> Shaped {
            let stores = Stores {
                pages: &mut self.pages,
                originals: &mut self.originals,
            };
            shape_result(result, call, budget(), stores)
        }
    }

    /// A call of the tool `t` at its default level.
    fn call<'a>(tool: &'a Arc<ToolPolicy>, verbatim: bool) -> Call<'a> {
        Call {
            tool_name: "t",
            tool,
            level: None,
            detail_arg: "detail",
            params: &[],
            verbatim,
        }
    }

    fn budget() -> Budget {
        Budget {
            max_tokens: 1500,
            max_chars4: 25_000,
            tokenizer: crate::tokens::builtin("o200k_base").unwrap(),
        }
    }

    /// The tokenizer's count of a result's texts, as sent.
    fn sent_tokens(r: &Json) -> usize {
        r["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(text_of)
            .map(|t| budget().tokenizer.count(t))
            .sum()
    }

    /// `tokensAfter` is the tokenizer's count of the texts sent, exactly, and
    /// `tokensBefore` that of the server's texts.
    fn assert_counts_are_exact(before: &Json, after: &Json) {
        let meta = &after["_meta"]["pare"];
        assert_eq!(meta["tokensBefore"], sent_tokens(before));
        assert_eq!(meta["tokensAfter"], sent_tokens(after));
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
            crate::encode::Format::Auto,
            crate::encode::Format::Json,
            crate::encode::Format::Toon,
        ] {
            let (mut tool, _) = setup();
            tool.format = format;
            let tool = Arc::new(tool);
            for (level, explicit) in [(2, false), (1, false), (1, true)] {
                let name = tool.levels()[level].clone();
                let call = Call {
                    level: explicit.then_some(name.as_str()),
                    ..call(&tool, false)
                };
                if let Shaped::Result { result: r, .. } = Held::new().shape(&result, &call) {
                    assert_counts_are_exact(&result, &r);
                }
            }
            let (tool_small, small) = setup();
            let tool = Arc::new(ToolPolicy {
                format,
                ..tool_small
            });
            for explicit in [false, true] {
                let call = Call {
                    level: explicit.then_some("standard"),
                    ..call(&tool, false)
                };
                let Shaped::Result { result: r, .. } = Held::new().shape(&small, &call) else {
                    panic!("not shaped")
                };
                assert_counts_are_exact(&small, &r);
            }
        }
    }

    #[test]
    fn over_budget_at_the_default_level_lowers_the_level_with_a_note() {
        let (tool, result) = setup();
        let tool = Arc::new(tool);
        let Shaped::Result { result: r, .. } = Held::new().shape(&result, &call(&tool, false))
        else {
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
        let tool = Arc::new(tool);
        let call = Call {
            level: Some("standard"),
            ..call(&tool, false)
        };
        let mut held = Held::new();
        let Shaped::Result { result: r, .. } = held.shape(&result, &call) else {
            panic!("not shaped")
        };
        let meta = &r["_meta"]["pare"];
        assert_eq!(meta["level"], "standard");
        assert!(meta["pages"].as_u64().unwrap() > 1);
        assert!(meta["tokensAfter"].as_u64().unwrap() <= 1500);
        let next = held
            .pages
            .get(meta["nextCursor"].as_str().unwrap())
            .unwrap();
        assert_eq!(next.page.record.page, 2);
        assert!(next.page.text.contains("body"));
        assert_eq!(next.meta["page"], 2);
    }

    #[test]
    fn error_results_and_non_json_text_are_left_alone() {
        let (tool, _) = setup();
        let tool = Arc::new(tool);
        let mut held = Held::new();
        let err = json!({"isError": true, "content": [{"type": "text", "text": "{}"}]});
        assert!(matches!(
            held.shape(&err, &call(&tool, false)),
            Shaped::Unchanged(_)
        ));
        let text = json!({"content": [{"type": "text", "text": "plain words"}]});
        assert!(matches!(
            held.shape(&text, &call(&tool, false)),
            Shaped::Unchanged(_)
        ));
    }

    #[test]
    fn a_verbatim_text_passes_as_is_or_in_pages_that_join_to_it() {
        let (tool, result) = setup();
        let tool = Arc::new(tool);
        let mut held = Held::new();
        let small = json!({"content": [{"type": "text", "text": "{\n  \"a\": null\n}\n"}]});
        assert!(matches!(
            held.shape(&small, &call(&tool, true)),
            Shaped::AsIs
        ));

        let text = result["content"][0]["text"]
            .as_str()
            .unwrap()
            .replace("},{", "},\n{");
        let big = json!({"content": [{"type": "text", "text": text}]});
        let Shaped::Result {
            result: r,
            needs_more,
        } = held.shape(&big, &call(&tool, true))
        else {
            panic!("not paged")
        };
        assert!(needs_more);
        let mut joined = r["content"][0]["text"].as_str().unwrap().to_owned();
        let mut cursor = r["_meta"]["pare"]["nextCursor"].as_str().map(str::to_owned);
        while let Some(c) = cursor {
            let next = held.pages.get(&c).unwrap();
            joined.push_str(&next.page.text);
            cursor = next.page.record.next_cursor.clone();
        }
        assert_eq!(joined, text);
    }

    #[test]
    fn a_result_shown_in_part_names_its_original_which_comes_back_whole_or_by_path() {
        let (tool, result) = setup();
        let tool = Arc::new(tool);
        let mut held = Held::new();
        let Shaped::Result {
            result: r,
            needs_more,
        } = held.shape(&result, &call(&tool, false))
        else {
            panic!("not shaped")
        };
        assert!(needs_more);
        let handle = r["_meta"]["pare"]["original"].as_str().unwrap();
        let items = r["content"].as_array().unwrap();
        // The handle's line ends the note item.
        let line = items.last().unwrap()["text"].as_str().unwrap();
        let line = line.lines().last().unwrap();
        assert_eq!(
            line,
            format!(
                r#"pare: original: pare_more {{"cursor":"{handle}"}} (add "path": a JSONPath, or "detail")"#
            )
        );
        let total = sent_tokens(&r);
        assert!(total <= 1500, "{total}");
        assert_eq!(r["_meta"]["pare"]["tokensAfter"], total);

        let original = held.originals.get(handle).unwrap();
        let big = Budget {
            max_tokens: 100_000,
            max_chars4: 100_000,
            ..budget()
        };
        let pages = &mut held.pages;
        let whole = original_result(&original, Ask::Whole, big, pages).unwrap();
        assert_eq!(whole["content"][0]["text"], result["content"][0]["text"]);
        let one = original_result(&original, Ask::Path("$.items[3].id"), big, pages).unwrap();
        assert_eq!(one["content"][0]["text"], "3");
        let bad = original_result(&original, Ask::Path("$.nothing"), big, pages);
        assert!(bad.unwrap_err().contains("selects nothing"));
        let brief = original_result(&original, Ask::Level("brief"), big, pages).unwrap();
        assert!(
            !brief["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("body")
        );
    }

    /// A lossy result too big for one page still names its original on page 1, inside the
    /// budget, and `tokensAfter` counts the note item as sent.
    #[test]
    fn a_paged_lossy_result_names_its_original_on_page_one_within_the_budget() {
        let (tool, _) = setup();
        let tool = Arc::new(tool);
        let items: Vec<Json> = (0..200)
            .map(|i| json!({"id": i, "body": format!("{i} ").repeat(60), "tags": format!("t{i} ").repeat(20)}))
            .collect();
        let result = json!({"content": [{"type": "text", "text": serde_json::to_string(&json!({ "items": items })).unwrap()}]});
        let call = Call {
            level: Some("brief"),
            ..call(&tool, false)
        };
        let Shaped::Result { result: r, .. } = Held::new().shape(&result, &call) else {
            panic!("not shaped")
        };
        let meta = &r["_meta"]["pare"];
        assert!(meta["pages"].as_u64().unwrap() > 1, "{meta}");
        let handle = meta["original"].as_str().unwrap();
        let items = r["content"].as_array().unwrap();
        let last = items.last().unwrap()["text"].as_str().unwrap();
        assert!(
            last.lines().last().unwrap().starts_with(&format!(
                "pare: original: pare_more {{\"cursor\":\"{handle}\"}}"
            )),
            "{last}"
        );
        let total = sent_tokens(&r);
        assert!(total <= 1500, "{total}");
        assert_eq!(meta["tokensAfter"], total);
    }
}
