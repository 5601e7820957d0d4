//! A report of a run the stream can do, with no value built: each text it counts is
//! written by the stream from the input text, and the manifest's paths are the stream's.
//!
//! Why: [`super::measure`] parses the input, then shapes a copy of the tree once per op
//! prefix and renders each. For a policy whose every op the parser does ([`crate::early`]:
//! `$..name` drops and plain prunes, as most entity policies are), the plain run writes its
//! output as it reads, and a report that built trees cost twice the run
//! (`bench/python_speed.py`). Here the minified input, each op prefix's output and the
//! output are each one pass of the stream over the text; the counts are those of the same
//! texts, so the report is the same, number for number (the tests compare the two).
//!
//! ```
//! use pare::{encode::Format, json, policy::Policy, report, shape::ShapeOptions};
//! let p = Policy::parse("[[ops]]\nop = \"drop\"\npaths = [\"$..at\"]\n[[ops]]\nop = \"prune\"\n").unwrap();
//! let text = r#"{"a": {"at": 1, "b": null}, "c": [{"at": 2}]}"#;
//! let opts = ShapeOptions { track_paths: true, ..ShapeOptions::new(&p) };
//! let streamed = report::measure_text(text, &p, &opts, true).unwrap();
//! let walked = report::measure(&json::parse(text).unwrap(), &p, &opts, Format::Json, true, true);
//! assert_eq!(streamed.text, "{\"c\":[{}]}\n");
//! assert_eq!(
//!     (streamed.tokens_before, &streamed.ops, &streamed.manifest),
//!     (walked.tokens_before, &walked.ops, &walked.manifest)
//! );
//! ```

use super::Report;
use crate::early::{self, Plan};
use crate::encode::Format;
use crate::json::{self, omit::Omit, omit::Omitted};
use crate::manifest::Manifest;
use crate::policy::Policy;
use crate::shape::ShapeOptions;
use crate::tokens::pool::CountPool;
use std::sync::Arc;

/// [`super::measure`] of `text` (JSON out, with every per-op saving), when the stream can
/// write every text it counts: `None` when it cannot (an op the parser does not do, a text
/// that is not JSON or repeats a key), and the caller measures the parsed value instead.
/// `newline` as there. The counts run on this thread and the pool's helpers ([`CountPool`]).
pub fn measure_text(
    text: &str,
    policy: &Policy,
    opts: &ShapeOptions,
    newline: bool,
) -> Option<Report> {
    let pool = CountPool::new(opts.tokenizer);
    std::thread::scope(|scope| {
        let _closing = pool.helpers(scope, text.len());
        measure_text_in(text, policy, opts, newline, &pool)
    })
}

/// [`measure_text`], counting in `pool` (beside the texts a caller counts there, such as
/// the input as given).
pub fn measure_text_in(
    text: &str,
    policy: &Policy,
    opts: &ShapeOptions,
    newline: bool,
    pool: &CountPool,
) -> Option<Report> {
    measure_text_sharing(text, policy, opts, newline, pool).map(|(report, _)| report)
}

/// The output a streamed report wrote for its whole level, for a response of the same input
/// at the same level to take ([`crate::respond::Request::shared_output`]) instead of writing it
/// again: the stream is one of the four a `pare compact --report` of a policy the parser
/// does would run (the page's, and the report's minified input, op prefix and output).
///
/// The response takes it only when its own plan is equal to this one's (every field of
/// what it leaves out) and its input is the very text this was written from; else it
/// writes its own, as without one.
pub struct SharedOutput {
    /// The input's address and length: the same text, not an equal one.
    input: (usize, usize),
    /// The plan it was written by.
    omit: Omit,
    text: String,
    omitted: Omitted,
}

impl SharedOutput {
    /// The text and what it left out, when `input` is the text this was written from and
    /// `omit` is the plan it was written by.
    pub(crate) fn take_for(&self, input: &str, omit: &Omit) -> Option<json::Streamed> {
        let same = self.input == (input.as_ptr() as usize, input.len()) && self.omit == *omit;
        same.then(|| json::Streamed {
            text: self.text.clone(),
            omitted: self.omitted.clone(),
            selectors_hit: Vec::new(),
        })
    }
}

/// [`measure_text_in`], and the output it wrote for the whole level ([`SharedOutput`]), when
/// the level has an op.
pub fn measure_text_sharing(
    text: &str,
    policy: &Policy,
    opts: &ShapeOptions,
    newline: bool,
    pool: &CountPool,
) -> Option<(Report, Option<SharedOutput>)> {
    let names = policy.ops_at(opts.level);
    let untracked = |op_limit| super::prefix_options(opts, op_limit);
    // Every prefix's ops, and the whole level's, done by the parser.
    let plan_of =
        |k: usize| early::plan(policy, &untracked(Some(k))).filter(|p| p.done.iter().all(|&d| d));
    let prefixes: Vec<Plan> = (1..names.len()).map(plan_of).collect::<Option<_>>()?;
    let whole = match names.len() {
        0 => None,
        n => Some(plan_of(n)?),
    };
    let nothing = Omit::new(Vec::new(), Vec::new(), Default::default(), 0)?;
    let stream = |omit: &Omit| {
        let streamed = json::compact_omitting(text, omit, None, json::Known::NOTHING)?;
        Some(super::ended(streamed.text, newline))
    };
    // Each text is counted (in parts, on whichever thread is free) as soon as it is written.
    // With an op, the output's stream below reads the grammar (and stops the report on
    // a text it does not take), so the minified input needs no second reading of it.
    let minified = Arc::new(match &whole {
        Some(_) => super::ended(json::minified(text)?, newline),
        None => stream(&nothing)?,
    });
    let before = pool.add(Arc::clone(&minified));
    let (text_after, manifest, matches, shared) = match &whole {
        None => {
            let shaped = crate::shape::shape(crate::value::Value::Null, policy, &untracked(None));
            (
                String::clone(&minified),
                Manifest::default(),
                shaped.matches,
                None,
            )
        }
        Some(plan) => {
            let (streamed, paths) = json::compact_noting_paths(text, &plan.omit)?;
            let shared = SharedOutput {
                input: (text.as_ptr() as usize, text.len()),
                omit: plan.omit.clone(),
                text: streamed.text.clone(),
                omitted: streamed.omitted.clone(),
            };
            let shaped = crate::shape::shape_planned(
                crate::value::Value::Null,
                policy,
                &untracked(None),
                Some((plan, streamed.omitted)),
            );
            let manifest = Manifest {
                entries: paths.entries(&names),
            };
            (
                super::ended(streamed.text, newline),
                manifest,
                shaped.matches,
                Some(shared),
            )
        }
    };
    let after = pool.add(text_after.clone());
    let mut tickets = Vec::with_capacity(names.len());
    for plan in &prefixes {
        tickets.push(pool.add(stream(&plan.omit)?));
    }
    tickets.push(after);
    let tokens_before = pool.count(before);
    let counts: Vec<usize> = tickets.iter().map(|&t| pool.count(t)).collect();
    let tokens_after = counts[counts.len() - 1];
    let ops = super::op_savings(&names, tokens_before, counts);
    let report = Report {
        tokenizer: opts.tokenizer.name().to_owned(),
        level: policy.levels()[opts.level].clone(),
        format: Format::Json,
        tokens_before,
        tokens_minified: tokens_before,
        tokens_input: None,
        tokens_after,
        ops,
        manifest,
        text: text_after,
        matches,
        packed: false,
    };
    Some((report, shared))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::respond::{Input, Request, respond};

    fn page(text: &str, policy: &Policy, shared: Option<&SharedOutput>) -> String {
        let req = Request {
            want_value: false,
            shared_output: shared,
            ..Request::new(Input::Json(text), policy)
        };
        respond(req).unwrap().page.text
    }

    /// The page takes a report's output only when it would have written that very text:
    /// from the same input text (not an equal copy) by the same plan. A sentinel stands in
    /// for the output, so a page that took it shows it.
    #[test]
    fn a_page_takes_a_reports_output_only_for_its_own_input_and_plan() {
        let drops = |paths: &str| {
            Policy::parse(&format!("[[ops]]\nop = \"drop\"\npaths = [{paths}]\n")).unwrap()
        };
        let policy = drops("\"$..at\"");
        let text = r#"{"a": {"at": 1, "b": null}, "c": [{"at": 2}]}"#.to_owned();
        let opts = ShapeOptions::new(&policy);
        let pool = CountPool::new(opts.tokenizer);
        let (report, shared) = measure_text_sharing(&text, &policy, &opts, true, &pool).unwrap();
        let mut shared = shared.expect("the level has an op");
        assert_eq!(report.text, "{\"a\":{\"b\":null},\"c\":[{}]}\n");
        assert_eq!(shared.text, "{\"a\":{\"b\":null},\"c\":[{}]}");
        assert_eq!(page(&text, &policy, Some(&shared)), shared.text);
        shared.text = "sentinel".into();
        assert_eq!(page(&text, &policy, Some(&shared)), "sentinel");
        // An equal text elsewhere, or another plan: the page writes its own.
        let copy = text.clone();
        assert_eq!(page(&copy, &policy, Some(&shared)), report.text.trim_end());
        let other = drops("\"$..b\"");
        assert_eq!(
            page(&text, &other, Some(&shared)),
            "{\"a\":{\"at\":1},\"c\":[{\"at\":2}]}"
        );
    }
}
