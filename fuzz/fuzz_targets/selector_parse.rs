//! libFuzzer's entry to [`pare_fuzz::selector_parse`] (what it checks, and why, is there).
//! Run by `scripts/fuzz selector_parse`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pare_fuzz::selector_parse::check(data));
