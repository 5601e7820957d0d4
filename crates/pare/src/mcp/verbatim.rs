//! Which tools return a file's text, which must reach the model byte for byte.
//!
//! A model edits what it read: `edit_file` quotes the text it saw, so a file re-encoded on
//! the way (a JSON file as TOON, minified, or pruned) makes every edit fail. Such results
//! are never re-encoded; over the budget they are paged as plain text, cut at line ends, so
//! the pages joined are the text exactly.
//!
//! The default rule, for a tool no `[[mcp.tools]] verbatim = …` names (that setting wins
//! both ways): the tool's name, split into lowercase words (at `_`, `-`, `.`, `/`, spaces
//! and camelCase humps), has a **read word** (`read`, `get`, `cat`, `view`, `open`, `show`,
//! `load`) and either a **file word** (`file`, `files`, `contents`) or, in its input schema,
//! a **path argument** (`path`, `paths`, `file`, `filename`, `file_path`, `filepath`, and
//! their camelCase forms). So the reference filesystem server's `read_text_file`,
//! `read_file` and `read_multiple_files`, GitHub's `get_file_contents`, and a `cat` or
//! `view` tool taking a `path` are verbatim; `read_graph`, `search_files` (no read word)
//! and `get-structured-content` are not.
//!
//! Why so narrow: a tool wrongly held verbatim only loses the savings on its JSON, while
//! one wrongly shaped breaks edits, yet reading the name and arguments is all there is
//! (annotations say nothing about content); the rule catches the common file readers and
//! leaves the rest to the setting.

use serde_json::Value as Json;

const READ_WORDS: &[&str] = &["read", "get", "cat", "view", "open", "show", "load"];
const FILE_WORDS: &[&str] = &["file", "files", "contents"];
const PATH_ARGS: &[&str] = &["path", "paths", "file", "filename", "filepath"];

/// Whether the tool `name`, with its `tools/list` definition when pare has seen one, returns
/// file text by the default rule.
pub fn by_default(name: &str, definition: Option<&Json>) -> bool {
    let words = words(name);
    let has = |set: &[&str]| words.iter().any(|w| set.contains(&w.as_str()));
    if !has(READ_WORDS) {
        return false;
    }
    has(FILE_WORDS) || definition.is_some_and(has_path_argument)
}

/// An input schema property named like a path (`file_path`, `filePath` and `path` alike).
fn has_path_argument(definition: &Json) -> bool {
    let Some(props) = definition
        .pointer("/inputSchema/properties")
        .and_then(Json::as_object)
    else {
        return false;
    };
    props.keys().any(|k| {
        let joined: String = words(k).concat();
        PATH_ARGS.contains(&joined.as_str())
    })
}

/// `readTextFile`, `read_text-file.v2` → `read`, `text`, `file`, `v2`.
fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn with_args(args: &[&str]) -> Json {
        let props: serde_json::Map<String, Json> = args
            .iter()
            .map(|a| ((*a).to_owned(), json!({"type": "string"})))
            .collect();
        json!({"inputSchema": {"type": "object", "properties": props}})
    }

    #[test]
    fn file_readers_are_verbatim() {
        for name in [
            "read_text_file",
            "read_file",
            "read_multiple_files",
            "get_file_contents",
            "readFile",
            "view-file",
        ] {
            assert!(by_default(name, None), "{name}");
        }
        assert!(by_default("cat", Some(&with_args(&["path"]))));
        assert!(by_default("view", Some(&with_args(&["filePath"]))));
        assert!(by_default("open", Some(&with_args(&["file_path", "n"]))));
    }

    #[test]
    fn other_tools_are_not() {
        for name in [
            "read_graph",
            "search_files",
            "list_directory",
            "write_file",
            "edit_file",
            "get-structured-content",
            "data",
            "file",
            "profile_reader",
        ] {
            assert!(!by_default(name, None), "{name}");
        }
        // A path argument alone is not enough: writing or searching takes one too.
        assert!(!by_default("search", Some(&with_args(&["path"]))));
        assert!(!by_default("read_graph", Some(&with_args(&["query"]))));
    }

    #[test]
    fn words_split_at_separators_and_humps() {
        assert_eq!(words("readTextFile"), ["read", "text", "file"]);
        assert_eq!(
            words("get_file-contents.v2"),
            ["get", "file", "contents", "v2"]
        );
        assert_eq!(words("HTTPGet"), ["httpget"]);
    }
}
