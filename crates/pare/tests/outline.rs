//! `pack::outline`: structure-preserving previews of code and docs chunks.
//!
//! * Small hand-written samples per language, with exact previews for some.
//! * Real source read at test time from this machine (never committed): Rust files under
//!   the cargo registry (`$CARGO_HOME/registry/src/*/`), Python's standard library
//!   (`$PARE_PY_STDLIB`, else asked of `python3`), Markdown from the registry, Go/Java under
//!   `/usr/share/doc` where there are any, and, in a test ignored unless asked for (it needs
//!   the node peers), `.js`/`.ts` under `/tmp/pare-peers/node_modules`
//!   (`$PARE_NODE_MODULES`). Files are cut into 40–80 line chunks at arbitrary offsets
//!   (mid-function) and every preview is checked against the invariants below. A missing
//!   registry or standard library fails the test.
//! * A proptest over random text (code-ish lines, random bytes as lines, unicode, CRLF,
//!   tabs) for every language.
//!
//! Invariants: no panic; every preview line is verbatim from the chunk (in order) or a
//! well-formed marker; markers' counts and ranges add up to exactly the dropped lines, two
//! markers are never adjacent; every `important` line and the head/tail fractions are
//! kept; output is deterministic; a preview never has more lines than its chunk; nothing
//! dropped means the text comes back unchanged.
//!
//! ```text
//! cargo test -p pare-engine --test integration outline:: -- --nocapture   # shows the real-source counts
//! ```

use crate::common::needs;

use std::path::{Path, PathBuf};

use pare::pack::outline::{Lang, Outline, Preview, PreviewOptions, Previewer, outline, preview};
use proptest::prelude::*;

// ---------------------------------------------------------------- invariants

fn content(line: &str) -> &str {
    let line = line.strip_suffix('\n').unwrap_or(line);
    line.strip_suffix('\r').unwrap_or(line)
}

fn ending(line: &str) -> &str {
    &line[content(line).len()..]
}

/// `(omitted, first, last)` if `line` is exactly the marker `lang` writes for them.
fn parse_marker(line: &str, lang: Lang) -> Option<(usize, usize, usize)> {
    let body = line.trim_start_matches([' ', '\t']);
    let rest = &body[body.find("… ")? + "… ".len()..];
    let (count, rest) = rest.split_once(' ')?;
    let count: usize = count.parse().ok()?;
    let open = rest.find("(L")? + 2;
    let close = open + rest[open..].find(')')?;
    let range = &rest[open..close];
    let (first, last) = match range.split_once("–L") {
        Some((a, b)) => (a.parse().ok()?, b.parse().ok()?),
        None => {
            let a = range.parse().ok()?;
            (a, a)
        }
    };
    (lang.gap_marker(count, first, last) == body).then_some((count, first, last))
}

fn fraction_of(frac: f64, n: usize) -> usize {
    if frac.is_nan() || frac <= 0.0 {
        return 0;
    }
    ((frac.min(1.0) * n as f64 + 1e-9).floor() as usize).min(n)
}

/// Checks one rendering against the chunk; returns the number of markers.
fn check(
    text: &str,
    lang: Lang,
    first_line: usize,
    opts: &PreviewOptions,
    p: &Preview,
    o: &Outline,
) -> usize {
    let src: Vec<&str> = text.split_inclusive('\n').collect();
    let n = src.len();
    let ctx = || {
        format!(
            "{lang:?} first_line={first_line} {opts:?}\n--- chunk\n{text}\n--- preview\n{}",
            p.text
        )
    };

    assert!(
        o.important.windows(2).all(|w| w[0] < w[1]),
        "important not ascending: {}",
        ctx()
    );
    assert!(
        o.important.iter().all(|&l| (1..=n).contains(&l)),
        "important out of range: {}",
        ctx()
    );
    assert!(
        o.symbols
            .iter()
            .all(|s| (1..=n).contains(&s.line) && !s.name.is_empty()),
        "{}",
        ctx()
    );
    assert!(
        o.symbols.windows(2).all(|w| w[0].line <= w[1].line),
        "symbols out of order: {}",
        ctx()
    );

    if p.omitted == 0 {
        assert_eq!(
            p.text,
            text,
            "nothing dropped must mean unchanged: {}",
            ctx()
        );
        assert_eq!(p.kept, n);
        return 0;
    }
    let out: Vec<&str> = p.text.split_inclusive('\n').collect();
    assert!(out.len() <= n, "preview longer than chunk: {}", ctx());
    let mut kept = vec![false; n];
    let (mut j, mut omitted, mut markers, mut prev_marker) = (0, 0, 0, false);
    for line in &out {
        if j < n && *line == src[j] {
            kept[j] = true;
            j += 1;
            prev_marker = false;
            continue;
        }
        let Some((count, first, last)) = parse_marker(content(line), lang) else {
            panic!(
                "line {line:?} is neither verbatim (expected {:?}) nor a marker: {}",
                src.get(j),
                ctx()
            );
        };
        assert!(!prev_marker, "two markers in a row: {}", ctx());
        assert!(
            count >= 1 && j + count <= n,
            "marker count {count} at {j}: {}",
            ctx()
        );
        assert_eq!(first, first_line + j, "marker start: {}", ctx());
        assert_eq!(last, first + count - 1, "marker end: {}", ctx());
        assert_eq!(
            ending(line),
            ending(src[j + count - 1]),
            "marker line ending: {}",
            ctx()
        );
        j += count;
        omitted += count;
        markers += 1;
        prev_marker = true;
    }
    assert_eq!(j, n, "preview does not cover the chunk: {}", ctx());
    assert_eq!(p.omitted, omitted, "{}", ctx());
    assert_eq!(p.kept, kept.iter().filter(|&&k| k).count(), "{}", ctx());
    for &l in &o.important {
        assert!(kept[l - 1], "important line {l} dropped: {}", ctx());
    }
    let (head, tail) = (fraction_of(opts.head, n), fraction_of(opts.tail, n));
    assert!(kept[..head].iter().all(|&k| k), "head dropped: {}", ctx());
    assert!(
        kept[n - tail..].iter().all(|&k| k),
        "tail dropped: {}",
        ctx()
    );
    markers
}

const FRACTIONS: [(f64, f64); 5] = [
    (0.3, 0.3),
    (0.15, 0.15),
    (0.05, 0.05),
    (0.0, 0.0),
    (0.5, 0.0),
];

#[derive(Default)]
struct Tally {
    chunks: usize,
    symbols: usize,
    markers: usize,
}

/// All invariants of one chunk at every fraction; also determinism and that `preview` and
/// `outline` agree with a `Previewer`.
fn check_chunk(text: &str, lang: Lang, first_line: usize, tally: &mut Tally) {
    let pv = Previewer::new(text, lang, first_line);
    let o = outline(text, lang);
    assert_eq!(
        &o,
        pv.outline(),
        "outline not deterministic / Previewer disagrees"
    );
    for (head, tail) in FRACTIONS {
        let opts = PreviewOptions { head, tail };
        let p = pv.render(&opts);
        assert_eq!(
            p,
            preview(text, lang, first_line, &opts),
            "preview not deterministic"
        );
        tally.markers += check(text, lang, first_line, &opts, &p, &o);
    }
    tally.chunks += 1;
    tally.symbols += o.symbols.len();
}

// ---------------------------------------------------------------- samples

const RUST: &str = r#"        self.items.push(item);
        self.len += 1;
    }
}

/// A bounded queue of jobs.
///
/// Jobs are run in order.
#[derive(Debug, Clone)]
pub struct Queue<T> {
    items: Vec<T>,
    capacity_in_items: usize,
}

impl<T: Clone> Queue<T> {
    /// Makes an empty queue.
    pub fn new(capacity_in_items: usize) -> Self {
        let items = Vec::with_capacity(capacity_in_items);
        Queue { items, capacity_in_items }
    }

    pub fn pop(
        &mut self,
    ) -> Option<T> {
        if self.items.is_empty() {
            return None;
        }
        Some(self.items.remove(0))
    }
}
"#;

const PYTHON: &str = r#"        for line in handle:
            total += len(line)
        return total


def parse_header(raw: bytes) -> dict:
    """Split a raw header block into fields.

    Folded lines are joined first.
    """
    fields = {}
    for line in raw.splitlines():
        key, _, value = line.partition(b":")
        fields[key.strip().lower()] = value.strip()
    return fields


class Reader(io.RawIOBase):
    """Reads framed records."""

    @staticmethod
    def frame_size(header):
        return int.from_bytes(header[:4], "big")
"#;

const TYPESCRIPT: &str = r#"import { Store } from "./store";

/**
 * Options for a fetch.
 * @public
 */
export interface FetchOptions {
  retries: number;
  timeoutMs?: number;
}

export type Handler<T> = (value: T) => void;

export enum Mode { Fast, Safe }

export class Client {
  constructor(private store: Store) {}

  /** Fetches one item. */
  async get(id: string, opts: FetchOptions): Promise<Item> {
    const cached = this.store.lookup(id);
    if (cached) return cached;
    return this.load(id, opts);
  }
}

export const retry = async <T>(fn: () => Promise<T>, n = 3): Promise<T> => {
  for (let i = 0; i < n; i++) {
    try { return await fn(); } catch { /* again */ }
  }
  throw new Error("gave up");
};

declare function helper(x: number): string;
namespace Internal { export const depth = 2; }
"#;

const TSX: &str = r#"type Props = { title: string; items: string[] };

// Renders a titled list.
export function List({ title, items }: Props) {
  const rows = items.map((item) => <li key={item}>{item}</li>);
  return (
    <section>
      <h2>{title}</h2>
      <ul>{rows}</ul>
    </section>
  );
}

export default function App() {
  return <List title="x" items={["a", "b"]} />;
}
"#;

const JAVASCRIPT: &str = r#"'use strict';

// Counts words per line.
function countWords(text) {
  return text
    .split('\n')
    .map((line) => line.split(/\s+/).filter(Boolean).length);
}

const average = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

class Stats {
  static of(text) {
    return new Stats(countWords(text));
  }
}

module.exports = { countWords, average, Stats };
exports.version = '1.0';
"#;

const GO: &str = "package cache

import \"sync\"

// Cache holds values by key.
// It is safe for concurrent use.
type Cache struct {
\tmu    sync.Mutex
\titems map[string][]byte
}

// Getter fetches missing values.
type Getter interface {
\tGet(key string) ([]byte, error)
}

// Get returns the value for key.
func (c *Cache) Get(key string,
\tload Getter) ([]byte, error) {
\tc.mu.Lock()
\tdefer c.mu.Unlock()
\tif v, ok := c.items[key]; ok {
\t\treturn v, nil
\t}
\treturn load.Get(key)
}

func New() *Cache { return &Cache{items: map[string][]byte{}} }
";

const JAVA: &str = r#"package org.example.text;

import java.util.List;

/**
 * Splits text into tokens.
 */
public final class Splitter {
    private final char sep;

    public Splitter(char sep) {
        this.sep = sep;
    }

    /** Splits one line. */
    @Deprecated
    public List<String> split(String line,
                              int limit) {
        return List.of(line.split(String.valueOf(sep), limit));
    }

    interface Sink { void accept(String token); }

    enum Mode { STRICT, LOOSE }

    record Span(int start, int end) {}
}
"#;

const MARKDOWN: &str = "# Packing guide

Pare packs results under a budget. It never splits a line.
Each result keeps its path.

## Options

- `--budget`: the token budget.
- `--format`: json or text.

```toml
# not a heading
budget = 4000
```

Setext title
------------

Closing words here. More words.
";

const RUBY: &str = r##"# A tiny Ruby class.
class Greeter
  def initialize(name)
    @name = name
  end

  def greet
    "Hello, #{@name}"
  end
end
"##;

const NONE: PreviewOptions = PreviewOptions {
    head: 0.0,
    tail: 0.0,
};

fn symbols(o: &Outline) -> Vec<(String, &'static str, usize)> {
    o.symbols
        .iter()
        .map(|s| (s.name.clone(), s.kind, s.line))
        .collect()
}

fn syms(list: &[(&str, &'static str, usize)]) -> Vec<(String, &'static str, usize)> {
    list.iter()
        .map(|&(n, k, l)| (n.to_string(), k, l))
        .collect()
}

#[test]
fn rust_sample() {
    let o = outline(RUST, Lang::Rust);
    assert_eq!(
        symbols(&o),
        syms(&[
            ("Queue", "struct", 10),
            ("Queue<T>", "impl", 15),
            ("new", "method", 17),
            ("pop", "method", 22)
        ])
    );
    assert_eq!(o.first_doc.as_deref(), Some("A bounded queue of jobs."));
    assert_eq!(o.important, [6, 9, 10, 15, 16, 17, 22, 23, 24]);
    let p = preview(RUST, Lang::Rust, 120, &NONE);
    assert_eq!(
        p.text,
        "// … 5 lines omitted (L120–L124)
/// A bounded queue of jobs.
///
/// Jobs are run in order.
#[derive(Debug, Clone)]
pub struct Queue<T> {
// … 4 lines omitted (L130–L133)
impl<T: Clone> Queue<T> {
    /// Makes an empty queue.
    pub fn new(capacity_in_items: usize) -> Self {
    // … 4 lines omitted (L137–L140)
    pub fn pop(
        &mut self,
    ) -> Option<T> {
    // … 6 lines omitted (L144–L149)
"
    );
    assert_eq!((p.kept, p.omitted), (11, 19));
    check(RUST, Lang::Rust, 120, &NONE, &p, &o);
}

#[test]
fn python_sample() {
    let o = outline(PYTHON, Lang::Python);
    assert_eq!(
        symbols(&o),
        syms(&[
            ("parse_header", "function", 6),
            ("Reader", "class", 18),
            ("frame_size", "method", 22)
        ])
    );
    assert_eq!(
        o.first_doc.as_deref(),
        Some("Split a raw header block into fields.")
    );
    let p = preview(PYTHON, Lang::Python, 1, &NONE);
    assert_eq!(
        p.text,
        r#"# … 5 lines omitted (L1–L5)
def parse_header(raw: bytes) -> dict:
    """Split a raw header block into fields.
# … 10 lines omitted (L8–L17)
class Reader(io.RawIOBase):
    """Reads framed records."""

    @staticmethod
    def frame_size(header):
    # … 1 line omitted (L23)
"#
    );
    // The default keeps 30% at each end, rounded down: the first and last 6 of 23 lines.
    let p = preview(PYTHON, Lang::Python, 1, &PreviewOptions::default());
    assert_eq!(
        p.text,
        r#"        for line in handle:
            total += len(line)
        return total


def parse_header(raw: bytes) -> dict:
    """Split a raw header block into fields.
# … 10 lines omitted (L8–L17)
class Reader(io.RawIOBase):
    """Reads framed records."""

    @staticmethod
    def frame_size(header):
        return int.from_bytes(header[:4], "big")
"#
    );
}

#[test]
fn typescript_sample() {
    let o = outline(TYPESCRIPT, Lang::TypeScript);
    assert_eq!(
        symbols(&o),
        syms(&[
            ("FetchOptions", "interface", 7),
            ("Handler", "type", 12),
            ("Mode", "enum", 14),
            ("Client", "class", 16),
            ("constructor", "method", 17),
            ("get", "method", 20),
            ("retry", "function", 27),
            ("helper", "function", 34),
            ("Internal", "module", 35),
            ("depth", "const", 35),
        ])
    );
    assert_eq!(o.first_doc.as_deref(), Some("Options for a fetch."));
    let p = preview(TYPESCRIPT, Lang::TypeScript, 1, &NONE);
    assert_eq!(
        p.text,
        r#"// … 2 lines omitted (L1–L2)
/**
 * Options for a fetch.
 * @public
 */
export interface FetchOptions {
// … 4 lines omitted (L8–L11)
export type Handler<T> = (value: T) => void;

export enum Mode { Fast, Safe }

export class Client {
  constructor(private store: Store) {}

  /** Fetches one item. */
  async get(id: string, opts: FetchOptions): Promise<Item> {
// … 6 lines omitted (L21–L26)
export const retry = async <T>(fn: () => Promise<T>, n = 3): Promise<T> => {
// … 6 lines omitted (L28–L33)
declare function helper(x: number): string;
namespace Internal { export const depth = 2; }
"#
    );
}

#[test]
fn tsx_sample() {
    let o = outline(TSX, Lang::Tsx);
    assert_eq!(
        symbols(&o),
        syms(&[
            ("Props", "type", 1),
            ("List", "function", 4),
            ("App", "function", 14)
        ])
    );
    assert_eq!(o.important, [1, 3, 4, 14]);
    assert_eq!(o.first_doc.as_deref(), Some("Renders a titled list."));
}

#[test]
fn javascript_sample() {
    let o = outline(JAVASCRIPT, Lang::JavaScript);
    assert_eq!(
        symbols(&o),
        syms(&[
            ("countWords", "function", 4),
            ("average", "function", 10),
            ("Stats", "class", 12),
            ("of", "method", 13),
            ("module.exports", "export", 18),
            ("version", "export", 19),
        ])
    );
    assert_eq!(o.first_doc.as_deref(), Some("Counts words per line."));
}

#[test]
fn go_sample() {
    let o = outline(GO, Lang::Go);
    assert_eq!(
        symbols(&o),
        syms(&[
            ("cache", "module", 1),
            ("Cache", "struct", 7),
            ("Getter", "interface", 13),
            ("Get", "method", 14),
            ("Get", "method", 18),
            ("New", "function", 28),
        ])
    );
    assert_eq!(o.first_doc.as_deref(), Some("Cache holds values by key."));
    // The doc comment, the two-line signature; the body becomes one tab-indented marker.
    let p = preview(GO, Lang::Go, 1, &NONE);
    assert!(p.text.contains(
        "// Get returns the value for key.\nfunc (c *Cache) Get(key string,\n\tload Getter) ([]byte, error) {\n// … 8 lines omitted (L20–L27)\nfunc New()"
    ), "{}", p.text);
}

#[test]
fn java_sample() {
    let o = outline(JAVA, Lang::Java);
    assert_eq!(
        symbols(&o),
        syms(&[
            ("org.example.text", "module", 1),
            ("Splitter", "class", 8),
            ("Splitter", "method", 11),
            ("split", "method", 17),
            ("Sink", "interface", 22),
            ("accept", "method", 22),
            ("Mode", "enum", 24),
            ("Span", "record", 26),
        ])
    );
    assert_eq!(o.first_doc.as_deref(), Some("Splits text into tokens."));
    // Javadoc summary, annotation and the whole two-line signature are kept.
    for line in [15, 16, 17, 18] {
        assert!(o.important.contains(&line), "{line}: {:?}", o.important);
    }
}

#[test]
fn markdown_sample() {
    let o = outline(MARKDOWN, Lang::Markdown);
    assert_eq!(
        symbols(&o),
        syms(&[
            ("Packing guide", "heading", 1),
            ("Options", "heading", 6),
            ("Setext title", "heading", 16)
        ])
    );
    assert_eq!(o.important, [1, 3, 6, 8, 16, 17, 19]);
    assert_eq!(o.first_doc.as_deref(), Some("Packing guide"));
    let p = preview(MARKDOWN, Lang::Markdown, 1, &NONE);
    assert_eq!(
        p.text,
        "# Packing guide

Pare packs results under a budget. It never splits a line.
Each result keeps its path.

## Options

- `--budget`: the token budget.
<!-- … 7 lines omitted (L9–L15) -->
Setext title
------------

Closing words here. More words.
"
    );
}

#[test]
fn other_uses_the_seed_keywords() {
    let o = outline(RUBY, Lang::Other);
    assert_eq!(symbols(&o), syms(&[("Greeter", "class", 2)]));
    assert_eq!(o.first_doc.as_deref(), Some("A tiny Ruby class."));
    let p = preview(RUBY, Lang::Other, 1, &NONE);
    assert_eq!(
        p.text,
        "# A tiny Ruby class.\nclass Greeter\n// … 8 lines omitted (L3–L10)\n"
    );
    let o = outline(
        "export const x = 1;\nlet y = 2;\nfoo();\nnamespace N {}\n",
        Lang::Other,
    );
    assert_eq!(o.important, [1, 2, 4]);
}

#[test]
fn grammar_failure_falls_back_to_keywords() {
    // Cut inside a docstring: the parser sees the closing quotes as an opening.
    let chunk = "    of the input.\n    \"\"\"\n    return 1\n\ndef second(a, b):\n    return a + b\n\nclass Third:\n    pass\n";
    let o = outline(chunk, Lang::Python);
    for line in [5, 8] {
        assert!(o.important.contains(&line), "{line}: {:?}", o.important);
    }
}

#[test]
fn every_sample_keeps_the_invariants() {
    let samples = [
        (RUST, Lang::Rust),
        (PYTHON, Lang::Python),
        (TYPESCRIPT, Lang::TypeScript),
        (TSX, Lang::Tsx),
        (JAVASCRIPT, Lang::JavaScript),
        (GO, Lang::Go),
        (JAVA, Lang::Java),
        (MARKDOWN, Lang::Markdown),
        (RUBY, Lang::Other),
    ];
    let mut tally = Tally::default();
    for (text, lang) in samples {
        for first_line in [1, 1000] {
            check_chunk(text, lang, first_line, &mut tally);
            // Every language's text through every other language's parser, too.
            for other in Lang::ALL {
                check_chunk(text, other, first_line, &mut tally);
            }
        }
    }
}

#[test]
fn crlf_and_missing_final_newline() {
    let text = RUST.replace('\n', "\r\n");
    let text = text.trim_end();
    let p = preview(text, Lang::Rust, 1, &NONE);
    assert!(
        p.text
            .contains("// … 5 lines omitted (L1–L5)\r\n/// A bounded"),
        "{}",
        p.text
    );
    assert!(
        p.text.ends_with("    // … 6 lines omitted (L25–L30)"),
        "{:?}",
        p.text
    );
    check(text, Lang::Rust, 1, &NONE, &p, &outline(text, Lang::Rust));
}

#[test]
fn deep_nesting_and_long_lines() {
    let depth = 3000;
    let cases = [
        (
            "fn a() {\n".repeat(depth) + &"}\n".repeat(depth),
            Lang::Rust,
        ),
        (
            (0..depth)
                .map(|i| format!("{}def f{i}():\n", " ".repeat(i)))
                .collect(),
            Lang::Python,
        ),
        ("(".repeat(20_000) + &")".repeat(20_000), Lang::JavaScript),
        ("[".repeat(20_000), Lang::TypeScript),
        ("class A {\n".repeat(depth), Lang::Java),
        ("> ".repeat(20_000), Lang::Markdown),
        (
            format!(
                "export function f() {{ return {}; }}\n",
                "1 + ".repeat(50_000) + "1"
            ),
            Lang::Tsx,
        ),
    ];
    let mut tally = Tally::default();
    for (text, lang) in &cases {
        check_chunk(text, *lang, 1, &mut tally);
    }
}

#[test]
fn grammar_loops_are_cut_off() {
    // tree-sitter-typescript#323: the TSX grammar loops forever (growing memory) on these;
    // the second is what the proptest below found. The parse is cancelled after an
    // operation budget and the keyword scan takes over.
    let cases = [
        "<a {{b:>c:d(e f)\n",
        "e.s=@ide\u{1c08})\u{fffd}\u{1fad8}=\u{1f574}\u{1f4b}`\u{9b2}{'.':@\"\"/(b}=.<:@",
        "export function f() {\n  return <div style={{ textAlign:>Note: (this)</div>;\n}\n",
    ];
    let mut tally = Tally::default();
    for text in cases {
        let started = std::time::Instant::now();
        check_chunk(text, Lang::Tsx, 1, &mut tally);
        assert!(
            started.elapsed().as_secs() < 10,
            "{text:?} took {:?}",
            started.elapsed()
        );
    }
    assert_eq!(outline(cases[2], Lang::Tsx).important, [1]);
}

// ---------------------------------------------------------------- real source

/// Files under `root` (recursively, symlinks not followed) whose names end with one of
/// `exts`, sorted.
fn files_under(root: &Path, exts: &[&str], skip_dirs: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(ft) = entry.file_type() else { continue };
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if ft.is_dir() {
                if !skip_dirs.contains(&name.as_str()) {
                    stack.push(path);
                }
            } else if ft.is_file() && exts.iter().any(|e| name.ends_with(e)) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// About `want` files spread evenly over the sorted list (deterministic).
fn spread(files: Vec<PathBuf>, want: usize) -> Vec<PathBuf> {
    let step = (files.len() / want.max(1)).max(1);
    files.into_iter().step_by(step).take(want).collect()
}

fn python_stdlib() -> Option<PathBuf> {
    if let Ok(dir) = std::env::var("PARE_PY_STDLIB") {
        return Some(PathBuf::from(dir));
    }
    let out = std::process::Command::new("python3")
        .args(["-c", "import os;print(os.path.dirname(os.__file__))"])
        .output()
        .ok()?;
    let dir = String::from_utf8(out.stdout).ok()?;
    let dir = PathBuf::from(dir.trim());
    (out.status.success() && dir.is_dir()).then_some(dir)
}

/// A tiny deterministic generator (no seeds from the clock: runs must repeat).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

/// Up to four 40–80 line chunks at arbitrary offsets, plus the file's first 200 lines.
fn chunks(text: &str, seed: u64) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut rng = Lcg(seed);
    let mut out = vec![(1, lines[..lines.len().min(200)].concat())];
    for _ in 0..4 {
        if lines.len() <= 40 {
            break;
        }
        let start = rng.below(lines.len() - 20);
        let len = 40 + rng.below(41);
        let end = (start + len).min(lines.len());
        out.push((start + 1, lines[start..end].concat()));
    }
    out
}

/// Cuts each set's files into chunks and checks every preview; prints what it read.
fn check_sets(sets: &[(&str, Vec<PathBuf>)]) {
    let mut total = Tally::default();
    let mut files = 0;
    for (name, set) in sets {
        let mut tally = Tally::default();
        let mut read = 0;
        for (i, path) in set.iter().enumerate() {
            let Ok(text) = std::fs::read_to_string(path) else {
                continue;
            };
            if text.len() > 1 << 20 || text.is_empty() {
                continue; // minified bundles: one huge line says nothing about structure
            }
            read += 1;
            let lang = Lang::from_path(&path.to_string_lossy());
            for (first_line, chunk) in chunks(&text, i as u64 + 1) {
                check_chunk(&chunk, lang, first_line, &mut tally);
            }
        }
        println!(
            "outline: {name}: {read} files, {} chunks, {} symbols, {} markers",
            tally.chunks, tally.symbols, tally.markers
        );
        // Real code has definitions: a parser that finds none is broken, not cautious.
        if read >= 8 && *name != "markdown" {
            assert!(
                tally.symbols >= tally.chunks,
                "{name}: only {} symbols in {} chunks",
                tally.symbols,
                tally.chunks
            );
        }
        files += read;
        total.chunks += tally.chunks;
        total.symbols += tally.symbols;
    }
    println!(
        "outline: {files} real files, {} chunks, {} symbols",
        total.chunks, total.symbols
    );
}

/// Rust and Markdown from the cargo registry (there on any machine that built this), Python's
/// standard library (python3 is needed by other tests too), and whatever Go/Java sources
/// `/usr/share/doc` holds (git's contrib on Debian; the Go and Java samples above cover
/// those languages where there are none).
#[test]
fn real_sources() {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(&std::env::var("HOME").unwrap_or_default()).join(".cargo"));
    let registry = cargo_home.join("registry/src");
    let registry_dirs: Vec<PathBuf> = std::fs::read_dir(&registry)
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    let mut rust = Vec::new();
    let mut markdown = Vec::new();
    for dir in &registry_dirs {
        rust.extend(files_under(dir, &[".rs"], &["target"]));
        markdown.extend(files_under(dir, &[".md"], &["target"]));
    }
    assert!(
        rust.len() >= 8 && !markdown.is_empty(),
        "no crate sources under {} (set CARGO_HOME to where cargo keeps its registry)",
        registry.display()
    );
    rust.sort();
    markdown.sort();
    let stdlib = python_stdlib().expect(
        "no Python standard library: this test asks python3 for it (or set PARE_PY_STDLIB)",
    );
    let python = files_under(&stdlib, &[".py"], &["site-packages"]);
    assert!(python.len() >= 8, "no .py files under {}", stdlib.display());
    let doc = files_under(Path::new("/usr/share/doc"), &[".go", ".java"], &[]);
    check_sets(&[
        ("rust", spread(rust, 32)),
        ("markdown", spread(markdown, 16)),
        ("python", spread(python, 32)),
        ("go/java (/usr/share/doc)", spread(doc, 16)),
    ]);
}

/// JavaScript and TypeScript from the node peers' packages (`$PARE_NODE_MODULES`, default
/// `/tmp/pare-peers/node_modules`, which `.ci/run` installs).
#[test]
#[ignore = "needs node peers: run .ci/run, then scripts/test"]
fn real_javascript_typescript_sources() {
    let node = std::env::var("PARE_NODE_MODULES").unwrap_or_else(|_| needs::node_peers().into());
    let js = files_under(
        Path::new(&node),
        &[".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"],
        &[],
    );
    assert!(js.len() >= 8, "only {} JS/TS files under {node}", js.len());
    check_sets(&[("javascript/typescript", spread(js, 32))]);
}

// ---------------------------------------------------------------- random text

const SNIPPETS: &[&str] = &[
    "fn foo() {",
    "}",
    "    let x = 1;",
    "pub struct S {",
    "impl<T> X for Y<T> where T: Z {",
    "#[derive(Debug)]",
    "/// doc line",
    "//! module doc",
    "///",
    "def f(x):",
    "    \"\"\"Doc.",
    "\"\"\"",
    "'''",
    "class A(B):",
    "@decorator",
    "async def g():",
    "export const f = () => {",
    "export default class {",
    "export { a, b };",
    "function h(a,",
    "  b) {",
    "interface I {",
    "type T = {",
    "enum E { A }",
    "namespace N {",
    "/**",
    " * text",
    " *",
    " */",
    "/*",
    "*/",
    "//",
    "# Heading",
    "## Sub",
    "===",
    "---",
    "```",
    "~~~",
    "- item",
    "> quote",
    "func (s *S) M() {",
    "package main",
    "type X struct {",
    "public class J {",
    "  @Override",
    "  public void m(int a) {",
    "record R(int a) {}",
    "<div>{x}</div>",
    "(",
    ")",
    "{",
    "[",
    "<",
    "`",
    "${",
    "\\",
    "\"",
    "'",
    "r#\"",
    "\t",
    "",
    "    ",
    "<!--",
    "-->",
    "module.exports = {",
    "exports.a = 1;",
];

fn line_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (0usize..3, prop::sample::select(SNIPPETS)).prop_map(|(indent, s)| format!("{}{s}", "    ".repeat(indent))),
        1 => "\\PC{0,30}",
        1 => "[ \t]{0,6}[a-z{}()<>;:=#/*@\"'`.,-]{0,20}",
        1 => prop::collection::vec(any::<u8>(), 0..20).prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
    ]
}

fn text_strategy() -> impl Strategy<Value = String> {
    (
        prop::collection::vec((line_strategy(), any::<bool>()), 0..70),
        any::<bool>(),
    )
        .prop_map(|(lines, trailing)| {
            let mut text = String::new();
            let count = lines.len();
            for (i, (line, crlf)) in lines.into_iter().enumerate() {
                // `\n` inside a random line only adds lines; keep `\r` too: a lone `\r` is no line end.
                text.push_str(&line);
                if i + 1 < count || trailing {
                    text.push_str(if crlf { "\r\n" } else { "\n" });
                }
            }
            text
        })
}

fn fraction() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => prop::sample::select(vec![0.0, 0.05, 0.15, 0.3, 0.5, 1.0]),
        1 => -1.0f64..2.0,
        1 => Just(f64::NAN),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        // `PROPTEST_CASES=100000` for a longer soak.
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(1000),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_text_keeps_the_invariants(
        text in text_strategy(),
        lang in prop::sample::select(Lang::ALL.to_vec()),
        first_line in 1usize..100_000,
        head in fraction(),
        tail in fraction(),
    ) {
        let opts = PreviewOptions { head, tail };
        let o = outline(&text, lang);
        let p = preview(&text, lang, first_line, &opts);
        check(&text, lang, first_line, &opts, &p, &o);
        let pv = Previewer::new(&text, lang, first_line);
        prop_assert_eq!(pv.outline(), &o);
        prop_assert_eq!(pv.render(&opts), p);
    }
}
