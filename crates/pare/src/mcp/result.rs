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
use crate::mcp::structured::{is_json_text, same_value};
use crate::mcp::tools_list::PARE_MORE;
use crate::schema::mcp::StructuredContent;
use std::borrow::Cow;

/// Budget and tokenizer, shared by all calls.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// The limit on one result, in tokens of `tokenizer`.
    pub max_tokens: usize,
    /// The limit by the chars/4 estimate some clients gate on.
    pub max_chars4: usize,
    /// What `max_tokens` and the counts in `_meta.pare` are counted by.
    pub tokenizer: &'static dyn Tokenizer,
}

impl Budget {
    fn engine(&self) -> respond::Budget {
        respond::Budget {
            tokens: self.max_tokens,
            chars4: self.max_chars4,
        }
    }

    /// The budget less `cost` (tokens, chars/4).
    fn less(&self, cost: (usize, usize)) -> Budget {
        Budget {
            max_tokens: self.max_tokens.saturating_sub(cost.0),
            max_chars4: self.max_chars4.saturating_sub(cost.1),
            ..*self
        }
    }

    /// Whether `cost` (tokens, chars/4) is within this budget.
    fn admits(&self, cost: (usize, usize)) -> bool {
        cost.0 <= self.max_tokens && cost.1 <= self.max_chars4
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
    /// `pare_more` must be listed; `drop_structured`: the server's `structuredContent` is
    /// not sent (a door that kept it out of `result`, as raw text, leaves it out).
    Result {
        /// The `tools/call` result object to send instead.
        result: Json,
        /// It names a page or an original: `pare_more` must be listed.
        needs_more: bool,
        /// The server's `structuredContent` is not sent.
        drop_structured: bool,
    },
}

/// What became of a result's `structuredContent` (`_meta.pare.structuredContent`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    /// Sent as the server wrote it, and counted.
    Kept,
    /// Not sent: the text carries the same value.
    Dropped,
    /// Not sent: its value is the last item of the list the text shows.
    Moved,
}

impl Fate {
    fn word(self) -> &'static str {
        match self {
            Fate::Kept => "kept",
            Fate::Dropped => "dropped: the text carries the same value",
            Fate::Moved => "moved into the text: the last item of its list",
        }
    }
}

/// The call a result answers.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    /// The name of the tool called.
    pub tool_name: &'a str,
    /// How the tool's results are shaped.
    pub tool: &'a Arc<ToolPolicy>,
    /// The level the caller named; `None`: the tool's default, lowered to fit.
    pub level: Option<&'a str>,
    /// The argument the caller names a level with (`detail`, or `pare_detail`).
    pub detail_arg: &'a str,
    /// The caller's policy parameters (`maxGapMinutes` = `5`).
    pub params: &'a [(String, String)],
    /// The text passes byte for byte ([`crate::mcp::verbatim`]).
    pub verbatim: bool,
    /// The server's result says `isError`: its text passes byte for byte, as a verbatim
    /// tool's, and every page of it says `isError` too.
    pub error: bool,
    /// The caller's question, from the tool's own argument `[[mcp.tools]] query` names: a
    /// `[pack]` policy ranks the results by it.
    pub query: Option<&'a str>,
    /// The fields the caller asked for ([`crate::project`]).
    pub fields: Option<&'a crate::project::Fields>,
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
            query: self.query,
            fields: self.fields,
            ..Request::new(input, &tool.policy)
        }
    }
}

/// Where pages and originals wait for `pare_more`.
pub struct Stores<'s> {
    /// The pages after the first of a paged result, by cursor.
    pub pages: &'s mut PageCache,
    /// The server's results behind `original:` handles.
    pub originals: &'s mut Originals,
}

/// Shape `result` (a `tools/call` result object). `structured`: the result's
/// `structuredContent` as the server wrote it, when the door kept it out of `result` (the
/// proxy copies it as raw bytes); `None`: `result`'s own, if any.
///
/// The reply's text items and its `structuredContent` together are within the budget
/// (by default; `structured_content = "keep"` keeps it unchanged and counts it): a
/// `structuredContent` that is the text's value is dropped, any other is kept when all of it
/// fits, else moved into the text. Several text items are shaped as one value, the list of
/// their values, when they do not pass as they are.
pub fn shape_result(
    result: &Json,
    structured: Option<&str>,
    call: &Call,
    budget: Budget,
    mut stores: Stores,
) -> Shaped {
    let Some(obj) = result.as_object() else {
        return Shaped::Unchanged("the result is not an object");
    };
    // An error is not the shape the tool's policy was written for, and shaped it could lose
    // what went wrong; but it still has the budget (a server that echoes a 2 MB argument
    // in its error would send 500k tokens): as it is, or over the budget in plain pages.
    let error_call;
    let call = if obj.get("isError") == Some(&Json::Bool(true)) {
        error_call = Call {
            verbatim: true,
            error: true,
            ..*call
        };
        &error_call
    } else {
        call
    };
    let Some(content) = obj.get("content").and_then(Json::as_array) else {
        return Shaped::Unchanged("the result has no content list");
    };
    let written;
    let structured = match (structured, obj.get("structuredContent")) {
        (Some(s), _) => Some(s),
        (None, Some(value)) => {
            written = serde_json::to_string(value).expect("a JSON value serializes");
            Some(written.as_str())
        }
        (None, None) => None,
    };
    let texts: Vec<Option<&str>> = content.iter().map(text_of).collect();
    let Some(s) = structured else {
        let shaped = shape_content(content, &texts, None, call, &budget, &mut stores);
        return finish(obj, shaped, None, call, &budget);
    };
    let listed: Vec<&str> = texts.iter().flatten().copied().collect();
    if call.tool.structured == StructuredContent::Fit {
        // Mostly the structured content is the text's value (the SDKs write both from one
        // object), and the text is then shaped under the whole budget: that shaping is
        // started beside the check, which on a large result costs a third as much.
        let early = (listed.len() == 1 && !call.verbatim).then(|| listed[0]);
        let parallel =
            s.len() + listed.iter().map(|t| t.len()).sum::<usize>() >= PARALLEL_FROM_BYTES;
        let (same, response) = crate::join(
            parallel && early.is_some(),
            || same_value(s, &listed),
            || early.map(|text| respond::respond(first_request(text, call, &budget))),
        );
        if same {
            let shaped =
                shape_content_with(content, &texts, None, call, &budget, &mut stores, response);
            return finish(obj, shaped, Some((Fate::Dropped, 0)), call, &budget);
        }
    }
    let cost = budget.cost([s]);
    let within = cost.0 < budget.max_tokens && cost.1 < budget.max_chars4;
    if call.tool.structured == StructuredContent::Keep {
        // The text gets what the structured content leaves; when it leaves nothing, the
        // text keeps the whole budget and a note says the policy's choice broke it.
        let less = if within { budget.less(cost) } else { budget };
        let mut shaped = shape_content(content, &texts, None, call, &less, &mut stores);
        if !within {
            shaped.warn(format!(
                "pare: structuredContent ({} tokens) is kept unchanged, as the policy asks, and alone is over the budget ({} tokens)",
                cost.0, budget.max_tokens
            ));
        }
        return finish(obj, shaped, Some((Fate::Kept, cost.0)), call, &budget);
    }
    if within {
        let less = budget.less(cost);
        let shaped = shape_content(content, &texts, None, call, &less, &mut stores);
        let fits = match &shaped {
            // The server's own text beside it: whether both fit.
            ContentOut::Same { .. } => less.admits(budget.cost(listed.iter().copied())),
            ContentOut::Shaped { whole, .. } => *whole,
        };
        if fits {
            return finish(obj, shaped, Some((Fate::Kept, cost.0)), call, &budget);
        }
    }
    let shaped = shape_content(content, &texts, Some(s), call, &budget, &mut stores);
    finish(obj, shaped, Some((Fate::Moved, 0)), call, &budget)
}

/// The content as shaped, or the server's.
enum ContentOut {
    /// The server's content as it is: what was asked (`None`), or shaping failed (why).
    Same {
        failed: Option<&'static str>,
        notes: Vec<String>,
    },
    Shaped {
        items: Vec<Json>,
        meta: Map<String, Json>,
        needs_more: bool,
        /// Shown whole, on one page, at the level asked or the default.
        whole: bool,
        /// The last item is pare's note.
        noted: bool,
        /// A line was added to the note after `meta` counted it.
        recount: bool,
    },
}

impl ContentOut {
    /// A line for the note item.
    fn warn(&mut self, line: String) {
        match self {
            ContentOut::Same { notes, .. } => notes.push(line),
            ContentOut::Shaped {
                items,
                noted,
                recount,
                ..
            } => {
                // Joined to pare's note item when there is one, so one item says it all.
                match items.last_mut() {
                    Some(last) if *noted => {
                        let text = last["text"].as_str().unwrap_or_default();
                        last["text"] = Json::String(format!("{text}\n{line}"));
                    }
                    _ => items.push(note(line)),
                }
                *noted = true;
                *recount = true;
            }
        }
    }
}

/// The result with its new content and `structuredContent` (`fate`, and the tokens it costs
/// when kept), `_meta.pare` saying what was sent.
fn finish(
    obj: &Map<String, Json>,
    content: ContentOut,
    fate: Option<(Fate, usize)>,
    call: &Call,
    budget: &Budget,
) -> Shaped {
    let dropped = matches!(fate, Some((Fate::Dropped | Fate::Moved, _)));
    let (items, mut meta, needs_more, recount) = match content {
        ContentOut::Same { failed, notes } if notes.is_empty() && !dropped => {
            return failed.map_or(Shaped::AsIs, Shaped::Unchanged);
        }
        ContentOut::Same { notes, .. } => {
            // The server's content, but not its whole result: say what was sent.
            let server: Vec<&str> = obj["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(text_of)
                .collect();
            let tokens: usize = server.iter().map(|t| budget.tokenizer.count(t)).sum();
            let mut items = obj["content"].as_array().cloned().unwrap_or_default();
            let note_tokens = if notes.is_empty() {
                0
            } else {
                let text = notes.join("\n");
                let n = budget.tokenizer.count(&text);
                items.push(note(text));
                n
            };
            let mut meta = Map::new();
            meta.insert("tool".into(), json!(call.tool_name));
            meta.insert("tokenizer".into(), json!(budget.tokenizer.name()));
            meta.insert("tokensBefore".into(), json!(tokens));
            meta.insert("tokensAfter".into(), json!(tokens + note_tokens));
            (items, meta, false, false)
        }
        ContentOut::Shaped {
            items,
            meta,
            needs_more,
            recount,
            ..
        } => (items, meta, needs_more, recount),
    };
    if recount {
        // A line added to a note item that was not there: counted as sent.
        let sent: usize = items
            .iter()
            .filter_map(text_of)
            .map(|t| budget.tokenizer.count(t))
            .sum();
        meta.insert("tokensAfter".into(), json!(sent));
    }
    if let Some((fate, tokens)) = fate {
        meta.insert("structuredContent".into(), json!(fate.word()));
        if fate == Fate::Kept {
            let after = meta.get("tokensAfter").and_then(Json::as_u64).unwrap_or(0);
            meta.insert("tokensAfter".into(), json!(after + tokens as u64));
            meta.insert("structuredTokens".into(), json!(tokens));
        }
    }
    let mut out = obj.clone();
    out.insert("content".into(), Json::Array(items));
    if dropped {
        out.remove("structuredContent");
    }
    set_meta(&mut out, meta);
    Shaped::Result {
        result: Json::Object(out),
        needs_more,
        drop_structured: dropped,
    }
}

/// The content shaped under `budget`: one text item through the whole pipeline; several
/// (or one and a `structuredContent` moved in, `extra`) as one value, the list of their
/// values, when they do not pass as they are.
fn shape_content(
    content: &[Json],
    texts: &[Option<&str>],
    extra: Option<&str>,
    call: &Call,
    budget: &Budget,
    stores: &mut Stores,
) -> ContentOut {
    shape_content_with(content, texts, extra, call, budget, stores, None)
}

/// Results of `texts` and the structured content together at least this long have the
/// check that one is the other's value run beside the shaping.
const PARALLEL_FROM_BYTES: usize = 32 << 10;

/// The engine's answer for the one text of a result under `budget`, before any original's
/// line or page is stored: [`first_request`]'s.
type Early = Result<respond::Response, RespondError>;

/// [`shape_content`], with the engine's first answer already worked out (`early`, for the
/// one text of `texts` under `budget`, when the caller had it made beside other work).
fn shape_content_with(
    content: &[Json],
    texts: &[Option<&str>],
    extra: Option<&str>,
    call: &Call,
    budget: &Budget,
    stores: &mut Stores,
    early: Option<Early>,
) -> ContentOut {
    let same = |failed| ContentOut::Same {
        failed,
        notes: Vec::new(),
    };
    let listed: Vec<&str> = texts.iter().flatten().copied().collect();
    let (text, at) = match (listed.len(), extra) {
        (0, None) => return same(Some("no text content")),
        (1, None) => {
            let at = texts.iter().position(Option::is_some).expect("one text");
            (Cow::Borrowed(listed[0]), Some(at))
        }
        // Each file of a verbatim result stays as it is; over the budget, each is paged at
        // line ends, one piece a page.
        (_, None) if call.verbatim => {
            if budget.admits(budget.cost(listed.iter().copied())) {
                return same(None);
            }
            return match verbatim_pages(content, texts, call, budget, stores) {
                Ok(out) => out,
                Err(why) => same(Some(why)),
            };
        }
        _ => (Cow::Owned(list_text(&listed, extra)), None),
    };
    let mut one = match one_text(&text, call, budget, stores, early) {
        Ok(one) => one,
        Err(Unchanged::AsAsked) => return same(None),
        Err(Unchanged::Failed(why)) => return same(Some(why)),
    };
    let record = &one.page.record;
    let whole = record.pages == 1 && record.lowered_from.is_none();
    let input = record.kind == PageKind::Input;
    if at.is_none() {
        // `tokensBefore` counts the server's text items, not the list made of them.
        let cost = budget.cost(listed.iter().copied());
        let (t, fits) = (cost.0, budget.admits(cost));
        let shown = one.meta.get("tokensAfter").and_then(Json::as_u64);
        let lossless = input || !lossy(call.tool, &one.page);
        if extra.is_none() && whole && lossless && fits && shown.is_none_or(|s| s >= t as u64) {
            // Several items that pass as they are, and the list is no cheaper.
            return same(None);
        }
        one.meta.insert("tokensBefore".into(), json!(t));
    }
    let mut items = match at {
        Some(at) => {
            let mut items = content.to_vec();
            if one.page.record.kind != PageKind::Input {
                items[at] = with_text(&content[at], one.page.text);
            }
            items
        }
        None => in_place_of_texts(
            content,
            texts,
            json!({"type": "text", "text": one.page.text}),
        ),
    };
    // One note item: the engine's lines, then the handle's.
    let lines = match (one.page.note, one.handle_line) {
        (Some(n), Some(h)) => Some(format!("{n}\n{h}")),
        (n, h) => n.or(h),
    };
    let noted = lines.is_some();
    items.extend(lines.map(note));
    ContentOut::Shaped {
        items,
        meta: one.meta,
        needs_more: one.needs_more,
        whole,
        noted,
        recount: false,
    }
}

/// Several files of a verbatim tool, over the budget: each file's text cut at line ends into
/// pieces that fit with a page note ([`respond`]'s plain-text paging, under the budget less
/// the note), the pieces of all files numbered as one run of pages. Each page is one text
/// item, one piece of one file; a file's pieces joined are its text byte for byte.
fn verbatim_pages(
    content: &[Json],
    texts: &[Option<&str>],
    call: &Call,
    budget: &Budget,
    stores: &mut Stores,
) -> Result<ContentOut, &'static str> {
    let hint = call.hint();
    let c4 = crate::tokens::builtin("chars4").expect("chars4 is built in");
    let room = respond::Budget {
        tokens: budget
            .max_tokens
            .saturating_sub(respond::note::reserve(budget.tokenizer, &hint)),
        chars4: budget
            .max_chars4
            .saturating_sub(respond::note::reserve(c4, &hint)),
    };
    let mut pieces: Vec<(Page, bool)> = Vec::new();
    for text in texts.iter().flatten() {
        let response =
            respond::respond(call.request(Input::Plain(text), Some(room), budget.tokenizer))
                .map_err(|_| "a file is too long to page under this budget")?;
        let n = response.rest.len() + 1;
        for (i, page) in std::iter::once(response.page)
            .chain(response.rest)
            .enumerate()
        {
            pieces.push((page, i + 1 < n));
        }
    }
    let pages = pieces.len();
    if pages > respond::cursor::MAX_PAGES {
        return Err("too many pages");
    }
    let check = respond::cursor::check(
        std::iter::once(call.tool_name.as_bytes())
            .chain(texts.iter().flatten().map(|t| t.as_bytes())),
    );
    let cursor = |page: usize| {
        respond::cursor::Cursor {
            check,
            page: page as u16,
        }
        .encode()
    };
    let mut numbered = pieces
        .into_iter()
        .enumerate()
        .map(|(i, (mut page, inside))| {
            let (number, next) = (i + 1, (i + 1 < pages).then(|| cursor(i + 2)));
            let note = respond::note::page_note(&hint, number, pages, next.as_deref(), inside);
            let r = &mut page.record;
            r.page = number;
            r.pages = pages;
            r.kind = PageKind::Text;
            r.tokens_after = Some(budget.tokenizer.count(&page.text));
            r.note_tokens = Some(budget.tokenizer.count(&note));
            r.next_cursor = next;
            r.continues = None;
            page.note = Some(note);
            page
        });
    let first = numbered.next().expect("at least one page");
    let response = respond::Response {
        page: first,
        rest: numbered.collect(),
        shaped: None,
        stages: Default::default(),
    };
    let (page, meta) = keep_pages(call, response, &mut *stores.pages);
    let first = texts
        .iter()
        .position(Option::is_some)
        .expect("several texts");
    let mut items = in_place_of_texts(content, texts, with_text(&content[first], page.text));
    items.extend(page.note.map(note));
    Ok(ContentOut::Shaped {
        items,
        meta,
        needs_more: true,
        whole: false,
        noted: true,
        recount: false,
    })
}

/// `content` with its text items replaced by `shown`, where the first of them was (at the
/// end when there was none); the items that are not text stay where they were.
fn in_place_of_texts(content: &[Json], texts: &[Option<&str>], shown: Json) -> Vec<Json> {
    let first = texts.iter().position(Option::is_some);
    let mut shown = Some(shown);
    let mut items = Vec::with_capacity(content.len() + 1);
    for (i, item) in content.iter().enumerate() {
        if Some(i) == first {
            items.extend(shown.take());
        } else if texts[i].is_none() {
            items.push(item.clone());
        }
    }
    items.extend(shown);
    items
}

/// The JSON array of the items' values (an item that is not JSON is the string it is),
/// then `extra` (a JSON text), as one text.
fn list_text(items: &[&str], extra: Option<&str>) -> String {
    let mut out = String::with_capacity(items.iter().map(|t| t.len() + 8).sum::<usize>() + 2);
    out.push('[');
    for (i, text) in items.iter().copied().chain(extra).enumerate() {
        if i > 0 {
            out.push(',');
        }
        let is_json = Some(text) == extra || is_json_text(text);
        if is_json {
            out.push_str(text);
        } else {
            out.push_str(&serde_json::to_string(text).expect("a string serializes"));
        }
    }
    out.push(']');
    out
}

/// A one-text result, shaped.
#[derive(Debug)]
struct OneText {
    page: Page,
    meta: Map<String, Json>,
    /// The line naming the original, when it is shown.
    handle_line: Option<String>,
    needs_more: bool,
}

/// The engine's first request for a result's one text (not verbatim) under `budget`.
fn first_request<'t>(text: &'t str, call: &'t Call, budget: &Budget) -> respond::Request<'t> {
    let mut request = call.request(Input::Text(text), Some(budget.engine()), budget.tokenizer);
    // A value cannot hold a key twice: shaped, the text would lose all but one silently.
    request.reject_duplicate_keys = true;
    request
}

/// A result with one text item: the whole pipeline, budget, pages and original included.
/// `early`: the answer to [`first_request`], when it was made already.
fn one_text(
    text: &str,
    call: &Call,
    budget: &Budget,
    stores: &mut Stores,
    early: Option<Early>,
) -> Result<OneText, Unchanged> {
    let refused = |_: RespondError| Unchanged::Failed("the engine refused it");
    let engine = Some(budget.engine());
    // The text byte for byte: as it is when it fits (`fits`), else pages cut at line ends.
    let plain = |stores: &mut Stores, fits: Unchanged| {
        let response = respond::respond(call.request(Input::Plain(text), engine, budget.tokenizer))
            .map_err(refused)?;
        if response.page.record.pages == 1 {
            return Err(fits);
        }
        let (page, meta) = keep_pages(call, response, &mut *stores.pages);
        Ok(OneText {
            page,
            meta,
            handle_line: None,
            needs_more: true,
        })
    };
    if call.verbatim {
        return plain(stores, Unchanged::AsAsked);
    }
    let early = early.unwrap_or_else(|| respond::respond(first_request(text, call, budget)));
    let mut response = match early {
        Err(RespondError::Json(_)) => {
            return plain(
                stores,
                Unchanged::Failed("the text repeats a key within an object: passed as it is"),
            );
        }
        other => other.map_err(refused)?,
    };
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
    let (page, mut meta) = keep_pages(call, response, stores.pages);
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
/// level whose ops removed something. The input text itself and plain-text pages are all
/// of it, and so is a level that runs only removing ops (`prune`, `drop`, `keep`, which
/// count every removal in the record) when they removed nothing from this result: naming
/// the original would only cost the line.
fn lossy(tool: &ToolPolicy, page: &Page) -> bool {
    let r = &page.record;
    match r.kind {
        PageKind::Input | PageKind::Text => false,
        PageKind::Packed => true,
        PageKind::Value => {
            let removed_nothing = |i: usize| {
                r.omitted.is_empty()
                    && tool
                        .policy
                        .ops_at(i)
                        .iter()
                        .all(|op| matches!(*op, "prune" | "drop" | "keep"))
            };
            r.lowered_from.is_some()
                || tool
                    .policy
                    .level_index(&r.level)
                    .is_ok_and(|i| !tool.is_lossless(i) && !removed_nothing(i))
        }
    }
}

/// The page, its note and one more line of `cost` within the budget.
fn fits(budget: &Budget, page: &Page, cost: (usize, usize)) -> bool {
    let (t, c) = budget.cost([page.text.as_str()].into_iter().chain(page.note.as_deref()));
    budget.admits((t + cost.0, c + cost.1))
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
    call: &Call,
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
                    meta: meta_of(call.tool_name, &later),
                    page: later,
                    is_error: call.error,
                },
            );
        }
        cursor = next;
    }
    let meta = meta_of(call.tool_name, &response.page);
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
    /// All of it, at `full`.
    Whole,
    /// What this JSONPath selects, shown whole at `full`.
    Path(&'a str),
    /// All of it at this level (an error names the levels when it is not one).
    Level(&'a str),
}

/// The `pare_more` answer for an original: the engine's first page (later ones cached), or
/// why the request is bad.
pub(crate) fn original_result(
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
        error: false,
        query: None,
        fields: None,
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
    let (page, meta) = keep_pages(&call, response, pages);
    let mut content = vec![json!({"type": "text", "text": page.text})];
    content.extend(page.note.map(note));
    let mut out = Map::new();
    out.insert("content".into(), Json::Array(content));
    set_meta(&mut out, meta);
    Ok(Json::Object(out))
}

/// What `path` selects in the value `text` holds (JSON, or a value pare reads in text:
/// [`crate::embedded`]): the node, or an array of the nodes when several.
fn subtree(text: &str, path: &str) -> Result<crate::Value, String> {
    let selector =
        crate::query::selector::Selector::parse(path).map_err(|e| format!("`path`: {e}"))?;
    let value = match crate::json::parse(text) {
        Ok(v) => v,
        Err(_) => crate::embedded::find(text)
            .map(|found| found.value)
            .ok_or_else(|| {
                "`path` needs an original that holds a value; this one is plain text".to_owned()
            })?,
    };
    let mut found = crate::query::select(&value, &selector).map_err(|e| format!("`path`: {e}"))?;
    match found.len() {
        0 => Err(format!("`path` {path} selects nothing in the original")),
        1 => Ok(found.remove(0).clone()),
        _ => Ok(crate::Value::Array(found.into_iter().cloned().collect())),
    }
}

/// The `pare_more` answer for a cached page.
pub(crate) fn page_result(cached: CachedPage) -> Json {
    let mut content = vec![json!({"type": "text", "text": cached.page.text})];
    content.extend(cached.page.note.map(note));
    let mut out = Map::new();
    out.insert("content".into(), Json::Array(content));
    if cached.is_error {
        out.insert("isError".into(), Json::Bool(true));
    }
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
    if let Some(kind) = r.embedded {
        meta.insert("embedded".into(), json!(kind));
    }
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
            structured: Default::default(),
            query_argument: None,
            fields: false,
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
            shape_result(result, None, call, budget(), stores)
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
            error: false,
            query: None,
            fields: None,
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
        // Not reshaped by the tool's policy (its nulls stay): within the budget, as it is.
        let err = json!({"isError": true, "content": [{"type": "text", "text": "{\"a\": null}"}]});
        assert!(matches!(
            held.shape(&err, &call(&tool, false)),
            Shaped::AsIs
        ));
        let text = json!({"content": [{"type": "text", "text": "plain words"}]});
        assert!(matches!(
            held.shape(&text, &call(&tool, false)),
            Shaped::Unchanged(_)
        ));
    }

    /// Regression: a server's error result that echoed a 2 MB argument was forwarded
    /// whole, some 500k tokens past a 25,000-token budget (the Python SDK's HTTP client then
    /// failed on the event's size). It is paged as plain text now, each page saying isError.
    #[test]
    fn regression_an_error_result_echoing_a_huge_argument_passed_the_budget() {
        let (tool, _) = setup();
        let tool = Arc::new(tool);
        let mut held = Held::new();
        let path = "/tmp/".to_owned() + &"naïve-".repeat(20_000);
        let text = format!("Error: ENOENT: no such file or directory, open '{path}'\nat open");
        let err = json!({"isError": true, "content": [{"type": "text", "text": text}]});
        let Shaped::Result {
            result: r,
            needs_more,
            ..
        } = held.shape(&err, &call(&tool, false))
        else {
            panic!("not paged")
        };
        assert!(needs_more);
        let pages = walk(&mut held, &r);
        assert!(pages.len() > 10, "{} pages", pages.len());
        let mut joined = String::new();
        for page in &pages {
            assert_eq!(page["isError"], true);
            let sent = sent_tokens(page);
            assert!(sent <= budget().max_tokens, "{sent} tokens");
            joined.push_str(page["content"][0]["text"].as_str().unwrap());
        }
        assert_eq!(joined, text);
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
            ..
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
            ..
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

    /// The first page's result, then each later page's, following the cursors.
    fn walk(held: &mut Held, first: &Json) -> Vec<Json> {
        let mut pages = vec![first.clone()];
        let mut cursor = first["_meta"]["pare"]["nextCursor"]
            .as_str()
            .map(str::to_owned);
        while let Some(c) = cursor {
            let next = page_result(held.pages.get(&c).expect("a cached page"));
            cursor = next["_meta"]["pare"]["nextCursor"]
                .as_str()
                .map(str::to_owned);
            pages.push(next);
        }
        pages
    }

    /// Every text item plus the serialized `structuredContent`, as a client may show them.
    fn reply_tokens(r: &Json) -> usize {
        let structured = r
            .get("structuredContent")
            .map_or(0, |s| budget().tokenizer.count(&s.to_string()));
        sent_tokens(r) + structured
    }

    /// The value the pages' first items merge back to.
    fn merged(pages: &[Json]) -> crate::Value {
        let values = pages.iter().map(|p| {
            let text = p["content"][0]["text"].as_str().unwrap();
            let continues = p["_meta"]["pare"]["continues"].as_str().map(str::to_owned);
            (crate::encode::expand(text).unwrap().0, continues)
        });
        crate::respond::merge::merge(values).unwrap()
    }

    fn lossless_tool() -> Arc<ToolPolicy> {
        Arc::new(ToolPolicy {
            policy: Arc::new(crate::Policy::builtin_default()),
            default_level: 0,
            ..setup().0
        })
    }

    fn graph(n: usize) -> Json {
        let entities: Vec<Json> = (0..n)
            .map(|i| json!({"name": format!("entity {i}"), "entityType": "thing",
                            "observations": [format!("observation {i} says {}", "words ".repeat(8))]}))
            .collect();
        json!({"entities": entities, "relations": []})
    }

    /// The memory server's `read_graph` sends the graph as text and again as
    /// `structuredContent`: the regression let the second copy through unshaped and
    /// uncounted, past the budget.
    #[test]
    fn structured_content_dual_emitted_beside_the_text_is_sent_once_within_the_budget() {
        let tool = lossless_tool();
        let g = graph(200);
        let result = json!({"content": [{"type": "text", "text": serde_json::to_string_pretty(&g).unwrap()}],
                            "structuredContent": g});
        let mut held = Held::new();
        let Shaped::Result {
            result: r,
            drop_structured,
            ..
        } = held.shape(&result, &call(&tool, false))
        else {
            panic!("not shaped")
        };
        assert!(drop_structured);
        assert!(r.get("structuredContent").is_none());
        assert_eq!(
            r["_meta"]["pare"]["structuredContent"],
            "dropped: the text carries the same value"
        );
        let pages = walk(&mut held, &r);
        assert!(pages.len() > 1);
        for p in &pages {
            assert!(reply_tokens(p) <= 1500, "{}", reply_tokens(p));
        }
        assert!(merged(&pages) == crate::json::parse(&g.to_string()).unwrap());
        assert_eq!(r["_meta"]["pare"]["tokensAfter"], sent_tokens(&r));
    }

    /// `full` within the budget is the server's text as it is, but the copy in
    /// `structuredContent` still goes: it would cost the value twice.
    #[test]
    fn structured_content_dual_emitted_goes_at_full_too() {
        let tool = lossless_tool();
        let g = graph(3);
        let text = serde_json::to_string_pretty(&g).unwrap();
        let result = json!({"content": [{"type": "text", "text": text}], "structuredContent": g});
        let call = Call {
            level: Some("full"),
            ..call(&tool, false)
        };
        let Shaped::Result { result: r, .. } = Held::new().shape(&result, &call) else {
            panic!("not shaped")
        };
        assert_eq!(r["content"], result["content"]);
        assert!(r.get("structuredContent").is_none());
        assert_eq!(r["_meta"]["pare"]["tokensAfter"], sent_tokens(&r));
    }

    /// FastMCP and the Python SDK wrap a returned `str` as `{"result": str}`.
    #[test]
    fn structured_content_wrapping_a_plain_text_is_the_same_value() {
        let tool = lossless_tool();
        let result = json!({"content": [{"type": "text", "text": "hello there"}],
                            "structuredContent": {"result": "hello there"}});
        let Shaped::Result {
            result: r,
            drop_structured: true,
            ..
        } = Held::new().shape(&result, &call(&tool, false))
        else {
            panic!("not shaped")
        };
        assert_eq!(r["content"], result["content"]);
        assert!(r.get("structuredContent").is_none());
    }

    /// Another value in `structuredContent` is kept when the whole reply fits, counted in
    /// `tokensAfter`; too big to fit beside the text, it is moved into the text's list and
    /// paged with it, nothing lost.
    #[test]
    fn structured_content_of_another_value_is_kept_when_it_fits_else_moved_into_the_pages() {
        let tool = lossless_tool();
        let small = json!({"content": [{"type": "text", "text": "{\"a\": 1}"}],
                           "structuredContent": {"status": "ok"}});
        let Shaped::Result { result: r, .. } = Held::new().shape(&small, &call(&tool, false))
        else {
            panic!("not shaped")
        };
        assert_eq!(r["structuredContent"], json!({"status": "ok"}));
        assert_eq!(r["_meta"]["pare"]["structuredContent"], "kept");
        assert_eq!(r["_meta"]["pare"]["tokensAfter"], reply_tokens(&r));
        // Beside plain text too, which pare passes as it is.
        let plain = json!({"content": [{"type": "text", "text": "Done."}],
                           "structuredContent": {"status": "ok"}});
        assert!(matches!(
            Held::new().shape(&plain, &call(&tool, false)),
            Shaped::AsIs | Shaped::Unchanged(_)
        ));

        let g = graph(200);
        let big = json!({"content": [{"type": "text", "text": "{\"summary\": \"200 entities\"}"}],
                         "structuredContent": g});
        let mut held = Held::new();
        let Shaped::Result {
            result: r,
            drop_structured: true,
            ..
        } = held.shape(&big, &call(&tool, false))
        else {
            panic!("not moved")
        };
        assert!(r.get("structuredContent").is_none());
        let pages = walk(&mut held, &r);
        for p in &pages {
            assert!(reply_tokens(p) <= 1500, "{}", reply_tokens(p));
        }
        let want = json!([{"summary": "200 entities"}, g]);
        assert!(merged(&pages) == crate::json::parse(&want.to_string()).unwrap());
    }

    /// `structured_content = "keep"`: unchanged and counted; the text gets what is left, and
    /// a note says so when the structured content alone breaks the budget.
    #[test]
    fn structured_content_kept_by_the_policy_is_counted_and_the_text_fits_beside_it() {
        let tool = Arc::new(ToolPolicy {
            structured: StructuredContent::Keep,
            ..Arc::unwrap_or_clone(lossless_tool())
        });
        let g = graph(200);
        let s = json!({"status": "ok", "n": 200});
        let result =
            json!({"content": [{"type": "text", "text": g.to_string()}], "structuredContent": s});
        let Shaped::Result { result: r, .. } = Held::new().shape(&result, &call(&tool, false))
        else {
            panic!("not shaped")
        };
        assert_eq!(r["structuredContent"], s);
        assert!(reply_tokens(&r) <= 1500, "{}", reply_tokens(&r));
        assert_eq!(r["_meta"]["pare"]["tokensAfter"], reply_tokens(&r));

        let result =
            json!({"content": [{"type": "text", "text": "{\"a\": 1}"}], "structuredContent": g});
        let Shaped::Result { result: r, .. } = Held::new().shape(&result, &call(&tool, false))
        else {
            panic!("no warning")
        };
        assert_eq!(r["structuredContent"], g);
        let last = r["content"].as_array().unwrap().last().unwrap()["text"]
            .as_str()
            .unwrap();
        assert!(last.contains("alone is over the budget"), "{last}");
        assert_eq!(r["_meta"]["pare"]["tokensAfter"], reply_tokens(&r));
    }

    /// A Redis server's scan returned one text item per key: the regression sent 12,005
    /// items, far past the budget, because several items were never paged.
    #[test]
    fn many_content_items_are_paged_as_one_list_within_the_budget() {
        let tool = lossless_tool();
        let keys: Vec<String> = (0..10_000).map(|i| format!("session:{i:05}")).collect();
        let content: Vec<Json> = keys
            .iter()
            .map(|k| json!({"type": "text", "text": k}))
            .collect();
        let result = json!({"content": content});
        let mut held = Held::new();
        let Shaped::Result { result: r, .. } = held.shape(&result, &call(&tool, false)) else {
            panic!("not shaped")
        };
        let pages = walk(&mut held, &r);
        assert!(pages.len() > 1);
        for p in &pages {
            assert!(reply_tokens(p) <= 1500, "{}", reply_tokens(p));
        }
        assert!(merged(&pages) == crate::json::parse(&json!(keys).to_string()).unwrap());
        // And as the Python SDK sends a returned list: the items, and the list again,
        // wrapped, in `structuredContent`.
        let items: Vec<Json> = (0..300)
            .map(|i| json!({"id": i, "name": format!("row {i}")}))
            .collect();
        let content: Vec<Json> = items
            .iter()
            .map(|v| json!({"type": "text", "text": v.to_string()}))
            .collect();
        let result = json!({"content": content, "structuredContent": {"result": items}});
        let mut held = Held::new();
        let Shaped::Result {
            result: r,
            drop_structured: true,
            ..
        } = held.shape(&result, &call(&tool, false))
        else {
            panic!("not shaped")
        };
        let pages = walk(&mut held, &r);
        for p in &pages {
            assert!(reply_tokens(p) <= 1500, "{}", reply_tokens(p));
        }
        assert!(merged(&pages) == crate::json::parse(&json!(items).to_string()).unwrap());
    }

    /// A few items that fit pass as they are unless their list is cheaper.
    #[test]
    fn a_few_items_that_fit_pass_as_they_are() {
        let tool = lossless_tool();
        let result = json!({"content": [{"type": "text", "text": "Found 2:"}, {"type": "text", "text": "{\"a\":1}"},
                                        {"type": "image", "data": "AAAA", "mimeType": "image/png"}]});
        assert!(matches!(
            Held::new().shape(&result, &call(&tool, false)),
            Shaped::AsIs
        ));
    }

    /// Regression: `path` was refused on an original pare had itself read as a value
    /// (a Python server's `str(dict)`), "needs a JSON original".
    #[test]
    fn path_works_on_an_original_pare_read_out_of_a_python_repr() {
        let (tool, _) = setup();
        let tool = Arc::new(tool);
        let items: Vec<String> = (0..40)
            .map(|i| format!("{{'id': {i}, 'body': '{}'}}", format!("{i} ").repeat(60)))
            .collect();
        let text = format!("{{'items': [{}]}}", items.join(", "));
        let result = json!({"content": [{"type": "text", "text": text}]});
        let mut held = Held::new();
        let Shaped::Result { result: r, .. } = held.shape(&result, &call(&tool, false)) else {
            panic!("not shaped")
        };
        assert_eq!(r["_meta"]["pare"]["level"], "brief");
        let handle = r["_meta"]["pare"]["original"].as_str().unwrap();
        let original = held.originals.get(handle).unwrap();
        let one = original_result(
            &original,
            Ask::Path("$.items[7].id"),
            budget(),
            &mut held.pages,
        )
        .unwrap();
        assert_eq!(one["content"][0]["text"], "7");
    }

    /// Regression: a result a prune-only policy found nothing to remove from still named its
    /// original (40 tokens became 55): the line costs and shows nothing new.
    #[test]
    fn no_original_line_when_the_policy_removed_nothing() {
        let policy = crate::Policy::parse("[[ops]]\nop = \"prune\"\n").unwrap();
        let tool = Arc::new(ToolPolicy {
            policy: Arc::new(policy),
            default_level: 0,
            format: crate::encode::Format::Json,
            ..setup().0
        });
        let clean = json!({"content": [{"type": "text", "text": "{\"id\": 1, \"name\": \"a\"}"}]});
        match Held::new().shape(&clean, &call(&tool, false)) {
            Shaped::Result { result: r, .. } => {
                assert!(r["_meta"]["pare"].get("original").is_none(), "{r}");
                assert_eq!(r["content"].as_array().unwrap().len(), 1, "{r}");
            }
            Shaped::AsIs | Shaped::Unchanged(_) => {}
        }
        let with_null =
            json!({"content": [{"type": "text", "text": "{\"id\": 1, \"name\": null}"}]});
        let Shaped::Result { result: r, .. } = Held::new().shape(&with_null, &call(&tool, false))
        else {
            panic!("not shaped")
        };
        assert!(r["_meta"]["pare"]["original"].is_string(), "{r}");
    }

    /// Regressions: with no policy, `"dup":1,"dup":2` came back as `"dup":2`, the first
    /// value lost without a word; and `_meta.pare.embedded` was documented but never set.
    #[test]
    fn a_repeated_key_passes_verbatim_and_embedded_is_said() {
        let tool = lossless_tool();
        let dup =
            json!({"content": [{"type": "text", "text": "{\"dup\": 1, \"dup\": 2, \"n\": null}"}]});
        assert!(matches!(
            Held::new().shape(&dup, &call(&tool, false)),
            Shaped::Unchanged(why) if why.contains("repeats a key")
        ));
        // Over the budget, it is paged as text: the pages joined are the text.
        let rows: Vec<String> = (0..400)
            .map(|i| format!("  {{\"id\": {i}, \"id\": {i}}}"))
            .collect();
        let big = format!("[\n{}\n]", rows.join(",\n"));
        let mut held = Held::new();
        let Shaped::Result { result: r, .. } = held.shape(
            &json!({"content": [{"type": "text", "text": big}]}),
            &call(&tool, false),
        ) else {
            panic!("not paged")
        };
        let joined: String = walk(&mut held, &r)
            .iter()
            .map(|p| p["content"][0]["text"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(joined, big);

        let items: Vec<String> = (0..30)
            .map(|i| format!("{{'id': {i}, 'ok': True, 'note': None}}"))
            .collect();
        let repr = format!("Rows:\n[{}]", items.join(", "));
        let Shaped::Result { result: r, .. } = Held::new().shape(
            &json!({"content": [{"type": "text", "text": repr}]}),
            &call(&tool, false),
        ) else {
            panic!("not shaped")
        };
        assert_eq!(r["_meta"]["pare"]["embedded"], "py-repr");
    }

    /// Regression: a verbatim tool's several files went out whole, past the budget (only a
    /// single file was paged). Now every page is within the budget and each file's pieces
    /// join to it byte for byte.
    #[test]
    fn several_verbatim_files_over_the_budget_are_paged_piece_by_piece() {
        let (tool, _) = setup();
        let tool = Arc::new(tool);
        let files: Vec<String> = (0..3)
            .map(|f| {
                (0..120)
                    .map(|l| format!("file {f} line {l}: {}\n", "text ".repeat(6)))
                    .collect()
            })
            .collect();
        let content: Vec<Json> = files
            .iter()
            .map(|t| json!({"type": "text", "text": t}))
            .collect();
        let mut held = Held::new();
        let Shaped::Result { result: r, .. } =
            held.shape(&json!({"content": content}), &call(&tool, true))
        else {
            panic!("not paged")
        };
        let pages = walk(&mut held, &r);
        assert!(pages.len() >= 3);
        let mut joined = String::new();
        for p in &pages {
            assert!(sent_tokens(p) <= 1500, "{}", sent_tokens(p));
            assert_eq!(p["_meta"]["pare"]["tokensAfter"], sent_tokens(p));
            joined.push_str(p["content"][0]["text"].as_str().unwrap());
        }
        assert_eq!(joined, files.concat());
        // Small files that fit pass as they are.
        let small =
            json!({"content": [{"type": "text", "text": "a\n"}, {"type": "text", "text": "b\n"}]});
        assert!(matches!(
            held.shape(&small, &call(&tool, true)),
            Shaped::AsIs
        ));
    }
}
