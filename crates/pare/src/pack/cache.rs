//! Previews and outline facts per chunk content, in a bounded least-recently-used cache.
//!
//! Why: search results repeat across calls (the same chunk for a rephrased query, the next
//! page, a retry), and a preview costs a parse; a long-lived door (the MCP proxy) keeps one
//! cache for all its calls. Keys are a hash of the content, so a changed chunk misses.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, Hasher};

use super::chunks::Chunk;
use super::outline;

/// What a key names: a preview at a head/tail fraction, or the outline facts.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum What {
    Preview(u64),
    Facts,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    content: u64,
    what: What,
}

enum Entry {
    Text(String),
    Facts(Vec<String>, Option<String>),
}

/// A bounded LRU of previews and outline facts.
pub struct PreviewCache {
    capacity: usize,
    tick: u64,
    entries: HashMap<Key, (Entry, u64)>,
    hasher: std::hash::RandomState,
    /// Token counts of rendered blocks, by tokenizer and text.
    counts: HashMap<(u64, u64), usize>,
    /// Lookups answered from the cache, and all lookups (for tests and metrics).
    pub hits: u64,
    /// Every lookup of a preview or outline facts, hit or miss.
    pub lookups: u64,
}

impl PreviewCache {
    /// An empty cache of at most `capacity` previews and outline facts (at least 1), least
    /// recently used dropped first; it remembers up to 8 × `capacity` token counts.
    pub fn new(capacity: usize) -> PreviewCache {
        PreviewCache {
            capacity: capacity.max(1),
            tick: 0,
            entries: HashMap::new(),
            hasher: std::hash::RandomState::new(),
            counts: HashMap::new(),
            hits: 0,
            lookups: 0,
        }
    }

    fn content_key(&self, chunk: &Chunk) -> u64 {
        let mut h = self.hasher.build_hasher();
        chunk.text.hash(&mut h);
        chunk.lang.hash(&mut h);
        chunk.line_start.hash(&mut h);
        h.finish()
    }

    fn get_or(&mut self, key: Key, make: impl FnOnce() -> Entry) -> &Entry {
        self.tick += 1;
        self.lookups += 1;
        let tick = self.tick;
        if self.entries.contains_key(&key) {
            self.hits += 1;
        } else {
            if self.entries.len() >= self.capacity
                && let Some(oldest) = self
                    .entries
                    .iter()
                    .min_by_key(|(_, (_, t))| *t)
                    .map(|(k, _)| *k)
            {
                self.entries.remove(&oldest);
            }
            self.entries.insert(key, (make(), tick));
        }
        let slot = self.entries.get_mut(&key).expect("just inserted");
        slot.1 = tick;
        &slot.0
    }

    /// The preview of `chunk` at `fraction`, made by `make` on a miss.
    pub fn preview(
        &mut self,
        chunk: &Chunk,
        fraction: f64,
        make: impl FnOnce(&Chunk) -> String,
    ) -> String {
        let key = Key {
            content: self.content_key(chunk),
            what: What::Preview(fraction.to_bits()),
        };
        match self.get_or(key, || Entry::Text(make(chunk))) {
            Entry::Text(t) => t.clone(),
            Entry::Facts(..) => unreachable!("preview keys hold text"),
        }
    }

    /// `tok`'s count of `text`, remembered (blocks recur as a pack degrades and across packs).
    pub fn count(&mut self, tok: &dyn crate::tokens::Tokenizer, text: &str) -> usize {
        let key = (self.hasher.hash_one(tok.name()), self.hasher.hash_one(text));
        if self.counts.len() >= self.capacity * 8 {
            self.counts.clear(); // cheap to rebuild; keeps memory bounded
        }
        *self.counts.entry(key).or_insert_with(|| tok.count(text))
    }

    /// The chunk's symbol names and first doc line.
    pub(crate) fn outline_facts(&mut self, chunk: &Chunk) -> (Vec<String>, Option<String>) {
        let key = Key {
            content: self.content_key(chunk),
            what: What::Facts,
        };
        let entry = self.get_or(key, || {
            let o = outline::outline(&chunk.text, chunk.lang);
            let mut names: Vec<String> = Vec::new();
            for s in o.symbols {
                if !names.contains(&s.name) {
                    names.push(s.name);
                }
            }
            Entry::Facts(names, o.first_doc)
        });
        match entry {
            Entry::Facts(names, doc) => (names.clone(), doc.clone()),
            Entry::Text(_) => unreachable!("fact keys hold facts"),
        }
    }
}
