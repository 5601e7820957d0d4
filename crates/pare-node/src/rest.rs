//! `Rest`: the engine's REST rules (`pare::rest`) for the package's Express middleware
//! (`express.js`): which route a request is, what the caller asks, and the shaped
//! response. The middleware only moves bytes.
//!
//! ```js
//! const rest = new Rest(policy);
//! const call = rest.begin("GET", "/api/entities", "pare_detail=brief", [["accept", "*/*"]]);
//! call.query                                          // "" — the query the handler sees
//! call.finish(200, "application/json", false, body)   // { kind: "shaped", body, headers, … }
//! ```

use std::sync::Arc;

use napi::bindgen_prelude::Buffer;
use napi_derive::napi;
use pare::rest::ask::{Ask, is_pare_header};
use pare::rest::response::{self, Outcome};
use pare::rest::routes::{RoutePolicy, Routes};

use crate::errors;
use crate::policy::NativePolicy;

/// The routes of a policy's `[http]` section.
#[napi]
pub struct Rest {
    routes: Routes,
}

/// One request on a shaped route; `errorStatus`/`errorBody` when a pare parameter is bad
/// (answer that instead).
#[napi]
pub struct RestCall {
    route: Option<Arc<RoutePolicy>>,
    ask: Option<Ask>,
    /// The query string without pare's parameters.
    query: String,
    path: String,
    error: Option<(u16, String)>,
}

/// What to send: `pass` (the handler's response as it is), `refuse` (`status` and the
/// JSON `body` instead: a cursor that does not fit), or `shaped` (`body`, `contentType` and
/// the `X-Pare-*` headers, with `Link` when paged).
#[napi(object)]
pub struct Finished {
    pub kind: String,
    pub status: Option<u32>,
    pub body: Option<Buffer>,
    pub content_type: Option<String>,
    pub headers: Vec<Vec<String>>,
}

#[napi]
impl Rest {
    #[napi(constructor)]
    pub fn new(policy: &NativePolicy) -> napi::Result<Rest> {
        let routes = Routes::from_policy(policy.recompile()?, &mut policy.resolver())
            .map_err(|e| errors::pare_error(format!("[http]: {e}")))?;
        Ok(Rest { routes })
    }

    /// A request: `null` when its route is not shaped (pass it untouched), else the call.
    #[napi]
    pub fn begin(
        &self,
        method: String,
        path: String,
        query: String,
        headers: Vec<Vec<String>>,
    ) -> Option<RestCall> {
        let route = self.routes.route(&method, &path)?;
        let pairs: Vec<(&str, &str)> = headers
            .iter()
            .filter_map(|h| Some((h.first()?.as_str(), h.get(1)?.as_str())))
            .collect();
        let parsed = Ask::parse(&query, &pairs).and_then(|(mut ask, rest)| {
            ask.check(&route)?;
            Ok((ask, rest))
        });
        Some(match parsed {
            Err(e) => RestCall {
                route: None,
                ask: None,
                query,
                path,
                error: Some((400, e.body())),
            },
            Ok((ask, rest)) => RestCall {
                route: Some(route),
                ask: Some(ask),
                query: rest,
                path,
                error: None,
            },
        })
    }
}

#[napi]
impl RestCall {
    #[napi(getter)]
    pub fn query(&self) -> String {
        self.query.clone()
    }

    #[napi(getter)]
    pub fn error_status(&self) -> Option<u32> {
        self.error.as_ref().map(|(s, _)| u32::from(*s))
    }

    #[napi(getter)]
    pub fn error_body(&self) -> Option<String> {
        self.error.as_ref().map(|(_, b)| b.clone())
    }

    /// The caller asked for the handler's exact response (`pare_detail=full`).
    #[napi(getter)]
    pub fn full(&self) -> bool {
        self.ask.as_ref().is_some_and(Ask::is_full)
    }

    /// Whether a response starting with this status and these headers is shaped (else it
    /// passes untouched, streamed as it comes).
    #[napi]
    pub fn shapes(&self, status: u32, content_type: Option<String>, encoded: bool) -> bool {
        let Some(ask) = &self.ask else {
            return false;
        };
        let status = u16::try_from(status).unwrap_or(0);
        response::passes(ask, status, content_type.as_deref(), encoded).is_none()
    }

    /// The whole response, shaped or not.
    #[napi]
    pub fn finish(
        &self,
        status: u32,
        content_type: Option<String>,
        encoded: bool,
        body: Buffer,
    ) -> Finished {
        let pass = || Finished {
            kind: "pass".into(),
            status: None,
            body: None,
            content_type: None,
            headers: Vec::new(),
        };
        let (Some(route), Some(ask)) = (&self.route, &self.ask) else {
            return pass();
        };
        let status = u16::try_from(status).unwrap_or(0);
        match response::shape(route, ask, status, content_type.as_deref(), encoded, &body) {
            Outcome::Pass(_) => pass(),
            Outcome::Refuse { status, body } => Finished {
                kind: "refuse".into(),
                status: Some(u32::from(status)),
                body: Some(body.into_bytes().into()),
                content_type: Some("application/json".into()),
                headers: Vec::new(),
            },
            Outcome::Shaped(s) => {
                let mut headers: Vec<Vec<String>> = s
                    .headers
                    .into_iter()
                    .map(|(k, v)| vec![k.to_owned(), v])
                    .collect();
                if let Some(next) = &s.record.next_cursor {
                    headers.push(vec![
                        "Link".into(),
                        response::link(&self.path, &self.query, ask, next),
                    ]);
                }
                Finished {
                    kind: "shaped".into(),
                    status: None,
                    body: Some(s.body.into_bytes().into()),
                    content_type: Some(s.content_type.to_string()),
                    headers,
                }
            }
        }
    }
}

/// A `Link` header value without its `rel="next"` links (`null` when nothing is left):
/// while pare's pages go on, pare's `next` comes first and the handler's own follows pare's
/// last page.
#[napi]
pub fn link_without_next(value: String) -> Option<String> {
    response::without_next(&value)
}

/// Whether a request header is one of pare's (the middleware strips them).
#[napi]
pub fn is_pare_header_name(name: String) -> bool {
    is_pare_header(&name)
}

/// The `Vary` a shaped response carries, as `pare http` sends it.
#[napi]
pub fn shaped_vary() -> &'static str {
    response::VARY
}

/// The handler's headers a shaped body does not keep, as `pare http` drops them.
#[napi]
pub fn not_of_the_shaped_body() -> Vec<&'static str> {
    response::NOT_OF_THE_SHAPED_BODY.to_vec()
}
