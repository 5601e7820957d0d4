//! `pare.Shaped`: one page of a shaped response — the text a model reads and the record of
//! what happened (the engine's `Page` and `Record`, as MCP's `_meta.pare` and the CLI's
//! `--report-json` report them).
//!
//! ```python
//! out = policy.shape(payload, budget=2000)
//! print(out.text)                     # the page (str(out) is the same)
//! out.tokens_before, out.tokens_after, out.level, out.page, out.pages, out.next_cursor
//! ```

use std::collections::BTreeMap;

use pare::respond::Page;
use pyo3::prelude::*;

use crate::convert;

/// One page of a shaped response and its record.
#[pyclass(module = "pare", name = "Shaped", frozen)]
pub struct Shaped {
    /// The page's text: what `pare compact` prints with the same options (without the final
    /// newline).
    #[pyo3(get)]
    pub text: String,
    /// A line for the reader after the text (page position, how to go on, why the level was
    /// lowered, what a policy removed); the budget covers text and note together.
    #[pyo3(get)]
    pub note: Option<String>,
    /// Tokens of the input as given (its text, or a value as minified JSON).
    #[pyo3(get)]
    pub tokens_before: Option<usize>,
    /// Tokens of `text` (the note not included).
    #[pyo3(get)]
    pub tokens_after: Option<usize>,
    /// Tokens of `note`; 0 without one.
    #[pyo3(get)]
    pub note_tokens: Option<usize>,
    #[pyo3(get)]
    pub tokenizer: String,
    /// `json`, `pretty`, `toon` (what `auto` chose), or `text`.
    #[pyo3(get)]
    pub format: String,
    /// The level shown.
    #[pyo3(get)]
    pub level: String,
    /// The level asked for, when it was lowered to fit the budget.
    #[pyo3(get)]
    pub lowered_from: Option<String>,
    /// 1-based page number and the number of pages.
    #[pyo3(get)]
    pub page: usize,
    #[pyo3(get)]
    pub pages: usize,
    /// Pass as `cursor=` (with the same input and options) for the next page.
    #[pyo3(get)]
    pub next_cursor: Option<String>,
    /// `input` (the input text itself), `value`, `text` or `packed`.
    #[pyo3(get)]
    pub kind: String,
    /// What the policy removed, by kind: counts, never values.
    #[pyo3(get)]
    pub omitted: BTreeMap<String, u64>,
    #[pyo3(get)]
    pub warnings: Vec<String>,
    record: serde_json::Value,
}

impl From<Page> for Shaped {
    fn from(page: Page) -> Shaped {
        let r = page.record;
        let record = serde_json::to_value(&r).unwrap_or_default();
        Shaped {
            text: page.text,
            note: page.note,
            tokens_before: r.tokens_before,
            tokens_after: r.tokens_after,
            note_tokens: r.note_tokens,
            tokenizer: r.tokenizer,
            format: r.format.to_owned(),
            level: r.level,
            lowered_from: r.lowered_from,
            page: r.page,
            pages: r.pages,
            next_cursor: r.next_cursor,
            kind: record
                .get("kind")
                .and_then(|k| k.as_str())
                .unwrap_or("value")
                .to_owned(),
            omitted: r
                .omitted
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
            warnings: r.warnings,
            record,
        }
    }
}

#[pymethods]
impl Shaped {
    /// The whole record as a dict (the keys `pare compact --report-json` uses for a page).
    fn record<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::json_to_python(py, &self.record)
    }

    fn __str__(&self) -> String {
        self.text.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "Shaped(level={:?}, format={:?}, tokens {} -> {}, page {} of {}{})",
            self.level,
            self.format,
            self.tokens_before.map_or("?".into(), |t| t.to_string()),
            self.tokens_after.map_or("?".into(), |t| t.to_string()),
            self.page,
            self.pages,
            match &self.next_cursor {
                Some(c) => format!(", next_cursor={c:?}"),
                None => String::new(),
            }
        )
    }
}
