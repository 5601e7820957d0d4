//! [`respond`]: one request through the pipeline, and the choices on the way (which level,
//! the input text itself or a rendering, one page or many).

use std::cell::{Cell, RefCell};
use std::time::Instant;

use crate::early;
use crate::embedded;
use crate::encode::{Format, render_counted};
use crate::json;
use crate::json::omit::Omitted;
use crate::manifest::Manifest;
use crate::ops::compile::FULL;
use crate::pack::{self, PackSettings, Tier, cache::PreviewCache, chunks};
use crate::params::Params;
use crate::policy::Policy;
use crate::shape::{ShapeOptions, Shaped, shape};
use crate::tokens::Tokenizer;
use crate::value::Value;

mod input_count;

use input_count::InputCount;

use super::budget::Gate;
use super::cursor::{self, Cursor};
use super::cut;
use super::frame::{self, Frame};
use super::note;
use super::{Input, Page, PageKind, Record, Request, RespondError, Response, Stages};

/// Shape one response: see the [module docs](super).
pub fn respond(req: Request) -> Result<Response, RespondError> {
    let cursor = req.cursor;
    if let Some(c) = cursor
        && req.budget.is_none()
    {
        // Pages exist only under a budget: a cursor without one would be ignored.
        return Err(RespondError::Cursor(format!(
            "cursor `{c}` needs the budget it was given under (a cursor names a page, and \
             there are pages only under a budget)"
        )));
    }
    let response = respond_any(req)?;
    match cursor {
        // A cursor names page 2 or later; this response now has one page: answering page 1
        // would give a reader walking the pages what it has already read.
        Some(c) if response.page.record.page < 2 => Err(RespondError::Cursor(format!(
            "cursor `{c}` does not fit this input: it now fits on one page (the input has \
             changed since, or the request's settings differ); ask again without the cursor"
        ))),
        _ => Ok(response),
    }
}

fn respond_any(req: Request) -> Result<Response, RespondError> {
    // The level and parameters first: a request refused for them counts nothing.
    let policy = req.policy;
    let level_index = |name: &str| {
        policy.level_index(name).map_err(|_| RespondError::Level {
            name: name.to_owned(),
            allowed: policy.levels().join(", "),
        })
    };
    let asked = match req.level {
        Some(name) => (level_index(name)?, true),
        None => (
            level_index(req.default_level.unwrap_or(policy.default_level()))?,
            false,
        ),
    };
    let params = policy.params(req.params)?;
    // The input text's count, when the request needs it, starts at once on another core:
    // it then runs beside parsing as well as shaping and rendering.
    let text = match &req.input {
        Input::Json(t) | Input::Text(t) | Input::Plain(t) => Some(*t),
        Input::Value(_) => None,
    };
    let early = text.filter(|t| {
        (req.measure || req.keep_input_text) && t.len() >= input_count::EARLY_FROM_BYTES
    });
    // A text counted before (a tool's result, called again) is counted here at once: a
    // thread would cost more than looking its count up.
    let remembered = early.and_then(|t| req.tokenizer.count_remembered(t));
    match early.filter(|_| remembered.is_none()) {
        Some(t) => std::thread::scope(|scope| {
            let tok = req.tokenizer;
            let count = InputCount::running(scope.spawn(move || tok.count(t)));
            respond_counting(req, asked, params, &|| count.get())
        }),
        None => {
            let count = InputCount::later(req.tokenizer, text.unwrap_or_default());
            if let Some(n) = remembered {
                count.know(n);
            }
            respond_counting(req, asked, params, &|| count.get())
        }
    }
}

/// [`respond`] at the level asked (its index, and whether the caller named it), with the
/// parameters, `input_tokens` giving the input text's count.
fn respond_counting(
    mut req: Request,
    (level, explicit): (usize, bool),
    params: Params,
    input_tokens: &dyn Fn() -> usize,
) -> Result<Response, RespondError> {
    let policy = req.policy;
    // Shaped at one level only: the parser can do some of its ops as it reads.
    let one_level = !lowerable(policy, level, explicit, req.budget.is_some());
    let plan = one_level
        .then(|| early::plan(policy, &shape_options(&req, &params, level)))
        .flatten();
    // No op at this level: nothing for the parser to leave out, but the stream still writes
    // the input minified as it reads it (a transparent door keeps the input text instead).
    let idle = (one_level && plan.is_none() && !req.keep_input_text)
        .then(|| early::nothing_to_do(policy, &shape_options(&req, &params, level)))
        .flatten();
    if let Some(streamable) = plan.as_ref().or(idle.as_ref())
        && let Some(response) = stream(&req, streamable, (level, explicit), &params, input_tokens)
    {
        return Ok(response);
    }
    let mut omitted = None;
    let mut parse = |t: &str| match &plan {
        Some(plan) => json::parse_omitting(t, &plan.omit).map(|(parsed, o)| {
            omitted = o;
            parsed
        }),
        None => json::parse_noting_duplicates(t),
    };
    let mut warnings = Vec::new();
    let parsing = Instant::now();
    let (text, value) = match &req.input {
        Input::Json(t) => {
            let parsed = parse(t)?;
            if req.reject_duplicate_keys
                && let Some(d) = parsed.duplicates.first()
            {
                return Err(RespondError::Json(d.to_error()));
            }
            warnings = duplicate_warnings(&parsed.duplicates);
            (Some(*t), Some(parsed.value))
        }
        Input::Text(t) => match parse(t) {
            Ok(parsed) => {
                if req.reject_duplicate_keys
                    && let Some(d) = parsed.duplicates.first()
                {
                    return Err(RespondError::Json(d.to_error()));
                }
                warnings = duplicate_warnings(&parsed.duplicates);
                (Some(*t), Some(parsed.value))
            }
            Err(_) => (Some(*t), None),
        },
        Input::Plain(t) => (Some(*t), None),
        Input::Value(_) => (None, None),
    };
    let stages = Cell::new(Stages {
        parse: parsing.elapsed(),
        ..Stages::default()
    });
    let input = std::mem::replace(&mut req.input, Input::Text(""));
    let mut frame = None;
    let value = match (value, input) {
        (Some(v), _) => v,
        (None, Input::Value(v)) => v,
        (None, _) => {
            let text = text.unwrap_or_default();
            // Packing reads search results of its own layout: no caption to put back.
            match policy
                .options()
                .pack
                .is_none()
                .then(|| embedded::find(text))
                .flatten()
            {
                Some(found) => {
                    frame = Some(Frame::of(&found));
                    found.value
                }
                None => {
                    return text_response(&req, text, level, input_tokens).map(|r| Response {
                        stages: stages.get(),
                        ..r
                    });
                }
            }
        }
    };
    let run = Run {
        req: &req,
        text,
        input_tokens,
        level,
        explicit,
        params,
        frame,
        warnings,
        early: RefCell::new(plan.zip(omitted)),
        stages: &stages,
    };
    // `full` is the input at every door, a packing policy's too.
    let response = match &policy.options().pack {
        Some(options) if level + 1 < policy.levels().len() => run.packed(&value, options),
        _ => run.shaped(value),
    };
    response.map(|r| Response {
        stages: stages.get(),
        ..r
    })
}

/// The response written as the input is read, with no value built, when it can be: no
/// value wanted, every op of the level done by the parser (`plan`) or a list op the stream
/// does ([`json::lists`]), JSON out, and one page (a cursor names a later one; a text over
/// the budget is paged from the value). `None`: the value is built.
fn stream(
    req: &Request,
    plan: &early::Plan,
    (level, explicit): (usize, bool),
    params: &Params,
    input_tokens: &dyn Fn() -> usize,
) -> Option<Response> {
    if req.want_value || req.format != Format::Json || req.cursor.is_some() {
        return None;
    }
    let (Input::Json(t) | Input::Text(t)) = req.input else {
        return None;
    };
    let policy = req.policy;
    let opts = shape_options(req, params, level);
    let walked: Vec<_> = crate::shape::ops_run(policy, &opts)
        .zip(&plan.done)
        .filter_map(|(o, &done)| (!done).then_some(o))
        .collect();
    let lists = match walked.is_empty() {
        true => None,
        false => Some(json::lists::Lists::new(&policy.selectors, walked)?),
    };
    let streaming = Instant::now();
    let streamed = json::compact_omitting(t, &plan.omit, lists.as_ref())?;
    let stages = Cell::new(Stages {
        parse: streaming.elapsed(),
        ..Stages::default()
    });
    let run = Run {
        req,
        text: Some(t),
        input_tokens,
        level,
        explicit,
        params: params.clone(),
        frame: None,
        warnings: Vec::new(),
        early: RefCell::new(None),
        stages: &stages,
    };
    let response = run.streamed(streamed, plan, &opts)?;
    Some(Response {
        stages: stages.get(),
        ..response
    })
}

/// The warnings for the keys an input repeats.
fn duplicate_warnings(duplicates: &[json::DuplicateKey]) -> Vec<String> {
    crate::report::listed(duplicates, "duplicate keys (each keeps its last value)")
}

/// Tokens a page must have room for besides its note: less and no page could say anything.
const MIN_PAGE_TOKENS: usize = 16;

/// What the notes of a paged response may cost (the same for every door), with the line
/// saying what the policy `removed`, and the room that leaves each page; an error when the
/// budget leaves no room. Asked only once a response is over its budget: a response that
/// fits needs no page note.
fn page_room(
    gate: &Gate,
    hint: &note::Hint,
    removed: Option<&str>,
) -> Result<(usize, usize), RespondError> {
    let reserve = note::reserve(gate, hint) + note::removed_cost(gate, removed);
    let floor = reserve + MIN_PAGE_TOKENS;
    if gate.limit() < floor {
        return Err(RespondError::Budget(format!(
            "a budget of {} tokens is too small to page this response: a page needs at least \
             {floor}, its note included",
            gate.limit()
        )));
    }
    Ok((reserve, gate.limit() - reserve))
}

/// One page's text before it is numbered: what it continues, what it is, and its real
/// token count when the cutter already knows it.
struct Cut {
    text: String,
    continues: Option<String>,
    kind: PageKind,
    tokens: Option<usize>,
}

impl Cut {
    /// Whether the page ends inside something the next page goes on with: an item or a
    /// string it continues, or (plain text) a line.
    fn ends_inside(&self, next: &Cut) -> bool {
        match self.kind {
            PageKind::Value => next.continues.is_some(),
            PageKind::Text => !self.text.ends_with('\n'),
            PageKind::Input | PageKind::Packed => false,
        }
    }
}

/// One request, its level and parameters resolved.
struct Run<'r, 'a> {
    req: &'r Request<'a>,
    /// The input text, when the input was text.
    text: Option<&'a str>,
    /// The count of `text` ([`InputCount`]).
    input_tokens: &'r dyn Fn() -> usize,
    level: usize,
    explicit: bool,
    params: Params,
    /// Around the value, when it was read out of text.
    frame: Option<Frame<'a>>,
    /// What every page's record warns of about the input (repeated keys).
    warnings: Vec<String>,
    /// What the parse did of the ops at `level` ([`early`]), until the value is shaped.
    early: RefCell<Option<(early::Plan, Omitted)>>,
    /// How long parsing took, and shaping and rendering so far.
    stages: &'r Cell<Stages>,
}

/// Whether a response at `level` may be lowered to fit its budget: only when the caller did
/// not name the level, and only to a lower level whose text differs (without one, no copy
/// of the value is kept for it, and the parser may do ops as it reads).
fn lowerable(policy: &Policy, level: usize, explicit: bool, budgeted: bool) -> bool {
    !explicit && budgeted && (0..level).any(|l| !policy.levels_alike(l, level))
}

/// How a request shapes at `level`.
fn shape_options<'a>(req: &Request<'a>, params: &Params, level: usize) -> ShapeOptions<'a> {
    ShapeOptions {
        level,
        params: params.clone(),
        tokenizer: req.tokenizer,
        track_paths: false,
        op_limit: None,
        notes: req.omitted_notes,
        count_matches: false,
    }
}

/// The budget's count of `text`, whose real count is `real`; 0 without a budget.
fn gate_count(gate: Option<Gate>, text: &str, real: usize) -> usize {
    gate.map_or(0, |g| g.count_known(text, real))
}

/// Whether rendering `r` fits in `room` tokens, with the line of its note saying what the
/// policy removed (part of the note, in the budget).
fn fits(gate: Option<Gate>, r: &Rendering, room: usize) -> bool {
    let removed = gate.map_or(0, |g| {
        note::removed_cost(&g, note::removed_line(&r.shaped.manifest))
    });
    gate_count(gate, &r.text, r.tokens) + removed <= room
}

/// The value shaped at one level and rendered, with its real token count.
struct Rendering {
    level: usize,
    shaped: Shaped,
    text: String,
    tokens: usize,
}

impl<'a> Run<'_, 'a> {
    fn tok(&self) -> &dyn Tokenizer {
        self.req.tokenizer
    }

    fn policy(&self) -> &Policy {
        self.req.policy
    }

    fn level_name(&self, level: usize) -> String {
        self.policy().levels()[level].clone()
    }

    fn render_at(&self, value: Value, level: usize) -> Rendering {
        let shaping = Instant::now();
        let opts = shape_options(self.req, &self.params, level);
        let shaped = match self.early.take() {
            // Only the value parsed for it, at the level planned.
            // (`early` is only set when the value was parsed from `self.text`.)
            Some((plan, omitted)) if level == self.level => {
                let text = self.text.unwrap_or_default();
                early::shape_parsed(text, value, self.policy(), &opts, &plan, omitted)
            }
            _ => shape(value, self.policy(), &opts),
        };
        let rendering = Instant::now();
        let counted = self.counted();
        let (text, tokens) = if counted {
            render_counted(&shaped.value, self.req.format, self.tok())
        } else if self.req.format == Format::Json {
            // Minified JSON is at most about as long as the input text: one buffer of that
            // size, instead of a string that grows by doubling (on a large payload the copies
            // and fresh pages cost more than writing the JSON).
            let mut out = String::with_capacity(self.text.map_or(0, str::len));
            json::write_compact(&shaped.value, &mut out);
            (out, 0)
        } else {
            (
                crate::encode::render(&shaped.value, self.req.format, self.tok()),
                0,
            )
        };
        let (text, tokens) = match self.frame {
            Some(f) => {
                let framed = f.wrap(&text);
                let tokens = if counted {
                    self.tok().count(&framed)
                } else {
                    0
                };
                (framed, tokens)
            }
            None => (text, tokens),
        };
        let mut stages = self.stages.get();
        stages.shape += rendering - shaping;
        stages.render += rendering.elapsed();
        self.stages.set(stages);
        Rendering {
            level,
            shaped,
            text,
            tokens,
        }
    }

    /// Tokens of the input as given (its text, or the value as minified JSON).
    fn tokens_before(&self, value: &Value) -> usize {
        match self.text {
            Some(_) => (self.input_tokens)(),
            None => self.tok().count(&json::to_compact(value)),
        }
    }

    fn shaped(self, value: Value) -> Result<Response, RespondError> {
        let req = self.req;
        let (gate, limit) = self.gate();
        let lowerable = lowerable(self.policy(), self.level, self.explicit, gate.is_some());
        let want_before = self.wants_before();
        let is_full = self.policy().levels()[self.level] == FULL;

        // The input text itself, at `full`, for a transparent door.
        if req.keep_input_text
            && is_full
            && let Some(text) = self.text
        {
            let real = (self.input_tokens)();
            if gate_count(gate, text, real) <= limit {
                return Ok(self.input_page(text, real, value));
            }
        }

        // The input's count runs on another core while this one shapes and renders: the
        // input text's since the request came in ([`InputCount`]); a value given as such is
        // counted as minified JSON from here.
        let value_text = (want_before && self.text.is_none()).then(|| json::to_compact(&value));
        let (value_for_lower, to_shape) = if lowerable {
            (Some(value.clone()), value)
        } else {
            (None, value)
        };
        let (before, first) = std::thread::scope(|scope| {
            let tok = self.tok();
            let value_before = value_text
                .as_deref()
                .map(|t| scope.spawn(move || tok.count(t)));
            let first = self.render_at(to_shape, self.level);
            let before = match value_before {
                Some(h) => Some(h.join().expect("counting does not panic")),
                None => want_before.then(self.input_tokens),
            };
            (before, first)
        });

        if let Some((text, before)) = self.kept_input(first.tokens, before, gate, limit) {
            return Ok(self.input_page(text, before, first.shaped.value));
        }
        if fits(gate, &first, limit) {
            return Ok(self.single(first, before, None));
        }
        if let (Some(value), Some(g)) = (value_for_lower, gate) {
            let room = limit.saturating_sub(note::lowered_reserve(
                &g,
                &req.hint,
                self.policy().levels(),
                limit,
            ));
            // A level alike the one asked gives the same text: it cannot fit either.
            let lower_levels = (0..self.level)
                .rev()
                .filter(|&l| !self.policy().levels_alike(l, self.level));
            for lower in lower_levels {
                let r = self.render_at(value.clone(), lower);
                if fits(gate, &r, room) {
                    let asked = self.level_name(self.level);
                    let note =
                        note::lowered_note(&req.hint, &self.level_name(lower), &asked, limit);
                    return Ok(self.single(r, before, Some((asked, note))));
                }
            }
        }
        let g = gate.expect("only a budget can be exceeded");
        self.paged(first, before, &g)
    }

    /// The text [`json::compact_omitting`] wrote, following `plan` (shaped with `opts`), as
    /// the one page; `None` when it is over the budget (the value is then built and paged).
    fn streamed(
        &self,
        streamed: json::Streamed,
        plan: &early::Plan,
        opts: &ShapeOptions,
    ) -> Option<Response> {
        let json::Streamed {
            text,
            omitted,
            selectors_hit,
        } = streamed;
        // The parser did the ops, or the stream did list ops: the walk records what the
        // parser left out, and the selectors the stream reached are noted.
        let mut shaped =
            crate::shape::shape_planned(Value::Null, self.policy(), opts, Some((plan, omitted)));
        for s in selectors_hit {
            self.policy()
                .selectors
                .note_selected(&mut shaped.matches, s);
        }
        let tokens = if self.counted() {
            self.tok().count(&text)
        } else {
            0
        };
        let (gate, limit) = self.gate();
        let before = self.wants_before().then(self.input_tokens);
        if let Some((input, before)) = self.kept_input(tokens, before, gate, limit) {
            return Some(Response {
                shaped: None,
                ..self.input_page(input, before, Value::Null)
            });
        }
        let rendering = Rendering {
            level: self.level,
            shaped,
            text,
            tokens,
        };
        fits(gate, &rendering, limit).then(|| Response {
            shaped: None,
            ..self.single(rendering, before, None)
        })
    }

    /// The budget's gate (with none, `None`) and its limit (with none, unbounded).
    fn gate(&self) -> (Option<Gate<'a>>, usize) {
        let budget = self.req.budget;
        (
            budget.map(|b| Gate::new(self.req.tokenizer, b)),
            budget.map_or(usize::MAX, |b| b.tokens),
        )
    }

    /// Whether renderings are counted: for the record, or for a budget.
    fn counted(&self) -> bool {
        self.req.measure || self.req.budget.is_some()
    }

    /// Whether the input's count is wanted: for the record, or to tell whether shaping made
    /// anything cheaper ([`Run::kept_input`]).
    fn wants_before(&self) -> bool {
        self.req.measure || self.req.keep_input_text
    }

    /// The input text and its count (`before`), when a transparent door keeps it: shaping
    /// made nothing cheaper (the rendering's `tokens` are not fewer) and it fits the budget.
    fn kept_input(
        &self,
        tokens: usize,
        before: Option<usize>,
        gate: Option<Gate>,
        limit: usize,
    ) -> Option<(&'a str, usize)> {
        let (text, before) = (self.text?, before?);
        (self.req.keep_input_text && tokens >= before && gate_count(gate, text, before) <= limit)
            .then_some((text, before))
    }

    /// The whole rendering as the one page; `lowered`: the level asked and the note.
    fn single(
        &self,
        r: Rendering,
        before: Option<usize>,
        lowered: Option<(String, String)>,
    ) -> Response {
        let counted = self.counted();
        let mut record = self.record(r.level, before, &r.shaped.manifest);
        record.warnings.extend(self.shaped_warnings(&r));
        let (lowered_from, note) = lowered.unzip();
        let note = note::join(note::removed_line(&r.shaped.manifest), note);
        let note_tokens = note.as_deref().map_or(0, |n| self.tok().count(n));
        record.tokens_after = counted.then_some(r.tokens);
        record.note_tokens = counted.then_some(note_tokens);
        record.lowered_from = lowered_from;
        Response {
            page: Page {
                text: r.text,
                note,
                record,
            },
            rest: Vec::new(),
            shaped: Some(r.shaped),
            stages: Stages::default(),
        }
    }

    /// The input text unchanged as the one page.
    fn input_page(&self, text: &str, tokens: usize, value: Value) -> Response {
        let shaped = Shaped {
            value,
            manifest: Default::default(),
            removed: Vec::new(),
            matches: Default::default(),
        };
        let mut record = self.record(self.level, Some(tokens), &shaped.manifest);
        record.kind = PageKind::Input;
        record.embedded = None;
        record.tokens_after = Some(tokens);
        record.note_tokens = Some(0);
        Response {
            page: Page {
                text: text.to_owned(),
                note: None,
                record,
            },
            rest: Vec::new(),
            shaped: Some(shaped),
            stages: Stages::default(),
        }
    }

    /// The shaped value at the level asked, cut into pages.
    fn paged(
        &self,
        r: Rendering,
        before: Option<usize>,
        gate: &Gate,
    ) -> Result<Response, RespondError> {
        let removed = note::removed_line(&r.shaped.manifest);
        let (reserve, room) = page_room(gate, &self.req.hint, removed)?;
        let mut template = self.record(r.level, before, &r.shaped.manifest);
        template.warnings.extend(self.shaped_warnings(&r));
        let cuts: Vec<Cut> = match self.value_cuts(&r.shaped.value, gate, room) {
            Ok(cuts) => cuts,
            Err(why) => {
                template.warnings.push(format!(
                    "{why}: the pages are the text cut in pieces, and do not decode alone"
                ));
                text_cuts(cut::cut_text(&r.text, gate, room))
            }
        };
        // A value given as such was moved into shaping: its shaped form stands for it in
        // the check (the pages are a function of the shaped value).
        let check = self.check(|| json::to_compact(&r.shaped.value), reserve);
        let pages = self.number_pages(cuts, template, check, removed)?;
        self.pick(pages, check, Some(r.shaped))
    }

    /// The value's pages, each within `room` by `gate`, with the frame around each when
    /// the value was read out of text; why not, when a page cannot hold a part of it.
    fn value_cuts(&self, value: &Value, gate: &Gate, room: usize) -> Result<Vec<Cut>, String> {
        let (format, tok) = (self.req.format, self.tok());
        let cut = |(p, tokens): (cut::ValuePage, Option<usize>)| Cut {
            text: p.text,
            continues: p.continues,
            kind: PageKind::Value,
            tokens,
        };
        Ok(match self.frame {
            None => cut::cut_value(value, format, tok, gate, room)
                .ok_or(frame::TOO_BIG)?
                .into_iter()
                .map(|p| cut((p, None)))
                .collect(),
            Some(f) => f
                .cut(value, format, tok, gate, room)?
                .into_iter()
                .map(|(p, tokens)| cut((p, Some(tokens))))
                .collect(),
        })
    }

    /// What the shaping of `r` warns of, besides the input's own warnings: the selectors of
    /// the ops that ran and matched nothing (a policy written for another payload, or a typo
    /// in a path, is said, not silently a no-op), then what the format loses.
    fn shaped_warnings(&self, r: &Rendering) -> Vec<String> {
        let mut out = self.policy().unmatched_warnings(&r.shaped.matches, r.level);
        out.extend(self.value_warnings(&r.shaped.value));
        out
    }

    /// The record every page of this response starts from.
    fn record(&self, level: usize, before: Option<usize>, manifest: &Manifest) -> Record {
        Record {
            tokenizer: self.tok().name().to_owned(),
            format: self.req.format.name(),
            level: self.level_name(level),
            lowered_from: None,
            tokens_before: before,
            tokens_after: None,
            note_tokens: None,
            page: 1,
            pages: 1,
            next_cursor: None,
            continues: None,
            kind: PageKind::Value,
            embedded: self.frame.map(|f| f.kind.as_str()),
            omitted: manifest
                .totals()
                .into_iter()
                .map(|(k, n)| (k.as_str(), n))
                .collect(),
            warnings: self.warnings.clone(),
        }
    }

    /// What the format loses of `value`, said rather than done silently: `toon` writes a
    /// number beyond a double's range as JavaScript does (`null`, or `0`). (`auto` never
    /// loses anything: it does not choose TOON then.)
    fn value_warnings(&self, value: &Value) -> Vec<String> {
        if self.req.format != Format::Toon {
            return Vec::new();
        }
        let found = crate::encode::toon::inexact_numbers(value);
        crate::report::listed(&found, "numbers toon cannot carry exactly")
    }

    /// The cursor check of this input with these settings. `reserve` stands for the notes'
    /// cost, which decides where pages end.
    fn check(&self, value_text: impl FnOnce() -> String, reserve: usize) -> u64 {
        let req = self.req;
        let owned;
        let input: &str = match self.text {
            Some(t) => t,
            None => {
                owned = value_text();
                &owned
            }
        };
        // Every setting in a spelling of our own (no `Debug` text, which may change between
        // Rust versions), so a cursor stays valid across processes and machines.
        let budget = req.budget.map_or_else(
            || "none".to_owned(),
            |b| format!("{}/{}", b.tokens, b.chars4),
        );
        let omitted = match req.omitted_notes {
            None => "policy",
            Some(true) => "on",
            Some(false) => "off",
        };
        let settings = format!(
            "{}\u{1}{}\u{1}{}\u{1}{}\u{1}{}\u{1}{}\u{1}{}\u{1}{}\u{1}{:016x}",
            self.level_name(self.level),
            self.params.stable_text(),
            req.format.name(),
            req.tokenizer.name(),
            budget,
            omitted,
            reserve,
            self.explicit,
            req.policy.fingerprint(),
        );
        cursor::check([input.as_bytes(), settings.as_bytes()])
    }

    /// Pages with their notes, cursors and records. A response of one page has no page
    /// note; `removed` ([`note::removed_line`]) opens every page's note.
    fn number_pages(
        &self,
        cuts: Vec<Cut>,
        template: Record,
        check: u64,
        removed: Option<&str>,
    ) -> Result<Vec<Page>, RespondError> {
        let n = cuts.len();
        if n > cursor::MAX_PAGES {
            return Err(RespondError::Budget(format!(
                "{n} pages: more than the {} a cursor can count; raise the budget",
                cursor::MAX_PAGES
            )));
        }
        let ends_inside: Vec<bool> = cuts
            .windows(2)
            .map(|w| w[0].ends_inside(&w[1]))
            .chain([false])
            .collect();
        Ok(cuts
            .into_iter()
            .enumerate()
            .map(|(i, cut)| {
                let next = (i + 1 < n).then(|| {
                    Cursor {
                        check,
                        page: (i + 2) as u16,
                    }
                    .encode()
                });
                let page_note = (n > 1).then(|| {
                    note::page_note(&self.req.hint, i + 1, n, next.as_deref(), ends_inside[i])
                });
                let note = note::join(removed, page_note);
                let mut record = template.clone();
                record.tokens_after =
                    Some(cut.tokens.unwrap_or_else(|| self.tok().count(&cut.text)));
                record.note_tokens = Some(note.as_deref().map_or(0, |t| self.tok().count(t)));
                record.page = i + 1;
                record.pages = n;
                record.next_cursor = next;
                record.continues = cut.continues;
                record.kind = cut.kind;
                Page {
                    text: cut.text,
                    note,
                    record,
                }
            })
            .collect())
    }

    /// The page the request's cursor names (page 1 without one), and the pages after it.
    fn pick(
        &self,
        mut pages: Vec<Page>,
        check: u64,
        shaped: Option<Shaped>,
    ) -> Result<Response, RespondError> {
        let at = match self.req.cursor {
            None => 0,
            Some(c) => cursor_page(c, check, pages.len())? - 1,
        };
        let rest = pages.split_off(at + 1);
        let page = pages.pop().expect("at least one page");
        Ok(Response {
            page,
            rest,
            shaped,
            stages: Stages::default(),
        })
    }

    /// Search results through `pack`: pages of packed text under the budget.
    fn packed(
        self,
        value: &Value,
        options: &crate::schema::pack::PackOptions,
    ) -> Result<Response, RespondError> {
        let req = self.req;
        let list = chunks::from_response(value, options)?;
        let level = self.level_name(self.level);
        let (gate, _) = self.gate();
        let room = match &gate {
            Some(g) => page_room(g, &req.hint, None)?.1,
            None => 1 << 40,
        };
        let before = req.measure.then(|| self.tokens_before(value));
        let mut cache = PreviewCache::new(1024);
        // The pack counts real tokens; a chars/4 limit that binds is met by packing again
        // under a proportionally smaller budget.
        let mut pack_budget = room;
        let (packs, settings) = loop {
            let settings = PackSettings {
                options,
                budget: pack_budget,
                tokenizer: req.tokenizer,
                max_tier: Tier::cap_for_level(&level),
                level: &level,
                total: chunks::total(value, options),
                // Every door's page note says how to go on, in its own words.
                cursor_in_text: false,
            };
            let mut packs = vec![pack::pack(&list, &settings, &mut cache)];
            while let Some(next) = packs.last().and_then(|p| p.next_cursor.clone()) {
                packs.push(pack::pack_from_cursor(&list, &settings, &mut cache, &next)?);
            }
            if req.pack_data {
                // Each page as data: its text is the JSON, counted as such.
                for p in &mut packs {
                    p.text = p.data(&level).to_string();
                    p.tokens = req.tokenizer.count(&p.text);
                }
            }
            let worst = gate.map_or(0, |g| {
                packs
                    .iter()
                    .map(|p| g.count_known(&p.text, p.tokens))
                    .max()
                    .unwrap_or(0)
            });
            if worst <= room || pack_budget <= MIN_PAGE_TOKENS {
                break (packs, settings);
            }
            pack_budget = (pack_budget * room / worst).min(pack_budget - 1);
        };
        // The pack names its next page in its own text, with the check of its chunks and
        // settings: the pages are numbered with that check, so both cursors are one.
        let check = pack::cursor_check(&list, &settings);
        let cuts = packs
            .into_iter()
            .map(|p| Cut {
                text: p.text,
                continues: None,
                kind: PageKind::Packed,
                tokens: Some(p.tokens),
            })
            .collect();
        let mut template = self.record(self.level, before, &Manifest::default());
        template.format = if req.pack_data { "json" } else { "pack" };
        let pages = self.number_pages(cuts, template, check, None)?;
        self.pick(pages, check, None)
    }
}

/// Plain-text pieces as page cuts.
fn text_cuts(pages: Vec<String>) -> Vec<Cut> {
    pages
        .into_iter()
        .map(|text| Cut {
            text,
            continues: None,
            kind: PageKind::Text,
            tokens: None,
        })
        .collect()
}

/// The page number a cursor names, checked against this input and settings.
fn cursor_page(text: &str, check: u64, pages: usize) -> Result<usize, RespondError> {
    let c = Cursor::decode(text)
        .ok_or_else(|| RespondError::Cursor(format!("`{text}` is not a pare cursor")))?;
    if c.check != check {
        return Err(RespondError::Cursor(format!(
            "cursor `{text}` does not fit this input: a cursor is good for the same input, \
             policy, level, parameters, format, tokenizer and budget it came from"
        )));
    }
    let page = usize::from(c.page);
    if page < 2 || page > pages {
        return Err(RespondError::Cursor(format!(
            "cursor `{text}` names page {page}, but there are {pages}"
        )));
    }
    Ok(page)
}

/// Plain text (not JSON): the text itself when it fits, else pieces cut at line ends.
fn text_response(
    req: &Request,
    text: &str,
    level: usize,
    input_tokens: &dyn Fn() -> usize,
) -> Result<Response, RespondError> {
    let run = Run {
        req,
        text: Some(text),
        input_tokens,
        level,
        explicit: true,
        params: Params::default(),
        frame: None,
        warnings: Vec::new(),
        early: Default::default(),
        stages: &Cell::new(Stages::default()),
    };
    let counted = run.counted();
    let tokens = counted.then(input_tokens);
    let mut record = run.record(level, tokens, &Manifest::default());
    record.format = "text";
    let (gate, _) = run.gate();
    let over = match (gate, tokens) {
        (Some(g), Some(t)) => g.count_known(text, t) > g.limit(),
        _ => false,
    };
    let Some(g) = gate.filter(|_| over) else {
        record.kind = PageKind::Input;
        record.tokens_after = tokens;
        record.note_tokens = counted.then_some(0);
        return Ok(Response {
            page: Page {
                text: text.to_owned(),
                note: None,
                record,
            },
            rest: Vec::new(),
            shaped: None,
            stages: Stages::default(),
        });
    };
    let (reserve, room) = page_room(&g, &req.hint, None)?;
    let cuts = text_cuts(cut::cut_text(text, &g, room));
    let check = run.check(String::new, reserve);
    let pages = run.number_pages(cuts, record, check, None)?;
    run.pick(pages, check, None)
}

#[cfg(test)]
mod tests;
