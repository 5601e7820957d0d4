//! One chunk as text at one tier.
//!
//! ````text
//! [1] src/schedule/pod.py · score 0.8233 · id 1011 · pod.py > Timeout Token
//! ```python
//! def region_report(self, request, limit=20):
//! # … 12 lines omitted (L4–L15)
//!     return GraphTokenResponse(items=items, cursor=cursor)
//! ```
//! [metadata-only] lib/quota/report.rs · score 0.3548 · id 1020 · L1–59 · symbols: quota_report, Report · "Quota report."
//! [id-only] 1031 · score 0.31
//! ````

use std::fmt::Write as _;

use super::Tier;
use super::cache::PreviewCache;
use super::chunks::Chunk;
use super::outline::{self, Lang, PreviewOptions};

/// The preview's head and tail fractions at each preview step, most detail first.
pub(super) const PREVIEW_STEPS: [f64; 4] = [0.3, 0.15, 0.05, 0.0];

/// `chunk` at `tier` (`None` for [`Tier::Out`]). A preview that keeps every line is the
/// full text, without the ` · preview` note.
pub(super) fn block(
    chunk: &Chunk,
    rank: usize,
    tier: Tier,
    cache: &mut PreviewCache,
) -> Option<String> {
    match tier {
        Tier::Full => Some(code_block(chunk, rank, &chunk.text, "")),
        Tier::Preview(_) if shown_tier(chunk, tier, cache) == Tier::Metadata => {
            Some(metadata_line(chunk, cache))
        }
        Tier::Preview(step) => {
            let text = preview(chunk, step, cache);
            let note = if text == chunk.text {
                ""
            } else {
                " · preview"
            };
            Some(code_block(chunk, rank, &text, note))
        }
        Tier::Metadata => Some(metadata_line(chunk, cache)),
        Tier::IdOnly if chunk.from_source => Some(source_id_line(chunk, cache)),
        Tier::IdOnly => Some(format!("[id-only] {} · {}", ids(chunk), score(chunk))),
        Tier::Duplicate(of) if chunk.from_source => Some(format!(
            "[{rank}] {} · L{}–{} · near-duplicate of [{of}]",
            chunk.path,
            chunk.line_start,
            chunk.line_end()
        )),
        Tier::Duplicate(of) => Some(format!(
            "[{rank}] {} · {} · {} · near-duplicate of [{of}]",
            chunk.path,
            score(chunk),
            id_field(chunk)
        )),
        Tier::Out => None,
    }
}

/// The text a chunk shows at `tier`, without its heading: the full text or the preview;
/// `None` for the tiers that show no text.
pub(super) fn shown_text(chunk: &Chunk, tier: Tier, cache: &mut PreviewCache) -> Option<String> {
    match tier {
        Tier::Full => Some(chunk.text.clone()),
        Tier::Preview(step) => Some(preview(chunk, step, cache)),
        _ => None,
    }
}

/// The tier `chunk` is shown at when `tier` is chosen: a preview that keeps no line of the
/// chunk (only `… N lines omitted` markers) is shown as the metadata line instead, which
/// says more (symbols, the doc line) for fewer tokens.
pub(super) fn shown_tier(chunk: &Chunk, tier: Tier, cache: &mut PreviewCache) -> Tier {
    match tier {
        Tier::Preview(step) if preview(chunk, step, cache).is_empty() => Tier::Metadata,
        other => other,
    }
}

/// The preview at `step`; empty when it keeps no line of the chunk.
fn preview(chunk: &Chunk, step: u8, cache: &mut PreviewCache) -> String {
    let fraction = PREVIEW_STEPS[usize::from(step)];
    cache.preview(chunk, fraction, |c| {
        let opts = PreviewOptions {
            head: fraction,
            tail: fraction,
        };
        let p = outline::preview(&c.text, c.lang, c.line_start, &opts);
        if p.kept == 0 { String::new() } else { p.text }
    })
}

/// A chunk's heading: `[rank] path · score s · id x`, or for a chunk pare cut from a source
/// file (whose id is its path and lines) `[rank] path`.
fn heading(chunk: &Chunk, rank: usize) -> String {
    if chunk.from_source {
        format!("[{rank}] {}", chunk.path)
    } else {
        format!(
            "[{rank}] {} · {} · {}",
            chunk.path,
            score(chunk),
            id_field(chunk)
        )
    }
}

fn code_block(chunk: &Chunk, rank: usize, text: &str, note: &str) -> String {
    let mut out = heading(chunk, rank);
    if chunk.lines_known {
        let _ = write!(out, " · L{}–{}", chunk.line_start, chunk.line_end());
    }
    if let Some(h) = &chunk.header {
        let _ = write!(out, " · {h}");
    }
    push_fields(&mut out, chunk);
    out.push_str(note);
    out.push_str("\n```");
    out.push_str(fence_name(chunk.lang));
    out.push('\n');
    out.push_str(text.trim_end_matches('\n'));
    out.push_str("\n```");
    out
}

fn metadata_line(chunk: &Chunk, cache: &mut PreviewCache) -> String {
    let (symbols, doc) = cache.outline_facts(chunk);
    let mut out = if chunk.from_source {
        format!("[metadata-only] {}", chunk.path)
    } else {
        format!(
            "[metadata-only] {} · {} · {}",
            chunk.path,
            score(chunk),
            id_field(chunk)
        )
    };
    let _ = write!(out, " · L{}–{}", chunk.line_start, chunk.line_end());
    push_fields(&mut out, chunk);
    if !symbols.is_empty() {
        let _ = write!(out, " · symbols: {}", symbols.join(", "));
    }
    if let Some(doc) = doc {
        let _ = write!(out, " · \"{doc}\"");
    }
    out
}

/// A source chunk's id line: its place and the first names it defines (`[id-only]
/// src/lib.rs:L7-9 · add, sub +2`), so that even the least a chunk can show says what is
/// there — a tree under a tight budget is mostly these lines.
fn source_id_line(chunk: &Chunk, cache: &mut PreviewCache) -> String {
    const NAMES: usize = 3;
    let (symbols, _) = cache.outline_facts(chunk);
    let mut out = format!("[id-only] {}", ids(chunk));
    if !symbols.is_empty() {
        let shown: Vec<&str> = symbols.iter().take(NAMES).map(String::as_str).collect();
        let _ = write!(out, " · {}", shown.join(", "));
        if symbols.len() > NAMES {
            let _ = write!(out, " +{}", symbols.len() - NAMES);
        }
    }
    out
}

/// The chunk's id, and the ids merged into it: `1011` or `1011+1012+1013`.
fn ids(chunk: &Chunk) -> String {
    let mut out = chunk.id.clone();
    for id in &chunk.also {
        out.push('+');
        out.push_str(id);
    }
    out
}

fn id_field(chunk: &Chunk) -> String {
    let name = if chunk.also.is_empty() { "id" } else { "ids" };
    format!("{name} {}", ids(chunk))
}

/// ` · name value` for each of the policy's extra fields not said once for all.
fn push_fields(out: &mut String, chunk: &Chunk) {
    for (name, value) in &chunk.fields {
        let _ = write!(out, " · {name} {value}");
    }
}

/// The line of fields every chunk shares: `all results: score_type hybrid · …`.
pub(super) fn common_line(common: &[(String, String)]) -> String {
    if common.is_empty() {
        return String::new();
    }
    let fields: Vec<String> = common.iter().map(|(n, v)| format!("{n} {v}")).collect();
    format!("all results: {}", fields.join(" · "))
}

/// `score 0.82`, or `unscored` for a chunk the response gave no score (never `score 0`,
/// which would say it is irrelevant).
fn score(chunk: &Chunk) -> String {
    if !chunk.scored {
        return "unscored".into();
    }
    let s = format!("{:.4}", chunk.score);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() {
        "score 0".into()
    } else {
        format!("score {s}")
    }
}

/// The code fence's language tag: the language's name, none for unknown text.
fn fence_name(lang: Lang) -> &'static str {
    match lang {
        Lang::Other => "",
        known => known.name(),
    }
}
