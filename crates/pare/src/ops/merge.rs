//! `merge`: fold consecutive array items with equal keys and small gaps into blocks that say nothing false.
//!
//! Why: an activity log split into "VS Code 09:00–09:10", "VS Code 09:11–09:20" makes the
//! model re-merge what the server could have merged (here within `maxGapMinutes`, 2.0). A
//! block starts at its first item's start, ends at the latest end, and its `duration` is the
//! wall-clock span (gaps included). Every other field follows a rule: `split_on` fields must
//! be equal to merge (an idle break is not work), `collect` fields become the list of their
//! distinct values when the items differ, `sum` fields add up, and `first` / `coalesce`
//! fields keep one value — the only lossy rules, so each differing value they leave out is
//! counted (kind `collapsed`). Fields no rule names follow `others` (default `collect`).
//! Items whose times do not parse or end before they start are never merged, nor is an item
//! that starts before its block does. Folded items are recorded.
//!
//! ```toml
//! [[ops]]
//! op = "merge"
//! at = ["$.segments"]
//! key = ["app"]
//! start = "start"
//! end = "end"
//! max_gap_minutes = 2.0
//! duration = "minutes"
//! split_on = ["idle"]
//! coalesce = ["shot"]
//! ```
//!
//! In: `{"segments":[{"app":"VS Code","start":"2026-02-17T09:00:00Z","end":"2026-02-17T09:10:00Z","idle":false,"project":"api","shot":null},{"app":"VS Code","start":"2026-02-17T09:11:00Z","end":"2026-02-17T09:20:00Z","idle":false,"project":"web","shot":"s1"},{"app":"VS Code","start":"2026-02-17T09:20:00Z","end":"2026-02-17T09:30:00Z","idle":true}]}`
//! Out: `{"segments":[{"app":"VS Code","start":"2026-02-17T09:00:00Z","end":"2026-02-17T09:20:00Z","idle":false,"project":["api","web"],"shot":"s1","minutes":20.0},{"app":"VS Code","start":"2026-02-17T09:20:00Z","end":"2026-02-17T09:30:00Z","idle":true}]}`

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::compile::{CompileCx, PolicyError};
use super::{ApplyCx, Op};
use crate::manifest::Kind;
use crate::params::NumberOrParam;
use crate::params::ParamNumber;
use crate::timestamp::parse_timestamp;
use crate::value::{Map, Number, Value};

/// Options of `merge`. Only consecutive items merge; items with unreadable times never do.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MergeSpec {
    /// Levels this op runs at. Default: every level but `full`.
    #[serde(default)]
    pub levels: Option<Vec<String>>,
    /// Selectors of the arrays whose items merge.
    pub at: Vec<String>,
    /// Fields (dotted paths) every item must have, equal, for neighbours to merge.
    pub key: Vec<String>,
    /// The start-time field (ISO 8601, e.g. `2026-02-17T09:00:00Z`).
    pub start: String,
    /// The end-time field.
    pub end: String,
    /// The largest gap, in minutes, that still merges. A number or `"$param"`. Default: 2.
    #[serde(default = "default_gap")]
    pub max_gap_minutes: NumberOrParam,
    /// A field set to the block's wall-clock span in minutes. Default: none.
    #[serde(default)]
    pub duration: Option<String>,
    /// Fields that must also be equal for neighbours to merge (absent from both counts as
    /// equal): a change (`isIdle`, a status) starts a new block.
    #[serde(default)]
    pub split_on: Vec<String>,
    /// Fields whose distinct values are collected: a value every item has, equal, stays as it
    /// is; otherwise the field becomes the list of the distinct non-null values, first seen
    /// first (of their distinct elements, when every value is a list).
    #[serde(default)]
    pub collect: Vec<String>,
    /// Number fields summed over the block, exactly (in decimal, with the most decimals any
    /// item had). An item whose field holds something else than a number or null is not
    /// merged; a sum that cannot be written exactly (an exponent, past 38 digits) leaves the
    /// field out, its values counted (kind `collapsed`).
    #[serde(default)]
    pub sum: Vec<String>,
    /// Fields that keep the first item's value. Lossy: every later value that differed is
    /// counted (kind `collapsed`).
    #[serde(default)]
    pub first: Vec<String>,
    /// Fields that take the first non-null value in the block. Lossy: every other non-null
    /// value that differed is counted (kind `collapsed`).
    #[serde(default)]
    pub coalesce: Vec<String>,
    /// The rule for top-level fields no option names: `collect` (the default), `split` or
    /// `first`. A member holding a named dotted field (`refs` for `refs.shot`) must otherwise
    /// be equal.
    #[serde(default)]
    pub others: MergeOthers,
}

/// What `merge` does with fields no option names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MergeOthers {
    /// Differing values become the list of distinct values (true, and merges as keyed).
    #[default]
    Collect,
    /// Differing values split the block (true, and merges less).
    Split,
    /// The first item's value stays, the rest are counted (lossy).
    First,
}

fn default_gap() -> NumberOrParam {
    NumberOrParam::Number(2.0)
}

/// A field's rule inside a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    Split,
    Collect,
    Sum,
    First,
    Coalesce,
}

#[derive(Debug)]
pub(crate) struct Merge {
    at: Vec<usize>,
    key: Vec<String>,
    start: String,
    end: String,
    max_gap: ParamNumber,
    duration: Option<String>,
    /// Named fields and their rules, in option order.
    rules: Vec<(String, Rule)>,
    others: Rule,
    /// Every dotted path an option names (key, times, duration, rules): `others` skips them,
    /// and a member they go inside must otherwise be equal.
    named: Vec<String>,
}

impl MergeSpec {
    pub(crate) fn compile(&self, cx: &mut CompileCx) -> Result<Merge, PolicyError> {
        if self.at.is_empty() {
            return Err(cx.error("at", "name at least one selector"));
        }
        if self.key.is_empty() {
            return Err(cx.error("key", "name at least one field"));
        }
        let mut named: Vec<(String, &str)> = Vec::new();
        let fixed = [("start", &self.start), ("end", &self.end)];
        let fixed = fixed
            .into_iter()
            .chain(self.duration.iter().map(|d| ("duration", d)));
        let lists: [(&str, &Vec<String>, Option<Rule>); 6] = [
            ("key", &self.key, None),
            ("split_on", &self.split_on, Some(Rule::Split)),
            ("collect", &self.collect, Some(Rule::Collect)),
            ("sum", &self.sum, Some(Rule::Sum)),
            ("first", &self.first, Some(Rule::First)),
            ("coalesce", &self.coalesce, Some(Rule::Coalesce)),
        ];
        let mut rules = Vec::new();
        let singles = fixed.map(|(opt, f)| (opt, f, None));
        let each = lists
            .iter()
            .flat_map(|(opt, fs, r)| fs.iter().map(move |f| (*opt, f, *r)));
        for (opt, field, rule) in singles.chain(each) {
            cx.dotted(opt, field)?;
            if let Some((_, other)) = named.iter().find(|(f, _)| f == field) {
                return Err(cx.error(
                    opt,
                    format!("`{field}` is already named by `{other}`; give each field one rule"),
                ));
            }
            named.push((field.clone(), opt));
            if let Some(rule) = rule {
                rules.push((field.clone(), rule));
            }
        }
        Ok(Merge {
            at: cx.selectors("at", &self.at)?,
            key: self.key.clone(),
            start: self.start.clone(),
            end: self.end.clone(),
            max_gap: cx.number("max_gap_minutes", &self.max_gap_minutes)?,
            duration: self.duration.clone(),
            rules,
            others: match self.others {
                MergeOthers::Collect => Rule::Collect,
                MergeOthers::Split => Rule::Split,
                MergeOthers::First => Rule::First,
            },
            named: named.into_iter().map(|(f, _)| f).collect(),
        })
    }
}

/// An item's times, in seconds.
struct Times {
    start: f64,
    end: f64,
}

/// How a top-level member is treated when no rule names it.
enum Unnamed<'m> {
    /// Named, or outside any object: nothing to do.
    Named,
    /// Holds named dotted paths (these, relative to it): the rest must be equal.
    Container(Vec<&'m str>),
    /// Follows `others`.
    Other,
}

impl Merge {
    /// An item's times; `None` (never merged) when they do not parse or end before they
    /// start.
    fn times(&self, item: &Value) -> Option<Times> {
        let start = parse_timestamp(item.pointer_dotted(&self.start)?.as_str()?)?;
        let end = parse_timestamp(item.pointer_dotted(&self.end)?.as_str()?)?;
        (end >= start).then_some(Times { start, end })
    }

    fn unnamed(&self, member: &str) -> Unnamed<'_> {
        let mut inner = Vec::new();
        for path in &self.named {
            if path == member {
                return Unnamed::Named;
            }
            if let Some(rest) = path.strip_prefix(member).and_then(|r| r.strip_prefix('.')) {
                inner.push(rest);
            }
        }
        if inner.is_empty() {
            Unnamed::Other
        } else {
            Unnamed::Container(inner)
        }
    }

    /// Whether `item` may join the block whose last item is `prev`.
    fn may_join(&self, prev: &Value, item: &Value) -> bool {
        let keyed = self.key.iter().all(|k| {
            let (x, y) = (prev.pointer_dotted(k), item.pointer_dotted(k));
            x.is_some() && x == y
        });
        if !keyed {
            return false;
        }
        for (field, rule) in &self.rules {
            let (x, y) = (prev.pointer_dotted(field), item.pointer_dotted(field));
            let ok = match rule {
                Rule::Split => non_null(x) == non_null(y),
                Rule::Sum => summable(x) && summable(y),
                _ => true,
            };
            if !ok {
                return false;
            }
        }
        let (Some(a), Some(b)) = (prev.as_object(), item.as_object()) else {
            return true;
        };
        members_of(&[a, b])
            .into_iter()
            .all(|m| match self.unnamed(m) {
                Unnamed::Named => true,
                Unnamed::Container(inner) => without(a.get(m), &inner) == without(b.get(m), &inner),
                Unnamed::Other => {
                    self.others != Rule::Split || non_null(a.get(m)) == non_null(b.get(m))
                }
            })
    }

    /// Fold `block` (≥ 2 items) into one item; `collapsed` gets (field, count) of the values
    /// a lossy rule left out.
    fn fold(&self, block: Vec<(Value, Times)>, collapsed: &mut Vec<(String, u64)>) -> Value {
        let start = block[0].1.start;
        let (last_idx, end) = block
            .iter()
            .enumerate()
            .map(|(i, (_, t))| (i, t.end))
            .fold((0, f64::MIN), |acc, x| if x.1 > acc.1 { x } else { acc });
        let end_value = block[last_idx].0.pointer_dotted(&self.end).cloned();
        let items: Vec<Value> = block.into_iter().map(|(v, _)| v).collect();
        let decimals = self
            .duration
            .as_deref()
            .map(|d| max_decimals(&items, d).unwrap_or(1));
        let mut plan: Vec<(String, Rule)> = self.rules.clone();
        let maps: Vec<&Map> = items.iter().filter_map(Value::as_object).collect();
        for m in members_of(&maps) {
            if matches!(self.unnamed(m), Unnamed::Other) {
                plan.push((m.to_owned(), self.others));
            }
        }
        let mut out = items[0].clone();
        let Value::Object(map) = &mut out else {
            return out;
        };
        if let Some(end_value) = end_value {
            map.set_dotted(&self.end, end_value);
        }
        if let (Some(field), Some(decimals)) = (&self.duration, decimals)
            && let Some(n) = Number::from_f64_fixed((end - start) / 60.0, decimals)
        {
            map.set_dotted(field, Value::Number(n));
        }
        for (field, rule) in plan {
            let values: Vec<Option<&Value>> =
                items.iter().map(|v| v.pointer_dotted(&field)).collect();
            let (value, lost) = match rule {
                Rule::Split => continue,
                Rule::Collect => (collected(&values), 0),
                Rule::Sum => match summed(&values) {
                    None => (None, 0),
                    Some(Some(sum)) => (Some(sum), 0),
                    Some(None) => {
                        // No exact sum to write: the field goes, and every value is counted.
                        map.remove_dotted(&field);
                        let n = values.iter().filter(|v| non_null(**v).is_some()).count();
                        (None, n)
                    }
                },
                Rule::First => {
                    let lost = values[1..].iter().filter(|v| **v != values[0]).count();
                    (None, lost)
                }
                Rule::Coalesce => {
                    let chosen = values.iter().find_map(|v| non_null(*v));
                    let others = values.iter().filter_map(|v| non_null(*v));
                    let lost = others.filter(|v| Some(*v) != chosen).count();
                    (
                        chosen.filter(|_| non_null(values[0]).is_none()).cloned(),
                        lost,
                    )
                }
            };
            if lost > 0 {
                collapsed.push((field.clone(), lost as u64));
            }
            let Some(value) = value else { continue };
            let donor = values.iter().position(Option::is_some).unwrap_or(0);
            if !put(map, &field, value, items[donor].as_object()) {
                // No object to hold it in the first item (a dotted path whose parent is
                // missing there): the values are left out, so say so.
                let lost = values.iter().filter(|v| non_null(**v).is_some()).count();
                collapsed.push((field, lost as u64));
            }
        }
        out
    }
}

impl Op for Merge {
    fn apply(&self, node: &mut Value, cx: &mut ApplyCx<'_, '_>) {
        let Value::Array(items) = node else { return };
        if items.len() < 2 || !cx.matches_any(&self.at) {
            return;
        }
        let max_gap_secs = self.max_gap.resolve(cx.params) * 60.0;
        if max_gap_secs.is_nan() {
            return;
        }
        let before = items.len();
        let mut out: Vec<Value> = Vec::with_capacity(items.len());
        let mut block: Vec<(Value, Times)> = Vec::new();
        let mut collapsed: Vec<(String, u64)> = Vec::new();
        // The block's latest end so far (kept as items join: recomputing it per item made a
        // long block quadratic).
        let mut block_end = f64::MIN;
        let mut flush = |block: &mut Vec<(Value, Times)>, out: &mut Vec<Value>| match block.len() {
            0 => {}
            1 => out.push(block.pop().expect("one item").0),
            _ => out.push(self.fold(std::mem::take(block), &mut collapsed)),
        };
        for item in std::mem::take(items) {
            let Some(times) = self.times(&item) else {
                flush(&mut block, &mut out);
                out.push(item);
                continue;
            };
            // An item that starts before its block is out of order: a block holding it would
            // start after some of its own activity. Compared with the block's start, not the
            // last item's: a merged block must merge again as it did (shaping is idempotent).
            let joins = match (block.first(), block.last()) {
                (Some((_, first)), Some((prev, _))) => {
                    times.start >= first.start
                        && times.start - block_end <= max_gap_secs
                        && self.may_join(prev, &item)
                }
                _ => false,
            };
            if !joins {
                flush(&mut block, &mut out);
                block_end = f64::MIN;
            }
            block_end = block_end.max(times.end);
            block.push((item, times));
        }
        flush(&mut block, &mut out);
        cx.rec.items(Kind::Merged, (before - out.len()) as u64);
        let mark = cx.rec.enter_index();
        for (field, n) in collapsed {
            let (parents, last) = match field.rsplit_once('.') {
                Some((p, l)) => (Some(p), l),
                None => (None, field.as_str()),
            };
            let marks: Vec<usize> = parents
                .into_iter()
                .flat_map(|p| p.split('.'))
                .map(|p| cx.rec.enter_key(p))
                .collect();
            cx.rec.key(Kind::Collapsed, last, n);
            if let Some(&m) = marks.first() {
                cx.rec.leave(m);
            }
        }
        cx.rec.leave(mark);
        *items = out;
    }
}

fn non_null(v: Option<&Value>) -> Option<&Value> {
    v.filter(|v| !matches!(v, Value::Null))
}

fn summable(v: Option<&Value>) -> bool {
    matches!(v, None | Some(Value::Null | Value::Number(_)))
}

/// The top-level member names of `maps`, first seen first.
fn members_of<'m>(maps: &[&'m Map]) -> Vec<&'m str> {
    let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut names: Vec<&str> = Vec::new();
    for map in maps {
        for k in map.keys() {
            if seen.insert(k) {
                names.push(k);
            }
        }
    }
    names
}

/// `v` without the dotted paths `inner` (for comparing what is left of a member).
fn without(v: Option<&Value>, inner: &[&str]) -> Option<Value> {
    let mut v = v?.clone();
    if let Value::Object(map) = &mut v {
        for path in inner {
            map.remove_dotted(path);
        }
    }
    Some(v)
}

/// A `collect` field's block value: `None` when the first item's value already says it all
/// (every item has it, equal; or no item has a non-null value). When every value is a list,
/// the block's list is their distinct elements.
fn collected(values: &[Option<&Value>]) -> Option<Value> {
    let first = non_null(values[0]);
    if first.is_some() && values.iter().all(|v| non_null(*v) == first) {
        return None;
    }
    let present = || values.iter().filter_map(|v| non_null(*v));
    // Lists (tags) collect their elements: the block's tags, not a list of tag lists.
    let elements: Box<dyn Iterator<Item = &Value>> = if present().all(|v| v.as_array().is_some()) {
        Box::new(present().flat_map(|v| v.as_array().into_iter().flatten()))
    } else {
        Box::new(present())
    };
    // Compared by their compact text (equal values, equal text), so a long block of
    // distinct values costs a hash each, not a scan of the list.
    let mut seen = std::collections::HashSet::new();
    let mut distinct: Vec<Value> = Vec::new();
    for v in elements {
        if seen.insert(crate::json::to_compact(v)) {
            distinct.push(v.clone());
        }
    }
    // Lists that are all empty collect to `[]`: no item had an element, which is true.
    present().next().map(|_| Value::Array(distinct))
}

/// A `sum` field's block value: `None` when no item has a number there; `Some(None)` when
/// the sum cannot be written exactly (an exponent, more digits than 38), so the block must not
/// carry the field.
fn summed(values: &[Option<&Value>]) -> Option<Option<Value>> {
    let numbers: Vec<&str> = values
        .iter()
        .filter_map(|v| match v {
            Some(Value::Number(n)) => Some(n.as_str()),
            _ => None,
        })
        .collect();
    if numbers.is_empty() {
        return None;
    }
    Some(
        exact_sum(&numbers)
            .and_then(|s| Number::from_lexeme(&s))
            .map(Value::Number),
    )
}

/// The exact sum of plain decimal lexemes (`-12.50`), with the most decimals any had (an f64
/// sum would write false digits past 2^53 or 17 significant digits); `None` for an exponent
/// or a sum past 38 digits.
fn exact_sum(numbers: &[&str]) -> Option<String> {
    let mut parts = Vec::with_capacity(numbers.len());
    for n in numbers {
        let (neg, digits) = n.strip_prefix('-').map_or((false, *n), |d| (true, d));
        let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
        let plain = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if int.is_empty() || !plain(int) || !plain(frac) {
            return None;
        }
        parts.push((neg, int, frac));
    }
    let decimals = parts.iter().map(|(_, _, f)| f.len()).max().unwrap_or(0);
    let mut total: i128 = 0;
    for (neg, int, frac) in parts {
        let scaled: i128 = format!("{int}{frac:0<decimals$}").parse().ok()?;
        total = total.checked_add(if neg { -scaled } else { scaled })?;
    }
    let digits = format!("{:0>width$}", total.unsigned_abs(), width = decimals + 1);
    let (int, frac) = digits.split_at(digits.len() - decimals);
    let sign = if total < 0 { "-" } else { "" };
    Some(match decimals {
        0 => format!("{sign}{int}"),
        _ => format!("{sign}{int}.{frac}"),
    })
}

fn max_decimals(items: &[Value], field: &str) -> Option<usize> {
    items
        .iter()
        .filter_map(|v| match v.pointer_dotted(field) {
            Some(Value::Number(n)) => Some(n.decimals()),
            _ => None,
        })
        .max()
}

/// Set `dotted` in `map` to `value`: in place if present, else where the donor item had it
/// (top-level members). False when the parent object of a dotted path is missing.
fn put(map: &mut Map, dotted: &str, value: Value, donor: Option<&Map>) -> bool {
    match dotted.split_once('.') {
        None => {
            if map.contains_key(dotted) {
                map.insert(dotted.to_owned(), value);
            } else {
                let at = donor.map_or(map.len(), |d| position_as_in(map, d, dotted));
                map.insert_at(at, dotted.to_owned(), value);
            }
            true
        }
        Some((head, rest)) => match map.get_mut(head) {
            Some(Value::Object(inner)) => {
                let donor = donor.and_then(|d| d.get(head)?.as_object());
                put(inner, rest, value, donor)
            }
            _ => false,
        },
    }
}

/// Where `field` goes in `map` so the members keep the donor's relative order: just before
/// the nearest member that follows `field` in `donor` and is in `map` too, else at the end.
/// (The donor's index alone would misplace it when the two items have different members;
/// the latest position that keeps the order is where a member between the two usually was
/// — and a list whose items order their keys alike stays a table for `auto`.)
fn position_as_in(map: &Map, donor: &Map, field: &str) -> usize {
    let entries = donor.entries();
    let Some(at) = entries.iter().position(|(k, _)| k == field) else {
        return map.len();
    };
    entries[at + 1..]
        .iter()
        .find_map(|(k, _)| map.position(k))
        .unwrap_or(map.len())
}
