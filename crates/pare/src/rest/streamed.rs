//! A shaped REST response sent as the upstream's body arrives ([`Streamed`]), for a door
//! that can send HTTP trailers: the items of a JSON array go out as they come, and what only
//! the whole body gives — `X-Pare-Tokens-Before`, `X-Pare-Tokens-After` and `X-Pare-Note` —
//! follows the body as trailers ([`TRAILERS`]). The body is byte for byte what
//! [`super::response::shape`] gives for the whole body, and the trailers are its headers.
//!
//! When ([`Streamed::start`]): what [`crate::respond::Incremental`] can do (a JSON array; a
//! level whose ops the parser does as it reads; JSON out), on a route the caller asked for
//! no budget and no cursor on (one page). Only a client that said it reads trailers (`TE:
//! trailers`) should be sent one: without them it would miss the note. Anything else is
//! shaped whole, as before.
//!
//! ```
//! use pare::rest::{ask::Ask, routes::Routes, streamed::Streamed, response::{shape, Outcome}};
//! let policy = pare::Policy::parse(
//!     "[[ops]]\nop = \"prune\"\n[http]\n[[http.routes]]\nmatch = [\"GET /items\"]\n",
//! ).unwrap();
//! let routes = Routes::from_policy(policy, &mut |_: &str| Err::<pare::Policy, std::io::Error>(std::io::Error::other("no files"))).unwrap();
//! let route = routes.route("GET", "/items").unwrap();
//! let (ask, _) = Ask::parse("", &[]).unwrap();
//! let mut s = Streamed::start(&route, &ask, 200, Some("application/json")).unwrap();
//! let mut body = s.push(br#"[{"a":null,"b":1},"#).unwrap().text().unwrap();
//! body += &s.push(br#"{"b":2}]"#).unwrap().text().unwrap();
//! let (tail, whole) = s.finish().unwrap();
//! body += &tail;
//! assert_eq!(body, r#"[{"b":1},{"b":2}]"#);
//! let body_in = br#"[{"a":null,"b":1},{"b":2}]"#;
//! let Outcome::Shaped(buffered) = shape(&route, &ask, 200, Some("application/json"), false, body_in)
//! else { panic!() };
//! assert_eq!((body, whole.headers), (buffered.body, buffered.headers));
//! ```

use crate::json::JsonError;
use crate::json::root_items::Root;
use crate::respond::{Incremental, Input, Pushed};

use super::ask::Ask;
use super::response::{self, Shaped};
use super::routes::RoutePolicy;

/// The `X-Pare-*` headers a streamed response sends after its body, as `Trailer` names them.
pub const TRAILERS: [&str; 3] = ["X-Pare-Tokens-Before", "X-Pare-Tokens-After", "X-Pare-Note"];

/// Whether a body whose first bytes are `read` is a JSON array, the one kind of body a
/// response streams; `None` while only whitespace (and a byte order mark) has come.
pub fn is_array(read: &[u8]) -> Option<bool> {
    match crate::json::root_items::root_start(read).0 {
        Root::Unknown => None,
        Root::Array => Some(true),
        Root::Other => Some(false),
    }
}

/// A response being shaped as its body arrives.
pub struct Streamed<'a> {
    incremental: Incremental<'a>,
}

impl<'a> Streamed<'a> {
    /// A response of `route` that can be sent as its body arrives; `None` when it must be
    /// shaped whole (or passes untouched, [`response::passes`]).
    pub fn start(
        route: &'a RoutePolicy,
        ask: &'a Ask,
        status: u16,
        content_type: Option<&str>,
    ) -> Option<Streamed<'a>> {
        if response::passes(ask, status, content_type, false).is_some()
            || response::budget(route, ask).is_some()
            || ask.cursor.is_some()
        {
            return None;
        }
        let request = response::request(route, ask, None, Input::Json(""));
        let incremental = Incremental::start(request).ok()??;
        Some(Streamed { incremental })
    }

    /// The `X-Pare-*` headers known before the body: the level, and one page of one.
    pub fn head(&self) -> Vec<(&'static str, String)> {
        vec![
            ("X-Pare-Level", self.incremental.level().to_owned()),
            ("X-Pare-Page", "1".to_owned()),
            ("X-Pare-Pages", "1".to_owned()),
        ]
    }

    /// The body will be `bytes` long (its `Content-Length`): its buffers are made once.
    pub fn reserve(&mut self, bytes: usize) {
        self.incremental.reserve(bytes);
    }

    /// The next bytes of the upstream's body: what to send next, if anything
    /// ([`Pushed::NotAnArray`]: nothing was sent, shape it whole with
    /// [`Streamed::into_input`]). An error means the body is not JSON: what was sent cannot
    /// be taken back, and the door breaks the response off.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Pushed, JsonError> {
        self.incremental.push(bytes)
    }

    /// The body pushed so far.
    pub fn input(&self) -> &[u8] {
        self.incremental.input()
    }

    /// The body read so far, for a door that shapes it whole after all.
    pub fn into_input(self) -> Vec<u8> {
        self.incremental.into_input()
    }

    /// The body is whole: the last text to send, and the response as
    /// [`response::shape`] gives it (its headers include the [`TRAILERS`]).
    pub fn finish(self) -> Result<(String, Shaped), JsonError> {
        let finished = self.incremental.finish()?;
        Ok((finished.tail, response::shaped(finished.response.page)))
    }
}
