//! What the ops need to compile their options: the context (`CompileCx`) that registers
//! selectors and checks parameter and level references, and the error it reports
//! ([`PolicyError`]).
//!
//! It sits with the ops, below the compiled policy: [`crate::policy::Policy::compile`] makes
//! one context and hands it to each op in turn, and an op never sees the policy itself.

use std::collections::BTreeMap;

use crate::params::{NumberOrParam, ParamNumber, Scalar};
use crate::query::expr::Expr;
use crate::query::selector::{MAX_POSITIONS, Selector};

/// The name of the level that is always the input unchanged.
pub(crate) const FULL: &str = "full";

/// A policy that could not be read or is invalid.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// The text is not valid TOML or JSON.
    #[error("policy is not valid {format}: {}", elide(.message))]
    Syntax {
        /// `TOML` or `JSON`.
        format: &'static str,
        /// The parser's message.
        message: String,
        /// Where the parser stopped, 1-based; `None` when it did not say.
        line: Option<usize>,
        /// The column (1-based, in characters) on that line.
        column: Option<usize>,
    },
    /// A key has a bad value.
    #[error("policy error at `{}`: {}", elide(.key), elide(.message))]
    Invalid {
        /// Where, as a path into the policy: `ops[2].by`, `levels[0]`, `(top level)`.
        key: String,
        /// What kind of mistake.
        kind: InvalidKind,
        /// The offending name or value as written, when the error is about one.
        value: Option<String>,
        /// The values allowed there, when they are a list of names.
        allowed: Vec<String>,
        /// The whole explanation (it names the value and the allowed ones again).
        message: String,
    },
}

/// What kind of mistake a [`PolicyError::Invalid`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum InvalidKind {
    /// A key the policy format does not have.
    UnknownKey,
    /// A name that is not one of the allowed ones (an op, a level, an option's choice).
    UnknownValue,
    /// A key that must be given is missing.
    MissingKey,
    /// A value of the wrong type (a string where a list goes).
    WrongType,
    /// Any other bad value: out of range, clashing with another key, a bad selector.
    BadValue,
}

/// A [`PolicyError::Invalid`] before it knows its key: what the code that finds a mistake
/// (an op's compile, the `[[ops]]` reader) hands up to the code that knows where it is.
pub(crate) struct Fault {
    pub kind: InvalidKind,
    pub value: Option<String>,
    pub allowed: Vec<String>,
    pub message: String,
}

impl Fault {
    /// A bad value, explained by `message`.
    pub(crate) fn bad(message: impl Into<String>) -> Fault {
        Fault {
            kind: InvalidKind::BadValue,
            value: None,
            allowed: Vec::new(),
            message: message.into(),
        }
    }

    /// `value` is not one of `allowed` (`message` says so in words).
    pub(crate) fn not_one_of(
        kind: InvalidKind,
        value: Option<&str>,
        allowed: &[impl AsRef<str>],
        message: impl Into<String>,
    ) -> Fault {
        Fault {
            kind,
            value: value.map(str::to_owned),
            allowed: allowed.iter().map(|a| a.as_ref().to_owned()).collect(),
            message: message.into(),
        }
    }

    /// A serde error message, read for what it names. serde's errors are text only, so this
    /// is where their parts are taken out, once: `unknown field `x`, expected one of `a`,
    /// `b``, `unknown variant …`, `missing field `x``, `invalid type: …`.
    pub(crate) fn from_serde(message: String) -> Fault {
        let kind = if message.starts_with("unknown field") {
            InvalidKind::UnknownKey
        } else if message.starts_with("unknown variant") {
            InvalidKind::UnknownValue
        } else if message.starts_with("missing field") {
            InvalidKind::MissingKey
        } else if message.starts_with("invalid type") {
            InvalidKind::WrongType
        } else {
            InvalidKind::BadValue
        };
        let value = match kind {
            InvalidKind::UnknownKey | InvalidKind::UnknownValue | InvalidKind::MissingKey => {
                backticked(&message).map(str::to_owned)
            }
            _ => None,
        };
        let allowed = match message.find("expected ") {
            Some(i) if kind != InvalidKind::WrongType => {
                let rest = &message[i + 9..];
                let rest = rest.strip_prefix("one of ").unwrap_or(rest);
                rest.split(", ")
                    .flat_map(|p| p.split(" or "))
                    .filter_map(|p| p.trim().strip_prefix('`')?.strip_suffix('`'))
                    .map(str::to_owned)
                    .collect()
            }
            _ => Vec::new(),
        };
        Fault {
            kind,
            value,
            allowed,
            message,
        }
    }

    /// The error, at `key`.
    pub(crate) fn at(self, key: impl Into<String>) -> PolicyError {
        PolicyError::Invalid {
            key: key.into(),
            kind: self.kind,
            value: self.value,
            allowed: self.allowed,
            message: self.message,
        }
    }
}

/// Longest run of characters without whitespace an error message shows whole.
const LONGEST_SHOWN: usize = 120;

/// `message` with every run of over [`LONGEST_SHOWN`] characters without whitespace (a bad
/// value, a key, a line of the policy) shortened to its start and end around how much was
/// left out: a 300 KB value made a 300 KB error. Short messages are returned as they are.
pub(crate) fn elide(message: &str) -> std::borrow::Cow<'_, str> {
    let long = |run: &str| run.chars().nth(LONGEST_SHOWN).is_some();
    let blank_runs = || message.split(|c: char| !c.is_whitespace());
    if !message.split_whitespace().any(long) && !blank_runs().any(long) {
        return message.into();
    }
    let mut out = String::with_capacity(4 * LONGEST_SHOWN);
    let mut rest = message;
    while let Some(start) = rest.find(|c: char| !c.is_whitespace()) {
        // A caret line under an elided line is mostly blank: its blanks are elided too.
        match &rest[..start] {
            blank if long(blank) => out.push_str(" … "),
            blank => out.push_str(blank),
        }
        rest = &rest[start..];
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let run = &rest[..end];
        if long(run) {
            let head: String = run.chars().take(60).collect();
            let tail_from = run.char_indices().rev().nth(19).map_or(0, |(i, _)| i);
            let left_out = tail_from - head.len();
            out.push_str(&format!("{head}…[{left_out} bytes]…{}", &run[tail_from..]));
        } else {
            out.push_str(run);
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out.into()
}

impl PolicyError {
    /// A bad value at `key`, explained by `message`.
    pub(crate) fn invalid(key: impl Into<String>, message: impl Into<String>) -> PolicyError {
        Fault::bad(message).at(key)
    }

    /// The key, the bad value and the allowed values, for doors that hand them to a caller
    /// as fields (the Python package's exception). Empty for a syntax error.
    pub fn details(&self) -> ErrorDetails {
        match self {
            PolicyError::Invalid {
                key,
                value,
                allowed,
                ..
            } => ErrorDetails {
                key: Some(key.clone()),
                value: value.clone(),
                allowed: allowed.clone(),
            },
            PolicyError::Syntax { .. } => ErrorDetails::default(),
        }
    }

    /// What kind of mistake this is, as the language packages name it for their callers:
    /// `syntax`, `unknown_key`, `unknown_value`, `missing_key`, `wrong_type` or `bad_value`.
    pub fn kind_name(&self) -> &'static str {
        match self {
            PolicyError::Syntax { .. } => "syntax",
            PolicyError::Invalid { kind, .. } => match kind {
                InvalidKind::UnknownKey => "unknown_key",
                InvalidKind::UnknownValue => "unknown_value",
                InvalidKind::MissingKey => "missing_key",
                InvalidKind::WrongType => "wrong_type",
                InvalidKind::BadValue => "bad_value",
            },
        }
    }

    /// Where a syntax error is (1-based line and column), if the parser said.
    pub fn position(&self) -> Option<(usize, usize)> {
        match self {
            PolicyError::Syntax {
                line: Some(line),
                column,
                ..
            } => Some((*line, column.unwrap_or(1))),
            _ => None,
        }
    }
}

/// What a [`PolicyError`] names: see [`PolicyError::details`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ErrorDetails {
    /// Where the error is (`ops[2].by`); `None` for a syntax error.
    pub key: Option<String>,
    /// The offending name or value, when the error is about one.
    pub value: Option<String>,
    /// Empty when the message names no choices.
    pub allowed: Vec<String>,
}

/// The first `…`-quoted word of `text`.
fn backticked(text: &str) -> Option<&str> {
    let start = text.find('`')? + 1;
    let len = text[start..].find('`')?;
    Some(&text[start..start + len])
}

/// A selector an op's options name.
#[derive(Debug, Clone)]
pub(crate) struct UsedSelector {
    /// Where, e.g. `paths[1]`.
    pub field: String,
    /// Its index in the policy's selector set.
    pub index: usize,
    /// Names what an op leaves alone ([`CompileCx::guard_selectors`]).
    pub guard: bool,
    /// Names what only some payloads have ([`CompileCx::optional_selectors`]).
    pub optional: bool,
}

/// What ops see while compiling: registers selectors, validates references.
pub(crate) struct CompileCx<'a> {
    selectors: Vec<Selector>,
    /// Each selector's index by its source (a policy of 64k ops was quadratic to refuse).
    by_source: std::collections::HashMap<String, usize>,
    /// The automaton positions the selectors take ([`MAX_POSITIONS`]).
    positions: usize,
    key: String,
    params: &'a BTreeMap<String, Scalar>,
    levels: &'a [String],
    /// Every level mask handed out (ops' and their rules'): two levels that fall on the
    /// same side of each shape the same ([`crate::policy::Policy::levels_alike`]).
    masks: std::cell::RefCell<Vec<u64>>,
    /// The selectors registered since the last [`CompileCx::at`].
    used: Vec<UsedSelector>,
}

impl<'a> CompileCx<'a> {
    /// A context for the policy's declared parameters and its validated level names.
    pub(crate) fn new(params: &'a BTreeMap<String, Scalar>, levels: &'a [String]) -> Self {
        CompileCx {
            selectors: Vec::new(),
            by_source: std::collections::HashMap::new(),
            positions: 0,
            key: String::new(),
            params,
            levels,
            masks: Default::default(),
            used: Vec::new(),
        }
    }

    /// The level masks handed out so far.
    pub(crate) fn level_masks(&self) -> Vec<u64> {
        self.masks.borrow().clone()
    }

    /// Set the key errors are reported under (`ops[2]`, `omitted`).
    pub(crate) fn at(&mut self, key: impl Into<String>) {
        self.key = key.into();
        self.used.clear();
    }

    /// The selectors the op being compiled registered, as (field, selector index): what
    /// [`crate::shape::Matches`] reports on per op.
    pub(crate) fn used_selectors(&self) -> Vec<UsedSelector> {
        self.used.clone()
    }

    /// The selectors registered, in index order.
    pub(crate) fn into_selectors(self) -> Vec<Selector> {
        self.selectors
    }

    /// A bit mask of level indices; `None` means every level but `full`.
    pub(crate) fn level_mask(
        &self,
        field: &str,
        names: Option<&[String]>,
    ) -> Result<u64, PolicyError> {
        let Some(names) = names else {
            let all_but_full = (1u64 << (self.levels.len() - 1)) - 1;
            self.masks.borrow_mut().push(all_but_full);
            return Ok(all_but_full);
        };
        let mut mask = 0;
        for (j, name) in names.iter().enumerate() {
            let key = format!("{field}[{j}]");
            if name == FULL {
                return Err(self.error(
                    &key,
                    "`full` is always the input unchanged; ops cannot run at it",
                ));
            }
            let index = self.levels.iter().position(|l| l == name).ok_or_else(|| {
                let message = format!(
                    "unknown level `{name}`; allowed: {}",
                    self.levels.join(", ")
                );
                let fault =
                    Fault::not_one_of(InvalidKind::UnknownValue, Some(name), self.levels, message);
                self.fault(&key, fault)
            })?;
            mask |= 1 << index;
        }
        self.masks.borrow_mut().push(mask);
        Ok(mask)
    }

    /// An error about `field` of the op being compiled.
    pub(crate) fn error(&self, field: &str, message: impl Into<String>) -> PolicyError {
        self.fault(field, Fault::bad(message))
    }

    /// `fault`, about `field` of the op being compiled.
    pub(crate) fn fault(&self, field: &str, fault: Fault) -> PolicyError {
        let key = if field.is_empty() {
            self.key.clone()
        } else {
            format!("{}.{field}", self.key)
        };
        fault.at(key)
    }

    /// Register a selector; returns its index in the policy's selector set.
    pub(crate) fn selector(&mut self, field: &str, src: &str) -> Result<usize, PolicyError> {
        let i = match self.by_source.get(src) {
            Some(&i) => i,
            None => {
                let sel = Selector::parse(src).map_err(|e| self.error(field, e.to_string()))?;
                // Refused here, at the op and path that go over, and at once.
                self.positions += sel.segments().len() + 1;
                if self.positions > MAX_POSITIONS {
                    return Err(self.error(
                        field,
                        format!(
                            "`{src}`: too many path segments in one policy (at most \
                             {MAX_POSITIONS}, counting one more per path)"
                        ),
                    ));
                }
                self.selectors.push(sel);
                self.by_source
                    .insert(src.to_owned(), self.selectors.len() - 1);
                self.selectors.len() - 1
            }
        };
        self.used.push(UsedSelector {
            field: field.to_owned(),
            index: i,
            guard: false,
            optional: false,
        });
        Ok(i)
    }

    /// [`CompileCx::selectors`] for guards (what an op must leave alone, like `prune`'s
    /// `except`): a guard that matches nothing is not warned about, since it only says
    /// "if this is there".
    pub(crate) fn guard_selectors(
        &mut self,
        field: &str,
        srcs: &[String],
    ) -> Result<Vec<usize>, PolicyError> {
        self.marked_selectors(field, srcs, |u| u.guard = true)
    }

    /// [`CompileCx::selectors`] for what only some of a policy's payloads have (`drop`'s
    /// `if_present`: a single entity's root fields beside a list response's): one that
    /// matches nothing is not warned about.
    pub(crate) fn optional_selectors(
        &mut self,
        field: &str,
        srcs: &[String],
    ) -> Result<Vec<usize>, PolicyError> {
        self.marked_selectors(field, srcs, |u| u.optional = true)
    }

    /// [`CompileCx::selectors`], each use marked by `mark`.
    fn marked_selectors(
        &mut self,
        field: &str,
        srcs: &[String],
        mark: fn(&mut UsedSelector),
    ) -> Result<Vec<usize>, PolicyError> {
        let from = self.used.len();
        let out = self.selectors(field, srcs)?;
        self.used[from..].iter_mut().for_each(mark);
        Ok(out)
    }

    /// Check a field name or dotted path (`refs.shot`): no empty part.
    pub(crate) fn dotted(&self, field: &str, path: &str) -> Result<(), PolicyError> {
        if path.is_empty() || path.split('.').any(str::is_empty) {
            return Err(self.error(
                field,
                format!("`{path}` is not a field name or dotted path"),
            ));
        }
        Ok(())
    }

    pub(crate) fn selectors(
        &mut self,
        field: &str,
        srcs: &[String],
    ) -> Result<Vec<usize>, PolicyError> {
        srcs.iter()
            .enumerate()
            .map(|(i, s)| self.selector(&format!("{field}[{i}]"), s))
            .collect()
    }

    /// Parse a filter expression and check the parameters it names.
    pub(crate) fn expr(&self, field: &str, src: &str) -> Result<Expr, PolicyError> {
        let expr = Expr::parse(src).map_err(|e| self.error(field, e.to_string()))?;
        for name in expr.params() {
            if !self.params.contains_key(&name) {
                return Err(self.error(field, format!("`${name}` is not declared in [params]")));
            }
        }
        Ok(expr)
    }

    /// Check that `name` is a declared parameter.
    pub(crate) fn param(&self, field: &str, name: &str) -> Result<(), PolicyError> {
        if self.params.contains_key(name) {
            return Ok(());
        }
        let declared: Vec<&str> = self.params.keys().map(String::as_str).collect();
        let allowed = match declared.is_empty() {
            true => "none are declared".to_owned(),
            false => format!("declared: {}", declared.join(", ")),
        };
        Err(self.error(
            field,
            format!("`{name}` is not declared in [params]; {allowed}"),
        ))
    }

    pub(crate) fn number(
        &self,
        field: &str,
        value: &NumberOrParam,
    ) -> Result<ParamNumber, PolicyError> {
        match value {
            NumberOrParam::Number(n) if n.is_finite() => Ok(ParamNumber::Fixed(*n)),
            NumberOrParam::Number(n) => {
                Err(self.error(field, format!("{n} is not a finite number")))
            }
            NumberOrParam::Param(name) => match self.params.get(name) {
                Some(Scalar::Number(_)) => Ok(ParamNumber::Param(name.clone())),
                Some(other) => Err(self.error(
                    field,
                    format!("`${name}` is a {}, a number is needed", other.kind()),
                )),
                None => Err(self.error(field, format!("`${name}` is not declared in [params]"))),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::Policy;

    fn details(text: &str) -> super::ErrorDetails {
        Policy::parse(text).unwrap_err().details()
    }

    /// The issue-28 probe: rejecting a policy echoed 100-400 KB of the offending value. A
    /// run of over 120 characters without whitespace is now shown by its start and end and
    /// how much was left out; the key and the allowed values stay whole.
    #[test]
    fn regression_a_policy_error_echoed_the_whole_offending_value() {
        let huge = "x".repeat(300_000);
        for (text, key) in [
            (format!("[[ops]]\nop = \"{huge}\"\n"), "ops[0].op"),
            (
                format!("[[ops]]\nop = \"truncate\"\nmax_tokens = \"{huge}\"\n"),
                "ops[0].max_tokens",
            ),
            (
                format!("[[ops]]\nop = \"drop\"\npaths = [\"$.[{huge}\"]\n"),
                "ops[0].paths[0]",
            ),
            (format!("[[ops]]\nop = \"drop\"\n{huge} = 1\n"), "ops[0]"),
            (format!("[[ops]]\nop = \"drop\"\npaths = [\"{huge}"), ""),
        ] {
            let message = Policy::parse(&text).unwrap_err().to_string();
            assert!(
                message.len() < 1000,
                "{} bytes: {}",
                message.len(),
                &message[..300]
            );
            assert!(message.contains(key), "{message}");
            assert!(message.contains("bytes]…"), "{message}");
        }
        let message = Policy::parse(&format!("[[ops]]\nop = \"{huge}\"\n"))
            .unwrap_err()
            .to_string();
        assert!(message.contains("allowed: prune, drop, keep"), "{message}");
        assert_eq!(
            super::elide("short `value`; allowed: a, b"),
            "short `value`; allowed: a, b"
        );
    }

    /// The issue-28 probe: a policy over the selector limit was refused "at `ops`", not at
    /// the op and the path that went over.
    #[test]
    fn regression_the_selector_limit_error_named_no_op() {
        let paths: Vec<String> = (0..300).map(|i| format!("\"$.a{i}\"")).collect();
        let text = format!(
            "[[ops]]\nop = \"prune\"\n[[ops]]\nop = \"drop\"\npaths = [{}]\n",
            paths.join(",")
        );
        let d = details(&text);
        assert_eq!(d.key.as_deref(), Some("ops[1].paths[128]"), "{d:?}");
    }

    #[test]
    fn details_name_the_key_the_bad_value_and_the_allowed_values() {
        let d = details("[[ops]]\nop = \"prun\"\n");
        assert_eq!(d.key.as_deref(), Some("ops[0].op"));
        assert_eq!(d.value.as_deref(), Some("prun"));
        assert!(d.allowed.contains(&"prune".to_owned()), "{d:?}");
        let d = details("[omitted]\nwhere = 1\n");
        assert_eq!(d.value.as_deref(), Some("where"));
        assert_eq!(d.allowed, ["enabled", "at", "key"]);
        let d = details("[[ops]]\nop = \"drop\"\npathz = [\"$.a\"]\n");
        assert_eq!(d.allowed, ["levels", "paths", "if_present"]);
        let d = details("default_level = \"q\"\n");
        assert_eq!(d.allowed, ["none", "minimal", "standard", "full"]);
        assert_eq!(details("= broken").key, None);
    }
}
