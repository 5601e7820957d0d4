//! The `[http]` section of a policy file: how a REST door (the Python package's ASGI
//! middleware, `pare http`) shapes each route's JSON responses. Options only; the rules are
//! [`crate::rest`].
//!
//! ```toml
//! [http]
//! shape_unmatched = false        # routes no entry matches pass untouched (the default)
//!
//! [[http.routes]]
//! match = ["GET /api/entities", "GET /api/entities/{id}"]
//! policy = "entities.toml"       # relative to this file; default: this file's own ops
//! level = "standard"             # the level when the caller names none
//! format = "json"                # json (default) | pretty | toon | auto
//! max_tokens = 25000             # a budget for these routes (a caller may ask for less)
//! ```

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::mcp::McpFormat;

/// How REST doors shape responses.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpOptions {
    /// Shape JSON responses of routes no `[[http.routes]]` entry matches, with this file's
    /// own ops. Default: false (they pass untouched).
    #[serde(default)]
    pub shape_unmatched: bool,
    /// The request headers that say who is asking: a later page waiting in the cache is
    /// served only to a request with the same values of these (else pare asks the upstream
    /// again, as that caller). Default: every header but a short list that cannot identify
    /// a caller (`pare::rest::identity::NOT_IDENTITY`: `Accept*`, `User-Agent`, caching
    /// and tracing headers, …), so credentials in any header count.
    #[serde(default)]
    pub identity_headers: Option<Vec<String>>,
    /// Per-route settings; the first entry whose `match` names a request wins.
    #[serde(default)]
    pub routes: Vec<HttpRoute>,
}

/// Settings for the requests whose method and path match.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpRoute {
    /// `METHOD /path` patterns (`GET /api/entities/{id}`); the method may be `*` or left out
    /// (any method). In the path, `*` or `{name}` matches one segment and `**` any number of
    /// segments (none included); a trailing `/` is ignored and the query string is not part
    /// of the match.
    #[serde(rename = "match")]
    pub patterns: Vec<String>,
    /// Another policy file for these routes, relative to this file. Default: this file's ops.
    #[serde(default)]
    pub policy: Option<String>,
    /// The level used when a request names none (it is lowered to fit a budget). Default:
    /// the policy's default level.
    #[serde(default)]
    pub level: Option<String>,
    /// The response format. Default: `json` (REST clients parse the body).
    #[serde(default)]
    pub format: Option<McpFormat>,
    /// The most tokens (o200k_base) a response may have; over it, the response is paged.
    /// A request may ask for fewer (`pare_max_tokens`). Default: no budget.
    #[serde(default)]
    pub max_tokens: Option<usize>,
    /// Shape these routes at all. `false` passes them untouched. Default: true.
    #[serde(default = "yes")]
    pub shape: bool,
}

fn yes() -> bool {
    true
}
