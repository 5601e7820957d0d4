//! Fuzz the stream (`pare::json`'s writer that reads as it writes, used when no value is
//! wanted): on any text, a response with no value wanted must equal the one built from the
//! value — the same page and record, or the same error — and neither may panic; also with
//! list ops (`hoist`, `partition`), which the stream does on the lists it wrote. A
//! report of a text the stream takes (its minified input written without reading the
//! grammar, `json/minify.rs`) must say what the report of the parsed value says.
//!
//! Why: the stream is a second way through the parser's grammar; where it could differ
//! from the parser it must stop and hand the text over, never write something else.
//!
//! ```text
//! scripts/fuzz json_stream
//! ```
use std::sync::LazyLock;

use pare::encode::Format;
use pare::policy::Policy;
use pare::report;
use pare::respond::{Input, Request, respond};
use pare::shape::ShapeOptions;

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
    let opts = ShapeOptions {
        track_paths: true,
        ..ShapeOptions::new(&POLICY)
    };
    if let Some(streamed) = report::measure_text(text, &POLICY, &opts, true) {
        let value = pare::json::parse(text).expect("a text the stream takes parses");
        let walked = report::measure(&value, &POLICY, &opts, Format::Json, true, true);
        assert_eq!(
            (streamed.tokens_before, &streamed.ops, &streamed.text),
            (walked.tokens_before, &walked.ops, &walked.text)
        );
        assert_eq!(streamed.manifest, walked.manifest);
    }
}
