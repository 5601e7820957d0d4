//! What the ops removed: the omitted manifest and the `_omitted` notes.
//!
//! Every lossy op records what it removed — a kind, the path pattern (array indices as `[*]`)
//! and a count, never a value — so a reader can tell "stripped" from "empty". The manifest
//! goes into the report; with `omitted.enabled` the same facts are also written into the
//! output as a short note on the anchor objects:
//!
//! ```json
//! {"id":"sys-1","_omitted":{"empty":["owner","tags"],"stripped":["created_at","metadata"]}}
//! ```
//!
//! A kind lists plain names when each was removed once, and `{name: count}` otherwise.

use std::collections::{BTreeMap, HashMap};

use crate::value::{Map, Number, Value};

/// What happened to the removed material.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Kind {
    /// `null`, `""`, `[]` or `{}` removed by `prune`.
    Empty,
    /// Removed by name or path (`drop`, `keep`, `flatten`, `group`).
    Stripped,
    /// Array items removed by a predicate (`filter`).
    Filtered,
    /// Array items folded into a neighbour (`merge`).
    Merged,
    /// Array items past a limit (`limit`).
    Limited,
    /// Strings cut short (`truncate`).
    Truncated,
    /// Numbers given fewer decimals (`round`).
    Rounded,
    /// Numbers replaced by a label (`tier`).
    Tiered,
    /// Values of a merged block's items that differ from the one value the block kept
    /// (`merge`'s `first`, `coalesce` and `others = "first"`).
    Collapsed,
}

impl Kind {
    /// Every kind, in declaration order (a kind's index is `kind as usize`).
    pub const ALL: [Kind; 9] = [
        Kind::Empty,
        Kind::Stripped,
        Kind::Filtered,
        Kind::Merged,
        Kind::Limited,
        Kind::Truncated,
        Kind::Rounded,
        Kind::Tiered,
        Kind::Collapsed,
    ];
    /// The kind's name in the report and in `_omitted` notes (`empty`, `stripped`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Empty => "empty",
            Kind::Stripped => "stripped",
            Kind::Filtered => "filtered",
            Kind::Merged => "merged",
            Kind::Limited => "limited",
            Kind::Truncated => "truncated",
            Kind::Rounded => "rounded",
            Kind::Tiered => "tiered",
            Kind::Collapsed => "collapsed",
        }
    }
}

/// One line of the manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The op that removed it (`prune`, `drop`, …).
    pub op: &'static str,
    /// What happened to it.
    pub kind: Kind,
    /// Path pattern from the root, e.g. `$.entities[*].owner`.
    pub path: String,
    /// How many removals of this kind `op` made at `path`; never 0.
    pub count: u64,
}

/// Everything the ops removed in one run, in a deterministic order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Manifest {
    /// One entry per op, kind and path: by op (in run order), then kind, then path.
    pub entries: Vec<Entry>,
}

impl Manifest {
    /// Total count per kind.
    pub fn totals(&self) -> BTreeMap<Kind, u64> {
        let mut t = BTreeMap::new();
        for e in &self.entries {
            *t.entry(e.kind).or_default() += e.count;
        }
        t
    }
    /// Whether the ops removed nothing.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
    /// Add another run's manifest (JSONL: one manifest for all lines).
    pub fn absorb(&mut self, other: Manifest) {
        for e in other.entries {
            match self
                .entries
                .iter_mut()
                .find(|x| x.op == e.op && x.kind == e.kind && x.path == e.path)
            {
                Some(x) => x.count += e.count,
                None => self.entries.push(e),
            }
        }
    }
}

struct Anchor {
    /// Length of the path when the anchor was entered: what follows is relative to it.
    prefix_len: usize,
    /// In first-seen order, so a note lists names as the input had them.
    counts: Vec<((Kind, String), u64)>,
}

fn bump(counts: &mut Vec<((Kind, String), u64)>, kind: Kind, rel: &str, n: u64) {
    match counts.iter_mut().find(|((k, r), _)| *k == kind && r == rel) {
        Some((_, c)) => *c += n,
        None => counts.push(((kind, rel.to_owned()), n)),
    }
}

/// Collects records during a walk. Path tracking costs a little, so it is on only when a
/// manifest or notes were asked for; per-kind totals are always kept.
pub(crate) struct Recorder {
    tracking: bool,
    path: String,
    op_names: Vec<&'static str>,
    op: usize,
    totals: Vec<[u64; Kind::ALL.len()]>,
    by_path: HashMap<(usize, Kind, String), u64>,
    anchors: Vec<Anchor>,
    scratch: String,
}

impl Recorder {
    pub(crate) fn new(op_names: Vec<&'static str>, tracking: bool) -> Recorder {
        Recorder {
            tracking,
            path: String::from("$"),
            totals: vec![[0; Kind::ALL.len()]; op_names.len()],
            op_names,
            op: 0,
            by_path: HashMap::new(),
            anchors: Vec::new(),
            scratch: String::new(),
        }
    }

    pub(crate) fn is_tracking(&self) -> bool {
        self.tracking
    }

    /// A recorder for a parallel part of the walk: same ops, no path tracking.
    pub(crate) fn fork(&self) -> Recorder {
        Recorder::new(self.op_names.clone(), false)
    }

    /// Add the counts of a fork.
    pub(crate) fn join(&mut self, fork: Recorder) {
        for (mine, theirs) in self.totals.iter_mut().zip(fork.totals) {
            for (a, b) in mine.iter_mut().zip(theirs) {
                *a += b;
            }
        }
    }

    pub(crate) fn set_op(&mut self, op: usize) {
        self.op = op;
    }

    /// Enter an object member; returns the mark to [`Recorder::leave`] with.
    #[inline]
    pub(crate) fn enter_key(&mut self, key: &str) -> usize {
        let mark = self.path.len();
        if self.tracking {
            push_key(&mut self.path, key);
        }
        mark
    }

    /// Enter an array element (all elements share the pattern `[*]`).
    #[inline]
    pub(crate) fn enter_index(&mut self) -> usize {
        let mark = self.path.len();
        if self.tracking {
            self.path.push_str("[*]");
        }
        mark
    }

    #[inline]
    pub(crate) fn leave(&mut self, mark: usize) {
        if self.tracking {
            self.path.truncate(mark);
        }
    }

    /// A member `key` of the current object was removed.
    pub(crate) fn key(&mut self, kind: Kind, key: &str, count: u64) {
        self.record(kind, count, |p| push_key(p, key));
    }

    /// Items of the current array were removed.
    pub(crate) fn items(&mut self, kind: Kind, count: u64) {
        self.record(kind, count, |p| p.push_str("[*]"));
    }

    /// Members of the current object were removed (not by name: `limit` on a map).
    pub(crate) fn members(&mut self, kind: Kind, count: u64) {
        self.record(kind, count, |p| p.push_str(".*"));
    }

    /// The current node itself was changed.
    pub(crate) fn here(&mut self, kind: Kind, count: u64) {
        self.record(kind, count, |_| {});
    }

    /// Something named by a label inside the current node (e.g. a dropped relation type).
    pub(crate) fn label(&mut self, kind: Kind, label: &str, count: u64) {
        self.record(kind, count, |p| {
            p.push('{');
            p.push_str(label);
            p.push('}');
        });
    }

    fn record(&mut self, kind: Kind, count: u64, suffix: impl FnOnce(&mut String)) {
        if count == 0 {
            return;
        }
        self.totals[self.op][kind as usize] += count;
        if !self.tracking {
            return;
        }
        self.scratch.clear();
        self.scratch.push_str(&self.path);
        suffix(&mut self.scratch);
        if let Some(anchor) = self.anchors.last_mut() {
            let rel = self.scratch[anchor.prefix_len..].trim_start_matches('.');
            let rel = if rel.is_empty() { "." } else { rel };
            bump(&mut anchor.counts, kind, rel, count);
        }
        match self.by_path.get_mut(&(self.op, kind, self.scratch.clone())) {
            Some(n) => *n += count,
            None => {
                self.by_path
                    .insert((self.op, kind, self.scratch.clone()), count);
            }
        }
    }

    pub(crate) fn push_anchor(&mut self) {
        self.anchors.push(Anchor {
            prefix_len: self.path.len(),
            counts: Vec::new(),
        });
    }

    /// Close the innermost anchor: the note to attach, if anything was removed inside it.
    pub(crate) fn pop_anchor(&mut self) -> Option<Value> {
        let anchor = self.anchors.pop()?;
        if anchor.counts.is_empty() {
            return None;
        }
        // The outer anchor also sees what this one saw, relative to itself.
        if let Some(outer) = self.anchors.last_mut() {
            let prefix = self.path[outer.prefix_len..]
                .trim_start_matches('.')
                .to_owned();
            for ((kind, rel), n) in &anchor.counts {
                let full = match (prefix.is_empty(), rel.as_str()) {
                    (true, r) => r.to_owned(),
                    (false, ".") => prefix.clone(),
                    (false, r) if r.starts_with('[') => format!("{prefix}{r}"),
                    (false, r) => format!("{prefix}.{r}"),
                };
                bump(&mut outer.counts, *kind, &full, *n);
            }
        }
        Some(note(&anchor.counts))
    }

    /// The manifest: by path when tracking, else per-op totals with the path `$..`.
    pub(crate) fn finish(self) -> Manifest {
        let mut entries: Vec<Entry> = if self.tracking {
            entries_by_path(self.by_path, &self.op_names)
        } else {
            Vec::new()
        };
        if !self.tracking {
            for (i, counts) in self.totals.iter().enumerate() {
                for kind in Kind::ALL {
                    let count = counts[kind as usize];
                    if count > 0 {
                        entries.push(Entry {
                            op: self.op_names[i],
                            kind,
                            path: "$..".into(),
                            count,
                        });
                    }
                }
            }
        }
        Manifest { entries }
    }
}

/// Counts by (op, kind, path) as the manifest's entries, in its order: by op (in run
/// order, `op_names` naming them), then kind, then path.
pub(crate) fn entries_by_path(
    by_path: HashMap<(usize, Kind, String), u64>,
    op_names: &[&'static str],
) -> Vec<Entry> {
    let mut v: Vec<_> = by_path.into_iter().collect();
    v.sort_by(|a, b| (a.0.0, a.0.1, &a.0.2).cmp(&(b.0.0, b.0.1, &b.0.2)));
    v.into_iter()
        .map(|((op, kind, path), count)| Entry {
            op: op_names[op],
            kind,
            path,
            count,
        })
        .collect()
}

/// `.key` for plain keys, `['key']` for the rest (RFC 9535 normalized-path style: a quote,
/// a backslash and control characters escaped, so a path stays on one line).
pub fn push_key(path: &mut String, key: &str) {
    let plain = !key.is_empty()
        && !key.starts_with(|c: char| c.is_ascii_digit())
        && key
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-');
    if plain {
        path.push('.');
        path.push_str(key);
    } else {
        path.push_str("['");
        for c in key.chars() {
            match c {
                '\'' => path.push_str("\\'"),
                '\\' => path.push_str("\\\\"),
                '\u{8}' => path.push_str("\\b"),
                '\u{c}' => path.push_str("\\f"),
                '\n' => path.push_str("\\n"),
                '\r' => path.push_str("\\r"),
                '\t' => path.push_str("\\t"),
                c if c < ' ' => path.push_str(&format!("\\u{:04x}", u32::from(c))),
                c => path.push(c),
            }
        }
        path.push_str("']");
    }
}

/// A step of the way to a value, for [`error_path`].
pub enum Step<'a> {
    /// An object's member.
    Key(&'a str),
    /// An array's item.
    Index(usize),
}

/// Where a value is, as every door's errors say it: `$.items[3]['display name']`
/// ([`push_key`] for keys). A path of more than 24 steps (a cycle, nesting past the limit)
/// shows its first and last 8 and how many are left out between.
///
/// ```
/// use pare::manifest::{error_path, Step};
/// let steps = [Step::Key("items"), Step::Index(3), Step::Key("x y")];
/// assert_eq!(error_path(&steps), "$.items[3]['x y']");
/// ```
pub fn error_path(steps: &[Step]) -> String {
    const SHOWN: usize = 8;
    let mut s = String::from("$");
    let elide = steps.len() > 3 * SHOWN;
    for (i, step) in steps.iter().enumerate() {
        if elide && (SHOWN..steps.len() - SHOWN).contains(&i) {
            if i == SHOWN {
                s.push_str(&format!("…({} more)…", steps.len() - 2 * SHOWN));
            }
            continue;
        }
        match step {
            Step::Key(k) => push_key(&mut s, k),
            Step::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

fn note(counts: &[((Kind, String), u64)]) -> Value {
    let mut note = Map::new();
    for kind in Kind::ALL {
        let items: Vec<(&String, u64)> = counts
            .iter()
            .filter(|((k, _), _)| *k == kind)
            .map(|((_, name), n)| (name, *n))
            .collect();
        if items.is_empty() {
            continue;
        }
        let value = if items.iter().all(|(_, n)| *n == 1) {
            Value::Array(
                items
                    .iter()
                    .map(|(name, _)| Value::from(name.as_str()))
                    .collect(),
            )
        } else {
            Value::Object(
                items
                    .iter()
                    .map(|(name, n)| ((*name).clone(), Value::Number(Number::from_i64(*n as i64))))
                    .collect(),
            )
        };
        note.push_unique(kind.as_str(), value);
    }
    Value::Object(note)
}
