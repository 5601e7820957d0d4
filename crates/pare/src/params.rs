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
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
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
    /// Parse a command-line value with the type of `like` (the declared default).
    pub fn parse_like(text: &str, like: &Scalar) -> Option<Scalar> {
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
#[derive(Debug, Clone, Default)]
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
}

/// A number setting, resolved per request.
#[derive(Debug, Clone)]
pub(crate) enum ParamNumber {
    Fixed(f64),
    Param(String),
}

impl ParamNumber {
    pub fn resolve(&self, params: &Params) -> f64 {
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
