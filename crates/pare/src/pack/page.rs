//! Packing one page: merging, said-once fields, ranking, each chunk's cap, the fill, and
//! the metrics. Page n packs again the chunks pages 1..n-1 left out, so a cursor only needs
//! the page number (and a check that it belongs to these chunks and settings).

use super::cache::PreviewCache;
use super::chunks::{self, Chunk};
use super::{
    ItemMetric, Metrics, PackError, PackSettings, Packed, QueryAnalysis, Shown, Tier, dedup,
    envelope, fill, overlap, render,
};
use crate::cursor as codec;
use crate::relevance::Relevance;

/// Pack `chunks` within `settings.budget` tokens: the first page.
pub fn pack(chunks: &[Chunk], settings: &PackSettings, cache: &mut PreviewCache) -> Packed {
    pack_page(chunks, settings, cache, 1, cursor_check(chunks, settings))
}

/// The page a cursor from an earlier pack names, of the same chunks with the same settings.
pub fn pack_from_cursor(
    chunks: &[Chunk],
    settings: &PackSettings,
    cache: &mut PreviewCache,
    cursor: &str,
) -> Result<Packed, PackError> {
    let parsed = codec::Cursor::decode(cursor)
        .filter(|c| c.page >= 1)
        .ok_or_else(|| PackError::Cursor(format!("`{cursor}` is not a pare pack cursor")))?;
    let check = cursor_check(chunks, settings);
    if parsed.check != check {
        return Err(PackError::Cursor(format!(
            "cursor `{cursor}` does not fit this response: a cursor is good for the same \
             chunks, budget, level, tokenizer, query and [pack] settings it came from"
        )));
    }
    Ok(pack_page(
        chunks,
        settings,
        cache,
        usize::from(parsed.page),
        check,
    ))
}

/// What a cursor is checked against: the chunks and everything that decides the pages.
pub(crate) fn cursor_check(chunks: &[Chunk], settings: &PackSettings) -> u64 {
    // The options that decide the pages: `ranking_context` only adds data to them.
    let mut options = serde_json::to_value(settings.options).expect("options serialize");
    if let Some(o) = options.as_object_mut() {
        o.remove("ranking_context");
    }
    let options = options.to_string();
    let mut head = format!(
        "{}\u{1}{}\u{1}{}",
        settings.budget,
        settings.level,
        settings.tokenizer.name()
    );
    // A query orders the pages; without one the check (and so every cursor) is as before.
    if let Some(q) = settings.query {
        head.push_str("\u{1}query\u{1}");
        head.push_str(q);
    }
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
    codec::check(parts)
}

/// Page `page` (1-based): the chunks the pages before it left out, packed again.
/// `cursor_check` is [`check`] of `input` and `settings`, which the next page's cursor holds.
fn pack_page(
    input: &[Chunk],
    settings: &PackSettings,
    cache: &mut PreviewCache,
    page: usize,
    cursor_check: u64,
) -> Packed {
    let opts = settings.options;
    // A search result with no text says nothing a block could show: it is skipped, and
    // named in the metrics. (A source file pare cut is kept: an empty file is a fact.)
    let (with_text, empty): (Vec<Chunk>, Vec<Chunk>) = input
        .iter()
        .cloned()
        .partition(|c| c.from_source || !c.text.trim().is_empty());
    let (mut merged, absorbed) = overlap::merge(with_text.clone());
    let common = render::common_line(&chunks::said_once(&mut merged));
    let chunks = &merged[..];
    let asked = settings.query.map(|q| asked(chunks, q));
    let key: Vec<f64> = match &asked {
        Some(a) => a.key.clone(),
        None => chunks.iter().map(|c| c.score).collect(),
    };
    let mut ranked: Vec<usize> = (0..chunks.len()).collect();
    // Best first; equal keys keep the response's order (a stable sort).
    ranked.sort_by(|&a, &b| key[b].total_cmp(&key[a]));
    let mut rank_of = vec![0; chunks.len()];
    for (k, &i) in ranked.iter().enumerate() {
        rank_of[i] = k + 1;
    }
    let relevant: Vec<bool> = match &asked {
        Some(a) => a.relevance.scores.iter().map(|&r| r > 0.0).collect(),
        None => vec![false; chunks.len()],
    };
    let caps = caps(chunks, &ranked, &rank_of, &relevant, settings);
    let full_tokens = {
        let full: Vec<String> = ranked
            .iter()
            .filter_map(|&i| render::block(&chunks[i], rank_of[i], Tier::Full, cache))
            .collect();
        cache.count(settings.tokenizer, &full.join("\n\n"))
    };

    let query_analysis = asked.as_ref().map(|a| QueryAnalysis {
        query: settings.query.unwrap_or_default().to_owned(),
        matched_terms: a.relevance.matched.clone(),
        unmatched_terms: a.relevance.unmatched.clone(),
    });
    let mut on_earlier_page = vec![false; chunks.len()];
    let mut page_no = 1;
    let (decisions, text, tokens, next_cursor, this_page) = loop {
        let this_page: Vec<usize> = ranked
            .iter()
            .copied()
            .filter(|&i| !on_earlier_page[i])
            .collect();
        let next_cursor = u16::try_from(page_no + 1).ok().map(|p| {
            codec::Cursor {
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
            let has_more = has_more(&this_page, decisions) && next_cursor.is_some();
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
                query_analysis: query_analysis.clone(),
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
            name_cursor: settings.cursor_in_text,
            envelope: opts.envelope.then_some(&make_envelope as _),
        };
        let (decisions, text, tokens) = filler.fill(cache);
        if page_no >= page {
            let next = next_cursor.filter(|_| has_more(&this_page, &decisions));
            break (decisions, text, tokens, next, this_page);
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
                let tier = render::shown_tier(&chunks[i], decisions[i].tier, cache);
                (tier.name(), decisions[i].reason)
            };
            ItemMetric {
                id: chunks[i].id.clone(),
                rank: rank_of[i],
                score: chunks[i].scored.then_some(chunks[i].score),
                tier,
                reason,
            }
        })
        .collect();
    for &(i, into) in &absorbed {
        items.push(ItemMetric {
            id: with_text[i].id.clone(),
            rank: rank_of[into],
            score: with_text[i].scored.then_some(with_text[i].score),
            tier: "merged",
            reason: "same file, overlapping lines: merged into a better chunk",
        });
    }
    for c in &empty {
        items.push(ItemMetric {
            id: c.id.clone(),
            rank: 0,
            score: c.scored.then_some(c.score),
            tier: "empty",
            reason: "no text: skipped",
        });
    }
    // Ranked chunks by rank, then the skipped empty ones (rank 0: not ranked).
    items.sort_by_key(|m| (m.tier == "empty", m.rank));
    let mut metrics = Metrics {
        total_chunks: input.len(),
        metadata_only_chunks: ranked
            .iter()
            .filter(|&&i| {
                !on_earlier_page[i]
                    && render::shown_tier(&chunks[i], decisions[i].tier, cache) == Tier::Metadata
            })
            .count(),
        tokens_before_compression: before,
        tokens_after_compression: 0,
        tokens_saved: 0,
        compression_rate: String::new(),
        budget: settings.budget,
        tokenizer: settings.tokenizer.name().to_owned(),
        items,
        query_analysis,
    };
    metrics.record_output(tokens);
    let context = opts
        .ranking_context
        .then(|| ranking_context(chunks, &rank_of, &caps, asked.as_ref()));
    let mut shown = shown(chunks, &this_page, &decisions, &rank_of, settings, cache);
    if let Some(context) = context {
        let index_of: std::collections::HashMap<&str, usize> = chunks
            .iter()
            .enumerate()
            .map(|(i, c)| (c.id.as_str(), i))
            .collect();
        for s in &mut shown {
            if let Some(&i) = index_of.get(s.id.as_str()) {
                let (percentile, explanation, similar) = &context[i];
                s.rank_percentile = Some(*percentile);
                s.rank_explanation = Some(explanation.clone());
                s.similar_chunks = similar.clone();
            }
        }
    }
    Packed {
        text,
        tokens,
        metrics,
        next_cursor,
        shown,
    }
}

/// The page's chunks as data, in the text's order and then the left-out ones.
fn shown(
    chunks: &[Chunk],
    this_page: &[usize],
    decisions: &[fill::Decision],
    rank_of: &[usize],
    settings: &PackSettings,
    cache: &mut PreviewCache,
) -> Vec<Shown> {
    let on: Vec<usize> = this_page
        .iter()
        .copied()
        .filter(|&i| decisions[i].tier != Tier::Out)
        .collect();
    let mut order = fill::arrange(&on, settings.options.order);
    order.extend(
        this_page
            .iter()
            .filter(|&&i| decisions[i].tier == Tier::Out),
    );
    order
        .into_iter()
        .map(|i| {
            let c = &chunks[i];
            let tier = render::shown_tier(c, decisions[i].tier, cache);
            let block = render::block(c, rank_of[i], tier, cache);
            let tokens = block
                .as_deref()
                .map_or(0, |b| cache.count(settings.tokenizer, b));
            let text = match tier {
                Tier::Metadata => block,
                _ => render::shown_text(c, tier, cache),
            };
            let duplicate_of = match tier {
                Tier::Duplicate(rank) => rank_of
                    .iter()
                    .position(|&r| r == rank)
                    .map(|k| chunks[k].id.clone()),
                _ => None,
            };
            Shown {
                id: c.id.clone(),
                also: c.also.clone(),
                path: c.path.clone(),
                line_start: c.lines_known.then_some(c.line_start),
                line_end: c.lines_known.then_some(c.line_end()),
                rank: rank_of[i],
                score: c.scored.then_some(c.score),
                tier: tier.name(),
                reason: decisions[i].reason,
                tokens,
                text,
                duplicate_of,
                rank_percentile: None,
                rank_explanation: None,
                similar_chunks: Vec::new(),
            }
        })
        .collect()
}

/// Each chunk's ranking context (`[pack] ranking_context`, seed 004): its percentile in this
/// ranking, what the rank rests on, and the near-duplicates it stands for.
fn ranking_context(
    chunks: &[Chunk],
    rank_of: &[usize],
    caps: &[(Tier, &'static str)],
    asked: Option<&Asked>,
) -> Vec<(u8, String, Vec<String>)> {
    let n = chunks.len();
    let mut by_score: Vec<usize> = (0..n).filter(|&i| chunks[i].scored).collect();
    by_score.sort_by(|&a, &b| chunks[b].score.total_cmp(&chunks[a].score));
    let best = asked.map_or(0.0, |a| {
        a.relevance.scores.iter().copied().fold(0.0, f64::max)
    });
    (0..n)
        .map(|i| {
            let percentile = if n <= 1 {
                100
            } else {
                ((100 * (n - rank_of[i])) as f64 / (n - 1) as f64).round() as u8
            };
            let score = match by_score.iter().position(|&k| k == i) {
                Some(p) => format!(
                    "score {} ({} of {} by score)",
                    chunks[i].score,
                    ordinal(p + 1),
                    by_score.len()
                ),
                None => "no score".to_owned(),
            };
            let explanation = match asked {
                Some(a) if best > 0.0 && a.relevance.scores[i] > 0.0 => format!(
                    "relevance to the question {:.2} of the best; {score}",
                    a.relevance.scores[i] / best
                ),
                Some(_) => format!("none of the question's words; {score}"),
                None => score,
            };
            let similar = (0..n)
                .filter(|&j| caps[j].0 == Tier::Duplicate(rank_of[i]))
                .map(|j| chunks[j].id.clone())
                .collect();
            (percentile, explanation, similar)
        })
        .collect()
}

/// `1st`, `2nd`, `3rd`, `4th`, … `11th`, `21st`.
fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// Whether a next page can show more: this page left chunks out and showed at least one
/// (a page that shows nothing can't promise a next one: it would be this one again).
fn has_more(this_page: &[usize], decisions: &[fill::Decision]) -> bool {
    let left_out = this_page
        .iter()
        .filter(|&&i| decisions[i].tier == Tier::Out)
        .count();
    left_out > 0 && left_out < this_page.len()
}

/// Per chunk: the most detailed tier it may take, and why.
/// A query's ranking of the chunks: the relevance of each, and the key they are ranked by.
struct Asked {
    relevance: Relevance,
    key: Vec<f64>,
}

/// How much the query's relevance weighs against the upstream score in the ranking key.
const RELEVANCE_WEIGHT: f64 = 0.7;

/// Rank `chunks` for `query`: BM25 over each chunk's path, heading, extra fields and text
/// ([`crate::relevance`]), scaled to 0–1 by the best, blended with the upstream score scaled
/// to 0–1 over the scored chunks (an unscored chunk adds nothing from it).
fn asked(chunks: &[Chunk], query: &str) -> Asked {
    let docs: Vec<String> = chunks
        .iter()
        .map(|c| {
            let mut d = format!("{} {}", c.path, c.header.as_deref().unwrap_or(""));
            for (_, v) in &c.fields {
                d.push(' ');
                d.push_str(v);
            }
            d.push('\n');
            d.push_str(&c.text);
            d
        })
        .collect();
    let relevance = Relevance::score(query, &docs);
    let best = relevance.scores.iter().copied().fold(0.0, f64::max);
    let scored = chunks.iter().filter(|c| c.scored).map(|c| c.score);
    let (lo, hi) = scored.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), s| {
        (lo.min(s), hi.max(s))
    });
    let key = chunks
        .iter()
        .zip(&relevance.scores)
        .map(|(c, &r)| {
            let rel = if best > 0.0 { r / best } else { 0.0 };
            let up = if !c.scored {
                0.0
            } else if hi > lo {
                (c.score - lo) / (hi - lo)
            } else {
                1.0
            };
            RELEVANCE_WEIGHT * rel + (1.0 - RELEVANCE_WEIGHT) * up
        })
        .collect();
    Asked { relevance, key }
}

fn caps(
    chunks: &[Chunk],
    ranked: &[usize],
    rank_of: &[usize],
    relevant: &[bool],
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
            } else if c.scored && c.score < opts.score_threshold && !relevant[i] {
                // A chunk with the query's words is not demoted for its upstream score.
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
