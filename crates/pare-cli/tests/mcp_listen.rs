//! `pare mcp --listen`: pare serves MCP's streamable HTTP transport to clients. The official
//! Python SDK's streamable-HTTP client drives the reference memory and everything servers
//! through it (the results must equal those over stdio), and raw HTTP exchanges check the
//! transport's rules: sessions, Origin and Host checks, status codes, the GET stream, and an
//! upstream that exits. The tests that need the reference servers or the SDK are
//! `#[ignore]`d with the reason (`.ci/run` installs them, `scripts/test` runs them, and a
//! missing one then fails the test); the rest need python3.

use crate::mcp_support;
use crate::net_support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use mcp_support::{
    HttpServer, assert_everything_results_match, client, fake_server, graph_file, node_server,
    pare_bin, python, sdk_python,
};
use net_support::connect_from;
use serde_json::{Value, json};

/// `pare mcp --listen 127.0.0.1:0 ARGS`, its address read from its first stderr line; killed
/// on drop.
struct Listening {
    child: Child,
    addr: String,
}

impl Listening {
    fn spawn(args: &[&str], env: &[(&str, &str)]) -> Listening {
        let mut child = Command::new(pare_bin())
            .args(["mcp", "--listen", "127.0.0.1:0"])
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("pare runs");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(url) = line.split("listening on http://").nth(1) {
                    let _ = tx.send(url.trim_end_matches("/mcp").to_owned());
                }
                eprintln!("[pare] {line}");
            }
        });
        let addr = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("pare says where it listens");
        Listening { child, addr }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 response.
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC messages of an SSE body (its `data:` lines) or of a JSON body.
    fn messages(&self) -> Vec<Value> {
        if self
            .header("content-type")
            .is_some_and(|t| t.starts_with("text/event-stream"))
        {
            self.body
                .lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .map(|d| serde_json::from_str(d).unwrap())
                .collect()
        } else {
            vec![serde_json::from_str(&self.body).unwrap()]
        }
    }
}

/// The request's head: default Host and Accept unless `headers` give them.
fn request_head(addr: &str, method: &str, headers: &[(&str, &str)], body: &str) -> String {
    let mut head = format!("{method} /mcp HTTP/1.1\r\n");
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: {addr}\r\n"));
    }
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    head
}

/// One exchange on a fresh connection (`Connection: close`, so the body ends with it).
fn http(addr: &str, method: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    http_path(addr, method, "/mcp", headers, body)
}

fn http_path(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let head = request_head(addr, method, headers, body).replacen("/mcp", path, 1);
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    parse_reply(&raw)
}

fn parse_reply(raw: &[u8]) -> Reply {
    let text = String::from_utf8_lossy(raw);
    let (head, rest) = text.split_once("\r\n\r\n").expect("a response head");
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v == "chunked");
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_owned()
    };
    Reply {
        status,
        headers,
        body,
    }
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    loop {
        let (size, rest) = s.split_once("\r\n").expect("a chunk size");
        let n = usize::from_str_radix(size.trim(), 16).unwrap();
        if n == 0 {
            return out;
        }
        out.push_str(&rest[..n]);
        s = &rest[n + 2..];
    }
}

const ACCEPT_BOTH: (&str, &str) = ("Accept", "application/json, text/event-stream");
const JSON_BODY: (&str, &str) = ("Content-Type", "application/json");

fn initialize(addr: &str) -> String {
    let r = http(
        addr,
        "POST",
        &[ACCEPT_BOTH, JSON_BODY],
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}}).to_string(),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        r.header("content-type")
            .unwrap()
            .starts_with("text/event-stream")
    );
    assert_eq!(r.messages()[0]["result"]["serverInfo"]["name"], "fake");
    let session = r.header("mcp-session-id").expect("a session id").to_owned();
    assert!(session.len() == 32 && session.bytes().all(|b| b.is_ascii_hexdigit()));
    let n = http(
        addr,
        "POST",
        &[ACCEPT_BOTH, JSON_BODY, ("Mcp-Session-Id", &session)],
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(n.status, 202);
    session
}

fn call(addr: &str, session: &str, id: u64, method: &str, params: Value) -> Reply {
    http(
        addr,
        "POST",
        &[ACCEPT_BOTH, JSON_BODY, ("Mcp-Session-Id", session)],
        &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
    )
}

/// Wait until a POST in `session` is answered 404 (the session is gone).
fn wait_until_gone(addr: &str, session: &str) {
    let start = Instant::now();
    loop {
        let r = call(addr, session, 99, "ping", json!({}));
        if r.status == 404 {
            assert!(r.body.contains("session"), "{}", r.body);
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "session {session} still answers"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `v` with every page cursor (random per run) replaced by `CURSOR`, in metas and texts, and
/// without the token count of pages that name one (a random cursor tokenizes to 1-2 tokens
/// more or less).
fn without_cursors(v: &Value) -> Value {
    fn collect(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(c)) = m.get("nextCursor") {
                    out.push(c.clone());
                }
                m.values().for_each(|x| collect(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| collect(x, out)),
            _ => {}
        }
    }
    let mut cursors = Vec::new();
    collect(v, &mut cursors);
    let mut text = v.to_string();
    for c in cursors {
        text = text.replace(&c, "CURSOR");
    }
    let mut v: Value = serde_json::from_str(&text).unwrap();
    fn drop_counts(v: &mut Value) {
        match v {
            Value::Object(m) => {
                if m.contains_key("nextCursor") {
                    m.remove("tokensAfter");
                }
                m.values_mut().for_each(drop_counts);
            }
            Value::Array(a) => a.iter_mut().for_each(drop_counts),
            _ => {}
        }
    }
    drop_counts(&mut v);
    v
}

#[test]
#[ignore = "needs MCP peers: run .ci/run, then scripts/test"]
fn mcp_listen_memory_server_over_http_gives_what_stdio_gives_including_pages() {
    let (py, server) = (sdk_python(), node_server("server-memory"));
    let dir = tempfile::tempdir().unwrap();
    let policy = format!(
        "{}/../../examples/policies/memory.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    for (scenario, budget) in [("memory", "100000"), ("paging", "3000")] {
        let stdio_file = graph_file(dir.path(), &format!("{scenario}-stdio.jsonl"), 300);
        let http_file = graph_file(dir.path(), &format!("{scenario}-http.jsonl"), 300);
        let flags = [
            "--policy",
            &policy,
            "--max-tokens",
            budget,
            "--max-chars4",
            "1000000",
        ];
        let mut stdio_cmd = vec![pare_bin(), "mcp"];
        stdio_cmd.extend(flags);
        stdio_cmd.extend(["--", "node", &server]);
        let over_stdio = client(
            &py,
            scenario,
            &["pare=1"],
            &stdio_cmd,
            &[("MEMORY_FILE_PATH", &stdio_file)],
        );

        let mut listen_args = flags.to_vec();
        listen_args.extend(["--", "node", &server]);
        let pare = Listening::spawn(&listen_args, &[("MEMORY_FILE_PATH", &http_file)]);
        let over_http = client(&py, scenario, &["pare=1"], &[&pare.url()], &[]);
        let (a, b) = (without_cursors(&over_http), without_cursors(&over_stdio));
        if a != b {
            std::fs::write("/tmp/listen_http.json", a.to_string()).unwrap();
            std::fs::write("/tmp/listen_stdio.json", b.to_string()).unwrap();
            panic!(
                "{scenario}: HTTP and stdio differ (see /tmp/listen_http.json, /tmp/listen_stdio.json)"
            );
        }
        if scenario == "paging" {
            let pages = over_http["pages"].as_array().unwrap();
            assert!(pages.len() > 1, "no second page over HTTP");
            assert!(
                pages
                    .iter()
                    .all(|p| p["meta"]["tokensAfter"].as_u64().unwrap() <= 3000)
            );
        } else {
            assert!(
                over_http["default"]["meta"]["tokensAfter"].as_u64()
                    < over_http["default"]["meta"]["tokensBefore"].as_u64()
            );
        }
    }
}

#[test]
#[ignore = "needs MCP peers: run .ci/run, then scripts/test"]
fn mcp_listen_everything_server_requests_to_the_client_ride_the_http_streams() {
    let (py, script) = (sdk_python(), node_server("server-everything"));
    let direct = client(&py, "everything", &[], &["node", &script, "stdio"], &[]);
    let pare = Listening::spawn(&["--", "node", &script, "stdio"], &[]);
    let through = client(&py, "everything", &[], &[&pare.url()], &[]);
    // Sampling, roots and elicitation are requests from the server: they reach the client on
    // the GET stream (or the tool call's SSE stream) and its answers are POSTed back.
    assert_everything_results_match(&direct, &through, "over pare --listen");
    // pare_more is listed once a result needs it; none did here.
    assert_eq!(through["tool_names"], direct["tool_names"]);
}

#[test]
#[ignore = "needs MCP peers: run .ci/run, then scripts/test"]
fn mcp_listen_in_front_of_an_http_upstream_opens_a_session_there_per_client() {
    let (py, script) = (sdk_python(), node_server("server-everything"));
    let direct = client(&py, "everything", &[], &["node", &script, "stdio"], &[]);
    let upstream = HttpServer::everything(&script);
    let pare = Listening::spawn(&["--upstream-url", &upstream.url], &[]);
    let through = client(&py, "everything", &[], &[&pare.url()], &[]);
    assert_everything_results_match(&direct, &through, "HTTP to HTTP");
}

#[test]
fn mcp_listen_follows_the_transport_rules() {
    let py = python();
    let fake = fake_server();
    let pare = Listening::spawn(
        &["--max-message-bytes", "2048", "--", &py, &fake, "ok"],
        &[],
    );
    let addr = pare.addr.as_str();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}).to_string();

    // Refused before any session exists.
    assert_eq!(
        http_path(addr, "POST", "/other", &[ACCEPT_BOTH], &init).status,
        404
    );
    assert_eq!(http(addr, "PUT", &[], "").status, 405);
    let no_session = http(
        addr,
        "POST",
        &[ACCEPT_BOTH, JSON_BODY],
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    );
    assert_eq!(no_session.status, 400);
    assert!(
        no_session.body.contains("Mcp-Session-Id"),
        "{}",
        no_session.body
    );
    let evil_origin = http(
        addr,
        "POST",
        &[ACCEPT_BOTH, JSON_BODY, ("Origin", "http://evil.example")],
        &init,
    );
    assert_eq!(evil_origin.status, 403);
    assert!(evil_origin.body.contains("evil.example"));
    let rebinding = http(
        addr,
        "POST",
        &[ACCEPT_BOTH, JSON_BODY, ("Host", "evil.example:80")],
        &init,
    );
    assert_eq!(rebinding.status, 403);
    let local_origin = http(
        addr,
        "POST",
        &[ACCEPT_BOTH, JSON_BODY, ("Origin", "http://localhost:3000")],
        &init,
    );
    assert_eq!(local_origin.status, 200, "{}", local_origin.body);
    assert_eq!(
        http(addr, "POST", &[ACCEPT_BOTH, JSON_BODY], "[]").status,
        400
    );
    let bad_json = http(addr, "POST", &[ACCEPT_BOTH, JSON_BODY], "{\"jsonrpc\":");
    assert_eq!(bad_json.status, 400);
    assert_eq!(bad_json.messages()[0]["error"]["code"], -32700);
    let big = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":\"{}\"}}",
        "a".repeat(3000)
    );
    assert_eq!(
        http(addr, "POST", &[ACCEPT_BOTH, JSON_BODY], &big).status,
        413
    );

    // A session: SSE or JSON answers, 202 for notifications, then DELETE ends it.
    let session = initialize(addr);
    let list = http(
        addr,
        "POST",
        &[
            ("Accept", "application/json"),
            JSON_BODY,
            ("Mcp-Session-Id", &session),
        ],
        r#"{"jsonrpc":"2.0","id":"l","method":"tools/list"}"#,
    );
    assert_eq!(list.status, 200);
    assert_eq!(list.header("content-type"), Some("application/json"));
    let tools = &list.messages()[0]["result"]["tools"];
    // pare_more waits until a result needs it.
    assert!(
        tools
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["name"] != "pare_more"),
        "{tools}"
    );
    let echoed = call(addr, &session, 2, "foo/bar", json!({}));
    assert_eq!(
        echoed.messages().last().unwrap()["result"]["echo"],
        "foo/bar"
    );
    assert_eq!(
        call(
            addr,
            "0123456789abcdef0123456789abcdef",
            3,
            "ping",
            json!({})
        )
        .status,
        404
    );
    assert_eq!(
        http(addr, "GET", &[("Mcp-Session-Id", &session)], "").status,
        406
    );
    assert_eq!(
        http(addr, "DELETE", &[("Mcp-Session-Id", &session)], "").status,
        200
    );
    wait_until_gone(addr, &session);
}

#[test]
fn mcp_listen_sends_server_notifications_on_the_get_stream() {
    let py = python();
    let fake = fake_server();
    let pare = Listening::spawn(&["--", &py, &fake, "ok"], &[]);
    let addr = pare.addr.clone();
    let session = initialize(&addr);

    // Hold a GET stream open and read it on a thread.
    let mut get = TcpStream::connect(&addr).unwrap();
    get.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let head = request_head(
        &addr,
        "GET",
        &[
            ("Accept", "text/event-stream"),
            ("Mcp-Session-Id", &session),
        ],
        "",
    );
    get.write_all(head.as_bytes()).unwrap();
    let (tx, rx) = mpsc::channel();
    let (opened_tx, opened) = mpsc::channel();
    std::thread::spawn(move || {
        let mut seen = String::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = get.read(&mut buf) {
            if n == 0 {
                break;
            }
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
            if seen.contains("\r\n\r\n") {
                let _ = opened_tx.send(());
            }
            if seen.contains("notifications/foo_unknown") {
                let _ = tx.send(seen.clone());
            }
        }
    });
    // pare registers the GET stream before it writes the stream's head: once the head is
    // here, the server's messages go to this stream.
    opened
        .recv_timeout(Duration::from_secs(30))
        .expect("the GET stream's head");
    // The fake server sends a notification before answering `foo/unknown`.
    let r = call(&addr, &session, 5, "foo/unknown", json!({}));
    let on_post = r.messages();
    assert_eq!(
        on_post.len(),
        1,
        "the POST stream carried more than its response: {on_post:?}"
    );
    assert_eq!(on_post[0]["result"]["echo"], "foo/unknown");
    let seen = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the notification on the GET stream");
    assert!(seen.starts_with("HTTP/1.1 200 OK\r\n") && seen.contains("text/event-stream"));
}

#[test]
fn mcp_listen_upstream_exit_answers_the_open_request_and_ends_the_session() {
    let py = python();
    let fake = fake_server();
    let pare = Listening::spawn(&["--", &py, &fake, "exit"], &[]);
    let addr = pare.addr.as_str();
    let session = initialize(addr);
    let r = call(
        addr,
        &session,
        7,
        "tools/call",
        json!({"name": "data", "arguments": {}}),
    );
    let last = r.messages().pop().unwrap();
    assert_eq!(last["id"], 7);
    assert!(
        last["error"]["message"]
            .as_str()
            .unwrap()
            .contains("exited"),
        "{last}"
    );
    wait_until_gone(addr, &session);
    // pare itself keeps serving: a new session starts a new server.
    let again = initialize(addr);
    assert_ne!(again, session);
}

/// `pare mcp --listen` in front of the `big` fake server (a `data` result of `bytes`), and
/// a session on it.
fn big_listener(bytes: usize) -> (Listening, String) {
    let (py, fake) = (python(), fake_server());
    let pare = Listening::spawn(
        &["--", &py, &fake, "big"],
        &[("FAKE_BYTES", &bytes.to_string())],
    );
    let session = initialize(&pare.addr);
    (pare, session)
}

/// Call the `big` fake server's `data` tool (id 11) through `pare`: the whole result arrives;
/// pare's peak RSS afterwards, in kB.
fn big_result_peak_kb(pare: &Listening, session: &str, bytes: usize) -> u64 {
    let r = call(
        &pare.addr,
        session,
        11,
        "tools/call",
        json!({"name": "data", "arguments": {}}),
    );
    assert_eq!(r.status, 200);
    let msg = r.messages().pop().unwrap();
    assert_eq!(msg["id"], 11);
    let text = msg["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.len() > bytes * 9 / 10, "{} bytes", text.len());
    mcp_support::peak_rss_kb(pare.child.id()).unwrap()
}

#[test]
fn mcp_listen_streams_a_result_over_the_message_cap_in_bounded_memory() {
    let bytes: usize = 100_000_000;
    let (pare, session) = big_listener(bytes);
    // The fake server writes the id last, as the JS SDK does: with one request open, pare
    // knows whose response it is before the end.
    let peak_kb = big_result_peak_kb(&pare, &session, bytes);
    assert!(
        peak_kb < 100_000,
        "pare peaked at {peak_kb} kB for a {bytes}-byte result"
    );
    eprintln!("--listen: a {bytes}-byte result passed at {peak_kb} kB peak RSS");
}

#[test]
fn mcp_listen_refuses_bad_addresses_with_exit_2() {
    for (addr, says) in [
        ("0.0.0.0:0", "--allow-remote"),
        ("nonsense", "expected HOST:PORT"),
    ] {
        let out = Command::new(pare_bin())
            .args(["mcp", "--listen", addr, "--", "true"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{addr}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{addr}: {err}");
        assert!(out.stdout.is_empty());
    }
}

/// A raw request on a fresh connection, read to its end: its status, `None` if the
/// connection broke first (a refused connection may be reset).
fn try_status(addr: &str, raw: impl AsRef<[u8]>) -> Option<u16> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let _ = s.write_all(raw.as_ref());
    let mut got = Vec::new();
    let _ = s.read_to_end(&mut got);
    String::from_utf8_lossy(&got)
        .strip_prefix("HTTP/1.1 ")?
        .get(..3)?
        .parse()
        .ok()
}

fn raw_status(addr: &str, raw: impl AsRef<[u8]>) -> u16 {
    try_status(addr, raw).expect("a response")
}

/// Connections that send their head a byte a second held every connection slot for as long
/// as they kept sending (each read reset a 300 s timeout), so every real request got 503.
/// Now a head has 10 s from the connection's start, and the slots come back.
#[test]
fn regression_slow_heads_do_not_lock_out_clients() {
    let py = python();
    let fake = fake_server();
    let pare = Listening::spawn(&["--max-connections", "8", "--", &py, &fake, "ok"], &[]);
    let addr = pare.addr.clone();
    let slow: Vec<_> = (0..8)
        .map(|_| {
            let addr = addr.clone();
            std::thread::spawn(move || {
                let mut s = TcpStream::connect(&addr).unwrap();
                let head = format!(
                    "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nX-Slow: {}",
                    "a".repeat(200)
                );
                let start = Instant::now();
                for b in head.bytes() {
                    if s.write_all(&[b]).is_err() || start.elapsed() > Duration::from_secs(120) {
                        break;
                    }
                    std::thread::sleep(Duration::from_secs(1));
                }
                let mut reply = Vec::new();
                let _ = s.read_to_end(&mut reply);
                String::from_utf8_lossy(&reply).into_owned()
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs(2));
    let raw = initialize_request(&addr);
    let start = Instant::now();
    let mut statuses = Vec::new();
    loop {
        let status = try_status(&addr, &raw);
        statuses.push(status);
        if status == Some(200) {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "still refused after 90 s: {statuses:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    for t in slow {
        let reply = t.join().unwrap();
        assert!(
            reply.is_empty() || reply.starts_with("HTTP/1.1 408"),
            "{reply}"
        );
    }
}

/// An `initialize` sent as a notification (no id) started a session and a server that no
/// one could address or delete; `--max-sessions` of them locked everyone out for 30 minutes.
#[test]
fn regression_an_initialize_without_an_id_starts_no_session() {
    let py = python();
    let fake = fake_server();
    let pare = Listening::spawn(&["--max-sessions", "1", "--", &py, &fake, "ok"], &[]);
    let addr = pare.addr.as_str();
    let note = r#"{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    for _ in 0..3 {
        let r = http(addr, "POST", &[ACCEPT_BOTH, JSON_BODY], note);
        assert_eq!(r.status, 400, "{}", r.body);
        assert!(r.header("mcp-session-id").is_none());
    }
    initialize(addr);
}

/// Framing RFC 9112 calls ambiguous was accepted: two Content-Length or Host headers, a
/// signed length. (Two Content-Length lines of the same value are not ambiguous: RFC 9110
/// §8.6 lets a recipient take them as one, and hyper, the stack since, does.)
#[test]
fn regression_ambiguous_framing_is_refused_with_400() {
    let py = python();
    let fake = fake_server();
    let pare = Listening::spawn(&["--", &py, &fake, "ok"], &[]);
    let addr = pare.addr.as_str();
    // A request that would start a session if its framing were taken.
    let body = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    let n = body.len();
    let post = |headers: &str| {
        format!(
            "POST /mcp HTTP/1.1\r\n{headers}Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{body}"
        )
    };
    for headers in [
        format!(
            "Host: {addr}\r\nContent-Length: {n}\r\nContent-Length: {}\r\n",
            n + 5
        ),
        format!("Host: {addr}\r\nContent-Length: {n}, {}\r\n", n + 5),
        format!("Host: {addr}\r\nContent-Length: +{n}\r\n"),
        format!("Host: {addr}\r\nHost: {addr}\r\nContent-Length: {n}\r\n"),
        format!("Content-Length: {n}\r\n"),
    ] {
        assert_eq!(raw_status(addr, post(&headers)), 400, "{headers:?}");
    }
    let fine = format!("Host: {addr}\r\nContent-Length: {n}\r\n");
    assert_eq!(raw_status(addr, post(&fine)), 200);
}

/// `pare mcp --listen` read a Host header that is not text as no Host at all, so
/// `Host: evil.example\xff` started a session where `pare http` answered 403: the two doors
/// had each written their own check. One check now, and a header that is not text is refused.
#[test]
fn regression_a_host_that_is_not_text_started_a_session() {
    let py = python();
    let fake = fake_server();
    let pare = Listening::spawn(&["--", &py, &fake, "ok"], &[]);
    let addr = pare.addr.as_str();
    let init = initialize_request(addr);
    let (head, body) = init.split_once("\r\n\r\n").unwrap();
    for (name, value) in [
        ("Host", &b"evil.example\xff"[..]),
        ("Origin", b"http://evil.example\xff"),
    ] {
        // The request as it was, with one more header that is not text (a Host replaces the
        // good one: two would be refused as ambiguous framing before the check).
        let mut raw: Vec<u8> = head
            .lines()
            .filter(|l| name != "Host" || !l.starts_with("Host:"))
            .flat_map(|l| [l.as_bytes(), b"\r\n"].concat())
            .collect();
        raw.extend_from_slice(format!("{name}: ").as_bytes());
        raw.extend_from_slice(value);
        raw.extend_from_slice(b"\r\n\r\n");
        raw.extend_from_slice(body.as_bytes());
        assert_eq!(raw_status(addr, &raw), 403, "{name}");
    }
    assert_eq!(raw_status(addr, init.as_bytes()), 200);
}

/// With its id last and two requests open, a 100 MB reply was held whole in memory until its
/// end named its request (266 MB peak): now it waits in a temporary file.
#[test]
fn regression_an_oversize_reply_with_its_id_last_and_two_requests_open_is_not_held_in_memory() {
    let bytes: usize = 100_000_000;
    let (pare, session) = big_listener(bytes);
    let addr = pare.addr.as_str();
    // A request the server never answers stays open (its connection is kept, unread).
    let never =
        json!({"jsonrpc": "2.0", "id": 10, "method": "test/never", "params": {}}).to_string();
    let mut open = TcpStream::connect(addr).unwrap();
    let head = request_head(
        addr,
        "POST",
        &[ACCEPT_BOTH, JSON_BODY, ("Mcp-Session-Id", &session)],
        &never,
    );
    open.write_all((head + &never).as_bytes()).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let peak_kb = big_result_peak_kb(&pare, &session, bytes);
    eprintln!(
        "--listen, id last, two requests open: a {bytes}-byte result passed at {peak_kb} kB peak RSS"
    );
    assert!(
        peak_kb < 100_000,
        "pare peaked at {peak_kb} kB for a {bytes}-byte result"
    );
    drop(open);
}

/// One exchange from `source`; `None` if the connection was refused or cut.
fn status_from(source: &str, addr: &str, raw: &str) -> Option<(u16, String)> {
    let mut s = connect_from(source, addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
    s.write_all(raw.as_bytes()).ok()?;
    let mut reply = Vec::new();
    let _ = s.read_to_end(&mut reply);
    let r = parse_reply(&reply);
    let session = r.header("mcp-session-id").unwrap_or("").to_owned();
    Some((r.status, session))
}

fn initialize_request(addr: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}).to_string();
    request_head(addr, "POST", &[ACCEPT_BOTH, JSON_BODY], &init) + &init
}

/// One client could exhaust the listener: 500 idle sockets gave every client 503 for about
/// 10 s, and 64 sessions opened and left locked everyone out for 30 minutes. Now one
/// client address holds at most its share of connections and sessions (429 beyond), and a
/// session never used closes within seconds; a normal client from another address is
/// served at once while all that is open.
#[test]
fn regression_one_client_exhausted_the_listener() {
    let py = python();
    let fake = fake_server();
    // Sessions unused for 10 s close: long enough that none closes while the 64 below are
    // opened on a loaded machine (with 3 s, 25 opened instead of 16 on two busy cores).
    let pare = Listening::spawn(&["--session-unused", "10", "--", &py, &fake, "ok"], &[]);
    let addr = pare.addr.clone();
    let hostile = "127.0.0.2";
    if connect_from(hostile, &addr).is_err() {
        panic!("cannot connect from {hostile}: this test needs 127.0.0.0/8 on loopback");
    }
    // 64 sessions opened from one address and never used: 16 (its share) start.
    let mut opened = Vec::new();
    let mut statuses = std::collections::BTreeMap::new();
    for _ in 0..64 {
        let (status, session) =
            status_from(hostile, &addr, &initialize_request(&addr)).expect("an answer");
        *statuses.entry(status).or_insert(0) += 1;
        if status == 200 {
            opened.push(session);
        }
    }
    assert_eq!(statuses, [(200, 16), (429, 48)].into(), "{statuses:?}");
    // 500 idle sockets from the same address: 64 (its share) are held, the rest refused.
    let idle: Vec<TcpStream> = (0..500)
        .filter_map(|_| connect_from(hostile, &addr).ok())
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let refused = idle
        .iter()
        .filter(|s| {
            s.set_read_timeout(Some(Duration::from_millis(100)))
                .unwrap();
            let mut buf = [0u8; 64];
            matches!((&**s).read(&mut buf), Ok(n) if n > 0 && buf.starts_with(b"HTTP/1.1 429"))
        })
        .count();
    assert_eq!(
        refused,
        500 - 64,
        "the connections over the share are told 429"
    );
    // A normal client, from 127.0.0.1, is served at once.
    let start = Instant::now();
    let session = initialize(&addr);
    let r = call(&addr, &session, 1, "tools/list", json!({}));
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.messages()[0]["result"]["tools"].is_array());
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    // The hostile sessions, never used, close within seconds; the used one stays.
    std::thread::sleep(Duration::from_secs(13));
    drop(idle);
    for s in &opened {
        let r = http(&addr, "DELETE", &[("Mcp-Session-Id", s)], "");
        assert_eq!(
            r.status, 404,
            "session {s} was never used and should be gone"
        );
    }
    let r = call(&addr, &session, 2, "ping", json!({}));
    assert_eq!(
        r.status, 200,
        "a used session outlives --session-unused: {}",
        r.body
    );
}
