//! Helpers shared by the integration tests: where the reference peers and the corpus are.
#![allow(dead_code)] // each test file uses a different subset

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where `shared/tools/peers.sh` installs the reference peers.
pub const PEERS: &str = "/tmp/pare-peers/node_modules";

/// The repository's `shared/` sibling (`../shared` from the workspace root).
pub fn shared_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

/// The benchmark corpus's JSON files (`$PARE_CORPUS_DIR` or `shared/corpus`), sorted;
/// empty where it is absent.
pub fn corpus_files() -> Vec<PathBuf> {
    let dir = std::env::var_os("PARE_CORPUS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| shared_dir().join("corpus"));
    json_files(&dir)
}

/// The `real.sh` payloads, where `.ci/run` (or you) made them: `$PARE_REAL_DIR`, default
/// `/tmp/pare-real`. Empty where absent.
pub fn real_files() -> Vec<PathBuf> {
    let dir = std::env::var_os("PARE_REAL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp/pare-real"));
    json_files(&dir)
}

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

/// Is the reference TOON encoder installed (and node there to run it)?
pub fn toon_reference_available() -> bool {
    Path::new(PEERS).join("@toon-format/toon").is_dir()
        && Command::new("node")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
}

/// The reference encoder's output for each JSON text (one `encode(JSON.parse(text), options)`
/// per text), in one node process. `options` is a JS object literal, e.g. `{}`.
pub fn reference_toon(texts: &[String], options: &str) -> Vec<String> {
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

/// The corpus's `semantic_search_full.json`, parsed; `None` where the corpus is absent.
pub fn search_response() -> Option<pare::Value> {
    let path = shared_dir().join("corpus/semantic_search_full.json");
    let text = std::fs::read_to_string(path).ok()?;
    Some(pare::json::parse(&text).expect("corpus JSON"))
}
