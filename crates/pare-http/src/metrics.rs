//! What `pare http` has done, for Prometheus: counters and a latency histogram by route,
//! status and what pare did, tokens before and after, pages served, cache lookups,
//! upstream errors and idle cut-offs, and the bodies held for shaping now. Served in the
//! text exposition format (0.0.4) on a listener of its own (`--metrics ADDR`), so scraping
//! never competes with the API's clients and the API's port exposes nothing new.
//!
//! Each request is counted from its access-log entry ([`Metrics::record`]), once its
//! response head is ready: the same facts the log line states, so the two never disagree.
//! Route labels are the route's name (its first pattern as written, `GET /api/entities`),
//! or `none` for a request no route shapes: a bounded set, never the raw path.
//!
//! ```text
//! pare_http_requests_total{route="GET /api/entities",status="200",outcome="shaped"} 12
//! pare_http_tokens_before_total{route="GET /api/entities"} 425076
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{Response, StatusCode};
use serde_json::Value;

use crate::access::Entry;
use crate::held::HeldBytes;
use crate::idle;

/// Upper bounds of the latency buckets, in seconds.
pub const BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];

/// The counters, behind one lock (a few map updates per request).
pub struct Metrics {
    inner: Mutex<Inner>,
    held: HeldBytes,
}

#[derive(Default)]
struct Inner {
    requests: BTreeMap<(String, u16, String), u64>,
    latency: BTreeMap<String, Histogram>,
    tokens_before: BTreeMap<String, u64>,
    tokens_after: BTreeMap<String, u64>,
    pages: BTreeMap<(String, &'static str), u64>,
    cache: BTreeMap<String, u64>,
    reuse: BTreeMap<String, u64>,
    upstream_errors: BTreeMap<&'static str, u64>,
}

/// A latency histogram over [`BUCKETS`] (the pare doors' one shape of histogram).
#[derive(Debug, Default, Clone)]
pub struct Histogram {
    counts: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

impl Histogram {
    /// Count one observation of `secs` seconds.
    pub fn observe(&mut self, secs: f64) {
        for (i, le) in BUCKETS.iter().enumerate() {
            if secs <= *le {
                self.counts[i] += 1;
            }
        }
        self.count += 1;
        self.sum += secs;
    }

    /// Its `_bucket`, `_sum` and `_count` samples, named `name`, with `labels`.
    pub fn render(&self, out: &mut String, name: &str, labels: &[(&str, &str)]) {
        let bucket = format!("{name}_bucket");
        for (le, n) in BUCKETS.iter().map(f64::to_string).zip(self.counts) {
            let mut l = labels.to_vec();
            l.push(("le", &le));
            sample(out, &bucket, &l, n as f64);
        }
        let mut l = labels.to_vec();
        l.push(("le", "+Inf"));
        sample(out, &bucket, &l, self.count as f64);
        sample(out, &format!("{name}_sum"), labels, self.sum);
        sample(out, &format!("{name}_count"), labels, self.count as f64);
    }
}

impl Metrics {
    /// Metrics that report `held` as the bodies held for shaping.
    pub fn new(held: HeldBytes) -> Metrics {
        Metrics {
            inner: Mutex::new(Inner::default()),
            held,
        }
    }

    /// Count one request from its access-log entry, answered `status` after `took`.
    pub fn record(&self, entry: &Entry, status: u16, took: Duration) {
        let text = |k: &str| entry.fields.get(k).and_then(Value::as_str);
        let number = |k: &str| entry.fields.get(k).and_then(Value::as_u64);
        let route = text("route").unwrap_or("none").to_owned();
        let outcome = match text("pare") {
            Some("shaped") => "shaped",
            Some("passed") => "passed",
            Some("refused") => "refused",
            Some("cache hit") => "cache_hit",
            Some("untouched route") => "untouched",
            _ => "error",
        };
        let mut m = self.inner.lock().expect("metrics");
        *m.requests
            .entry((route.clone(), status, outcome.to_owned()))
            .or_default() += 1;
        m.latency
            .entry(route.clone())
            .or_default()
            .observe(took.as_secs_f64());
        if outcome == "shaped" || outcome == "cache_hit" {
            if let Some(n) = number("tokens_before") {
                *m.tokens_before.entry(route.clone()).or_default() += n;
            }
            if let Some(n) = number("tokens_after") {
                *m.tokens_after.entry(route.clone()).or_default() += n;
            }
            let source = if outcome == "shaped" {
                "upstream"
            } else {
                "cache"
            };
            *m.pages.entry((route, source)).or_default() += 1;
        }
        if let Some(result) = text("cache") {
            *m.cache.entry(result.to_owned()).or_default() += 1;
        }
        if let Some(result) = text("reuse") {
            *m.reuse.entry(result.to_owned()).or_default() += 1;
        }
        if let Some(why) = text("upstream_error") {
            let kind = if status == 504 {
                "timeout"
            } else if why.starts_with("cannot connect") {
                "connect"
            } else {
                "failed"
            };
            *m.upstream_errors.entry(kind).or_default() += 1;
        }
    }

    /// Everything, in the Prometheus text format.
    pub fn render(&self) -> String {
        let m = self.inner.lock().expect("metrics");
        let mut out = String::with_capacity(4096);
        header(
            &mut out,
            "pare_http_requests_total",
            "counter",
            "Requests answered, by route, status and what pare did (shaped, passed, untouched, refused, cache_hit, error).",
        );
        for ((route, status, outcome), n) in &m.requests {
            let labels = [
                ("route", route.as_str()),
                ("status", &status.to_string()),
                ("outcome", outcome),
            ];
            sample(&mut out, "pare_http_requests_total", &labels, *n as f64);
        }
        header(
            &mut out,
            "pare_http_request_duration_seconds",
            "histogram",
            "Time from a request's arrival to its response head, by route.",
        );
        for (route, h) in &m.latency {
            let labels = [("route", route.as_str())];
            h.render(&mut out, "pare_http_request_duration_seconds", &labels);
        }
        counter_by(
            &mut out,
            "pare_http_tokens_before_total",
            "Tokens (o200k_base) of the upstream bodies pare shaped or served pages of, by route.",
            "route",
            m.tokens_before.iter().map(|(k, n)| (k, *n)),
        );
        counter_by(
            &mut out,
            "pare_http_tokens_after_total",
            "Tokens (o200k_base) of the pages pare sent, by route.",
            "route",
            m.tokens_after.iter().map(|(k, n)| (k, *n)),
        );
        header(
            &mut out,
            "pare_http_pages_served_total",
            "counter",
            "Shaped pages sent, by route and where they came from (upstream: shaped now; cache: a later page).",
        );
        for ((route, source), n) in &m.pages {
            let labels = [("route", route.as_str()), ("source", *source)];
            sample(&mut out, "pare_http_pages_served_total", &labels, *n as f64);
        }
        counter_by(
            &mut out,
            "pare_http_cache_lookups_total",
            "Page-cache lookups for a cursor, by result (hit, miss, unavailable).",
            "result",
            m.cache.iter().map(|(k, n)| (k, *n)),
        );
        counter_by(
            &mut out,
            "pare_http_reuse_lookups_total",
            "Upstream bodies looked up among those shaped lately, by result (hit: not shaped again, miss).",
            "result",
            m.reuse.iter().map(|(k, n)| (k, *n)),
        );
        counter_by(
            &mut out,
            "pare_http_upstream_errors_total",
            "Requests the upstream failed before its response head, by kind (connect, timeout, failed).",
            "kind",
            m.upstream_errors.iter().map(|(k, n)| (k, *n)),
        );
        counter_by(
            &mut out,
            "pare_http_idle_timeouts_total",
            "Bodies cut off because their peer sent nothing for the idle timeout, by peer.",
            "peer",
            [
                ("upstream", idle::UPSTREAM_CUTS.load(Ordering::Relaxed)),
                ("client", idle::CLIENT_CUTS.load(Ordering::Relaxed)),
            ],
        );
        header(
            &mut out,
            "pare_http_bodies_held",
            "gauge",
            "Upstream bodies held for shaping now.",
        );
        sample(
            &mut out,
            "pare_http_bodies_held",
            &[],
            self.held.holders() as f64,
        );
        header(
            &mut out,
            "pare_http_bodies_held_bytes",
            "gauge",
            "Memory charged now for the upstream bodies held for shaping: 5 bytes per byte of body (its text, parse tree and output), counted in KiB.",
        );
        sample(
            &mut out,
            "pare_http_bodies_held_bytes",
            &[],
            self.held.in_use() as f64,
        );
        header(
            &mut out,
            "pare_http_bodies_held_max_bytes",
            "gauge",
            "The budget of memory for bodies held for shaping (--max-held-bytes).",
        );
        sample(
            &mut out,
            "pare_http_bodies_held_max_bytes",
            &[],
            self.held.max() as f64,
        );
        out
    }
}

/// The handler of a metrics listener: `GET /metrics` is `render()`'s text, anything else
/// 404. Both proxies serve theirs with it.
pub fn handler(render: Arc<dyn Fn() -> String + Send + Sync>) -> crate::server::Handler {
    Arc::new(move |req, _peer| {
        let render = render.clone();
        Box::pin(async move {
            if req.uri().path() != "/metrics" {
                return crate::body::error(StatusCode::NOT_FOUND, "metrics are at /metrics");
            }
            let mut r = Response::new(crate::body::full(render()));
            r.headers_mut().insert(
                CONTENT_TYPE,
                HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
            );
            r
        })
    })
}

/// A counter with one label: its `# HELP` and `# TYPE` lines, then a sample per
/// (label value, count).
pub fn counter_by<K: AsRef<str>>(
    out: &mut String,
    name: &str,
    help: &str,
    label: &str,
    values: impl IntoIterator<Item = (K, u64)>,
) {
    header(out, name, "counter", help);
    for (value, n) in values {
        sample(out, name, &[(label, value.as_ref())], n as f64);
    }
}

/// A metric's `# HELP` and `# TYPE` lines.
pub fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// One sample line, its label values escaped as the text format asks.
pub fn sample(out: &mut String, name: &str, labels: &[(&str, &str)], value: f64) {
    out.push_str(name);
    if !labels.is_empty() {
        out.push('{');
        for (i, (k, v)) in labels.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(k);
            out.push_str("=\"");
            for c in v.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '"' => out.push_str("\\\""),
                    '\n' => out.push_str("\\n"),
                    c => out.push(c),
                }
            }
            out.push('"');
        }
        out.push('}');
    }
    let _ = writeln!(out, " {value}");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(pairs: &[(&str, Value)]) -> Entry {
        let mut e = Entry::default();
        for (k, v) in pairs {
            e.set(k, v.clone());
        }
        e
    }

    #[test]
    fn requests_are_counted_by_route_status_and_outcome() {
        let m = Metrics::new(HeldBytes::new(1 << 20));
        let shaped = entry(&[
            ("route", "GET /a \"x\"".into()),
            ("pare", "shaped".into()),
            ("tokens_before", 900.into()),
            ("tokens_after", 300.into()),
        ]);
        m.record(&shaped, 200, Duration::from_millis(3));
        m.record(&shaped, 200, Duration::from_millis(30));
        m.record(
            &entry(&[("pare", "untouched route".into())]),
            404,
            Duration::ZERO,
        );
        let failed = entry(&[("upstream_error", "cannot connect to x".into())]);
        m.record(&failed, 502, Duration::ZERO);
        let text = m.render();
        let route = r#"route="GET /a \"x\"""#;
        for line in [
            format!(r#"pare_http_requests_total{{{route},status="200",outcome="shaped"}} 2"#),
            r#"pare_http_requests_total{route="none",status="404",outcome="untouched"} 1"#.into(),
            format!(r#"pare_http_tokens_before_total{{{route}}} 1800"#),
            format!(r#"pare_http_tokens_after_total{{{route}}} 600"#),
            format!(r#"pare_http_request_duration_seconds_bucket{{{route},le="0.005"}} 1"#),
            format!(r#"pare_http_request_duration_seconds_bucket{{{route},le="+Inf"}} 2"#),
            format!(r#"pare_http_pages_served_total{{{route},source="upstream"}} 2"#),
            r#"pare_http_upstream_errors_total{kind="connect"} 1"#.into(),
            "pare_http_bodies_held_max_bytes 1048576".into(),
        ] {
            assert!(text.lines().any(|l| l == line), "{line}\n{text}");
        }
    }
}
