//! Filling a token budget best-first, degrading a chunk one tier at a time before leaving
//! it out, and checking the final text's exact count.
//!
//! Why this shape: a packer that stops at the first chunk that doesn't fit drops the best
//! chunks behind it; one that only warns overshoots. Here every chunk, best first, takes the
//! most detailed tier that still fits, and later chunks are still tried. Block counts are
//! summed as an estimate while filling; then the whole text is counted, and while it is over
//! the budget the lowest-ranked shown chunk gives up a tier. So the output is within the
//! budget whatever the tokenizer does at block boundaries.

use super::Tier;
use super::cache::PreviewCache;
use super::chunks::Chunk;
use super::options::PackOrder;
use super::render;
use crate::tokens::Tokenizer;

const SEPARATOR: &str = "\n\n";

/// What the filler decides for one chunk.
pub struct Decision {
    pub tier: Tier,
    pub reason: &'static str,
}

pub struct Filler<'a> {
    pub chunks: &'a [Chunk],
    /// Chunk positions, best first.
    pub ranked: &'a [usize],
    /// Per chunk: the most detailed tier it may take, and why it is capped there.
    pub caps: Vec<(Tier, &'static str)>,
    pub tok: &'a dyn Tokenizer,
    pub budget: usize,
    pub order: PackOrder,
}

impl Filler<'_> {
    /// Each chunk's tier, and the final text (≤ budget tokens) with its exact count.
    pub fn fill(&self, cache: &mut PreviewCache) -> (Vec<Decision>, String, usize) {
        let n = self.chunks.len();
        let rank_of = {
            let mut r = vec![0; n];
            for (k, &i) in self.ranked.iter().enumerate() {
                r[i] = k + 1;
            }
            r
        };
        let mut decisions: Vec<Decision> = (0..n)
            .map(|_| Decision {
                tier: Tier::Out,
                reason: "budget",
            })
            .collect();
        let reserve = cache.count(self.tok, &footer(self.chunks, self.ranked, &decisions)) + 1;
        let mut used = 0usize;
        for &i in self.ranked {
            let (cap, capped_why) = self.caps[i];
            let mut tier = Some(cap);
            while let Some(t) = tier {
                if let Some(block) = render::block(&self.chunks[i], rank_of[i], t, cache) {
                    let cost = cache.count(self.tok, &block) + 1;
                    if used + cost + reserve <= self.budget {
                        used += cost;
                        let reason = if t == cap {
                            capped_why
                        } else {
                            "degraded to fit the budget"
                        };
                        decisions[i] = Decision { tier: t, reason };
                        break;
                    }
                }
                tier = t.next();
            }
        }
        // Exact check of the whole text; give up tiers from the bottom until it fits.
        loop {
            let text = self.assemble(&decisions, &rank_of, cache);
            let tokens = self.tok.count(&text);
            if tokens <= self.budget {
                return (decisions, text, tokens);
            }
            let Some(&worst) = self
                .ranked
                .iter()
                .rev()
                .find(|&&i| decisions[i].tier != Tier::Out)
            else {
                // Nothing shown and still over: the footer alone is too long for the budget.
                let short = format!("[left out] {} results", self.chunks.len());
                let text = if self.tok.count(&short) <= self.budget {
                    short
                } else {
                    String::new()
                };
                let tokens = self.tok.count(&text);
                return (decisions, text, tokens);
            };
            let d = &mut decisions[worst];
            d.tier = d.tier.next().unwrap_or(Tier::Out);
            d.reason = "degraded to fit the budget";
        }
    }

    /// The packed text: shown blocks in the configured order, then the left-out note.
    fn assemble(
        &self,
        decisions: &[Decision],
        rank_of: &[usize],
        cache: &mut PreviewCache,
    ) -> String {
        let shown: Vec<usize> = self
            .ranked
            .iter()
            .copied()
            .filter(|&i| decisions[i].tier != Tier::Out)
            .collect();
        let mut blocks: Vec<String> = arrange(&shown, self.order)
            .into_iter()
            .filter_map(|i| render::block(&self.chunks[i], rank_of[i], decisions[i].tier, cache))
            .collect();
        let note = footer(self.chunks, self.ranked, decisions);
        if !note.is_empty() {
            blocks.push(note);
        }
        blocks.join(SEPARATOR)
    }
}

/// `[left out] N more results (ids …): a larger budget shows them`, or nothing.
fn footer(chunks: &[Chunk], ranked: &[usize], decisions: &[Decision]) -> String {
    let out: Vec<&str> = ranked
        .iter()
        .filter(|&&i| decisions[i].tier == Tier::Out)
        .map(|&i| chunks[i].id.as_str())
        .collect();
    if out.is_empty() {
        return String::new();
    }
    const LISTED: usize = 10;
    let mut ids = out
        .iter()
        .take(LISTED)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if out.len() > LISTED {
        ids.push_str(", …");
    }
    format!(
        "[left out] {} more result{} (ids {ids}): a larger budget shows them",
        out.len(),
        if out.len() == 1 { "" } else { "s" }
    )
}

/// Shown chunks (best first) in output order: as ranked, or best at both ends.
fn arrange(shown: &[usize], order: PackOrder) -> Vec<usize> {
    match order {
        PackOrder::Score => shown.to_vec(),
        PackOrder::Edges => {
            let (mut front, mut back) = (Vec::new(), Vec::new());
            for (k, &i) in shown.iter().enumerate() {
                if k % 2 == 0 {
                    front.push(i)
                } else {
                    back.push(i)
                }
            }
            back.reverse();
            front.extend(back);
            front
        }
    }
}
