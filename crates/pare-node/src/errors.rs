//! The engine's errors for the package's JavaScript side, which throws them as its typed
//! classes (`index.js`): `PolicyError` (`key`, `value`, `allowed`, `kind`, `line`,
//! `column`), `JsonError` (`line`, `column`, `offset`), `CursorError`, `BudgetError`,
//! `PareError`, and a plain `TypeError` for a value with no JSON form.
//!
//! Why a tagged message: a native error crosses into JavaScript as an `Error` with a
//! message; the error's class and fields travel in it as JSON after [`TAG`], and the
//! package's one `rethrow` turns that into the typed error. Nothing else reads them.
//!
//! ```text
//! \u{1}pare:{"type":"PolicyError","message":"ops[0].op: unknown op `prun` …","key":"ops[0].op",…}
//! ```

use napi::Status;
use pare::PolicyError;
use pare::RespondError;
use pare::json::JsonError;
use serde_json::{Map, Value, json};

/// What starts a message the package turns into a typed error.
pub const TAG: &str = "\u{1}pare:";

fn typed(kind: &str, message: String, fields: Value) -> napi::Error {
    let mut body = Map::new();
    body.insert("type".into(), kind.into());
    body.insert("message".into(), message.into());
    if let Value::Object(f) = fields {
        body.extend(f.into_iter().filter(|(_, v)| !v.is_null()));
    }
    napi::Error::new(
        Status::GenericFailure,
        format!("{TAG}{}", Value::Object(body)),
    )
}

/// A value the caller handed that has no JSON form, or an argument of the wrong type.
pub fn type_error(message: String) -> napi::Error {
    typed("TypeError", message, Value::Null)
}

pub fn policy_error(e: &PolicyError) -> napi::Error {
    policy_error_in(e, None)
}

/// A policy error, the file it is in said first when there is one.
pub fn policy_error_in(e: &PolicyError, file: Option<&str>) -> napi::Error {
    let d = e.details();
    let message = match file {
        Some(f) => format!("in policy {f}: {e}"),
        None => e.to_string(),
    };
    let (line, column) = e.position().unzip();
    typed(
        "PolicyError",
        message,
        json!({"key": d.key, "value": d.value, "allowed": d.allowed, "kind": e.kind_name(),
               "line": line, "column": column}),
    )
}

/// An argument that is not one of `allowed` (an unknown `level`, `format`, `tokenizer`).
pub fn bad_argument(key: &str, value: &str, allowed: &[&str], message: String) -> napi::Error {
    typed(
        "PolicyError",
        message,
        json!({"key": key, "value": value, "allowed": allowed, "kind": "unknown_value"}),
    )
}

pub fn json_error(e: &JsonError) -> napi::Error {
    typed(
        "JsonError",
        e.to_string(),
        json!({"line": e.line, "column": e.column, "offset": e.offset}),
    )
}

/// JSON bytes that are not UTF-8 (JSON text is UTF-8).
pub fn not_utf8(offset: usize) -> napi::Error {
    typed(
        "JsonError",
        format!("the input is not UTF-8 (at byte {offset})"),
        json!({"offset": offset}),
    )
}

/// A JavaScript string with a lone surrogate, given as text: not Unicode text. Node-API
/// would have written U+FFFD for it, a character the text does not hold.
pub fn lone_surrogate(offset: usize) -> napi::Error {
    typed(
        "JsonError",
        format!(
            "the text has a lone surrogate after byte {offset} of its UTF-8: it is not \
             Unicode text (a surrogate has no UTF-8 form)"
        ),
        json!({"offset": offset}),
    )
}

pub fn respond_error(e: RespondError) -> napi::Error {
    match e {
        RespondError::Json(e) => json_error(&e),
        RespondError::Policy(e) => policy_error(&e),
        RespondError::Level { name, allowed } => {
            let names: Vec<&str> = allowed.split(", ").collect();
            bad_argument(
                "level",
                &name,
                &names,
                format!("unknown level `{name}`; this policy's levels: {allowed}"),
            )
        }
        RespondError::Cursor(m) => cursor_error(m),
        RespondError::Budget(m) => typed("BudgetError", m, Value::Null),
        other => pare_error(other.to_string()),
    }
}

/// A cursor that is not pare's, or from another input or other options.
pub fn cursor_error(message: String) -> napi::Error {
    typed("CursorError", message, Value::Null)
}

/// Any other engine error.
pub fn pare_error(message: String) -> napi::Error {
    typed("PareError", message, Value::Null)
}
