//! `nest`: move the entries of an id-keyed map into the array items they belong to.
//!
//! Why: responses often carry a side map keyed by the ids of their results —
//! `{"results":[{"id":"7c22…"}], "meta_relations":{"7c22…":{…}}}` — so every id (a UUID is
//! ~20 tokens) is written twice and the model has to join them. Nesting writes each entry
//! into its item as a field and says the id once. Lossless: entries without a matching item
//! stay in the map, and the map goes only when it is empty. With `missing`, an item the map
//! has no entry for gets that value (`{}`: seed 001's "a memory with no relations has
//! `relations: {}`"), so it does not read as one whose entry was left out.
//!
//! ```toml
//! [[ops]]
//! op = "nest"
//! at = ["$"]
//! map = "rel"
//! into = "r"
//! match = "id"
//! ```
//!
//! In: `{"r":[{"id":"a"},{"id":"b"}],"rel":{"a":{"x":1},"c":{"x":3}}}`
//! Out: `{"r":[{"id":"a","rel":{"x":1}},{"id":"b"}],"rel":{"c":{"x":3}}}`

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::compile::{CompileCx, PolicyError};
use super::{ApplyCx, Op};
use crate::value::Value;

/// Options of `nest`. Entries with no matching item stay in the map.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NestSpec {
    /// Levels this op runs at. Default: every level but `full`.
    #[serde(default)]
    pub levels: Option<Vec<String>>,
    /// Selectors of the objects holding both the map and the array.
    pub at: Vec<String>,
    /// The member holding the id-keyed map.
    pub map: String,
    /// The member holding the array of objects.
    pub into: String,
    /// The item field (dotted path) whose value is the map key.
    #[serde(rename = "match")]
    pub match_field: String,
    /// The field each entry is written to in its item. Default: the map's name.
    #[serde(default, rename = "as")]
    pub as_field: Option<String>,
    /// The value an item gets when the map has no entry for its id (only where the map is
    /// there at all), e.g. `{}`. Default: none (the item gets no field).
    #[serde(default)]
    #[schemars(extend("type" = ["object", "array", "string", "number", "boolean"]))]
    pub missing: Option<serde_json::Value>,
}

#[derive(Debug)]
pub(crate) struct Nest {
    at: Vec<usize>,
    map: String,
    into: String,
    match_field: String,
    as_field: String,
    missing: Option<Value>,
}

impl NestSpec {
    pub(crate) fn compile(&self, cx: &mut CompileCx) -> Result<Nest, PolicyError> {
        if self.at.is_empty() {
            return Err(cx.error("at", "name at least one selector"));
        }
        if self.map == self.into {
            return Err(cx.error("into", "must differ from `map`"));
        }
        Ok(Nest {
            at: cx.selectors("at", &self.at)?,
            map: self.map.clone(),
            into: self.into.clone(),
            match_field: self.match_field.clone(),
            as_field: self.as_field.clone().unwrap_or_else(|| self.map.clone()),
            missing: self
                .missing
                .as_ref()
                .map(|v| crate::json::parse(&v.to_string()).expect("serde_json writes JSON")),
        })
    }
}

impl Op for Nest {
    fn apply(&self, node: &mut Value, cx: &mut ApplyCx<'_, '_>) {
        let Value::Object(parent) = node else { return };
        if !cx.matches_any(&self.at) {
            return;
        }
        let (Some(Value::Object(_)), Some(Value::Array(_))) =
            (parent.get(&self.map), parent.get(&self.into))
        else {
            return;
        };
        let at = parent.position(&self.map).expect("checked above");
        let Some(Value::Object(mut map)) = parent.remove(&self.map) else {
            return;
        };
        let Some(Value::Array(items)) = parent.get_mut(&self.into) else {
            return;
        };
        for item in items.iter_mut() {
            // Map keys are strings; an id of 7 matches the key "7".
            let id = match item.pointer_dotted(&self.match_field) {
                Some(Value::String(s)) => s.to_string(),
                Some(v @ (Value::Number(_) | Value::Bool(_))) => crate::json::to_compact(v),
                _ => continue,
            };
            let Value::Object(obj) = item else { continue };
            // Never overwrite a field the item already has.
            if obj.contains_key(&self.as_field) {
                continue;
            }
            if let Some(entry) = map.remove(&id).or_else(|| self.missing.clone()) {
                obj.push_unique(self.as_field.clone(), entry);
            }
        }
        if !map.is_empty() {
            // What no item took stays where the map was.
            parent.insert_at(at, self.map.clone(), Value::Object(map));
        }
    }
}
