//! `pare stats`: where a payload's tokens go.
//!
//! The first line is the exact count of the input as given. The per-path rows are
//! *attributed* tokens (each value counted apart, see `pare::stats`), in two lists: leaves
//! first (values that hold no others: these rows add up, and are where a policy's savings
//! come from), then containers (each row includes its children's, so they overlap). Text
//! that is not JSON still gets its exact count, and a line saying it is not JSON.

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::{Args as ClapArgs, ValueEnum};
use pare::stats::{PathKind, PathStat, Profiled, Stats};

use crate::io::{input_name, read_input, tokenizer, write_output};

#[derive(ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub input: crate::io::InputArgs,
    /// Input file; `-` or nothing for stdin. JSON gets a per-path profile; other text its
    /// exact count and a line saying it is not JSON (text that starts like a JSON object
    /// or array but does not parse is an error, with its line and column).
    pub file: Option<PathBuf>,
    /// Print JSON (`"tokens"` is the exact count of the input as given).
    #[arg(long)]
    pub json: bool,
    /// How many paths to list per list (leaves, containers), most tokens first.
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// Which rows to list: leaves first then containers (all), or one of the two lists.
    #[arg(long, value_enum, default_value_t = Rows::All)]
    pub rows: Rows,
    /// Tokenizer: o200k_base, cl100k_base, chars4.
    #[arg(long, default_value = "o200k_base")]
    pub tokenizer: String,
    /// A HuggingFace tokenizer.json to count with instead (offline).
    #[arg(long, value_name = "PATH")]
    pub tokenizer_file: Option<PathBuf>,
}

/// The per-path lists `pare stats` prints.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Rows {
    /// Leaves, then containers.
    All,
    /// Paths whose values hold no others: their rows add up.
    Leaves,
    /// Paths holding other values: each row includes its children's.
    Containers,
}

pub fn run(args: Args) -> Result<()> {
    args.input.apply();
    let tok = tokenizer(&args.tokenizer, args.tokenizer_file.as_deref())?;
    let name = input_name(args.file.as_deref());
    let text = read_input(args.file.as_deref())?;
    let (tokens, profiled) = pare::stats::profile_text(&text, tok);
    let Profiled {
        mut stats,
        duplicates,
        value,
    } = match profiled {
        Ok(p) => p,
        // A broken payload is an error worth its line and column; other text is counted.
        Err(e) if looks_like_json(&text) => bail!("{name}: {e}"),
        Err(e) => return write_output(None, &not_json(&text, tok.name(), tokens, &e, args.json)),
    };
    // The process ends soon: freeing a large tree node by node costs as much as walking it.
    std::mem::forget(value);
    for d in &duplicates {
        eprintln!("pare: warning: {name}: {d}");
    }
    let (leaves, containers) = lists(&stats, args.rows, args.top);
    let out = if args.json {
        stats.paths = leaves.into_iter().chain(containers).cloned().collect();
        let mut s = serde_json::to_string_pretty(&stats)?;
        s.push('\n');
        s
    } else {
        table(&stats, &leaves, &containers)
    };
    write_output(None, &out)
}

/// The leaf rows and the container rows to list, each most tokens first, at most `top`.
fn lists(stats: &Stats, rows: Rows, top: usize) -> (Vec<&PathStat>, Vec<&PathStat>) {
    let shown = stats.top_rows(top, rows != Rows::Containers, rows != Rows::Leaves);
    shown.into_iter().partition(|p| p.kind == PathKind::Leaf)
}

/// Whether `text` starts as a JSON object or array would (`{`, or `[` and then a value or
/// `]`): then a parse error is a broken payload, reported as such. Anything else (prose,
/// code, a `[section]` header) is text to count.
fn looks_like_json(text: &str) -> bool {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    match t.as_bytes().first() {
        Some(b'{') => true,
        Some(b'[') => matches!(
            t[1..].trim_start().as_bytes().first(),
            None | Some(b'{' | b'[' | b'"' | b']' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n')
        ),
        _ => false,
    }
}

/// The exact count of a text that is not JSON, and why it is not.
fn not_json(
    text: &str,
    tokenizer: &str,
    tokens: usize,
    err: &pare::json::JsonError,
    json: bool,
) -> String {
    if json {
        let v = serde_json::json!({
            "tokenizer": tokenizer,
            "tokens": tokens,
            "bytes": text.len(),
            "json": false,
            "not_json": err.to_string(),
            "paths": [],
        });
        format!("{v:#}\n")
    } else {
        format!(
            "{tokens} tokens ({}, exact count of the input as given), {} bytes\n\
             not JSON ({err}): no per-path profile\n",
            tokenizer,
            text.len()
        )
    }
}

fn table(s: &Stats, leaves: &[&PathStat], containers: &[&PathStat]) -> String {
    let count_of = |kind| s.paths.iter().filter(|p| p.kind == kind).count();
    let mut out = format!(
        "{} tokens ({}, exact count of the input as given), {} bytes\n\
         attributed to paths below: {} tokens, each value counted apart (which costs more \
         than the whole text):\n  {} in leaves, {} in containers' own keys and brackets\n\
         waste: {:.1}% of attributed tokens are null/empty ({}) or repeated on every item ({})\n",
        s.tokens,
        s.tokenizer,
        s.bytes,
        s.attributed_tokens,
        s.leaf_tokens,
        s.structure_tokens,
        s.waste_share,
        s.null_or_empty_tokens,
        s.repeated_tokens
    );
    let width = leaves
        .iter()
        .chain(containers)
        .map(|p| p.path.chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, 60);
    let sections = [
        (
            leaves,
            count_of(PathKind::Leaf),
            format!(
                "leaves (values holding no others; all leaf rows add up to {}):",
                s.leaf_tokens
            ),
        ),
        (
            containers,
            count_of(PathKind::Container),
            "containers (each row includes its children's tokens: do not add them up):".into(),
        ),
    ];
    for (rows, all, title) in sections {
        if rows.is_empty() {
            continue;
        }
        out.push('\n');
        out.push_str(&title);
        out.push('\n');
        out.push_str(&format!(
            "{:<width$}  {:>8}  {:>8}  {:>6}  {:>10}  {:>8}\n",
            "path", "count", "tokens", "share", "null/empty", "repeated"
        ));
        for p in rows {
            out.push_str(&format!(
                "{:<width$}  {:>8}  {:>8}  {:>5.1}%  {:>10}  {:>8}\n",
                cut_path(&p.path, width),
                p.occurrences,
                p.tokens,
                p.share,
                p.null_or_empty_tokens,
                p.repeated_tokens
            ));
        }
        if all > rows.len() {
            out.push_str(&format!("… {} more (--top)\n", all - rows.len()));
        }
    }
    out
}

/// `path` cut at the front to `width` characters.
fn cut_path(path: &str, width: usize) -> String {
    let n = path.chars().count();
    if n <= width {
        return path.to_owned();
    }
    let tail: String = path.chars().skip(n - (width - 1)).collect();
    format!("…{tail}")
}
