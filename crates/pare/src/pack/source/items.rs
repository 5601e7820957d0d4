//! Cutting a parsed source file into items: each top-level definition (function, class,
//! struct, enum, trait, impl, module, interface, …) with the doc comments, attributes and
//! decorators right above it, and the module-level code between definitions grouped.
//! A container (impl, trait, class, module, interface) longer than the item cap is split
//! into its header (signature and docstring) and its members, each member an item again,
//! labelled with the container (`in impl Display for Span`).
//!
//! The result is row ranges only; [`super`] turns them into chunks and scores.

use tree_sitter::Node;

use crate::pack::outline::{Lang, is_attached, last_row};

/// What an item is, for its score.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// A definition others can use: `pub`, exported, no leading underscore, capitalized (Go).
    Public,
    /// Any other definition.
    Private,
    /// Imports, constants, statements between definitions; text cut by lines.
    Module,
    /// Test code: `#[cfg(test)]`/`#[test]` items, `test_*` functions, `Test*` classes.
    Test,
}

/// Rows `start..=end` (0-based) of the file, what they are, and the enclosing container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Piece {
    pub start: usize,
    pub end: usize,
    pub role: Role,
    pub context: Option<String>,
}

/// A definition node: its label (`impl Foo`, `class Bar`), visibility, and the body a long
/// one may be split into.
struct Def<'t> {
    label: String,
    role: Role,
    body: Option<Node<'t>>,
}

/// Nested containers are split at most this deep (a class in a class in a module).
const MAX_DEPTH: usize = 3;

pub(super) struct Cutter<'s> {
    pub lang: Lang,
    pub src: &'s [u8],
    /// Containers longer than this many lines are split into header and members.
    pub max_item_lines: usize,
    /// Runs of module-level statements are grouped up to this many lines (one longer
    /// statement stays whole: a docstring or table is not cut mid-way).
    pub max_block_lines: usize,
}

impl<'s> Cutter<'s> {
    /// The pieces of the children of `parent` (the tree's root, or a container's body).
    pub(super) fn pieces(&self, parent: Node, context: Option<&str>, depth: usize) -> Vec<Piece> {
        let mut out: Vec<Piece> = Vec::new();
        // The run of comments/attributes waiting for the node after it: (first row, last row).
        let mut run: Option<(usize, usize)> = None;
        let mut cursor = parent.walk();
        for child in parent.named_children(&mut cursor) {
            let (start, end) = (child.start_position().row, last_row(child));
            if is_attached(child.kind()) && !self.is_inner_doc(child) {
                run = match run {
                    Some((s, e)) if start <= e + 1 => Some((s, end.max(e))),
                    Some((s, e)) => {
                        self.push(&mut out, module(s, e, context));
                        Some((start, end))
                    }
                    None => Some((start, end)),
                };
                continue;
            }
            let Some(def) = self.definition(child) else {
                let from = run.take().map_or(start, |(s, _)| s);
                self.push(&mut out, module(from, end, context));
                continue;
            };
            let from = match run.take() {
                Some((s, e)) if e + 1 >= start => s,
                Some((s, e)) => {
                    self.push(&mut out, module(s, e, context));
                    start
                }
                None => start,
            };
            let role = if def.role != Role::Test && self.test_attributes(from, start) {
                Role::Test
            } else {
                def.role
            };
            let whole = Piece {
                start: from,
                end,
                role,
                context: context.map(str::to_owned),
            };
            match def.body {
                Some(body) if end - from + 1 > self.max_item_lines && depth < MAX_DEPTH => {
                    for p in self.split(whole, body, &def.label, depth) {
                        self.push(&mut out, p);
                    }
                }
                _ => self.push(&mut out, whole),
            }
        }
        if let Some((s, e)) = run {
            self.push(&mut out, module(s, e, context));
        }
        out
    }

    /// A long container as its header (up to its first member, a Python docstring
    /// included) and its members; the closing lines join the last member.
    fn split(&self, whole: Piece, body: Node, label: &str, depth: usize) -> Vec<Piece> {
        let inner = format!("in {label}");
        let mut members = self.pieces(body, Some(&inner), depth + 1);
        let Some(first) = members.first() else {
            return vec![whole];
        };
        let mut header_end = first.start.saturating_sub(1);
        // A Python docstring stays with the class's header.
        if let Some(doc) = body.named_child(0).filter(|n| self.is_docstring(*n)) {
            let doc_end = last_row(doc);
            header_end = header_end.max(doc_end);
            members.retain_mut(|p| {
                p.start = p.start.max(doc_end + 1);
                p.start <= p.end
            });
        }
        if first_row_shared(&whole, header_end, &members) {
            return vec![whole];
        }
        let role = whole.role;
        let mut out = vec![Piece {
            end: header_end,
            ..whole.clone()
        }];
        for mut p in members {
            // Members of test code are test code.
            if role == Role::Test {
                p.role = Role::Test;
            }
            out.push(p);
        }
        if let Some(last) = out.last_mut() {
            last.end = last.end.max(whole.end);
        }
        out
    }

    fn push(&self, out: &mut Vec<Piece>, p: Piece) {
        push(out, p, self.max_block_lines);
    }

    fn text(&self, node: Node) -> &'s str {
        std::str::from_utf8(&self.src[node.byte_range()]).unwrap_or("")
    }

    fn field(&self, node: Node, name: &str) -> Option<&'s str> {
        node.child_by_field_name(name).map(|n| self.text(n))
    }

    /// Rust `//!`/`/*!` docs describe the module, not the item below them.
    fn is_inner_doc(&self, node: Node) -> bool {
        self.lang == Lang::Rust && {
            let t = self.text(node);
            t.starts_with("//!") || t.starts_with("/*!")
        }
    }

    fn is_docstring(&self, node: Node) -> bool {
        self.lang == Lang::Python
            && node.kind() == "expression_statement"
            && node.named_child(0).is_some_and(|s| s.kind() == "string")
    }

    /// Whether the attribute rows above a definition mark it as test code.
    fn test_attributes(&self, from: usize, start: usize) -> bool {
        if self.lang != Lang::Rust || from >= start {
            return false;
        }
        let text = std::str::from_utf8(self.src).unwrap_or("");
        text.lines()
            .skip(from)
            .take(start - from)
            .any(|l| l.contains("cfg(test)") || l.trim() == "#[test]")
    }

    fn definition<'t>(&self, node: Node<'t>) -> Option<Def<'t>> {
        match self.lang {
            Lang::Rust => self.rust(node),
            Lang::Python => self.python(node),
            Lang::TypeScript | Lang::Tsx | Lang::JavaScript => self.script(node, false),
            Lang::Go => self.go(node),
            Lang::Java => self.java(node),
            Lang::Markdown | Lang::Other => None,
        }
    }

    fn rust<'t>(&self, node: Node<'t>) -> Option<Def<'t>> {
        let public = || {
            let mut c = node.walk();
            let vis = node
                .children(&mut c)
                .any(|ch| ch.kind() == "visibility_modifier");
            if vis { Role::Public } else { Role::Private }
        };
        let name = self.field(node, "name").unwrap_or("");
        let (label, role, body) = match node.kind() {
            "function_item" | "function_signature_item" => (format!("fn {name}"), public(), None),
            "struct_item" => (format!("struct {name}"), public(), None),
            "enum_item" => (format!("enum {name}"), public(), None),
            "union_item" => (format!("union {name}"), public(), None),
            "macro_definition" => (format!("macro {name}"), Role::Private, None),
            "trait_item" => (
                format!("trait {name}"),
                public(),
                node.child_by_field_name("body"),
            ),
            "impl_item" => {
                let ty = self.field(node, "type").unwrap_or("");
                let label = match self.field(node, "trait") {
                    Some(tr) => format!("impl {tr} for {ty}"),
                    None => format!("impl {ty}"),
                };
                (label, Role::Public, node.child_by_field_name("body"))
            }
            "mod_item" => {
                let body = node.child_by_field_name("body")?; // `mod foo;` is module code
                let role = if name == "tests" {
                    Role::Test
                } else {
                    public()
                };
                (format!("mod {name}"), role, Some(body))
            }
            _ => return None,
        };
        Some(Def { label, role, body })
    }

    fn python<'t>(&self, node: Node<'t>) -> Option<Def<'t>> {
        let node = if node.kind() == "decorated_definition" {
            node.child_by_field_name("definition")?
        } else {
            node
        };
        let name = self.field(node, "name").unwrap_or("");
        let role = if name.starts_with("test") || name.starts_with("Test") {
            Role::Test
        } else if name.starts_with('_') && !(name.starts_with("__") && name.ends_with("__")) {
            Role::Private
        } else {
            Role::Public
        };
        match node.kind() {
            "function_definition" => Some(Def {
                label: format!("def {name}"),
                role,
                body: None,
            }),
            "class_definition" => Some(Def {
                label: format!("class {name}"),
                role,
                body: node.child_by_field_name("body"),
            }),
            _ => None,
        }
    }

    fn script<'t>(&self, node: Node<'t>, exported: bool) -> Option<Def<'t>> {
        let name = self.field(node, "name").unwrap_or("");
        let role = if exported {
            Role::Public
        } else {
            Role::Private
        };
        let body = node.child_by_field_name("body");
        let (label, body) = match node.kind() {
            "export_statement" => {
                return match node.child_by_field_name("declaration") {
                    Some(decl) => {
                        let def = self.script(decl, true)?;
                        Some(Def {
                            body: def.body,
                            ..def
                        })
                    }
                    None => node.child_by_field_name("value").map(|_| Def {
                        label: "export default".into(),
                        role: Role::Public,
                        body: None,
                    }),
                };
            }
            "function_declaration" | "generator_function_declaration" | "function_signature" => {
                (format!("function {name}"), None)
            }
            "class_declaration" | "abstract_class_declaration" | "class" => {
                (format!("class {name}"), body)
            }
            "interface_declaration" => (format!("interface {name}"), body),
            "enum_declaration" => (format!("enum {name}"), None),
            "type_alias_declaration" => (format!("type {name}"), None),
            "internal_module" | "module" => (format!("namespace {name}"), body),
            "method_definition" | "method_signature" | "abstract_method_signature" => {
                let private = name.starts_with('#') || self.text(node).starts_with("private");
                let role = if private { Role::Private } else { Role::Public };
                return Some(Def {
                    label: format!("method {name}"),
                    role,
                    body: None,
                });
            }
            "lexical_declaration" | "variable_declaration" => {
                let decl = node.named_child(0)?;
                let value = decl.child_by_field_name("value")?;
                let function = matches!(
                    value.kind(),
                    "arrow_function" | "function_expression" | "function" | "generator_function"
                );
                if !function {
                    return None;
                }
                let name = self.field(decl, "name").unwrap_or("");
                (format!("function {name}"), None)
            }
            _ => return None,
        };
        Some(Def { label, role, body })
    }

    fn go<'t>(&self, node: Node<'t>) -> Option<Def<'t>> {
        let name = match node.kind() {
            "function_declaration" | "method_declaration" => self.field(node, "name")?,
            "type_declaration" => {
                let spec = node.named_child(0)?;
                self.field(spec, "name").unwrap_or("")
            }
            _ => return None,
        };
        let role = if name.starts_with(|c: char| c.is_uppercase()) {
            Role::Public
        } else {
            Role::Private
        };
        let role = if name.starts_with("Test") || name.starts_with("Benchmark") {
            Role::Test
        } else {
            role
        };
        Some(Def {
            label: name.to_owned(),
            role,
            body: None,
        })
    }

    fn java<'t>(&self, node: Node<'t>) -> Option<Def<'t>> {
        let keyword = crate::pack::outline::lang::java_def_kind(node.kind())?;
        let mut c = node.walk();
        let modifiers = node
            .children(&mut c)
            .find(|ch| ch.kind() == "modifiers")
            .map_or("", |m| self.text(m));
        let role = if modifiers.contains("@Test") {
            Role::Test
        } else if modifiers.contains("public") || modifiers.contains("protected") {
            Role::Public
        } else {
            Role::Private
        };
        let name = self.field(node, "name").unwrap_or("");
        let body = (keyword != "method")
            .then(|| node.child_by_field_name("body"))
            .flatten();
        Some(Def {
            label: format!("{keyword} {name}"),
            role,
            body,
        })
    }
}

/// Whether the container's first member starts on its header's first row (`impl X { fn a…`):
/// then there is no header to split off.
fn first_row_shared(whole: &Piece, header_end: usize, members: &[Piece]) -> bool {
    header_end < whole.start || members.first().is_some_and(|m| m.start <= whole.start)
}

fn module(start: usize, end: usize, context: Option<&str>) -> Piece {
    Piece {
        start,
        end,
        role: Role::Module,
        context: context.map(str::to_owned),
    }
}

/// Appends `p`, joining it to the last piece when they share a row (`x = 1  # note`, two
/// items on one line) or when both are module-level code.
fn push(out: &mut Vec<Piece>, p: Piece, max_block_lines: usize) {
    if let Some(last) = out.last_mut() {
        let shares_row = p.start <= last.end;
        let both_module = last.role == Role::Module
            && p.role == Role::Module
            && p.end + 1 - last.start <= max_block_lines;
        if shares_row || both_module {
            last.end = last.end.max(p.end);
            if shares_row && last.role == Role::Module {
                last.role = p.role; // a definition swallowed a trailing comment
            }
            return;
        }
    }
    out.push(p);
}
