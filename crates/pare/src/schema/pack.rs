//! The `[pack]` section of a policy: where a search response keeps its chunks, which of
//! their fields mean what, and how to pack them. Only options live here; the packing itself
//! is [`crate::pack`].
//!
//! ```toml
//! [pack]
//! items = "results"        # the array of chunks (dotted path; "" when the input is the array)
//! id = "chunk_id"
//! score = "hybrid_score"
//! text = "chunk_text"
//! path = "source_file"
//! ```

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How `pare pack` reads and packs a search response.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PackOptions {
    /// Dotted path from the root to the array of chunks (`results`, `data.hits`); empty when
    /// the input itself is the array. JSONL input (one chunk per line) ignores it.
    #[serde(default = "default_items")]
    pub items: String,
    /// Field with the chunk's id. Default: `id`.
    #[serde(default = "default_id")]
    pub id: String,
    /// Field with the relevance score (higher is better). Default: `score`.
    #[serde(default = "default_score")]
    pub score: String,
    /// Field with the chunk's text (code or prose). Default: `text`.
    #[serde(default = "default_text")]
    pub text: String,
    /// Field with the source path; its extension picks the language. Default: `path`.
    #[serde(default = "default_path")]
    pub path: String,
    /// Field with the chunk's first line number in its file, if the response has one.
    #[serde(default)]
    pub line_start: Option<String>,
    /// Field with a short heading for the chunk (`pod.py > Timeout Token`), if any.
    #[serde(default)]
    pub header: Option<String>,
    /// Chunks scoring below this are shown as metadata only (seed 003's 0.4).
    #[serde(default = "default_threshold")]
    pub score_threshold: f64,
    /// A chunk of at most this many characters is shown whole; a longer one starts at the
    /// structure-preserving preview (seed 003's `maxLength`, 2000).
    #[serde(default = "default_max_chars")]
    pub max_chars: usize,
    /// Order of the packed items: `score` (best first), `edges` (best at both ends, for
    /// models that read the middle of a long context less well) or `input` (the input's
    /// order; `pare pack DIR` uses it: files in path order, chunks in line order).
    #[serde(default)]
    pub order: PackOrder,
    /// Breadth before detail: first find the most detailed tier every chunk can show at once
    /// (signatures only, metadata, or ids) and reserve it, then add detail best first. Off
    /// by default: seed 003 wants the best chunks in full, even when later ones then show
    /// less. Turn it on when every chunk matters, as when packing a whole code base.
    #[serde(default)]
    pub breadth: bool,
    /// Chunks whose word-shingle Jaccard similarity to a better one is at least this are
    /// shown as a reference to it. 1.0 turns it off.
    #[serde(default = "default_jaccard")]
    pub duplicate_jaccard: f64,
    /// More fields to show on each chunk's line (`source_category`, `chunk_index`), from
    /// metadata-only up. A field with the same value on every chunk is said once, above them.
    #[serde(default)]
    pub fields: Vec<String>,
    /// Dotted path to the response's count of all matches (`total_found`), for the
    /// envelope's `total`. Default: the number of chunks given.
    #[serde(default)]
    pub total: Option<String>,
    /// Start the output with a one-line JSON envelope: mode, tokenizer, tokens, budget,
    /// what was cut, `has_more`/`next_cursor`, total, warnings. Off by default
    /// (`pare pack --envelope` turns it on too).
    #[serde(default)]
    pub envelope: bool,
    /// A client's limit on one tool result, in tokens; the envelope warns when this response
    /// (by the tokenizer or by the chars/4 estimate clients gate on) or the unpacked one
    /// exceeds it. Default: 25000 (Claude Code's `MAX_MCP_OUTPUT_TOKENS`).
    #[serde(default = "default_client_limit")]
    pub client_limit: usize,
    /// Give each chunk of the page data (`pare pack --format json`, a JSON client's pages)
    /// its ranking context (seed 004): `rank_percentile` (0–100, the share of the other
    /// chunks it outranks), `rank_explanation` (what its rank rests on: the upstream score and
    /// its place by it, and with a question the relevance) and `similar_chunks` (the ids of
    /// the near-duplicates it stands for). Off by default.
    #[serde(default)]
    pub ranking_context: bool,
}

/// The order of the packed items (`[pack] order`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PackOrder {
    /// Best first.
    #[default]
    Score,
    /// Best at both ends and the weakest in the middle, for models that read the middle of
    /// a long context less well.
    Edges,
    /// The input's order.
    Input,
}

impl Default for PackOptions {
    fn default() -> Self {
        PackOptions {
            items: default_items(),
            id: default_id(),
            score: default_score(),
            text: default_text(),
            path: default_path(),
            line_start: None,
            header: None,
            score_threshold: default_threshold(),
            max_chars: default_max_chars(),
            order: PackOrder::Score,
            breadth: false,
            duplicate_jaccard: default_jaccard(),
            fields: Vec::new(),
            total: None,
            envelope: false,
            client_limit: default_client_limit(),
            ranking_context: false,
        }
    }
}

fn default_items() -> String {
    "results".into()
}
fn default_id() -> String {
    "id".into()
}
fn default_score() -> String {
    "score".into()
}
fn default_text() -> String {
    "text".into()
}
fn default_path() -> String {
    "path".into()
}
fn default_threshold() -> f64 {
    0.4
}
fn default_max_chars() -> usize {
    2000
}
fn default_jaccard() -> f64 {
    0.8
}
fn default_client_limit() -> usize {
    25_000
}

/// How much of a search result a detail level lets through, by the level's name (seed
/// 004's modes): `ids_only` (or `none`), `metadata` (or `minimal`), `preview`, anything
/// else the full text. The pack stage turns it into a tier ([`crate::pack::Tier`]); a
/// policy compares levels by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LevelCap {
    IdsOnly,
    Metadata,
    Preview,
    Full,
}

impl LevelCap {
    pub(crate) fn of(level: &str) -> LevelCap {
        match level {
            "ids_only" | "none" => LevelCap::IdsOnly,
            "metadata" | "minimal" => LevelCap::Metadata,
            "preview" => LevelCap::Preview,
            _ => LevelCap::Full,
        }
    }
}
