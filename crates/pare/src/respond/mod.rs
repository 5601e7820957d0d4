//! The response pipeline: the one entry point every door calls to shape a response for a
//! model — policy at a level, render, count, fit a budget, page, cursor, and a record of what
//! happened.
//!
//! ```text
//! Request ─▶ input (JSON text, a value, text holding one, or plain text) ─▶ level
//!   (asked, or the default, lowered to fit) ─▶ shape ─▶ render ─▶ count ─▶ fit / page
//!   ─▶ Page { text, note, record }
//!                  └─ a policy with [pack]: packed search results, same record and cursor ─┘
//! ```
//!
//! Why here: the CLI, the MCP proxy and every later door need the same budget, paging and
//! cursor logic; written once here, a door only maps its protocol onto a [`Request`] and the
//! [`Record`] onto its output, and every door gives the same page texts for the same input,
//! policy, level, budget and format.
//!
//! - **Levels.** A level the caller names is never lowered. With none, the policy's default
//!   is used and, when its result is over the budget, the next lower level that fits (with a
//!   note saying how to ask for more).
//! - **Budgets** hold for every page and its note, by the real tokenizer and by chars/4
//!   ([`Budget`]). What still does not fit — at any level, `full` included, and plain text —
//!   is paged ([`cut`]): every page decodes alone and the pages merge back ([`merge`]).
//! - **Cursors** ([`cursor`]) check the input and settings and carry the page number, so a
//!   door can read the input again instead of keeping state.
//! - **Text holding a value** ([`crate::embedded`]: JSON after a caption or before a
//!   trailer, a Python repr) is shaped like JSON; the caption and trailer stand around
//!   every page, byte for byte, inside the budget, and the record names the kind
//!   ([`Record::embedded`]).
//! - **Notes say what a policy removed**: once `prune`, `drop` or `keep` removed a member
//!   at the level shown, every page's note opens with a line saying so
//!   ([`note::removed_line`]), so an absent member is not taken for an empty one.
//!
//! ```
//! use pare::respond::{respond, Budget, Input, Request};
//! use pare::Policy;
//! let policy = Policy::builtin_default();
//! let rows: Vec<String> = (0..200).map(|i| format!(r#"{{"id":{i},"note":null}}"#)).collect();
//! let text = format!(r#"{{"rows":[{}]}}"#, rows.join(","));
//! let request = |cursor| Request {
//!     budget: Some(Budget::tokens(300)),
//!     cursor,
//!     ..Request::new(Input::Json(&text), &policy)
//! };
//! let first = respond(request(None)).unwrap();
//! assert_eq!(first.page.record.page, 1);
//! assert!(first.page.record.pages > 1);
//! let next = first.page.record.next_cursor.clone().unwrap();
//! let second = respond(request(Some(&next))).unwrap();
//! assert_eq!(second.page.record.page, 2);
//! assert_eq!(second.page.text, first.rest[0].text);
//! ```

pub mod budget;
/// The cursor codec, a module of its own below every stage (packs and policies use it too).
pub use crate::cursor;
pub mod cut;
mod frame;
pub mod merge;
pub mod note;
mod pipeline;

use std::collections::BTreeMap;

use serde::Serialize;

pub use budget::Budget;
pub use note::Hint;
pub use pipeline::{Finished, Incremental, Mark, Omitting, Pushed, respond, respond_omitted};

use crate::encode::Format;
use crate::policy::Policy;
use crate::shape::Shaped;
use crate::tokens::{self, Tokenizer};
use crate::value::Value;

/// What a door hands the engine.
#[derive(Debug)]
pub enum Input<'a> {
    /// JSON text; anything else is an error (with line and column).
    Json(&'a str),
    /// Text that is shaped when it is JSON or holds a value pare reads back exactly
    /// ([`crate::embedded`]: JSON after a caption or before a trailer, a Python repr; the
    /// caption and trailer stand around every page), and paged as plain text otherwise.
    Text(&'a str),
    /// Text that is never parsed, only paged (at line ends) when over the budget: a file's
    /// contents, which a reader edits by quoting what it read.
    Plain(&'a str),
    /// A value the door already has (a binding's native object).
    Value(Value),
}

/// One request to shape a response.
pub struct Request<'a> {
    /// What to shape.
    pub input: Input<'a>,
    /// The policy whose levels, parameters and ops shape the input.
    pub policy: &'a Policy,
    /// A level by name: never lowered. `None`: the default level, lowered to fit.
    pub level: Option<&'a str>,
    /// The level used when `level` is `None` (a door's per-route or per-tool default);
    /// `None`: the policy's `default_level`.
    pub default_level: Option<&'a str>,
    /// Parameter overrides (`maxGapMinutes=5`), checked against the policy's parameters.
    pub params: &'a [(String, String)],
    /// The encoding pages are rendered in (minified JSON in [`Request::new`]).
    pub format: Format,
    /// Counts everything and decides `auto`'s encodings.
    pub tokenizer: &'a dyn Tokenizer,
    /// The hard limit for each page and its note; `None`: one page, however long.
    pub budget: Option<Budget>,
    /// The page an earlier response's `next_cursor` names.
    pub cursor: Option<&'a str>,
    /// Write `_omitted` notes; `None`: as the policy says.
    pub omitted_notes: Option<bool>,
    /// A transparent door (a proxy) returns the input text itself, byte for byte, at the
    /// level `full` and whenever shaping would not make it cheaper, as long as it fits.
    pub keep_input_text: bool,
    /// Count tokens before and after even when no budget needs them (for the record).
    pub measure: bool,
    /// How the notes tell the reader to go on.
    pub hint: Hint<'a>,
    /// Refuse JSON input (or text that is JSON) that repeats a key within an object
    /// ([`RespondError::Json`], naming the key, line and column) instead of keeping its last
    /// value with a warning.
    pub reject_duplicate_keys: bool,
    /// Hand back the shaped value in [`Response::shaped`] (the default). A door that sends
    /// only the text says no: then, for a policy whose every op the stream does (`$..name`
    /// drops and a plain `prune` as it reads; `hoist` and `partition` at paths of member
    /// names, on the lists it wrote) with JSON out, the text is written as the input is
    /// read, with no value built ([`crate::json`]'s stream), and `shaped` is `None`.
    pub want_value: bool,
    /// A `[pack]` policy's pages as data: each page is the JSON `pare pack --format json`
    /// prints ([`crate::pack::Packed::data`]), within the budget, instead of packed text
    /// (a client that reads only JSON). The record's format says which: `json` or `pack`.
    pub pack_data: bool,
    /// The caller's question, for a `[pack]` policy: chunks are ranked by their relevance
    /// to it blended with the upstream score ([`crate::pack::PackSettings::query`]).
    pub query: Option<&'a str>,
    /// The caller's projection ([`crate::project`]): only these fields of the shaped value
    /// are shown, and the note says so. Not for a `[pack]` policy.
    pub fields: Option<&'a crate::project::Fields>,
    /// The input is compact JSON the door wrote itself from its own map objects, in a
    /// long-lived process (the Python package's `dict`s): no object in it repeats a key, so
    /// the stream does not look for repeats (were one there, it would be written twice),
    /// and a text from 512 KB is read on two threads (2 MB otherwise: a thread costs more
    /// to start in a fresh process). `false` in [`Request::new`].
    pub written_by_door: bool,
    /// The output a report already wrote from this very input text at the level asked
    /// ([`crate::report::measure_text_sharing`]): the response takes it rather than
    /// writing the same text again, when its plan is the one that text was written by.
    /// `None` in [`Request::new`].
    pub shared_output: Option<&'a crate::report::SharedOutput>,
}

impl<'a> Request<'a> {
    /// A request with the defaults: the policy's default level and parameters, minified
    /// JSON, o200k_base, no budget, counted, notes in the CLI's words.
    pub fn new(input: Input<'a>, policy: &'a Policy) -> Request<'a> {
        Request {
            input,
            policy,
            level: None,
            default_level: None,
            params: &[],
            format: Format::Json,
            tokenizer: tokens::builtin("o200k_base").expect("o200k_base is built in"),
            budget: None,
            cursor: None,
            omitted_notes: None,
            keep_input_text: false,
            measure: true,
            hint: Hint::Flags,
            reject_duplicate_keys: false,
            want_value: true,
            pack_data: false,
            query: None,
            fields: None,
            written_by_door: false,
            shared_output: None,
        }
    }

    /// The level this request shapes at unless a cursor or budget moves it: `level`'s index
    /// in the policy, else `default_level`'s, else the policy's default level's; and whether
    /// the caller named it (`level`).
    pub fn level_asked(&self) -> Result<(usize, bool), RespondError> {
        let policy = self.policy;
        let (name, named) = match self.level {
            Some(name) => (name, true),
            None => (self.default_level.unwrap_or(policy.default_level()), false),
        };
        let index = policy.level_index(name).map_err(|_| RespondError::Level {
            name: name.to_owned(),
            allowed: policy.levels().join(", "),
        })?;
        Ok((index, named))
    }
}

/// What the engine hands back: the page asked for, the pages after it (a door that caches
/// pages stores them; one that reads the input again ignores them), and the shaped value.
#[derive(Debug)]
pub struct Response {
    /// The page asked for: the first, or the one `cursor` names.
    pub page: Page,
    /// The pages after `page`, in order.
    pub rest: Vec<Page>,
    /// The shaped value, whole (before rendering and paging), when the input was JSON (or
    /// held a value, [`Input::Text`]), not packed, and not streamed ([`Request::want_value`]):
    /// for callers that serialize it themselves, and for a process about to exit, which can
    /// skip freeing it.
    pub shaped: Option<Shaped>,
    /// How long its stages took.
    pub stages: Stages,
}

/// How long the stages of one response took (`pare compact --timings`): parsing the input,
/// shaping the value (every level tried) and rendering it (every rendering, its counts
/// included). Paging and the notes are the rest. A response written as the text was read
/// ([`Request::want_value`]) spends it all in `parse`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stages {
    /// Reading the input into a value (or, streamed, writing its text as well).
    pub parse: std::time::Duration,
    /// Running the policy, at every level tried.
    pub shape: std::time::Duration,
    /// Rendering the value and counting its tokens, every rendering.
    pub render: std::time::Duration,
}

/// One page: the text the model reads, the note that follows it, and the record.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// What the model reads, the note not included.
    pub text: String,
    /// A line for the model after the text (page position, how to go on, or why the level
    /// was lowered). The budget covers text and note together.
    pub note: Option<String>,
    /// What happened, for the door to report.
    pub record: Record,
}

/// What happened to a response: the facts a door reports (MCP's `_meta.pare`, the CLI's
/// `--report-json`, HTTP headers, the Python object).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Record {
    /// Name of the tokenizer the counts are by.
    pub tokenizer: String,
    /// What the text is written in: a [`Format`] name, `pack` for packed search results, or
    /// `text` for plain text.
    pub format: &'static str,
    /// The level shown.
    pub level: String,
    /// The level the request would have shown, when it was lowered to fit the budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lowered_from: Option<String>,
    /// Tokens of the input as given (its text, or a value as minified JSON).
    pub tokens_before: Option<usize>,
    /// Tokens of this page's text (the note not included).
    pub tokens_after: Option<usize>,
    /// Tokens of the note, 0 without one.
    pub note_tokens: Option<usize>,
    /// 1-based.
    pub page: usize,
    /// How many pages the response has; 1 when it fits whole.
    pub pages: usize,
    /// The cursor that asks for the next page; `None` on the last page.
    pub next_cursor: Option<String>,
    /// JSON Pointer of the item or string this page continues from the page before
    /// ([`merge`]); `""` is the root.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continues: Option<String>,
    /// What the page is.
    pub kind: PageKind,
    /// How the value was read out of text ([`crate::embedded::Kind::as_str`]: `json-span`
    /// or `py-repr`); the page's text is then the caption, the page of the value (in
    /// `format`) and the trailer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedded: Option<&'static str>,
    /// What the policy removed, by kind (`stripped`, `empty`, …): counts, never values.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub omitted: BTreeMap<&'static str, u64>,
    /// What the reader should know and the page cannot say: a key the input repeats (its
    /// last value kept), a number `toon` cannot carry, pages that do not decode alone.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// What a page's text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PageKind {
    /// The input text itself, unchanged.
    Input,
    /// A value (the shaped one, or a page of it) in the request's format: it decodes alone.
    Value,
    /// A piece of plain text (non-JSON input, or a value no page could hold a part of).
    Text,
    /// Packed search results (a policy with `[pack]`).
    Packed,
}

/// Why a request could not be answered. Doors that must not fail (the proxies) forward the
/// input unchanged instead.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RespondError {
    /// `Input::Json` that is not JSON.
    #[error("{0}")]
    Json(#[from] crate::json::JsonError),
    /// The request's `level` (or `default_level`) is not one of the policy's levels.
    #[error("unknown level `{name}`; this policy's levels: {allowed}")]
    Level {
        /// The level as named.
        name: String,
        /// The policy's levels, comma-separated.
        allowed: String,
    },
    /// A parameter override names no parameter of the policy, or has a value it does not take.
    #[error(transparent)]
    Policy(#[from] crate::ops::compile::PolicyError),
    /// A cursor that is not pare's, does not fit this input and settings, or came without a
    /// budget.
    #[error("{0}")]
    Cursor(String),
    /// The budget is too small for a page and its note, or needs more pages than a cursor
    /// can number.
    #[error("{0}")]
    Budget(String),
    /// A `[pack]` policy whose field mapping does not match the input.
    #[error(transparent)]
    Pack(#[from] crate::pack::PackError),
    /// Fields asked of a response they cannot apply to (a `[pack]` policy's packed
    /// results).
    #[error("{0}")]
    Fields(String),
}
