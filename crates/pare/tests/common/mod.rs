//! Helpers shared by the integration tests: where the reference peers and the corpus are.
#![allow(dead_code)] // each test file uses a different subset

use std::path::Path;
use std::process::Command;

pub mod corpus;
pub mod needs;

use needs::PEERS;

/// The reference encoder's output for each JSON text (one `encode(JSON.parse(text), options)`
/// per text), in one node process. `options` is a JS object literal, e.g. `{}`. Fails the
/// test when node or the peer is missing.
pub fn reference_toon(texts: &[String], options: &str) -> Vec<String> {
    needs::node_peers();
    let dir = tempfile::tempdir().expect("temp dir");
    let input = dir.path().join("in.json");
    let list = serde_json::Value::Array(
        texts
            .iter()
            .map(|t| serde_json::Value::String(t.clone()))
            .collect(),
    );
    std::fs::write(&input, list.to_string()).expect("write input");
    let script = format!(
        "import('@toon-format/toon').then(({{encode}}) => {{\
           const texts = JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8'));\
           const out = texts.map(t => {{ try {{ return encode(JSON.parse(t), {options}); }} catch (e) {{ return {{error: String(e)}}; }} }});\
           process.stdout.write(JSON.stringify(out));\
         }})"
    );
    let out = Command::new("node")
        .env("NODE_PATH", PEERS)
        .args(["-e", &script])
        .arg(&input)
        .current_dir(Path::new(PEERS).parent().expect("peers dir"))
        .output()
        .expect("run node");
    assert!(
        out.status.success(),
        "node failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list: Vec<serde_json::Value> =
        serde_json::from_slice(&out.stdout).expect("node output is JSON");
    list.into_iter()
        .map(|v| match v {
            serde_json::Value::String(s) => s,
            other => format!("<reference error: {other}>"),
        })
        .collect()
}
pub mod arb;

/// The `[pack]` section of `examples/policies/search.toml`, the corpus search response's.
pub fn search_pack_options() -> pare::schema::pack::PackOptions {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/policies/search.toml"),
    )
    .expect("search.toml");
    let policy = pare::Policy::parse(&text).expect("valid policy");
    policy.options().pack.clone().expect("a [pack] section")
}

/// The corpus's `semantic_search_full.json` (checked in as `examples/payloads/`), parsed.
pub fn search_response() -> pare::Value {
    let path = corpus::corpus_file("semantic_search_full.json");
    let text = std::fs::read_to_string(path).expect("read semantic_search_full.json");
    pare::json::parse(&text).expect("corpus JSON")
}

/// Proptest settings: `cases`, or `$PROPTEST_CASES` when set (for a longer soak).
/// Failures are reported with the shrunk input; no regression files are written into the
/// source tree by CI runs.
pub fn proptest_config(cases: u32) -> proptest::test_runner::Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(cases);
    proptest::test_runner::Config {
        cases,
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    }
}

/// Every example policy (`examples/policies/*.toml|json`), by file name, in name order.
pub fn example_policies() -> Vec<(String, pare::policy::Policy)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/policies");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("examples/policies exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml" || e == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 4, "the example policies are found");
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let policy = pare::policy::Policy::parse(&text)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (
                path.file_name().unwrap().to_string_lossy().into_owned(),
                policy,
            )
        })
        .collect()
}
