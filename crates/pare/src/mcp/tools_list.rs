//! Rewriting the `tools/list` result. Through pare a tool list never costs more than the
//! server's own:
//!
//! - **`detail`** is added only to a shaped tool whose policy has levels that give different
//!   outputs (`crate::mcp::config::ToolPolicy::distinct_levels`), and lists only those (of
//!   levels alike, the default, else the one with the most detail). A lossless policy (no
//!   ops, the built-in one) adds nothing, nor does a verbatim ([`crate::mcp::verbatim`]) or
//!   unshaped tool. The argument is `pare_detail` when the tool has its own `detail`.
//! - **Caller parameters** (`[[mcp.tools]] params`) become optional arguments, typed from
//!   the parameter's default.
//! - **`pare_more`** is listed only once a result has needed it (a page or an `original`
//!   handle), and from then on; the proxy then sends `notifications/tools/list_changed`.
//! - **`[mcp] tool_list = "compact"`** first rewrites the server's own definitions
//!   compactly ([`crate::mcp::tools_compact`]); pare's additions are terse already.
//! - **What no client or model uses** is dropped: a `$schema` URL on an input or output
//!   schema, when the schema uses no keyword whose meaning differs between JSON Schema
//!   draft-06/07 and 2020-12 (MCP's default dialect), so validation is the same either way.
//!   `additionalProperties: false` stays: it changes what a client lets through.
//! - **`outputSchema`** is dropped from a shaped tool unless `structured_content = "keep"`:
//!   pare may drop or move its `structuredContent` to keep the reply within the budget
//!   ([`crate::mcp::result`]), and a client that validates against the schema would refuse
//!   a result without one.
//!
//! What pare learns here (which tools are verbatim, which arguments it added) is kept per
//! tool name ([`Learned`]) for the calls that follow.

use std::collections::HashMap;

use serde_json::{Map, Value as Json, json};

use crate::schema::mcp::{StructuredContent, ToolList};

use crate::mcp::config::{Config, ToolPolicy};
use crate::mcp::verbatim;

/// The name of the synthetic paging tool.
pub const PARE_MORE: &str = "pare_more";

/// What pare learned of one tool from `tools/list`, and what it added to its arguments.
#[derive(Debug, Clone, Default)]
pub struct Learned {
    /// The argument pare added for the level (`detail` or `pare_detail`).
    pub detail: Option<String>,
    /// The tool's result text is passed byte for byte.
    pub verbatim: bool,
    /// The policy parameters pare added as arguments.
    pub params: Vec<String>,
    /// pare added the `fields` argument ([`crate::project`]).
    pub fields: bool,
}

/// The proxy's view of the tool list.
#[derive(Debug, Default)]
pub struct ToolsState {
    /// What was learned of each shaped tool, by name (a tool not shaped has no entry).
    pub tools: HashMap<String, Learned>,
    /// `pare_more` has been needed: it is listed from now on.
    pub more_needed: bool,
    /// The server lists a tool named `pare_more` itself: pare leaves the name to it.
    pub server_has_more: bool,
}

impl ToolsState {
    /// A result needed `pare_more`: it is listed from now on. `true` the first time (and
    /// when the server has no `pare_more` of its own): tell the client the list changed.
    pub fn need_more(&mut self) -> bool {
        !std::mem::replace(&mut self.more_needed, true) && !self.server_has_more
    }
}

/// Rewrite a `tools/list` result in place, learning each tool; what a door should log
/// (a policy parameter a tool's own argument hides).
pub fn rewrite(result: &mut Json, config: &Config, state: &mut ToolsState) -> Vec<String> {
    let mut warnings = Vec::new();
    let last_page = result.get("nextCursor").is_none_or(Json::is_null);
    let Some(tools) = result.get_mut("tools").and_then(Json::as_array_mut) else {
        return warnings;
    };
    if config.tool_list() == ToolList::Compact {
        // The server's own definitions only: pare's additions below are already terse.
        crate::mcp::tools_compact::compact(tools);
    }
    for tool in tools.iter_mut() {
        for key in ["inputSchema", "outputSchema"] {
            if let Some(schema) = tool.get_mut(key).and_then(Json::as_object_mut) {
                drop_dialect(schema);
            }
        }
        let Some(name) = tool.get("name").and_then(Json::as_str).map(str::to_owned) else {
            continue;
        };
        if name == PARE_MORE {
            state.server_has_more = true;
        }
        let Some(policy) = config.tool(&name) else {
            state.tools.remove(&name);
            continue;
        };
        if policy.structured == StructuredContent::Fit
            && let Some(tool) = tool.as_object_mut()
        {
            // pare may drop or move the tool's `structuredContent` (its value reaches the
            // model once, in the text): a client must not expect one.
            tool.remove("outputSchema");
        }
        let learned = learn(tool, &name, &policy, &mut warnings);
        state.tools.insert(name, learned);
    }
    if last_page && state.more_needed && !state.server_has_more {
        tools.push(pare_more_tool());
    }
    warnings
}

/// Add what a shaped tool takes besides its own arguments; what was added.
fn learn(tool: &mut Json, name: &str, policy: &ToolPolicy, warnings: &mut Vec<String>) -> Learned {
    let verbatim = policy
        .verbatim
        .unwrap_or_else(|| verbatim::by_default(name, Some(tool)));
    if verbatim {
        return Learned {
            verbatim,
            ..Learned::default()
        };
    }
    let mut learned = Learned::default();
    let levels = policy.distinct_levels();
    // Fields select in a value; a [pack] policy's results are packed text.
    let fields = policy.fields && policy.policy.options().pack.is_none();
    if levels.len() < 2 && policy.params.is_empty() && !fields {
        return learned;
    }
    let Some(props) = properties(tool) else {
        return learned;
    };
    if levels.len() > 1 {
        let arg = ["detail", "pare_detail"]
            .into_iter()
            .find(|a| !props.contains_key(*a));
        // Both names taken: the tool gets its default level.
        if let Some(arg) = arg {
            props.insert(arg.into(), detail_schema(policy, &levels));
            learned.detail = Some(arg.to_owned());
        }
    }
    for (param, default) in &policy.params {
        if props.contains_key(param) {
            warnings.push(format!(
                "`{name}` has its own argument `{param}`: the policy parameter is not offered"
            ));
            continue;
        }
        props.insert(
            param.clone(),
            json!({"type": default.kind(), "description": format!("Default {}.", scalar_text(default))}),
        );
        learned.params.push(param.clone());
    }
    if fields {
        if props.contains_key(FIELDS) {
            warnings.push(format!(
                "`{name}` has its own argument `{FIELDS}`: pare's is not offered"
            ));
        } else {
            props.insert(FIELDS.into(), fields_schema());
            learned.fields = true;
        }
    }
    learned
}

/// The argument a caller names the fields it wants with ([`crate::project`]).
pub const FIELDS: &str = "fields";

fn fields_schema() -> Json {
    json!({
        "type": "array",
        "items": {"type": "string"},
        "description": "Only these fields of the result: member names (`id`, `user.login`: at any depth) or JSONPath (`$.items[*].id`)."
    })
}

/// The tool's `inputSchema.properties`, made if missing (an object schema may omit it).
fn properties(tool: &mut Json) -> Option<&mut Map<String, Json>> {
    let schema = tool.get_mut("inputSchema")?.as_object_mut()?;
    schema
        .entry("properties")
        .or_insert_with(|| json!({}))
        .as_object_mut()
}

fn detail_schema(policy: &ToolPolicy, levels: &[&str]) -> Json {
    let default = &policy.levels()[policy.default_level];
    let full =
        levels.last() == Some(&crate::ops::compile::FULL) && policy.policy.options().pack.is_none();
    let description = if full {
        format!("Least first; default `{default}`; `full`: the server's own result.")
    } else {
        format!("Least first; default `{default}`.")
    };
    json!({"type": "string", "enum": levels, "description": description})
}

/// A parameter value as a caller writes it (`2`, not `2.0`).
pub(crate) fn scalar_text(s: &crate::params::Scalar) -> String {
    match s {
        crate::params::Scalar::Bool(b) => b.to_string(),
        crate::params::Scalar::Number(n) => n.to_string(),
        crate::params::Scalar::String(t) => format!("{t:?}"),
    }
}

/// Keywords whose meaning differs between JSON Schema draft-06/07 and 2020-12 (or that one
/// of them lacks), and `$ref`, whose siblings draft-07 ignores.
const DIALECT_KEYWORDS: &[&str] = &[
    "additionalItems",
    "dependencies",
    "dependentRequired",
    "dependentSchemas",
    "prefixItems",
    "unevaluatedProperties",
    "unevaluatedItems",
    "minContains",
    "maxContains",
    "$id",
    "$anchor",
    "$recursiveRef",
    "$recursiveAnchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$vocabulary",
];

/// Remove `$schema` when the schema validates the same under MCP's default dialect.
fn drop_dialect(schema: &mut Map<String, Json>) {
    let Some(Json::String(url)) = schema.get("$schema") else {
        return;
    };
    let known = ["draft-06", "draft-07", "draft/2019-09", "draft/2020-12"];
    if !known.iter().any(|d| url.contains(d)) {
        return;
    }
    let mut rest = schema.clone();
    rest.remove("$schema");
    if !dialect_sensitive(&Json::Object(rest)) {
        schema.remove("$schema");
    }
}

/// Whether any object in `v` uses a dialect keyword (property names count too, which only
/// errs on the side of keeping `$schema`).
fn dialect_sensitive(v: &Json) -> bool {
    match v {
        Json::Object(m) => {
            m.keys().any(|k| DIALECT_KEYWORDS.contains(&k.as_str()))
                || matches!(m.get("items"), Some(Json::Array(_)))
                || (m.contains_key("$ref") && m.len() > 1)
                || m.values().any(dialect_sensitive)
        }
        Json::Array(items) => items.iter().any(dialect_sensitive),
        _ => false,
    }
}

/// The `pare_more` tool as `tools/list` lists it (a door that registers it itself, such as
/// the Node package's handler-level integration, describes it the same).
pub fn pare_more_tool() -> Json {
    json!({
        "name": PARE_MORE,
        "description": "Next page of a result, or the original a pare note names. Pass its cursor.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "cursor": {"type": "string"},
                "path": {"type": "string", "description": "JSONPath into an original"},
                "detail": {"type": "string", "description": "Level of an original"}
            },
            "required": ["cursor"]
        },
        "annotations": {"readOnlyHint": true, "openWorldHint": false}
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn config(text: &str) -> Config {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("p.toml");
        std::fs::write(&p, text).unwrap();
        crate::mcp::config::testing::load(Path::new(&p)).unwrap()
    }

    #[test]
    fn a_lossless_policy_adds_nothing_and_pare_more_waits_until_needed() {
        let list = json!({"tools": [
            {"name": "a", "inputSchema": {"type": "object"}},
            {"name": "b", "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}}
        ]});
        let mut r = list.clone();
        let mut state = ToolsState::default();
        rewrite(&mut r, &Config::builtin(), &mut state);
        assert_eq!(r, list);
        state.more_needed = true;
        rewrite(&mut r, &Config::builtin(), &mut state);
        assert_eq!(r["tools"][2]["name"], "pare_more");
        let mut paged = json!({"tools": [], "nextCursor": "2"});
        rewrite(&mut paged, &Config::builtin(), &mut state);
        assert_eq!(paged["tools"], json!([]), "pare_more only on the last page");
    }

    #[test]
    fn detail_lists_only_levels_that_differ() {
        let c = config(
            "levels = [\"none\", \"brief\", \"standard\", \"full\"]\n\
             [[ops]]\nop = \"prune\"\n\
             [[ops]]\nop = \"drop\"\npaths = [\"$.x\"]\nlevels = [\"none\", \"brief\"]\n",
        );
        let mut r = json!({"tools": [
            {"name": "a", "inputSchema": {"type": "object"}},
            {"name": "b", "inputSchema": {"type": "object", "properties": {"detail": {"type": "boolean"}}}},
            {"name": "read_file", "inputSchema": {"type": "object"}}
        ]});
        let mut state = ToolsState::default();
        rewrite(&mut r, &c, &mut state);
        let a = &r["tools"][0]["inputSchema"]["properties"]["detail"];
        assert_eq!(a["enum"], json!(["brief", "standard", "full"]));
        assert_eq!(
            r["tools"][1]["inputSchema"]["properties"]["detail"],
            json!({"type": "boolean"})
        );
        assert!(r["tools"][1]["inputSchema"]["properties"]["pare_detail"].is_object());
        assert_eq!(r["tools"][2]["inputSchema"], json!({"type": "object"}));
        assert_eq!(state.tools["a"].detail.as_deref(), Some("detail"));
        assert_eq!(state.tools["b"].detail.as_deref(), Some("pare_detail"));
        assert!(state.tools["read_file"].verbatim);
    }

    #[test]
    fn compact_tool_list_when_the_policy_asks() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("p.toml");
        std::fs::write(
            &p,
            "[mcp]\ntool_list = \"compact\"\n[[ops]]\nop = \"prune\"\nlevels = [\"none\"]\n",
        )
        .unwrap();
        let tool = json!({"name": "a", "title": "A", "description": "Do a. Then more.",
                          "inputSchema": {"$schema": "x", "type": "object"}});
        let mut r = json!({"tools": [tool.clone()]});
        rewrite(
            &mut r,
            &crate::mcp::config::testing::load(&p).unwrap(),
            &mut ToolsState::default(),
        );
        assert_eq!(r["tools"][0]["description"], "Do a");
        assert!(r["tools"][0].get("title").is_none());
        assert!(r["tools"][0]["inputSchema"].get("$schema").is_none());
        assert!(r["tools"][0]["inputSchema"]["properties"]["detail"].is_object());
        let mut r = json!({"tools": [tool.clone()]});
        rewrite(&mut r, &Config::builtin(), &mut ToolsState::default());
        assert_eq!(r["tools"][0]["description"], tool["description"]);
    }

    #[test]
    fn schema_urls_go_unless_the_dialect_matters() {
        let plain = json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
            "properties": {"a": {"type": "array", "items": {"type": "string"}}},
            "additionalProperties": false});
        let tuple = json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
            "properties": {"a": {"type": "array", "items": [{"type": "string"}]}}});
        let draft4 =
            json!({"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"});
        let mut r = json!({"tools": [
            {"name": "p", "inputSchema": plain, "outputSchema": plain},
            {"name": "t", "inputSchema": tuple},
            {"name": "d", "inputSchema": draft4}
        ]});
        rewrite(&mut r, &keep_structured(), &mut ToolsState::default());
        let mut want = plain.clone();
        want.as_object_mut().unwrap().remove("$schema");
        assert_eq!(r["tools"][0]["inputSchema"], want);
        assert_eq!(r["tools"][0]["outputSchema"], want);
        assert_eq!(r["tools"][1]["inputSchema"], tuple);
        assert_eq!(r["tools"][2]["inputSchema"], draft4);
    }

    fn keep_structured() -> Config {
        let policy = crate::Policy::parse("[mcp]\nstructured_content = \"keep\"\n").unwrap();
        Config::from_policy(policy, &mut |_: &str| {
            Err::<crate::Policy, std::io::Error>(std::io::Error::other("no files"))
        })
        .unwrap()
    }

    /// pare may drop or move a shaped tool's `structuredContent`, so a client must not
    /// expect one: the tool list declares none, unless the policy keeps it; an unshaped
    /// tool keeps its schema.
    #[test]
    fn output_schemas_go_from_shaped_tools_unless_structured_content_is_kept() {
        let out = json!({"type": "object", "properties": {"n": {"type": "number"}}});
        let list = json!({"tools": [
            {"name": "a", "inputSchema": {"type": "object"}, "outputSchema": out},
            {"name": "secret", "inputSchema": {"type": "object"}, "outputSchema": out}
        ]});
        let mut r = list.clone();
        rewrite(&mut r, &Config::builtin(), &mut ToolsState::default());
        assert!(r["tools"][0].get("outputSchema").is_none());
        let mut r = list.clone();
        rewrite(&mut r, &keep_structured(), &mut ToolsState::default());
        assert_eq!(r["tools"][0]["outputSchema"], out);
        let policy =
            crate::Policy::parse("[mcp]\n[[mcp.tools]]\nmatch = [\"secret\"]\nshape = false\n")
                .unwrap();
        let config = Config::from_policy(policy, &mut |_: &str| {
            Err::<crate::Policy, std::io::Error>(std::io::Error::other("no files"))
        })
        .unwrap();
        let mut r = list;
        rewrite(&mut r, &config, &mut ToolsState::default());
        assert!(r["tools"][0].get("outputSchema").is_none());
        assert_eq!(r["tools"][1]["outputSchema"], out);
    }
}
