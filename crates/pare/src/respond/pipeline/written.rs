//! A door that writes JSON from its own objects (the Python package's dicts) leaves out, as
//! it writes, what the stream would leave out of that text ([`Omitting`]), and the engine
//! takes the text as the stream's ([`respond_omitted`]).
//!
//! Why: for a request the stream does whole (`$..name` drops and a plain `prune`, or no op
//! at all; JSON out, no budget), the door wrote a text only for the stream to read it again
//! and leave out most of it. On a 1 MB dict that second pass was two thirds of
//! `Policy.shape`'s time.
//!
//! The decisions stay the engine's: the door asks [`Omitting::mark`] of each member's key and
//! [`Omitting::settle`] of each member once its value is written, and cuts out the members
//! that do not stay. The counts are the stream's, so the record is the same. A door keeps to
//! the stream's rules:
//! - a key is the decoded text of an exact string, and no object repeats one;
//! - a value is written as compact JSON, as [`crate::json::write_compact`] writes it;
//! - inside a member its key drops, nothing is left out (the stream looks no further).
//!
//! ```
//! use pare::respond::{Input, Request, Omitting, respond, respond_omitted};
//! use pare::Policy;
//! let policy = Policy::parse("[[ops]]\nop = \"drop\"\npaths = [\"$..at\"]\n[[ops]]\nop = \"prune\"\n").unwrap();
//! let req = Request { measure: false, want_value: false, ..Request::new(Input::Json(""), &policy) };
//! let mut omitting = Omitting::plan(&req).unwrap().expect("the stream does this request whole");
//! // {"a":{"at":1,"b":null},"c":[{"at":2}]}, written by the door:
//! let mut text = String::from("{");
//! let (a, at, b) = (omitting.mark("a"), omitting.mark("at"), omitting.mark("b"));
//! assert!(a.keeps() && !at.keeps() && b.keeps());
//! assert!(!omitting.settle(at, "1", || "at"));
//! assert!(!omitting.settle(b, "null", || "b"));
//! assert!(!omitting.settle(a, "{}", || "a"));
//! assert!(!omitting.settle(at, "2", || "at"));
//! text.push_str(r#""c":[{}]}"#);
//! let door = respond_omitted(&req, omitting, text).unwrap();
//! let stream = respond(Request { input: Input::Json(r#"{"a":{"at":1,"b":null},"c":[{"at":2}]}"#), ..req }).unwrap();
//! assert_eq!(door.page, stream.page);
//! ```

use std::cell::{Cell, RefCell};

use super::{Params, Request, RespondError, Response, Run, Stages, lowerable, resolve};
use super::{shape_options, streamable};
use crate::early;
use crate::json::omit::{KEEP, Omitted};
use crate::json::{Known, Streamed, compact_omitting};

/// What a request leaves out of a door's text as the door writes it: see the module docs.
#[derive(Debug)]
pub struct Omitting {
    plan: early::Plan,
    omitted: Omitted,
    level: (usize, bool),
    params: Params,
}

/// What a member's key decides ([`Omitting::mark`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark(u16);

/// A member its key keeps.
impl Default for Mark {
    fn default() -> Mark {
        Mark(KEEP)
    }
}

impl Mark {
    /// Its key keeps the member (its value may still be pruned, [`Omitting::settle`]).
    pub fn keeps(self) -> bool {
        self.0 == KEEP
    }
}

impl Omitting {
    /// How to write `req`'s input for it, when the stream would do the request whole:
    /// no budget, cursor or fields, JSON out, no value wanted, nothing counted for the record
    /// (`measure` off), no input text kept, and every op of the level done as the text is
    /// read, by keys alone. `Ok(None)`: write the text whole and [`super::respond`] it.
    /// `req.input` is not read. A level or parameter the policy refuses is the error
    /// `respond` would give.
    pub fn plan(req: &Request) -> Result<Option<Omitting>, RespondError> {
        let ((level, explicit), params) = resolve(req)?;
        let simple = streamable(req)
            && req.budget.is_none()
            && !req.measure
            && !req.keep_input_text
            && !lowerable(req.policy, level, explicit, false);
        if !simple {
            return Ok(None);
        }
        let opts = shape_options(req, &params, level);
        let Some(plan) =
            early::plan(req.policy, &opts).or_else(|| early::nothing_to_do(req.policy, &opts))
        else {
            return Ok(None);
        };
        // Every op done as the text is read (none left for the walk or the list hooks: the
        // plan has a flag per op of the level), each decided by a member's key and value
        // alone.
        let ops_left = plan.done.contains(&false);
        if ops_left || plan.omit.scoped() || plan.omit.has_wheres() {
            return Ok(None);
        }
        let omitted = plan.omit.nothing_yet();
        Ok(Some(Omitting {
            plan,
            omitted,
            level: (level, explicit),
            params,
        }))
    }

    /// What the key of a member decides: `key` decoded.
    #[inline]
    pub fn mark(&self, key: &str) -> Mark {
        Mark(self.plan.omit.mark(key))
    }

    /// Whether a member stays, now that its value is written as `value` (compact JSON:
    /// what it holds already left out, unless `mark` drops the member). A member that goes
    /// is counted (`key`: its key, decoded, asked only then), and the door cuts it (and its
    /// comma) out.
    #[inline]
    pub fn settle<K: AsRef<str>>(
        &mut self,
        mark: Mark,
        value: &str,
        key: impl FnOnce() -> K,
    ) -> bool {
        self.plan
            .omit
            .settle_written(mark.0, value, key, &mut self.omitted)
    }

    /// A copy of the plan with nothing counted yet, for a thread that writes a stretch of
    /// the text; its counts come back by [`Omitting::join`] (only if its text is used).
    pub fn fork(&self) -> Omitting {
        Omitting {
            plan: self.plan.clone(),
            omitted: self.plan.omit.nothing_yet(),
            level: self.level,
            params: self.params.clone(),
        }
    }

    /// Count what a [`Omitting::fork`] of this left out.
    pub fn join(&mut self, fork: Omitting) {
        self.omitted.add(fork.omitted);
    }

    /// `text`, JSON the door has whole (a library's own JSON of one of its objects), with
    /// what the request leaves out left out (and counted) as the stream would leave it out
    /// of that stretch of the door's text. `None` (nothing counted) when it is not JSON, or
    /// an object in it repeats a key.
    pub fn leave_out(&mut self, text: &str) -> Option<String> {
        let streamed = compact_omitting(text, &self.plan.omit, None, Known::ONE_THREAD)?;
        self.omitted.add(streamed.omitted);
        Some(streamed.text)
    }
}

/// The response to `req` (as planned by [`Omitting::plan`] for it) whose text the door wrote
/// following `omitting`: what [`super::respond`] gives for the door's whole text. `None`
/// when the request is not the one planned for (the door then writes the text whole).
pub fn respond_omitted(req: &Request, omitting: Omitting, text: String) -> Option<Response> {
    let Omitting {
        plan,
        omitted,
        level,
        params,
    } = omitting;
    // The plan's checks, for what they rest on: no count of an input text is ever asked.
    if req.measure || req.keep_input_text || req.budget.is_some() || !streamable(req) {
        return None;
    }
    let opts = shape_options(req, &params, level.0);
    let stages = Cell::new(Stages::default());
    let run = Run {
        req,
        text: None,
        // Never asked: nothing is measured and no input text is kept (checked above).
        input_tokens: &|| 0,
        level: level.0,
        explicit: level.1,
        params: params.clone(),
        frame: None,
        warnings: Vec::new(),
        early: RefCell::new(None),
        stages: &stages,
    };
    let streamed = Streamed {
        text,
        omitted,
        selectors_hit: Vec::new(),
    };
    let response = run.streamed(streamed, &plan, &opts)?;
    Some(Response {
        stages: stages.get(),
        ..response
    })
}

#[cfg(test)]
mod tests;
