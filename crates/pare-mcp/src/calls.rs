//! `tools/call` through the proxy: the request (the arguments pare added are taken out and
//! checked: the level, the caller's policy parameters), the result (shaped by
//! [`crate::shape_result`]), and `pare_more`, which pare answers itself from its page and
//! original stores.
//!
//! The first time a result names a page or an original, `pare_more` joins the tool list
//! and the client is told (`notifications/tools/list_changed`, before that result, so the
//! client knows the tool by the time the model reads the note).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use pare::params::Scalar;
use serde_json::{Map, Value as Json};

use crate::config::ToolPolicy;
use crate::proxy::{Shared, log};
use crate::rpc;
use crate::shape_result::{Ask, Call, Shaped, Stores, original_result, page_result, shape_result};
use crate::tools_list::{PARE_MORE, scalar_text};
use crate::verbatim;

/// A call of a shaped tool waiting for its result.
#[derive(Debug)]
pub(crate) struct CallPending {
    tool_name: String,
    tool: Arc<ToolPolicy>,
    /// The level the caller named; `None`: the tool's default.
    level: Option<String>,
    /// The argument a level is named by, for the notes.
    detail_arg: String,
    params: Vec<(String, String)>,
    verbatim: bool,
}

pub(crate) enum CallRequest {
    Answered,
    /// Forward, with this to remember (`None`: an unshaped tool); `true` when the message
    /// was changed.
    Forward(Option<CallPending>, bool),
}

pub(crate) fn call_request(shared: &Shared, msg: &mut Json, id: &Json) -> CallRequest {
    let Some(name) = msg
        .pointer("/params/name")
        .and_then(Json::as_str)
        .map(str::to_owned)
    else {
        return CallRequest::Forward(None, false);
    };
    let (learned, server_has_more) = {
        let tools = shared.tools.lock().expect("tools");
        (tools.tools.get(&name).cloned(), tools.server_has_more)
    };
    if name == PARE_MORE && !server_has_more {
        let reply = match more(shared, msg.pointer("/params/arguments")) {
            Ok(result) => rpc::result(id, result),
            Err(message) => rpc::error(id, rpc::INVALID_PARAMS, &message),
        };
        let _ = shared.to_client(&reply);
        return CallRequest::Answered;
    }
    let Some(tool) = shared.opts.config.tool(&name) else {
        return CallRequest::Forward(None, false);
    };
    // A tool the client never listed through pare gets nothing taken out of its arguments.
    let learned = learned.unwrap_or_else(|| crate::tools_list::Learned {
        verbatim: tool
            .verbatim
            .unwrap_or_else(|| verbatim::by_default(&name, None)),
        ..Default::default()
    });
    let mut empty = Map::new();
    let args = msg
        .pointer_mut("/params/arguments")
        .and_then(Json::as_object_mut)
        .unwrap_or(&mut empty);
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
                let message = format!("`{arg}` must be one of: {allowed} (got {v})");
                let _ = shared.to_client(&rpc::error(id, rpc::INVALID_PARAMS, &message));
                return CallRequest::Answered;
            }
        }
    }
    let mut params = Vec::new();
    for name in &learned.params {
        let Some(v) = args.remove(name) else { continue };
        changed = true;
        let default = tool.params.iter().find(|(p, _)| p == name).map(|(_, d)| d);
        match default.map(|d| param_text(name, &v, d)) {
            Some(Ok(text)) => params.push((name.clone(), text)),
            Some(Err(message)) => {
                let _ = shared.to_client(&rpc::error(id, rpc::INVALID_PARAMS, &message));
                return CallRequest::Answered;
            }
            None => {}
        }
    }
    CallRequest::Forward(
        Some(CallPending {
            detail_arg: learned.detail.unwrap_or_else(|| "detail".to_owned()),
            tool_name: name,
            tool,
            level,
            params,
            verbatim: learned.verbatim,
        }),
        changed,
    )
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

/// Shape a call's result in place; whether it changed.
pub(crate) fn call_result(shared: &Shared, result: &mut Json, pending: CallPending) -> bool {
    let call = Call {
        tool_name: &pending.tool_name,
        tool: &pending.tool,
        level: pending.level.as_deref(),
        detail_arg: &pending.detail_arg,
        params: &pending.params,
        verbatim: pending.verbatim,
    };
    // Fail open: a panic while shaping forwards the original.
    let shaped = catch_unwind(AssertUnwindSafe(|| {
        let mut pages = shared.cache.lock().unwrap_or_else(|e| e.into_inner());
        let mut originals = shared.originals.lock().unwrap_or_else(|e| e.into_inner());
        let stores = Stores {
            pages: &mut pages,
            originals: &mut originals,
        };
        shape_result(result, &call, shared.opts.budget, stores)
    }));
    let name = &pending.tool_name;
    match shaped {
        Ok(Shaped::Result {
            result: new,
            needs_more,
        }) => {
            if needs_more {
                list_more(shared);
            }
            *result = new;
            true
        }
        Ok(Shaped::AsIs) => false,
        Ok(Shaped::Unchanged(why)) => {
            log(&format!("`{name}` result forwarded unchanged: {why}"));
            false
        }
        Err(_) => {
            log(&format!(
                "`{name}` result forwarded unchanged: shaping failed"
            ));
            false
        }
    }
}

/// List `pare_more` from now on, telling the client the first time.
fn list_more(shared: &Shared) {
    let first = {
        let mut tools = shared.tools.lock().expect("tools");
        !std::mem::replace(&mut tools.more_needed, true) && !tools.server_has_more
    };
    if first {
        let _ =
            shared.to_client(br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#);
    }
}

/// Answer `pare_more`: a cached page, or an original (whole, a `path`, or a `detail`).
fn more(shared: &Shared, args: Option<&Json>) -> Result<Json, String> {
    let arg = |k: &str| args.and_then(|a| a.get(k)).and_then(Json::as_str);
    let cursor = arg("cursor").ok_or("pare_more: `cursor` is required")?;
    if let Some(page) = shared.cache.lock().expect("cache").get(cursor) {
        return Ok(page_result(page));
    }
    let original = shared.originals.lock().expect("originals").get(cursor);
    let Some(original) = original else {
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
    let mut pages = shared.cache.lock().expect("cache");
    let result = original_result(&original, ask, shared.opts.budget, &mut pages)
        .map_err(|e| format!("pare_more: {e}"))?;
    drop(pages);
    if result.pointer("/_meta/pare/nextCursor").is_some() {
        list_more(shared);
    }
    Ok(result)
}
