//! The budget covers every channel a client may show the model, through `pare mcp`: a
//! server on the official Python SDK (`tests/mcp/structured_server.py`) that sends a 25k-token
//! result as text and again as `structuredContent` (with an `outputSchema`), 10,000 text
//! items with the list again in `structuredContent`, and a wrapped `str`. Driven by the
//! official Python SDK client and the official TypeScript SDK client (both validate results
//! against a listed `outputSchema`), at `--max-tokens 2000`: every reply's text items plus its
//! serialized `structuredContent` are within 2,000 o200k tokens, and the pages merge back to
//! the server's value. Needs the MCP peers (`.ci/run`). The Python package's door
//! (`pare.mcp.shape`) is checked the same way in `crates/pare-py/tests/test_mcp.py`.

use crate::mcp_support;

use std::process::Command;

use mcp_support::{client, mcp_dir, node_server, pare_bin, require, sdk_python};
use serde_json::{Value, json};

const BUDGET: usize = 2000;

fn tok() -> &'static dyn pare::tokens::Tokenizer {
    pare::tokens::builtin("o200k_base").unwrap()
}

fn server() -> String {
    mcp_dir().join("structured_server.py").display().to_string()
}

/// What a client may show the model of one reply: its texts and its `structuredContent`.
fn reply_tokens(texts: &[&str], structured: &Value) -> usize {
    let s = if structured.is_null() {
        0
    } else {
        tok().count(&structured.to_string())
    };
    texts.iter().map(|t| tok().count(t)).sum::<usize>() + s
}

/// The value a walk's pages merge back to (each page's first text; the note is the second).
fn merged(pages: &[(String, Option<String>)]) -> pare::Value {
    let values = pages
        .iter()
        .map(|(text, continues)| (pare::encode::expand(text).unwrap().0, continues.clone()));
    pare::respond::merge::merge(values).unwrap()
}

/// The server's values, as the SDK makes them.
fn direct(py: &str) -> Value {
    client(
        py,
        "walk",
        &["tools=report,scan,word"],
        &[py, &server()],
        &[],
    )
}

/// Check a walk's pages (texts, structured, meta per page) against the server's values.
fn check_walks(walks: &Value, direct: &Value, how: &str) {
    let server_report = &direct["walks"]["report"][0]["structured"];
    let server_keys: Vec<&str> = direct["walks"]["scan"][0]["texts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(server_keys.len(), 10_000);
    let before = reply_tokens(
        &[direct["walks"]["report"][0]["texts"][0].as_str().unwrap()],
        server_report,
    );
    assert!(
        before > 25_000,
        "the report is {before} tokens, meant to be over 25k"
    );
    for (tool, want) in [
        (
            "report",
            pare::json::parse(&server_report.to_string()).unwrap(),
        ),
        (
            "scan",
            pare::json::parse(&json!(server_keys).to_string()).unwrap(),
        ),
    ] {
        let pages = walks[tool].as_array().unwrap();
        assert!(pages.len() > 1, "{how}: {tool} was not paged");
        let mut texts = Vec::new();
        for (i, p) in pages.iter().enumerate() {
            let t: Vec<&str> = p["texts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap())
                .collect();
            let n = reply_tokens(&t, &p["structured"]);
            assert!(n <= BUDGET, "{how}: {tool} page {} is {n} tokens", i + 1);
            assert!(
                p["structured"].is_null(),
                "{how}: {tool} page {} sent structuredContent",
                i + 1
            );
            assert_eq!(
                p["meta"]["tokensAfter"],
                n,
                "{how}: {tool} page {} tokensAfter",
                i + 1
            );
            let continues = p["meta"]["continues"].as_str().map(str::to_owned);
            texts.push((t[0].to_owned(), continues));
        }
        assert!(
            merged(&texts) == want,
            "{how}: {tool}'s pages do not merge back to the server's value"
        );
    }
    let word = &walks["word"][0];
    assert_eq!(word["texts"], json!(["hello"]), "{how}");
    assert!(
        word["structured"].is_null(),
        "{how}: the wrapped str was sent twice"
    );
}

#[test]
#[ignore = "needs MCP peers: run .ci/run, then scripts/test"]
fn mcp_structured_content_and_many_items_stay_within_the_budget_for_both_sdk_clients() {
    let py = sdk_python();
    let direct = direct(&py);
    // Direct, the server's own output schemas are listed; through pare, shaped tools list none.
    let listed = |v: &Value| -> Vec<bool> {
        v["tools"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.get("outputSchema").is_some())
            .collect()
    };
    assert_eq!(listed(&direct), [true, true, true]);
    let max = BUDGET.to_string();
    let proxied = [
        pare_bin(),
        "mcp",
        "--max-tokens",
        &max,
        "--",
        &py,
        &server(),
    ];
    let through = client(&py, "walk", &["tools=report,scan,word"], &proxied, &[]);
    assert_eq!(listed(&through), [false, false, false]);
    check_walks(&through["walks"], &direct, "pare mcp, Python SDK client");

    // The TypeScript SDK client caches each listed outputSchema and validates against it.
    let node_modules = std::path::Path::new(&node_server("server-memory"))
        .ancestors()
        .nth(4)
        .unwrap()
        .to_path_buf();
    let sdk = require(
        &format!(
            "@modelcontextprotocol/sdk in {} (.ci/run installs it)",
            node_modules.display()
        ),
        node_modules
            .join("@modelcontextprotocol/sdk/package.json")
            .is_file()
            .then(|| node_modules.display().to_string()),
    );
    let out = Command::new("node")
        .arg(mcp_dir().join("ts_client.cjs"))
        .arg("report,scan,word")
        .args(proxied)
        .env("NODE_PATH", &sdk)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the TypeScript SDK client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ts: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The TS client keeps whole results: map them to the Python walk's shape.
    let mut walks = serde_json::Map::new();
    for (tool, pages) in ts["walks"].as_object().unwrap() {
        let pages: Vec<Value> = pages
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let texts: Vec<&Value> = r["content"].as_array().unwrap().iter().filter(|c| c["type"] == "text").map(|c| &c["text"]).collect();
                json!({"texts": texts, "structured": r.get("structuredContent").cloned().unwrap_or(Value::Null), "meta": r["_meta"]["pare"]})
            })
            .collect();
        walks.insert(tool.clone(), Value::Array(pages));
    }
    check_walks(
        &Value::Object(walks),
        &direct,
        "pare mcp, TypeScript SDK client",
    );
}
