//! `pare mcp`: put pare in front of an MCP server (a thin door over the `pare-mcp` crate).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args as ClapArgs;
use pare_mcp::cache::Limits;
use pare_mcp::listen::{Deadlines, Listen, Upstream};
use pare_mcp::shape_result::Budget;
use pare_mcp::{Config, Options};

use crate::io::{listen_addr, tokenizer, usage_error};

#[derive(ClapArgs)]
#[command(
    after_help = "Examples:\n  pare mcp --policy examples/policies/memory.toml -- npx -y @modelcontextprotocol/server-memory\n  pare mcp --upstream-url http://127.0.0.1:3001/mcp\n  pare mcp --listen 127.0.0.1:8765 --policy examples/policies/memory.toml -- npx -y @modelcontextprotocol/server-memory"
)]
pub struct Args {
    /// Policy file (TOML or JSON); its `[mcp]` section picks a policy, format and level per
    /// tool. Default: lossless (no ops, only re-encoded), format auto.
    #[arg(long, short)]
    pub policy: Option<PathBuf>,
    /// Token budget of one tool result; longer results are shaped harder, then paged.
    #[arg(long, default_value_t = 20_000)]
    pub max_tokens: usize,
    /// The limit by the chars/4 estimate, which some clients judge results by (Claude Code's
    /// MAX_MCP_OUTPUT_TOKENS, 25000 by default). A result must fit both limits.
    #[arg(long, default_value_t = 25_000)]
    pub max_chars4: usize,
    /// Tokenizer for counts and budgets: o200k_base, cl100k_base, chars4.
    #[arg(long, default_value = "o200k_base")]
    pub tokenizer: String,
    /// Messages longer than this many bytes are forwarded unchanged, streamed, never held
    /// in memory whole.
    #[arg(long, default_value_t = 8 << 20)]
    pub max_message_bytes: usize,
    /// How many later pages the `pare_more` cache holds, at most.
    #[arg(long, default_value_t = 1024)]
    pub cache_pages: usize,
    /// How long a page stays in the `pare_more` cache, in seconds.
    #[arg(long, default_value_t = 1800)]
    pub cache_ttl: u64,
    /// The URL of an MCP server that speaks streamable HTTP (instead of a COMMAND), e.g.
    /// http://127.0.0.1:3001/mcp.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    pub upstream_url: Option<String>,
    /// Serve MCP's streamable HTTP transport at http://ADDR/mcp instead of stdio: each
    /// client session gets its own server process (or upstream session). ADDR is HOST:PORT or
    /// a port (on 127.0.0.1); loopback only unless --allow-remote.
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,
    /// With --listen: accept a non-loopback ADDR and any Host header. Put authentication in
    /// front: pare does none.
    #[arg(long, requires = "listen")]
    pub allow_remote: bool,
    /// With --listen: a browser Origin to allow besides loopback ones (repeatable), e.g.
    /// `https://app.example.com`. Other origins get 403.
    #[arg(long, value_name = "ORIGIN", requires = "listen")]
    pub allow_origin: Vec<String>,
    /// Serve Prometheus metrics at http://ADDR/metrics (HOST:PORT or a port, on 127.0.0.1;
    /// loopback only unless --allow-remote): tool calls by tool and outcome, their latency,
    /// tokens before and after, pages served, pare_more calls.
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<String>,
    /// With --listen: sessions at once, at most.
    #[arg(long, default_value_t = 64, requires = "listen")]
    pub max_sessions: usize,
    /// With --listen: sessions at once from one client address (an IPv6 /64 counts as
    /// one), at most; more initializes get 429.
    #[arg(long, default_value_t = 16, requires = "listen")]
    pub max_sessions_per_client: usize,
    /// With --listen: a session with no request for this many seconds is closed.
    #[arg(long, default_value_t = 1800, requires = "listen")]
    pub session_idle: u64,
    /// With --listen: a session never used — no request after initialize and no GET
    /// stream — is closed after this many seconds.
    #[arg(long, default_value_t = 10, requires = "listen")]
    pub session_unused: u64,
    /// With --listen: connections at once, at most (an SSE stream holds one); more get 503.
    #[arg(long, default_value_t = 256, requires = "listen")]
    pub max_connections: usize,
    /// With --listen: connections at once from one client address, at most; more get 429.
    #[arg(long, default_value_t = 64, requires = "listen")]
    pub max_connections_per_client: usize,
    /// With --listen: seconds a request's body may take to arrive once its head has (its
    /// head has 10 s); a slower request gets 408 and its connection is closed.
    #[arg(long, default_value_t = 60, requires = "listen")]
    pub body_timeout: u64,
    /// The server to run, with its arguments: after `--`, or after pare's own options
    /// without it (everything from the first word that is not one of pare's options on is
    /// the server's, so `pare mcp npx -y server` works as launchers that drop `--` send it).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        num_args = 1..,
        required_unless_present = "upstream_url",
        value_name = "COMMAND"
    )]
    pub command: Vec<String>,
}

pub fn run(args: Args) -> Result<()> {
    if let Some(url) = &args.upstream_url
        && let Err(why) = pare_mcp::http_upstream::check_url(url)
    {
        usage_error("mcp", &format!("--upstream-url {url}: {why}"));
    }
    let config = match &args.policy {
        Some(p) => pare_mcp::config::load(p)?,
        None => Config::builtin(),
    };
    if args.max_tokens == 0 {
        bail!("--max-tokens must be at least 1");
    }
    let opts = Options {
        config,
        budget: Budget {
            max_tokens: args.max_tokens,
            max_chars4: args.max_chars4.max(1),
            tokenizer: tokenizer(&args.tokenizer, None)?,
        },
        max_message_bytes: args.max_message_bytes.max(1024),
        cache: Limits {
            max_pages: args.cache_pages.max(1),
            ttl: Duration::from_secs(args.cache_ttl),
            ..Limits::default()
        },
        drain: Duration::from_secs(5),
        metrics: None,
    };
    let opts = match &args.metrics {
        Some(at) => {
            let addr = listen_addr("mcp", "--metrics", at);
            let counters = std::sync::Arc::new(pare_mcp::metrics::McpMetrics::default());
            pare_mcp::metrics::serve(addr, args.allow_remote, counters.clone())
                .with_context(|| format!("cannot serve metrics on {addr}"))?;
            pare_mcp::Options {
                metrics: Some(counters),
                ..opts
            }
        }
        None => opts,
    };
    if args.upstream_url.is_none() {
        // Before any server starts: a signal to pare stops its servers, then pare exits.
        pare_mcp::child::exit_on_signals()?;
    }
    if let Some(addr) = &args.listen {
        let listen = Listen {
            addr: listen_addr("mcp", "--listen", addr),
            allow_remote: args.allow_remote,
            allowed_origins: args.allow_origin.clone(),
            max_sessions: args.max_sessions.max(1),
            max_sessions_per_client: args.max_sessions_per_client.max(1),
            max_connections: args.max_connections.max(1),
            max_connections_per_client: args.max_connections_per_client.max(1),
            session_idle: Duration::from_secs(args.session_idle.max(1)),
            session_unused: Duration::from_secs(args.session_unused.max(1)),
            deadlines: Deadlines {
                head: pare_mcp::listen::HEAD_DEADLINE,
                body: Duration::from_secs(args.body_timeout.max(1)),
            },
        };
        let upstream = match &args.upstream_url {
            Some(url) => Upstream::Url(url.clone()),
            None => Upstream::Command(args.command.clone()),
        };
        pare_mcp::listen::serve(opts, upstream, listen)?;
        return Ok(());
    }
    match &args.upstream_url {
        Some(url) => pare_mcp::http_upstream::run(opts, url)?,
        None => pare_mcp::run_stdio(opts, &args.command)?,
    }
    Ok(())
}
