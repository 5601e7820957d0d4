//! Reading the chunks out of a search response by the `[pack]` field mapping.

use super::PackError;
use super::outline::Lang;
use crate::schema::pack::PackOptions;
use crate::value::{Map, Value};

/// One search result, as the packer needs it.
#[derive(Debug, Clone)]
pub struct Chunk {
    /// Position in the input.
    pub index: usize,
    /// The item's `pack.id` field, or `#<index>` when it has none (a source chunk's is
    /// `path:Lstart-end`).
    pub id: String,
    /// Ids of chunks merged into this one ([`super::overlap`]), best first.
    pub also: Vec<String>,
    /// The response's score; 0 (ranked last) when it gave none ([`Chunk::scored`]).
    pub score: f64,
    /// The response gave a numeric score: an unscored chunk is shown as such and never
    /// demoted by the score threshold.
    pub scored: bool,
    /// The code or prose shown; empty when the item has no `pack.text` field.
    pub text: String,
    /// The source path (`pack.path`); empty when the item has none.
    pub path: String,
    /// The chunk's first line in its file (1 when the response doesn't say).
    pub line_start: usize,
    /// Whether the response said where the chunk starts.
    pub lines_known: bool,
    /// A short heading shown after the line range: the item's `pack.header` field
    /// (`pod.py > Timeout Token`), or a source chunk's container (`in impl Foo`); `None`: none.
    pub header: Option<String>,
    /// The language, from the path's extension: it picks the outline and the code fence.
    pub lang: Lang,
    /// The policy's extra fields (`pack.fields`) as name and text, in the policy's order.
    pub fields: Vec<(String, String)>,
    /// Cut from a source file by pare itself ([`super::source`]): its id is its path and
    /// lines and its score is no relevance, so its heading shows neither.
    pub from_source: bool,
}

impl Chunk {
    /// Lines of the text; at least 1 (an empty text takes one line).
    pub fn line_count(&self) -> usize {
        self.text.lines().count().max(1)
    }
    /// The chunk's last line in its file (1-based, inclusive).
    pub fn line_end(&self) -> usize {
        self.line_start + self.line_count() - 1
    }
}

/// The chunks of `input`: the array at `opts.items` (or `input` itself when `items` is
/// empty or `input` is an array).
pub fn from_response(input: &Value, opts: &PackOptions) -> Result<Vec<Chunk>, PackError> {
    let items = match input {
        Value::Array(items) => items,
        _ => {
            let at = at_path(input, &opts.items).ok_or_else(|| {
                PackError::Mapping(format!("no `{}` in the input (pack.items)", opts.items))
            })?;
            at.as_array().ok_or_else(|| {
                PackError::Mapping(format!(
                    "`{}` is {}, not an array of chunks (pack.items)",
                    opts.items,
                    at.kind()
                ))
            })?
        }
    };
    from_items(items.iter(), opts)
}

/// The response's count of all matches at `opts.total` (`total_found`), if it has one.
pub fn total(input: &Value, opts: &PackOptions) -> Option<usize> {
    at_path(input, opts.total.as_deref()?)?
        .as_f64()
        .filter(|n| *n >= 0.0 && n.fract() == 0.0)
        .map(|n| n as usize)
}

/// The value at a dotted path of object members (`data.hits`); `input` itself for "".
fn at_path<'v>(input: &'v Value, dotted: &str) -> Option<&'v Value> {
    let mut at = input;
    for part in dotted.split('.').filter(|p| !p.is_empty()) {
        at = at.as_object()?.get(part)?;
    }
    Some(at)
}

/// Chunks from a sequence of item objects (a response's array, or JSONL lines).
pub fn from_items<'a>(
    items: impl Iterator<Item = &'a Value>,
    opts: &PackOptions,
) -> Result<Vec<Chunk>, PackError> {
    let mut chunks = Vec::new();
    let mut any_text = false;
    let mut first_keys: Vec<String> = Vec::new();
    for (index, item) in items.enumerate() {
        let Value::Object(map) = item else {
            return Err(PackError::Mapping(format!(
                "item {index} is {}, not an object",
                item.kind()
            )));
        };
        if index == 0 {
            first_keys = map.keys().map(|k| k.to_string()).collect();
        }
        let text = field_text(map, &opts.text);
        any_text |= text.is_some();
        let path = field_text(map, &opts.path).unwrap_or_default();
        let line_start = opts
            .line_start
            .as_deref()
            .and_then(|f| map.get(f))
            .and_then(Value::as_f64)
            .filter(|n| *n >= 1.0);
        chunks.push(Chunk {
            index,
            id: field_text(map, &opts.id).unwrap_or_else(|| format!("#{index}")),
            also: Vec::new(),
            score: map.get(&opts.score).and_then(Value::as_f64).unwrap_or(0.0),
            scored: map.get(&opts.score).and_then(Value::as_f64).is_some(),
            lang: Lang::from_path(&path),
            text: text.unwrap_or_default(),
            path,
            line_start: line_start.map_or(1, |n| n as usize),
            lines_known: line_start.is_some(),
            header: opts.header.as_deref().and_then(|f| field_text(map, f)),
            fields: opts
                .fields
                .iter()
                .filter_map(|f| Some((f.clone(), field_text(map, f)?)))
                .collect(),
            from_source: false,
        });
    }
    if !chunks.is_empty() && !any_text {
        return Err(PackError::Mapping(format!(
            "no item has a `{}` field (pack.text); the first item's fields: {}",
            opts.text,
            first_keys.join(", ")
        )));
    }
    Ok(chunks)
}

/// Takes the extra fields that have one value on every chunk out of the chunks and returns
/// them, to be said once for all (seed 004: `score_type: "hybrid"` on every result).
/// A single chunk keeps its fields.
pub(crate) fn said_once(chunks: &mut [Chunk]) -> Vec<(String, String)> {
    let Some((first, rest)) = chunks.split_first() else {
        return Vec::new();
    };
    if rest.is_empty() {
        return Vec::new();
    }
    let common: Vec<(String, String)> = first
        .fields
        .iter()
        .filter(|field| rest.iter().all(|c| c.fields.contains(field)))
        .cloned()
        .collect();
    for c in chunks.iter_mut() {
        c.fields.retain(|f| !common.contains(f));
    }
    common
}

/// A string field as text; numbers and booleans as written.
fn field_text(map: &Map, field: &str) -> Option<String> {
    match map.get(field)? {
        Value::String(s) => Some(s.to_string()),
        Value::Number(n) => Some(n.as_str().to_owned()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}
