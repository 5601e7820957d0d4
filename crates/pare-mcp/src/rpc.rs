//! Small JSON-RPC helpers: message kinds, id keys, error responses.

use serde_json::{Value as Json, json};

/// The kind of a JSON-RPC message.
#[derive(Debug, PartialEq)]
pub enum Kind<'a> {
    /// A request: method and id.
    Request(&'a str, &'a Json),
    Notification(&'a str),
    /// A response (result or error) to the request with this id.
    Response(&'a Json),
}

/// What a message is, or `None` when it is not a JSON-RPC 2.0 message object.
pub fn kind(msg: &Json) -> Option<Kind<'_>> {
    let obj = msg.as_object()?;
    if obj.get("jsonrpc")?.as_str()? != "2.0" {
        return None;
    }
    match (obj.get("method"), obj.get("id")) {
        (Some(Json::String(m)), Some(id)) => Some(Kind::Request(m, id)),
        (Some(Json::String(m)), None) => Some(Kind::Notification(m)),
        (None, Some(id)) if obj.contains_key("result") || obj.contains_key("error") => {
            Some(Kind::Response(id))
        }
        _ => None,
    }
}

/// A map key for a request id (`1` and `"1"` are different ids).
pub fn id_key(id: &Json) -> String {
    id.to_string()
}

/// An error response line.
pub fn error(id: &Json, code: i64, message: &str) -> Vec<u8> {
    let v = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    serde_json::to_vec(&v).expect("a JSON value serializes")
}

/// A result response line.
pub fn result(id: &Json, result: Json) -> Vec<u8> {
    let v = json!({"jsonrpc": "2.0", "id": id, "result": result});
    serde_json::to_vec(&v).expect("a JSON value serializes")
}

/// JSON-RPC's "parse error" code: a body that is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's "invalid request" code.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC's "internal error" code, used when the upstream server is gone.
pub const INTERNAL_ERROR: i64 = -32603;
/// JSON-RPC's "invalid params" code, used for a bad `detail` value or cursor.
pub const INVALID_PARAMS: i64 = -32602;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        let r = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
        assert_eq!(kind(&r), Some(Kind::Request("ping", &json!(1))));
        let n = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(
            kind(&n),
            Some(Kind::Notification("notifications/initialized"))
        );
        let s = json!({"jsonrpc": "2.0", "id": "a", "result": {}});
        assert_eq!(kind(&s), Some(Kind::Response(&json!("a"))));
        assert_eq!(kind(&json!({"id": 1, "result": {}})), None);
        assert_eq!(kind(&json!([1])), None);
    }

    #[test]
    fn ids_of_different_types_are_different_keys() {
        assert_ne!(id_key(&json!(1)), id_key(&json!("1")));
    }
}
