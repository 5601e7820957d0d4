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

mod incremental;
mod input_count;
mod packed;
mod pages;
mod run;
mod written;

pub use incremental::{Finished, Incremental, Pushed};
use input_count::InputCount;
use pages::text_response;
pub use written::{Mark, Omitting, respond_omitted};

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
    let (asked, params) = resolve(&req)?;
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

/// The level a request shapes at (its index, and whether the caller named it) and its
/// parameters, or why it is refused.
fn resolve(req: &Request) -> Result<((usize, bool), Params), RespondError> {
    let policy = req.policy;
    let asked = req.level_asked()?;
    let params = policy.params(req.params)?;
    if req.fields.is_some() && policy.options().pack.is_some() {
        return Err(RespondError::Fields(
            "fields: this policy packs search results ([pack]), and fields do not apply to \
             packed results; ask without fields"
                .to_owned(),
        ));
    }
    Ok((asked, params))
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
/// does ([`crate::ops::streamed_lists`]), JSON out, and one page (a cursor names a later one; a text over
/// the budget is paged from the value). `None`: the value is built.
fn stream(
    req: &Request,
    plan: &early::Plan,
    (level, explicit): (usize, bool),
    params: &Params,
    input_tokens: &dyn Fn() -> usize,
) -> Option<Response> {
    if !streamable(req) {
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
        false => {
            let ops = walked.iter().map(|o| o.op.as_list());
            Some(crate::ops::streamed_lists::Lists::new(
                &policy.selectors,
                ops,
            )?)
        }
    };
    let streaming = Instant::now();
    let lists = lists.as_ref().map(|l| l as &dyn json::ListHooks);
    let known = match req.written_by_door {
        true => json::Known::WRITTEN_BY_DOOR,
        false => json::Known::NOTHING,
    };
    let shared = req.shared_output.filter(|_| lists.is_none());
    let streamed = match shared.and_then(|w| w.take_for(t, &plan.omit)) {
        Some(streamed) => streamed,
        None => json::compact_omitting(t, &plan.omit, lists, known)?,
    };
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

/// Whether the stream may write a request's response: no value wanted, JSON out, no cursor
/// (a later page is paged from the value) and no fields.
fn streamable(req: &Request) -> bool {
    !(req.want_value || req.format != Format::Json || req.cursor.is_some() || req.fields.is_some())
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
    opening_cost: usize,
) -> Result<(usize, usize), RespondError> {
    let reserve = note::reserve(gate, hint) + opening_cost;
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
        query: req.query,
    }
}

/// The budget's count of `text`, whose real count is `real`; 0 without a budget.
fn gate_count(gate: Option<Gate>, text: &str, real: usize) -> usize {
    gate.map_or(0, |g| g.count_known(text, real))
}

/// The value shaped at one level and rendered, with its real token count.
struct Rendering {
    level: usize,
    shaped: Shaped,
    text: String,
    tokens: usize,
    /// The caller's fields that selected nothing here ([`crate::project`]).
    unmatched_fields: Vec<String>,
}

#[cfg(test)]
mod tests;
