//! `merge`: fold consecutive array items with equal keys into one block when the gap between
//! them is small.
//!
//! Why: an activity log split into "VS Code 09:00–09:10", "VS Code 09:11–09:20" makes the
//! model re-merge what the server could have merged (here within `maxGapMinutes`, 2.0).
//! A block keeps its first item's fields, ends at the latest end, and its `duration` is the
//! wall-clock span (gaps included). `coalesce` fields take the first non-null value in the
//! block. Items whose times do not parse are never merged. Folded items are recorded.
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
//! coalesce = ["shot"]
//! ```
//!
//! In: `{"segments":[{"app":"VS Code","start":"2026-02-17T09:00:00Z","end":"2026-02-17T09:10:00Z","shot":null},{"app":"VS Code","start":"2026-02-17T09:11:00Z","end":"2026-02-17T09:20:00Z","shot":"s1"},{"app":"Slack","start":"2026-02-17T09:20:00Z","end":"2026-02-17T09:30:00Z"}]}`
//! Out: `{"segments":[{"app":"VS Code","start":"2026-02-17T09:00:00Z","end":"2026-02-17T09:20:00Z","shot":"s1","minutes":20.0},{"app":"Slack","start":"2026-02-17T09:20:00Z","end":"2026-02-17T09:30:00Z"}]}`

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::compile::{CompileCx, PolicyError};
use super::{ApplyCx, Op};
use crate::manifest::Kind;
use crate::params::NumberOrParam;
use crate::params::ParamNumber;
use crate::value::{Map, Number, Value};

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MergeSpec {
    /// Levels this op runs at. Default: every level but `full`.
    #[serde(default)]
    pub levels: Option<Vec<String>>,
    /// Selectors of the arrays whose items merge.
    pub at: Vec<String>,
    /// Fields (dotted paths) that must be equal for neighbours to merge.
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
    /// Fields that take the first non-null value in the block.
    #[serde(default)]
    pub coalesce: Vec<String>,
}

fn default_gap() -> NumberOrParam {
    NumberOrParam::Number(2.0)
}

#[derive(Debug)]
pub struct Merge {
    at: Vec<usize>,
    key: Vec<String>,
    start: String,
    end: String,
    max_gap: ParamNumber,
    duration: Option<String>,
    coalesce: Vec<String>,
}

impl MergeSpec {
    pub(crate) fn compile(&self, cx: &mut CompileCx) -> Result<Merge, PolicyError> {
        if self.at.is_empty() {
            return Err(cx.error("at", "name at least one selector"));
        }
        if self.key.is_empty() {
            return Err(cx.error("key", "name at least one field"));
        }
        Ok(Merge {
            at: cx.selectors("at", &self.at)?,
            key: self.key.clone(),
            start: self.start.clone(),
            end: self.end.clone(),
            max_gap: cx.number("max_gap_minutes", &self.max_gap_minutes)?,
            duration: self.duration.clone(),
            coalesce: self.coalesce.clone(),
        })
    }
}

/// An item's merge facts.
struct Times {
    start: f64,
    end: f64,
}

impl Merge {
    fn times(&self, item: &Value) -> Option<Times> {
        let start = parse_timestamp(item.pointer_dotted(&self.start)?.as_str()?)?;
        let end = parse_timestamp(item.pointer_dotted(&self.end)?.as_str()?)?;
        Some(Times { start, end })
    }

    fn same_key(&self, a: &Value, b: &Value) -> bool {
        self.key.iter().all(|k| {
            let (x, y) = (a.pointer_dotted(k), b.pointer_dotted(k));
            x.is_some() && x == y
        })
    }

    /// Fold `block` (≥ 2 items) into its first item.
    fn fold(&self, mut block: Vec<(Value, Times)>) -> Value {
        let start = block[0].1.start;
        let (last_idx, end) = block
            .iter()
            .enumerate()
            .map(|(i, (_, t))| (i, t.end))
            .fold((0, f64::MIN), |acc, x| if x.1 > acc.1 { x } else { acc });
        let end_value = block[last_idx].0.pointer_dotted(&self.end).cloned();
        let decimals = self.duration.as_deref().map(|d| {
            block
                .iter()
                .filter_map(|(v, _)| match v.pointer_dotted(d) {
                    Some(Value::Number(n)) => Some(n.decimals()),
                    _ => None,
                })
                .max()
                .unwrap_or(1)
        });
        let rest: Vec<Value> = block.drain(1..).map(|(v, _)| v).collect();
        let (mut first, _) = block.pop().expect("block has a first item");
        let Value::Object(map) = &mut first else {
            return first;
        };
        if let Some(end_value) = end_value {
            set_dotted(map, &self.end, end_value);
        }
        if let (Some(field), Some(decimals)) = (&self.duration, decimals)
            && let Some(n) = Number::from_f64_fixed((end - start) / 60.0, decimals)
        {
            set_dotted(map, field, Value::Number(n));
        }
        for field in &self.coalesce {
            let present = map.get(field).is_some_and(|v| !matches!(v, Value::Null));
            if present {
                continue;
            }
            let found = rest.iter().find_map(|r| {
                let o = r.as_object()?;
                let v = o.get(field).filter(|v| !matches!(v, Value::Null))?;
                Some((o, v.clone()))
            });
            if let Some((donor, v)) = found {
                match map.position(field) {
                    Some(_) => {
                        map.insert(field.clone(), v);
                    }
                    None => {
                        let at = position_as_in(map, donor, field);
                        map.insert_at(at, field.clone(), v);
                    }
                }
            }
        }
        first
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
        let flush = |block: &mut Vec<(Value, Times)>, out: &mut Vec<Value>| match block.len() {
            0 => {}
            1 => out.push(block.pop().expect("one item").0),
            _ => out.push(self.fold(std::mem::take(block))),
        };
        for item in std::mem::take(items) {
            let Some(times) = self.times(&item) else {
                flush(&mut block, &mut out);
                out.push(item);
                continue;
            };
            let joins = block.last().is_some_and(|(prev, _)| {
                let block_end = block.iter().map(|(_, t)| t.end).fold(f64::MIN, f64::max);
                self.same_key(prev, &item) && times.start - block_end <= max_gap_secs
            });
            if !joins {
                flush(&mut block, &mut out);
            }
            block.push((item, times));
        }
        flush(&mut block, &mut out);
        cx.rec.items(Kind::Merged, (before - out.len()) as u64);
        *items = out;
    }
}

fn set_dotted(map: &mut Map, dotted: &str, value: Value) {
    match dotted.split_once('.') {
        None => {
            map.insert(dotted.to_owned(), value);
        }
        Some((head, rest)) => {
            if let Some(Value::Object(inner)) = map.get_mut(head) {
                set_dotted(inner, rest, value);
            }
        }
    }
}

/// Seconds since 1970 of an ISO 8601 / RFC 3339 timestamp: `YYYY-MM-DD[T ]HH:MM[:SS[.f]]`
/// with an optional `Z` or `±HH[:]MM`. Times without an offset are taken as UTC, which is
/// right for differences between timestamps of one payload.
pub(crate) fn parse_timestamp(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = b.get(r)?;
        if part.is_empty() || !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(part).ok()?.parse().ok()
    };
    let year = num(0..4)?;
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return None;
    }
    let month = num(5..7)?;
    let day = num(8..10)?;
    if !matches!(b.get(10), Some(b'T' | b't' | b' ')) || b.get(13) != Some(&b':') {
        return None;
    }
    let hour = num(11..13)?;
    let minute = num(14..16)?;
    let mut i = 16;
    let mut second = 0.0;
    if b.get(i) == Some(&b':') {
        let whole = num(i + 1..i + 3)? as f64;
        i += 3;
        let mut frac = String::from("0");
        if b.get(i) == Some(&b'.') {
            let start = i + 1;
            i = start;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            frac = format!("0.{}", std::str::from_utf8(&b[start..i]).ok()?);
        }
        second = whole + frac.parse::<f64>().ok()?;
    }
    let offset = match b.get(i) {
        None => 0,
        Some(b'Z' | b'z') if i + 1 == b.len() => 0,
        Some(sign @ (b'+' | b'-')) => {
            let oh = num(i + 1..i + 3)?;
            let om = match b.get(i + 3) {
                Some(b':') => num(i + 4..i + 6)?,
                _ => num(i + 3..i + 5)?,
            };
            let total = (oh * 60 + om) * 60;
            if *sign == b'+' { total } else { -total }
        }
        _ => return None,
    };
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 24
        || minute > 59
        || second >= 61.0
    {
        return None;
    }
    let days = days_from_civil(year, month, day);
    Some((days * 86400 + hour * 3600 + minute * 60 - offset) as f64 + second)
}

/// Days since 1970-01-01 (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

#[cfg(test)]
mod tests {
    use super::parse_timestamp;

    #[test]
    fn timestamps() {
        assert_eq!(parse_timestamp("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(parse_timestamp("1970-01-01T01:00:00+01:00"), Some(0.0));
        assert_eq!(
            parse_timestamp("2026-02-17T09:20:00").unwrap()
                - parse_timestamp("2026-02-17T09:00:00").unwrap(),
            1200.0
        );
        assert_eq!(
            parse_timestamp("2026-02-17T09:00:00.5Z").unwrap() % 1.0,
            0.5
        );
        assert_eq!(
            parse_timestamp("2000-03-01T00:00Z").unwrap()
                - parse_timestamp("2000-02-28T00:00Z").unwrap(),
            2.0 * 86400.0
        );
        for bad in [
            "",
            "2026-02-17",
            "2026-13-01T00:00:00",
            "2026-02-17T09:00:00Q",
            "yesterday",
            "2026-02-17T09:0a:00",
        ] {
            assert_eq!(parse_timestamp(bad), None, "{bad}");
        }
    }
}
