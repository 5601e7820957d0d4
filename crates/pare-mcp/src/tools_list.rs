//! Rewriting the `tools/list` result: the server's definitions compacted when the policy
//! asks for it (`[mcp] tool_list = "compact"`, [`crate::tools_compact`]), a `detail`
//! argument on each shaped tool, and the synthetic `pare_more` tool at the end of the list.

use std::collections::HashMap;

use serde_json::{Value as Json, json};

use pare::schema::mcp::ToolList;

use crate::config::Config;

/// The name of the synthetic paging tool.
pub const PARE_MORE: &str = "pare_more";

/// The name of the argument a shaped tool takes its level in, per tool: `detail`, or
/// `pare_detail` when the tool has its own `detail`.
pub type DetailArgs = HashMap<String, String>;

/// The argument name pare uses for a tool whose schema it has not seen.
pub const DETAIL: &str = "detail";

/// Rewrite a `tools/list` result in place. Records each shaped tool's detail argument name.
pub fn rewrite(result: &mut Json, config: &Config, args: &mut DetailArgs) {
    let last_page = result.get("nextCursor").is_none_or(Json::is_null);
    let Some(tools) = result.get_mut("tools").and_then(Json::as_array_mut) else {
        return;
    };
    if config.tool_list() == ToolList::Compact {
        // The server's own definitions only: pare's additions below are already terse.
        crate::tools_compact::compact(tools);
    }
    let mut has_more = false;
    for tool in tools.iter_mut() {
        let Some(name) = tool.get("name").and_then(Json::as_str).map(str::to_owned) else {
            continue;
        };
        has_more |= name == PARE_MORE;
        let Some(policy) = config.tool(&name) else {
            continue;
        };
        let Some(schema) = tool.get_mut("inputSchema").and_then(Json::as_object_mut) else {
            continue;
        };
        let props = schema.entry("properties").or_insert_with(|| json!({}));
        let Some(props) = props.as_object_mut() else {
            continue;
        };
        let arg = if props.contains_key(DETAIL) {
            "pare_detail"
        } else {
            DETAIL
        };
        if props.contains_key(arg) {
            // Both names taken: leave the tool's schema as it is; it gets the default level.
            continue;
        }
        let levels = policy.levels();
        props.insert(
            arg.into(),
            json!({
                "type": "string",
                "enum": levels,
                "description": format!(
                    "How much detail to return (least first). Default `{}`; `full` returns the server's own result unchanged.",
                    levels[policy.default_level]
                ),
            }),
        );
        args.insert(name, arg.to_owned());
    }
    if last_page && !has_more {
        tools.push(pare_more_tool());
    }
}

fn pare_more_tool() -> Json {
    json!({
        "name": PARE_MORE,
        "description": "Return the next page of a tool result that was too long for one reply. Pass the cursor named at the end of the previous page.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "cursor": {"type": "string", "description": "The cursor from the previous page."}
            },
            "required": ["cursor"]
        },
        "annotations": {"readOnlyHint": true, "openWorldHint": false}
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shaped_tools_gain_detail_or_pare_detail_and_pare_more_is_appended() {
        let mut r = json!({"tools": [
            {"name": "a", "inputSchema": {"type": "object"}},
            {"name": "b", "inputSchema": {"type": "object", "properties": {"detail": {"type": "boolean"}}}}
        ]});
        let mut args = DetailArgs::new();
        rewrite(&mut r, &Config::builtin(), &mut args);
        assert_eq!(
            r["tools"][0]["inputSchema"]["properties"]["detail"]["enum"],
            json!(["none", "minimal", "standard", "full"])
        );
        assert_eq!(
            r["tools"][1]["inputSchema"]["properties"]["detail"],
            json!({"type": "boolean"})
        );
        assert!(r["tools"][1]["inputSchema"]["properties"]["pare_detail"].is_object());
        assert_eq!(r["tools"][2]["name"], "pare_more");
        assert_eq!(args["a"], "detail");
        assert_eq!(args["b"], "pare_detail");
    }

    #[test]
    fn compact_tool_list_when_the_policy_asks() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("p.toml");
        std::fs::write(&p, "[mcp]\ntool_list = \"compact\"\n").unwrap();
        let tool = json!({"name": "a", "title": "A", "description": "Do a. Then more.",
                          "inputSchema": {"$schema": "x", "type": "object"}});
        let mut r = json!({"tools": [tool.clone()]});
        rewrite(&mut r, &Config::load(&p).unwrap(), &mut DetailArgs::new());
        assert_eq!(r["tools"][0]["description"], "Do a");
        assert!(r["tools"][0].get("title").is_none());
        assert!(r["tools"][0]["inputSchema"]["properties"]["detail"].is_object());
        let mut r = json!({"tools": [tool.clone()]});
        rewrite(&mut r, &Config::builtin(), &mut DetailArgs::new());
        assert_eq!(r["tools"][0]["description"], tool["description"]);
    }

    #[test]
    fn pare_more_only_on_the_last_page_of_the_list() {
        let mut r = json!({"tools": [], "nextCursor": "2"});
        rewrite(&mut r, &Config::builtin(), &mut DetailArgs::new());
        assert_eq!(r["tools"], json!([]));
    }
}
