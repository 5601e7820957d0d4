//! TOON encoding against the spec's encode fixtures (checked in, `testdata/toon-spec`) and,
//! live, against the reference encoder (`@toon-format/toon`, which `.ci/run` installs): the
//! corpus, the `real.sh` payloads and thousands of random values must encode byte for byte
//! the same. The live tests are `#[ignore]`d with the reason; `scripts/test` runs them.

use crate::common;

use pare::encode::toon::{Delimiter, EncodeOptions, encode};
use pare::json;
use pare::value::Value;

fn fixture_dir() -> std::path::PathBuf {
    common::corpus::toon_spec_dir("encode")
}

fn options(case: &pare::Map) -> EncodeOptions {
    let mut opts = EncodeOptions::default();
    if let Some(Value::Object(o)) = case.get("options") {
        if let Some(Value::String(d)) = o.get("delimiter") {
            opts.delimiter = Delimiter::parse(d).expect("a known delimiter");
        }
        if let Some(n) = o.get("indentSize").and_then(Value::as_f64) {
            opts.indent = n as usize;
        }
    }
    opts
}

#[test]
fn spec_encode_fixtures_pass() {
    let dir = std::fs::read_dir(fixture_dir()).expect("read the encode fixtures");
    let (mut passed, mut failures) = (0, Vec::new());
    for file in dir {
        let path = file.expect("dir entry").path();
        // Our own parser keeps each input's number lexemes, as JSON.parse would see them.
        let doc =
            json::parse(&std::fs::read_to_string(&path).expect("read")).expect("fixture JSON");
        for case in doc
            .as_object()
            .and_then(|d| d.get("tests"))
            .and_then(Value::as_array)
            .expect("tests")
        {
            let case = case.as_object().expect("case object");
            let name = case.get("name").and_then(Value::as_str).unwrap_or("?");
            let expected = case
                .get("expected")
                .and_then(Value::as_str)
                .expect("expected text");
            let got = encode(case.get("input").expect("input"), &options(case));
            if got == expected {
                passed += 1;
            } else {
                failures.push(format!(
                    "{}: {name}\n  want {expected:?}\n  got  {got:?}",
                    path.display()
                ));
            }
        }
    }
    println!(
        "toon encode fixtures: {passed} passed, {} failed",
        failures.len()
    );
    assert!(passed > 100, "too few fixtures found");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn compare_with_reference(texts: &[String], opts: &EncodeOptions, js_options: &str, what: &str) {
    let want = common::reference_toon(texts, js_options);
    let mut failures = Vec::new();
    for ((text, want), i) in texts.iter().zip(&want).zip(0..) {
        let got = encode(&json::parse(text).expect("valid JSON"), opts);
        if &got != want && !want.starts_with("<reference error") {
            failures.push(format!(
                "#{i} {}\n  want {want:?}\n  got  {got:?}",
                &text[..text.len().min(300)]
            ));
        }
    }
    println!(
        "{what}: {} of {} identical to the reference",
        texts.len() - failures.len(),
        texts.len()
    );
    assert!(
        failures.is_empty(),
        "{} differ:\n{}",
        failures.len(),
        failures[..failures.len().min(5)].join("\n")
    );
}

fn compare_files_with_reference(files: &[std::path::PathBuf], what: &str) {
    let texts: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(f).expect("read"))
        .collect();
    compare_with_reference(&texts, &EncodeOptions::default(), "{}", what);
}

#[test]
#[ignore = "needs node peers: run .ci/run, then scripts/test"]
fn live_corpus_matches_the_reference() {
    compare_files_with_reference(&common::corpus::corpus_files(), "corpus");
}

#[test]
#[ignore = "needs node peers and real.sh payloads: run .ci/run, then scripts/test"]
fn live_real_payloads_match_the_reference() {
    compare_files_with_reference(&common::needs::real_files(), "real payloads");
}

#[test]
#[ignore = "needs node peers: run .ci/run, then scripts/test"]
fn live_random_values_match_the_reference() {
    let texts: Vec<String> = common::arb::sample(3000, 7)
        .iter()
        .map(json::to_compact)
        .collect();
    compare_with_reference(
        &texts,
        &EncodeOptions::default(),
        "{}",
        "random values, default options",
    );
    let texts: Vec<String> = common::arb::sample(1000, 8)
        .iter()
        .map(json::to_compact)
        .collect();
    let tab = EncodeOptions {
        indent: 4,
        delimiter: Delimiter::Tab,
    };
    compare_with_reference(
        &texts,
        &tab,
        "{delimiter: '\\t', indent: 4}",
        "random values, tab, indent 4",
    );
    let pipe = EncodeOptions {
        indent: 2,
        delimiter: Delimiter::Pipe,
    };
    compare_with_reference(&texts, &pipe, "{delimiter: '|'}", "random values, pipe");
}
