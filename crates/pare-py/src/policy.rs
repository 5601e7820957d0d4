//! `pare.Policy`: a compiled policy, and `shape`, the engine's response pipeline
//! (`pare::respond()`, the entry point every door calls) for a Python caller.
//!
//! A policy keeps the text it was compiled from (and the file's path, for the `policy =
//! "…"` references of its `[mcp]` and `[http]` sections), so it pickles by that text and
//! compiles again where it is unpickled: a Dask or Ray worker needs no file.
//!
//! ```python
//! policy = pare.Policy.from_file("entities.toml")
//! out = policy.shape({"entities": [...]}, budget=2000)
//! out.text, out.tokens_before, out.tokens_after, out.page, out.pages, out.next_cursor
//! ```

use std::path::PathBuf;
use std::sync::Arc;

use pare::Format;
use pare::{Budget, Hint, Input, Request, respond};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyString, PyTuple};

use crate::convert;
use crate::dump;
use crate::errors;
use crate::shaped::{Shaped, Source};

/// A compiled pare policy (TOML or JSON): which ops shape a payload, at which levels.
#[pyclass(module = "pare", name = "Policy", frozen)]
pub struct PyPolicy {
    pub policy: Arc<pare::Policy>,
    /// The text it was compiled from; `None`: the built-in policy.
    source: Option<String>,
    /// The file it was read from.
    path: Option<PathBuf>,
}

impl PyPolicy {
    pub fn compile(py: Python<'_>, source: String, path: Option<PathBuf>) -> PyResult<PyPolicy> {
        let file = path.as_ref().map(|p| p.display().to_string());
        let policy = pare::Policy::parse(&source)
            .map_err(|e| errors::policy_error_in(py, &e, file.as_deref()))?;
        Ok(PyPolicy {
            policy: Arc::new(policy),
            source: Some(source),
            path,
        })
    }

    /// The text it was compiled from; `None`: the built-in policy.
    pub fn source_text(&self) -> Option<&str> {
        self.source.as_deref()
    }

    /// The policy compiled again (the `[mcp]` and `[http]` configurations take one by value).
    pub fn recompile(&self, py: Python<'_>) -> PyResult<pare::Policy> {
        match &self.source {
            Some(text) => pare::Policy::parse(text).map_err(|e| errors::policy_error(py, &e)),
            None => Ok(pare::Policy::builtin_default()),
        }
    }

    /// Reads and compiles the policy files its `[mcp]`/`[http]` entries name (`policy =
    /// "other.toml"`), relative to its file (the engine reads no files).
    pub fn resolver(&self) -> impl FnMut(&str) -> Result<pare::Policy, std::io::Error> + use<> {
        let dir = self.dir();
        move |rel: &str| {
            pare::Policy::load(&dir.join(rel)).map_err(|e| {
                let kind = match &e {
                    pare::policy::LoadError::Read { error, .. } => error.kind(),
                    _ => std::io::ErrorKind::Other,
                };
                std::io::Error::new(kind, e.to_string())
            })
        }
    }

    /// The folder its `policy = "…"` references are relative to.
    pub fn dir(&self) -> PathBuf {
        self.path
            .as_ref()
            .and_then(|p| p.parent())
            .map(|d| d.to_path_buf())
            .unwrap_or_else(|| PathBuf::from("."))
    }
}

/// What a caller may hand `shape`: JSON text (`str`, `bytes`, `bytearray`), or a Python
/// value, which is written as JSON text ([`crate::dump`]) for the engine to read as it reads
/// any text (so a dict gives what `pare compact` gives for its `json.dumps`).
pub enum Given {
    /// Shared, so that `Shaped` can count the input's tokens later without a second copy.
    Text(Arc<str>),
    /// The text of a Python value, and whether no object in it can repeat a key (every
    /// key an exact `str`: a `str` subclass may make two keys of one text).
    Dumped(String, bool),
}

impl Given {
    /// `str`, `bytes`, `bytearray` are JSON text; anything else a value (`default`: called
    /// for an object of no type pare writes, as `json.dumps(default=...)` does).
    pub fn read(obj: &Bound<'_, PyAny>, default: Option<&Bound<'_, PyAny>>) -> PyResult<Given> {
        if let Ok(s) = obj.cast::<PyString>() {
            return Ok(Given::Text(Arc::from(s.to_cow()?.as_ref())));
        }
        // `bytes` is read where it lies; a `bytearray` is copied first (it can change).
        let bytes: Option<std::borrow::Cow<[u8]>> = if let Ok(b) = obj.cast::<PyBytes>() {
            Some(b.as_bytes().into())
        } else if let Ok(b) = obj.cast::<PyByteArray>() {
            Some(b.to_vec().into())
        } else {
            None
        };
        if let Some(bytes) = bytes {
            return std::str::from_utf8(&bytes)
                .map(|t| Given::Text(t.into()))
                .map_err(|e| errors::not_utf8(obj.py(), e.valid_up_to()));
        }
        let dumped = dump::dump(obj, default)?;
        Ok(Given::Dumped(dumped.text, dumped.keys_unique))
    }

    /// The engine's input: JSON text either way.
    pub fn input(&self) -> Input<'_> {
        Input::Json(self.text())
    }

    /// The engine may take the text as the door's own ([`pare::Request::written_by_door`]).
    pub fn written_by_door(&self) -> bool {
        matches!(self, Given::Dumped(_, true))
    }

    pub fn text(&self) -> &str {
        match self {
            Given::Text(t) => t,
            Given::Dumped(t, _) => t,
        }
    }
}

/// The bytes `shape_jsonl` is handed, held so that the GIL can be let go while they are read:
/// `bytes` and `str` where they lie (both immutable); a `bytearray` or `memoryview` copied
/// first (it could change meanwhile).
enum Block {
    Bytes(pyo3::pybacked::PyBackedBytes),
    Str(pyo3::pybacked::PyBackedStr),
    Copied(Vec<u8>),
}

impl Block {
    fn read(data: &Bound<'_, PyAny>) -> PyResult<Block> {
        if let Ok(s) = data.cast::<PyString>() {
            return Ok(Block::Str(s.clone().try_into()?));
        }
        if let Ok(b) = data.cast::<PyBytes>() {
            return Ok(Block::Bytes(b.clone().into()));
        }
        if let Ok(b) = data.cast::<PyByteArray>() {
            return Ok(Block::Copied(b.to_vec()));
        }
        if data.cast::<pyo3::types::PyMemoryView>().is_ok() {
            let bytes = data.call_method0("tobytes")?;
            return Ok(Block::Bytes(bytes.cast_into::<PyBytes>()?.into()));
        }
        Err(errors::wrong_type(
            "data",
            "bytes, bytearray, memoryview or str",
            data,
        ))
    }

    fn bytes(&self) -> &[u8] {
        match self {
            Block::Bytes(b) => b,
            Block::Str(s) => s.as_bytes(),
            Block::Copied(v) => v,
        }
    }
}

/// Parameter overrides as the engine takes them: `{"maxGapMinutes": 5}` → `("maxGapMinutes", "5")`.
pub fn param_overrides(params: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<(String, String)>> {
    let Some(params) = params else {
        return Ok(Vec::new());
    };
    params
        .iter()
        .map(|(k, v)| {
            let name: String = k
                .extract()
                .map_err(|_| errors::wrong_type("a parameter name", "str", &k))?;
            let text = if let Ok(s) = v.cast::<PyString>() {
                s.to_cow()?.into_owned()
            } else {
                match dump::to_value(&v, None)? {
                    pare::Value::Bool(b) => b.to_string(),
                    pare::Value::Number(n) => n.as_str().to_owned(),
                    _ => {
                        return Err(PyTypeError::new_err(format!(
                            "params[{name:?}] must be str, int, float or bool"
                        )));
                    }
                }
            };
            Ok((name, text))
        })
        .collect()
}

pub fn format(name: &str) -> PyResult<Format> {
    Format::parse(name)
        .ok_or_else(|| errors::bad_option("format", name, "json, pretty, toon, auto"))
}

pub fn tokenizer(name: &str) -> PyResult<&'static dyn pare::tokens::Tokenizer> {
    pare::tokens::builtin(name)
        .map_err(|_| errors::bad_option("tokenizer", name, "o200k_base, cl100k_base, chars4"))
}

/// The options of one `shape`/`pages` call.
pub struct Options {
    pub level: Option<String>,
    pub params: Vec<(String, String)>,
    pub format: Format,
    pub tokenizer: &'static dyn pare::tokens::Tokenizer,
    pub budget: Option<usize>,
    pub cursor: Option<String>,
    pub omitted: Option<bool>,
    /// The caller's question, for a `[pack]` policy.
    pub query: Option<String>,
    /// Only these fields of the shaped value ([`pare::project`]).
    pub fields: Option<pare::project::Fields>,
}

impl Options {
    pub fn request<'a>(&'a self, given: &'a Given, policy: &'a pare::Policy) -> Request<'a> {
        self.request_for(given.input(), given.written_by_door(), policy)
    }

    /// [`Options::request`] for `input`.
    fn request_for<'a>(
        &'a self,
        input: Input<'a>,
        written_by_door: bool,
        policy: &'a pare::Policy,
    ) -> Request<'a> {
        Request {
            written_by_door,
            level: self.level.as_deref(),
            params: &self.params,
            format: self.format,
            tokenizer: self.tokenizer,
            budget: self.budget.map(Budget::tokens),
            cursor: self.cursor.as_deref(),
            omitted_notes: self.omitted,
            query: self.query.as_deref(),
            fields: self.fields.as_ref(),
            // As `pare compact` does, so the text is the same.
            hint: Hint::Flags,
            ..Request::new(input, policy)
        }
    }

    /// The options of a line-by-line walk (`shape_lines`, `shape_jsonl`): no budget, no page.
    fn shape_options<'a>(
        &'a self,
        py: Python<'_>,
        policy: &'a pare::Policy,
    ) -> PyResult<pare::ShapeOptions<'a>> {
        pare::ShapeOptions::resolve(
            policy,
            self.level.as_deref(),
            &self.params,
            self.tokenizer,
            self.omitted,
        )
        .map_err(|e| errors::policy_error(py, &e))
    }
}

#[pymethods]
impl PyPolicy {
    /// Read and compile a policy file (TOML, or JSON when it starts with `{`).
    #[staticmethod]
    fn from_file(py: Python<'_>, path: PathBuf) -> PyResult<PyPolicy> {
        let source = pare::policy::read_text(&path)
            .map_err(|e| pyo3::exceptions::PyOSError::new_err(e.to_string()))?;
        PyPolicy::compile(py, source, Some(path))
    }

    /// Compile a policy from its text (TOML, or JSON when it starts with `{`).
    #[staticmethod]
    fn from_str(py: Python<'_>, text: String) -> PyResult<PyPolicy> {
        PyPolicy::compile(py, text, None)
    }

    /// Compile a policy from a dict (the JSON form of the file).
    #[staticmethod]
    fn from_dict(py: Python<'_>, d: &Bound<'_, PyDict>) -> PyResult<PyPolicy> {
        PyPolicy::compile(py, dump::to_json(d.as_any(), None)?, None)
    }

    /// The built-in policy: no ops, every level lossless.
    #[staticmethod]
    pub fn builtin() -> PyPolicy {
        PyPolicy {
            policy: Arc::new(pare::Policy::builtin_default()),
            source: None,
            path: None,
        }
    }

    /// Detail levels, least detail first; the last is `full` (the input unchanged).
    #[getter]
    fn levels(&self) -> Vec<String> {
        self.policy.levels().to_vec()
    }

    /// The level used when a call names none.
    #[getter]
    fn default_level(&self) -> String {
        self.policy.default_level().to_owned()
    }

    #[getter]
    fn description(&self) -> Option<String> {
        self.policy.description().map(str::to_owned)
    }

    /// The parameters a caller may set, with their defaults.
    #[getter]
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let tree = serde_json::to_value(&self.policy.options().params)
            .map_err(|e| errors::pare_error(py, e.to_string()))?;
        convert::json_to_python(py, &tree)
    }

    /// The text the policy was compiled from (`None` for the built-in one).
    #[getter]
    fn source(&self) -> Option<String> {
        self.source.clone()
    }

    /// The file it was read from, if any.
    #[getter]
    fn path(&self) -> Option<PathBuf> {
        self.path.clone()
    }

    /// Shape a response: a Python value (dict, list, str, int, float, bool, None), or JSON
    /// text (`str`, `bytes`). Returns the page's text and its record ([`Shaped`]); the text
    /// is what `pare compact` prints with the same options, without the final newline.
    #[pyo3(signature = (value, level=None, params=None, format="json", tokenizer="o200k_base", budget=None, cursor=None, omitted=None, query=None, fields=None, default=None))]
    #[allow(clippy::too_many_arguments)]
    fn shape(
        &self,
        py: Python<'_>,
        value: &Bound<'_, PyAny>,
        level: Option<String>,
        params: Option<&Bound<'_, PyDict>>,
        format: &str,
        tokenizer: &str,
        budget: Option<usize>,
        cursor: Option<String>,
        omitted: Option<bool>,
        query: Option<String>,
        fields: Option<&Bound<'_, PyAny>>,
        default: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Shaped> {
        let mut opts = self::options(level, params, format, tokenizer, budget, cursor, omitted)?;
        opts.query = query;
        opts.fields = self::fields(fields)?;
        let policy = &*self.policy;
        if let Some(page) = shape_omitting(py, &opts, policy, value, default)? {
            let source = Source::object(value, default);
            return Ok(Shaped::new(page, Some(source), opts.tokenizer));
        }
        let given = Given::read(value, default)?;
        // The engine counts only what a budget needs (not the input): `tokens_before` is
        // counted from this when it is first read.
        let source = source_of(&given, value, default);
        let mut pages = py
            .detach(|| respond_pages(&opts, policy, given, false))
            .map_err(|e| errors::respond_error(py, e))?;
        Ok(Shaped::new(pages.remove(0), Some(source), opts.tokenizer))
    }

    /// Every page of a response under `budget`, in order (page 1 first): each decodes alone,
    /// and together they merge back to the whole.
    #[pyo3(signature = (value, budget, level=None, params=None, format="json", tokenizer="o200k_base", omitted=None, query=None, fields=None, default=None))]
    #[allow(clippy::too_many_arguments)]
    fn pages(
        &self,
        py: Python<'_>,
        value: &Bound<'_, PyAny>,
        budget: usize,
        level: Option<String>,
        params: Option<&Bound<'_, PyDict>>,
        format: &str,
        tokenizer: &str,
        omitted: Option<bool>,
        query: Option<String>,
        fields: Option<&Bound<'_, PyAny>>,
        default: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<Shaped>> {
        let mut opts = self::options(
            level,
            params,
            format,
            tokenizer,
            Some(budget),
            None,
            omitted,
        )?;
        opts.query = query;
        opts.fields = self::fields(fields)?;
        let given = Given::read(value, default)?;
        let source = source_of(&given, value, default);
        let policy = &*self.policy;
        let pages = py
            .detach(|| respond_pages(&opts, policy, given, true))
            .map_err(|e| errors::respond_error(py, e))?;
        Ok(pages
            .into_iter()
            .map(|p| Shaped::new(p, Some(source.clone_ref(py)), opts.tokenizer))
            .collect())
    }

    /// Many JSON texts (one JSONL line each; blank ones are skipped), each shaped and
    /// rendered as `pare compact --jsonl` writes it: a partition's worth in one call, with
    /// the GIL released, for Dask's `map_partitions` or Ray's `map_batches`. Returns the
    /// lines without their newlines; a line that is not JSON raises `JsonError` naming its
    /// index in `lines`. A key repeated within an object keeps its last value with a
    /// `UserWarning` (`strict=True`: raises `JsonError` instead), as the CLI does. Each line
    /// is read where it lies (no copy); `shape_jsonl` takes bytes and makes no string per
    /// line at all.
    #[pyo3(signature = (lines, level=None, params=None, format="json", tokenizer="o200k_base", omitted=None, strict=false))]
    #[allow(clippy::too_many_arguments)]
    fn shape_lines(
        &self,
        py: Python<'_>,
        lines: Vec<pyo3::pybacked::PyBackedStr>,
        level: Option<String>,
        params: Option<&Bound<'_, PyDict>>,
        format: &str,
        tokenizer: &str,
        omitted: Option<bool>,
        strict: bool,
    ) -> PyResult<Vec<String>> {
        let opts = self::options(level, params, format, tokenizer, None, None, omitted)?;
        let policy = &*self.policy;
        let shape_opts = opts.shape_options(py, policy)?;
        let shaped = py.detach(|| {
            let mut out = Vec::with_capacity(lines.len());
            let mut duplicates = Vec::new();
            for (i, line) in lines.iter().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let shaped =
                    pare::shape::shape_json_line(line, policy, &shape_opts, opts.format, strict)
                        .map_err(|e| (i, e))?;
                duplicates.extend(shaped.duplicates.iter().map(|d| format!("lines[{i}]: {d}")));
                out.push(shaped.text);
            }
            Ok((out, duplicates))
        });
        let (out, duplicates) = shaped.map_err(|(i, e): (usize, pare::json::JsonError)| {
            let mut e = e;
            e.message = format!("lines[{i}]: {}", e.message);
            errors::json_error(py, &e)
        })?;
        errors::warn_all(py, duplicates)?;
        Ok(out)
    }

    /// A block of JSONL (`bytes`, `bytearray`, `memoryview` or `str`: whole lines, `\n`
    /// between them) shaped line by line, each line as `pare compact --jsonl` writes it, and
    /// returned as one `bytes` with a `\n` after each line: a Dask `read_bytes` block or a
    /// Ray file range in, the bytes to write out back, with no string object per line either
    /// way (`shape_lines` makes two). Blank lines are skipped; a line that is not JSON (or
    /// not UTF-8) raises `JsonError` with its 1-based `line` in the block and `offset` in
    /// the block. A key repeated within an object keeps its last value with a `UserWarning`
    /// naming the line (`strict=True`: raises `JsonError` instead). The GIL is released; one
    /// call shapes on one core.
    #[pyo3(signature = (data, level=None, params=None, tokenizer="o200k_base", omitted=None, strict=false))]
    #[allow(clippy::too_many_arguments)]
    fn shape_jsonl<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
        level: Option<String>,
        params: Option<&Bound<'py, PyDict>>,
        tokenizer: &str,
        omitted: Option<bool>,
        strict: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let opts = self::options(level, params, "json", tokenizer, None, None, omitted)?;
        let policy = &*self.policy;
        let shape_opts = opts.shape_options(py, policy)?;
        let block = Block::read(data)?;
        let mut out = Vec::new();
        let done = py
            .detach(|| {
                pare::jsonl::shape_jsonl(block.bytes(), policy, &shape_opts, strict, &mut out)
            })
            .map_err(|e| match e {
                pare::jsonl::JsonlError::Json(e) => errors::json_error(py, &e),
                pare::jsonl::JsonlError::NotUtf8 { line, offset } => {
                    errors::not_utf8_line(py, line, offset)
                }
            })?;
        errors::warn_all(
            py,
            done.duplicates
                .iter()
                .map(|(line, d)| format!("line {line}: {d}")),
        )?;
        Ok(PyBytes::new(py, &out))
    }

    /// The shaped value itself, as Python objects, for callers that serialise it
    /// themselves (no format, no budget: those are about text).
    #[pyo3(signature = (value, level=None, params=None, default=None))]
    fn shape_value<'py>(
        &self,
        py: Python<'py>,
        value: &Bound<'py, PyAny>,
        level: Option<String>,
        params: Option<&Bound<'py, PyDict>>,
        default: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let opts = self::options(level, params, "json", "o200k_base", None, None, None)?;
        let given = Given::read(value, default)?;
        let policy = &*self.policy;
        let shaped = py
            .detach(|| {
                let mut request = opts.request(&given, policy);
                request.measure = false;
                respond(request).map(|r| r.shaped)
            })
            .map_err(|e| errors::respond_error(py, e))?;
        match shaped {
            Some(s) => convert::to_python(py, &s.value),
            None => Err(errors::pare_error(
                py,
                "this policy packs search results ([pack]): its output is text; use shape()".into(),
            )),
        }
    }

    /// Pickled by its text (and path), compiled again where it is unpickled.
    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let restore = py.import("pare._pare")?.getattr("_restore_policy")?;
        let args = (self.source.clone(), self.path.clone()).into_pyobject(py)?;
        Ok((restore, args))
    }

    fn __repr__(&self) -> String {
        let path = match &self.path {
            Some(p) => format!(", path={:?}", p.display().to_string()),
            None if self.source.is_none() => ", builtin".into(),
            None => String::new(),
        };
        format!(
            "Policy(levels={:?}, default_level={:?}{path})",
            self.policy.levels(),
            self.policy.default_level()
        )
    }
}

/// What a page's `tokens_before` counts when first read: the text given, or the value
/// (written again then).
fn source_of(
    given: &Given,
    value: &Bound<'_, PyAny>,
    default: Option<&Bound<'_, PyAny>>,
) -> Source {
    match given {
        Given::Text(t) => Source::Text(t.clone()),
        Given::Dumped(..) => Source::object(value, default),
    }
}

/// `request` for the pages only (`shape`, `pages`): the engine counts only what a budget
/// needs ([`Shaped`] counts the rest when read), and a policy the stream can do is written
/// as the input is read (no value wanted).
fn for_pages(request: Request<'_>) -> Request<'_> {
    Request {
        measure: false,
        want_value: false,
        ..request
    }
}

/// The page for a Python value (not text) whose members the request leaves out as they are
/// written ([`dump::dump_omitting`]), when the engine's stream would do the request whole;
/// `None`: write the text whole and [`respond_pages`] it.
fn shape_omitting(
    py: Python<'_>,
    opts: &Options,
    policy: &pare::Policy,
    value: &Bound<'_, PyAny>,
    default: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<pare::Page>> {
    if value.is_instance_of::<PyString>()
        || value.is_instance_of::<PyBytes>()
        || value.is_instance_of::<PyByteArray>()
    {
        return Ok(None);
    }
    let request = || for_pages(opts.request_for(Input::Json(""), true, policy));
    let Some(omitting) =
        pare::respond::Omitting::plan(&request()).map_err(|e| errors::respond_error(py, e))?
    else {
        return Ok(None);
    };
    let Some((text, omitting)) = dump::dump_omitting(value, default, omitting)? else {
        return Ok(None);
    };
    let response = py.detach(|| pare::respond::respond_omitted(&request(), omitting, text));
    Ok(response.map(|r| r.page))
}

/// The engine's pages for `given`: the first, or with `all` every one. The engine counts
/// only what a budget needs (`measure: false`); [`Shaped`] counts the rest when read.
fn respond_pages(
    opts: &Options,
    policy: &pare::Policy,
    given: Given,
    all: bool,
) -> Result<Vec<pare::Page>, pare::RespondError> {
    let request = for_pages(opts.request(&given, policy));
    let response = respond(request)?;
    let mut pages = vec![response.page];
    if all {
        pages.extend(response.rest);
    }
    Ok(pages)
}

#[allow(clippy::too_many_arguments)]
pub fn options(
    level: Option<String>,
    params: Option<&Bound<'_, PyDict>>,
    format: &str,
    tokenizer: &str,
    budget: Option<usize>,
    cursor: Option<String>,
    omitted: Option<bool>,
) -> PyResult<Options> {
    Ok(Options {
        level,
        params: param_overrides(params)?,
        format: self::format(format)?,
        tokenizer: self::tokenizer(tokenizer)?,
        budget,
        cursor,
        omitted,
        query: None,
        fields: None,
    })
}

/// The `fields` argument: a list of fields, or one comma-separated string.
pub fn fields(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<pare::project::Fields>> {
    let Some(v) = value.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let parsed = if let Ok(text) = v.extract::<String>() {
        pare::project::Fields::parse_list(&text)
    } else if let Ok(list) = v.extract::<Vec<String>>() {
        pare::project::Fields::parse_each(&list)
    } else {
        return Err(errors::wrong_type("fields", "a list of str, or a str", v));
    };
    parsed
        .map(Some)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("fields: {e}")))
}

/// `pickle`'s way back: the policy compiled again from its text.
#[pyfunction]
#[pyo3(signature = (source, path=None))]
pub fn _restore_policy(
    py: Python<'_>,
    source: Option<String>,
    path: Option<PathBuf>,
) -> PyResult<PyPolicy> {
    match source {
        Some(s) => PyPolicy::compile(py, s, path),
        None => Ok(PyPolicy::builtin()),
    }
}
