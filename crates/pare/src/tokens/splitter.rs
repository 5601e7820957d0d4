//! The pre-tokenizer's patterns as a lazy DFA over a forward NFA.
//!
//! Why not `regex_automata::meta::Regex`: a piece's end needs only a forward, anchored,
//! leftmost-first search, and the meta regex also compiles a reverse NFA and engines for
//! searches a splitter never runs. Building it cost a process 2.2–3.9 ms, on o200k's
//! first text that is not ASCII and on cl100k's first text of all; the forward NFA and its
//! lazy DFA cost 1.2–1.5 ms, and search as fast (the meta regex runs the same lazy DFA).
//!
//! The lazy DFA gives up only where told to (this one never is: no cache-clear limit, no
//! quit bytes, no Unicode word boundary); if it ever did, the same NFA's PikeVM answers.
//!
//! ```text
//! find("héllo world", at 0) = (pattern 0, end 6)   "héllo"
//! ```

use regex_automata::hybrid::dfa::{Cache as DfaCache, DFA};
use regex_automata::nfa::thompson::{self, NFA, pikevm};
use regex_automata::{Input, MatchKind};

/// The patterns, compiled once per encoding.
pub(crate) struct Splitter {
    dfa: DFA,
    pike: pikevm::PikeVM,
}

/// What one walk reuses from search to search.
pub(crate) struct SplitCache {
    dfa: DfaCache,
    /// Made only if the lazy DFA ever gives up.
    pike: Option<pikevm::Cache>,
}

impl Splitter {
    /// The patterns, tried in order (leftmost-first). They are the encodings' constants,
    /// and the unit tests build both encodings, so a bad one cannot reach a user.
    pub(crate) fn new(patterns: &[&str]) -> Splitter {
        let nfa = NFA::compiler()
            .configure(thompson::Config::new().which_captures(thompson::WhichCaptures::Implicit))
            .build_many(patterns)
            .expect("pre-tokenizer patterns compile");
        let dfa = DFA::builder()
            .configure(DFA::config().match_kind(MatchKind::LeftmostFirst))
            .build_from_nfa(nfa.clone())
            .expect("pre-tokenizer patterns make a lazy DFA");
        let pike = pikevm::PikeVM::new_from_nfa(nfa).expect("pre-tokenizer patterns make a PikeVM");
        Splitter { dfa, pike }
    }

    pub(crate) fn create_cache(&self) -> SplitCache {
        SplitCache {
            dfa: self.dfa.create_cache(),
            pike: None,
        }
    }

    /// The pattern and the end of the leftmost-first match of an anchored `input`.
    pub(crate) fn find(&self, cache: &mut SplitCache, input: &Input<'_>) -> Option<(usize, usize)> {
        match self.dfa.try_search_fwd(&mut cache.dfa, input) {
            Ok(found) => found.map(|m| (m.pattern().as_usize(), m.offset())),
            Err(_) => {
                let pike = cache.pike.get_or_insert_with(|| self.pike.create_cache());
                self.pike
                    .find(pike, input.clone())
                    .map(|m| (m.pattern().as_usize(), m.end()))
            }
        }
    }
}
