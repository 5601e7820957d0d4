//! Counts of several texts on several threads, each text counted in parts as soon as it is
//! written: helpers take the oldest parts, and a thread that asks for a count counts that
//! text's own parts, then the newest of the rest, rather than wait.
//!
//! Why: `pare compact --report` counts four texts (the input as given, minified, after
//! each op prefix, as printed) that become ready one after another while the output is
//! written. With a fixed thread per count, the longest count (the input as given) set the
//! time, and a thread that started late (on this project's 2-core VM, 0.1–2.7 ms after it
//! was asked for when both cores were busy) held up the whole report. Cut into parts whose
//! counts add up ([`Tokenizer::additive_parts`]), the work is shared out as it comes,
//! whichever thread is free taking the next part (two helpers against one: 0.89× the
//! time of the corpus file's report).
//!
//! ```
//! use pare::tokens::{builtin, pool::CountPool};
//! let tok = builtin("o200k_base").unwrap();
//! let pool = CountPool::new(tok);
//! let input = "{\"a\": [1, 2, 3]}";
//! std::thread::scope(|scope| {
//!     // No helpers for an input this short (HELP_FROM_BYTES); the asking thread counts.
//!     let _helping = pool.helpers(scope, input.len());
//!     let a = pool.add(input);
//!     let b = pool.add(String::from("hello world"));
//!     assert_eq!(pool.count(b), tok.count("hello world"));
//!     assert_eq!(pool.count(a), tok.count(input));
//! });
//! ```

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use super::Tokenizer;

/// Texts are cut into parts of at least this many bytes: a part costs a lock and a
/// count's setup, and enough parts keep both threads busy to the end.
const PART_BYTES: usize = 24 << 10;

/// A job whose input is shorter than this is counted on the asking thread alone.
///
/// Why: two helpers cost their start and their join whether they count or not, about
/// 0.3 ms of wall time a `pare compact --report` run on this project's 2-core VM (a
/// report whose counts were all skipped: 3.08 against 2.69 ms without helpers, 60 runs
/// alternated). Below about 40 KB of pretty JSON that is more than sharing the counts
/// saves: without helpers a report of 6.5 KB took 0.89x the time with them, 21–26 KB
/// 0.92–0.94x; 43 KB 1.02x, 51 KB 1.00x, 65 KB 1.05x, 117 KB 1.14x.
pub const HELP_FROM_BYTES: usize = 32 << 10;

/// Texts to count and the counts so far, shared by the asking thread and the helpers.
pub struct CountPool<'t> {
    tok: &'t dyn Tokenizer,
    state: Mutex<State<'t>>,
    /// A part was counted, a text added, or the pool closed.
    changed: Condvar,
}

/// A text added to a [`CountPool`], to ask for its count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket(usize);

/// A text to count: borrowed when it outlives the pool (the input as given), else moved in
/// and shared by the parts it is cut into.
///
/// Why: every text went in as an `Arc<str>`, a copy; at 8 MB a report's texts are 21 MB,
/// each copy a fresh allocation the kernel faults in page by page.
#[derive(Clone)]
pub enum PoolText<'t> {
    /// A text that outlives the pool.
    Borrowed(&'t str),
    /// A text the pool and its caller share.
    Owned(Arc<String>),
}

impl std::ops::Deref for PoolText<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        match self {
            PoolText::Borrowed(text) => text,
            PoolText::Owned(text) => text,
        }
    }
}

impl<'t> From<&'t str> for PoolText<'t> {
    fn from(text: &'t str) -> Self {
        PoolText::Borrowed(text)
    }
}

impl From<String> for PoolText<'_> {
    fn from(text: String) -> Self {
        PoolText::Owned(Arc::new(text))
    }
}

impl From<Arc<String>> for PoolText<'_> {
    fn from(text: Arc<String>) -> Self {
        PoolText::Owned(text)
    }
}

#[derive(Default)]
struct State<'t> {
    parts: VecDeque<Part<'t>>,
    tallies: Vec<Tally>,
    /// Each text added, by its ticket: a text added again is counted once.
    texts: Vec<PoolText<'t>>,
    closed: bool,
}

struct Part<'t> {
    ticket: usize,
    text: PoolText<'t>,
    range: Range<usize>,
}

/// One text's tokens so far and how many of its parts are not counted yet.
struct Tally {
    tokens: usize,
    left: usize,
}

impl<'t> CountPool<'t> {
    /// An empty pool counting by `tok`.
    pub fn new(tok: &'t dyn Tokenizer) -> CountPool<'t> {
        CountPool {
            tok,
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        }
    }

    /// Start the helpers on `scope` for a job whose input is `input_bytes` long (two where
    /// there is a second core and the input is [`HELP_FROM_BYTES`] or longer, else none):
    /// the first brings in the encoding's tables, then both count parts until the pool is
    /// closed. The pool closes when the returned guard is dropped (also when an error leaves
    /// the scope early), so the scope never waits on a helper that waits for work.
    ///
    /// Why two on two cores: a thread started while both cores were busy began 0.1 to
    /// 2.7 ms later on this project's 2-core VM, and with one helper the asking thread
    /// often counted nearly everything itself; with two, one of them starts soon
    /// (`pare compact --report` on the 117 KB corpus file: 0.89x the time with one).
    pub fn helpers<'scope, 'env>(
        &'env self,
        scope: &'scope std::thread::Scope<'scope, 'env>,
        input_bytes: usize,
    ) -> Closing<'env, 't> {
        let mut started = 0;
        if input_bytes >= HELP_FROM_BYTES && crate::has_second_core() {
            scope.spawn(|| {
                self.tok.warm_up();
                self.help();
            });
            scope.spawn(|| self.help());
            started = 2;
        }
        Closing {
            pool: self,
            helpers: started,
        }
    }

    /// Count parts until the pool is closed and none is left.
    fn help(&self) {
        let mut state = self.lock();
        loop {
            if let Some(part) = state.parts.pop_front() {
                drop(state);
                self.run(part);
                state = self.lock();
            } else if state.closed {
                return;
            } else {
                state = self.wait(state);
            }
        }
    }

    /// Add `text`, cut into parts; its count is [`CountPool::count`] of the ticket. A text
    /// equal to one added before gets that one's ticket, and is not counted again: a
    /// minified input given minified, an op that removed nothing.
    pub fn add(&self, text: impl Into<PoolText<'t>>) -> Ticket {
        let text = text.into();
        if let Some(seen) = self.lock().texts.iter().position(|t| **t == *text) {
            return Ticket(seen);
        }
        let ranges: Vec<Range<usize>> = self
            .tok
            .additive_parts(&text, PART_BYTES)
            .into_iter()
            .map(|part| {
                let start = part.as_ptr() as usize - text.as_ptr() as usize;
                start..start + part.len()
            })
            .collect();
        let mut state = self.lock();
        let ticket = state.tallies.len();
        state.texts.push(text.clone());
        state.tallies.push(Tally {
            tokens: 0,
            left: ranges.len(),
        });
        state.parts.extend(ranges.into_iter().map(|range| Part {
            ticket,
            text: text.clone(),
            range,
        }));
        drop(state);
        self.changed.notify_all();
        Ticket(ticket)
    }

    /// The tokens of the text of `ticket`: parts are counted on this thread (the oldest
    /// first) until all of that text's are, then the sum.
    pub fn count(&self, ticket: Ticket) -> usize {
        let mut state = self.lock();
        loop {
            let tally = &state.tallies[ticket.0];
            if tally.left == 0 {
                return tally.tokens;
            }
            // Its own parts first, then the newest of the rest: the helper takes the oldest.
            let own = state.parts.iter().rposition(|p| p.ticket == ticket.0);
            let next = match own {
                Some(i) => state.parts.remove(i),
                None => state.parts.pop_back(),
            };
            if let Some(part) = next {
                drop(state);
                self.run(part);
                state = self.lock();
            } else {
                // The helper has the last of its parts.
                state = self.wait(state);
            }
        }
    }

    fn run(&self, part: Part<'t>) {
        let tokens = self.tok.count_once(&part.text[part.range]);
        let mut state = self.lock();
        let tally = &mut state.tallies[part.ticket];
        tally.tokens += tokens;
        tally.left -= 1;
        drop(state);
        self.changed.notify_all();
    }

    fn lock(&self) -> MutexGuard<'_, State<'t>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait<'a>(&self, state: MutexGuard<'a, State<'t>>) -> MutexGuard<'a, State<'t>> {
        self.changed
            .wait(state)
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn close(&self) {
        self.lock().closed = true;
        self.changed.notify_all();
    }
}

/// Closes its [`CountPool`] when dropped: the helpers then count what is left and stop.
pub struct Closing<'p, 't> {
    pool: &'p CountPool<'t>,
    helpers: usize,
}

impl Closing<'_, '_> {
    /// How many helpers [`CountPool::helpers`] started.
    pub fn helpers(&self) -> usize {
        self.helpers
    }
}

impl Drop for Closing<'_, '_> {
    fn drop(&mut self) {
        self.pool.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::builtin;

    fn texts() -> Vec<String> {
        let item = |i: usize| {
            format!(
                "{{\n  \"id\": \"e-{i}\",\n  \"name\": \"Entity {i} don't\",\n  \"n\": {i}.5\n}}"
            )
        };
        let pretty = format!(
            "[\n{}\n]",
            (0..3000).map(item).collect::<Vec<_>>().join(",\n")
        );
        let minified = pretty.replace(['\n', ' '], "");
        vec![
            pretty,
            minified,
            "short".into(),
            String::new(),
            "é\u{FEFF}x".repeat(20_000),
        ]
    }

    #[test]
    fn counts_in_parts_on_two_threads_are_the_whole_counts() {
        for name in ["o200k_base", "cl100k_base", "chars4"] {
            let tok = builtin(name).unwrap();
            let texts = texts();
            let pool = CountPool::new(tok);
            let counts: Vec<usize> = std::thread::scope(|scope| {
                let _closing = pool.helpers(scope, HELP_FROM_BYTES);
                let tickets: Vec<Ticket> = texts.iter().map(|t| pool.add(t.as_str())).collect();
                tickets.iter().rev().map(|&t| pool.count(t)).collect()
            });
            let whole: Vec<usize> = texts.iter().rev().map(|t| tok.count_once(t)).collect();
            assert_eq!(counts, whole, "{name}");
        }
        // Not vacuous: the long texts were cut.
        let tok = builtin("o200k_base").unwrap();
        assert!(tok.additive_parts(&texts()[0], PART_BYTES).len() > 3);
    }

    #[test]
    fn a_text_added_again_is_counted_once() {
        let tok = builtin("o200k_base").unwrap();
        let pool = CountPool::new(tok);
        let text = texts().swap_remove(1);
        let first = pool.add(text.as_str());
        let other = pool.add("something else");
        let again = pool.add(text.clone());
        assert_eq!((again, pool.count(again)), (first, tok.count_once(&text)));
        assert_ne!(other, first);
        assert_eq!(pool.count(other), tok.count_once("something else"));
    }

    #[test]
    fn a_scope_left_early_does_not_wait_for_its_helper() {
        let tok = builtin("o200k_base").unwrap();
        let pool = CountPool::new(tok);
        let early: Result<(), &str> = std::thread::scope(|scope| {
            let _closing = pool.helpers(scope, HELP_FROM_BYTES);
            pool.add("counted by the helper");
            Err("an error before any count was asked for")?;
            Ok(())
        });
        assert!(early.is_err());
    }

    #[test]
    fn a_short_input_is_counted_without_helpers() {
        let tok = builtin("o200k_base").unwrap();
        let pool = CountPool::new(tok);
        let text = "{\"a\": [1, 2, 3]}";
        let (helped, count) = std::thread::scope(|scope| {
            let closing = pool.helpers(scope, HELP_FROM_BYTES - 1);
            let ticket = pool.add(text);
            (closing.helpers(), pool.count(ticket))
        });
        assert_eq!((helped, count), (0, tok.count_once(text)));
        let pool = CountPool::new(tok);
        let long = std::thread::scope(|scope| pool.helpers(scope, HELP_FROM_BYTES).helpers());
        assert_eq!(long, if crate::has_second_core() { 2 } else { 0 });
    }
}
