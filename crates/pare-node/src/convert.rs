//! JavaScript values → the engine's [`pare::Value`], natively (no `JSON.stringify` round
//! trip), by `JSON.stringify`'s rules, so an object gives the value the text
//! `JSON.stringify(obj)` would:
//!
//! - an object or array with a callable `toJSON` is replaced by what it returns (called with
//!   the key, as `JSON.stringify` does: a `Date` becomes its ISO string, a `Buffer`
//!   `{"type":"Buffer","data":[…]}`);
//! - an object's own enumerable string keys, in `Object.keys` order (a `Map` or `Set` has
//!   none: `{}`); an array's elements `0..length` (a hole is `null`);
//! - `undefined`, functions and symbols are left out of objects and are `null` in arrays;
//! - a number as `Number.prototype.toString` writes it (`1`, `1.5`, `1e+21`, `-0` as `0`);
//! - refused, naming where (`$.items[3].when`): `NaN` and infinities (`JSON.stringify`
//!   would write `null`, which would say something the value did not), `BigInt` (which
//!   `JSON.stringify` refuses too), `undefined` or a function as the whole value, and
//!   nesting deeper than [`MAX_DEPTH`] (a cycle), and a string with a lone surrogate
//!   (`"\ud800"`: not Unicode text, which pare's JSON parser refuses too).
//!
//! Boxed primitives (`new Number(1)`) are objects with no own keys here: `{}`, where
//! `JSON.stringify` unwraps them. They are rare enough that a check on every object is not
//! worth it; the docs say so.
//!
//! ```js
//! pare.encode({ a: 1.0, b: [undefined, () => 1], c: undefined, d: new Date(0) }, { format: "json" })
//! // '{"a":1,"b":[null,null],"d":"1970-01-01T00:00:00.000Z"}'
//! ```

use napi::bindgen_prelude::{
    FromNapiValue, Function, JsObjectValue, JsValue, KeyCollectionMode, KeyConversion, KeyFilter,
    Object, Utf16String,
};
use napi::{Env, JsString, Unknown, ValueType};
use pare::value::Key;
use pare::{Map, Number, Value};

use crate::errors;

/// Deeper than this is refused, as pare's JSON parser refuses the text of it (so an object
/// gives what `pare compact` gives for its `JSON.stringify`); a cycle stops here too.
pub const MAX_DEPTH: usize = pare::json::MAX_DEPTH;

/// Convert a JavaScript value to a value.
pub fn to_value(env: &Env, value: Unknown<'_>) -> napi::Result<Value> {
    let mut cx = Converter {
        to_json: env.create_string("toJSON")?,
        env,
    };
    match cx.convert(value, None, 0) {
        Ok(Some(v)) => Ok(v),
        Ok(None) => Err(errors::type_error(format!(
            "cannot shape {}: it has no JSON form (JSON.stringify gives undefined for it)",
            describe(value)
        ))),
        Err(mut e) => {
            e.path.reverse();
            let at = where_(&e.path);
            Err(match e.kind {
                Failure::Type(m) => errors::type_error(m.replace("{at}", &at)),
                Failure::Napi(err) => err,
            })
        }
    }
}

/// A step of the path to the value being converted, for errors.
enum Step {
    Key(String),
    Index(u32),
}

fn where_(path: &[Step]) -> String {
    let steps: Vec<pare::manifest::Step> = path
        .iter()
        .map(|step| match step {
            Step::Key(k) => pare::manifest::Step::Key(k),
            Step::Index(i) => pare::manifest::Step::Index(*i as usize),
        })
        .collect();
    pare::manifest::error_path(&steps)
}

/// Why a conversion failed (the message's `{at}` becomes the path), and where: the path is
/// collected only on the way out of a failure, innermost step first.
struct Failed {
    kind: Failure,
    path: Vec<Step>,
}

enum Failure {
    Type(String),
    Napi(napi::Error),
}

impl From<napi::Error> for Failed {
    fn from(e: napi::Error) -> Failed {
        Failed {
            kind: Failure::Napi(e),
            path: Vec::new(),
        }
    }
}

fn refused(message: String) -> Failed {
    Failed {
        kind: Failure::Type(message),
        path: Vec::new(),
    }
}

/// The key a value sits under, for `toJSON(key)`.
#[derive(Clone, Copy)]
enum Under<'a> {
    Key(Unknown<'a>),
    Index(u32),
}

struct Converter<'e> {
    env: &'e Env,
    /// `"toJSON"`, made once per conversion rather than once per object.
    to_json: JsString<'e>,
}

impl Converter<'_> {
    /// The value, or `None` for what `JSON.stringify` leaves out (`undefined`, functions,
    /// symbols).
    fn convert(
        &mut self,
        value: Unknown<'_>,
        under: Option<Under<'_>>,
        depth: usize,
    ) -> Result<Option<Value>, Failed> {
        Ok(Some(match value.get_type()? {
            ValueType::Null => Value::Null,
            ValueType::Undefined | ValueType::Function | ValueType::Symbol => return Ok(None),
            ValueType::Boolean => Value::Bool(bool::from_unknown(value)?),
            ValueType::Number => Value::Number(number(f64::from_unknown(value)?)?),
            ValueType::String => Value::String(string(value)?.into()),
            ValueType::BigInt => {
                return Err(refused(
                    "a BigInt at {at} has no JSON form (JSON.stringify refuses it too): \
                     convert it to a Number or a string first"
                        .into(),
                ));
            }
            ValueType::Object => return self.object(Object::from_unknown(value)?, under, depth),
            other => {
                return Err(refused(format!("cannot shape a {other:?} value at {{at}}")));
            }
        }))
    }

    fn object(
        &mut self,
        obj: Object<'_>,
        under: Option<Under<'_>>,
        depth: usize,
    ) -> Result<Option<Value>, Failed> {
        if depth >= MAX_DEPTH {
            return Err(refused(format!(
                "the value at {{at}} nests deeper than {MAX_DEPTH} levels, the most pare's JSON \
                 parser reads (a circular structure?)"
            )));
        }
        let to_json: Unknown<'_> = obj.get_property(self.to_json)?;
        if to_json.get_type()? == ValueType::Function {
            let f = Function::<Unknown<'_>, Unknown<'_>>::from_unknown(to_json)?;
            let key = match under {
                None => self.env.create_string("")?.to_unknown(),
                Some(Under::Key(k)) => k,
                Some(Under::Index(i)) => self.env.create_string(i.to_string())?.to_unknown(),
            };
            let replaced = f.apply(obj, key)?;
            // The replacement is serialised as it is: its own `toJSON` is not called again.
            return match replaced.get_type()? {
                ValueType::Object => self.plain(Object::from_unknown(replaced)?, depth),
                _ => self.convert(replaced, under, depth),
            };
        }
        self.plain(obj, depth)
    }

    /// An object or array, without looking for `toJSON`.
    fn plain(&mut self, obj: Object<'_>, depth: usize) -> Result<Option<Value>, Failed> {
        if obj.is_array()? {
            let len = obj.get_array_length()?;
            let mut items = Vec::with_capacity(len as usize);
            for i in 0..len {
                let item: Unknown<'_> = obj.get_element(i)?;
                match self.convert(item, Some(Under::Index(i)), depth + 1) {
                    Ok(v) => items.push(v.unwrap_or(Value::Null)),
                    Err(mut e) => {
                        e.path.push(Step::Index(i));
                        return Err(e);
                    }
                }
            }
            return Ok(Some(Value::Array(items)));
        }
        let keys = obj.get_all_property_names(
            KeyCollectionMode::OwnOnly,
            KeyFilter::Enumerable,
            KeyConversion::NumbersToStrings,
        )?;
        let len = keys.get_array_length()?;
        let mut entries: Vec<(Key, Value)> = Vec::with_capacity(len as usize);
        for i in 0..len {
            let key: Unknown<'_> = keys.get_element(i)?;
            if key.get_type()? != ValueType::String {
                continue; // a symbol: JSON.stringify leaves it out
            }
            let item: Unknown<'_> = obj.get_property(key)?;
            match self.convert(item, Some(Under::Key(key)), depth + 1) {
                Ok(Some(v)) => entries.push((Key::from(string(key)?.as_str()), v)),
                Ok(None) => {}
                Err(mut e) => {
                    e.path
                        .push(Step::Key(String::from_unknown(key).unwrap_or_default()));
                    return Err(e);
                }
            }
        }
        // An object's own keys are unique.
        Ok(Some(Value::Object(Map::from_entries_unchecked(entries))))
    }
}

/// A JavaScript string as UTF-8; one with a lone surrogate refused (Node-API would write
/// U+FFFD for it, a character the string does not hold; pare's JSON parser refuses
/// `"\ud800"` too). Only a string that came back with U+FFFD in it is looked at again.
fn string(value: Unknown<'_>) -> Result<String, Failed> {
    let s = String::from_unknown(value)?;
    if s.contains('\u{FFFD}') {
        let units = Utf16String::from_unknown(value)?;
        if let Some(lone) = char::decode_utf16(units.iter().copied()).find_map(Result::err) {
            return Err(refused(format!(
                "a lone surrogate \\u{:04x} in a string at {{at}} is not Unicode text \
                 (it has no UTF-8 form; pare's JSON parser refuses it too)",
                lone.unpaired_surrogate()
            )));
        }
    }
    Ok(s)
}

/// A JavaScript number as `Number.prototype.toString` writes it; non-finite refused.
fn number(x: f64) -> Result<Number, Failed> {
    if !x.is_finite() {
        return Err(refused(format!(
            "{} at {{at}} is not a JSON number (JSON has no NaN or infinity; \
             JSON.stringify would write null)",
            if x.is_nan() {
                "NaN"
            } else if x > 0.0 {
                "Infinity"
            } else {
                "-Infinity"
            }
        )));
    }
    // Integers below 2^53 print as their digits; -0 prints as 0.
    if x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0 {
        return Ok(Number::from_i64(x as i64));
    }
    let mut buf = ryu_js::Buffer::new();
    Number::from_lexeme(buf.format_finite(x))
        .ok_or_else(|| refused(format!("{x} at {{at}} has no JSON lexeme")))
}

/// How an error names a value that has no JSON form.
fn describe(value: Unknown<'_>) -> &'static str {
    match value.get_type() {
        Ok(ValueType::Undefined) => "undefined",
        Ok(ValueType::Function) => "a function",
        Ok(ValueType::Symbol) => "a symbol",
        _ => "this value",
    }
}
