//! `derive`: write values computed from the shaped output or the policy's parameters, so counts and echoes stay true.
//!
//! Why: a response that says `"segmentCount": 91` above the 46 blocks a merge left, or
//! `"minMinutes": 0` above a list pare filtered at 0.5, tells the model something false. A
//! `count` field is set to the length of a list (or the members of a map) as the policy
//! shaped it; a `param` field to the parameter's value as applied, which `--param` may have
//! changed. Paths are dotted, relative to each object `at` selects (default: the root). The
//! op runs on an object after everything inside it is shaped, wherever it stands in the
//! policy. A field whose parent object is not there is not written, and a count whose list is
//! not there leaves its field as it was. Nothing is removed, so nothing is recorded.
//!
//! ```toml
//! params = { minMinutes = 0.5 }
//!
//! [[ops]]
//! op = "filter"
//! at = ["$.websites"]
//! remove_where = "minutes < $minMinutes"
//!
//! [[ops]]
//! op = "derive"
//! count = { "summary.sites" = "websites" }
//! param = { minMinutes = "minMinutes" }
//! ```
//!
//! In: `{"minMinutes":0,"websites":[{"domain":"t.co","minutes":0.2},{"domain":"github.com","minutes":3}],"summary":{"sites":2}}`
//! Out: `{"minMinutes":0.5,"websites":[{"domain":"github.com","minutes":3}],"summary":{"sites":1}}`

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::compile::{CompileCx, PolicyError};
use super::{ApplyCx, Op};
use crate::value::Value;

/// Options of `derive`. A field is written only where its parent object is there.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeriveSpec {
    /// Levels this op runs at. Default: every level but `full`.
    #[serde(default)]
    pub levels: Option<Vec<String>>,
    /// Selectors of the objects the values are written in. Default: `["$"]`.
    #[serde(default = "root")]
    pub at: Vec<String>,
    /// `field = "list"`: the field is set to the number of items of the list (or members of
    /// the map) at `list`, as shaped.
    #[serde(default)]
    pub count: BTreeMap<String, String>,
    /// `field = "name"`: the field is set to the value of the policy parameter `name`, as
    /// applied.
    #[serde(default)]
    pub param: BTreeMap<String, String>,
}

fn root() -> Vec<String> {
    vec!["$".to_owned()]
}

#[derive(Debug)]
pub(crate) struct Derive {
    at: Vec<usize>,
    count: Vec<(String, String)>,
    param: Vec<(String, String)>,
}

impl DeriveSpec {
    pub(crate) fn compile(&self, cx: &mut CompileCx) -> Result<Derive, PolicyError> {
        if self.at.is_empty() {
            return Err(cx.error("at", "name at least one selector"));
        }
        if self.count.is_empty() && self.param.is_empty() {
            return Err(cx.error("", "give at least one `count` or `param` field"));
        }
        let counts = self
            .count
            .iter()
            .flat_map(|(f, l)| [("count", f, f), ("count", f, l)]);
        let params = self.param.keys().map(|f| ("param", f, f));
        for (opt, field, path) in counts.chain(params) {
            cx.dotted(&format!("{opt}.{field}"), path)?;
        }
        for (field, name) in &self.param {
            cx.param(&format!("param.{field}"), name)?;
        }
        if let Some(field) = self.count.keys().find(|f| self.param.contains_key(*f)) {
            return Err(cx.error(
                &format!("param.{field}"),
                format!("`{field}` is in both `count` and `param`; give it one"),
            ));
        }
        Ok(Derive {
            at: cx.selectors("at", &self.at)?,
            count: self.count.clone().into_iter().collect(),
            param: self.param.clone().into_iter().collect(),
        })
    }
}

impl Op for Derive {
    fn apply(&self, node: &mut Value, cx: &mut ApplyCx<'_, '_>) {
        if !matches!(node, Value::Object(_)) || !cx.matches_any(&self.at) {
            return;
        }
        for (field, list) in &self.count {
            let n = match node.pointer_dotted(list) {
                Some(Value::Array(items)) => items.len(),
                Some(Value::Object(members)) => members.len(),
                _ => continue,
            };
            if let Value::Object(map) = node {
                map.set_dotted(field, Value::from(n as i64));
            }
        }
        for (field, name) in &self.param {
            if let (Some(value), Value::Object(map)) = (cx.params.value(name), &mut *node) {
                map.set_dotted(field, value);
            }
        }
    }
}
