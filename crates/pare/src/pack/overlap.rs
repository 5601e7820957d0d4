//! Chunks of the same file whose line ranges overlap are merged into one chunk.
//!
//! Why: a retriever often returns neighbouring windows of one file (lines 1–40 and 30–70).
//! Shown apart, the shared lines are paid for twice and the reader must stitch them; merged,
//! the file reads once as lines 1–70. Chunks merge only when the response says where they
//! start and their shared lines are identical; two different versions of a file stay apart
//! (and [`super::dedup`] may still show the later one as a reference).
//!
//! ```
//! use pare::pack::chunks::Chunk;
//! use pare::pack::outline::Lang;
//! use pare::pack::overlap::merge;
//! let chunk = |id: &str, score, start, text: &str| Chunk {
//!     index: 0, id: id.into(), also: vec![], score, scored: true, text: text.into(), path: "a.py".into(),
//!     line_start: start, lines_known: true, header: None, lang: Lang::Python, fields: vec![], from_source: false,
//! };
//! let (merged, absorbed) = merge(vec![chunk("a", 0.9, 1, "x = 1\ny = 2"), chunk("b", 0.5, 2, "y = 2\nz = 3")]);
//! assert_eq!(merged.len(), 1);
//! assert_eq!(merged[0].text, "x = 1\ny = 2\nz = 3");
//! assert_eq!(merged[0].also, ["b"]);
//! assert_eq!(absorbed, [(1, 0)]);
//! ```

use std::collections::BTreeMap;

use super::chunks::Chunk;

/// The chunks after merging (in input order of each group's best chunk), and for each
/// absorbed chunk its input position and the position of the merged chunk that holds it.
pub fn merge(chunks: Vec<Chunk>) -> (Vec<Chunk>, Vec<(usize, usize)>) {
    // Input positions of mergeable chunks, by path, in line order.
    let mut by_path: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, c) in chunks.iter().enumerate() {
        if c.lines_known && !c.path.is_empty() {
            by_path.entry(c.path.as_str()).or_default().push(i);
        }
    }
    // `into[i]`: the input position whose group chunk `i` joins (itself when it leads one).
    let mut into: Vec<usize> = (0..chunks.len()).collect();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for positions in by_path.values_mut() {
        positions.sort_by_key(|&i| (chunks[i].line_start, i));
        let mut run: Vec<usize> = Vec::new();
        let mut run_end = 0;
        for &i in positions.iter() {
            let c = &chunks[i];
            let joins = !run.is_empty()
                && c.line_start <= run_end
                && run.iter().all(|&k| agree(&chunks[k], c));
            if !joins {
                if run.len() > 1 {
                    groups.push(std::mem::take(&mut run));
                }
                run.clear();
                run_end = 0;
            }
            run.push(i);
            run_end = run_end.max(c.line_end());
        }
        if run.len() > 1 {
            groups.push(run);
        }
    }
    if groups.is_empty() {
        return (chunks, Vec::new());
    }
    let mut merged_text: BTreeMap<usize, Chunk> = BTreeMap::new();
    for group in &groups {
        let lead = *group
            .iter()
            .max_by(|&&a, &&b| chunks[a].score.total_cmp(&chunks[b].score).then(b.cmp(&a)))
            .expect("a group has members");
        merged_text.insert(lead, joined(&chunks, group, lead));
        for &i in group {
            into[i] = lead;
        }
    }
    let mut out = Vec::new();
    let mut position_of = vec![usize::MAX; chunks.len()];
    let mut absorbed = Vec::new();
    for (i, chunk) in chunks.into_iter().enumerate() {
        if into[i] == i {
            position_of[i] = out.len();
            out.push(merged_text.remove(&i).unwrap_or(chunk));
        } else {
            absorbed.push(i);
        }
    }
    let absorbed = absorbed
        .into_iter()
        .map(|i| (i, position_of[into[i]]))
        .collect();
    (out, absorbed)
}

/// Whether the lines `a` and `b` share are the same text.
fn agree(a: &Chunk, b: &Chunk) -> bool {
    let from = a.line_start.max(b.line_start);
    let to = a.line_end().min(b.line_end());
    if from > to {
        return true;
    }
    fn slice(c: &Chunk, from: usize, to: usize) -> Vec<&str> {
        c.text
            .lines()
            .skip(from - c.line_start)
            .take(to - from + 1)
            .collect()
    }
    slice(a, from, to) == slice(b, from, to)
}

/// One chunk spanning `group` (in line order), with the lead's id, score and header.
fn joined(chunks: &[Chunk], group: &[usize], lead: usize) -> Chunk {
    let mut text = String::new();
    let mut next_line = chunks[group[0]].line_start;
    for &i in group {
        let c = &chunks[i];
        for line in c.text.lines().skip(next_line.saturating_sub(c.line_start)) {
            if next_line > chunks[group[0]].line_start {
                text.push('\n');
            }
            text.push_str(line);
            next_line += 1;
        }
    }
    let mut others: Vec<usize> = group.iter().copied().filter(|&i| i != lead).collect();
    others.sort_by(|&a, &b| chunks[b].score.total_cmp(&chunks[a].score).then(a.cmp(&b)));
    Chunk {
        text,
        line_start: chunks[group[0]].line_start,
        also: others.iter().map(|&i| chunks[i].id.clone()).collect(),
        ..chunks[lead].clone()
    }
}
