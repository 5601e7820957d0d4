//! libFuzzer's entry to [`pare_fuzz::jsonl`] (what it checks, and why, is there).
//! Run by `scripts/fuzz jsonl`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pare_fuzz::jsonl::check(data));
