//! Who a request is, for a REST door's page cache: a cached page (a later page of a paged
//! response) is served only to a request that carries the same values of every header that
//! could say who is asking.
//!
//! Why every header by default: credentials travel in many headers (`Authorization`,
//! `Cookie`, `X-Api-Key`, GitLab's `PRIVATE-TOKEN`, `X-Auth-Token`, `Api-Key`, …), and a
//! list of known ones misses the next API's. So every request header counts, but for a short
//! list that cannot identify a caller (`NOT_IDENTITY`: content negotiation, the client's
//! name, caching and tracing headers). A header that differs per request (a request id)
//! only costs a cache miss: the door then asks the upstream again, with the caller's own
//! credentials, and the engine checks the cursor against that body. `[http]
//! identity_headers` names the headers exactly instead.
//!
//! ```
//! use pare::rest::identity::Identity;
//! let by_default = Identity::default();
//! let a = by_default.of(&[("Accept", "application/json"), ("PRIVATE-TOKEN", "alice")]);
//! let b = by_default.of(&[("Accept", "text/toon"), ("PRIVATE-TOKEN", "bob")]);
//! assert_ne!(a, b);
//! assert_eq!(a, by_default.of(&[("private-token", "alice"), ("User-Agent", "curl")]));
//! ```

/// Request headers that cannot identify a caller: they never decide whose pages a cursor
/// reaches (`x-pare-*`, pare's own parameters, are left out too).
pub(crate) const NOT_IDENTITY: [&str; 32] = [
    "accept",
    "accept-charset",
    "accept-encoding",
    "accept-language",
    "cache-control",
    "connection",
    "content-length",
    "dnt",
    "host",
    "if-match",
    "if-modified-since",
    "if-none-match",
    "if-range",
    "if-unmodified-since",
    "keep-alive",
    "origin",
    "pragma",
    "priority",
    "referer",
    "te",
    "upgrade-insecure-requests",
    "user-agent",
    "via",
    "x-forwarded-for",
    "x-forwarded-host",
    "x-forwarded-proto",
    "x-real-ip",
    "traceparent",
    "tracestate",
    "baggage",
    "x-request-id",
    "x-correlation-id",
];

/// Which request headers say who is asking.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Identity {
    /// Every header but `NOT_IDENTITY`, `sec-*` and `x-pare-*`.
    #[default]
    AllButKnown,
    /// Exactly these (lowercase names).
    Named(Vec<String>),
}

impl Identity {
    /// `[http] identity_headers`, when set.
    pub fn named(names: &[String]) -> Identity {
        Identity::Named(names.iter().map(|n| n.to_ascii_lowercase()).collect())
    }

    /// Whether the header `name` (lowercase) counts.
    fn counts(&self, name: &str) -> bool {
        match self {
            Identity::AllButKnown => {
                !NOT_IDENTITY.contains(&name)
                    && !name.starts_with("sec-")
                    && !name.starts_with("x-pare-")
            }
            Identity::Named(names) => names.iter().any(|n| n == name),
        }
    }

    /// The identifying headers of a request, as one byte string: each `name: value`
    /// (names lowercased, values as sent) on a line of its own, sorted, so header order
    /// and the case of names do not matter and repeated headers all count.
    pub fn of(&self, headers: &[(&str, &str)]) -> Vec<u8> {
        let mut lines: Vec<String> = headers
            .iter()
            .map(|(n, v)| (n.to_ascii_lowercase(), *v))
            .filter(|(n, _)| self.counts(n))
            .map(|(n, v)| format!("{n}: {v}\n"))
            .collect();
        lines.sort();
        lines.concat().into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: the cache was keyed by `Authorization`, `Cookie` and `X-Api-Key` only, so
    /// a caller with no credentials replaying a cursor got a `PRIVATE-TOKEN` user's page 2.
    #[test]
    fn credentials_in_any_header_tell_callers_apart() {
        let id = Identity::default();
        let none = id.of(&[("Accept", "application/json")]);
        for header in [
            "PRIVATE-TOKEN",
            "X-Auth-Token",
            "Api-Key",
            "Authorization",
            "X-Tenant",
        ] {
            let with = id.of(&[("Accept", "application/json"), (header, "secret")]);
            assert_ne!(none, with, "{header}");
        }
        // What cannot identify a caller does not split the cache.
        assert_eq!(
            none,
            id.of(&[
                ("accept", "text/plain"),
                ("User-Agent", "x"),
                ("traceparent", "00-1"),
                ("Sec-Fetch-Mode", "cors")
            ])
        );
    }

    #[test]
    fn named_headers_are_exactly_those() {
        let id = Identity::named(&["PRIVATE-TOKEN".to_owned()]);
        assert_eq!(
            id.of(&[("private-token", "a"), ("X-Tenant", "1")]),
            id.of(&[("PRIVATE-TOKEN", "a"), ("X-Tenant", "2")])
        );
        assert_ne!(
            id.of(&[("private-token", "a")]),
            id.of(&[("private-token", "b")])
        );
    }
}
