//! The checks behind the fuzz targets, one module per target: each `check` takes one input
//! and returns, or panics on a fault. The targets (`fuzz_targets/`) call them under
//! libFuzzer; `tests/regressions.rs` replays every saved input in `regressions/TARGET/`
//! through them on stable, so a crash once found stays a test (docs/fuzzing.md).

pub mod expr_parse;
pub mod json_incremental;
pub mod json_parse;
pub mod json_stream;
pub mod jsonl;
pub mod policy_parse;
pub mod py_repr_parse;
pub mod selector_parse;
pub mod toon_expand;
