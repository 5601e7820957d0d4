//! `pack::source`: cutting source files into chunks for `pare pack DIR`.

use pare::pack::chunks::Chunk;
use pare::pack::source::{SourceFile, SourceOptions, chunk_file, chunk_files};

/// The default options with every item its own chunk: the tests of how files are cut.
fn cut() -> SourceOptions {
    SourceOptions {
        merge_lines: 0,
        ..SourceOptions::default()
    }
}
use proptest::prelude::*;

fn spans(chunks: &[Chunk]) -> Vec<(usize, usize)> {
    chunks
        .iter()
        .map(|c| (c.line_start, c.line_end()))
        .collect()
}

const RUST: &str = "//! Module doc.

use std::fmt;

/// Adds.
///
/// Longer text.
#[inline]
#[must_use]
pub fn add(a: u8, b: u8) -> u8 {
    a + b
}

const LIMIT: u8 = 9;
static NAME: &str = \"x\";

// A plain comment right above.
fn helper() {}

#[cfg(test)]
mod tests {
    #[test]
    fn adds() {
        assert_eq!(super::add(1, 2), 3);
    }
}
";

#[test]
fn rust_items_carry_their_docs_and_attributes() {
    let c = chunk_file("src/lib.rs", RUST, &cut());
    assert_eq!(spans(&c), [(1, 3), (5, 12), (14, 15), (17, 18), (20, 26)]);
    assert!(
        c[1].text
            .starts_with("/// Adds.\n///\n/// Longer text.\n#[inline]\n#[must_use]\npub fn add")
    );
    assert_eq!(c[1].id, "src/lib.rs:L5-12");
    // Module-level statements between items are one chunk.
    assert_eq!(
        c[2].text,
        "const LIMIT: u8 = 9;\nstatic NAME: &str = \"x\";"
    );
    assert!(
        c.iter()
            .all(|c| c.lang == pare::pack::outline::Lang::Rust && c.from_source)
    );
    // Public item > private item > module code > test; the module doc head counts as public.
    let s: Vec<f64> = c.iter().map(|c| c.score).collect();
    assert!(s[1] > s[3] && s[3] > s[2] && s[2] > s[4], "{s:?}");
    assert_eq!(s[0], s[1]);
    assert!(s[4] < 0.4, "test code starts at metadata only: {s:?}");
}

#[test]
fn python_decorators_docstrings_and_module_code() {
    let py = "\"\"\"Doc.\"\"\"\n\nimport os\n\nX = 1\n\n\n@dataclass\nclass A:\n    \"\"\"An A.\"\"\"\n\n    def f(self):\n        return 1\n\n\n# About g.\ndef _g():\n    pass\n\n\nif __name__ == \"__main__\":\n    _g()\n";
    let c = chunk_file("pkg/mod.py", py, &cut());
    assert_eq!(spans(&c), [(1, 5), (8, 13), (16, 18), (21, 22)]);
    assert!(c[1].text.starts_with("@dataclass\nclass A:"));
    assert!(c[2].text.starts_with("# About g.\ndef _g():"));
    assert!(
        c[1].score > c[2].score,
        "public class before private function"
    );
}

#[test]
fn long_containers_split_into_header_and_members() {
    let mut methods = String::new();
    for i in 0..4 {
        methods.push_str(&format!(
            "    /// Method {i}.\n    pub fn m{i}(&self) -> u32 {{\n        {i}\n    }}\n\n"
        ));
    }
    let text = format!("/// A thing.\nimpl Thing {{\n    const K: u32 = 1;\n\n{methods}}}\n");
    let opts = SourceOptions {
        max_item_lines: 10,
        max_block_lines: 60,
        merge_lines: 0,
    };
    let c = chunk_file("a.rs", &text, &opts);
    assert_eq!(c[0].text, "/// A thing.\nimpl Thing {");
    assert_eq!(c[1].text, "    const K: u32 = 1;");
    assert_eq!(c[1].header.as_deref(), Some("in impl Thing"));
    assert!(c[2].text.starts_with("    /// Method 0.\n    pub fn m0"));
    assert_eq!(c.len(), 6);
    // The closing brace joins the last member.
    assert!(c[5].text.ends_with("    }\n\n}"), "{:?}", c[5].text);
    // Unsplit when under the cap.
    assert_eq!(
        chunk_file("a.rs", &text, &SourceOptions::default()).len(),
        1
    );
}

#[test]
fn python_class_split_keeps_its_docstring_in_the_header() {
    let mut body = String::new();
    for i in 0..5 {
        body.push_str(&format!("    def m{i}(self):\n        return {i}\n\n"));
    }
    let text = format!("class Big:\n    \"\"\"Big.\n\n    More.\n    \"\"\"\n\n{body}");
    let opts = SourceOptions {
        max_item_lines: 8,
        max_block_lines: 60,
        merge_lines: 0,
    };
    let c = chunk_file("big.py", &text, &opts);
    assert_eq!(
        c[0].text,
        "class Big:\n    \"\"\"Big.\n\n    More.\n    \"\"\""
    );
    assert_eq!(c.len(), 6);
    assert!(
        c[1..]
            .iter()
            .all(|c| c.header.as_deref() == Some("in class Big"))
    );
}

#[test]
fn text_without_a_grammar_is_cut_into_blank_line_blocks() {
    let text = "one\ntwo\n\nthree\n\n\nfour\nfive\nsix\n";
    let opts = SourceOptions {
        max_item_lines: 120,
        max_block_lines: 4,
        merge_lines: 0,
    };
    let c = chunk_file("notes.txt", text, &opts);
    // Blocks joined while they fit 4 lines; the next starts fresh.
    assert_eq!(spans(&c), [(1, 4), (7, 9)]);
    // A block longer than the cap is cut at the cap.
    let long: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    assert_eq!(
        spans(&chunk_file("x.cfg", &long, &opts)),
        [(1, 4), (5, 8), (9, 10)]
    );
    // Markdown: a heading starts a new chunk.
    let md = "# A\ntext\n\n## B\nmore\n";
    assert_eq!(
        spans(&chunk_file("r.md", md, &SourceOptions::default())),
        [(1, 2), (4, 5)]
    );
}

#[test]
fn test_files_and_readme_are_scored_by_path() {
    let o = SourceOptions::default();
    let code = "pub fn f() {}\n";
    let lib = chunk_file("lib.rs", code, &o)[0].score;
    let deep = chunk_file("a/b/c.rs", code, &o)[0].score;
    let test = chunk_file("tests/it.rs", code, &o)[0].score;
    let readme = chunk_file("README.md", "# Hi\n", &o)[0].score;
    let nested_readme = chunk_file("docs/README.md", "# Hi\n", &o)[0].score;
    assert!(lib > deep && deep > readme && readme > nested_readme && nested_readme > test);
    assert!(test < 0.4);
}

#[test]
fn files_keep_their_order_and_indexes_count_through() {
    let files = vec![
        SourceFile {
            path: "a.py".into(),
            text: "def a():\n    pass\n\n\ndef b():\n    pass\n".into(),
        },
        SourceFile {
            path: "b.rs".into(),
            text: "fn c() {}\n".into(),
        },
    ];
    let once = chunk_files(&files, &cut());
    let ids: Vec<&str> = once.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["a.py:L1-2", "a.py:L5-6", "b.rs:L1-1"]);
    assert_eq!(once.iter().map(|c| c.index).collect::<Vec<_>>(), [0, 1, 2]);
    let again = chunk_files(&files, &cut());
    assert_eq!(format!("{once:?}"), format!("{again:?}"));
}

fn code_line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("fn f() {".to_string()),
        Just("}".to_string()),
        Just("/// doc".to_string()),
        Just("#[inline]".to_string()),
        Just("pub struct S;".to_string()),
        Just("impl S {".to_string()),
        Just("def g(x):".to_string()),
        Just("    return x".to_string()),
        Just("class C:".to_string()),
        Just("@decorator".to_string()),
        Just("\"\"\"".to_string()),
        Just("x = 1".to_string()),
        Just("# heading".to_string()),
        "[a-z ]{0,12}",
    ]
}

proptest! {
    /// Every non-blank line is in exactly one chunk, verbatim and in order, whatever the
    /// text (broken code included) and the caps.
    #[test]
    fn every_non_blank_line_in_exactly_one_chunk(
        lines in proptest::collection::vec(code_line(), 0..80),
        ext in prop_oneof![Just("rs"), Just("py"), Just("ts"), Just("go"), Just("java"), Just("md"), Just("txt")],
        item in 2usize..20,
        block in 1usize..10,
        merge in 0usize..30,
    ) {
        let text = lines.join("\n");
        let opts = SourceOptions { max_item_lines: item, max_block_lines: block, merge_lines: merge };
        let chunks = chunk_file(&format!("f.{ext}"), &text, &opts);
        let mut seen: Vec<(usize, String)> = Vec::new();
        let mut last_end = 0;
        for c in &chunks {
            prop_assert!(c.line_start > last_end, "chunks overlap or go back: {:?}", spans(&chunks));
            last_end = c.line_end();
            for (k, l) in c.text.split('\n').enumerate() {
                if !l.trim().is_empty() {
                    seen.push((c.line_start + k, l.to_string()));
                }
            }
        }
        let want: Vec<(usize, String)> = text
            .split('\n')
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| (i + 1, l.to_string()))
            .collect();
        prop_assert_eq!(seen, want);
    }
}

/// Small neighbouring items of one kind share a chunk (and so a metadata line naming them
/// all); a public and a private item, or items spanning more than `merge_lines`, do not.
#[test]
fn small_neighbouring_items_share_a_chunk() {
    let code = "pub fn a() {}\n\npub fn b() {}\n\nfn c() {}\n\nfn d() {}\n\npub fn e() {\n    1;\n    2;\n}\n";
    let merged = chunk_file("m.rs", code, &SourceOptions::default());
    assert_eq!(spans(&merged), [(1, 3), (5, 7), (9, 12)]);
    assert_eq!(merged[0].text, "pub fn a() {}\n\npub fn b() {}");
    let tight = SourceOptions {
        merge_lines: 3,
        ..SourceOptions::default()
    };
    assert_eq!(
        spans(&chunk_file("m.rs", code, &tight)),
        [(1, 3), (5, 7), (9, 12)]
    );
    let apart = SourceOptions {
        merge_lines: 2,
        ..SourceOptions::default()
    };
    assert_eq!(
        spans(&chunk_file("m.rs", code, &apart)),
        [(1, 1), (3, 3), (5, 5), (7, 7), (9, 12)]
    );
    assert_eq!(spans(&chunk_file("m.rs", code, &cut())).len(), 5);
}
