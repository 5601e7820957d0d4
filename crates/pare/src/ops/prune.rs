//! `prune`: remove object members whose value is `null`, `""`, `[]` or `{}`.
//!
//! Why: half the fields of a typical entity are empty, and a model learns
//! nothing from `"owner": null`. Each kind is switchable. Only object members go: items of
//! arrays keep their positions (`[1, null, 3]` stays as it is), because position carries
//! meaning there. Children are pruned first, so `{"meta": {"x": null}}` loses `meta` too.
//! `where` prunes only the objects an expression holds for (`filter`'s language), wherever
//! they are: `relationship_type != null` takes a relationship's `{}` and not an entity's.
//!
//! ```toml
//! [[ops]]
//! op = "prune"
//! ```
//!
//! In: `{"a":1,"b":null,"c":[],"d":[null],"e":"","meta":{"x":null}}`
//! Out: `{"a":1,"d":[null]}`
//!
//! ```toml
//! [[ops]]
//! op = "prune"
//! empty_string = false              # keep "" members
//! except = ["$.meta_relations.*"]   # a {} there means "no relations": keep it
//! ```
//!
//! In: `{"a":1,"b":null,"e":"","meta_relations":{"m1":{},"m2":{"x":1}}}`
//! Out: `{"a":1,"e":"","meta_relations":{"m1":{},"m2":{"x":1}}}`

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::compile::{CompileCx, PolicyError};
use super::{ApplyCx, AtParse, Op, default_true};
use crate::json::omit::Empties;
use crate::manifest::Kind;
use crate::query::expr::Expr;
use crate::query::selector::SelectorSet;
use crate::value::Value;

/// Options of `prune`. Only object members are removed, never array items.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PruneSpec {
    /// Levels this op runs at. Default: every level but `full`.
    #[serde(default)]
    pub levels: Option<Vec<String>>,
    /// Remove `null` members. Default: true.
    #[serde(default = "default_true")]
    pub null: bool,
    /// Remove `""` members. Default: true.
    #[serde(default = "default_true")]
    pub empty_string: bool,
    /// Remove `[]` members. Default: true.
    #[serde(default = "default_true")]
    pub empty_array: bool,
    /// Remove `{}` members. Default: true.
    #[serde(default = "default_true")]
    pub empty_object: bool,
    /// The objects to prune (selectors). Default: every object.
    #[serde(default)]
    pub at: Option<Vec<String>>,
    /// Members never pruned (selectors), e.g. a `{}` that means "none".
    #[serde(default)]
    pub except: Vec<String>,
    /// Prune only the objects this expression holds for (paths relative to the object, as in
    /// `filter`), e.g. `relationship_type != null`. Default: every object `at` selects.
    #[serde(default, rename = "where")]
    pub where_expr: Option<String>,
}

#[derive(Debug)]
pub(crate) struct Prune {
    empties: Empties,
    at: Option<Vec<usize>>,
    except: Vec<usize>,
    where_expr: Option<Expr>,
}

impl PruneSpec {
    pub(crate) fn compile(&self, cx: &mut CompileCx) -> Result<Prune, PolicyError> {
        Ok(Prune {
            empties: Empties {
                null: self.null,
                empty_string: self.empty_string,
                empty_array: self.empty_array,
                empty_object: self.empty_object,
            },
            at: match &self.at {
                Some(at) => Some(cx.selectors("at", at)?),
                None => None,
            },
            except: cx.guard_selectors("except", &self.except)?,
            where_expr: match &self.where_expr {
                Some(src) => Some(cx.expr("where", src)?),
                None => None,
            },
        })
    }
}

impl Op for Prune {
    fn everywhere(&self) -> bool {
        self.at.is_none()
    }

    /// A prune of every object with no exceptions; with `where`, one whose expression reads
    /// only the object's own members (decided as the object closes).
    fn at_parse(&self, _set: &SelectorSet) -> Option<AtParse> {
        if self.at.is_some() || !self.except.is_empty() {
            return None;
        }
        match &self.where_expr {
            None => Some(AtParse::Prune(self.empties)),
            Some(expr) => Some(AtParse::PruneWhere(
                self.empties,
                crate::json::omit::Condition::new(expr.clone(), expr.member_keys()?),
            )),
        }
    }

    fn apply(&self, node: &mut Value, cx: &mut ApplyCx<'_, '_>) {
        let Value::Object(map) = node else { return };
        if let Some(at) = &self.at
            && !cx.matches_any(at)
        {
            return;
        }
        if !map.values().any(|v| self.empties.takes(v)) {
            return;
        }
        if let Some(expr) = &self.where_expr {
            let params = cx.params;
            if !expr.eval(node, &|name| params.value(name)) {
                return;
            }
        }
        let Value::Object(map) = node else { return };
        let except = &self.except;
        let (set, state) = (cx.set, cx.state);
        let rec = &mut *cx.rec;
        map.retain(|k, v| {
            if !self.empties.takes(v) {
                return true;
            }
            if !except.is_empty() {
                let st = set.step(&state, crate::query::selector::Step::Key(k));
                if except.iter().any(|&s| set.matches(&st, s)) {
                    return true;
                }
            }
            rec.key(Kind::Empty, k, 1);
            false
        });
    }
}
