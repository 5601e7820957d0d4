//! `rename`: shorten keys, with a `_legend` at the root that maps them back.
//!
//! Why: on a list of 500 records, `"relationship_type"` costs its tokens 500 times; `"rt"`
//! plus one legend entry is cheaper ("short keys"). It is off unless a policy asks,
//! because short keys are harder for a model to read than the originals. A key is not renamed
//! in an object that already has a member with the short name, so nothing is overwritten —
//! choose short names the payload does not use, or the legend is ambiguous there. When the
//! root is not an object there is nowhere to put the legend, and nothing is renamed.
//!
//! ```toml
//! [[ops]]
//! op = "rename"
//! map = { relationship_type = "rt" }
//! ```
//!
//! In: `{"rels":[{"relationship_type":"PARTNER"},{"relationship_type":"OWNS"}]}`
//! Out: `{"_legend":{"rt":"relationship_type"},"rels":[{"rt":"PARTNER"},{"rt":"OWNS"}]}`

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::compile::{CompileCx, PolicyError};
use super::{ApplyCx, Op};
use crate::value::Value;

/// Options of `rename`. Nothing is renamed when the root is not an object.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenameSpec {
    /// Levels this op runs at. Default: every level but `full`.
    #[serde(default)]
    pub levels: Option<Vec<String>>,
    /// The objects whose keys are renamed (selectors). Default: every object.
    #[serde(default)]
    pub at: Option<Vec<String>>,
    /// Long name → short name.
    pub map: BTreeMap<String, String>,
    /// Write the `_legend` at the root. Default: true.
    #[serde(default = "super::default_true")]
    pub legend: bool,
}

#[derive(Debug)]
pub(crate) struct Rename {
    at: Option<Vec<usize>>,
    map: Vec<(String, String)>,
    legend: bool,
}

impl RenameSpec {
    pub(crate) fn compile(&self, cx: &mut CompileCx) -> Result<Rename, PolicyError> {
        if self.map.is_empty() {
            return Err(cx.error("map", "name at least one key to rename"));
        }
        let mut shorts: Vec<&String> = self.map.values().collect();
        shorts.sort();
        if let Some(w) = shorts.windows(2).find(|w| w[0] == w[1]) {
            return Err(cx.error("map", format!("two keys are renamed to `{}`", w[0])));
        }
        if let Some((long, _)) = self.map.iter().find(|(_, s)| s.is_empty()) {
            return Err(cx.error("map", format!("`{long}` is renamed to an empty key")));
        }
        Ok(Rename {
            at: match &self.at {
                Some(at) => Some(cx.selectors("at", at)?),
                None => None,
            },
            map: self
                .map
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            legend: self.legend,
        })
    }
}

impl Op for Rename {
    fn everywhere(&self) -> bool {
        self.at.is_none()
    }

    fn apply(&self, node: &mut Value, cx: &mut ApplyCx<'_, '_>) {
        let Value::Object(map) = node else { return };
        if let Some(at) = &self.at
            && !cx.matches_any(at)
        {
            return;
        }
        // Without a root object there is nowhere to write the legend, and a rename without
        // its legend would lose the original name.
        if self.legend && !cx.root_is_object {
            return;
        }
        for (long, short) in &self.map {
            let Some(i) = map.position(long) else {
                continue;
            };
            if map.contains_key(short) {
                continue;
            }
            map.entries_mut()[i].0 = short.as_str().into();
            if self.legend && !cx.legend.iter().any(|(s, _)| s == short) {
                cx.legend.push((short.clone(), long.clone()));
            }
        }
    }
}
