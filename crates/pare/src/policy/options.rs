//! The policy file as written (TOML or JSON): serde structs with documented defaults.
//!
//! These are the *options*; [`super::Policy`] is the validated, compiled form. Every struct
//! denies unknown fields so a typo is an error naming the key and the allowed ones, never a
//! silently ignored setting. The JSON Schema (`pare policy schema`) is generated from here.
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

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ops::OpSpec;

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
    pub pack: Option<crate::pack::options::PackOptions>,
    /// How `pare mcp` shapes each tool's results (see [`super::mcp`]).
    #[serde(default)]
    pub mcp: Option<super::mcp::McpOptions>,
}

pub fn default_levels() -> Vec<String> {
    ["none", "minimal", "standard", "full"]
        .map(String::from)
        .to_vec()
}

/// A parameter value.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Scalar {
    Bool(bool),
    Number(f64),
    String(String),
}

impl Scalar {
    pub fn kind(&self) -> &'static str {
        match self {
            Scalar::Bool(_) => "boolean",
            Scalar::Number(_) => "number",
            Scalar::String(_) => "string",
        }
    }
    /// Parse a command-line value with the type of `like` (the declared default).
    pub fn parse_like(text: &str, like: &Scalar) -> Option<Scalar> {
        match like {
            Scalar::Bool(_) => match text {
                "true" => Some(Scalar::Bool(true)),
                "false" => Some(Scalar::Bool(false)),
                _ => None,
            },
            Scalar::Number(_) => text
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .map(Scalar::Number),
            Scalar::String(_) => Some(Scalar::String(text.to_owned())),
        }
    }
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

/// A number, or `"$name"` to take a policy parameter's value.
#[derive(Debug, Clone, PartialEq)]
pub enum NumberOrParam {
    Number(f64),
    Param(String),
}

impl<'de> Deserialize<'de> for NumberOrParam {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = NumberOrParam;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number or a parameter reference like \"$maxGapMinutes\"")
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(NumberOrParam::Number(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(NumberOrParam::Number(v as f64))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(NumberOrParam::Number(v as f64))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
                match v.strip_prefix('$') {
                    Some(name) if !name.is_empty() => Ok(NumberOrParam::Param(name.to_owned())),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Str(v), &self)),
                }
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for NumberOrParam {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            NumberOrParam::Number(n) => s.serialize_f64(*n),
            NumberOrParam::Param(p) => s.serialize_str(&format!("${p}")),
        }
    }
}

impl JsonSchema for NumberOrParam {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NumberOrParam".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A number, or \"$name\" to use a policy parameter.",
            "anyOf": [{"type": "number"}, {"type": "string", "pattern": "^\\$.+"}]
        })
    }
}
