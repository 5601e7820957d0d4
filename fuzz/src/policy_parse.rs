//! Fuzz the policy parser and compiler: any text either fails with a `PolicyError` or
//! compiles, and a compiled policy shapes a small value at every level without panicking
//! (compile is meant to catch everything a request could trip on).
use pare::policy::Policy;
use pare::shape::{ShapeOptions, shape};

const SAMPLE: &str = r#"{"id":"a","created_at":"2026-01-01T00:00:00Z","score":0.6271,"tags":[],
"items":[{"type":"A","v":"x","minutes":0.2,"start":"2026-01-01T09:00:00Z","end":"2026-01-01T09:10:00Z"},
{"type":"B","v":null,"minutes":3,"start":"2026-01-01T09:11:00Z","end":"2026-01-01T09:20:00Z"}],
"meta":{"a":{"x":1},"b":{}}}"#;

/// The check on one input: returns, or panics on a fault.
pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(policy) = Policy::parse(text) else {
        return;
    };
    let value = pare::json::parse(SAMPLE).expect("sample is valid JSON");
    for level in 0..policy.levels().len() {
        let mut opts = ShapeOptions::new(&policy);
        opts.level = level;
        opts.track_paths = true;
        opts.notes = Some(true);
        let out = shape(value.clone(), &policy, &opts);
        let text = pare::json::to_compact(&out.value);
        assert!(
            pare::json::parse(&text).is_ok(),
            "shaped output must be valid JSON"
        );
    }
}
