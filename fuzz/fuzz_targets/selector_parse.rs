//! Fuzz the JSONPath selector parser and matcher: no input may panic, and every accepted
//! selector must compile and step through arbitrary keys and indices.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pare::query::selector::{Selector, SelectorSet, Step};

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(sel) = Selector::parse(src) else {
        return;
    };
    assert_eq!(sel.source(), src);
    let Ok(set) = SelectorSet::new(vec![sel.clone(), sel]) else {
        return;
    };
    // Walk a path made of the input's own bytes: letters as keys, digits as indices.
    let mut state = set.root();
    for (i, b) in data.iter().enumerate() {
        let step = if b.is_ascii_digit() {
            Step::Index {
                index: usize::from(b - b'0'),
                len: i % 12,
            }
        } else {
            Step::Key(std::str::from_utf8(std::slice::from_ref(b)).unwrap_or("k"))
        };
        state = set.step(&state, step);
        assert_eq!(set.matches(&state, 0), set.matches(&state, 1));
        if set.is_dead(&state) {
            break;
        }
    }
});
