//! What `pare mcp` has done, for Prometheus (`--metrics ADDR`): tool calls by tool and what
//! pare did with the result, their latency (from the call forwarded to its result), tokens
//! before and after, pages served (by the server's result or by `pare_more`), and
//! `pare_more` calls. The text format and histogram are `pare_http::metrics`'s, served on a
//! listener of its own by pare's one HTTP stack.
//!
//! Tool labels are names the server listed (a call pare shapes is of a listed tool), so the
//! label set is bounded by the server's tool list.
//!
//! ```text
//! pare_mcp_tool_calls_total{tool="read_graph",outcome="shaped"} 3
//! ```

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pare_http::metrics::{Histogram, counter_by, header, sample};
use serde_json::Value as Json;

/// The counters, behind one lock.
#[derive(Debug, Default)]
pub struct McpMetrics {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    calls: BTreeMap<(String, &'static str), u64>,
    latency: BTreeMap<String, Histogram>,
    tokens_before: BTreeMap<String, u64>,
    tokens_after: BTreeMap<String, u64>,
    pages: BTreeMap<(String, &'static str), u64>,
    more: BTreeMap<&'static str, u64>,
}

/// What pare did with a shaped tool's result.
#[derive(Debug, Clone, Copy)]
pub enum Outcome {
    /// Rewritten by the policy (`result`: the new one, whose `_meta.pare` has the counts).
    Shaped,
    /// Forwarded as the server wrote it, as asked (`detail: "full"`, a verbatim tool).
    AsIs,
    /// Forwarded as written because shaping could not be done (logged).
    Unchanged,
}

impl McpMetrics {
    /// Count a call of `tool` answered after `took`; `result`: what the client got.
    pub fn call(&self, tool: &str, outcome: Outcome, took: Duration, result: &Json) {
        let name = match outcome {
            Outcome::Shaped => "shaped",
            Outcome::AsIs => "as_is",
            Outcome::Unchanged => "unchanged",
        };
        let mut m = self.inner.lock().expect("metrics");
        *m.calls.entry((tool.to_owned(), name)).or_default() += 1;
        m.latency
            .entry(tool.to_owned())
            .or_default()
            .observe(took.as_secs_f64());
        if let Outcome::Shaped = outcome {
            m.count_page(tool, "server", result);
        }
    }

    /// Count a `pare_more` call: its page, or that it was refused.
    pub fn more(&self, result: Result<&Json, ()>) {
        let mut m = self.inner.lock().expect("metrics");
        match result {
            Ok(result) => {
                *m.more.entry("ok").or_default() += 1;
                m.count_page(pare::mcp::tools_list::PARE_MORE, "pare_more", result);
            }
            Err(()) => *m.more.entry("error").or_default() += 1,
        }
    }

    /// Everything, in the Prometheus text format.
    pub fn render(&self) -> String {
        let m = self.inner.lock().expect("metrics");
        let mut out = String::with_capacity(2048);
        header(
            &mut out,
            "pare_mcp_tool_calls_total",
            "counter",
            "Results of the tools pare shapes, by tool and what pare did (shaped, as_is, unchanged).",
        );
        for ((tool, outcome), n) in &m.calls {
            let labels = [("tool", tool.as_str()), ("outcome", *outcome)];
            sample(&mut out, "pare_mcp_tool_calls_total", &labels, *n as f64);
        }
        header(
            &mut out,
            "pare_mcp_tool_call_duration_seconds",
            "histogram",
            "Time from a tool call forwarded to its result sent, by tool.",
        );
        for (tool, h) in &m.latency {
            h.render(
                &mut out,
                "pare_mcp_tool_call_duration_seconds",
                &[("tool", tool)],
            );
        }
        counter_by(
            &mut out,
            "pare_mcp_tokens_before_total",
            "Tokens of the tool results pare shaped, as the server wrote them (once per result), by tool.",
            "tool",
            m.tokens_before.iter().map(|(k, n)| (k, *n)),
        );
        counter_by(
            &mut out,
            "pare_mcp_tokens_after_total",
            "Tokens of the pages pare sent, by tool.",
            "tool",
            m.tokens_after.iter().map(|(k, n)| (k, *n)),
        );
        header(
            &mut out,
            "pare_mcp_pages_served_total",
            "counter",
            "Shaped pages sent, by tool and by what sent them (server: a result; pare_more: a later page).",
        );
        for ((tool, source), n) in &m.pages {
            let labels = [("tool", tool.as_str()), ("source", *source)];
            sample(&mut out, "pare_mcp_pages_served_total", &labels, *n as f64);
        }
        counter_by(
            &mut out,
            "pare_mcp_more_calls_total",
            "pare_more calls pare answered, by result (ok, error).",
            "result",
            m.more.iter().map(|(k, n)| (k, *n)),
        );
        out
    }
}

impl Inner {
    /// A page sent for `tool`, its counts read from the result's `_meta.pare`.
    fn count_page(&mut self, tool: &str, source: &'static str, result: &Json) {
        *self.pages.entry((tool.to_owned(), source)).or_default() += 1;
        let meta = result.pointer("/_meta/pare");
        let count = |k: &str| meta.and_then(|m| m.get(k)).and_then(Json::as_u64);
        // A later page names the whole result's count again: counted once, with the first.
        if let Some(n) = count("tokensBefore").filter(|_| source == "server") {
            *self.tokens_before.entry(tool.to_owned()).or_default() += n;
        }
        if let Some(n) = count("tokensAfter") {
            *self.tokens_after.entry(tool.to_owned()).or_default() += n;
        }
    }
}

/// Serve `metrics` at `http://ADDR/metrics` on a thread of its own until the process ends
/// (loopback only unless `allow_remote`). Returns once the address is bound, or why not.
pub fn serve(
    addr: SocketAddr,
    allow_remote: bool,
    metrics: Arc<McpMetrics>,
) -> std::io::Result<()> {
    let (bound, told) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("pare-mcp-metrics".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(r) => r,
                Err(e) => {
                    let _ = bound.send(Err(e));
                    return;
                }
            };
            runtime.block_on(async move {
                let listener = match pare_http::server::bind(addr, allow_remote).await {
                    Ok(l) => l,
                    Err(e) => {
                        let _ = bound.send(Err(e));
                        return;
                    }
                };
                let _ = bound.send(Ok(()));
                let handler = pare_http::metrics::handler(Arc::new(move || metrics.render()));
                let limits = pare_http::server::Limits::default();
                pare_http::server::serve(listener, limits, handler, std::future::pending()).await;
            });
        })?;
    told.recv()
        .unwrap_or_else(|_| Err(std::io::Error::other("the metrics thread ended")))
}
