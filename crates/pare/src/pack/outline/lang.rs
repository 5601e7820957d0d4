//! Which syntax nodes are definitions, per language, and how far their signatures reach.
//!
//! Each grammar names things differently (`function_item`, `function_definition`,
//! `method_declaration`, …); this file maps them onto one [`Def`]: kind, name, and the last
//! signature row. Everything else (decorators, doc comments, markers) is shared.
//!
//! ```
//! use pare::pack::outline::{Lang, outline};
//!
//! let go = "func (s *Server) Start(ctx context.Context,\n\topts ...Option) error {\n\treturn nil\n}\n";
//! let o = outline(go, Lang::Go);
//! assert_eq!((o.symbols[0].name.as_str(), o.symbols[0].kind), ("Start", "method"));
//! assert_eq!(o.important, [1, 2]); // the whole two-line signature
//! ```

use tree_sitter::Node;

use super::Lang;
use super::syntax::{Walker, last_row};

/// A definition found in the tree.
pub(super) struct Def<'t> {
    pub(super) kind: &'static str,
    pub(super) name: Option<String>,
    pub(super) name_row: usize,
    /// Last signature row.
    pub(super) sig_end: usize,
    /// Python: the docstring statement's string node.
    pub(super) docstring: Option<Node<'t>>,
}

impl<'t> Walker<'_, 't> {
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

    pub(super) fn classify(&self, node: Node<'t>) -> Option<Def<'t>> {
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
                // A fragment cut from an impl has no impl node; a `self` parameter tells.
                let takes_self = node
                    .child_by_field_name("parameters")
                    .and_then(|p| p.named_child(0))
                    .is_some_and(|p| p.kind() == "self_parameter");
                let kind = if in_trait_or_impl || takes_self {
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
            k if java_def_kind(k).is_some() => java_def_kind(k)?,
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
pub(super) fn docstring(block: Node) -> Option<Node> {
    let mut cursor = block.walk();
    let first = block
        .named_children(&mut cursor)
        .find(|c| c.kind() != "comment")?;
    if first.kind() != "expression_statement" || first.named_child_count() != 1 {
        return None;
    }
    first.named_child(0).filter(|s| s.kind() == "string")
}

/// What a Java definition node declares (`class`, `interface`, `enum`, `record`, `method`),
/// for the outline and for `pare pack`'s chunker alike.
pub(crate) fn java_def_kind(node_kind: &str) -> Option<&'static str> {
    Some(match node_kind {
        "class_declaration" => "class",
        "interface_declaration" | "annotation_type_declaration" => "interface",
        "enum_declaration" => "enum",
        "record_declaration" => "record",
        "method_declaration" | "constructor_declaration" | "compact_constructor_declaration" => {
            "method"
        }
        _ => return None,
    })
}
