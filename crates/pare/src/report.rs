//! The report: tokens before and after, what each op saved, and what was removed.
//!
//! Tokens are counted with a real tokenizer on the final text, never estimated. "Before" is
//! the input rendered the same way as the output (so pretty-vs-minified whitespace is not
//! counted as a saving), "after" is the output exactly as printed. Per-op savings are
//! marginal in policy order: op k saved tokens(ops 1..k-1) − tokens(ops 1..k), so they add
//! up to the total exactly.
//!
//! ```
//! use pare::{json, policy::Policy, report::measure, shape::ShapeOptions, encode::Format};
//! let policy = Policy::builtin_default();
//! let input = json::parse(r#"{"a":1,"b":null}"#).unwrap();
//! let r = measure(&input, &policy, &ShapeOptions::new(&policy), Format::Json, true, false);
//! assert_eq!(r.tokens_after + r.saved() as usize, r.tokens_before);
//! ```

use serde::Serialize;

use crate::encode::{Format, render};
use crate::manifest::Manifest;
use crate::policy::Policy;
use crate::shape::{ShapeOptions, shape};
use crate::value::Value;

/// One op's marginal saving.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct OpSaving {
    pub op: String,
    pub saved: i64,
}

/// What a shaping run cost and saved.
#[derive(Debug, Clone)]
pub struct Report {
    pub tokenizer: String,
    pub level: String,
    pub format: Format,
    /// Tokens of the input rendered in the output format.
    pub tokens_before: usize,
    /// Tokens of the output as printed.
    pub tokens_after: usize,
    pub ops: Vec<OpSaving>,
    pub manifest: Manifest,
    /// The shaped text exactly as counted.
    pub text: String,
    /// Which selectors matched ([`Policy::unmatched_warnings`]).
    pub matches: crate::query::selector::Seen,
}

impl Report {
    pub fn saved(&self) -> i64 {
        self.tokens_before as i64 - self.tokens_after as i64
    }
    /// Saved tokens as a percentage of the tokens before (0 when there were none).
    pub fn rate(&self) -> f64 {
        if self.tokens_before == 0 {
            0.0
        } else {
            self.saved() as f64 * 100.0 / self.tokens_before as f64
        }
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
            "format": self.format.name(),
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "saved": self.saved(),
            "rate": format!("{:.1}%", self.rate()),
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
            self.format.name()
        );
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

/// Shape `input` and measure it. With `per_op`, the ops are re-run as prefixes to
/// attribute savings (one extra run per op). The text ends with a newline exactly when
/// `newline` is set (the CLI prints one; an MCP result has none), and it is counted as such.
pub fn measure(
    input: &Value,
    policy: &Policy,
    opts: &ShapeOptions,
    format: Format,
    per_op: bool,
    newline: bool,
) -> Report {
    let tok = opts.tokenizer;
    let text_of = |v: &Value| {
        let mut t = render(v, format, tok);
        if newline {
            t.push('\n');
        }
        t
    };
    let count = |v: &Value| tok.count(&text_of(v));
    let tokens_before = count(input);
    let shaped = shape(input.clone(), policy, opts);
    let text = text_of(&shaped.value);
    let tokens_after = tok.count(&text);
    let names = policy.ops_at(opts.level);
    let mut ops = Vec::new();
    if per_op && !names.is_empty() {
        let mut prev = tokens_before;
        for (k, name) in names.iter().enumerate() {
            let now = if k + 1 == names.len() {
                tokens_after
            } else {
                let prefix = ShapeOptions {
                    level: opts.level,
                    params: opts.params.clone(),
                    tokenizer: opts.tokenizer,
                    track_paths: false,
                    op_limit: Some(k + 1),
                    notes: opts.notes,
                    count_matches: false,
                };
                count(&shape(input.clone(), policy, &prefix).value)
            };
            ops.push(OpSaving {
                op: name.to_string(),
                saved: prev as i64 - now as i64,
            });
            prev = now;
        }
    }
    Report {
        tokenizer: tok.name().to_owned(),
        level: policy.levels()[opts.level].clone(),
        format,
        tokens_before,
        tokens_after,
        ops,
        manifest: shaped.manifest,
        text,
        matches: shaped.matches,
    }
}
