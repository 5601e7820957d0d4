//! `flatten`: promote the fields of a nested object into its parent, in its place.
//!
//! Why: a wrapper like `"refs": {"timelineRef": …, "activityRef": …, "screenshotRef": …}`
//! costs a key, braces and quotes per record, and often only one field inside matters
//! (`refs: {screenshot: …}` is better as `screenshotRef`). Fields not promoted are stripped and
//! recorded. A promoted name that already exists in the parent becomes `<member>_<field>`,
//! so nothing is overwritten.
//!
//! ```toml
//! [[ops]]
//! op = "flatten"
//! paths = ["$.segments[*].refs"]
//! fields = ["shot"]
//! ```
//!
//! In: `{"segments":[{"id":1,"refs":{"a":"x","shot":"s"},"app":"Figma"}]}`
//! Out: `{"segments":[{"id":1,"shot":"s","app":"Figma"}]}`

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::compile::{CompileCx, PolicyError};
use super::{ApplyCx, Op};
use crate::manifest::Kind;
use crate::value::{Key, Map, Value};

/// Options of `flatten`. A promoted name the parent already has becomes `<member>_<field>`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlattenSpec {
    /// Levels this op runs at. Default: every level but `full`.
    #[serde(default)]
    pub levels: Option<Vec<String>>,
    /// Selectors of the nested objects to flatten into their parents.
    pub paths: Vec<String>,
    /// The fields to promote. Default: all of them.
    #[serde(default)]
    pub fields: Option<Vec<String>>,
    /// A prefix for promoted names. Default: none.
    #[serde(default)]
    pub prefix: String,
}

#[derive(Debug)]
pub(crate) struct Flatten {
    paths: Vec<usize>,
    fields: Option<Vec<String>>,
    prefix: String,
}

impl FlattenSpec {
    pub(crate) fn compile(&self, cx: &mut CompileCx) -> Result<Flatten, PolicyError> {
        if self.paths.is_empty() {
            return Err(cx.error("paths", "name at least one selector"));
        }
        Ok(Flatten {
            paths: cx.selectors("paths", &self.paths)?,
            fields: self.fields.clone(),
            prefix: self.prefix.clone(),
        })
    }
}

impl Op for Flatten {
    fn apply(&self, node: &mut Value, cx: &mut ApplyCx<'_, '_>) {
        let Value::Object(map) = node else { return };
        let hit = |cx: &ApplyCx, k: &str, v: &Value| {
            matches!(v, Value::Object(_)) && cx.member_matches(k, &self.paths)
        };
        if !map.iter().any(|(k, v)| hit(cx, k, v)) {
            return;
        }
        let entries = std::mem::take(map).into_entries();
        let flatten_here: Vec<bool> = entries.iter().map(|(k, v)| hit(cx, k, v)).collect();
        // Names the parent keeps, so promoted names can avoid them.
        let mut out = Map::from_entries_unchecked(
            entries
                .iter()
                .zip(&flatten_here)
                .filter(|(_, f)| !**f)
                .map(|((k, _), _)| (k.clone(), Value::Null))
                .collect(),
        );
        let mut rebuilt: Vec<(Key, Value)> = Vec::with_capacity(entries.len() + 4);
        for ((k, v), flat) in entries.into_iter().zip(flatten_here) {
            if !flat {
                rebuilt.push((k, v));
                continue;
            }
            let Value::Object(inner) = v else {
                unreachable!("checked above")
            };
            for (ik, iv) in inner {
                let wanted = self
                    .fields
                    .as_ref()
                    .is_none_or(|f| f.iter().any(|f| f == ik.as_str()));
                if !wanted {
                    let mark = cx.rec.enter_key(&k);
                    cx.rec.key(Kind::Stripped, &ik, 1);
                    cx.rec.leave(mark);
                    continue;
                }
                let mut name = format!("{}{ik}", self.prefix);
                if out.contains_key(&name) {
                    name = out.unique_key(&format!("{k}_{ik}"));
                }
                out.push_unique(name.clone(), Value::Null);
                rebuilt.push((name.into(), iv));
            }
        }
        *map = Map::from_entries_unchecked(rebuilt);
    }
}
