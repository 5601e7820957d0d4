//! libFuzzer's entry to [`pare_fuzz::expr_parse`] (what it checks, and why, is there).
//! Run by `scripts/fuzz expr_parse`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pare_fuzz::expr_parse::check(data));
