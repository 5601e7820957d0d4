//! Op documentation as data ([`docs`]): each op's `//!` block, embedded at build time from the
//! op's own file, read into an [`OpDoc`] (what, why, examples), with its options taken from
//! the JSON Schema of its options struct (whose descriptions are the `///` field docs). The
//! CLI (`pare policy ops`), the JSON Schema and the doc tests all read this one source, so
//! the documentation cannot drift from the code.
//!
//! The block's format (every op file opens with one):
//!
//! ````text
//! //! `limit`: keep the first N items of an array and say how many more there were.
//! //!
//! //! Why: a model rarely needs item 400 of 500 … (one or more paragraphs)
//! //!
//! //! ```toml
//! //! [[ops]]
//! //! op = "limit"
//! //! at = ["$.rels"]
//! //! max = 2
//! //! ```
//! //!
//! //! In: `{"rels":[1,2,3,4,5]}`
//! //! Out: `{"rels":[1,2],"rels_more":3}`
//! ````
//!
//! One or more examples follow `Why:`: a ```` ```toml ```` block that is a whole policy, then
//! `In:` and `Out:` lines of minified JSON in backticks, `Out` being exactly what
//! `pare compact --format json` prints for `In` at the policy's default level. Free text may
//! follow the last example.

use serde_json::Value as Json;

/// The leading `//!` lines of a source file, in bytes (used at compile time, so only the doc
/// block is embedded in the binary, not the op's source).
pub(crate) const fn doc_len(src: &str) -> usize {
    let b = src.as_bytes();
    let mut i = 0;
    while i + 3 <= b.len() && b[i] == b'/' && b[i + 1] == b'/' && b[i + 2] == b'!' {
        while i < b.len() && b[i] != b'\n' {
            i += 1;
        }
        if i < b.len() {
            i += 1;
        }
    }
    i
}

/// The first `N` bytes of `src`, as an array (a copy the binary keeps instead of `src`).
pub(crate) const fn prefix<const N: usize>(src: &str) -> [u8; N] {
    let b = src.as_bytes();
    let mut out = [0u8; N];
    let mut i = 0;
    while i < N {
        out[i] = b[i];
        i += 1;
    }
    out
}

/// The doc block of `ops/<module>.rs`, as a `&'static str` holding only that block.
macro_rules! doc_block {
    ($module:ident) => {{
        const SRC: &str = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/src/ops/",
            stringify!($module),
            ".rs"
        ));
        const BYTES: [u8; $crate::ops::docs::doc_len(SRC)] = $crate::ops::docs::prefix(SRC);
        match std::str::from_utf8(&BYTES) {
            Ok(text) => text,
            Err(_) => panic!("a doc block cut inside a character"),
        }
    }};
}
pub(crate) use doc_block;

/// One op's documentation.
#[derive(Debug, Clone, PartialEq)]
pub struct OpDoc {
    /// The op's name as written in policies (`op = "limit"`).
    pub name: &'static str,
    /// What it does, one sentence.
    pub summary: String,
    /// Why it exists (the paragraphs after `Why:`, line breaks as written).
    pub why: String,
    /// Its examples, in the order written.
    pub examples: Vec<Example>,
    /// Free text after the examples (may be empty).
    pub notes: String,
    /// The options of its `[[ops]]` table, in declaration order, `levels` last.
    pub options: Vec<OptionDoc>,
}

/// A policy, an input and what `pare compact` prints for it at the default level.
#[derive(Debug, Clone, PartialEq)]
pub struct Example {
    /// A whole policy (TOML).
    pub policy: String,
    /// Minified JSON.
    pub input: String,
    /// Minified JSON: the output, byte for byte.
    pub output: String,
}

/// One option of an op (or of a table inside it: `rules[].when`).
#[derive(Debug, Clone, PartialEq)]
pub struct OptionDoc {
    /// The option's key; an option of a table in a list is `list[].key` (`rules[].when`).
    pub name: String,
    /// `string`, `integer`, `[string]`, `"drop" | "keep"`, …
    pub ty: String,
    /// `None`: required. `Some("")`: optional, no value (its description says what then).
    pub default: Option<String>,
    /// From the field's `///` comment.
    pub description: String,
}

/// Every op's documentation, in registry order ([`super::NAMES`]).
pub fn docs() -> Vec<OpDoc> {
    super::DOCS
        .iter()
        .map(|&(name, text, schema)| build(name, text, schema))
        .collect()
}

/// One op's documentation by name; `None` for a name that is no op.
pub fn doc(name: &str) -> Option<OpDoc> {
    super::DOCS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|&(name, text, schema)| build(name, text, schema))
}

fn build(name: &'static str, text: &str, schema: fn() -> schemars::Schema) -> OpDoc {
    let options = options(&schema().to_value());
    match parse(name, text) {
        Ok(mut d) => {
            d.options = options;
            d
        }
        // Unreachable while `every_op_is_documented` passes; a message beats a panic.
        Err(e) => OpDoc {
            name,
            summary: format!("(documentation unreadable: {e})"),
            why: String::new(),
            examples: Vec::new(),
            notes: String::new(),
            options,
        },
    }
}

/// Read an op's doc block (with or without its `//!` prefixes).
pub(crate) fn parse(name: &'static str, text: &str) -> Result<OpDoc, String> {
    let lines: Vec<&str> = text
        .lines()
        .map(|l| {
            let l = l.strip_prefix("//!").unwrap_or(l);
            l.strip_prefix(' ').unwrap_or(l)
        })
        .collect();
    let mut i = 0;
    // The summary: the first paragraph, after `` `name`: ``.
    let head = format!("`{name}`: ");
    let first = lines.first().ok_or("empty doc block")?;
    let rest = first
        .strip_prefix(&head)
        .ok_or_else(|| format!("the first line must start with {head:?}"))?;
    let mut summary = vec![rest.trim()];
    i += 1;
    while i < lines.len() && !lines[i].trim().is_empty() {
        summary.push(lines[i].trim());
        i += 1;
    }
    let summary = summary.join(" ");
    skip_blank(&lines, &mut i);
    // Why: everything up to the first example.
    let why_start = lines
        .get(i)
        .and_then(|l| l.strip_prefix("Why: "))
        .ok_or("the second paragraph must start with `Why: `")?;
    let mut why = vec![why_start];
    i += 1;
    while i < lines.len() && lines[i].trim() != "```toml" {
        why.push(lines[i]);
        i += 1;
    }
    let why = why.join("\n").trim_end().to_owned();
    let mut examples = Vec::new();
    while i < lines.len() && lines[i].trim() == "```toml" {
        i += 1;
        let start = i;
        while i < lines.len() && lines[i].trim() != "```" {
            i += 1;
        }
        if i == lines.len() {
            return Err("an unclosed ```toml block".into());
        }
        let policy = lines[start..i].join("\n") + "\n";
        i += 1;
        skip_blank(&lines, &mut i);
        let input = quoted(lines.get(i).copied(), "In: ")?;
        i += 1;
        let output = quoted(lines.get(i).copied(), "Out: ")?;
        i += 1;
        examples.push(Example {
            policy,
            input,
            output,
        });
        skip_blank(&lines, &mut i);
    }
    if examples.is_empty() {
        return Err("no example (a ```toml block after the `Why:` paragraph)".into());
    }
    let notes = lines[i..].join("\n").trim().to_owned();
    Ok(OpDoc {
        name,
        summary,
        why,
        examples,
        notes,
        options: Vec::new(),
    })
}

fn skip_blank(lines: &[&str], i: &mut usize) {
    while *i < lines.len() && lines[*i].trim().is_empty() {
        *i += 1;
    }
}

/// The backticked text of a line `<label>`…``.
fn quoted(line: Option<&str>, label: &str) -> Result<String, String> {
    let what = || format!("expected a line {label}`…` after the example's policy");
    let rest = line.and_then(|l| l.strip_prefix(label)).ok_or_else(what)?;
    rest.trim()
        .strip_prefix('`')
        .and_then(|r| r.strip_suffix('`'))
        .map(str::to_owned)
        .ok_or_else(what)
}

/// The options in an op's options schema: its properties (and those of tables inside them),
/// `levels` last.
fn options(schema: &Json) -> Vec<OptionDoc> {
    let defs = schema.get("$defs").cloned().unwrap_or(Json::Null);
    let mut out = Vec::new();
    table_options(schema, &defs, "", &mut out);
    if let Some(at) = out.iter().position(|o| o.name == "levels") {
        let levels = out.remove(at);
        out.push(levels);
    }
    out
}

fn table_options(schema: &Json, defs: &Json, prefix: &str, out: &mut Vec<OptionDoc>) {
    let Some(props) = schema.get("properties").and_then(Json::as_object) else {
        return;
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Json::as_array)
        .map(|r| r.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default();
    for (name, prop) in props {
        let default = if required.contains(&name.as_str()) {
            None
        } else {
            Some(match prop.get("default") {
                None | Some(Json::Null) => String::new(),
                Some(v) => toml_value(v),
            })
        };
        let description = prop
            .get("description")
            .and_then(Json::as_str)
            .unwrap_or("")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        out.push(OptionDoc {
            name: format!("{prefix}{name}"),
            ty: type_name(prop, defs),
            default,
            description,
        });
        // A list of tables (`rules`, `tiers`): its fields as `rules[].when`.
        if let Some(table) = prop
            .get("items")
            .and_then(|items| resolve(items, defs))
            .filter(|t| t.get("properties").is_some())
        {
            table_options(table, defs, &format!("{prefix}{name}[]."), out);
        }
    }
}

/// A `$ref` resolved against `defs`, or the schema itself.
fn resolve<'a>(schema: &'a Json, defs: &'a Json) -> Option<&'a Json> {
    match schema.get("$ref").and_then(Json::as_str) {
        Some(r) => defs.get(r.strip_prefix("#/$defs/")?),
        None => Some(schema),
    }
}

/// A short name of a schema's type, as a policy writer reads it.
fn type_name(schema: &Json, defs: &Json) -> String {
    let Some(schema) = resolve(schema, defs) else {
        return "any".into();
    };
    if let Some(values) = schema.get("enum").and_then(Json::as_array) {
        return values
            .iter()
            .map(toml_value)
            .collect::<Vec<_>>()
            .join(" | ");
    }
    if let Some(c) = schema.get("const") {
        return toml_value(c);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(alts) = schema.get(key).and_then(Json::as_array) {
            let names: Vec<String> = alts
                .iter()
                .filter(|a| a.get("type").and_then(Json::as_str) != Some("null"))
                .map(|a| type_name(a, defs))
                .collect();
            return names.join(" or ");
        }
    }
    let types: Vec<&str> = match schema.get("type") {
        Some(Json::String(t)) => vec![t.as_str()],
        Some(Json::Array(ts)) => ts.iter().filter_map(Json::as_str).collect(),
        _ => Vec::new(),
    };
    let names: Vec<String> = types
        .iter()
        .filter(|t| **t != "null")
        .map(|t| match *t {
            "array" => format!(
                "[{}]",
                schema
                    .get("items")
                    .map_or("any".into(), |i| type_name(i, defs))
            ),
            "object" => match schema.get("additionalProperties") {
                Some(v @ Json::Object(_)) => format!("{{ name = {} }}", type_name(v, defs)),
                _ => "table".into(),
            },
            // A parameter reference (`NumberOrParam`).
            "string" if schema.get("pattern").and_then(Json::as_str) == Some("^\\$.+") => {
                "\"$param\"".into()
            }
            other => other.into(),
        })
        .collect();
    if names.is_empty() {
        "any".into()
    } else {
        names.join(" or ")
    }
}

/// A JSON value as TOML writes it (strings quoted, lists in brackets).
fn toml_value(v: &Json) -> String {
    match v {
        Json::Array(items) => format!(
            "[{}]",
            items.iter().map(toml_value).collect::<Vec<_>>().join(", ")
        ),
        Json::Object(map) => format!(
            "{{ {} }}",
            map.iter()
                .map(|(k, v)| format!("{k} = {}", toml_value(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

/// Text whose lines are joined into paragraphs (a line starting `- ` stays a line), for
/// readers that wrap text themselves (editors showing a schema description).
pub(crate) fn unwrap_lines(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            out.push_str("\n\n");
        } else if out.is_empty() || out.ends_with('\n') {
            out.push_str(line);
        } else if line.starts_with("- ") {
            out.push('\n');
            out.push_str(line);
        } else {
            out.push(' ');
            out.push_str(line.trim_start());
        }
    }
    out
}

#[cfg(test)]
mod tests;
