//! The keyword fallback: important lines by their first words, for text no grammar covers
//! and for chunks a grammar could not make sense of (e.g. cut inside a docstring).
//!
//! A line is important if, after indentation and modifiers (`export pub async public …`),
//! its first word is one of the list's keywords. [`Keywords::Seed`] is the seed's list
//! (`export function class interface type const let var enum namespace`); the
//! per-language lists name only words that begin a definition in that language, so a
//! Rust body full of `let` or a Python `var = …` does not light up.
//!
//! ```
//! use pare::pack::outline::{Lang, outline};
//!
//! let o = outline("// Lua, say\nlocal x = 1\nexport default class Panel {\n}\n", Lang::Other);
//! assert_eq!(o.important, [3]);
//! assert_eq!((o.symbols[0].name.as_str(), o.symbols[0].kind), ("Panel", "class"));
//! assert_eq!(o.first_doc.as_deref(), Some("Lua, say"));
//! ```

use super::{Analysis, content, doc_summary};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Keywords {
    /// `export function class interface type const let var enum namespace`.
    Seed,
    Rust,
    Python,
    Go,
    Java,
    /// JavaScript/TypeScript: the seed list without `const let var`, whose bodies are full of
    /// them; `export …` lines still count.
    Script,
}

impl Keywords {
    fn modifiers(self) -> &'static [&'static str] {
        match self {
            Keywords::Seed | Keywords::Script => &[
                "export",
                "default",
                "declare",
                "pub",
                "async",
                "public",
                "private",
                "protected",
                "static",
                "abstract",
            ],
            Keywords::Rust => &["pub", "async", "unsafe", "extern", "default", "const"],
            Keywords::Python => &["async"],
            Keywords::Go => &[],
            Keywords::Java => &[
                "public",
                "protected",
                "private",
                "static",
                "final",
                "abstract",
                "sealed",
                "non-sealed",
                "strictfp",
                "default",
                "synchronized",
                "native",
            ],
        }
    }

    /// `(keyword, symbol kind)`.
    fn keywords(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Keywords::Seed => &[
                ("export", "export"),
                ("function", "function"),
                ("class", "class"),
                ("interface", "interface"),
                ("type", "type"),
                ("const", "const"),
                ("let", "variable"),
                ("var", "variable"),
                ("enum", "enum"),
                ("namespace", "module"),
            ],
            Keywords::Script => &[
                ("export", "export"),
                ("function", "function"),
                ("class", "class"),
                ("interface", "interface"),
                ("type", "type"),
                ("enum", "enum"),
                ("namespace", "module"),
            ],
            Keywords::Rust => &[
                ("fn", "function"),
                ("struct", "struct"),
                ("enum", "enum"),
                ("union", "union"),
                ("trait", "trait"),
                ("impl", "impl"),
                ("mod", "module"),
                ("type", "type"),
                ("static", "static"),
                ("const", "const"),
                ("macro_rules!", "macro"),
            ],
            Keywords::Python => &[("def", "function"), ("class", "class")],
            Keywords::Go => &[("func", "function"), ("type", "type")],
            Keywords::Java => &[
                ("class", "class"),
                ("interface", "interface"),
                ("@interface", "interface"),
                ("enum", "enum"),
                ("record", "record"),
            ],
        }
    }
}

pub(super) fn analyze(lines: &[&str], keywords: Keywords) -> Analysis {
    let mut a = Analysis::new(lines.len());
    scan(lines, keywords, &mut a);
    a
}

/// Marks keyword lines in `a`, adds their symbols, and the first comment as a doc.
pub(super) fn scan(lines: &[&str], keywords: Keywords, a: &mut Analysis) {
    for (row, line) in lines.iter().enumerate() {
        if let Some((kind, name)) = classify(content(line), keywords) {
            a.mark(row, row);
            if let (Some(kind), Some(name)) = (kind, name) {
                a.symbol(name, kind, row);
            }
            if kind.is_some() {
                attach_docs(lines, row, keywords, a);
            }
        }
    }
    if let Some(row) = (0..lines.len()).find(|&r| is_comment(content(lines[r]), keywords)) {
        let block: Vec<usize> = (row..lines.len())
            .take_while(|&r| is_comment(content(lines[r]), keywords))
            .collect();
        let (_, first) = doc_summary(lines, &block);
        if let Some(first) = first {
            a.docs.push((row, first));
        }
    }
}

/// The doc comment and attributes right above a definition line: attributes are marked
/// by the scan already; the doc's summary is marked here and recorded as a doc.
fn attach_docs(lines: &[&str], row: usize, kw: Keywords, a: &mut Analysis) {
    let mut top = row;
    let mut rows = Vec::new();
    while top > 0 {
        let line = content(lines[top - 1]);
        let t = line.trim_start();
        if doc_line(line, kw) {
            rows.push(top - 1);
        } else if !(t.starts_with("#[") || t.starts_with('@')) {
            break;
        }
        top -= 1;
    }
    rows.reverse();
    let (kept, first) = doc_summary(lines, &rows);
    for &r in &kept {
        a.mark(r, r);
    }
    if let (Some(&r), Some(first)) = (kept.first(), first) {
        a.docs.push((r, first));
    }
}

/// A whole line of doc comment, by its first characters. Rust documents with `///` and
/// `/** */` only (plain `//` above an item is often commented-out code); elsewhere any
/// comment line counts. `*` continues a block comment only before a space (not `*ptr`).
pub(super) fn doc_line(line: &str, kw: Keywords) -> bool {
    let t = line.trim_start();
    let continuation = t == "*" || t.starts_with("* ") || t.starts_with("*/");
    match kw {
        Keywords::Rust => {
            (t.starts_with("///") && !t.starts_with("////"))
                || (t.starts_with("/**") && !t.starts_with("/***"))
                || continuation
        }
        Keywords::Python => t.starts_with('#') && !t.starts_with("#!"),
        Keywords::Seed => {
            t.starts_with("//")
                || t.starts_with("/*")
                || continuation
                || t.starts_with("# ")
                || t == "#"
                || t.starts_with("-- ")
                || t.starts_with(";;")
        }
        Keywords::Script | Keywords::Go | Keywords::Java => {
            t.starts_with("//") || t.starts_with("/*") || continuation
        }
    }
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// The identifier at the start of `s`.
fn ident(s: &str) -> &str {
    let end = s.find(|c: char| !is_ident(c)).unwrap_or(s.len());
    &s[..end]
}

/// `Some((kind, name))` if the line is important; kind and name are `None` for lines that
/// are important without naming anything (`export { a }`, decorators, `type (`).
fn classify(line: &str, kw: Keywords) -> Option<(Option<&'static str>, Option<&str>)> {
    let mut rest = line.trim_start();
    // Decorators and attributes sit on their own line above a definition.
    match kw {
        Keywords::Rust if rest.starts_with("#[") => return Some((None, None)),
        Keywords::Python | Keywords::Java | Keywords::Script
            if rest.starts_with('@')
                && !rest.starts_with("@interface")
                && rest[1..].starts_with(|c: char| c.is_alphabetic() || c == '_') =>
        {
            return Some((None, None));
        }
        _ => {}
    }
    let mut modifiers: Vec<&str> = Vec::new();
    loop {
        let word = word_at(rest);
        if word.is_empty() {
            break;
        }
        // A keyword that is also a modifier (`const fn` vs `const X`, `export` vs
        // `export function`) is a modifier only when another keyword follows.
        let after = rest[word.len()..].trim_start();
        if kw.modifiers().contains(&word) {
            let after = skip_modifier_tail(word, after);
            let next = word_at(after);
            let next_counts =
                kw.modifiers().contains(&next) || kw.keywords().iter().any(|(k, _)| *k == next);
            if next_counts || !kw.keywords().iter().any(|(k, _)| *k == word) {
                modifiers.push(word);
                rest = after;
                continue;
            }
        }
        if let Some(&(k, kind)) = kw.keywords().iter().find(|(k, _)| *k == word) {
            // `export { a }`, `export * from …` name nothing.
            let name = if k == "export" {
                None
            } else {
                name_after(k, after, kw)
            };
            if kw == Keywords::Script && k == "type" && !after.contains('=') {
                return None; // `type` alone is an identifier in JS
            }
            return Some((Some(kind), name));
        }
        break;
    }
    if kw == Keywords::Java && !modifiers.is_empty() {
        // `public static int size(…)`: a method header; name before the first `(`.
        let head = rest.split('(').next().unwrap_or("");
        if rest.contains('(') && !head.contains('=') {
            let name = head
                .trim_end()
                .rsplit(|c: char| !is_ident(c))
                .next()
                .filter(|n| !n.is_empty());
            return Some((name.map(|_| "method"), name));
        }
    }
    let exported = modifiers.contains(&"export") && matches!(kw, Keywords::Seed | Keywords::Script);
    exported.then_some((None, None))
}

/// The word at the start of `s` for keyword matching: an identifier, `macro_rules!`,
/// `@interface`, `non-sealed` or `pub(…)` (as `pub`).
fn word_at(s: &str) -> &str {
    for special in ["macro_rules!", "@interface", "non-sealed"] {
        if s.starts_with(special) && !s[special.len()..].starts_with(is_ident) {
            return &s[..special.len()];
        }
    }
    ident(s)
}

/// After `pub`, skips `(crate)`/`(in path)`; after `extern`, an ABI string.
fn skip_modifier_tail<'s>(word: &str, after: &'s str) -> &'s str {
    match word {
        "pub" if after.starts_with('(') => match after.find(')') {
            Some(end) => after[end + 1..].trim_start(),
            None => after,
        },
        "extern" if after.starts_with('"') => match after[1..].find('"') {
            Some(end) => after[end + 2..].trim_start(),
            None => after,
        },
        _ => after,
    }
}

/// The name a keyword introduces, from the text after it.
fn name_after<'s>(keyword: &str, after: &'s str, kw: Keywords) -> Option<&'s str> {
    let after = after.trim_start_matches(|c: char| c == '*' || c.is_whitespace());
    let name = match (kw, keyword) {
        (Keywords::Rust, "impl") => {
            // `impl<T> Trait for Type<T> where … {`: everything up to `{`/`where`.
            let s = skip_generics(after);
            let end = s.find('{').unwrap_or(s.len());
            let s = &s[..end];
            let s = s.split(" where").next().unwrap_or(s);
            s.trim()
        }
        (Keywords::Go, "func") if after.starts_with('(') => {
            // A method: `func (r *T) Name(`.
            let close = after.find(')')?;
            ident(after[close + 1..].trim_start())
        }
        _ => ident(after),
    };
    (!name.is_empty()).then_some(name)
}

fn skip_generics(s: &str) -> &str {
    if !s.starts_with('<') {
        return s;
    }
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return s[i + 1..].trim_start();
                }
            }
            _ => {}
        }
    }
    s
}

fn is_comment(line: &str, kw: Keywords) -> bool {
    let t = line.trim_start();
    match kw {
        Keywords::Python => t.starts_with("# ") || t == "#" || t.starts_with("\"\"\""),
        Keywords::Seed => {
            t.starts_with("//")
                || t.starts_with("/*")
                || t.starts_with("# ")
                || t.starts_with("-- ")
                || t.starts_with(";;")
                || (t.starts_with('*') && !t.starts_with("*/"))
        }
        _ => {
            t.starts_with("//")
                || t.starts_with("/*")
                || (t.starts_with('*') && !t.starts_with("*/"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(line: &str, kw: Keywords) -> Option<(Option<&'static str>, Option<&str>)> {
        classify(line, kw)
    }

    #[test]
    fn seed_list() {
        let s = Keywords::Seed;
        assert_eq!(
            c("export function foo() {", s),
            Some((Some("function"), Some("foo")))
        );
        assert_eq!(
            c("  export default class Bar {", s),
            Some((Some("class"), Some("Bar")))
        );
        assert_eq!(c("export { a, b };", s), Some((Some("export"), None)));
        assert_eq!(c("const x = 1", s), Some((Some("const"), Some("x"))));
        assert_eq!(c("  let y;", s), Some((Some("variable"), Some("y"))));
        assert_eq!(
            c("public interface I {", s),
            Some((Some("interface"), Some("I")))
        );
        assert_eq!(c("constant = 1", s), None);
        assert_eq!(c("typed(x)", s), None);
        assert_eq!(c("namespace N {", s), Some((Some("module"), Some("N"))));
        assert_eq!(
            c("async function* gen() {", s),
            Some((Some("function"), Some("gen")))
        );
        assert_eq!(c("export", s), Some((Some("export"), None)));
    }

    #[test]
    fn language_lists() {
        let r = Keywords::Rust;
        assert_eq!(
            c("pub(crate) fn go() {", r),
            Some((Some("function"), Some("go")))
        );
        assert_eq!(
            c("pub const fn go() {", r),
            Some((Some("function"), Some("go")))
        );
        assert_eq!(
            c("const MAX: u8 = 3;", r),
            Some((Some("const"), Some("MAX")))
        );
        assert_eq!(
            c(r#"pub unsafe extern "C" fn f()"#, r),
            Some((Some("function"), Some("f")))
        );
        assert_eq!(
            c("impl<T: X> Foo for Bar<T> {", r),
            Some((Some("impl"), Some("Foo for Bar<T>")))
        );
        assert_eq!(c("macro_rules! m {", r), Some((Some("macro"), Some("m"))));
        assert_eq!(c("#[derive(Debug)]", r), Some((None, None)));
        assert_eq!(c("let x = 1;", r), None);
        assert_eq!(
            c("    async def f(x):", Keywords::Python),
            Some((Some("function"), Some("f")))
        );
        assert_eq!(c("@property", Keywords::Python), Some((None, None)));
        assert_eq!(c("var = 1", Keywords::Python), None);
        assert_eq!(
            c("func (s *S) Run() {", Keywords::Go),
            Some((Some("function"), Some("Run")))
        );
        assert_eq!(c("type (", Keywords::Go), Some((Some("type"), None)));
        assert_eq!(
            c("  public static int size(List<X> a) {", Keywords::Java),
            Some((Some("method"), Some("size")))
        );
        assert_eq!(
            c("public record P(int x) {}", Keywords::Java),
            Some((Some("record"), Some("P")))
        );
        assert_eq!(
            c("type Foo = Bar;", Keywords::Script),
            Some((Some("type"), Some("Foo")))
        );
        assert_eq!(c("type(x)", Keywords::Script), None);
        assert_eq!(c("const x = 1", Keywords::Script), None);
    }
}
