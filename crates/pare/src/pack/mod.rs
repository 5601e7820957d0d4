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
//! use pare::pack::{pack, PackSettings, Tier, chunks, cache::PreviewCache, options::PackOptions};
//! let input = pare::json::parse(r##"{"results":[
//!   {"id":"a","score":0.9,"path":"src/lib.rs","text":"/// Adds.\npub fn add(a: i32, b: i32) -> i32 { a + b }"},
//!   {"id":"b","score":0.2,"path":"notes.md","text":"# Notes\nNothing much."}]}"##).unwrap();
//! let opts = PackOptions::default();
//! let list = chunks::from_response(&input, &opts).unwrap();
//! let tok = pare::tokens::builtin("o200k_base").unwrap();
//! let settings = PackSettings {
//!     options: &opts, budget: 200, tokenizer: tok, max_tier: Tier::Full, level: "full", total: None,
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
pub mod options;
pub mod outline;
pub mod overlap;
mod render;

use serde::Serialize;

use crate::tokens::Tokenizer;
use cache::PreviewCache;
use chunks::Chunk;
use options::PackOptions;

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
    Full,
    /// A structure-preserving preview; the step indexes `render::PREVIEW_STEPS`.
    Preview(u8),
    Metadata,
    IdOnly,
    /// A reference to the better chunk (its rank) it nearly duplicates.
    Duplicate(usize),
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
        match level {
            "ids_only" | "none" => Tier::IdOnly,
            "metadata" | "minimal" => Tier::Metadata,
            "preview" => Tier::Preview(0),
            _ => Tier::Full,
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
    pub options: &'a PackOptions,
    /// Tokens the output may have, at most.
    pub budget: usize,
    pub tokenizer: &'a dyn Tokenizer,
    /// The level's cap ([`Tier::cap_for_level`]).
    pub max_tier: Tier,
    /// The level's name: the envelope's `mode`.
    pub level: &'a str,
    /// The response's count of all matches (the envelope's `total`); by default the number
    /// of chunks given.
    pub total: Option<usize>,
}

/// The packed text, its exact token count, and the metrics.
pub struct Packed {
    pub text: String,
    pub tokens: usize,
    pub metrics: Metrics,
}

/// Seed 003's metrics (these exact keys), plus where each chunk went and why.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Metrics {
    pub total_chunks: usize,
    pub metadata_only_chunks: usize,
    pub tokens_before_compression: usize,
    pub tokens_after_compression: usize,
    pub tokens_saved: i64,
    pub compression_rate: String,
    pub budget: usize,
    pub tokenizer: String,
    pub items: Vec<ItemMetric>,
}

impl Metrics {
    /// Set the output's token count (say, after the caller added a newline) and what
    /// follows from it.
    pub fn record_output(&mut self, tokens: usize) {
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

#[derive(Debug, Clone, Serialize)]
pub struct ItemMetric {
    pub id: String,
    pub rank: usize,
    pub score: f64,
    pub tier: &'static str,
    pub reason: &'static str,
}

/// Pack `chunks` within `settings.budget` tokens: the first page.
pub fn pack(chunks: &[Chunk], settings: &PackSettings, cache: &mut PreviewCache) -> Packed {
    pack_page(chunks, settings, cache, 1)
}

/// The page a cursor from an earlier pack names, of the same chunks with the same settings.
pub fn pack_from_cursor(
    chunks: &[Chunk],
    settings: &PackSettings,
    cache: &mut PreviewCache,
    cursor: &str,
) -> Result<Packed, PackError> {
    let parsed = envelope::Cursor::decode(cursor)
        .filter(|c| c.page >= 1)
        .ok_or_else(|| PackError::Cursor(format!("`{cursor}` is not a pare pack cursor")))?;
    if parsed.check != check(chunks, settings) {
        return Err(PackError::Cursor(format!(
            "cursor `{cursor}` does not fit this response: a cursor is good for the same \
             chunks, budget, level, tokenizer and [pack] settings it came from"
        )));
    }
    Ok(pack_page(chunks, settings, cache, usize::from(parsed.page)))
}

/// What a cursor is checked against: the chunks and everything that decides the pages.
fn check(chunks: &[Chunk], settings: &PackSettings) -> u64 {
    let options = serde_json::to_string(settings.options).expect("options serialize");
    let head = format!(
        "{}\u{1}{}\u{1}{}",
        settings.budget,
        settings.level,
        settings.tokenizer.name()
    );
    let scores: Vec<[u8; 8]> = chunks.iter().map(|c| c.score.to_le_bytes()).collect();
    let parts = [head.as_bytes(), options.as_bytes()].into_iter().chain(
        chunks.iter().zip(&scores).flat_map(|(c, s)| {
            [
                c.id.as_bytes(),
                c.path.as_bytes(),
                c.text.as_bytes(),
                &s[..],
            ]
        }),
    );
    envelope::check(parts)
}

/// Page `page` (1-based): the chunks the pages before it left out, packed again.
fn pack_page(
    input: &[Chunk],
    settings: &PackSettings,
    cache: &mut PreviewCache,
    page: usize,
) -> Packed {
    let opts = settings.options;
    let cursor_check = check(input, settings);
    let (mut merged, absorbed) = overlap::merge(input.to_vec());
    let common = render::common_line(&chunks::said_once(&mut merged));
    let chunks = &merged[..];
    let mut ranked: Vec<usize> = (0..chunks.len()).collect();
    // Best first; equal scores keep the response's order (a stable sort).
    ranked.sort_by(|&a, &b| chunks[b].score.total_cmp(&chunks[a].score));
    let mut rank_of = vec![0; chunks.len()];
    for (k, &i) in ranked.iter().enumerate() {
        rank_of[i] = k + 1;
    }
    let caps = caps(chunks, &ranked, &rank_of, settings);
    let full_tokens = {
        let full: Vec<String> = ranked
            .iter()
            .filter_map(|&i| render::block(&chunks[i], rank_of[i], Tier::Full, cache))
            .collect();
        cache.count(settings.tokenizer, &full.join("\n\n"))
    };

    let mut on_earlier_page = vec![false; chunks.len()];
    let mut page_no = 1;
    let (decisions, text, tokens) = loop {
        let this_page: Vec<usize> = ranked
            .iter()
            .copied()
            .filter(|&i| !on_earlier_page[i])
            .collect();
        let next_cursor = u16::try_from(page_no + 1).ok().map(|p| {
            envelope::Cursor {
                check: cursor_check,
                page: p,
            }
            .encode()
        });
        let make_envelope = |decisions: &[fill::Decision], tokens: usize| {
            let on_page = this_page.iter().map(|&i| &decisions[i]);
            let left_out = on_page.clone().filter(|d| d.tier == Tier::Out).count();
            let degraded = on_page
                .filter(|d| d.tier != Tier::Out && d.reason == fill::DEGRADED)
                .count();
            // A page that shows nothing can't promise a next one: it would be this again.
            let shown = this_page.len() - left_out;
            let has_more = left_out > 0 && shown > 0 && next_cursor.is_some();
            let mut line = envelope::Envelope {
                mode: settings.level.to_owned(),
                tokenizer: settings.tokenizer.name().to_owned(),
                tokens,
                budget: settings.budget,
                cut: left_out + degraded > 0,
                degraded,
                left_out,
                has_more,
                next_cursor: next_cursor.clone().filter(|_| has_more),
                page: page_no,
                total: settings.total.unwrap_or(input.len()),
                warnings: Vec::new(),
            };
            // chars/4 as clients estimate it, of this line and the blocks it heads.
            let chars = line.line().chars().count() + tokens * 4;
            line.warnings = envelope::limit_warnings(opts.client_limit, tokens, chars, full_tokens);
            line.line()
        };
        let filler = fill::Filler {
            chunks,
            ranked: &this_page,
            rank_of: &rank_of,
            caps: caps.clone(),
            tok: settings.tokenizer,
            budget: settings.budget,
            order: opts.order,
            breadth: opts.breadth,
            common: common.clone(),
            next_cursor: next_cursor.clone(),
            envelope: opts.envelope.then_some(&make_envelope as _),
        };
        let (decisions, text, tokens) = filler.fill(cache);
        if page_no >= page {
            break (decisions, text, tokens);
        }
        for &i in &this_page {
            on_earlier_page[i] |= decisions[i].tier != Tier::Out;
        }
        page_no += 1;
    };

    // Before: every chunk given, whole (merging and said-once fields are pare's saving too).
    let before = {
        let full: Vec<String> = (0..input.len())
            .filter_map(|i| render::block(&input[i], i + 1, Tier::Full, cache))
            .collect();
        cache.count(settings.tokenizer, &full.join("\n\n"))
    };
    let mut items: Vec<ItemMetric> = ranked
        .iter()
        .map(|&i| {
            let (tier, reason) = if on_earlier_page[i] {
                ("earlier-page", "shown on an earlier page")
            } else {
                (decisions[i].tier.name(), decisions[i].reason)
            };
            ItemMetric {
                id: chunks[i].id.clone(),
                rank: rank_of[i],
                score: chunks[i].score,
                tier,
                reason,
            }
        })
        .collect();
    for &(i, into) in &absorbed {
        items.push(ItemMetric {
            id: input[i].id.clone(),
            rank: rank_of[into],
            score: input[i].score,
            tier: "merged",
            reason: "same file, overlapping lines: merged into a better chunk",
        });
    }
    items.sort_by_key(|m| m.rank);
    let mut metrics = Metrics {
        total_chunks: input.len(),
        metadata_only_chunks: ranked
            .iter()
            .filter(|&&i| !on_earlier_page[i] && decisions[i].tier == Tier::Metadata)
            .count(),
        tokens_before_compression: before,
        tokens_after_compression: 0,
        tokens_saved: 0,
        compression_rate: String::new(),
        budget: settings.budget,
        tokenizer: settings.tokenizer.name().to_owned(),
        items,
    };
    metrics.record_output(tokens);
    Packed {
        text,
        tokens,
        metrics,
    }
}

/// Per chunk: the most detailed tier it may take, and why.
fn caps(
    chunks: &[Chunk],
    ranked: &[usize],
    rank_of: &[usize],
    settings: &PackSettings,
) -> Vec<(Tier, &'static str)> {
    let opts = settings.options;
    let duplicate_of = dedup::duplicates(chunks, ranked, opts.duplicate_jaccard);
    chunks
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let (tier, why) = if let Some(k) = duplicate_of[i] {
                (
                    Tier::Duplicate(rank_of[k]),
                    "near-duplicate of a better chunk",
                )
            } else if c.score < opts.score_threshold {
                (Tier::Metadata, "below the score threshold")
            } else if c.text.chars().count() > opts.max_chars {
                (Tier::Preview(0), "longer than max_chars: preview")
            } else {
                (Tier::Full, "fits")
            };
            let capped = tier.at_most(settings.max_tier);
            (
                capped,
                if capped == tier {
                    why
                } else {
                    "the level's cap"
                },
            )
        })
        .collect()
}
