//! Fuzz the stream (`pare::json`'s writer that reads as it writes, used when no value is
//! wanted): on any text, a response with no value wanted must equal the one built from the
//! value — the same page and record, or the same error — and neither may panic; also with
//! list ops (`hoist`, `partition`), which the stream does on the lists it wrote.
//!
//! Why: the stream is a second way through the parser's grammar; where it could differ
//! from the parser it must stop and hand the text over, never write something else.
//!
//! ```text
//! scripts/fuzz json_stream
//! ```
use std::sync::LazyLock;

use pare::policy::Policy;
use pare::respond::{Input, Request, respond};

/// Drops by key (a name and a pattern) and a prune: all done by the parser, so streamed.
static POLICY: LazyLock<Policy> = LazyLock::new(|| {
    Policy::parse(
        "[[ops]]\nop = \"drop\"\npaths = [\"$..a\", \"$..*_at\"]\n[[ops]]\nop = \"prune\"\nempty_string = false\n",
    )
    .expect("the policy parses")
});

/// The same with list ops the stream does on the lists it wrote: a hoist and a partition
/// at paths of member names (`{"e":[{"t":"A"},{"t":"A"}]}` is hoisted).
static LISTS: LazyLock<Policy> = LazyLock::new(|| {
    Policy::parse(
        "[[ops]]\nop = \"drop\"\npaths = [\"$..a\"]\n[[ops]]\nop = \"prune\"\n\
         [[ops]]\nop = \"hoist\"\nat = [\"$.e\", \"$.r\", \"$.b.e\"]\n\
         [[ops]]\nop = \"partition\"\nat = [\"$.r\", \"$.p\"]\nby = \"t\"\n",
    )
    .expect("the policy parses")
});

/// The check on one input: returns, or panics on a fault.
pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for policy in [&*POLICY, &*LISTS] {
        let ask = |want_value| {
            respond(Request {
                want_value,
                ..Request::new(Input::Json(text), policy)
            })
            .map(|r| (r.page, r.rest))
            .map_err(|e| e.to_string())
        };
        assert_eq!(ask(false), ask(true));
    }
}
