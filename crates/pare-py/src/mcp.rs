//! `pare._pare.McpSession`: the engine's MCP mapping (`pare::mcp::session`) for one MCP
//! server run in-process, behind one lock. `pare/mcp.py` wraps a Python server's
//! `tools/list` and `tools/call` handlers with it, so a FastMCP/MCPServer server's tools get
//! the same `detail` argument, budget, pages and `pare_more` as through `pare mcp`.
//!
//! Messages cross as JSON text (the server's pydantic models dump and load it), so the
//! engine sees exactly what `pare mcp` would see on the wire.
//!
//! ```python
//! session = _pare.McpSession(policy, max_tokens=20000)
//! listed, warnings = session.list_tools(json.dumps(result))
//! ```

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use pare::mcp::call::Pending;
use pare::mcp::config::Config;
use pare::mcp::result::Budget;
use pare::mcp::session::{Outcome, Request, Session};
use pare::mcp::store::Limits;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::errors;
use crate::policy::{self, PyPolicy};

/// The engine's MCP session for one in-process server.
#[pyclass(module = "pare", name = "McpSession", frozen)]
pub struct McpSession {
    session: Mutex<Session>,
    /// Calls forwarded to the tool, by the handle `call_request` gave out.
    pending: Mutex<HashMap<u64, Pending>>,
    next: AtomicU64,
}

fn json(text: &str, what: &str) -> PyResult<serde_json::Value> {
    serde_json::from_str(text).map_err(|e| PyValueError::new_err(format!("{what}: not JSON: {e}")))
}

#[pymethods]
impl McpSession {
    /// `policy`'s `[mcp]` section (the built-in lossless policy without one); `max_tokens`
    /// by `tokenizer` and `max_chars4` (by chars/4) are each result page's hard limits, as
    /// `pare mcp --max-tokens/--max-chars4`.
    #[new]
    #[pyo3(signature = (policy=None, max_tokens=20_000, max_chars4=25_000, tokenizer="o200k_base"))]
    fn new(
        py: Python<'_>,
        policy: Option<&Bound<'_, PyPolicy>>,
        max_tokens: usize,
        max_chars4: usize,
        tokenizer: &str,
    ) -> PyResult<McpSession> {
        if max_tokens == 0 {
            return Err(PyValueError::new_err("max_tokens must be at least 1"));
        }
        let config = match policy {
            Some(p) => {
                let p = p.get();
                Config::from_policy(p.recompile(py)?, &mut p.resolver())
            }
            None => Config::from_policy(
                pare::Policy::builtin_default(),
                &mut PyPolicy::builtin().resolver(),
            ),
        }
        .map_err(|e| errors::pare_error(py, format!("[mcp]: {e}")))?;
        let budget = Budget {
            max_tokens,
            max_chars4: max_chars4.max(1),
            tokenizer: policy::tokenizer(tokenizer)?,
        };
        Ok(McpSession {
            session: Mutex::new(Session::new(config, budget, Limits::default())),
            pending: Mutex::new(HashMap::new()),
            next: AtomicU64::new(1),
        })
    }

    /// Rewrite a `tools/list` result (JSON text): the new result's text, and warnings to log.
    fn list_tools(&self, py: Python<'_>, result: &str) -> PyResult<(String, Vec<String>)> {
        let mut result = json(result, "tools/list result")?;
        let warnings = py.detach(|| self.lock().list_tools(&mut result));
        Ok((result.to_string(), warnings))
    }

    /// A `tools/call` of `name` with `arguments` (JSON text of an object, or None). Returns
    /// `(kind, text, handle)`: `("more", result, None)` — `pare_more`, answered;
    /// `("invalid", message, None)` — answer with an invalid-params error;
    /// `("forward", arguments or None, handle or None)` — call the tool, with these
    /// arguments when pare took some out (None: unchanged), and hand the result to
    /// `call_result(handle, …)` when a handle is given.
    #[pyo3(signature = (name, arguments=None))]
    fn call_request(
        &self,
        py: Python<'_>,
        name: &str,
        arguments: Option<&str>,
    ) -> PyResult<(&'static str, Option<String>, Option<u64>)> {
        let mut args = arguments.map(|a| json(a, "arguments")).transpose()?;
        let request = py.detach(|| {
            let object = args.as_mut().and_then(|a| a.as_object_mut());
            self.lock().call_request(name, object)
        });
        Ok(match request {
            Request::More(Ok(result)) => ("more", Some(result.to_string()), None),
            Request::More(Err(message)) | Request::Invalid(message) => {
                ("invalid", Some(message), None)
            }
            Request::Forward { pending, changed } => {
                let handle = pending.map(|p| {
                    let h = self.next.fetch_add(1, Ordering::Relaxed);
                    self.pending
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(h, p);
                    h
                });
                let args = changed.then(|| args.map(|a| a.to_string())).flatten();
                ("forward", args, handle)
            }
        })
    }

    /// Shape the result (JSON text) of the call `handle` names. Returns `(kind, text,
    /// list_changed)`: `("shaped", result, list_changed)` — send this instead, and when
    /// `list_changed`, tell the client the tool list changed (`pare_more` joined it);
    /// `("as_is", None, False)`; `("unchanged", reason, False)` — send the original, log why.
    fn call_result(
        &self,
        py: Python<'_>,
        handle: u64,
        result: &str,
    ) -> PyResult<(&'static str, Option<String>, bool)> {
        let Some(pending) = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&handle)
        else {
            return Err(PyValueError::new_err(format!(
                "no call {handle} is waiting for its result"
            )));
        };
        let result = json(result, "tools/call result")?;
        let outcome = py.detach(|| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.lock().call_result(&result, &pending)
            }))
        });
        Ok(match outcome {
            Ok(Outcome::Shaped {
                result,
                list_changed,
            }) => ("shaped", Some(result.to_string()), list_changed),
            Ok(Outcome::AsIs) => ("as_is", None, false),
            Ok(Outcome::Unchanged(why)) => ("unchanged", Some(why.to_owned()), false),
            // Fail open, as the proxy does.
            Err(_) => ("unchanged", Some("shaping failed".to_owned()), false),
        })
    }

    /// Drop a call whose result will never come (the tool raised).
    fn forget(&self, handle: u64) {
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
