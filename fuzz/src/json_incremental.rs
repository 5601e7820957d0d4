//! Fuzz the response written as its input arrives (`pare::respond::Incremental`): on any
//! bytes, cut into pieces where the first byte says, it must give the text and page the
//! whole input gives, or fail where the whole input fails (not JSON, not UTF-8), or say it
//! is not an array; never panic, never something else.
//!
//! Why: it finds the items of an array with a scanner of its own and shapes them in
//! batches; a boundary it gets wrong would write a different text.
//!
//! ```text
//! scripts/fuzz json_incremental
//! ```
use std::sync::LazyLock;

use pare::policy::Policy;
use pare::respond::{Incremental, Input, Pushed, Request, respond};

/// Drops by key (a name, a pattern, a scoped list item) and a prune: all done by the parser.
static POLICY: LazyLock<Policy> = LazyLock::new(|| {
    Policy::parse(
        "[[ops]]\nop = \"drop\"\npaths = [\"$..a\", \"$..*_at\", \"$..l[*]['b']\"]\n[[ops]]\nop = \"prune\"\n",
    )
    .expect("the policy parses")
});

/// The check on one input: returns, or panics on a fault.
pub fn check(data: &[u8]) {
    let Some((&step, bytes)) = data.split_first() else {
        return;
    };
    let request = |input| Request {
        want_value: false,
        ..Request::new(input, &POLICY)
    };
    let mut inc = Incremental::start(request(Input::Json("")))
        .expect("the level is the policy's")
        .expect("drops and a prune stream");
    let step = usize::from(step).max(1);
    let mut sent = String::new();
    let mut failed = false;
    for piece in bytes.chunks(step) {
        match inc.push(piece) {
            Ok(Pushed::Text(t)) => sent += &t,
            Ok(Pushed::Undecided) => {}
            Ok(Pushed::NotAnArray) => {
                // Nothing was sent; the whole input is read as any other.
                assert!(sent.is_empty());
                return;
            }
            Err(_) => {
                failed = true;
                break;
            }
        }
    }
    let whole = std::str::from_utf8(bytes)
        .ok()
        .map(|t| respond(request(Input::Json(t))).map(|r| r.page));
    if failed {
        assert!(!matches!(whole, Some(Ok(_))), "the whole input was shaped");
        return;
    }
    match (inc.finish(), whole) {
        (Ok(finished), Some(Ok(page))) => {
            sent += &finished.tail;
            assert_eq!(sent, page.text);
            assert_eq!(finished.response.page, page);
        }
        (Ok(_), _) => panic!("streamed what the whole input does not give"),
        (Err(_), Some(Ok(page))) if page.text.starts_with('[') => {
            panic!("failed on an array the whole input shapes")
        }
        (Err(_), _) => {}
    }
}
