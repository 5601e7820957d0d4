//! The `[mcp]` section of a policy file: how `pare mcp` shapes each tool's results.
//!
//! Only options live here (serde structs for the file and its JSON Schema); the proxy
//! itself is the `pare-mcp` crate. The file's own ops and levels are the policy for every
//! tool no `[[mcp.tools]]` entry names.
//!
//! ```toml
//! [mcp]
//! format = "auto"
//!
//! [[mcp.tools]]
//! match = ["read_graph", "search_*"]
//! policy = "entities.toml"   # relative to this file; default: this file's own ops
//! level = "minimal"
//!
//! [[mcp.tools]]
//! match = ["get_secret_*"]
//! shape = false              # passed through untouched, no `detail` argument
//! ```

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How `pare mcp` shapes tool results.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpOptions {
    /// The text format of shaped results. Default: `auto` (the cheapest lossless text).
    #[serde(default)]
    pub format: McpFormat,
    /// Shape tools that no `[[mcp.tools]]` entry matches, with this file's own ops.
    /// Default: true.
    #[serde(default = "yes")]
    pub shape_unmatched: bool,
    /// How `tools/list` reaches the client. Default: `server` (the server's definitions,
    /// minus what no client or model uses).
    #[serde(default)]
    pub tool_list: ToolList,
    /// What becomes of a result's `structuredContent`. Default: `fit` (within the budget,
    /// sent once; the tool list then declares no `outputSchema` for shaped tools).
    #[serde(default)]
    pub structured_content: StructuredContent,
    /// Add a `fields` argument to every shaped tool (one without a `fields` argument of its
    /// own): a caller names the fields of the result it wants, and only those are shown
    /// (`pare::project`). Default: false (it adds 47 o200k tokens to each tool's definition).
    #[serde(default)]
    pub fields: bool,
    /// Per-tool settings; the first entry whose `match` names a tool wins.
    #[serde(default)]
    pub tools: Vec<McpTool>,
}

/// How `pare mcp` passes on the server's tool definitions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ToolList {
    /// The server's definitions as written, minus what neither a client nor a model uses
    /// (such as a `$schema` URL on every input schema).
    #[default]
    Server,
    /// Descriptions and input schemas rewritten compactly; every tool stays callable with
    /// the same arguments.
    Compact,
}

impl Default for McpOptions {
    fn default() -> Self {
        McpOptions {
            format: McpFormat::default(),
            shape_unmatched: true,
            tool_list: ToolList::default(),
            structured_content: StructuredContent::default(),
            fields: false,
            tools: Vec::new(),
        }
    }
}

fn yes() -> bool {
    true
}

/// Settings for the tools whose names match.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpTool {
    /// Tool names; `*` matches any run of characters, `?` one character.
    #[serde(rename = "match")]
    pub names: Vec<String>,
    /// Another policy file for these tools, relative to this file. Default: this file's ops.
    #[serde(default)]
    pub policy: Option<String>,
    /// The text format for these tools. Default: `[mcp] format`.
    #[serde(default)]
    pub format: Option<McpFormat>,
    /// The level used when a call names none. Default: the policy's default level.
    #[serde(default)]
    pub level: Option<String>,
    /// Shape these tools at all. `false` passes their results through untouched and adds
    /// no `detail` argument. Default: true.
    #[serde(default = "yes")]
    pub shape: bool,
    /// Pass the result's text byte for byte, never re-encoded (over the budget, paged at
    /// line ends): for tools that return a file's contents, which a model edits by quoting
    /// what it read. Default: pare decides (`pare::mcp::verbatim`: a read word such as `read`,
    /// `get`, `cat`, `view` in the name, with `file`/`files`/`contents` in it or a `path`
    /// argument).
    #[serde(default)]
    pub verbatim: Option<bool>,
    /// Policy parameters callers may set per call: each becomes an optional argument of
    /// the tool, typed from the parameter's default (taken out before the call is
    /// forwarded, like `detail`). Each must be in the tool's policy `[params]`. Default: none.
    #[serde(default)]
    pub params: Vec<String>,
    /// What becomes of these tools' `structuredContent`. Default: `[mcp] structured_content`.
    #[serde(default)]
    pub structured_content: Option<StructuredContent>,
    /// The tool's own argument that holds the caller's question (say `query`): a `[pack]`
    /// policy ranks the results by their relevance to it, blended with their score. The
    /// argument stays the tool's and is forwarded unchanged. Default: none.
    #[serde(default)]
    pub query: Option<String>,
    /// Add a `fields` argument to these tools (see `[mcp] fields`). Default: `[mcp] fields`.
    #[serde(default)]
    pub fields: Option<bool>,
}

/// What a shaped tool's `structuredContent` becomes. Clients increasingly show it to the
/// model beside (or instead of) the text, so the budget covers it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StructuredContent {
    /// Within the budget, sent once: when it is the value the text carries (the SDKs' dual
    /// emit) it is dropped and the text, shaped, carries it; any other is kept when the
    /// whole reply fits, else moved into the text (a list of the items' values and it) and
    /// paged with it. Because pare may drop it, `tools/list` declares no `outputSchema` for
    /// the tool, so no client expects it.
    #[default]
    Fit,
    /// Passed unchanged and declared as the server declares it: counted in `_meta.pare`,
    /// the text shaped under the budget less its cost, and a note line when it alone is
    /// over the budget.
    Keep,
}

/// An output format of shaped tool results.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum McpFormat {
    /// Minified JSON.
    Json,
    /// JSON indented by two spaces.
    Pretty,
    /// TOON v4.
    Toon,
    /// The cheapest lossless text by token count.
    #[default]
    Auto,
}

impl McpFormat {
    /// The engine's format.
    pub fn format(self) -> crate::encode::Format {
        use crate::encode::Format;
        match self {
            McpFormat::Json => Format::Json,
            McpFormat::Pretty => Format::Pretty,
            McpFormat::Toon => Format::Toon,
            McpFormat::Auto => Format::Auto,
        }
    }
}

/// Whether `name` matches a glob of `*` (any run) and `?` (one character).
///
/// ```text
/// glob_match("search_*", "search_nodes")  true
/// glob_match("*graph", "read_graph")      true
/// glob_match("read_?", "read_graph")      false
/// ```
pub(crate) fn glob_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // Classic two-pointer wildcard match with backtracking to the last `*`.
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        if i < p.len() && (p[i] == '?' || p[i] == n[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("search_*", "search_nodes"));
        assert!(glob_match("*graph", "read_graph"));
        assert!(!glob_match("read_?", "read_graph"));
        assert!(glob_match("*", ""));
        assert!(glob_match("a*b*c", "axxbyyc"));
        assert!(!glob_match("a*b*c", "axxbyy"));
        assert!(glob_match("exact", "exact"));
        assert!(!glob_match("exact", "exactly"));
        assert!(glob_match("get-?um", "get-sum"));
    }

    #[test]
    fn mcp_section_parses_with_defaults_and_rejects_typos() {
        let p = crate::Policy::parse("[mcp]\n[[mcp.tools]]\nmatch = [\"a\"]\n").unwrap();
        let mcp = p.options().mcp.as_ref().unwrap();
        assert_eq!(mcp.format, McpFormat::Auto);
        assert!(mcp.shape_unmatched);
        assert!(mcp.tools[0].shape);
        let err = crate::Policy::parse("[mcp]\nformats = \"json\"\n").unwrap_err();
        assert!(err.to_string().contains("mcp"), "{err}");
        let err = crate::Policy::parse("[mcp]\nformat = \"yaml\"\n").unwrap_err();
        assert!(err.to_string().contains("yaml"), "{err}");
    }
}
