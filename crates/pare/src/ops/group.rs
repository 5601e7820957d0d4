//! `group`: turn a list of discriminated records into a compact object, one key per kind.
//!
//! Why: relation triples like `{"type":"OM_ABOUT","target_label":"OM_Entity",
//! "target_value":"Redis"}` spend most of their tokens on labels. Grouping by
//! `type` says each label once: `{"entities":["ReportsModule","Redis"]}`. Each rule takes
//! records of some types and renders them in a shape:
//!
//! - `list`: `[value, …]`, or `[{out: field, …}, …]` with `fields`
//! - `one_or_many`: `value` for one record, `[value, …]` under `plural_key` for more
//! - `map`: `{record[map_key]: record[value] or default, …}`; a key seen twice gets a list
//! - `first`: the first record's value; `count`: how many records
//!
//! Keys appear in rule order. Records no rule takes are dropped and recorded by type (or kept
//! under `other` with `unmatched = "keep"`). A rule may be limited to some levels. A `null`
//! where a list is selected is no records: `{}`, as an empty list gives.
//!
//! ```toml
//! [[ops]]
//! op = "group"
//! at = ["$.relations"]
//! by = "type"
//! rules = [{ when = ["A"], key = "as", shape = "list", value = "v" }]
//! ```
//!
//! In: `{"relations":[{"type":"A","v":"x"},{"type":"A","v":"y"},{"type":"N","v":"z"}]}`
//! Out: `{"relations":{"as":["x","y"]}}`

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::compile::{CompileCx, PolicyError};
use super::{ApplyCx, Op};
use crate::json;
use crate::manifest::Kind;
use crate::params::Scalar;
use crate::value::{Map, Number, Value};

/// Options of `group`. A `null` where a list is selected becomes `{}`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GroupSpec {
    /// Levels this op runs at. Default: every level but `full`.
    #[serde(default)]
    pub levels: Option<Vec<String>>,
    /// Selectors of the record lists to group.
    pub at: Vec<String>,
    /// The discriminator field of each record (dotted path), e.g. `type`.
    pub by: String,
    /// The rules, in output order.
    pub rules: Vec<GroupRule>,
    /// Records no rule takes: `drop` (default; recorded by type) or `keep` (under `other_key`).
    #[serde(default)]
    pub unmatched: Unmatched,
    /// Where kept unmatched records go. Default: `other`.
    #[serde(default = "default_other")]
    pub other_key: String,
}

fn default_other() -> String {
    "other".into()
}

/// What `group` does with records no rule takes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Unmatched {
    /// Drop them, recorded by type (the default).
    #[default]
    Drop,
    /// Keep them, as they are, in a list under `other_key`.
    Keep,
}

/// How a `group` rule renders its records.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GroupShape {
    /// `[value, …]`, or `[{out: field, …}, …]` with `fields` (the default).
    List,
    /// `value` for one record, `[value, …]` under `plural_key` for more.
    OneOrMany,
    /// `{record[map_key]: record[value] or default, …}`; a key seen twice gets a list.
    Map,
    /// The first record's value.
    First,
    /// How many records.
    Count,
}

/// One output key of a group.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GroupRule {
    /// The discriminator values this rule takes.
    pub when: Vec<String>,
    /// The output key.
    pub key: String,
    /// How the records are rendered. Default: `list`.
    #[serde(default = "default_shape")]
    pub shape: GroupShape,
    /// The field (dotted path) rendered for each record. Records without it are skipped
    /// and recorded. Required unless `fields` is given or the shape is `count`.
    #[serde(default)]
    pub value: Option<String>,
    /// Render each record as an object: `"out=field"` or just `"field"`; absent or null
    /// fields are left out. For `list` and `one_or_many`.
    #[serde(default)]
    pub fields: Option<Vec<String>>,
    /// `one_or_many`: the key used for more than one record. Default: `key` + `s`.
    #[serde(default)]
    pub plural_key: Option<String>,
    /// `map`: the field whose value becomes the map key.
    #[serde(default)]
    pub map_key: Option<String>,
    /// `map`: the value for records without `value`. Default: `true`.
    #[serde(default)]
    pub default: Option<Scalar>,
    /// The levels this rule applies at (records of its types are dropped at others).
    /// Default: every level the op runs at.
    #[serde(default)]
    pub levels: Option<Vec<String>>,
}

fn default_shape() -> GroupShape {
    GroupShape::List
}

#[derive(Debug)]
struct Rule {
    when: Vec<String>,
    key: String,
    shape: GroupShape,
    value: Option<String>,
    fields: Option<Vec<(String, String)>>,
    plural_key: String,
    map_key: Option<String>,
    default: Value,
    levels: u64,
}

#[derive(Debug)]
pub(crate) struct Group {
    at: Vec<usize>,
    by: String,
    rules: Vec<Rule>,
    unmatched: Unmatched,
    other_key: String,
}

impl GroupSpec {
    pub(crate) fn compile(&self, cx: &mut CompileCx) -> Result<Group, PolicyError> {
        if self.at.is_empty() {
            return Err(cx.error("at", "name at least one selector"));
        }
        let mut rules = Vec::with_capacity(self.rules.len());
        for (i, r) in self.rules.iter().enumerate() {
            let field = |f: &str| format!("rules[{i}].{f}");
            if r.when.is_empty() {
                return Err(cx.error(&field("when"), "name at least one discriminator value"));
            }
            let needs_value =
                !matches!(r.shape, GroupShape::Count | GroupShape::Map) && r.fields.is_none();
            if needs_value && r.value.is_none() {
                return Err(cx.error(
                    &field("value"),
                    "required for this shape (or give `fields`)",
                ));
            }
            if r.fields.is_some() && !matches!(r.shape, GroupShape::List | GroupShape::OneOrMany) {
                return Err(cx.error(&field("fields"), "only for shapes `list` and `one_or_many`"));
            }
            if r.shape == GroupShape::Map && r.map_key.is_none() {
                return Err(cx.error(&field("map_key"), "required for shape `map`"));
            }
            let fields = r.fields.as_ref().map(|fs| {
                fs.iter()
                    .map(|f| match f.split_once('=') {
                        Some((out, src)) => (out.trim().to_owned(), src.trim().to_owned()),
                        None => (f.clone(), f.clone()),
                    })
                    .collect()
            });
            let default = match &r.default {
                None | Some(Scalar::Bool(true)) => Value::Bool(true),
                Some(Scalar::Bool(false)) => Value::Bool(false),
                Some(Scalar::String(s)) => Value::from(s.as_str()),
                Some(Scalar::Number(n)) => Value::Number(
                    Number::from_f64(*n)
                        .ok_or_else(|| cx.error(&field("default"), "not a finite number"))?,
                ),
            };
            rules.push(Rule {
                when: r.when.clone(),
                key: r.key.clone(),
                shape: r.shape,
                value: r.value.clone(),
                fields,
                plural_key: r
                    .plural_key
                    .clone()
                    .unwrap_or_else(|| format!("{}s", r.key)),
                map_key: r.map_key.clone(),
                default,
                levels: cx.level_mask(&field("levels"), r.levels.as_deref())?,
            });
        }
        let mut keys: Vec<&str> = rules.iter().map(|r| r.key.as_str()).collect();
        keys.sort_unstable();
        if let Some(w) = keys.windows(2).find(|w| w[0] == w[1]) {
            // Two rules at one level with the same key would overwrite each other; at
            // different levels it is fine (e.g. `similar` as ids or as objects).
            let clash = rules
                .iter()
                .filter(|r| r.key == w[0])
                .fold((0u64, false), |(seen, clash), r| {
                    (seen | r.levels, clash || seen & r.levels != 0)
                });
            if clash.1 {
                return Err(cx.error(
                    "rules",
                    format!("two rules write key `{}` at the same level", w[0]),
                ));
            }
        }
        Ok(Group {
            at: cx.selectors("at", &self.at)?,
            by: self.by.clone(),
            rules,
            unmatched: self.unmatched,
            other_key: self.other_key.clone(),
        })
    }
}

impl Op for Group {
    fn apply(&self, node: &mut Value, cx: &mut ApplyCx<'_, '_>) {
        if !matches!(node, Value::Array(_) | Value::Null) || !cx.matches_any(&self.at) {
            return;
        }
        if matches!(node, Value::Null) {
            // No list is no records: grouped, that is `{}`, as for an empty list (seed 001's
            // PRD: a memory with no relations gets `{}`, never `null`).
            *node = Value::Object(Map::new());
            return;
        }
        let Value::Array(records) = std::mem::take(node) else {
            unreachable!()
        };
        let level_bit = 1u64 << cx.level;
        let mut buckets: Vec<Vec<Value>> = vec![Vec::new(); self.rules.len()];
        let mut other = Vec::new();
        // (type, count) of dropped records, in first-seen order.
        let mut dropped: Vec<(String, u64)> = Vec::new();
        for record in records {
            let kind = record.pointer_dotted(&self.by).map(label_of);
            let rule = kind.as_deref().and_then(|k| {
                self.rules
                    .iter()
                    .position(|r| r.levels & level_bit != 0 && r.when.iter().any(|w| w == k))
            });
            match rule {
                Some(i) => buckets[i].push(record),
                None if self.unmatched == Unmatched::Keep => other.push(record),
                None => {
                    let kind = kind.unwrap_or_else(|| "?".into());
                    match dropped.iter_mut().find(|(k, _)| *k == kind) {
                        Some((_, n)) => *n += 1,
                        None => dropped.push((kind, 1)),
                    }
                }
            }
        }
        for (kind, n) in &dropped {
            cx.rec
                .label(Kind::Stripped, &format!("{}={kind}", self.by), *n);
        }
        let mut out = Map::new();
        for (rule, records) in self.rules.iter().zip(buckets) {
            if records.is_empty() {
                continue;
            }
            let mut skipped = 0u64;
            let mut values: Vec<Value> = Vec::with_capacity(records.len());
            match rule.shape {
                GroupShape::Count => {
                    out.insert(rule.key.clone(), Value::from(records.len() as i64));
                    continue;
                }
                GroupShape::Map => {
                    // A key seen twice keeps every value, as a list: no tag is lost.
                    let mut pairs: Vec<(String, Vec<Value>)> = Vec::new();
                    for r in &records {
                        let Some(k) = rule.map_key.as_deref().and_then(|f| r.pointer_dotted(f))
                        else {
                            skipped += 1;
                            continue;
                        };
                        let k = label_of(k);
                        let v = rule
                            .value
                            .as_deref()
                            .and_then(|f| r.pointer_dotted(f))
                            .filter(|v| !matches!(v, Value::Null))
                            .cloned()
                            .unwrap_or_else(|| rule.default.clone());
                        match pairs.iter_mut().find(|(x, _)| *x == k) {
                            Some((_, vs)) => vs.push(v),
                            None => pairs.push((k, vec![v])),
                        }
                    }
                    if skipped > 0 {
                        let field = rule.map_key.as_deref().unwrap_or("");
                        cx.rec.label(
                            Kind::Stripped,
                            &format!("{}:missing {field}", rule.key),
                            skipped,
                        );
                    }
                    if !pairs.is_empty() {
                        let map: Map = pairs
                            .into_iter()
                            .map(|(k, mut vs)| {
                                let v = if vs.len() == 1 {
                                    vs.pop().expect("one value")
                                } else {
                                    Value::Array(vs)
                                };
                                (k, v)
                            })
                            .collect();
                        out.insert(rule.key.clone(), Value::Object(map));
                    }
                    continue;
                }
                _ => {}
            }
            for r in &records {
                match (&rule.fields, &rule.value) {
                    (Some(fields), _) => {
                        let mut o = Map::with_capacity(fields.len());
                        for (name, src) in fields {
                            if let Some(v) = r.pointer_dotted(src)
                                && !matches!(v, Value::Null)
                            {
                                o.insert(name.clone(), v.clone());
                            }
                        }
                        values.push(Value::Object(o));
                    }
                    (None, Some(field)) => match r.pointer_dotted(field) {
                        Some(v) if !matches!(v, Value::Null) => values.push(v.clone()),
                        _ => skipped += 1,
                    },
                    (None, None) => unreachable!("compile requires value or fields"),
                }
            }
            if skipped > 0 {
                cx.rec.label(
                    Kind::Stripped,
                    &format!(
                        "{}:missing {}",
                        rule.key,
                        rule.value.as_deref().unwrap_or("")
                    ),
                    skipped,
                );
            }
            match (rule.shape, values.len()) {
                (_, 0) => {}
                (GroupShape::First, _) | (GroupShape::OneOrMany, 1) => {
                    let first = values.swap_remove(0);
                    out.insert(rule.key.clone(), first);
                }
                (GroupShape::OneOrMany, _) => {
                    out.insert(rule.plural_key.clone(), Value::Array(values));
                }
                _ => {
                    out.insert(rule.key.clone(), Value::Array(values));
                }
            }
        }
        if !other.is_empty() {
            out.insert(self.other_key.clone(), Value::Array(other));
        }
        *node = Value::Object(out);
    }
}

/// A discriminator or map key as text: strings as they are, anything else as JSON.
fn label_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_string(),
        other => json::to_compact(other),
    }
}
