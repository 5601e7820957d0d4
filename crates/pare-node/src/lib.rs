//! pare for Node and TypeScript: the engine in-process, as the Node-API addon `pare.node`
//! that the `pare-llm` package (`index.js`) loads and builds on (its MCP SDK and Express
//! integrations).
//!
//! A thin door, like the CLI, the proxies and the Python package: it converts JavaScript
//! values to the engine's values (`convert`), hands the engine's errors to the package as
//! typed errors (`errors`), and calls the one entry point every door calls
//! (`pare::respond()`, `policy`) or the engine function the matching `pare` command calls
//! (`functions`). Node-API, so one build serves every Node >= 18 and Bun.

// napi-rs registers the exports only outside `cfg(test)`; clippy's test build of this
// library (`--all-targets`) would call every export unused.
#![cfg_attr(test, allow(dead_code))]

mod convert;
mod errors;
mod functions;
mod mcp;
mod policy;
mod rest;

use napi_derive::napi;

/// The package's version (the workspace's).
#[napi]
pub fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// `debug` or `release`: benchmarks refuse a debug build.
#[napi]
pub fn build_profile() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
}
