//! The one HTTP client of the doors (hyper-util's pooled client over rustls): `pare http`
//! forwards with it, and `pare mcp --upstream-url` talks to its upstream through
//! [`Blocking`], the same client driven from threads.
//!
//! Why one: two clients meant two TLS stacks, two pools and two sets of timeouts to keep
//! alike; the MCP proxy is thread-based, so it gets a small runtime of its own and reads
//! bodies as [`std::io::Read`] ([`BodyReader`]).
//!
//! ```no_run
//! use std::io::Read;
//! let client = pare_http::client::Blocking::new(std::time::Duration::from_secs(10)).unwrap();
//! let req = hyper::Request::get("http://127.0.0.1:3000/").body(pare_http::body::empty()).unwrap();
//! let resp = client.send(req, None).unwrap();
//! let mut text = String::new();
//! resp.into_body().read_to_string(&mut text).unwrap();
//! ```

use std::io::{self, Read};
use std::time::Duration;

use bytes::{Buf, Bytes};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use crate::body::Body;
use crate::tls::{TlsError, UpstreamTls};

/// The pooled client, `http` and `https`.
pub type Pooled = Client<hyper_rustls::HttpsConnector<HttpConnector>, Body>;

/// A client that gives up connecting after `connect_timeout`, trusting and showing what
/// `tls` says ([`crate::tls::UpstreamTls`]; its default: the web roots). It must be built
/// inside a tokio runtime (its pool spawns there).
pub fn pooled(connect_timeout: Duration, tls: &UpstreamTls) -> Result<Pooled, TlsError> {
    let mut http = HttpConnector::new();
    http.set_connect_timeout(Some(connect_timeout));
    http.set_nodelay(true);
    http.enforce_http(false);
    let builder = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls.client_config()?)
        .https_or_http();
    let builder = match tls.server_name()? {
        Some(name) => {
            builder.with_server_name_resolver(hyper_rustls::FixedServerNameResolver::new(name))
        }
        None => builder,
    };
    let connector = builder.enable_all_versions().wrap_connector(http);
    Ok(Client::builder(TokioExecutor::new())
        .pool_idle_timeout(Duration::from_secs(60))
        .pool_max_idle_per_host(256)
        .build(connector))
}

/// [`Pooled`] for threads: each call blocks its thread; one worker thread drives every
/// connection.
pub struct Blocking {
    runtime: tokio::runtime::Runtime,
    client: Pooled,
}

/// Why a request failed: the client's error and what caused it, in one line.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ClientError(String);

impl ClientError {
    fn of(e: &(dyn std::error::Error + 'static)) -> ClientError {
        let mut text = e.to_string();
        let mut source = e.source();
        while let Some(s) = source {
            text.push_str(": ");
            text.push_str(&s.to_string());
            source = s.source();
        }
        ClientError(text)
    }
}

impl Blocking {
    /// A client with a runtime of its own (one worker thread, named `pare-http-client`).
    pub fn new(connect_timeout: Duration) -> io::Result<Blocking> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .thread_name("pare-http-client")
            .build()?;
        // Entered, not blocked on: this may be called inside another runtime.
        let client = {
            let _in = runtime.enter();
            pooled(connect_timeout, &UpstreamTls::default()).map_err(io::Error::other)?
        };
        Ok(Blocking { runtime, client })
    }

    /// Send `req` and wait for the response head (at most `timeout`, if given); the body
    /// is read as it is asked for.
    pub fn send(
        &self,
        req: Request<Body>,
        timeout: Option<Duration>,
    ) -> Result<Response<BodyReader>, ClientError> {
        let call = self.client.request(req);
        let resp = self.runtime.block_on(async {
            match timeout {
                Some(t) => tokio::time::timeout(t, call)
                    .await
                    .map_err(|_| ClientError(format!("no response in {:.1} s", t.as_secs_f64())))?
                    .map_err(|e| ClientError::of(&e)),
                None => call.await.map_err(|e| ClientError::of(&e)),
            }
        })?;
        let handle = self.runtime.handle().clone();
        Ok(resp.map(|body| BodyReader {
            handle,
            body,
            chunk: Bytes::new(),
        }))
    }
}

/// A response body read as [`Read`], chunk by chunk as the server sends it.
pub struct BodyReader {
    handle: tokio::runtime::Handle,
    body: Incoming,
    chunk: Bytes,
}

impl Read for BodyReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.chunk.is_empty() {
            match self.handle.block_on(self.body.frame()) {
                None => return Ok(0),
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        self.chunk = data;
                    }
                }
                Some(Err(e)) => return Err(io::Error::other(ClientError::of(&e))),
            }
        }
        let n = self.chunk.len().min(out.len());
        out[..n].copy_from_slice(&self.chunk[..n]);
        self.chunk.advance(n);
        Ok(n)
    }
}
