//! The opt-in envelope line and the page cursor (seed 004 §4.4, scenario S5).
//!
//! The envelope is one compact JSON line before the chunks: what the reader gets (mode,
//! tokenizer, the exact tokens of this whole response, the budget), what was cut, whether
//! there is more (`has_more`, `next_cursor`, `total`) and warnings about a client's limit:
//!
//! ```text
//! {"mode":"full","tokenizer":"o200k_base","tokens":796,"budget":800,"cut":true,"degraded":3,"left_out":14,"has_more":true,"next_cursor":"3bWq0Kd7nF","page":1,"total":60}
//! ```
//!
//! Its `next_cursor` is a [`Cursor`](crate::respond::cursor::Cursor) of the one codec every door uses
//! ([`crate::respond::cursor`]).

use serde::Serialize;

/// The envelope's fields, in the order they are printed.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Envelope {
    pub mode: String,
    pub tokenizer: String,
    /// Tokens of the whole response, this line included.
    pub tokens: usize,
    pub budget: usize,
    /// Whether any chunk shows less than its level allows, or is left out.
    pub cut: bool,
    /// Chunks shown at a lower tier than their level allows, to fit the budget.
    pub degraded: usize,
    /// Chunks not on this page.
    pub left_out: usize,
    pub has_more: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    pub page: usize,
    pub total: usize,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// With a query: which of its words the chunks have (seed 004).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query_analysis: Option<super::QueryAnalysis>,
}

impl Envelope {
    pub(crate) fn line(&self) -> String {
        serde_json::to_string(self).expect("the envelope serializes")
    }
}

/// Warnings about a client's per-result limit: for this response (`tokens`, `chars`) and
/// for what it would have been unpacked (`full_tokens`).
pub(crate) fn limit_warnings(
    limit: usize,
    tokens: usize,
    chars: usize,
    full_tokens: usize,
) -> Vec<String> {
    let estimate = chars.div_ceil(4);
    let mut out = Vec::new();
    if tokens > limit || estimate > limit {
        out.push(format!(
            "this response is {tokens} tokens ({estimate} by chars/4), over a client's \
             {limit}-token limit"
        ));
    }
    if full_tokens > limit {
        out.push(format!(
            "unpacked, the response would be {full_tokens} tokens, over a client's \
             {limit}-token limit"
        ));
    }
    out
}
