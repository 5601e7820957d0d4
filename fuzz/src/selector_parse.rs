//! Fuzz the JSONPath selector parser and matcher: no input may panic, and every accepted
//! selector (key patterns included) must compile and step through arbitrary keys and indices.
use pare::query::selector::{Selector, SelectorSet, Step};

/// The check on one input: returns, or panics on a fault.
pub fn check(data: &[u8]) {
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
    // Two walks made of the input's own text: each byte as a one-letter key (digits as
    // indices), then its `.`-separated pieces as keys, so key patterns meet keys of every
    // length, multi-byte characters included.
    let bytes = data.iter().enumerate().map(|(i, b)| {
        if b.is_ascii_digit() {
            Step::Index {
                index: usize::from(b - b'0'),
                len: i % 12,
            }
        } else {
            Step::Key(std::str::from_utf8(std::slice::from_ref(b)).unwrap_or("k"))
        }
    });
    let pieces = src.split('.').map(Step::Key);
    for walk in [bytes.collect::<Vec<_>>(), pieces.collect()] {
        let mut state = set.root();
        for step in walk {
            state = set.step(&state, step);
            assert_eq!(set.matches(&state, 0), set.matches(&state, 1));
            if set.is_dead(&state) {
                break;
            }
        }
    }
}
