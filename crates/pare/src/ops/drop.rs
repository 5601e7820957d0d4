//! `drop`: remove the members (or array items) that selectors name.
//!
//! Why: internal fields — `created_at`, `version`, provenance `metadata` — cost tokens on
//! every record and answer no question a model is asked. Dropped subtrees are
//! never walked, so dropping is also the cheapest op. `if_present` paths are dropped alike
//! but name what only some payloads have (a single entity's own fields at the root, beside
//! list responses), so one that matches nothing is not warned about.
//!
//! ```toml
//! [[ops]]
//! op = "drop"
//! paths = ["$..created_at", "$.meta"]
//! ```
//!
//! In: `{"id":1,"created_at":"2024-01-01","meta":{"v":2},"items":[{"id":2,"created_at":"2024-01-02"}]}`
//! Out: `{"id":1,"items":[{"id":2}]}`

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::compile::{CompileCx, PolicyError};
use super::{ApplyCx, AtParse, Op};
use crate::json::omit::{KeyTest, Scope};
use crate::query::selector::{Item, MatchState, SelectorSet};
use crate::value::Value;

/// Options of `drop`. Give `paths`, `if_present` or both.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DropSpec {
    /// Levels this op runs at. Default: every level but `full`.
    #[serde(default)]
    pub levels: Option<Vec<String>>,
    /// Selectors of what to remove, e.g. `$..created_at`, `$.segments[*].applicationColor`.
    #[serde(default)]
    pub paths: Vec<String>,
    /// Selectors of what to remove where a payload has it; unlike `paths`, a rooted one that
    /// matches nothing is not warned about. Default: none.
    #[serde(default)]
    pub if_present: Vec<String>,
}

/// `drop` compiled: its selectors, as indices into the policy's selector set.
#[derive(Debug)]
pub struct Drop {
    paths: Vec<usize>,
}

impl DropSpec {
    pub(crate) fn compile(&self, cx: &mut CompileCx) -> Result<Drop, PolicyError> {
        if self.paths.is_empty() && self.if_present.is_empty() {
            return Err(cx.error("paths", "name at least one selector"));
        }
        let mut paths = cx.selectors("paths", &self.paths)?;
        paths.extend(cx.optional_selectors("if_present", &self.if_present)?);
        Ok(Drop { paths })
    }
}

impl Op for Drop {
    fn drops(&self, set: &SelectorSet, member: &MatchState) -> bool {
        self.paths.iter().any(|&s| set.matches(member, s))
    }

    fn apply(&self, _node: &mut Value, _cx: &mut ApplyCx<'_, '_>) {}

    /// Every path a key alone decides (`$..name`, `$..*_url`, `$..['a','b']`).
    fn at_parse(&self, set: &SelectorSet) -> Option<AtParse> {
        let mut tests = Vec::new();
        for &s in &self.paths {
            let (scope, last) = match set.selector(s).segments() {
                // `$..name`: by key alone, anywhere.
                [last] if last.descendant => (Scope::Anywhere, last),
                // `$['a','b']`: the root object's members.
                [last] => (Scope::Root, last),
                // `$..list[*]['a']`: the members of each item of any `list`.
                [named, every, last]
                    if named.descendant
                        && !every.descendant
                        && !last.descendant
                        && matches!(every.items.as_slice(), [Item::Wildcard]) =>
                {
                    let mut names = Vec::new();
                    for item in &named.items {
                        match item {
                            Item::Name(n) => names.push(n.as_str().into()),
                            _ => return None,
                        }
                    }
                    (Scope::ChildOf(names), last)
                }
                _ => return None,
            };
            for item in &last.items {
                tests.push(match item {
                    Item::Name(n) => (KeyTest::Name(n.as_str().into()), scope.clone(), s),
                    Item::Glob(g) => (KeyTest::Glob(g.clone()), scope.clone(), s),
                    Item::Index(_) | Item::Wildcard => return None,
                });
            }
        }
        Some(AtParse::Drop(tests))
    }

    fn drops_members(&self) -> bool {
        true
    }
}
