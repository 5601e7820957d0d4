//! The `pare` binary's integration tests: one binary (as ripgrep's `tests/tests.rs`), each
//! file a module, so a change links one test executable here, not one per file. Run one
//! file's tests with `cargo test -p pare-llm --test integration <file>::`.

// Shared with the engine's tests.
#[path = "../../pare/tests/common/corpus.rs"]
mod corpus;
#[path = "../../pare/tests/common/needs.rs"]
mod needs;

mod mcp_support;
mod net_support;
mod reference;
mod rest_support;
mod run_support;

mod cli;
mod count_vs_reference;
mod encode_expand;
mod fields_doors;
mod http_faults;
mod http_proxy;
mod http_streamed;
mod http_tls;
mod huge_pages;
mod mcp_faults;
mod mcp_http;
mod mcp_listen;
mod mcp_orphans;
mod mcp_peers;
mod mcp_real;
mod mcp_structured;
mod mcp_tools;
mod mcp_transport;
mod pack_source;
mod pages_doors;
mod stats_vs_reference;
