//! `pare compact`: shape JSON with a policy.

use std::fs::File;
use std::io::{self, BufRead, BufReader, IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use clap::Args as ClapArgs;
use pare::encode::{Format, render};
use pare::manifest::Manifest;
use pare::policy::Policy;
use pare::report::{OpSaving, Report, measure};
use pare::shape::{ShapeOptions, shape};
use rayon::prelude::*;

use crate::io::{AtomicFile, input_name, read_input, tokenizer, write_output};
use crate::policy_cmd;

#[derive(ClapArgs)]
pub struct Args {
    /// Input JSON file; `-` or nothing for stdin.
    pub file: Option<PathBuf>,
    /// Policy file (TOML or JSON). Default: built-in (drop null and empty members).
    #[arg(long, short)]
    pub policy: Option<PathBuf>,
    /// Detail level (the policy's levels; `full` is the input unchanged). Default: the policy's.
    #[arg(long, short)]
    pub level: Option<String>,
    /// Output format.
    #[arg(long, short, default_value = "json", value_parser = ["json", "pretty", "toon", "auto"])]
    pub format: String,
    /// Tokenizer for counts and token-based ops: o200k_base, cl100k_base, chars4.
    #[arg(long, default_value = "o200k_base")]
    pub tokenizer: String,
    /// A HuggingFace tokenizer.json to count with instead (offline).
    #[arg(long, value_name = "PATH")]
    pub tokenizer_file: Option<PathBuf>,
    /// Set a policy parameter, e.g. `--param minMinutes=0` (repeatable).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// Print the report (tokens before/after, per-op savings, what was removed) to stderr.
    #[arg(long, conflicts_with = "report_json")]
    pub report: bool,
    /// Write the report as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub report_json: Option<PathBuf>,
    /// One JSON value per line in and out, in parallel, in constant memory.
    #[arg(long)]
    pub jsonl: bool,
    /// Add the `_omitted` note (what was removed: names and counts), whatever the policy says.
    #[arg(long)]
    pub omitted: bool,
    /// Print how long each stage took (read, parse, shape, render, write) to stderr.
    #[arg(long)]
    pub timings: bool,
    /// Write the output to FILE (atomically) instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

struct Setup {
    policy: Policy,
    level: usize,
    params: pare::policy::Params,
    tok: &'static dyn pare::tokens::Tokenizer,
    format: Format,
    reporting: bool,
    notes: Option<bool>,
}

impl Setup {
    fn options(&self) -> ShapeOptions<'static> {
        ShapeOptions {
            level: self.level,
            params: self.params.clone(),
            tokenizer: self.tok,
            track_paths: self.reporting,
            op_limit: None,
            notes: self.notes,
        }
    }
}

fn setup(args: &Args) -> Result<Setup> {
    let policy = match &args.policy {
        Some(p) => policy_cmd::load(p)?,
        None => Policy::builtin_default(),
    };
    let level = match &args.level {
        Some(name) => policy.level_index(name).map_err(|_| {
            anyhow!(
                "--level: unknown level `{name}`; this policy's levels: {}",
                policy.levels().join(", ")
            )
        })?,
        None => policy.level_index(policy.default_level())?,
    };
    let overrides = args
        .params
        .iter()
        .map(|p| {
            p.split_once('=')
                .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
                .ok_or_else(|| anyhow!("--param `{p}`: expected NAME=VALUE"))
        })
        .collect::<Result<Vec<_>>>()?;
    let params = policy.params(&overrides)?;
    let tok = tokenizer(&args.tokenizer, args.tokenizer_file.as_deref())?;
    let format = Format::parse(&args.format).expect("clap checked the format");
    let reporting = args.report || args.report_json.is_some();
    let notes = args.omitted.then_some(true);
    Ok(Setup {
        policy,
        level,
        params,
        tok,
        format,
        reporting,
        notes,
    })
}

pub fn run(args: Args) -> Result<()> {
    let setup = setup(&args)?;
    if args.jsonl {
        return run_jsonl(&args, &setup);
    }
    let name = input_name(args.file.as_deref());
    let mut clock = Timings::new(args.timings);
    let text = read_input(args.file.as_deref())?;
    clock.lap("read");
    let value = pare::json::parse(&text).map_err(|e| anyhow!("{name}: {e}"))?;
    clock.lap("parse");
    let opts = setup.options();
    if setup.reporting {
        let report = measure(&value, &setup.policy, &opts, setup.format, true, true);
        clock.lap("shape+count");
        // The report file is prepared first, so a bad report path fails before any output.
        let report_file = prepare_report(&args, &report)?;
        write_output(args.output.as_deref(), &report.text)?;
        clock.lap("write");
        finish_report(report_file, &report)?;
    } else {
        let shaped = shape(value, &setup.policy, &opts);
        clock.lap("shape");
        let mut out = if setup.format == Format::Json {
            // The input's buffer, already paged in and as large as the input, takes the
            // output: no growing string copied from one fresh allocation to the next (on
            // a large payload that cost more than writing the JSON).
            let mut out = text;
            out.clear();
            pare::json::write_compact(&shaped.value, &mut out);
            out
        } else {
            render(&shaped.value, setup.format, setup.tok)
        };
        out.push('\n');
        clock.lap("render");
        write_output(args.output.as_deref(), &out)?;
        clock.lap("write");
        summarize(&shaped.manifest);
        // The process ends next: freeing a large tree node by node would cost as much as
        // shaping it, and the OS reclaims the memory at once.
        std::mem::forget(shaped);
    }
    clock.print();
    Ok(())
}

/// Without a report, say in one line on a terminal what was removed: nothing silently.
fn summarize(manifest: &Manifest) {
    if manifest.is_empty() || !io::stderr().is_terminal() {
        return;
    }
    let parts: Vec<String> = manifest
        .totals()
        .iter()
        .map(|(kind, n)| format!("{n} {}", kind.as_str()))
        .collect();
    eprintln!("pare: removed {} (--report for details)", parts.join(", "));
}

/// The `--report-json` file, written but not yet in place.
fn prepare_report(args: &Args, report: &Report) -> Result<Option<AtomicFile>> {
    let Some(path) = &args.report_json else {
        return Ok(None);
    };
    let mut text = serde_json::to_string_pretty(&report.to_json())?;
    text.push('\n');
    let mut f = AtomicFile::create(path)?;
    f.write_all(text.as_bytes())?;
    Ok(Some(f))
}

fn finish_report(file: Option<AtomicFile>, report: &Report) -> Result<()> {
    match file {
        Some(f) => f.commit(),
        None => {
            eprint!("{}", report.to_text());
            Ok(())
        }
    }
}

/// Lines per parallel batch: large enough to keep both cores busy, small enough that
/// memory stays constant however long the input is.
const BATCH_BYTES: usize = 8 << 20;

fn run_jsonl(args: &Args, setup: &Setup) -> Result<()> {
    if setup.format != Format::Json {
        bail!("--jsonl writes one value per line; use --format json");
    }
    let name = input_name(args.file.as_deref());
    let (reader, size): (Box<dyn BufRead>, Option<u64>) = match args.file.as_deref() {
        None => (Box::new(BufReader::new(io::stdin())), None),
        Some(p) if p == Path::new("-") => (Box::new(BufReader::new(io::stdin())), None),
        Some(p) => {
            let f = File::open(p).with_context(|| format!("reading {}", p.display()))?;
            let size = f.metadata().ok().map(|m| m.len());
            (Box::new(BufReader::with_capacity(1 << 20, f)), size)
        }
    };
    // Opened first, so a bad report path fails before any output.
    let mut report_file = args
        .report_json
        .as_deref()
        .map(AtomicFile::create)
        .transpose()?;
    let progress = progress_bar(size);
    // The file is kept by its own type, not as a `dyn Write`: it must be committed, and
    // dropping it uncommitted discards it.
    let mut file = args.output.as_deref().map(AtomicFile::create).transpose()?;
    let mut stdout;
    let out: &mut dyn Write = match &mut file {
        Some(f) => f,
        None => {
            stdout = io::BufWriter::with_capacity(1 << 20, io::stdout().lock());
            &mut stdout
        }
    };
    let opts = setup.options();
    let mut total = Total::new(setup);
    let mut lines = reader.lines();
    let mut line_no = 0usize;
    loop {
        let mut batch: Vec<(usize, String)> = Vec::new();
        let mut bytes = 0;
        for line in lines.by_ref() {
            line_no += 1;
            let line = line.with_context(|| format!("{name}: reading line {line_no}"))?;
            bytes += line.len() + 1;
            if line.trim().is_empty() {
                continue;
            }
            batch.push((line_no, line));
            if bytes >= BATCH_BYTES {
                break;
            }
        }
        if batch.is_empty() {
            break;
        }
        let results: Vec<Result<(String, Option<Report>)>> = batch
            .par_iter()
            .map(|(n, line)| {
                let value =
                    pare::json::parse(line).map_err(|e| anyhow!("{name}: line {n}: {e}"))?;
                if setup.reporting {
                    let r = measure(&value, &setup.policy, &opts, setup.format, true, true);
                    Ok((r.text.clone(), Some(r)))
                } else {
                    let shaped = shape(value, &setup.policy, &opts);
                    let mut t = render(&shaped.value, setup.format, setup.tok);
                    t.push('\n');
                    Ok((t, None))
                }
            })
            .collect();
        for r in results {
            let (text, report) = r?;
            out.write_all(text.as_bytes())?;
            if let Some(report) = report {
                total.add(report);
            }
        }
        if let Some(pb) = &progress {
            pb.inc(bytes as u64);
        }
    }
    out.flush()?;
    if let Some(f) = file {
        f.commit()?;
    }
    if let Some(pb) = progress {
        pb.finish_and_clear();
    }
    if setup.reporting {
        // Written even for an input of no lines (a report of zeros): a requested
        // --report-json that silently never appears would read as success.
        let report = total.finish();
        match report_file.take() {
            Some(mut f) => {
                let mut text = serde_json::to_string_pretty(&report.to_json())?;
                text.push('\n');
                f.write_all(text.as_bytes())?;
                f.commit()?;
            }
            None => eprint!("{}", report.to_text()),
        }
    }
    Ok(())
}

fn progress_bar(size: Option<u64>) -> Option<indicatif::ProgressBar> {
    let size = size?;
    if size < (64 << 20) || !io::stderr().is_terminal() {
        return None;
    }
    let pb = indicatif::ProgressBar::new(size);
    pb.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        )
        .ok()?,
    );
    Some(pb)
}

/// Reports of many lines added up, from a report of zeros (no line yet).
struct Total {
    sum: Report,
}

impl Total {
    fn new(setup: &Setup) -> Total {
        let ops = setup.policy.ops_at(setup.level);
        Total {
            sum: Report {
                tokenizer: setup.tok.name().to_owned(),
                level: setup.policy.levels()[setup.level].clone(),
                format: setup.format,
                tokens_before: 0,
                tokens_after: 0,
                ops: ops
                    .iter()
                    .map(|op| OpSaving {
                        op: op.to_string(),
                        saved: 0,
                    })
                    .collect(),
                manifest: Manifest::default(),
                text: String::new(),
            },
        }
    }
    fn add(&mut self, r: Report) {
        let t = &mut self.sum;
        t.tokens_before += r.tokens_before;
        t.tokens_after += r.tokens_after;
        for (a, b) in t.ops.iter_mut().zip(r.ops) {
            debug_assert_eq!(a.op, b.op);
            a.saved += b.saved;
        }
        t.manifest.absorb(r.manifest);
    }
    fn finish(self) -> Report {
        let mut r = self.sum;
        r.ops.retain(|o: &OpSaving| !o.op.is_empty());
        r
    }
}

/// Stage timings for `--timings`: where the time of one run goes.
struct Timings {
    on: bool,
    last: std::time::Instant,
    laps: Vec<(&'static str, std::time::Duration)>,
}

impl Timings {
    fn new(on: bool) -> Timings {
        Timings {
            on,
            last: std::time::Instant::now(),
            laps: Vec::new(),
        }
    }
    fn lap(&mut self, stage: &'static str) {
        if self.on {
            let now = std::time::Instant::now();
            self.laps.push((stage, now - self.last));
            self.last = now;
        }
    }
    fn print(&self) {
        if self.on {
            let total: std::time::Duration = self.laps.iter().map(|(_, d)| *d).sum();
            let parts: Vec<String> = self
                .laps
                .iter()
                .map(|(s, d)| format!("{s} {:.1} ms", d.as_secs_f64() * 1e3))
                .collect();
            eprintln!(
                "pare: timings: {} (total {:.1} ms)",
                parts.join(", "),
                total.as_secs_f64() * 1e3
            );
        }
    }
}
