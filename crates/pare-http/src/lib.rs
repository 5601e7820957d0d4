//! pare's HTTP doors on one stack: hyper on tokio.
//!
//! - [`server`]: listening, written once for every door: loopback unless allowed, a cap on
//!   connections (more get 503 at once), a deadline for each request's whole head (a slow
//!   client cannot hold a slot), caps on head size and header count, duplicate `Host` /
//!   `Content-Length` refused, and a `Host` check against DNS rebinding.
//! - [`proxy`]: `pare http`, a reverse proxy in front of one REST API: JSON responses of the
//!   routes a policy's `[http]` section names are shaped by the engine (`pare::rest`),
//!   paged under a budget, and everything else passes through exactly, streamed.
//! - [`cache`]: the later pages of a paged response, embedded (bounded, with a time to
//!   live) or in Redis, so replicas behind a load balancer serve each other's cursors.
//! - [`codec`]: `Content-Encoding` (gzip, deflate, br, zstd) decoded to shape and
//!   encoded for the client.
//! - [`client`]: the one HTTP client, pooled, with a blocking form for thread-based doors
//!   (`pare mcp --upstream-url`).
//! - [`tls`]: CA bundles, client certificates and the server name upstream; the
//!   listener's certificate, reloaded on SIGHUP.
//! - [`held`]: one budget of bytes for the bodies held at once for shaping.
//! - [`reuse`]: bodies shaped lately and their pages, so the same body is not shaped twice.
//! - [`release`]: the memory of large bodies given back once things are quiet.
//! - [`idle`]: a body that is cut when its peer goes quiet (both directions).
//! - [`metrics`]: Prometheus counters and histograms of what the proxy did.
//! - [`access`]: one JSON line per request on stderr.
//! - [`config`]: the policy file's `[http]` section, read.
//!
//! ```no_run
//! # async fn run(options: pare_http::proxy::Options) -> std::io::Result<()> {
//! let listener = pare_http::server::bind("127.0.0.1:8080".parse().unwrap(), false).await?;
//! pare_http::proxy::serve(options, listener, std::future::pending()).await;
//! # Ok(()) }
//! ```

pub mod access;
pub mod body;
pub mod cache;
pub mod client;
pub mod codec;
pub mod config;
pub mod held;
pub mod idle;
pub mod metrics;
pub mod proxy;
pub mod release;
pub mod reuse;
pub mod server;
pub mod tls;
