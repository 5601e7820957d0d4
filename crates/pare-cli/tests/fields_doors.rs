//! The caller's `fields` (issue 32): `pare compact --fields`, `pare http`'s `pare_fields`
//! and `pare mcp`'s `fields` argument (offered where `[mcp] fields = true`, on the reference
//! memory server) show the same bytes for the same response and fields, and a bad field is
//! an error that names the argument it came in. (The Python and Node packages are held to
//! `pare compact`'s bytes by their own tests.)

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::mcp_support::{Proxy, graph_file, node_server, pare_bin};
use crate::rest_support::{Pare, request};

const FIELDS: &str = "name,entityType,$.relations[*].from";

/// `pare compact FILE --fields FIELDS` (no policy): stdout without its newline, stderr, and
/// whether it succeeded.
fn compact(file: &Path, fields: &str) -> (String, String, bool) {
    let out = Command::new(pare_bin())
        .args(["compact", "--fields", fields])
        .arg(file)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    (
        text.strip_suffix('\n').unwrap_or(&text).to_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.success(),
    )
}

/// A raw upstream that answers every request with `body` as JSON.
fn upstream(body: String) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut c in listener.incoming().map_while(Result::ok) {
            let mut buf = [0u8; 8192];
            let mut head = Vec::new();
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match c.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            let reply = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = c.write_all(reply.as_bytes());
        }
    });
    port
}

fn graph_text() -> String {
    json!({
        "entities": [
            {"type": "entity", "name": "a", "entityType": "person", "observations": ["x", "y"]},
            {"type": "entity", "name": "b", "entityType": "place", "observations": []}
        ],
        "relations": [{"type": "relation", "from": "a", "to": "b", "relationType": "visits"}]
    })
    .to_string()
}

#[test]
fn compact_fields_shows_only_them_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("g.json");
    std::fs::write(&file, graph_text()).unwrap();
    let (text, stderr, ok) = compact(&file, FIELDS);
    assert!(ok, "{stderr}");
    assert_eq!(
        text,
        r#"{"entities":[{"name":"a","entityType":"person"},{"name":"b","entityType":"place"}],"relations":[{"from":"a"}]}"#
    );
    assert!(
        stderr.contains("pare: showing only the fields name, entityType, $.relations[*].from; --fields to change."),
        "{stderr}"
    );
    let (_, stderr, ok) = compact(&file, "name,$..[");
    assert!(!ok);
    assert!(
        stderr.contains("--fields: `$..[` is not a field"),
        "{stderr}"
    );
}

#[test]
fn pare_http_pare_fields_gives_compacts_bytes_and_a_bad_field_is_a_400_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("g.json");
    std::fs::write(&file, graph_text()).unwrap();
    let (expected, _, _) = compact(&file, FIELDS);
    let port = upstream(graph_text());
    let policy = dir.path().join("p.toml");
    std::fs::write(
        &policy,
        "[http]\n[[http.routes]]\nmatch = [\"GET /graph\"]\n",
    )
    .unwrap();
    let pare = Pare::spawn(&format!("http://127.0.0.1:{port}"), &policy, &["--quiet"]);
    let query = format!("/graph?pare_fields={}", FIELDS.replace('$', "%24"));
    let r = request(pare.port, "GET", &query, &[], b"");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.text(), expected);
    assert!(
        r.header("x-pare-note").unwrap().contains(
            "showing only the fields name, entityType, $.relations[*].from; pare_fields to change"
        ),
        "{:?}",
        r.header("x-pare-note")
    );
    let by_header = request(
        pare.port,
        "GET",
        "/graph",
        &[("X-Pare-Fields", FIELDS)],
        b"",
    );
    assert_eq!(by_header.text(), expected);
    let bad = request(pare.port, "GET", "/graph?pare_fields=%24.%5B", &[], b"");
    assert_eq!(bad.status, 400);
    assert_eq!(bad.json()["param"], "pare_fields");
}

#[test]
#[ignore = "needs MCP peers: run .ci/run, then scripts/test"]
fn pare_mcp_fields_on_the_memory_server_gives_compacts_bytes() {
    let server = node_server("server-memory");
    let dir = tempfile::tempdir().unwrap();
    let graph = graph_file(dir.path(), "g.jsonl", 12);
    let policy = dir.path().join("p.toml");
    std::fs::write(&policy, "[mcp]\nformat = \"json\"\nfields = true\n").unwrap();
    let policy = policy.display().to_string();
    let mut p = Proxy::spawn(
        &["--policy", &policy, "--", "node", &server],
        &[("MEMORY_FILE_PATH", &graph)],
    );
    p.initialize();
    let list = p.request(1, "tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().unwrap();
    let read_graph = tools.iter().find(|t| t["name"] == "read_graph").unwrap();
    assert_eq!(
        read_graph["inputSchema"]["properties"]["fields"]["type"], "array",
        "{read_graph}"
    );
    let text = |r: &serde_json::Value| {
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    // The whole graph (no ops: lossless), then only the fields.
    let whole = text(&p.request(
        2,
        "tools/call",
        json!({"name": "read_graph", "arguments": {}}),
    ));
    let file = dir.path().join("graph.json");
    std::fs::write(&file, &whole).unwrap();
    let (expected, stderr, ok) = compact(&file, FIELDS);
    assert!(ok, "{stderr}");
    let fields: Vec<&str> = vec!["name", "entityType", "$.relations[*].from"];
    let r = p.request(
        3,
        "tools/call",
        json!({"name": "read_graph", "arguments": {"fields": fields}}),
    );
    assert_eq!(text(&r), expected);
    let all = r["result"]["content"].to_string();
    assert!(all.contains("the `fields` argument to change"), "{all}");
    // One comma-separated string means the same.
    let r = p.request(
        4,
        "tools/call",
        json!({"name": "read_graph", "arguments": {"fields": FIELDS}}),
    );
    assert_eq!(text(&r), expected);
    // A bad field: an invalid-params error naming the argument, and the server never hears
    // of the call.
    let bad = p.request(
        5,
        "tools/call",
        json!({"name": "read_graph", "arguments": {"fields": ["$..["]}}),
    );
    let message = bad["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("`fields`: `$..[` is not a field"), "{bad}");
}
