//! Shaping one `tools/call` result: policy at a level, the token budget, pages.
//!
//! Each `content[]` text that parses as JSON is shaped with the tool's policy and rendered in
//! its format; other content is left alone. `structuredContent` is never touched: it must
//! stay valid against the tool's `outputSchema`, and clients hand `content` to the model.
//! When the shaped text is over the budget, a level the caller did not choose is lowered
//! step by step until it fits; when none fits (or the caller chose the level), the text is
//! paged ([`crate::pages`]) and the later pages are cached for `pare_more`.

use pare::encode::render_counted;
use pare::shape::{ShapeOptions, shape};
use pare::tokens::Tokenizer;
use serde_json::{Map, Value as Json, json};

use crate::cache::{Page, PageCache};
use crate::config::ToolPolicy;
use crate::gate::Gate;
use crate::pages::paginate_rendered;

/// Budget and tokenizer, shared by all calls.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    pub max_tokens: usize,
    /// The limit by the chars/4 estimate some clients gate on (see [`Gate`]).
    pub max_chars4: usize,
    pub tokenizer: &'static dyn Tokenizer,
}

/// What became of a result.
#[derive(Debug)]
pub enum Shaped {
    /// Forward the upstream bytes unchanged, for this reason (logged when it is a failure).
    Unchanged(&'static str),
    /// The new `result` object.
    Result(Json),
}

/// The call a result answers.
#[derive(Debug)]
pub struct Call<'a> {
    pub tool_name: &'a str,
    pub tool: &'a ToolPolicy,
    pub level: usize,
    /// The caller named the level: never lowered to fit, paged instead.
    pub explicit: bool,
}

/// The content items rendered at one level, with their counts.
#[derive(Default)]
struct Rendering {
    /// Per content item: the shaped value and its text, for the items that are JSON text.
    items: Vec<Option<(pare::Value, String)>>,
    /// Real tokens of all texts (shaped or not).
    real: usize,
    /// The budget gate's count of all texts.
    gate: usize,
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
    let values: Vec<Option<pare::Value>> = texts
        .iter()
        .map(|t| t.and_then(|t| pare::json::parse(t).ok()))
        .collect();
    if values.iter().all(Option::is_none) {
        return Shaped::Unchanged("no content text is JSON");
    }
    let tok = budget.tokenizer;

    let gate = Gate::new(tok, budget.max_tokens, budget.max_chars4);
    // Each level's rendering is counted once: real tokens (for `_meta`) and the gate's count
    // (the stricter of real and chars/4, for the budget).
    let render_at = |level: usize| -> Rendering {
        let mut r = Rendering::default();
        for (v, t) in values.iter().zip(&texts) {
            let mut add = |text: &str, real: usize| {
                r.real += real;
                r.gate += real.max(gate.chars4_count(text));
            };
            match v {
                Some(v) => {
                    let opts = options(call.tool, level, tok);
                    let shaped = shape(v.clone(), &call.tool.policy, &opts).value;
                    // The exact count comes with the text (`auto` has counted it already).
                    let (text, real) = render_counted(&shaped, call.tool.format, tok);
                    add(&text, real);
                    r.items.push(Some((shaped, text)));
                }
                None => {
                    if let Some(text) = t {
                        add(text, tok.count(text));
                    }
                    r.items.push(None);
                }
            }
        }
        r
    };

    // The server's text is counted on another core while this one shapes and renders.
    let (tokens_before, (level, rendered, lowered)) = std::thread::scope(|scope| {
        let before = scope.spawn(|| texts.iter().flatten().map(|t| tok.count(t)).sum::<usize>());
        let mut chosen = (call.level, render_at(call.level), false);
        if chosen.1.gate > budget.max_tokens && !call.explicit {
            for lower in (0..call.level).rev() {
                let r = render_at(lower);
                if r.gate <= budget.max_tokens {
                    chosen = (lower, r, true);
                    break;
                }
            }
        }
        (before.join().expect("counting does not panic"), chosen)
    });
    let level_name = call.tool.levels()[level].clone();
    let mut meta = Map::new();
    meta.insert("tool".into(), json!(call.tool_name));
    meta.insert("tokenizer".into(), json!(tok.name()));
    meta.insert("tokensBefore".into(), json!(tokens_before));
    meta.insert("level".into(), json!(level_name));
    meta.insert("format".into(), json!(call.tool.format.name()));

    let mut new_content: Vec<Json> = content
        .iter()
        .zip(&rendered.items)
        .map(|(item, r)| match r {
            Some((_, text)) => with_text(item, text.clone()),
            None => item.clone(),
        })
        .collect();
    let mut page_meta = (1, 1, None);
    let mut after = rendered.real;
    if rendered.real >= tokens_before && rendered.gate <= budget.max_tokens {
        // Shaping saved nothing: the server's own text is as cheap and exactly as written.
        new_content = content.clone();
        after = tokens_before;
    } else if lowered {
        let next = &call.tool.levels()[call.level];
        let text = format!(
            "pare: shown at detail `{level_name}` to fit {} tokens; call again with detail \"{next}\" for more (in pages).",
            budget.max_tokens
        );
        after += tok.count(&text);
        new_content.push(note(text));
    } else if rendered.gate > budget.max_tokens {
        // Paged: only a result whose one content item is JSON text.
        let [Some((value, whole))] = rendered.items.as_slice() else {
            return Shaped::Unchanged("over the budget, and only a single JSON text can be paged");
        };
        // The note after each page: its words, plus at most one token per cursor character.
        let reserve = gate.count(&page_note(9999, 9999, Some(""))) + 10;
        // The one item's rendering and its gate count are the whole's: not made again.
        let pages = paginate_rendered(
            value,
            whole,
            rendered.gate,
            call.tool.format,
            tok,
            &gate,
            budget.max_tokens.saturating_sub(reserve).max(1),
        );
        let n = pages.len();
        let cursors: Vec<String> = (1..n).map(|_| cache.new_cursor()).collect();
        for (i, text) in pages.iter().enumerate().skip(1) {
            cache.put(
                cursors[i - 1].clone(),
                Page {
                    text: text.clone(),
                    page: i + 1,
                    pages: n,
                    next: cursors.get(i).cloned(),
                    meta: meta.clone(),
                },
            );
        }
        let first = cursors.first().map(String::as_str);
        let note_text = page_note(1, n, first);
        after = tok.count(&pages[0]) + tok.count(&note_text);
        new_content = vec![with_text(&content[0], pages[0].clone()), note(note_text)];
        page_meta = (1, n, first.map(str::to_owned));
    }
    meta.insert("tokensAfter".into(), json!(after));
    finish_meta(&mut meta, page_meta);
    let mut out = obj.clone();
    out.insert("content".into(), Json::Array(new_content));
    set_meta(&mut out, meta);
    Shaped::Result(Json::Object(out))
}

/// The `pare_more` answer for a cached page.
pub fn page_result(page: Page, tok: &dyn Tokenizer) -> Json {
    let content = vec![
        json!({"type": "text", "text": page.text}),
        note(page_note(page.page, page.pages, page.next.as_deref())),
    ];
    let mut meta = page.meta;
    let after: usize = content
        .iter()
        .filter_map(text_of)
        .map(|t| tok.count(t))
        .sum();
    meta.insert("tokensAfter".into(), json!(after));
    finish_meta(&mut meta, (page.page, page.pages, page.next));
    let mut out = Map::new();
    out.insert("content".into(), Json::Array(content));
    set_meta(&mut out, meta);
    Json::Object(out)
}

/// The line that follows a page: where the reader is and how to go on.
pub fn page_note(page: usize, pages: usize, next: Option<&str>) -> String {
    match next {
        Some(c) => format!(
            "pare: page {page} of {pages}. Next page: call pare_more with {{\"cursor\":\"{c}\"}}."
        ),
        None => format!("pare: page {page} of {pages} (last)."),
    }
}

fn finish_meta(meta: &mut Map<String, Json>, (page, pages, next): (usize, usize, Option<String>)) {
    meta.insert("page".into(), json!(page));
    meta.insert("pages".into(), json!(pages));
    if let Some(c) = next {
        meta.insert("nextCursor".into(), json!(c));
    }
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

fn options(tool: &ToolPolicy, level: usize, tok: &'static dyn Tokenizer) -> ShapeOptions<'static> {
    ShapeOptions {
        level,
        params: tool.policy.params(&[]).expect("defaults are valid"),
        tokenizer: tok,
        track_paths: false,
        op_limit: None,
        notes: None,
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
                let call = Call {
                    tool_name: "t",
                    tool: &tool,
                    level,
                    explicit,
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
                    level: 1,
                    explicit,
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
            level: 1,
            explicit: false,
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
            level: 1,
            explicit: true,
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
        assert_eq!(next.page, 2);
        assert!(next.text.contains("body"));
    }

    #[test]
    fn error_results_and_non_json_text_are_left_alone() {
        let (tool, _) = setup();
        let call = Call {
            tool_name: "t",
            tool: &tool,
            level: 1,
            explicit: false,
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
