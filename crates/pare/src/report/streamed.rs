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
use crate::json::{self, omit::Omit};
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
        let _closing = pool.helpers(scope);
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
    let minified: Arc<str> = stream(&nothing)?.into();
    let before = pool.add(Arc::clone(&minified));
    let (text_after, manifest, matches) = match &whole {
        None => {
            let shaped = crate::shape::shape(crate::value::Value::Null, policy, &untracked(None));
            (minified.to_string(), Manifest::default(), shaped.matches)
        }
        Some(plan) => {
            let (streamed, paths) = json::compact_noting_paths(text, &plan.omit)?;
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
            )
        }
    };
    let after = pool.add(text_after.as_str().into());
    let mut tickets = Vec::with_capacity(names.len());
    for plan in &prefixes {
        tickets.push(pool.add(stream(&plan.omit)?.into()));
    }
    tickets.push(after);
    let tokens_before = pool.count(before);
    let counts: Vec<usize> = tickets.iter().map(|&t| pool.count(t)).collect();
    let tokens_after = counts[counts.len() - 1];
    let ops = super::op_savings(&names, tokens_before, counts);
    Some(Report {
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
    })
}
