//! The engine's errors as the package's exceptions (defined in `pare/errors.py`, so they
//! can subclass both `PareError` and `ValueError` and carry fields):
//!
//! - `PolicyError`: `.key`, `.value`, `.allowed`, `.kind` (a bad policy, level or
//!   parameter), `.line` and `.column` (a policy that is not TOML or JSON);
//! - `JsonError`: `.line`, `.column`, `.offset` (input that is not JSON);
//! - `CursorError`, `BudgetError`: a cursor that does not fit the input, a budget too small.
//!
//! ```python
//! try:
//!     pare.Policy.from_str('[[ops]]\nop = "prun"\n')
//! except pare.PolicyError as e:
//!     e.key, e.value, e.allowed[:2]   # ('ops[0].op', 'prun', ['prune', 'drop'])
//! ```

use pare::PolicyError;
use pare::RespondError;
use pare::json::JsonError;
use pyo3::IntoPyObjectExt;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};

/// The class `name` of `pare.errors`, imported once.
fn class<'py>(py: Python<'py>, name: &'static str) -> PyResult<Bound<'py, PyType>> {
    static MODULE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let module = MODULE.get_or_try_init(py, || {
        py.import("pare.errors").map(|m| m.into_any().unbind())
    })?;
    Ok(module.bind(py).getattr(name)?.cast_into::<PyType>()?)
}

/// A keyword argument of an exception; `None` when it cannot be made (never, in practice).
type Field<'py> = Option<(&'static str, Bound<'py, PyAny>)>;

fn field<'py>(py: Python<'py>, name: &'static str, value: impl IntoPyObject<'py>) -> Field<'py> {
    value.into_bound_py_any(py).ok().map(|v| (name, v))
}

/// An instance of `pare.errors.NAME(message, **fields)`.
fn raise(py: Python<'_>, name: &'static str, message: String, fields: &[Field<'_>]) -> PyErr {
    let made = (|| -> PyResult<PyErr> {
        let kwargs = PyDict::new(py);
        for (k, v) in fields.iter().flatten() {
            kwargs.set_item(k, v)?;
        }
        let exc = class(py, name)?.call((message.clone(),), Some(&kwargs))?;
        Ok(PyErr::from_value(exc))
    })();
    // Without the module (an unusual install), a plain ValueError still says it all.
    made.unwrap_or_else(|_| PyValueError::new_err(message))
}

pub fn policy_error(py: Python<'_>, e: &PolicyError) -> PyErr {
    policy_error_in(py, e, None)
}

/// A policy error, the file it is in said first when there is one.
pub fn policy_error_in(py: Python<'_>, e: &PolicyError, file: Option<&str>) -> PyErr {
    let d = e.details();
    let message = match file {
        Some(f) => format!("in policy {f}: {e}"),
        None => e.to_string(),
    };
    let (line, column) = e.position().unzip();
    let fields = [
        field(py, "key", d.key),
        field(py, "value", d.value),
        field(py, "allowed", d.allowed),
        field(py, "kind", e.kind_name()),
        field(py, "line", line),
        field(py, "column", column),
    ];
    raise(py, "PolicyError", message, &fields)
}

/// A call's argument that is not one of `allowed` (an unknown `level`): a `PolicyError`
/// naming it.
pub fn bad_argument(
    py: Python<'_>,
    key: &str,
    value: &str,
    allowed: Vec<String>,
    message: String,
) -> PyErr {
    let fields = [
        field(py, "key", key),
        field(py, "value", value),
        field(py, "allowed", allowed),
        field(py, "kind", "unknown_value"),
    ];
    raise(py, "PolicyError", message, &fields)
}

pub fn json_error(py: Python<'_>, e: &JsonError) -> PyErr {
    let fields = [
        field(py, "line", e.line),
        field(py, "column", e.column),
        field(py, "offset", e.offset),
    ];
    raise(py, "JsonError", e.to_string(), &fields)
}

/// JSON bytes that are not UTF-8 (JSON text is UTF-8).
pub fn not_utf8(py: Python<'_>, offset: usize) -> PyErr {
    let fields = [field(py, "offset", offset)];
    let message = format!("the input is not UTF-8 (at byte {offset})");
    raise(py, "JsonError", message, &fields)
}

/// A JSONL line that is not UTF-8: its number, and the first bad byte's offset in the block.
pub fn not_utf8_line(py: Python<'_>, line: usize, offset: usize) -> PyErr {
    let fields = [field(py, "line", line), field(py, "offset", offset)];
    let message = format!("line {line} is not UTF-8 (at byte {offset})");
    raise(py, "JsonError", message, &fields)
}

/// Each message as a `UserWarning`, in order (a caller's `warnings` filter can make one an
/// error, which then stops here).
pub fn warn_all(py: Python<'_>, messages: impl IntoIterator<Item = String>) -> PyResult<()> {
    let category = py.get_type::<pyo3::exceptions::PyUserWarning>();
    for message in messages {
        let message = std::ffi::CString::new(message).unwrap_or_default();
        PyErr::warn(py, &category, &message, 1)?;
    }
    Ok(())
}

pub fn respond_error(py: Python<'_>, e: RespondError) -> PyErr {
    match e {
        RespondError::Json(e) => json_error(py, &e),
        RespondError::Policy(e) => policy_error(py, &e),
        RespondError::Level { name, allowed } => bad_argument(
            py,
            "level",
            &name,
            allowed.split(", ").map(str::to_owned).collect(),
            format!("unknown level `{name}`; this policy's levels: {allowed}"),
        ),
        RespondError::Cursor(m) => cursor_error(py, m),
        RespondError::Budget(m) => raise(py, "BudgetError", m, &[]),
        RespondError::Fields(m) => PyValueError::new_err(m),
        other => raise(py, "PareError", other.to_string(), &[]),
    }
}

/// A cursor that is not pare's, or from another input or other options.
pub fn cursor_error(py: Python<'_>, message: String) -> PyErr {
    raise(py, "CursorError", message, &[])
}

/// Any other engine error, as `PareError`.
pub fn pare_error(py: Python<'_>, message: String) -> PyErr {
    raise(py, "PareError", message, &[])
}

/// A bad option value (`format`, `tokenizer`): a `ValueError` naming the allowed values.
pub fn bad_option(name: &str, value: &str, allowed: &str) -> PyErr {
    PyValueError::new_err(format!(
        "{name}: unknown value {value:?}; allowed: {allowed}"
    ))
}

/// An argument of the wrong type.
pub fn wrong_type(what: &str, want: &str, got: &Bound<'_, PyAny>) -> PyErr {
    let name = got
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".into());
    PyTypeError::new_err(format!("{what} must be {want}, not {name}"))
}
