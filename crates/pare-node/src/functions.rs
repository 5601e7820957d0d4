//! The package's functions besides `Policy.shape`: `countTokens`, `encode`, `expand`,
//! `pack`, `stats`. Each is the engine call the matching `pare` command makes, so the
//! outputs are the same. Values come back as JSON text the package parses.
//!
//! ```js
//! countTokens("hello world")                                  // 2 (o200k_base)
//! encode({ rows: [{ a: 1 }, { a: 2 }] }, { format: "toon" })  // 'rows[2]{a}:\n  1\n  2'
//! expand("rows[2]{a}:\n  1\n  2")                             // { rows: [{ a: 1 }, { a: 2 }] }
//! ```

use napi::bindgen_prelude::{AsyncTask, Utf16String};
use napi::{Env, Task, Unknown};
use napi_derive::napi;
use pare::pack::cache::PreviewCache;
use pare::pack::response::pack_response;
use pare::render;

use crate::errors;
use crate::policy::{self, Given, NativePolicy};

/// Read JSON text or take a value, as `shape` does; parse errors carry line and column.
fn value_of(env: &Env, input: Unknown<'_>) -> napi::Result<(pare::Value, Option<String>)> {
    match Given::read(env, input)? {
        Given::Value(v) => Ok((v, None)),
        Given::Text(t) => {
            let v = pare::json::parse(&t).map_err(|e| errors::json_error(&e))?;
            Ok((v, Some(t)))
        }
    }
}

/// Exact tokens of `text` by a real tokenizer (`o200k_base`, `cl100k_base`, or `chars4`).
#[napi]
pub fn count_tokens(text: Unknown<'_>, tokenizer: Option<String>) -> napi::Result<u32> {
    let tok = policy::tokenizer(tokenizer.as_deref().unwrap_or("o200k_base"))?;
    Ok(tok.count(&policy::js_text(text)?) as u32)
}

/// Tokens of a value as minified JSON (what `JSON.stringify` would give): the count a
/// `Shaped` made from an object reports as `tokensBefore`.
#[napi]
pub fn count_value_tokens(
    env: Env,
    value: Unknown<'_>,
    tokenizer: Option<String>,
) -> napi::Result<u32> {
    let tok = policy::tokenizer(tokenizer.as_deref().unwrap_or("o200k_base"))?;
    let (value, text) = value_of(&env, value)?;
    let text = text.unwrap_or_else(|| pare::json::to_compact(&value));
    Ok(tok.count(&text) as u32)
}

/// `countTokens` on the thread pool (the text copied out as UTF-16, made UTF-8 there).
pub struct CountTask {
    units: Utf16String,
    tokenizer: &'static dyn pare::tokens::Tokenizer,
}

impl Task for CountTask {
    type Output = u32;
    type JsValue = u32;

    fn compute(&mut self) -> napi::Result<u32> {
        let text = policy::text_of_units(&self.units)?;
        Ok(self.tokenizer.count(&text) as u32)
    }

    fn resolve(&mut self, _env: Env, n: u32) -> napi::Result<u32> {
        Ok(n)
    }
}

#[napi(ts_return_type = "Promise<number>")]
pub fn count_tokens_async(
    text: Utf16String,
    tokenizer: Option<String>,
) -> napi::Result<AsyncTask<CountTask>> {
    let tokenizer = policy::tokenizer(tokenizer.as_deref().unwrap_or("o200k_base"))?;
    Ok(AsyncTask::new(CountTask {
        units: text,
        tokenizer,
    }))
}

/// What `encode` wrote, and the numbers TOON could not carry exactly.
#[napi(object)]
pub struct Encoded {
    pub text: String,
    pub warnings: Vec<String>,
}

/// A value (or JSON text) as `json`, `pretty`, `toon` or `auto` (the cheapest lossless text
/// by the tokenizer's count), as `pare encode` writes it (without the final newline).
#[napi]
pub fn encode(
    env: Env,
    value: Unknown<'_>,
    format: Option<String>,
    tokenizer: Option<String>,
) -> napi::Result<Encoded> {
    let format = policy::format(format.as_deref().unwrap_or("auto"))?;
    let tok = policy::tokenizer(tokenizer.as_deref().unwrap_or("o200k_base"))?;
    let (value, _) = value_of(&env, value)?;
    // TOON carries numbers as doubles: say which ones it cannot, as `pare encode` does.
    let warnings = if format == pare::encode::Format::Toon {
        pare::encode::toon::inexact_numbers(&value)
            .iter()
            .map(|n| n.to_string())
            .collect()
    } else {
        Vec::new()
    };
    Ok(Encoded {
        text: render(&value, format, tok),
        warnings,
    })
}

/// Any of pare's encodings (JSON, TOON, `auto` text) back to the value, as minified JSON.
/// `reader`: `detect`, `json`, or `toon` — as `pare expand --from`.
#[napi]
pub fn expand(text: String, reader: Option<String>) -> napi::Result<String> {
    let reader = match reader.as_deref().unwrap_or("detect") {
        "detect" => pare::encode::Reader::Detect,
        "json" => pare::encode::Reader::Json,
        "toon" => pare::encode::Reader::Toon,
        other => {
            return Err(errors::bad_argument(
                "reader",
                other,
                &["detect", "json", "toon"],
                format!("reader: unknown value {other:?}; allowed: detect, json, toon"),
            ));
        }
    };
    let body = text.strip_suffix('\n').unwrap_or(&text);
    let (value, _) =
        pare::encode::expand_from(body, reader).map_err(|e| errors::pare_error(e.to_string()))?;
    Ok(pare::json::to_compact(&value))
}

/// Packed search results: the text, its exact token count, the next page's cursor, and
/// seed 003's metrics (JSON).
#[napi(object)]
pub struct Packed {
    pub text: String,
    pub tokens: u32,
    pub next_cursor: Option<String>,
    pub metrics: String,
}

/// Search results packed under a hard token budget (`pare pack`): the policy's `[pack]`
/// section names the response's fields (default: `id`, `score`, `text`, `path` under
/// `results`).
#[napi]
#[allow(clippy::too_many_arguments)]
pub fn pack(
    env: Env,
    results: Unknown<'_>,
    budget: u32,
    policy: Option<&NativePolicy>,
    level: Option<String>,
    tokenizer: Option<String>,
    cursor: Option<String>,
    query: Option<String>,
) -> napi::Result<Packed> {
    let tok = policy::tokenizer(tokenizer.as_deref().unwrap_or("o200k_base"))?;
    let (options, level) =
        pare::pack::response::setup(policy.map(|p| &*p.policy), level).map_err(|e| match &e {
            pare::pack::response::SetupError::Level { name, levels } => {
                let levels: Vec<&str> = levels.iter().map(String::as_str).collect();
                errors::bad_argument("level", name, &levels, e.to_string())
            }
            _ => errors::pare_error(e.to_string()),
        })?;
    let (value, _) = value_of(&env, results)?;
    let mut cache = PreviewCache::new(1024);
    let packed = pack_response(
        &value,
        &options,
        &level,
        budget as usize,
        tok,
        cursor.as_deref(),
        query.as_deref(),
        &mut cache,
    )
    .map_err(|e| match e {
        pare::pack::PackError::Cursor(m) => errors::cursor_error(m),
        other => errors::pare_error(other.to_string()),
    })?;
    Ok(Packed {
        text: packed.text,
        tokens: packed.tokens as u32,
        next_cursor: packed.next_cursor,
        metrics: serde_json::to_string(&packed.metrics).unwrap_or_default(),
    })
}

/// Where a payload's tokens go (`pare stats --json`), as JSON: tokens, bytes, waste, and
/// the paths with the most tokens first: `top` leaf paths, then `top` container paths.
#[napi]
pub fn stats(
    env: Env,
    value: Unknown<'_>,
    tokenizer: Option<String>,
    top: Option<u32>,
) -> napi::Result<String> {
    let tok = policy::tokenizer(tokenizer.as_deref().unwrap_or("o200k_base"))?;
    let (value, text) = value_of(&env, value)?;
    let text = text.unwrap_or_else(|| pare::json::to_compact(&value));
    let mut stats = pare::stats::profile(&text, &value, tok);
    stats.paths = stats
        .top_rows(top.unwrap_or(20) as usize, true, true)
        .into_iter()
        .cloned()
        .collect();
    serde_json::to_string(&stats).map_err(|e| errors::pare_error(e.to_string()))
}
