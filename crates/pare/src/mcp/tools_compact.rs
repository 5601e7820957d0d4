//! `[mcp] tool_list = "compact"`: the server's tool definitions rewritten to cost fewer
//! tokens, every tool still called with exactly the same arguments.
//!
//! What stays, exactly: each tool's name; every argument's name, at every depth; every
//! `type`, `enum`, `const`, `required`, `items`, `anyOf`/`oneOf`/`allOf`, `$ref`/`$defs` and
//! the value constraints (`minimum`, `pattern`, `format`, ...), so a call the server accepts
//! is still described and one it rejects still is too. Hints a client acts on stay when
//! they say something: annotations that differ from the spec's defaults (and are not moot
//! on a read-only tool), a task support
//! other than `forbidden`, `_meta`.
//!
//! What goes:
//! - descriptions past their first sentence (the tool's and each argument's), keeping a
//!   sentence that says the tool is deprecated; a lone trailing period;
//! - `$schema`, `title`, `default`, `examples`, `$comment` and `additionalProperties: false`
//!   or `true` inside input schemas (the server still validates; a schema-valued
//!   `additionalProperties` describes a map's values and stays);
//! - the tool's `title`, `icons` and `outputSchema` (read by a client's display and its
//!   validation of `structuredContent`, never needed to make a call).
//!
//! Unlike mcp-compressor, which replaces the list by two wrapper tools and hands a tool's
//! schema out on request, every tool stays in the list with its full argument schema: the
//! model calls it directly, with no extra round trip.

use serde_json::{Map, Value as Json};

/// Rewrite tool definitions (the `tools` of a `tools/list` result) compactly, in place.
pub fn compact(tools: &mut [Json]) {
    for tool in tools {
        let Some(t) = tool.as_object_mut() else {
            continue;
        };
        for key in ["title", "icons", "outputSchema"] {
            t.shift_remove(key);
        }
        if let Some(Json::String(d)) = t.get_mut("description") {
            *d = first_sentence(d, true);
        }
        if let Some(schema) = t.get_mut("inputSchema") {
            if let Some(s) = schema.as_object_mut() {
                s.shift_remove("$schema");
            }
            compact_schema(schema);
        }
        if let Some(Json::Object(a)) = t.get_mut("annotations") {
            compact_annotations(a);
            if a.is_empty() {
                t.shift_remove("annotations");
            }
        }
        let forbidden = t
            .get("execution")
            .and_then(Json::as_object)
            .is_some_and(|e| {
                e.len() == 1 && e.get("taskSupport") == Some(&Json::from("forbidden"))
            });
        if forbidden {
            // The spec's default: saying it changes nothing.
            t.shift_remove("execution");
        }
    }
}

/// Annotations equal to the spec's defaults say nothing, nor do `destructiveHint` and
/// `idempotentHint` on a read-only tool (the spec: meaningful only when `readOnlyHint` is
/// false); `title` is for display.
fn compact_annotations(a: &mut Map<String, Json>) {
    a.shift_remove("title");
    if a.get("readOnlyHint") == Some(&Json::Bool(true)) {
        a.shift_remove("destructiveHint");
        a.shift_remove("idempotentHint");
    }
    for (hint, default) in [
        ("readOnlyHint", false),
        ("destructiveHint", true),
        ("idempotentHint", false),
        ("openWorldHint", true),
    ] {
        if a.get(hint) == Some(&Json::Bool(default)) {
            a.shift_remove(hint);
        }
    }
}

/// A JSON Schema, compacted in place: only keywords in schema positions are touched, so a
/// property that happens to be named `title` or `default` stays.
fn compact_schema(schema: &mut Json) {
    let Some(s) = schema.as_object_mut() else {
        return;
    };
    for key in ["$schema", "title", "default", "examples", "$comment"] {
        s.shift_remove(key);
    }
    if s.get("additionalProperties").is_some_and(Json::is_boolean) {
        // `false` only repeats what the server's own validation says; `true` is the default.
        s.shift_remove("additionalProperties");
    }
    if let Some(Json::String(d)) = s.get_mut("description") {
        *d = first_sentence(d, false);
        if d.is_empty() {
            s.shift_remove("description");
        }
    }
    for (key, sub) in s.iter_mut() {
        match key.as_str() {
            // Maps of names to schemas.
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                if let Some(m) = sub.as_object_mut() {
                    m.values_mut().for_each(compact_schema);
                }
            }
            // Lists of schemas.
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Some(a) = sub.as_array_mut() {
                    a.iter_mut().for_each(compact_schema);
                }
            }
            // One schema (or, for old-style tuple `items`, a list).
            "items"
            | "additionalProperties"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "propertyNames"
            | "additionalItems"
            | "unevaluatedProperties"
            | "unevaluatedItems" => match sub {
                Json::Array(a) => a.iter_mut().for_each(compact_schema),
                _ => compact_schema(sub),
            },
            _ => {}
        }
    }
}

/// The first sentence of a description, whitespace collapsed. A tool's description also
/// keeps any later sentence that says it is deprecated (a model must not pick it blindly).
/// A lone sentence loses its final period.
fn first_sentence(text: &str, keep_deprecated: bool) -> String {
    let sentences = sentences(text);
    let mut out: Vec<&str> = Vec::new();
    for (i, s) in sentences.iter().enumerate() {
        if i == 0 || (keep_deprecated && s.to_ascii_lowercase().contains("deprecat")) {
            out.push(s);
        }
    }
    let mut joined = out.join(" ");
    if out.len() == 1 && joined.ends_with('.') && !joined.ends_with("..") {
        joined.pop();
    }
    joined
}

/// Split text into sentences: at `.`, `!` or `?` followed by whitespace (not after a common
/// abbreviation or an initial), and at a blank line or a line that starts a list. Each
/// sentence has its whitespace collapsed.
fn sentences(text: &str) -> Vec<String> {
    const ABBREVIATIONS: [&str; 6] = ["e.g", "i.e", "etc", "vs", "approx", "cf"];
    let mut out = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '\n' {
            // A paragraph break or a list item ends what came before.
            let rest: String = chars[i + 1..].iter().take(3).collect();
            let rest = rest.trim_start();
            if next == Some('\n')
                || rest.starts_with(['-', '*', '#'])
                || rest.starts_with(|c: char| c.is_ascii_digit())
            {
                push_sentence(&mut out, &mut cur);
                i += 1;
                continue;
            }
        }
        if c.is_whitespace() {
            if !cur.is_empty() && !cur.ends_with(' ') {
                cur.push(' ');
            }
            i += 1;
            continue;
        }
        cur.push(c);
        if matches!(c, '.' | '!' | '?') && next.is_none_or(char::is_whitespace) {
            let word = cur
                .trim_end_matches(['.', '!', '?'])
                .rsplit(' ')
                .next()
                .unwrap_or("");
            let abbreviation = ABBREVIATIONS.iter().any(|a| word.eq_ignore_ascii_case(a))
                || (word.len() == 1 && word.chars().all(|c| c.is_ascii_uppercase()));
            if !abbreviation {
                push_sentence(&mut out, &mut cur);
            }
        }
        i += 1;
    }
    push_sentence(&mut out, &mut cur);
    out
}

fn push_sentence(out: &mut Vec<String>, cur: &mut String) {
    let s = cur.trim();
    if !s.is_empty() {
        out.push(s.to_owned());
    }
    cur.clear();
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn first_sentences() {
        assert_eq!(
            first_sentence("Echoes back the input string", true),
            "Echoes back the input string"
        );
        assert_eq!(
            first_sentence(
                "Read a file. Handles encodings.\nOnly works within allowed directories.",
                true
            ),
            "Read a file"
        );
        assert_eq!(
            first_sentence(
                "Read a file as text. DEPRECATED: Use read_text_file instead.",
                true
            ),
            "Read a file as text. DEPRECATED: Use read_text_file instead."
        );
        assert_eq!(
            first_sentence("Search, e.g. by name. Then more.", true),
            "Search, e.g. by name"
        );
        assert_eq!(
            first_sentence("Run it\n\n- step one\n- step two", true),
            "Run it"
        );
        assert_eq!(
            first_sentence("Version 1.2 of it. More.", false),
            "Version 1.2 of it"
        );
        assert_eq!(first_sentence("Wait...", false), "Wait...");
    }

    #[test]
    fn schema_keywords_go_but_properties_of_the_same_name_stay() {
        let mut tools = vec![json!({
            "name": "t",
            "title": "T",
            "description": "Do it. Details.",
            "inputSchema": {
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "title": "Args",
                "properties": {
                    "title": {"type": "string", "title": "Title", "default": "", "description": "The title. Long."},
                    "default": {"type": "boolean", "default": false},
                    "tags": {"type": "object", "additionalProperties": {"type": "string", "description": "A tag."}}
                },
                "required": ["title"],
                "additionalProperties": false
            },
            "outputSchema": {"type": "object"},
            "annotations": {"title": "T", "readOnlyHint": true, "destructiveHint": true, "openWorldHint": false},
            "execution": {"taskSupport": "forbidden"}
        })];
        compact(&mut tools);
        assert_eq!(
            tools[0],
            json!({
                "name": "t",
                "description": "Do it",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "title": {"type": "string", "description": "The title"},
                        "default": {"type": "boolean"},
                        "tags": {"type": "object", "additionalProperties": {"type": "string", "description": "A tag"}}
                    },
                    "required": ["title"]
                },
                "annotations": {"readOnlyHint": true, "openWorldHint": false}
            })
        );
    }

    #[test]
    fn task_support_other_than_forbidden_stays() {
        let mut tools = vec![
            json!({"name": "t", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}}),
        ];
        compact(&mut tools);
        assert_eq!(tools[0]["execution"], json!({"taskSupport": "required"}));
    }
}
