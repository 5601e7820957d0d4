//! `pare pack`: search results, code chunks or a source tree under a hard token budget.
//!
//! Two kinds of input, one packer: a search response (JSON, or JSONL chunk objects) whose
//! chunks come with scores, or source files and directories that pare walks ([`walk`]) and
//! cuts into chunks itself ([`pare::pack::source`]).

mod walk;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args as ClapArgs, ValueEnum};
use pare::pack::cache::PreviewCache;
use pare::pack::response::pack_response;
use pare::pack::source::map::{SourceMap, may_name_every_file, source_map};
use pare::pack::source::{SourceOptions, chunk_files};
use pare::pack::{PackError, PackSettings, Packed, Tier, chunks, pack, pack_from_cursor};
use pare::schema::pack::{PackOptions, PackOrder};

use crate::io::{AtomicFile, input_name, read_input, tokenizer, write_output};
use crate::policy_cmd;

#[derive(ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub input: crate::io::InputArgs,
    /// What to pack. A search response: nothing or `-` (stdin), or one file named `*.json`
    /// (`*.jsonl`/`*.ndjson`: one chunk object per line, as with --jsonl). Source: a
    /// directory, several paths, or one file of any other kind — pare walks directories
    /// (sorted; .gitignore, .ignore and hidden files skipped, binary files and files over
    /// --max-file-bytes skipped and named on stderr), cuts each file into chunks (tree-sitter
    /// items with their docs and attributes for Rust, Python, TypeScript, JavaScript, Go,
    /// Java; blank-line-separated blocks otherwise) and packs them with breadth first
    /// (every chunk's signatures before any body), in file order, public definitions before
    /// private ones before module code before tests — or, when the budget cannot hold the
    /// signatures of everything, a map of the tree first (--map). --source forces source
    /// mode.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Pack PATHS as source files even when one is a `.json` file.
    #[arg(long, conflicts_with = "jsonl")]
    pub source: bool,
    /// Source mode: skip files larger than this (named on stderr).
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 20)]
    pub max_file_bytes: u64,
    /// `text`: the packed text, what a model reads. `json`: the same pack as data for
    /// programs: per chunk id, path, lines, tier, text shown and its tokens, plus tokens,
    /// budget, skipped files and the next cursor. The budget bounds the packed text (the
    /// json's `tokens`, exactly what `text` prints), not the JSON syntax around it.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Tokens the output may have, at most (counted with --tokenizer, newline included).
    #[arg(long, short)]
    pub budget: usize,
    /// Policy with a `[pack]` section naming the response's fields. Default: fields `id`,
    /// `score`, `text`, `path` under `results`.
    #[arg(long, short)]
    pub policy: Option<PathBuf>,
    /// Detail level: `ids_only`, `metadata`, `preview` cap what a chunk may show; other
    /// levels allow full text. Default: the policy's.
    #[arg(long, short)]
    pub level: Option<String>,
    /// Write the pack's metrics as JSON to FILE: tokens before and after compression, saved,
    /// the compression rate, and each chunk's tier and why.
    #[arg(long, value_name = "FILE")]
    pub metrics: Option<PathBuf>,
    /// Read the search response as one chunk object per line.
    #[arg(long)]
    pub jsonl: bool,
    /// Start the output with a one-line JSON envelope: mode, tokenizer, tokens, budget, what
    /// was cut, has_more/next_cursor, total, warnings (also `envelope = true` in [pack]).
    #[arg(long)]
    pub envelope: bool,
    /// Print the page this cursor names (from an earlier run's envelope or left-out note,
    /// with the same input, budget, level and policy).
    #[arg(long, value_name = "CURSOR")]
    pub cursor: Option<String>,
    /// The question the results are for: chunks are ranked by their relevance to it (BM25
    /// over path, heading and text) blended with the response's score, a chunk with its
    /// words is not demoted by `score_threshold`, and the metrics (and envelope data) say
    /// which of its words matched. Pages of one query need the same query.
    #[arg(long, value_name = "TEXT")]
    pub query: Option<String>,
    /// Tokenizer: o200k_base, cl100k_base, chars4.
    #[arg(long, default_value = "o200k_base")]
    pub tokenizer: String,
    /// A HuggingFace tokenizer.json to count with instead (offline).
    #[arg(long, value_name = "PATH")]
    pub tokenizer_file: Option<PathBuf>,
    /// Write the packed text to FILE (atomically) instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Source mode: a map of the tree first. `auto`: when the budget cannot hold the
    /// signatures of everything (and no --query or --cursor); `always`; `never`: the chunks,
    /// file by file. The map names every file (directories as a trie), then the tree's names ranked
    /// by how much the other files use them, then their signatures, then whole chunks, each
    /// level filling what the one before left.
    #[arg(long, value_enum, default_value_t = MapMode::Auto)]
    pub map: MapMode,
}

/// When `pare pack DIR` gives a map of the tree (see `Args::map`).
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MapMode {
    Auto,
    Always,
    Never,
}

pub fn run(args: Args) -> Result<()> {
    args.input.apply();
    let tok = tokenizer(&args.tokenizer, args.tokenizer_file.as_deref())?;
    let (mut options, level) = match &args.policy {
        Some(path) => {
            let policy = policy_cmd::load(path)?;
            let index = policy_cmd::level_index(&policy, args.level.as_deref())?;
            let level = policy.levels()[index].clone();
            let options = policy.options().pack.clone().ok_or_else(|| {
                anyhow!(
                    "{}: the policy has no [pack] section naming the response's fields",
                    path.display()
                )
            })?;
            (options, level)
        }
        None => (
            PackOptions::default(),
            args.level.clone().unwrap_or_else(|| "full".into()),
        ),
    };
    options.envelope |= args.envelope;
    let mut cache = PreviewCache::new(1024);
    let mut skipped = None;
    let packed = match input_kind(&args)? {
        Input::Source(paths) => {
            let walked = walk::walk(&paths, args.max_file_bytes)?;
            if let Some(note) = walk::skipped_note(&walked.skipped) {
                eprintln!("{note}");
            }
            if walked.files.is_empty() {
                bail!(
                    "no source files to pack in {} (after .gitignore, hidden, binary and size \
                     filters)",
                    names(&paths)
                );
            }
            // The whole tree matters: signatures of every chunk before detail, in file
            // order, and long chunks not capped by length (the budget decides).
            options.breadth = true;
            options.order = PackOrder::Input;
            options.max_chars = usize::MAX;
            // A tree whose files cannot all be named, let alone given a signature each: its
            // map is directories, and the files need no cutting.
            let may_map = args.query.is_none() && args.cursor.is_none();
            if may_map
                && args.map != MapMode::Never
                && !may_name_every_file(walked.files.len(), args.budget)
            {
                match source_map(&walked.files, &[], args.budget, tok) {
                    Ok(map) => return map_output(&args, map, tok, &walked.skipped),
                    Err(e) if args.map == MapMode::Always => bail!("--budget: {e}"),
                    // Not even the top directories fit: the chunks' own pages (`auto`).
                    Err(_) => {}
                }
            }
            let list = chunk_files(&walked.files, &SourceOptions::default());
            // Room for every chunk's previews and facts: a tree is thousands of chunks.
            cache = PreviewCache::new((list.len() * 6).max(1024));
            // A map when asked, or (auto) when the budget cannot hold the signatures of
            // everything; with a question or a cursor, the chunks.
            let map = match args.map {
                MapMode::Always => Some(
                    source_map(&walked.files, &list, args.budget, tok)
                        .map_err(|e| anyhow!("--budget: {e}"))?,
                ),
                MapMode::Auto if may_map => source_map(&walked.files, &list, args.budget, tok)
                    .ok()
                    .filter(|m| m.signatures_shown < m.definitions.len()),
                _ => None,
            };
            if let Some(map) = map {
                return map_output(&args, map, tok, &walked.skipped);
            }
            skipped = Some(walked.skipped);
            pack_chunks(&list, &options, &level, &args, tok, &mut cache)?
        }
        Input::Response { file, jsonl } => {
            let name = input_name(file.as_deref());
            let text = read_input(file.as_deref())?;
            if jsonl {
                let mut values = Vec::new();
                for (n, line) in text
                    .lines()
                    .enumerate()
                    .filter(|(_, l)| !l.trim().is_empty())
                {
                    values.push(
                        pare::json::parse(line)
                            .map_err(|e| anyhow!("{name}: line {}: {e}", n + 1))?,
                    );
                }
                let list = chunks::from_items(values.iter(), &options)
                    .map_err(|e| anyhow!("{name}: {e}"))?;
                pack_chunks(&list, &options, &level, &args, tok, &mut cache)?
            } else {
                let value = pare::json::parse(&text).map_err(|e| anyhow!("{name}: {e}"))?;
                let cursor = args.cursor.as_deref();
                pack_response(
                    &value,
                    &options,
                    &level,
                    args.budget,
                    tok,
                    cursor,
                    args.query.as_deref(),
                    &mut cache,
                )
                .map_err(|e| match e {
                    PackError::Cursor(m) => anyhow!("--cursor: {m}"),
                    other => anyhow!("{name}: {other}"),
                })?
            }
        }
    };
    anyhow::ensure!(
        packed.tokens <= args.budget,
        "internal error: {} tokens over the budget of {}",
        packed.tokens,
        args.budget
    );
    let out = match args.format {
        Format::Text => packed.text.clone(),
        Format::Json => as_json(&packed, &level, skipped.as_deref()),
    };
    // Prepare the metrics file first, so a bad path fails before any output.
    let metrics_file = match &args.metrics {
        Some(path) => Some(AtomicFile::create(path)?),
        None => None,
    };
    write_output(args.output.as_deref(), &out)?;
    if let (Some(mut file), Some(path)) = (metrics_file, &args.metrics) {
        use std::io::Write;
        serde_json::to_writer_pretty(&mut file, &packed.metrics)?;
        file.write_all(b"\n")
            .with_context(|| format!("writing {}", path.display()))?;
        file.commit()?;
    }
    Ok(())
}

/// Output format of `pare pack`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// What the paths name (see `Args::paths`).
enum Input {
    Response { file: Option<PathBuf>, jsonl: bool },
    Source(Vec<PathBuf>),
}

fn input_kind(args: &Args) -> Result<Input> {
    let lines_ext = |p: &Path| {
        p.extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("jsonl") || e.eq_ignore_ascii_case("ndjson"))
    };
    let json_ext = |p: &Path| {
        lines_ext(p)
            || p.extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("json"))
    };
    if args.source {
        if args.paths.is_empty() {
            bail!("--source needs files or directories to pack");
        }
        return Ok(Input::Source(args.paths.clone()));
    }
    match args.paths.as_slice() {
        [] => Ok(Input::Response {
            file: None,
            jsonl: args.jsonl,
        }),
        [p] if p.as_os_str() == "-" || (!p.is_dir() && (args.jsonl || json_ext(p))) => {
            Ok(Input::Response {
                file: Some(p.clone()),
                jsonl: args.jsonl || lines_ext(p),
            })
        }
        _ if args.jsonl => bail!(
            "--jsonl reads one file or stdin, not {}; without --jsonl, directories and \
             several files are packed as source",
            names(&args.paths)
        ),
        paths => Ok(Input::Source(paths.to_vec())),
    }
}

fn names(paths: &[PathBuf]) -> String {
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    shown.join(", ")
}

/// Packs a list of chunks: page 1, or the page --cursor names.
fn pack_chunks(
    list: &[chunks::Chunk],
    options: &PackOptions,
    level: &str,
    args: &Args,
    tok: &dyn pare::tokens::Tokenizer,
    cache: &mut PreviewCache,
) -> Result<Packed> {
    let settings = PackSettings {
        options,
        budget: args.budget,
        tokenizer: tok,
        max_tier: Tier::cap_for_level(level),
        level,
        total: None,
        cursor_in_text: true,
        query: args.query.as_deref(),
    };
    Ok(match &args.cursor {
        Some(cursor) => pack_from_cursor(list, &settings, cache, cursor)
            .map_err(|e| anyhow!("--cursor: {e}"))?,
        None => pack(list, &settings, cache),
    })
}

/// The map of the tree (`--map`), as text or data, and as metrics.
fn map_output(
    args: &Args,
    map: SourceMap,
    tok: &dyn pare::tokens::Tokenizer,
    skipped: &[walk::Skipped],
) -> Result<()> {
    anyhow::ensure!(
        map.tokens <= args.budget,
        "internal error: a map of {} tokens over the budget of {}",
        map.tokens,
        args.budget
    );
    let data = || {
        let shown = |i: usize| {
            if i < map.signatures_shown {
                "signature"
            } else if i < map.names_shown {
                "name"
            } else {
                "counted"
            }
        };
        serde_json::json!({
            "mode": "map",
            "tokenizer": tok.name(),
            "budget": args.budget,
            "tokens": map.tokens,
            "files": map.files,
            "files_named": map.files_named,
            "names": map.definitions.len(),
            "names_shown": map.names_shown,
            "signatures_shown": map.signatures_shown,
            "bodies": map.bodies,
            "definitions": map.definitions.iter().enumerate().map(|(i, d)| serde_json::json!({
                "path": d.path,
                "name": d.name,
                "kind": d.kind,
                "line": d.line,
                "rank": d.rank,
                "signature": d.signature,
                "shown": shown(i),
            })).collect::<Vec<_>>(),
            "skipped": skipped.iter().map(walk::Skipped::json).collect::<Vec<_>>(),
            "text": map.text,
        })
    };
    let out = match args.format {
        Format::Text => map.text.clone(),
        Format::Json => {
            let mut s = serde_json::to_string_pretty(&data()).expect("the map serializes");
            s.push('\n');
            s
        }
    };
    let metrics_file = match &args.metrics {
        Some(path) => Some(AtomicFile::create(path)?),
        None => None,
    };
    write_output(args.output.as_deref(), &out)?;
    if let (Some(mut file), Some(path)) = (metrics_file, &args.metrics) {
        use std::io::Write;
        let mut doc = data();
        doc.as_object_mut().expect("an object").remove("text");
        serde_json::to_writer_pretty(&mut file, &doc)?;
        file.write_all(b"\n")
            .with_context(|| format!("writing {}", path.display()))?;
        file.commit()?;
    }
    Ok(())
}

/// `--format json`: the pack as data (see `Args::format`), one JSON document and a newline.
fn as_json(packed: &Packed, level: &str, skipped: Option<&[walk::Skipped]>) -> String {
    let mut doc = packed.data(level);
    if let Some(skipped) = skipped {
        doc["skipped"] = skipped.iter().map(walk::Skipped::json).collect();
    }
    let mut out = serde_json::to_string_pretty(&doc).expect("the pack serializes");
    out.push('\n');
    out
}
