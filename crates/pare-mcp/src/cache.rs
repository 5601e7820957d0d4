//! The page cache behind `pare_more`: bounded in entries and bytes, with a time-to-live.
//!
//! A paged result stores its later pages here under short opaque cursors (10 base-62
//! characters from a randomly seeded hash, not an encoding of anything). The oldest entries
//! are evicted first when a bound is hit; an expired or evicted cursor is simply unknown.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, RandomState};
use std::time::{Duration, Instant};

/// One later page of a result.
#[derive(Debug, Clone)]
pub struct Page {
    pub text: String,
    /// 1-based page number and page count.
    pub page: usize,
    pub pages: usize,
    /// The cursor of the page after this one.
    pub next: Option<String>,
    /// The `_meta.pare` facts shared by all pages of the result (tool, level, tokens before).
    pub meta: serde_json::Map<String, serde_json::Value>,
}

/// Limits of the cache.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_pages: usize,
    pub max_bytes: usize,
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

/// Cursor → page.
#[derive(Debug)]
pub struct PageCache {
    limits: Limits,
    pages: HashMap<String, (Instant, Page)>,
    /// Insertion order, for eviction.
    order: VecDeque<String>,
    bytes: usize,
    seed: RandomState,
    counter: u64,
}

impl PageCache {
    pub fn new(limits: Limits) -> PageCache {
        PageCache {
            limits,
            pages: HashMap::new(),
            order: VecDeque::new(),
            bytes: 0,
            seed: RandomState::new(),
            counter: 0,
        }
    }

    /// A fresh cursor, unique in this process.
    pub fn new_cursor(&mut self) -> String {
        loop {
            self.counter += 1;
            let mut n = self.seed.hash_one(self.counter);
            const DIGITS: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
            let mut s = String::with_capacity(10);
            for _ in 0..10 {
                s.push(DIGITS[(n % 62) as usize] as char);
                n /= 62;
            }
            if !self.pages.contains_key(&s) {
                return s;
            }
        }
    }

    /// Store a page under `cursor`, evicting the oldest pages to stay within the limits.
    pub fn put(&mut self, cursor: String, page: Page) {
        self.expire();
        let size = page.text.len();
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
    pub fn get(&mut self, cursor: &str) -> Option<Page> {
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
            self.bytes -= p.text.len();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(text: &str) -> Page {
        Page {
            text: text.into(),
            page: 2,
            pages: 2,
            next: None,
            meta: Default::default(),
        }
    }

    #[test]
    fn cursors_are_short_opaque_and_distinct() {
        let mut c = PageCache::new(Limits::default());
        let a = c.new_cursor();
        let b = c.new_cursor();
        assert_eq!(a.len(), 10);
        assert!(a.chars().all(|ch| ch.is_ascii_alphanumeric()));
        assert_ne!(a, b);
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
        assert_eq!(c.get("d").unwrap().text, "123456789");
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
