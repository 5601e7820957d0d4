//! `auto`: the cheapest lossless text for a value, as counted by the tokenizer.
//!
//! Three candidates for the whole document: minified JSON, TOON (the reference encoding),
//! and pare's TOON dialect, which keeps TOON's syntax and adds what TOON lacks:
//!
//! - **semi-uniform tables**: an array of objects whose keys differ from row to row is
//!   still a table — the header lists every key, and a row leaves the cell of a key it
//!   lacks empty (`a,,c`). TOON needs every row to have the same keys, or writes a list
//!   that repeats every key on every item.
//! - **constant columns said once**: a column equal on every row moves into the header as
//!   `name=value` and out of the rows.
//! - **JSON where it is cheaper**: a table cell, member or list item may be inline JSON
//!   (`[1,2]`, `{"a":1}`), so nested values don't break a table, and deep small objects
//!   don't pay a line of indentation per member.
//! - **exact numbers**: numbers are written as their input lexeme (`1.50` stays `1.50`).
//! - **flat rows**: a top-level table's rows follow its header unindented; the header's
//!   count says where they end.
//!
//! Each array and object chooses among its forms (table, keyed table, list or nested
//! members, inline JSON) by counting the tokens of each; the document then takes the
//! cheapest of the three candidates, so it is never more tokens than minified JSON or TOON
//! (where TOON reads back to the same value). When the dialect uses an extension, its
//! first line is a `#` comment — a legend a model can read and TOON parsers skip — and
//! [`expand`](crate::encode::expand) reads it back exactly.
//!
//! ```
//! use pare::encode::auto::encode_auto;
//! let tok = pare::tokens::builtin("o200k_base").unwrap();
//! let rows: Vec<String> = (1..=8)
//!     .map(|i| {
//!         let note = if i % 3 == 1 { r#","note":"draft""# } else { "" };
//!         format!(r#"{{"id":{i},"kind":"doc","title":"Report {i}"{note}}}"#)
//!     })
//!     .collect();
//! let v = pare::json::parse(&format!(r#"{{"rows":[{}]}}"#, rows.join(","))).unwrap();
//! let text = encode_auto(&v, tok);
//! assert!(text.starts_with("# pare auto: an empty cell is an absent field;"), "{text}");
//! assert!(text.contains("\nrows[8]{id,kind=doc,title,note}:\n  1,Report 1,draft\n  2,Report 2,\n"), "{text}");
//! let (back, _) = pare::encode::expand(&text).unwrap();
//! assert_eq!(back, v);
//! ```

use super::cheapest::Choice;
use super::toon;
use crate::join;
use crate::json;
use crate::tokens::Tokenizer;
use crate::value::{Map, Value};

/// The legend line's start; [`expand`](crate::encode::expand) recognises the dialect by it.
pub const LEGEND_PREFIX: &str = "# pare auto:";

const INDENT: usize = 2;
const DELIM: char = ',';

/// The cheapest of minified JSON, TOON and pare's dialect for `value`; never empty text
/// (an empty root object is `{}`).
///
/// A TOON or dialect candidate is taken only if it reads back (by [`super::expand`], the
/// reader `pare expand` uses) as
/// exactly `value`, so `auto` never loses anything: TOON carries numbers as doubles and
/// makes tables of rows that list the same keys in any order, and whatever the dialect
/// might get wrong falls back too.
pub fn encode_auto(value: &Value, tokenizer: &dyn Tokenizer) -> String {
    encode_auto_counted(value, tokenizer).0
}

/// Minified JSON at least this long has its candidates written and counted on two threads.
const PARALLEL_FROM_BYTES: usize = 16 << 10;

/// [`encode_auto`] and the token count of its text: exactly `tokenizer.count(&text)`, the
/// count `auto` chose it by, so a caller need not count the text again.
pub fn encode_auto_counted(value: &Value, tokenizer: &dyn Tokenizer) -> (String, usize) {
    let json = json::to_compact(value);
    let parallel = json.len() >= PARALLEL_FROM_BYTES;
    let toon = || {
        toon_numbers_read_back(value).then(|| {
            let text = toon::encode(value, &toon::EncodeOptions::default());
            let floor = tokenizer.count_floor(&text);
            Choice::floored(text, floor)
        })
    };
    // A large document's candidates are written on two threads (the dialect, the longest
    // to make, on one). The dialect, chosen most often, is counted whole; JSON and TOON get
    // a floor (their pieces), which mostly settles that they cost more without counting them.
    let (dialect, (json_floor, toon)) = join(
        parallel,
        || encode_dialect(value, tokenizer),
        || (tokenizer.count_floor(&json), toon()),
    );
    // The dialect's count and its read-back check, side by side.
    let (dialect_tokens, dialect_reads_back) = join(
        parallel,
        || tokenizer.count(&dialect),
        || parallel.then(|| reads_back(&dialect, value)),
    );
    let mut json = Choice::floored(json, json_floor);
    let mut order = vec![Choice::counted(dialect, dialect_tokens, dialect_reads_back)];
    // Cheapest first; on a tie the dialect stays first.
    if let Some(mut toon) = toon {
        if toon.below(dialect_tokens, tokenizer) {
            order.insert(0, toon);
        } else {
            order.push(toon);
        }
    }
    for mut choice in order {
        // `{}` is the empty document in TOON and the dialect: zero tokens, but a model
        // handed no text cannot tell an empty object from a missing answer. JSON's `{}` it can.
        if choice.text.is_empty() {
            continue;
        }
        let tokens = choice.tokens(tokenizer);
        if json.above(tokens, tokenizer)
            && choice
                .reads_back
                .unwrap_or_else(|| reads_back(&choice.text, value))
        {
            return (choice.text, tokens);
        }
    }
    let tokens = json.tokens(tokenizer);
    (json.text, tokens)
}

fn reads_back(text: &str, value: &Value) -> bool {
    // By `pare expand`'s own reader: a text the decoder alone reads right can still be read
    // otherwise by `expand` (a root string of U+00A0 was taken for a blank document).
    super::expand(text).is_ok_and(|(back, _)| back == *value)
}

/// pare's dialect, with its legend line when it uses an extension.
pub fn encode_dialect(value: &Value, tokenizer: &dyn Tokenizer) -> String {
    let mut enc = Dialect {
        tok: tokenizer,
        used: Used {
            exact_numbers: has_number_toon_misreads(value),
            ..Used::default()
        },
    };
    let body = enc.root(value);
    let legend = enc.used.legend();
    if legend.is_empty() {
        body
    } else {
        format!("{legend}\n{body}")
    }
}

/// Whether `value` holds a number whose lexeme standard TOON reads as something else: a
/// negative zero (`-0`, `-0.0`, `-1e-400` read as `0`) or one that overflows a double
/// (`1e999`, read as a string). Written exactly, such text needs the legend.
fn has_number_toon_misreads(value: &Value) -> bool {
    match value {
        Value::Number(n) => {
            let s = n.as_str();
            (s.starts_with("-0") || s.contains(['e', 'E']))
                && s.parse::<f64>()
                    .is_ok_and(|f| f.is_infinite() || (f == 0.0 && s.starts_with('-')))
        }
        Value::Array(items) => items.iter().any(has_number_toon_misreads),
        Value::Object(map) => map.values().any(has_number_toon_misreads),
        _ => false,
    }
}

/// A cheap first check before TOON is tried at all: its numbers print as JavaScript would
/// (TOON goes through doubles), and no object has integer-like keys out of JS order.
fn toon_numbers_read_back(value: &Value) -> bool {
    match value {
        Value::Number(n) => {
            let mut s = String::new();
            toon::push_js_number(&mut s, n.as_str());
            s == n.as_str()
        }
        Value::Array(items) => items.iter().all(toon_numbers_read_back),
        Value::Object(map) => toon::in_js_order(map) && map.values().all(toon_numbers_read_back),
        _ => true,
    }
}

/// Which extensions the text uses, for the legend.
#[derive(Default)]
struct Used {
    absent: bool,
    constant: bool,
    json: bool,
    whole_rows: bool,
    /// A number lexeme standard TOON reads otherwise (`-0` as `0`, `1e999` as a string).
    exact_numbers: bool,
    /// A table as a list item (`- [2]{a,b}:`), which TOON doesn't have.
    item_tables: bool,
    /// A top-level table's rows at the header's own indentation (no indent to pay per row).
    flat_rows: bool,
}

impl Used {
    fn legend(&self) -> String {
        let mut parts = Vec::new();
        if self.absent {
            parts.push("an empty cell is an absent field");
        }
        if self.constant {
            parts.push("name=value in a header is that value on every row");
        }
        if self.json || self.whole_rows {
            parts.push("[…] and {…} values are JSON");
        }
        if self.whole_rows {
            parts.push("a row `- {…}` is the whole item");
        }
        if self.exact_numbers {
            parts.push("numbers exactly as written");
        }
        if self.flat_rows {
            parts.push("a top-level table's rows may be unindented");
        }
        if parts.is_empty() && self.item_tables {
            parts.push("TOON with tables in list items");
        }
        if parts.is_empty() {
            return String::new();
        }
        format!("{LEGEND_PREFIX} {}", parts.join("; "))
    }
}

/// The forms an array of not only primitives can take.
#[derive(Clone, Copy)]
enum ArrayForm {
    Table,
    List,
    Json,
}

/// A top-level table of at least this many rows may write them unindented …
const FLAT_ROWS_FROM: usize = 16;
/// … when that saves more tokens than the legend's words for it cost.
const FLAT_ROWS_LEGEND_TOKENS: usize = 12;

/// Arrays longer than twice this choose their form on this many first items.
const SAMPLE_ITEMS: usize = 64;

/// A table column: a leaf (maybe constant), or a nested object group with its own columns.
enum Column<'a> {
    Leaf {
        name: &'a str,
        constant: Option<&'a Value>,
    },
    Group {
        name: &'a str,
        columns: Vec<Column<'a>>,
    },
}

struct Dialect<'t> {
    tok: &'t dyn Tokenizer,
    used: Used,
}

/// A rendering and the extensions it would use if chosen.
struct Candidate {
    text: String,
    used: Used,
}

impl Dialect<'_> {
    fn root(&mut self, value: &Value) -> String {
        match value {
            Value::Object(map) if map.is_empty() => String::new(),
            Value::Object(map) => {
                let mut candidates = vec![self.capture(|d| d.members(map, 0))];
                if let Some(c) = self.capture_opt(|d| d.keyed_table(None, map, 0)) {
                    candidates.push(c);
                }
                self.choose(candidates)
            }
            Value::Array(items) => self.array(None, items, 0),
            Value::String(s) if s.starts_with('\u{feff}') => {
                let mut out = String::new();
                toon::push_quoted(&mut out, s);
                out
            }
            primitive => primitive_text(primitive),
        }
    }

    /// Runs `render` with a fresh extension record, returning the text and what it used.
    fn capture(&mut self, render: impl FnOnce(&mut Self) -> String) -> Candidate {
        let outer = std::mem::take(&mut self.used);
        let text = render(self);
        let used = std::mem::replace(&mut self.used, outer);
        Candidate { text, used }
    }

    fn capture_opt(
        &mut self,
        render: impl FnOnce(&mut Self) -> Option<String>,
    ) -> Option<Candidate> {
        let outer = std::mem::take(&mut self.used);
        let text = render(self);
        let used = std::mem::replace(&mut self.used, outer);
        text.map(|text| Candidate { text, used })
    }

    /// The candidate with the fewest tokens (the first on a tie); records its extensions.
    fn choose(&mut self, candidates: Vec<Candidate>) -> String {
        let mut best: Option<(usize, Candidate)> = None;
        if candidates.len() == 1 {
            best = candidates.into_iter().next().map(|c| (0, c));
        } else {
            for c in candidates {
                let tokens = self.tok.count(&c.text);
                if best.as_ref().is_none_or(|(t, _)| tokens < *t) {
                    best = Some((tokens, c));
                }
            }
        }
        let (_, chosen) = best.expect("at least one candidate");
        self.used.absent |= chosen.used.absent;
        self.used.constant |= chosen.used.constant;
        self.used.json |= chosen.used.json;
        self.used.whole_rows |= chosen.used.whole_rows;
        self.used.exact_numbers |= chosen.used.exact_numbers;
        self.used.item_tables |= chosen.used.item_tables;
        self.used.flat_rows |= chosen.used.flat_rows;
        chosen.text
    }

    /// An object's members at `depth`, a block of lines.
    fn members(&mut self, map: &Map, depth: usize) -> String {
        let mut out = String::new();
        for (key, value) in map.iter() {
            if !out.is_empty() {
                out.push('\n');
            }
            let block = self.member(key, value, depth);
            out.push_str(&block);
        }
        out
    }

    fn member(&mut self, key: &str, value: &Value, depth: usize) -> String {
        match value {
            Value::Array(items) => self.array(Some(key), items, depth),
            Value::Object(map) => {
                let mut head = indent(depth);
                push_key(&mut head, key);
                head.push(':');
                if map.is_empty() {
                    return head;
                }
                let mut candidates = vec![self.capture(|d| {
                    let body = d.members(map, depth + 1);
                    format!("{head}\n{body}")
                })];
                if let Some(c) = self.capture_opt(|d| d.keyed_table(Some(key), map, depth)) {
                    candidates.push(c);
                }
                candidates.push(inline_json(&head, json::to_compact(value)));
                self.choose(candidates)
            }
            primitive => {
                let mut line = indent(depth);
                push_key(&mut line, key);
                line.push_str(": ");
                push_value(&mut line, primitive);
                line
            }
        }
    }

    /// An array as a member (`key` given), the root, or (via [`Self::list_item`]) an item.
    fn array(&mut self, key: Option<&str>, items: &[Value], depth: usize) -> String {
        let mut head = indent(depth);
        if items.is_empty() {
            if let Some(key) = key {
                push_key(&mut head, key);
                head.push_str(": ");
            }
            head.push_str("[]");
            return head;
        }
        if items.iter().all(is_primitive) {
            push_inline_array(&mut head, key, items);
            return head;
        }
        // A long array takes the form that is cheapest on its first items: counting every
        // candidate of every level of a large document would tokenize it many times over.
        // (The document's final choice among JSON, TOON and the dialect is counted whole.)
        let forms: &[ArrayForm] = match key {
            Some(_) => &[ArrayForm::Table, ArrayForm::List, ArrayForm::Json],
            None => &[ArrayForm::Table, ArrayForm::List],
        };
        if items.len() > 2 * SAMPLE_ITEMS {
            let sample = &items[..SAMPLE_ITEMS];
            let mut ranked: Vec<(usize, ArrayForm)> = forms
                .iter()
                .filter_map(|&form| {
                    let c = self.capture_opt(|d| d.array_as(form, key, sample, depth))?;
                    Some((self.tok.count(&c.text), form))
                })
                .collect();
            ranked.sort_by_key(|(tokens, _)| *tokens);
            for (_, form) in ranked {
                if let Some(c) = self.capture_opt(|d| d.array_as(form, key, items, depth)) {
                    return self.choose(vec![c]);
                }
            }
        }
        let candidates = forms
            .iter()
            .filter_map(|&form| self.capture_opt(|d| d.array_as(form, key, items, depth)))
            .collect();
        self.choose(candidates)
    }

    /// A non-empty array of not only primitives in one form, if it can take that form.
    fn array_as(
        &mut self,
        form: ArrayForm,
        key: Option<&str>,
        items: &[Value],
        depth: usize,
    ) -> Option<String> {
        let mut text = indent(depth);
        match form {
            ArrayForm::Table => self.table(key, items, depth),
            ArrayForm::List => {
                push_header(&mut text, key, items.len(), false);
                for item in items {
                    text.push('\n');
                    let block = self.list_item(item, depth + 1);
                    text.push_str(&block);
                }
                Some(text)
            }
            ArrayForm::Json => {
                push_key(&mut text, key?);
                text.push_str(": ");
                text.push_str(&json_of_items(items));
                self.used.json = true;
                Some(text)
            }
        }
    }

    /// `- item` at `depth`.
    fn list_item(&mut self, value: &Value, depth: usize) -> String {
        let dash = format!("{}- ", indent(depth));
        match value {
            Value::Object(map) if map.is_empty() => format!("{}-", indent(depth)),
            Value::Object(map) => {
                let nested = self.capture(|d| {
                    let block = d.members(map, depth + 1);
                    // The first member's line takes the dash; the rest stay one level in.
                    format!("{dash}{}", &block[(depth + 1) * INDENT..])
                });
                let json = inline_json(dash.trim_end(), json::to_compact(value));
                self.choose(vec![nested, json])
            }
            Value::Array(items) if items.iter().all(is_primitive) => {
                let mut line = dash;
                push_inline_array(&mut line, None, items);
                line
            }
            Value::Array(items) => {
                // `- [N]:` with the items one level below the hyphen, as TOON lays it out.
                let list = self.capture(|d| {
                    let block = d.array(None, items, depth);
                    let body = &block[depth * INDENT..];
                    // `[N]{…}:` here is a keyless table in a list item, which TOON lacks.
                    d.used.item_tables |= body
                        .split_once(']')
                        .is_some_and(|(_, r)| r.starts_with('{'));
                    format!("{dash}{body}")
                });
                let json = inline_json(dash.trim_end(), json::to_compact(value));
                self.choose(vec![list, json])
            }
            primitive => {
                let mut line = dash;
                push_primitive(&mut line, primitive);
                line
            }
        }
    }

    /// `key[N]{columns}:` and a row per item, if the items can be a table.
    fn table(&mut self, key: Option<&str>, items: &[Value], depth: usize) -> Option<String> {
        let rows: Vec<&Map> = items.iter().map(Value::as_object).collect::<Option<_>>()?;
        let (order, agrees) = key_order(&rows);
        // A row that lists its keys against the table's order is written whole, as JSON.
        let regular: Vec<&Map> = rows
            .iter()
            .zip(&agrees)
            .filter(|(_, a)| **a)
            .map(|(r, _)| *r)
            .collect();
        if regular.is_empty() {
            return None;
        }
        let order: Vec<&str> = order
            .into_iter()
            .filter(|k| regular.iter().any(|r| r.contains_key(k)))
            .collect();
        let columns = columns_in_order(&regular, &order)?;
        let mut text = indent(depth);
        push_header(&mut text, key, rows.len(), false);
        text.pop();
        self.push_columns(&mut text, &columns);
        text.push(':');
        // At the top level the header's count says where the rows end, so they need no
        // indent. Worth it when the tokens saved (measured on the first rows) pay for the
        // legend's words; only such a table is written flat first and measured.
        let may_flat = depth == 0 && key.is_some() && rows.len() >= FLAT_ROWS_FROM;
        let row_indent = indent(depth + 1);
        let lead = if may_flat { "" } else { row_indent.as_str() };
        let rows_start = text.len() + 1;
        let mut sample_end = rows_start;
        for (n, (row, agrees)) in rows.iter().zip(agrees).enumerate() {
            text.push('\n');
            text.push_str(lead);
            if agrees {
                self.push_row(&mut text, row, &columns);
            } else {
                self.used.whole_rows = true;
                text.push_str("- ");
                write_object(row, &mut text);
            }
            if n < SAMPLE_ITEMS {
                sample_end = text.len();
            }
        }
        if may_flat {
            // A row never holds a raw newline, so each one starts a row.
            let indented = |rows: &str| {
                format!(
                    "{row_indent}{}",
                    rows.replace('\n', &format!("\n{row_indent}"))
                )
            };
            let sample = &text[rows_start..sample_end];
            let sampled = rows.len().min(SAMPLE_ITEMS);
            let saved = self
                .tok
                .count(&indented(sample))
                .saturating_sub(self.tok.count(sample));
            if saved * rows.len() / sampled > FLAT_ROWS_LEGEND_TOKENS {
                self.used.flat_rows = true;
            } else {
                let rows_text = indented(&text[rows_start..]);
                text.truncate(rows_start);
                text.push_str(&rows_text);
            }
        }
        Some(text)
    }

    /// `key[N:]{columns}:` and a row per entry (`entryKey: cells`), for an object whose
    /// values are all non-empty objects (two or more).
    fn keyed_table(&mut self, key: Option<&str>, map: &Map, depth: usize) -> Option<String> {
        if map.len() < 2 {
            return None;
        }
        let rows: Vec<&Map> = map
            .values()
            .map(|v| v.as_object().filter(|m| !m.is_empty()))
            .collect::<Option<_>>()?;
        let columns = table_columns(&rows)?;
        let mut text = indent(depth);
        push_header(&mut text, key, rows.len(), true);
        text.pop();
        self.push_columns(&mut text, &columns);
        text.push(':');
        for ((entry_key, _), row) in map.iter().zip(&rows) {
            text.push('\n');
            text.push_str(&indent(depth + 1));
            push_key(&mut text, entry_key);
            text.push_str(": ");
            self.push_row(&mut text, row, &columns);
        }
        Some(text)
    }

    fn push_columns(&mut self, out: &mut String, columns: &[Column]) {
        out.push('{');
        for (i, column) in columns.iter().enumerate() {
            if i > 0 {
                out.push(DELIM);
            }
            match column {
                Column::Leaf { name, constant } => {
                    push_key(out, name);
                    if let Some(value) = constant {
                        self.used.constant = true;
                        out.push('=');
                        // Quoted as TOON quotes: a header's own `:` ends it.
                        match value {
                            Value::Array(_) | Value::Object(_) => {
                                self.used.json = true;
                                json::write_compact(value, out);
                            }
                            primitive => push_primitive(out, primitive),
                        }
                    }
                }
                Column::Group { name, columns } => {
                    push_key(out, name);
                    self.push_columns(out, columns);
                }
            }
        }
        out.push('}');
    }

    fn push_row(&mut self, out: &mut String, row: &Map, columns: &[Column]) {
        let mut first = true;
        self.push_cells(out, row, columns, &mut first);
    }

    fn push_cells(&mut self, out: &mut String, row: &Map, columns: &[Column], first: &mut bool) {
        for (position, column) in columns.iter().enumerate() {
            match column {
                Column::Leaf {
                    constant: Some(_), ..
                } => {}
                Column::Leaf {
                    name,
                    constant: None,
                } => {
                    if !*first {
                        out.push(DELIM);
                    }
                    *first = false;
                    self.push_cell(out, member_at(row, position, name));
                }
                Column::Group { name, columns } => {
                    if let Some(Value::Object(inner)) = member_at(row, position, name) {
                        self.push_cells(out, inner, columns, first);
                    }
                }
            }
        }
    }

    /// A cell: a primitive as TOON writes it, anything else as JSON, nothing if absent.
    fn push_cell(&mut self, out: &mut String, value: Option<&Value>) {
        match value {
            None => self.used.absent = true,
            Some(v @ (Value::Array(_) | Value::Object(_))) => {
                self.used.json = true;
                json::write_compact(v, out);
            }
            Some(primitive) => push_primitive(out, primitive),
        }
    }
}

/// Columns for `rows`, or `None` when they can't make a table: keys in an order every row
/// agrees with; a column present and equal on every row (of two or more) is constant; a
/// column present on every row as a non-empty object becomes a group of its own columns.
/// Every row must have at least one cell written, so no row line is blank.
fn table_columns<'a>(rows: &[&'a Map]) -> Option<Vec<Column<'a>>> {
    let (order, agrees) = key_order(rows);
    if agrees.contains(&false) {
        return None;
    }
    columns_in_order(rows, &order)
}

/// [`table_columns`] for rows known to agree with `order`.
fn columns_in_order<'a>(rows: &[&'a Map], order: &[&'a str]) -> Option<Vec<Column<'a>>> {
    let mut columns = Vec::with_capacity(order.len());
    for (position, name) in order.iter().enumerate() {
        let values: Vec<&Value> = rows
            .iter()
            .filter_map(|r| member_at(r, position, name))
            .collect();
        let everywhere = values.len() == rows.len();
        if everywhere && rows.len() >= 2 && values.iter().all(|v| *v == values[0]) {
            columns.push(Column::Leaf {
                name,
                constant: Some(values[0]),
            });
            continue;
        }
        if everywhere {
            let inner: Option<Vec<&Map>> = values
                .iter()
                .map(|v| v.as_object().filter(|m| !m.is_empty()))
                .collect();
            if let Some(inner) = inner
                && let Some(sub) = table_columns(&inner)
            {
                columns.push(Column::Group { name, columns: sub });
                continue;
            }
        }
        columns.push(Column::Leaf {
            name,
            constant: None,
        });
    }
    let written = written_cells(&columns);
    if written == 0 {
        return None;
    }
    // With one written cell, an absent value would leave a blank row.
    if written == 1 && rows.iter().any(|r| !writes_a_cell(r, &columns)) {
        return None;
    }
    Some(columns)
}

fn written_cells(columns: &[Column]) -> usize {
    columns
        .iter()
        .map(|c| match c {
            Column::Leaf { constant, .. } => usize::from(constant.is_none()),
            Column::Group { columns, .. } => written_cells(columns),
        })
        .sum()
}

fn writes_a_cell(row: &Map, columns: &[Column]) -> bool {
    columns.iter().any(|c| match c {
        Column::Leaf {
            name,
            constant: None,
        } => row.contains_key(name),
        Column::Leaf { .. } => false,
        Column::Group { name, columns } => {
            matches!(row.get(name), Some(Value::Object(inner)) if writes_a_cell(inner, columns))
        }
    })
}

/// The union of the rows' keys in an order that as many rows as possible agree with:
/// for each pair of keys, the order most rows put them in; then a topological order of
/// those preferences, ties (and cycles) broken by first appearance. Returns the order and,
/// per row, whether the row agrees with it.
fn key_order<'a>(rows: &[&'a Map]) -> (Vec<&'a str>, Vec<bool>) {
    use std::collections::{BTreeSet, HashMap};
    let mut index: HashMap<&'a str, usize> = HashMap::new();
    let mut names: Vec<&'a str> = Vec::new();
    // Each distinct key sequence once, with how many rows have it.
    let mut sequences: HashMap<Vec<usize>, usize> = HashMap::new();
    let mut row_ids: Vec<Vec<usize>> = Vec::with_capacity(rows.len());
    for row in rows {
        let ids: Vec<usize> = row
            .keys()
            .map(|key| {
                *index.entry(key.as_str()).or_insert_with(|| {
                    names.push(key.as_str());
                    names.len() - 1
                })
            })
            .collect();
        *sequences.entry(ids.clone()).or_default() += 1;
        row_ids.push(ids);
    }
    // votes[(a, b)] with a < b: rows putting a first minus rows putting b first.
    let mut votes: HashMap<(usize, usize), i64> = HashMap::new();
    for (ids, &weight) in &sequences {
        for (i, &a) in ids.iter().enumerate() {
            for &b in &ids[i + 1..] {
                let (key, sign) = if a < b { ((a, b), 1) } else { ((b, a), -1) };
                *votes.entry(key).or_default() += sign * weight as i64;
            }
        }
    }
    let n = names.len();
    let mut after: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut indegree = vec![0usize; n];
    for (&(a, b), &v) in &votes {
        let (from, to) = match v.cmp(&0) {
            std::cmp::Ordering::Greater => (a, b),
            std::cmp::Ordering::Less => (b, a),
            std::cmp::Ordering::Equal => continue,
        };
        after[from].push(to);
        indegree[to] += 1;
    }
    // Kahn's algorithm, earliest first appearance first; on a cycle, take the earliest
    // remaining key as if its remaining predecessors were placed.
    let mut ready: BTreeSet<usize> = (0..n).filter(|&i| indegree[i] == 0).collect();
    let mut placed = vec![false; n];
    let mut order = Vec::with_capacity(n);
    while order.len() < n {
        let next = match ready.pop_first() {
            Some(id) => id,
            None => (0..n).find(|&i| !placed[i]).expect("a key is left"),
        };
        if placed[next] {
            continue;
        }
        placed[next] = true;
        order.push(next);
        for &succ in &after[next] {
            indegree[succ] = indegree[succ].saturating_sub(1);
            if indegree[succ] == 0 && !placed[succ] {
                ready.insert(succ);
            }
        }
    }
    let mut rank = vec![0; n];
    for (r, &id) in order.iter().enumerate() {
        rank[id] = r;
    }
    let agrees = row_ids
        .iter()
        .map(|ids| ids.windows(2).all(|w| rank[w[0]] < rank[w[1]]))
        .collect();
    (order.into_iter().map(|id| names[id]).collect(), agrees)
}

fn member_at<'a>(map: &'a Map, position: usize, key: &str) -> Option<&'a Value> {
    match map.entries().get(position) {
        Some((k, v)) if k == key => Some(v),
        _ => map.get(key),
    }
}

fn is_primitive(v: &Value) -> bool {
    !matches!(v, Value::Array(_) | Value::Object(_))
}

fn indent(depth: usize) -> String {
    " ".repeat(depth * INDENT)
}

fn push_key(out: &mut String, key: &str) {
    toon::push_key(out, key);
}

/// A primitive as TOON writes it, except that numbers keep their lexeme.
fn push_primitive(out: &mut String, value: &Value) {
    match value {
        Value::Number(n) => out.push_str(n.as_str()),
        other => toon::push_primitive(out, other, DELIM),
    }
}

/// [`push_primitive`] for a member's value, where a `:` in a string is not structural and
/// needs no quotes (`2026-02-17T09:00:00`, `https://…`) — TOON decoders read it back as is.
/// (Not in table cells: TOON tells a row from a `key: value` line by its first colon.)
fn push_value(out: &mut String, value: &Value) {
    match value {
        Value::String(s) if toon::is_safe_unquoted_where(s, DELIM, true) => out.push_str(s),
        other => push_primitive(out, other),
    }
}

fn primitive_text(value: &Value) -> String {
    let mut s = String::new();
    push_primitive(&mut s, value);
    s
}

/// `key[N]: a,b,c` onto `out`.
fn push_inline_array(out: &mut String, key: Option<&str>, items: &[Value]) {
    push_header(out, key, items.len(), false);
    out.push(' ');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(DELIM);
        }
        push_primitive(out, item);
    }
}

/// `key[N]:` (or `key[N:]:` for a keyed table; the caller may pop the `:` to add columns).
fn push_header(out: &mut String, key: Option<&str>, len: usize, keyed: bool) {
    if let Some(key) = key {
        push_key(out, key);
    }
    out.push('[');
    out.push_str(&len.to_string());
    if keyed {
        out.push(':');
    }
    out.push_str("]:");
}

/// The compact JSON of an object.
fn write_object(map: &Map, out: &mut String) {
    out.push('{');
    for (i, (k, v)) in map.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        json::write_string(k, out);
        out.push(':');
        json::write_compact(v, out);
    }
    out.push('}');
}

/// `head`, a space and `json`: a value written as inline JSON.
fn inline_json(head: &str, json: String) -> Candidate {
    Candidate {
        text: format!("{head} {json}"),
        used: Used {
            json: true,
            ..Used::default()
        },
    }
}

fn json_of_items(items: &[Value]) -> String {
    let mut out = String::from("[");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        json::write_compact(item, &mut out);
    }
    out.push(']');
    out
}
