//! `partition`: split a list of records into an object keyed by one field's value.
//!
//! Why: relationship lists repeat their type on every record —
//! `{"source_id":"sys-1","target_id":"sys-2","relationship_type":"DEPENDS_ON"}`, 75 times
//! over four types — so most of a type's tokens say one fact again. Keyed by type, each type
//! is said once and every record keeps all its other fields (on the corpus's `list_entities`
//! payload this is 2% of the input). Unlike `group`, which renders chosen fields of chosen
//! types, nothing is dropped or renamed: every kind becomes a key, in first-seen order.
//!
//! What changes is order: records keep their order within a kind, not across kinds. A list is
//! left as it is unless every item is an object whose `by` field is a string (so no record
//! could be mis-filed), and unless some kind has two records (otherwise nothing is said once).
//!
//! ```toml
//! [[ops]]
//! op = "partition"
//! at = ["$.relationships"]
//! by = "t"
//! ```
//!
//! In: `{"relationships":[{"t":"A","v":1},{"t":"B","v":2},{"t":"A","v":3}]}`
//! Out: `{"relationships":{"A":[{"v":1},{"v":3}],"B":[{"v":2}]}}`

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::compile::{CompileCx, PolicyError};
use super::records::{Records, Values};
use super::{ApplyCx, ListOp, Op, check_min_items, default_min_items};
use crate::value::{Key, Map, Value};

/// Options of `partition`. Every kind becomes a key, in first-seen order.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PartitionSpec {
    /// Levels this op runs at. Default: every level but `full`.
    #[serde(default)]
    pub levels: Option<Vec<String>>,
    /// Selectors of lists of records.
    pub at: Vec<String>,
    /// The member of each record whose (string) value becomes its key, e.g. `relationship_type`.
    pub by: String,
    /// Partition only lists with at least this many items. Default: 2.
    #[serde(default = "default_min_items")]
    pub min_items: usize,
}

#[derive(Debug)]
pub(crate) struct Partition {
    at: Vec<usize>,
    by: String,
    min_items: usize,
}

impl PartitionSpec {
    pub(crate) fn compile(&self, cx: &mut CompileCx) -> Result<Partition, PolicyError> {
        if self.at.is_empty() {
            return Err(cx.error("at", "name at least one selector"));
        }
        if self.by.is_empty() {
            return Err(cx.error("by", "name the member that holds each record's kind"));
        }
        check_min_items(cx, self.min_items)?;
        Ok(Partition {
            at: cx.selectors("at", &self.at)?,
            by: self.by.clone(),
            min_items: self.min_items,
        })
    }
}

impl Partition {
    /// Each item's kind, numbered in first-seen order, and how many kinds; `None` leaves the
    /// list as it is (too short, an item that is not an object with a string `by`, or no
    /// kind with two items).
    pub(crate) fn slots<'r>(&self, items: &impl Records<'r>) -> Option<(Vec<usize>, usize)> {
        if items.count() < self.min_items {
            return None;
        }
        let mut index: HashMap<&[u8], usize> = HashMap::new();
        let mut slot_of = Vec::with_capacity(items.count());
        for i in 0..items.count() {
            let kind = items.string(items.named(i, &self.by)?)?;
            let next = index.len();
            slot_of.push(*index.entry(kind).or_insert(next));
        }
        (index.len() < slot_of.len()).then_some((slot_of, index.len()))
    }

    /// The member of each record whose value becomes its key.
    pub(crate) fn by(&self) -> &str {
        &self.by
    }

    pub(crate) fn at(&self) -> &[usize] {
        &self.at
    }
}

impl Op for Partition {
    fn apply(&self, node: &mut Value, cx: &mut ApplyCx<'_, '_>) {
        let Value::Array(items) = &*node else { return };
        if !cx.matches_any(&self.at) {
            return;
        }
        // Decide before moving anything, so a list that does not qualify is untouched.
        let Some((slot_of, kinds)) = self.slots(&Values(items)) else {
            return;
        };
        let Value::Array(items) = std::mem::take(node) else {
            unreachable!("checked above")
        };
        let mut groups: Vec<(Key, Vec<Value>)> = Vec::with_capacity(kinds);
        for (mut item, slot) in items.into_iter().zip(slot_of) {
            let Some(Value::String(kind)) = item.as_object_mut().and_then(|o| o.remove(&self.by))
            else {
                unreachable!("every item was checked to be an object with a string `by`")
            };
            if slot == groups.len() {
                groups.push((kind, Vec::new())); // the kind's first record
            }
            groups[slot].1.push(item);
        }
        let entries = groups
            .into_iter()
            .map(|(k, v)| (k, Value::Array(v)))
            .collect();
        *node = Value::Object(Map::from_keyed_unchecked(entries));
    }

    fn as_list(&self) -> Option<ListOp<'_>> {
        Some(ListOp::Partition(self))
    }

    /// A list becomes a map of one or more lists only when it has items, and the items'
    /// `by` fields go from items (never pruned), so no member turns empty or non-empty.
    fn keeps_emptiness(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use crate::ops::test_support::run;

    /// Twenty kinds, interleaved: keyed in first-seen order, each record under its own.
    #[test]
    fn many_kinds_keep_their_first_seen_order() {
        let kinds: Vec<usize> = (0..40).map(|i| (i * 7) % 20).collect();
        let items: Vec<String> = kinds
            .iter()
            .enumerate()
            .map(|(i, k)| format!(r#"{{"t":"k{k}","v":{i}}}"#))
            .collect();
        let policy = "[[ops]]\nop = \"partition\"\nat = [\"$.r\"]\nby = \"t\"\n";
        let (out, _) = run(policy, &format!(r#"{{"r":[{}]}}"#, items.join(",")));
        let mut want = Vec::new();
        for k in &kinds {
            if !want.contains(k) {
                want.push(*k);
            }
        }
        let v = crate::json::parse(&out).unwrap();
        let r = v
            .as_object()
            .unwrap()
            .get("r")
            .unwrap()
            .as_object()
            .unwrap();
        let got: Vec<String> = r.iter().map(|(k, _)| k.to_string()).collect();
        let want: Vec<String> = want.iter().map(|k| format!("k{k}")).collect();
        assert_eq!(got, want);
        for (k, list) in r.iter() {
            for item in list.as_array().unwrap() {
                let i = item.as_object().unwrap().get("v").unwrap();
                let i: usize = crate::json::to_compact(i).parse().unwrap();
                assert_eq!(format!("k{}", kinds[i]), k.as_str());
            }
        }
    }
}
