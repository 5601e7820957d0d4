//! The engine: run a compiled policy's ops over a value in one depth-first walk.
//!
//! Selectors are matched incrementally as the walk descends (see
//! [`crate::query::selector`]), so every op is served by the same walk and a subtree no
//! selector can reach is skipped unless an op works everywhere (`prune`). At each node the
//! walk first drops members an op removes outright, then shapes the children, then runs the
//! node's ops in policy order — so an op always sees its children already shaped.
//!
//! ```
//! use pare::{json, policy::Policy, shape::{shape, ShapeOptions}};
//! let policy = Policy::parse("[[ops]]\nop = \"prune\"\n").unwrap();
//! let input = json::parse(r#"{"a":1,"b":null,"c":[null,""]}"#).unwrap();
//! let out = shape(input, &policy, &ShapeOptions::new(&policy));
//! assert_eq!(json::to_compact(&out.value), r#"{"a":1,"c":[null,""]}"#);
//! ```

use crate::manifest::{Kind, Manifest, Recorder};
use crate::ops::{ApplyCx, Op, Sibling};
use crate::params::Params;
use crate::policy::{CompiledOp, Policy};
use crate::query::selector::{MatchState, Seen, Step};
use crate::tokens::{self, Tokenizer};
use crate::value::{Map, Value};

/// What the parser does of a policy's ops at one level ([`crate::early`] makes it; the
/// walk reads it, so it lives here and the dependency runs one way).
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub omit: crate::json::omit::Omit,
    /// Per op of the level (in order): done by the parser.
    pub done: Vec<bool>,
    /// Selectors only the ops done by the parser use: the walk starts without them.
    pub selectors: Vec<usize>,
}

/// A plan and what the parser left out following it.
pub(crate) type Done<'p> = (&'p Plan, crate::json::omit::Omitted);

/// How to shape one request.
#[derive(Clone)]
pub struct ShapeOptions<'a> {
    /// Level index into [`Policy::levels`].
    pub level: usize,
    /// The policy's parameters, overrides applied ([`Policy::params`]).
    pub params: Params,
    /// Used by ops that measure in tokens (`truncate`).
    pub tokenizer: &'a dyn Tokenizer,
    /// Record paths for the manifest (costs a little; per-op totals are always kept).
    pub track_paths: bool,
    /// Run only the first N ops of the level (for per-op savings in reports).
    pub op_limit: Option<usize>,
    /// Write `_omitted` notes; `None`: as the policy says.
    pub notes: Option<bool>,
    /// Count the nodes each selector selects ([`Shaped::matches`]; `pare policy check
    /// --sample`). Whether each selected any is always noted.
    pub count_matches: bool,
    /// The caller's question: `limit` with `keep = "relevant"` keeps the items that answer it.
    pub query: Option<&'a str>,
}

impl<'a> ShapeOptions<'a> {
    /// A door's request in the engine's terms, the one place it is done: the level by name
    /// (`None`: the policy's default), parameter overrides as the caller wrote them
    /// (`maxGapMinutes` = `5`, checked against the policy's `[params]`), the tokenizer and
    /// the `_omitted` setting. Errors name the bad level or parameter and what is allowed.
    pub fn resolve(
        policy: &Policy,
        level: Option<&str>,
        params: &[(String, String)],
        tokenizer: &'a dyn Tokenizer,
        notes: Option<bool>,
    ) -> Result<ShapeOptions<'a>, crate::ops::compile::PolicyError> {
        Ok(ShapeOptions {
            level: policy.level_index(level.unwrap_or(policy.default_level()))?,
            params: policy.params(params)?,
            tokenizer,
            track_paths: false,
            op_limit: None,
            notes,
            count_matches: false,
            query: None,
        })
    }

    /// The policy's default level and parameters, o200k_base, no path tracking.
    pub fn new(policy: &Policy) -> ShapeOptions<'a> {
        ShapeOptions {
            level: policy
                .level_index(policy.default_level())
                .expect("the default level exists"),
            params: policy.params(&[]).expect("defaults are valid"),
            tokenizer: tokens::builtin("o200k_base").expect("o200k_base is built in"),
            track_paths: false,
            op_limit: None,
            notes: None,
            count_matches: false,
            query: None,
        }
    }
}

/// The shaped value and what was removed.
#[derive(Debug)]
pub struct Shaped {
    /// The value after the ops.
    pub value: Value,
    /// What the ops removed: by path with `track_paths`, else one `$..` entry per op and kind.
    pub manifest: Manifest,
    /// Subtrees that `drop` removed, kept so that freeing them happens in one place: a
    /// process about to exit can skip it (`std::mem::forget`), which on large inputs saves
    /// as much time as the shaping itself.
    pub removed: Vec<Value>,
    /// Which selectors selected a node ([`Policy::selector_matches`]; unnoted when no op ran).
    pub matches: Seen,
}

/// One JSONL line shaped ([`shape_json_line`]).
#[derive(Debug)]
pub struct ShapedLine {
    /// The shaped value rendered in the format asked, without a newline.
    pub text: String,
    /// Which selectors selected a node (a door says at the end which matched in no line).
    pub matches: Seen,
    /// Keys the line repeats within an object (each keeps its last value, as `JSON.parse`
    /// does): a door warns about them.
    pub duplicates: Vec<crate::json::DuplicateKey>,
}

/// One JSON text shaped and rendered in `format`, with no budget and no record: what
/// `pare compact --jsonl` writes for each line and what the Python package's
/// `Policy.shape_lines` returns per line (for Dask and Ray partitions), so both warn about
/// repeated keys alike and `strict` refuses them alike (the first repeat, with its line and
/// column).
pub fn shape_json_line(
    text: &str,
    policy: &Policy,
    opts: &ShapeOptions,
    format: crate::encode::Format,
    strict: bool,
) -> Result<ShapedLine, crate::json::JsonError> {
    let parsed = parse_json_line(text, strict)?;
    let shaped = shape(parsed.value, policy, opts);
    Ok(ShapedLine {
        text: crate::encode::render(&shaped.value, format, opts.tokenizer),
        matches: shaped.matches,
        duplicates: parsed.duplicates,
    })
}

/// A JSONL line read as [`shape_json_line`] reads it, for a door that shapes it its own way
/// (`pare compact --jsonl --report` measures each op): its repeated keys noted, or with
/// `strict` the first one an error.
pub fn parse_json_line(
    text: &str,
    strict: bool,
) -> Result<crate::json::Parsed, crate::json::JsonError> {
    let parsed = crate::json::parse_noting_duplicates(text)?;
    match parsed.duplicates.first() {
        Some(d) if strict => Err(d.to_error()),
        _ => Ok(parsed),
    }
}

/// Shape `value` with `policy`. At the `full` level this returns the value untouched.
pub fn shape(value: Value, policy: &Policy, opts: &ShapeOptions) -> Shaped {
    shape_planned(value, policy, opts, None)
}

/// The ops a walk with `opts` runs, in order: those of its level, at most `op_limit`.
pub(crate) fn ops_run<'p>(
    policy: &'p Policy,
    opts: &ShapeOptions,
) -> impl Iterator<Item = &'p CompiledOp> {
    policy
        .active_ops(opts.level)
        .take(opts.op_limit.unwrap_or(usize::MAX))
}

/// [`shape`] of a value whose parse already did some of the ops ([`crate::early`]): the
/// walk skips those, and their counts and selectors come from the parse.
pub(crate) fn shape_planned(
    mut value: Value,
    policy: &Policy,
    opts: &ShapeOptions,
    early: Option<Done>,
) -> Shaped {
    let active: Vec<(&'static str, &dyn Op)> =
        ops_run(policy, opts).map(|o| (o.name, &*o.op)).collect();
    let notes = opts.notes.unwrap_or(policy.omitted_enabled)
        && !policy.omitted_at.is_empty()
        && !active.is_empty();
    let done = |i: usize| early.as_ref().is_some_and(|(plan, _)| plan.done[i]);
    let walked: Vec<Option<&dyn Op>> = active
        .iter()
        .enumerate()
        .map(|(i, (_, op))| (!done(i)).then_some(*op))
        .collect();
    let mut walker = Walker {
        policy,
        everywhere: walked.iter().flatten().any(|op| op.everywhere()),
        ops: walked,
        params: &opts.params,
        tokenizer: opts.tokenizer,
        query: opts.query,
        rec: Recorder::new(
            active.iter().map(|(n, _)| *n).collect(),
            opts.track_paths || notes,
        ),
        siblings: Vec::new(),
        legend: Vec::new(),
        notes,
        level: opts.level,
        removed: Vec::new(),
        root_is_object: matches!(value, Value::Object(_)),
        seen: Seen::new(&policy.selectors, opts.count_matches),
    };
    if let Some((plan, omitted)) = &early {
        for (op, counts) in omitted.counts.iter().enumerate() {
            walker.rec.set_op(op);
            for kind in Kind::ALL {
                walker.rec.here(kind, counts[kind as usize]);
            }
        }
        for s in plan.omit.selectors_hit(omitted) {
            policy.selectors.note_selected(&mut walker.seen, s);
        }
    }
    if !walker.ops.is_empty() {
        let root = match &early {
            Some((plan, _)) => policy.selectors.root_without(&plan.selectors),
            None => policy.selectors.root(),
        };
        policy.selectors.note(&mut walker.seen, &root);
        walker.walk(&mut value, root, None);
        // A sibling of the root has nowhere to go; ops only add them under objects.
        walker.siblings.clear();
        if !walker.legend.is_empty()
            && let Value::Object(map) = &mut value
        {
            let legend: Map = walker
                .legend
                .drain(..)
                .map(|(short, long)| (short, Value::String(long.into())))
                .collect();
            map.insert_at(0, map.unique_key("_legend"), Value::Object(legend));
        }
    }
    Shaped {
        value,
        manifest: walker.rec.finish(),
        removed: walker.removed,
        matches: walker.seen,
    }
}

struct Walker<'p> {
    policy: &'p Policy,
    /// The level's ops, in order; `None` for those the parser did ([`crate::early`]).
    ops: Vec<Option<&'p dyn Op>>,
    everywhere: bool,
    params: &'p Params,
    tokenizer: &'p dyn Tokenizer,
    query: Option<&'p str>,
    rec: Recorder,
    siblings: Vec<Sibling>,
    legend: Vec<(String, String)>,
    notes: bool,
    level: usize,
    removed: Vec<Value>,
    root_is_object: bool,
    seen: Seen,
}

impl Walker<'_> {
    fn walk(&mut self, node: &mut Value, state: MatchState, key: Option<&str>) {
        let policy = self.policy;
        let set = &policy.selectors;
        let anchored = self.notes
            && matches!(node, Value::Object(_))
            && policy.omitted_at.iter().any(|&s| set.matches(&state, s));
        if anchored {
            self.rec.push_anchor();
        }
        match node {
            Value::Object(map) => self.walk_members(map, state),
            Value::Array(items) => self.walk_items(items, state),
            _ => {}
        }
        for (i, op) in self.ops.iter().enumerate() {
            let Some(op) = op else { continue };
            self.rec.set_op(i);
            let mut cx = ApplyCx {
                level: self.level,
                state,
                set,
                params: self.params,
                tokenizer: self.tokenizer,
                query: self.query,
                rec: &mut self.rec,
                key,
                root_is_object: self.root_is_object,
                siblings: &mut self.siblings,
                legend: &mut self.legend,
            };
            op.apply(node, &mut cx);
        }
        if anchored
            && let Some(note) = self.rec.pop_anchor()
            && let Value::Object(map) = node
        {
            let key = map.unique_key(&policy.omitted_key);
            map.push_unique(key, note);
        }
    }

    /// Which op (if any) drops the node at `state`.
    fn dropper(&self, state: &MatchState) -> Option<usize> {
        let set = &self.policy.selectors;
        self.ops
            .iter()
            .position(|op| op.is_some_and(|op| op.drops(set, state)))
    }

    fn walk_members(&mut self, map: &mut Map, state: MatchState) {
        let policy = self.policy;
        let set = &policy.selectors;
        let mut pending: Vec<(usize, Vec<Sibling>)> = Vec::new();
        let mut kept = 0usize;
        map.entries_mut().retain_mut(|(k, v)| {
            let st = set.step(&state, Step::Key(k));
            set.note(&mut self.seen, &st);
            if let Some(op) = self.dropper(&st) {
                self.rec.set_op(op);
                self.rec.key(removed_kind(v), k, 1);
                defer_free(&mut self.removed, std::mem::take(v));
                return false;
            }
            if self.everywhere || !set.is_dead(&st) {
                let mark = self.rec.enter_key(k);
                self.walk(v, st, Some(k));
                self.rec.leave(mark);
                if !self.siblings.is_empty() {
                    pending.push((kept, std::mem::take(&mut self.siblings)));
                }
            }
            kept += 1;
            true
        });
        // Insert from the back so earlier indices stay valid.
        for (at, sibs) in pending.into_iter().rev() {
            let (before, after): (Vec<_>, Vec<_>) = sibs.into_iter().partition(|s| s.before);
            for s in after.into_iter().rev() {
                let key = map.unique_key(&s.key);
                map.insert_at(at + 1, key, s.value);
            }
            for s in before.into_iter().rev() {
                let key = map.unique_key(&s.key);
                map.insert_at(at, key, s.value);
            }
        }
    }

    fn walk_items(&mut self, items: &mut Vec<Value>, state: MatchState) {
        if items.len() >= PARALLEL_MIN_ITEMS && !self.rec.is_tracking() && !self.notes {
            return self.walk_items_parallel(items, state);
        }
        let policy = self.policy;
        let set = &policy.selectors;
        let len = items.len();
        let mut index = 0usize;
        items.retain_mut(|v| {
            let st = set.step(&state, Step::Index { index, len });
            set.note(&mut self.seen, &st);
            index += 1;
            if let Some(op) = self.dropper(&st) {
                self.rec.set_op(op);
                self.rec.items(removed_kind(v), 1);
                defer_free(&mut self.removed, std::mem::take(v));
                return false;
            }
            if self.everywhere || !set.is_dead(&st) {
                let mark = self.rec.enter_index();
                self.walk(v, st, None);
                self.rec.leave(mark);
                self.siblings.clear();
            }
            true
        });
    }
}

/// Arrays with at least this many items are shaped in parallel chunks. Below it, the cost of
/// forking walkers outweighs the gain.
const PARALLEL_MIN_ITEMS: usize = 2048;

impl<'p> Walker<'p> {
    /// A walker for one chunk of a parallel array walk: same policy and request, its own
    /// counts. Path tracking and notes are off (parallel walks are only used without them).
    fn fork(&self) -> Walker<'p> {
        Walker {
            policy: self.policy,
            ops: self.ops.clone(),
            everywhere: self.everywhere,
            params: self.params,
            tokenizer: self.tokenizer,
            query: self.query,
            rec: self.rec.fork(),
            siblings: Vec::new(),
            legend: Vec::new(),
            notes: false,
            level: self.level,
            removed: Vec::new(),
            root_is_object: self.root_is_object,
            seen: Seen::new(&self.policy.selectors, self.seen.is_counting()),
        }
    }

    /// Each item is shaped independently of its siblings (array-level ops run afterwards, on
    /// the parent), so chunks can be shaped on all cores. Forks are joined in order, so the
    /// result — value, counts, legend order — is the same as a serial walk's.
    fn walk_items_parallel(&mut self, items: &mut Vec<Value>, state: MatchState) {
        use rayon::prelude::*;
        let policy = self.policy;
        let set = &policy.selectors;
        let len = items.len();
        let chunk = len
            .div_ceil(rayon::current_num_threads().max(1) * 4)
            .max(256);
        let this = &*self;
        let forks: Vec<(Walker<'p>, Vec<usize>)> = items
            .par_chunks_mut(chunk)
            .enumerate()
            .map(|(c, part)| {
                let mut w = this.fork();
                let mut dropped = Vec::new();
                for (j, v) in part.iter_mut().enumerate() {
                    let index = c * chunk + j;
                    let st = set.step(&state, Step::Index { index, len });
                    set.note(&mut w.seen, &st);
                    if let Some(op) = w.dropper(&st) {
                        w.rec.set_op(op);
                        w.rec.items(removed_kind(v), 1);
                        defer_free(&mut w.removed, std::mem::take(v));
                        dropped.push(index);
                    } else if w.everywhere || !set.is_dead(&st) {
                        w.walk(v, st, None);
                        w.siblings.clear();
                    }
                }
                (w, dropped)
            })
            .collect();
        let mut dropped_all = Vec::new();
        for (fork, dropped) in forks {
            self.rec.join(fork.rec);
            for entry in fork.legend {
                if !self.legend.iter().any(|(s, _)| *s == entry.0) {
                    self.legend.push(entry);
                }
            }
            self.removed.extend(fork.removed);
            self.seen.join(fork.seen);
            dropped_all.extend(dropped);
        }
        if !dropped_all.is_empty() {
            let mut index = 0;
            let mut next = dropped_all.iter().peekable();
            items.retain(|_| {
                let gone = next.peek() == Some(&&index);
                if gone {
                    next.next();
                }
                index += 1;
                !gone
            });
        }
    }
}

/// Keep a removed value for [`Shaped::removed`] only if freeing it costs anything: nulls,
/// numbers and short strings (inline, no allocation) are dropped here. On a large payload
/// most removed values are of that kind, and keeping them all grew a list of millions.
fn defer_free(removed: &mut Vec<Value>, v: Value) {
    let owns_memory = match &v {
        Value::Null | Value::Bool(_) => false,
        Value::Number(n) => n.is_heap_allocated(),
        Value::String(s) => s.is_heap_allocated(),
        Value::Array(a) => a.capacity() > 0,
        Value::Object(m) => !m.is_empty(),
    };
    if owns_memory {
        removed.push(v);
    }
}

/// A dropped value that held nothing is reported as empty, not stripped: the reader then
/// knows no information went with it.
fn removed_kind(v: &Value) -> Kind {
    if v.is_empty_like() {
        Kind::Empty
    } else {
        Kind::Stripped
    }
}
