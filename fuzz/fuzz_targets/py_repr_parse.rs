//! libFuzzer's entry to [`pare_fuzz::py_repr_parse`] (what it checks, and why, is there).
//! Run by `scripts/fuzz py_repr_parse`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pare_fuzz::py_repr_parse::check(data));
