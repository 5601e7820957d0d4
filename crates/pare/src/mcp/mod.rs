//! MCP tool calls through pare, written once for every MCP door (`pare mcp`, the proxy in
//! `crates/pare-mcp`, and the Python package's in-process server integration): what the
//! tool list gains, what a call's arguments lose, how a result is shaped, and how
//! `pare_more` is answered. No I/O: a door moves the messages and calls these.
//!
//! - [`config`]: the `[mcp]` section resolved per tool ([`config::ToolPolicy`]);
//! - [`tools_list`]: `tools/list` rewritten (the `detail` argument only where levels
//!   differ, caller parameters, `pare_more` once needed, [`tools_compact`]);
//! - [`call`]: a call's added arguments taken out and checked; `pare_more` answered;
//! - [`result`]: a result through the response pipeline ([`mod@crate::respond`]) and back:
//!   pages to the [`store`], the server's text to the [`originals`] when shown in part;
//! - [`verbatim`]: file text stays byte for byte;
//! - [`session`]: all of it behind one value, for a door that holds one lock.

pub mod call;
pub mod config;
pub mod originals;
pub mod result;
pub mod session;
pub mod store;
pub mod structured;
pub mod tools_compact;
pub mod tools_list;
pub mod verbatim;
