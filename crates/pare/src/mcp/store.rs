//! The stores behind `pare_more`: bounded in entries and bytes, with a time-to-live.
//!
//! A paged result stores its later pages here under the cursors the engine named them by
//! (see `crate::respond::cursor`); a shaped result its original ([`crate::mcp::originals`]). The
//! oldest entries are evicted first when a bound is hit; an expired or evicted key is
//! simply unknown.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// One later page of a result, as the engine made it, with its `_meta.pare`.
#[derive(Debug, Clone)]
pub struct CachedPage {
    /// The page: its text, note and record.
    pub page: crate::respond::Page,
    /// Its `_meta.pare`: the record in the proxy's words.
    pub meta: serde_json::Map<String, serde_json::Value>,
    /// A page of an error result: `pare_more` answers it with `isError` too.
    pub is_error: bool,
}

/// Limits of the cache.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The most entries kept at once. Default: 1024.
    pub max_pages: usize,
    /// The most bytes kept at once, by [`Weighed::bytes`] (one larger entry alone is still
    /// kept). Default: 64 MiB.
    pub max_bytes: usize,
    /// How long an entry is kept after it is stored (reading it does not renew it).
    /// Default: 30 minutes.
    pub ttl: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_pages: 1024,
            max_bytes: 64 << 20,
            ttl: Duration::from_secs(30 * 60),
        }
    }
}

/// What an entry costs against the byte bound.
pub trait Weighed {
    /// The size of the text it holds, in bytes.
    fn bytes(&self) -> usize;
}

impl Weighed for CachedPage {
    fn bytes(&self) -> usize {
        self.page.text.len()
    }
}

/// Cursor → page.
pub type PageCache = Store<CachedPage>;

/// Key → entry, bounded.
#[derive(Debug)]
pub struct Store<V> {
    limits: Limits,
    pages: HashMap<String, (Instant, V)>,
    /// Insertion order, for eviction.
    order: VecDeque<String>,
    bytes: usize,
}

impl<V: Weighed + Clone> Store<V> {
    /// An empty store, bounded by `limits`.
    pub fn new(limits: Limits) -> Store<V> {
        Store {
            limits,
            pages: HashMap::new(),
            order: VecDeque::new(),
            bytes: 0,
        }
    }

    /// The limits it keeps to.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Store a page under `cursor`, evicting the oldest pages to stay within the limits.
    /// The same cursor stored again (the same result asked for again) replaces the page.
    pub fn put(&mut self, cursor: String, page: V) {
        self.expire();
        if let Some((_, old)) = self.pages.remove(&cursor) {
            self.bytes -= old.bytes();
            self.order.retain(|c| *c != cursor);
        }
        let size = page.bytes();
        while !self.order.is_empty()
            && (self.order.len() >= self.limits.max_pages
                || self.bytes + size > self.limits.max_bytes)
        {
            self.evict_oldest();
        }
        self.bytes += size;
        self.order.push_back(cursor.clone());
        self.pages.insert(cursor, (Instant::now(), page));
    }

    /// The page a cursor names, if it is still cached. Pages stay until they expire, so a
    /// client may ask for the same page again.
    pub fn get(&mut self, cursor: &str) -> Option<V> {
        self.expire();
        self.pages.get(cursor).map(|(_, p)| p.clone())
    }

    fn expire(&mut self) {
        while let Some(c) = self.order.front() {
            match self.pages.get(c) {
                Some((t, _)) if t.elapsed() < self.limits.ttl => break,
                _ => self.evict_oldest(),
            }
        }
    }

    fn evict_oldest(&mut self) {
        if let Some(c) = self.order.pop_front()
            && let Some((_, p)) = self.pages.remove(&c)
        {
            self.bytes -= p.bytes();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(text: &str) -> CachedPage {
        let policy = crate::Policy::builtin_default();
        let mut page = crate::respond::respond(crate::respond::Request::new(
            crate::respond::Input::Text("1"),
            &policy,
        ))
        .unwrap()
        .page;
        page.text = text.into();
        CachedPage {
            page,
            meta: Default::default(),
            is_error: false,
        }
    }

    #[test]
    fn bounded_by_pages_and_bytes_oldest_evicted_first() {
        let mut c = PageCache::new(Limits {
            max_pages: 2,
            max_bytes: 10,
            ttl: Duration::from_secs(60),
        });
        c.put("a".into(), page("1234"));
        c.put("b".into(), page("1234"));
        c.put("c".into(), page("1234"));
        assert!(c.get("a").is_none());
        assert!(c.get("b").is_some() && c.get("c").is_some());
        c.put("d".into(), page("123456789"));
        assert!(c.get("b").is_none() && c.get("c").is_none());
        assert_eq!(c.get("d").unwrap().page.text, "123456789");
    }

    #[test]
    fn the_same_cursor_stored_again_replaces_its_page() {
        let mut c = PageCache::new(Limits::default());
        c.put("a".into(), page("old"));
        c.put("a".into(), page("new!"));
        assert_eq!(c.get("a").unwrap().page.text, "new!");
        assert_eq!((c.order.len(), c.bytes), (1, 4));
    }

    #[test]
    fn expired_pages_are_unknown() {
        let mut c = PageCache::new(Limits {
            ttl: Duration::ZERO,
            ..Limits::default()
        });
        c.put("a".into(), page("x"));
        assert!(c.get("a").is_none());
    }
}
