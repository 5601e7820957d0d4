//! `pare stats --json`'s `"tokens"` against the reference counter (gpt-tokenizer 3.4.0
//! `countTokens`, o200k_base — what `shared/tools/peers.sh count` runs).
//!
//! * The six benchmark corpus files (checked in, see `testdata/README.md`): counts recorded
//!   below from `peers.sh count` of `shared/corpus/*.json` (the files' exact bytes), and of
//!   the same payloads minified / pretty-printed by `pare compact --level full`, then fed to
//!   `pare stats`.
//! * Live, against node and `/tmp/pare-peers/node_modules/gpt-tokenizer` (`.ci/run` installs
//!   them): generated JSON texts with awkward whitespace, Unicode, numbers and contractions,
//!   counted by `pare stats` and by node (a few), and by the engine's counter and node (a
//!   few hundred). Ignored unless asked for; `scripts/test` runs them where the peers are.

use crate::corpus;
use crate::needs;

use std::fs;
use std::path::PathBuf;

/// file; tokens of its exact bytes (`peers.sh count`); tokens of it minified as pare
/// writes it (`pare compact --level full`, no trailing newline, counted by `peers.sh count`).
///
/// The minified counts equal `peers.sh tokens`' `JSON.stringify(v)` column except for
/// entities_systems.json (25207 there): pare keeps number lexemes, and that file has
/// `"sla_availability": 99.0` 16 times, which `JSON.stringify` prints as `99`.
const REFERENCE: &[(&str, u64, u64)] = &[
    ("entities_systems.json", 35423, 25223),
    ("narrative_day.json", 16110, 11533),
    ("search_memory.json", 6206, 4340),
    ("semantic_search_full.json", 12140, 11259),
    ("vendor_graph_full.json", 25767, 15939),
    ("website_usage.json", 12077, 8856),
];

/// entities_systems.json as `pare compact --level full --format pretty` writes it (without
/// the trailing newline): the file's own text less its final newline, same count.
const ENTITIES_PRETTY: u64 = 35423;

fn pare(args: &[&str], stdin: &[u8]) -> String {
    let out = assert_cmd::Command::cargo_bin("pare")
        .expect("the pare binary is built")
        .args(args)
        .write_stdin(stdin)
        .output()
        .expect("pare runs");
    assert!(
        out.status.success(),
        "pare {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// `pare stats --json` of a file (or of stdin when `file` is `-`): (tokens, bytes).
fn stats(file: &str, stdin: &[u8]) -> (u64, u64) {
    let out = pare(&["stats", "--json", "--top", "1", file], stdin);
    let v: serde_json::Value = serde_json::from_str(&out).expect("stats --json is JSON");
    assert_eq!(v["tokenizer"], "o200k_base");
    (v["tokens"].as_u64().unwrap(), v["bytes"].as_u64().unwrap())
}

#[test]
fn corpus_tokens_match_the_reference() {
    for (name, tokens, _) in REFERENCE {
        let path = corpus::corpus_file(name);
        let len = fs::metadata(&path).unwrap().len();
        let (got, bytes) = stats(path.to_str().unwrap(), b"");
        assert_eq!(bytes, len, "{name}");
        assert_eq!(got, *tokens, "{name}: pare stats vs gpt-tokenizer");
    }
}

#[test]
fn corpus_minified_and_pretty_match_the_reference() {
    for (name, _, minified) in REFERENCE {
        let path = corpus::corpus_file(name);
        let path = path.to_str().unwrap();
        // chars4: the tokenizer plays no part in `full`, and o200k_base is slow to build
        // in a debug binary.
        let text = pare(
            &["compact", "--level", "full", "--tokenizer", "chars4", path],
            b"",
        );
        let text = text.strip_suffix('\n').expect("one trailing newline");
        let (got, _) = stats("-", text.as_bytes());
        assert_eq!(got, *minified, "{name} minified");
    }
    let path = corpus::corpus_file("entities_systems.json");
    let args = [
        "compact",
        "--level",
        "full",
        "--format",
        "pretty",
        "--tokenizer",
        "chars4",
        path.to_str().unwrap(),
    ];
    let text = pare(&args, b"");
    let (got, _) = stats("-", text.strip_suffix('\n').unwrap().as_bytes());
    assert_eq!(got, ENTITIES_PRETTY, "entities_systems pretty");
}

// ---------------------------------------------------------------- live

use needs::node_counts;

/// A small deterministic generator (no seed files, the same texts every run).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.next(items.len())]
    }
}

const WORDS: &[&str] = &[
    "hello",
    "World",
    "don't",
    "I'M",
    "we'll",
    "HTTPServerError",
    "getElementById",
    "naïve",
    "Straße",
    "日本語のテキスト",
    "中文",
    "😀",
    "👩‍💻",
    "Ελληνικά",
    "\\n",
    "\\t",
    "\\u00e9",
    "\\\"quoted\\\"",
    "12345678901",
    "3.14159",
    "  ",
    "a_b-c.d/e",
    "https://example.com/a?b=c",
    "2026-02-17T09:00:00Z",
    "",
];

const WS: &[&str] = &["", " ", "  ", "\n", "\r\n", "\t", "\n    ", " \n\n  "];

/// A JSON text with random whitespace between tokens.
fn gen_text(rng: &mut Lcg, depth: usize) -> String {
    let ws = |rng: &mut Lcg| rng.pick(WS).to_owned();
    match if depth == 0 { rng.next(4) } else { rng.next(6) } {
        0 => {
            let n = 1 + rng.next(4);
            let words: Vec<&str> = (0..n).map(|_| rng.pick(WORDS)).collect();
            format!("\"{}\"", words.join(rng.pick(&[" ", "", "-", "  "])))
        }
        1 => rng
            .pick(&["0", "-1", "1.50", "1e-7", "123456789012345678", "0.627281"])
            .to_owned(),
        2 => rng.pick(&["null", "true", "false"]).to_owned(),
        3 => format!("\"{}\"", rng.pick(WORDS)),
        4 => {
            let items: Vec<String> = (0..rng.next(5))
                .map(|_| format!("{}{}{}", ws(rng), gen_text(rng, depth - 1), ws(rng)))
                .collect();
            format!("[{}]", items.join(","))
        }
        _ => {
            let members: Vec<String> = (0..rng.next(5))
                .map(|_| {
                    let key = rng.pick(WORDS);
                    format!(
                        "{}\"{key}\"{}:{}{}{}",
                        ws(rng),
                        ws(rng),
                        ws(rng),
                        gen_text(rng, depth - 1),
                        ws(rng)
                    )
                })
                .collect();
            format!("{{{}}}", members.join(","))
        }
    }
}

#[test]
#[ignore = "needs node peers: run .ci/run, then scripts/test"]
fn live_generated_texts_match_gpt_tokenizer() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Lcg(0x5eed);
    let mut files = Vec::new();
    let mut texts = Vec::new();
    while texts.len() < 6 {
        let text = format!("{}{}", gen_text(&mut rng, 5), rng.pick(WS));
        if text.len() < 200 || serde_json::from_str::<serde_json::Value>(&text).is_err() {
            continue;
        }
        let path = dir.path().join(format!("t{}.json", texts.len()));
        fs::write(&path, &text).unwrap();
        files.push(path);
        texts.push(text);
    }
    let want = node_counts(&files);
    assert_eq!(want.len(), files.len());
    for ((path, text), want) in files.iter().zip(&texts).zip(want) {
        let (got, bytes) = stats(path.to_str().unwrap(), b"");
        assert_eq!(bytes as usize, text.len());
        assert_eq!(got, want, "pare stats vs gpt-tokenizer on {text:?}");
    }
}

/// More texts, through the engine's counter (what `stats` calls) rather than one process
/// per text: cheap enough for a few hundred.
#[test]
#[ignore = "needs node peers: run .ci/run, then scripts/test"]
fn live_many_generated_texts_match_gpt_tokenizer() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Lcg(0xfeed);
    let texts: Vec<String> = (0..300)
        .map(|_| format!("{}{}", gen_text(&mut rng, 4), rng.pick(WS)))
        .collect();
    let files: Vec<PathBuf> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let path = dir.path().join(format!("t{i}.txt"));
            fs::write(&path, t).unwrap();
            path
        })
        .collect();
    let want = node_counts(&files);
    let tok = pare::tokens::builtin("o200k_base").unwrap();
    let bad: Vec<String> = texts
        .iter()
        .zip(want)
        .filter(|(t, w)| tok.count(t) as u64 != *w)
        .map(|(t, w)| format!("reference {w}, pare {}: {t:?}", tok.count(t)))
        .collect();
    assert!(
        bad.is_empty(),
        "{} mismatches:\n{}",
        bad.len(),
        bad.join("\n")
    );
}
