//! The pre-tokenizer: where each piece of a text ends, by the encoding's patterns
//! ([`super::patterns`]).
//!
//! Why not `regex_automata::meta::Regex`: a piece's end needs only a forward, anchored,
//! leftmost-first search. The meta regex also compiles a reverse NFA and engines for
//! searches a splitter never runs, and it cost a process 3.9–5.6 ms to build on o200k's
//! first text that is not ASCII and on cl100k's first text of all. Now:
//! - o200k's patterns are compiled at build time (`build.rs`) into a sparse DFA of about
//!   140 KB that the binary embeds and reads in place: ready after a check of its bytes
//!   (about 0.5 ms), and it needs no cache. o200k splits ASCII by hand, so it searches
//!   only around text that is not ASCII. A sparse DFA steps slower than a lazy one, though:
//!   5 MB of Greek, CJK and emoji counted 1.4× slower by it alone. So a walk that has
//!   searched [`SPARSE_SEARCHES`] times goes on with the lazy DFA (built then, once per
//!   process), and text with a little that is not ASCII never pays for building it.
//! - cl100k, which searches at every piece, builds a lazy DFA over a forward NFA on first
//!   use (2.3–3.5 ms): it steps as fast as the meta regex's own lazy DFA.
//!
//! If the embedded DFA would not load (a build of another `regex-automata`), the lazy one
//! is built instead. A lazy DFA gives up only where told to (this one never is: no
//! cache-clear limit, no quit bytes, no Unicode word boundary); if it ever did, the same
//! NFA's PikeVM answers.
//!
//! ```text
//! find("héllo world", at 0) = (pattern 0, end 6)   "héllo"
//! ```

use std::sync::OnceLock;

use regex_automata::dfa::{Automaton, sparse};
use regex_automata::hybrid::dfa::{Cache as DfaCache, DFA};
use regex_automata::nfa::thompson::{self, NFA, pikevm};
use regex_automata::{Input, MatchKind};

use super::patterns::splitter_patterns;

/// Aligned so the embedded DFA is read in place whatever its format asks.
#[repr(C, align(8))]
struct Aligned<B: ?Sized>(B);

static O200K_DFA: &Aligned<[u8]> = &Aligned(*include_bytes!(concat!(
    env!("OUT_DIR"),
    "/o200k_base.split.dfa"
)));

/// One encoding's pre-tokenizer.
pub(crate) struct Splitter {
    /// The patterns as compiled at build time, when they loaded.
    embedded: Option<sparse::DFA<&'static [u8]>>,
    encoding: &'static str,
    /// The patterns compiled here, on first need.
    lazy: OnceLock<Lazy>,
}

struct Lazy {
    dfa: DFA,
    pike: pikevm::PikeVM,
}

/// Searches a walk makes with the embedded DFA before it takes the lazy one: about what
/// building the lazy DFA costs (2.3–3.5 ms) in the sparse DFA's slower steps.
const SPARSE_SEARCHES: usize = 64 << 10;

/// What one walk reuses from search to search.
#[derive(Default)]
pub(crate) struct SplitCache {
    /// Made when the lazy DFA is first used.
    lazy: Option<(DfaCache, Option<pikevm::Cache>)>,
    /// Searches made with the embedded DFA.
    sparse_searches: usize,
}

/// o200k_base's splitter: the embedded DFA.
pub(crate) fn o200k() -> Splitter {
    let embedded = sparse::DFA::from_bytes(&O200K_DFA.0)
        .ok()
        .map(|(dfa, _)| dfa);
    Splitter {
        embedded,
        encoding: "o200k_base",
        lazy: OnceLock::new(),
    }
}

/// cl100k_base's splitter: built here, as a lazy DFA.
pub(crate) fn cl100k() -> Splitter {
    Splitter {
        embedded: None,
        encoding: "cl100k_base",
        lazy: OnceLock::new(),
    }
}

impl Splitter {
    fn lazy(&self) -> &Lazy {
        self.lazy.get_or_init(|| {
            // The patterns are constants, and the unit tests build both encodings' splitters
            // both ways, so none of these can fail for a user.
            let nfa = NFA::compiler()
                .configure(
                    thompson::Config::new().which_captures(thompson::WhichCaptures::Implicit),
                )
                .build_many(&splitter_patterns(self.encoding))
                .expect("pre-tokenizer patterns compile");
            let dfa = DFA::builder()
                .configure(DFA::config().match_kind(MatchKind::LeftmostFirst))
                .build_from_nfa(nfa.clone())
                .expect("pre-tokenizer patterns make a lazy DFA");
            let pike =
                pikevm::PikeVM::new_from_nfa(nfa).expect("pre-tokenizer patterns make a PikeVM");
            Lazy { dfa, pike }
        })
    }

    /// Whether the patterns are searched by the DFA compiled at build time.
    #[cfg(test)]
    pub(crate) fn is_embedded(&self) -> bool {
        self.embedded.is_some()
    }

    /// Whether the patterns were compiled here (the tests look).
    #[cfg(test)]
    pub(crate) fn built_lazily(&self) -> bool {
        self.lazy.get().is_some()
    }

    /// The pattern and the end of the leftmost-first match of an anchored `input`.
    pub(crate) fn find(&self, cache: &mut SplitCache, input: &Input<'_>) -> Option<(usize, usize)> {
        if let Some(dfa) = &self.embedded
            && cache.sparse_searches < SPARSE_SEARCHES
            && let Ok(found) = dfa.try_search_fwd(input)
        {
            cache.sparse_searches += 1;
            return found.map(|m| (m.pattern().as_usize(), m.offset()));
        }
        self.find_lazily(cache, input)
    }

    /// [`Self::find`] by the patterns compiled here.
    pub(crate) fn find_lazily(
        &self,
        cache: &mut SplitCache,
        input: &Input<'_>,
    ) -> Option<(usize, usize)> {
        let lazy = self.lazy();
        let (dfa_cache, pike_cache) = cache
            .lazy
            .get_or_insert_with(|| (lazy.dfa.create_cache(), None));
        match lazy.dfa.try_search_fwd(dfa_cache, input) {
            Ok(found) => found.map(|m| (m.pattern().as_usize(), m.offset())),
            Err(_) => {
                let pike = pike_cache.get_or_insert_with(|| lazy.pike.create_cache());
                lazy.pike
                    .find(pike, input.clone())
                    .map(|m| (m.pattern().as_usize(), m.end()))
            }
        }
    }
}
