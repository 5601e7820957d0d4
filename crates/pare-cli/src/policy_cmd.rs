//! `pare policy check FILE [--sample INPUT]`, `pare policy ops [NAME]` and
//! `pare policy schema`.

use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};
use clap::Subcommand;
use pare::ops::OpDoc;
use pare::{Policy, ShapeOptions, shape};
use pare_mcp::ConfigError;

use crate::io;

#[derive(Subcommand)]
pub enum Command {
    /// Validate a policy (TOML or JSON) and summarise it.
    Check {
        /// The policy file.
        file: PathBuf,
        /// A JSON payload (`-` for stdin) to try the policy on: shows, for each op and each
        /// of its selectors, how many nodes the selector matched, and flags the selectors
        /// that matched nothing. Counted in one walk at the level shaped (the default level,
        /// or --level), so a selector inside what an earlier op dropped counts 0.
        #[arg(long, value_name = "INPUT")]
        sample: Option<PathBuf>,
        /// The level to try the sample at. Default: the policy's default level.
        #[arg(long, requires = "sample")]
        level: Option<String>,
        #[command(flatten)]
        input: io::InputArgs,
    },
    /// List the ops a policy's `[[ops]]` tables can name, or show one: what it does, why,
    /// its options (type, default, meaning) and examples with their input and output.
    Ops {
        /// The op to show. Default: list them all.
        name: Option<String>,
    },
    /// Print the JSON Schema of policy files (for editors).
    Schema,
}

pub fn run(cmd: Command) -> Result<()> {
    // Written at once through `write_output`: a closed stdout (`| head -0`) is then an
    // error `main` treats as a quiet exit, where `println!` would panic.
    match cmd {
        Command::Check {
            file,
            sample,
            level,
            input,
        } => {
            input.apply();
            let policy = load(&file)?;
            // What `pare mcp --policy FILE` would refuse, refused here too.
            pare_mcp::config::load(&file).map_err(|e| anyhow::anyhow!(mcp_error(&file, &e)))?;
            // What `pare http --policy FILE` would refuse in `[http]`.
            pare_http::config::load(&file)?;
            let mut out = summary(&file, &policy);
            if let Some(sample) = sample {
                out += &sample_matches(&policy, &sample, level.as_deref())?;
            }
            io::write_output(None, &out)
        }
        Command::Ops { name: None } => io::write_output(None, &ops_list(&pare::ops::docs())),
        Command::Ops { name: Some(name) } => {
            let doc = pare::ops::doc(&name).ok_or_else(|| {
                anyhow!(
                    "unknown op `{name}`; allowed: {}",
                    pare::ops::NAMES.join(", ")
                )
            })?;
            io::write_output(None, &op_page(&doc))
        }
        Command::Schema => io::write_output(None, &pare::schema::json_schema()),
    }
}

fn summary(file: &Path, policy: &Policy) -> String {
    let mut out = format!("{}: ok\n", file.display());
    if let Some(d) = policy.description() {
        out += &format!("  {}\n", d.lines().next().unwrap_or(""));
    }
    out += &format!(
        "  levels: {} (default {})\n",
        policy.levels().join(", "),
        policy.default_level()
    );
    for (i, level) in policy.levels().iter().enumerate() {
        let ops = policy.ops_at(i);
        let ops = if ops.is_empty() {
            "(input unchanged)".to_owned()
        } else {
            ops.join(" → ")
        };
        out += &format!("  {level:>10}: {ops}\n");
    }
    let params: Vec<String> = policy
        .options()
        .params
        .iter()
        .map(|(k, v)| format!("{k} = {}", serde_json::to_string(v).unwrap_or_default()))
        .collect();
    if !params.is_empty() {
        out += &format!("  params: {}\n", params.join(", "));
    }
    out
}

/// For each op and selector, the nodes it matched in `sample` at `level` (one walk).
fn sample_matches(policy: &Policy, sample: &Path, level: Option<&str>) -> Result<String> {
    let name = io::input_name(Some(sample));
    let text = io::read_input(Some(sample))?;
    let value = pare::json::parse(&text).map_err(|e| anyhow!("{name}: {e}"))?;
    let o200k = pare::tokens::builtin("o200k_base").expect("o200k_base is built in");
    let opts = ShapeOptions {
        count_matches: true,
        ..shape_options(policy, level, &[], o200k, None)?
    };
    let level = opts.level;
    let shaped = shape(value, policy, &opts);
    let level_name = &policy.levels()[level];
    let mut out = format!(
        "  {name} at level {level_name}: nodes each selector matched
"
    );
    let ops = policy.selector_matches(&shaped.matches, level);
    let op_width = ops
        .iter()
        .map(|o| format!("ops[{}] {}", o.index, o.op).chars().count())
        .max()
        .unwrap_or(0);
    let field_width = ops
        .iter()
        .flat_map(|o| o.selectors.iter().map(|s| s.field.chars().count()))
        .max()
        .unwrap_or(0);
    let sel_width = ops
        .iter()
        .flat_map(|o| o.selectors.iter().map(|s| s.selector.chars().count()))
        .max()
        .unwrap_or(0);
    let mut unmatched = 0;
    for op in &ops {
        let head = format!("ops[{}] {}", op.index, op.op);
        if !op.runs {
            out += &format!("    {head:<op_width$}  (does not run at {level_name})\n");
            continue;
        }
        if op.selectors.is_empty() {
            out += &format!("    {head:<op_width$}  (no selectors)\n");
            continue;
        }
        for (i, s) in op.selectors.iter().enumerate() {
            let head = if i == 0 { head.as_str() } else { "" };
            let count = s.count.unwrap_or(0);
            // `pare compact` warns about the rest (`Policy::unmatched_warnings`).
            let flag = match (s.matched, s.guard || s.optional, s.anywhere) {
                (true, _, _) => "",
                (false, true, _) if s.optional => "  <- matched nothing (if present: not warned)",
                (false, true, _) => "  <- matched nothing (a guard: not warned)",
                (false, _, true) => "  <- matched nothing (a `..` path: not warned)",
                (false, false, false) => "  <- matched nothing",
            };
            unmatched += usize::from(!s.matched);
            out += &format!(
                "    {head:<op_width$}  {:<field_width$}  {:<sel_width$}  {count:>6}{flag}\n",
                s.field, s.selector
            );
        }
    }
    if unmatched > 0 {
        out += &format!(
            "  {unmatched} selector{} matched nothing in {name}\n",
            if unmatched == 1 { "" } else { "s" }
        );
    }
    out += &removed_line(&ops, &shaped.manifest, &name);
    // The process ends next: skip freeing the tree.
    std::mem::forget(shaped);
    Ok(out)
}

/// What each kind of op that ran removed, cut or rounded in the sample, by the manifest: a selector can
/// match and its op still leave everything as it was (a `pluck` on a list of strings: 0),
/// which match counts alone do not show. Ops of one kind share their manifest entries, so they
/// are summed by kind.
fn removed_line(
    ops: &[pare::policy::OpMatches],
    manifest: &pare::manifest::Manifest,
    name: &str,
) -> String {
    let mut kinds: Vec<&str> = Vec::new();
    for op in ops.iter().filter(|o| o.runs) {
        if !kinds.contains(&op.op) {
            kinds.push(op.op);
        }
    }
    if kinds.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = kinds
        .iter()
        .map(|kind| {
            let n: u64 = manifest
                .entries
                .iter()
                .filter(|e| e.op == *kind)
                .map(|e| e.count)
                .sum();
            format!("{kind} {n}")
        })
        .collect();
    format!(
        "  values each op removed, cut or rounded in {name}: {} (0: nothing changed; ops \
         that only restructure, like hoist or nest, count none)\n",
        parts.join(" · ")
    )
}

/// `pare policy ops`: one line per op, names aligned.
fn ops_list(docs: &[OpDoc]) -> String {
    let width = docs.iter().map(|d| d.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for d in docs {
        out += &format!("{:<width$}  {}\n", d.name, d.summary);
    }
    out += "\nDetails of one op (options, examples): pare policy ops NAME\n";
    out
}

/// `pare policy ops NAME`: what, why, options, examples.
fn op_page(d: &OpDoc) -> String {
    let mut out = format!("{}: {}\n\nWhy: {}\n", d.name, d.summary, d.why);
    out += "\nOptions:\n";
    let name_w = d
        .options
        .iter()
        .map(|o| o.name.chars().count())
        .max()
        .unwrap_or(0);
    for o in &d.options {
        let default = match &o.default {
            None => "required".to_owned(),
            Some(v) if v.is_empty() => "optional".to_owned(),
            Some(v) => format!("default {v}"),
        };
        out += &format!("  {:<name_w$}  {}  ({default})\n", o.name, o.ty);
        out += &wrap(&o.description, 6, 92);
    }
    for (i, ex) in d.examples.iter().enumerate() {
        out += &if d.examples.len() == 1 {
            "\nExample:\n".to_owned()
        } else {
            format!("\nExample {}:\n", i + 1)
        };
        for line in ex.policy.lines() {
            out += &format!("  {line}\n");
        }
        out += &format!("\n  In:  {}\n  Out: {}\n", ex.input, ex.output);
    }
    if !d.notes.is_empty() {
        out += &format!("\n{}\n", d.notes);
    }
    out
}

/// `text` wrapped at `width` columns, each line indented by `indent` spaces.
fn wrap(text: &str, indent: usize, width: usize) -> String {
    let pad = " ".repeat(indent);
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && indent + line.chars().count() + 1 + word.chars().count() > width {
            out += &format!("{pad}{line}\n");
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out += &format!("{pad}{line}\n");
    }
    out
}

/// The proxy's refusal of `file`'s `[mcp]` section, naming the entry's key when the error
/// is about a policy file an entry names.
fn mcp_error(file: &Path, e: &ConfigError) -> String {
    if let ConfigError::Load(pare::policy::LoadError::Read { path, .. }) = e
        && path != file
        && let Ok(policy) = load(file)
        && let Some(mcp) = &policy.options().mcp
        && let Some(i) = mcp.tools.iter().position(|t| {
            t.policy
                .as_ref()
                .is_some_and(|rel| file.parent().unwrap_or(Path::new(".")).join(rel) == *path)
        })
    {
        return format!(
            "`mcp.tools[{i}].policy` = {:?}: {e}",
            path.display().to_string()
        );
    }
    e.to_string()
}

/// Read and compile a policy file, with the file name in any error.
pub fn load(path: &Path) -> Result<Policy> {
    Ok(Policy::load(path)?)
}

/// The engine's shape options for `--level` and `--param` ([`ShapeOptions::resolve`]), a
/// level the policy does not have refused in the CLI's words ([`level_index`]).
pub fn shape_options(
    policy: &Policy,
    level: Option<&str>,
    params: &[(String, String)],
    tokenizer: &'static dyn pare::tokens::Tokenizer,
    notes: Option<bool>,
) -> Result<ShapeOptions<'static>> {
    level_index(policy, level)?;
    Ok(ShapeOptions::resolve(
        policy, level, params, tokenizer, notes,
    )?)
}

/// The index of the level `--level` names, or the policy's default level; an unknown name
/// is an error listing the policy's levels.
pub fn level_index(policy: &Policy, name: Option<&str>) -> Result<usize> {
    match name {
        Some(name) => policy.level_index(name).map_err(|_| {
            anyhow::anyhow!(
                "--level: unknown level `{name}`; this policy's levels: {}",
                policy.levels().join(", ")
            )
        }),
        None => Ok(policy.level_index(policy.default_level())?),
    }
}
