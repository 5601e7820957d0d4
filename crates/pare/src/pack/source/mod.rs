//! Chunks cut from source files by pare itself, for `pare pack DIR` (no search engine, no
//! chunk JSON): the caller reads the files, this module cuts their texts, and the one
//! packer ([`crate::pack::pack`]) packs them under the budget. No I/O here.
//!
//! **Cutting.** Where a grammar exists (Rust, Python, TypeScript, TSX, JavaScript, Go,
//! Java) each top-level definition is a chunk with the doc comments, attributes and
//! decorators right above it; the module-level code between definitions (imports,
//! constants, statements) is grouped into one chunk per run. A container (impl, trait,
//! class, module, interface) longer than [`SourceOptions::max_item_lines`] is split into its
//! header and its members, each labelled `in impl Foo`. Other files (and parses that failed)
//! are cut by lines: blank-line-separated blocks joined up to
//! [`SourceOptions::max_block_lines`] (Markdown: a heading starts a new chunk). Every
//! non-blank line of a file is in exactly one chunk, verbatim.
//!
//! **Score.** There is no query, so no relevance: a fixed, documented ordering stands in
//! for it, so that a tight budget keeps the overview (with `breadth`, signatures of
//! everything first) and spends the rest on what a reader of an unfamiliar tree wants
//! first. See `score`: public definitions (and a file's head when it opens with its doc
//! comment or docstring) 0.8, other definitions 0.65, module-level code
//! 0.55, prose and unparsed text 0.5, test code 0.3 (under the default 0.4 threshold:
//! metadata only, its names still listed); a top-level README +0.15, an entry file
//! (`lib.rs`, `main.rs`, `__init__.py`, `__main__.py`, `index.ts`/`.js`, `main.go`) +0.05,
//! files under `examples/` or `benches/` −0.1, and −0.02 per directory level (at most
//! −0.1). Ties keep file order (paths sorted) and line order.
//!
//! ```
//! use pare::pack::source::{SourceFile, SourceOptions, chunk_files};
//! let files = [SourceFile {
//!     path: "src/lib.rs".into(),
//!     text: "use std::fmt;\n\n/// Adds.\n#[inline]\npub fn add(a: u8, b: u8) -> u8 {\n    a + b\n}\n\nfn helper() {}\n".into(),
//! }];
//! let chunks = chunk_files(&files, &SourceOptions::default());
//! let ids: Vec<&str> = chunks.iter().map(|c| c.id.as_str()).collect();
//! assert_eq!(ids, ["src/lib.rs:L1-1", "src/lib.rs:L3-7", "src/lib.rs:L9-9"]);
//! assert!(chunks[1].text.starts_with("/// Adds.\n#[inline]\npub fn add"));
//! assert!(chunks[1].score > chunks[2].score); // public before private
//! ```

mod items;
mod lines;
pub mod map;

use rayon::prelude::*;

use super::chunks::Chunk;
use super::outline::{self, Lang, content, split_lines};
use items::{Cutter, Piece, Role};

/// How source files are cut into chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceOptions {
    /// A container definition (impl, class, …) longer than this many lines is split into
    /// its header and members. Default 120.
    pub max_item_lines: usize,
    /// Chunks cut by lines (no grammar, or long module-level code) have at most this many
    /// lines. Default 60.
    pub max_block_lines: usize,
    /// Neighbouring definitions of one kind (same role, same enclosing item) whose rows
    /// together span at most this many lines are one chunk; 0 keeps every item apart.
    /// Default 24 (`MERGE_LINES`).
    pub merge_lines: usize,
}

impl Default for SourceOptions {
    fn default() -> Self {
        SourceOptions {
            max_item_lines: 120,
            max_block_lines: 60,
            merge_lines: MERGE_LINES,
        }
    }
}

/// One file's text and the path it is shown under (relative to the packed directory).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    /// The path shown; its extension picks the language, and it starts each chunk's id.
    pub path: String,
    /// The file's text, cut into chunks verbatim.
    pub text: String,
}

/// The chunks of `files`, in the files' order and each file's line order; chunk `index`es
/// count through all files. Files are cut in parallel; the result does not depend on it.
pub fn chunk_files(files: &[SourceFile], opts: &SourceOptions) -> Vec<Chunk> {
    let per_file: Vec<Vec<Chunk>> = files
        .par_iter()
        .map(|f| chunk_file(&f.path, &f.text, opts))
        .collect();
    let mut out: Vec<Chunk> = per_file.into_iter().flatten().collect();
    for (i, c) in out.iter_mut().enumerate() {
        c.index = i;
    }
    out
}

/// The chunks of one file (`index` 0-based within the file).
pub fn chunk_file(path: &str, text: &str, opts: &SourceOptions) -> Vec<Chunk> {
    let lang = Lang::from_path(path);
    let rows = split_lines(text);
    let test_file = is_test_path(path);
    let prose = matches!(lang, Lang::Markdown | Lang::Other);
    let pieces: Vec<Piece> = pieces(text, &rows, lang, opts)
        .into_iter()
        .enumerate()
        .map(|(index, p)| {
            let role = match p.role {
                _ if test_file => Role::Test,
                // A file's head that opens with its doc says what the file is for.
                Role::Module if index == 0 && opens_with_doc(content(rows[p.start]), lang) => {
                    Role::Public
                }
                role => role,
            };
            Piece { role, ..p }
        })
        .collect();
    let pieces = if prose {
        pieces
    } else {
        merge_small(pieces, opts.merge_lines)
    };
    pieces
        .into_iter()
        .enumerate()
        .map(|(index, p)| {
            let body: Vec<&str> = rows[p.start..=p.end].iter().map(|l| content(l)).collect();
            let role = p.role;
            let (start, end) = (p.start + 1, p.end + 1);
            Chunk {
                index,
                id: format!("{path}:L{start}-{end}"),
                also: Vec::new(),
                score: score(path, role, prose),
                scored: true,
                text: body.join("\n"),
                path: path.to_owned(),
                line_start: start,
                lines_known: true,
                header: p.context,
                lang,
                fields: Vec::new(),
                from_source: true,
            }
        })
        .collect()
}

/// The default [`SourceOptions::merge_lines`].
///
/// Why: a tree of many small items (one-line functions, constants, short methods) costs
/// a metadata line per item, and under a tight budget most items then drop to a bare id
/// that names nothing; a chunk of several small items lists all their names on one line.
/// Measured on serde_json at a quarter of Repomix's output (`bench/pack_tree.sh`):
/// signature recall 26.6% with one chunk per item, 96.0% merged.
pub(crate) const MERGE_LINES: usize = 24;

fn merge_small(pieces: Vec<Piece>, merge_lines: usize) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::with_capacity(pieces.len());
    for p in pieces {
        if let Some(last) = out.last_mut()
            && last.role == p.role
            && last.context == p.context
            && p.end + 1 - last.start <= merge_lines
        {
            last.end = p.end;
            continue;
        }
        out.push(p);
    }
    out
}

/// Row ranges of the file's chunks, in order, covering every non-blank row once, each
/// without blank rows at either end.
fn pieces(text: &str, rows: &[&str], lang: Lang, opts: &SourceOptions) -> Vec<Piece> {
    let tree = match lang {
        Lang::Markdown | Lang::Other => None,
        _ => outline::tree(text, lang),
    };
    let items = match &tree {
        Some(tree) => Cutter {
            lang,
            src: text.as_bytes(),
            max_item_lines: opts.max_item_lines,
            max_block_lines: opts.max_block_lines,
        }
        .pieces(tree.root_node(), None, 0),
        None => Vec::new(),
    };
    let blank = |r: usize| content(rows[r]).trim().is_empty();
    // Rows no item holds (no grammar, a parse that failed, stray tokens) are text, cut by
    // lines when longer than the block cap.
    let mut covered = vec![false; rows.len()];
    let mut all: Vec<Piece> = Vec::new();
    for p in items {
        let (start, end) = (p.start.min(rows.len()), (p.end + 1).min(rows.len()));
        if start >= end || covered[start..end].iter().any(|&c| c) {
            continue; // never two chunks for a row
        }
        covered[start..end].iter_mut().for_each(|c| *c = true);
        all.push(Piece { end: end - 1, ..p });
    }
    let mut r = 0;
    while r < rows.len() {
        if covered[r] || blank(r) {
            r += 1;
            continue;
        }
        let start = r;
        while r < rows.len() && !covered[r] {
            r += 1;
        }
        let markdown = lang == Lang::Markdown;
        for (s, e) in lines::blocks(rows, start..r, opts.max_block_lines, markdown) {
            all.push(Piece {
                start: s,
                end: e,
                role: Role::Module,
                context: None,
            });
        }
    }
    all.sort_by_key(|p| p.start);
    let mut out = Vec::new();
    for p in all {
        let (mut start, mut end) = (p.start, p.end);
        while start < end && blank(start) {
            start += 1;
        }
        while end > start && blank(end) {
            end -= 1;
        }
        if blank(start) {
            continue;
        }
        out.push(Piece { start, end, ..p });
    }
    out
}

/// A chunk's score: see the module doc. Rounded to 3 decimals, within 0.01..=1.
fn score(path: &str, role: Role, prose: bool) -> f64 {
    let base = match role {
        Role::Test => 0.3,
        _ if prose => 0.5,
        Role::Public => 0.8,
        Role::Private => 0.65,
        Role::Module => 0.55,
    };
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let file = parts.last().copied().unwrap_or("").to_ascii_lowercase();
    let dirs = &parts[..parts.len().saturating_sub(1)];
    let mut s = base;
    if dirs.is_empty() && file.starts_with("readme") {
        s += 0.15;
    }
    if matches!(
        file.as_str(),
        "lib.rs" | "main.rs" | "__init__.py" | "__main__.py" | "index.ts" | "index.js" | "main.go"
    ) {
        s += 0.05;
    }
    if dirs
        .iter()
        .any(|d| matches!(*d, "examples" | "example" | "benches"))
    {
        s -= 0.1;
    }
    s -= (0.02 * dirs.len() as f64).min(0.1);
    (s.clamp(0.01, 1.0) * 1000.0).round() / 1000.0
}

/// Whether a file's first line opens its documentation: a module doc comment or docstring.
fn opens_with_doc(first: &str, lang: Lang) -> bool {
    let t = first.trim_start();
    match lang {
        Lang::Rust => t.starts_with("//!") || t.starts_with("/*!"),
        Lang::Python => ["\"\"\"", "'''", "r\"\"\"", "r'''"]
            .iter()
            .any(|q| t.starts_with(q)),
        Lang::Markdown | Lang::Other => false,
        _ => t.starts_with("/**") || t.starts_with("//"),
    }
}

/// Test files by their path: under `tests/`, `test/`, `__tests__/`, or named `test_*.py`,
/// `*_test.py`, `*_test.go`, `*.test.ts`, `*.spec.js` and the like.
fn is_test_path(path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    let dirs = &parts[..parts.len().saturating_sub(1)];
    if dirs
        .iter()
        .any(|d| matches!(*d, "tests" | "test" | "__tests__"))
    {
        return true;
    }
    let file = parts.last().copied().unwrap_or("");
    let stem = file.split('.').next().unwrap_or("");
    stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_tests")
        || file.contains(".test.")
        || file.contains(".spec.")
}
