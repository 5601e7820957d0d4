//! Our token counts against the reference counter's, recorded in
//! `fixtures/tokens/reference.json` by `scripts/gen_token_fixtures.sh` (gpt-tokenizer v3
//! `countTokens`, the counter `shared/tools/peers.sh count` runs).
//!
//! * Every recorded string must count exactly as recorded, for o200k_base and cl100k_base.
//! * The benchmark corpus (checked in, see `testdata/README.md`; or `$PARE_CORPUS_DIR`) must
//!   count as recorded.
//! * `$PARE_TOKENS_EXTRA` may name another file of strings in the fixture's format (say
//!   from `gen_token_fixtures.sh --fuzz N FILE`) to check the same way: an opt-in test,
//!   ignored unless asked for (`scripts/test` runs it when the variable is set).

use crate::common;

use pare::tokens::{Tokenizer, by_name};
use serde_json::Value;

const FIXTURE: &str = include_str!("fixtures/tokens/reference.json");

fn encodings() -> [(&'static str, Box<dyn Tokenizer>); 2] {
    [
        ("o200k", by_name("o200k_base").expect("built-in")),
        ("cl100k", by_name("cl100k_base").expect("built-in")),
    ]
}

/// Checks every `{text, o200k, cl100k}` entry; returns how many it checked.
fn check_strings(strings: &[Value], source: &str) -> usize {
    let mut failures = Vec::new();
    for entry in strings {
        let text = entry["text"].as_str().expect("text is a string");
        for (key, tokenizer) in &encodings() {
            let want = entry[*key].as_u64().expect("count is a number") as usize;
            let got = tokenizer.count(text);
            if got != want {
                failures.push(format!("{key}: got {got}, reference {want}: {text:?}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches with {source}:\n{}",
        failures.len(),
        failures.join("\n")
    );
    strings.len()
}

#[test]
fn strings_count_as_the_reference_counts() {
    let fixture: Value = serde_json::from_str(FIXTURE).expect("fixture is JSON");
    let strings = fixture["strings"].as_array().expect("strings");
    assert!(strings.len() > 100, "fixture looks truncated");
    let n = check_strings(strings, "reference.json");
    println!("{n} strings match the reference for o200k_base and cl100k_base");
}

#[test]
#[ignore = "opt-in: set PARE_TOKENS_EXTRA=FILE (scripts/gen_token_fixtures.sh --fuzz N FILE)"]
fn extra_strings_count_as_the_reference_counts() {
    let path = std::env::var("PARE_TOKENS_EXTRA")
        .expect("this test checks the file PARE_TOKENS_EXTRA names, and it is not set");
    let text = std::fs::read_to_string(&path).expect("PARE_TOKENS_EXTRA is readable");
    let extra: Value = serde_json::from_str(&text).expect("PARE_TOKENS_EXTRA is JSON");
    let n = check_strings(extra["strings"].as_array().expect("strings"), &path);
    println!("{n} extra strings from {path} match the reference");
}

#[test]
fn corpus_counts_as_the_reference_counts() {
    let fixture: Value = serde_json::from_str(FIXTURE).expect("fixture is JSON");
    let files = fixture["corpus"].as_array().expect("corpus");
    assert_eq!(
        files.len(),
        common::corpus::CORPUS.len(),
        "fixture records every corpus file"
    );
    for entry in files {
        let name = entry["file"].as_str().expect("file name");
        let text =
            std::fs::read_to_string(common::corpus::corpus_file(name)).expect("read corpus file");
        assert_eq!(
            text.len() as u64,
            entry["bytes"].as_u64().expect("bytes"),
            "{name} changed since the fixture was recorded; rerun scripts/gen_token_fixtures.sh"
        );
        for (key, tokenizer) in &encodings() {
            let want = entry[*key].as_u64().expect("count") as usize;
            assert_eq!(tokenizer.count(&text), want, "{key} count of {name}");
            // The same through the cutting paths: all of it fits, and no more than all.
            assert!(tokenizer.fits(&text, want) && !tokenizer.fits(&text, want - 1));
            assert_eq!(tokenizer.prefix_len(&text, want), text.len());
        }
        println!(
            "{name}: o200k {} cl100k {} match",
            entry["o200k"], entry["cl100k"]
        );
    }
}
