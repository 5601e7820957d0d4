//! `pare stats`: where a payload's tokens go.
//!
//! The total is exact: the tokens of the input text as given. Below it, tokens are
//! *attributed* to paths (array indices collapsed to `[*]`): every scalar member is counted
//! alone as `"key":value`, a container adds its own key and brackets to its members' sum. Per
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
    pub path: String,
    pub occurrences: u64,
    /// Attributed tokens (see the module docs).
    pub tokens: u64,
    /// Share of the attributed total, in percent.
    pub share: f64,
    /// Occurrences whose value is `null`, `""`, `[]` or `{}`.
    pub null_or_empty: u64,
    pub null_or_empty_tokens: u64,
    /// Tokens spent repeating a value that is the same on every item of its array
    /// (all but the first occurrence).
    pub repeated_tokens: u64,
}

/// The profile of one payload.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Stats {
    pub tokenizer: String,
    /// Exact tokens of the input text as given.
    pub tokens: usize,
    pub bytes: usize,
    /// Sum of attributed tokens (what shares are of).
    pub attributed_tokens: u64,
    pub null_or_empty_tokens: u64,
    pub repeated_tokens: u64,
    /// (null/empty + repeated) / attributed, in percent.
    pub waste_share: f64,
    /// Paths by attributed tokens, most first.
    pub paths: Vec<PathStat>,
}

/// Profile `value`, parsed from `text`, with `tok`.
pub fn profile(text: &str, value: &Value, tok: &dyn Tokenizer) -> Stats {
    let mut p = Profiler {
        tok,
        cache: HashMap::new(),
        paths: HashMap::new(),
        order: Vec::new(),
        path: String::from("$"),
        scratch: String::new(),
    };
    let total = p.node(value, None);
    p.add("$", total, value.is_empty_like());
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
    Stats {
        tokenizer: tok.name().to_owned(),
        tokens: tok.count(text),
        bytes: text.len(),
        attributed_tokens: attributed,
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

    fn add(&mut self, path: &str, tokens: u64, empty: bool) {
        let s = match self.paths.get_mut(path) {
            Some(s) => s,
            None => {
                self.order.push(path.to_owned());
                self.paths.entry(path.to_owned()).or_insert(PathStat {
                    path: path.to_owned(),
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
                    let path = self.path.clone();
                    self.add(&path, t, child.is_empty_like());
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
                    let path = self.path.clone();
                    self.add(&path, t, item.is_empty_like());
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
