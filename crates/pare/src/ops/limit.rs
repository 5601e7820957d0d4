//! `limit`: keep N items (the first, the last, or the largest or smallest by a field) and count the rest.
//!
//! Why: a model rarely needs item 400 of 500 relationships, and a page that blows a client's
//! token limit is worse than a short one that says what it left out. Which N matter depends on
//! the list: the newest versions of a package are its last ones, the busiest packages the top N
//! by downloads. Maps like npm's `time` (a date per version) can be limited too. The count of
//! the rest goes into a sibling member (`<key>_more`, or `<key>_earlier` when the last N are
//! kept), else into a marker item; cut items are recorded.
//!
//! ```toml
//! [[ops]]
//! op = "limit"
//! at = ["$.rels"]
//! max = 2
//! ```
//!
//! In: `{"rels":[1,2,3,4,5]}`
//! Out: `{"rels":[1,2],"rels_more":3}`
//!
//! ```toml
//! [[ops]]
//! op = "limit"
//! at = ["$.versions"]
//! max = 2
//! keep = "last"
//! ```
//!
//! In: `{"versions":["1.0.0","1.1.0","2.0.0","2.1.0"]}`
//! Out: `{"versions_earlier":2,"versions":["2.0.0","2.1.0"]}`
//!
//! ```toml
//! [[ops]]
//! op = "limit"
//! at = ["$.pkgs"]
//! max = 2
//! keep = "largest"
//! by = "downloads"
//! ```
//!
//! In: `{"pkgs":[{"n":"a","downloads":5},{"n":"b","downloads":90},{"n":"c","downloads":40}]}`
//! Out: `{"pkgs":[{"n":"b","downloads":90},{"n":"c","downloads":40}],"pkgs_more":1}`
//!
//! ```toml
//! [[ops]]
//! op = "limit"
//! at = ["$.time"]
//! max = 2
//! keep = "largest"
//! objects = true
//! ```
//!
//! In: `{"time":{"created":"2010-01-03","1.0.0":"2010-01-03","2.0.0":"2014-05-01","modified":"2024-10-08"}}`
//! Out: `{"time":{"2.0.0":"2014-05-01","modified":"2024-10-08"},"time_more":2}`
//!
//! With `keep = "relevant"`, the N items that best answer the caller's question
//! (`--query`, `pare_query`, a tool's query argument; BM25 over each item's text, see
//! [`crate::relevance`]) stay, in document order, and so do items that look like errors or
//! outliers (the rules are at [`LimitKeep::Relevant`]); without a question, the first N and
//! those. With the question `timeout`:
//!
//! ```toml
//! [[ops]]
//! op = "limit"
//! at = ["$.logs"]
//! max = 1
//! keep = "relevant"
//! ```
//!
//! In: `{"logs":[{"msg":"started"},{"msg":"request timeout"},{"msg":"ok"},{"msg":"disk","level":"error"}]}`
//! Out: `{"logs":[{"msg":"request timeout"},{"msg":"disk","level":"error"}],"logs_more":2}`

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::compile::{CompileCx, Fault, InvalidKind, PolicyError};
use super::{ApplyCx, Op, Sibling};
use crate::manifest::Kind;
use crate::value::Value;

/// Options of `limit`. The kept items stay in their original document order, whichever
/// `keep` chose them. With the array (or map) in an object, the count of the rest goes into a
/// sibling (`more_key`; placed before the array when the last N are kept, after it otherwise);
/// elsewhere an array gets a marker item (`"… N more"` last, or `"… N earlier"` first when
/// the last N are kept) and a map a marker member `"…": "N more"` / `"N earlier"`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LimitSpec {
    /// Levels this op runs at. Default: every level but `full`.
    #[serde(default)]
    pub levels: Option<Vec<String>>,
    /// Selectors of the arrays to limit (and, with `objects = true`, of the objects).
    pub at: Vec<String>,
    /// How many items (or members) to keep.
    pub max: usize,
    /// Which items stay: `first` (the default), `last`, or the `largest` / `smallest` by `by`.
    /// Whatever is chosen keeps its document order.
    #[serde(default)]
    pub keep: LimitKeep,
    /// With `keep = "largest"` or `"smallest"`: the member of object items to rank by.
    /// Default: the item itself (arrays or maps of numbers or strings, like npm's `time`).
    /// Numbers rank by value, strings by code points (so ISO 8601 dates by time). The first
    /// rankable item sets the kind; items without the member, or with another kind there,
    /// rank lowest and are cut first. Ties keep the earlier item.
    #[serde(default)]
    pub by: Option<String>,
    /// Also limit objects used as maps (npm's `time`: a date per version), keeping N of their
    /// members. Default: false (objects are left alone, only arrays are limited).
    #[serde(default)]
    pub objects: bool,
    /// The sibling that holds the count; `{key}` is the array's key. Default: `{key}_more`,
    /// or `{key}_earlier` with `keep = "last"` (the cut items came before the kept ones).
    #[serde(default)]
    pub more_key: Option<String>,
}

/// Which N items `limit` keeps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LimitKeep {
    /// The first N (the default).
    #[default]
    First,
    /// The last N: the newest, in lists that grow at the end.
    Last,
    /// The N that rank highest by `by` (or by the item itself).
    Largest,
    /// The N that rank lowest by `by` (or by the item itself).
    Smallest,
    /// The N that best answer the caller's question (BM25 over each item's string and
    /// number values; ties keep the earlier item), or the first N without a question; and,
    /// besides them, up to N items that look like errors or outliers:
    /// - an error: an object item with a member `error`, `errors`, `exception`, `failure` or
    ///   `fault` that is not empty (`null`, `false`, `""`, `[]`, `{}`), or a member
    ///   `status`, `level`, `severity`, `state`, `outcome` or `result` whose text is `error`,
    ///   `err`, `failed`, `failure`, `fatal`, `critical`, `exception`, `crashed`, `panic`
    ///   or `timeout` (any case), or a member `status`, `status_code` or `code` that is a
    ///   number from 500 to 599;
    /// - an outlier: an object item whose number in a member that at least 8 items have lies
    ///   more than 3.5 robust standard deviations from those items' median (|x − median| >
    ///   3.5 × 1.4826 × the median absolute deviation; a member whose deviation is 0 flags
    ///   nothing).
    Relevant,
}

#[derive(Debug)]
pub(crate) struct Limit {
    at: Vec<usize>,
    max: usize,
    keep: LimitKeep,
    by: Option<String>,
    objects: bool,
    more_key: String,
}

impl LimitSpec {
    pub(crate) fn compile(&self, cx: &mut CompileCx) -> Result<Limit, PolicyError> {
        if self.at.is_empty() {
            return Err(cx.error("at", "name at least one selector"));
        }
        if let (Some(by), LimitKeep::First | LimitKeep::Last) = (&self.by, self.keep) {
            let message = format!(
                "`by = \"{by}\"` ranks items, which only `keep = \"largest\"` or \
                 `\"smallest\"` does; allowed: largest, smallest"
            );
            // Reported at `by`, the key that asks for the ranking; `keep`'s choices that rank.
            let allowed = ["largest", "smallest"];
            let fault = Fault::not_one_of(InvalidKind::BadValue, None, &allowed, message);
            return Err(cx.fault("by", fault));
        }
        if let (Some(by), LimitKeep::Relevant) = (&self.by, self.keep) {
            let message = format!(
                "`by = \"{by}\"` ranks items by a member, but `keep = \"relevant\"` ranks them by \
                 the caller's question; allowed with `by`: largest, smallest"
            );
            let allowed = ["largest", "smallest"];
            let fault = Fault::not_one_of(InvalidKind::BadValue, None, &allowed, message);
            return Err(cx.fault("by", fault));
        }
        let more_key = match (&self.more_key, self.keep) {
            (Some(k), _) => k.clone(),
            (None, LimitKeep::Last) => "{key}_earlier".into(),
            (None, _) => "{key}_more".into(),
        };
        Ok(Limit {
            at: cx.selectors("at", &self.at)?,
            max: self.max,
            keep: self.keep,
            by: self.by.clone(),
            objects: self.objects,
            more_key,
        })
    }
}

impl Op for Limit {
    fn apply(&self, node: &mut Value, cx: &mut ApplyCx<'_, '_>) {
        let len = match node {
            Value::Array(items) => items.len(),
            Value::Object(map) if self.objects => map.len(),
            _ => return,
        };
        if len <= self.max || !cx.matches_any(&self.at) || self.already_limited(node, cx.key) {
            return;
        }
        // Which stay; `relevant` may keep flagged items beyond `max`.
        let kept = match node {
            Value::Array(items) => self.chosen(items.iter(), len, cx.query),
            Value::Object(map) => self.chosen(map.values(), len, cx.query),
            _ => unreachable!("checked above"),
        };
        let more = kept.iter().filter(|k| !**k).count();
        if more == 0 {
            return;
        }
        let word = if self.keep == LimitKeep::Last {
            "earlier"
        } else {
            "more"
        };
        match node {
            Value::Array(items) => {
                let mut i = 0;
                items.retain(|_| {
                    i += 1;
                    kept[i - 1]
                });
                cx.rec.items(Kind::Limited, more as u64);
                if cx.key.is_none() {
                    let marker = Value::from(format!("… {more} {word}"));
                    match self.keep {
                        LimitKeep::Last => items.insert(0, marker),
                        _ => items.push(marker),
                    }
                }
            }
            Value::Object(map) => {
                let mut i = 0;
                map.retain(|_, _| {
                    i += 1;
                    kept[i - 1]
                });
                cx.rec.members(Kind::Limited, more as u64);
                if cx.key.is_none() {
                    let key = map.unique_key(MARKER_KEY);
                    let at = if self.keep == LimitKeep::Last {
                        0
                    } else {
                        map.len()
                    };
                    map.insert_at(at, key, Value::from(format!("{more} {word}")));
                }
            }
            _ => unreachable!("checked above"),
        }
        if let Some(key) = cx.key {
            cx.siblings.push(Sibling {
                before: self.keep == LimitKeep::Last,
                key: self.more_key.replace("{key}", key),
                value: Value::from(more as i64),
            });
        }
    }
}

/// The member that holds the count in a limited map with no parent object to hold a sibling.
const MARKER_KEY: &str = "…";

/// An item's words for relevance: its string and number values, depth first.
fn item_text(v: &Value) -> String {
    fn walk(v: &Value, out: &mut String) {
        match v {
            Value::String(s) => {
                out.push_str(s);
                out.push(' ');
            }
            Value::Number(n) => {
                out.push_str(n.as_str());
                out.push(' ');
            }
            Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
            Value::Object(map) => map.values().for_each(|i| walk(i, out)),
            _ => {}
        }
    }
    let mut out = String::new();
    walk(v, &mut out);
    out
}

const ERROR_MEMBERS: [&str; 5] = ["error", "errors", "exception", "failure", "fault"];
const STATUS_MEMBERS: [&str; 6] = ["status", "level", "severity", "state", "outcome", "result"];
const ERROR_WORDS: [&str; 10] = [
    "error",
    "err",
    "failed",
    "failure",
    "fatal",
    "critical",
    "exception",
    "crashed",
    "panic",
    "timeout",
];
const CODE_MEMBERS: [&str; 3] = ["status", "status_code", "code"];

/// Items that look like errors or outliers ([`LimitKeep::Relevant`]'s rules).
fn flagged(items: &[&Value]) -> Vec<bool> {
    let mut out: Vec<bool> = items.iter().map(|v| looks_like_error(v)).collect();
    // Outliers, member by member, over the items that have a number there.
    let mut numbers: Vec<(&str, Vec<(usize, f64)>)> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Some(map) = item.as_object() else {
            continue;
        };
        for (k, v) in map.iter() {
            let Some(x) = v.as_f64() else { continue };
            match numbers.iter_mut().find(|(name, _)| *name == k.as_str()) {
                Some((_, xs)) => xs.push((i, x)),
                None => numbers.push((k.as_str(), vec![(i, x)])),
            }
        }
    }
    for (_, xs) in numbers.iter().filter(|(_, xs)| xs.len() >= 8) {
        let median = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            let n = v.len();
            if n % 2 == 1 {
                v[n / 2]
            } else {
                (v[n / 2 - 1] + v[n / 2]) / 2.0
            }
        };
        let m = median(xs.iter().map(|(_, x)| *x).collect());
        let mad = median(xs.iter().map(|(_, x)| (x - m).abs()).collect());
        if mad == 0.0 {
            continue;
        }
        for (i, x) in xs {
            if (x - m).abs() > 3.5 * 1.4826 * mad {
                out[*i] = true;
            }
        }
    }
    out
}

fn looks_like_error(item: &Value) -> bool {
    let Some(map) = item.as_object() else {
        return false;
    };
    map.iter().any(|(k, v)| {
        let k = k.as_str().to_ascii_lowercase();
        let filled = match v {
            Value::Null | Value::Bool(false) => false,
            Value::String(s) => !s.is_empty(),
            Value::Array(a) => !a.is_empty(),
            Value::Object(o) => !o.is_empty(),
            _ => true,
        };
        (ERROR_MEMBERS.contains(&k.as_str()) && filled)
            || (STATUS_MEMBERS.contains(&k.as_str())
                && v.as_str()
                    .is_some_and(|s| ERROR_WORDS.contains(&s.to_ascii_lowercase().as_str())))
            || (CODE_MEMBERS.contains(&k.as_str())
                && v.as_f64().is_some_and(|x| (500.0..600.0).contains(&x)))
    })
}

/// How an item ranks for `largest` / `smallest`.
#[derive(Clone, Copy, PartialEq)]
enum Rank<'v> {
    Number(f64),
    Text(&'v str),
    /// Nothing to rank by: cut first either way.
    Unranked,
}

impl Limit {
    /// Already limited (a marker of an earlier run): shaping is idempotent. With a parent
    /// object the count went to a sibling and the node is within `max` already.
    fn already_limited(&self, node: &Value, key: Option<&str>) -> bool {
        if key.is_some() {
            return false;
        }
        let word = if self.keep == LimitKeep::Last {
            " earlier"
        } else {
            " more"
        };
        let count_then = |s: &str, prefix: &str| {
            s.strip_prefix(prefix)
                .and_then(|r| r.strip_suffix(word))
                .is_some_and(|n| n.parse::<usize>().is_ok())
        };
        match node {
            Value::Array(items) if items.len() == self.max + 1 => {
                let marker = match self.keep {
                    LimitKeep::Last => items.first(),
                    _ => items.last(),
                };
                marker
                    .and_then(Value::as_str)
                    .is_some_and(|s| count_then(s, "… "))
            }
            Value::Object(map) if map.len() == self.max + 1 => map
                .get(MARKER_KEY)
                .and_then(Value::as_str)
                .is_some_and(|s| count_then(s, "")),
            _ => false,
        }
    }

    /// Which of the `len` items stay (`max` of them, and with `relevant` the flagged ones),
    /// by position.
    fn chosen<'v>(
        &self,
        items: impl Iterator<Item = &'v Value>,
        len: usize,
        query: Option<&str>,
    ) -> Vec<bool> {
        let mut kept = vec![false; len];
        match self.keep {
            LimitKeep::Relevant => {
                let items: Vec<&Value> = items.collect();
                match query {
                    Some(q) => {
                        let texts: Vec<String> = items.iter().map(|v| item_text(v)).collect();
                        let scores = crate::relevance::Relevance::score(q, &texts).scores;
                        let mut order: Vec<usize> = (0..len).collect();
                        // Stable: ties keep document order.
                        order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
                        for &i in &order[..self.max] {
                            kept[i] = true;
                        }
                    }
                    None => kept[..self.max].fill(true),
                }
                let flagged = flagged(&items);
                let extra: Vec<usize> = (0..len)
                    .filter(|&i| flagged[i] && !kept[i])
                    .take(self.max)
                    .collect();
                for i in extra {
                    kept[i] = true;
                }
            }
            LimitKeep::First => kept[..self.max].fill(true),
            LimitKeep::Last => kept[len - self.max..].fill(true),
            LimitKeep::Largest | LimitKeep::Smallest => {
                let ranks = self.ranks(items);
                let mut order: Vec<usize> = (0..len).collect();
                let largest = self.keep == LimitKeep::Largest;
                // Stable: ties keep document order.
                order.sort_by(|&a, &b| {
                    let ord = match (ranks[a], ranks[b]) {
                        (Rank::Number(x), Rank::Number(y)) => x.total_cmp(&y),
                        (Rank::Text(x), Rank::Text(y)) => x.cmp(y),
                        (Rank::Unranked, Rank::Unranked) => return std::cmp::Ordering::Equal,
                        (Rank::Unranked, _) => return std::cmp::Ordering::Greater,
                        (_, Rank::Unranked) => return std::cmp::Ordering::Less,
                        _ => unreachable!("one kind is ranked"),
                    };
                    if largest { ord.reverse() } else { ord }
                });
                for &i in &order[..self.max] {
                    kept[i] = true;
                }
            }
        }
        kept
    }

    /// Each item's rank; the first rankable one sets the kind, the other kind is unranked.
    fn ranks<'v>(&self, items: impl Iterator<Item = &'v Value>) -> Vec<Rank<'v>> {
        let mut ranks: Vec<Rank> = items
            .map(|item| {
                let v = match &self.by {
                    Some(by) => item.as_object().and_then(|o| o.get(by)),
                    None => Some(item),
                };
                match v {
                    Some(Value::Number(n)) => n.as_f64().map_or(Rank::Unranked, Rank::Number),
                    Some(Value::String(s)) => Rank::Text(s),
                    _ => Rank::Unranked,
                }
            })
            .collect();
        let numbers = ranks
            .iter()
            .find(|r| **r != Rank::Unranked)
            .is_some_and(|r| matches!(r, Rank::Number(_)));
        for r in &mut ranks {
            if matches!(r, Rank::Number(_)) != numbers {
                *r = Rank::Unranked;
            }
        }
        ranks
    }
}

#[cfg(test)]
mod tests {
    use crate::policy::Policy;
    use crate::value::Value;
    use proptest::prelude::*;

    use crate::ops::test_support::run;

    fn error(policy: &str) -> (String, String) {
        match Policy::parse(policy).unwrap_err() {
            crate::ops::compile::PolicyError::Invalid { key, message, .. } => (key, message),
            other => panic!("{other}"),
        }
    }

    #[test]
    fn bad_options_name_key_value_and_allowed_values() {
        let base = "[[ops]]\nop = \"limit\"\nat = [\"$.a\"]\nmax = 2\n";
        let (key, message) = error(&format!("{base}keep = \"newest\"\n"));
        assert_eq!(key, "ops[0].keep");
        assert_eq!(
            message,
            "unknown variant `newest`, expected one of `first`, `last`, `largest`, `smallest`, `relevant`"
        );
        let (key, message) = error(&format!("{base}keep = \"last\"\nby = \"downloads\"\n"));
        assert_eq!(key, "ops[0].by");
        assert_eq!(
            message,
            "`by = \"downloads\"` ranks items, which only `keep = \"largest\"` or \
             `\"smallest\"` does; allowed: largest, smallest"
        );
        let (key, _) = error(&format!("{base}by = \"d\"\n"));
        assert_eq!(key, "ops[0].by");
        let (key, message) = error(&format!("{base}objects = \"yes\"\n"));
        assert_eq!(
            (key.as_str(), message.as_str()),
            (
                "ops[0].objects",
                "invalid type: string \"yes\", expected a boolean"
            )
        );
    }

    #[test]
    fn cut_items_and_members_are_recorded() {
        let policy = "[[ops]]\nop = \"limit\"\nat = [\"$.v\", \"$.time\", \"$.l[*]\"]\nmax = 1\n\
                      keep = \"last\"\nobjects = true\n";
        let (out, manifest) = run(
            policy,
            r#"{"v":[1,2,3,4],"time":{"a":1,"b":2,"c":3},"l":[{"x":1,"y":2}]}"#,
        );
        assert_eq!(
            out,
            r#"{"v_earlier":3,"v":[4],"time_earlier":2,"time":{"c":3},"l":[{"…":"1 earlier","y":2}]}"#
        );
        assert_eq!(
            manifest,
            [
                "limit limited $.l[*].* 1",
                "limit limited $.time.* 2",
                "limit limited $.v[*] 3"
            ]
        );
    }

    #[test]
    fn more_key_applies_to_every_keep() {
        let (out, _) = run(
            "[[ops]]\nop = \"limit\"\nat = [\"$.v\"]\nmax = 1\nkeep = \"last\"\nmore_key = \"{key}_cut\"\n",
            r#"{"v":[1,2,3]}"#,
        );
        assert_eq!(out, r#"{"v_cut":2,"v":[3]}"#);
    }

    fn keep_of(i: u8) -> &'static str {
        ["first", "last", "largest", "smallest"][usize::from(i % 4)]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Whatever is kept: `min(len, max)` items, in document order, a count of the rest,
        /// and for `largest`/`smallest` no cut item ranks above a kept one.
        #[test]
        fn keeps_max_items_in_order_and_counts_the_rest(
            items in prop::collection::vec(-5i64..5, 0..12),
            max in 0usize..6,
            keep in any::<u8>(),
        ) {
            let keep = keep_of(keep);
            let input = format!("{{\"a\":{items:?}}}").replace(' ', "");
            let policy = format!(
                "[[ops]]\nop = \"limit\"\nat = [\"$.a\"]\nmax = {max}\nkeep = \"{keep}\"\n"
            );
            let (out, _) = run(&policy, &input);
            let out = crate::json::parse(&out).unwrap();
            let map = out.as_object().unwrap();
            let kept: Vec<i64> = map.get("a").unwrap().as_array().unwrap()
                .iter().map(|v| v.as_f64().unwrap() as i64).collect();
            prop_assert_eq!(kept.len(), items.len().min(max));
            let count_key = if keep == "last" { "a_earlier" } else { "a_more" };
            let count = map.get(count_key).and_then(Value::as_f64).map_or(0, |n| n as usize);
            prop_assert_eq!(count, items.len() - kept.len());
            // A subsequence of the input: document order kept.
            let mut rest = items.iter();
            prop_assert!(kept.iter().all(|k| rest.any(|i| i == k)));
            let mut sorted = items.clone();
            sorted.sort();
            match keep {
                "first" => prop_assert_eq!(&kept[..], &items[..kept.len()]),
                "last" => prop_assert_eq!(&kept[..], &items[items.len() - kept.len()..]),
                "largest" => {
                    let mut k = kept.clone();
                    k.sort();
                    prop_assert_eq!(&k[..], &sorted[sorted.len() - kept.len()..]);
                }
                _ => {
                    let mut k = kept.clone();
                    k.sort();
                    prop_assert_eq!(&k[..], &sorted[..kept.len()]);
                }
            }
        }
    }
}

#[cfg(test)]
mod relevant_tests {
    use crate::policy::Policy;
    use crate::shape::{ShapeOptions, shape};

    fn run(policy: &str, input: &str, query: Option<&str>) -> String {
        let policy = Policy::parse(policy).unwrap();
        let opts = ShapeOptions {
            query,
            ..ShapeOptions::new(&policy)
        };
        crate::json::to_compact(&shape(crate::json::parse(input).unwrap(), &policy, &opts).value)
    }

    const LOGS: &str = "[[ops]]\nop = \"limit\"\nat = [\"$.logs\"]\nmax = 1\nkeep = \"relevant\"\n";

    #[test]
    fn the_doc_example_keeps_the_answer_and_the_error_in_document_order() {
        let input = r#"{"logs":[{"msg":"started"},{"msg":"request timeout"},{"msg":"ok"},{"msg":"disk","level":"error"}]}"#;
        assert_eq!(
            run(LOGS, input, Some("timeout")),
            r#"{"logs":[{"msg":"request timeout"},{"msg":"disk","level":"error"}],"logs_more":2}"#
        );
        // Without a question: the first N, and the error still.
        assert_eq!(
            run(LOGS, input, None),
            r#"{"logs":[{"msg":"started"},{"msg":"disk","level":"error"}],"logs_more":2}"#
        );
    }

    #[test]
    fn errors_by_member_status_word_and_5xx_code() {
        let input = r#"{"logs":[{"m":"a"},{"m":"b","error":null},{"m":"c","error":{"why":"x"}},{"m":"d","status":"FAILED"},{"m":"e","status_code":503},{"m":"f","status_code":404}]}"#;
        let policy = LOGS.replace("max = 1", "max = 3");
        assert_eq!(
            run(&policy, input, None),
            r#"{"logs":[{"m":"a"},{"m":"b","error":null},{"m":"c","error":{"why":"x"}},{"m":"d","status":"FAILED"},{"m":"e","status_code":503}],"logs_more":1}"#
        );
    }

    #[test]
    fn an_outlier_is_kept_and_a_flat_member_flags_nothing() {
        let mut items: Vec<String> = (0..10)
            .map(|i| format!(r#"{{"i":{i},"ms":{},"same":1}}"#, 100 + i))
            .collect();
        items[7] = r#"{"i":7,"ms":9000,"same":1}"#.into();
        let input = format!(r#"{{"logs":[{}]}}"#, items.join(","));
        let out = run(LOGS, &input, None);
        assert_eq!(
            out,
            r#"{"logs":[{"i":0,"ms":100,"same":1},{"i":7,"ms":9000,"same":1}],"logs_more":8}"#
        );
    }

    #[test]
    fn flagged_items_beyond_max_are_capped_at_max_and_a_second_run_changes_nothing() {
        let items: Vec<String> = (0..6)
            .map(|i| format!(r#"{{"i":{i},"level":"error"}}"#))
            .collect();
        let input = format!(r#"{{"logs":[{}]}}"#, items.join(","));
        let policy = LOGS.replace("max = 1", "max = 2");
        let once = run(&policy, &input, Some("nothing matches"));
        assert_eq!(
            once,
            r#"{"logs":[{"i":0,"level":"error"},{"i":1,"level":"error"},{"i":2,"level":"error"},{"i":3,"level":"error"}],"logs_more":2}"#
        );
        let twice = run(&policy, &once, Some("nothing matches"));
        assert!(twice.starts_with(r#"{"logs":[{"i":0,"level":"error"},{"i":1,"level":"error"},{"i":2,"level":"error"},{"i":3,"level":"error"}]"#), "{twice}");
    }

    #[test]
    fn by_with_relevant_is_refused_naming_the_key() {
        let err = Policy::parse(&format!("{LOGS}by = \"x\"\n"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("ops[0].by") && err.contains("ranks them by the caller's question"),
            "{err}"
        );
    }
}
