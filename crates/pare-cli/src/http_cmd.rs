//! `pare http`: put pare in front of a REST API (a thin door over the `pare-http` crate).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args as ClapArgs;
use pare_http::cache::{EmbeddedCache, PageCache, RedisCache};
use pare_http::proxy::{Options, Upstream};
use pare_http::server::Limits;
use pare_http::tls::{ServerCert, UpstreamTls};

use crate::io::{listen_addr, usage_error};

#[derive(ClapArgs)]
#[command(after_help = "Examples:\n  \
pare http --upstream http://127.0.0.1:3000 --policy examples/policies/http.toml\n  \
curl 'http://127.0.0.1:8080/api/entities?pare_detail=brief&pare_max_tokens=2000'\n  \
pare http --upstream https://api.example.com --listen 0.0.0.0:8080 --allow-remote --cache redis://redis:6379 --policy api.toml\n  \
pare http --upstream https://10.0.0.5 --upstream-ca company-ca.pem --upstream-server-name api.internal --tls-cert cert.pem --tls-key key.pem --policy api.toml\n\n\
The caller picks detail, format and budget per request: ?pare_detail=LEVEL (full: the upstream's exact bytes), \
?pare_format=json|pretty|toon|auto (or Accept: text/toon), ?pare_max_tokens=N, ?pare_cursor=C (the Link: rel=\"next\" \
of a paged response), or the headers X-Pare-Detail, X-Pare-Format, X-Pare-Max-Tokens. pare removes them before forwarding. \
A client sending TE: trailers gets a JSON array shaped as it arrives, where the route's level allows it (drops and prunes, \
one page); the counts and the note then come as trailers (docs/http.md).")]
pub struct Args {
    /// The API to put pare in front of: http://HOST:PORT[/BASE] or https://…
    #[arg(long, value_name = "URL")]
    pub upstream: String,
    /// Policy file (TOML or JSON); its `[http]` section names the routes to shape and each
    /// route's policy, level, format and budget. Routes it does not name pass untouched.
    #[arg(long, short)]
    pub policy: PathBuf,
    /// Where to listen: HOST:PORT or a port (on 127.0.0.1). Loopback only unless
    /// --allow-remote.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// Accept a non-loopback ADDR and any Host header. Put authentication in front: pare
    /// does none.
    #[arg(long)]
    pub allow_remote: bool,
    /// Where later pages wait for their cursor: `embedded` (this process) or a Redis URL
    /// (`redis://[:PASSWORD@]HOST:PORT[/DB]`) that every replica shares.
    #[arg(long, value_name = "embedded|URL", default_value = "embedded")]
    pub cache: String,
    /// How long a page stays in the cache, in seconds.
    #[arg(long, default_value_t = 1800)]
    pub cache_ttl: u64,
    /// The embedded cache's size: pages at most.
    #[arg(long, default_value_t = 4096)]
    pub cache_pages: usize,
    /// The embedded cache's size: MiB at most.
    #[arg(long, default_value_t = 256)]
    pub cache_mib: usize,
    /// Connections at once, at most; more are answered 503.
    #[arg(long, default_value_t = 1024)]
    pub max_connections: usize,
    /// Connections at once from one client address (an IPv6 /64 counts as one), at most;
    /// more are answered 429.
    #[arg(long, default_value_t = 256)]
    pub max_connections_per_client: usize,
    /// Seconds a request's whole head may take to arrive (slow clients are cut off).
    #[arg(long, default_value_t = 10)]
    pub header_timeout: u64,
    /// The largest request head, in bytes (431 beyond).
    #[arg(long, default_value_t = 64 << 10)]
    pub max_head_bytes: usize,
    /// The largest request body forwarded, in bytes (413 beyond).
    #[arg(long, default_value_t = 64 << 20)]
    pub max_request_body: u64,
    /// The largest JSON body shaped, in bytes once decoded; a longer one passes untouched.
    #[arg(long, default_value_t = 64 << 20)]
    pub max_shape_bytes: usize,
    /// The memory for bodies held at once for shaping, all requests together; each body
    /// counts 5× its size (its text, parse tree and shaped output, as measured). A body
    /// that would go over passes unshaped, with an X-Pare-Note header saying so.
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 30)]
    pub max_held_bytes: usize,
    /// Bodies shaped lately are kept with their pages, at most this many MiB (and 1024
    /// bodies, each for --cache-ttl): the same body asked for the same way again is
    /// answered without shaping it again (compared byte for byte first). 0: off.
    #[arg(long, value_name = "MIB", default_value_t = 64)]
    pub reuse_mib: usize,
    /// Seconds to connect to the upstream (502 beyond).
    #[arg(long, default_value_t = 5)]
    pub connect_timeout: u64,
    /// Seconds the upstream may take to begin its response, and to send a body pare shapes
    /// (504 beyond).
    #[arg(long, default_value_t = 60)]
    pub upstream_timeout: u64,
    /// A proxy in front of pare (ADDR or ADDR/BITS; repeat for more) whose X-Forwarded-For,
    /// -Proto and -Host pare passes on; from any other client they are replaced.
    #[arg(long = "trusted-proxy", value_name = "CIDR")]
    pub trusted_proxies: Vec<String>,
    /// Seconds the upstream may send nothing in the middle of a body: a streamed response
    /// is cut off (and logged), a shaped one answered 504 (nginx's proxy_read_timeout).
    #[arg(long, default_value_t = 60)]
    pub upstream_idle_timeout: u64,
    /// Seconds a client may send nothing in the middle of its request body (408; nginx's
    /// client_body_timeout).
    #[arg(long, default_value_t = 60)]
    pub client_body_timeout: u64,
    /// Request bodies up to this many bytes are read whole before the upstream is asked, so
    /// a slow client holds no upstream connection; longer ones stream on after them.
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 20)]
    pub request_buffer: usize,
    /// Serve Prometheus metrics at http://ADDR/metrics (HOST:PORT or a port, on 127.0.0.1;
    /// loopback only unless --allow-remote): requests, latency, tokens before and after,
    /// pages, cache lookups, upstream errors and timeouts, bodies held.
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<String>,
    /// Trust the CA certificates in this PEM file upstream, besides the web roots (an
    /// internal API signed by a company CA). Repeatable.
    #[arg(long, value_name = "FILE")]
    pub upstream_ca: Vec<PathBuf>,
    /// Trust only the --upstream-ca certificates upstream, not the web roots.
    #[arg(long, requires = "upstream_ca")]
    pub upstream_ca_only: bool,
    /// A client certificate chain (PEM) to show an upstream that asks for one (mTLS); with
    /// --upstream-client-key.
    #[arg(long, value_name = "FILE", requires = "upstream_client_key")]
    pub upstream_client_cert: Option<PathBuf>,
    /// The private key (PEM: PKCS#8, PKCS#1 or SEC1) of --upstream-client-cert.
    #[arg(long, value_name = "FILE", requires = "upstream_client_cert")]
    pub upstream_client_key: Option<PathBuf>,
    /// The name the upstream's certificate must carry, sent as SNI too, when the --upstream
    /// URL names an address or another name (https://10.0.0.5 serving api.internal).
    #[arg(long, value_name = "NAME")]
    pub upstream_server_name: Option<String>,
    /// Serve HTTPS with this certificate chain (PEM); with --tls-key. Both files are read
    /// again on SIGHUP (a reload that fails keeps the certificate in use).
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The private key (PEM: PKCS#8, PKCS#1 or SEC1) of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// No access log (one JSON line per request on stderr).
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn run(args: Args) -> Result<()> {
    let upstream = Upstream::parse(&args.upstream)
        .unwrap_or_else(|why| usage_error("http", &format!("--upstream {}: {why}", args.upstream)));
    let addr = listen_addr("http", "--listen", &args.listen);
    let routes = pare_http::config::load(&args.policy)?;
    let ttl = Duration::from_secs(args.cache_ttl.max(1));
    let cache = if args.cache == "embedded" {
        PageCache::Embedded(EmbeddedCache::new(pare::mcp::store::Limits {
            max_pages: args.cache_pages.max(1),
            max_bytes: args.cache_mib.max(1) << 20,
            ttl,
        }))
    } else if args.cache.starts_with("redis://") || args.cache.starts_with("rediss://") {
        PageCache::Redis(
            RedisCache::new(&args.cache, ttl)
                .unwrap_or_else(|e| usage_error("http", &e.to_string())),
        )
    } else {
        usage_error(
            "http",
            &format!(
                "--cache {}: expected `embedded` or a redis:// URL",
                args.cache
            ),
        )
    };
    let metrics = args
        .metrics
        .as_deref()
        .map(|m| listen_addr("http", "--metrics", m));
    let trusted_proxies = args
        .trusted_proxies
        .iter()
        .map(|t| pare_http::server::Net::parse(t))
        .collect::<Result<Vec<_>, _>>()
        .unwrap_or_else(|why| usage_error("http", &format!("--trusted-proxy {why}")));
    let upstream_tls = UpstreamTls {
        ca_files: args.upstream_ca.clone(),
        ca_only: args.upstream_ca_only,
        client_cert: args
            .upstream_client_cert
            .clone()
            .zip(args.upstream_client_key.clone()),
        server_name: args.upstream_server_name.clone(),
    };
    // Checked before listening: a bad file is a usage error, not a 502 on every request.
    if let Err(e) = upstream_tls.client_config().and(upstream_tls.server_name()) {
        usage_error("http", &e.to_string());
    }
    let tls = args
        .tls_cert
        .clone()
        .zip(args.tls_key.clone())
        .map(|(cert, key)| {
            ServerCert::load(cert, key).unwrap_or_else(|e| usage_error("http", &e.to_string()))
        });
    let opts = Options {
        upstream_tls,
        tls,
        upstream,
        routes,
        cache,
        limits: Limits {
            max_connections: args.max_connections.max(1),
            max_connections_per_client: args.max_connections_per_client.max(1),
            header_deadline: Duration::from_secs(args.header_timeout.max(1)),
            max_head_bytes: args.max_head_bytes,
            ..Limits::default()
        },
        allow_remote: args.allow_remote,
        max_request_body: args.max_request_body,
        max_shape_bytes: args.max_shape_bytes,
        held: pare_http::held::HeldBytes::new(args.max_held_bytes),
        release: pare_http::release::Release::new(give_back),
        reuse: pare_http::reuse::Reuse::new(
            args.reuse_mib << 20,
            1024,
            Duration::from_secs(args.cache_ttl),
        ),
        connect_timeout: Duration::from_secs(args.connect_timeout.max(1)),
        upstream_timeout: Duration::from_secs(args.upstream_timeout.max(1)),
        upstream_idle_timeout: Duration::from_secs(args.upstream_idle_timeout.max(1)),
        client_body_timeout: Duration::from_secs(args.client_body_timeout.max(1)),
        request_buffer: args.request_buffer,
        trusted_proxies,
        access_log: !args.quiet,
        metrics,
    };
    pare_http::proxy::run(opts, addr).with_context(|| format!("cannot listen on {addr}"))
}

/// mimalloc, the binary's allocator, returns the memory it keeps free to the system.
#[allow(unsafe_code)] // mimalloc offers no safe wrapper
fn give_back() {
    // SAFETY: `mi_collect` may be called from any thread at any time.
    unsafe { libmimalloc_sys::mi_collect(true) }
}
