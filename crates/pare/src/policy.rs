//! The compiled policy: the file as written ([`crate::schema`]) → a validated, compiled
//! [`Policy`], what [`mod@crate::shape`] runs.
//!
//! Compiling checks everything a request could trip on later — level names, selector and
//! expression syntax, parameter references and types — so shaping itself cannot fail on a
//! bad policy. Errors ([`PolicyError`]) name the key (`ops[2].paths[0]`), the bad value and
//! the allowed values. Each op compiles its own options through one `CompileCx`
//! ([`crate::ops::compile`]), which gathers the selectors of the whole policy into one set.
//!
//! ```
//! let policy = pare::policy::Policy::parse(r#"
//!     [[ops]]
//!     op = "drop"
//!     paths = ["$..created_at"]
//! "#).unwrap();
//! assert_eq!(policy.default_level(), "standard");
//! ```

use std::path::{Path, PathBuf};

use crate::ops::Op;
use crate::ops::compile::{CompileCx, FULL, Fault, InvalidKind, PolicyError};
use crate::params::{Params, Scalar};
use crate::query::selector::{Seen, SelectorSet};
use crate::schema::PolicyOptions;

/// A policy file a door cannot use: unreadable, or not a valid policy. Its message names
/// the file and says why (the cause is in the message, not a `source()`, so a door that
/// prints an error's chain says it once).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The file could not be read.
    #[error("reading policy {}: {error}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The file was read and is not a valid policy.
    #[error("in policy {}: {error}", path.display())]
    Policy {
        /// The file.
        path: PathBuf,
        /// What is wrong with it (boxed: it is large, and errors travel by value).
        error: Box<PolicyError>,
    },
}

/// The text of the policy file at `path`. Reading policy files is the one I/O the engine
/// does, so every door (the CLI, both proxies, Python) loads them one way and words their
/// errors alike.
pub fn read_text(path: &Path) -> Result<String, LoadError> {
    std::fs::read_to_string(path).map_err(|error| LoadError::Read {
        path: path.to_owned(),
        error,
    })
}

/// [`Policy::fingerprint`] of `options`.
fn fingerprint(options: &PolicyOptions) -> u64 {
    let json = serde_json::to_string(options).expect("policy options serialize");
    crate::cursor::check([json.as_bytes()])
}

/// One op of a compiled policy.
#[derive(Debug)]
pub(crate) struct CompiledOp {
    pub name: &'static str,
    /// Bit i set: the op runs at level i.
    pub levels: u64,
    pub op: Box<dyn Op>,
    /// The selectors in its options.
    pub selectors: Vec<crate::ops::compile::UsedSelector>,
}

/// A validated, compiled policy. Cheap to share across threads.
#[derive(Debug)]
pub struct Policy {
    options: PolicyOptions,
    levels: Vec<String>,
    default_level: usize,
    pub(crate) ops: Vec<CompiledOp>,
    pub(crate) selectors: SelectorSet,
    /// Selector indices of the objects that carry an `_omitted` note.
    pub(crate) omitted_at: Vec<usize>,
    pub(crate) omitted_enabled: bool,
    pub(crate) omitted_key: String,
    /// Every level mask of the ops and their rules, for [`Policy::levels_alike`].
    level_masks: Vec<u64>,
    /// [`Policy::fingerprint`], computed once.
    fingerprint: u64,
}

impl Policy {
    /// The ops that run at level `level`, in order.
    pub(crate) fn active_ops(&self, level: usize) -> impl Iterator<Item = &CompiledOp> {
        self.ops
            .iter()
            .filter(move |o| o.levels & (1 << level) != 0)
    }

    /// Parse a policy, TOML or JSON (a text whose first non-blank character is `{` is JSON).
    pub fn parse(text: &str) -> Result<Policy, PolicyError> {
        if text.trim_start().starts_with('{') {
            Policy::from_json(text)
        } else {
            Policy::from_toml(text)
        }
    }

    pub(crate) fn from_toml(text: &str) -> Result<Policy, PolicyError> {
        let tree: serde_json::Value = toml::from_str(text).map_err(|e| {
            let (line, column) = match e.span() {
                Some(span) => {
                    let (line, column) = line_and_column(text, span.start);
                    (Some(line), Some(column))
                }
                None => (None, None),
            };
            PolicyError::Syntax {
                format: "TOML",
                message: e.to_string().trim_end().to_owned(),
                line,
                column,
            }
        })?;
        // TOML has no null: a null here was a `nan` or `inf`, which JSON cannot hold.
        if has_null(&tree) {
            refuse_non_finite(text)?;
        }
        Policy::from_tree(tree)
    }

    pub(crate) fn from_json(text: &str) -> Result<Policy, PolicyError> {
        let tree: serde_json::Value =
            serde_json::from_str(text).map_err(|e| PolicyError::Syntax {
                format: "JSON",
                message: e.to_string(),
                // serde_json counts from 1; 0 means it did not say.
                line: (e.line() > 0).then_some(e.line()),
                column: (e.line() > 0).then_some(e.column()),
            })?;
        Policy::from_tree(tree)
    }

    fn from_tree(mut tree: serde_json::Value) -> Result<Policy, PolicyError> {
        let raw_ops = match tree.as_object_mut().and_then(|m| m.remove("ops")) {
            None => Vec::new(),
            Some(serde_json::Value::Array(ops)) => ops,
            Some(other) => {
                return Err(PolicyError::invalid(
                    "ops",
                    format!("expected a list of op tables (`[[ops]]`), found {other}"),
                ));
            }
        };
        let mut options: PolicyOptions = serde_path_to_error::deserialize(tree).map_err(|e| {
            let key = e.path().to_string();
            let key = if key == "." {
                "(top level)".into()
            } else {
                key
            };
            Fault::from_serde(e.inner().to_string()).at(key)
        })?;
        for (i, raw) in raw_ops.into_iter().enumerate() {
            let spec = crate::ops::OpSpec::from_tree(raw)
                .map_err(|(path, fault)| fault.at(format!("ops[{i}]{path}")))?;
            options.ops.push(spec);
        }
        Policy::compile(options)
    }

    /// Read and compile the policy file at `path` (TOML, or JSON when it starts with `{`).
    pub fn load(path: &Path) -> Result<Policy, LoadError> {
        Policy::parse(&read_text(path)?).map_err(|error| LoadError::Policy {
            path: path.to_owned(),
            error: Box::new(error),
        })
    }

    /// The built-in policy used when none is given: no ops, so every door without a policy
    /// is lossless (it only re-encodes; `pare expand` gives the input back). Lossy ops such
    /// as `prune` are one policy line away.
    pub fn builtin_default() -> Policy {
        Policy::from_toml("description = \"built-in default: lossless, re-encode only\"\n")
            .expect("the built-in policy is valid")
    }

    /// Validate and compile options.
    pub fn compile(options: PolicyOptions) -> Result<Policy, PolicyError> {
        let levels = validate_levels(&options.levels)?;
        let default_level = match &options.default_level {
            Some(name) => find_level(&levels, name, "default_level")?,
            None => levels
                .iter()
                .position(|l| l == "standard")
                .unwrap_or(levels.len().saturating_sub(2)),
        };
        for name in options.params.keys() {
            if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                return Err(PolicyError::invalid(
                    format!("params.{name}"),
                    "parameter names use letters, digits and `_` only",
                ));
            }
        }
        let mut cx = CompileCx::new(&options.params, &levels);
        let mut ops = Vec::with_capacity(options.ops.len());
        for (i, spec) in options.ops.iter().enumerate() {
            cx.at(format!("ops[{i}]"));
            let levels_mask = cx.level_mask("levels", spec.levels())?;
            let op = spec.compile(&mut cx)?;
            ops.push(CompiledOp {
                name: spec.name(),
                levels: levels_mask,
                op,
                selectors: cx.used_selectors(),
            });
        }
        // Compiled even when off: a request may switch notes on.
        cx.at("omitted");
        if options.omitted.key.is_empty() {
            return Err(PolicyError::invalid("omitted.key", "must not be empty"));
        }
        let omitted_at = cx.selectors("at", &options.omitted.at)?;
        let level_masks = cx.level_masks();
        // The position limit is checked as each selector is registered ([`CompileCx`]), at
        // the op that goes over; this is the same check, which cannot fail after it.
        let selectors = SelectorSet::new(cx.into_selectors())
            .map_err(|e| PolicyError::invalid("ops", e.to_string()))?;
        Ok(Policy {
            fingerprint: fingerprint(&options),
            omitted_key: options.omitted.key.clone(),
            omitted_enabled: options.omitted.enabled,
            options,
            levels,
            default_level,
            ops,
            selectors,
            omitted_at,
            level_masks,
        })
    }

    /// What a cursor checks of the policy: a hash of its options' JSON (serde's field order,
    /// the ops and maps in the order written), the same in every process and on every
    /// machine, computed once here rather than for every paged request.
    pub(crate) fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// The options as written (after defaults), before compiling.
    pub fn options(&self) -> &PolicyOptions {
        &self.options
    }
    /// The policy's `description`, if it has one.
    pub fn description(&self) -> Option<&str> {
        self.options.description.as_deref()
    }
    /// Level names, least detail first; the last is always `full`.
    pub fn levels(&self) -> &[String] {
        &self.levels
    }
    /// The level a request that names none gets: `default_level`, else `standard`, else
    /// the level below `full`.
    pub fn default_level(&self) -> &str {
        &self.levels[self.default_level]
    }
    /// The index of a level by name, or an error listing the allowed names.
    pub fn level_index(&self, name: &str) -> Result<usize, PolicyError> {
        find_level(&self.levels, name, "level")
    }
    /// The names of the ops that run at a level, in order.
    pub fn ops_at(&self, level: usize) -> Vec<&'static str> {
        self.active_ops(level).map(|o| o.name).collect()
    }
    /// For each op, each selector of its options and what it selected in a walk at `level`
    /// ([`crate::shape::Shaped::matches`]).
    pub fn selector_matches(&self, seen: &Seen, level: usize) -> Vec<OpMatches> {
        self.ops
            .iter()
            .enumerate()
            .map(|(index, op)| OpMatches {
                index,
                op: op.name,
                runs: op.levels & (1 << level) != 0,
                selectors: op
                    .selectors
                    .iter()
                    .map(|u| SelectorMatch {
                        field: u.field.clone(),
                        selector: self.selectors.selector(u.index).source().to_owned(),
                        anywhere: self.selectors.selector(u.index).has_descendant(),
                        guard: u.guard,
                        optional: u.optional,
                        matched: self.selectors.was_matched(seen, u.index),
                        count: self.selectors.match_count(seen, u.index),
                    })
                    .collect(),
            })
            .collect()
    }

    /// A warning for each selector of an op that ran at `level` and selected nothing:
    /// `` ops[2] drop: `paths[0]` = `$.meta` matched nothing at level `standard` ``.
    ///
    /// Not for selectors with a descendant segment (`$..created_at`): those say "wherever
    /// it occurs", and a policy serving many payloads names fields each payload may lack,
    /// so warning about them on every run would teach users to ignore warnings. A rooted
    /// path that matches nothing is a typo or a policy meant for another payload. Nor for
    /// guards (`prune`'s `except`: "leave this alone if it is there"), nor for optional paths
    /// (`drop`'s `if_present`: "remove this if it is there").
    /// (`pare policy check --sample` shows every selector's matches, these included.)
    pub fn unmatched_warnings(&self, seen: &Seen, level: usize) -> Vec<String> {
        let level_name = &self.levels[level];
        self.selector_matches(seen, level)
            .into_iter()
            .filter(|op| op.runs)
            .flat_map(|op| {
                op.selectors
                    .into_iter()
                    .filter(|s| !s.matched && !s.anywhere && !s.guard && !s.optional)
                    .map(move |s| {
                        format!(
                            "ops[{}] {}: `{}` = `{}` matched nothing at level `{level_name}`",
                            op.index, op.op, s.field, s.selector
                        )
                    })
            })
            .collect()
    }

    /// Whether levels `a` and `b` give the same output for every input: a packing policy's
    /// levels differ only in the tier they allow, any other policy's only in the ops (and
    /// op rules) that run at them. `full` is alike the levels that run nothing.
    pub(crate) fn levels_alike(&self, a: usize, b: usize) -> bool {
        if self.options.pack.is_some() {
            // `full` is the input, as for any policy; the other levels pack, and differ by
            // the tier they allow.
            let last = self.levels.len() - 1;
            let cap = |i: usize| crate::schema::pack::LevelCap::of(&self.levels[i]);
            return (a == last) == (b == last) && cap(a) == cap(b);
        }
        self.level_masks
            .iter()
            .all(|m| (m >> a) & 1 == (m >> b) & 1)
    }

    /// Parameters with their defaults overridden by `overrides` (`name`, text value).
    pub fn params(&self, overrides: &[(String, String)]) -> Result<Params, PolicyError> {
        let mut values: Vec<(String, Scalar)> = self
            .options
            .params
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for (name, text) in overrides {
            let allowed = || {
                let names: Vec<_> = values.iter().map(|(k, _)| k.as_str()).collect();
                if names.is_empty() {
                    "this policy declares no parameters".to_owned()
                } else {
                    format!("allowed: {}", names.join(", "))
                }
            };
            let Some(slot) = values.iter().position(|(k, _)| k == name) else {
                return Err(PolicyError::invalid(
                    format!("params.{name}"),
                    format!("unknown parameter `{name}`; {}", allowed()),
                ));
            };
            let like = &values[slot].1;
            let parsed = Scalar::parse_like(text, like).ok_or_else(|| {
                PolicyError::invalid(
                    format!("params.{name}"),
                    format!(
                        "`{text}` is not allowed for `{name}`: it takes {} (its default is {})",
                        like.allowed(),
                        scalar_text(like)
                    ),
                )
            })?;
            values[slot].1 = parsed;
        }
        Ok(Params::from_checked(values))
    }
}

/// One op's selectors and what they selected ([`Policy::selector_matches`]).
#[derive(Debug, Clone, PartialEq)]
pub struct OpMatches {
    /// Its index in the policy's `ops`.
    pub index: usize,
    /// The op's name (`drop`).
    pub op: &'static str,
    /// Whether it runs at the level walked.
    pub runs: bool,
    /// Each selector its options name, in the order they are written.
    pub selectors: Vec<SelectorMatch>,
}

/// One selector of an op's options.
#[derive(Debug, Clone, PartialEq)]
pub struct SelectorMatch {
    /// Where it is written, e.g. `paths[1]`.
    pub field: String,
    /// As written.
    pub selector: String,
    /// It has a descendant segment (`$..x`): it may match at any depth.
    pub anywhere: bool,
    /// It names what the op leaves alone (`prune`'s `except`), not what it acts on.
    pub guard: bool,
    /// It names what only some payloads have (`drop`'s `if_present`).
    pub optional: bool,
    /// It selected something in the walk.
    pub matched: bool,
    /// Nodes selected, when the walk counted ([`crate::shape::ShapeOptions::count_matches`]).
    pub count: Option<u64>,
}

/// Whether `tree` holds a null anywhere.
fn has_null(tree: &serde_json::Value) -> bool {
    match tree {
        serde_json::Value::Null => true,
        serde_json::Value::Array(items) => items.iter().any(has_null),
        serde_json::Value::Object(map) => map.values().any(has_null),
        _ => false,
    }
}

/// The first `nan` or `inf` in a TOML policy, as an error naming its place: a policy's
/// numbers are finite (converted to JSON they would silently become null).
#[cold]
fn refuse_non_finite(text: &str) -> Result<(), PolicyError> {
    fn walk(v: &toml::Value, path: &mut Vec<String>) -> Option<(String, f64)> {
        match v {
            toml::Value::Float(f) if !f.is_finite() => Some((path.join("."), *f)),
            toml::Value::Array(items) => items.iter().enumerate().find_map(|(i, item)| {
                let last = path.pop();
                let name = format!("{}[{i}]", last.as_deref().unwrap_or(""));
                path.push(name);
                let found = walk(item, path);
                path.pop();
                path.extend(last);
                found
            }),
            toml::Value::Table(map) => map.iter().find_map(|(k, child)| {
                path.push(k.clone());
                let found = walk(child, path);
                path.pop();
                found
            }),
            _ => None,
        }
    }
    let Ok(value) = toml::from_str::<toml::Value>(text) else {
        return Ok(());
    };
    let Some((path, f)) = walk(&value, &mut Vec::new()) else {
        return Ok(());
    };
    let shown = if f.is_nan() {
        "nan"
    } else if f > 0.0 {
        "inf"
    } else {
        "-inf"
    };
    let why = if path.starts_with("params.") {
        "a parameter is a boolean, a finite number or a string"
    } else {
        "a policy's numbers are finite"
    };
    Err(PolicyError::invalid(
        path,
        format!("`{shown}` is not allowed: {why}"),
    ))
}

/// The 1-based line and column (in characters) of byte `at` of `text`.
fn line_and_column(text: &str, at: usize) -> (usize, usize) {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let before = &text[..at];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = before.matches('\n').count() + 1;
    (line, before[line_start..].chars().count() + 1)
}

/// A parameter value as written on a command line.
fn scalar_text(s: &Scalar) -> String {
    match s {
        Scalar::Bool(b) => b.to_string(),
        Scalar::Number(n) => n.to_string(),
        Scalar::String(s) => format!("{s:?}"),
    }
}

fn validate_levels(names: &[String]) -> Result<Vec<String>, PolicyError> {
    let mut levels: Vec<String> = Vec::with_capacity(names.len() + 1);
    for (i, name) in names.iter().enumerate() {
        let key = format!("levels[{i}]");
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
        {
            return Err(PolicyError::invalid(
                key,
                format!("`{name}` is not a level name (letters, digits, `_`, `-`)"),
            ));
        }
        if levels.contains(name) {
            return Err(PolicyError::invalid(
                key,
                format!("`{name}` is listed twice"),
            ));
        }
        if name == FULL && i + 1 != names.len() {
            return Err(PolicyError::invalid(
                key,
                "`full` must be the last level (it is the most detail: the input unchanged)",
            ));
        }
        levels.push(name.clone());
    }
    if levels.last().map(String::as_str) != Some(FULL) {
        levels.push(FULL.into());
    }
    if levels.len() == 1 {
        return Err(PolicyError::invalid(
            "levels",
            "name at least one level besides `full`, or ops would never run",
        ));
    }
    if levels.len() > 63 {
        return Err(PolicyError::invalid("levels", "at most 63 levels"));
    }
    Ok(levels)
}

fn find_level(levels: &[String], name: &str, key: &str) -> Result<usize, PolicyError> {
    levels.iter().position(|l| l == name).ok_or_else(|| {
        let message = format!("unknown level `{name}`; allowed: {}", levels.join(", "));
        Fault::not_one_of(InvalidKind::UnknownValue, Some(name), levels, message).at(key)
    })
}

#[cfg(test)]
mod tests {
    use super::Policy;
    use crate::shape::{ShapeOptions, shape};

    fn warnings(policy: &Policy, input: &str, level: &str) -> Vec<String> {
        let level = policy.level_index(level).unwrap();
        let opts = ShapeOptions {
            level,
            ..ShapeOptions::new(policy)
        };
        let shaped = shape(crate::json::parse(input).unwrap(), policy, &opts);
        policy.unmatched_warnings(&shaped.matches, level)
    }

    #[test]
    fn selectors_that_matched_nothing_are_warned_about() {
        let p = Policy::parse(
            "levels = [\"brief\", \"standard\", \"full\"]\n\
             [[ops]]\nop = \"drop\"\npaths = [\"$.meta\", \"$.nope\", \"$..gone\"]\n\
             [[ops]]\nop = \"limit\"\nat = [\"$.nope.y\"]\nmax = 1\nlevels = [\"brief\"]\n\
             [[ops]]\nop = \"nest\"\nat = [\"$\"]\nmap = \"m\"\ninto = \"r\"\nmatch = \"id\"\n",
        )
        .unwrap();
        let input = r#"{"meta":1,"r":[{"id":"a"}],"m":{}}"#;
        // `$..gone` says "wherever it occurs": not warned about. `limit` does not run.
        assert_eq!(
            warnings(&p, input, "standard"),
            ["ops[0] drop: `paths[1]` = `$.nope` matched nothing at level `standard`"]
        );
        assert_eq!(
            warnings(&p, input, "brief"),
            [
                "ops[0] drop: `paths[1]` = `$.nope` matched nothing at level `brief`",
                "ops[1] limit: `at[0]` = `$.nope.y` matched nothing at level `brief`",
            ]
        );
        assert!(warnings(&p, input, "full").is_empty(), "no op runs at full");
        // A selector inside what `drop` removed is never reached.
        assert_eq!(
            warnings(&p, r#"{"meta":1,"nope":{"y":[1,2]}}"#, "brief"),
            ["ops[1] limit: `at[0]` = `$.nope.y` matched nothing at level `brief`"]
        );
    }

    /// Arrays of 2048 items and more are shaped in parallel chunks: what each chunk saw is
    /// joined, counts included.
    #[test]
    fn matches_are_joined_across_parallel_chunks() {
        let p =
            Policy::parse("[[ops]]\nop = \"drop\"\npaths = [\"$[*].a\", \"$[4000].b\"]\n").unwrap();
        let items: Vec<String> = (0..5000).map(|i| format!(r#"{{"a":{i},"b":1}}"#)).collect();
        let input = format!("[{}]", items.join(","));
        let opts = ShapeOptions {
            count_matches: true,
            ..ShapeOptions::new(&p)
        };
        let shaped = shape(crate::json::parse(&input).unwrap(), &p, &opts);
        let level = p.level_index("standard").unwrap();
        let m = p.selector_matches(&shaped.matches, level);
        let counts: Vec<_> = m[0]
            .selectors
            .iter()
            .map(|s| (s.matched, s.count))
            .collect();
        assert_eq!(counts, [(true, Some(5000)), (true, Some(1))]);
        assert!(p.unmatched_warnings(&shaped.matches, level).is_empty());
    }

    #[test]
    fn levels_alike_when_the_same_ops_and_rules_run_at_them() {
        let none = Policy::builtin_default();
        let n = none.levels().len();
        assert!((0..n).all(|a| (0..n).all(|b| none.levels_alike(a, b))));

        let p = Policy::parse(
            "levels = [\"brief\", \"standard\", \"full\"]\n\
             [[ops]]\nop = \"prune\"\n\
             [[ops]]\nop = \"drop\"\npaths = [\"$.x\"]\nlevels = [\"brief\"]\n",
        )
        .unwrap();
        assert!(!p.levels_alike(0, 1) && !p.levels_alike(1, 2) && !p.levels_alike(0, 2));

        let p =
            Policy::parse("levels = [\"a\", \"b\", \"full\"]\n[[ops]]\nop = \"prune\"\n").unwrap();
        assert!(p.levels_alike(0, 1) && !p.levels_alike(1, 2));

        // A packing policy's levels differ by the tier they allow, not by ops; `full` is
        // the input.
        let p = Policy::parse(
            "levels = [\"ids_only\", \"standard\", \"wide\", \"full\"]\n[pack]\nitems = \"results\"\n\
             id = \"id\"\ntext = \"text\"\n",
        )
        .unwrap();
        assert!(!p.levels_alike(0, 1) && p.levels_alike(1, 2) && !p.levels_alike(2, 3));
    }
}

#[cfg(test)]
mod error_tests {
    use super::Policy;
    use crate::ops::compile::{InvalidKind, PolicyError};

    fn invalid(text: &str) -> (String, InvalidKind, Option<String>, Vec<String>) {
        match Policy::parse(text).unwrap_err() {
            PolicyError::Invalid {
                key,
                kind,
                value,
                allowed,
                ..
            } => (key, kind, value, allowed),
            other => panic!("{other}"),
        }
    }

    #[test]
    fn policy_errors_are_typed_with_their_kind_key_value_and_allowed_values() {
        let (key, kind, value, allowed) = invalid("[[ops]]\nop = \"prun\"\n");
        assert_eq!(
            (key.as_str(), kind),
            ("ops[0].op", InvalidKind::UnknownValue)
        );
        assert_eq!(value.as_deref(), Some("prun"));
        assert_eq!(allowed, crate::ops::NAMES);
        let (key, kind, value, allowed) = invalid("level = [\"a\"]\n");
        assert_eq!((key.as_str(), kind), ("level", InvalidKind::UnknownKey));
        assert_eq!(value.as_deref(), Some("level"));
        assert!(allowed.iter().any(|a| a == "levels"), "{allowed:?}");
        let (key, kind, ..) = invalid("[[ops]]\nop = \"drop\"\npaths = 3\n");
        assert_eq!(
            (key.as_str(), kind),
            ("ops[0].paths", InvalidKind::WrongType)
        );
        let (key, kind, value, allowed) = invalid("[[ops]]\nop = \"rename\"\n");
        assert_eq!((key.as_str(), kind), ("ops[0]", InvalidKind::MissingKey));
        assert_eq!((value.as_deref(), allowed.len()), (Some("map"), 0));
        let (key, kind, value, allowed) = invalid("levels = [\"a\"]\ndefault_level = \"b\"\n");
        assert_eq!(
            (key.as_str(), kind),
            ("default_level", InvalidKind::UnknownValue)
        );
        assert_eq!(
            (value.as_deref(), allowed),
            (Some("b"), vec!["a".to_owned(), "full".into()])
        );
        let (key, kind, ..) = invalid("levels = [\"a\", \"a\"]\n");
        assert_eq!((key.as_str(), kind), ("levels[1]", InvalidKind::BadValue));
        // The message is what it was: the fields are beside it, not instead of it.
        let e = Policy::parse("[[ops]]\nop = \"prun\"\n").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("policy error at `ops[0].op`: unknown op `prun`; allowed: prune, ")
        );
    }

    #[test]
    fn policy_syntax_errors_say_their_line_and_column() {
        let at = |text: &str| Policy::parse(text).unwrap_err().position();
        assert_eq!(at("levels = ["), Some((1, 11)));
        assert_eq!(at("a = 1\nb = = 2\n"), Some((2, 5)));
        assert_eq!(at("a = \"é\" x\n"), Some((1, 9)));
        assert_eq!(at("{\n  \"levels\": [\"a\",\n}"), Some((3, 1)));
        assert_eq!(at("[[ops]]\nop = \"prun\"\n"), None);
    }
}
