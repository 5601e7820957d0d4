//! libFuzzer's entry to [`pare_fuzz::json_stream`] (what it checks, and why, is there).
//! Run by `scripts/fuzz json_stream`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pare_fuzz::json_stream::check(data));
