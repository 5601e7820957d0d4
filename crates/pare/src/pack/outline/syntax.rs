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

use std::cell::RefCell;

use tree_sitter::{Language, Node, Parser, Tree};

use super::keyword::{self, Keywords};
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

thread_local! {
    // Parsers keep allocations between parses; one per thread, language swapped per call.
    static PARSER: RefCell<Parser> = RefCell::new(Parser::new());
}

fn parse(text: &str, language: &Language) -> Option<Tree> {
    let run = |p: &mut Parser| {
        p.set_language(language).ok()?;
        p.parse(text, None)
    };
    PARSER
        .try_with(|cell| match cell.try_borrow_mut() {
            Ok(mut p) => run(&mut p),
            Err(_) => run(&mut Parser::new()),
        })
        .unwrap_or_else(|_| run(&mut Parser::new()))
}

pub(super) fn analyze(lines: &[&str], text: &str, lang: Lang) -> Analysis {
    let tree = grammar(lang).and_then(|g| parse(text, &g));
    let Some(tree) = tree else {
        return keyword::analyze(lines, keywords(lang));
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
            // Nothing recognisable: the keyword list is all we have (the seed's for JS/TS).
            let kw = match keywords(lang) {
                Keywords::Script => Keywords::Seed,
                kw => kw,
            };
            keyword::scan(lines, kw, &mut a);
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

struct Walker<'s, 't> {
    lang: Lang,
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

/// A definition found in the tree.
struct Def<'t> {
    kind: &'static str,
    name: Option<String>,
    name_row: usize,
    /// Last signature row.
    sig_end: usize,
    /// Python: the docstring statement's string node.
    docstring: Option<Node<'t>>,
}

/// The last row a node covers: one ending at column 0 (after its newline) ends the row
/// before.
fn last_row(node: Node) -> usize {
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

fn is_attached(kind: &str) -> bool {
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
    fn ancestor(&self, up: usize) -> Option<Node<'t>> {
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

    fn text(&self, node: Node) -> &'s str {
        std::str::from_utf8(&self.src[node.byte_range()]).unwrap_or("")
    }

    fn field_text(&self, node: Node, field: &str) -> Option<String> {
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

    /// A whole line of doc comment, by its first characters (see [`Self::is_doc_comment`]).
    fn looks_like_doc(&self, line: &str) -> bool {
        let t = line.trim_start();
        // Block comment continuation: `*` then a space or nothing (not `*ptr`).
        let continuation = t == "*" || t.starts_with("* ") || t.starts_with("*/");
        match self.lang {
            Lang::Rust => {
                (t.starts_with("///") && !t.starts_with("////"))
                    || (t.starts_with("/**") && !t.starts_with("/***"))
                    || continuation
            }
            Lang::Python => t.starts_with('#') && !t.starts_with("#!"),
            _ => t.starts_with("//") || t.starts_with("/*") || continuation,
        }
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

    fn def(
        &self,
        node: Node<'t>,
        kind: &'static str,
        name_field: &str,
        sig: Sig,
    ) -> Option<Def<'t>> {
        let name_node = node.child_by_field_name(name_field);
        let name = name_node.map(|n| self.text(n).to_string());
        let name_row = name_node.map_or(node.start_position().row, |n| n.start_position().row);
        Some(Def {
            kind,
            name,
            name_row,
            sig_end: self.sig_end(node, sig, name_row),
            docstring: None,
        })
    }

    fn sig_end(&self, node: Node, sig: Sig, name_row: usize) -> usize {
        let body = node.child_by_field_name("body");
        match (sig, body) {
            (Sig::Body, Some(body)) if self.lang == Lang::Python => {
                // Up to the `:` before the block, whose first row is already code.
                let mut cursor = node.walk();
                let mut before = None;
                for child in node.children(&mut cursor) {
                    if child.id() == body.id() {
                        break;
                    }
                    before = Some(child);
                }
                before.map_or(body.start_position().row, last_row)
            }
            (Sig::Body | Sig::Whole, Some(body)) => body.start_position().row,
            (Sig::Whole, None) => last_row(node),
            (Sig::Body | Sig::Name, _) => name_row,
        }
    }

    fn classify(&self, node: Node<'t>) -> Option<Def<'t>> {
        match self.lang {
            Lang::Rust => self.rust(node),
            Lang::Python => self.python(node),
            Lang::TypeScript | Lang::Tsx | Lang::JavaScript => self.script(node),
            Lang::Go => self.go(node),
            Lang::Java => self.java(node),
            Lang::Markdown | Lang::Other => None,
        }
    }

    fn rust(&self, node: Node<'t>) -> Option<Def<'t>> {
        let (kind, sig) = match node.kind() {
            "function_item" | "function_signature_item" => {
                let in_trait_or_impl = self
                    .ancestor(0)
                    .is_some_and(|p| p.kind() == "declaration_list")
                    && self
                        .ancestor(1)
                        .is_some_and(|g| matches!(g.kind(), "impl_item" | "trait_item"));
                let kind = if in_trait_or_impl {
                    "method"
                } else {
                    "function"
                };
                (kind, Sig::Whole)
            }
            "struct_item" => ("struct", Sig::Body),
            "enum_item" => ("enum", Sig::Body),
            "union_item" => ("union", Sig::Body),
            "trait_item" => ("trait", Sig::Body),
            "mod_item" => ("module", Sig::Body),
            "type_item" => ("type", Sig::Name),
            "const_item" => ("const", Sig::Name),
            "static_item" => ("static", Sig::Name),
            "macro_definition" => ("macro", Sig::Name),
            "impl_item" => {
                let ty = self.field_text(node, "type").unwrap_or_default();
                let name = match self.field_text(node, "trait") {
                    Some(tr) => format!("{tr} for {ty}"),
                    None => ty,
                };
                let row = node.start_position().row;
                return Some(Def {
                    kind: "impl",
                    name: Some(name),
                    name_row: row,
                    sig_end: self.sig_end(node, Sig::Body, row),
                    docstring: None,
                });
            }
            _ => return None,
        };
        self.def(node, kind, "name", sig)
    }

    fn python(&self, node: Node<'t>) -> Option<Def<'t>> {
        let (kind, sig) = match node.kind() {
            "function_definition" => {
                let decorated = self
                    .ancestor(0)
                    .is_some_and(|p| p.kind() == "decorated_definition");
                let up = usize::from(decorated);
                let in_class = self.ancestor(up).is_some_and(|p| p.kind() == "block")
                    && self
                        .ancestor(up + 1)
                        .is_some_and(|g| g.kind() == "class_definition");
                // A fragment cut from a class body has no class node; `self`/`cls` tell.
                let first_param = node
                    .child_by_field_name("parameters")
                    .and_then(|p| p.named_child(0))
                    .map(|p| self.text(p));
                let kind = if in_class || matches!(first_param, Some("self" | "cls")) {
                    "method"
                } else {
                    "function"
                };
                (kind, Sig::Body)
            }
            "class_definition" => ("class", Sig::Body),
            "type_alias_statement" => {
                let mut def = self.def(node, "type", "left", Sig::Name)?;
                def.name_row = node.start_position().row;
                return Some(def);
            }
            _ => return None,
        };
        let mut def = self.def(node, kind, "name", sig)?;
        def.docstring = node.child_by_field_name("body").and_then(docstring);
        Some(def)
    }

    fn script(&self, node: Node<'t>) -> Option<Def<'t>> {
        let (kind, sig, name_field) = match node.kind() {
            "function_declaration" | "generator_function_declaration" => {
                ("function", Sig::Body, "name")
            }
            "function_signature" => ("function", Sig::Whole, "name"),
            "class_declaration" | "abstract_class_declaration" => ("class", Sig::Body, "name"),
            "method_definition" => ("method", Sig::Body, "name"),
            "method_signature" | "abstract_method_signature" => ("method", Sig::Whole, "name"),
            "interface_declaration" => ("interface", Sig::Body, "name"),
            "type_alias_declaration" => ("type", Sig::Name, "name"),
            "enum_declaration" => ("enum", Sig::Body, "name"),
            "internal_module" | "module" => ("module", Sig::Body, "name"),
            "variable_declarator" => return self.script_variable(node),
            "public_field_definition" | "field_definition" => {
                // Class fields holding functions are methods in all but name.
                let value = node.child_by_field_name("value")?;
                if !is_function_value(value.kind()) {
                    return None;
                }
                let field = if node.child_by_field_name("name").is_some() {
                    "name"
                } else {
                    "property"
                };
                let mut def = self.def(node, "method", field, Sig::Name)?;
                def.sig_end = self.sig_end(value, Sig::Body, def.name_row);
                return Some(def);
            }
            "export_statement" => {
                if node.child_by_field_name("declaration").is_some() {
                    return None; // the declaration is visited itself
                }
                // `export { a, b }`, `export * from`, `export default <expr>`.
                let row = node.start_position().row;
                let sig_end = match node.child_by_field_name("value") {
                    Some(v) if v.child_by_field_name("body").is_some() => {
                        self.sig_end(v, Sig::Body, row)
                    }
                    Some(_) => row,
                    None => last_row(node),
                };
                let name = node.child_by_field_name("value").map(|v| {
                    self.field_text(v, "name")
                        .unwrap_or_else(|| "default".to_string())
                });
                return Some(Def {
                    kind: "export",
                    name,
                    name_row: row,
                    sig_end,
                    docstring: None,
                });
            }
            "expression_statement" => return self.commonjs_export(node),
            _ => return None,
        };
        self.def(node, kind, name_field, sig)
    }

    /// `const f = (…) => {…}` and other function values, and any exported binding.
    fn script_variable(&self, node: Node<'t>) -> Option<Def<'t>> {
        let name_node = node.child_by_field_name("name")?;
        if name_node.kind() != "identifier" {
            return None; // destructuring
        }
        let decl = self.ancestor(0)?;
        // Exported or `declare`d bindings are API (a `.d.ts` is made of them).
        let exported = self
            .ancestor(1)
            .is_some_and(|p| matches!(p.kind(), "export_statement" | "ambient_declaration"));
        let value = node.child_by_field_name("value");
        let kind = match value.map(|v| v.kind()) {
            Some(k) if is_function_value(k) => "function",
            Some("class") => "class",
            _ if !exported => return None,
            _ if self.text(decl).starts_with("const") => "const",
            _ => "variable",
        };
        let name_row = name_node.start_position().row;
        let sig_end = match value {
            Some(v) if kind != "const" && kind != "variable" => {
                self.sig_end(v, Sig::Body, v.start_position().row)
            }
            _ => name_row,
        };
        Some(Def {
            kind,
            name: Some(self.text(name_node).to_string()),
            name_row,
            sig_end,
            docstring: None,
        })
    }

    /// `module.exports = …`, `exports.name = …`.
    fn commonjs_export(&self, node: Node<'t>) -> Option<Def<'t>> {
        let assign = node.named_child(0)?;
        if assign.kind() != "assignment_expression" {
            return None;
        }
        let left = self.text(assign.child_by_field_name("left")?);
        let name = if let Some(name) = left.strip_prefix("module.exports.") {
            name
        } else if let Some(name) = left.strip_prefix("exports.") {
            name
        } else if left == "module.exports" {
            "module.exports"
        } else {
            return None;
        };
        let row = node.start_position().row;
        let sig_end = match assign.child_by_field_name("right") {
            Some(v) if is_function_value(v.kind()) => self.sig_end(v, Sig::Body, row),
            _ => row,
        };
        Some(Def {
            kind: "export",
            name: Some(name.to_string()),
            name_row: row,
            sig_end,
            docstring: None,
        })
    }

    fn go(&self, node: Node<'t>) -> Option<Def<'t>> {
        match node.kind() {
            "function_declaration" => self.def(node, "function", "name", Sig::Whole),
            "method_declaration" => self.def(node, "method", "name", Sig::Whole),
            "method_elem" | "method_spec" => self.def(node, "method", "name", Sig::Whole),
            "package_clause" => {
                let row = node.start_position().row;
                let name = node.named_child(0).map(|n| self.text(n).to_string());
                Some(Def {
                    kind: "module",
                    name,
                    name_row: row,
                    sig_end: row,
                    docstring: None,
                })
            }
            "type_spec" | "type_alias" => {
                let ty = node.child_by_field_name("type");
                let kind = match ty.map(|t| t.kind()) {
                    Some("struct_type") => "struct",
                    Some("interface_type") => "interface",
                    _ => "type",
                };
                let mut def = self.def(node, kind, "name", Sig::Name)?;
                // Up to the line where the struct/interface braces open.
                if let Some(ty) = ty {
                    def.sig_end = ty.start_position().row;
                }
                Some(def)
            }
            "type_declaration" => {
                // `type (` groups: the keyword line; each spec is visited itself.
                let row = node.start_position().row;
                Some(Def {
                    kind: "type",
                    name: None,
                    name_row: row,
                    sig_end: row,
                    docstring: None,
                })
            }
            _ => None,
        }
    }

    fn java(&self, node: Node<'t>) -> Option<Def<'t>> {
        let kind = match node.kind() {
            "class_declaration" => "class",
            "interface_declaration" | "annotation_type_declaration" => "interface",
            "enum_declaration" => "enum",
            "record_declaration" => "record",
            "method_declaration"
            | "constructor_declaration"
            | "compact_constructor_declaration" => "method",
            "package_declaration" => {
                let row = node.start_position().row;
                let name = node.named_child(0).map(|n| self.text(n).to_string());
                return Some(Def {
                    kind: "module",
                    name,
                    name_row: row,
                    sig_end: row,
                    docstring: None,
                });
            }
            _ => return None,
        };
        self.def(node, kind, "name", Sig::Whole)
    }
}

/// How far a definition's signature reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sig {
    /// To the row where the `body` opens (Python: the `:`); without a body, the name row.
    Body,
    /// To the row where the `body` opens; without a body the node is all signature
    /// (trait methods, overloads, interface members).
    Whole,
    /// The rows up to the name (type aliases, consts: their value is not signature).
    Name,
}

fn is_function_value(kind: &str) -> bool {
    matches!(
        kind,
        "arrow_function" | "function_expression" | "function" | "generator_function"
    )
}

/// The docstring of a Python block or module: its first statement, if that is a string.
fn docstring(block: Node) -> Option<Node> {
    let mut cursor = block.walk();
    let first = block
        .named_children(&mut cursor)
        .find(|c| c.kind() != "comment")?;
    if first.kind() != "expression_statement" || first.named_child_count() != 1 {
        return None;
    }
    first.named_child(0).filter(|s| s.kind() == "string")
}
