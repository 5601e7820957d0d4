//! The policy file as written (TOML or JSON): serde structs with documented defaults, and
//! the JSON Schema generated from them ([`json_schema`], `pare policy schema`).
//!
//! This is what a user writes; [`crate::policy::Policy`] is the validated, compiled form.
//! Every struct denies unknown fields so a typo is an error naming the key and the allowed
//! ones, never a silently ignored setting. The parts of the file:
//!
//! - the top level, `[omitted]`: [`PolicyOptions`], [`OmittedOptions`];
//! - `[params]`: names with a default, `crate::params::Scalar`;
//! - `[[ops]]`: [`crate::ops::OpSpec`], which the ops registry makes from each op's options
//!   struct (kept in the op's own file, beside the code it configures);
//! - `[pack]`: [`pack`], read by `pare pack`;
//! - `[mcp]`: [`mcp`], read by `pare mcp`.
//! - `[http]`: [`http`], read by the REST doors.
//!
//! ```toml
//! description = "list_entities: strip empty values and internal fields"
//! default_level = "standard"
//!
//! [[ops]]
//! op = "drop"
//! paths = ["$..created_at", "$..metadata"]
//!
//! [[ops]]
//! op = "prune"
//! ```

pub mod http;
pub mod mcp;
pub mod pack;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ops::OpSpec;
use crate::params::Scalar;

/// A pare policy: which ops shape a payload, at which detail levels.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicyOptions {
    /// What this policy is for (shown by `pare policy check`).
    #[serde(default)]
    pub description: Option<String>,
    /// Detail levels, least detail first. `full` (the input unchanged) is always a level and is
    /// added at the end when not listed. Default: `["none", "minimal", "standard", "full"]`.
    #[serde(default = "default_levels")]
    pub levels: Vec<String>,
    /// The level used when a request names none. Default: `standard` (or the last level
    /// before `full` when `standard` is not defined).
    #[serde(default)]
    pub default_level: Option<String>,
    /// Parameters the caller may set (`pare compact --param minMinutes=0`), with their
    /// defaults. Referenced as `$name` in filter expressions and numeric settings.
    #[serde(default)]
    pub params: BTreeMap<String, Scalar>,
    /// The optional `_omitted` note: what was removed (names and counts, never values).
    #[serde(default)]
    pub omitted: OmittedOptions,
    /// The ops, applied in this order at every node, children first.
    #[serde(default)]
    pub ops: Vec<OpSpec>,
    /// How `pare pack` reads and packs a search response (field names, threshold, order).
    #[serde(default)]
    pub pack: Option<pack::PackOptions>,
    /// How `pare mcp` shapes each tool's results (see [`mcp`]).
    #[serde(default)]
    pub mcp: Option<mcp::McpOptions>,
    /// How REST doors (the Python package's ASGI middleware) shape each route's responses
    /// (see [`http`]).
    #[serde(default)]
    pub http: Option<http::HttpOptions>,
}

pub(crate) fn default_levels() -> Vec<String> {
    ["none", "minimal", "standard", "full"]
        .map(String::from)
        .to_vec()
}

/// Where and whether the `_omitted` note is written.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OmittedOptions {
    /// Write the note. Default: false (the report on stderr always has the full manifest).
    #[serde(default)]
    pub enabled: bool,
    /// The objects that carry a note about what was removed inside them. Default: `["$"]`
    /// (one note at the root). Use e.g. `["$.entities[*]"]` for a note per entity.
    #[serde(default = "default_omitted_at")]
    pub at: Vec<String>,
    /// The note's key. Default: `_omitted`.
    #[serde(default = "default_omitted_key")]
    pub key: String,
}

impl Default for OmittedOptions {
    fn default() -> Self {
        OmittedOptions {
            enabled: false,
            at: default_omitted_at(),
            key: default_omitted_key(),
        }
    }
}

fn default_omitted_at() -> Vec<String> {
    vec!["$".into()]
}
fn default_omitted_key() -> String {
    "_omitted".into()
}

/// The JSON Schema of the policy file, pretty-printed.
pub fn json_schema() -> String {
    let mut schema = schemars::schema_for!(PolicyOptions);
    if let Some(variants) = schema
        .as_object_mut()
        .and_then(|o| o.get_mut("$defs")?.get_mut("OpSpec")?.get_mut("oneOf"))
        .and_then(serde_json::Value::as_array_mut)
    {
        describe_ops(variants);
    }
    let mut text = serde_json::to_string_pretty(&schema).expect("a schema serializes");
    text.push('\n');
    text
}

/// Each `[[ops]]` variant of the schema (and its `op` key, where an editor's hover lands)
/// described by the op's own docs ([`crate::ops::docs`]): what, why, and its first example
/// as a value of the table.
fn describe_ops(variants: &mut [serde_json::Value]) {
    for variant in variants {
        let Some(name) = variant
            .pointer("/properties/op/const")
            .and_then(serde_json::Value::as_str)
        else {
            continue;
        };
        let Some(doc) = crate::ops::doc(name) else {
            continue;
        };
        let text = format!(
            "`{name}`: {}\n\nWhy: {}",
            doc.summary,
            crate::ops::docs::unwrap_lines(&doc.why)
        );
        let example = doc.examples.first().and_then(|ex| {
            let policy: serde_json::Value = toml::from_str(&ex.policy).ok()?;
            let table = policy
                .pointer("/ops")?
                .as_array()?
                .iter()
                .find(|op| op["op"] == name)?;
            // `op` first, as written (a TOML table reads back in key order).
            let mut example = serde_json::Map::new();
            example.insert("op".into(), name.into());
            for (k, v) in table.as_object()? {
                example.entry(k.clone()).or_insert_with(|| v.clone());
            }
            Some(serde_json::Value::Object(example))
        });
        let Some(obj) = variant.as_object_mut() else {
            continue;
        };
        obj.insert("description".into(), text.into());
        if let Some(example) = example {
            obj.insert("examples".into(), serde_json::Value::Array(vec![example]));
        }
        if let Some(op) = obj
            .get_mut("properties")
            .and_then(|p| p.get_mut("op"))
            .and_then(serde_json::Value::as_object_mut)
        {
            op.insert("description".into(), doc.summary.clone().into());
        }
    }
}
