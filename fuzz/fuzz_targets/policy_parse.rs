//! libFuzzer's entry to [`pare_fuzz::policy_parse`] (what it checks, and why, is there).
//! Run by `scripts/fuzz policy_parse`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pare_fuzz::policy_parse::check(data));
