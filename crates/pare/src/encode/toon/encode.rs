//! TOON v4 encoding, byte for byte what the reference encoder (`@toon-format/toon`) writes
//! for `encode(JSON.parse(text))`.
//!
//! Why a port rather than a crate: the reference decides, and matching it byte for byte
//! means mirroring what JavaScript does to a JSON value before the encoder sees it: numbers
//! become doubles (`1.50` → `1.5`, `-0` → `0`, `1e400` → `null`, printed as `String(n)`),
//! and objects list integer-like keys (`"7"`, `"42"`) first, in ascending order. We do that
//! on the fly, without building a normalized copy, so encoding stays one pass over the value.
//!
//! ```
//! use pare::encode::toon::{encode, EncodeOptions};
//! let v = pare::json::parse(r#"{"users":[{"id":1,"name":"Ada"},{"id":2,"name":"Bo"}],"n":1.50}"#).unwrap();
//! assert_eq!(encode(&v, &EncodeOptions::default()), "users[2]{id,name}:\n  1,Ada\n  2,Bo\nn: 1.5");
//! ```

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::value::{Map, Value};

/// The character between values of a row or an inline array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Delimiter {
    /// `,` (the default); array headers don't name it.
    #[default]
    Comma,
    /// A tab character.
    Tab,
    /// `|`.
    Pipe,
}

impl Delimiter {
    /// The names [`Delimiter::parse`] accepts besides the characters themselves.
    pub const NAMES: &[&str] = &["comma", "tab", "pipe"];

    /// The delimiter named `name` (one of [`Delimiter::NAMES`]) or written as its character
    /// (`,`, a tab, `|`); `None` for anything else.
    pub fn parse(name: &str) -> Option<Delimiter> {
        match name {
            "comma" | "," => Some(Delimiter::Comma),
            "tab" | "\t" => Some(Delimiter::Tab),
            "pipe" | "|" => Some(Delimiter::Pipe),
            _ => None,
        }
    }
    /// The character written between values.
    pub fn char(self) -> char {
        match self {
            Delimiter::Comma => ',',
            Delimiter::Tab => '\t',
            Delimiter::Pipe => '|',
        }
    }
}

/// Encoder options, as the reference names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncodeOptions {
    /// Spaces per nesting level (default 2).
    pub indent: usize,
    /// What separates the values of rows and inline arrays (default comma); a tab or pipe is
    /// also written inside each array header's brackets.
    pub delimiter: Delimiter,
}

impl Default for EncodeOptions {
    fn default() -> Self {
        EncodeOptions {
            indent: 2,
            delimiter: Delimiter::Comma,
        }
    }
}

/// The TOON text of `value`, lines joined by `\n`, no trailing newline.
pub fn encode(value: &Value, opts: &EncodeOptions) -> String {
    let mut enc = Encoder::new(opts, None);
    enc.root(value);
    enc.out
}

/// [`encode`], handing the text to `sink` in pieces of about 1 MiB as it is made (the
/// pieces joined are exactly `encode`'s text), so a large document is never held whole.
pub fn encode_streaming(value: &Value, opts: &EncodeOptions, sink: &mut dyn FnMut(&str)) {
    let mut enc = Encoder::new(opts, Some(sink));
    enc.root(value);
    if let Some(sink) = enc.sink.as_mut() {
        sink(&enc.out);
    }
}

/// How much text the streaming encoder gathers before handing it on.
const PIECE_BYTES: usize = 1 << 20;

/// Lists at least this long are encoded on two threads (see `Encoder::items`). Starting
/// one costs tens of microseconds, a few thousand items take milliseconds.
const SPLIT_MIN_ITEMS: usize = 2048;

/// How many chunks such a list is cut into: enough that the two threads finish close
/// together, few enough that taking one costs nothing next to encoding it.
const SPLIT_CHUNKS: usize = 64;

/// Indentation, sliced.
const SPACES: &str = "                                                                ";

/// A tabular column: a leaf, or a nested object whose own fields are columns too.
struct Field<'a> {
    name: &'a str,
    children: Option<Vec<Field<'a>>>,
}

struct Encoder<'s> {
    out: String,
    indent: usize,
    delim: char,
    started: bool,
    sink: Option<&'s mut dyn FnMut(&str)>,
    /// Whether a long list may be split with a helper thread: not inside a split already.
    may_split: bool,
}

impl<'s> Encoder<'s> {
    fn new(opts: &EncodeOptions, sink: Option<&'s mut dyn FnMut(&str)>) -> Self {
        Encoder {
            out: String::new(),
            indent: opts.indent,
            delim: opts.delimiter.char(),
            started: false,
            sink,
            may_split: true,
        }
    }

    /// Calls `each` on every item. A long list is shared with a helper thread in chunks
    /// taken in turn (so neither waits while the other has work, however uneven the items);
    /// each chunk's lines are handed on in order — directly when this thread writes the next
    /// chunk due, otherwise from a text of their own. On the large payloads this is made
    /// for, encoding then takes about half the time.
    fn items<'v>(&mut self, items: &'v [Value], each: impl Fn(&mut Encoder, &'v Value) + Sync) {
        if !self.may_split || items.len() < SPLIT_MIN_ITEMS || !crate::has_second_core() {
            for item in items {
                each(self, item);
            }
            return;
        }
        let chunks: Vec<&[Value]> = items.chunks(items.len().div_ceil(SPLIT_CHUNKS)).collect();
        let texts: Vec<OnceLock<String>> = chunks.iter().map(|_| OnceLock::new()).collect();
        let next = AtomicUsize::new(0);
        let (indent, delim) = (self.indent, self.delim);
        // A chunk's lines in a text of their own (they follow others: `started`).
        let apart = |chunk: &'v [Value]| {
            let mut enc = Encoder {
                out: String::new(),
                indent,
                delim,
                started: true,
                sink: None,
                may_split: false,
            };
            for item in chunk {
                each(&mut enc, item);
            }
            enc.out
        };
        self.may_split = false;
        let mut written = 0; // chunks handed on
        std::thread::scope(|s| {
            // As much stack as a main thread has; without a helper this thread takes all.
            let _ = std::thread::Builder::new()
                .stack_size(8 << 20)
                .spawn_scoped(s, || {
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some(chunk) = chunks.get(k) else { break };
                        let _ = texts[k].set(apart(chunk));
                    }
                });
            loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(chunk) = chunks.get(k) else { break };
                written += self.write_done(&texts[written..]);
                if k == written {
                    for item in *chunk {
                        each(self, item);
                    }
                    written += 1;
                } else {
                    let _ = texts[k].set(apart(chunk));
                }
            }
        });
        self.write_done(&texts[written..]); // the helper is done: all are there
        self.may_split = true;
    }

    /// Hands on the leading texts that are done, in order; returns how many.
    fn write_done(&mut self, texts: &[OnceLock<String>]) -> usize {
        let mut n = 0;
        for text in texts.iter().map_while(OnceLock::get) {
            match self.sink.as_mut() {
                Some(sink) => {
                    if !self.out.is_empty() {
                        sink(&self.out);
                        self.out.clear();
                    }
                    sink(text);
                }
                None => self.out.push_str(text),
            }
            n += 1;
        }
        n
    }

    fn root(&mut self, value: &Value) {
        match value {
            Value::Array(items) => self.array(None, items, 0),
            Value::Object(map) => {
                if let Some(fields) = keyed_fields(map) {
                    self.keyed_object(None, map, &fields, 0);
                } else {
                    self.object_members(map, 0);
                }
            }
            Value::String(s) if s.starts_with('\u{feff}') => {
                self.line(0);
                push_quoted(&mut self.out, s);
            }
            primitive => {
                self.line(0);
                self.primitive(primitive);
            }
        }
    }

    /// Starts a new line at `depth`.
    fn line(&mut self, depth: usize) {
        if self.out.len() >= PIECE_BYTES
            && let Some(sink) = self.sink.as_mut()
        {
            sink(&self.out);
            self.out.clear();
        }
        if self.started {
            self.out.push('\n');
        }
        self.started = true;
        // In slices rather than a space at a time: this runs once per output line.
        let mut n = depth * self.indent;
        while n > 0 {
            let k = n.min(SPACES.len());
            self.out.push_str(&SPACES[..k]);
            n -= k;
        }
    }

    fn list_item(&mut self, depth: usize) {
        self.line(depth);
        self.out.push_str("- ");
    }

    fn primitive(&mut self, value: &Value) {
        push_primitive(&mut self.out, value, self.delim);
    }

    fn object_members(&mut self, map: &Map, depth: usize) {
        for (key, value) in js_entries(map) {
            self.member(key, value, depth);
        }
    }

    fn member(&mut self, key: &str, value: &Value, depth: usize) {
        match value {
            Value::Array(items) => self.array(Some(key), items, depth),
            Value::Object(map) => {
                if let Some(fields) = keyed_fields(map) {
                    self.keyed_object(Some(key), map, &fields, depth);
                    return;
                }
                self.line(depth);
                push_key(&mut self.out, key);
                self.out.push(':');
                self.object_members(map, depth + 1);
            }
            primitive => {
                self.line(depth);
                push_key(&mut self.out, key);
                self.out.push_str(": ");
                self.primitive(primitive);
            }
        }
    }

    /// `key[N:]{fields}:` and a row per entry: `entryKey: v1,v2`.
    fn keyed_object(&mut self, key: Option<&str>, map: &Map, fields: &[Field], depth: usize) {
        self.line(depth);
        self.header(key, map.len(), Some(fields), true);
        self.keyed_rows(map, fields, depth + 1);
    }

    fn keyed_rows(&mut self, map: &Map, fields: &[Field], depth: usize) {
        for (entry_key, entry) in js_entries(map) {
            self.line(depth);
            push_key(&mut self.out, entry_key);
            self.out.push_str(": ");
            self.row_cells(entry, fields);
        }
    }

    fn array(&mut self, key: Option<&str>, items: &[Value], depth: usize) {
        if items.is_empty() {
            self.line(depth);
            if let Some(key) = key {
                push_key(&mut self.out, key);
                self.out.push_str(": ");
            }
            self.out.push_str("[]");
            return;
        }
        if items.iter().all(is_primitive) {
            self.line(depth);
            self.inline_array(key, items);
            return;
        }
        let all_primitive_arrays = items
            .iter()
            .all(|item| matches!(item, Value::Array(inner) if inner.iter().all(is_primitive)));
        if all_primitive_arrays {
            self.line(depth);
            self.header(key, items.len(), None, false);
            for item in items {
                if let Value::Array(inner) = item {
                    self.list_item(depth + 1);
                    self.inline_array(None, inner);
                }
            }
            return;
        }
        if let Some(fields) = tabular_fields(items) {
            self.line(depth);
            self.header(key, items.len(), Some(&fields), false);
            self.table_rows(items, &fields, depth + 1);
            return;
        }
        self.line(depth);
        self.header(key, items.len(), None, false);
        self.items(items, |enc, item| enc.list_item_value(item, depth + 1));
    }

    /// `key[N]: a,b,c` (or `[0]:` for an empty array), on the current line.
    fn inline_array(&mut self, key: Option<&str>, items: &[Value]) {
        self.header(key, items.len(), None, false);
        if items.is_empty() {
            return;
        }
        self.out.push(' ');
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.out.push(self.delim);
            }
            self.primitive(item);
        }
    }

    fn table_rows(&mut self, rows: &[Value], fields: &[Field], depth: usize) {
        self.items(rows, |enc, row| {
            enc.line(depth);
            enc.row_cells(row, fields);
        });
    }

    fn row_cells(&mut self, row: &Value, fields: &[Field]) {
        let mut first = true;
        self.cells(row, fields, &mut first);
    }

    fn cells(&mut self, row: &Value, fields: &[Field], first: &mut bool) {
        let Value::Object(map) = row else { return };
        for (position, field) in fields.iter().enumerate() {
            let Some(value) = member(map, position, field.name) else {
                continue;
            };
            match &field.children {
                Some(children) => self.cells(value, children, first),
                None => {
                    if !*first {
                        self.out.push(self.delim);
                    }
                    *first = false;
                    self.primitive(value);
                }
            }
        }
    }

    fn list_item_value(&mut self, value: &Value, depth: usize) {
        match value {
            Value::Array(items) => {
                self.list_item(depth);
                if items.iter().all(is_primitive) {
                    self.inline_array(None, items);
                } else {
                    self.header(None, items.len(), None, false);
                    for item in items {
                        self.list_item_value(item, depth + 1);
                    }
                }
            }
            Value::Object(map) => self.object_as_list_item(map, depth),
            primitive => {
                self.list_item(depth);
                self.primitive(primitive);
            }
        }
    }

    /// `- first: …` with the object's other members indented under it.
    fn object_as_list_item(&mut self, map: &Map, depth: usize) {
        let mut entries = js_entries(map);
        let Some((first_key, first_value)) = entries.next() else {
            self.line(depth);
            self.out.push('-');
            return;
        };
        match first_value {
            Value::Array(items) if !items.is_empty() && items.iter().all(is_object) => {
                if let Some(fields) = tabular_fields(items) {
                    self.list_item(depth);
                    self.header(Some(first_key), items.len(), Some(&fields), false);
                    self.table_rows(items, &fields, depth + 2);
                } else {
                    self.list_item(depth);
                    push_key(&mut self.out, first_key);
                    self.header(None, items.len(), None, false);
                    for item in items {
                        self.list_item_value(item, depth + 2);
                    }
                }
            }
            Value::Array(items) => {
                self.list_item(depth);
                push_key(&mut self.out, first_key);
                if items.is_empty() {
                    self.out.push_str(": []");
                } else if items.iter().all(is_primitive) {
                    self.inline_array(None, items);
                } else {
                    self.header(None, items.len(), None, false);
                    for item in items {
                        self.list_item_value(item, depth + 2);
                    }
                }
            }
            Value::Object(inner) => {
                if let Some(fields) = keyed_fields(inner) {
                    self.list_item(depth);
                    self.header(Some(first_key), inner.len(), Some(&fields), true);
                    self.keyed_rows(inner, &fields, depth + 2);
                } else {
                    self.list_item(depth);
                    push_key(&mut self.out, first_key);
                    self.out.push(':');
                    self.object_members(inner, depth + 2);
                }
            }
            primitive => {
                self.list_item(depth);
                push_key(&mut self.out, first_key);
                self.out.push_str(": ");
                self.primitive(primitive);
            }
        }
        for (key, value) in entries {
            self.member(key, value, depth + 1);
        }
    }

    /// `key[N]{f1,f2}:` — `[N:]` for a keyed object, the delimiter inside the brackets when
    /// it is not a comma.
    fn header(&mut self, key: Option<&str>, len: usize, fields: Option<&[Field]>, keyed: bool) {
        if let Some(key) = key {
            push_key(&mut self.out, key);
        }
        self.out.push('[');
        push_usize(&mut self.out, len);
        if keyed {
            self.out.push(':');
        }
        if self.delim != ',' {
            self.out.push(self.delim);
        }
        self.out.push(']');
        if let Some(fields) = fields {
            self.out.push('{');
            self.field_segment(fields);
            self.out.push('}');
        }
        self.out.push(':');
    }

    fn field_segment(&mut self, fields: &[Field]) {
        for (i, field) in fields.iter().enumerate() {
            if i > 0 {
                self.out.push(self.delim);
            }
            push_key(&mut self.out, field.name);
            if let Some(children) = &field.children {
                self.out.push('{');
                self.field_segment(children);
                self.out.push('}');
            }
        }
    }
}

/// `n` in decimal, without the temporary `String` of `to_string` (a header per array).
fn push_usize(out: &mut String, mut n: usize) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &buf[i..] {
        out.push(char::from(d));
    }
}

fn is_primitive(v: &Value) -> bool {
    !matches!(v, Value::Array(_) | Value::Object(_))
}

fn is_object(v: &Value) -> bool {
    matches!(v, Value::Object(_))
}

fn is_nonempty_object(v: &Value) -> bool {
    matches!(v, Value::Object(m) if !m.is_empty())
}

/// Columns for rows that all have the same keys as the first, each column all primitives
/// or all non-empty objects that are themselves tabular; `None` otherwise.
fn tabular_fields(rows: &[Value]) -> Option<Vec<Field<'_>>> {
    let rows: Vec<&Value> = rows.iter().collect();
    tabular_fields_of_refs(&rows)
}

fn tabular_fields_of_refs<'a>(rows: &[&'a Value]) -> Option<Vec<Field<'a>>> {
    let first = rows.first()?.as_object()?;
    if first.is_empty() {
        return None;
    }
    // An array or an empty object in the first row makes its column neither all primitive
    // nor all non-empty objects, so there is no table: say so before comparing every row's
    // keys (a list of large records with one list-valued member is the common case).
    if first
        .values()
        .any(|v| matches!(v, Value::Array(_)) || matches!(v, Value::Object(m) if m.is_empty()))
    {
        return None;
    }
    for row in rows {
        let map = row.as_object()?;
        if map.len() != first.len() || !same_keys(first, map) {
            return None;
        }
    }
    let mut fields = Vec::with_capacity(first.len());
    let mut column = Vec::with_capacity(rows.len());
    for (position, (name, _)) in js_entries(first).enumerate() {
        column.clear();
        column.extend(
            rows.iter()
                .filter_map(|row| member(row.as_object()?, position, name)),
        );
        fields.push(classify_column(name, &column)?);
    }
    Some(fields)
}

/// Whether `b` has exactly `a`'s keys (`a.len() == b.len()` already holds). Rows almost
/// always list their keys in the same order, so compare position by position and fall back
/// to lookups only from the first difference.
fn same_keys(a: &Map, b: &Map) -> bool {
    let (ea, eb) = (a.entries(), b.entries());
    match ea.iter().zip(eb).position(|((ka, _), (kb, _))| ka != kb) {
        None => true,
        Some(from) => ea[from..].iter().all(|(k, _)| b.contains_key(k)),
    }
}

fn classify_column<'a>(name: &'a str, values: &[&'a Value]) -> Option<Field<'a>> {
    if values.iter().all(|v| is_primitive(v)) {
        return Some(Field {
            name,
            children: None,
        });
    }
    if !values.iter().all(|v| is_nonempty_object(v)) {
        return None;
    }
    Some(Field {
        name,
        children: Some(tabular_fields_of_refs(values)?),
    })
}

/// A keyed object's columns: at least two entries, all non-empty objects, tabular.
fn keyed_fields(map: &Map) -> Option<Vec<Field<'_>>> {
    if map.len() < 2 || !map.values().all(is_nonempty_object) {
        return None;
    }
    let values: Vec<&Value> = map.values().collect();
    tabular_fields_of_refs(&values)
}

/// The member `key`, looked up at `position` first: rows of a table almost always list
/// their keys in the same order, and a linear `get` per cell would make wide tables quadratic.
fn member<'a>(map: &'a Map, position: usize, key: &str) -> Option<&'a Value> {
    match map.entries().get(position) {
        Some((k, v)) if k == key => Some(v),
        _ => map.get(key),
    }
}

/// The members of `map` in the order JavaScript enumerates them: integer-like keys
/// (canonical array indices) first in ascending order, then the rest in insertion order.
fn js_entries(map: &Map) -> JsEntries<'_> {
    if !map.keys().any(|k| array_index(k).is_some()) {
        return JsEntries::Plain(map, 0);
    }
    let mut indexed: Vec<(u32, &str, &Value)> = Vec::new();
    let mut rest: Vec<(&str, &Value)> = Vec::new();
    for (k, v) in map.iter() {
        match array_index(k) {
            Some(i) => indexed.push((i, k, v)),
            None => rest.push((k, v)),
        }
    }
    indexed.sort_by_key(|&(i, _, _)| i);
    let mut all: Vec<(&str, &Value)> = indexed.into_iter().map(|(_, k, v)| (k, v)).collect();
    all.extend(rest);
    JsEntries::Sorted(all.into_iter())
}

enum JsEntries<'a> {
    Plain(&'a Map, usize),
    Sorted(std::vec::IntoIter<(&'a str, &'a Value)>),
}

impl<'a> Iterator for JsEntries<'a> {
    type Item = (&'a str, &'a Value);
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            JsEntries::Plain(map, i) => {
                let (k, v) = map.entries().get(*i)?;
                *i += 1;
                Some((k, v))
            }
            JsEntries::Sorted(it) => it.next(),
        }
    }
}

/// Whether JavaScript would enumerate `map`'s keys in their stored order (no integer-like
/// key after another key, integer-like keys ascending).
pub(crate) fn in_js_order(map: &Map) -> bool {
    let mut last_index: Option<u32> = None;
    let mut seen_other = false;
    for key in map.keys() {
        match array_index(key) {
            Some(i) => {
                if seen_other || last_index.is_some_and(|l| l > i) {
                    return false;
                }
                last_index = Some(i);
            }
            None => seen_other = true,
        }
    }
    true
}

/// `Some(n)` if `key` is a canonical array index (`"0"`, `"17"`, below 2³² − 1), which
/// JavaScript objects enumerate before other keys.
fn array_index(key: &str) -> Option<u32> {
    let b = key.as_bytes();
    if b.is_empty() || b.len() > 10 || (b[0] == b'0' && b.len() > 1) {
        return None;
    }
    if !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n: u64 = key.parse().ok()?;
    (n < u64::from(u32::MAX)).then_some(n as u32)
}

pub(crate) fn push_primitive(out: &mut String, value: &Value, delim: char) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => push_js_number(out, n.as_str()),
        Value::String(s) => {
            if is_safe_unquoted(s, delim) {
                out.push_str(s);
            } else {
                push_quoted(out, s);
            }
        }
        Value::Array(_) | Value::Object(_) => {}
    }
}

/// `String(JSON.parse(lexeme))`: the shortest round-trip form of the double, `0` for `-0`,
/// `null` for what overflows to ±Infinity.
pub(crate) fn push_js_number(out: &mut String, lexeme: &str) {
    if is_plain_small_integer(lexeme) {
        out.push_str(lexeme);
        return;
    }
    let f: f64 = match lexeme.parse() {
        Ok(f) => f,
        Err(_) => {
            out.push_str("null");
            return;
        }
    };
    if !f.is_finite() {
        out.push_str("null");
    } else if f == 0.0 {
        out.push('0');
    } else {
        out.push_str(ryu_js::Buffer::new().format_finite(f));
    }
}

/// A number TOON cannot carry exactly: it goes through a double, as the reference encoder's
/// JavaScript does, so a lexeme out of a double's range (`1e999` → `null`, `1e-400` → `0`),
/// with more digits than a double holds (`1234567890123456789` → `1234567890123456800`) or a
/// negative zero (`-0` → `0`) is written as another number. (`1.0` → `1` is the same value.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inexact {
    /// Where, as the report writes paths (`$.a[3].b`).
    pub path: String,
    /// The number as written in the input.
    pub lexeme: String,
    /// What TOON writes instead.
    pub written: String,
}

impl std::fmt::Display for Inexact {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let lexeme: String = self.lexeme.chars().take(40).collect();
        let cut = if lexeme.len() < self.lexeme.len() {
            "…"
        } else {
            ""
        };
        write!(
            f,
            "number {lexeme}{cut} at {} cannot be carried exactly by toon (a double): written as {}",
            self.path, self.written
        )
    }
}

/// Every number in `value` that [`encode`] writes as another value, in document order.
/// Short plain lexemes (no exponent, at most 15 digits, not `-0`) are exact and passed over
/// without being parsed.
pub fn inexact_numbers(value: &Value) -> Vec<Inexact> {
    fn walk(v: &Value, path: &mut String, out: &mut Vec<Inexact>) {
        match v {
            Value::Number(n) => {
                let lexeme = n.as_str();
                let digits = lexeme.bytes().filter(u8::is_ascii_digit).count();
                let plain = !lexeme.bytes().any(|b| b == b'e' || b == b'E');
                if plain && digits <= 15 && !lexeme.starts_with("-0") {
                    return;
                }
                let mut written = String::new();
                push_js_number(&mut written, lexeme);
                if decimal(&written) != decimal(lexeme) {
                    out.push(Inexact {
                        path: path.clone(),
                        lexeme: lexeme.to_owned(),
                        written,
                    });
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let mark = path.len();
                    path.push_str(&format!("[{i}]"));
                    walk(item, path, out);
                    path.truncate(mark);
                }
            }
            Value::Object(map) => {
                for (k, child) in map.iter() {
                    let mark = path.len();
                    crate::manifest::push_key(path, k);
                    walk(child, path, out);
                    path.truncate(mark);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(value, &mut String::from("$"), &mut out);
    out
}

/// A number lexeme's decimal value: (negative, significant digits, exponent of the point);
/// `None` for text that is not a number (`null`). `1.50e1` and `15` are equal, `-0` and `0`
/// are not.
fn decimal(lexeme: &str) -> Option<(bool, String, i128)> {
    let (negative, rest) = match lexeme.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, lexeme),
    };
    let (mantissa, exponent) = match rest.split_once(['e', 'E']) {
        Some((m, e)) => (m, exponent_of(e)?),
        None => (rest, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let all = format!("{int}{frac}");
    let leading = all.len() - all.trim_start_matches('0').len();
    let digits = all.trim_start_matches('0').trim_end_matches('0').to_owned();
    let point = int.len() as i128 - leading as i128 + exponent;
    Some(if digits.is_empty() {
        (negative, digits, 0)
    } else {
        (negative, digits, point)
    })
}

/// An exponent's value; one too long for `i128` (JSON sets no limit) is held at a bound no
/// double reaches, so `1e0000…9999` still differs from what TOON writes for it (`null`).
fn exponent_of(e: &str) -> Option<i128> {
    let (negative, digits) = match e.as_bytes().first() {
        Some(b'-') => (true, &e[1..]),
        Some(b'+') => (false, &e[1..]),
        _ => (false, e),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let bound = i128::MAX / 4;
    let value = digits.parse::<i128>().map_or(bound, |v| v.min(bound));
    Some(if negative { -value } else { value })
}

/// An integer lexeme JavaScript prints back unchanged: no `-0`, at most 15 digits.
fn is_plain_small_integer(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    !digits.is_empty()
        && digits.len() <= 15
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits.len() == 1 || !digits.starts_with('0'))
        && s != "-0"
}

pub(crate) fn push_key(out: &mut String, key: &str) {
    if is_valid_unquoted_key(key) {
        out.push_str(key);
    } else {
        push_quoted(out, key);
    }
}

/// `/^[A-Z_][\w.]*$/i`.
fn is_valid_unquoted_key(key: &str) -> bool {
    let b = key.as_bytes();
    match b.first() {
        Some(c) if c.is_ascii_alphabetic() || *c == b'_' => {}
        _ => return false,
    }
    b[1..]
        .iter()
        .all(|&c| CLASS[usize::from(c)] & KEY_CHAR != 0)
}

/// Byte classes for the per-byte tests of keys and unquoted strings, one table lookup per
/// byte instead of a chain of comparisons (these run over every key and string written).
const KEY_CHAR: u8 = 1; // [\w.]
const UNSAFE: u8 = 2; // never unquoted: " \ [ ] { } and controls
const COLON: u8 = 4;
const COMMA: u8 = 8;
const TAB: u8 = 16;
const PIPE: u8 = 32;
static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'.' {
            t[c] |= KEY_CHAR;
        }
        if b < 0x20 || matches!(b, b'"' | b'\\' | b'[' | b']' | b'{' | b'}') {
            t[c] |= UNSAFE;
        }
        c += 1;
    }
    t[b':' as usize] |= COLON;
    t[b',' as usize] |= COMMA;
    t[b'\t' as usize] |= TAB;
    t[b'|' as usize] |= PIPE;
    t
};

/// The [`CLASS`] bits that make a string need quotes, for this delimiter and colon rule;
/// `None` for a delimiter the table does not know.
#[inline]
fn unsafe_mask(delim: char, colon_ok: bool) -> Option<u8> {
    let delim_bit = match delim {
        ',' => COMMA,
        '\t' => TAB,
        '|' => PIPE,
        _ => return None,
    };
    Some(UNSAFE | delim_bit | if colon_ok { 0 } else { COLON })
}

/// The reference's `isSafeUnquoted`: a string the decoder would read back as itself.
pub(crate) fn is_safe_unquoted(s: &str, delim: char) -> bool {
    is_safe_unquoted_where(s, delim, false)
}

/// [`is_safe_unquoted`], optionally allowing `:` — where the text sits after a key's colon
/// or in a table cell, a colon is not structural.
pub(crate) fn is_safe_unquoted_where(s: &str, delim: char, colon_ok: bool) -> bool {
    let b = s.as_bytes();
    let (Some(&first), Some(&last)) = (b.first(), b.last()) else {
        return false;
    };
    if matches!(first, b' ' | b'\t' | b'-' | b'#') || matches!(last, b' ' | b'\t') {
        return false;
    }
    if matches!(s, "true" | "false" | "null") || is_numeric_like(b) {
        return false;
    }
    match unsafe_mask(delim, colon_ok) {
        Some(mask) => !b.iter().any(|&c| CLASS[usize::from(c)] & mask != 0),
        None => !b.iter().any(|&c| {
            (c == b':' && !colon_ok) || CLASS[usize::from(c)] & UNSAFE != 0 || c == delim as u8
        }),
    }
}

/// `/^[+-]?\d+(?:\.\d+)?(?:e[+-]?\d+)?$/i`.
fn is_numeric_like(b: &[u8]) -> bool {
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i = 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i > start
    };
    if !digits(&mut i) {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if !digits(&mut i) {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !digits(&mut i) {
            return false;
        }
    }
    i == b.len()
}

/// `"…"` with the reference's escapes: `\\ \" \n \r \t`, other controls as `\u00XX`.
pub(crate) fn push_quoted(out: &mut String, s: &str) {
    out.push('"');
    let b = s.as_bytes();
    let mut run_start = 0;
    loop {
        // The bytes that need an escape are exactly the ones JSON strings can't hold raw,
        // so the JSON scanner finds them eight bytes at a time.
        let i = crate::json::find_special(b, run_start);
        out.push_str(&s[run_start..i]);
        let Some(&c) = b.get(i) else { break };
        match c {
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.push_str("\\u00");
                out.push(HEX[usize::from(c >> 4)] as char);
                out.push(HEX[usize::from(c & 15)] as char);
            }
        }
        run_start = i + 1;
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toon(json: &str) -> String {
        encode(
            &crate::json::parse(json).unwrap(),
            &EncodeOptions::default(),
        )
    }

    /// The issue-28 probe: `1234567890123456789` became `…800` and `-0` became `0` with no
    /// warning, while the docs called TOON lossless. Same values in another spelling
    /// (`1.0`, `1e2`, `0.30000000000000004`) are exact and not warned about.
    #[test]
    fn regression_toon_lost_digits_and_signs_silently() {
        let v = crate::json::parse(
            r#"[1234567890123456789,-0,-0.0,1.0,1e2,0.30000000000000004,123456789012345.6789,9007199254740993,9007199254740992]"#,
        )
        .unwrap();
        let got: Vec<(String, String)> = inexact_numbers(&v)
            .into_iter()
            .map(|o| (o.lexeme, o.written))
            .collect();
        let want = [
            ("1234567890123456789", "1234567890123456800"),
            ("-0", "0"),
            ("-0.0", "0"),
            ("123456789012345.6789", "123456789012345.67"),
            ("9007199254740993", "9007199254740992"),
        ];
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn regression_out_of_range_numbers_became_null_silently() {
        let big = format!("1{}", "0".repeat(400));
        let text = format!(
            r#"{{"a":1e400,"b":[1,-1E+999,2.5e-400,0e-999,1e308],"c d":{{"x":{big}}},"ok":0.000e-500}}"#
        );
        let v = crate::json::parse(&text).unwrap();
        let found = inexact_numbers(&v);
        let got: Vec<(&str, &str)> = found
            .iter()
            .map(|o| (o.path.as_str(), o.written.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("$.a", "null"),
                ("$.b[1]", "null"),
                ("$.b[2]", "0"),
                ("$['c d'].x", "null")
            ]
        );
        // what they warn of is what TOON writes
        let out = encode(&v, &EncodeOptions::default());
        assert!(out.starts_with("a: null\n"), "{out}");
        assert!(out.contains(",null,0,0,1e+308"), "{out}");
        assert_eq!(
            found[0].to_string(),
            "number 1e400 at $.a cannot be carried exactly by toon (a double): written as null"
        );
        assert!(
            found[3].to_string().starts_with("number 1000"),
            "{}",
            found[3]
        );
        assert!(
            found[3].to_string().contains("0… at $['c d'].x"),
            "{}",
            found[3]
        );
        assert!(inexact_numbers(&crate::json::parse("[1,2.5,1e10]").unwrap()).is_empty());
    }

    #[test]
    fn numbers_print_as_javascript_does() {
        assert_eq!(
            toon("[1.50,-0,1e400,1E5,0.0000001,1e21,12345678901234567890]"),
            "[7]: 1.5,0,null,100000,1e-7,1e+21,12345678901234567000"
        );
    }

    #[test]
    fn integer_like_keys_come_first() {
        assert_eq!(
            toon(r#"{"b":1,"10":2,"2":3,"01":4}"#),
            "\"2\": 3\n\"10\": 2\nb: 1\n\"01\": 4"
        );
    }

    #[test]
    fn streaming_pieces_join_to_the_same_text() {
        let rows: Vec<String> = (0..40_000)
            .map(|i| format!(r#"{{"id":{i},"tags":["a","b"],"m":{{"x":{i}}}}}"#))
            .collect();
        let v = crate::json::parse(&format!("[{}]", rows.join(","))).unwrap();
        let opts = EncodeOptions::default();
        let (mut joined, mut pieces) = (String::new(), 0);
        encode_streaming(&v, &opts, &mut |piece: &str| {
            joined.push_str(piece);
            pieces += 1;
        });
        assert!(pieces > 1, "{pieces}");
        assert_eq!(joined, encode(&v, &opts));
    }

    #[test]
    fn long_lists_split_across_threads_write_the_same_text() {
        let one_thread = |v: &Value| {
            let mut enc = Encoder::new(&EncodeOptions::default(), None);
            enc.may_split = false;
            enc.root(v);
            enc.out
        };
        let list: Vec<String> = (0..5_001)
            .map(|i| match i % 3 {
                0 => format!(r#"{{"id":{i},"tags":["a","b"],"rows":[{{"x":1}},{{"x":{i}}}]}}"#),
                1 => format!(r#"[{i},"x,y"]"#),
                _ => format!(r#""s{i}""#),
            })
            .collect();
        let table: Vec<String> = (0..4_999)
            .map(|i| format!(r#"{{"id":{i},"m":{{"x":"{i}:","y":null}}}}"#))
            .collect();
        for json in [
            format!(r#"{{"list":[{}],"n":1}}"#, list.join(",")),
            format!(r#"[{}]"#, table.join(",")),
            format!(r#"[[{}],[{}]]"#, table.join(","), list.join(",")),
        ] {
            let v = crate::json::parse(&json).unwrap();
            let expected = one_thread(&v);
            assert_eq!(encode(&v, &EncodeOptions::default()), expected);
            let mut streamed = String::new();
            encode_streaming(&v, &EncodeOptions::default(), &mut |p| streamed.push_str(p));
            assert_eq!(streamed, expected);
        }
    }

    #[test]
    fn keyed_object_of_uniform_entries() {
        assert_eq!(
            toon(r#"{"m":{"a":{"x":1},"b":{"x":2}}}"#),
            "m[2:]{x}:\n  a: 1\n  b: 2"
        );
    }
}
