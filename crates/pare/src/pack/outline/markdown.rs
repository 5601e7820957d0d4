//! Markdown outline: headings (ATX `# …` and setext underlines) and the first line of every
//! paragraph, list, table or quote block, so a preview reads like a table of contents with
//! topic sentences. Fenced code blocks are skipped: their lines are never important, and a
//! `#` inside them is not a heading.
//!
//! ```
//! use pare::pack::outline::{Lang, outline};
//!
//! let md = "# Setup\n\nInstall it. Then run it.\nMore text.\n\n```sh\n# a comment\n```\n";
//! let o = outline(md, Lang::Markdown);
//! assert_eq!(o.important, [1, 3]);
//! assert_eq!(o.first_doc.as_deref(), Some("Setup"));
//! ```

use super::{Analysis, content};

pub(super) fn analyze(lines: &[&str]) -> Analysis {
    let mut a = Analysis::new(lines.len());
    let mut fence: Option<(char, usize)> = None; // open fence: its character and length
    let mut block_start = true; // the next non-blank line opens a block
    let mut first_sentence: Option<(usize, String)> = None;
    for (row, line) in lines.iter().enumerate() {
        let line = content(line);
        let (indent, body) = split_indent(line);
        if let Some((ch, len)) = fence {
            if indent <= 3
                && fence_len(body, ch) >= len
                && body.trim_start_matches(ch).trim().is_empty()
            {
                fence = None;
                block_start = true;
            }
            continue;
        }
        if indent <= 3 {
            for ch in ['`', '~'] {
                let len = fence_len(body, ch);
                if len >= 3 && !(ch == '`' && body[len..].contains('`')) {
                    fence = Some((ch, len));
                }
            }
            if fence.is_some() {
                continue;
            }
        }
        if body.trim().is_empty() {
            block_start = true;
            continue;
        }
        if let Some(text) = atx_heading(indent, body) {
            a.mark(row, row);
            a.symbol(text, "heading", row);
            a.docs.push((row, text.to_string()));
            block_start = true;
            continue;
        }
        // Setext: a paragraph line underlined by `===` or `---`.
        if !block_start && row > 0 && indent <= 3 && is_setext_underline(body) {
            let title = content(lines[row - 1]).trim();
            a.mark(row - 1, row);
            a.symbol(title, "heading", row - 1);
            a.docs.push((row - 1, title.to_string()));
            block_start = true;
            continue;
        }
        if block_start {
            a.mark(row, row);
            if first_sentence.is_none() {
                first_sentence = Some((row, sentence(body.trim()).to_string()));
            }
        }
        block_start = false;
    }
    // The first heading names the chunk; without one, its first sentence does.
    if a.docs.is_empty()
        && let Some(doc) = first_sentence
    {
        a.docs.push(doc);
    }
    a
}

fn split_indent(line: &str) -> (usize, &str) {
    let body = line.trim_start_matches([' ', '\t']);
    let width = line[..line.len() - body.len()]
        .chars()
        .map(|c| if c == '\t' { 4 } else { 1 })
        .sum();
    (width, body)
}

fn fence_len(body: &str, ch: char) -> usize {
    body.chars().take_while(|&c| c == ch).count()
}

fn atx_heading(indent: usize, body: &str) -> Option<&str> {
    if indent > 3 {
        return None;
    }
    let hashes = body.chars().take_while(|&c| c == '#').count();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let rest = &body[hashes..];
    if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
        return None; // `#hashtag`
    }
    let text = rest.trim().trim_end_matches('#').trim_end();
    Some(text)
}

fn is_setext_underline(body: &str) -> bool {
    let t = body.trim_end();
    !t.is_empty() && (t.chars().all(|c| c == '=') || t.chars().all(|c| c == '-'))
}

/// The first sentence of a line: up to the first `.`, `!` or `?` followed by a space.
fn sentence(line: &str) -> &str {
    let line = line.trim_start_matches(['>', '-', '*', '+', ' ']);
    let bytes = line.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if matches!(b, b'.' | b'!' | b'?') && bytes.get(i + 1) == Some(&b' ') {
            return &line[..=i];
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::outline::split_lines;

    #[test]
    fn headings_paragraphs_fences() {
        let text = "# Title\n\nFirst para. More.\nstill para\n\n```sh\n# not a heading\n\nfoo\n```\n\nSetext\n------\n- item one\n- item two\n#tag\n";
        let a = analyze(&split_lines(text));
        let rows: Vec<usize> = (0..a.important.len()).filter(|&i| a.important[i]).collect();
        assert_eq!(rows, vec![0, 2, 11, 12, 13]);
        let names: Vec<&str> = a.symbols.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["Title", "Setext"]);
        assert_eq!(a.docs[0], (0, "Title".to_string()));
    }

    #[test]
    fn first_sentence_without_heading() {
        let a = analyze(&split_lines("continued text\n\nIt works. Really!\n"));
        assert_eq!(a.docs, vec![(0, "continued text".to_string())]);
        assert_eq!(sentence("- It works. Really!"), "It works.");
    }
}
