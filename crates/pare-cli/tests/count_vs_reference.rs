//! `pare count` against the reference counter: gpt-tokenizer's `countTokens` (o200k_base)
//! of `fs.readFileSync(f, 'utf8')`, what `shared/tools/peers.sh count` runs. Node's UTF-8
//! decoding turns each maximal invalid sequence into one U+FFFD and keeps a BOM, and so
//! does `pare count`.
//!
//! * Recorded: the six corpus payloads and the checked-in non-UTF-8 text
//!   (`testdata/count/not_utf8.txt`), counts from `peers.sh count`.
//! * Live, against node and `/tmp/pare-peers/node_modules/gpt-tokenizer` (`.ci/run`
//!   installs them): every checked-in payload, that text, and this repository's Rust and
//!   Python sources, in one `pare count --json` run each side. Ignored unless asked for;
//!   `scripts/test` runs it where the peers are.

use crate::corpus;
use crate::needs;

use std::fs;
use std::path::{Path, PathBuf};

/// file; `peers.sh count` of its exact bytes.
const REFERENCE: &[(&str, u64)] = &[
    ("entities_systems.json", 35423),
    ("narrative_day.json", 16110),
    ("search_memory.json", 6206),
    ("semantic_search_full.json", 12140),
    ("vendor_graph_full.json", 25767),
    ("website_usage.json", 12077),
];

/// `testdata/count/not_utf8.txt`: a BOM, Latin-1 bytes, cut sequences, an encoded
/// surrogate, an overlong form, a code point past U+10FFFF, stray continuation bytes.
const NOT_UTF8: (&str, u64) = ("testdata/count/not_utf8.txt", 78);

/// `pare count --json FILES…`: each file's tokens, in order.
fn pare_counts(files: &[PathBuf]) -> Vec<u64> {
    let out = assert_cmd::Command::cargo_bin("pare")
        .expect("the pare binary is built")
        .arg("count")
        .arg("--json")
        .args(files)
        .output()
        .expect("pare runs");
    assert!(
        out.status.success(),
        "pare count: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["tokenizer"], "o200k_base");
    let counts: Vec<u64> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["tokens"].as_u64().unwrap())
        .collect();
    assert_eq!(v["total"].as_u64().unwrap(), counts.iter().sum::<u64>());
    counts
}

#[test]
fn recorded_counts_match_the_reference() {
    let mut files: Vec<PathBuf> = REFERENCE
        .iter()
        .map(|(name, _)| corpus::corpus_file(name))
        .collect();
    files.push(corpus::root().join(NOT_UTF8.0));
    let want: Vec<u64> = REFERENCE
        .iter()
        .map(|(_, n)| *n)
        .chain([NOT_UTF8.1])
        .collect();
    assert!(
        std::str::from_utf8(&fs::read(files.last().unwrap()).unwrap()).is_err(),
        "the non-UTF-8 file must stay invalid"
    );
    assert_eq!(pare_counts(&files), want);
}

use needs::node_counts;

/// Files under `dir` (recursively) whose names end in one of `exts`, sorted.
fn sources(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if p.is_dir() && !matches!(name.as_str(), "target" | ".git" | "node_modules") {
            sources(&p, exts, out);
        } else if exts.iter().any(|e| name.ends_with(e)) {
            out.push(p);
        }
    }
}

#[test]
#[ignore = "needs node peers: run .ci/run, then scripts/test"]
fn live_counts_match_gpt_tokenizer() {
    let root = corpus::root();
    let mut files = Vec::new();
    sources(&root.join("examples/payloads"), &[".json"], &mut files);
    sources(&root.join("testdata/count"), &[""], &mut files);
    sources(&root.join("crates/pare-cli"), &[".rs"], &mut files);
    sources(&root.join("crates/pare/src/json"), &[".rs"], &mut files);
    sources(&root.join("crates/pare-py"), &[".py"], &mut files);
    sources(&root.join("bench"), &[".py", ".sh", ".md"], &mut files);
    assert!(files.len() > 40, "{} files", files.len());
    let want = node_counts(&files);
    let got = pare_counts(&files);
    assert_eq!(want.len(), files.len());
    let bad: Vec<String> = files
        .iter()
        .zip(want.iter().zip(&got))
        .filter(|(_, (w, g))| w != g)
        .map(|(f, (w, g))| format!("{}: reference {w}, pare {g}", f.display()))
        .collect();
    assert!(
        bad.is_empty(),
        "{} of {} differ:\n{}",
        bad.len(),
        files.len(),
        bad.join("\n")
    );
}
