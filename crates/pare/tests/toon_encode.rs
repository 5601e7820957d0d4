//! TOON encoding against the spec's encode fixtures and, live, against the reference
//! encoder (`@toon-format/toon`, installed by `shared/tools/peers.sh`): the corpus, the
//! `real.sh` payloads and thousands of random values must encode byte for byte the same.

mod common;

use pare::encode::toon::{Delimiter, EncodeOptions, encode};
use pare::json;
use pare::value::Value;

fn fixture_dir() -> std::path::PathBuf {
    common::shared_dir().join("peers/toon-spec/fixtures/encode")
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
    let Ok(dir) = std::fs::read_dir(fixture_dir()) else {
        println!("note: {} is missing; skipped", fixture_dir().display());
        return;
    };
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

#[test]
fn live_corpus_and_real_payloads_match_the_reference() {
    if !common::toon_reference_available() {
        println!("note: reference encoder not installed (run shared/tools/peers.sh); skipped");
        return;
    }
    let files: Vec<_> = common::corpus_files()
        .into_iter()
        .chain(common::real_files())
        .collect();
    let texts: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(f).expect("read"))
        .collect();
    compare_with_reference(
        &texts,
        &EncodeOptions::default(),
        "{}",
        "corpus and real payloads",
    );
}

#[test]
fn live_random_values_match_the_reference() {
    if !common::toon_reference_available() {
        println!("note: reference encoder not installed (run shared/tools/peers.sh); skipped");
        return;
    }
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
