//! `pare mcp` over MCP's streamable HTTP transport: `--upstream-url` in front of the reference
//! everything server run with `streamableHttp`, driven by the official Python SDK over stdio,
//! and the faults (an upstream that refuses connections, bad flags, a 100 MB reply). The
//! tests that need the reference servers or the SDK are `#[ignore]`d with the reason
//! (`.ci/run` installs them, `scripts/test` runs them, and a missing one then fails the
//! test); the rest need python3.

use crate::mcp_support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mcp_support::{
    HttpServer, Proxy, assert_everything_results_match, client, free_port, mcp_dir, node_server,
    pare_bin, python, sdk_python,
};
use serde_json::{Value, json};

#[test]
#[ignore = "needs MCP peers: run .ci/run, then scripts/test"]
fn mcp_upstream_url_everything_server_over_http_passes_through_including_server_to_client_requests()
{
    let (py, script) = (sdk_python(), node_server("server-everything"));
    let direct = client(&py, "everything", &[], &["node", &script], &[]);
    let server = HttpServer::everything(&script);
    let through = client(
        &py,
        "everything",
        &[],
        &[pare_bin(), "mcp", "--upstream-url", &server.url],
        &[],
    );
    // Server-to-client requests ride the SSE streams of the tool calls' POSTs, and the
    // client's responses are POSTed back.
    assert_everything_results_match(&direct, &through, "over HTTP");
    // pare_more is listed once a result needs it; none did here.
    assert_eq!(through["tool_names"], direct["tool_names"]);
}

#[test]
#[ignore = "needs MCP peers: run .ci/run, then scripts/test"]
fn mcp_upstream_url_tools_list_is_rewritten_and_concurrent_requests_do_not_wait_for_each_other() {
    let script = node_server("server-everything");
    let server = HttpServer::everything(&script);
    let mut p = Proxy::spawn(&["--upstream-url", &server.url], &[]);
    p.initialize();
    let list = p.request(1, "tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().unwrap();
    // The built-in policy is lossless: no `detail`, and no `pare_more` before it is needed;
    // the `$schema` URLs are gone.
    assert!(tools.iter().all(|t| t["name"] != "pare_more"), "{list}");
    let echo = tools.iter().find(|t| t["name"] == "echo").unwrap();
    assert!(
        echo["inputSchema"]["properties"].get("detail").is_none()
            && echo["inputSchema"].get("$schema").is_none(),
        "{echo}"
    );
    // A 3-second tool call is open; a ping sent after it is answered first.
    p.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "trigger-long-running-operation", "arguments": {"duration": 3, "steps": 3}}}));
    let start = Instant::now();
    p.send(json!({"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {}}));
    let mut order = Vec::new();
    while order.len() < 2 {
        let m = p.recv();
        if let Some(id) = m.get("id").and_then(Value::as_u64) {
            assert!(m.get("result").is_some(), "{m}");
            order.push((id, start.elapsed()));
        }
    }
    assert_eq!(order[0].0, 3, "{order:?}");
    assert!(order[0].1 < Duration::from_secs(2), "{order:?}");
    // Round trips over HTTP: a ping through pare, p50 of 50.
    let mut times: Vec<Duration> = (0..50)
        .map(|i| {
            let t = Instant::now();
            let r = p.request(10 + i, "ping", json!({}));
            assert!(r.get("result").is_some());
            t.elapsed()
        })
        .collect();
    times.sort();
    eprintln!(
        "ping through pare over HTTP: p50 {:?}, max {:?}",
        times[25], times[49]
    );
    p.close_stdin();
    let (status, stderr) = p.finish();
    assert!(status.success(), "{stderr}");
}

#[test]
fn mcp_upstream_url_refusing_connections_answers_with_an_error_and_exits_2() {
    let url = format!("http://127.0.0.1:{}/mcp", free_port());
    let mut p = Proxy::spawn(&["--upstream-url", &url], &[]);
    p.send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}));
    let reply = p.recv();
    assert_eq!(reply["id"], 0, "{reply}");
    assert_eq!(reply["error"]["code"], -32603, "{reply}");
    let msg = reply["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("cannot reach the upstream MCP server"),
        "{msg}"
    );
    let (status, stderr) = p.finish();
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&url), "{stderr}");
    assert!(stderr.contains("is unusable"), "{stderr}");
}

#[test]
fn mcp_upstream_url_flags_are_checked() {
    for args in [
        &["--upstream-url", "http://127.0.0.1:1/mcp", "--", "cat"][..],
        &["--upstream-url", "ftp://example.com/mcp"][..],
        &["--upstream-url", "not a url"][..],
        &[][..],
    ] {
        let out = Command::new(pare_bin())
            .arg("mcp")
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(!out.stderr.is_empty(), "{args:?}");
    }
}

/// `tests/mcp/fake_http_server.py MODE` on the port it picks; killed on drop.
struct FakeHttp {
    child: Child,
    url: String,
}

impl FakeHttp {
    fn spawn(py: &str, mode: &str, env: &[(&str, &str)]) -> FakeHttp {
        let mut child = Command::new(py)
            .arg(mcp_dir().join("fake_http_server.py"))
            .arg(mode)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut port = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut port)
            .unwrap();
        let url = format!("http://127.0.0.1:{}/mcp", port.trim());
        FakeHttp { child, url }
    }
}

impl Drop for FakeHttp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn mcp_upstream_url_a_100_mb_reply_passes_in_pieces_in_bounded_memory() {
    let py = python();
    for mode in ["json", "sse"] {
        let bytes: usize = 100_000_000;
        let server = FakeHttp::spawn(&py, mode, &[("FAKE_BYTES", &bytes.to_string())]);
        let mut p = Proxy::spawn(&["--upstream-url", &server.url], &[]);
        p.initialize();
        let reply = p.request(5, "tools/call", json!({"name": "data", "arguments": {}}));
        let text = reply["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.len() > bytes * 9 / 10, "{mode}: {} bytes", text.len());
        let peak_kb = p.peak_rss_kb().unwrap();
        assert!(
            peak_kb < 100_000,
            "{mode}: pare peaked at {peak_kb} kB for a {bytes}-byte reply"
        );
        eprintln!("--upstream-url, {mode} reply of {bytes} bytes: {peak_kb} kB peak RSS");
        p.close_stdin();
        let (status, stderr) = p.finish();
        assert!(status.success(), "{mode}: {stderr}");
        assert!(stderr.contains("passed on in pieces"), "{mode}: {stderr}");
    }
}

#[test]
fn mcp_upstream_url_event_stream_is_reopened_after_it_ends_resuming_after_the_last_event() {
    let py = python();
    let server = FakeHttp::spawn(&py, "get", &[]);
    let mut p = Proxy::spawn(&["--upstream-url", &server.url], &[]);
    p.initialize();
    // The first stream brings one notification and ends; pare opens a second, which is
    // told where the first stopped.
    let first = p.recv();
    assert_eq!(first["params"]["n"], 1, "{first}");
    let second = p.recv();
    assert_eq!(second["params"]["n"], 2, "{second}");
    assert_eq!(second["params"]["lastEventId"], "e1", "{second}");
    p.close_stdin();
    let (status, stderr) = p.finish();
    assert!(status.success(), "{stderr}");
}

#[test]
fn mcp_upstream_url_a_forgotten_session_is_renewed_and_the_request_sent_again() {
    let py = python();
    let server = FakeHttp::spawn(&py, "forget", &[]);
    let mut p = Proxy::spawn(&["--upstream-url", &server.url], &[]);
    p.initialize();
    // The server answers 404 in session s1: pare initializes again (the client's own
    // initialize request) and sends the call in the new session.
    let reply = p.request(3, "tools/call", json!({"name": "data", "arguments": {}}));
    let text = reply["result"]["content"][0]["text"].as_str().unwrap();
    let (seen, _) = pare::encode::expand(text).unwrap();
    let seen: Value = serde_json::from_str(&pare::json::to_compact(&seen)).unwrap();
    assert_eq!(seen, json!({"session": "s2", "inits": 2}), "{reply}");
    p.close_stdin();
    let (status, stderr) = p.finish();
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("forgot the session"), "{stderr}");
}
