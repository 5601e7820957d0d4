//! Where the stream removed members, by path pattern: a report's manifest from a text the
//! stream writes, with no value built ([`crate::report::measure_text`]).
//!
//! Why: the manifest names each removal's path (`$.entities[*].owner`), which the walk
//! knows from the tree it walks. The stream has no tree, so it keeps the path of the
//! containers open, as the walk's recorder does, and counts each member it leaves out by
//! the path and key — the same patterns, the same counts, in the same order.
//!
//! ```text
//! drop $..at:  {"a":{"at":1},"b":[{"at":2},{"at":3}]}   →   drop stripped 1 × $.a.at
//!                                                           drop stripped 2 × $.b[*].at
//! ```

use std::collections::HashMap;

use crate::manifest::{Entry, Kind, entries_by_path, push_key};

/// The path of the containers open, and the removals counted by (op, kind), then path.
pub(crate) struct Paths {
    path: String,
    by_path: HashMap<(usize, Kind), HashMap<String, u64>>,
    scratch: String,
}

impl Paths {
    pub(crate) fn new() -> Paths {
        Paths {
            path: String::from("$"),
            by_path: HashMap::new(),
            scratch: String::new(),
        }
    }

    /// Into the value of member `key`; the mark to [`Paths::leave`] it with.
    #[inline]
    pub(super) fn enter_key(&mut self, key: &str) -> usize {
        let mark = self.path.len();
        push_key(&mut self.path, key);
        mark
    }

    /// Into the elements of an array (all share the pattern `[*]`).
    #[inline]
    pub(super) fn enter_items(&mut self) -> usize {
        let mark = self.path.len();
        self.path.push_str("[*]");
        mark
    }

    #[inline]
    pub(super) fn leave(&mut self, mark: usize) {
        self.path.truncate(mark);
    }

    /// Op `op` removed member `key` of the object open, as `kind`.
    pub(super) fn removed(&mut self, op: usize, kind: Kind, key: &str) {
        self.scratch.clear();
        self.scratch.push_str(&self.path);
        push_key(&mut self.scratch, key);
        let paths = self.by_path.entry((op, kind)).or_default();
        match paths.get_mut(self.scratch.as_str()) {
            Some(n) => *n += 1,
            None => {
                paths.insert(self.scratch.clone(), 1);
            }
        }
    }

    /// The manifest's entries, `op_names` naming the ops by their index.
    pub(crate) fn entries(self, op_names: &[&'static str]) -> Vec<Entry> {
        let flat = self
            .by_path
            .into_iter()
            .flat_map(|((op, kind), paths)| {
                paths
                    .into_iter()
                    .map(move |(path, n)| ((op, kind, path), n))
            })
            .collect();
        entries_by_path(flat, op_names)
    }
}
