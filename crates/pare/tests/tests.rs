//! The engine's integration tests: one binary (as ripgrep's `tests/tests.rs`), each file a
//! module, so a change to the engine links one test executable here, not one per file.
//! Run one file's tests with `cargo test -p pare-engine --test integration <file>::`.

mod common;

mod auto_roundtrip;
mod early;
mod embedded;
mod fields;
mod fixtures;
mod incremental;
mod json_roundtrip;
mod lossless;
mod outline;
mod pack;
mod pack_pages;
mod pack_query;
mod pack_source;
mod pages;
mod properties;
mod report_streamed;
mod schema;
mod tokens_vs_reference;
mod toon_decode_spec;
mod toon_encode;
mod truth;
