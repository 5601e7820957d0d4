//! Every input saved under `fuzz/regressions/TARGET/` (a crash the fuzzer found, once
//! fixed) goes through its target's check again on each test run, on stable: a fault found
//! once stays found. How to add one: docs/fuzzing.md.

use std::path::Path;

type Check = fn(&[u8]);

const TARGETS: &[(&str, Check)] = &[
    ("expr_parse", pare_fuzz::expr_parse::check),
    ("json_incremental", pare_fuzz::json_incremental::check),
    ("json_parse", pare_fuzz::json_parse::check),
    ("json_stream", pare_fuzz::json_stream::check),
    ("jsonl", pare_fuzz::jsonl::check),
    ("policy_parse", pare_fuzz::policy_parse::check),
    ("py_repr_parse", pare_fuzz::py_repr_parse::check),
    ("selector_parse", pare_fuzz::selector_parse::check),
    ("toon_expand", pare_fuzz::toon_expand::check),
];

#[test]
fn every_saved_fuzz_finding_passes_its_check() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions");
    let mut replayed = 0;
    for (target, check) in TARGETS {
        let Ok(entries) = std::fs::read_dir(root.join(target)) else {
            continue;
        };
        let mut files: Vec<_> = entries.map(|e| e.unwrap().path()).collect();
        files.sort();
        for file in files {
            let data = std::fs::read(&file).unwrap();
            let outcome = std::panic::catch_unwind(|| check(&data));
            assert!(
                outcome.is_ok(),
                "{target}: {} fails its check again",
                file.display()
            );
            replayed += 1;
        }
    }
    eprintln!("replayed {replayed} saved fuzz finding(s)");
}

#[test]
fn every_target_has_a_check_here() {
    let targets = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz_targets");
    let mut names: Vec<String> = std::fs::read_dir(targets)
        .unwrap()
        .map(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_owned()
        })
        .collect();
    names.sort();
    let listed: Vec<&str> = TARGETS.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names, listed,
        "a target without a replay here, or one replayed that is gone"
    );
}
