//! Python objects ⇄ the engine's [`pare::Value`], natively (no `json.dumps` round trip).
//!
//! Why: a JSON text detour would cost a serialisation in Python and a parse in Rust on
//! every call; walking the objects directly costs one pass. The rules are `json.dumps`'s,
//! so a dict gives the value the JSON text `json.dumps(d)` would:
//!
//! - `dict` (and subclasses) → object, in insertion order; keys must be `str`;
//! - `list`, `tuple` → array; `str` → string; `bool` → `true`/`false`; `None` → `null`;
//! - `int` → its decimal digits (any size); `float` → Python's `repr` (`1.5`, `1e-07`,
//!   `1e+16`: exactly what `json.dumps` writes); NaN and infinities are refused, as JSON
//!   has no such numbers;
//! - anything else is a `TypeError` naming the type and where it was (`$.items[3].when`).
//!
//! ```python
//! pare.encode({"a": 1.0, "b": (1, None)}, format="json") == '{"a":1.0,"b":[1,null]}'
//! ```

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use pare::value::Key;
use pare::{Map, Number, Value};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// The classes [`Converter::rich`] recognizes, imported once.
struct RichTypes {
    uuid: Py<PyAny>,
    decimal: Py<PyAny>,
    enum_: Py<PyAny>,
    is_dataclass: Py<PyAny>,
    fields: Py<PyAny>,
}

fn rich_types(py: Python<'_>) -> PyResult<&'static RichTypes> {
    static TYPES: pyo3::sync::PyOnceLock<RichTypes> = pyo3::sync::PyOnceLock::new();
    TYPES.get_or_try_init(py, || {
        let get = |module: &str, name: &str| -> PyResult<Py<PyAny>> {
            Ok(py.import(module)?.getattr(name)?.unbind())
        };
        Ok(RichTypes {
            uuid: get("uuid", "UUID")?,
            decimal: get("decimal", "Decimal")?,
            enum_: get("enum", "Enum")?,
            is_dataclass: get("dataclasses", "is_dataclass")?,
            fields: get("dataclasses", "fields")?,
        })
    })
}

/// Deeper than this is refused, as pare's JSON parser refuses the text of it (so a dict
/// gives what `pare compact` gives for its `json.dumps`); a cycle stops here too.
const MAX_DEPTH: usize = pare::json::MAX_DEPTH;

/// Convert a Python object to a value.
pub fn to_value(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    let mut cx = Converter {
        keys: HashMap::default(),
    };
    cx.convert(obj, 0).map_err(|mut e| {
        e.path.reverse();
        let at = where_(&e.path);
        match e.kind {
            Failure::Type(m) => PyTypeError::new_err(m.replace("{at}", &at)),
            Failure::Value(m) => PyValueError::new_err(m.replace("{at}", &at)),
            Failure::Python(err) => err,
        }
    })
}

/// A step of the path to the object being converted, for errors.
enum Step {
    Key(String),
    Index(usize),
}

fn where_(path: &[Step]) -> String {
    let mut s = String::from("$");
    for step in path {
        match step {
            Step::Key(k) if !k.is_empty() && k.chars().all(|c| c.is_alphanumeric() || c == '_') => {
                s.push('.');
                s.push_str(k);
            }
            Step::Key(k) => s.push_str(&format!("[{k:?}]")),
            Step::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// Why a conversion failed (the message's `{at}` becomes the path), and where: the path
/// is collected only on the way out of a failure, innermost step first, so a conversion
/// that succeeds never builds one.
struct Failed {
    kind: Failure,
    path: Vec<Step>,
}

enum Failure {
    Type(String),
    Value(String),
    Python(PyErr),
}

impl From<PyErr> for Failed {
    fn from(e: PyErr) -> Failed {
        Failed {
            kind: Failure::Python(e),
            path: Vec::new(),
        }
    }
}

fn failed(kind: Failure) -> Failed {
    Failed {
        kind,
        path: Vec::new(),
    }
}

struct Converter {
    /// Keys already converted, by the identity of the `str` object: `json.load` (and most
    /// code building many dicts) shares one object per distinct key, so each distinct key
    /// is copied out of Python once. The objects stay alive (their dicts hold them) for the
    /// whole conversion, so an address names one string throughout.
    keys: HashMap<usize, Key, BuildHasherDefault<AddressHasher>>,
}

/// A hasher for object addresses: they are unique and 16-byte aligned, so a multiply
/// spreads them well; SipHash was a tenth of a conversion's time.
#[derive(Default)]
struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = ((n as u64) >> 4).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// A container at `depth` (the root is 0) is one level more than pare's JSON parser reads.
fn too_deep(depth: usize) -> Result<(), Failed> {
    if depth >= MAX_DEPTH {
        return Err(failed(Failure::Value(format!(
            "nested deeper than {MAX_DEPTH} levels at {{at}}, the most pare's JSON parser \
             reads (a cycle?)"
        ))));
    }
    Ok(())
}

impl Converter {
    fn convert(&mut self, obj: &Bound<'_, PyAny>, depth: usize) -> Result<Value, Failed> {
        if obj.is_none() {
            return Ok(Value::Null);
        }
        // `bool` before `int`: it is a subclass of it.
        if let Ok(b) = obj.cast::<PyBool>() {
            return Ok(Value::Bool(b.is_true()));
        }
        if let Ok(s) = obj.cast::<PyString>() {
            return Ok(Value::String(s.to_cow()?.as_ref().into()));
        }
        if let Ok(d) = obj.cast::<PyDict>() {
            too_deep(depth)?;
            let mut entries: Vec<(Key, Value)> = Vec::with_capacity(d.len());
            for (k, v) in d.iter() {
                let key = self.key(&k)?;
                match self.convert(&v, depth + 1) {
                    Ok(value) => entries.push((key, value)),
                    Err(mut e) => {
                        e.path.push(Step::Key(key.to_string()));
                        return Err(e);
                    }
                }
            }
            // A dict's keys are unique.
            return Ok(Value::Object(Map::from_entries_unchecked(entries)));
        }
        if let Ok(l) = obj.cast::<PyList>() {
            return self.sequence(l.iter(), l.len(), depth);
        }
        if let Ok(t) = obj.cast::<PyTuple>() {
            return self.sequence(t.iter(), t.len(), depth);
        }
        if let Ok(i) = obj.cast::<PyInt>() {
            return Ok(Value::Number(int_number(i)?));
        }
        if let Ok(f) = obj.cast::<PyFloat>() {
            let x = f.value();
            return float_number(x).map(Value::Number).ok_or_else(|| {
                failed(Failure::Value(format!(
                    "{x} at {{at}} is not a JSON number (JSON has no NaN or infinity)"
                )))
            });
        }
        if let Some(v) = self.rich(obj, depth)? {
            return Ok(v);
        }
        Err(failed(Failure::Type(format!(
            "cannot shape a {} at {{at}}: give dict, list, tuple, str, int, float, bool or None, \
             or datetime, date, time, UUID, Decimal, an Enum, a dataclass or a pydantic model",
            type_name(obj)
        ))))
    }

    /// The types a web handler returns besides JSON's own, as FastAPI's `jsonable_encoder`
    /// writes them: `datetime`/`date`/`time` as their ISO 8601 text (`isoformat()`), `UUID`
    /// as its text, an `Enum` member as its value, a dataclass as the dict of its fields, a
    /// pydantic model as `model_dump(mode="json")`. `Decimal` is a number with its own
    /// digits (`Decimal("1.10")` is `1.10`; `jsonable_encoder` gives a float, `1.1`);
    /// NaN and infinities are refused. `None`: none of these.
    fn rich(&mut self, obj: &Bound<'_, PyAny>, depth: usize) -> Result<Option<Value>, Failed> {
        use pyo3::types::{PyDate, PyDateTime, PyTime};
        let py = obj.py();
        if obj.cast::<PyDateTime>().is_ok()
            || obj.cast::<PyDate>().is_ok()
            || obj.cast::<PyTime>().is_ok()
        {
            let iso = obj.call_method0("isoformat")?;
            return Ok(Some(Value::String(iso.str()?.to_cow()?.as_ref().into())));
        }
        let types = rich_types(py)?;
        if obj.is_instance(types.uuid.bind(py))? {
            return Ok(Some(Value::String(obj.str()?.to_cow()?.as_ref().into())));
        }
        if obj.is_instance(types.decimal.bind(py))? {
            let text = obj.str()?.to_cow()?.into_owned();
            return match Number::from_lexeme(&text) {
                Some(n) => Ok(Some(Value::Number(n))),
                None => Err(failed(Failure::Value(format!(
                    "Decimal({text:?}) at {{at}} is not a JSON number"
                )))),
            };
        }
        if obj.is_instance(types.enum_.bind(py))? {
            let value = obj.getattr("value")?;
            return self.convert(&value, depth).map(Some);
        }
        if types.is_dataclass.bind(py).call1((obj,))?.is_truthy()?
            && !obj.is_instance_of::<pyo3::types::PyType>()
        {
            too_deep(depth)?;
            let fields = types.fields.bind(py).call1((obj,))?;
            let mut entries: Vec<(Key, Value)> = Vec::new();
            for f in fields.try_iter()? {
                let name = f?.getattr("name")?;
                let key = self.key(&name)?;
                let v = obj.getattr(name.cast::<PyString>().map_err(PyErr::from)?)?;
                match self.convert(&v, depth + 1) {
                    Ok(value) => entries.push((key, value)),
                    Err(mut e) => {
                        e.path.push(Step::Key(key.to_string()));
                        return Err(e);
                    }
                }
            }
            return Ok(Some(Value::Object(Map::from_entries_unchecked(entries))));
        }
        // A pydantic v2 model (its class has `model_fields`; asking the instance is deprecated).
        if obj.hasattr("model_dump")? && obj.get_type().hasattr("model_fields")? {
            let kwargs = PyDict::new(py);
            kwargs.set_item("mode", "json")?;
            // As FastAPI writes a model: by its aliases.
            kwargs.set_item("by_alias", true)?;
            let dumped = obj.call_method("model_dump", (), Some(&kwargs))?;
            return self.convert(&dumped, depth).map(Some);
        }
        Ok(None)
    }

    fn key(&mut self, k: &Bound<'_, PyAny>) -> Result<Key, Failed> {
        let id = k.as_ptr() as usize;
        if let Some(key) = self.keys.get(&id) {
            return Ok(key.clone());
        }
        let Ok(s) = k.cast::<PyString>() else {
            return Err(failed(Failure::Type(format!(
                "dict keys must be str, got {} ({}) at {{at}}",
                type_name(k),
                k.repr().map(|r| r.to_string()).unwrap_or_default(),
            ))));
        };
        let key = Key::from(s.to_cow()?.as_ref());
        self.keys.insert(id, key.clone());
        Ok(key)
    }

    fn sequence<'py>(
        &mut self,
        items: impl Iterator<Item = Bound<'py, PyAny>>,
        len: usize,
        depth: usize,
    ) -> Result<Value, Failed> {
        too_deep(depth)?;
        let mut out = Vec::with_capacity(len);
        for (i, item) in items.enumerate() {
            match self.convert(&item, depth + 1) {
                Ok(v) => out.push(v),
                Err(mut e) => {
                    e.path.push(Step::Index(i));
                    return Err(e);
                }
            }
        }
        Ok(Value::Array(out))
    }
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".into())
}

/// An `int`'s digits: through `i64` when it fits, else Python's own `int.__str__` (an
/// `IntEnum` member's `str()` is its name, not its digits).
fn int_number(i: &Bound<'_, PyInt>) -> PyResult<Number> {
    if let Ok(n) = i.extract::<i64>() {
        return Ok(Number::from_i64(n));
    }
    let py = i.py();
    let digits = py
        .get_type::<PyInt>()
        .call_method1("__str__", (i,))?
        .extract::<String>()?;
    Number::from_lexeme(&digits)
        .ok_or_else(|| PyValueError::new_err(format!("int {digits} is not a JSON number")))
}

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
