//! One MCP session's worth of pare, for a door that holds it behind one lock (the Python
//! package wraps a server in-process with this): the tool list it learned, the later pages
//! and the originals waiting for `pare_more`, and the calls on their way. Each method is
//! the step the proxy takes at the same point, through the same functions.
//!
//! ```
//! use pare::mcp::session::{Request, Session};
//! use pare::mcp::{config::Config, result::Budget, store::Limits};
//! let budget = Budget { max_tokens: 25_000, max_chars4: 100_000, tokenizer: pare::tokens::builtin("o200k_base").unwrap() };
//! let mut session = Session::new(Config::builtin(), budget, Limits::default());
//! let mut list = serde_json::json!({"tools": [{"name": "search", "inputSchema": {"type": "object"}}]});
//! assert!(session.list_tools(&mut list).is_empty());
//! let Request::Forward { pending, .. } = session.call_request("search", None) else { panic!() };
//! let result = serde_json::json!({"content": [{"type": "text", "text": "{\"a\": null}"}]});
//! let outcome = session.call_result(&result, pending.as_ref().unwrap());
//! ```

use serde_json::{Map, Value as Json};

use super::call::{self, Pending, Prepared};
use super::config::Config;
use super::originals::Originals;
use super::result::{Budget, Shaped, Stores, shape_result};
use super::store::{Limits, PageCache};
use super::tools_list::{self, PARE_MORE, ToolsState};

/// What becomes of a `tools/call` request (see [`call::prepare`]).
#[derive(Debug)]
pub enum Request {
    /// It was `pare_more`, answered here: the result object, or an invalid-params message.
    More(Result<Json, String>),
    /// Answer with an invalid-params error: this message.
    Invalid(String),
    /// Call the tool (`changed`: arguments pare added were taken out); with `Some`, hand
    /// its result to [`Session::call_result`] with this.
    Forward {
        /// What shapes the result; `None`: the tool is passed through untouched.
        pending: Option<Pending>,
        /// Arguments were taken out: the door forwards the request as rewritten.
        changed: bool,
    },
}

/// What became of a result.
#[derive(Debug)]
pub enum Outcome {
    /// The result to send instead; `list_changed`: `pare_more` was needed for the first
    /// time, so the door tells the client (`notifications/tools/list_changed`).
    Shaped {
        /// The `tools/call` result object to send.
        result: Json,
        /// Tell the client the tool list changed: `pare_more` is now listed.
        list_changed: bool,
    },
    /// Send the server's result as it is (what the caller asked for, or it fits as it is).
    AsIs,
    /// Send the server's result as it is: shaping failed for this reason (log it).
    Unchanged(&'static str),
}

/// pare's state for one MCP session.
pub struct Session {
    config: Config,
    budget: Budget,
    tools: ToolsState,
    pages: PageCache,
    originals: Originals,
}

impl Session {
    /// A session that has learned no tools and stores nothing yet; `limits` bounds the
    /// page store and the original store each.
    pub fn new(config: Config, budget: Budget, limits: Limits) -> Session {
        Session {
            config,
            budget,
            tools: ToolsState::default(),
            pages: PageCache::new(limits),
            originals: Originals::new(limits),
        }
    }

    /// Rewrite a `tools/list` result in place ([`tools_list::rewrite`]); warnings to log.
    pub fn list_tools(&mut self, result: &mut Json) -> Vec<String> {
        tools_list::rewrite(result, &self.config, &mut self.tools)
    }

    /// A `tools/call` of `name` with these arguments (changed in place when pare takes
    /// something out).
    pub fn call_request(&mut self, name: &str, args: Option<&mut Map<String, Json>>) -> Request {
        if name == PARE_MORE && !self.tools.server_has_more {
            let args = args.map(|a| Json::Object(a.clone()));
            let answer = call::more(
                args.as_ref(),
                &mut self.pages,
                &mut self.originals,
                self.budget,
            );
            if answer
                .as_ref()
                .is_ok_and(|r| r.pointer("/_meta/pare/nextCursor").is_some())
            {
                // A new page was stored: `pare_more` is needed from now on (already
                // listed, since this call is one).
                self.tools.need_more();
            }
            return Request::More(answer);
        }
        let learned = self.tools.tools.get(name).cloned();
        match call::prepare(&self.config, learned, name, args) {
            Prepared::Invalid(m) => Request::Invalid(m),
            Prepared::Forward { pending, changed } => Request::Forward { pending, changed },
        }
    }

    /// Shape the result of a call [`Session::call_request`] forwarded.
    pub fn call_result(&mut self, result: &Json, pending: &Pending) -> Outcome {
        let stores = Stores {
            pages: &mut self.pages,
            originals: &mut self.originals,
        };
        // The result is whole here: its `structuredContent`, if any, is in it.
        match shape_result(result, None, &pending.call(), self.budget, stores) {
            Shaped::Result {
                result, needs_more, ..
            } => Outcome::Shaped {
                list_changed: needs_more && self.tools.need_more(),
                result,
            },
            Shaped::AsIs => Outcome::AsIs,
            Shaped::Unchanged(why) => Outcome::Unchanged(why),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::policy::Policy;

    fn session() -> Session {
        let policy = Policy::parse(
            "levels = [\"brief\", \"full\"]\n[mcp]\nformat = \"json\"\n\
             [[ops]]\nop = \"drop\"\npaths = [\"$..body\"]\nlevels = [\"brief\"]\n",
        )
        .unwrap();
        let config = Config::from_policy(policy, &mut |_: &str| {
            Err::<Policy, std::io::Error>(std::io::Error::other("no files"))
        })
        .unwrap();
        let budget = Budget {
            max_tokens: 400,
            max_chars4: 100_000,
            tokenizer: crate::tokens::builtin("o200k_base").unwrap(),
        };
        Session::new(config, budget, Limits::default())
    }

    fn result() -> Json {
        let items: Vec<Json> = (0..60)
            .map(|i| json!({"id": i, "body": format!("{i} ").repeat(30)}))
            .collect();
        json!({"content": [{"type": "text", "text": json!({"items": items}).to_string()}]})
    }

    #[test]
    fn a_session_lists_detail_takes_it_out_shapes_and_answers_pare_more() {
        let mut s = session();
        let mut list = json!({"tools": [{"name": "search", "inputSchema": {"type": "object"}}]});
        assert!(s.list_tools(&mut list).is_empty());
        let detail = &list["tools"][0]["inputSchema"]["properties"]["detail"];
        assert_eq!(detail["enum"], json!(["brief", "full"]));

        let mut bad = json!({"detail": "huge"});
        let Request::Invalid(m) = s.call_request("search", bad.as_object_mut()) else {
            panic!("accepted a bad level")
        };
        assert!(m.contains("brief, full") && m.contains("huge"), "{m}");

        let mut args = json!({"q": 1});
        let Request::Forward {
            pending: Some(p),
            changed: false,
        } = s.call_request("search", args.as_object_mut())
        else {
            panic!("not forwarded")
        };
        let Outcome::Shaped {
            result: shaped,
            list_changed: true,
        } = s.call_result(&result(), &p)
        else {
            panic!("not shaped, or pare_more not announced")
        };
        let meta = &shaped["_meta"]["pare"];
        assert_eq!(meta["level"], "brief");
        let handle = meta["original"].as_str().unwrap().to_owned();
        // The list now ends with pare_more.
        let mut list = json!({"tools": []});
        s.list_tools(&mut list);
        assert_eq!(list["tools"][0]["name"], PARE_MORE);

        let mut more = json!({"cursor": handle, "path": "$.items[2].id"});
        let Request::More(Ok(one)) = s.call_request(PARE_MORE, more.as_object_mut()) else {
            panic!("pare_more refused")
        };
        assert_eq!(one["content"][0]["text"], "2");
        let mut whole = json!({"cursor": handle});
        let Request::More(Ok(first)) = s.call_request(PARE_MORE, whole.as_object_mut()) else {
            panic!("pare_more refused")
        };
        let next = first["_meta"]["pare"]["nextCursor"]
            .as_str()
            .unwrap()
            .to_owned();
        let mut page = json!({"cursor": next});
        let Request::More(Ok(second)) = s.call_request(PARE_MORE, page.as_object_mut()) else {
            panic!("the next page is unknown")
        };
        assert_eq!(second["_meta"]["pare"]["page"], 2);
        let mut gone = json!({"cursor": "nope"});
        assert!(matches!(
            s.call_request(PARE_MORE, gone.as_object_mut()),
            Request::More(Err(m)) if m.contains("unknown or expired")
        ));
    }
}
