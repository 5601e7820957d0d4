//! `pluck`: replace an array of objects by the array of one field's values.
//!
//! Why: labels, maintainers or assignees often come as objects of which one field (`name`,
//! `login`) is all a reader needs: `["bug","ui"]` says what two objects with ids, colors and urls
//! say, in a fraction of the tokens. The other fields are recorded as stripped. By default an
//! array is plucked only when every item is an object having the field, so no item vanishes and
//! no position shifts; `missing` can put `null` in such an item's place or drop it (recorded).
//!
//! ```toml
//! [[ops]]
//! op = "pluck"
//! at = ["$..labels"]
//! field = "name"
//! ```
//!
//! In: `{"labels":[{"id":1,"name":"bug"},{"id":2,"name":"ui"}]}`
//! Out: `{"labels":["bug","ui"]}`
//!
//! ```toml
//! [[ops]]
//! op = "pluck"
//! at = ["$..labels"]
//! field = "name"
//! ```
//!
//! In: `{"labels":[{"id":1,"name":"bug"},"wontfix"]}`
//! Out: `{"labels":[{"id":1,"name":"bug"},"wontfix"]}`
//!
//! ```toml
//! [[ops]]
//! op = "pluck"
//! at = ["$.maintainers"]
//! field = "name"
//! missing = "null"
//! ```
//!
//! In: `{"maintainers":[{"name":"ann","email":"a@x.org"},{"email":"b@x.org"}]}`
//! Out: `{"maintainers":["ann",null]}`

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::compile::{CompileCx, PolicyError};
use super::{ApplyCx, Op};
use crate::manifest::Kind;
use crate::value::Value;

/// Options of `pluck`. The other fields of each object are recorded as stripped.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PluckSpec {
    /// Levels this op runs at. Default: every level but `full`.
    #[serde(default)]
    pub levels: Option<Vec<String>>,
    /// Selectors of the arrays of objects to pluck, e.g. `$..labels`.
    pub at: Vec<String>,
    /// The member whose value replaces each object, e.g. `name`.
    pub field: String,
    /// What to do when some item is not an object or lacks `field`: `leave` (the default)
    /// leaves the whole array as it is; `null` puts `null` in that item's place; `drop`
    /// removes the item. What `null` and `drop` remove is recorded. An array in which no item
    /// has the field is always left as it is: a list already plucked to names stays as it is.
    #[serde(default)]
    pub missing: PluckMissing,
}

/// What `pluck` does with items that have no value to pluck.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PluckMissing {
    /// Leave the whole array unchanged (the default).
    #[default]
    Leave,
    /// Put `null` in the item's place: positions are kept.
    Null,
    /// Remove the item.
    Drop,
}

#[derive(Debug)]
pub(crate) struct Pluck {
    at: Vec<usize>,
    field: String,
    missing: PluckMissing,
}

impl PluckSpec {
    pub(crate) fn compile(&self, cx: &mut CompileCx) -> Result<Pluck, PolicyError> {
        if self.at.is_empty() {
            return Err(cx.error("at", "name at least one selector"));
        }
        Ok(Pluck {
            at: cx.selectors("at", &self.at)?,
            field: self.field.clone(),
            missing: self.missing,
        })
    }
}

impl Op for Pluck {
    fn apply(&self, node: &mut Value, cx: &mut ApplyCx<'_, '_>) {
        let Value::Array(items) = node else { return };
        if !cx.matches_any(&self.at) {
            return;
        }
        let has = |v: &Value| v.as_object().is_some_and(|o| o.contains_key(&self.field));
        let all = items.iter().all(has);
        if !items.iter().any(has) || (!all && self.missing == PluckMissing::Leave) {
            return;
        }
        let mark = cx.rec.enter_index();
        let mut out = Vec::with_capacity(items.len());
        for item in std::mem::take(items) {
            match item {
                Value::Object(map) if map.contains_key(&self.field) => {
                    let mut plucked = Value::Null;
                    for (k, v) in map {
                        if *k == *self.field {
                            plucked = v;
                        } else {
                            cx.rec.key(removed_kind(&v), &k, 1);
                        }
                    }
                    out.push(plucked);
                }
                Value::Null if self.missing == PluckMissing::Null => out.push(Value::Null),
                other => {
                    cx.rec.here(removed_kind(&other), 1);
                    if self.missing == PluckMissing::Null {
                        out.push(Value::Null);
                    }
                }
            }
        }
        cx.rec.leave(mark);
        *items = out;
    }
}

/// A removed value that held nothing is reported as empty, not stripped (as `drop` does).
fn removed_kind(v: &Value) -> Kind {
    if v.is_empty_like() {
        Kind::Empty
    } else {
        Kind::Stripped
    }
}

#[cfg(test)]
mod tests {
    use crate::policy::Policy;

    use crate::ops::test_support::run;

    const LABELS: &str = r#"{"labels":[{"id":1,"name":"bug","color":"f00","note":""},{"id":2,"name":"ui"},{"id":3,"color":"0f0"},"wontfix",null]}"#;

    fn policy(missing: &str) -> String {
        format!(
            "[[ops]]\nop = \"pluck\"\nat = [\"$.labels\"]\nfield = \"name\"\nmissing = \"{missing}\"\n"
        )
    }

    #[test]
    fn the_other_fields_are_recorded() {
        let (out, manifest) = run(&policy("null"), LABELS);
        assert_eq!(out, r#"{"labels":["bug","ui",null,null,null]}"#);
        assert_eq!(
            manifest,
            [
                "pluck empty $.labels[*].note 1",
                "pluck stripped $.labels[*] 2",
                "pluck stripped $.labels[*].color 1",
                "pluck stripped $.labels[*].id 2",
            ]
        );
        let (out, manifest) = run(&policy("drop"), LABELS);
        assert_eq!(out, r#"{"labels":["bug","ui"]}"#);
        assert_eq!(
            manifest,
            [
                "pluck empty $.labels[*] 1",
                "pluck empty $.labels[*].note 1",
                "pluck stripped $.labels[*] 2",
                "pluck stripped $.labels[*].color 1",
                "pluck stripped $.labels[*].id 2",
            ]
        );
        let (out, manifest) = run(&policy("leave"), LABELS);
        assert_eq!(out, LABELS);
        assert!(manifest.is_empty(), "{manifest:?}");
    }

    #[test]
    fn bad_missing_names_the_key_the_value_and_the_allowed_values() {
        let e = Policy::parse(&policy("skip")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "policy error at `ops[0].missing`: unknown variant `skip`, expected one of \
             `leave`, `null`, `drop`"
        );
        let d = e.details();
        assert_eq!(d.value.as_deref(), Some("skip"));
        assert_eq!(d.allowed, ["leave", "null", "drop"]);
        let e = Policy::parse("[[ops]]\nop = \"pluck\"\nat = [\"$.a\"]\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "policy error at `ops[0]`: missing field `field`"
        );
    }

    #[test]
    fn plucking_twice_changes_nothing() {
        for missing in ["leave", "null", "drop"] {
            let (once, _) = run(&policy(missing), LABELS);
            let (twice, manifest) = run(&policy(missing), &once);
            assert_eq!(once, twice, "{missing}");
            assert!(manifest.is_empty(), "{missing}: {manifest:?}");
        }
    }
}
