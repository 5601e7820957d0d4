//! Where the benchmark corpus and the TOON spec fixtures are: checked in, so a clone runs
//! every test that reads them (see `testdata/README.md`). Used by both crates' tests (the
//! CLI's through `#[path]`), so it depends on std only.
#![allow(dead_code)] // each test file uses a different subset

use std::path::{Path, PathBuf};

/// The workspace root (every crate sits two levels below it).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The six corpus files and where each is checked in.
pub const CORPUS: [(&str, &str); 6] = [
    ("entities_systems.json", "examples/payloads"),
    ("narrative_day.json", "examples/payloads"),
    ("search_memory.json", "examples/payloads"),
    ("semantic_search_full.json", "examples/payloads"),
    ("vendor_graph_full.json", "examples/payloads"),
    ("website_usage.json", "examples/payloads"),
];

/// The corpus file `name` (`entities_systems.json`): from `$PARE_CORPUS_DIR` when that is
/// set, else the checked-in copy. Panics if it is not there: the data is part of the clone.
pub fn corpus_file(name: &str) -> PathBuf {
    let path = match std::env::var_os("PARE_CORPUS_DIR") {
        Some(dir) => PathBuf::from(dir).join(name),
        None => {
            let (_, dir) = CORPUS
                .iter()
                .find(|(n, _)| *n == name)
                .unwrap_or_else(|| panic!("{name} is not a corpus file"));
            root().join(dir).join(name)
        }
    };
    assert!(
        path.is_file(),
        "corpus file {} is missing (checked in; see testdata/README.md)",
        path.display()
    );
    path
}

/// All six corpus files, in name order.
pub fn corpus_files() -> Vec<PathBuf> {
    CORPUS.iter().map(|(name, _)| corpus_file(name)).collect()
}

/// The TOON v4.0 spec fixtures of `kind` (`encode` or `decode`): `$PARE_TOON_SPEC_DIR/kind`
/// when that is set, else the checked-in copy in `testdata/toon-spec/fixtures`.
pub fn toon_spec_dir(kind: &str) -> PathBuf {
    let dir = std::env::var_os("PARE_TOON_SPEC_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("testdata/toon-spec/fixtures"))
        .join(kind);
    assert!(
        dir.is_dir(),
        "TOON spec fixtures {} are missing (checked in; see testdata/toon-spec/SOURCE.md)",
        dir.display()
    );
    dir
}
