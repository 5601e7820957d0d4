//! A tolerant look at a JSON-RPC message that cannot be parsed whole: too large to hold (only
//! its head is at hand), or not strictly JSON (a lone surrogate escape such as `"\ud800"`,
//! which Python's `json.dumps` writes for odd file names, or bytes that are not UTF-8).
//!
//! [`head`] walks the top-level members as far as the bytes go, skipping values without
//! decoding them (strings by their escapes, containers by their brackets), and notes the
//! JSON-RPC members it sees. [`id_at_end`] reads an id written last (`…,"id":7}`), as the
//! JS SDK writes responses.

use pare::json::scan as json_scan;
use serde_json::Value as Json;

/// What the top-level members of a message show, as far as its bytes go.
#[derive(Debug, Default, PartialEq)]
pub struct Head {
    /// It opens an object.
    pub object: bool,
    /// `Some(true)`: `"jsonrpc":"2.0"` was seen; `Some(false)`: another value.
    pub jsonrpc: Option<bool>,
    /// A string or number `id` (a null id is none).
    pub id: Option<Json>,
    pub method: bool,
    /// A `result` or `error` member (its value may run past the bytes at hand).
    pub result: bool,
    /// A member no JSON-RPC message has.
    pub foreign: bool,
    /// The object's closing brace was reached.
    pub complete: bool,
}

impl Head {
    /// Nothing seen so far rules out a JSON-RPC 2.0 message.
    pub fn plausible(&self) -> bool {
        self.object && !self.foreign && self.jsonrpc != Some(false)
    }

    /// The id of a response (an id and no method).
    pub fn response_id(&self) -> Option<&Json> {
        self.id.as_ref().filter(|_| !self.method)
    }
}

/// Walk the top-level members of `bytes`.
pub fn head(bytes: &[u8]) -> Head {
    let mut h = Head::default();
    let mut i = json_scan::skip_ws_loose(bytes, 0);
    if bytes.get(i) != Some(&b'{') {
        return h;
    }
    h.object = true;
    i = json_scan::skip_ws_loose(bytes, i + 1);
    if bytes.get(i) == Some(&b'}') {
        h.complete = true;
        return h;
    }
    loop {
        let Some((key, after)) = string_at(bytes, i) else {
            return h;
        };
        i = json_scan::skip_ws_loose(bytes, after);
        if bytes.get(i) != Some(&b':') {
            return h;
        }
        i = json_scan::skip_ws_loose(bytes, i + 1);
        match key {
            b"method" => h.method = true,
            b"result" | b"error" => h.result = true,
            b"jsonrpc" | b"id" | b"params" => {}
            _ => h.foreign = true,
        }
        let Some(end) = value_end(bytes, i) else {
            return h;
        };
        let value = &bytes[i..end];
        match key {
            b"jsonrpc" => h.jsonrpc = Some(value == b"\"2.0\""),
            b"id" => {
                h.id = serde_json::from_slice::<Json>(value)
                    .ok()
                    .filter(|v| v.is_number() || v.is_string());
            }
            _ => {}
        }
        i = json_scan::skip_ws_loose(bytes, end);
        match bytes.get(i) {
            Some(b',') => i = json_scan::skip_ws_loose(bytes, i + 1),
            Some(b'}') => {
                h.complete = true;
                return h;
            }
            _ => return h,
        }
    }
}

/// The id of a message whose last bytes are `tail`, when it is the object's last member
/// (`…,"id":7}`); an `"id"` of a nested object (`…"id":7}}`) is not taken for it.
pub fn id_at_end(tail: &[u8]) -> Option<Json> {
    let pat = b"\"id\":";
    let at = tail.windows(pat.len()).rposition(|w| w == pat)? + pat.len();
    let start = json_scan::skip_ws_loose(tail, at);
    let end = value_end(tail, start)?;
    let rest = &tail[end..];
    let rest: Vec<u8> = rest
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    if rest != b"}" {
        return None;
    }
    serde_json::from_slice::<Json>(&tail[start..end])
        .ok()
        .filter(|v| v.is_number() || v.is_string())
}

/// Whether `tail` (a message's last bytes) holds `"jsonrpc":"2.0"`.
pub fn jsonrpc_in_tail(tail: &[u8]) -> bool {
    let pat = b"\"jsonrpc\":\"2.0\"";
    tail.windows(pat.len()).any(|w| w == pat)
}

/// A string starting at `i`: its raw contents and the index after its closing quote.
fn string_at(b: &[u8], i: usize) -> Option<(&[u8], usize)> {
    let end = json_scan::string_end_loose(b, i)?;
    Some((&b[i + 1..end - 1], end))
}

/// The end of the JSON value starting at `i`, if the bytes hold all of it.
fn value_end(b: &[u8], i: usize) -> Option<usize> {
    match b.get(i)? {
        b'"' => json_scan::string_end_loose(b, i),
        b'{' | b'[' => json_scan::container_end_loose(b, i),
        _ => b[i..]
            .iter()
            .position(|c| matches!(c, b',' | b'}' | b']') || c.is_ascii_whitespace())
            .map(|n| i + n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_head_shows_the_members_before_the_first_value_it_does_not_hold() {
        let h = head(br#"{"jsonrpc":"2.0","id":12,"result":{"a":"#);
        assert!(h.plausible() && h.result && !h.complete);
        assert_eq!(h.response_id(), Some(&json!(12)));
        let h = head(br#"{"result":{"x":["}"]},"id":"q\"","jsonrpc""#);
        assert_eq!(h.id, Some(json!("q\"")));
        let h = head(br#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"#);
        assert!(h.method && h.response_id().is_none());
        let h = head(br#"{"data":[1,2"#);
        assert!(h.object && h.foreign && !h.plausible());
        assert!(!head(b"[1,2").plausible());
        assert!(!head(br#"{"jsonrpc":"1.0","id":1"#).plausible());
    }

    #[test]
    fn a_message_that_is_not_strict_json_is_still_read() {
        let lone = br#"{"jsonrpc":"2.0","id":4,"result":{"name":"a\ud800b"}}"#;
        assert!(serde_json::from_slice::<Json>(lone).is_err());
        let h = head(lone);
        assert!(h.complete && h.plausible());
        assert_eq!(h.response_id(), Some(&json!(4)));
        let bad_utf8 = b"{\"jsonrpc\":\"2.0\",\"id\":\"k\",\"result\":\"\xff\xfe\"}";
        assert_eq!(head(bad_utf8).response_id(), Some(&json!("k")));
    }

    #[test]
    fn an_id_written_last_is_read_from_the_tail_but_not_a_nested_one() {
        assert_eq!(
            id_at_end(br#"..."x"}},"jsonrpc":"2.0","id":17}"#),
            Some(json!(17))
        );
        assert_eq!(id_at_end(br#"...,"id":"ab" } "#), Some(json!("ab")));
        assert_eq!(id_at_end(br#"...,"other":1}"#), None);
        assert_eq!(id_at_end(br#"...{"id":3}}"#), None);
        assert!(jsonrpc_in_tail(br#"...,"jsonrpc":"2.0","id":1}"#));
    }
}
