//! The query language of policies: JSONPath selectors ([`selector`]) say *where* an op acts,
//! filter expressions ([`expr`]) say *which* items it keeps.
//!
//! A language of its own, apart from policies: it knows only [`crate::value`], so it can be
//! parsed, tested and fuzzed without a policy. The ops compile their selectors into one
//! [`selector::SelectorSet`] that the walk in [`crate::shape`] steps through node by node.

pub mod expr;
pub mod selector;
