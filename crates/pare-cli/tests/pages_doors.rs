//! The same pages through every door: `pare compact --budget N` walking `--cursor`, and
//! `pare mcp` walking `pare_more`, give byte-identical page texts for the same input,
//! policy, level, budget and format — both are thin doors over the engine's pipeline.

use crate::mcp_support;

use std::path::Path;
use std::process::Command;

use mcp_support::{Proxy, fake_server, pare_bin, python};
use serde_json::json;

fn examples() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// Every page `pare compact` prints, following the cursor each run names on stderr.
fn cli_pages(file: &Path, policy: &Path, level: &str, budget: usize) -> Vec<String> {
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut cmd = Command::new(pare_bin());
        cmd.arg("compact").arg(file).arg("--policy").arg(policy);
        cmd.args(["--format", "auto", "--level", level]);
        cmd.args(["--budget", &budget.to_string()]);
        let report = tempfile::NamedTempFile::new().unwrap();
        cmd.arg("--report-json").arg(report.path());
        if let Some(c) = &cursor {
            cmd.args(["--cursor", c]);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        pages.push(text.strip_suffix('\n').unwrap().to_owned());
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(report.path()).unwrap()).unwrap();
        assert_eq!(report["page"], pages.len());
        match report["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    pages
}

/// Every page `pare mcp` returns for the `file` tool, following `pare_more`.
fn mcp_pages(file: &Path, policy: &Path, level: &str, budget: usize) -> Vec<String> {
    let py = python();
    let server = fake_server();
    let b = budget.to_string();
    let policy = policy.display().to_string();
    let args = [
        "--policy",
        &policy,
        "--max-tokens",
        &b,
        "--max-chars4",
        &b,
        "--",
        &py,
        &server,
        "ok",
    ];
    let mut p = Proxy::spawn(&args, &[("FAKE_FILE", &file.display().to_string())]);
    p.initialize();
    let list = p.request(1, "tools/list", json!({}));
    // A policy whose levels all give the same output (memory.toml: no ops) offers no
    // `detail`; the call then names none, and gets that same output.
    let offered = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == "file" && t["inputSchema"]["properties"].get("detail").is_some());
    let args = if offered {
        json!({"detail": level})
    } else {
        json!({})
    };
    file_results(&mut p, args)
        .iter()
        .map(|r| r["content"][0]["text"].as_str().unwrap().to_owned())
        .collect()
}

/// Every result of the `file` tool called with `args`, following `pare_more`.
fn file_results(p: &mut Proxy, args: serde_json::Value) -> Vec<serde_json::Value> {
    let mut reply = p.request(2, "tools/call", json!({"name": "file", "arguments": args}));
    let mut results = Vec::new();
    for id in 3.. {
        let result = reply["result"].clone();
        let cursor = result["_meta"]["pare"]["nextCursor"]
            .as_str()
            .map(str::to_owned);
        results.push(result);
        let Some(cursor) = cursor else {
            break;
        };
        reply = p.request(
            id,
            "tools/call",
            json!({"name": "pare_more", "arguments": {"cursor": cursor}}),
        );
    }
    results
}

#[test]
fn cli_and_mcp_pages_are_byte_identical() {
    let cases = [
        ("vendor_graph_full.json", "memory.toml", "full", 1000),
        ("entities_systems.json", "entities.toml", "standard", 3000),
        ("narrative_day.json", "narrative.toml", "full", 1000),
    ];
    for (payload, policy, level, budget) in cases {
        let file = examples().join("payloads").join(payload);
        let policy = examples().join("policies").join(policy);
        let through_mcp = mcp_pages(&file, &policy, level, budget);
        let through_cli = cli_pages(&file, &policy, level, budget);
        assert!(through_cli.len() > 1, "{payload}: paged");
        assert_eq!(through_cli, through_mcp, "{payload} at {budget}");
    }
}

#[test]
fn mcp_text_that_is_not_json_over_the_budget_is_paged_at_line_ends() {
    // A SQL server that returns Python reprs sent 279k tokens through unpaged.
    let dir = tempfile::tempdir().unwrap();
    let rows: String = (0..3000)
        .map(|i| {
            format!("({i}, 'customer {i}', None, Decimal('{i}.50'), datetime.date(2026, 1, 2))\n")
        })
        .collect();
    let file = dir.path().join("rows.txt");
    std::fs::write(&file, &rows).unwrap();
    let py = python();
    let server = fake_server();
    let args = ["--max-tokens", "2000", "--", &py, &server, "ok"];
    let mut p = Proxy::spawn(&args, &[("FAKE_FILE", &file.display().to_string())]);
    p.initialize();
    let tok = pare::tokens::builtin("o200k_base").unwrap();
    let results = file_results(&mut p, json!({}));
    let mut joined = String::new();
    for result in &results {
        let content = result["content"].as_array().unwrap();
        let total: usize = content
            .iter()
            .map(|c| tok.count(c["text"].as_str().unwrap()))
            .sum();
        assert!(total <= 2000, "page of {total} tokens");
        let text = content[0]["text"].as_str().unwrap();
        assert!(text.ends_with('\n'), "cut at a line end");
        joined.push_str(text);
    }
    assert!(results.len() > 10, "{} pages", results.len());
    assert_eq!(joined, rows);
}
