//! The ops: one file each, registered in one place below.
//!
//! Adding an op: write `ops/<name>.rs` (its options struct `<Name>Spec`, with a `levels`
//! field and a `compile` method, and its compiled form implementing `Op`), then add its
//! `pub mod <name>;` line and its `<Name> => <name>::<Name>Spec` line to the registry below.
//! The `mod` lines stand outside the macro so that rustfmt (which does not look inside a
//! macro invocation) formats the op files.
//!
//! An op has options (a serde struct, the `[[ops]]` table of a policy), compiles them once
//! through the policy's `compile::CompileCx` (it never sees the compiled policy) and then
//! acts during the engine's single walk over the value: `Op::drops` before the walk
//! descends into an object member, `Op::apply` on each node after its children are done.
//! Ops record what they remove (`ApplyCx::rec`).
//!
//! Each op file opens with a `//!` block in the format [`docs()`] reads (summary, why, examples
//! with their input and output); it is embedded in the binary and tested (every example runs).

use std::fmt::Debug;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::manifest::Recorder;
use crate::params::Params;
use crate::query::selector::{MatchState, SelectorSet, Step};
use crate::tokens::Tokenizer;
use crate::value::Value;
use compile::{CompileCx, Fault, InvalidKind, PolicyError};

/// Registers ops: `Variant => module::Spec`. The module holds the op's options struct
/// (`Spec`, with a `levels` field and a `compile` method) and its compiled form.
macro_rules! ops {
    ($($variant:ident => $module:ident :: $spec:ident),* $(,)?) => {
        /// One entry of a policy's `ops` list; `op` names its kind.
        #[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
        #[serde(tag = "op", rename_all = "snake_case")]
        pub enum OpSpec {
            $(
                /// One op's table: `op` is the variant's name in snake_case, the rest its options.
                $variant($module::$spec),
            )*
        }

        impl OpSpec {
            /// The op's name as written in policies.
            pub fn name(&self) -> &'static str {
                match self { $(OpSpec::$variant(_) => stringify!($module),)* }
            }
            /// The levels the op runs at; `None`: every level but `full`.
            pub fn levels(&self) -> Option<&[String]> {
                match self { $(OpSpec::$variant(s) => s.levels.as_deref(),)* }
            }
            pub(crate) fn compile(&self, cx: &mut CompileCx) -> Result<Box<dyn Op>, PolicyError> {
                match self { $(OpSpec::$variant(s) => Ok(Box::new(s.compile(cx)?)),)* }
            }
            /// Read one `[[ops]]` table. Errors carry the path inside the table (`.paths[0]`)
            /// and what is wrong there; each op's fields are read on their own so that a bad
            /// value is reported at its key, which a tagged enum cannot do.
            pub(crate) fn from_tree(tree: serde_json::Value) -> Result<OpSpec, (String, Fault)> {
                let serde_json::Value::Object(mut map) = tree else {
                    return Err((String::new(), Fault::bad("expected a table with an `op` key")));
                };
                let allowed = NAMES.join(", ");
                let name = match map.remove("op") {
                    Some(serde_json::Value::String(name)) => name,
                    Some(other) => {
                        let message = format!("expected an op name, found {other}; allowed: {allowed}");
                        let value = other.to_string();
                        return Err((".op".into(), Fault::not_one_of(InvalidKind::WrongType, Some(&value), NAMES, message)));
                    }
                    None => {
                        let message = format!("missing `op`; allowed: {allowed}");
                        return Err((String::new(), Fault::not_one_of(InvalidKind::MissingKey, Some("op"), NAMES, message)));
                    }
                };
                let rest = serde_json::Value::Object(map);
                let at = |e: serde_path_to_error::Error<serde_json::Error>| {
                    let path = e.path().to_string();
                    let path = if path == "." { String::new() } else { format!(".{path}") };
                    (path, Fault::from_serde(e.inner().to_string()))
                };
                match name.as_str() {
                    $(stringify!($module) => serde_path_to_error::deserialize(rest).map(OpSpec::$variant).map_err(at),)*
                    other => {
                        let message = format!("unknown op `{other}`; allowed: {allowed}");
                        Err((".op".into(), Fault::not_one_of(InvalidKind::UnknownValue, Some(other), NAMES, message)))
                    }
                }
            }
        }

        /// Every op name, in registry order.
        pub const NAMES: &[&str] = &[$(stringify!($module)),*];

        /// Each op's name, `//!` doc block (only the block is embedded) and options schema,
        /// in registry order: what [`docs::docs`] reads.
        pub(crate) const DOCS: &[(&str, &str, fn() -> schemars::Schema)] = &[
            $((stringify!($module), docs::doc_block!($module), schema_of::<$module::$spec>),)*
        ];
    };
}

pub mod compile;
pub mod docs;
pub(crate) mod records;
pub(crate) mod streamed_lists;

pub use docs::{OpDoc, doc, docs};

fn schema_of<T: JsonSchema>() -> schemars::Schema {
    schemars::schema_for!(T)
}

// The registry: a `mod` line (rustfmt keeps these sorted) and an `ops!` line per op. The
// `ops!` order is the order of `NAMES`, of error messages and of the JSON Schema.
pub mod derive;
pub mod drop;
pub mod filter;
pub mod flatten;
pub mod group;
pub mod hoist;
pub mod keep;
pub mod limit;
pub mod merge;
pub mod nest;
pub mod partition;
pub mod pluck;
pub mod prune;
pub mod rename;
pub mod round;
pub mod tier;
pub mod truncate;

ops! {
    Prune => prune::PruneSpec,
    Drop => drop::DropSpec,
    Keep => keep::KeepSpec,
    Pluck => pluck::PluckSpec,
    Flatten => flatten::FlattenSpec,
    Hoist => hoist::HoistSpec,
    Group => group::GroupSpec,
    Filter => filter::FilterSpec,
    Merge => merge::MergeSpec,
    Round => round::RoundSpec,
    Tier => tier::TierSpec,
    Limit => limit::LimitSpec,
    Truncate => truncate::TruncateSpec,
    Rename => rename::RenameSpec,
    Nest => nest::NestSpec,
    Partition => partition::PartitionSpec,
    Derive => derive::DeriveSpec,
}

/// A compiled op.
pub(crate) trait Op: Send + Sync + Debug {
    /// Remove an object member (or array element) before the walk descends into it.
    fn drops(&self, _set: &SelectorSet, _member: &MatchState) -> bool {
        false
    }
    /// True when the op can act on nodes no selector reaches (the walk then visits every
    /// node instead of skipping subtrees no selector can match).
    fn everywhere(&self) -> bool {
        false
    }
    /// Transform a node whose children are done.
    fn apply(&self, node: &mut Value, cx: &mut ApplyCx<'_, '_>);
    /// What the parser can do of this op as it reads, if all of it (see [`crate::early`]).
    fn at_parse(&self, _set: &SelectorSet) -> Option<AtParse> {
        None
    }
    /// Whether [`Op::drops`] may say yes: the first op in policy order that drops a
    /// member is the one that counts it, so the parser drops only if it can do every such op.
    fn drops_members(&self) -> bool {
        false
    }
    /// Whether the op leaves every object member as empty or non-empty as it found it and
    /// adds no empty member, anywhere: then a `prune` can run while parsing, before it.
    fn keeps_emptiness(&self) -> bool {
        false
    }
    /// Whether the op may add a member named `key` to an object (a hoist's sibling): a
    /// condition that reads such a member is then the walk's to decide.
    fn may_add_member(&self, _key: &str) -> bool {
        false
    }
    /// A list op, which [`crate::json::stream`] can also apply to the items it has written
    /// ([`records`]).
    fn as_list(&self) -> Option<ListOp<'_>> {
        None
    }
}

/// The ops that say something once for a whole list, deciding over [`records::Records`].
#[derive(Clone, Copy)]
pub(crate) enum ListOp<'o> {
    Hoist(&'o hoist::Hoist),
    Partition(&'o partition::Partition),
}

impl ListOp<'_> {
    /// The op's selectors of lists.
    pub(crate) fn at(&self) -> &[usize] {
        match self {
            ListOp::Hoist(h) => h.at(),
            ListOp::Partition(p) => p.at(),
        }
    }
}

/// An op the parser applies as it reads ([`Op::at_parse`]).
pub(crate) enum AtParse {
    /// Drop members by key, in the objects a scope names: (test, scope, selector).
    Drop(Vec<(crate::json::omit::KeyTest, crate::json::omit::Scope, usize)>),
    /// Prune these empty values from every object.
    Prune(crate::json::omit::Empties),
    /// Prune these empty values from the objects a condition on their own members holds
    /// for.
    PruneWhere(crate::json::omit::Empties, crate::json::omit::Condition),
}

/// A member to add next to the node being shaped, in its parent object.
#[derive(Debug)]
pub(crate) struct Sibling {
    pub before: bool,
    pub key: String,
    pub value: Value,
}

/// What an op sees of the walk at one node.
pub(crate) struct ApplyCx<'w, 'k> {
    /// The level being shaped (index into the policy's levels).
    pub level: usize,
    pub state: MatchState,
    pub set: &'w SelectorSet,
    pub params: &'w Params,
    pub tokenizer: &'w dyn Tokenizer,
    /// The caller's question, if any (`limit`'s `keep = "relevant"`).
    pub query: Option<&'w str>,
    pub rec: &'w mut Recorder,
    /// This node's key when its parent is an object.
    pub key: Option<&'k str>,
    /// Members to add beside this node in its parent object.
    pub siblings: &'w mut Vec<Sibling>,
    /// Whether the root is an object (where the `_legend` goes).
    pub root_is_object: bool,
    /// Key renames in use (`short`, `long`), for the `_legend`.
    pub legend: &'w mut Vec<(String, String)>,
}

impl ApplyCx<'_, '_> {
    #[inline]
    pub(crate) fn matches_any(&self, sels: &[usize]) -> bool {
        sels.iter().any(|&s| self.set.matches(&self.state, s))
    }
    /// Does selector `sel` select member `key` of this (object) node?
    #[inline]
    pub(crate) fn member_matches(&self, key: &str, sels: &[usize]) -> bool {
        let st = self.set.step(&self.state, Step::Key(key));
        sels.iter().any(|&s| self.set.matches(&st, s))
    }
}

/// Shared option helpers for op specs.
pub(crate) fn default_true() -> bool {
    true
}

/// `min_items` of the ops that say something once for a whole list (`hoist`, `partition`):
/// two items is the least where that can save anything, so it is the default and the bound.
pub(crate) fn default_min_items() -> usize {
    2
}

pub(crate) fn check_min_items(cx: &mut CompileCx, min_items: usize) -> Result<(), PolicyError> {
    if min_items < default_min_items() {
        return Err(cx.error("min_items", "must be at least 2"));
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod test_support {
    use crate::policy::Policy;
    use crate::shape::{ShapeOptions, shape};

    /// The output and the manifest lines (`op kind path count`) of `policy` on `input`.
    pub(crate) fn run(policy: &str, input: &str) -> (String, Vec<String>) {
        let policy = Policy::parse(policy).unwrap();
        let mut opts = ShapeOptions::new(&policy);
        opts.track_paths = true;
        let out = shape(crate::json::parse(input).unwrap(), &policy, &opts);
        let lines = out.manifest.entries.iter();
        let lines = lines.map(|e| format!("{} {} {} {}", e.op, e.kind.as_str(), e.path, e.count));
        (crate::json::to_compact(&out.value), lines.collect())
    }
}
