//! `pare._pare.Rest`: the engine's REST rules (`pare::rest`) for the ASGI middleware
//! (`pare/asgi.py`): which route a request is, what the caller asks, and the shaped
//! response. The middleware only moves bytes.
//!
//! ```python
//! rest = _pare.Rest(policy)
//! call = rest.begin("GET", "/api/entities", "pare_detail=brief", [("accept", "*/*")])
//! call.query                     # "" — the query the handler sees
//! call.finish(200, "application/json", False, body)   # (body, content_type, headers) or None
//! ```

use std::sync::Arc;

use pare::rest::ask::{Ask, is_pare_header};
use pare::rest::response::{self, Outcome};
use pare::rest::routes::{RoutePolicy, Routes};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors;
use crate::policy::PyPolicy;

/// The routes of a policy's `[http]` section.
#[pyclass(module = "pare", name = "Rest", frozen)]
pub struct Rest {
    routes: Routes,
}

/// One request on a shaped route.
#[pyclass(module = "pare", name = "RestCall", frozen)]
pub struct RestCall {
    route: Arc<RoutePolicy>,
    ask: Ask,
    /// The query string without pare's parameters.
    #[pyo3(get)]
    query: String,
    #[pyo3(get)]
    path: String,
}

#[pymethods]
impl Rest {
    #[new]
    fn new(py: Python<'_>, policy: &Bound<'_, PyPolicy>) -> PyResult<Rest> {
        let p = policy.get();
        let routes = Routes::from_policy(p.recompile(py)?, &mut p.resolver())
            .map_err(|e| errors::pare_error(py, format!("[http]: {e}")))?;
        Ok(Rest { routes })
    }

    /// A request: `None` when its route is not shaped (pass it untouched); a
    /// `(400, body)` tuple when a pare parameter is bad (answer that); else the call.
    fn begin<'py>(
        &self,
        py: Python<'py>,
        method: &str,
        path: &str,
        query: &str,
        headers: Vec<(String, String)>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(route) = self.routes.route(method, path) else {
            return Ok(None);
        };
        let pairs: Vec<(&str, &str)> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let parsed = Ask::parse(query, &pairs).and_then(|(mut ask, rest)| {
            ask.check(&route)?;
            Ok((ask, rest))
        });
        Ok(Some(match parsed {
            Err(e) => (400u16, e.body()).into_pyobject(py)?.into_any(),
            Ok((ask, query)) => Bound::new(
                py,
                RestCall {
                    route,
                    ask,
                    query,
                    path: path.to_owned(),
                },
            )?
            .into_any(),
        }))
    }
}

#[pymethods]
impl RestCall {
    /// The caller asked for the handler's exact response (`pare_detail=full`).
    #[getter]
    fn full(&self) -> bool {
        self.ask.is_full()
    }

    /// Whether a response starting with this status and these headers is shaped (else it
    /// passes untouched, streamed as it comes).
    fn shapes(&self, status: u16, content_type: Option<&str>, encoded: bool) -> bool {
        response::passes(&self.ask, status, content_type, encoded).is_none()
    }

    /// The whole response: `None` (send it as it is), `(status, body)` (answer that
    /// instead: a cursor that does not fit), or `(body, content_type, headers)` with the
    /// `X-Pare-*` headers and `Link` when paged.
    fn finish<'py>(
        &self,
        py: Python<'py>,
        status: u16,
        content_type: Option<&str>,
        encoded: bool,
        body: &[u8],
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let outcome = py.detach(|| {
            response::shape(&self.route, &self.ask, status, content_type, encoded, body)
        });
        Ok(match outcome {
            Outcome::Pass(_) => None,
            Outcome::Refuse { status, body } => Some((status, body).into_pyobject(py)?.into_any()),
            Outcome::Shaped(s) => {
                let mut headers: Vec<(String, String)> = s
                    .headers
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect();
                if let Some(next) = &s.record.next_cursor {
                    headers.push((
                        "Link".into(),
                        response::link(&self.path, &self.query, &self.ask, next),
                    ));
                }
                let body = PyBytes::new(py, s.body.as_bytes());
                Some(
                    (body, s.content_type, headers)
                        .into_pyobject(py)?
                        .into_any(),
                )
            }
        })
    }
}

/// A `Link` header value without its `rel="next"` links (`None` when nothing is left): while
/// pare's pages go on, pare's `next` comes first and the handler's own follows pare's last
/// page (`pare::rest::response::without_next`).
#[pyfunction]
pub fn link_without_next(value: &str) -> Option<String> {
    response::without_next(value)
}

/// Whether a request header is one of pare's (the middleware strips them).
#[pyfunction]
pub fn is_pare_header_name(name: &str) -> bool {
    is_pare_header(name)
}
