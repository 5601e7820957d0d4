//! PyO3's cfgs for this crate's own code: `src/capi.rs` reads CPython's structs only where
//! the build is for one CPython version (not `Py_LIMITED_API`, the `abi3` feature).
fn main() {
    pyo3_build_config::use_pyo3_cfgs();
}
