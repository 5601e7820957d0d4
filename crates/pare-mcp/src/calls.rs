//! `tools/call` through the proxy: where the proxy acts on a call, by the engine's rules
//! (`pare::mcp::call`, `pare::mcp::result`): the request (the arguments pare added taken
//! out and checked), the result (shaped), and `pare_more`, which pare answers itself from
//! its page and original stores.
//!
//! The first time a result names a page or an original, `pare_more` joins the tool list
//! and the client is told (`notifications/tools/list_changed`, before that result, so the
//! client knows the tool by the time the model reads the note).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

use pare::mcp::call::{self, Pending, Prepared};
use pare::mcp::result::{Shaped, Stores, shape_result};
use pare::mcp::tools_list::PARE_MORE;
use serde_json::Value as Json;

use crate::metrics::Outcome;
use crate::proxy::{Shared, log};
use crate::rpc;

/// A call of a shaped tool waiting for its result.
pub(crate) type CallPending = Pending;

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
        let answer = more(shared, msg.pointer("/params/arguments"));
        if let Some(m) = &shared.opts.metrics {
            m.more(answer.as_ref().map_err(|_| ()));
        }
        let reply = match answer {
            Ok(result) => rpc::result(id, result),
            Err(message) => rpc::error(id, rpc::INVALID_PARAMS, &message),
        };
        let _ = shared.to_client(&reply);
        return CallRequest::Answered;
    }
    let args = msg
        .pointer_mut("/params/arguments")
        .and_then(Json::as_object_mut);
    match call::prepare(&shared.opts.config, learned, &name, args) {
        Prepared::Forward { pending, changed } => CallRequest::Forward(pending, changed),
        Prepared::Invalid(message) => {
            let _ = shared.to_client(&rpc::error(id, rpc::INVALID_PARAMS, &message));
            CallRequest::Answered
        }
    }
}

/// What a call's result became.
pub(crate) enum Rewritten {
    /// Sent as the server wrote it.
    No,
    /// `result` was rewritten; `drop_structured`: its `structuredContent` is not sent
    /// (a lazily read result, which has it only as raw bytes, leaves it out).
    Yes { drop_structured: bool },
}

/// Shape a call's result in place (and count it, with `--metrics`). `structured`: its
/// `structuredContent` as the server wrote it, when `result` lacks it (read lazily);
/// `started`: when the call was forwarded.
pub(crate) fn call_result(
    shared: &Shared,
    result: &mut Json,
    structured: Option<&str>,
    pending: CallPending,
    started: Instant,
) -> Rewritten {
    let name = pending.tool_name.clone();
    let (rewritten, outcome) = shape_call_result(shared, result, structured, pending);
    if let Some(m) = &shared.opts.metrics {
        m.call(&name, outcome, started.elapsed(), result);
    }
    rewritten
}

fn shape_call_result(
    shared: &Shared,
    result: &mut Json,
    structured: Option<&str>,
    pending: CallPending,
) -> (Rewritten, Outcome) {
    // Fail open: a panic while shaping forwards the original.
    let shaped = catch_unwind(AssertUnwindSafe(|| {
        let mut pages = shared.cache.lock().unwrap_or_else(|e| e.into_inner());
        let mut originals = shared.originals.lock().unwrap_or_else(|e| e.into_inner());
        let stores = Stores {
            pages: &mut pages,
            originals: &mut originals,
        };
        shape_result(
            result,
            structured,
            &pending.call(),
            shared.opts.budget,
            stores,
        )
    }));
    let name = &pending.tool_name;
    match shaped {
        Ok(Shaped::Result {
            result: new,
            needs_more,
            drop_structured,
        }) => {
            if needs_more {
                list_more(shared);
            }
            *result = new;
            (Rewritten::Yes { drop_structured }, Outcome::Shaped)
        }
        Ok(Shaped::AsIs) => (Rewritten::No, Outcome::AsIs),
        Ok(Shaped::Unchanged(why)) => {
            log(&format!("`{name}` result forwarded unchanged: {why}"));
            (Rewritten::No, Outcome::Unchanged)
        }
        Err(_) => {
            log(&format!(
                "`{name}` result forwarded unchanged: shaping failed"
            ));
            (Rewritten::No, Outcome::Unchanged)
        }
    }
}

/// List `pare_more` from now on, telling the client the first time.
fn list_more(shared: &Shared) {
    let first = shared.tools.lock().expect("tools").need_more();
    if first {
        let _ =
            shared.to_client(br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#);
    }
}

/// Answer `pare_more` ([`call::more`]).
fn more(shared: &Shared, args: Option<&Json>) -> Result<Json, String> {
    let result = {
        let mut pages = shared.cache.lock().expect("cache");
        let mut originals = shared.originals.lock().expect("originals");
        call::more(args, &mut pages, &mut originals, shared.opts.budget)?
    };
    if result.pointer("/_meta/pare/nextCursor").is_some() {
        list_more(shared);
    }
    Ok(result)
}
