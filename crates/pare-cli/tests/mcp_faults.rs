//! `pare mcp` against a stand-in server (`tests/mcp/fake_server.py`) for the faults a real
//! server will not produce on demand: an upstream that exits mid-request, garbage lines,
//! results pare cannot shape, unknown methods, oversized messages. Driven by raw JSON-RPC
//! lines so every byte on pare's stdout is checked to be protocol. Needs python3 (a missing
//! python3 fails these tests, saying so).

use crate::mcp_support;

use mcp_support::{Proxy, fake_server, python};
use serde_json::{Value, json};

fn start(args: &[&str], mode: &str) -> Proxy {
    let py = python();
    let server = fake_server();
    let mut cmd: Vec<&str> = args.to_vec();
    cmd.extend(["--", &py, &server, mode]);
    let mut p = Proxy::spawn(&cmd, &[]);
    p.initialize();
    p
}

fn call(p: &mut Proxy, id: u64, name: &str, args: Value) -> Value {
    p.request(id, "tools/call", json!({"name": name, "arguments": args}))
}

#[test]
fn mcp_upstream_exit_mid_request_answers_pending_with_an_error_and_exits_nonzero() {
    let mut p = start(&[], "exit");
    p.send(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "data", "arguments": {}}}));
    let reply = p.recv();
    assert_eq!(reply["id"], 7, "{reply}");
    assert_eq!(reply["error"]["code"], -32603, "{reply}");
    let (status, stderr) = p.finish();
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("upstream MCP server exited"), "{stderr}");
    assert!(stderr.contains("1 open request"), "{stderr}");
}

#[test]
fn mcp_when_upstream_dies_every_open_request_but_a_cancelled_one_gets_an_error() {
    let mut p = start(&[], "ok");
    for id in [1, 2] {
        p.send(json!({"jsonrpc": "2.0", "id": id, "method": "test/never", "params": {}}));
    }
    p.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
    );
    p.send(json!({"jsonrpc": "2.0", "id": 3, "method": "test/die", "params": {}}));
    let mut ids: Vec<u64> = (0..2)
        .map(|_| {
            let r = p.recv();
            assert_eq!(r["error"]["code"], -32603, "{r}");
            r["id"].as_u64().unwrap()
        })
        .collect();
    ids.sort();
    assert_eq!(ids, [2, 3]);
    let (status, stderr) = p.finish();
    assert_eq!(status.code(), Some(2));
    assert!(stderr.contains("2 open request(s)"), "{stderr}");
}

#[test]
fn mcp_garbage_lines_from_upstream_are_logged_and_skipped() {
    let mut p = start(&[], "garbage");
    let reply = p.request(2, "ping", json!({}));
    assert_eq!(reply["result"], json!({"echo": "ping"}));
    p.close_stdin();
    let (status, stderr) = p.finish();
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains("skipped a line from the server (not JSON): this is not json"),
        "{stderr}"
    );
    assert!(stderr.contains("(not JSON-RPC 2.0)"), "{stderr}");
}

#[test]
fn mcp_a_result_that_is_not_json_is_forwarded_unchanged_with_a_log_line() {
    let mut p = start(&[], "ok");
    let reply = call(&mut p, 3, "text", json!({}));
    assert_eq!(
        reply["result"],
        json!({"content": [{"type": "text", "text": "not JSON: {oops"}]})
    );
    p.close_stdin();
    let (_, stderr) = p.finish();
    assert!(
        stderr.contains("`text` result forwarded unchanged: no content text is JSON"),
        "{stderr}"
    );
}

#[test]
fn mcp_unknown_methods_and_notifications_pass_through_both_ways() {
    let mut p = start(&[], "ok");
    p.send(json!({"jsonrpc": "2.0", "method": "notifications/whatever", "params": {}}));
    p.send(json!({"jsonrpc": "2.0", "id": "u1", "method": "foo/unknown", "params": {"a": [1]}}));
    let note = p.recv();
    assert_eq!(
        note,
        json!({"jsonrpc": "2.0", "method": "notifications/foo_unknown", "params": {"x": 1}})
    );
    let reply = p.recv();
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": "u1", "result": {"echo": "foo/unknown"}})
    );
}

/// A shaped result is the server's message with `content` and `_meta` written again: every
/// other byte is the server's (a tree of the message would turn the integer into a double and
/// the escape into `é`), and the counts in `_meta` are exact.
#[test]
fn mcp_a_shaped_result_keeps_the_servers_other_bytes_and_exact_counts() {
    let prune = mcp_support::mcp_dir().join("prune.toml");
    let mut p = start(&["--policy", prune.to_str().unwrap()], "ok");
    p.send(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                  "params": {"name": "data", "arguments": {"n": 40, "raw": true}}}));
    // The result names its original, so `notifications/tools/list_changed` comes first.
    let raw = std::iter::repeat_with(|| String::from_utf8(p.recv_raw()).unwrap())
        .find(|line| line.starts_with(r#"{"jsonrpc":"2.0","id":5,"#))
        .unwrap();
    let kept = r#""arguments_seen":{"n":40,"raw":true},"structuredContent":{"big":123456789012345678901234567890,"s":"caf\u00e9"}"#;
    assert!(raw.contains(kept), "{raw:.400}");
    let reply: Value = serde_json::from_str(&raw).unwrap();
    let r = &reply["result"];
    let tok = pare::tokens::builtin("o200k_base").unwrap();
    let server_text = serde_json::to_string_pretty(&json!({"rows": (0..40).map(|i| json!(
        {"id": i, "name": format!("row {i}"), "note": null, "tags": [], "score": f64::from(i) * 0.5}
    )).collect::<Vec<_>>()}))
    .unwrap();
    let sent: usize = r["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| tok.count(c["text"].as_str().unwrap()))
        .sum();
    assert_eq!(r["_meta"]["server"], "kept");
    assert_eq!(r["_meta"]["pare"]["tokensBefore"], tok.count(&server_text));
    // The structuredContent is another value, small: kept, and counted as sent.
    let structured = tok.count(r#"{"big":123456789012345678901234567890,"s":"caf\u00e9"}"#);
    assert_eq!(r["_meta"]["pare"]["structuredContent"], "kept");
    assert_eq!(r["_meta"]["pare"]["structuredTokens"], structured);
    assert_eq!(r["_meta"]["pare"]["tokensAfter"], sent + structured);
}

#[test]
fn mcp_detail_is_removed_before_forwarding_and_full_is_the_server_text() {
    let prune = mcp_support::mcp_dir().join("prune.toml");
    let mut p = start(&["--policy", prune.to_str().unwrap()], "ok");
    let list = p.request(1, "tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().unwrap();
    // prune runs at every level but `full`: two outputs, so two levels to choose from; and
    // `pare_more` waits until a result needs it.
    assert!(tools.iter().all(|t| t["name"] != "pare_more"));
    assert_eq!(
        tools[0]["inputSchema"]["properties"]["detail"]["enum"],
        json!(["standard", "full"])
    );

    let shaped = call(&mut p, 2, "data", json!({"n": 3, "detail": "standard"}));
    let r = &shaped["result"];
    assert_eq!(
        r["arguments_seen"],
        json!({"n": 3}),
        "detail reached the server"
    );
    let text = r["content"][0]["text"].as_str().unwrap();
    let (value, _) = pare::encode::expand(text).unwrap();
    let rows = value
        .as_object()
        .unwrap()
        .get("rows")
        .unwrap()
        .as_array()
        .unwrap();
    assert!(
        rows.iter()
            .all(|r| !r.as_object().unwrap().contains_key("note")),
        "{text}"
    );
    assert_eq!(r["_meta"]["server"], "kept");
    let meta = &r["_meta"]["pare"];
    assert_eq!(meta["level"], "standard");
    assert_eq!(meta["tokenizer"], "o200k_base");
    assert!(
        meta["tokensAfter"].as_u64().unwrap() < meta["tokensBefore"].as_u64().unwrap(),
        "{meta}"
    );

    let full = call(&mut p, 3, "data", json!({"n": 3, "detail": "full"}));
    let expected = serde_json::to_string_pretty(&json!({"rows": [
        {"id": 0, "name": "row 0", "note": null, "tags": [], "score": 0.0},
        {"id": 1, "name": "row 1", "note": null, "tags": [], "score": 0.5},
        {"id": 2, "name": "row 2", "note": null, "tags": [], "score": 1.0}]}))
    .unwrap();
    assert_eq!(full["result"]["content"][0]["text"], expected.as_str());
    assert!(full["result"]["_meta"].get("pare").is_none());

    let bad = call(&mut p, 4, "data", json!({"detail": "everything"}));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    assert!(
        bad["error"]["message"]
            .as_str()
            .unwrap()
            .contains("must be one of: standard, full (got \"everything\")")
    );
}

#[test]
fn mcp_over_budget_results_are_paged_and_pare_more_returns_the_rest() {
    let prune = mcp_support::mcp_dir().join("prune.toml");
    let mut p = start(
        &["--max-tokens", "2000", "--policy", prune.to_str().unwrap()],
        "ok",
    );
    p.request(1, "tools/list", json!({}));
    // Asking for a level explicitly pages it rather than lowering it.
    let first = call(&mut p, 2, "data", json!({"n": 600, "detail": "standard"}));
    let tok = pare::tokens::builtin("o200k_base").unwrap();
    let mut rows = Vec::new();
    let mut reply = first;
    let mut pages = 0;
    loop {
        let r = &reply["result"];
        let content = r["content"].as_array().unwrap();
        let total: usize = content
            .iter()
            .map(|c| tok.count(c["text"].as_str().unwrap()))
            .sum();
        assert!(total <= 2000, "page of {total} tokens");
        assert_eq!(r["_meta"]["pare"]["tokensAfter"], total);
        let (v, _) = pare::encode::expand(content[0]["text"].as_str().unwrap()).unwrap();
        rows.extend(
            v.as_object()
                .unwrap()
                .get("rows")
                .unwrap()
                .as_array()
                .unwrap()
                .iter()
                .cloned(),
        );
        pages += 1;
        let Some(cursor) = r["_meta"]["pare"]["nextCursor"].as_str() else {
            break;
        };
        assert!(cursor.len() <= pare::respond::cursor::MAX_LEN, "{cursor}");
        assert!(content[1]["text"].as_str().unwrap().contains(cursor));
        reply = call(&mut p, 100 + pages, "pare_more", json!({"cursor": cursor}));
    }
    assert!(pages >= 3, "{pages} pages");
    assert_eq!(rows.len(), 600);
    let bad = call(&mut p, 99, "pare_more", json!({"cursor": "nope"}));
    assert_eq!(bad["error"]["code"], -32602);
}

#[test]
fn mcp_a_100_mb_result_is_streamed_through_unchanged_in_bounded_memory() {
    let py = python();
    let server = fake_server();
    let cmd = ["--", &py, &server, "big"];
    let mut p = Proxy::spawn(&cmd, &[("FAKE_BYTES", "100000000")]);
    p.initialize();
    let reply = call(&mut p, 5, "data", json!({}));
    let text = reply["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.len() > 99_000_000, "{} bytes", text.len());
    assert!(text.ends_with("]}"));
    assert!(reply["result"].get("_meta").is_none());
    let peak = p.peak_rss_kb();
    // The id at the end of the streamed message settled the request: nothing is open, so a
    // server exit now would not produce an error reply for it.
    p.close_stdin();
    let (status, stderr) = p.finish();
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("forwarded unchanged"), "{stderr}");
    if let Some(kb) = peak {
        eprintln!("pare peak RSS on a 100 MB result: {} MB", kb / 1024);
        assert!(kb < 64 * 1024, "pare held {kb} kB for a 100 MB message");
    }
}

#[test]
fn mcp_a_server_that_cannot_start_or_a_bad_policy_is_a_clear_error_exit_2() {
    let out = std::process::Command::new(mcp_support::pare_bin())
        .args(["mcp", "--", "/nonexistent/mcp-server"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot start the server `/nonexistent/mcp-server`"),
        "{err}"
    );

    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("p.toml");
    std::fs::write(&policy, "[mcp]\nformat = \"yaml\"\n").unwrap();
    let out = std::process::Command::new(mcp_support::pare_bin())
        .args(["mcp", "--policy"])
        .arg(&policy)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("mcp.format") && err.contains("yaml"), "{err}");
}

/// pare over the fake server in `mode` (with `env` and pare's `args`), as a client that reads
/// the initialize reply, closes its end of pare's stdout, sends `then` and leaves. Returns
/// pare's exit status and stderr.
fn client_stops_reading(
    mode: &str,
    env: &[(&str, &str)],
    args: &[&str],
    then: &str,
) -> (std::process::ExitStatus, String) {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::process::{Command, Stdio};
    let py = python();
    let server = fake_server();
    let mut child = Command::new(mcp_support::pare_bin())
        .arg("mcp")
        .args(args)
        .args(["--", &py, &server, mode])
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    writeln!(stdin, "{init}").unwrap();
    let mut first = String::new();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    out.read_line(&mut first).unwrap();
    assert!(first.contains("\"result\""), "{first}");
    drop(out);
    writeln!(stdin, "{then}").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    drop(stdin);
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (status, stderr)
}

#[test]
fn mcp_client_that_stops_reading_is_not_reported_as_an_upstream_exit() {
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let (status, stderr) = client_stops_reading("ok", &[], &[], ping);
    assert!(status.success(), "{status}: {stderr}");
    assert!(!stderr.contains("exited"), "{stderr}");
}

/// The same while pare streams a message over `--max-message-bytes` through: the failed
/// write was reported as "the upstream MCP server exited" (exit 2).
#[test]
fn regression_client_that_stops_reading_during_an_oversize_message_is_not_an_upstream_exit() {
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "data", "arguments": {}}});
    let (status, stderr) = client_stops_reading(
        "big",
        &[("FAKE_BYTES", "2000000")],
        &["--max-message-bytes", "100000"],
        &call.to_string(),
    );
    assert!(stderr.contains("forwarded unchanged"), "{stderr}");
    assert!(status.success(), "{status}: {stderr}");
    assert!(!stderr.contains("exited"), "{stderr}");
}

/// Regression: a client that sends a call and closes its input at once (a script piping one
/// request) sometimes got no answer at all: the proxy took the request off its open list when
/// the server's result arrived, and, while the result was being shaped, saw nothing open and
/// exited. An answer on its way to the client now counts as owed.
#[test]
fn regression_a_result_being_shaped_when_the_client_leaves_is_still_sent() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let (py, server) = (mcp_support::python(), mcp_support::fake_server());
    for round in 0..5 {
        let mut child = Command::new(mcp_support::pare_bin())
            .args(["mcp", "--", &py, &server, "ok"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Large enough that shaping it takes a while after the server has answered.
        let call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                          "params": {"name": "data", "arguments": {"n": 3000}}});
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "{call}").unwrap();
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        let reply = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|m| m["id"] == 9);
        let reply = reply.unwrap_or_else(|| panic!("round {round}: no answer to the call"));
        assert!(reply["result"]["content"][0]["text"].is_string(), "{reply}");
    }
}

/// The issue-28 probe: a server that answered one request twice had both answers reach the
/// client (JSON-RPC gives a request one). The second is logged and not passed on.
#[test]
fn regression_a_second_response_to_one_request_reached_the_client() {
    let mut p = start(&[], "ok");
    let first = p.request(5, "test/twice", json!({}));
    assert_eq!(first["result"], json!({"echo": "first"}), "{first}");
    let next = p.request(6, "ping", json!({}));
    assert_eq!(next["id"], 6, "the second answer to 5 came through: {next}");
    // An id used again after its answer is a new request, answered as usual.
    let again = p.request(5, "ping", json!({}));
    assert_eq!(again["result"], json!({"echo": "ping"}), "{again}");
    p.close_stdin();
    let (status, stderr) = p.finish();
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "skipped a line from the server (a second response to a request it answered)"
        ),
        "{stderr}"
    );
}
