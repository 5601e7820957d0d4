//! Structure-preserving previews of one code or docs chunk.
//!
//! A search hit or code chunk that does not fit its token budget is cut down, not chopped:
//! [`preview`] keeps the first and last lines (fractions of the chunk, 30% / 30% by
//! default), every *important* line in between, and replaces each run of dropped lines by
//! one marker in the language's comment syntax, e.g. `// … 41 lines omitted (L12–L52)`
//! (a run that is shorter than its marker, such as blank lines or a lone `}`, stays).
//! Kept lines are byte-identical to the chunk's lines, so a reader can still quote them.
//!
//! Important lines come from [`outline`]:
//!
//! * Rust, Python, TypeScript, TSX, JavaScript, Go and Java are parsed with tree-sitter
//!   (which tolerates chunks that start or end mid-function): signatures of functions,
//!   methods, classes, structs, enums, traits, impls, interfaces, type aliases, modules and
//!   exports (multi-line signatures whole, up to `MAX_SIGNATURE_LINES`), their
//!   decorators/attributes, and the summary paragraph of their doc comments (up to
//!   `MAX_DOC_LINES`).
//! * Markdown: headings and the first line of every paragraph.
//! * Anything else, and parses that broke down (or ran over an operation budget: some
//!   grammars loop forever on some garbage): a keyword scan. A line is important if,
//!   after indentation and modifiers (`export`, `pub`, `async`, `public`, …), it starts with
//!   `export function class interface type const let var enum namespace` as a whole word;
//!   for Rust, Python, Go and Java the scan uses that language's definition keywords.
//!
//! The packer renders a chunk at decreasing fractions (0.3 → 0.15 → 0.05 → 0) until it fits;
//! a [`Previewer`] parses once and renders each of them in one pass over the lines.
//!
//! ```
//! use pare::pack::outline::{Lang, PreviewOptions, preview};
//!
//! let code = "/// Adds.\nfn add(a: u64, b: u64) -> u64 {\n    let sum = a.wrapping_add(b);\n    \
//!             debug_assert!(sum >= a);\n    sum\n}\n";
//! let p = preview(code, Lang::Rust, 10, &PreviewOptions { head: 0.0, tail: 0.0 });
//! assert_eq!(p.text, "/// Adds.\nfn add(a: u64, b: u64) -> u64 {\n// … 4 lines omitted (L12–L15)\n");
//! assert_eq!((p.kept, p.omitted), (2, 4));
//! ```

mod keyword;
pub(crate) mod lang;
mod markdown;
mod syntax;

pub(crate) use syntax::{is_attached, last_row, tree};

/// Longest signature kept whole (decorators and doc comments not counted); longer ones keep
/// their first lines. Protects the budget from generated code with huge parameter lists.
pub(crate) const MAX_SIGNATURE_LINES: usize = 12;

/// Lines kept of a doc comment: its summary paragraph (up to the first blank doc line), at
/// most this many lines. The full text of long docs is what the head/tail fractions are for.
pub(crate) const MAX_DOC_LINES: usize = 4;

/// The language of a chunk: which parser finds its structure and how markers are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lang {
    /// Rust (`.rs`): tree-sitter, `//` markers.
    Rust,
    /// Python (`.py`, `.pyi`): tree-sitter, `#` markers.
    Python,
    /// TypeScript (`.ts`, `.mts`, `.cts`, so also `.d.ts`): tree-sitter, `//` markers.
    TypeScript,
    /// TypeScript with JSX (`.tsx`): tree-sitter, `//` markers.
    Tsx,
    /// JavaScript (`.js`, `.jsx`, `.mjs`, `.cjs`): tree-sitter, `//` markers.
    JavaScript,
    /// Go (`.go`): tree-sitter, `//` markers.
    Go,
    /// Java (`.java`): tree-sitter, `//` markers.
    Java,
    /// Markdown (`.md`, `.markdown`): headings and paragraph first lines, `<!-- … -->` markers.
    Markdown,
    /// Any other text: keyword fallback, `//` markers.
    Other,
}

impl Lang {
    /// Every language, for callers that iterate (tests, listings).
    pub const ALL: [Lang; 9] = [
        Lang::Rust,
        Lang::Python,
        Lang::TypeScript,
        Lang::Tsx,
        Lang::JavaScript,
        Lang::Go,
        Lang::Java,
        Lang::Markdown,
        Lang::Other,
    ];

    /// The language of a file by its extension (case-insensitive): `rs`; `py pyi`;
    /// `ts mts cts` (so also `.d.ts`); `tsx`; `js jsx mjs cjs`; `go`; `java`;
    /// `md markdown`. Anything else is [`Lang::Other`].
    pub fn from_path(path: &str) -> Lang {
        let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
        let Some((stem, ext)) = file.rsplit_once('.') else {
            return Lang::Other;
        };
        if stem.is_empty() {
            return Lang::Other; // a dotfile such as `.rs` has no extension
        }
        match ext.to_ascii_lowercase().as_str() {
            "rs" => Lang::Rust,
            "py" | "pyi" => Lang::Python,
            "ts" | "mts" | "cts" => Lang::TypeScript,
            "tsx" => Lang::Tsx,
            "js" | "jsx" | "mjs" | "cjs" => Lang::JavaScript,
            "go" => Lang::Go,
            "java" => Lang::Java,
            "md" | "markdown" => Lang::Markdown,
            _ => Lang::Other,
        }
    }

    /// A lowercase name: `rust python typescript tsx javascript go java markdown other`.
    pub fn name(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::Python => "python",
            Lang::TypeScript => "typescript",
            Lang::Tsx => "tsx",
            Lang::JavaScript => "javascript",
            Lang::Go => "go",
            Lang::Java => "java",
            Lang::Markdown => "markdown",
            Lang::Other => "other",
        }
    }

    /// The marker for `omitted` lines `first..=last` (file line numbers), without
    /// indentation or line ending: `// … 41 lines omitted (L12–L52)`, `# …` for Python,
    /// `<!-- … -->` for Markdown. A single line reads `… 1 line omitted (L12)`.
    pub fn gap_marker(self, omitted: usize, first: usize, last: usize) -> String {
        let what = if omitted == 1 && first == last {
            format!("… 1 line omitted (L{first})")
        } else {
            format!("… {omitted} lines omitted (L{first}–L{last})")
        };
        match self {
            Lang::Python => format!("# {what}"),
            Lang::Markdown => format!("<!-- {what} -->"),
            _ => format!("// {what}"),
        }
    }
}

/// A named definition found in a chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    /// The definition's name as written (a Markdown heading's text).
    pub name: String,
    /// `function method class struct enum union interface type trait impl module const
    /// static variable macro record export heading`.
    pub kind: &'static str,
    /// 1-based line within the chunk (the line holding the name).
    pub line: usize,
}

/// What [`outline`] found in a chunk.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outline {
    /// In line order.
    pub symbols: Vec<Symbol>,
    /// 1-based, ascending line numbers that a preview always keeps: signatures (whole
    /// multi-line ones), decorators/attributes and doc summaries; Markdown headings and
    /// paragraph first lines; keyword-matched lines in the fallback.
    pub important: Vec<usize>,
    /// The first doc comment's (or docstring's, or Markdown heading's) first line of text,
    /// without comment syntax.
    pub first_doc: Option<String>,
}

/// Finds the structure of `text`. Never panics; fragments are fine.
pub fn outline(text: &str, lang: Lang) -> Outline {
    analyze(&split_lines(text), text, lang).into_outline()
}

/// How much of a chunk's head and tail a preview keeps, as fractions of its lines (clamped
/// to `0..=1`; NaN counts as 0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PreviewOptions {
    /// Share of the lines kept from the start (rounded down). Default: 0.3.
    pub head: f64,
    /// Share of the lines kept from the end (rounded down). Default: 0.3.
    pub tail: f64,
}

impl Default for PreviewOptions {
    fn default() -> Self {
        PreviewOptions {
            head: 0.3,
            tail: 0.3,
        }
    }
}

/// A rendered preview.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preview {
    /// Kept lines verbatim, each dropped run as one marker line.
    pub text: String,
    /// Lines of the chunk kept verbatim.
    pub kept: usize,
    /// Lines of the chunk replaced by markers.
    pub omitted: usize,
}

/// Previews `text` once; see [`Previewer::render`]. `first_line` is the chunk's first line
/// number in its file (1 if unknown; 0 is read as 1), used in markers.
pub fn preview(text: &str, lang: Lang, first_line: usize, opts: &PreviewOptions) -> Preview {
    Previewer::new(text, lang, first_line).render(opts)
}

/// A chunk parsed once, rendered at as many fractions as the packer wants.
#[derive(Debug, Clone)]
pub struct Previewer<'a> {
    text: &'a str,
    lang: Lang,
    first_line: usize,
    /// The chunk's lines, each with its own line ending (`\n`, `\r\n` or none for the last).
    lines: Vec<&'a str>,
    important: Vec<bool>,
    outline: Outline,
}

impl<'a> Previewer<'a> {
    /// Parses `text` once. `first_line` is its first line number in the file, used in markers
    /// (1 if unknown; 0 is read as 1).
    pub fn new(text: &'a str, lang: Lang, first_line: usize) -> Self {
        let lines = split_lines(text);
        let analysis = analyze(&lines, text, lang);
        let important = analysis.important.clone();
        Previewer {
            text,
            lang,
            first_line: first_line.max(1),
            lines,
            important,
            outline: analysis.into_outline(),
        }
    }

    /// What [`outline`] finds in the chunk, from the one parse.
    pub fn outline(&self) -> &Outline {
        &self.outline
    }

    /// Number of lines in the chunk.
    pub fn line_count(&self) -> usize {
        self.lines.len()
    }

    /// Keeps the head and tail fractions and the important lines, in order and verbatim;
    /// each maximal run of dropped lines becomes one marker line, indented like the line
    /// after it (before it, at the end), ending like the last line it replaces. A run is
    /// kept verbatim instead when the marker would be longer (blank lines, a lone `}`). If
    /// nothing is dropped the text comes back unchanged.
    pub fn render(&self, opts: &PreviewOptions) -> Preview {
        let n = self.lines.len();
        let head = fraction_of(opts.head, n);
        let tail = fraction_of(opts.tail, n);
        let mut keep: Vec<bool> = (0..n)
            .map(|i| i < head || i + tail >= n || self.important[i])
            .collect();

        // Decide the markers, and keep runs that are shorter than their marker.
        let mut gaps = Vec::new(); // (start, end exclusive, marker with indent)
        let mut i = 0;
        while i < n {
            if keep[i] {
                i += 1;
                continue;
            }
            let start = i;
            while i < n && !keep[i] {
                i += 1;
            }
            let marker = self.marker(&keep, start, i);
            let bytes: usize = self.lines[start..i].iter().map(|l| content(l).len()).sum();
            if bytes + (i - start - 1) <= marker.len() {
                keep[start..i].iter_mut().for_each(|k| *k = true);
            } else {
                gaps.push((start, i, marker));
            }
        }
        if gaps.is_empty() {
            return Preview {
                text: self.text.to_string(),
                kept: n,
                omitted: 0,
            };
        }

        let mut out = String::with_capacity(self.text.len() / 2);
        let mut kept = 0;
        let mut next_gap = gaps.iter().peekable();
        let mut i = 0;
        while i < n {
            if let Some((start, end, marker)) = next_gap.peek()
                && *start == i
            {
                out.push_str(marker);
                out.push_str(ending(self.lines[end - 1]));
                i = *end;
                next_gap.next();
                continue;
            }
            out.push_str(self.lines[i]);
            kept += 1;
            i += 1;
        }
        Preview {
            text: out,
            kept,
            omitted: n - kept,
        }
    }

    /// The marker for dropped lines `start..end` (0-based), indented like its neighbour.
    fn marker(&self, keep: &[bool], start: usize, end: usize) -> String {
        let non_blank = |i: &usize| keep[*i] && !content(self.lines[*i]).trim().is_empty();
        let neighbour = (end..self.lines.len())
            .find(non_blank)
            .or_else(|| (0..start).rev().find(non_blank));
        let indent = neighbour.map_or("", |j| indentation(self.lines[j]));
        let first = self.first_line.saturating_add(start);
        let last = self.first_line.saturating_add(end - 1);
        format!("{indent}{}", self.lang.gap_marker(end - start, first, last))
    }
}

/// `frac` of `n` lines, rounded down (with slack for binary fractions: 0.15 × 20 is 3).
fn fraction_of(frac: f64, n: usize) -> usize {
    if frac.is_nan() || frac <= 0.0 {
        return 0;
    }
    let k = (frac.min(1.0) * n as f64 + 1e-9).floor();
    (k as usize).min(n)
}

/// Lines with their endings, split at `\n` only (as tree-sitter counts rows).
pub(crate) fn split_lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// A line without its ending.
pub(crate) fn content(line: &str) -> &str {
    let line = line.strip_suffix('\n').unwrap_or(line);
    line.strip_suffix('\r').unwrap_or(line)
}

fn ending(line: &str) -> &str {
    &line[content(line).len()..]
}

fn indentation(line: &str) -> &str {
    let c = content(line);
    &c[..c.len() - c.trim_start_matches([' ', '\t']).len()]
}

/// What the analyzers produce; `important` has one flag per line.
#[derive(Debug, Default)]
struct Analysis {
    important: Vec<bool>,
    symbols: Vec<Symbol>,
    /// (0-based line, text) of each doc found; the earliest becomes `first_doc`.
    docs: Vec<(usize, String)>,
}

impl Analysis {
    fn new(n: usize) -> Self {
        Analysis {
            important: vec![false; n],
            ..Analysis::default()
        }
    }

    /// Marks 0-based rows `from..=to`, ignoring rows past the chunk.
    fn mark(&mut self, from: usize, to: usize) {
        let n = self.important.len();
        if from < n && from <= to {
            self.important[from..=to.min(n - 1)]
                .iter_mut()
                .for_each(|f| *f = true);
        }
    }

    fn symbol(&mut self, name: &str, kind: &'static str, row: usize) {
        let name = clean_name(name);
        if !name.is_empty() {
            self.symbols.push(Symbol {
                name,
                kind,
                line: row + 1,
            });
        }
    }

    fn into_outline(mut self) -> Outline {
        self.symbols
            .sort_by(|a, b| (a.line, &a.name, a.kind).cmp(&(b.line, &b.name, b.kind)));
        self.symbols
            .dedup_by(|a, b| a.line == b.line && a.name == b.name);
        self.docs.sort();
        Outline {
            symbols: self.symbols,
            important: (0..self.important.len())
                .filter(|&i| self.important[i])
                .map(|i| i + 1)
                .collect(),
            first_doc: self.docs.into_iter().next().map(|(_, d)| d),
        }
    }
}

fn analyze(lines: &[&str], text: &str, lang: Lang) -> Analysis {
    match lang {
        Lang::Markdown => markdown::analyze(lines),
        Lang::Other => keyword::analyze(lines, keyword::Keywords::Seed),
        _ => syntax::analyze(lines, text, lang),
    }
}

/// Whitespace collapsed, at most 100 characters: names of impls and C-style generics can
/// span lines.
fn clean_name(name: &str) -> String {
    let mut out = String::new();
    for word in name.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    match out.char_indices().nth(100) {
        Some((cut, _)) => {
            out.truncate(cut);
            out.push('…');
            out
        }
        None => out,
    }
}

/// The text of a doc or comment line without comment syntax or docstring quotes.
fn doc_text(line: &str) -> &str {
    let mut s = content(line).trim();
    for prefix in [
        "///", "//!", "//", "/**", "/*!", "/*", "<!--", "*", "#", "--",
    ] {
        if let Some(rest) = s.strip_prefix(prefix) {
            s = rest;
            break;
        }
    }
    // Python docstrings: optional r/u/b prefix, then triple or single quotes.
    let unprefixed = s.trim_start_matches(['r', 'R', 'u', 'U', 'b', 'B']);
    for q in ["\"\"\"", "'''"] {
        if let Some(rest) = unprefixed.strip_prefix(q) {
            s = rest;
        }
    }
    for suffix in ["*/", "-->", "\"\"\"", "'''"] {
        if let Some(rest) = s.trim_end().strip_suffix(suffix) {
            s = rest;
        }
    }
    s.trim()
}

/// The summary rows of a doc block (0-based rows, ascending): from the top until a blank doc
/// line after some text, at most [`MAX_DOC_LINES`]. Returns the rows and the first text line
/// that is not a `@tag`.
fn doc_summary(lines: &[&str], rows: &[usize]) -> (Vec<usize>, Option<String>) {
    let mut kept = Vec::new();
    let mut seen_text = false;
    let mut first = None;
    for &row in rows {
        let Some(line) = lines.get(row) else { break };
        let text = doc_text(line);
        if text.is_empty() && seen_text {
            break;
        }
        if kept.len() == MAX_DOC_LINES {
            break;
        }
        kept.push(row);
        if !text.is_empty() {
            seen_text = true;
            if first.is_none() && !text.starts_with('@') {
                first = Some(text.to_string());
            }
        }
    }
    (kept, first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn langs_by_path() {
        assert_eq!(Lang::from_path("src/lib.rs"), Lang::Rust);
        assert_eq!(Lang::from_path("a/b/types.d.ts"), Lang::TypeScript);
        assert_eq!(Lang::from_path("App.TSX"), Lang::Tsx);
        assert_eq!(Lang::from_path("x.pyi"), Lang::Python);
        assert_eq!(Lang::from_path("C:\\x\\y.cjs"), Lang::JavaScript);
        assert_eq!(Lang::from_path("README.markdown"), Lang::Markdown);
        assert_eq!(Lang::from_path(".rs"), Lang::Other);
        assert_eq!(Lang::from_path("Makefile"), Lang::Other);
        assert_eq!(Lang::from_path("dir.rs/file"), Lang::Other);
        for l in Lang::ALL {
            assert!(!l.name().is_empty());
        }
    }

    #[test]
    fn markers() {
        assert_eq!(
            Lang::Rust.gap_marker(41, 12, 52),
            "// … 41 lines omitted (L12–L52)"
        );
        assert_eq!(Lang::Python.gap_marker(1, 7, 7), "# … 1 line omitted (L7)");
        assert_eq!(
            Lang::Markdown.gap_marker(3, 1, 3),
            "<!-- … 3 lines omitted (L1–L3) -->"
        );
        assert_eq!(
            Lang::Other.gap_marker(2, 5, 6),
            "// … 2 lines omitted (L5–L6)"
        );
    }

    #[test]
    fn fractions() {
        assert_eq!(fraction_of(0.3, 10), 3);
        assert_eq!(fraction_of(0.15, 20), 3);
        assert_eq!(fraction_of(0.05, 60), 3);
        assert_eq!(fraction_of(f64::NAN, 10), 0);
        assert_eq!(fraction_of(-1.0, 10), 0);
        assert_eq!(fraction_of(7.0, 10), 10);
    }

    #[test]
    fn doc_texts() {
        assert_eq!(doc_text("  /// Returns x.\n"), "Returns x.");
        assert_eq!(doc_text(" * Adds things.\r\n"), "Adds things.");
        assert_eq!(doc_text("/**"), "");
        assert_eq!(doc_text("    r\"\"\"Doc.\"\"\""), "Doc.");
        assert_eq!(doc_text("# comment"), "comment");
    }

    #[test]
    fn unchanged_when_nothing_dropped() {
        let text = "a\r\nb\n\nc";
        let p = preview(text, Lang::Other, 1, &PreviewOptions::default());
        assert_eq!(p.text, text);
        let p = preview("", Lang::Rust, 1, &PreviewOptions::default());
        assert_eq!((p.text.as_str(), p.kept, p.omitted), ("", 0, 0));
    }

    #[test]
    fn markers_take_line_endings() {
        let text = "const a = 1;\r\nx1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1\r\nx2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2\r\nconst b = 2;";
        let p = preview(
            text,
            Lang::Other,
            3,
            &PreviewOptions {
                head: 0.0,
                tail: 0.0,
            },
        );
        assert_eq!(
            p.text,
            "const a = 1;\r\n// … 2 lines omitted (L4–L5)\r\nconst b = 2;"
        );
        let text = "const a = 1;\nx1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1\n    x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2";
        let p = preview(
            text,
            Lang::Other,
            1,
            &PreviewOptions {
                head: 0.0,
                tail: 0.0,
            },
        );
        assert_eq!(p.text, "const a = 1;\n// … 2 lines omitted (L2–L3)");
    }
}
