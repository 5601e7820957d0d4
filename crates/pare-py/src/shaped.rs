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
use std::sync::{Arc, OnceLock};

use pare::{Page, Tokenizer};
use pyo3::prelude::*;

use crate::convert;

/// One page of a shaped response and its record.
#[pyclass(module = "pare", name = "Shaped", frozen)]
pub struct Shaped {
    /// The page's text (the `text` getter).
    text: Arc<str>,
    /// A line for the reader after the text (page position, how to go on, why the level was
    /// lowered, what a policy removed); the budget covers text and note together.
    #[pyo3(get)]
    pub note: Option<String>,
    /// Counted when first read (a caller that never reads them never pays for a count):
    /// the input as given, `text`, `note`.
    before: Counted,
    after: Counted,
    note_count: Counted,
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

/// What the input's token count is taken from, when the engine did not count it.
pub enum Source {
    Text(Arc<str>),
    /// The caller's object (and `default=` hook), written as JSON text again when the count
    /// is first read: keeping the text would hold the input's size in memory for a count
    /// many callers never read. (An object changed in between is counted as it is then.)
    Object(Py<PyAny>, Option<Py<PyAny>>),
}

impl Source {
    /// The caller's object and `default=` hook.
    pub fn object(value: &Bound<'_, PyAny>, default: Option<&Bound<'_, PyAny>>) -> Source {
        Source::Object(value.clone().unbind(), default.map(|d| d.clone().unbind()))
    }

    /// Another handle on the same input (each page of a response counts it alike).
    pub fn clone_ref(&self, py: Python<'_>) -> Source {
        match self {
            Source::Text(t) => Source::Text(t.clone()),
            Source::Object(obj, default) => {
                Source::Object(obj.clone_ref(py), default.as_ref().map(|d| d.clone_ref(py)))
            }
        }
    }
}

/// A token count, known or counted on first read.
struct Counted {
    known: OnceLock<usize>,
    source: Option<Source>,
    tokenizer: &'static dyn Tokenizer,
}

impl Counted {
    fn new(
        known: Option<usize>,
        source: Option<Source>,
        tokenizer: &'static dyn Tokenizer,
    ) -> Counted {
        let cell = OnceLock::new();
        if let Some(n) = known {
            let _ = cell.set(n);
        }
        Counted {
            known: cell,
            source,
            tokenizer,
        }
    }

    fn get(&self, py: Python<'_>) -> PyResult<Option<usize>> {
        if let Some(n) = self.known.get() {
            return Ok(Some(*n));
        }
        let Some(source) = self.source.as_ref() else {
            return Ok(None);
        };
        let n = match source {
            Source::Text(t) => py.detach(|| self.tokenizer.count(t)),
            Source::Object(obj, default) => {
                let text =
                    crate::dump::to_json(obj.bind(py), default.as_ref().map(|d| d.bind(py)))?;
                py.detach(|| self.tokenizer.count(&text))
            }
        };
        Ok(Some(*self.known.get_or_init(|| n)))
    }
}

impl Shaped {
    /// A page; `input` is what its `tokens_before` counts when the engine did not count it.
    pub fn new(page: Page, input: Option<Source>, tokenizer: &'static dyn Tokenizer) -> Shaped {
        let r = page.record;
        let record = serde_json::to_value(&r).unwrap_or_default();
        // One copy, shared with the count of `tokens_after`.
        let text: Arc<str> = page.text.into();
        let note = page.note.as_deref().map(|n| Source::Text(n.into()));
        let note_known = r.note_tokens.or(page.note.is_none().then_some(0));
        Shaped {
            before: Counted::new(r.tokens_before, input, tokenizer),
            after: Counted::new(r.tokens_after, Some(Source::Text(text.clone())), tokenizer),
            note_count: Counted::new(note_known, note, tokenizer),
            text,
            note: page.note,
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
    /// Tokens of the input as given (its text, or a value as minified JSON).
    #[getter]
    fn tokens_before(&self, py: Python<'_>) -> PyResult<Option<usize>> {
        self.before.get(py)
    }

    /// Tokens of `text` (the note not included).
    #[getter]
    fn tokens_after(&self, py: Python<'_>) -> PyResult<Option<usize>> {
        self.after.get(py)
    }

    /// Tokens of `note`; 0 without one.
    #[getter]
    fn note_tokens(&self, py: Python<'_>) -> PyResult<Option<usize>> {
        self.note_count.get(py)
    }

    /// The whole record as a dict (the keys `pare compact --report-json` uses for a page).
    fn record<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let mut record = self.record.clone();
        if let Some(m) = record.as_object_mut() {
            m.insert("tokens_before".into(), self.before.get(py)?.into());
            m.insert("tokens_after".into(), self.after.get(py)?.into());
            m.insert("note_tokens".into(), self.note_count.get(py)?.into());
        }
        convert::json_to_python(py, &record)
    }

    /// The page's text: what `pare compact` prints with the same options (without the final
    /// newline).
    #[getter]
    fn text(&self) -> &str {
        &self.text
    }

    fn __str__(&self) -> &str {
        &self.text
    }

    fn __repr__(&self) -> String {
        format!(
            "Shaped(level={:?}, format={:?}, tokens {} -> {}, page {} of {}{})",
            self.level,
            self.format,
            self.before
                .known
                .get()
                .map_or("?".into(), |t| t.to_string()),
            self.after.known.get().map_or("?".into(), |t| t.to_string()),
            self.page,
            self.pages,
            match &self.next_cursor {
                Some(c) => format!(", next_cursor={c:?}"),
                None => String::new(),
            }
        )
    }
}
