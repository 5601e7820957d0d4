//! `pare mcp` with real peers: the reference memory and everything servers (node) as
//! upstreams, the official Python MCP SDK (`mcp`) as the client (`tests/mcp/client.py`).
//! Each scenario runs through pare and directly, and the two are compared. All are
//! `#[ignore]`d with the reason: `.ci/run` installs the peers, `scripts/test` runs these
//! (and, run without the peers, they fail saying what is missing).

use crate::mcp_support;

use std::path::Path;

use mcp_support::{
    Proxy, assert_everything_results_match, client, graph_file, mcp_dir, node_server, pare_bin,
    sdk_python,
};
use pare::encode::expand;
use serde_json::{Value, json};

fn tok() -> &'static dyn pare::tokens::Tokenizer {
    pare::tokens::builtin("o200k_base").unwrap()
}

fn memory_policy() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/policies/memory.toml")
        .display()
        .to_string()
}

/// The graph the memory server holds in `file`, as the JSON its `read_graph` describes.
fn graph_json(file: &str) -> pare::Value {
    let mut entities = Vec::new();
    let mut relations = Vec::new();
    for line in std::fs::read_to_string(file).unwrap().lines() {
        let mut v: Value = serde_json::from_str(line).unwrap();
        let obj = v.as_object_mut().unwrap();
        let kind = obj.shift_remove("type").unwrap();
        if kind == "entity" {
            entities.push(v);
        } else {
            relations.push(v);
        }
    }
    let g = json!({"entities": entities, "relations": relations});
    pare::json::parse(&g.to_string()).unwrap()
}

fn texts(v: &Value) -> Vec<&str> {
    v["texts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect()
}

#[test]
#[ignore = "needs MCP peers: run .ci/run, then scripts/test"]
fn mcp_memory_read_graph_through_pare_is_lossless_and_at_least_half_the_tokens() {
    let (py, server) = (sdk_python(), node_server("server-memory"));
    let dir = tempfile::tempdir().unwrap();
    let direct_file = graph_file(dir.path(), "direct.jsonl", 400);
    let pare_file = graph_file(dir.path(), "pare.jsonl", 400);
    let graph = graph_json(&direct_file);
    let policy = memory_policy();
    let direct = client(
        &py,
        "memory",
        &[],
        &["node", &server],
        &[("MEMORY_FILE_PATH", &direct_file)],
    );
    let through = client(
        &py,
        "memory",
        &["pare=1"],
        &[
            pare_bin(),
            "mcp",
            "--policy",
            &policy,
            "--max-tokens",
            "100000",
            "--max-chars4",
            "1000000",
            "--",
            "node",
            &server,
        ],
        &[("MEMORY_FILE_PATH", &pare_file)],
    );

    // The server's own text is the graph; pare's text expands to exactly the same value.
    let server_text = texts(&direct["default"])[0];
    assert!(
        pare::json::parse(server_text).unwrap() == graph,
        "the server's text is not the graph"
    );
    let shaped = texts(&through["default"]);
    assert_eq!(shaped.len(), 1);
    let (value, _) = expand(shaped[0]).unwrap();
    assert!(value == graph, "read_graph through pare is not lossless");
    let (before, after) = (tok().count(server_text), tok().count(shaped[0]));
    assert!(
        after * 2 <= before,
        "{before} → {after} o200k tokens: less than 50% fewer"
    );
    let meta = &through["default"]["meta"];
    assert_eq!(meta["tokensBefore"], before);
    assert_eq!(meta["tokensAfter"], after);
    assert_eq!(meta["level"], "standard");
    assert_eq!(meta["pages"], 1);
    // The graph again in structuredContent: the same value, so sent once, as the text.
    assert!(direct["default"]["structured"].is_object());
    assert!(through["default"]["structured"].is_null());
    assert_eq!(
        meta["structuredContent"],
        "dropped: the text carries the same value"
    );
    let structured = direct["default"]["structured"].to_string();
    eprintln!(
        "read_graph: direct {before} text + {} structuredContent o200k tokens; through pare {after} + 0",
        tok().count(&structured)
    );

    // memory.toml is lossless: no `detail` to ask for, and the second read is the first.
    assert_eq!(texts(&through["full"]), shaped);

    // Writes go through (the detail argument never reaches the server's validation).
    assert_eq!(through["create"]["is_error"], false);
    let (created, _) = expand(texts(&through["create"])[0]).unwrap();
    assert_eq!(
        created,
        pare::json::parse(texts(&direct["create"])[0]).unwrap()
    );
    let (found, _) = expand(texts(&through["search"])[0]).unwrap();
    assert_eq!(
        found,
        pare::json::parse(texts(&direct["search"])[0]).unwrap()
    );

    // tools/list: the server's list less its `$schema` URLs; a lossless policy adds nothing,
    // and `pare_more` waits until a result needs it.
    assert_no_dearer_and_only_schema_urls_differ(&direct["tools"], &through["tools"], "memory");
}

/// `through` is `direct` less the `$schema` URLs of input and output schemas, and costs no
/// more o200k tokens.
fn assert_no_dearer_and_only_schema_urls_differ(direct: &Value, through: &Value, server: &str) {
    let (d, t) = (
        tok().count(&direct["tools"].to_string()),
        tok().count(&through["tools"].to_string()),
    );
    eprintln!("{server} tools/list: {d} o200k tokens direct, {t} through pare");
    assert!(t <= d, "{server}: {t} > {d} tokens");
    let mut want = direct.clone();
    for tool in want["tools"].as_array_mut().unwrap() {
        if let Some(schema) = tool.get_mut("inputSchema").and_then(Value::as_object_mut) {
            schema.shift_remove("$schema");
        }
        // pare may drop or move a shaped tool's structuredContent: no client may expect one.
        tool.as_object_mut().unwrap().shift_remove("outputSchema");
    }
    assert_eq!(through, &want, "{server}: tools/list through pare");
}

#[test]
#[ignore = "needs MCP peers: run .ci/run, then scripts/test"]
fn mcp_memory_paging_at_3000_tokens_names_a_cursor_and_pare_more_returns_the_rest() {
    let (py, server) = (sdk_python(), node_server("server-memory"));
    let dir = tempfile::tempdir().unwrap();
    let file = graph_file(dir.path(), "g.jsonl", 400);
    let graph = graph_json(&file);
    let policy = memory_policy();
    let out = client(
        &py,
        "paging",
        &[],
        &[
            pare_bin(),
            "mcp",
            "--policy",
            &policy,
            "--max-tokens",
            "3000",
            "--",
            "node",
            &server,
        ],
        &[("MEMORY_FILE_PATH", &file)],
    );
    let pages = out["pages"].as_array().unwrap();
    assert!(pages.len() > 2, "{} pages", pages.len());
    let mut entities = Vec::new();
    let mut relations = Vec::new();
    for (i, page) in pages.iter().enumerate() {
        let t = texts(page);
        let total: usize = t.iter().map(|s| tok().count(s)).sum();
        assert!(total <= 3000, "page {} has {total} tokens", i + 1);
        let meta = &page["meta"];
        assert_eq!(meta["page"], i + 1);
        assert_eq!(meta["pages"], pages.len());
        match meta["nextCursor"].as_str() {
            Some(c) => assert!(
                t[1].contains(&format!("pare_more with {{\"cursor\":\"{c}\"}}")),
                "{}",
                t[1]
            ),
            None => assert_eq!(i + 1, pages.len()),
        }
        let (v, _) = expand(t[0]).unwrap();
        let v = v.as_object().unwrap();
        for (key, into) in [("entities", &mut entities), ("relations", &mut relations)] {
            if let Some(pare::Value::Array(items)) = v.get(key) {
                into.extend(items.iter().cloned());
            }
        }
    }
    let g = graph.as_object().unwrap();
    assert!(
        g.get("entities") == Some(&pare::Value::Array(entities)),
        "entities differ"
    );
    assert!(
        g.get("relations") == Some(&pare::Value::Array(relations)),
        "relations differ"
    );
    assert!(
        out["bad_cursor"]
            .as_str()
            .unwrap()
            .contains("unknown or expired cursor"),
        "{}",
        out["bad_cursor"]
    );
}

#[test]
#[ignore = "needs MCP peers: run .ci/run, then scripts/test"]
fn mcp_memory_tools_list_golden() {
    let server = node_server("server-memory");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.jsonl").display().to_string();
    let policy = memory_policy();
    let mut p = Proxy::spawn(
        &["--policy", &policy, "--", "node", &server],
        &[("MEMORY_FILE_PATH", &file)],
    );
    p.initialize();
    let list = p.request(1, "tools/list", json!({}));
    let got = serde_json::to_string_pretty(&list["result"]).unwrap() + "\n";
    let golden = mcp_dir().join("memory_tools_list.golden.json");
    if std::env::var_os("PARE_UPDATE_GOLDEN").is_some() {
        std::fs::write(&golden, &got).unwrap();
    }
    let want =
        std::fs::read_to_string(&golden).expect("golden file (PARE_UPDATE_GOLDEN=1 writes it)");
    assert_eq!(
        got, want,
        "tools/list through pare changed (PARE_UPDATE_GOLDEN=1 to accept)"
    );
}

#[test]
#[ignore = "needs MCP peers: run .ci/run, then scripts/test"]
fn mcp_everything_server_passes_through_including_server_to_client_requests() {
    let (py, server) = (sdk_python(), node_server("server-everything"));
    let direct = client(&py, "everything", &[], &["node", &server], &[]);
    let through = client(
        &py,
        "everything",
        &[],
        &[pare_bin(), "mcp", "--", "node", &server],
        &[],
    );
    assert_everything_results_match(&direct, &through, "through pare");
    // No result needed pare_more, so it is not listed; nothing else is added either.
    assert_eq!(through["tool_names"], direct["tool_names"]);
    assert_no_dearer_and_only_schema_urls_differ(&direct["tools"], &through["tools"], "everything");
    // A JSON text pare cannot make cheaper stays exactly as the server wrote it; the
    // structured content, the same value again, is sent once: as that text.
    let mut s = through["structured"].clone();
    let meta = s["_meta"].as_object_mut().unwrap().remove("pare").unwrap();
    assert_eq!(meta["tokensAfter"], meta["tokensBefore"]);
    assert_eq!(
        meta["structuredContent"],
        "dropped: the text carries the same value"
    );
    if s["_meta"].as_object().unwrap().is_empty() {
        s.as_object_mut().unwrap().remove("_meta");
    }
    let mut want = direct["structured"].clone();
    let structured = want
        .as_object_mut()
        .unwrap()
        .shift_remove("structuredContent")
        .unwrap();
    let text = want["content"][0]["text"].as_str().unwrap();
    assert_eq!(serde_json::from_str::<Value>(text).unwrap(), structured);
    assert_eq!(s, want);
}
