//! `pare http`: a reverse proxy in front of one REST API that shapes its JSON for models.
//!
//! Each request is matched against the policy's `[http]` routes (`pare::rest::routes`).
//! A route pare does not shape is forwarded as it came and answered as the upstream
//! answered, streamed both ways. On a shaped route pare takes its own parameters out
//! (`pare_detail`, `pare_format`, `pare_max_tokens`, `pare_cursor`, `X-Pare-*` headers),
//! forwards the rest, and shapes a JSON response through the engine (`pare::rest::response`,
//! so the body is byte for byte what `pare compact` prints); a response that is not a
//! plain JSON success passes through exactly (`proxy/respond.rs`). Pages after the first wait
//! in the [`PageCache`]; a request with `pare_cursor` is served from there.
//!
//! Not an open relay: there is one upstream, absolute-form request targets and `CONNECT`
//! are refused, and so are protocol upgrades (WebSocket), which pare does not carry.

mod forward;
mod prefixed;
mod respond;
mod streamed;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hyper::body::Incoming;
use hyper::header::{CONTENT_LENGTH, RANGE, UPGRADE};
use hyper::{Method, Request, Response, StatusCode, Uri};
use pare::rest::ask::Ask;
use pare::rest::routes::Routes;

use crate::access::{self, Entry};
use crate::body::{self, Body};
use crate::cache::{self, Lookup, PageCache};
use crate::client;
use crate::metrics::Metrics;
use crate::server::{self, Limits};

/// Where requests go: `http://` or `https://`, a host, and a base path the request's
/// path is appended to.
#[derive(Debug, Clone)]
pub struct Upstream {
    pub scheme: String,
    pub authority: String,
    /// Without a trailing `/` (empty for the root).
    pub base_path: String,
}

impl Upstream {
    /// `http://host:port[/base]` or `https://…`; no query, no fragment.
    pub fn parse(url: &str) -> Result<Upstream, String> {
        let uri: Uri = url
            .parse()
            .map_err(|e| format!("not a URL ({e}); e.g. http://127.0.0.1:3000"))?;
        let scheme = match uri.scheme_str() {
            Some(s @ ("http" | "https")) => s.to_owned(),
            Some(other) => return Err(format!("scheme `{other}`: only http and https")),
            None => return Err("no scheme; e.g. http://127.0.0.1:3000".into()),
        };
        let authority = uri
            .authority()
            .ok_or("no host; e.g. http://127.0.0.1:3000")?
            .to_string();
        if authority.contains('@') {
            return Err("credentials in the URL are not forwarded; send them as headers".into());
        }
        if uri.query().is_some() {
            return Err("a query string in the upstream URL is not supported".into());
        }
        Ok(Upstream {
            scheme,
            authority,
            base_path: uri.path().trim_end_matches('/').to_owned(),
        })
    }

    pub fn url(&self) -> String {
        format!("{}://{}{}", self.scheme, self.authority, self.base_path)
    }
}

/// Everything `pare http` runs with.
pub struct Options {
    pub upstream: Upstream,
    pub routes: Routes,
    pub cache: PageCache,
    pub limits: Limits,
    /// Accept a `Host` that names no loopback host (and, at bind, remote addresses).
    pub allow_remote: bool,
    /// The largest request body forwarded (413 beyond).
    pub max_request_body: u64,
    /// The largest JSON body shaped (decoded); longer ones pass through, streamed.
    pub max_shape_bytes: usize,
    /// The bytes of bodies held at once for shaping, by every request together; a body
    /// that would go over passes unshaped, with a note ([`crate::held`]).
    pub held: crate::held::HeldBytes,
    /// Bodies shaped lately and their pages: the same body asked for the same way is not
    /// shaped again ([`crate::reuse`]).
    pub reuse: crate::reuse::Reuse,
    /// How the memory of large bodies is given back ([`crate::release`]).
    pub release: crate::release::Release,
    /// How long connecting to the upstream may take (502 beyond).
    pub connect_timeout: Duration,
    /// How long the upstream may take to start its response (504 beyond), and to send a
    /// body pare shapes.
    pub upstream_timeout: Duration,
    /// Addresses whose `X-Forwarded-For`, `-Proto` and `-Host` pare believes (a load
    /// balancer in front of it); from anyone else they are replaced. Empty: no one.
    pub trusted_proxies: Vec<server::Net>,
    /// The longest the upstream may send nothing in the middle of a body (shaped or
    /// streamed); a streamed response is cut off, a shaped one answered 504.
    pub upstream_idle_timeout: Duration,
    /// The longest a client may send nothing in the middle of its request body (408).
    pub client_body_timeout: Duration,
    /// A request body up to this many bytes is read whole before the upstream is asked, so
    /// a slow client holds no upstream connection; a longer one streams after it.
    pub request_buffer: usize,
    pub access_log: bool,
    /// Where to serve Prometheus metrics (`GET /metrics`), if anywhere.
    pub metrics: Option<SocketAddr>,
    /// Whom pare trusts upstream and what it shows there.
    pub upstream_tls: crate::tls::UpstreamTls,
    /// The listener's certificate: HTTPS, reloaded on SIGHUP; `None`: plain HTTP.
    pub tls: Option<crate::tls::ServerCert>,
}

impl Options {
    /// How clients reach pare: `https` with a certificate, else `http`.
    pub fn scheme(&self) -> &'static str {
        if self.tls.is_some() { "https" } else { "http" }
    }
}

struct State {
    opts: Options,
    client: client::Pooled,
    metrics: Option<Arc<Metrics>>,
}

/// Listen on `addr` and serve until SIGINT or SIGTERM, on a runtime of its own (the
/// CLI's entry point; it has no async runtime of its own).
pub fn run(opts: Options, addr: SocketAddr) -> std::io::Result<()> {
    // Shaping runs on the blocking pool (`respond::answer`). A pool as large as tokio's
    // default (512) lets a burst start hundreds of shaping threads at once: no faster on
    // a few cores, and each thread's allocator keeps its own memory (RSS grew 114 → 906
    // MiB in 10 s of 50 clients). One or two per core keeps it flat.
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("pare-http")
        .max_blocking_threads(cores * 2)
        .build()?;
    runtime.block_on(async move {
        let listener = server::bind(addr, opts.allow_remote).await?;
        let metrics = match opts.metrics {
            Some(at) => Some(server::bind(at, opts.allow_remote).await?),
            None => None,
        };
        serve_with_metrics(opts, listener, metrics, server::stop_signal()).await;
        Ok(())
    })
}

/// Serve `listener` until `shutdown` completes.
pub async fn serve(
    opts: Options,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()>,
) {
    serve_with_metrics(opts, listener, None, shutdown).await;
}

/// [`serve`], and Prometheus metrics (`GET /metrics`) on `metrics` when given.
pub async fn serve_with_metrics(
    opts: Options,
    listener: tokio::net::TcpListener,
    metrics: Option<tokio::net::TcpListener>,
    shutdown: impl std::future::Future<Output = ()>,
) {
    let limits = opts.limits;
    let counters = metrics
        .as_ref()
        .map(|_| Arc::new(Metrics::new(opts.held.clone())));
    if let (Some(listener), Some(counters)) = (metrics, counters.clone()) {
        if let Ok(local) = listener.local_addr() {
            access::event(&format!("pare http: metrics on http://{local}/metrics"));
        }
        let handler = crate::metrics::handler(Arc::new(move || counters.render()));
        tokio::spawn(server::serve(
            listener,
            limits,
            handler,
            std::future::pending(),
        ));
    }
    let client = match client::pooled(opts.connect_timeout, &opts.upstream_tls) {
        Ok(c) => c,
        Err(e) => {
            // The CLI checks these settings before it listens; a library caller hears here.
            access::event(&format!("pare http: cannot start: {e}"));
            return;
        }
    };
    let tls = opts.tls.clone();
    if let Some(cert) = &tls {
        tokio::spawn(reload_on_hangup(cert.clone()));
    }
    let state = Arc::new(State {
        client,
        metrics: counters,
        opts,
    });
    if let Ok(local) = listener.local_addr() {
        access::event(&format!(
            "pare http: listening on {}://{local}, upstream {}, page cache {}",
            state.opts.scheme(),
            state.opts.upstream.url(),
            state.opts.cache.describe()
        ));
    }
    let handler: server::Handler = Arc::new(move |req, peer| {
        let state = state.clone();
        Box::pin(async move { handle(&state, req, peer).await })
    });
    server::serve_tls(
        listener,
        limits,
        handler,
        tls.as_ref().map(crate::tls::ServerCert::acceptor),
        shutdown,
    )
    .await;
}

/// Read the listener's certificate and key again on each SIGHUP; a failed reload keeps the
/// certificate in use, and the log says why.
async fn reload_on_hangup(cert: crate::tls::ServerCert) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let Ok(mut hangups) = signal(SignalKind::hangup()) else {
            return;
        };
        while hangups.recv().await.is_some() {
            match cert.reload() {
                Ok(()) => access::event("pare http: SIGHUP: certificate reloaded"),
                Err(e) => access::event(&format!(
                    "pare http: SIGHUP: certificate not reloaded, the one in use stays: {e}"
                )),
            }
        }
    }
    #[cfg(not(unix))]
    let _ = cert;
}

async fn handle(state: &State, req: Request<Incoming>, peer: SocketAddr) -> Response<Body> {
    let started = Instant::now();
    let mut log = Entry::new(&peer.to_string(), req.method().as_str(), req.uri().path());
    let mut response = route(state, req, peer, &mut log).await;
    // What went wrong upstream, named in full here (the client's body does not name it).
    if let Some(forward::UpstreamFailure(why)) = response.extensions().get() {
        log.set("upstream_error", why.as_str());
    }
    if let Some(late) = response
        .extensions_mut()
        .remove::<streamed::Late>()
        .and_then(|l| l.take())
    {
        // A body shaped as it is sent: its counts (or why it broke off) come at its end,
        // and so does its line.
        let metrics = state.metrics.clone();
        let access_log = state.opts.access_log;
        let status = response.status().as_u16();
        tokio::spawn(async move {
            if let Ok(fields) = late.await {
                for (k, v) in fields {
                    log.set(&k, v);
                }
            }
            let took = started.elapsed();
            if let Some(m) = &metrics {
                m.record(&log, status, took);
            }
            if access_log {
                log.write(status, took);
            }
        });
        return response;
    }
    let took = started.elapsed();
    if let Some(m) = &state.metrics {
        m.record(&log, response.status().as_u16(), took);
    }
    if state.opts.access_log {
        log.write(response.status().as_u16(), took);
    }
    response
}

/// One request, as the route it falls on says.
async fn route(
    state: &State,
    req: Request<Incoming>,
    peer: SocketAddr,
    log: &mut Entry,
) -> Response<Body> {
    let opts = &state.opts;
    if let Err(why) = server::check_host_and_origin(req.headers(), opts.allow_remote, None) {
        return body::error(StatusCode::FORBIDDEN, &why);
    }
    // `OPTIONS *` asks about the server, not a resource: pare answers for itself.
    if req.uri().path() == "*" {
        if req.method() != Method::OPTIONS {
            return body::error(StatusCode::BAD_REQUEST, "`*` is a target for OPTIONS only");
        }
        let mut r = Response::new(body::empty());
        *r.status_mut() = StatusCode::NO_CONTENT;
        r.headers_mut().insert(
            hyper::header::ALLOW,
            hyper::header::HeaderValue::from_static("GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"),
        );
        return r;
    }
    if req.uri().authority().is_some() || req.method() == Method::CONNECT {
        return body::error(
            StatusCode::BAD_REQUEST,
            "pare http forwards to its one upstream; absolute-form targets and CONNECT are refused",
        );
    }
    if req.headers().contains_key(UPGRADE) {
        return body::error(
            StatusCode::NOT_IMPLEMENTED,
            "pare http does not carry protocol upgrades (WebSocket)",
        );
    }
    if req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok())
        .is_some_and(|n| n > opts.max_request_body)
    {
        return body::error(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!(
                "the request body is larger than {} bytes",
                opts.max_request_body
            ),
        );
    }
    let path = req.uri().path().to_owned();
    let query = req.uri().query().unwrap_or("").to_owned();
    let Some(route) = opts.routes.route(req.method().as_str(), &path) else {
        log.set("pare", "untouched route");
        return forward::send(state, req, &query, false, peer, log).await;
    };
    log.set("route", route.name.as_str());
    let headers: Vec<(&str, &str)> = req
        .headers()
        .iter()
        .filter_map(|(k, v)| Some((k.as_str(), v.to_str().ok()?)))
        .collect();
    let (ask, rest_of_query) = match Ask::parse(&query, &headers).and_then(|(mut ask, rest)| {
        ask.check(&route)?;
        Ok((ask, rest))
    }) {
        Ok(a) => a,
        Err(e) => {
            log.set("pare", "refused");
            return body::json(StatusCode::BAD_REQUEST, e.body());
        }
    };
    // What pare never shapes: the exact response asked for, a HEAD, a byte range.
    if ask.is_full() || req.method() == Method::HEAD || req.headers().contains_key(RANGE) {
        log.set("pare", "passed");
        log.set(
            "why",
            if ask.is_full() {
                "pare_detail=full"
            } else if req.method() == Method::HEAD {
                "HEAD"
            } else {
                "Range"
            },
        );
        return forward::send(state, req, &rest_of_query, true, peer, log).await;
    }
    let call = respond::Call {
        route,
        ask,
        method: req.method().clone(),
        path,
        query: rest_of_query,
        accept_encoding: req
            .headers()
            .get(hyper::header::ACCEPT_ENCODING)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
        identity: identity(&req, &headers, opts.routes.identity()),
        trailers: req.version() >= hyper::Version::HTTP_11
            && req
                .headers()
                .get_all(hyper::header::TE)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| v.split(','))
                .any(|t| {
                    t.split(';')
                        .next()
                        .unwrap_or("")
                        .trim()
                        .eq_ignore_ascii_case("trailers")
                }),
    };
    if let Some(cursor) = &call.ask.cursor {
        let key = cache::key(cursor, &call.identity_parts(&call.query));
        match opts.cache.get(&key).await {
            Lookup::Hit(page) => {
                log.set("pare", "cache hit");
                return respond::cached(&call, page, log);
            }
            Lookup::Miss => log.set("cache", "miss"),
            Lookup::Unavailable(_) => log.set("cache", "unavailable"),
        }
    }
    let upstream_query = call.query.clone();
    let started = Instant::now();
    let upstream = forward::request(state, req, &upstream_query, true, peer).await;
    log.set(
        "upstream_ms",
        (started.elapsed().as_secs_f64() * 1e4).round() / 10.0,
    );
    match upstream {
        Ok(resp) => respond::answer(&state.opts, &call, resp, log).await,
        Err(failed) => failed,
    }
}

/// Who a request is, for the page cache's keys: method, path, and the headers that could
/// say who is asking (`pare::rest::identity`: by default every header but a short list
/// that cannot), since credentials decide what the upstream shows, so they decide whose
/// pages a cursor reaches.
fn identity(
    req: &Request<Incoming>,
    headers: &[(&str, &str)],
    who: &pare::rest::identity::Identity,
) -> Vec<Vec<u8>> {
    vec![
        req.method().as_str().as_bytes().to_vec(),
        req.uri().path().as_bytes().to_vec(),
        who.of(headers),
    ]
}
