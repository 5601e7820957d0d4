//! `pare mcp`: a transparent MCP proxy that shapes any server's tool results.
//!
//! The client talks to pare over stdio, or over MCP's streamable HTTP transport with a
//! session per client ([`listen`]); pare runs the server as a child process over stdio
//! ([`run_stdio`]) or reaches it over streamable HTTP ([`http_upstream`]), and moves
//! newline-delimited JSON-RPC messages between them ([`proxy`]). Everything that
//! is not a tool result passes byte for byte. What pare does to tool lists, calls and
//! results is the engine's MCP mapping (`pare::mcp`, shared with the Python package's
//! server integration): results go through the response pipeline (`pare::respond`: level,
//! budget, pages, cursors) by way of [`shape_result`]; later pages wait in the [`cache`],
//! and the server's text of results shown in part in [`originals`], for the synthetic
//! `pare_more` tool, listed once it is needed ([`tools_list`]). File text stays byte for
//! byte ([`verbatim`]). This crate moves the messages ([`calls`] at the points where
//! pare acts) and reads the policy files of the `[mcp]` section ([`config`]).
//!
//! Fail-open: a result pare cannot shape is forwarded unchanged with a log line on stderr.
//! Nothing but protocol is written to stdout.

pub mod calls;
pub mod child;
pub mod config;
pub mod http_upstream;
pub mod lines;
pub mod listen;
mod members;
pub mod metrics;
pub mod proxy;
pub mod rpc;
pub mod scan;
pub mod sse;

// The MCP mapping itself is the engine's (`pare::mcp`), shared with the other MCP doors.
pub use pare::mcp::result as shape_result;
pub use pare::mcp::store as cache;
pub use pare::mcp::{originals, tools_compact, tools_list, verbatim};

use std::io::BufReader;

pub use config::{Config, ConfigError};
pub use proxy::{Ending, Options};

/// The proxy could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    #[error("cannot start the server `{command}`: {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error("no server command given (pare mcp [OPTIONS] -- COMMAND [ARGS]...)")]
    NoCommand,
    /// The server exited while the client was still connected.
    #[error(
        "the upstream MCP server exited ({status}); {pending} open request(s) were answered with an error"
    )]
    UpstreamExited { status: String, pending: usize },
    /// `pare mcp --listen` could not listen.
    #[error("cannot listen on {addr}: {why}")]
    Listen { addr: String, why: String },
    /// The HTTP upstream could not be reached (or forgot the session); every open request
    /// was answered with an error.
    #[error("the upstream MCP server at {url} is unusable: {why}")]
    UpstreamHttp { url: String, why: String },
}

/// Run the server `command` as a child and proxy this process's stdin/stdout to it.
/// Returns when the client closes stdin (Ok) or the server exits first (Err); either way
/// the server's process group is gone by then ([`child`]).
pub fn run_stdio(opts: Options, command: &[String]) -> Result<(), McpError> {
    let (server, upstream_in, upstream_out) = child::spawn(command)?;
    let upstream_out = BufReader::with_capacity(1 << 16, upstream_out);
    let client_in = BufReader::with_capacity(1 << 16, std::io::stdin());
    let ending = proxy::run(
        opts,
        client_in,
        std::io::stdout(),
        upstream_in,
        upstream_out,
    );
    let status = server.stop(child::GRACE);
    match ending {
        Ending::ClientClosed => Ok(()),
        Ending::UpstreamExited { pending } => Err(McpError::UpstreamExited {
            status: status.map_or_else(|| "still running, killed".to_owned(), |s| s.to_string()),
            pending,
        }),
    }
}
