//! pare for Python: the engine in-process, as the extension module `pare._pare` that the
//! `pare` package (`python/pare/`) re-exports and builds on (its MCP and ASGI
//! integrations).
//!
//! A thin door, like the CLI and the proxies: it converts Python objects to the engine's
//! values (`convert`), maps the engine's errors onto Python exceptions (`errors`), and
//! calls the one entry point every door calls (`pare::respond()`, `policy`) or
//! the engine function the matching `pare` command calls (`functions`). The GIL is
//! released while the engine works; the tokenizer tables are built once per process, on
//! first use.

mod capi;
mod convert;
mod dump;
mod errors;
mod functions;
mod mcp;
mod policy;
mod rest;
mod shaped;
mod split;

use pyo3::prelude::*;

#[pymodule]
fn _pare(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<policy::PyPolicy>()?;
    m.add_class::<shaped::Shaped>()?;
    m.add_class::<functions::Packed>()?;
    m.add_class::<mcp::McpSession>()?;
    m.add_class::<rest::Rest>()?;
    m.add_class::<rest::RestCall>()?;
    m.add_function(wrap_pyfunction!(rest::is_pare_header_name, m)?)?;
    m.add_function(wrap_pyfunction!(rest::link_without_next, m)?)?;
    m.add_function(wrap_pyfunction!(policy::_restore_policy, m)?)?;
    m.add_function(wrap_pyfunction!(functions::count_tokens, m)?)?;
    m.add_function(wrap_pyfunction!(functions::dumps, m)?)?;
    m.add_function(wrap_pyfunction!(functions::_helper_parts, m)?)?;
    m.add_function(wrap_pyfunction!(functions::_helper_mode, m)?)?;
    m.add_function(wrap_pyfunction!(functions::_pace, m)?)?;
    // The converter's helper thread is kept between conversions (`split`); it ends before
    // a fork, so the child and the parent start their own and the parent forks with no
    // thread of ours (CPython 3.12+ warns on a fork with threads).
    let before_fork = wrap_pyfunction!(functions::_end_helper_thread, m)?;
    let os = m.py().import("os")?;
    if os.hasattr("register_at_fork")? {
        let kwargs = pyo3::types::PyDict::new(m.py());
        kwargs.set_item("before", &before_fork)?;
        os.getattr("register_at_fork")?.call((), Some(&kwargs))?;
    }
    m.add_function(before_fork)?;
    m.add_function(wrap_pyfunction!(functions::_omitted_as_written, m)?)?;
    m.add_function(wrap_pyfunction!(functions::_written_in_place, m)?)?;
    m.add_function(wrap_pyfunction!(functions::encode, m)?)?;
    m.add_function(wrap_pyfunction!(functions::expand, m)?)?;
    m.add_function(wrap_pyfunction!(functions::pack, m)?)?;
    m.add_function(wrap_pyfunction!(functions::stats, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The handler's headers a shaped body does not keep (the engine's list, shared with
    // `pare http` and the Node package).
    m.add(
        "NOT_OF_THE_SHAPED_BODY",
        pyo3::types::PyTuple::new(m.py(), pare::rest::response::NOT_OF_THE_SHAPED_BODY)?,
    )?;
    // The portable build (one wheel for CPython 3.10+) reads objects through the stable
    // ABI's calls and converts on one thread; the tests of the two-thread path skip there.
    m.add("__abi3__", cfg!(Py_LIMITED_API))?;
    // Benchmarks refuse a debug build (`maturin develop`, scripts/test's dev profile).
    m.add(
        "__build__",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
    )?;
    Ok(())
}
