//! `hoist`: a field equal on every item of an array is said once, beside the array.
//!
//! Why: `"score_type": "hybrid"` on each of 20 results says one fact 20 times
//! (repeated-field deduplication). The constant fields move out of the items into a sibling member
//! named `<array>_common` (configurable), placed just before the array. Nothing is lost: the
//! sibling holds every hoisted field with its value. Arrays whose parent is not an object are
//! left alone, since there is nowhere to say it once without changing the shape.
//!
//! ```toml
//! [[ops]]
//! op = "hoist"
//! at = ["$.results"]
//! ```
//!
//! In: `{"results":[{"type":"hybrid","id":1},{"type":"hybrid","id":2}]}`
//! Out: `{"results_common":{"type":"hybrid"},"results":[{"id":1},{"id":2}]}`

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::compile::{CompileCx, PolicyError};
use super::records::{Records, Values};
use super::{ApplyCx, ListOp, Op, Sibling, check_min_items, default_min_items};
use crate::value::{Map, Value};

/// Options of `hoist`. Arrays whose parent is not an object are left alone.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HoistSpec {
    /// Levels this op runs at. Default: every level but `full`.
    #[serde(default)]
    pub levels: Option<Vec<String>>,
    /// Selectors of arrays of objects.
    pub at: Vec<String>,
    /// Only these fields may be hoisted. Default: any field.
    #[serde(default)]
    pub fields: Option<Vec<String>>,
    /// The sibling's name; `{key}` is the array's key. Default: `{key}_common`.
    #[serde(default = "default_name")]
    pub name: String,
    /// Hoist only from arrays with at least this many items. Default: 2.
    #[serde(default = "default_min_items")]
    pub min_items: usize,
}

fn default_name() -> String {
    "{key}_common".into()
}
#[derive(Debug)]
pub(crate) struct Hoist {
    at: Vec<usize>,
    fields: Option<Vec<String>>,
    name: String,
    min_items: usize,
}

impl HoistSpec {
    pub(crate) fn compile(&self, cx: &mut CompileCx) -> Result<Hoist, PolicyError> {
        if self.at.is_empty() {
            return Err(cx.error("at", "name at least one selector"));
        }
        check_min_items(cx, self.min_items)?;
        Ok(Hoist {
            at: cx.selectors("at", &self.at)?,
            fields: self.fields.clone(),
            name: self.name.clone(),
            min_items: self.min_items,
        })
    }
}

impl Hoist {
    /// The positions, among the first item's members, of the fields every item has with the
    /// same value (none when the list is too short or its first item is not an object).
    pub(crate) fn constant<'r>(&self, items: &impl Records<'r>) -> Vec<usize> {
        if items.count() < self.min_items {
            return Vec::new();
        }
        let Some(candidates) = self.candidates(items) else {
            return Vec::new();
        };
        self.constant_after(items, candidates, 1)
    }

    /// The first item's fields that may be hoisted (their positions among its members), for
    /// [`Hoist::narrow`]; `None` when it is not an object. There is a first item.
    pub(crate) fn candidates<'r>(&self, items: &impl Records<'r>) -> Option<Vec<usize>> {
        let first = items.members(0)?.enumerate();
        let allowed = |k: &[u8]| {
            self.fields
                .as_ref()
                .is_none_or(|f| f.iter().any(|f| items.spells(k, f)))
        };
        Some(
            first
                .filter(|(_, (k, _))| allowed(k))
                .map(|(j, _)| j)
                .collect(),
        )
    }

    /// Keeps the candidates item `i` has with the first item's value.
    pub(crate) fn narrow<'r>(
        &self,
        items: &impl Records<'r>,
        i: usize,
        candidates: &mut Vec<usize>,
    ) {
        candidates.retain(|&j| {
            items
                .member_at(0, j)
                .is_some_and(|(k, v)| items.get(i, k) == Some(v))
        });
    }

    /// [`Hoist::constant`] from `candidates` narrowed by the items before `from` (as the
    /// stream narrows them while it writes a list).
    pub(crate) fn constant_after<'r>(
        &self,
        items: &impl Records<'r>,
        mut candidates: Vec<usize>,
        from: usize,
    ) -> Vec<usize> {
        if items.count() < self.min_items {
            return Vec::new();
        }
        for i in from..items.count() {
            if candidates.is_empty() {
                break;
            }
            self.narrow(items, i, &mut candidates);
        }
        candidates
    }

    /// The sibling's name beside the list under `key` (before it is made unique).
    pub(crate) fn sibling_name(&self, key: &str) -> String {
        self.name.replace("{key}", key)
    }

    pub(crate) fn at(&self) -> &[usize] {
        &self.at
    }
}

impl Op for Hoist {
    fn apply(&self, node: &mut Value, cx: &mut ApplyCx<'_, '_>) {
        let (Value::Array(items), Some(key)) = (&mut *node, cx.key) else {
            return;
        };
        if items.len() < self.min_items || !cx.matches_any(&self.at) {
            return;
        }
        let at = self.constant(&Values(items));
        let Some(Value::Object(first)) = items.first() else {
            return;
        };
        if at.is_empty() {
            return;
        }
        let constant: Vec<String> = at
            .iter()
            .map(|&j| first.entries()[j].0.to_string())
            .collect();
        let mut common = Map::with_capacity(constant.len());
        for (i, item) in items.iter_mut().enumerate() {
            let Value::Object(o) = item else { continue };
            for k in &constant {
                let v = o.remove(k);
                if i == 0
                    && let Some(v) = v
                {
                    common.push_unique(k.clone(), v);
                }
            }
        }
        cx.siblings.push(Sibling {
            before: true,
            key: self.sibling_name(key),
            value: Value::Object(common),
        });
    }

    fn as_list(&self) -> Option<ListOp<'_>> {
        Some(ListOp::Hoist(self))
    }

    /// It takes members out of array items (never pruned: items keep their places) and
    /// adds a sibling only when it holds a hoisted field.
    fn keeps_emptiness(&self) -> bool {
        true
    }

    /// Its sibling's name is its template with any list's key in it.
    fn may_add_member(&self, key: &str) -> bool {
        match self.name.split_once("{key}") {
            Some((before, after)) => {
                key.len() >= before.len() + after.len()
                    && key.starts_with(before)
                    && key.ends_with(after)
            }
            None => key == self.name,
        }
    }
}
