//! The query language of policies: JSONPath selectors ([`selector`]) say *where* an op acts,
//! filter expressions ([`expr`]) say *which* items it keeps.
//!
//! A language of its own, apart from policies: it knows only [`crate::value`], so it can be
//! parsed, tested and fuzzed without a policy. The ops compile their selectors into one
//! [`selector::SelectorSet`] that the walk in [`mod@crate::shape`] steps through node by node.

pub mod expr;
pub mod selector;

use crate::value::Value;
use selector::{MatchState, Selector, SelectorError, SelectorSet, Step};

/// The nodes `selector` selects in `value`, in document order (a node and its descendant
/// can both be selected, by `..`).
///
/// ```
/// use pare::query::{select, selector::Selector};
/// let v = pare::json::parse(r#"{"a":[{"id":1},{"id":2}]}"#).unwrap();
/// let ids = select(&v, &Selector::parse("$.a[*].id").unwrap()).unwrap();
/// assert_eq!(ids.len(), 2);
/// ```
pub fn select<'v>(value: &'v Value, selector: &Selector) -> Result<Vec<&'v Value>, SelectorError> {
    let set = SelectorSet::new(vec![selector.clone()])?;
    let mut out = Vec::new();
    select_in(value, &set, set.root(), &mut out);
    Ok(out)
}

fn select_in<'v>(node: &'v Value, set: &SelectorSet, state: MatchState, out: &mut Vec<&'v Value>) {
    if set.matches_any(&state) {
        out.push(node);
    }
    if !set.can_descend(&state) {
        return;
    }
    children(node, |child, step| {
        let s = set.step(&state, step);
        if !set.is_dead(&s) {
            select_in(child, set, s, out);
        }
    });
}

/// Each child of `node` (an object's members, an array's elements) with the step that
/// leads to it, in order: how a walk over a [`SelectorSet`] goes down one level.
pub(crate) fn children<'v>(node: &'v Value, mut visit: impl FnMut(&'v Value, Step<'v>)) {
    match node {
        Value::Object(map) => {
            for (k, v) in map.entries() {
                visit(v, Step::Key(k));
            }
        }
        Value::Array(items) => {
            let len = items.len();
            for (index, v) in items.iter().enumerate() {
                visit(v, Step::Index { index, len });
            }
        }
        _ => {}
    }
}
