//! The page cache in Redis, shared by replicas: `SET key page EX ttl`, `GET key`.
//!
//! Redis going away must not take the door with it: every command has a short deadline,
//! a failed connection is dropped and tried again at most once a second, and until then
//! lookups report [`Lookup::Unavailable`] (the door then asks the upstream) and stores
//! fail (the door logs it; a cursor it gave then meets a miss). The first failure and
//! the recovery are logged once each.

use std::time::{Duration, Instant};

use redis::aio::MultiplexedConnection;
use tokio::sync::Mutex;
use tokio::time::timeout;

use super::{CachedPage, Lookup};
use crate::access;

/// How long one command (or a connection attempt) may take.
const DEADLINE: Duration = Duration::from_millis(500);
/// How long after a failure the next connection attempt waits.
const RETRY: Duration = Duration::from_secs(1);

pub struct RedisCache {
    client: redis::Client,
    url: String,
    ttl: Duration,
    state: Mutex<State>,
}

struct State {
    conn: Option<MultiplexedConnection>,
    next_try: Instant,
    down: bool,
}

/// A Redis URL pare cannot use.
#[derive(Debug, thiserror::Error)]
#[error("--cache {url}: {why}")]
pub struct RedisUrlError {
    pub url: String,
    pub why: String,
}

impl RedisCache {
    /// A cache at `url` (`redis://[user:password@]host[:port][/db]`). No connection is made
    /// yet: pare starts while Redis is down, and uses it once it is up.
    pub fn new(url: &str, ttl: Duration) -> Result<RedisCache, RedisUrlError> {
        let client = redis::Client::open(url).map_err(|e| RedisUrlError {
            url: url.to_owned(),
            why: e.to_string(),
        })?;
        Ok(RedisCache {
            client,
            url: redacted(url),
            ttl,
            state: Mutex::new(State {
                conn: None,
                next_try: Instant::now(),
                down: false,
            }),
        })
    }

    async fn connection(&self) -> Result<MultiplexedConnection, String> {
        let mut s = self.state.lock().await;
        if let Some(c) = &s.conn {
            return Ok(c.clone());
        }
        if Instant::now() < s.next_try {
            return Err(format!("Redis at {} is unreachable (retrying)", self.url));
        }
        match timeout(DEADLINE, self.client.get_multiplexed_async_connection()).await {
            Ok(Ok(c)) => {
                if s.down {
                    access::event(&format!("page cache: Redis at {} is back", self.url));
                    s.down = false;
                }
                s.conn = Some(c.clone());
                Ok(c)
            }
            Ok(Err(e)) => Err(self.went_down(&mut s, &e.to_string())),
            Err(_) => Err(self.went_down(&mut s, "no connection within 500 ms")),
        }
    }

    fn went_down(&self, s: &mut State, why: &str) -> String {
        s.conn = None;
        s.next_try = Instant::now() + RETRY;
        let message = format!("Redis at {} is unreachable: {why}", self.url);
        if !s.down {
            access::event(&format!(
                "page cache: {message}; serving on, cursors ask the upstream again"
            ));
            s.down = true;
        }
        message
    }

    async fn failed(&self, why: &str) -> String {
        let mut s = self.state.lock().await;
        self.went_down(&mut s, why)
    }

    pub async fn get(&self, key: &str) -> Lookup {
        let mut conn = match self.connection().await {
            Ok(c) => c,
            Err(why) => return Lookup::Unavailable(why),
        };
        let got = timeout(
            DEADLINE,
            redis::cmd("GET")
                .arg(key)
                .query_async::<Option<Vec<u8>>>(&mut conn),
        )
        .await;
        match got {
            Ok(Ok(Some(bytes))) => match serde_json::from_slice(&bytes) {
                Ok(page) => Lookup::Hit(page),
                // Not a page pare wrote (another version's, or another program's): a miss.
                Err(_) => Lookup::Miss,
            },
            Ok(Ok(None)) => Lookup::Miss,
            Ok(Err(e)) => Lookup::Unavailable(self.failed(&e.to_string()).await),
            Err(_) => Lookup::Unavailable(self.failed("no answer within 500 ms").await),
        }
    }

    pub async fn put(&self, pages: Vec<(String, CachedPage)>) -> Result<(), String> {
        if pages.is_empty() {
            return Ok(());
        }
        let mut conn = self.connection().await?;
        let mut pipe = redis::pipe();
        for (key, page) in &pages {
            let value = serde_json::to_vec(page).map_err(|e| e.to_string())?;
            pipe.cmd("SET")
                .arg(key)
                .arg(value)
                .arg("EX")
                .arg(self.ttl.as_secs().max(1))
                .ignore();
        }
        match timeout(DEADLINE, pipe.query_async::<()>(&mut conn)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(self.failed(&e.to_string()).await),
            Err(_) => Err(self.failed("no answer within 500 ms").await),
        }
    }

    pub fn describe(&self) -> String {
        format!("redis ({}, {} s)", self.url, self.ttl.as_secs())
    }

    pub fn ttl(&self) -> Duration {
        self.ttl
    }
}

/// The URL without its password, for logs.
fn redacted(url: &str) -> String {
    match (url.split_once("://"), url.rfind('@')) {
        (Some((scheme, rest)), Some(at)) => {
            let creds = &url[scheme.len() + 3..at];
            let user = creds.split(':').next().unwrap_or("");
            let host = &url[at + 1..];
            let _ = rest;
            format!("{scheme}://{user}:***@{host}")
        }
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_stay_out_of_logs_and_bad_urls_are_refused() {
        assert_eq!(
            redacted("redis://u:secret@h:6379/0"),
            "redis://u:***@h:6379/0"
        );
        assert_eq!(redacted("redis://h:6379"), "redis://h:6379");
        assert!(RedisCache::new("http://nope", Duration::from_secs(1)).is_err());
    }

    #[tokio::test]
    async fn an_unreachable_redis_is_unavailable_not_fatal() {
        // Port 1 on loopback: nothing listens there.
        let c = RedisCache::new("redis://127.0.0.1:1/", Duration::from_secs(5)).unwrap();
        assert!(matches!(c.get("k").await, Lookup::Unavailable(_)));
        assert!(
            c.put(vec![(
                "k".into(),
                CachedPage {
                    status: 200,
                    body: "{}".into(),
                    content_type: "application/json".into(),
                    headers: vec![],
                    next: None,
                }
            )])
            .await
            .is_err()
        );
    }
}
