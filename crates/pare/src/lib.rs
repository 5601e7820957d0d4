//! pare: make structured tool and API responses cheap for language models to read,
//! without losing what they need.
//!
//! The engine is a staged pipeline:
//!
//! ```text
//! input ─▶ policy (schema → compile) ─▶ shape (ops in one walk) ─▶ render ─▶ count ─▶ report
//! ```
//!
//! 1. **input**: [`json`] parses the response into a [`Value`] that keeps number lexemes and
//!    key order, so what no op touches comes back byte for byte;
//! 2. **policy**: [`schema`] is the policy file as written (serde structs, the JSON Schema);
//!    [`policy`] validates and compiles it into a [`Policy`], each op compiling its own
//!    options through [`ops::compile`];
//! 3. **shape**: [`shape`] runs the policy's [`ops`] over the value in one walk, steered by
//!    the [`query`] selectors they compiled;
//! 4. **render**: [`encode`] writes JSON, TOON or the cheapest lossless text;
//! 5. **count**: [`tokens`] counts with a real tokenizer;
//! 6. **report**: [`report`] gives tokens before and after and what each op saved,
//!    [`manifest`] what was removed.
//!
//! A `respond` module is coming from another change: the one entry point every door calls
//! (fit to a budget, page, cursor, response record).
//!
//! Beside the pipeline, [`pack`] packs search results under a token budget and [`stats`]
//! profiles where a payload's tokens go. Modules depend one way, each on the ones before it:
//! [`value`] → [`json`], [`query`], [`params`], [`tokens`], [`manifest`] → [`encode`] →
//! [`ops`] → [`schema`] → [`policy`] → [`shape`] → [`report`]. No I/O happens here; the CLI
//! and the proxies are thin doors over it.

pub mod encode;
pub mod json;
pub mod manifest;
pub mod ops;
pub mod pack;
pub mod params;
pub mod policy;
pub mod query;
pub mod report;
pub mod schema;
pub mod shape;
pub mod stats;
pub mod tokens;
pub mod value;

pub use policy::Policy;
pub use value::{Map, Number, Value};

/// Whether a second core can run a helper thread: the parse, the TOON writer (and the CLI's
/// file read) split large inputs in two only then. Asked once per process.
pub fn has_second_core() -> bool {
    static SECOND: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SECOND.get_or_init(|| std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2))
}
