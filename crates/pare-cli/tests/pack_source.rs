//! `pare pack DIR` / `pare pack FILE…`: source trees packed under a budget, and
//! `--format json`. Snapshots of testdata/pack-tree (a few .rs, .py, .md files, a
//! .gitignore, an ignored build/ dir and log, a hidden file, a binary file).

use std::fs;

use crate::run_support;

use run_support::run;

const TREE: &str = "testdata/pack-tree";

fn ok(args: &[&str]) -> (String, String) {
    let (code, stdout, stderr) = run(args, "");
    assert_eq!(code, 0, "pare {args:?} failed: {stderr}");
    (stdout, stderr)
}

fn fail(args: &[&str]) -> String {
    let (code, stdout, stderr) = run(args, "");
    assert_eq!(code, 2, "pare {args:?}: expected exit 2: {stderr}");
    assert_eq!(stdout, "");
    assert!(stderr.starts_with("pare: error: ") && !stderr.contains("panicked"));
    stderr
}

fn tokens(text: &str) -> usize {
    pare::tokens::builtin("o200k_base")
        .expect("o200k")
        .count(text)
}

#[test]
fn pack_tree_whole_and_tight() {
    let (whole, stderr) = ok(&["pack", TREE, "--budget", "100000"]);
    // Ignored (build/, *.log), hidden (.env) and binary (logo.png) files are not packed;
    // the binary one is named.
    assert_eq!(
        stderr,
        "pare pack: skipped 1 file: docs/logo.png (binary)\n"
    );
    for gone in ["build/out.rs", "debug.log", ".env", "hidden", "ignored"] {
        assert!(!whole.contains(gone), "{gone} packed:\n{whole}");
    }
    let (tight, _) = ok(&["pack", TREE, "--budget", "400"]);
    insta::assert_snapshot!(format!("--- budget 100000\n{whole}--- budget 400\n{tight}"));
}

#[test]
fn pack_tree_as_json() {
    // The chunks (a budget this small would give a map first).
    let (text, _) = ok(&["pack", TREE, "--budget", "300", "--map", "never"]);
    let (json, _) = ok(&[
        "pack", TREE, "--budget", "300", "--format", "json", "--map", "never",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    // The json describes exactly the text pack: its tokens are the text's.
    assert_eq!(doc["tokens"].as_u64(), Some(tokens(&text) as u64));
    assert!(doc["tokens"].as_u64().unwrap() <= 300);
    let chunks = doc["chunks"].as_array().expect("chunks");
    assert_eq!(doc["total_chunks"].as_u64(), Some(chunks.len() as u64));
    for c in chunks {
        let tier = c["tier"].as_str().unwrap();
        if tier == "full" {
            let t = c["text"].as_str().unwrap();
            assert!(text.contains(t), "{t}");
        }
        assert_eq!(tier == "left-out", c["tokens"] == 0, "{c}");
    }
    assert_eq!(doc["skipped"][0]["path"], "docs/logo.png");
    insta::assert_snapshot!(json);
}

#[test]
fn budget_holds_at_every_budget() {
    for budget in [1, 20, 50, 100, 200, 400, 800, 1600, 3200] {
        let b = budget.to_string();
        let (text, _) = ok(&["pack", TREE, "--budget", &b]);
        assert!(
            tokens(&text) <= budget,
            "{} > {budget}:\n{text}",
            tokens(&text)
        );
        let (env, _) = ok(&["pack", TREE, "--budget", &b, "--envelope"]);
        assert!(
            tokens(&env) <= budget,
            "envelope: {} > {budget}",
            tokens(&env)
        );
    }
}

#[test]
fn same_tree_same_bytes() {
    let args = ["pack", TREE, "--budget", "500", "--format", "json"];
    let first = ok(&args);
    for _ in 0..3 {
        assert_eq!(ok(&args), first);
    }
}

#[test]
fn cursor_pages_through_a_tree() {
    let (json, _) = ok(&[
        "pack", TREE, "--budget", "150", "--format", "json", "--map", "never",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let cursor = doc["next_cursor"].as_str().expect("more pages");
    let (page2, _) = ok(&["pack", TREE, "--budget", "150", "--cursor", cursor]);
    assert!(tokens(&page2) <= 150);
    let first_ids: Vec<&str> = doc["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["tier"] != "left-out")
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert!(!first_ids.is_empty());
    assert!(
        first_ids
            .iter()
            .all(|id| !page2.contains(&format!("{id}\n"))),
        "page 2 repeats page 1:\n{page2}"
    );
}

/// Builds a tree in a temp dir: .gitignore and .ignore respected outside a git repo,
/// hidden files and binary files skipped, --max-file-bytes honoured.
#[test]
fn walk_respects_ignore_files_and_skips_binary_and_large() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::create_dir_all(d.join("src/gen")).unwrap();
    fs::create_dir_all(d.join(".hidden")).unwrap();
    fs::write(d.join(".gitignore"), "src/gen/\n").unwrap();
    fs::write(d.join(".ignore"), "*.tmp\n").unwrap();
    fs::write(d.join("src/a.rs"), "pub fn kept_a() {}\n").unwrap();
    fs::write(d.join("src/gen/b.rs"), "pub fn gitignored_b() {}\n").unwrap();
    fs::write(d.join("c.tmp"), "ignored_by_dot_ignore\n").unwrap();
    fs::write(d.join(".hidden/d.py"), "def hidden_d(): pass\n").unwrap();
    fs::write(d.join("e.bin"), b"\x00\x01binary_e").unwrap();
    fs::write(
        d.join("f.py"),
        format!("def big_f():\n    x = '{}'\n", "y".repeat(5000)),
    )
    .unwrap();
    fs::write(d.join("g.txt"), b"latin1 \xe9\n").unwrap();
    let p = d.to_str().unwrap();
    let (out, stderr) = ok(&["pack", p, "--budget", "5000", "--max-file-bytes", "1000"]);
    assert!(out.contains("kept_a"), "{out}");
    for gone in [
        "gitignored_b",
        "ignored_by_dot_ignore",
        "hidden_d",
        "binary_e",
        "big_f",
        "latin1",
    ] {
        assert!(!out.contains(gone), "{gone}:\n{out}");
    }
    assert!(stderr.contains("e.bin (binary)"), "{stderr}");
    assert!(
        stderr.contains("f.py (") && stderr.contains("over --max-file-bytes 1000"),
        "{stderr}"
    );
    assert!(stderr.contains("g.txt (not UTF-8"), "{stderr}");
    assert!(
        stderr.starts_with("pare pack: skipped 3 files: "),
        "{stderr}"
    );
    // Paths are shown relative to the directory.
    assert!(out.contains("] src/a.rs"), "{out}");
}

#[test]
fn input_kinds() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let search =
        r#"{"results":[{"id":"r1","score":0.9,"path":"x.rs","text":"fn from_search() {}"}]}"#;
    fs::write(d.join("resp.json"), search).unwrap();
    fs::write(
        d.join("chunks.jsonl"),
        "{\"id\":\"j1\",\"score\":0.9,\"text\":\"from_jsonl\"}\n",
    )
    .unwrap();
    let json = d.join("resp.json");
    let json = json.to_str().unwrap();
    // One .json file: a search response, as before.
    let (out, _) = ok(&["pack", json, "--budget", "200"]);
    assert!(
        out.contains("id r1") && out.contains("fn from_search"),
        "{out}"
    );
    // --source: the same file as source text.
    let (out, _) = ok(&["pack", "--source", json, "--budget", "200"]);
    assert!(
        out.contains("\"results\"") && !out.contains("id r1"),
        "{out}"
    );
    // A .jsonl file: chunk objects, one per line.
    let jsonl = d.join("chunks.jsonl");
    let (out, _) = ok(&["pack", jsonl.to_str().unwrap(), "--budget", "200"]);
    assert!(out.contains("from_jsonl") && out.contains("id j1"), "{out}");
    // One source file, or several files: source mode, paths as given.
    let (out, _) = ok(&["pack", "testdata/pack-tree/src/util.rs", "--budget", "500"]);
    assert!(
        out.contains("] testdata/pack-tree/src/util.rs · L1–4"),
        "{out}"
    );
    let (out, _) = ok(&[
        "pack",
        "testdata/pack-tree/app/main.py",
        json,
        "--budget",
        "900",
    ]);
    assert!(
        out.contains("app/main.py") && out.contains("resp.json"),
        "{out}"
    );
    // Stdin stays a search response.
    let (code, out, err) = run(&["pack", "--budget", "200"], search);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("id r1"), "{out}");
    // Errors: exit 2, nothing on stdout.
    let err = fail(&["pack", TREE, "--jsonl", "--budget", "100"]);
    assert!(err.contains("--jsonl reads one file or stdin"), "{err}");
    let err = fail(&["pack", "no/such/dir", "x.rs", "--budget", "100"]);
    assert!(
        err.contains("no/such/dir: no such file or directory"),
        "{err}"
    );
    let err = fail(&["pack", "--source", "--budget", "100"]);
    assert!(err.contains("--source needs files or directories"), "{err}");
    let empty = tempfile::tempdir().unwrap();
    let err = fail(&["pack", empty.path().to_str().unwrap(), "--budget", "100"]);
    assert!(err.contains("no source files to pack"), "{err}");
}

/// Issue 32's acceptance: at 2,000 tokens the ops directory (20-odd files, ~35k tokens of
/// code) was two files; the map names every one.
#[test]
fn pack_of_the_ops_directory_at_2000_tokens_names_every_file() {
    let ops = "crates/pare/src/ops";
    let (text, _) = ok(&["pack", ops, "--budget", "2000"]);
    assert!(tokens(&text) <= 2000, "{}", tokens(&text));
    let mut files = Vec::new();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(ops);
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push(p.file_name().unwrap().to_string_lossy().into_owned());
            }
        }
    }
    assert!(files.len() >= 20);
    for f in &files {
        assert!(
            text.lines().any(|l| l.trim_start().starts_with(f.as_str())),
            "{f} not named:\n{text}"
        );
    }
    assert!(text.contains("pare: a map of"), "{text}");
    // The most used names of the tree lead: the op trait and the compile context.
    let (json, _) = ok(&["pack", ops, "--budget", "2000", "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["mode"], "map");
    assert_eq!(doc["files_named"], doc["files"]);
    let best: Vec<&str> = doc["definitions"].as_array().unwrap()[..10]
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert!(
        best.contains(&"CompileCx") && best.contains(&"PolicyError"),
        "{best:?}"
    );
    assert_eq!(doc["text"].as_str().unwrap(), text);
}

#[test]
fn map_levels_never_and_a_budget_below_any_map() {
    // `--map never`: the chunks, file by file, as before the map.
    let (chunks, _) = ok(&["pack", TREE, "--budget", "150", "--map", "never"]);
    assert!(!chunks.contains("pare: a map of"));
    // `--map always` at a budget that holds everything: names, signatures and bodies.
    let (all, _) = ok(&["pack", TREE, "--budget", "5000", "--map", "always"]);
    assert!(
        all.contains("signatures, best first by file:") && all.contains("```rust"),
        "{all}"
    );
    // Too small for even the top directories: an error naming the budget.
    // (The tree's binary file is named on stderr first.)
    let (code, out, e) = run(&["pack", TREE, "--budget", "5", "--map", "always"], "");
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(
        e.contains("pare: error: --budget: a budget of 5 tokens cannot hold a map of the tree"),
        "{e}"
    );
    // `auto` then falls back to the chunks' own pages.
    let (tiny, _) = ok(&["pack", TREE, "--budget", "5"]);
    assert!(tokens(&tiny) <= 5);
}
