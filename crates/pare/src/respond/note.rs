//! The one line that follows a page or a lowered result: where the reader is and how to go
//! on, in the words of the door the reader came through.
//!
//! Why the engine writes it: the budget holds for the page *and* its note, so the engine must
//! know the note's cost when it cuts pages. Page boundaries depend on that cost, so it is
//! the most any door's note can cost (`reserve`), not the asking door's: the same input,
//! policy, level, budget and format give the same page texts through every door.
//!
//! ```
//! use pare::respond::note::{Hint, page_note};
//! let hint = Hint::Tool { more: "pare_more", detail: "detail" };
//! assert_eq!(
//!     page_note(&hint, 1, 9, Some("pkfraYerpU"), false),
//!     r#"pare: page 1 of 9. Next page: call pare_more with {"cursor":"pkfraYerpU"}."#
//! );
//! assert_eq!(page_note(&Hint::Flags, 9, 9, None, false), "pare: page 9 of 9 (last).");
//! ```

use crate::manifest::{Kind, Manifest};
use crate::tokens::Tokenizer;

use super::cursor;

/// How a reader asks for the next page or more detail, per door.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hint<'a> {
    /// An MCP tool (`more`, called with `{"cursor": …}`) and the argument naming the level.
    Tool {
        /// Name of the tool that returns the next page.
        more: &'a str,
        /// Name of the argument that picks the level.
        detail: &'a str,
    },
    /// The CLI's `--cursor` and `--level`.
    Flags,
    /// HTTP query parameters.
    Query {
        /// Name of the query parameter that takes the cursor.
        cursor: &'a str,
        /// Name of the query parameter that picks the level.
        detail: &'a str,
    },
}

/// The door-independent hints, for [`reserve`].
const BUILTIN: [Hint<'static>; 3] = [
    Hint::Tool {
        more: "pare_more",
        detail: "pare_detail",
    },
    Hint::Flags,
    Hint::Query {
        cursor: "pare_cursor",
        detail: "pare_detail",
    },
];

/// The note after page `page` of `pages`; `next` is the next page's cursor; `cut_inside`:
/// the page ends inside an item or a line that the next page continues.
pub fn page_note(
    hint: &Hint,
    page: usize,
    pages: usize,
    next: Option<&str>,
    cut_inside: bool,
) -> String {
    let Some(c) = next else {
        return format!("pare: page {page} of {pages} (last).");
    };
    let cut = if cut_inside {
        ", cut inside an item that goes on"
    } else {
        ""
    };
    let how = match hint {
        Hint::Tool { more, .. } => format!("call {more} with {{\"cursor\":\"{c}\"}}"),
        Hint::Flags => format!("--cursor {c}"),
        Hint::Query { cursor, .. } => format!("{cursor}={c}"),
    };
    format!("pare: page {page} of {pages}{cut}. Next page: {how}.")
}

/// The note of a result shown at a lower level than asked, to fit `budget` tokens.
pub(crate) fn lowered_note(hint: &Hint, shown: &str, next: &str, budget: usize) -> String {
    let ask = match hint {
        Hint::Tool { detail, .. } => format!("call again with {detail} \"{next}\""),
        Hint::Flags => format!("run again with --level {next}"),
        Hint::Query { detail, .. } => format!("ask again with {detail}={next}"),
    };
    format!("pare: shown at detail `{shown}` to fit {budget} tokens; {ask} for more (in pages).")
}

/// The most a page note can cost by `fit`, for every door's hint and this request's own.
///
/// A cursor is random-looking base62, so how it tokenizes is not known in advance: it is
/// counted as one token per character (a token holds at least one character), plus two for
/// merges across its quotes, and as its full length for chars/4.
pub(crate) fn reserve(fit: &dyn Tokenizer, own: &Hint) -> usize {
    let longest = "Z".repeat(cursor::MAX_LEN);
    let max = cursor::MAX_PAGES;
    BUILTIN
        .iter()
        .chain([own])
        .map(|h| {
            let by_chars = fit.count(&page_note(h, max, max, Some(&longest), true));
            let by_tokens =
                fit.count(&page_note(h, max, max, Some(""), true)) + cursor::MAX_LEN + 2;
            by_chars.max(by_tokens)
        })
        .max()
        .unwrap_or(0)
}

/// The most a lowered note can cost by `fit`, with the level names of this policy, for
/// every door's hint and this request's own (so every door lowers to the same level).
pub(crate) fn lowered_reserve(
    fit: &dyn Tokenizer,
    own: &Hint,
    levels: &[String],
    budget: usize,
) -> usize {
    let longest = levels
        .iter()
        .max_by_key(|l| l.len())
        .map_or("", String::as_str);
    BUILTIN
        .iter()
        .chain([own])
        .map(|h| fit.count(&lowered_note(h, longest, longest, budget)))
        .max()
        .unwrap_or(0)
}

/// The line that says the policy removed members at this level, so that a reader does not
/// take an absent member for an empty one (or for one the data never had), nor a merged
/// item's one value of a field for all of its parts' (`merge`'s lossy rules); `None` when
/// `prune`, `drop` and `keep` removed nothing and no merged value was collapsed. It comes first in a page's note, on every
/// page, and has no door's words, so it costs every door the same.
///
/// ```
/// use pare::manifest::{Entry, Kind, Manifest};
/// use pare::respond::note::removed_line;
/// let pruned = Entry { op: "prune", kind: Kind::Empty, path: "$.owner".into(), count: 1 };
/// let manifest = Manifest { entries: vec![pruned] };
/// assert_eq!(
///     removed_line(&manifest),
///     Some(r#"pare: absent members may have been null, "", [] or {} (pruned)."#)
/// );
/// assert_eq!(removed_line(&Manifest::default()), None);
/// let kept_first = Entry { op: "merge", kind: Kind::Collapsed, path: "$.s[*].shot".into(), count: 2 };
/// assert_eq!(
///     removed_line(&Manifest { entries: vec![kept_first] }),
///     Some("pare: some fields of a merged item show one of its parts' values (collapsed).")
/// );
/// ```
pub fn removed_line(manifest: &Manifest) -> Option<&'static str> {
    let any = |f: &dyn Fn(&crate::manifest::Entry) -> bool| manifest.entries.iter().any(f);
    let pruned = any(&|e| e.op == "prune" && e.kind == Kind::Empty);
    // `drop` and `keep` record an empty member they remove as `empty`, the rest `stripped`.
    let dropped = any(&|e| matches!(e.op, "drop" | "keep"));
    let collapsed = any(&|e| e.kind == Kind::Collapsed);
    let index = usize::from(pruned) | usize::from(dropped) << 1 | usize::from(collapsed) << 2;
    index.checked_sub(1).map(|i| REMOVED_LINES[i])
}

macro_rules! removed_lines {
    ($pruned:literal, $dropped:literal, $both:literal, $collapsed:literal) => {
        [
            concat!("pare: ", $pruned, "."),
            concat!("pare: ", $dropped, "."),
            concat!("pare: ", $both, "."),
            concat!("pare: ", $collapsed, "."),
            concat!("pare: ", $pruned, "; ", $collapsed, "."),
            concat!("pare: ", $dropped, "; ", $collapsed, "."),
            concat!("pare: ", $both, "; ", $collapsed, "."),
        ]
    };
}

/// What [`removed_line`] can say, by (pruned, dropped, collapsed) as bits 0, 1, 2, less one.
const REMOVED_LINES: [&str; 7] = removed_lines!(
    r#"absent members may have been null, "", [] or {} (pruned)"#,
    "some members were left out by the policy (dropped)",
    r#"absent members may have been null, "", [] or {} (pruned), or left out by the policy (dropped)"#,
    "some fields of a merged item show one of its parts' values (collapsed)"
);

/// A note without its [`removed_line`], for a door that reports removals its own way (the
/// CLI's stderr summary); `None` when nothing else is left.
///
/// ```
/// use pare::respond::note::without_removed_line;
/// let note = "pare: some members were left out by the policy (dropped).\npare: page 2 of 2 (last).";
/// assert_eq!(without_removed_line(note), Some("pare: page 2 of 2 (last)."));
/// assert_eq!(without_removed_line("pare: some members were left out by the policy (dropped)."), None);
/// assert_eq!(without_removed_line("pare: page 2 of 2 (last)."), Some("pare: page 2 of 2 (last)."));
/// ```
pub fn without_removed_line(note: &str) -> Option<&str> {
    let (first, rest) = note.split_once('\n').unwrap_or((note, ""));
    let rest = if REMOVED_LINES.contains(&first) {
        rest
    } else {
        note
    };
    (!rest.is_empty()).then_some(rest)
}

/// The line that says which fields a projection showed (`fields`, [`crate::project`]), and
/// how to ask for others, in the door's words.
///
/// ```
/// use pare::respond::note::{Hint, fields_line};
/// let fields = ["id".to_owned(), "user.login".to_owned()];
/// assert_eq!(
///     fields_line(&Hint::Flags, &fields),
///     "pare: showing only the fields id, user.login; --fields to change."
/// );
/// ```
pub fn fields_line(hint: &Hint, fields: &[String]) -> String {
    let how = match hint {
        Hint::Tool { .. } => "the `fields` argument",
        Hint::Flags => "--fields",
        Hint::Query { .. } => "pare_fields",
    };
    format!(
        "pare: showing only the fields {}; {how} to change.",
        fields.join(", ")
    )
}

/// What [`fields_line`] may add to a note by `fit` (the line break after it included), in
/// the costliest door's words: page ends do not depend on the door.
pub(crate) fn fields_cost(fit: &dyn Tokenizer, fields: &[String]) -> usize {
    BUILTIN
        .iter()
        .map(|hint| fit.count(&format!("{}\n", fields_line(hint, fields))))
        .max()
        .unwrap_or(0)
}

/// What [`removed_line`] adds to a note by `fit`: the line and the line break after it.
pub(crate) fn removed_cost(fit: &dyn Tokenizer, line: Option<&str>) -> usize {
    line.map_or(0, |l| fit.count(&format!("{l}\n")))
}

/// A note of the removed line (first) and another note, either of which may be absent.
pub fn join(removed: Option<&str>, other: Option<String>) -> Option<String> {
    match (removed, other) {
        (Some(r), Some(o)) => Some(format!("{r}\n{o}")),
        (Some(r), None) => Some(r.to_owned()),
        (None, o) => o,
    }
}
