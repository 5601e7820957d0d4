//! The later pages of paged responses, under keys made of their cursor and of who asked.
//!
//! A paged response's first page goes to the client; the pages after it are stored here,
//! so that following `Link: rel="next"` is served without asking the upstream again
//! (and the pages are those of one response, even when the upstream's data moves on).
//! Embedded (the default): in this process, bounded in pages and bytes, with a time to
//! live. Redis (`--cache redis://…`): shared by every replica behind a load balancer, so a
//! cursor one replica gave is served by any other.
//!
//! The key is the cursor *and* a check of the request it pages (method, path, query,
//! `Authorization`, `Cookie`): a cursor does not let one caller read another's pages.
//! A miss (expired, evicted, or the cache unreachable) is not an error: the door asks the
//! upstream again and the engine checks the cursor against the new body.

mod embedded;
#[cfg(feature = "redis")]
mod redis;

use std::time::Duration;

use serde::{Deserialize, Serialize};

#[cfg(feature = "redis")]
pub use self::redis::RedisCache;
pub use embedded::EmbeddedCache;

/// One stored page: the response to send, less the headers that depend on the request
/// (`Link`, content coding).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CachedPage {
    /// The upstream's status (200–203).
    pub status: u16,
    pub body: String,
    pub content_type: String,
    /// The upstream's headers that describe the shaped body too, then `X-Pare-*`.
    pub headers: Vec<(String, String)>,
    /// The next page's cursor, for the `Link` header.
    pub next: Option<String>,
}

/// What a lookup found.
#[derive(Debug)]
pub enum Lookup {
    Hit(CachedPage),
    Miss,
    /// The cache could not be asked (Redis down); why.
    Unavailable(String),
}

/// The page cache of a door.
pub enum PageCache {
    Embedded(EmbeddedCache),
    #[cfg(feature = "redis")]
    Redis(RedisCache),
}

impl PageCache {
    pub async fn get(&self, key: &str) -> Lookup {
        match self {
            PageCache::Embedded(c) => c.get(key),
            #[cfg(feature = "redis")]
            PageCache::Redis(c) => c.get(key).await,
        }
    }

    /// Store pages; `Err(why)` when they could not be (the door logs it and goes on).
    pub async fn put(&self, pages: Vec<(String, CachedPage)>) -> Result<(), String> {
        match self {
            PageCache::Embedded(c) => {
                c.put(pages);
                Ok(())
            }
            #[cfg(feature = "redis")]
            PageCache::Redis(c) => c.put(pages).await,
        }
    }

    /// For the start-up line and `X-Pare-Cache`-style logs.
    pub fn describe(&self) -> String {
        match self {
            PageCache::Embedded(c) => c.describe(),
            #[cfg(feature = "redis")]
            PageCache::Redis(c) => c.describe(),
        }
    }

    pub fn ttl(&self) -> Duration {
        match self {
            PageCache::Embedded(c) => c.ttl(),
            #[cfg(feature = "redis")]
            PageCache::Redis(c) => c.ttl(),
        }
    }
}

/// The key of the page `cursor` names, for a request identified by `identity` (method,
/// path, query without pare's parameters, credentials).
pub fn key(cursor: &str, identity: &[&[u8]]) -> String {
    let who = pare::respond::cursor::check(identity.iter().copied());
    format!("pare:page:{cursor}:{who:012x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_differ_by_cursor_and_by_who_asks() {
        let a = key("C1", &[b"GET", b"/x", b"", b"Bearer a"]);
        assert_eq!(a, key("C1", &[b"GET", b"/x", b"", b"Bearer a"]));
        assert_ne!(a, key("C2", &[b"GET", b"/x", b"", b"Bearer a"]));
        assert_ne!(a, key("C1", &[b"GET", b"/x", b"", b"Bearer b"]));
        assert!(a.starts_with("pare:page:C1:"));
    }
}
