//! The report: tokens before and after, what each op saved, and what was removed.
//!
//! Tokens are counted with a real tokenizer on the final text, never estimated. "After" is
//! the output exactly as printed. A saving is always against some "before", and the report
//! names each one it gives, because they answer different questions:
//!
//! - **as the output** (`tokens_before`): the input rendered the same way as the output, so
//!   pretty-vs-minified whitespace or TOON-vs-JSON syntax is not counted as a saving — what
//!   the policy alone saved. Per-op savings are marginal in policy order against it: op k
//!   saved tokens(ops 1..k-1) − tokens(ops 1..k), so they add up to its saving exactly.
//! - **minified input** (`tokens_minified`): the input as minified JSON, the cheapest plain
//!   JSON of it — what the policy and the output format saved together. With `--format
//!   json` it is the same text as the first.
//! - **input as given** (`tokens_input`, when the caller knows the text): what a user who
//!   counts the file they passed in would compare against.
//!
//! ```
//! use pare::{json, policy::Policy, report::measure, shape::ShapeOptions, encode::Format};
//! let policy = Policy::builtin_default();
//! let input = json::parse(r#"{"a":1,"b":null}"#).unwrap();
//! let r = measure(&input, &policy, &ShapeOptions::new(&policy), Format::Json, true, false);
//! assert_eq!(r.tokens_after + r.saved() as usize, r.tokens_before);
//! ```

use serde::Serialize;

mod streamed;
pub use streamed::{SharedOutput, measure_text, measure_text_in, measure_text_sharing};

/// How many items of one kind a warning list names one by one; the rest are counted.
pub(crate) const LISTED: usize = 5;

/// Warnings for `items`: the first `LISTED` as they display, then `"N more {what}"` for the
/// rest, so a payload with thousands of repeated keys warns in six lines, not thousands.
/// Every door and command lists warnings this way.
pub fn listed<T: std::fmt::Display>(items: &[T], what: &str) -> Vec<String> {
    let mut out: Vec<String> = items.iter().take(LISTED).map(ToString::to_string).collect();
    if items.len() > LISTED {
        out.push(format!("{} more {what}", items.len() - LISTED));
    }
    out
}

/// [`listed`] for a list of which only the first [`LISTED`] were kept: `total` is how many
/// there were.
pub(crate) fn listed_counted<T: std::fmt::Display>(
    kept: &[T],
    total: usize,
    what: &str,
) -> Vec<String> {
    let mut out: Vec<String> = kept.iter().take(LISTED).map(ToString::to_string).collect();
    if total > out.len() {
        out.push(format!("{} more {what}", total - out.len()));
    }
    out
}

use crate::encode::{Format, render};
use crate::manifest::Manifest;
use crate::policy::Policy;
use crate::shape::{ShapeOptions, shape};
use crate::tokens::pool::{CountPool, HELP_FROM_BYTES, Ticket};
use crate::value::Value;

/// One op's marginal saving.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct OpSaving {
    /// The op's name, as the policy lists it.
    pub op: String,
    /// Tokens saved against the output of the ops before it; negative when it added tokens.
    pub saved: i64,
}

/// What a shaping run cost and saved.
#[derive(Debug, Clone)]
pub struct Report {
    /// Name of the tokenizer every count is by.
    pub tokenizer: String,
    /// Name of the policy level that ran.
    pub level: String,
    /// The output format (`tokens_before` renders the input in it too).
    pub format: Format,
    /// Tokens of the input rendered in the output format.
    pub tokens_before: usize,
    /// Tokens of the input as minified JSON (with the same trailing newline as the output).
    pub tokens_minified: usize,
    /// Tokens of the input text exactly as given, when the caller set it.
    pub tokens_input: Option<usize>,
    /// Tokens of the output as printed.
    pub tokens_after: usize,
    /// Each op's marginal saving, in policy order; empty unless asked for, and for a pack.
    pub ops: Vec<OpSaving>,
    /// What the ops removed; empty for a pack.
    pub manifest: Manifest,
    /// The shaped text exactly as counted.
    pub text: String,
    /// Which selectors matched ([`Policy::unmatched_warnings`]).
    pub matches: crate::query::selector::Seen,
    /// The output is packed search results (a `[pack]` policy), not the value in `format`:
    /// `tokens_after` and `text` are the pack's, and the report says `pack`.
    pub packed: bool,
}

impl Report {
    /// What the output is: the format's name, or `pack`.
    pub(crate) fn output_name(&self) -> &'static str {
        if self.packed {
            "pack"
        } else {
            self.format.name()
        }
    }

    /// This report for packed output: what was printed is the pack's `text`, so that is
    /// what it counts; no op ran on the way to it (a pack reads the response as it is).
    pub fn packed(self, text: String, tokens: usize) -> Report {
        Report {
            packed: true,
            tokens_after: tokens,
            text,
            ops: Vec::new(),
            manifest: Manifest::default(),
            ..self
        }
    }

    /// Tokens saved against `tokens_before`; negative when the output is longer.
    pub fn saved(&self) -> i64 {
        self.tokens_before as i64 - self.tokens_after as i64
    }
    /// Saved tokens as a percentage of the tokens before (0 when there were none).
    pub fn rate(&self) -> f64 {
        rate(self.tokens_before, self.tokens_after)
    }
    /// Tokens saved against the input as minified JSON.
    pub fn saved_vs_minified(&self) -> i64 {
        self.tokens_minified as i64 - self.tokens_after as i64
    }

    /// Each "before" the report states: (what it is, its tokens). The first is the one
    /// `saved`, `rate` and the per-op savings are against.
    fn baselines(&self) -> Vec<(String, usize)> {
        let format = self.format.name();
        let mut rows = Vec::new();
        if self.format == Format::Json {
            rows.push(("as json = minified input".to_owned(), self.tokens_before));
        } else {
            rows.push((format!("as {format}"), self.tokens_before));
            rows.push(("minified input".to_owned(), self.tokens_minified));
        }
        if let Some(t) = self.tokens_input {
            rows.push(("input as given".to_owned(), t));
        }
        rows
    }

    /// The report as one JSON object (keys in a fixed order).
    pub fn to_json(&self) -> serde_json::Value {
        let omitted: Vec<serde_json::Value> = self
            .manifest
            .entries
            .iter()
            .map(|e| {
                serde_json::json!({"op": e.op, "kind": e.kind.as_str(), "path": e.path, "count": e.count})
            })
            .collect();
        serde_json::json!({
            "tokenizer": self.tokenizer,
            "level": self.level,
            "format": self.output_name(),
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "saved": self.saved(),
            "rate": format!("{:.1}%", self.rate()),
            "tokens_minified": self.tokens_minified,
            "saved_vs_minified": self.saved_vs_minified(),
            "rate_vs_minified": format!("{:.1}%", rate(self.tokens_minified, self.tokens_after)),
            "tokens_input": self.tokens_input,
            "saved_vs_input": self.tokens_input.map(|t| t as i64 - self.tokens_after as i64),
            "rate_vs_input": self.tokens_input.map(|t| format!("{:.1}%", rate(t, self.tokens_after))),
            "ops": self.ops,
            "omitted": omitted,
        })
    }

    /// A short human-readable report.
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "pare: {} → {} tokens ({}), saved {} ({:.1}%), level {}, {}\n",
            self.tokens_before,
            self.tokens_after,
            self.tokenizer,
            self.saved(),
            self.rate(),
            self.level,
            self.output_name()
        );
        let rows = self.baselines();
        let width = rows
            .iter()
            .map(|(n, _)| n.chars().count())
            .max()
            .unwrap_or(0);
        for (name, before) in &rows {
            let label = format!("before ({name}):");
            out.push_str(&format!(
                "  {label:<w$} {before:>8} tokens, saved {:>8} ({:.1}%)\n",
                *before as i64 - self.tokens_after as i64,
                rate(*before, self.tokens_after),
                w = width + 10
            ));
        }
        if !self.ops.is_empty() {
            out.push_str(&format!(
                "  per op (against the input as {}):\n",
                self.format.name()
            ));
        }
        for op in &self.ops {
            out.push_str(&format!("  {:<10} saved {:>8}\n", op.op, op.saved));
        }
        if !self.manifest.is_empty() {
            out.push_str("  removed:\n");
            for e in &self.manifest.entries {
                out.push_str(&format!(
                    "    {:<9} {:>7} × {}  ({})\n",
                    e.kind.as_str(),
                    e.count,
                    e.path,
                    e.op
                ));
            }
        }
        out
    }
}

/// Saved tokens as a percentage of `before` (0 when there were none).
fn rate(before: usize, after: usize) -> f64 {
    if before == 0 {
        0.0
    } else {
        (before as f64 - after as f64) * 100.0 / before as f64
    }
}

/// Shape `input` and measure it. With `per_op`, the ops are re-run as prefixes to
/// attribute savings (one extra run per op but the last). The text ends with a newline
/// exactly when `newline` is set (the CLI prints one; an MCP result has none), and it is
/// counted as such. An input of some length is counted on helpers too ([`measure_in`]).
pub fn measure(
    input: &Value,
    policy: &Policy,
    opts: &ShapeOptions,
    format: Format,
    per_op: bool,
    newline: bool,
) -> Report {
    let pool = CountPool::new(opts.tokenizer);
    // The input's minified length, measured only as far as the helpers' threshold.
    let mut left = HELP_FROM_BYTES;
    at_least(input, &mut left);
    std::thread::scope(|scope| {
        let _closing = pool.helpers(scope, HELP_FROM_BYTES - left);
        measure_in(input, policy, opts, (format, per_op, newline), &pool)
    })
}

/// [`measure`], each text counted in `pool` as soon as it is rendered (the counts need
/// nothing from the shaping that follows, so they run beside it); `(format, per_op,
/// newline)` as there.
pub fn measure_in(
    input: &Value,
    policy: &Policy,
    opts: &ShapeOptions,
    (format, per_op, newline): (Format, bool, bool),
    pool: &CountPool,
) -> Report {
    let tok = opts.tokenizer;
    let text_of = |v: &Value| ended(render(v, format, tok), newline);
    let names = policy.ops_at(opts.level);
    let before = pool.add(text_of(input));
    let minified =
        (format != Format::Json).then(|| pool.add(ended(crate::json::to_compact(input), newline)));
    // The texts after each op but the last (the last one's is the output).
    let prefix_runs = per_op && names.len() >= 2;
    let prefixes: Vec<Ticket> = (1..names.len())
        .filter(|_| prefix_runs)
        .map(|k| {
            let prefix = prefix_options(opts, Some(k));
            pool.add(text_of(&shape(input.clone(), policy, &prefix).value))
        })
        .collect();
    let shaped = shape(input.clone(), policy, opts);
    let text = text_of(&shaped.value);
    let after = pool.add(text.clone());
    let tokens_before = pool.count(before);
    let tokens_minified = minified.map_or(tokens_before, |t| pool.count(t));
    let tokens_after = pool.count(after);
    let ops = match per_op {
        true => {
            let after_each =
                (0..names.len()).map(|k| prefixes.get(k).map_or(tokens_after, |&t| pool.count(t)));
            op_savings(&names, tokens_before, after_each)
        }
        false => Vec::new(),
    };
    Report {
        tokenizer: tok.name().to_owned(),
        level: policy.levels()[opts.level].clone(),
        format,
        tokens_before,
        tokens_minified,
        tokens_input: None,
        tokens_after,
        ops,
        manifest: shaped.manifest,
        text,
        matches: shaped.matches,
        packed: false,
    }
}

/// `text` as a report counts it: with the newline the CLI prints after it when `newline`.
fn ended(mut text: String, newline: bool) -> String {
    if newline {
        text.push('\n');
    }
    text
}

/// Each op's marginal saving: `after_each` gives the tokens after ops 1..=k, k = 1, 2, …,
/// against `before` for the first.
fn op_savings(
    names: &[&str],
    before: usize,
    after_each: impl IntoIterator<Item = usize>,
) -> Vec<OpSaving> {
    let mut prev = before;
    names
        .iter()
        .zip(after_each)
        .map(|(name, now)| {
            let saved = prev as i64 - now as i64;
            prev = now;
            OpSaving {
                op: name.to_string(),
                saved,
            }
        })
        .collect()
}

/// `opts` for a run of the first `op_limit` ops (all with `None`), as the report's counts
/// need it: no paths tracked, no matches counted.
fn prefix_options<'a>(opts: &ShapeOptions<'a>, op_limit: Option<usize>) -> ShapeOptions<'a> {
    ShapeOptions {
        level: opts.level,
        params: opts.params.clone(),
        tokenizer: opts.tokenizer,
        track_paths: false,
        op_limit,
        notes: opts.notes,
        count_matches: false,
        query: opts.query,
    }
}

/// Whether `value`'s minified JSON is at least `*left` bytes long (about: a few bytes per
/// member and item, and the strings' and numbers' own), looking no further than that.
fn at_least(value: &Value, left: &mut usize) -> bool {
    let took = |left: &mut usize, n: usize| {
        *left = left.saturating_sub(n);
        *left == 0
    };
    match value {
        Value::String(s) => took(left, s.len() + 2),
        Value::Number(n) => took(left, n.as_str().len()),
        Value::Array(items) => items.iter().any(|v| took(left, 1) || at_least(v, left)),
        Value::Object(map) => map
            .entries()
            .iter()
            .any(|(k, v)| took(left, k.len() + 4) || at_least(v, left)),
        _ => took(left, 4),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;

    fn report(input: &str, format: Format) -> Report {
        let policy = Policy::parse("[[ops]]\nop = \"prune\"\n").unwrap();
        let v = json::parse(input).unwrap();
        measure(&v, &policy, &ShapeOptions::new(&policy), format, true, true)
    }

    #[test]
    fn regression_report_said_one_saving_without_its_baseline() {
        let input = r#"{"items":[{"id":1,"name":"a","note":null},{"id":2,"name":"b","note":""}]}"#;
        let tok = crate::tokens::builtin("o200k_base").unwrap();
        let minified = tok.count(&format!(
            "{}\n",
            json::to_compact(&json::parse(input).unwrap())
        ));
        for format in [Format::Json, Format::Pretty, Format::Toon] {
            let r = report(input, format);
            assert_eq!(r.tokens_minified, minified, "{format:?}");
            let j = r.to_json();
            assert_eq!(j["tokens_minified"], minified);
            assert_eq!(
                j["saved_vs_minified"],
                minified as i64 - r.tokens_after as i64
            );
            let text = r.to_text();
            assert!(
                text.contains("minified input):")
                    && text.contains(&format!("{minified} tokens, saved")),
                "{text}"
            );
        }
        let pretty = report(input, Format::Pretty);
        assert!(pretty.tokens_before > pretty.tokens_minified);
        assert!(pretty.saved() > 0, "the nulls and empties are pruned");
        let text = pretty.to_text();
        assert!(text.contains("before (as pretty):"), "{text}");
        assert!(
            text.contains("per op (against the input as pretty):"),
            "{text}"
        );
        let mut given = report(input, Format::Json);
        given.tokens_input = Some(100);
        let text = given.to_text();
        assert!(
            text.contains("before (as json = minified input):"),
            "{text}"
        );
        let line = text
            .lines()
            .find(|l| l.starts_with("  before (input as given):"))
            .unwrap_or_else(|| panic!("{text}"));
        let words: Vec<&str> = line.split_whitespace().collect();
        let saved = (100 - given.tokens_after as i64).to_string();
        assert_eq!(
            words[4..8],
            ["100", "tokens,", "saved", saved.as_str()],
            "{line}"
        );
    }
}
