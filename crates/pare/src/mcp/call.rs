//! A `tools/call` request of a shaped tool: the arguments pare added are taken out and
//! checked (the level, the caller's policy parameters) before the call goes on, and
//! `pare_more` is answered from the page and original stores. Every MCP door (the proxy,
//! the Python package's server integration) calls these, so a call means the same through
//! each.
//!
//! ```
//! use pare::mcp::call::{prepare, Prepared};
//! use pare::mcp::{config::Config, tools_list::Learned};
//! let config = Config::builtin();
//! let learned = Learned { detail: Some("detail".into()), ..Learned::default() };
//! let mut args = serde_json::json!({"q": "x", "detail": "full"});
//! let Prepared::Forward { pending: Some(p), changed } =
//!     prepare(&config, Some(learned), "search", args.as_object_mut())
//! else { panic!() };
//! assert!(changed && args == serde_json::json!({"q": "x"}));
//! assert_eq!(p.level.as_deref(), Some("full"));
//! ```

use std::sync::Arc;

use serde_json::{Map, Value as Json};

use super::config::{Config, ToolPolicy};
use super::originals::Originals;
use super::result::{Ask, Budget, Call, original_result, page_result};
use super::store::PageCache;
use super::tools_list::{FIELDS, Learned, scalar_text};
use super::verbatim;
use crate::params::Scalar;

/// A call of a shaped tool waiting for its result: what its result is shaped by.
#[derive(Debug, Clone)]
pub struct Pending {
    /// The tool's name, as the call named it.
    pub tool_name: String,
    /// How the tool's results are shaped.
    pub tool: Arc<ToolPolicy>,
    /// The level the caller named; `None`: the tool's default.
    pub level: Option<String>,
    /// The argument a level is named by, for the notes.
    pub detail_arg: String,
    /// The caller's policy parameters, checked, each value as text (`maxGapMinutes` = `5`).
    pub params: Vec<(String, String)>,
    /// The tool's text passes byte for byte ([`crate::mcp::verbatim`]).
    pub verbatim: bool,
    /// The caller's question: the value of the tool's own argument `[[mcp.tools]] query`
    /// names, when it is text (forwarded to the tool unchanged).
    pub query: Option<String>,
    /// The fields the caller asked for (pare's `fields` argument, taken out).
    pub fields: Option<crate::project::Fields>,
}

impl Pending {
    /// The call, as [`super::result::shape_result`] takes it.
    pub fn call(&self) -> Call<'_> {
        Call {
            tool_name: &self.tool_name,
            tool: &self.tool,
            level: self.level.as_deref(),
            detail_arg: &self.detail_arg,
            params: &self.params,
            verbatim: self.verbatim,
            error: false,
            query: self.query.as_deref(),
            fields: self.fields.as_ref(),
        }
    }
}

/// What becomes of a `tools/call` request.
#[derive(Debug)]
pub enum Prepared {
    /// Forward it (`changed`: arguments pare added were taken out); with `Some`, shape its
    /// result by this.
    Forward {
        /// What shapes the result; `None`: the tool is passed through untouched.
        pending: Option<Pending>,
        /// Arguments were taken out: the door forwards the request as rewritten.
        changed: bool,
    },
    /// Answer it with an invalid-params error: this message (a bad `detail` or parameter).
    Invalid(String),
}

/// Take out and check what pare added to the arguments of a call of `name`. `learned` is
/// what `tools/list` taught about the tool (`None`: never listed through pare, so nothing
/// is taken out).
pub fn prepare(
    config: &Config,
    learned: Option<Learned>,
    name: &str,
    args: Option<&mut Map<String, Json>>,
) -> Prepared {
    let Some(tool) = config.tool(name) else {
        return Prepared::Forward {
            pending: None,
            changed: false,
        };
    };
    let learned = learned.unwrap_or_else(|| Learned {
        verbatim: tool
            .verbatim
            .unwrap_or_else(|| verbatim::by_default(name, None)),
        ..Default::default()
    });
    let mut empty = Map::new();
    let args = args.unwrap_or(&mut empty);
    let mut changed = false;
    let mut level = None;
    if let Some(arg) = &learned.detail
        && let Some(v) = args.remove(arg)
    {
        changed = true;
        match v.as_str().filter(|s| tool.policy.level_index(s).is_ok()) {
            Some(l) => level = Some(l.to_owned()),
            None => {
                let allowed = tool.distinct_levels().join(", ");
                return Prepared::Invalid(format!("`{arg}` must be one of: {allowed} (got {v})"));
            }
        }
    }
    let mut params = Vec::new();
    for param in &learned.params {
        let Some(v) = args.remove(param) else {
            continue;
        };
        changed = true;
        let default = tool.params.iter().find(|(p, _)| p == param).map(|(_, d)| d);
        match default.map(|d| param_text(param, &v, d)) {
            Some(Ok(text)) => params.push((param.clone(), text)),
            Some(Err(message)) => return Prepared::Invalid(message),
            None => {}
        }
    }
    let mut fields = None;
    if learned.fields
        && let Some(v) = args.remove(FIELDS)
    {
        changed = true;
        match fields_of(&v) {
            Ok(f) => fields = Some(f),
            Err(message) => return Prepared::Invalid(message),
        }
    }
    // The tool's own argument: read, never taken out.
    let query = tool
        .query_argument
        .as_deref()
        .and_then(|a| args.get(a))
        .and_then(Json::as_str)
        .map(str::to_owned);
    Prepared::Forward {
        pending: Some(Pending {
            query,
            fields,
            detail_arg: learned.detail.unwrap_or_else(|| "detail".to_owned()),
            tool_name: name.to_owned(),
            tool,
            level,
            params,
            verbatim: learned.verbatim,
        }),
        changed,
    }
}

/// The `fields` argument: a list of fields, or one comma-separated text; the error for the
/// caller names the argument.
fn fields_of(v: &Json) -> Result<crate::project::Fields, String> {
    let parsed = match v {
        Json::String(s) => crate::project::Fields::parse_list(s),
        Json::Array(items) => {
            let texts: Option<Vec<&str>> = items.iter().map(Json::as_str).collect();
            let texts =
                texts.ok_or_else(|| format!("`{FIELDS}` must be a list of strings (got {v})"))?;
            crate::project::Fields::parse_each(&texts)
        }
        _ => return Err(format!("`{FIELDS}` must be a list of strings (got {v})")),
    };
    parsed.map_err(|e| format!("`{FIELDS}`: {e}"))
}

/// A caller's parameter value as the engine takes it, or the error for the caller.
fn param_text(name: &str, v: &Json, default: &Scalar) -> Result<String, String> {
    let text = match (default, v) {
        (Scalar::Number(_), Json::Number(n)) => {
            n.as_f64().filter(|f| f.is_finite()).map(|f| f.to_string())
        }
        (Scalar::Bool(_), Json::Bool(b)) => Some(b.to_string()),
        (Scalar::String(_), Json::String(s)) => Some(s.clone()),
        _ => None,
    };
    text.ok_or_else(|| {
        format!(
            "`{name}` must be a {} (got {v}; default {})",
            default.kind(),
            scalar_text(default)
        )
    })
}

/// Answer `pare_more`: a cached page, or an original (whole, a `path`, or a `detail`);
/// `Err`: the message of an invalid-params error.
pub fn more(
    args: Option<&Json>,
    pages: &mut PageCache,
    originals: &mut Originals,
    budget: Budget,
) -> Result<Json, String> {
    let arg = |k: &str| args.and_then(|a| a.get(k)).and_then(Json::as_str);
    let cursor = arg("cursor").ok_or("pare_more: `cursor` is required")?;
    if let Some(page) = pages.get(cursor) {
        return Ok(page_result(page));
    }
    let Some(original) = originals.get(cursor) else {
        return Err(
            "pare_more: unknown or expired cursor; call the original tool again".to_owned(),
        );
    };
    let ask = match (arg("path"), arg("detail")) {
        (Some(_), Some(_)) => return Err("pare_more: give `path` or `detail`, not both".into()),
        (Some(p), None) => Ask::Path(p),
        (None, Some(d)) => Ask::Level(d),
        (None, None) => Ask::Whole,
    };
    original_result(&original, ask, budget, pages).map_err(|e| format!("pare_more: {e}"))
}
