//! `McpSession`: the engine's MCP mapping (`pare::mcp::session`) for one MCP server run
//! in-process, behind one lock. The package's `mcp.js` wraps a TypeScript SDK server's
//! `tools/list` and `tools/call` handlers with it, so its tools get the same `detail`
//! argument, budget, pages and `pare_more` as through `pare mcp`.
//!
//! Messages cross as JSON text (what the SDK's transport would write), so the engine sees
//! exactly what `pare mcp` would see on the wire.
//!
//! ```js
//! const session = new McpSession(policy, 20000, 25000, "o200k_base");
//! const [listed, warnings] = session.listTools(JSON.stringify(result));
//! ```

use std::collections::HashMap;
use std::sync::Mutex;

use napi_derive::napi;
use pare::mcp::call::Pending;
use pare::mcp::config::Config;
use pare::mcp::result::Budget;
use pare::mcp::session::{Outcome, Request, Session};
use pare::mcp::store::Limits;

use crate::errors;
use crate::policy::{self, NativePolicy};

/// The engine's MCP session for one in-process server.
#[napi]
pub struct McpSession {
    session: Mutex<Session>,
    /// Calls forwarded to the tool, by the handle `callRequest` gave out.
    pending: Mutex<HashMap<u32, Pending>>,
    next: Mutex<u32>,
}

fn json(text: &str, what: &str) -> napi::Result<serde_json::Value> {
    serde_json::from_str(text).map_err(|e| errors::type_error(format!("{what}: not JSON: {e}")))
}

/// A rewritten `tools/list` result and the warnings to log.
#[napi(object)]
pub struct Listed {
    pub result: String,
    pub warnings: Vec<String>,
}

/// What to do with a `tools/call`: `more` (answer `text`, a result), `invalid` (answer an
/// invalid-params error with the message `text`), `forward` (call the tool, with the
/// arguments `text` when pare took some out, and hand the result to `callResult(handle)`
/// when there is a handle).
#[napi(object)]
pub struct CallRequest {
    pub kind: String,
    pub text: Option<String>,
    pub handle: Option<u32>,
}

/// What became of a result: `shaped` (send `text` instead; when `listChanged`, tell the
/// client the tool list changed), `as_is`, or `unchanged` (send the original; `text` says
/// why).
#[napi(object)]
pub struct CallResult {
    pub kind: String,
    pub text: Option<String>,
    pub list_changed: bool,
}

#[napi]
impl McpSession {
    /// `policy`'s `[mcp]` section (the built-in lossless policy without one); `maxTokens`
    /// by `tokenizer` and `maxChars4` (by chars/4) are each result page's hard limits, as
    /// `pare mcp --max-tokens/--max-chars4`.
    #[napi(constructor)]
    pub fn new(
        policy: Option<&NativePolicy>,
        max_tokens: u32,
        max_chars4: u32,
        tokenizer: String,
    ) -> napi::Result<McpSession> {
        if max_tokens == 0 {
            return Err(errors::type_error("maxTokens must be at least 1".into()));
        }
        let config = match policy {
            Some(p) => Config::from_policy(p.recompile()?, &mut p.resolver()),
            None => Config::from_policy(
                pare::Policy::builtin_default(),
                &mut NativePolicy::builtin().resolver(),
            ),
        }
        .map_err(|e| errors::pare_error(format!("[mcp]: {e}")))?;
        let budget = Budget {
            max_tokens: max_tokens as usize,
            max_chars4: (max_chars4 as usize).max(1),
            tokenizer: policy::tokenizer(&tokenizer)?,
        };
        Ok(McpSession {
            session: Mutex::new(Session::new(config, budget, Limits::default())),
            pending: Mutex::new(HashMap::new()),
            next: Mutex::new(1),
        })
    }

    /// Rewrite a `tools/list` result (JSON text).
    #[napi]
    pub fn list_tools(&self, result: String) -> napi::Result<Listed> {
        let mut result = json(&result, "tools/list result")?;
        let warnings = self.lock().list_tools(&mut result);
        Ok(Listed {
            result: result.to_string(),
            warnings,
        })
    }

    /// A `tools/call` of `name` with `arguments` (JSON text of an object, or none).
    #[napi]
    pub fn call_request(
        &self,
        name: String,
        arguments: Option<String>,
    ) -> napi::Result<CallRequest> {
        let mut args = arguments.map(|a| json(&a, "arguments")).transpose()?;
        let object = args.as_mut().and_then(|a| a.as_object_mut());
        let request = self.lock().call_request(&name, object);
        Ok(match request {
            Request::More(Ok(result)) => CallRequest {
                kind: "more".into(),
                text: Some(result.to_string()),
                handle: None,
            },
            Request::More(Err(message)) | Request::Invalid(message) => CallRequest {
                kind: "invalid".into(),
                text: Some(message),
                handle: None,
            },
            Request::Forward { pending, changed } => {
                let handle = pending.map(|p| {
                    let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
                    let h = *next;
                    *next = next.wrapping_add(1).max(1);
                    self.pending
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(h, p);
                    h
                });
                CallRequest {
                    kind: "forward".into(),
                    text: changed.then(|| args.map(|a| a.to_string())).flatten(),
                    handle,
                }
            }
        })
    }

    /// Shape the result (JSON text) of the call `handle` names.
    #[napi]
    pub fn call_result(&self, handle: u32, result: String) -> napi::Result<CallResult> {
        let Some(pending) = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&handle)
        else {
            return Err(errors::pare_error(format!(
                "no call {handle} is waiting for its result"
            )));
        };
        let result = json(&result, "tools/call result")?;
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.lock().call_result(&result, &pending)
        }));
        let (kind, text, list_changed) = match outcome {
            Ok(Outcome::Shaped {
                result,
                list_changed,
            }) => ("shaped", Some(result.to_string()), list_changed),
            Ok(Outcome::AsIs) => ("as_is", None, false),
            Ok(Outcome::Unchanged(why)) => ("unchanged", Some(why.to_owned()), false),
            // Fail open, as the proxy does.
            Err(_) => ("unchanged", Some("shaping failed".to_owned()), false),
        };
        Ok(CallResult {
            kind: kind.into(),
            text,
            list_changed,
        })
    }

    /// Drop a call whose result will never come (the tool threw).
    #[napi]
    pub fn forget(&self, handle: u32) {
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&handle);
    }
}

impl McpSession {
    fn lock(&self) -> std::sync::MutexGuard<'_, Session> {
        // A panic while shaping is caught above; the state it left is still usable.
        self.session.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The `pare_more` tool as `pare mcp` lists it, as JSON.
#[napi]
pub fn pare_more_tool() -> String {
    pare::mcp::tools_list::pare_more_tool().to_string()
}
