//! One client session of `pare mcp --listen`: its own upstream and its own proxy.
//!
//! A stdio server serves one client, so each session starts its own server process (or,
//! toward an HTTP upstream, its own upstream session) and runs the same proxy core as
//! `pare mcp` over stdio ([`crate::proxy::run`]). The client side of that proxy is a channel
//! of POSTed messages in and a [`RouterWriter`] out. The session ends when the client
//! DELETEs it, when it idles too long, or when the upstream exits; the pending requests of
//! an upstream that exits get a JSON-RPC error, as over stdio.

use std::io::BufReader;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::router::{Router, RouterWriter};
use crate::http_upstream::{self, Feed, Inbox};
use crate::proxy::{self, Ending, Options, log};
use crate::{McpError, child};

/// What each session talks to.
#[derive(Debug, Clone)]
pub enum Upstream {
    /// A server started per session: the program and its arguments.
    Command(Vec<String>),
    /// A streamable-HTTP server; each session opens its own session there.
    Url(String),
}

/// One client session.
pub struct Session {
    pub id: String,
    /// The client that opened it ([`pare_http::server::client_of`]), for per-client limits.
    pub client: IpAddr,
    /// Whether the client has used it: a request after initialize, or a GET stream.
    used: AtomicBool,
    input: Mutex<Option<Sender<Feed>>>,
    pub router: Arc<Router>,
    last_used: Mutex<Instant>,
}

impl Session {
    /// Start the upstream and the proxy. `on_end` runs once the session is over.
    pub fn start(
        id: String,
        client: IpAddr,
        opts: Arc<Options>,
        upstream: &Upstream,
        on_end: impl FnOnce() + Send + 'static,
    ) -> Result<Arc<Session>, McpError> {
        let (tx, rx) = mpsc::channel();
        let session = Arc::new(Session {
            id,
            client,
            used: AtomicBool::new(false),
            input: Mutex::new(Some(tx)),
            router: Arc::new(Router::default()),
            last_used: Mutex::new(Instant::now()),
        });
        let client_in = Inbox::new(rx);
        let client_out = RouterWriter::new(session.router.clone(), opts.max_message_bytes);
        let s = session.clone();
        match upstream {
            Upstream::Command(command) => {
                let (server, upstream_in, upstream_out) = child::spawn(command)?;
                let upstream_out = BufReader::with_capacity(1 << 16, upstream_out);
                thread::spawn(move || {
                    let ending = proxy::run(opts, client_in, client_out, upstream_in, upstream_out);
                    let status = server.stop(child::GRACE);
                    if let Ending::UpstreamExited { pending } = ending {
                        log(&format!(
                            "session {}: the upstream MCP server exited ({}); {pending} open request(s) were answered with an error",
                            s.id,
                            status.map_or_else(|| "killed".to_owned(), |st| st.to_string())
                        ));
                    }
                    s.end();
                    on_end();
                });
            }
            Upstream::Url(url) => {
                let (outbox, inbox, link) =
                    http_upstream::connect(url, opts.drain, opts.max_message_bytes);
                let url = url.clone();
                thread::spawn(move || {
                    let ending = proxy::run(opts, client_in, client_out, outbox, inbox);
                    link.delete_session();
                    if let Some(why) = link.failure() {
                        log(&format!(
                            "session {}: the upstream MCP server at {url} is unusable: {why}",
                            s.id
                        ));
                    } else if let Ending::UpstreamExited { pending } = ending
                        && pending > 0
                    {
                        log(&format!(
                            "session {}: the upstream connection ended; {pending} open request(s) were answered with an error",
                            s.id
                        ));
                    }
                    s.end();
                    on_end();
                });
            }
        }
        Ok(session)
    }

    /// Hand one message to the proxy. `false` if the session is over.
    pub fn send(&self, message: Vec<u8>) -> bool {
        *self.last_used.lock().expect("last used") = Instant::now();
        match &*self.input.lock().expect("input") {
            Some(tx) => tx.send(Feed::Line(message)).is_ok(),
            None => false,
        }
    }

    /// The client is done: the proxy sees the end of its input, lets the upstream answer
    /// what is open, and stops.
    pub fn close(&self) {
        self.input.lock().expect("input").take();
    }

    /// How long since the client last sent anything.
    pub fn idle(&self) -> Duration {
        self.last_used.lock().expect("last used").elapsed()
    }

    /// The client made a request after initialize, or opened the GET stream.
    pub fn mark_used(&self) {
        self.used.store(true, Ordering::Relaxed);
    }

    pub fn used(&self) -> bool {
        self.used.load(Ordering::Relaxed)
    }

    pub fn touch(&self) {
        *self.last_used.lock().expect("last used") = Instant::now();
    }

    fn end(&self) {
        self.close();
        self.router.close();
        log(&format!("session {}: ended", self.id));
    }
}
