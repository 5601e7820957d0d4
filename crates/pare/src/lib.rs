//! pare: make structured tool and API responses cheap for language models to read,
//! without losing what they need.
//!
//! The engine is a staged pipeline: parse the JSON ([`json`]) → compile a policy
//! ([`policy`]) → run its ops over the value in one walk ([`shape`], [`ops`]) → render
//! ([`encode`]) → count tokens ([`tokens`]) and report ([`report`], [`manifest`]).
//! [`stats`] profiles where a payload's tokens go. No I/O happens here; the CLI and the
//! proxies are thin doors over it.

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
