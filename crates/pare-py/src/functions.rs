//! The package's functions besides `Policy.shape`: `count_tokens`, `encode`, `expand`,
//! `pack`, `stats`. Each is the engine call the matching `pare` command makes, so the
//! outputs are the same; the GIL is released while the engine works.
//!
//! ```python
//! pare.count_tokens("hello world")            # 2 (o200k_base)
//! pare.encode({"rows": [{"a": 1}, {"a": 2}]}, format="toon")   # 'rows[2]{a}:\n  1\n  2'
//! pare.expand("rows[2]{a}:\n  1\n  2")        # {'rows': [{'a': 1}, {'a': 2}]}
//! ```

use pare::pack::cache::PreviewCache;
use pare::pack::response::pack_response;
use pare::render;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};

use crate::convert;
use crate::errors;
use crate::policy::{self, Given, PyPolicy};

/// The value of what `Given::read` took (parsed without the GIL); parse errors carry line
/// and column. The `Given` stays for a caller that wants the text too.
fn value_of(py: Python<'_>, given: &Given) -> PyResult<pare::Value> {
    py.detach(|| pare::json::parse(given.text()))
        .map_err(|e| errors::json_error(py, &e))
}

/// Exact tokens of `text` by a real tokenizer (`o200k_base`, `cl100k_base`, or `chars4`).
#[pyfunction]
#[pyo3(signature = (text, tokenizer="o200k_base"))]
pub fn count_tokens(
    py: Python<'_>,
    text: &Bound<'_, PyString>,
    tokenizer: &str,
) -> PyResult<usize> {
    let tok = policy::tokenizer(tokenizer)?;
    let text = text.to_cow()?;
    let text: &str = &text;
    Ok(py.detach(|| tok.count(text)))
}

/// A Python value as compact JSON bytes: what the engine reads when `Policy.shape` is
/// given it, and `json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()`
/// for the types `json.dumps` takes, plus datetime, UUID, Decimal, Enum, dataclasses and
/// pydantic models (`default`: called for anything else). The drop-in for `orjson.dumps`
/// where the JSON goes on to pare, and how its conversion's speed is measured.
#[pyfunction]
#[pyo3(signature = (value, default=None))]
pub fn dumps<'py>(
    value: &Bound<'py, PyAny>,
    default: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    crate::dump::to_bytes(value, default)
}

/// Of how many lists the converter took a part from its helper thread on this thread since
/// the last call (the tests' proof that the two-thread path ran; see `split.rs`).
#[pyfunction]
pub fn _helper_parts() -> u64 {
    crate::split::parts_taken()
}

/// For the tests, on this thread: `steal=False` makes a conversion wait for every part its
/// helper thread would write (so `_helper_parts` is exact); `late_ms` delays each helper's
/// start (so the caller writes every part itself); `paced=False` makes every big conversion
/// take the helper, where by default it does only when that has been faster (`_pace`).
/// Returns the settings before.
#[pyfunction]
#[pyo3(signature = (steal=true, late_ms=0, paced=true))]
pub fn _helper_mode(steal: bool, late_ms: u64, paced: bool) -> (bool, u64, bool) {
    crate::split::set_stealing(steal, late_ms, paced)
}

/// The converter's time per byte of big conversions so far, with its helper thread and
/// alone (`None`: not timed yet), and whether the next takes the helper (see `split/pace.rs`);
/// `reset=True` forgets the times first; `record=(with_helper, ns_per_byte)` then counts one
/// more conversion's time, as if one had run (the tests of how times are weighed).
#[pyfunction]
#[pyo3(signature = (reset=false, record=None))]
pub fn _pace(reset: bool, record: Option<(bool, f64)>) -> (Option<f64>, Option<f64>, bool) {
    crate::split::pace(reset, record)
}

/// End the converter's helper thread, if it runs (before a fork: see `split.rs`); the
/// next big conversion starts another.
#[pyfunction]
pub fn _end_helper_thread() {
    // With the GIL held throughout (the helper never takes it): no other Python thread can
    // start a conversion, and so another helper thread, before the fork.
    crate::split::end_helper_thread();
}

/// How many values `Policy.shape` wrote with the members the request leaves out left out as
/// they were written, on this thread since the last call (the tests' proof that the path
/// ran; see `dump/omitting.rs`).
#[pyfunction]
pub fn _omitted_as_written() -> u64 {
    crate::dump::written_omitting()
}

/// How many `pare.dumps` results were written in the `bytes` itself rather than copied
/// into it, on this thread since the last call (the tests' proof that the path ran; see
/// `dump/sink.rs`; always 0 in the abi3 build).
#[pyfunction]
pub fn _written_in_place() -> u64 {
    crate::dump::sink::written_in_place()
}

/// A value (or JSON text) as `json`, `pretty`, `toon` or `auto` (the cheapest lossless text
/// by the tokenizer's count), as `pare encode` writes it (without the final newline).
#[pyfunction]
#[pyo3(signature = (value, format="auto", tokenizer="o200k_base", default=None))]
pub fn encode(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    format: &str,
    tokenizer: &str,
    default: Option<&Bound<'_, PyAny>>,
) -> PyResult<String> {
    let format = policy::format(format)?;
    let tok = policy::tokenizer(tokenizer)?;
    let given = match Given::read(value, default)? {
        // A Python value's text is already its compact JSON (what `render` would write).
        Given::Dumped(text, _) if format == pare::encode::Format::Json => return Ok(text),
        given => given,
    };
    let value = value_of(py, &given)?;
    if format == pare::encode::Format::Toon {
        // TOON carries numbers as doubles: say which ones it cannot, as `pare encode` does.
        errors::warn_all(
            py,
            pare::encode::toon::inexact_numbers(&value)
                .iter()
                .map(ToString::to_string),
        )?;
    }
    Ok(py.detach(|| render(&value, format, tok)))
}

/// Any of pare's encodings (JSON, TOON, `auto` text) back to the value, as Python objects.
/// `reader`: `detect` (text that begins like JSON but is not valid JSON is an error), `json`,
/// or `toon` — as `pare expand --from`.
#[pyfunction]
#[pyo3(signature = (text, reader="detect"))]
pub fn expand<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyString>,
    reader: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let reader = match reader {
        "detect" => pare::encode::Reader::Detect,
        "json" => pare::encode::Reader::Json,
        "toon" => pare::encode::Reader::Toon,
        other => {
            return Err(errors::pare_error(
                py,
                format!("unknown reader `{other}`; allowed: detect, json, toon"),
            ));
        }
    };
    let text = text.to_cow()?;
    let body = text.strip_suffix('\n').unwrap_or(&text);
    let (value, _) = py
        .detach(|| pare::encode::expand_from(body, reader))
        .map_err(|e| errors::pare_error(py, e.to_string()))?;
    convert::to_python(py, &value)
}

/// Search results packed under a hard token budget (`pare pack`): the policy's `[pack]`
/// section names the response's fields (default: `id`, `score`, `text`, `path` under
/// `results`).
#[pyfunction]
#[pyo3(signature = (results, budget, policy=None, level=None, tokenizer="o200k_base", cursor=None, query=None, default=None))]
#[allow(clippy::too_many_arguments)]
pub fn pack(
    py: Python<'_>,
    results: &Bound<'_, PyAny>,
    budget: usize,
    policy: Option<&Bound<'_, PyPolicy>>,
    level: Option<String>,
    tokenizer: &str,
    cursor: Option<String>,
    query: Option<String>,
    default: Option<&Bound<'_, PyAny>>,
) -> PyResult<Packed> {
    let tok = policy::tokenizer(tokenizer)?;
    let (options, level) = pare::pack::response::setup(policy.map(|p| &*p.get().policy), level)
        .map_err(|e| match &e {
            pare::pack::response::SetupError::Level { name, levels } => {
                errors::bad_argument(py, "level", name, levels.clone(), e.to_string())
            }
            _ => errors::pare_error(py, e.to_string()),
        })?;
    let value = value_of(py, &Given::read(results, default)?)?;
    let packed = py
        .detach(|| {
            let mut cache = PreviewCache::new(1024);
            pack_response(
                &value,
                &options,
                &level,
                budget,
                tok,
                cursor.as_deref(),
                query.as_deref(),
                &mut cache,
            )
        })
        .map_err(|e| match e {
            pare::pack::PackError::Cursor(m) => errors::cursor_error(py, m),
            other => errors::pare_error(py, other.to_string()),
        })?;
    let metrics = serde_json::to_value(&packed.metrics).unwrap_or_default();
    Ok(Packed {
        text: packed.text,
        tokens: packed.tokens,
        next_cursor: packed.next_cursor,
        metrics,
    })
}

/// Packed search results: the text, its exact token count, the next page's cursor.
#[pyclass(module = "pare", name = "Packed", frozen)]
pub struct Packed {
    #[pyo3(get)]
    text: String,
    #[pyo3(get)]
    tokens: usize,
    #[pyo3(get)]
    next_cursor: Option<String>,
    metrics: serde_json::Value,
}

#[pymethods]
impl Packed {
    /// Seed 003's metrics, and where each chunk went and why.
    #[getter]
    fn metrics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::json_to_python(py, &self.metrics)
    }

    fn __str__(&self) -> String {
        self.text.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "Packed(tokens={}, next_cursor={:?})",
            self.tokens, self.next_cursor
        )
    }
}

/// Where a payload's tokens go (`pare stats --json`): tokens, bytes, waste, and the paths
/// with the most tokens first: `top` leaf paths (whose tokens add up), then `top`
/// container paths (each including its children's).
#[pyfunction]
#[pyo3(signature = (value, tokenizer="o200k_base", top=20, default=None))]
pub fn stats<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
    tokenizer: &str,
    top: usize,
    default: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let tok = policy::tokenizer(tokenizer)?;
    let given = Given::read(value, default)?;
    let value = value_of(py, &given)?;
    let stats = py.detach(|| {
        let mut stats = pare::stats::profile(given.text(), &value, tok);
        // The rows `pare stats --json --top N` lists: N leaves, then N containers.
        stats.paths = stats
            .top_rows(top, true, true)
            .into_iter()
            .cloned()
            .collect();
        serde_json::to_value(&stats)
    });
    let stats = stats.map_err(|e| errors::pare_error(py, e.to_string()))?;
    Ok(convert::json_to_python(py, &stats)?.cast_into::<PyDict>()?)
}
