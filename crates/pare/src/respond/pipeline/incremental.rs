//! [`Incremental`]: a response written while its input is still arriving, for a door that
//! can send the first bytes before the last ones come (`pare http` in front of a slow or
//! large upstream).
//!
//! When: the input is a JSON array; every op of the level is one the parser does as it
//! reads (drops by key, a plain `prune`: [`crate::early`]), with no list op and no
//! conditional prune; JSON out; no budget and no cursor (one page, known to be one before
//! the input is whole); the value is not wanted. Then each item of the array is shaped
//! alone, exactly as it is inside the whole array (those ops never look past an item), so
//! the text is the items shaped so far, and the whole text is byte for byte
//! [`respond`](super::respond)'s. What only the whole input gives (the counts, the note,
//! the warnings) comes with [`Incremental::finish`], the record and note the whole
//! response would carry.
//!
//! An item that repeats a key is read by the parser (its last value kept, at the first
//! key's place) and warned of, with its line and column in the whole text, as `respond`
//! does. An input that is not JSON fails at the item where that shows: the door has sent
//! the items before it, and must break off (it cannot take them back).
//!
//! ```
//! use pare::respond::{Incremental, Input, Request, respond};
//! use pare::Policy;
//! let policy = Policy::parse("[[ops]]\nop = \"drop\"\npaths = [\"$..at\"]\n").unwrap();
//! let request = |input| Request { want_value: false, ..Request::new(input, &policy) };
//! let mut incremental = Incremental::start(request(Input::Json(""))).unwrap().unwrap();
//! let mut sent = String::new();
//! for chunk in [r#"[{"id":1,"at":5},"#, r#"{"id":2,"at":6}]"#] {
//!     sent += &incremental.push(chunk.as_bytes()).unwrap().text().unwrap();
//! }
//! let whole = incremental.finish().unwrap();
//! sent += &whole.tail;
//! assert_eq!(sent, r#"[{"id":1},{"id":2}]"#);
//! let text = r#"[{"id":1,"at":5},{"id":2,"at":6}]"#;
//! let buffered = respond(request(Input::Json(text))).unwrap();
//! assert_eq!((sent, whole.response.page), (buffered.page.text.clone(), buffered.page));
//! ```

use crate::json::root_items::{Root, RootItems};
use crate::json::{DuplicateKey, JsonError, JsonErrorKind};
use crate::report::LISTED;

use super::*;

/// A response being written as its input arrives, for a door that can send its first bytes
/// before its input is whole: a JSON array's items are shaped as they come, each as it is
/// inside the whole array, so the text is byte for byte [`respond`](super::respond)'s.
pub struct Incremental<'a> {
    req: Request<'a>,
    level: usize,
    explicit: bool,
    params: Params,
    plan: early::Plan,
    items: RootItems,
    /// Everything written so far (the text the whole response has, less its closing `]`).
    text: String,
    omitted: Omitted,
    /// The first repeated keys, placed in the whole text, and how many there were.
    duplicates: Vec<DuplicateKey>,
    duplicate_count: usize,
    /// A `[`-wrapped copy of the items being read (reused).
    wrapped: String,
}

/// What a [`Incremental::push`] gave.
#[derive(Debug, PartialEq)]
pub enum Pushed {
    /// Only whitespace so far: nothing to send yet.
    Undecided,
    /// The input is an array: this text comes next (perhaps empty: no item is whole yet).
    Text(String),
    /// The input is not an array: nothing was written, read it whole
    /// ([`Incremental::into_input`]).
    NotAnArray,
}

impl Pushed {
    /// The text to send next, when the input is an array.
    pub fn text(self) -> Option<String> {
        match self {
            Pushed::Text(t) => Some(t),
            _ => None,
        }
    }
}

/// The end of an [`Incremental`] response: the text still to send and the whole response.
#[derive(Debug)]
pub struct Finished {
    /// The text after what the pushes gave (the array's closing `]`).
    pub tail: String,
    /// The whole response, as [`respond`](super::respond) gives it for the whole input.
    pub response: Response,
}

impl<'a> Incremental<'a> {
    /// Start a response whose input comes by [`Incremental::push`] (`req.input` is not
    /// read); `None` when this request cannot be answered before its input is whole: it
    /// wants a value, a budget, a cursor, fields, a format other than JSON, or a level with
    /// an op the parser does not do as it reads (a list op, a conditional prune). A level or parameter the policy does not have is an error,
    /// as with `respond`.
    pub fn start(req: Request<'a>) -> Result<Option<Incremental<'a>>, RespondError> {
        let policy = req.policy;
        let (level, explicit) = req.level_asked()?;
        let params = policy.params(req.params)?;
        if req.want_value
            || req.format != Format::Json
            || req.budget.is_some()
            || req.cursor.is_some()
            || req.keep_input_text
            || req.reject_duplicate_keys
            || req.fields.is_some()
        {
            return Ok(None);
        }
        let opts = shape_options(&req, &params, level);
        let plan = match early::plan(policy, &opts) {
            Some(plan) => plan,
            None => match early::nothing_to_do(policy, &opts) {
                Some(plan) => plan,
                None => return Ok(None),
            },
        };
        // Every op done by the parser, none decided on what it has not read yet.
        let active = crate::shape::ops_run(policy, &opts).count();
        if plan.done.iter().filter(|&&d| d).count() != active || plan.omit.has_wheres() {
            return Ok(None);
        }
        // Nothing left out yet: what an empty array leaves out, counted per op.
        let Some(empty) = json::compact_omitting("[]", &plan.omit, None, json::Known::NOTHING)
        else {
            return Ok(None);
        };
        let omitted = empty.omitted;
        Ok(Some(Incremental {
            req,
            level,
            explicit,
            params,
            plan,
            items: RootItems::new(),
            text: String::new(),
            omitted,
            duplicates: Vec::new(),
            duplicate_count: 0,
            wrapped: String::new(),
        }))
    }

    /// The level the response is at (known at the start: with no budget, never lowered).
    pub fn level(&self) -> &str {
        &self.req.policy.levels()[self.level]
    }

    /// The input will be about `bytes` long (a declared length): room for it and for the
    /// text made once, instead of buffers that grow by doubling and copying.
    pub fn reserve(&mut self, bytes: usize) {
        self.items.reserve(bytes);
        // Shaped text is at most about as long as its input.
        self.text.reserve_exact(bytes.saturating_add(2));
    }

    /// Read the next bytes of the input, and shape the items they complete.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Pushed, JsonError> {
        let was = self.items.root();
        self.items.push(bytes)?;
        match self.items.root() {
            Root::Unknown => return Ok(Pushed::Undecided),
            Root::Other => return Ok(Pushed::NotAnArray),
            Root::Array => {}
        }
        let from = self.text.len();
        if was != Root::Array {
            self.text.push('[');
        }
        if let Some(range) = self.items.take() {
            self.shape_items(range)?;
        }
        Ok(Pushed::Text(self.text[from..].to_owned()))
    }

    /// The input pushed so far.
    pub fn input(&self) -> &[u8] {
        self.items.text()
    }

    /// The input pushed so far, for a door that reads it whole after all
    /// ([`Pushed::NotAnArray`]).
    pub fn into_input(self) -> Vec<u8> {
        self.items.into_text()
    }

    /// The items at `range` of the input: shaped, each as it is in the whole array.
    fn shape_items(&mut self, range: std::ops::Range<usize>) -> Result<(), JsonError> {
        let input = self.items.text();
        let items = std::str::from_utf8(&input[range.clone()]).map_err(|e| {
            let at = range.start + e.valid_up_to();
            self.items
                .error(at, "the text is not UTF-8", JsonErrorKind::String)
        })?;
        self.wrapped.clear();
        self.wrapped.push('[');
        self.wrapped.push_str(items);
        self.wrapped.push(']');
        let omit = &self.plan.omit;
        let streamed = match json::compact_omitting(&self.wrapped, omit, None, json::Known::NOTHING)
        {
            Some(s) if !s.omitted.undecided => s,
            // A repeated key (or a fault): the parser reads these items, and its value (each
            // key once) is written as the stream would write it.
            _ => {
                let parsed = json::parse_noting_duplicates(&self.wrapped)
                    .map_err(|e| self.placed(range.start, e.offset, e.message, e.kind))?;
                for d in parsed.duplicates {
                    self.duplicate_count += 1;
                    if self.duplicates.len() < LISTED {
                        let placed = self.placed(
                            range.start,
                            d.offset,
                            String::new(),
                            JsonErrorKind::DuplicateKey,
                        );
                        self.duplicates.push(DuplicateKey {
                            key: d.key,
                            line: placed.line,
                            column: placed.column,
                            offset: placed.offset,
                        });
                    }
                }
                let canonical = json::to_compact(&parsed.value);
                json::compact_omitting(&canonical, omit, None, json::Known::NOTHING)
                    .filter(|s| !s.omitted.undecided)
                    .ok_or_else(|| {
                        self.items.error(
                            range.start,
                            "these items could not be shaped as they arrived",
                            JsonErrorKind::Syntax,
                        )
                    })?
            }
        };
        self.omitted.add(streamed.omitted);
        let shaped = &streamed.text[1..streamed.text.len() - 1];
        if !shaped.is_empty() {
            if self.text.len() > 1 {
                self.text.push(',');
            }
            self.text.push_str(shaped);
        }
        Ok(())
    }

    /// An error at `offset` of the `[`-wrapped copy of the items that start at `start`,
    /// placed in the whole input.
    fn placed(
        &self,
        start: usize,
        offset: usize,
        message: String,
        kind: JsonErrorKind,
    ) -> JsonError {
        let at = start + offset.saturating_sub(1);
        self.items.error(at, &message, kind)
    }

    /// The input is whole: the text still to send, and the response `respond` gives for
    /// the whole input (its page's text is what was sent).
    pub fn finish(mut self) -> Result<Finished, JsonError> {
        self.items.finish()?;
        let input = self.items.into_text();
        let input = String::from_utf8(input).map_err(|e| {
            let at = e.utf8_error().valid_up_to();
            RootItems::new().error(at, "the text is not UTF-8", JsonErrorKind::String)
        })?;
        self.text.push(']');
        let warnings = crate::report::listed_counted(
            &self.duplicates,
            self.duplicate_count,
            "duplicate keys (each keeps its last value)",
        );
        let req = &self.req;
        let opts = shape_options(req, &self.params, self.level);
        let streamed = json::Streamed {
            text: std::mem::take(&mut self.text),
            omitted: self.omitted,
            selectors_hit: Vec::new(),
        };
        let response = std::thread::scope(|scope| {
            // The input's count beside the output's, as `respond` counts them.
            let tok = req.tokenizer;
            let text: &str = &input;
            let count = match req.measure && text.len() >= input_count::EARLY_FROM_BYTES {
                true => InputCount::running(scope.spawn(move || tok.count(text))),
                false => InputCount::later(tok, text),
            };
            let stages = Cell::new(Stages::default());
            let run = Run {
                req,
                text: Some(text),
                input_tokens: &|| count.get(),
                level: self.level,
                explicit: self.explicit,
                params: self.params.clone(),
                frame: None,
                warnings,
                early: RefCell::new(None),
                stages: &stages,
            };
            run.streamed(streamed, &self.plan, &opts)
        });
        let response = response.expect("one page, with no budget to exceed");
        Ok(Finished {
            tail: "]".to_owned(),
            response,
        })
    }
}
