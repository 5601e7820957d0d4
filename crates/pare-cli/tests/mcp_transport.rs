//! `pare mcp` over stdio against server output that is hard to move: replies that are not
//! strict JSON, replies over `--max-message-bytes` in either SDK's member order, long lines
//! that are not JSON-RPC, a reply cut short by a crash. Each request gets exactly one answer
//! and nothing but JSON-RPC reaches the client. Needs python3 (`tests/mcp/fake_server.py`).

use crate::mcp_support;

use mcp_support::{Proxy, fake_server, python};
use serde_json::{Value, json};

fn start(args: &[&str], mode: &str, env: &[(&str, &str)]) -> Proxy {
    let (py, server) = (python(), fake_server());
    let mut cmd: Vec<&str> = args.to_vec();
    cmd.extend(["--", &py, &server, mode]);
    let mut p = Proxy::spawn(&cmd, env);
    p.initialize();
    p
}

fn request(p: &mut Proxy, id: u64, method: &str) {
    p.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {}}));
}

/// Every line left on pare's stdout until it closes, each a JSON-RPC message.
fn rest_of_stdout(p: &mut Proxy) -> Vec<Value> {
    let mut out = Vec::new();
    while let Some(raw) = p.try_recv_raw() {
        let v: Value = serde_json::from_slice(&raw).unwrap_or_else(|e| {
            panic!(
                "stdout carried a line that is not JSON ({e}), {} bytes: {:.200}",
                raw.len(),
                String::from_utf8_lossy(&raw)
            )
        });
        assert_eq!(v["jsonrpc"], "2.0", "not JSON-RPC: {v:.200}");
        out.push(v);
    }
    out
}

/// A reply with a lone surrogate escape (Python's `json.dumps` of an odd file name), or with
/// a byte that is not UTF-8, was dropped as "not JSON" and its request never answered.
#[test]
fn regression_replies_that_are_not_strict_json_are_passed_on_byte_for_byte() {
    let mut p = start(&[], "ok", &[]);
    request(&mut p, 3, "test/surrogate");
    assert_eq!(
        p.recv_raw(),
        br#"{"jsonrpc":"2.0","id":3,"result":{"name":"a\ud800b"}}"#
    );
    request(&mut p, 4, "test/bad_utf8");
    assert_eq!(
        p.recv_raw(),
        b"{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"name\":\"a\xffb\"}}"
    );
    // Both settled their requests: the server's exit now answers only the one left open.
    request(&mut p, 5, "test/die");
    let rest = rest_of_stdout(&mut p);
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(rest[0]["id"], 5);
    let (status, stderr) = p.finish();
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("not strict JSON"), "{stderr}");
}

/// An oversized reply with its id first (the Python SDK's order) was not matched to its
/// request (the id was looked for only at the end), so the server's exit answered it again:
/// two replies for one id.
#[test]
fn regression_an_oversize_reply_with_its_id_first_settles_its_request() {
    let mut p = start(
        &["--max-message-bytes", "100000"],
        "big",
        &[("FAKE_BYTES", "1000000"), ("FAKE_ID_FIRST", "1")],
    );
    p.send(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "data", "arguments": {}}}));
    request(&mut p, 6, "test/die");
    let replies = rest_of_stdout(&mut p);
    let to_5: Vec<_> = replies.iter().filter(|r| r["id"] == 5).collect();
    assert_eq!(to_5.len(), 1, "replies for id 5: {}", to_5.len());
    let text = to_5[0]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.len() > 900_000, "{} bytes", text.len());
    assert_eq!(
        replies.len(),
        2,
        "{:?}",
        replies.iter().map(|r| &r["id"]).collect::<Vec<_>>()
    );
    assert_eq!(p.finish().0.code(), Some(2));
}

/// A 10 MB line that is JSON but not JSON-RPC reached the client's stdout.
#[test]
fn regression_an_oversize_line_that_is_not_json_rpc_is_dropped() {
    let mut p = start(&[], "ok", &[]);
    request(&mut p, 7, "test/junk_big");
    let reply = p.recv();
    assert_eq!(reply["id"], 7, "{reply:.200}");
    assert_eq!(reply["result"]["echo"], "test/junk_big");
    p.close_stdin();
    assert!(rest_of_stdout(&mut p).is_empty());
    let (status, stderr) = p.finish();
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains("dropped a line of more than") && stderr.contains("not JSON-RPC"),
        "{stderr}"
    );
}

/// A server that crashed 18 MB into a reply: the cut line reached the client's stdout, and
/// the request got an error as well. Now the cut line is dropped and the request gets one
/// answer, an error.
#[test]
fn regression_a_reply_cut_short_by_a_crash_is_dropped_and_answered_once_with_an_error() {
    let mut p = start(&[], "ok", &[]);
    request(&mut p, 8, "test/never");
    request(&mut p, 9, "test/crash_big");
    let replies = rest_of_stdout(&mut p);
    let mut ids: Vec<u64> = replies
        .iter()
        .map(|r| {
            assert_eq!(r["error"]["code"], -32603, "{r:.200}");
            r["id"].as_u64().unwrap()
        })
        .collect();
    ids.sort();
    assert_eq!(ids, [8, 9]);
    let (status, stderr) = p.finish();
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cut short"), "{stderr}");
}

/// The JS SDK's order (`{"result":…,"jsonrpc":"2.0","id":N}`) still passes whole when over
/// the cap: `"jsonrpc"` and the id are read at its end.
#[test]
fn an_oversize_reply_with_jsonrpc_and_id_last_is_forwarded() {
    let mut p = start(
        &["--max-message-bytes", "100000"],
        "big",
        &[("FAKE_BYTES", "1000000")],
    );
    let r = p.request(5, "tools/call", json!({"name": "data", "arguments": {}}));
    assert!(r["result"]["content"][0]["text"].as_str().unwrap().len() > 900_000);
    request(&mut p, 6, "test/die");
    let rest = rest_of_stdout(&mut p);
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(rest[0]["id"], 6);
}

/// A client request that is not strict JSON (a lone surrogate in its params) was forwarded
/// but not tracked, so when the server then exited it never got an answer.
#[test]
fn regression_a_client_request_that_is_not_strict_json_is_answered_if_the_server_exits() {
    let mut p = start(&[], "ok", &[]);
    p.send_raw(br#"{"jsonrpc":"2.0","id":9,"method":"test/die","params":{"path":"a\udc80b"}}"#);
    let rest = rest_of_stdout(&mut p);
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(rest[0]["id"], 9);
    assert_eq!(rest[0]["error"]["code"], -32603);
}
