//! `pare stats`: where a payload's tokens go.
//!
//! The total is exact: the tokens of the input text as given. Below it, tokens are
//! *attributed* to paths (array indices collapsed to `[*]`): every scalar member is counted
//! alone as `"key":value`, a container adds its own key and brackets to its members' sum.
//! So the numbers are honest only if read as such: pieces counted apart take more tokens
//! than the same text counted whole (the attributed total exceeds the exact one, often by a
//! third), and a *container* row (a path holding other values somewhere) includes its
//! children's rows, so only the *leaf* rows add up (to [`Stats::leaf_tokens`]); the rest of
//! the attributed total is the containers' own keys, brackets and commas. Per
//! path (id-keyed maps collapsed to `.*`) the profile says how often it occurs, its share, how much of it is `null`/empty, and
//! how much is a value repeated on every item of its array — the analysis seed ADR 0006 did by
//! hand ("~50% of the payload was waste").
//!
//! ```
//! let v = pare::json::parse(r#"{"items":[{"t":"x","n":null},{"t":"x","n":null}]}"#).unwrap();
//! let s = pare::stats::profile("…", &v, pare::tokens::builtin("o200k_base").unwrap());
//! let t = s.paths.iter().find(|p| p.path == "$.items[*].t").unwrap();
//! assert_eq!(t.occurrences, 2);
//! assert!(t.repeated_tokens > 0);
//! ```

use std::collections::HashMap;

use serde::Serialize;

use crate::json;
use crate::manifest::push_key;
use crate::tokens::Tokenizer;
use crate::value::Value;

/// An object used as a map (keyed by ids, versions, dates…) rather than a record: its keys
/// are collapsed to `.*` like array indices, so a profile has one row per shape, not per id.
/// Heuristic: 8+ members whose values are all of one kind, and keys that are not all plain
/// identifiers (or 32+ members).
fn is_map_like(map: &crate::value::Map) -> bool {
    if map.len() < 8 {
        return false;
    }
    let mut kinds = map.values().map(Value::kind);
    let first = kinds.next();
    if !kinds.all(|k| Some(k) == first) {
        return false;
    }
    let plain = |k: &str| {
        k.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
            && k.chars().all(|c| c.is_alphanumeric() || c == '_')
    };
    map.len() >= 32 || !map.keys().all(|k| plain(k))
}

/// One path of the profile.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PathStat {
    /// The path pattern: array indices as `[*]`, keys of map-like objects as `.*`.
    pub path: String,
    /// `leaf` (its values hold no others: leaf rows add up) or `container` (at least one
    /// occurrence holds members or items: its tokens include theirs).
    pub kind: PathKind,
    /// How many values the input has at this path.
    pub occurrences: u64,
    /// Attributed tokens (see the module docs).
    pub tokens: u64,
    /// Share of the attributed total, in percent.
    pub share: f64,
    /// Occurrences whose value is `null`, `""`, `[]` or `{}`.
    pub null_or_empty: u64,
    /// Attributed tokens of those `null_or_empty` occurrences.
    pub null_or_empty_tokens: u64,
    /// Tokens spent repeating a value that is the same on every item of its array
    /// (all but the first occurrence).
    pub repeated_tokens: u64,
}

/// Whether a path's tokens include other rows' ([`PathStat::kind`]).
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PathKind {
    /// Its values hold no other values: leaf rows add up.
    Leaf,
    /// Some occurrence holds members or items: its tokens include theirs.
    Container,
}

/// The profile of one payload.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Stats {
    /// Name of the tokenizer the counts are by.
    pub tokenizer: String,
    /// Exact tokens of the input text as given.
    pub tokens: usize,
    /// Length of the input text, in bytes.
    pub bytes: usize,
    /// Sum of attributed tokens (what shares are of): more than `tokens`, since every
    /// piece is counted apart.
    pub attributed_tokens: u64,
    /// Attributed tokens of the leaf paths: the rows that add up.
    pub leaf_tokens: u64,
    /// The rest of the attributed tokens: containers' own keys, brackets and commas.
    pub structure_tokens: u64,
    /// Attributed tokens of members that are `null`, `""`, `[]` or `{}`.
    pub null_or_empty_tokens: u64,
    /// Every path's [`PathStat::repeated_tokens`], summed.
    pub repeated_tokens: u64,
    /// (null/empty + repeated) / attributed, in percent.
    pub waste_share: f64,
    /// Paths by attributed tokens, most first.
    pub paths: Vec<PathStat>,
}

impl Stats {
    /// The rows a listing shows: at most `top` leaf paths, then at most `top` container
    /// paths, each most tokens first (leaves first because their rows add up; a container's
    /// row includes its children's). `pare stats --json` and Python's `pare.stats` list these.
    pub fn top_rows(&self, top: usize, leaves: bool, containers: bool) -> Vec<&PathStat> {
        let of = |kind: PathKind| self.paths.iter().filter(move |p| p.kind == kind).take(top);
        let leaf_rows = of(PathKind::Leaf).filter(|_| leaves);
        let container_rows = of(PathKind::Container).filter(|_| containers);
        leaf_rows.chain(container_rows).collect()
    }
}

/// Profile `value`, parsed from `text`, with `tok`.
pub fn profile(text: &str, value: &Value, tok: &dyn Tokenizer) -> Stats {
    let (tokens, stats) = count_alongside(text, tok, || walk(text, value, tok));
    Stats { tokens, ..stats }
}

/// A text profiled by [`profile_text`].
pub struct Profiled {
    /// The profile, its `tokens` the exact count of the text.
    pub stats: Stats,
    /// The keys the text repeats (each keeps its last value).
    pub duplicates: Vec<json::DuplicateKey>,
    /// The parsed text, for a caller that has more to do with it (or would rather not pay
    /// for freeing it).
    pub value: Value,
}

/// `pare stats` of a text: its exact count, and its profile when it is JSON. The count
/// runs beside the parse and the walk, so on a large text the two take the time of one.
pub fn profile_text(text: &str, tok: &dyn Tokenizer) -> (usize, Result<Profiled, json::JsonError>) {
    let (tokens, profiled) = count_alongside(text, tok, || {
        let parsed = json::parse_noting_duplicates(text)?;
        let stats = walk(text, &parsed.value, tok);
        Ok(Profiled {
            stats,
            duplicates: parsed.duplicates,
            value: parsed.value,
        })
    });
    let profiled = profiled.map(|p| Profiled {
        stats: Stats { tokens, ..p.stats },
        ..p
    });
    (tokens, profiled)
}

/// Count `text` with `tok` while `work` runs (on a second core when the text is large).
fn count_alongside<T: Send>(
    text: &str,
    tok: &dyn Tokenizer,
    work: impl FnOnce() -> T + Send,
) -> (usize, T) {
    crate::join(text.len() >= PARALLEL_BYTES, || tok.count(text), work)
}

/// The profile of `value` but for the exact count of `text` (`tokens` is 0 here; the
/// callers above count alongside).
fn walk(text: &str, value: &Value, tok: &dyn Tokenizer) -> Stats {
    let mut p = Profiler {
        tok,
        cache: HashMap::new(),
        paths: HashMap::new(),
        order: Vec::new(),
        path: String::from("$"),
        scratch: String::new(),
    };
    let total = p.node(value, None);
    p.add("$", total, value.is_empty_like(), has_children(value));
    let attributed = total;
    let mut paths: Vec<PathStat> = p
        .order
        .iter()
        .map(|k| {
            let mut s = p.paths.remove(k).expect("every ordered path has stats");
            s.share = if attributed == 0 {
                0.0
            } else {
                s.tokens as f64 * 100.0 / attributed as f64
            };
            s
        })
        .collect();
    // Leaves carry the waste; containers would count it again.
    let null_or_empty_tokens = paths
        .iter()
        .filter(|s| !s.path.ends_with("[*]"))
        .map(|s| s.null_or_empty_tokens)
        .sum::<u64>();
    let repeated_tokens = paths.iter().map(|s| s.repeated_tokens).sum::<u64>();
    paths.sort_by(|a, b| b.tokens.cmp(&a.tokens).then_with(|| a.path.cmp(&b.path)));
    let waste = null_or_empty_tokens + repeated_tokens;
    let leaf_tokens = paths
        .iter()
        .filter(|s| s.kind == PathKind::Leaf)
        .map(|s| s.tokens)
        .sum::<u64>();
    Stats {
        tokenizer: tok.name().to_owned(),
        tokens: 0,
        bytes: text.len(),
        attributed_tokens: attributed,
        leaf_tokens,
        structure_tokens: attributed.saturating_sub(leaf_tokens),
        null_or_empty_tokens,
        repeated_tokens,
        waste_share: if attributed == 0 {
            0.0
        } else {
            (waste.min(attributed)) as f64 * 100.0 / attributed as f64
        },
        paths,
    }
}

/// Texts shorter than this are counted on the calling thread: a thread costs tens of
/// microseconds, counting a megabyte a few milliseconds.
const PARALLEL_BYTES: usize = 1 << 18;

/// A non-empty array or object: its path's row includes its children's.
fn has_children(v: &Value) -> bool {
    match v {
        Value::Array(items) => !items.is_empty(),
        Value::Object(map) => !map.is_empty(),
        _ => false,
    }
}

struct Profiler<'t> {
    tok: &'t dyn Tokenizer,
    /// Token counts of short texts seen before (keys and small values repeat a lot).
    cache: HashMap<String, u64>,
    paths: HashMap<String, PathStat>,
    order: Vec<String>,
    path: String,
    scratch: String,
}

impl Profiler<'_> {
    fn count(&mut self, text: &str) -> u64 {
        if text.len() > 64 {
            return self.tok.count(text) as u64;
        }
        if let Some(&n) = self.cache.get(text) {
            return n;
        }
        let n = self.tok.count(text) as u64;
        if self.cache.len() < 200_000 {
            self.cache.insert(text.to_owned(), n);
        }
        n
    }

    /// [`Profiler::add`] at the current path (lent out meanwhile, so it is not copied).
    fn add_here(&mut self, tokens: u64, empty: bool, container: bool) {
        let path = std::mem::take(&mut self.path);
        self.add(&path, tokens, empty, container);
        self.path = path;
    }

    fn add(&mut self, path: &str, tokens: u64, empty: bool, container: bool) {
        let s = match self.paths.get_mut(path) {
            Some(s) => s,
            None => {
                self.order.push(path.to_owned());
                self.paths.entry(path.to_owned()).or_insert(PathStat {
                    path: path.to_owned(),
                    kind: PathKind::Leaf,
                    occurrences: 0,
                    tokens: 0,
                    share: 0.0,
                    null_or_empty: 0,
                    null_or_empty_tokens: 0,
                    repeated_tokens: 0,
                })
            }
        };
        s.occurrences += 1;
        s.tokens += tokens;
        if container {
            s.kind = PathKind::Container;
        }
        if empty {
            s.null_or_empty += 1;
            s.null_or_empty_tokens += tokens;
        }
    }

    /// Attributed tokens of `v` as a member `key` (or an array item when `None`).
    fn node(&mut self, v: &Value, key: Option<&str>) -> u64 {
        let key_tokens = match key {
            Some(k) => {
                self.scratch.clear();
                json::write_string(k, &mut self.scratch);
                self.scratch.push(':');
                let text = std::mem::take(&mut self.scratch);
                let n = self.count(&text);
                self.scratch = text;
                n
            }
            None => 0,
        };
        match v {
            Value::Object(map) => {
                let mut sum = key_tokens + 1 + map.len().saturating_sub(1) as u64 + 1;
                let collapse = is_map_like(map);
                for (k, child) in map.iter() {
                    let mark = self.path.len();
                    if collapse {
                        self.path.push_str(".*");
                    } else {
                        push_key(&mut self.path, k);
                    }
                    let t = self.node(child, Some(k));
                    self.add_here(t, child.is_empty_like(), has_children(child));
                    self.path.truncate(mark);
                    sum += t;
                }
                sum
            }
            Value::Array(items) => {
                let mut sum = key_tokens + 1 + items.len().saturating_sub(1) as u64 + 1;
                let mark = self.path.len();
                self.path.push_str("[*]");
                for item in items {
                    let t = self.node(item, None);
                    self.add_here(t, item.is_empty_like(), has_children(item));
                    sum += t;
                }
                self.repeated(items);
                self.path.truncate(mark);
                sum
            }
            scalar => {
                self.scratch.clear();
                json::write_compact(scalar, &mut self.scratch);
                let text = std::mem::take(&mut self.scratch);
                let n = self.count(&text);
                self.scratch = text;
                key_tokens + n
            }
        }
    }

    /// Members equal on every item of an array of objects (2+ items): all but the first
    /// occurrence are repeats. `self.path` ends in `[*]`.
    fn repeated(&mut self, items: &[Value]) {
        if items.len() < 2 {
            return;
        }
        let Some(Value::Object(first)) = items.first() else {
            return;
        };
        for (k, v) in first.iter() {
            let same = items[1..]
                .iter()
                .all(|i| i.as_object().and_then(|o| o.get(k)) == Some(v));
            if !same {
                continue;
            }
            let mut text = String::new();
            json::write_string(k, &mut text);
            text.push(':');
            json::write_compact(v, &mut text);
            let t = self.count(&text) + 1;
            let mark = self.path.len();
            push_key(&mut self.path, k);
            let path = self.path.clone();
            self.path.truncate(mark);
            if let Some(s) = self.paths.get_mut(&path) {
                s.repeated_tokens += t * (items.len() as u64 - 1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regression_stats_rows_added_up_to_more_than_the_total() {
        let text =
            r#"{"items":[{"id":1,"tags":["a","b"],"m":{}},{"id":2,"tags":[],"m":null}],"n":3}"#;
        let v = json::parse(text).unwrap();
        let s = profile(text, &v, crate::tokens::builtin("o200k_base").unwrap());
        let kind = |p: &str| s.paths.iter().find(|x| x.path == p).unwrap().kind;
        for p in ["$", "$.items", "$.items[*]", "$.items[*].tags"] {
            assert_eq!(kind(p), PathKind::Container, "{p}");
        }
        // an empty container holds nothing: a leaf; so are scalars
        for p in ["$.items[*].id", "$.items[*].tags[*]", "$.items[*].m", "$.n"] {
            assert_eq!(kind(p), PathKind::Leaf, "{p}");
        }
        let leaves: u64 = s
            .paths
            .iter()
            .filter(|p| p.kind == PathKind::Leaf)
            .map(|p| p.tokens)
            .sum();
        assert_eq!(s.leaf_tokens, leaves);
        assert_eq!(s.leaf_tokens + s.structure_tokens, s.attributed_tokens);
        let root = s.paths.iter().find(|p| p.path == "$").unwrap();
        assert_eq!(root.tokens, s.attributed_tokens);
        // attributed counts pieces apart: more than the exact count of the whole text
        assert!(s.attributed_tokens > s.tokens as u64, "{s:?}");
    }

    /// A text large enough to be counted on a second core gives the same stats as one
    /// counted on the caller's, through both entry points.
    #[test]
    fn stats_counted_alongside_equal_stats_counted_after() {
        let tok = crate::tokens::builtin("o200k_base").unwrap();
        let item = r#"{"name":"caf\u00e9 \u2615","n":null,"tags":["a","b"],"id":12345}"#;
        let items = vec![item; PARALLEL_BYTES / item.len() + 10];
        let text = format!("{{\"a\":1,\"a\":[{}]}}", items.join(",\n"));
        assert!(text.len() > PARALLEL_BYTES);
        let (tokens, profiled) = profile_text(&text, tok);
        let profiled = profiled.unwrap();
        assert_eq!(tokens, tok.count(&text));
        assert_eq!(profiled.stats.tokens, tokens);
        assert_eq!(profiled.duplicates.len(), 1);
        let alone = walk(&text, &profiled.value, tok);
        let with_value = profile(&text, &profiled.value, tok);
        assert_eq!(with_value.tokens, tokens);
        assert_eq!(
            serde_json::to_value(&Stats { tokens, ..alone }).unwrap(),
            serde_json::to_value(&profiled.stats).unwrap()
        );
        assert_eq!(
            serde_json::to_value(&with_value).unwrap(),
            serde_json::to_value(&profiled.stats).unwrap()
        );
        assert!(profiled.stats.paths.iter().any(|p| p.path == "$"));
        // Not JSON: the count alone.
        let (tokens, profiled) = profile_text("[1,", tok);
        assert_eq!(tokens, tok.count("[1,"));
        assert!(profiled.is_err());
    }
}
