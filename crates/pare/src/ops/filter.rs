//! `filter`: remove array items for which a predicate holds (or keep only those it holds for).
//!
//! Why: sub-30-second website visits are redirects and misclicks (an activity
//! API that hides visits under `minMinutes` = 0.5). The predicate is an expression over each item: paths relative to
//! the item (`minutes`, `refs.id`), `== != < <= > >=`, `and or not`, JSON literals, and
//! `$name` for a policy parameter, which makes a threshold the caller's choice
//! (`type == 'OM_SIMILAR' and score < $minScore`). A comparison with a missing field never
//! holds, so with `remove_where` absence never removes an item; with `keep_where` only
//! items it holds for stay. The number removed is recorded, and with `removed_key` also
//! written beside the list, where the model sees it.
//!
//! ```toml
//! params = { minMinutes = 0.5 }
//!
//! [[ops]]
//! op = "filter"
//! at = ["$.websites"]
//! remove_where = "minutes < $minMinutes"
//! removed_key = "{key}_filtered"
//! ```
//!
//! In: `{"websites":[{"domain":"t.co","minutes":0.2},{"domain":"github.com","minutes":3},{"domain":"x.org"}]}`
//! Out: `{"websites":[{"domain":"github.com","minutes":3},{"domain":"x.org"}],"websites_filtered":1}`

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::compile::{CompileCx, PolicyError};
use super::{ApplyCx, Op, Sibling};
use crate::manifest::Kind;
use crate::query::expr::Expr;
use crate::value::Value;

/// Options of `filter`. Give exactly one of `remove_where` and `keep_where`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FilterSpec {
    /// Levels this op runs at. Default: every level but `full`.
    #[serde(default)]
    pub levels: Option<Vec<String>>,
    /// Selectors of the arrays to filter.
    pub at: Vec<String>,
    /// Remove the items this expression holds for (give this or `keep_where`).
    #[serde(default)]
    pub remove_where: Option<String>,
    /// Keep only the items this expression holds for.
    #[serde(default)]
    pub keep_where: Option<String>,
    /// A sibling member set to how many items were removed, when any were; `{key}` is the
    /// array's key, e.g. `"{key}_filtered"`. Written only for an array held in an object.
    /// Default: none (the report still counts them).
    #[serde(default)]
    pub removed_key: Option<String>,
}

#[derive(Debug)]
pub(crate) struct Filter {
    at: Vec<usize>,
    expr: Expr,
    remove: bool,
    removed_key: Option<String>,
}

impl FilterSpec {
    pub(crate) fn compile(&self, cx: &mut CompileCx) -> Result<Filter, PolicyError> {
        if self.at.is_empty() {
            return Err(cx.error("at", "name at least one selector"));
        }
        let (field, src, remove) = match (&self.remove_where, &self.keep_where) {
            (Some(e), None) => ("remove_where", e, true),
            (None, Some(e)) => ("keep_where", e, false),
            _ => {
                return Err(cx.error("", "give exactly one of `remove_where` and `keep_where`"));
            }
        };
        if self.removed_key.as_deref() == Some("") {
            return Err(cx.error("removed_key", "name the member, e.g. \"{key}_filtered\""));
        }
        Ok(Filter {
            at: cx.selectors("at", &self.at)?,
            expr: cx.expr(field, src)?,
            remove,
            removed_key: self.removed_key.clone(),
        })
    }
}

impl Op for Filter {
    fn apply(&self, node: &mut Value, cx: &mut ApplyCx<'_, '_>) {
        let Value::Array(items) = node else { return };
        if !cx.matches_any(&self.at) {
            return;
        }
        let params = cx.params;
        let before = items.len();
        items.retain(|item| self.expr.eval(item, &|name| params.value(name)) != self.remove);
        let removed = before - items.len();
        cx.rec.items(Kind::Filtered, removed as u64);
        if let (Some(template), Some(key), 1..) = (&self.removed_key, cx.key, removed) {
            cx.siblings.push(Sibling {
                before: false,
                key: template.replace("{key}", key),
                value: Value::from(removed as i64),
            });
        }
    }
}
