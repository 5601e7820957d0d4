//! Cutting text without a grammar (and over-long module-level code) by lines: blocks
//! separated by blank lines, consecutive blocks joined while they fit the cap, a block
//! longer than the cap cut into cap-sized parts. In Markdown a heading starts a new chunk,
//! so a section is not glued to the end of the one before.

use crate::pack::outline::content;

/// Row ranges `(start, end)` (0-based, inclusive) covering the non-blank rows of
/// `rows.start..rows.end` of `lines`, each at most `max_lines` long.
pub(super) fn blocks(
    lines: &[&str],
    rows: std::ops::Range<usize>,
    max_lines: usize,
    markdown: bool,
) -> Vec<(usize, usize)> {
    let max_lines = max_lines.max(1);
    let blank = |r: usize| content(lines[r]).trim().is_empty();
    let heading = |r: usize| markdown && content(lines[r]).starts_with('#');
    // Paragraphs: maximal runs of non-blank rows (a Markdown heading starts a new one).
    let mut paragraphs: Vec<(usize, usize)> = Vec::new();
    for r in rows {
        if blank(r) {
            continue;
        }
        match paragraphs.last_mut() {
            Some((_, end)) if *end + 1 == r && !heading(r) => *end = r,
            _ => paragraphs.push((r, r)),
        }
    }
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (start, end) in paragraphs {
        let joins = out
            .last()
            .is_some_and(|&(s, _)| end + 1 - s <= max_lines && !heading(start));
        if joins {
            out.last_mut().expect("checked").1 = end;
            continue;
        }
        let mut at = start;
        while at <= end {
            let stop = (at + max_lines - 1).min(end);
            out.push((at, stop));
            at = stop + 1;
        }
    }
    out
}
