//! libFuzzer's entry to [`pare_fuzz::json_incremental`] (what it checks, and why, is there).
//! Run by `scripts/fuzz json_incremental`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pare_fuzz::json_incremental::check(data));
