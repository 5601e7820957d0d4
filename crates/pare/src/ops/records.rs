//! What the list ops (`hoist`, `partition`) read of a list's items: the walk's values, or
//! the items [`crate::json::stream`] has already written as text. Each op decides once, in
//! its own file, whichever form it is given; only moving the members differs.
//!
//! Why: the stream writes a large response with no tree, and these two ops were all that
//! kept the shipped `list_entities` policy from it. A second copy of their rules beside the
//! walk's would drift; one decision over either form cannot.
//!
//! The two forms compare alike: the stream writes compact JSON, with each string spelt one
//! way (as [`crate::json::write`] writes it) and numbers as their lexemes, which the values
//! also keep, so two values are equal exactly when their written texts are.
//!
//! ```text
//! values:  [{"t":"A","v":1}, …]     members(0) = [("t", "A"), ("v", 1)]
//! written: [{"t":"A","v":1}, …]     members(0) = [("\"t\"", "\"A\""), ("\"v\"", "1")]
//! ```

use crate::value::Value;

/// A list of items, some of them objects, as an op reads it.
pub(crate) trait Records<'r> {
    /// A member's value, compared for equality.
    type Value: Copy + PartialEq;
    /// How many items.
    fn count(&self) -> usize;
    /// Item `i`'s members in order (keys as this form spells them); `None`: not an object.
    fn members(&self, i: usize) -> Option<impl Iterator<Item = (&'r [u8], Self::Value)>>;
    /// Whether `key` (as this form spells keys) is the key `name`.
    fn spells(&self, key: &[u8], name: &str) -> bool;
    /// A string value as this form spells it (equal strings alike); `None`: not a string.
    fn string(&self, value: Self::Value) -> Option<&'r [u8]>;
    /// The value of item `i`'s member `key` (spelt as [`Records::members`] gives it).
    fn get(&self, i: usize, key: &[u8]) -> Option<Self::Value> {
        self.members(i)?.find(|(k, _)| *k == key).map(|(_, v)| v)
    }
    /// Item `i`'s `j`th member.
    fn member_at(&self, i: usize, j: usize) -> Option<(&'r [u8], Self::Value)> {
        self.members(i)?.nth(j)
    }
    /// The value of item `i`'s member named `name`.
    fn named(&self, i: usize, name: &str) -> Option<Self::Value> {
        self.members(i)?
            .find(|(k, _)| self.spells(k, name))
            .map(|(_, v)| v)
    }
}

/// The walk's form: the values themselves.
pub(crate) struct Values<'r>(pub &'r [Value]);

impl<'r> Records<'r> for Values<'r> {
    type Value = &'r Value;

    fn count(&self) -> usize {
        self.0.len()
    }

    fn members(&self, i: usize) -> Option<impl Iterator<Item = (&'r [u8], &'r Value)>> {
        let object = self.0[i].as_object()?;
        Some(object.iter().map(|(k, v)| (k.as_bytes(), v)))
    }

    fn spells(&self, key: &[u8], name: &str) -> bool {
        key == name.as_bytes()
    }

    fn string(&self, value: &'r Value) -> Option<&'r [u8]> {
        match value {
            Value::String(s) => Some(s.as_bytes()),
            _ => None,
        }
    }
}
