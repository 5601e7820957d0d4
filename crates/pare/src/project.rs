//! `fields`: the caller's projection — only the parts of a response it names, with the
//! objects and lists that lead to them.
//!
//! Why: the callers of a tool or an API ask most for this (github-mcp-server #1306, a
//! `fields` argument "as an MCP→MCP transform"), and a model that knows what it needs can
//! say so on its first call. pare applies it after the policy, to the response the model
//! sees, so a field is written as the model reads it.
//!
//! A field is a selector of pare's JSONPath ([`crate::query::selector`]): `$.items[*].id`.
//! A field that does not start with `$` is found at any depth: `id` is `$..id`, and
//! `user.login` is `$..user.login` (a `login` inside a `user`). In a URL, fields are
//! comma-separated; a comma inside brackets or quotes (`$..['a','b']`) is part of its
//! field ([`Fields::parse_list`]).
//!
//! What stays: each value a field selects, whole, and each object or list on the way to
//! one, with only what leads to a selected value. An item of a list that leads to none is
//! left out, and so is a member: they are counted (the record's `stripped`, op `fields`)
//! and the note says which fields were shown. A response where no field selects anything
//! becomes its empty container (`{}` or `[]`), and the fields that selected nothing are named.
//!
//! ```
//! use pare::project::Fields;
//! let v = pare::json::parse(r#"[{"id":1,"user":{"login":"a","id":7},"body":"…"},{"body":"x"}]"#).unwrap();
//! let fields = Fields::parse_list("id, user.login").unwrap();
//! let p = fields.project(v);
//! assert_eq!(pare::json::to_compact(&p.value), r#"[{"id":1,"user":{"login":"a","id":7}}]"#);
//! assert_eq!(p.left_out, 2); // the first item's body, and the second item
//! ```

use crate::query::selector::{MatchState, Selector, SelectorSet, Step};
use crate::value::{Map, Value};

/// The fields a caller asked for, compiled.
#[derive(Debug, Clone)]
pub struct Fields {
    given: Vec<String>,
    /// Boxed: a set is large, and fields ride in small messages (an MCP call waiting).
    set: Box<SelectorSet>,
}

impl PartialEq for Fields {
    /// Fields are the same when given alike.
    fn eq(&self, other: &Fields) -> bool {
        self.given == other.given
    }
}

/// Why fields could not be read. The door says which argument they came in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FieldsError {
    /// No field at all (an empty list, or only commas).
    #[error(
        "name at least one field (a member name such as `id`, or a selector such as `$.items[*].id`)"
    )]
    Empty,
    /// More fields, or longer ones, than one selector set holds.
    #[error("{count} fields are more than pare takes at once: {why}")]
    TooMany {
        /// How many fields were given.
        count: usize,
        /// What the limit is.
        why: String,
    },
    /// A field that is not a selector.
    #[error("`{field}` is not a field: {why}")]
    Bad {
        /// The field as given.
        field: String,
        /// What is wrong with it.
        why: String,
    },
}

/// A value projected, and what the projection left out.
#[derive(Debug)]
pub struct Projected {
    /// What is left.
    pub value: Value,
    /// Members and list items left out.
    pub left_out: u64,
    /// The fields that selected nothing, as given.
    pub unmatched: Vec<String>,
}

impl Fields {
    /// Fields from a list (an MCP argument, a Python or Node list, repeated CLI flags).
    pub fn parse<S: AsRef<str>>(fields: &[S]) -> Result<Fields, FieldsError> {
        let given: Vec<String> = fields
            .iter()
            .map(|f| f.as_ref().trim().to_owned())
            .filter(|f| !f.is_empty())
            .collect();
        if given.is_empty() {
            return Err(FieldsError::Empty);
        }
        let mut selectors = Vec::with_capacity(given.len());
        for field in &given {
            let source = if field.starts_with('$') {
                field.clone()
            } else if field.starts_with('[') {
                format!("$..{}", &field)
            } else {
                format!("$..{field}")
            };
            let selector = Selector::parse(&source).map_err(|e| FieldsError::Bad {
                field: field.clone(),
                why: e.to_string(),
            })?;
            selectors.push(selector);
        }
        let set = SelectorSet::new(selectors).map_err(|e| FieldsError::TooMany {
            count: given.len(),
            why: e.to_string(),
        })?;
        Ok(Fields {
            given,
            set: Box::new(set),
        })
    }

    /// Fields from a list whose every item is one or more comma-separated fields (repeated
    /// CLI flags, a Python or Node list, an MCP argument): what every door takes.
    pub fn parse_each<S: AsRef<str>>(items: &[S]) -> Result<Fields, FieldsError> {
        let mut fields = Vec::new();
        for item in items {
            split_list(item.as_ref(), &mut fields);
        }
        Fields::parse(&fields)
    }

    /// Fields from one comma-separated text (a URL's `pare_fields`): a comma inside
    /// brackets or quotes belongs to its field.
    pub fn parse_list(text: &str) -> Result<Fields, FieldsError> {
        let mut fields = Vec::new();
        split_list(text, &mut fields);
        Fields::parse(&fields)
    }
}

/// The comma-separated fields of `text`, a comma inside brackets or quotes kept.
fn split_list<'t>(text: &'t str, fields: &mut Vec<&'t str>) {
    let (mut depth, mut quote, mut start) = (0usize, None::<char>, 0);
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '[') => depth += 1,
            (None, ']') => depth = depth.saturating_sub(1),
            (None, ',') if depth == 0 => {
                fields.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    fields.push(&text[start..]);
}

impl Fields {
    /// The fields as given (trimmed), in order.
    pub fn given(&self) -> &[String] {
        &self.given
    }

    /// `value` with only what the fields select, and what was left out.
    pub fn project(&self, value: Value) -> Projected {
        let mut matched = vec![false; self.set.len()];
        let mut left_out = 0;
        let empty = match &value {
            Value::Array(_) => Value::Array(Vec::new()),
            _ => Value::Object(Map::new()),
        };
        let root = self.set.root();
        let value = self
            .node(value, root, &mut matched, &mut left_out, true)
            .unwrap_or(empty);
        let unmatched = self
            .given
            .iter()
            .zip(&matched)
            .filter(|(_, m)| !**m)
            .map(|(f, _)| f.clone())
            .collect();
        Projected {
            value,
            left_out,
            unmatched,
        }
    }

    /// The part of `node` (at `state`) that leads to a selected value; `None`: none does
    /// (counted by the caller, as one member or item). The `root` is never left out whole:
    /// what it held is counted.
    fn node(
        &self,
        node: Value,
        state: MatchState,
        matched: &mut [bool],
        left_out: &mut u64,
        root: bool,
    ) -> Option<Value> {
        let set = &self.set;
        let mut hit = false;
        for i in set.matched(&state) {
            matched[i] = true;
            hit = true;
        }
        if hit {
            // Selected: whole. (A field below it may match too: mark those as well.)
            if set.can_descend(&state) {
                self.mark(&node, &state, matched);
            }
            return Some(node);
        }
        if !set.can_descend(&state) {
            if root {
                *left_out += match &node {
                    Value::Object(m) => m.entries().len() as u64,
                    Value::Array(a) => a.len() as u64,
                    _ => 1,
                };
            }
            return None;
        }
        // What is left out inside a value left out whole is counted once, as that value.
        let before = *left_out;
        let kept = match node {
            Value::Object(map) => {
                let mut kept = Map::new();
                for (k, v) in map.into_entries() {
                    let s = set.step(&state, Step::Key(&k));
                    match (!set.is_dead(&s))
                        .then(|| self.node(v, s, matched, left_out, false))
                        .flatten()
                    {
                        Some(v) => kept.push_unique(k, v),
                        None => *left_out += 1,
                    }
                }
                (!kept.is_empty()).then_some(Value::Object(kept))
            }
            Value::Array(items) => {
                let len = items.len();
                let mut kept = Vec::new();
                for (index, v) in items.into_iter().enumerate() {
                    let s = set.step(&state, Step::Index { index, len });
                    match (!set.is_dead(&s))
                        .then(|| self.node(v, s, matched, left_out, false))
                        .flatten()
                    {
                        Some(v) => kept.push(v),
                        None => *left_out += 1,
                    }
                }
                (!kept.is_empty()).then_some(Value::Array(kept))
            }
            _ => None,
        };
        if kept.is_none() && !root {
            *left_out = before;
        }
        kept
    }

    /// Note the fields that match inside a value kept whole.
    fn mark(&self, node: &Value, state: &MatchState, matched: &mut [bool]) {
        let set = &self.set;
        crate::query::children(node, |child, step| {
            let s = set.step(state, step);
            if set.is_dead(&s) {
                return;
            }
            for i in set.matched(&s) {
                matched[i] = true;
            }
            if set.can_descend(&s) {
                self.mark(child, &s, matched);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse, to_compact};

    fn project(fields: &str, text: &str) -> (String, u64, Vec<String>) {
        let p = Fields::parse_list(fields)
            .unwrap()
            .project(parse(text).unwrap());
        (to_compact(&p.value), p.left_out, p.unmatched)
    }

    #[test]
    fn bare_names_are_found_at_any_depth_and_paths_from_the_root() {
        let text = r#"{"items":[{"id":1,"name":"a","meta":{"id":9}}],"total":1}"#;
        assert_eq!(
            project("id", text).0,
            r#"{"items":[{"id":1,"meta":{"id":9}}]}"#
        );
        assert_eq!(project("$.items[*].id", text).0, r#"{"items":[{"id":1}]}"#);
        assert_eq!(
            project("$.total, items[*].name", text).0,
            r#"{"items":[{"name":"a"}],"total":1}"#
        );
    }

    #[test]
    fn commas_in_brackets_and_quotes_belong_to_their_field() {
        let f = Fields::parse_list("$..['a','b'], c, $..[\"x,y\"]").unwrap();
        assert_eq!(f.given(), ["$..['a','b']", "c", "$..[\"x,y\"]"]);
    }

    #[test]
    fn fields_that_select_nothing_are_named_and_leave_an_empty_container() {
        let (out, left_out, unmatched) = project("nope, id", r#"[{"x":1}]"#);
        assert_eq!(out, "[]");
        assert_eq!(left_out, 1);
        assert_eq!(unmatched, ["nope", "id"]);
        let (out, _, unmatched) = project("id, nope", r#"[{"id":1}]"#);
        assert_eq!(out, r#"[{"id":1}]"#);
        assert_eq!(unmatched, ["nope"]);
    }

    #[test]
    fn a_value_kept_whole_still_counts_the_fields_inside_it_as_matched() {
        let (out, _, unmatched) = project("user, login", r#"{"user":{"login":"a"},"x":1}"#);
        assert_eq!(out, r#"{"user":{"login":"a"}}"#);
        assert!(unmatched.is_empty());
    }

    #[test]
    fn a_bad_field_is_named() {
        let e = Fields::parse_list("id, $.[").unwrap_err();
        assert!(
            matches!(&e, FieldsError::Bad { field, .. } if field == "$.["),
            "{e}"
        );
        assert_eq!(Fields::parse_list(" , ").unwrap_err(), FieldsError::Empty);
        let many: Vec<String> = (0..2000).map(|i| format!("f{i}")).collect();
        let e = Fields::parse(&many).unwrap_err();
        assert!(matches!(e, FieldsError::TooMany { count: 2000, .. }), "{e}");
    }
}
