//! Ops applied while parsing: a policy's drops by key and its prunes, done by the
//! parser as each object closes (`json/omit.rs`) instead of by the walk afterwards.
//!
//! Why: on a large payload most members are dropped or empty, and building them only for
//! the walk to take them out again, then walking what is left for the ops that remain, was
//! most of the time `pare compact` took. With those ops done by the parser, the walk only
//! goes where the other ops' selectors lead.
//!
//! When the result is the walk's, byte for byte and count for count, and so when it is used:
//! - a `drop` whose every path is `$..` and a key (name or pattern) is decided by the key
//!   alone, at any depth; one whose paths are `$['a','b']` (the root's members) or
//!   `$..list[*]['a']` (the members of each item of any `list`) by the key and where the
//!   object is, which the parser and the stream follow (a stack of one word per open
//!   container; such a text is read on one thread, as a helper reads elements before it
//!   knows whose they are). The walk drops a member before it looks inside, and so does
//!   the parser (nothing inside a dropped member is left out or counted). Only when every
//!   dropping op is such a drop: the first op that drops a member counts it.
//! - a `prune` with no `at` and no `except` removes empty members bottom-up, as the walk
//!   does — when no other op of the level could make a member empty or not (`hoist`,
//!   `partition`, and the drops above; `Op::keeps_emptiness`). With `where`, as each
//!   object closes, when the expression reads only the object's own members, only drops
//!   and prunes come before it and no plain prune after, and no op the walk still does may
//!   add a member it reads; a member it reads that is not a scalar leaves the text to the
//!   walk, parsed again whole.
//! - not with paths tracked, `_omitted` notes or match counts (they need the paths the
//!   parser does not follow), nor when the value is shaped at more than one level.
//!
//! ```
//! use pare::{json, policy::Policy, shape::{shape, ShapeOptions}};
//! let p = Policy::parse("[[ops]]\nop = \"drop\"\npaths = [\"$..at\"]\n[[ops]]\nop = \"prune\"\n").unwrap();
//! let text = r#"{"a":{"at":1,"b":null},"c":[{"at":2}]}"#;
//! let opts = ShapeOptions::new(&p);
//! let walked = shape(json::parse(text).unwrap(), &p, &opts);
//! let early = pare::shape_text(text, &p, &opts).unwrap();
//! assert_eq!(json::to_compact(&early.value), r#"{"c":[{}]}"#);
//! assert_eq!((early.value, early.manifest), (walked.value, walked.manifest));
//! ```

use crate::json::omit::{Omit, Omitted};
use crate::json::{self, JsonError, Parsed};
use crate::ops::AtParse;
use crate::policy::Policy;
pub(crate) use crate::shape::Plan;
use crate::shape::{ShapeOptions, Shaped};

/// The plan for shaping at `opts.level`, or `None` when the parser can do nothing (or the
/// request needs what only the walk knows).
pub(crate) fn plan(policy: &Policy, opts: &ShapeOptions) -> Option<Plan> {
    let notes = opts.notes.unwrap_or(policy.omitted_enabled) && !policy.omitted_at.is_empty();
    if opts.track_paths || notes || opts.count_matches || policy.options().pack.is_some() {
        return None;
    }
    let set = &policy.selectors;
    let active: Vec<_> = crate::shape::ops_run(policy, opts).collect();
    let at_parse: Vec<Option<AtParse>> = active.iter().map(|o| o.op.at_parse(set)).collect();
    let drops_early = active
        .iter()
        .zip(&at_parse)
        .all(|(o, a)| !o.op.drops_members() || matches!(a, Some(AtParse::Drop(_))));
    let mut done = vec![false; active.len()];
    let mut keys = Vec::new();
    if drops_early {
        for (i, a) in at_parse.iter().enumerate() {
            if let Some(AtParse::Drop(tests)) = a {
                keys.extend(
                    tests
                        .iter()
                        .map(|(t, scope, s)| (t.clone(), scope.clone(), i, *s)),
                );
                done[i] = true;
            }
        }
    }
    // Prune early only if nothing the walk still does could change what is empty.
    let is_prune =
        |a: &Option<AtParse>| matches!(a, Some(AtParse::Prune(_) | AtParse::PruneWhere(..)));
    let prune_early = active
        .iter()
        .zip(&at_parse)
        .enumerate()
        .all(|(i, (o, a))| done[i] || is_prune(a) || o.op.keeps_emptiness());
    // A conditional prune is decided as an object closes, on what the drops and plain
    // prunes left: only drops and prunes before it, no plain prune after it, and no op the
    // walk still does may add a member it reads (a hoist's sibling).
    let wheres_early = at_parse.iter().enumerate().all(|(i, a)| match a {
        Some(AtParse::PruneWhere(_, condition)) => {
            at_parse[..i]
                .iter()
                .enumerate()
                .all(|(j, b)| done[j] || is_prune(b))
                && !at_parse[i + 1..]
                    .iter()
                    .any(|b| matches!(b, Some(AtParse::Prune(_))))
                && !active
                    .iter()
                    .any(|o| condition.keys().iter().any(|k| o.op.may_add_member(k)))
        }
        _ => true,
    });
    let mut empties = Vec::new();
    let mut wheres = Vec::new();
    if prune_early && wheres_early {
        for (i, a) in at_parse.iter().enumerate() {
            match a {
                Some(AtParse::Prune(e)) => empties.push((*e, i)),
                Some(AtParse::PruneWhere(e, condition)) => wheres.push((*e, i, condition.clone())),
                _ => continue,
            }
            done[i] = true;
        }
    }
    if !done.contains(&true) {
        return None;
    }
    let omit = Omit::new(keys, empties, (wheres, opts.params.clone()), active.len())?;
    let walked: Vec<usize> = active
        .iter()
        .zip(&done)
        .filter(|&(_, &d)| !d)
        .flat_map(|(o, _)| o.selectors.iter().map(|u| u.index))
        .collect();
    let mut selectors: Vec<usize> = active
        .iter()
        .zip(&done)
        .filter(|&(_, &d)| d)
        .flat_map(|(o, _)| o.selectors.iter().map(|u| u.index))
        .filter(|s| !walked.contains(s))
        .collect();
    selectors.sort_unstable();
    selectors.dedup();
    Some(Plan {
        omit,
        done,
        selectors,
    })
}

/// A plan that leaves nothing out, for a level that runs no op (a door with no policy):
/// the stream can still write the input as it reads it, with no value built. `None` when
/// the level runs an op, or the policy packs.
pub(crate) fn nothing_to_do(policy: &Policy, opts: &ShapeOptions) -> Option<Plan> {
    let idle = crate::shape::ops_run(policy, opts).next().is_none();
    if !idle || policy.options().pack.is_some() {
        return None;
    }
    Some(Plan {
        omit: Omit::new(Vec::new(), Vec::new(), Default::default(), 0)?,
        done: Vec::new(),
        selectors: Vec::new(),
    })
}

/// Parse `text` and shape it with `policy` (what `json::parse` then `shape::shape` give),
/// doing what it can while parsing.
pub fn shape_text(text: &str, policy: &Policy, opts: &ShapeOptions) -> Result<Shaped, JsonError> {
    parse_and_shape(text, policy, opts).map(|(_, shaped)| shaped)
}

/// [`shape_text`], with the input's repeated keys.
pub(crate) fn parse_and_shape(
    text: &str,
    policy: &Policy,
    opts: &ShapeOptions,
) -> Result<(Vec<json::DuplicateKey>, Shaped), JsonError> {
    match plan(policy, opts) {
        Some(plan) => {
            let (Parsed { value, duplicates }, omitted) = json::parse_omitting(text, &plan.omit)?;
            // No `omitted`: the text repeats a key and was parsed whole; the walk does all.
            let Some(omitted) = omitted else {
                return Ok((duplicates, crate::shape::shape(value, policy, opts)));
            };
            Ok((
                duplicates,
                shape_parsed(text, value, policy, opts, &plan, omitted),
            ))
        }
        None => {
            let Parsed { value, duplicates } = json::parse_noting_duplicates(text)?;
            Ok((duplicates, crate::shape::shape(value, policy, opts)))
        }
    }
}

/// Shape `value`, parsed from `text` following `plan` (and leaving out `omitted`): the walk
/// does the rest of the ops, and the selectors matched are the walk's alone.
pub(crate) fn shape_parsed(
    text: &str,
    value: crate::value::Value,
    policy: &Policy,
    opts: &ShapeOptions,
    plan: &Plan,
    omitted: Omitted,
) -> Shaped {
    let mut shaped = crate::shape::shape_planned(value, policy, opts, Some((plan, omitted)));
    settle_matches(text, policy, opts, plan, &mut shaped);
    shaped
}

/// Which selectors matched, as the walk alone says it. The walk notes a selector when it
/// reaches a member, before ops remove it; it never reaches what the parser left out. So
/// when a selector of an op the walk still does seems to have matched nothing (when pare
/// would warn, which is rare), the matches are taken from parsing and walking again.
fn settle_matches(
    text: &str,
    policy: &Policy,
    opts: &ShapeOptions,
    plan: &Plan,
    shaped: &mut Shaped,
) {
    let set = &policy.selectors;
    let missed = crate::shape::ops_run(policy, opts)
        .zip(&plan.done)
        .filter(|&(_, &done)| !done)
        .flat_map(|(o, _)| &o.selectors)
        .any(|u| !set.was_matched(&shaped.matches, u.index));
    if missed && let Ok(value) = json::parse(text) {
        shaped.matches = crate::shape::shape(value, policy, opts).matches;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::omit::MAX_TESTS;

    /// Per op: done by the parser.
    fn done(policy: &str) -> Option<Vec<bool>> {
        let p = Policy::parse(policy).unwrap();
        plan(&p, &ShapeOptions::new(&p)).map(|plan| plan.done)
    }

    const DROP_ANYWHERE: &str = "[[ops]]\nop = \"drop\"\npaths = [\"$..a\", \"$..*_at\"]\n";
    const PRUNE: &str = "[[ops]]\nop = \"prune\"\n";

    #[test]
    fn what_the_parser_takes_on() {
        assert_eq!(
            done(&format!("{DROP_ANYWHERE}{PRUNE}")),
            Some(vec![true, true])
        );
        let hoist = "[[ops]]\nop = \"hoist\"\nat = [\"$.x\"]\n";
        assert_eq!(
            done(&format!("{PRUNE}{hoist}{DROP_ANYWHERE}")),
            Some(vec![true, false, true])
        );
        // Drops that say whose members they take: the root's, or a list's items'.
        let scoped = "[[ops]]\nop = \"drop\"\npaths = [\"$..entities[*]['a','b']\", \"$['c']\"]\n";
        assert_eq!(done(&format!("{scoped}{PRUNE}")), Some(vec![true, true]));
        // A drop by place: the walk does every drop, and so every prune after them.
        let by_place = "[[ops]]\nop = \"drop\"\npaths = [\"$.x.a\"]\n";
        assert_eq!(done(&format!("{by_place}{DROP_ANYWHERE}{PRUNE}")), None);
        // An op that can empty a member: the parser drops, the walk prunes.
        let keep = "[[ops]]\nop = \"keep\"\nat = [\"$.x\"]\nfields = [\"a\"]\n";
        assert_eq!(
            done(&format!("{DROP_ANYWHERE}{PRUNE}{keep}")),
            Some(vec![true, false, false])
        );
        // A prune with exceptions, or of some objects only, is the walk's.
        let except = "[[ops]]\nop = \"prune\"\nexcept = [\"$.x.*\"]\n";
        assert_eq!(done(except), None);
        let at = "[[ops]]\nop = \"prune\"\nat = [\"$.x\"]\n";
        assert_eq!(done(at), None);
    }

    #[test]
    fn not_with_more_key_tests_than_a_mark_can_name() {
        let names = |n: usize| {
            (0..n)
                .map(|i| format!("'k{i}'"))
                .collect::<Vec<_>>()
                .join(",")
        };
        let drop = |n: usize| format!("[[ops]]\nop = \"drop\"\npaths = [\"$..[{}]\"]\n", names(n));
        assert_eq!(done(&drop(MAX_TESTS)), Some(vec![true]));
        assert_eq!(done(&drop(MAX_TESTS + 1)), None);
    }

    #[test]
    fn not_when_the_walk_must_follow_paths() {
        let p = Policy::parse(&format!("{DROP_ANYWHERE}{PRUNE}")).unwrap();
        for opts in [
            ShapeOptions {
                track_paths: true,
                ..ShapeOptions::new(&p)
            },
            ShapeOptions {
                notes: Some(true),
                ..ShapeOptions::new(&p)
            },
            ShapeOptions {
                count_matches: true,
                ..ShapeOptions::new(&p)
            },
        ] {
            assert!(plan(&p, &opts).is_none());
        }
        // At `full` no op runs.
        let full = p.level_index("full").unwrap();
        assert!(
            plan(
                &p,
                &ShapeOptions {
                    level: full,
                    ..ShapeOptions::new(&p)
                }
            )
            .is_none()
        );
    }
}
