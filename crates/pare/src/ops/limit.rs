//! `limit`: keep the first N items of an array and say how many more there were.
//!
//! Why: a model rarely needs item 400 of 500 relationships, and a page that blows a client's
//! token limit is worse than a short one that says what it left out. The count goes into a
//! sibling member (`<key>_more`, configurable) when the array sits in an object, else into a
//! last item `"… N more"`. Cut items are recorded.
//!
//! ```toml
//! [[ops]]
//! op = "limit"
//! at = ["$.rels"]
//! max = 2
//! ```
//!
//! In: `{"rels":[1,2,3,4,5]}`
//! Out: `{"rels":[1,2],"rels_more":3}`

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::compile::{CompileCx, PolicyError};
use super::{ApplyCx, Op, Sibling};
use crate::manifest::Kind;
use crate::value::Value;

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LimitSpec {
    /// Levels this op runs at. Default: every level but `full`.
    #[serde(default)]
    pub levels: Option<Vec<String>>,
    /// Selectors of the arrays to limit.
    pub at: Vec<String>,
    /// How many items to keep.
    pub max: usize,
    /// The sibling that holds the count; `{key}` is the array's key. Default: `{key}_more`.
    #[serde(default = "default_more_key")]
    pub more_key: String,
}

fn default_more_key() -> String {
    "{key}_more".into()
}

#[derive(Debug)]
pub struct Limit {
    at: Vec<usize>,
    max: usize,
    more_key: String,
}

impl LimitSpec {
    pub(crate) fn compile(&self, cx: &mut CompileCx) -> Result<Limit, PolicyError> {
        if self.at.is_empty() {
            return Err(cx.error("at", "name at least one selector"));
        }
        Ok(Limit {
            at: cx.selectors("at", &self.at)?,
            max: self.max,
            more_key: self.more_key.clone(),
        })
    }
}

impl Op for Limit {
    fn apply(&self, node: &mut Value, cx: &mut ApplyCx<'_, '_>) {
        let Value::Array(items) = node else { return };
        if items.len() <= self.max || !cx.matches_any(&self.at) {
            return;
        }
        // Already limited (the marker item of an earlier run): shaping is idempotent.
        if cx.key.is_none()
            && items.len() == self.max + 1
            && items.last().and_then(Value::as_str).is_some_and(is_marker)
        {
            return;
        }
        let more = items.len() - self.max;
        items.truncate(self.max);
        cx.rec.items(Kind::Limited, more as u64);
        match cx.key {
            Some(key) => cx.siblings.push(Sibling {
                before: false,
                key: self.more_key.replace("{key}", key),
                value: Value::from(more as i64),
            }),
            None => items.push(Value::from(format!("… {more} more"))),
        }
    }
}

fn is_marker(s: &str) -> bool {
    s.strip_prefix("… ")
        .and_then(|r| r.strip_suffix(" more"))
        .is_some_and(|n| n.parse::<usize>().is_ok())
}
