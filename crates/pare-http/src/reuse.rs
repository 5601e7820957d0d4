//! Bodies shaped lately, and what they were shaped into: the same body asked for the same
//! way again is answered without shaping it again.
//!
//! Why: an API asked for the same resource answers with the same bytes (a list polled by
//! agents, a dashboard's query), and shaping is the costly part of a shaped response
//! (parse, ops, render, and counting the tokens of both bodies). The engine is a function
//! of (route policy, what the caller asked, status, `Content-Type`, body): same input, the
//! same bytes out. So a hit is exact by construction, and it is checked, not trusted to a
//! hash: the key is a hash, and a hit compares every input, the body byte for byte.
//!
//! Bounded in entries and bytes (the body held plus its pages), oldest out first; `0`
//! bytes turns it off.
//!
//! ```text
//! GET /entities  (upstream body b, 120 KB)  →  shaped: parse, ops, render, count; stored
//! GET /entities  (the same b again)         →  the stored pages, after one compare of b
//! GET /entities  (b changed by one byte)    →  shaped again
//! ```

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use pare::mcp::store::{Limits, Store, Weighed};
use pare::rest::ask::Ask;
use pare::rest::response::Shaped;
use pare::rest::routes::RoutePolicy;
use xxhash_rust::xxh3::Xxh3;

use crate::codec::Coding;

/// Everything a shaped response is a function of.
#[derive(Clone, Copy)]
pub struct Input<'a> {
    pub route: &'a Arc<RoutePolicy>,
    pub ask: &'a Ask,
    pub status: u16,
    pub content_type: Option<&'a str>,
    /// The body's coding as it came (the body is kept encoded: decoding is part of the
    /// work a hit saves).
    pub coding: Coding,
    pub body: &'a Bytes,
}

/// The store; `None` inside: off.
pub struct Reuse {
    store: Option<Mutex<Store<Entry>>>,
}

/// What [`Reuse::lookup`] found.
pub enum Lookup {
    /// Reuse is off: nothing is kept.
    Off,
    /// Shaped lately, asked for the same way: its pages.
    Hit(Arc<Shaped>),
    /// Not kept: what it is shaped into may be kept under this key ([`Reuse::put`]).
    Miss(Key),
}

/// Where an input's pages are kept: a hash of every input (computed once per lookup, and
/// outside the lock).
pub struct Key(String);

#[derive(Clone)]
struct Entry(Arc<Kept>);

struct Kept {
    route: Arc<RoutePolicy>,
    ask: Ask,
    status: u16,
    content_type: Option<String>,
    coding: Coding,
    body: Bytes,
    shaped: Arc<Shaped>,
}

impl Weighed for Entry {
    fn bytes(&self) -> usize {
        let pages =
            |s: &Shaped| s.body.len() + s.headers.iter().map(|(_, v)| v.len()).sum::<usize>();
        self.0.body.len()
            + pages(&self.0.shaped)
            + self.0.shaped.later.iter().map(pages).sum::<usize>()
    }
}

impl Reuse {
    /// At most `max_bytes` (bodies and their pages) and `max_entries`, each kept at most
    /// `ttl`; `max_bytes == 0`: off.
    pub fn new(max_bytes: usize, max_entries: usize, ttl: Duration) -> Reuse {
        let store = (max_bytes > 0 && max_entries > 0).then(|| {
            Mutex::new(Store::new(Limits {
                max_pages: max_entries,
                max_bytes,
                ttl,
            }))
        });
        Reuse { store }
    }

    /// What `input` was shaped into, if it was shaped lately.
    pub fn lookup(&self, input: &Input<'_>) -> Lookup {
        let Some(store) = self.store.as_ref() else {
            return Lookup::Off;
        };
        let key = key(input);
        let entry = store.lock().expect("reuse").get(&key.0);
        let same = |k: &Kept| {
            Arc::ptr_eq(&k.route, input.route)
                && k.ask == *input.ask
                && k.status == input.status
                && k.content_type.as_deref() == input.content_type
                && k.coding == input.coding
                && k.body == *input.body
        };
        match entry {
            Some(Entry(k)) if same(&k) => Lookup::Hit(k.shaped.clone()),
            _ => Lookup::Miss(key),
        }
    }

    /// Keep what `input` (which missed under `key`) was shaped into. A body larger than the
    /// whole budget is not kept.
    pub fn put(&self, key: Key, input: &Input<'_>, shaped: Arc<Shaped>) {
        let Some(store) = self.store.as_ref() else {
            return;
        };
        let entry = Entry(Arc::new(Kept {
            route: input.route.clone(),
            ask: input.ask.clone(),
            status: input.status,
            content_type: input.content_type.map(str::to_owned),
            coding: input.coding,
            body: input.body.clone(),
            shaped,
        }));
        let bytes = entry.bytes();
        let mut store = store.lock().expect("reuse");
        if bytes <= store.limits().max_bytes {
            store.put(key.0, entry);
        }
    }
}

/// A hash of every input: where to look. A hit is then compared in full.
fn key(input: &Input<'_>) -> Key {
    let mut h = Xxh3::new();
    let mut part = |bytes: &[u8]| {
        h.update(&(bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    part(&(Arc::as_ptr(input.route) as usize).to_le_bytes());
    part(format!("{:?}", input.ask).as_bytes());
    part(&input.status.to_le_bytes());
    part(input.content_type.unwrap_or("\u{0}none").as_bytes());
    part(input.coding.name().as_bytes());
    part(input.body);
    Key(format!("{:032x}", h.digest128()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the engine makes of `body` on `route`, as the proxy would ask.
    fn shaped(route: &RoutePolicy, body: &str) -> Arc<Shaped> {
        let ask = Ask::default();
        match pare::rest::response::shape(
            route,
            &ask,
            200,
            Some("application/json"),
            false,
            body.as_bytes(),
        ) {
            pare::rest::response::Outcome::Shaped(s) => Arc::from(s),
            other => panic!("not shaped: {other:?}"),
        }
    }

    fn route() -> Arc<RoutePolicy> {
        Arc::new(RoutePolicy {
            name: "GET /x".into(),
            policy: Arc::new(pare::Policy::parse("").expect("empty policy")),
            default_level: "full".into(),
            format: pare::Format::Json,
            max_tokens: None,
        })
    }

    #[test]
    fn a_body_is_reused_only_when_every_input_is_the_same() {
        let reuse = Reuse::new(1 << 20, 16, Duration::from_secs(60));
        let route = route();
        let ask = Ask::default();
        let body = Bytes::from_static(b"{\"a\":1}");
        let input = Input {
            route: &route,
            ask: &ask,
            status: 200,
            content_type: Some("application/json"),
            coding: Coding::Identity,
            body: &body,
        };
        let Lookup::Miss(key) = reuse.lookup(&input) else {
            panic!("kept before it was put")
        };
        reuse.put(key, &input, shaped(&route, "{\"a\": 1}"));
        let Lookup::Hit(kept) = reuse.lookup(&input) else {
            panic!("not kept")
        };
        assert_eq!(kept.body, "{\"a\":1}");

        let other_body = Bytes::from_static(b"{\"a\":2}");
        let brief = Ask {
            level: Some("brief".into()),
            ..Ask::default()
        };
        let other_route = self::route();
        let variants = [
            Input {
                body: &other_body,
                ..input
            },
            Input {
                ask: &brief,
                ..input
            },
            Input {
                status: 201,
                ..input
            },
            Input {
                content_type: None,
                ..input
            },
            Input {
                coding: Coding::Gzip,
                ..input
            },
            Input {
                route: &other_route,
                ..input
            },
        ];
        for v in &variants {
            assert!(matches!(reuse.lookup(v), Lookup::Miss(_)));
        }
    }

    #[test]
    fn reuse_off_keeps_nothing_and_a_body_over_the_budget_is_not_kept() {
        let route = route();
        let ask = Ask::default();
        let body = Bytes::from(vec![b' '; 2048]);
        let input = Input {
            route: &route,
            ask: &ask,
            status: 200,
            content_type: None,
            coding: Coding::Identity,
            body: &body,
        };
        let off = Reuse::new(0, 16, Duration::from_secs(60));
        off.put(key(&input), &input, shaped(&route, "[]"));
        assert!(matches!(off.lookup(&input), Lookup::Off));
        let small = Reuse::new(1024, 16, Duration::from_secs(60));
        small.put(key(&input), &input, shaped(&route, "[]"));
        assert!(matches!(small.lookup(&input), Lookup::Miss(_)));
    }
}
