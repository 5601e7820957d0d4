//! Golden tests of `pare encode`, `pare compact --format toon|auto` and `pare expand`:
//! outputs snapshotted with insta, every output expanded back, errors exit 2 with a clear
//! message and nothing on stdout.

use crate::run_support;

use run_support::run;

fn ok(args: &[&str], stdin: impl Into<Vec<u8>>) -> String {
    let (code, stdout, stderr) = run(args, stdin);
    assert_eq!(code, 0, "pare {args:?} failed: {stderr}");
    stdout
}

fn fail(args: &[&str], stdin: impl Into<Vec<u8>>) -> String {
    let (code, stdout, stderr) = run(args, stdin);
    assert_eq!(
        code, 2,
        "pare {args:?}: expected exit 2, got {code}: {stderr}"
    );
    assert_eq!(stdout, "", "pare {args:?} failed but wrote to stdout");
    assert!(
        stderr.starts_with("pare: error: ") && !stderr.contains("panicked"),
        "{stderr}"
    );
    stderr
}

/// `text` expanded by `pare expand` must equal `json` exactly.
fn expands_to(text: &str, json: &str) {
    let back = ok(&["expand"], text);
    assert_eq!(back.trim_end(), json.trim_end(), "expand of:\n{text}");
}

/// TOON carries numbers as doubles (`20.0` comes back `20`): equal as values, numbers
/// compared as f64.
fn expands_to_value(text: &str, json: &str) {
    fn norm(v: serde_json::Value) -> serde_json::Value {
        use serde_json::Value as V;
        match v {
            V::Number(n) => serde_json::json!(n.as_f64().expect("finite")),
            V::Array(a) => V::Array(a.into_iter().map(norm).collect()),
            V::Object(o) => V::Object(o.into_iter().map(|(k, v)| (k, norm(v))).collect()),
            other => other,
        }
    }
    let back = ok(&["expand"], text);
    let parse = |t: &str| norm(serde_json::from_str(t).expect("JSON"));
    assert_eq!(parse(&back), parse(json), "expand of:\n{text}");
}

/// `text` in `format` expands to `json`: exactly, or in value for TOON.
fn expands_back(format: &str, text: &str, json: &str) {
    if format == "toon" {
        expands_to_value(text, json);
    } else {
        expands_to(text, json);
    }
}

const NAR_IN: &str = r##"{"date":"2026-02-17","totalActiveMinutes":45.0,"segments":[{"startTime":"2026-02-17T09:00:00","endTime":"2026-02-17T09:10:00","durationMinutes":10.0,"application":"Figma","applicationColor":"#F24E1E","windowTitle":null,"refs":{"timelineRef":"t:0","activityRef":"a:0","screenshotRef":null},"tags":[]},{"startTime":"2026-02-17T09:11:00","endTime":"2026-02-17T09:20:00","durationMinutes":9.0,"application":"Figma","applicationColor":"#F24E1E","windowTitle":"Design","refs":{"timelineRef":"t:1","activityRef":"a:1","screenshotRef":"shot:1"},"tags":null},{"startTime":"2026-02-17T09:25:00","endTime":"2026-02-17T09:30:00","durationMinutes":5.0,"application":"Figma","applicationColor":"#F24E1E","windowTitle":null,"refs":{"timelineRef":"t:2","activityRef":"a:2","screenshotRef":"shot:2"}},{"startTime":"2026-02-17T09:30:00","endTime":"2026-02-17T09:51:00","durationMinutes":21.0,"application":"Slack","applicationColor":"#4A154B","refs":{"timelineRef":"t:3","activityRef":"a:3","screenshotRef":null}}],"topApplications":[{"name":"Figma","color":"#F24E1E","minutes":24.0}],"topWebsites":[],"summary":"busy"}"##;

const ROWS_IN: &str = r#"{"results":[{"id":1,"kind":"doc","score":0.91,"tags":["a","b"]},{"id":2,"kind":"doc","score":0.5},{"id":3,"kind":"doc","score":0.25,"tags":[],"extra":{"k":"v"}}],"total":3,"cursor":null}"#;

#[test]
fn encode_every_format() {
    let mut out = String::new();
    for format in ["json", "pretty", "toon", "auto"] {
        let text = ok(&["encode", "--format", format], ROWS_IN);
        out.push_str(&format!("--- {format}\n{text}"));
        let json = ok(&["encode", "--format", "json"], ROWS_IN);
        expands_back(format, &text, &json);
    }
    insta::assert_snapshot!(out);
}

#[test]
fn encode_toon_delimiters_and_indent() {
    let mut out = String::new();
    for args in [
        ["--delimiter", "tab"],
        ["--delimiter", "pipe"],
        ["--indent", "4"],
    ] {
        let mut full = vec!["encode", "--format", "toon"];
        full.extend(args);
        let text = ok(&full, ROWS_IN);
        out.push_str(&format!("--- {}\n{text}", args.join(" ")));
        expands_to_value(&text, &ok(&["encode", "--format", "json"], ROWS_IN));
    }
    insta::assert_snapshot!(out);
}

#[test]
fn encode_report_on_stderr() {
    let (code, _, stderr) = run(&["encode", "--format", "auto", "--report"], ROWS_IN);
    assert_eq!(code, 0);
    assert!(
        stderr.starts_with("<stdin>: ") && stderr.contains(" tokens (o200k_base; "),
        "{stderr}"
    );
}

#[test]
fn compact_auto_expands_to_compact_json_for_every_policy() {
    let cases = [
        ("examples/policies/narrative.toml", NAR_IN),
        ("examples/policies/entities.toml", ROWS_IN),
    ];
    let mut out = String::new();
    for (policy, input) in cases {
        for format in ["toon", "auto"] {
            let text = ok(&["compact", "--policy", policy, "--format", format], input);
            out.push_str(&format!("--- {policy} {format}\n{text}"));
            let json = ok(&["compact", "--policy", policy, "--format", "json"], input);
            expands_back(format, &text, &json);
        }
    }
    insta::assert_snapshot!(out);
}

#[test]
fn expand_reads_json_and_says_what_it_found() {
    let (code, stdout, stderr) = run(&["expand", "-v", "--pretty"], "[1, {\"a\": 1.50}]");
    assert_eq!(code, 0);
    assert_eq!(stdout, "[\n  1,\n  {\n    \"a\": 1.50\n  }\n]\n");
    assert_eq!(stderr, "<stdin>: read as json\n");
}

#[test]
fn expand_errors_have_line_and_column() {
    let err = fail(&["expand"], "items[3]{a,b}:\n  1,2\n  3,4\n");
    assert!(
        err.contains("not valid TOON") && err.contains("line "),
        "{err}"
    );
    let err = fail(&["expand"], "{\"a\": [1,}");
    assert!(
        err.contains("not valid JSON") && err.contains("line 1 column 10"),
        "{err}"
    );
}

/// BUG: `{}` was empty text in `--format auto`, which a model reads (and saw nothing), and
/// `pare expand` refused the empty text `--format toon` rightly writes for it (the
/// reference encoder's; TOON's empty document is `{}`), while a byte-order-mark-only text
/// expanded to `{}`. Now `{}` round-trips through every format, encoded or compacted, and
/// an empty text, on stdin or in a file, expands to `{}`. Where JSON is expected
/// (`compact`, `encode`) an empty input stays an error.
#[test]
fn regression_empty_object_round_trips_in_every_format() {
    for format in ["json", "pretty", "toon", "auto"] {
        let encoded = ok(&["encode", "--format", format], "{}");
        let want = if format == "toon" { "\n" } else { "{}\n" };
        assert_eq!(encoded, want, "encode --format {format}");
        assert_eq!(ok(&["expand"], encoded), "{}\n", "expand of {format}");
        // A pruning policy drops the null, leaving `{}`.
        let prune = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp/prune.toml");
        let compacted = ok(
            &["compact", "--policy", prune, "--format", format],
            r#"{"a":null}"#,
        );
        assert_eq!(compacted, want, "compact --format {format}");
        assert_eq!(ok(&["expand"], compacted), "{}\n", "expand of {format}");
    }
    for blank in ["", "\n", "  \r\n", "\u{feff}", "\u{feff}\n"] {
        assert_eq!(ok(&["expand"], blank), "{}\n", "expand of {blank:?}");
    }
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.toon");
    std::fs::write(&empty, "").unwrap();
    let empty = empty.to_str().unwrap();
    assert_eq!(ok(&["expand", empty], ""), "{}\n");
    for args in [
        &["compact"][..],
        &["encode"],
        &["compact", empty],
        &["encode", empty],
    ] {
        for blank in ["", "  \n", "\u{feff}"] {
            let err = fail(args, blank);
            assert!(
                err.contains("empty input (expected a JSON value)"),
                "{args:?} {blank:?}: {err}"
            );
        }
    }
}

#[test]
fn encode_rejects_toon_options_for_other_formats() {
    let err = fail(
        &["encode", "--format", "auto", "--delimiter", "tab"],
        ROWS_IN,
    );
    assert!(
        err.contains("--delimiter and --indent apply to --format toon only"),
        "{err}"
    );
    // clap's own usage error: exit 2, the bad value and the allowed ones named.
    let (code, stdout, stderr) = run(
        &["encode", "--format", "toon", "--delimiter", "semicolon"],
        ROWS_IN,
    );
    assert_eq!((code, stdout.as_str()), (2, ""));
    assert!(
        stderr.contains("semicolon") && stderr.contains("comma, tab, pipe"),
        "{stderr}"
    );
}

#[test]
fn encode_bad_json_has_line_and_column() {
    let err = fail(&["encode"], "{\n  \"a\": tru\n}");
    assert!(err.contains("line 2 column"), "{err}");
}

// ---------------------------------------------------------------- pack

const SEARCH_IN: &str = r##"{"results":[
{"chunk_id":1,"hybrid_score":0.91,"source_file":"src/lib.rs","context_header":"lib.rs > add","chunk_text":"/// Adds two numbers.\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}"},
{"chunk_id":2,"hybrid_score":0.35,"source_file":"docs/guide.md","chunk_text":"# Guide\nStart here. Then read on.\n\n## Install\nRun the installer."},
{"chunk_id":3,"hybrid_score":0.62,"source_file":"app/main.py","chunk_text":"def main():\n    \"\"\"Entry point.\"\"\"\n    run()\n"}]}"##;

#[test]
fn pack_within_budget_with_metrics() {
    let dir = tempfile::tempdir().expect("temp dir");
    let metrics = dir.path().join("m.json");
    let metrics_arg = metrics.to_str().expect("UTF-8 path");
    let policy = "examples/policies/search.toml";
    let text = ok(
        &[
            "pack",
            "--policy",
            policy,
            "--budget",
            "120",
            "--metrics",
            metrics_arg,
        ],
        SEARCH_IN,
    );
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&metrics).expect("metrics")).expect("JSON");
    let after = m["tokensAfterCompression"].as_u64().expect("a count");
    assert!(after <= 120, "{after}");
    for key in [
        "totalChunks",
        "metadataOnlyChunks",
        "tokensBeforeCompression",
        "tokensSaved",
        "compressionRate",
    ] {
        assert!(m.get(key).is_some(), "{key}");
    }
    let tight = ok(&["pack", "--policy", policy, "--budget", "40"], SEARCH_IN);
    insta::assert_snapshot!(format!("--- budget 120\n{text}--- budget 40\n{tight}"));
}

#[test]
fn pack_errors() {
    let err = fail(
        &[
            "pack",
            "--budget",
            "100",
            "--policy",
            "examples/policies/entities.toml",
        ],
        SEARCH_IN,
    );
    assert!(err.contains("no [pack] section"), "{err}");
    let err = fail(&["pack", "--budget", "100"], SEARCH_IN);
    assert!(
        err.contains("no item has a `text` field") && err.contains("chunk_text"),
        "{err}"
    );
}

#[test]
fn pack_envelope_and_cursor_page_through() {
    let policy = "examples/policies/search.toml";
    let args = ["pack", "--policy", policy, "--budget", "150", "--envelope"];
    let first = ok(&args, SEARCH_IN);
    let envelope: serde_json::Value =
        serde_json::from_str(first.lines().next().expect("a line")).expect("envelope JSON");
    assert_eq!(envelope["budget"], 150);
    assert_eq!(envelope["has_more"], true, "{first}");
    let cursor = envelope["next_cursor"].as_str().expect("a cursor");
    let mut next_args = args.to_vec();
    next_args.extend(["--cursor", cursor]);
    let second = ok(&next_args, SEARCH_IN);
    let page2: serde_json::Value =
        serde_json::from_str(second.lines().next().expect("a line")).expect("envelope JSON");
    assert_eq!(page2["page"], 2);
    insta::assert_snapshot!(format!("--- page 1\n{first}--- page 2\n{second}"));

    // The cursor belongs to this budget; another one is refused with exit 2.
    let err = fail(
        &[
            "pack",
            "--policy",
            policy,
            "--budget",
            "151",
            "--envelope",
            "--cursor",
            cursor,
        ],
        SEARCH_IN,
    );
    assert!(
        err.contains("--cursor") && err.contains("does not fit"),
        "{err}"
    );
    let err = fail(
        &[
            "pack", "--policy", policy, "--budget", "150", "--cursor", "%%",
        ],
        SEARCH_IN,
    );
    // A budget too small to show any chunk offers no next page (it would be the same).
    let tiny = ok(
        &["pack", "--policy", policy, "--budget", "90", "--envelope"],
        SEARCH_IN,
    );
    assert!(
        tiny.contains("\"has_more\":false") && !tiny.contains("cursor"),
        "{tiny}"
    );
    assert!(err.contains("not a pare pack cursor"), "{err}");
}

#[test]
fn pack_query_ranks_by_relevance_and_says_which_words_matched() {
    let policy = "examples/policies/search.toml";
    let plain = ok(
        &[
            "pack", "--policy", policy, "--budget", "500", "--format", "json",
        ],
        SEARCH_IN,
    );
    let asked = ok(
        &[
            "pack",
            "--policy",
            policy,
            "--budget",
            "500",
            "--format",
            "json",
            "--query",
            "how do I install the guide? kubernetes",
        ],
        SEARCH_IN,
    );
    let plain: serde_json::Value = serde_json::from_str(&plain).expect("JSON");
    let asked: serde_json::Value = serde_json::from_str(&asked).expect("JSON");
    assert!(plain.get("query_analysis").is_none());
    assert_eq!(plain["chunks"][0]["id"], "1");
    // The guide scored 0.35, under search.toml's threshold of 0.4: with the question it is
    // first, and shown, not demoted to metadata; its score is still the response's.
    assert_eq!(asked["chunks"][0]["id"], "2");
    assert_eq!(asked["chunks"][0]["tier"], "full");
    assert_eq!(asked["chunks"][0]["score"], 0.35);
    assert_eq!(
        asked["query_analysis"]["matched_terms"],
        serde_json::json!(["install", "guide"])
    );
    assert_eq!(
        asked["query_analysis"]["unmatched_terms"],
        serde_json::json!(["kubernetes"])
    );
    // A cursor of the query's pages is refused without the query, and taken with it.
    let first = ok(
        &[
            "pack",
            "--policy",
            policy,
            "--budget",
            "120",
            "--query",
            "guide",
            "--envelope",
        ],
        SEARCH_IN,
    );
    let envelope: serde_json::Value =
        serde_json::from_str(first.lines().next().expect("an envelope")).expect("JSON");
    let cursor = envelope["next_cursor"]
        .as_str()
        .expect("more pages at 120 tokens");
    assert_eq!(
        envelope["query_analysis"]["matched_terms"],
        serde_json::json!(["guide"])
    );
    let (code, _, stderr) = run(
        &[
            "pack",
            "--policy",
            policy,
            "--budget",
            "120",
            "--cursor",
            cursor,
            "--envelope",
        ],
        SEARCH_IN,
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--cursor"), "{stderr}");
    ok(
        &[
            "pack",
            "--policy",
            policy,
            "--budget",
            "120",
            "--query",
            "guide",
            "--cursor",
            cursor,
            "--envelope",
        ],
        SEARCH_IN,
    );
}

#[test]
fn compact_query_reaches_limit_relevant_whole_in_jsonl_and_in_the_report() {
    let dir = tempfile::tempdir().expect("temp dir");
    let policy = dir.path().join("logs.toml");
    std::fs::write(
        &policy,
        "[[ops]]\nop = \"limit\"\nat = [\"$.logs\"]\nmax = 1\nkeep = \"relevant\"\n",
    )
    .expect("write");
    let policy = policy.to_str().expect("UTF-8 path");
    let input = r#"{"logs":[{"msg":"started"},{"msg":"request timeout"},{"msg":"ok"},{"msg":"disk","level":"error"}]}"#;
    let want =
        r#"{"logs":[{"msg":"request timeout"},{"msg":"disk","level":"error"}],"logs_more":2}"#;
    for extra in [&[][..], &["--report"][..]] {
        let mut args = vec!["compact", "--policy", policy, "--query", "timeout"];
        args.extend_from_slice(extra);
        assert_eq!(ok(&args, input), format!("{want}\n"));
    }
    let jsonl = ok(
        &[
            "compact", "--policy", policy, "--query", "timeout", "--jsonl",
        ],
        format!("{input}\n{input}\n"),
    );
    assert_eq!(jsonl, format!("{want}\n{want}\n"));
    // No question: the first item, and the error.
    assert_eq!(
        ok(&["compact", "--policy", policy], input),
        "{\"logs\":[{\"msg\":\"started\"},{\"msg\":\"disk\",\"level\":\"error\"}],\"logs_more\":2}\n"
    );
}
