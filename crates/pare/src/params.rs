//! Policy parameters: values a caller may set per request, declared in a policy's
//! `[params]` with a default ([`Scalar`]), referenced as `$name` by numeric settings
//! ([`NumberOrParam`], resolved per request as a `ParamNumber`) and by filter expressions.
//! [`Params`] holds one request's values.
//!
//! Beside the query language at the bottom of the engine: the schema, the ops and the
//! compiled policy all use these types, and they use nothing but [`crate::value`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::value::{Number, Value};

/// A parameter value.
// `untagged` shapes the serialization and the schema; reading is by hand so that TOML's
// `nan` and `inf`, and any other value, get an error that says what is allowed.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Scalar {
    Bool(bool),
    Number(f64),
    String(String),
}

impl Scalar {
    pub fn kind(&self) -> &'static str {
        match self {
            Scalar::Bool(_) => "boolean",
            Scalar::Number(_) => "number",
            Scalar::String(_) => "string",
        }
    }
    /// What a value of this one's type may be, for messages.
    pub fn allowed(&self) -> &'static str {
        match self {
            Scalar::Bool(_) => "true or false",
            Scalar::Number(_) => "a finite number, not nan or inf",
            Scalar::String(_) => "any text",
        }
    }
    /// Parse a command-line value with the type of `like` (the declared default).
    pub(crate) fn parse_like(text: &str, like: &Scalar) -> Option<Scalar> {
        match like {
            Scalar::Bool(_) => match text {
                "true" => Some(Scalar::Bool(true)),
                "false" => Some(Scalar::Bool(false)),
                _ => None,
            },
            Scalar::Number(_) => text
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .map(Scalar::Number),
            Scalar::String(_) => Some(Scalar::String(text.to_owned())),
        }
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Scalar;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a boolean, a finite number or a string")
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Scalar, E> {
                Ok(Scalar::Bool(v))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Scalar, E> {
                if v.is_finite() {
                    return Ok(Scalar::Number(v));
                }
                let shown = if v.is_nan() {
                    "nan"
                } else if v > 0.0 {
                    "inf"
                } else {
                    "-inf"
                };
                Err(E::custom(format!(
                    "`{shown}` is not allowed: a parameter is a boolean, a finite number or a \
                     string"
                )))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Scalar, E> {
                Ok(Scalar::Number(v as f64))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Scalar, E> {
                Ok(Scalar::Number(v as f64))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Scalar, E> {
                Ok(Scalar::String(v.to_owned()))
            }
        }
        d.deserialize_any(V)
    }
}

/// A number, or `"$name"` to take a policy parameter's value.
#[derive(Debug, Clone, PartialEq)]
pub enum NumberOrParam {
    Number(f64),
    Param(String),
}

impl<'de> Deserialize<'de> for NumberOrParam {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = NumberOrParam;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number or a parameter reference like \"$maxGapMinutes\"")
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(NumberOrParam::Number(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(NumberOrParam::Number(v as f64))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(NumberOrParam::Number(v as f64))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
                match v.strip_prefix('$') {
                    Some(name) if !name.is_empty() => Ok(NumberOrParam::Param(name.to_owned())),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Str(v), &self)),
                }
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for NumberOrParam {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            NumberOrParam::Number(n) => s.serialize_f64(*n),
            NumberOrParam::Param(p) => s.serialize_str(&format!("${p}")),
        }
    }
}

impl JsonSchema for NumberOrParam {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NumberOrParam".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A number, or \"$name\" to use a policy parameter.",
            "anyOf": [{"type": "number"}, {"type": "string", "pattern": "^\\$.+"}]
        })
    }
}

/// Parameter values for one request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Params {
    values: Vec<(String, Scalar)>,
}

impl Params {
    /// Values already checked against the policy's `[params]` (`Policy::params` does).
    pub(crate) fn from_checked(values: Vec<(String, Scalar)>) -> Params {
        Params { values }
    }
    pub fn get(&self, name: &str) -> Option<&Scalar> {
        self.values.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }
    /// A parameter as a JSON value, for expressions.
    pub fn value(&self, name: &str) -> Option<Value> {
        Some(match self.get(name)? {
            Scalar::Bool(b) => Value::Bool(*b),
            Scalar::Number(n) => Value::Number(Number::from_f64(*n)?),
            Scalar::String(s) => Value::from(s.as_str()),
        })
    }
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Scalar)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The values in an encoding that stays the same across processes, machines and Rust
    /// versions, for cursor checks: `name=b:true`, `name=n:<the f64's bits in hex>`,
    /// `name=s:<length in bytes>:<text>`, each ended by U+001E.
    pub(crate) fn stable_text(&self) -> String {
        let mut out = String::new();
        for (name, value) in &self.values {
            out.push_str(name);
            match value {
                Scalar::Bool(b) => out.push_str(&format!("=b:{b}")),
                Scalar::Number(n) => out.push_str(&format!("=n:{:016x}", n.to_bits())),
                Scalar::String(s) => {
                    out.push_str("=s:");
                    out.push_str(&s.len().to_string());
                    out.push(':');
                    out.push_str(s);
                }
            }
            out.push('\u{1e}');
        }
        out
    }
}

/// A number setting, resolved per request.
#[derive(Debug, Clone)]
pub(crate) enum ParamNumber {
    Fixed(f64),
    Param(String),
}

impl ParamNumber {
    pub(crate) fn resolve(&self, params: &Params) -> f64 {
        match self {
            ParamNumber::Fixed(n) => *n,
            // Compile checked the parameter exists and is a number.
            ParamNumber::Param(name) => match params.get(name) {
                Some(Scalar::Number(n)) => *n,
                _ => f64::NAN,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regression_nan_param_said_untagged_enum_scalar() {
        #[derive(Deserialize, Debug)]
        struct P {
            #[allow(dead_code)]
            x: Scalar,
        }
        for (text, shown) in [("x = nan", "nan"), ("x = inf", "inf"), ("x = -inf", "-inf")] {
            let err = toml::from_str::<P>(text).unwrap_err().to_string();
            assert!(
                err.contains(&format!("`{shown}` is not allowed: a parameter is a boolean, a finite number or a string")),
                "{text}: {err}"
            );
            assert!(!err.contains("untagged"), "{err}");
        }
        let ok = |t: &str| toml::from_str::<P>(t).unwrap().x;
        assert_eq!(ok("x = 2"), Scalar::Number(2.0));
        assert_eq!(ok("x = 2.5"), Scalar::Number(2.5));
        assert_eq!(ok("x = true"), Scalar::Bool(true));
        assert_eq!(ok("x = \"nan\""), Scalar::String("nan".into()));
        let err = toml::from_str::<P>("x = [1]").unwrap_err().to_string();
        assert!(
            err.contains("a boolean, a finite number or a string"),
            "{err}"
        );
        let j: Scalar = serde_json::from_str("7").unwrap();
        assert_eq!(j, Scalar::Number(7.0));
    }
}
