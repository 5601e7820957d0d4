//! Access logs: one JSON object per request on stderr (stdout stays the door's own), with
//! what pare did: shaped (level, pages, tokens before and after) or passed, and why.
//! The path is logged without its query string, which may carry secrets.
//!
//! ```text
//! {"ts":1764000000.123,"peer":"127.0.0.1:51234","method":"GET","path":"/api/entities","status":200,"ms":3.2,"pare":"shaped","level":"standard","page":1,"pages":1,"tokens_before":9120,"tokens_after":2210}
//! ```

use std::io::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

/// One request's line, filled in as it is answered.
#[derive(Debug, Default)]
pub struct Entry {
    pub fields: Map<String, Value>,
}

impl Entry {
    pub fn new(peer: &str, method: &str, path: &str) -> Entry {
        let mut e = Entry::default();
        let ts = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_millis() as f64
            / 1000.0;
        e.set("ts", ts);
        e.set("peer", peer);
        e.set("method", method);
        e.set("path", path);
        e
    }

    pub fn set(&mut self, key: &str, value: impl Into<Value>) {
        self.fields.insert(key.to_owned(), value.into());
    }

    /// Write the line, with the status and the time taken.
    pub fn write(mut self, status: u16, took: Duration) {
        self.set("status", status);
        self.set("ms", (took.as_secs_f64() * 1e4).round() / 10.0);
        let mut line = Value::Object(self.fields).to_string();
        line.push('\n');
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }
}

/// A log line that is not about one request (start-up, the cache going down and up).
pub fn event(message: &str) {
    let line = serde_json::json!({ "event": message }).to_string();
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}
