//! A response from the server read lazily: its members found as spans of the line
//! ([`crate::members`]), only the result's members pare acts on decoded, and, when the
//! result is shaped, the line written back with those members replaced and every other byte
//! as the server wrote it.
//!
//! Why: on a large result the tree of the whole message cost more than shaping its text
//! (`structuredContent` often repeats the result as an object: half the message, parsed
//! and written back unchanged). Copying it also keeps what a tree would change (a number
//! beyond a double, `\u00e9` written as `é`).

use std::ops::Range;

use serde_json::{Map, Value as Json};

use crate::members::{self, Member, Read};

/// The members of a result that [`pare::mcp::result::shape_result`] reads or writes.
const DECODED: [&str; 3] = ["content", "isError", "_meta"];

/// A JSON-RPC response whose `result` is an object.
pub(super) struct Response {
    pub id: Json,
    /// Where the result object is in the line.
    result: Range<usize>,
    members: Vec<Member>,
}

impl Response {
    /// `line` as such a response: strict JSON, `"jsonrpc":"2.0"` as written by every SDK, an
    /// id, no key repeated at the top level or in the result. `None`: read it the general way.
    pub fn read(line: &[u8]) -> Option<Response> {
        let how = |depth: usize, key: &str| match (depth, key) {
            (0, "result") => Read::Members,
            (1, key) if is_decoded(key) => Read::Decode,
            _ => Read::Skip,
        };
        let mut top = members::of_line(line, &how)?;
        let get = |key: &str| top.iter().position(|m| m.key == key);
        if !members::distinct(&top)
            || get("method").is_some()
            || get("error").is_some()
            || line[top[get("jsonrpc")?].value.clone()] != *b"\"2.0\""
        {
            return None;
        }
        let id = serde_json::from_slice(&line[top[get("id")?].value.clone()]).ok()?;
        let result = top.swap_remove(get("result")?);
        let members = result.members?;
        members::distinct(&members).then_some(Response {
            id,
            result: result.value,
            members,
        })
    }

    /// The result's members that shaping reads, decoded, as an object in their order.
    pub fn decoded(&mut self) -> Json {
        let mut out = Map::new();
        for m in &mut self.members {
            if let Some(value) = m.decoded.take() {
                out.insert(m.key.clone(), value);
            }
        }
        Json::Object(out)
    }

    /// The result's member `key` as the server wrote it (JSON text), if it has one.
    pub fn raw<'l>(&self, line: &'l [u8], key: &str) -> Option<&'l str> {
        let m = self.members.iter().find(|m| m.key == key)?;
        // The line was read as strict JSON, so UTF-8.
        std::str::from_utf8(&line[m.value.clone()]).ok()
    }

    /// `line` with the decoded members replaced by those of `new` (a result object from
    /// [`Self::decoded`], changed) and the members `drop` left out; a member `new` adds goes
    /// last, as a tree would put it.
    pub fn splice(&self, line: &[u8], new: &Json, drop: &[&str]) -> Vec<u8> {
        let empty = Map::new();
        let new = new.as_object().unwrap_or(&empty);
        let mut out = Vec::with_capacity(line.len());
        out.extend_from_slice(&line[..self.result.start]);
        out.push(b'{');
        let mut first = true;
        let mut comma = |out: &mut Vec<u8>| {
            if !std::mem::take(&mut first) {
                out.push(b',');
            }
        };
        for m in &self.members {
            if drop.contains(&m.key.as_str()) {
                continue;
            }
            if !is_decoded(&m.key) {
                comma(&mut out);
                out.extend_from_slice(&line[m.key_span.start..m.value.end]);
            } else if let Some(value) = new.get(&m.key) {
                comma(&mut out);
                out.extend_from_slice(&line[m.key_span.clone()]);
                out.push(b':');
                write(&mut out, value);
            }
        }
        for (key, value) in new {
            if !self.members.iter().any(|m| m.key == *key) {
                comma(&mut out);
                write(&mut out, &Json::String(key.clone()));
                out.push(b':');
                write(&mut out, value);
            }
        }
        out.push(b'}');
        out.extend_from_slice(&line[self.result.end..]);
        out
    }
}

fn is_decoded(key: &str) -> bool {
    DECODED.contains(&key)
}

fn write(out: &mut Vec<u8>, value: &Json) {
    serde_json::to_writer(out, value).expect("a JSON value serializes");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shaped(line: &[u8]) -> Vec<u8> {
        let mut r = Response::read(line).expect("read lazily");
        let mut result = r.decoded();
        result["content"][0]["text"] = json!("short");
        result
            .as_object_mut()
            .unwrap()
            .entry("_meta")
            .or_insert(json!({}))["pare"] = json!({"n": 1});
        r.splice(line, &result, &[])
    }

    #[test]
    fn only_the_members_pare_changes_are_written_again() {
        let line = br#"{"result":{"content":[{"type":"text","text":"long \"text\""}],"structuredContent":{"n":1e400,"s":"\u00e9"}},"jsonrpc":"2.0","id":7}"#;
        let out = shaped(line);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"result":{"content":[{"type":"text","text":"short"}],"structuredContent":{"n":1e400,"s":"\u00e9"},"_meta":{"pare":{"n":1}}},"jsonrpc":"2.0","id":7}"#
        );
        // The server's own `_meta` keeps its place and its keys.
        let line = br#"{"jsonrpc":"2.0","id":"a","result":{"_meta":{"x":[1]},"content":[{"type":"text","text":"t"}]}}"#;
        assert_eq!(
            String::from_utf8(shaped(line)).unwrap(),
            r#"{"jsonrpc":"2.0","id":"a","result":{"_meta":{"x":[1],"pare":{"n":1}},"content":[{"type":"text","text":"short"}]}}"#
        );
    }

    #[test]
    fn the_same_bytes_as_a_tree_when_the_server_writes_as_serde_does() {
        let line = serde_json::to_vec(&json!({
            "jsonrpc": "2.0", "id": 3,
            "result": {"content": [{"type": "text", "text": "{\n  \"a\": [1, 2.5, \"é\\u0001\"]\n}"}],
                       "structuredContent": {"a": [1, 2.5, "é\u{1}"], "t": true, "z": null}, "isError": false}
        }))
        .unwrap();
        let mut tree: Json = serde_json::from_slice(&line).unwrap();
        tree["result"]["content"][0]["text"] = json!("short");
        tree["result"]["_meta"] = json!({"pare": {"n": 1}});
        assert_eq!(shaped(&line), serde_json::to_vec(&tree).unwrap());
    }

    #[test]
    fn anything_unusual_is_left_to_the_general_reader() {
        for line in [
            &br#"{"jsonrpc":"2.0","id":1,"result":{"a":1,"a":2}}"#[..],
            br#"{"jsonrpc":"2.0","id":1,"id":2,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{"t":"\ud800"}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{"t":"\udc00\ud800"}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{"n":01}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{"n":1.}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{"n":[1,]}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{"t":"a	b"}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{}} x"#,
            br#"{"jsonrpc":"2.0","id":1,"result":[]}"#,
            br#"{"jsonrpc":"1.0","id":1,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"x","result":{}}"#,
            br#"{"jsonrpc":"2.0","result":{}}"#,
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"t\":\"\xff\"}}",
        ] {
            assert!(
                Response::read(line).is_none(),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"d":{}{}}}}}"#,
            "[".repeat(130),
            "]".repeat(130)
        );
        assert!(Response::read(deep.as_bytes()).is_none());
        assert!(serde_json::from_str::<Json>(&deep).is_err());
        let ok = br#" {"jsonrpc" : "2.0", "id":1, "result": {"k\u0065y": [true, false, null, -0.5e+3, "\ud83d\ude00"]} } "#;
        let r = Response::read(ok).unwrap();
        assert_eq!(r.members[0].key, "key");
        assert!(serde_json::from_slice::<Json>(ok).is_ok());
    }
}
