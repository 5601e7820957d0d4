//! Outlines from tree-sitter syntax trees (Rust, Python, TypeScript, TSX, JavaScript, Go,
//! Java).
//!
//! One preorder walk visits every node; definition nodes contribute their signature rows
//! (from the first decorator/`export`/attribute to the line where the body opens), the
//! summary of the doc comment right above them (or of a Python docstring), and a symbol.
//! Tree-sitter recovers from fragments, so definitions are found even inside `ERROR`
//! nodes. When the tree has errors the language's keyword scan is added on top (a chunk cut
//! inside a docstring or block comment inverts what the parser thinks is code); when the
//! grammar finds nothing in an erroneous tree, the keyword scan is all there is.
//!
//! ```
//! use pare::pack::outline::{Lang, outline};
//!
//! // A chunk cut mid-method: the stray `}` is an error, the rest still parses.
//! let chunk = "        total\n    }\n\n    /// Resets.\n    #[inline]\n    pub fn reset(&mut self) {\n        self.total = 0;\n    }\n";
//! let o = outline(chunk, Lang::Rust);
//! assert_eq!(o.symbols[0].name, "reset");
//! assert_eq!(o.important, [4, 5, 6]);
//! assert_eq!(o.first_doc.as_deref(), Some("Resets."));
//! ```

use std::cell::RefCell;
use std::ops::ControlFlow;

use tree_sitter::{Language, Node, ParseOptions, ParseState, Parser, Tree};

use super::keyword::{self, Keywords};
use super::lang::docstring;
use super::{Analysis, Lang, MAX_SIGNATURE_LINES, content, doc_summary};

fn grammar(lang: Lang) -> Option<Language> {
    Some(match lang {
        Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
        Lang::Python => tree_sitter_python::LANGUAGE.into(),
        Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
        Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
        Lang::Go => tree_sitter_go::LANGUAGE.into(),
        Lang::Java => tree_sitter_java::LANGUAGE.into(),
        Lang::Markdown | Lang::Other => return None,
    })
}

fn keywords(lang: Lang) -> Keywords {
    match lang {
        Lang::Rust => Keywords::Rust,
        Lang::Python => Keywords::Python,
        Lang::Go => Keywords::Go,
        Lang::Java => Keywords::Java,
        Lang::TypeScript | Lang::Tsx | Lang::JavaScript => Keywords::Script,
        Lang::Markdown | Lang::Other => Keywords::Seed,
    }
}

/// When the grammar gives nothing, the keyword list is all there is: the seed's for JS/TS.
fn fallback(lang: Lang) -> Keywords {
    match keywords(lang) {
        Keywords::Script => Keywords::Seed,
        kw => kw,
    }
}

thread_local! {
    // Parsers keep allocations between parses; one per thread, language swapped per call.
    static PARSER: RefCell<Parser> = RefCell::new(Parser::new());
}

/// Progress checks (one per ~100 parser operations) a parse may take: a fixed allowance
/// plus one per [`PARSE_BYTES_PER_CHECK`] bytes. Real code needs about one per 25 bytes;
/// some inputs send a grammar into an endless loop (tree-sitter-typescript#323: the TSX
/// parser on `<a {{b:>c:d(e f)`) that would eat memory until the process dies, at ~0.2 ms
/// per check. Counting operations rather than time keeps the outcome deterministic. A
/// cancelled parse falls back to the keyword scan.
const PARSE_CHECKS_BASE: usize = 500;
const PARSE_BYTES_PER_CHECK: usize = 2;

fn parse(text: &str, language: &Language) -> Option<Tree> {
    let budget = PARSE_CHECKS_BASE.saturating_add(text.len() / PARSE_BYTES_PER_CHECK);
    let run = |p: &mut Parser| {
        p.set_language(language).ok()?;
        let bytes = text.as_bytes();
        let mut checks = 0usize;
        let mut progress = |_: &ParseState| {
            checks += 1;
            if checks > budget {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        let options = ParseOptions::new().progress_callback(&mut progress);
        let tree = p.parse_with_options(
            &mut |i, _| bytes.get(i..).unwrap_or_default(),
            None,
            Some(options),
        );
        if tree.is_none() {
            p.reset(); // a cancelled parse would otherwise resume on the next call
        }
        tree
    };
    PARSER
        .try_with(|cell| match cell.try_borrow_mut() {
            Ok(mut p) => run(&mut p),
            Err(_) => run(&mut Parser::new()),
        })
        .unwrap_or_else(|_| run(&mut Parser::new()))
}

/// The syntax tree of `text`, if `lang` has a grammar and the parse finished within its
/// operation budget (for [`crate::pack::source`]'s item chunks).
pub(crate) fn tree(text: &str, lang: Lang) -> Option<Tree> {
    parse(text, &grammar(lang)?)
}

pub(super) fn analyze(lines: &[&str], text: &str, lang: Lang) -> Analysis {
    let tree = grammar(lang).and_then(|g| parse(text, &g));
    let Some(tree) = tree else {
        return keyword::analyze(lines, fallback(lang)); // parse cancelled
    };
    let root = tree.root_node();
    let mut walker = Walker {
        lang,
        src: text.as_bytes(),
        lines,
        a: Analysis::new(lines.len()),
        ancestors: Vec::new(),
        runs: Vec::new(),
    };
    walker.walk(root);
    let mut a = walker.a;
    if root.has_error() {
        if a.symbols.is_empty() && !a.important.contains(&true) {
            keyword::scan(lines, fallback(lang), &mut a);
        } else {
            // The tree's docs are better than the scan's first comment, when there are any.
            let tree_docs = a.docs.len();
            let tree_symbols = a.symbols.len();
            keyword::scan(lines, keywords(lang), &mut a);
            // Where the tree named something, its name is the better one.
            let named: Vec<usize> = a.symbols[..tree_symbols].iter().map(|s| s.line).collect();
            let scanned = a.symbols.split_off(tree_symbols);
            a.symbols
                .extend(scanned.into_iter().filter(|s| !named.contains(&s.line)));
            if tree_docs > 0 {
                a.docs.truncate(tree_docs);
            }
        }
    }
    a
}

pub(super) struct Walker<'s, 't> {
    pub(super) lang: Lang,
    src: &'s [u8],
    lines: &'s [&'s str],
    a: Analysis,
    /// Ancestors of the visited node, root first. Kept here because `Node::parent` and
    /// `Node::prev_sibling` search down from the root: quadratic on deeply nested input.
    ancestors: Vec<Node<'t>>,
    /// Per depth (the ancestors' and the node's): the run of comments, attributes and
    /// decorators right before the node at that depth, nearest last.
    runs: Vec<Vec<Node<'t>>>,
}

/// The last row a node covers: one ending at column 0 (after its newline) ends the row
/// before.
pub(crate) fn last_row(node: Node) -> usize {
    let (start, end) = (node.start_position(), node.end_position());
    if end.column == 0 && end.row > start.row {
        end.row - 1
    } else {
        end.row
    }
}

fn is_comment(kind: &str) -> bool {
    matches!(kind, "comment" | "line_comment" | "block_comment")
}

pub(crate) fn is_attached(kind: &str) -> bool {
    is_comment(kind)
        || matches!(
            kind,
            "attribute_item" | "decorator" | "annotation" | "marker_annotation"
        )
}

impl<'s, 't> Walker<'s, 't> {
    fn walk(&mut self, root: Node<'t>) {
        // Iterative preorder: deeply nested input must not overflow the stack.
        let mut cursor = root.walk();
        self.runs.push(Vec::new());
        loop {
            let node = cursor.node();
            self.visit(node);
            if cursor.goto_first_child() {
                self.ancestors.push(node);
                self.runs.push(Vec::new());
                continue;
            }
            loop {
                let left = cursor.node();
                if cursor.goto_next_sibling() {
                    if let Some(run) = self.runs.last_mut() {
                        if is_attached(left.kind()) {
                            run.push(left);
                        } else {
                            run.clear();
                        }
                    }
                    break;
                }
                if !cursor.goto_parent() {
                    return;
                }
                self.ancestors.pop();
                self.runs.pop();
            }
        }
    }

    /// The `up`-th ancestor of the visited node (0: its parent).
    pub(super) fn ancestor(&self, up: usize) -> Option<Node<'t>> {
        let n = self.ancestors.len();
        n.checked_sub(up + 1).map(|i| self.ancestors[i])
    }

    /// The depth of the node a definition's decorators, `export` and `declare` belong to:
    /// comments above it are its siblings. The visited node is at depth `ancestors.len()`.
    fn outer_depth(&self, node: Node) -> usize {
        let mut depth = self.ancestors.len();
        // A JS/TS binding's statement (`const f = …`), not the declarator.
        if node.kind() == "variable_declarator" && depth > 0 {
            depth -= 1;
        }
        while depth > 0
            && matches!(
                self.ancestors[depth - 1].kind(),
                "export_statement" | "decorated_definition" | "ambient_declaration"
            )
        {
            depth -= 1;
        }
        depth
    }

    pub(super) fn text(&self, node: Node) -> &'s str {
        std::str::from_utf8(&self.src[node.byte_range()]).unwrap_or("")
    }

    pub(super) fn field_text(&self, node: Node, field: &str) -> Option<String> {
        node.child_by_field_name(field)
            .map(|n| self.text(n).to_string())
    }

    fn visit(&mut self, node: Node<'t>) {
        if !node.is_named() {
            return; // keyword tokens share kinds with nodes (`module`)
        }
        if is_comment(node.kind()) {
            self.module_doc(node);
            return;
        }
        if self.lang == Lang::Python
            && node.kind() == "module"
            && let Some(string) = docstring(node)
        {
            self.docstring(string);
            return;
        }
        let Some(def) = self.classify(node) else {
            return;
        };
        let depth = self.outer_depth(node);
        let outer = self.ancestors.get(depth).copied().unwrap_or(node);
        let start = outer.start_position().row;
        let sig_end = def
            .sig_end
            .max(start)
            .min(node.start_position().row + MAX_SIGNATURE_LINES - 1)
            .max(node.start_position().row);
        self.a.mark(start, sig_end);
        if let Some(name) = &def.name {
            self.a.symbol(name, def.kind, def.name_row);
        }
        self.preceding(outer, depth);
        if let Some(string) = def.docstring {
            self.docstring(string);
        }
    }

    /// Comments and attributes directly above a definition (no blank line between): all
    /// attribute/decorator rows, and the summary of the doc comment block.
    fn preceding(&mut self, outer: Node, depth: usize) {
        let mut top = outer.start_position().row;
        let mut comment_rows = Vec::new();
        let run = self.runs.get(depth).cloned().unwrap_or_default();
        for s in run.into_iter().rev() {
            if last_row(s) + 1 < top || !self.starts_line(s) {
                break;
            }
            if !is_comment(s.kind()) {
                self.a.mark(s.start_position().row, last_row(s));
            } else if self.is_doc_comment(s) {
                comment_rows.extend(s.start_position().row..=last_row(s));
            } else {
                break;
            }
            top = s.start_position().row;
        }
        // Error recovery can swallow comments into an `ERROR` node (a chunk starting
        // mid-function): keep going line by line over what looks like doc comments.
        while top > 0 && self.looks_like_doc(content(self.lines[top - 1])) {
            top -= 1;
            comment_rows.push(top);
        }
        comment_rows.sort_unstable();
        comment_rows.dedup();
        self.summary(&comment_rows);
    }

    fn looks_like_doc(&self, line: &str) -> bool {
        keyword::doc_line(line, keywords(self.lang))
    }

    fn summary(&mut self, rows: &[usize]) {
        let (kept, first) = doc_summary(self.lines, rows);
        for &row in &kept {
            self.a.mark(row, row);
        }
        if let (Some(&row), Some(first)) = (kept.first(), first) {
            self.a.docs.push((row, first));
        }
    }

    fn docstring(&mut self, string: Node) {
        let rows: Vec<usize> = (string.start_position().row..=last_row(string)).collect();
        self.summary(&rows);
    }

    /// Rust `//!` and `/*!` inner docs document the enclosing module.
    fn module_doc(&mut self, node: Node) {
        if self.lang != Lang::Rust || !self.starts_line(node) {
            return;
        }
        let text = self.text(node);
        if !(text.starts_with("//!") || text.starts_with("/*!")) {
            return;
        }
        // A run of `//!` lines is one doc: only its first line starts the summary.
        let inner_line = |row: usize| {
            self.lines
                .get(row)
                .is_some_and(|l| content(l).trim_start().starts_with("//!"))
        };
        let start = node.start_position().row;
        if text.starts_with("//!") && start > 0 && inner_line(start - 1) {
            return;
        }
        let mut end = last_row(node);
        if text.starts_with("//!") {
            while inner_line(end + 1) {
                end += 1;
            }
        }
        let rows: Vec<usize> = (start..=end).collect();
        self.summary(&rows);
    }

    /// Only whitespace before the node on its first line (not a trailing comment).
    fn starts_line(&self, node: Node) -> bool {
        let p = node.start_position();
        self.lines
            .get(p.row)
            .and_then(|l| content(l).get(..p.column))
            .is_some_and(|before| before.trim().is_empty())
    }

    /// Rust documents with `///` and `/** */` only (plain `//` above an item is often
    /// commented-out code); elsewhere any comment right above a definition documents it.
    fn is_doc_comment(&self, node: Node) -> bool {
        if self.lang != Lang::Rust {
            return true;
        }
        let t = self.text(node);
        (t.starts_with("///") && !t.starts_with("////"))
            || (t.starts_with("/**") && !t.starts_with("/***") && !t.starts_with("/**/"))
    }
}
