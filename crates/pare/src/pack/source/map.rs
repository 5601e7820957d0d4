//! A map of a source tree under a budget too small for the signatures of everything
//! (`pare pack DIR --map`): every file named first, then the names of the tree ranked by
//! how much the other files use them, then those names' signatures, then whole chunks —
//! each level filling what the one before left.
//!
//! Why: packed file by file, a small budget spends itself on the first files and names none
//! of the others (`pare pack crates/pare/src/ops --budget 2000` showed 2 files of 20). A
//! reader new to a tree first wants to know what is there and what matters; Aider's repo
//! map answers that with every file named and the most-referenced definitions' signatures,
//! fitted to a budget.
//!
//! **Ranking** ([`rank`]), as Aider's repo map does: the files are the nodes of a graph; a
//! file that uses a name another file defines (as a word of its text, counted) has an edge
//! to it, weighted by the square root of the uses, times 10 for a long `snake_case` or
//! `camelCase` name, times 0.1 for a `_private` one, for a name defined in more than five
//! files and (pare's rule) for a name of three characters or fewer, whose uses are mostly
//! other things spelled the same; a name no other file uses gets a self-edge of 0.1. PageRank (0.85) ranks the
//! files, and each file's rank flows to the names it uses along its edges; a name no other
//! file uses gets a sliver of its own file's rank (so it follows every used name). No
//! model, no network; the same tree gives the same map.
//!
//! **Fitting.** The tree of files comes first (directories as a trie: a chain of
//! directories with one child each is one line); if even that is over the budget,
//! directories below a depth are shown with their file counts. Then the ranked names, each
//! on its file's line, best first across the tree (a file's names it could not show are
//! counted, `+12`); once every name is shown, the best signatures; once every signature is,
//! whole chunks, best first. The last line says what was shown and how to see the code.
//!
//! ```
//! use pare::pack::source::{SourceFile, SourceOptions, chunk_files, map::source_map};
//! let files = vec![
//!     SourceFile { path: "src/lib.rs".into(), text: "pub fn parse_config() {}\npub fn unused_helper() {}\n".into() },
//!     SourceFile { path: "src/main.rs".into(), text: "fn main() { parse_config(); parse_config(); }\n".into() },
//! ];
//! let chunks = chunk_files(&files, &SourceOptions::default());
//! let tok = pare::tokens::builtin("o200k_base").unwrap();
//! let map = source_map(&files, &chunks, 200, tok).unwrap();
//! assert!(map.text.starts_with("src/\n  lib.rs: parse_config unused_helper\n  main.rs: main\n"));
//! assert_eq!(map.definitions[0].name, "parse_config"); // used by another file: first
//! assert!(map.tokens <= 200);
//! ```

use std::collections::{BTreeMap, HashMap};

use super::SourceFile;
use crate::pack::chunks::Chunk;
use crate::pack::outline::{self, Lang};
use crate::tokens::Tokenizer;

/// One named definition of the tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Definition {
    /// The file's path.
    pub path: String,
    /// The name as written.
    pub name: String,
    /// Its kind (`function`, `struct`, `class`, …: [`outline::Symbol::kind`]).
    pub kind: &'static str,
    /// 1-based line in the file.
    pub line: usize,
    /// The line that names it, trimmed.
    pub signature: String,
    /// The chunk that holds it (its index in the chunks given).
    pub chunk: usize,
    /// Its share of the tree's rank ([`rank`]); the definitions sum to about 1.
    pub rank: f64,
}

/// What a map shows of each level.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceMap {
    /// The map, never over the budget, its last line included.
    pub text: String,
    /// The text's tokens.
    pub tokens: usize,
    /// Files in the tree (those not named one by one are counted under their directories).
    pub files: usize,
    /// Files named one by one.
    pub files_named: usize,
    /// The definitions, best first.
    pub definitions: Vec<Definition>,
    /// How many of them (best first) are named.
    pub names_shown: usize,
    /// How many of them (best first) have their signature shown.
    pub signatures_shown: usize,
    /// The chunks shown whole (their ids), best first.
    pub bodies: Vec<String>,
}

/// Why no map fits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "a budget of {budget} tokens cannot hold a map of the tree: its top directories alone take {needed}"
)]
pub struct MapError {
    /// The budget given.
    pub budget: usize,
    /// What the smallest map takes.
    pub needed: usize,
}

/// The map of `files` (cut into `chunks` by [`super::chunk_files`]) within `budget` tokens
/// by `tok`.
pub fn source_map(
    files: &[SourceFile],
    chunks: &[Chunk],
    budget: usize,
    tok: &dyn Tokenizer,
) -> Result<SourceMap, MapError> {
    let mut definitions = definitions(chunks);
    rank(files, &mut definitions);
    let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    let tree = Tree::of(&paths);
    let fits = |m: &Shown| {
        let text = render(&tree, &definitions, chunks, m);
        let n = tok.count(&text);
        (n <= budget).then_some((text, n))
    };
    // Level 1: every file, or directories to a depth.
    let mut shown = Shown {
        depth: usize::MAX,
        names: 0,
        signatures: 0,
        bodies: Vec::new(),
    };
    let mut best = may_name_every_file(files.len(), budget)
        .then(|| fits(&shown))
        .flatten();
    if best.is_none() {
        // The deepest level of directories that fits (deeper shows more lines).
        let (mut lo, mut hi) = (0, tree.depth().saturating_sub(1));
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if fits(&Shown {
                depth: mid,
                ..shown.clone()
            })
            .is_some()
            {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        shown.depth = lo;
        best = fits(&shown);
    }
    let Some(mut best) = best else {
        shown.depth = 0;
        let needed = tok.count(&render(&tree, &definitions, chunks, &shown));
        return Err(MapError { budget, needed });
    };
    if shown.depth == usize::MAX {
        // Level 2: names, best first; level 3: signatures; each only once the one before is
        // whole.
        let n = definitions.len();
        shown.names = largest(
            n,
            |k| {
                fits(&Shown {
                    names: k,
                    ..shown.clone()
                })
            },
            &mut best,
        );
        if shown.names == n {
            shown.signatures = largest(
                n,
                |k| {
                    fits(&Shown {
                        signatures: k,
                        ..shown.clone()
                    })
                },
                &mut best,
            );
        }
        if shown.signatures == n {
            // Level 4: whole chunks, best first, while they fit.
            for c in chunk_order(chunks, &definitions) {
                let mut more = shown.clone();
                more.bodies.push(c);
                if let Some(b) = fits(&more) {
                    best = b;
                    shown = more;
                }
            }
        }
    }
    let (text, tokens) = best;
    let files_named = if shown.depth == usize::MAX {
        files.len()
    } else {
        tree.files_to_depth(shown.depth)
    };
    Ok(SourceMap {
        text,
        tokens,
        files: files.len(),
        files_named,
        names_shown: shown.names,
        signatures_shown: shown.signatures,
        bodies: shown.bodies.iter().map(|&c| chunks[c].id.clone()).collect(),
        definitions,
    })
}

/// Whether a map of `files` files within `budget` tokens may name every one: each takes a
/// line of at least a token, so more files than the budget cannot all be named (and
/// rendering them all would only be counted to say so). A door with no chunks cut yet need
/// not cut them for a map that cannot name every file: its levels past the first never come.
pub fn may_name_every_file(files: usize, budget: usize) -> bool {
    files < budget
}

/// The largest `k` in `0..=n` for which `fits(k)` holds (searched by halves, then checked
/// downwards: a longer list is nearly always longer), its rendering kept in `best`.
fn largest(
    n: usize,
    fits: impl Fn(usize) -> Option<(String, usize)>,
    best: &mut (String, usize),
) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits(mid).is_some() {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let mut k = lo;
    loop {
        if let Some(b) = fits(k) {
            *best = b;
            return k;
        }
        if k == 0 {
            return 0;
        }
        k -= 1;
    }
}

/// What a rendering shows.
#[derive(Debug, Clone)]
struct Shown {
    /// Directories deeper than this are shown by their file counts (`usize::MAX`: all).
    depth: usize,
    /// The best this many definitions are named; signatures of the best this many.
    names: usize,
    signatures: usize,
    /// Chunks shown whole, in the order added.
    bodies: Vec<usize>,
}

/// The named definitions of the chunks, in chunk order (Markdown headings are not names).
pub fn definitions(chunks: &[Chunk]) -> Vec<Definition> {
    let mut out = Vec::new();
    for (i, c) in chunks.iter().enumerate() {
        if matches!(c.lang, Lang::Markdown | Lang::Other) {
            continue;
        }
        let lines: Vec<&str> = c.text.lines().collect();
        for s in outline::outline(&c.text, c.lang).symbols {
            if matches!(s.kind, "heading" | "impl") || s.name.is_empty() {
                continue;
            }
            let signature = lines
                .get(s.line.saturating_sub(1))
                .map_or("", |l| l.trim())
                .chars()
                .take(160)
                .collect();
            out.push(Definition {
                path: c.path.clone(),
                name: s.name,
                kind: s.kind,
                line: c.line_start + s.line - 1,
                signature,
                chunk: i,
                rank: 0.0,
            });
        }
    }
    out
}

/// Rank `defs` by how the files use them (see the module docs), best first; ties by path
/// and line.
pub fn rank(files: &[SourceFile], defs: &mut [Definition]) {
    let index: HashMap<&str, usize> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.path.as_str(), i))
        .collect();
    // Who defines each name, and how often each file defines it.
    let mut definers: BTreeMap<&str, BTreeMap<usize, usize>> = BTreeMap::new();
    for d in defs.iter() {
        if let Some(&f) = index.get(d.path.as_str()) {
            *definers
                .entry(d.name.as_str())
                .or_default()
                .entry(f)
                .or_default() += 1;
        }
    }
    // Who uses each name (other than its definers), and how often: one pass over each file's
    // words, kept only for the defined names (a file's counts are dropped after it).
    let mut uses: BTreeMap<&str, Vec<(usize, usize)>> = BTreeMap::new();
    for (r, f) in files.iter().enumerate() {
        for (word, count) in word_counts(&f.text) {
            if let Some((&name, by)) = definers.get_key_value(word)
                && !by.contains_key(&r)
            {
                uses.entry(name).or_default().push((r, count));
            }
        }
    }
    let n = files.len();
    // Edges: (from, to, name, weight).
    let mut edges: Vec<(usize, usize, &str, f64)> = Vec::new();
    for (&name, by) in &definers {
        let mut mul = 1.0;
        let long = name.len() >= 8 && (name.contains('_') || has_inner_capital(name));
        if long {
            mul *= 10.0;
        }
        if name.starts_with('_') {
            mul *= 0.1;
        }
        // A name this short is mostly other things spelled the same (locals, fields,
        // arguments): its uses say little.
        if name.len() <= 3 {
            mul *= 0.1;
        }
        if by.len() > 5 {
            mul *= 0.1;
        }
        match uses.get_mut(name) {
            Some(users) => {
                // File order, whatever order the words were counted in.
                users.sort_unstable();
                for &(r, refs) in users.iter() {
                    for &d in by.keys() {
                        edges.push((r, d, name, mul * (refs as f64).sqrt()));
                    }
                }
            }
            None => {
                for &d in by.keys() {
                    edges.push((d, d, name, 0.1));
                }
            }
        }
    }
    let mut out_weight = vec![0.0; n];
    for &(from, _, _, w) in &edges {
        out_weight[from] += w;
    }
    let files_rank = pagerank(n, &edges, &out_weight);
    // A name's rank is what flows to it from the files that use it; a name no other file
    // uses gets a sliver of its own file's rank, so those of the files that matter come
    // first among them.
    let mut name_rank: HashMap<(usize, &str), f64> = HashMap::new();
    for &(from, to, name, w) in &edges {
        let flow = if from == to {
            files_rank[from] * 1e-3
        } else {
            files_rank[from] * w / out_weight[from]
        };
        *name_rank.entry((to, name)).or_default() += flow;
    }
    let ranks: Vec<f64> = defs
        .iter()
        .map(|d| {
            let f = index.get(d.path.as_str()).copied().unwrap_or(usize::MAX);
            let same = definers
                .get(d.name.as_str())
                .and_then(|by| by.get(&f))
                .copied()
                .unwrap_or(1);
            name_rank.get(&(f, d.name.as_str())).copied().unwrap_or(0.0) / same as f64
        })
        .collect();
    for (d, r) in defs.iter_mut().zip(ranks) {
        d.rank = r;
    }
    defs.sort_by(|a, b| {
        b.rank
            .total_cmp(&a.rank)
            .then_with(|| a.path.cmp(&b.path))
            .then(a.line.cmp(&b.line))
    });
}

/// PageRank over weighted edges (damping 0.85; a file with no edges out gives its rank to
/// every file).
fn pagerank(n: usize, edges: &[(usize, usize, &str, f64)], out_weight: &[f64]) -> Vec<f64> {
    if n == 0 {
        return Vec::new();
    }
    let d = 0.85;
    let mut rank = vec![1.0 / n as f64; n];
    for _ in 0..50 {
        let dangling: f64 = (0..n)
            .filter(|&i| out_weight[i] == 0.0)
            .map(|i| rank[i])
            .sum();
        let mut next = vec![(1.0 - d) / n as f64 + d * dangling / n as f64; n];
        for &(from, to, _, w) in edges {
            next[to] += d * rank[from] * w / out_weight[from];
        }
        rank = next;
    }
    rank
}

fn has_inner_capital(name: &str) -> bool {
    name.chars().skip(1).any(|c| c.is_ascii_uppercase())
        && name.chars().any(|c| c.is_ascii_lowercase())
}

/// How often each identifier (`[A-Za-z_][A-Za-z0-9_]*`) occurs in `text`.
fn word_counts(text: &str) -> HashMap<&str, usize> {
    let mut out = HashMap::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_alphabetic() || b == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            *out.entry(&text[start..i]).or_default() += 1;
        } else {
            i += 1;
        }
    }
    out
}

/// Chunk indexes best first: by their best definition's rank, then those with none in
/// file order.
fn chunk_order(chunks: &[Chunk], defs: &[Definition]) -> Vec<usize> {
    let mut seen = vec![false; chunks.len()];
    let mut out = Vec::with_capacity(chunks.len());
    for d in defs {
        if !seen[d.chunk] {
            seen[d.chunk] = true;
            out.push(d.chunk);
        }
    }
    out.extend((0..chunks.len()).filter(|&c| !seen[c]));
    out
}

/// The tree of files: directories (sorted) before files (sorted).
#[derive(Debug, Default)]
struct Tree {
    dirs: BTreeMap<String, Tree>,
    files: Vec<String>,
}

impl Tree {
    fn of(paths: &[&str]) -> Tree {
        let mut root = Tree::default();
        for p in paths {
            let mut node = &mut root;
            let parts: Vec<&str> = p.split('/').collect();
            for dir in &parts[..parts.len() - 1] {
                node = node.dirs.entry((*dir).to_owned()).or_default();
            }
            node.files.push((*parts.last().unwrap_or(&"")).to_owned());
        }
        root.sort();
        root
    }

    fn sort(&mut self) {
        self.files.sort();
        for d in self.dirs.values_mut() {
            d.sort();
        }
    }

    fn depth(&self) -> usize {
        1 + self.dirs.values().map(Tree::depth).max().unwrap_or(0)
    }

    fn count(&self) -> usize {
        self.files.len() + self.dirs.values().map(Tree::count).sum::<usize>()
    }

    /// Files named one by one when directories deeper than `depth` are counted.
    fn files_to_depth(&self, depth: usize) -> usize {
        self.files.len()
            + if depth == 0 {
                0
            } else {
                self.dirs
                    .values()
                    .map(|d| d.files_to_depth(depth - 1))
                    .sum()
            }
    }
}

/// The map's text for what `m` shows.
fn render(tree: &Tree, defs: &[Definition], chunks: &[Chunk], m: &Shown) -> String {
    // Each file's shown names, best first (a name it defines twice, once), and how many
    // distinct names it has in all.
    let mut names: HashMap<&str, (Vec<&str>, usize)> = HashMap::new();
    let mut seen: std::collections::HashSet<(&str, &str)> = std::collections::HashSet::new();
    for (i, d) in defs.iter().enumerate() {
        if !seen.insert((d.path.as_str(), d.name.as_str())) {
            continue;
        }
        let e = names.entry(d.path.as_str()).or_default();
        e.1 += 1;
        if i < m.names {
            e.0.push(&d.name);
        }
    }
    let mut out = String::new();
    tree_lines(tree, "", 0, m.depth, &names, &mut out);
    if m.signatures > 0 {
        out.push_str("\nsignatures, best first by file:\n");
        let mut by_file: BTreeMap<&str, Vec<&Definition>> = BTreeMap::new();
        for d in &defs[..m.signatures] {
            by_file.entry(d.path.as_str()).or_default().push(d);
        }
        for (path, mut ds) in by_file {
            ds.sort_by_key(|d| d.line);
            out.push_str(path);
            out.push_str(":\n");
            for d in ds {
                out.push_str(&format!("  {}: {}\n", d.line, d.signature));
            }
        }
    }
    for &c in &m.bodies {
        let chunk = &chunks[c];
        out.push_str(&format!(
            "\n{} · L{}–{}\n```{}\n{}\n```\n",
            chunk.path,
            chunk.line_start,
            chunk.line_end(),
            chunk.lang.name(),
            chunk.text
        ));
    }
    let files = tree.count();
    let said = match (m.depth, m.names, m.signatures, m.bodies.len()) {
        (d, _, _, _) if d != usize::MAX => format!(
            "pare: a map of {files} files, directories below depth {d} counted; a larger --budget names more"
        ),
        (_, k, 0, _) => format!(
            "pare: a map of {files} files and {k} of {} names, best first by use across the files; a larger --budget shows more, --map never the code",
            defs.len()
        ),
        (_, _, s, 0) => format!(
            "pare: a map of {files} files, all {} names, {s} signatures; a larger --budget shows more, --map never the code",
            defs.len()
        ),
        (_, _, _, b) => format!(
            "pare: a map of {files} files, all {} names and signatures, {b} of {} chunks whole; --map never for the code",
            defs.len(),
            chunks.len()
        ),
    };
    out.push('\n');
    out.push_str(&said);
    out.push('\n');
    out
}

fn tree_lines(
    tree: &Tree,
    indent: &str,
    level: usize,
    depth: usize,
    names: &HashMap<&str, (Vec<&str>, usize)>,
    out: &mut String,
) {
    tree_lines_at(tree, "", indent, level, depth, names, out);
}

fn tree_lines_at(
    tree: &Tree,
    prefix: &str,
    indent: &str,
    level: usize,
    depth: usize,
    names: &HashMap<&str, (Vec<&str>, usize)>,
    out: &mut String,
) {
    for (name, sub) in &tree.dirs {
        // A chain of directories with one child each is one line.
        let mut label = format!("{name}/");
        let mut node = sub;
        let mut path = format!("{prefix}{name}/");
        while node.files.is_empty() && node.dirs.len() == 1 {
            let (n, s) = node.dirs.iter().next().expect("one");
            label.push_str(n);
            label.push('/');
            path.push_str(n);
            path.push('/');
            node = s;
        }
        if level >= depth {
            out.push_str(&format!("{indent}{label} ({} files)\n", node.count()));
            continue;
        }
        out.push_str(&format!("{indent}{label}\n"));
        let deeper = format!("{indent}  ");
        tree_lines_at(node, &path, &deeper, level + 1, depth, names, out);
    }
    for file in &tree.files {
        let full = format!("{prefix}{file}");
        out.push_str(indent);
        out.push_str(file);
        if let Some((shown, all)) = names.get(full.as_str())
            && !shown.is_empty()
        {
            out.push(':');
            for n in shown {
                out.push(' ');
                out.push_str(n);
            }
            if *all > shown.len() {
                out.push_str(&format!(" +{}", all - shown.len()));
            }
        }
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::source::{SourceOptions, chunk_files};

    fn tok() -> &'static dyn Tokenizer {
        crate::tokens::builtin("o200k_base").unwrap()
    }

    fn tree_files() -> Vec<SourceFile> {
        let mut files = vec![
            SourceFile {
                path: "a/core.rs".into(),
                text: "pub struct ParseConfig {}\npub fn parse_config() -> ParseConfig { ParseConfig {} }\nfn lonely_one() {}\n".into(),
            },
            SourceFile {
                path: "README.md".into(),
                text: "# Tree\n\nWords.\n".into(),
            },
        ];
        for i in 0..6 {
            files.push(SourceFile {
                path: format!("a/b/c/user{i}.rs"),
                text: format!("pub fn user{i}() {{ let c = parse_config(); }}\n"),
            });
        }
        files
    }

    #[test]
    fn every_file_is_named_and_the_most_used_name_ranks_first() {
        let files = tree_files();
        let chunks = chunk_files(&files, &SourceOptions::default());
        let map = source_map(&files, &chunks, 400, tok()).unwrap();
        for f in &files {
            let name = f.path.rsplit('/').next().unwrap();
            assert!(map.text.contains(name), "{name} not in\n{}", map.text);
        }
        assert_eq!(map.definitions[0].name, "parse_config");
        assert!(map.text.contains("a/\n  b/c/\n"), "{}", map.text);
        assert!(map.tokens <= 400);
    }

    #[test]
    fn each_level_fills_what_the_one_before_left() {
        let files = tree_files();
        let chunks = chunk_files(&files, &SourceOptions::default());
        let sizes = [40, 60, 90, 150, 400, 2000];
        let mut last = (0, 0, 0);
        for budget in sizes {
            let Ok(map) = source_map(&files, &chunks, budget, tok()) else {
                continue;
            };
            assert!(map.tokens <= budget);
            let now = (map.names_shown, map.signatures_shown, map.bodies.len());
            assert!(now >= last, "{now:?} < {last:?} at {budget}");
            if map.signatures_shown > 0 {
                assert_eq!(map.names_shown, map.definitions.len());
            }
            if !map.bodies.is_empty() {
                assert_eq!(map.signatures_shown, map.definitions.len());
            }
            last = now;
        }
        assert!(last.2 > 0, "no budget reached the bodies");
    }

    #[test]
    fn a_budget_below_the_tree_counts_directories_and_below_that_is_an_error() {
        let files = tree_files();
        let chunks = chunk_files(&files, &SourceOptions::default());
        let full = source_map(&files, &chunks, 400, tok()).unwrap();
        let tight = (1..full.tokens)
            .find_map(|b| source_map(&files, &chunks, b, tok()).ok())
            .unwrap();
        assert!(tight.files_named < files.len(), "{}", tight.text);
        assert!(tight.text.contains("files)"), "{}", tight.text);
        assert!(source_map(&files, &chunks, 3, tok()).is_err());
    }
}
