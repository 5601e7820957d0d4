//! The originals behind the `original:` handles: the server's text of each result whose
//! shaped form is not the whole of it (something removed, lowered or packed), so that
//! `pare_more` can return it — whole, a JSONPath subtree, or at another level — without
//! calling the tool again (a second call may cost, or change something).
//!
//! Bounded like the page cache ([`crate::mcp::store::Store`]). A handle is `r` and a counter:
//! short, and never a page cursor (those are 10–11 base62 characters).

use std::sync::Arc;

use crate::mcp::config::ToolPolicy;
use crate::mcp::store::{Limits, Store, Weighed};

/// One result as the server sent it, with what it was shaped by.
#[derive(Debug, Clone)]
pub struct Original {
    /// The name of the tool that answered.
    pub tool_name: String,
    /// How the tool's results are shaped.
    pub tool: Arc<ToolPolicy>,
    /// The result's one text item, as the server wrote it.
    pub text: Arc<str>,
    /// The caller's parameter values of the call.
    pub params: Vec<(String, String)>,
    /// The argument that names a level on this tool, for the notes.
    pub detail_arg: String,
}

impl Weighed for Original {
    fn bytes(&self) -> usize {
        self.text.len()
    }
}

/// Handle → original.
#[derive(Debug)]
pub struct Originals {
    store: Store<Original>,
    next: u64,
}

impl Originals {
    /// An empty store, bounded by `limits`; its first handle is `r1`.
    pub fn new(limits: Limits) -> Originals {
        Originals {
            store: Store::new(limits),
            next: 1,
        }
    }

    /// Keep `original`; its handle.
    pub fn keep(&mut self, original: Original) -> String {
        let handle = format!("r{}", self.next);
        self.next += 1;
        self.store.put(handle.clone(), original);
        handle
    }

    /// The original `handle` names; `None` when it is unknown, expired or evicted.
    pub fn get(&mut self, handle: &str) -> Option<Original> {
        self.store.get(handle)
    }
}
