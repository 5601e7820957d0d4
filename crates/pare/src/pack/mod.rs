//! Packing search results and code chunks under a hard token budget (seeds 003 and 004).
//!
//! Each chunk, best score first, takes the most detailed tier that still fits: full text →
//! structure-preserving preview (signatures, docs, head and tail, gap markers; four steps of
//! less head and tail) → metadata only (path, symbols, line range, first doc line) → its id
//! → left out, named in a closing note. Chunks under the score threshold start at metadata
//! only; near-duplicates of a better chunk become a reference to it. The final text is
//! counted with the real tokenizer and is never over the budget.
//!
//! ```
//! use pare::pack::{pack, PackSettings, Tier, chunks, cache::PreviewCache};
//! use pare::schema::pack::PackOptions;
//! let input = pare::json::parse(r##"{"results":[
//!   {"id":"a","score":0.9,"path":"src/lib.rs","text":"/// Adds.\npub fn add(a: i32, b: i32) -> i32 { a + b }"},
//!   {"id":"b","score":0.2,"path":"notes.md","text":"# Notes\nNothing much."}]}"##).unwrap();
//! let opts = PackOptions::default();
//! let list = chunks::from_response(&input, &opts).unwrap();
//! let tok = pare::tokens::builtin("o200k_base").unwrap();
//! let settings = PackSettings {
//!     options: &opts, budget: 200, tokenizer: tok, max_tier: Tier::Full, level: "full", total: None, cursor_in_text: true,
//!     query: None,
//! };
//! let packed = pack(&list, &settings, &mut PreviewCache::new(64));
//! assert!(packed.tokens <= 200);
//! assert!(packed.text.starts_with("[1] src/lib.rs · score 0.9 · id a\n```rust\n/// Adds."));
//! assert!(packed.text.contains("[metadata-only] notes.md"));
//! ```

pub mod cache;
pub mod chunks;
pub mod dedup;
pub mod envelope;
mod fill;
pub mod outline;
pub mod overlap;
mod page;
mod render;
pub mod response;
pub mod source;

pub(crate) use page::cursor_check;
pub use page::{pack, pack_from_cursor};

use serde::Serialize;

use crate::schema::pack::PackOptions;
use crate::tokens::Tokenizer;

/// Why a response could not be packed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PackError {
    /// The `[pack]` field mapping doesn't match the input.
    #[error("{0}")]
    Mapping(String),
    /// A cursor that is not one of ours, or belongs to another response or settings.
    #[error("{0}")]
    Cursor(String),
}

/// How much of a chunk is shown, most detail first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    /// The whole text.
    Full,
    /// A structure-preserving preview; the step indexes `render::PREVIEW_STEPS`.
    Preview(u8),
    /// One line: path, line range, symbols and first doc line.
    Metadata,
    /// One line: its id and score (a source chunk's: its place and first names).
    IdOnly,
    /// A reference to the better chunk (its rank) it nearly duplicates.
    Duplicate(usize),
    /// Not shown: named in the closing note.
    Out,
}

impl Tier {
    /// The next tier down, `None` after the last.
    pub fn next(self) -> Option<Tier> {
        Some(match self {
            Tier::Full => Tier::Preview(0),
            Tier::Preview(s) if usize::from(s) + 1 < render::PREVIEW_STEPS.len() => {
                Tier::Preview(s + 1)
            }
            Tier::Preview(_) => Tier::Metadata,
            Tier::Metadata | Tier::Duplicate(_) => Tier::IdOnly,
            Tier::IdOnly => Tier::Out,
            Tier::Out => return None,
        })
    }
    /// The name in the metrics and page data: `full`, `preview`, `metadata-only`, `id-only`,
    /// `duplicate` or `left-out`.
    pub fn name(self) -> &'static str {
        match self {
            Tier::Full => "full",
            Tier::Preview(_) => "preview",
            Tier::Metadata => "metadata-only",
            Tier::IdOnly => "id-only",
            Tier::Duplicate(_) => "duplicate",
            Tier::Out => "left-out",
        }
    }
    /// The most detailed tier a detail level allows (seed 004's modes): `ids_only`,
    /// `metadata`, `preview`; anything else allows full text.
    pub fn cap_for_level(level: &str) -> Tier {
        use crate::schema::pack::LevelCap;
        match LevelCap::of(level) {
            LevelCap::IdsOnly => Tier::IdOnly,
            LevelCap::Metadata => Tier::Metadata,
            LevelCap::Preview => Tier::Preview(0),
            LevelCap::Full => Tier::Full,
        }
    }
    fn rank(self) -> usize {
        match self {
            Tier::Full => 0,
            Tier::Preview(s) => 1 + usize::from(s),
            Tier::Metadata | Tier::Duplicate(_) => 10,
            Tier::IdOnly => 11,
            Tier::Out => 12,
        }
    }
    fn at_most(self, cap: Tier) -> Tier {
        if self.rank() < cap.rank() { cap } else { self }
    }
}

/// What a pack needs besides the chunks.
pub struct PackSettings<'a> {
    /// The `[pack]` settings: field mapping, threshold, order.
    pub options: &'a PackOptions,
    /// Tokens the output may have, at most.
    pub budget: usize,
    /// Counts every token: the blocks while filling and the final text.
    pub tokenizer: &'a dyn Tokenizer,
    /// The level's cap ([`Tier::cap_for_level`]).
    pub max_tier: Tier,
    /// The level's name: the envelope's `mode`.
    pub level: &'a str,
    /// The response's count of all matches (the envelope's `total`); by default the number
    /// of chunks given.
    pub total: Option<usize>,
    /// The left-out line names the next page (`next page: --cursor C`), as `pare pack`
    /// prints it. The response pipeline says no: each door's page note says how to go on,
    /// in that door's words (`pare_more`, `pare_cursor`, `--cursor`).
    pub cursor_in_text: bool,
    /// The caller's question: chunks are ranked by its relevance (BM25) blended with the
    /// upstream score, a chunk with its words is not demoted by the score threshold, and the
    /// metrics and envelope say which of its words matched. `None`: by score alone.
    pub query: Option<&'a str>,
}

/// Which of a query's words the chunks have (seed 004's `query_analysis`).
#[derive(Debug, Clone, Serialize)]
pub struct QueryAnalysis {
    /// The query as given.
    pub query: String,
    /// Its words (stop words left out) that some chunk has.
    pub matched_terms: Vec<String>,
    /// Its words no chunk has.
    pub unmatched_terms: Vec<String>,
}

/// The packed text, its exact token count, and the metrics.
pub struct Packed {
    /// The page's text, never over the budget.
    pub text: String,
    /// The text's tokens, counted whole with the settings' tokenizer.
    pub tokens: usize,
    /// Seed 003's metrics, with where each chunk went and why.
    pub metrics: Metrics,
    /// The cursor of the next page, when chunks were left out that a next page can show.
    pub next_cursor: Option<String>,
    /// This page's chunks as data (`pare pack --format json`): the shown ones in the text's
    /// order, then the left-out ones best first.
    pub shown: Vec<Shown>,
}

impl Packed {
    /// This page as data (`pare pack --format json`, and a JSON client of the REST door):
    /// the mode (`level`), its budget and tokens, how many chunks were shown and left out,
    /// the next page's cursor, and each chunk ([`Shown`]).
    pub fn data(&self, level: &str) -> serde_json::Value {
        let left_out = self
            .shown
            .iter()
            .filter(|s| s.tier == Tier::Out.name())
            .count();
        let mut data = serde_json::json!({
            "mode": level,
            "tokenizer": self.metrics.tokenizer,
            "budget": self.metrics.budget,
            "tokens": self.tokens,
            "total_chunks": self.metrics.total_chunks,
            "shown": self.shown.len() - left_out,
            "left_out": left_out,
            "has_more": self.next_cursor.is_some(),
            "next_cursor": self.next_cursor,
            "chunks": self.shown,
        });
        if let (Some(q), Some(m)) = (&self.metrics.query_analysis, data.as_object_mut()) {
            m.insert("query_analysis".into(), serde_json::json!(q));
        }
        data
    }
}

/// One chunk of a page as data: where it is from, its tier, what it shows and what that
/// costs in the text.
#[derive(Debug, Clone, Serialize)]
pub struct Shown {
    /// The chunk's id ([`chunks::Chunk::id`]).
    pub id: String,
    /// Ids merged into this chunk ([`overlap`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<String>,
    /// The chunk's source path; empty when the response gave none.
    pub path: String,
    /// First and last line in the file; `null` when the input did not say.
    pub line_start: Option<usize>,
    /// Last line in the file (1-based, inclusive); `null` when the input did not say.
    pub line_end: Option<usize>,
    /// 1 = best.
    pub rank: usize,
    /// `null` when the response gave the chunk no score.
    pub score: Option<f64>,
    /// `full`, `preview`, `metadata-only`, `id-only`, `duplicate` or `left-out`.
    pub tier: &'static str,
    /// Why it got that tier: `fits`, `below the score threshold`, `the level's cap`, …
    pub reason: &'static str,
    /// Tokens of the chunk's block in the packed text (heading and fences included, the
    /// blank line before the next block not); 0 when left out.
    pub tokens: usize,
    /// What the chunk shows: its text (full or preview), or its metadata line; `null` for
    /// id-only, duplicate and left-out chunks.
    pub text: Option<String>,
    /// The id of the better chunk a duplicate repeats.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duplicate_of: Option<String>,
    /// With `[pack] ranking_context`: the share (0–100) of the other chunks it outranks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank_percentile: Option<u8>,
    /// With `[pack] ranking_context`: what the rank rests on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank_explanation: Option<String>,
    /// With `[pack] ranking_context`: the ids of the near-duplicates this chunk stands for.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub similar_chunks: Vec<String>,
}

/// Seed 003's metrics (these exact keys), plus where each chunk went and why.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Metrics {
    /// Chunks in the input, before merging and skipping those with no text.
    pub total_chunks: usize,
    /// Chunks this page shows as metadata only.
    pub metadata_only_chunks: usize,
    /// Tokens of every input chunk's block in full: what packing is measured against.
    pub tokens_before_compression: usize,
    /// Tokens of the packed text.
    pub tokens_after_compression: usize,
    /// Tokens before less tokens after; negative when the packed text is longer.
    pub tokens_saved: i64,
    /// `tokens_saved` as a percentage of the tokens before, one decimal: `"42.5%"`.
    pub compression_rate: String,
    /// Tokens the output may have, at most.
    pub budget: usize,
    /// The tokenizer's name, e.g. `o200k_base`.
    pub tokenizer: String,
    /// Every chunk, ranked ones by rank, then those skipped for having no text.
    pub items: Vec<ItemMetric>,
    /// With a query: which of its words matched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query_analysis: Option<QueryAnalysis>,
}

impl Metrics {
    /// Set the output's token count (say, after the caller added a newline) and what
    /// follows from it.
    pub(crate) fn record_output(&mut self, tokens: usize) {
        let before = self.tokens_before_compression;
        self.tokens_after_compression = tokens;
        self.tokens_saved = before as i64 - tokens as i64;
        let rate = if before == 0 {
            0.0
        } else {
            self.tokens_saved as f64 * 100.0 / before as f64
        };
        self.compression_rate = format!("{rate:.1}%");
    }
}

/// Where one chunk went and why ([`Metrics::items`]).
#[derive(Debug, Clone, Serialize)]
pub struct ItemMetric {
    /// The chunk's id.
    pub id: String,
    /// 1 = best; a merged chunk has the rank of the chunk it went into; 0 when skipped.
    pub rank: usize,
    /// `null` when the response gave the chunk no score.
    pub score: Option<f64>,
    /// A [`Tier::name`], or `earlier-page`, `merged` (into a better chunk) or `empty`.
    pub tier: &'static str,
    /// Why: `fits`, `degraded to fit the budget`, `no text: skipped`, …
    pub reason: &'static str,
}
