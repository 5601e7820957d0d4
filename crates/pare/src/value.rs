//! The JSON value pare works on.
//!
//! Why not `serde_json::Value`: pare must give back exactly what it was given when no op
//! touches a value (`--level full` is the input), so numbers keep their lexeme (`1.50`
//! stays `1.50`, `1e5` stays `1e5`, a 30-digit integer stays whole), and objects keep their
//! key order in a plain `Vec`, which is also faster to build than a hash map for the small
//! objects that make up most payloads.
//!
//! ```
//! use pare::value::{Map, Number, Value};
//! let mut m = Map::new();
//! m.insert("score", Value::Number(Number::from_lexeme("0.50").unwrap()));
//! assert_eq!(m.get("score").and_then(Value::as_f64), Some(0.5));
//! ```

use std::fmt;

/// An object key: a string that is stored inline, without an allocation, up to 24 bytes.
/// Why: payloads repeat the same few short keys in every record (millions of them in a
/// large response), and an allocation per key was a large part of parsing — and of the
/// memory a parsed tree holds. It dereferences to `&str` and compares with `str`/`String`.
pub type Key = compact_str::CompactString;

/// A string value: stored inline, without an allocation, up to 24 bytes, like [`Key`].
/// Why: most string values in large payloads are short (ids, names, enum-like tags,
/// timestamps), and an allocation per value was a large part of parsing and encoding them
/// (and of the page faults of a large tree). It dereferences to `&str`, compares with
/// `str`/`String`, and converts from both (`"x".into()`, `Str::from(string)`).
pub(crate) type Str = compact_str::CompactString;

/// A JSON value. Equality is structural and exact: numbers compare by lexeme, objects by
/// their members in order.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum Value {
    /// `null`.
    #[default]
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, its lexeme kept as written.
    Number(Number),
    /// A string, unescaped.
    String(Str),
    /// An array, items in order.
    Array(Vec<Value>),
    /// An object, members in order.
    Object(Map),
}

impl Value {
    /// `null`, `""`, `[]` or `{}`.
    pub fn is_empty_like(&self) -> bool {
        match self {
            Value::Null => true,
            Value::String(s) => s.is_empty(),
            Value::Array(a) => a.is_empty(),
            Value::Object(o) => o.is_empty(),
            _ => false,
        }
    }
    /// A number's value as an `f64` ([`Number::as_f64`]); `None` when not a number.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(n) => n.as_f64(),
            _ => None,
        }
    }
    /// A string's text; `None` when not a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
    /// An object's members; `None` when not an object.
    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }
    /// An object's members, to change; `None` when not an object.
    pub fn as_object_mut(&mut self) -> Option<&mut Map> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }
    /// An array's items; `None` when not an array.
    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
    /// An array's items, to change; `None` when not an array.
    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
    /// A short name of the kind, for messages: `null`, `boolean`, `number`, `string`, `array`, `object`.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        }
    }
    /// Follow a dotted relative path (`refs.screenshotRef`) through objects.
    pub fn pointer_dotted(&self, dotted: &str) -> Option<&Value> {
        let mut cur = self;
        for part in dotted.split('.') {
            cur = cur.as_object()?.get(part)?;
        }
        Some(cur)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(Str::new(s))
    }
}
impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::String(Str::from(s))
    }
}
impl From<Str> for Value {
    fn from(s: Str) -> Self {
        Value::String(s)
    }
}
impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}
impl From<i64> for Value {
    fn from(i: i64) -> Self {
        Value::Number(Number::from_i64(i))
    }
}
impl From<Map> for Value {
    fn from(m: Map) -> Self {
        Value::Object(m)
    }
}
impl From<Vec<Value>> for Value {
    fn from(a: Vec<Value>) -> Self {
        Value::Array(a)
    }
}

/// A JSON number, kept as its lexeme. The lexeme is always valid JSON number syntax.
#[derive(Clone, PartialEq, Eq, Hash)]
// Inline like keys: lexemes are short, so a parsed number needs no allocation.
pub struct Number(compact_str::CompactString);

impl Number {
    /// Accepts exactly the JSON number grammar (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`).
    pub fn from_lexeme(s: &str) -> Option<Number> {
        is_json_number(s.as_bytes()).then(|| Number(s.into()))
    }
    /// For lexemes the parser has already checked.
    pub(crate) fn from_checked(s: &str) -> Number {
        debug_assert!(is_json_number(s.as_bytes()), "{s:?}");
        Number(s.into())
    }
    /// `i` in decimal, as JSON writes it.
    pub fn from_i64(i: i64) -> Number {
        Number(i.to_string().into())
    }
    /// Shortest round-trip form; `None` for NaN and infinities, which JSON cannot hold.
    pub fn from_f64(f: f64) -> Option<Number> {
        if !f.is_finite() {
            return None;
        }
        let mut buf = ryu_js::Buffer::new();
        Some(Number(buf.format_finite(f).into()))
    }
    /// `f` with exactly `decimals` digits after the point (`20` → `"20.0"` for 1).
    pub fn from_f64_fixed(f: f64, decimals: usize) -> Option<Number> {
        if !f.is_finite() {
            return None;
        }
        let mut s = format!("{f:.decimals$}");
        if s.starts_with("-") && s[1..].bytes().all(|b| b == b'0' || b == b'.') {
            s.remove(0); // no "-0.0"
        }
        Some(Number(s.into()))
    }
    /// Whether the lexeme lives on the heap (over 24 bytes), so dropping it frees memory.
    pub(crate) fn is_heap_allocated(&self) -> bool {
        self.0.is_heap_allocated()
    }
    /// The lexeme, exactly as given or made.
    pub fn as_str(&self) -> &str {
        &self.0
    }
    /// The nearest `f64` (an infinity past its range); never `None`, as every lexeme is valid.
    pub fn as_f64(&self) -> Option<f64> {
        self.0.parse().ok()
    }
    /// The value when the lexeme is a plain integer in `i64`'s range; `None` for a fraction,
    /// an exponent (`1e3`) or a larger integer.
    pub fn as_i64(&self) -> Option<i64> {
        self.0.parse().ok()
    }
    /// Digits after the decimal point in the lexeme (0 for integers and exponent forms).
    pub fn decimals(&self) -> usize {
        match self.0.find('.') {
            Some(dot) => self.0[dot + 1..]
                .bytes()
                .take_while(u8::is_ascii_digit)
                .count(),
            None => 0,
        }
    }
}

impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn is_json_number(b: &[u8]) -> bool {
    let mut i = 0;
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
        }
        _ => return false,
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    i == b.len()
}

/// A JSON object: members in insertion order. Keys are unique (the parser keeps the last
/// value of a repeated key at the first key's position, as `JSON.parse` does).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Map {
    entries: Vec<(Key, Value)>,
}

impl Map {
    /// An empty object.
    pub fn new() -> Map {
        Map::default()
    }
    /// An empty object with room for `n` members.
    pub fn with_capacity(n: usize) -> Map {
        Map {
            entries: Vec::with_capacity(n),
        }
    }
    /// The number of members.
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    /// Whether the object has no members.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
    /// The members in order, as a slice (positional access for encoders).
    pub fn entries(&self) -> &[(Key, Value)] {
        &self.entries
    }
    /// The index of `key` among the members, 0-based; `None` when it is not a key.
    pub fn position(&self, key: &str) -> Option<usize> {
        self.entries.iter().position(|(k, _)| k == key)
    }
    /// The value of `key`; `None` when it is not a key.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
    /// The value of `key`, to change; `None` when it is not a key.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.entries
            .iter_mut()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }
    /// Set a dotted relative path (`refs.shot`): in place, or at the end of its parent
    /// object; nothing when an object on the way is missing.
    pub(crate) fn set_dotted(&mut self, dotted: &str, value: Value) {
        match dotted.split_once('.') {
            None => {
                self.insert(dotted.to_owned(), value);
            }
            Some((head, rest)) => {
                if let Some(Value::Object(inner)) = self.get_mut(head) {
                    inner.set_dotted(rest, value);
                }
            }
        }
    }
    /// Remove a dotted relative path, if it is there.
    pub(crate) fn remove_dotted(&mut self, dotted: &str) {
        match dotted.split_once('.') {
            None => {
                self.remove(dotted);
            }
            Some((head, rest)) => {
                if let Some(Value::Object(inner)) = self.get_mut(head) {
                    inner.remove_dotted(rest);
                }
            }
        }
    }
    /// Whether `key` is a key of the object.
    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_some()
    }
    /// `want`, or `want_`, `want__`… whichever is not yet a key: pare never overwrites a
    /// member of the input when it adds one (`_legend`, `_omitted`, a hoisted or flattened key).
    pub(crate) fn unique_key(&self, want: &str) -> String {
        let mut key = want.to_owned();
        while self.contains_key(&key) {
            key.push('_');
        }
        key
    }
    /// Replace the value in place if the key exists (returning the old one), else append.
    pub fn insert(&mut self, key: impl Into<Key>, value: Value) -> Option<Value> {
        let key = key.into();
        match self.position(&key) {
            Some(i) => Some(std::mem::replace(&mut self.entries[i].1, value)),
            None => {
                self.entries.push((key, value));
                None
            }
        }
    }
    /// Append without checking for an existing key. The caller guarantees uniqueness.
    pub(crate) fn push_unique(&mut self, key: impl Into<Key>, value: Value) {
        let key = key.into();
        debug_assert!(!self.contains_key(&key), "duplicate key {key}");
        self.entries.push((key, value));
    }
    /// Insert at `index` (clamped), or replace in place when the key exists.
    pub(crate) fn insert_at(&mut self, index: usize, key: impl Into<Key>, value: Value) {
        let key = key.into();
        match self.position(&key) {
            Some(i) => self.entries[i].1 = value,
            None => self
                .entries
                .insert(index.min(self.entries.len()), (key, value)),
        }
    }
    /// Remove a key, keeping the order of the others.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let i = self.position(key)?;
        Some(self.entries.remove(i).1)
    }
    /// Keep only the members `keep` returns `true` for, in order; `keep` may change values.
    pub fn retain(&mut self, mut keep: impl FnMut(&str, &mut Value) -> bool) {
        self.entries.retain_mut(|(k, v)| keep(k, v));
    }
    /// The members in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&Key, &Value)> + ExactSizeIterator {
        self.entries.iter().map(|(k, v)| (k, v))
    }
    /// The members in order, values mutable.
    pub fn iter_mut(
        &mut self,
    ) -> impl DoubleEndedIterator<Item = (&Key, &mut Value)> + ExactSizeIterator {
        self.entries.iter_mut().map(|(k, v)| (&*k, v))
    }
    /// The keys in order.
    pub fn keys(&self) -> impl Iterator<Item = &Key> {
        self.entries.iter().map(|(k, _)| k)
    }
    /// The values in order.
    pub fn values(&self) -> impl Iterator<Item = &Value> {
        self.entries.iter().map(|(_, v)| v)
    }
    /// The members as a vector, for ops that rebuild an object wholesale.
    pub fn into_entries(self) -> Vec<(Key, Value)> {
        self.entries
    }
    pub(crate) fn entries_mut(&mut self) -> &mut Vec<(Key, Value)> {
        &mut self.entries
    }
    /// Build from members the caller knows to be unique.
    pub fn from_entries_unchecked<K: Into<Key>>(entries: Vec<(K, Value)>) -> Map {
        // For `K = Key` this collects in place: no new allocation.
        Map {
            entries: entries.into_iter().map(|(k, v)| (k.into(), v)).collect(),
        }
    }
    /// [`Map::from_entries_unchecked`] for keys already of the stored type.
    pub(crate) fn from_keyed_unchecked(entries: Vec<(Key, Value)>) -> Map {
        Map { entries }
    }
}

impl IntoIterator for Map {
    type Item = (Key, Value);
    type IntoIter = std::vec::IntoIter<(Key, Value)>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl<K: Into<Key>> FromIterator<(K, Value)> for Map {
    fn from_iter<I: IntoIterator<Item = (K, Value)>>(iter: I) -> Self {
        let mut m = Map::new();
        for (k, v) in iter {
            m.insert(k, v);
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_grammar() {
        for ok in [
            "0",
            "-0",
            "1.5",
            "1e5",
            "1E+5",
            "-12.30e-2",
            "123456789012345678901234567890",
        ] {
            assert!(Number::from_lexeme(ok).is_some(), "{ok}");
        }
        for bad in ["", "-", "01", "1.", ".5", "1e", "+1", "NaN", "1_0", " 1"] {
            assert!(Number::from_lexeme(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn fixed_decimals_never_negative_zero() {
        assert_eq!(Number::from_f64_fixed(20.0, 1).unwrap().as_str(), "20.0");
        assert_eq!(Number::from_f64_fixed(-0.001, 2).unwrap().as_str(), "0.00");
        assert_eq!(Number::from_f64(100000.0).unwrap().as_str(), "100000");
    }

    #[test]
    fn sizes_stay_small() {
        // Every member of every parsed object is a (Key, Value): their size is most of a
        // parsed tree's memory. Keys are inline up to 24 bytes in the same 24 bytes a
        // String took.
        assert_eq!(std::mem::size_of::<Value>(), 32);
        assert_eq!(std::mem::size_of::<Key>(), 24);
        assert_eq!(std::mem::size_of::<(Key, Value)>(), 56);
        assert_eq!(Key::new("relationship_type").capacity(), 24, "inline");
    }

    #[test]
    fn insert_keeps_first_position() {
        let mut m = Map::new();
        m.insert("a", Value::from(1));
        m.insert("b", Value::from(2));
        m.insert("a", Value::from(3));
        assert_eq!(m.keys().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(m.get("a"), Some(&Value::from(3)));
    }
}
