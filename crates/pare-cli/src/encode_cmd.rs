//! `pare encode` (JSON → json|pretty|toon|auto, no policy) and `pare expand` (any of them →
//! JSON).

use std::path::PathBuf;

use anyhow::{Result, anyhow, bail};
use clap::Args as ClapArgs;
use pare::encode::toon::{self, Delimiter};
use pare::{Format, Reader, expand_from, render};

use std::io::{self, Write};

use crate::io::{AtomicFile, input_name, read_input, read_text, tokenizer, write_output};

#[derive(ClapArgs)]
pub struct EncodeArgs {
    #[command(flatten)]
    pub input: crate::io::InputArgs,
    /// Input JSON file; `-` or nothing for stdin.
    pub file: Option<PathBuf>,
    /// Output encoding: json (minified), pretty, toon (TOON v4, as the reference encoder
    /// writes it) or auto (the cheapest lossless text by the tokenizer's count).
    #[arg(long, short, default_value = "auto", value_parser = ["json", "pretty", "toon", "auto"])]
    pub format: String,
    /// TOON only: the delimiter between values (comma, tab, pipe).
    #[arg(long, value_parser = ["comma", "tab", "pipe"])]
    pub delimiter: Option<String>,
    /// TOON only: spaces per indentation level.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=16))]
    pub indent: Option<u8>,
    /// Tokenizer for `auto`'s choices and for --report: o200k_base, cl100k_base, chars4.
    #[arg(long, default_value = "o200k_base")]
    pub tokenizer: String,
    /// A HuggingFace tokenizer.json to count with instead (offline).
    #[arg(long, value_name = "PATH")]
    pub tokenizer_file: Option<PathBuf>,
    /// Print tokens of minified JSON and of the output to stderr.
    #[arg(long)]
    pub report: bool,
    /// Write the output to FILE (atomically) instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Refuse input that repeats a key within an object (exit 2, naming the key, line and
    /// column). Without it the last value is kept, as `JSON.parse` does, with a warning.
    #[arg(long)]
    pub strict: bool,
}

pub fn encode(args: EncodeArgs) -> Result<()> {
    args.input.apply();
    let format = Format::parse(&args.format).expect("clap checked the format");
    // Building a BPE tokenizer takes a while; json, pretty and toon don't need one.
    let tok = if format == Format::Auto || args.report {
        Some(tokenizer(&args.tokenizer, args.tokenizer_file.as_deref())?)
    } else {
        None
    };
    if format != Format::Toon && (args.delimiter.is_some() || args.indent.is_some()) {
        bail!("--delimiter and --indent apply to --format toon only");
    }
    let name = input_name(args.file.as_deref());
    let text = read_input(args.file.as_deref())?;
    let parsed = pare::json::parse_noting_duplicates(&text).map_err(|e| anyhow!("{name}: {e}"))?;
    if args.strict
        && let Some(d) = parsed.duplicates.first()
    {
        bail!("{name}: {}", d.to_error());
    }
    warn_all(&name, &parsed.duplicates, "duplicate keys");
    let value = parsed.value;
    if format == Format::Toon {
        // TOON carries numbers as doubles: say which ones it cannot, never silently.
        let inexact = toon::inexact_numbers(&value);
        warn_all(&name, &inexact, "numbers toon cannot carry exactly");
        let mut opts = toon::EncodeOptions::default();
        if let Some(d) = &args.delimiter {
            opts.delimiter = Delimiter::parse(d).expect("clap checked the delimiter");
        }
        if let Some(n) = args.indent {
            opts.indent = usize::from(n);
        }
        if tok.is_none() {
            // Written as it is made: a large document's text is never held whole.
            write_streamed(args.output.as_deref(), |sink| {
                toon::encode_streaming(&value, &opts, sink)
            })?;
            std::mem::forget((value, text)); // freeing node by node would only cost time
            return Ok(());
        }
        let out = toon::encode(&value, &opts);
        return finish(&args, &name, tok, &value, out);
    }
    let out = render(
        &value,
        format,
        tok.unwrap_or(pare::tokens::builtin("chars4")?),
    );
    finish(&args, &name, tok, &value, out)?;
    std::mem::forget((value, text));
    Ok(())
}

/// The first few of `items` as warnings on stderr, and how many more there are.
fn warn_all(name: &str, items: &[impl std::fmt::Display], what: &str) {
    for w in pare::report::listed(items, what) {
        eprintln!("pare: warning: {name}: {w}");
    }
}

/// Report (if asked) and write `out` with its newline.
fn finish(
    args: &EncodeArgs,
    name: &str,
    tok: Option<&dyn pare::tokens::Tokenizer>,
    value: &pare::Value,
    mut out: String,
) -> Result<()> {
    if let Some(tok) = tok.filter(|_| args.report) {
        let before = tok.count(&pare::json::to_compact(value));
        let after = tok.count(&out);
        let saved = before as i64 - after as i64;
        let rate = if before == 0 {
            0.0
        } else {
            saved as f64 * 100.0 / before as f64
        };
        eprintln!(
            "{name}: {before} → {after} tokens ({}; {saved} saved, {rate:.1}% vs minified JSON)",
            tok.name()
        );
    }
    out.push('\n');
    write_output(args.output.as_deref(), &out)?;
    std::mem::forget(out);
    Ok(())
}

/// Write what `produce` hands its sink, then a newline, to FILE (atomically: nothing
/// appears unless all of it was written) or stdout.
fn write_streamed(
    output: Option<&std::path::Path>,
    produce: impl FnOnce(&mut dyn FnMut(&str)),
) -> Result<()> {
    fn pour(target: &mut dyn Write, produce: impl FnOnce(&mut dyn FnMut(&str))) -> io::Result<()> {
        let mut failed: Option<io::Error> = None;
        produce(&mut |piece: &str| {
            if failed.is_none()
                && let Err(e) = target.write_all(piece.as_bytes())
            {
                failed = Some(e);
            }
        });
        if let Some(e) = failed {
            return Err(e);
        }
        target.write_all(b"\n")?;
        target.flush()
    }
    match output {
        Some(path) => {
            let mut file = AtomicFile::create(path)?;
            pour(&mut file, produce)?;
            file.commit()
        }
        None => Ok(pour(
            &mut io::BufWriter::with_capacity(1 << 16, io::stdout().lock()),
            produce,
        )?),
    }
}

#[derive(ClapArgs)]
pub struct ExpandArgs {
    #[command(flatten)]
    pub input: crate::io::InputArgs,
    /// Input: JSON, TOON or pare auto text; `-` or nothing for stdin.
    pub file: Option<PathBuf>,
    /// Indent the JSON by two spaces.
    #[arg(long)]
    pub pretty: bool,
    /// Say on stderr which encoding was found.
    #[arg(long, short)]
    pub verbose: bool,
    /// Write the JSON to FILE (atomically) instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// How to read the text: `detect` (JSON, else `auto`, else TOON; a text that begins like
    /// JSON but is not valid JSON is an error), `json`, or `toon` (also what begins like
    /// JSON, e.g. a TOON string `[1]]`).
    #[arg(long, value_name = "READER", default_value = "detect", value_parser = ["detect", "json", "toon"])]
    pub from: String,
}

pub fn expand_cmd(args: ExpandArgs) -> Result<()> {
    args.input.apply();
    let name = input_name(args.file.as_deref());
    // An empty text is TOON's empty document, `{}` (what `encode --format toon` writes for
    // it), so it is not refused here as it is where JSON is expected.
    let text = read_text(args.file.as_deref())?;
    // A trailing newline (as `pare compact` prints) is not part of the encoding.
    let body = text.strip_suffix('\n').unwrap_or(&text);
    let reader = match args.from.as_str() {
        "json" => Reader::Json,
        "toon" => Reader::Toon,
        _ => Reader::Detect,
    };
    let (value, detected) = expand_from(body, reader).map_err(|e| anyhow!("{name}: {e}"))?;
    if args.verbose {
        eprintln!("{name}: read as {}", detected.name());
    }
    let mut out = if args.pretty {
        pare::json::to_pretty(&value)
    } else {
        pare::json::to_compact(&value)
    };
    out.push('\n');
    write_output(args.output.as_deref(), &out)?;
    std::mem::forget((value, text, out)); // as in `encode`
    Ok(())
}
