//! `pare compact`: shape JSON with a policy.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use clap::Args as ClapArgs;
use pare::Format;
use pare::Policy;
use pare::ShapeOptions;
use pare::manifest::{Kind, Manifest};
use pare::project::Fields;
use pare::query::selector::Seen;
use pare::report::{OpSaving, Report, measure, measure_in, measure_text_sharing};
use pare::respond::note;
use pare::tokens::pool::CountPool;
use pare::{Budget, Hint, Input, PageKind, Record, Request, RespondError, Response, respond};
use rayon::prelude::*;

use crate::io::{AtomicFile, input_name, read_input, tokenizer, write_output};
use crate::policy_cmd;

#[derive(ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub input: crate::io::InputArgs,
    /// Input JSON file; `-` or nothing for stdin.
    pub file: Option<PathBuf>,
    /// Policy file (TOML or JSON). Default: built-in (lossless: no ops, only re-encoded).
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
    /// Print how long each stage took (read, parse, shape, render, other, write) to stderr.
    #[arg(long)]
    pub timings: bool,
    /// Write the output to FILE (atomically) instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Print at most N tokens (by --tokenizer and by chars/4): a level you did not name is
    /// lowered to fit; what still does not fit is printed in pages that each decode alone
    /// (page 1 first; the next page's cursor goes to stderr).
    #[arg(long, value_name = "N", conflicts_with = "jsonl")]
    pub budget: Option<usize>,
    /// Refuse input that repeats a key within an object (exit 2, naming the key, line and
    /// column). Without it the last value is kept, as `JSON.parse` does, with a warning.
    #[arg(long)]
    pub strict: bool,
    /// Print the page this cursor names (from an earlier run with the same input, policy,
    /// level, parameters, format and --budget).
    #[arg(long, value_name = "CURSOR", requires = "budget")]
    pub cursor: Option<String>,
    /// The question the response is for: a policy with a [pack] section ranks the results by
    /// their relevance to it blended with their score (as `pare pack --query`).
    #[arg(long, value_name = "TEXT")]
    pub query: Option<String>,
    /// Show only these fields of the shaped value, and what leads to them: comma-separated
    /// member names (found at any depth: `id,user.login`) or selectors (`$.items[*].id`);
    /// repeat the flag or separate with commas. The note says which fields were shown.
    #[arg(long, value_name = "FIELDS", conflicts_with = "jsonl")]
    pub fields: Vec<String>,
}

struct Setup {
    policy: Policy,
    overrides: Vec<(String, String)>,
    /// The level, parameters, tokenizer and `_omitted` setting as the engine takes them.
    opts: ShapeOptions<'static>,
    format: Format,
    reporting: bool,
}

impl Setup {
    fn options(&self) -> ShapeOptions<'static> {
        self.opts.clone()
    }

    fn tok(&self) -> &'static dyn pare::tokens::Tokenizer {
        self.opts.tokenizer
    }
}

/// `--fields`, each flag comma-separated; `None` without any.
fn fields(flags: &[String]) -> Result<Option<Fields>> {
    if flags.is_empty() {
        return Ok(None);
    }
    Fields::parse_each(flags)
        .map(Some)
        .map_err(|e| anyhow!("--fields: {e}"))
}

fn setup(args: &Args) -> Result<Setup> {
    let policy = match &args.policy {
        Some(p) => policy_cmd::load(p)?,
        None => Policy::builtin_default(),
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
    let tok = tokenizer(&args.tokenizer, args.tokenizer_file.as_deref())?;
    let format = Format::parse(&args.format).expect("clap checked the format");
    let reporting = args.report || args.report_json.is_some();
    let notes = args.omitted.then_some(true);
    let opts = ShapeOptions {
        track_paths: reporting,
        // One string for the life of the command (the options are `'static`).
        query: args.query.clone().map(|q| &*Box::leak(q.into_boxed_str())),
        ..policy_cmd::shape_options(&policy, args.level.as_deref(), &overrides, tok, notes)?
    };
    Ok(Setup {
        policy,
        overrides,
        opts,
        format,
        reporting,
    })
}

pub fn run(args: Args) -> Result<()> {
    args.input.apply();
    let setup = setup(&args)?;
    if args.jsonl {
        return run_jsonl(&args, &setup);
    }
    let name = input_name(args.file.as_deref());
    let mut clock = Timings::new(args.timings);
    let text = read_input(args.file.as_deref())?;
    clock.lap("read");
    let budget = args.budget.map(Budget::tokens);
    let fields = fields(&args.fields)?;
    let request = Request {
        level: args.level.as_deref(),
        params: &setup.overrides,
        format: setup.format,
        tokenizer: setup.tok(),
        budget,
        cursor: args.cursor.as_deref(),
        query: args.query.as_deref(),
        fields: fields.as_ref(),
        omitted_notes: setup.opts.notes,
        // A report counts the input itself, beside the rest of its work.
        measure: false,
        hint: Hint::Flags,
        reject_duplicate_keys: args.strict,
        // Only the text is printed: a policy the stream can do is written as it reads.
        want_value: false,
        ..Request::new(Input::Json(&text), &setup.policy)
    };
    let (response, report) = if setup.reporting {
        reported(&setup, &text, &name, request)?
    } else {
        (respond_named(request, &name)?, None)
    };
    clock.stages(&response.stages);
    let Response {
        page, rest, shaped, ..
    } = response;
    let mut out = page.text;
    out.push('\n');
    if let Some(mut report) = report {
        // Counted once: what was printed is the report's text whenever the page is whole.
        let printed = if out == report.text {
            report.tokens_after
        } else {
            setup.tok().count(&out)
        };
        if page.record.kind == PageKind::Packed {
            // What was printed is the pack's text, not the value's JSON: count that.
            report = report.packed(out.clone(), printed);
        }
        let paged = PagedReport {
            report,
            record: &page.record,
            note: page.note.as_deref(),
            printed,
            next: page.record.next_cursor.as_deref().map(next_command),
        };
        clock.lap("report");
        // The report file is prepared first, so a bad report path fails before any output.
        let report_file = prepare_report(&args, &paged)?;
        write_output(args.output.as_deref(), &out)?;
        clock.lap("write");
        finish_report(report_file, &paged)?;
        // The text report says them; beside a report file they still go to stderr.
        if args.report_json.is_some() {
            warn(&name, &page.record.warnings);
        }
    } else {
        write_output(args.output.as_deref(), &out)?;
        clock.lap("write");
        summarize(&page.record.omitted);
        // Never silently: a repeated key, a number the format cannot carry, a selector
        // that matched nothing.
        warn(&name, &page.record.warnings);
        // What the policy removed the summary above says (on a terminal): the note's line
        // for a model reading the page would only repeat it, on every run.
        if let Some(note) = page.note.as_deref().and_then(note::without_removed_line) {
            // Pages and lowered levels are said where a user sees them, never on stdout.
            match page.record.next_cursor.as_deref() {
                Some(c) => eprintln!("{note}\n  next: {}", next_command(c)),
                None => eprintln!("{note}"),
            }
        }
    }
    // The process ends next: freeing a large tree node by node would cost as much as
    // shaping it, and the OS reclaims the memory at once.
    std::mem::forget(shaped);
    std::mem::forget(rest);
    clock.print();
    Ok(())
}

/// [`respond`], its errors in the words of this command's flags; `name` is the input's.
fn respond_named(request: Request, name: &str) -> Result<Response> {
    respond(request).map_err(|e| match e {
        RespondError::Json(e) => anyhow!("{name}: {e}"),
        RespondError::Cursor(e) => anyhow!("--cursor: {e}"),
        RespondError::Budget(e) => anyhow!("--budget: {e}"),
        RespondError::Fields(e) => anyhow!("--fields: {e}"),
        other => anyhow!("{other}"),
    })
}

/// The response to `request` and its report: per-op savings and what was removed, of the
/// whole shaped value at the level shown, with every "before" counted.
///
/// Why this order: every count goes to one [`CountPool`], whose helpers bring in the
/// encoding's tables ([`pare::tokens::Tokenizer::warm_up`]) and count each text in parts as
/// soon as it is written. The input as given is the longest count and needs nothing else,
/// so it goes in first, and is counted beside the page. When the stream can write every
/// text the report counts ([`measure_text_sharing`]: JSON out, every op one the parser
/// does), no tree is built; else the input is parsed and [`measure_in`] shapes it once per
/// op prefix. With no budget the level shown is the one asked, so the report is written
/// first and the page takes its output ([`Request::shared_output`]) rather than the stream
/// writing the same text a second time.
fn reported(
    setup: &Setup,
    text: &str,
    name: &str,
    request: Request,
) -> Result<(Response, Option<Report>)> {
    let pool = CountPool::new(setup.tok());
    std::thread::scope(|scope| {
        let _closing = pool.helpers(scope, text.len());
        let given = pool.add(text);
        let streamable = setup.format == Format::Json;
        let opts_at = |level: usize| ShapeOptions {
            level,
            ..setup.options()
        };
        let measure_at =
            |level: usize| measure_text_sharing(text, &setup.policy, &opts_at(level), true, &pool);
        // A budget may lower the level: then the page comes first, and says which.
        let asked = (streamable && request.budget.is_none())
            .then(|| request.level_asked().ok().map(|(level, _)| level))
            .flatten();
        let early = asked.map(|level| (level, measure_at(level)));
        let shared = early
            .as_ref()
            .and_then(|(_, measured)| measured.as_ref()?.1.as_ref());
        let request = Request {
            shared_output: shared,
            ..request
        };
        let mut response = respond_named(request, name)?;
        let level = setup.policy.level_index(&response.page.record.level)?;
        // Measured again only if the page's level is not the one measured (or none was).
        let measured = match early {
            Some((asked, measured)) if asked == level => measured,
            _ => streamable.then(|| measure_at(level)).flatten(),
        };
        let streamed = measured.map(|(report, _)| report);
        let mut report = match streamed {
            Some(report) => report,
            None => {
                let value = pare::json::parse(text).map_err(|e| anyhow!("{name}: {e}"))?;
                let how = (setup.format, true, true);
                let report = measure_in(&value, &setup.policy, &opts_at(level), how, &pool);
                // The process ends soon: the OS takes the tree back at once.
                std::mem::forget(value);
                report
            }
        };
        let given = pool.count(given);
        report.tokens_input = Some(given);
        response.page.record.tokens_before = Some(given);
        Ok((response, Some(report)))
    })
}

/// This command again, asking for the page `cursor` names.
fn next_command(cursor: &str) -> String {
    let mut words = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--cursor" {
            args.next();
        } else if !a.starts_with("--cursor=") {
            words.push(a);
        }
    }
    words.push("--cursor".into());
    words.push(cursor.into());
    let quoted: Vec<String> = words.iter().map(|w| shell_word(w)).collect();
    format!("pare {}", quoted.join(" "))
}

/// `word` as a POSIX shell reads it back.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The report of one run: the whole shaped value's savings ([`Report`]) and the page that
/// was printed ([`Record`]).
struct PagedReport<'r> {
    report: Report,
    record: &'r Record,
    /// The line that follows the page (on stderr): where the reader is, how to go on.
    note: Option<&'r str>,
    /// Tokens of exactly what was printed (the page and its newline).
    printed: usize,
    /// The command that prints the next page.
    next: Option<String>,
}

impl PagedReport<'_> {
    fn paged(&self) -> bool {
        self.record.pages > 1
    }

    fn to_json(&self) -> serde_json::Value {
        let mut json = self.report.to_json();
        let obj = json.as_object_mut().expect("the report is an object");
        if self.paged() {
            // `tokens_after` is what was printed; the ops add up to the whole shaped text.
            obj.insert("tokens_shaped".into(), self.report.tokens_after.into());
            obj.insert("tokens_after".into(), self.printed.into());
            let saved = self.report.tokens_before as i64 - self.printed as i64;
            obj.insert("saved".into(), saved.into());
            let vs_minified = self.report.tokens_minified as i64 - self.printed as i64;
            obj.insert("saved_vs_minified".into(), vs_minified.into());
            if let Some(input) = self.report.tokens_input {
                let vs_input = input as i64 - self.printed as i64;
                obj.insert("saved_vs_input".into(), vs_input.into());
            }
        }
        obj.insert("tokens_input".into(), self.record.tokens_before.into());
        if let Some(from) = &self.record.lowered_from {
            obj.insert("lowered_from".into(), from.as_str().into());
        }
        obj.insert("page".into(), self.record.page.into());
        obj.insert("pages".into(), self.record.pages.into());
        obj.insert("next_cursor".into(), self.record.next_cursor.clone().into());
        obj.insert("note".into(), self.note.into());
        if let Some(c) = &self.record.continues {
            obj.insert("continues".into(), c.as_str().into());
        }
        if !self.record.warnings.is_empty() {
            obj.insert("warnings".into(), self.record.warnings.clone().into());
        }
        json
    }

    fn to_text(&self) -> String {
        let mut text = self.report.to_text();
        if let Some(from) = &self.record.lowered_from {
            text.push_str(&format!(
                "  lowered from level {from} to fit the budget (--level {from} for more, in pages)\n"
            ));
        }
        if self.paged() {
            text.push_str(&format!(
                "  page {} of {}: {} tokens printed of {}\n",
                self.record.page, self.record.pages, self.printed, self.report.tokens_after
            ));
            match &self.next {
                Some(next) => text.push_str(&format!("  next page: {next}\n")),
                None => text.push_str("  (last page)\n"),
            }
        }
        for w in &self.record.warnings {
            text.push_str(&format!("  warning: {w}\n"));
        }
        text
    }
}

/// Warnings (a selector that matched nothing, pages that do not decode alone) on stderr.
fn warn(input: &str, warnings: &[String]) {
    for w in warnings {
        eprintln!("pare: warning: {input}: {w}");
    }
}

/// Without a report, say in one line on a terminal what was removed: nothing silently.
fn summarize(omitted: &BTreeMap<&str, u64>) {
    if omitted.is_empty() || !io::stderr().is_terminal() {
        return;
    }
    // In the kinds' own order, as the report lists them.
    let parts: Vec<String> = Kind::ALL
        .iter()
        .filter_map(|kind| {
            omitted
                .get(kind.as_str())
                .map(|n| format!("{n} {}", kind.as_str()))
        })
        .collect();
    eprintln!("pare: removed {} (--report for details)", parts.join(", "));
}

/// The `--report-json` file, written but not yet in place.
fn prepare_report(args: &Args, report: &PagedReport) -> Result<Option<AtomicFile>> {
    let Some(path) = &args.report_json else {
        return Ok(None);
    };
    let mut text = serde_json::to_string_pretty(&report.to_json())?;
    text.push('\n');
    let mut f = AtomicFile::create(path)?;
    f.write_all(text.as_bytes())?;
    Ok(Some(f))
}

fn finish_report(file: Option<AtomicFile>, report: &PagedReport) -> Result<()> {
    match file {
        Some(f) => f.commit(),
        None => {
            eprint!("{}", report.to_text());
            Ok(())
        }
    }
}

/// One line shaped: its text, its report (when reporting), what the selectors matched,
/// the duplicate keys its parse noted.
type Line = (String, Option<Report>, Seen, Vec<String>);

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
    // What the selectors matched in any line: one warning at the end for each that matched
    // in none, not one per line.
    let mut seen: Option<Seen> = None;
    let mut lines = crate::io::capped_lines(reader);
    let mut line_no = 0usize;
    let mut duplicates = Vec::new();
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
        let results: Vec<Result<Line>> = batch
            .par_iter()
            .map(|(n, line)| {
                let at = |e| anyhow!("{name}: line {n}: {e}");
                let noted = |dups: &[pare::json::DuplicateKey]| {
                    dups.iter().map(|d| format!("line {n}: {d}")).collect()
                };
                if setup.reporting {
                    let parsed = pare::shape::parse_json_line(line, args.strict).map_err(at)?;
                    let mut r = measure(
                        &parsed.value,
                        &setup.policy,
                        &opts,
                        setup.format,
                        true,
                        true,
                    );
                    let matched = std::mem::take(&mut r.matches);
                    Ok((r.text.clone(), Some(r), matched, noted(&parsed.duplicates)))
                } else {
                    // The engine's line, as the Python door's shape_lines makes it.
                    let shaped = pare::shape::shape_json_line(
                        line,
                        &setup.policy,
                        &opts,
                        setup.format,
                        args.strict,
                    )
                    .map_err(at)?;
                    let dups = noted(&shaped.duplicates);
                    Ok((shaped.text + "\n", None, shaped.matches, dups))
                }
            })
            .collect();
        for r in results {
            let (text, report, matched, dups) = r?;
            duplicates.extend(dups);
            out.write_all(text.as_bytes())?;
            if let Some(report) = report {
                total.add(report);
            }
            match &mut seen {
                Some(s) => s.join(matched),
                None => seen = Some(matched),
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
    let warnings = seen.map_or_else(Vec::new, |s| {
        setup
            .policy
            .unmatched_warnings(&s, setup.opts.level)
            .into_iter()
            .map(|w| w.replace(" matched nothing ", " matched nothing in any line "))
            .collect()
    });
    warn(
        &name,
        &pare::report::listed(&duplicates, "duplicate keys (each keeps its last value)"),
    );
    if setup.reporting {
        // Written even for an input of no lines (a report of zeros): a requested
        // --report-json that silently never appears would read as success.
        let report = total.finish();
        match report_file.take() {
            Some(mut f) => {
                let mut json = report.to_json();
                if !warnings.is_empty() {
                    json["warnings"] = warnings.clone().into();
                }
                let mut text = serde_json::to_string_pretty(&json)?;
                text.push('\n');
                f.write_all(text.as_bytes())?;
                f.commit()?;
                warn(&name, &warnings);
            }
            None => {
                let mut text = report.to_text();
                for w in &warnings {
                    text.push_str(&format!("  warning: {w}\n"));
                }
                eprint!("{text}");
            }
        }
    } else {
        warn(&name, &warnings);
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
        let ops = setup.policy.ops_at(setup.opts.level);
        Total {
            sum: Report {
                tokenizer: setup.tok().name().to_owned(),
                level: setup.policy.levels()[setup.opts.level].clone(),
                format: setup.format,
                tokens_before: 0,
                tokens_minified: 0,
                tokens_input: None,
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
                matches: Seen::default(),
                packed: false,
            },
        }
    }
    fn add(&mut self, r: Report) {
        let t = &mut self.sum;
        t.tokens_before += r.tokens_before;
        t.tokens_minified += r.tokens_minified;
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
    /// The stages `respond` timed, and the rest of its time (counts, pages, notes) as `other`.
    fn stages(&mut self, s: &pare::respond::Stages) {
        if self.on {
            let now = std::time::Instant::now();
            let all = now - self.last;
            let timed = s.parse + s.shape + s.render;
            self.laps.push(("parse", s.parse));
            self.laps.push(("shape", s.shape));
            self.laps.push(("render", s.render));
            self.laps.push(("other", all.saturating_sub(timed)));
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
