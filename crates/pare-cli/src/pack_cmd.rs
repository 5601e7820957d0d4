//! `pare pack`: search results and code chunks under a hard token budget.

use std::path::PathBuf;

use anyhow::{Context, Result, anyhow};
use clap::Args as ClapArgs;
use pare::pack::cache::PreviewCache;
use pare::pack::response::pack_response;
use pare::pack::{PackError, PackSettings, Tier, chunks, pack, pack_from_cursor};
use pare::schema::pack::PackOptions;

use crate::io::{AtomicFile, input_name, read_input, tokenizer, write_output};
use crate::policy_cmd;

#[derive(ClapArgs)]
pub struct Args {
    /// A search response (JSON), or with --jsonl one chunk object per line; `-` or nothing
    /// for stdin.
    pub file: Option<PathBuf>,
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
    /// Write seed 003's metrics (and each chunk's tier and reason) as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub metrics: Option<PathBuf>,
    /// Read one chunk object per line.
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
    /// Tokenizer: o200k_base, cl100k_base, chars4.
    #[arg(long, default_value = "o200k_base")]
    pub tokenizer: String,
    /// A HuggingFace tokenizer.json to count with instead (offline).
    #[arg(long, value_name = "PATH")]
    pub tokenizer_file: Option<PathBuf>,
    /// Write the packed text to FILE (atomically) instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<()> {
    let tok = tokenizer(&args.tokenizer, args.tokenizer_file.as_deref())?;
    let (mut options, level) = match &args.policy {
        Some(path) => {
            let policy = policy_cmd::load(path)?;
            let level = match &args.level {
                Some(name) => {
                    policy.level_index(name).map_err(|_| {
                        anyhow!(
                            "--level: unknown level `{name}`; this policy's levels: {}",
                            policy.levels().join(", ")
                        )
                    })?;
                    name.clone()
                }
                None => policy.default_level().to_owned(),
            };
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
    let name = input_name(args.file.as_deref());
    let text = read_input(args.file.as_deref())?;
    options.envelope |= args.envelope;
    let mut cache = PreviewCache::new(1024);
    let packed = if args.jsonl {
        let mut values = Vec::new();
        for (n, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            values
                .push(pare::json::parse(line).map_err(|e| anyhow!("{name}: line {}: {e}", n + 1))?);
        }
        let list =
            chunks::from_items(values.iter(), &options).map_err(|e| anyhow!("{name}: {e}"))?;
        let settings = PackSettings {
            options: &options,
            budget: args.budget,
            tokenizer: tok,
            max_tier: Tier::cap_for_level(&level),
            level: &level,
            total: None,
        };
        match &args.cursor {
            Some(cursor) => pack_from_cursor(&list, &settings, &mut cache, cursor)
                .map_err(|e| anyhow!("--cursor: {e}"))?,
            None => pack(&list, &settings, &mut cache),
        }
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
            &mut cache,
        )
        .map_err(|e| match e {
            PackError::Cursor(m) => anyhow!("--cursor: {m}"),
            other => anyhow!("{name}: {other}"),
        })?
    };
    anyhow::ensure!(
        packed.tokens <= args.budget,
        "internal error: {} tokens over the budget of {}",
        packed.tokens,
        args.budget
    );
    let out = packed.text;
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
