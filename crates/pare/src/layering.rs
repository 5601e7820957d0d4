//! The order the engine's modules depend in, kept by a test: a module may name
//! (`crate::…`) only modules before it in [`ORDER`]. A new import of a later module fails
//! `modules_depend_one_way` with the file and the edge, so the crate doc's order stays true.
//!
//! There is no exception: where a lower module must call into a higher one (the JSON stream
//! runs `hoist` and `partition` while it writes a list), the lower one owns a trait the
//! higher one implements (`json::ListHooks`, in `ops/streamed_lists.rs`).

use std::collections::BTreeSet;
use std::path::Path;

/// Each module depends only on modules before it.
const ORDER: &[&str] = &[
    "value",
    "timestamp",
    "rank_table",
    "cursor",
    "scan",
    "relevance",
    "manifest",
    "params",
    "tokens",
    "query",
    "json",
    "project",
    "embedded",
    "encode",
    "ops",
    "schema",
    "policy",
    "shape",
    "jsonl",
    "early",
    "report",
    "pack",
    "stats",
    "respond",
    "mcp",
    "rest",
];

/// The source files of module `name` (its `name.rs` and everything under `name/`), without
/// test-only code (a `tests.rs`, or what follows `#[cfg(test)]` and a `mod`).
fn sources(src: &Path, name: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![src.join(name)];
    let file = src.join(format!("{name}.rs"));
    if file.is_file() {
        stack.push(file);
    }
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            for entry in std::fs::read_dir(&path).unwrap() {
                stack.push(entry.unwrap().path());
            }
        } else if path.extension().is_some_and(|e| e == "rs")
            && path.file_name().is_some_and(|f| f != "tests.rs")
        {
            let text = std::fs::read_to_string(&path).unwrap();
            let code = match text
                .find("#[cfg(test)]\nmod ")
                .or_else(|| text.find("#[cfg(test)]\npub(crate) mod "))
            {
                Some(at) => text[..at].to_owned(),
                None => text,
            };
            out.push((path.display().to_string(), code));
        }
    }
    out
}

/// The modules `code` names as `crate::<module>`, comments left out.
fn named(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            out.insert(name);
        }
    }
    out
}

#[test]
fn modules_depend_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let rank = |m: &str| ORDER.iter().position(|o| *o == m);
    // Every module of the crate is placed.
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        if stem != "lib" && stem != "layering" {
            assert!(
                rank(&stem).is_some(),
                "module `{stem}` is not in layering::ORDER"
            );
        }
    }
    let mut bad = Vec::new();
    for (i, module) in ORDER.iter().enumerate() {
        for (file, code) in sources(&src, module) {
            for to in named(&code) {
                let Some(j) = rank(&to) else { continue };
                if j > i {
                    bad.push(format!(
                        "{file}: `{module}` names `crate::{to}`, which comes after it"
                    ));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "modules must depend one way (layering::ORDER):\n{}",
        bad.join("\n")
    );
}

#[test]
fn a_back_edge_is_found() {
    let code = "use crate::respond::Request;\n// crate::mcp in a comment\nfn f() { crate::json::parse(\"1\"); }";
    let names = named(code);
    assert!(names.contains("respond") && names.contains("json") && !names.contains("mcp"));
}
