//! pare: make structured tool and API responses cheap for language models to read,
//! without losing what they need.
//!
//! The engine is a staged pipeline, and [`respond()`] is its one entry point for every door
//! (the CLI, the MCP proxy, the later ones):
//!
//! ```text
//! input ─▶ policy (schema → compile) ─▶ shape (ops in one walk) ─▶ render ─▶ count
//!       ─▶ fit / page (budget, cursor) ─▶ page text + record
//! ```
//!
//! 1. **input**: [`json`] parses the response into a [`Value`] that keeps number lexemes and
//!    key order, so what no op touches comes back byte for byte; [`embedded`] reads a value
//!    out of text that is almost JSON (a caption, a trailer, a Python repr);
//! 2. **policy**: [`schema`] is the policy file as written (serde structs, the JSON Schema);
//!    [`policy`] validates and compiles it into a [`Policy`], each op compiling its own
//!    options through [`ops::compile`];
//! 3. **shape**: [`mod@shape`] runs the policy's [`ops`] over the value in one walk, steered by
//!    the [`query`] selectors they compiled;
//! 4. **render**: [`encode`] writes JSON, TOON or the cheapest lossless text;
//! 5. **count**: [`tokens`] counts with a real tokenizer;
//! 6. **fit / page**: [`mod@respond`] lowers a level the caller did not name until the result
//!    fits the budget, pages what still does not (every page decodes alone; the pages merge
//!    back), names the next page with a cursor, and returns the page with its record;
//! 7. **report**: [`report`] gives tokens before and after and what each op saved,
//!    [`manifest`] what was removed.
//!
//! A door plugs in at [`respond()`]: it maps its protocol onto a [`Request`] and the
//! [`Record`] onto its output. What doors use is named at the root (`pare::respond`,
//! `pare::Policy`, `pare::ShapeOptions`, `pare::render`, …); the modules below hold the
//! rest, and what only the engine uses is private to it.
//!
//! Beside the pipeline, [`pack`] packs search results under a token budget, [`stats`]
//! profiles where a payload's tokens go, [`jsonl`] shapes a block of JSONL lines; [`mcp`] maps MCP tool calls onto the pipeline for
//! every MCP door and [`rest`] REST responses for every REST door.
//!
//! Modules depend one way, each only on the ones before it: [`value`], `timestamp`,
//! `rank_table`, [`cursor`], [`scan`], [`manifest`], `params`, [`tokens`] → [`query`] →
//! [`json`] → [`embedded`] → [`encode`] → [`ops`] → [`schema`] → [`policy`] → [`mod@shape`] →
//! [`jsonl`], `early` → [`report`], [`pack`], [`stats`] → [`mod@respond`] → [`mcp`], [`rest`]. A test
//! keeps the order (`layering.rs`), with no exception: the JSON stream runs the list ops it
//! can do while reading through hooks it owns ([`json`]'s `ListHooks`, implemented in
//! [`ops`]). No I/O happens here but reading a
//! policy file ([`policy::Policy::load`]); the CLI, the proxies and the Python package are
//! thin doors over it.

#![warn(unreachable_pub, missing_docs)]

pub mod cursor;
pub(crate) mod early;
pub mod embedded;
pub mod encode;
pub mod json;
pub mod jsonl;
pub mod manifest;
pub mod mcp;
pub mod ops;
pub mod pack;
pub(crate) mod params;
pub mod policy;
pub mod project;
pub mod query;
pub(crate) mod rank_table;
pub mod relevance;
pub mod report;
pub mod respond;
pub mod rest;
pub mod scan;
pub mod schema;
pub mod shape;
pub mod stats;
pub(crate) mod timestamp;
pub mod tokens;
pub mod value;

#[cfg(test)]
mod layering;

// The facade: what a door needs, named at the root. The modules stay public for what one
// door alone uses (the MCP mapping, REST routes, packing, stats, the TOON codec).
pub use early::shape_text;
pub use encode::{Format, Reader, expand_from, render};
pub use json::{JsonError, parse, to_compact, to_pretty};
pub use ops::compile::{ErrorDetails, InvalidKind, PolicyError};
pub use policy::{LoadError, Policy};
pub use respond::{
    Budget, Hint, Input, Page, PageKind, Record, Request, RespondError, Response, respond,
};
pub use shape::{ShapeOptions, Shaped, shape};
pub use tokens::Tokenizer;
pub use value::{Map, Number, Value};

/// Whether a second core can run a helper thread: the parse, the TOON writer (and the CLI's
/// file read) split large inputs in two only then. Asked once per process.
pub fn has_second_core() -> bool {
    static SECOND: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SECOND.get_or_init(|| std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2))
}

/// Both `a` and `b`: side by side (rayon) when `parallel`, the work being large enough to
/// pay for it, else one after the other.
pub(crate) fn join<A: Send, B: Send>(
    parallel: bool,
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    if parallel {
        rayon::join(a, b)
    } else {
        (a(), b())
    }
}
