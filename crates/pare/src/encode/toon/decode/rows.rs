//! Table rows and objects under construction.

use super::*;

pub(super) fn over_indented(line: &Line<'_>, expected: usize) -> Fail {
    fail_at(
        line.content,
        format!(
            "expected indentation depth {expected}, found {} (over-indented line)",
            line.depth
        ),
    )
}

/// Cells to an object, depth-first through nested field groups.
pub(super) fn build_row(
    fields: &[Field],
    cells: &[&str],
    next: &mut usize,
    unique: bool,
) -> Result<Map, Fail> {
    let mut map = Map::with_capacity(fields.len());
    for field in fields {
        let value = match &field.children {
            Some(children) => Value::Object(build_row(children, cells, next, unique)?),
            None => {
                let cell = cells.get(*next).copied().unwrap_or_default();
                *next += 1;
                parse_primitive(cell, false)?
            }
        };
        if unique {
            map.push_unique(field.name.clone(), value);
        } else {
            map.insert(field.name.clone(), value);
        }
    }
    Ok(map)
}

/// [`build_row`] for the dialect: constants fill their own members, an empty cell is an
/// absent member, a cell starting with `[` or `{` is JSON.
pub(super) fn build_dialect_row(
    fields: &[Field],
    cells: &[&str],
    next: &mut usize,
    unique: bool,
    depth_left: usize,
) -> Result<Map, Fail> {
    let mut map = Map::with_capacity(fields.len());
    for field in fields {
        let value = match (&field.children, &field.constant) {
            (Some(children), _) => Value::Object(build_dialect_row(
                children,
                cells,
                next,
                unique,
                depth_left.saturating_sub(1),
            )?),
            (None, Some(constant)) => constant.clone(),
            (None, None) => {
                let cell = cells.get(*next).copied().unwrap_or_default();
                *next += 1;
                if cell.is_empty() {
                    continue;
                }
                dialect_value(cell, depth_left)?
            }
        };
        if unique {
            map.push_unique(field.name.clone(), value);
        } else {
            map.insert(field.name.clone(), value);
        }
    }
    Ok(map)
}

// ---------------------------------------------------------------------------------------
// Objects under construction

/// An object's members plus, past [`LINEAR_KEYS`] members, a hash index from key hash to
/// position (a collision falls back to a scan), so repeated-key checks stay linear.
#[derive(Default)]
pub(super) struct ObjBuilder {
    pub(super) entries: Vec<(String, Value)>,
    pub(super) index: Option<KeyIndex>,
}

impl ObjBuilder {
    /// The position of `key`, if present. When absent the caller appends it next, so the
    /// index records it at the current length.
    pub(super) fn find(&mut self, key: &str, hasher: &RandomState) -> Option<usize> {
        if self.index.is_none() && self.entries.len() < LINEAR_KEYS {
            return self.entries.iter().position(|(k, _)| k == key);
        }
        let entries = &self.entries;
        let index = self.index.get_or_insert_with(|| {
            let mut idx = KeyIndex::with_capacity_and_hasher(4 * LINEAR_KEYS, Default::default());
            for (i, (k, _)) in entries.iter().enumerate() {
                idx.entry(hasher.hash_one(k.as_str())).or_insert(i);
            }
            idx
        });
        match index.entry(hasher.hash_one(key)) {
            Entry::Occupied(e) => {
                let i = *e.get();
                if entries[i].0 == key {
                    Some(i)
                } else {
                    entries.iter().position(|(k, _)| k == key)
                }
            }
            Entry::Vacant(e) => {
                e.insert(entries.len());
                None
            }
        }
    }

    pub(super) fn put(&mut self, slot: Option<usize>, key: String, value: Value) {
        match slot.and_then(|i| self.entries.get_mut(i)) {
            Some(entry) => entry.1 = value,
            None => self.entries.push((key, value)),
        }
    }

    pub(super) fn finish(self) -> Map {
        Map::from_entries_unchecked(self.entries)
    }
}
