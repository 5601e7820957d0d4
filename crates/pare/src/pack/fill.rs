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
use super::render;
use crate::schema::pack::PackOrder;
use crate::tokens::Tokenizer;

const SEPARATOR: &str = "\n\n";

/// The reason of a chunk that shows less than its cap allows.
pub(super) const DEGRADED: &str = "degraded to fit the budget";

/// Renders the envelope line for the decisions and the whole text's token count.
pub(super) type EnvelopeFn<'a> = &'a dyn Fn(&[Decision], usize) -> String;

/// What the filler decides for one chunk.
pub(super) struct Decision {
    pub tier: Tier,
    pub reason: &'static str,
}

pub(super) struct Filler<'a> {
    pub chunks: &'a [Chunk],
    /// The positions of this page's chunks, best first.
    pub ranked: &'a [usize],
    /// Every chunk's rank in the whole response (1 = best).
    pub rank_of: &'a [usize],
    /// Per chunk: the most detailed tier it may take, and why it is capped there.
    pub caps: Vec<(Tier, &'static str)>,
    pub tok: &'a dyn Tokenizer,
    pub budget: usize,
    pub order: PackOrder,
    /// Reserve room for every chunk at a common floor tier before adding detail.
    pub breadth: bool,
    /// The line of fields said once for all chunks, or empty.
    pub common: String,
    /// The cursor of the next page, named in the left-out note.
    pub next_cursor: Option<String>,
    /// Name the cursor in the note (`pare pack`), or only say a next page shows the rest
    /// (a door whose own note names it).
    pub name_cursor: bool,
    /// The envelope line for given decisions and the whole text's token count.
    pub envelope: Option<EnvelopeFn<'a>>,
}

impl Filler<'_> {
    /// Each chunk's tier, and the final text (≤ budget tokens) with its exact count.
    pub(super) fn fill(&self, cache: &mut PreviewCache) -> (Vec<Decision>, String, usize) {
        let n = self.chunks.len();
        let mut decisions: Vec<Decision> = (0..n)
            .map(|_| Decision {
                tier: Tier::Out,
                reason: "budget",
            })
            .collect();
        let footer = cache.count(self.tok, &self.footer(&decisions)) + 1;
        let mut reserve = 0;
        if !self.common.is_empty() {
            reserve += cache.count(self.tok, &self.common) + 1;
        }
        if let Some(envelope) = self.envelope {
            reserve += self.tok.count(&envelope(&decisions, self.budget)) + 1;
        }
        // With `breadth`, every chunk gets the floor tier's room before any gets more. Then
        // no chunk is left out, so no room goes to the left-out note (a whole tree's ids
        // make a long one); without a floor, room for it is kept.
        let floor = if self.breadth {
            self.floor(reserve, cache)
        } else {
            None
        };
        if floor.is_none() {
            reserve += footer;
        }
        let floor_of = |i: usize| match floor {
            Some(f) => self.caps[i].0.at_most(f),
            None => Tier::Out,
        };
        let mut floor_cost = vec![0usize; n];
        for &i in self.ranked {
            floor_cost[i] = self.cost(i, floor_of(i), cache);
        }
        let mut used: usize = floor_cost.iter().sum();
        // Then detail best first: each chunk takes the most detailed tier that still fits.
        for &i in self.ranked {
            let (cap, capped_why) = self.caps[i];
            let mut tier = Some(cap);
            while let Some(t) = tier {
                let cost = self.cost(i, t, cache);
                if t == floor_of(i) || used - floor_cost[i] + cost + reserve <= self.budget {
                    used = used - floor_cost[i] + cost;
                    let reason = if t == cap { capped_why } else { DEGRADED };
                    decisions[i] = Decision { tier: t, reason };
                    break;
                }
                tier = t.next();
            }
        }
        // Exact check of the whole text; give up tiers from the bottom until it fits.
        loop {
            if let Some((text, tokens)) = self.exact(&decisions, cache) {
                return (decisions, text, tokens);
            }
            let Some(&worst) = self
                .ranked
                .iter()
                .rev()
                .find(|&&i| decisions[i].tier != Tier::Out)
            else {
                // Nothing shown and still over: the notes alone are too long for the budget.
                let short = format!("[left out] {} results\n", self.ranked.len());
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
            d.reason = DEGRADED;
        }
    }

    /// Tokens of chunk `i`'s block at `tier` and its separator (0 when left out).
    fn cost(&self, i: usize, tier: Tier, cache: &mut PreviewCache) -> usize {
        match render::block(&self.chunks[i], self.rank_of[i], tier, cache) {
            Some(block) => cache.count(self.tok, &block) + 1,
            None => 0,
        }
    }

    /// The most detailed tier all of the page's chunks can show at once — signatures only,
    /// metadata, or ids — if any: so a long best chunk doesn't crowd out every later one.
    fn floor(&self, reserve: usize, cache: &mut PreviewCache) -> Option<Tier> {
        let signatures_only = Tier::Preview((render::PREVIEW_STEPS.len() - 1) as u8);
        [signatures_only, Tier::Metadata, Tier::IdOnly]
            .into_iter()
            .find(|&floor| {
                let total: usize = self
                    .ranked
                    .iter()
                    .map(|&i| self.cost(i, self.caps[i].0.at_most(floor), cache))
                    .sum();
                total + reserve <= self.budget
            })
    }

    /// The whole text for `decisions` and its exact count, if it is within the budget. The
    /// envelope states the count of the text it is part of, so its number is settled by
    /// recounting until it repeats.
    fn exact(&self, decisions: &[Decision], cache: &mut PreviewCache) -> Option<(String, usize)> {
        let mut body = self.assemble(decisions, cache);
        if !body.is_empty() {
            body.push('\n');
        }
        let Some(envelope) = self.envelope else {
            let tokens = self.tok.count(&body);
            return (tokens <= self.budget).then_some((body, tokens));
        };
        let mut guess = self.tok.count(&body);
        for _ in 0..8 {
            let text = format!("{}\n{body}", envelope(decisions, guess));
            let tokens = self.tok.count(&text);
            if tokens == guess {
                return (tokens <= self.budget).then_some((text, tokens));
            }
            if tokens > self.budget && guess > self.budget {
                return None;
            }
            guess = tokens;
        }
        None
    }

    /// The packed text: shown blocks in the configured order, then the left-out note.
    fn assemble(&self, decisions: &[Decision], cache: &mut PreviewCache) -> String {
        let rank_of = self.rank_of;
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
        let note = self.footer(decisions);
        if !note.is_empty() {
            blocks.push(note);
        }
        if !self.common.is_empty() && !blocks.is_empty() {
            blocks.insert(0, self.common.clone());
        }
        blocks.join(SEPARATOR)
    }

    /// `[left out] N more results (ids …): …`, or nothing.
    /// A page that shows no chunk names no next page: it would be this one again.
    fn footer(&self, decisions: &[Decision]) -> String {
        let progress = self.ranked.iter().any(|&i| decisions[i].tier != Tier::Out);
        footer(
            self.chunks,
            self.ranked,
            decisions,
            self.next_cursor.as_deref().filter(|_| progress),
            self.name_cursor,
        )
    }
}

/// `[left out] N more results (ids …); next page: --cursor …`, or nothing.
fn footer(
    chunks: &[Chunk],
    ranked: &[usize],
    decisions: &[Decision],
    next_cursor: Option<&str>,
    name_cursor: bool,
) -> String {
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
    let plural = if out.len() == 1 { "" } else { "s" };
    match next_cursor {
        Some(cursor) if name_cursor => format!(
            "[left out] {} more result{plural} (ids {ids}); next page: --cursor {cursor}",
            out.len()
        ),
        Some(_) => format!(
            "[left out] {} more result{plural} (ids {ids}): on the next page",
            out.len()
        ),
        None => format!(
            "[left out] {} more result{plural} (ids {ids}): a larger budget shows {}",
            out.len(),
            if out.len() == 1 { "it" } else { "them" }
        ),
    }
}

/// Shown chunks (best first) in output order: as ranked, best at both ends, or as given.
pub(super) fn arrange(shown: &[usize], order: PackOrder) -> Vec<usize> {
    match order {
        PackOrder::Score => shown.to_vec(),
        PackOrder::Input => {
            let mut v = shown.to_vec();
            v.sort_unstable();
            v
        }
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
