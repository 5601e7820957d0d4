//! libFuzzer's entry to [`pare_fuzz::toon_expand`] (what it checks, and why, is there).
//! Run by `scripts/fuzz toon_expand`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pare_fuzz::toon_expand::check(data));
