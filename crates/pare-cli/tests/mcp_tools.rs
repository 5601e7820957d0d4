//! What `pare mcp` adds to and takes from tools, against the stand-in server
//! (`tests/mcp/fake_server.py`): a tool list no dearer than the server's, `pare_more` listed
//! once needed, file text byte for byte, caller parameters, packed search results, and the
//! original of a result shown in part, without a second call. Needs python3.

use crate::mcp_support;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use mcp_support::{Proxy, fake_server, pare_bin, python};
use serde_json::{Value, json};

fn tok() -> &'static dyn pare::tokens::Tokenizer {
    pare::tokens::builtin("o200k_base").unwrap()
}

fn examples() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

/// The fake server's own `initialize` and `tools/list` results.
fn direct() -> (Value, Value) {
    let mut child = Command::new(python())
        .args([&fake_server(), "ok"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{INIT}").unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{}}}}"#
    )
    .unwrap();
    drop(stdin);
    let lines: Vec<Value> = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    child.wait().unwrap();
    (lines[0]["result"].clone(), lines[1]["result"].clone())
}

/// pare over the fake server with `args` and the environment `env`, initialized.
fn start(args: &[&str], env: &[(&str, &str)]) -> Proxy {
    let (py, server) = (python(), fake_server());
    let mut cmd: Vec<&str> = args.to_vec();
    cmd.extend(["--", &py, &server, "ok"]);
    let mut p = Proxy::spawn(&cmd, env);
    p.initialize();
    p
}

fn call(p: &mut Proxy, id: u64, name: &str, args: Value) -> Value {
    p.request(id, "tools/call", json!({"name": name, "arguments": args}))
}

/// A policy file in `dir` with the `[mcp]` text given.
fn policy(dir: &Path, text: &str) -> String {
    let path = dir.join("p.toml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn tool_names(list: &Value) -> Vec<&str> {
    list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

/// Every tools/call the fake server has received.
fn server_calls(p: &mut Proxy, id: u64) -> Vec<Value> {
    p.request(id, "test/calls", json!({}))["result"]["calls"]
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn mcp_tools_list_through_pare_costs_no_more_than_direct_and_initialize_advertises_list_changes() {
    let (init, list) = direct();
    let mut p = start(&[], &[]);
    let through_init = p.request(
        5,
        "initialize",
        serde_json::from_str::<Value>(INIT).unwrap()["params"].clone(),
    );
    let mut want = init.clone();
    want["capabilities"]["tools"]["listChanged"] = json!(true);
    assert_eq!(through_init["result"], want);

    let through = p.request(1, "tools/list", json!({}))["result"].clone();
    let (d, t) = (
        tok().count(&list["tools"].to_string()),
        tok().count(&through["tools"].to_string()),
    );
    eprintln!("fake server tools/list: {d} o200k tokens direct, {t} through pare");
    assert!(t <= d, "{t} > {d}");
    assert_eq!(tool_names(&through), tool_names(&list), "no pare_more yet");
    // The only change: the `$schema` URL no validator needs.
    let mut want = list.clone();
    want["tools"][3]["inputSchema"]
        .as_object_mut()
        .unwrap()
        .remove("$schema");
    assert_eq!(through, want);
}

#[test]
fn mcp_a_file_read_reaches_the_model_byte_for_byte_and_pages_at_line_ends() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("config.json");
    let text = "{\n  \"name\": \"pare\",\n  \"note\": null,\n  \"tags\": [],\n  \"n\": 1.50\n}\n";
    std::fs::write(&file, text).unwrap();
    let f = file.display().to_string();
    let prune = mcp_support::mcp_dir().join("prune.toml");
    let mut p = start(&["--policy", prune.to_str().unwrap()], &[("FAKE_FILE", &f)]);
    let list = p.request(1, "tools/list", json!({}))["result"].clone();
    let read = &list["tools"][3];
    assert_eq!(read["name"], "read_text_file");
    assert!(read["inputSchema"]["properties"].get("detail").is_none());
    let r = call(&mut p, 2, "read_text_file", json!({"path": f}));
    assert_eq!(
        r["result"]["content"],
        json!([{"type": "text", "text": text}])
    );
    assert!(r["result"].get("_meta").is_none());
    // The same text from a tool the rule does not name is shaped (prune drops the null).
    let r = call(&mut p, 3, "file", json!({}));
    assert_ne!(r["result"]["content"][0]["text"], text);

    // `verbatim` overrides the rule both ways; over the budget a file is paged at line ends.
    let long: String = (0..3000)
        .map(|i| format!("{{\"line\": {i}, \"note\": null}},\n"))
        .collect();
    std::fs::write(&file, &long).unwrap();
    let pol = policy(
        dir.path(),
        "[[ops]]\nop = \"prune\"\n[mcp]\n[[mcp.tools]]\nmatch = [\"file\"]\nverbatim = true\n\
         [[mcp.tools]]\nmatch = [\"read_text_file\"]\nverbatim = false\n",
    );
    let mut p = start(
        &["--policy", &pol, "--max-tokens", "2000"],
        &[("FAKE_FILE", &f)],
    );
    let list = p.request(1, "tools/list", json!({}))["result"].clone();
    assert!(!tool_names(&list).contains(&"pare_more"));
    assert!(list["tools"][2]["inputSchema"].get("properties").is_none());
    assert!(list["tools"][3]["inputSchema"]["properties"]["detail"].is_object());
    p.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "file", "arguments": {}}}));
    assert_eq!(
        p.recv(),
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
        "the client learns of pare_more before the first page"
    );
    let mut reply = p.recv();
    let mut joined = String::new();
    for id in 3.. {
        let r = &reply["result"];
        let total: usize = r["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| tok().count(c["text"].as_str().unwrap()))
            .sum();
        assert!(total <= 2000, "{total}");
        let page = r["content"][0]["text"].as_str().unwrap();
        assert!(page.ends_with('\n'), "cut at a line end");
        joined.push_str(page);
        let Some(c) = r["_meta"]["pare"]["nextCursor"].as_str() else {
            break;
        };
        reply = call(&mut p, id, "pare_more", json!({"cursor": c}));
    }
    assert_eq!(joined, long);
    let list = p.request(99, "tools/list", json!({}))["result"].clone();
    assert_eq!(tool_names(&list).last(), Some(&"pare_more"));
    let r = call(
        &mut p,
        100,
        "read_text_file",
        json!({"path": f, "detail": "full"}),
    );
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("{\"line\"")
    );
}

#[test]
fn mcp_caller_parameters_shape_the_result_and_never_reach_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let narrative = examples().join("policies/narrative.toml");
    let pol = policy(
        dir.path(),
        &format!(
            "[mcp]\n[[mcp.tools]]\nmatch = [\"file\"]\npolicy = {:?}\nparams = [\"maxGapMinutes\"]\n",
            narrative.display().to_string()
        ),
    );
    let payload = examples().join("payloads/narrative_day.json");
    let mut p = start(
        &[
            "--policy",
            &pol,
            "--max-tokens",
            "100000",
            "--max-chars4",
            "1000000",
        ],
        &[("FAKE_FILE", &payload.display().to_string())],
    );
    let list = p.request(1, "tools/list", json!({}))["result"].clone();
    let props = &list["tools"][2]["inputSchema"]["properties"];
    assert_eq!(props["maxGapMinutes"]["type"], "number");
    assert_eq!(
        props["detail"]["enum"],
        json!(["minimal", "standard", "full"])
    );

    let segments = |r: &Value| {
        let (v, _) =
            pare::encode::expand(r["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
        v.as_object()
            .unwrap()
            .get("segments")
            .unwrap()
            .as_array()
            .unwrap()
            .len()
    };
    let default = call(&mut p, 2, "file", json!({}));
    let wide = call(&mut p, 3, "file", json!({"maxGapMinutes": 5}));
    assert!(
        segments(&wide) < segments(&default),
        "{} blocks at 5 minutes, {} at 2",
        segments(&wide),
        segments(&default)
    );
    let bad = call(&mut p, 4, "file", json!({"maxGapMinutes": "soon"}));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    let message = bad["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("maxGapMinutes")
            && message.contains("\"soon\"")
            && message.contains("number"),
        "{message}"
    );
    let calls = server_calls(&mut p, 5);
    assert_eq!(calls.len(), 2, "the bad call was not forwarded: {calls:?}");
    assert!(
        calls.iter().all(|c| c["arguments"] == json!({})),
        "{calls:?}"
    );

    // A parameter the tool's policy does not declare stops pare at start-up.
    let pol = policy(
        dir.path(),
        "[mcp]\n[[mcp.tools]]\nmatch = [\"file\"]\nparams = [\"maxGap\"]\n",
    );
    let out = Command::new(pare_bin())
        .args(["mcp", "--policy", &pol, "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("mcp.tools[0].params") && err.contains("maxGap"),
        "{err}"
    );
}

/// `pare mcp` at 1,500 tokens with the stand-in's `search` tool shaped by `search.toml`.
fn search_tool() -> Proxy {
    let dir = tempfile::tempdir().unwrap();
    let search = examples().join("policies/search.toml");
    let pol = policy(
        dir.path(),
        &format!(
            "[mcp]\n[[mcp.tools]]\nmatch = [\"search\"]\npolicy = {:?}\n",
            search.display().to_string()
        ),
    );
    start(&["--policy", &pol, "--max-tokens", "1500"], &[])
}

#[test]
fn mcp_a_search_tool_with_a_pack_policy_returns_packed_tiers_within_the_budget() {
    let mut p = search_tool();
    let list = p.request(1, "tools/list", json!({}))["result"].clone();
    assert_eq!(
        list["tools"][4]["inputSchema"]["properties"]["detail"]["enum"],
        json!(["ids_only", "metadata", "preview", "standard", "full"])
    );
    let r = call(&mut p, 2, "search", json!({"query": "handler", "n": 20}));
    let r = &r["result"];
    let content = r["content"].as_array().unwrap();
    let text = content[0]["text"].as_str().unwrap();
    let total: usize = content
        .iter()
        .map(|c| tok().count(c["text"].as_str().unwrap()))
        .sum();
    assert!(total <= 1500, "{total}");
    assert_eq!(r["_meta"]["pare"]["tokensAfter"], total);
    assert!(text.starts_with("all results: score_type hybrid"), "{text}");
    assert!(
        text.contains("[1] src/mod_0/file_0.py · score 0.95"),
        "{text}"
    );
    assert!(
        text.contains("· preview\n```python\n"),
        "a long chunk is a preview: {text}"
    );
    assert!(text.contains("lines omitted"), "{text}");
    assert!(r["_meta"]["pare"]["pages"].as_u64().unwrap() > 1);
    let ids = call(&mut p, 3, "search", json!({"n": 20, "detail": "ids_only"}));
    let ids = ids["result"]["content"][0]["text"].as_str().unwrap();
    assert!(!ids.contains("```"), "ids only: {ids}");
}

/// Regressions, a `[pack]` tool through `pare mcp`: the packed text said `next page:
/// --cursor …` (the CLI's words) beside pare's own `pare_more` note; `detail: "full"`
/// returned packed text, not the server's; the original handle returned the packed view
/// again, and `path` on it failed ("no `results` in the input").
#[test]
fn mcp_a_pack_tool_speaks_the_doors_words_and_full_and_the_original_are_the_servers() {
    let mut p = search_tool();
    p.request(1, "tools/list", json!({}));
    let r = call(&mut p, 2, "search", json!({"query": "handler", "n": 20}));
    let texts: Vec<&str> = r["result"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["text"].as_str().unwrap())
        .collect();
    assert!(texts.iter().all(|t| !t.contains("--cursor")), "{texts:?}");
    assert!(texts[1].contains("pare_more"), "{texts:?}");
    let meta = &r["result"]["_meta"]["pare"];
    assert_eq!(meta["format"], "pack");
    let original = meta["original"]
        .as_str()
        .expect("a packed result names its original");

    // `full` is the server's text: JSON (paged under the budget), not a pack.
    let full = call(
        &mut p,
        3,
        "search",
        json!({"query": "handler", "n": 20, "detail": "full"}),
    );
    let full_text = full["result"]["content"][0]["text"].as_str().unwrap();
    assert!(!full_text.contains("```"), "{full_text:.200}");
    assert!(pare::encode::expand(full_text).is_ok(), "{full_text:.200}");

    // The original, whole, is the server's text too, and `path` selects in it.
    let whole = call(&mut p, 4, "pare_more", json!({"cursor": original}));
    let whole_text = whole["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(whole_text, full_text);
    let one = call(
        &mut p,
        5,
        "pare_more",
        json!({"cursor": original, "path": "$.results[0].chunk_id"}),
    );
    assert!(one.get("error").is_none(), "{one}");
    assert!(
        !one["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .is_empty()
    );
}

#[test]
fn mcp_the_original_of_a_result_shown_in_part_comes_back_without_a_second_call() {
    let prune = mcp_support::mcp_dir().join("prune.toml");
    let mut p = start(&["--policy", prune.to_str().unwrap()], &[]);
    let list = p.request(1, "tools/list", json!({}))["result"].clone();
    assert_eq!(
        list["tools"][0]["inputSchema"]["properties"]["detail"]["enum"],
        json!(["standard", "full"])
    );
    p.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "data", "arguments": {"n": 3}}}));
    assert_eq!(p.recv()["method"], "notifications/tools/list_changed");
    let r = p.recv()["result"].clone();
    let handle = r["_meta"]["pare"]["original"].as_str().unwrap().to_owned();
    // One note item: what the policy removed, then how to get it back.
    assert_eq!(
        r["content"][1]["text"],
        format!(
            "pare: absent members may have been null, \"\", [] or {{}} (pruned).\n\
             pare: original: pare_more {{\"cursor\":\"{handle}\"}} (add \"path\": a JSONPath, or \"detail\")"
        )
    );
    assert_eq!(r["content"].as_array().unwrap().len(), 2);
    let server_text = serde_json::to_string_pretty(&json!({"rows": [
        {"id": 0, "name": "row 0", "note": null, "tags": [], "score": 0.0},
        {"id": 1, "name": "row 1", "note": null, "tags": [], "score": 0.5},
        {"id": 2, "name": "row 2", "note": null, "tags": [], "score": 1.0}]}))
    .unwrap();
    let whole = call(&mut p, 3, "pare_more", json!({"cursor": handle}));
    assert_eq!(
        whole["result"]["content"],
        json!([{"type": "text", "text": server_text}])
    );
    let one = call(
        &mut p,
        4,
        "pare_more",
        json!({"cursor": handle, "path": "$.rows[1]"}),
    );
    let (v, _) =
        pare::encode::expand(one["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert!(
        v == pare::json::parse(r#"{"id":1,"name":"row 1","note":null,"tags":[],"score":0.5}"#)
            .unwrap()
    );
    let bad = call(
        &mut p,
        5,
        "pare_more",
        json!({"cursor": handle, "path": "$["}),
    );
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    assert_eq!(server_calls(&mut p, 6).len(), 1, "the server saw one call");

    // A lossless result (the built-in policy) needs no handle.
    let mut p = start(&[], &[]);
    let r = call(&mut p, 1, "data", json!({"n": 3}));
    assert_eq!(r["result"]["content"].as_array().unwrap().len(), 1);
    assert!(r["result"]["_meta"]["pare"].get("original").is_none());
}

/// `pare mcp --metrics`: a shaped call paged, its later pages through `pare_more`, and one
/// call `detail: "full"`, then the metrics text.
fn mcp_metrics_after_calls() -> String {
    let port = crate::rest_support::free_port();
    let mut p = start(
        &["--max-tokens", "400", "--metrics", &port.to_string()],
        &[],
    );
    let mut reply = call(&mut p, 1, "data", json!({"n": 60}));
    let mut id = 2;
    while let Some(c) = reply["result"]["_meta"]["pare"]["nextCursor"].as_str() {
        let c = c.to_owned();
        reply = call(&mut p, id, "pare_more", json!({"cursor": c}));
        id += 1;
    }
    let full = call(&mut p, 100, "data", json!({"n": 2, "detail": "full"}));
    assert!(full.get("result").is_some(), "{full}");
    let bad = call(&mut p, 101, "pare_more", json!({"cursor": "nope"}));
    assert!(bad.get("error").is_some(), "{bad}");
    let r = crate::rest_support::request(port, "GET", "/metrics", &[], b"");
    assert_eq!(r.status, 200);
    r.text().to_owned()
}

#[test]
fn mcp_metrics_count_calls_pages_tokens_and_pare_more() {
    let text = mcp_metrics_after_calls();
    for line in [
        // The second asked for `full`: still pare's result (its note on the level).
        r#"pare_mcp_tool_calls_total{tool="data",outcome="shaped"} 2"#,
        r#"pare_mcp_pages_served_total{tool="data",source="server"} 2"#,
        r#"pare_mcp_tool_call_duration_seconds_count{tool="data"} 2"#,
        r#"pare_mcp_more_calls_total{result="error"} 1"#,
    ] {
        assert!(text.lines().any(|l| l == line), "{line}\n{text}");
    }
    let value = |prefix: &str| -> u64 {
        let line = text
            .lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("{prefix}\n{text}"));
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    assert!(value(r#"pare_mcp_more_calls_total{result="ok"}"#) >= 1);
    assert!(value(r#"pare_mcp_pages_served_total{tool="pare_more",source="pare_more"}"#) >= 1);
    let before = value(r#"pare_mcp_tokens_before_total{tool="data"}"#);
    assert!(before > value(r#"pare_mcp_tokens_after_total{tool="data"}"#));
    // Later pages add what they sent, not the whole result's count again.
    assert!(
        !text.contains(r#"pare_mcp_tokens_before_total{tool="pare_more"}"#),
        "{text}"
    );
}

#[test]
#[ignore = "needs HTTP peers: scripts/http_peers.sh install (.ci/run runs it)"]
fn mcp_metrics_text_passes_promtool_check_metrics() {
    crate::rest_support::assert_promtool_accepts(&mcp_metrics_after_calls());
}
