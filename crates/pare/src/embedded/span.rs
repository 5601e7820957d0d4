//! Where an embedded value may start, and what may stand around it.
//!
//! Why these bounds: a caption (`Contents of https://…:`, `Found 3 rows:`) or a trailer
//! (`(3 more results available)`) is a line or two; a longer text around a bracket is prose,
//! a log or code that happens to hold one, and shaping a part of it would change a document
//! the model may be reading as such. So:
//!
//! - the value starts in column 0 of one of the first `MAX_LINES` + 1 lines, after at most
//!   `MAX_CHARS` characters (indented brackets are inside code or a pretty-printed value);
//! - the rest of the value's last line is blank: `[1, 2];` or `{…}, "b"` is code;
//! - the trailer, trimmed, is at most `MAX_LINES` lines and `MAX_CHARS` characters, and
//!   none of its lines starts a list or object (JSON Lines, a second value);
//! - neither holds a Markdown code fence: a fenced block is a document labelled with its
//!   language, and a TOON rendering inside a ```` ```json ```` fence would mislabel it;
//! - the value is at least as long as caption and trailer together (trimmed): the value is
//!   what the text is about.
//!
//! ```
//! use pare::embedded::span::{candidates, frame};
//! let text = "Rows:\n[1, 2, 3]\n";
//! assert_eq!(candidates(text).collect::<Vec<_>>(), vec![6]);
//! assert_eq!(frame(text, 6, 15), Some(("Rows:\n", "\n")));
//! assert_eq!(frame("x = \n[1, 2];", 5, 11), None);
//! ```

/// The most lines a caption or trailer may have.
pub(crate) const MAX_LINES: usize = 3;
/// The most characters a caption or trailer may have (trimmed).
pub(crate) const MAX_CHARS: usize = 200;

/// Byte offsets of the line starts where a value may begin: column 0, `{` or `[`, within
/// the caption bounds.
pub fn candidates(text: &str) -> impl Iterator<Item = usize> + '_ {
    let starts = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1));
    starts
        .take(MAX_LINES + 1)
        .take_while(|&at| text[..at].chars().count() <= MAX_CHARS + MAX_LINES)
        .filter(|&at| matches!(text.as_bytes().get(at), Some(b'{' | b'[')))
}

/// The caption and trailer around a value at `start..end`, when they qualify.
pub fn frame(text: &str, start: usize, end: usize) -> Option<(&str, &str)> {
    let (prefix, suffix) = (&text[..start], &text[end..]);
    let line_rest = suffix.split('\n').next().unwrap_or("");
    if !line_rest.trim().is_empty() {
        return None;
    }
    let (head, tail) = (prefix.trim(), suffix.trim());
    let short = |s: &str| s.lines().count() <= MAX_LINES && s.chars().count() <= MAX_CHARS;
    let fenced = |s: &str| s.contains("```") || s.contains("~~~");
    let starts_value = tail
        .lines()
        .any(|l| l.starts_with('{') || l.starts_with('['));
    let small = head.len() + tail.len() <= end - start;
    (short(head) && short(tail) && !fenced(prefix) && !fenced(suffix) && !starts_value && small)
        .then_some((prefix, suffix))
}
