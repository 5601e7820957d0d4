//! REST responses through pare, written once for every REST door (the Python package's
//! ASGI middleware now, `pare http` next): which routes are shaped and how ([`routes`]),
//! what the caller asks for ([`ask`]: `pare_detail`, `pare_format`, `pare_max_tokens`,
//! `pare_cursor`, or `X-Pare-*` headers), and the response ([`response`]: a JSON body
//! through the response pipeline, [`mod@crate::respond`], with `X-Pare-*` headers; anything
//! else passes untouched). No I/O: a door moves the bytes and calls these.
//!
//! ```
//! use pare::rest::{ask::Ask, response::{shape, Outcome}, routes::Routes};
//! let policy = pare::Policy::parse(
//!     "[[ops]]\nop = \"prune\"\n[http]\n[[http.routes]]\nmatch = [\"GET /items\"]\n",
//! ).unwrap();
//! let routes = Routes::from_policy(policy, &mut |_: &str| Err::<pare::Policy, std::io::Error>(std::io::Error::other("no files"))).unwrap();
//! let route = routes.route("GET", "/items").unwrap();
//! let (ask, rest_of_query) = Ask::parse("page=2&pare_detail=standard", &[]).unwrap();
//! assert_eq!(rest_of_query, "page=2");
//! let Outcome::Shaped(out) = shape(&route, &ask, 200, Some("application/json"), false, br#"{"a":null,"b":1}"#)
//! else { panic!() };
//! assert_eq!(out.body, r#"{"b":1}"#);
//! ```

pub mod ask;
pub mod identity;
pub mod response;
pub mod routes;
pub mod streamed;
