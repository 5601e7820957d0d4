//! The engine's values as Python objects (`to_python`, `json_to_python`), and a float as
//! Python's `repr` writes it (`float_number`, which [`crate::dump`] writes a dict's floats
//! with). Python objects into the engine: [`crate::dump`].
//!
//! ```python
//! pare.expand('{"a":1.0,"b":[1,null]}') == {"a": 1.0, "b": [1, None]}
//! ```

use pare::{Number, Value};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString};

/// A float as Python's `repr` writes it (which is what `json.dumps` writes): the shortest
/// digits that read back to the same double (a tie going to the even digit, as Python's and
/// JavaScript's algorithms both do: so the digits are taken from the engine's JavaScript
/// formatting), in positional notation for decimal exponents -4 to 15 (always with a `.`),
/// else `d.ddde±XX` with at least two exponent digits.
pub fn float_number(x: f64) -> Option<Number> {
    let js = Number::from_f64(x)?;
    let (digits, exp) = digits_and_exponent(js.as_str());
    let sign = if x.is_sign_negative() { "-" } else { "" };
    let text = if (-4..16).contains(&exp) {
        let point = exp + 1; // digits before the decimal point
        if point <= 0 {
            format!("{sign}0.{}{digits}", "0".repeat((-point) as usize))
        } else if (point as usize) >= digits.len() {
            let zeros = "0".repeat(point as usize - digits.len());
            format!("{sign}{digits}{zeros}.0")
        } else {
            let (int, frac) = digits.split_at(point as usize);
            format!("{sign}{int}.{frac}")
        }
    } else {
        let (first, rest) = digits.split_at(1);
        let frac = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{first}{frac}e{esign}{:02}", exp.abs())
    };
    Number::from_lexeme(&text)
}

/// The significant digits of a JavaScript number text (`-0.00012`, `1.5e+21`, `120`) and the
/// decimal exponent of the first one (`12`, -4; `15`, 21; `12`, 2). Zero is `0`, 0.
fn digits_and_exponent(js: &str) -> (String, i32) {
    let js = js.trim_start_matches('-');
    let (mantissa, exp) = match js.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (js, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all: String = int.chars().chain(frac.chars()).collect();
    let lead = all.len() - all.trim_start_matches('0').len();
    let digits = all.trim_matches('0');
    if digits.is_empty() {
        return ("0".into(), 0);
    }
    // The first significant digit sits `int.len() - 1 - lead` places left of the point.
    (digits.to_owned(), exp + int.len() as i32 - 1 - lead as i32)
}

/// A value as Python objects: objects → `dict`, arrays → `list`, numbers → `int` when the
/// lexeme is an integer, else `float`.
pub fn to_python<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Number(n) => number_to_python(py, n)?,
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_python(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map.iter() {
                dict.set_item(k.as_str(), to_python(py, v)?)?;
            }
            dict.into_any()
        }
    })
}

fn number_to_python<'py>(py: Python<'py>, n: &Number) -> PyResult<Bound<'py, PyAny>> {
    let lexeme = n.as_str();
    let integer = !lexeme.contains(['.', 'e', 'E']);
    if integer {
        if let Some(i) = n.as_i64() {
            return Ok(i.into_pyobject(py)?.into_any());
        }
        return py.get_type::<PyInt>().call1((lexeme,));
    }
    Ok(PyFloat::new(py, n.as_f64().unwrap_or(f64::NAN)).into_any())
}

/// A `serde_json` value as Python objects (records, stats, MCP results).
pub fn json_to_python<'py>(py: Python<'py>, v: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    use serde_json::Value as J;
    Ok(match v {
        J::Null => py.None().into_bound(py),
        J::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        J::String(s) => PyString::new(py, s).into_any(),
        J::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_pyobject(py)?.into_any(),
            (None, Some(u)) => u.into_pyobject(py)?.into_any(),
            _ => PyFloat::new(py, n.as_f64().unwrap_or(f64::NAN)).into_any(),
        },
        J::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(json_to_python(py, item)?)?;
            }
            list.into_any()
        }
        J::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(k, json_to_python(py, v)?)?;
            }
            dict.into_any()
        }
    })
}
