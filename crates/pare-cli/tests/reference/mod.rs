//! Reference docs generated from the code, and the test that keeps them current: each
//! command's options (`pare … --help`, from clap) in `docs/cli.md`, the op table in
//! `docs/policy.md` and every op's reference in `docs/ops.md` (from the op registry's own
//! documentation, [`pare::ops::docs`]). Each generated text sits between two markers; the
//! test fails when one is stale and says how to rewrite it:
//! `PARE_UPDATE_DOCS=1 cargo test -p pare-llm --test integration reference_docs`. (Ruff keeps its
//! rule table and CLI help the same way.)

use std::fmt::Write as _;
use std::path::Path;

use pare::ops::docs::OpDoc;

const START: &str = "<!-- generated: PARE_UPDATE_DOCS=1 cargo test -p pare-llm --test integration reference_docs rewrites what follows; do not edit it by hand -->";
const END: &str = "<!-- end of generated text -->";

/// `pare ARGS…` run to its end: stdout.
fn pare(args: &[&str]) -> String {
    let out = assert_cmd::Command::cargo_bin("pare")
        .expect("the pare binary is built")
        .args(args)
        .env_remove("COLUMNS")
        .output()
        .expect("pare runs");
    assert!(out.status.success(), "pare {args:?} failed");
    String::from_utf8(out.stdout).expect("help is UTF-8")
}

/// The subcommands a `--help` lists under `Commands:` (not `help`).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        // A command's line; its wrapped description's lines are indented further.
        .filter_map(|l| l.strip_prefix("  ").filter(|r| !r.starts_with(' ')))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// Every command's `--help`, commands with subcommands followed by theirs.
fn cli_reference() -> String {
    let mut out = String::new();
    let mut walk = vec![Vec::<String>::new()];
    while let Some(path) = walk.pop() {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let help = pare(&args);
        let subs = subcommands(&help);
        if !path.is_empty() {
            let name = path.join(" ");
            write!(
                out,
                "### `pare {name}`\n\n```text\n{}\n```\n\n",
                help.trim_end()
            )
            .unwrap();
        }
        // Listed order: pushed in reverse, so popped as listed.
        for sub in subs.into_iter().rev() {
            let mut p = path.clone();
            p.push(sub);
            walk.push(p);
        }
    }
    out
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// The table of ops for docs/policy.md, in registry order.
fn op_table(docs: &[OpDoc]) -> String {
    let mut out = String::from("| op | what it does | options |\n|---|---|---|\n");
    for d in docs {
        let options: Vec<String> = d
            .options
            .iter()
            .filter(|o| !o.name.contains('.') && !o.name.contains('['))
            .map(|o| format!("`{}`", o.name))
            .collect();
        writeln!(
            out,
            "| [`{0}`](ops.md#{0}) | {1} | {2} |",
            d.name,
            cell(&d.summary),
            options.join(", ")
        )
        .unwrap();
    }
    out
}

/// Every op's reference for docs/ops.md: what, why, options, examples.
fn op_reference(docs: &[OpDoc]) -> String {
    let mut out = String::new();
    for d in docs {
        write!(out, "## {}\n\n{}\n\nWhy: {}\n\n", d.name, d.summary, d.why).unwrap();
        out.push_str("| option | type | default | what |\n|---|---|---|---|\n");
        for o in &d.options {
            let default = match &o.default {
                None => "required".to_owned(),
                Some(v) if v.is_empty() => "optional".to_owned(),
                Some(v) => format!("`{}`", cell(v)),
            };
            writeln!(
                out,
                "| `{}` | {} | {} | {} |",
                o.name,
                cell(&o.ty),
                default,
                cell(&o.description.replace('\n', " "))
            )
            .unwrap();
        }
        for (i, e) in d.examples.iter().enumerate() {
            write!(
                out,
                "\nExample {}:\n\n```toml\n{}```\n\nIn: `{}`  \nOut: `{}`\n",
                i + 1,
                e.policy,
                e.input,
                e.output
            )
            .unwrap();
        }
        if !d.notes.is_empty() {
            write!(out, "\n{}\n", d.notes).unwrap();
        }
        out.push('\n');
    }
    out
}

/// `text` with what is between its markers replaced by `generated`.
fn splice(file: &str, text: &str, generated: &str) -> String {
    let start = text
        .find(START)
        .unwrap_or_else(|| panic!("{file}: no start marker"))
        + START.len();
    let end = start
        + text[start..]
            .find(END)
            .unwrap_or_else(|| panic!("{file}: no end marker"));
    format!(
        "{}\n\n{}\n\n{}",
        &text[..start],
        generated.trim_end(),
        &text[end..]
    )
}

fn workspace(file: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(file)
}

fn generated() -> [(&'static str, String); 3] {
    let docs = pare::ops::docs();
    [
        ("docs/cli.md", cli_reference()),
        ("docs/policy.md", op_table(&docs)),
        ("docs/ops.md", op_reference(&docs)),
    ]
}

#[test]
fn reference_docs_are_generated_from_the_code_and_current() {
    let update = std::env::var_os("PARE_UPDATE_DOCS").is_some();
    let mut stale = Vec::new();
    for (file, generated) in generated() {
        let old = std::fs::read_to_string(workspace(file)).unwrap();
        let new = splice(file, &old, &generated);
        if old != new {
            if update {
                std::fs::write(workspace(file), new).unwrap();
            } else {
                stale.push(file);
            }
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated docs: {stale:?}. Rewrite them with \
         PARE_UPDATE_DOCS=1 cargo test -p pare-llm --test integration reference_docs, and read the diff"
    );
}

/// The check has teeth: docs/policy.md without one op's row is stale, and the table has a
/// row for every op `pare policy ops` lists.
#[test]
fn reference_docs_without_an_op_row_are_stale() {
    let table = op_table(&pare::ops::docs());
    let text = std::fs::read_to_string(workspace("docs/policy.md")).unwrap();
    let row = text
        .lines()
        .find(|l| l.starts_with("| [`pluck`]"))
        .expect("a row for pluck");
    let edited = text.replace(&format!("{row}\n"), "");
    assert_ne!(splice("docs/policy.md", &edited, &table), edited);
    for line in pare(&["policy", "ops"]).lines() {
        let Some(name) = line.split_whitespace().next() else {
            continue;
        };
        if line.starts_with(' ') || name == "Details" {
            continue;
        }
        assert!(
            table.contains(&format!("| [`{name}`]")),
            "no row for {name}"
        );
    }
}
