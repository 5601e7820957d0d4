//! The in-process page cache: the engine's bounded store (pages, bytes, time to live),
//! behind a lock.

use std::sync::Mutex;
use std::time::Duration;

use pare::mcp::store::{Limits, Store, Weighed};

use super::{CachedPage, Lookup};

impl Weighed for CachedPage {
    fn bytes(&self) -> usize {
        self.body.len()
            + self
                .headers
                .iter()
                .map(|(k, v)| k.len() + v.len())
                .sum::<usize>()
    }
}

pub struct EmbeddedCache {
    store: Mutex<Store<CachedPage>>,
    limits: Limits,
}

impl EmbeddedCache {
    pub fn new(limits: Limits) -> EmbeddedCache {
        EmbeddedCache {
            store: Mutex::new(Store::new(limits)),
            limits,
        }
    }

    pub fn get(&self, key: &str) -> Lookup {
        match self.store.lock().expect("page cache").get(key) {
            Some(p) => Lookup::Hit(p),
            None => Lookup::Miss,
        }
    }

    pub fn put(&self, pages: Vec<(String, CachedPage)>) {
        let mut store = self.store.lock().expect("page cache");
        for (k, p) in pages {
            store.put(k, p);
        }
    }

    pub fn describe(&self) -> String {
        format!(
            "embedded ({} pages, {} MiB, {} s)",
            self.limits.max_pages,
            self.limits.max_bytes >> 20,
            self.limits.ttl.as_secs()
        )
    }

    pub fn ttl(&self) -> Duration {
        self.limits.ttl
    }
}
