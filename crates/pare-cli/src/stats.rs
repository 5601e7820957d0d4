//! `pare stats`: where a payload's tokens go.

use std::path::PathBuf;

use anyhow::{Result, anyhow};
use clap::Args as ClapArgs;

use crate::io::{input_name, read_input, tokenizer, write_output};

#[derive(ClapArgs)]
pub struct Args {
    /// Input JSON file; `-` or nothing for stdin.
    pub file: Option<PathBuf>,
    /// Print JSON (`"tokens"` is the exact count of the input as given).
    #[arg(long)]
    pub json: bool,
    /// How many paths to list, most tokens first.
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// Tokenizer: o200k_base, cl100k_base, chars4.
    #[arg(long, default_value = "o200k_base")]
    pub tokenizer: String,
    /// A HuggingFace tokenizer.json to count with instead (offline).
    #[arg(long, value_name = "PATH")]
    pub tokenizer_file: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<()> {
    let tok = tokenizer(&args.tokenizer, args.tokenizer_file.as_deref())?;
    let name = input_name(args.file.as_deref());
    let text = read_input(args.file.as_deref())?;
    let value = pare::json::parse(&text).map_err(|e| anyhow!("{name}: {e}"))?;
    let mut stats = pare::stats::profile(&text, &value, tok);
    stats.paths.truncate(args.top);
    let out = if args.json {
        let mut s = serde_json::to_string_pretty(&stats)?;
        s.push('\n');
        s
    } else {
        table(&stats)
    };
    write_output(None, &out)
}

fn table(s: &pare::stats::Stats) -> String {
    let mut out = format!(
        "{} tokens ({}), {} bytes\nwaste: {:.1}% of attributed tokens are null/empty ({}) or repeated on every item ({})\n\n",
        s.tokens, s.tokenizer, s.bytes, s.waste_share, s.null_or_empty_tokens, s.repeated_tokens
    );
    let width = s
        .paths
        .iter()
        .map(|p| p.path.chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, 60);
    out.push_str(&format!(
        "{:<width$}  {:>8}  {:>8}  {:>6}  {:>10}  {:>8}\n",
        "path", "count", "tokens", "share", "null/empty", "repeated"
    ));
    for p in &s.paths {
        let mut path = p.path.clone();
        if path.chars().count() > width {
            path = format!(
                "…{}",
                path.chars()
                    .rev()
                    .take(width - 1)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect::<String>()
            );
        }
        out.push_str(&format!(
            "{:<width$}  {:>8}  {:>8}  {:>5.1}%  {:>10}  {:>8}\n",
            path, p.occurrences, p.tokens, p.share, p.null_or_empty_tokens, p.repeated_tokens
        ));
    }
    out
}
