use super::*;
use crate::json::{parse, to_compact};
use span::MAX_CHARS;

fn found(text: &str) -> Embedded<'_> {
    find(text).unwrap_or_else(|| panic!("no value found in {text:?}"))
}

fn json_of(e: &Embedded) -> String {
    to_compact(&e.value)
}

#[test]
fn json_after_a_caption() {
    let text =
        "Contents of https://example.com/api:\n{\"id\": 7, \"tags\": [\"a\", \"b\"], \"x\": 1.50}";
    let e = found(text);
    assert_eq!(e.kind, Kind::JsonSpan);
    assert_eq!(e.prefix, "Contents of https://example.com/api:\n");
    assert_eq!(e.suffix, "");
    assert_eq!(json_of(&e), r#"{"id":7,"tags":["a","b"],"x":1.50}"#);
}

#[test]
fn json_before_a_trailer() {
    let text =
        "[{\"id\":1,\"name\":\"Ada\"},{\"id\":2,\"name\":\"Bo\"}]\n\n(3 more results available)\n";
    let e = found(text);
    assert_eq!(e.prefix, "");
    assert_eq!(e.suffix, "\n\n(3 more results available)\n");
    assert_eq!(
        json_of(&e),
        r#"[{"id":1,"name":"Ada"},{"id":2,"name":"Bo"}]"#
    );
}

#[test]
fn json_between_caption_and_trailer_pretty_printed_with_crlf() {
    let body =
        "{\r\n  \"rows\": [\r\n    {\"id\": 1},\r\n    {\"id\": 2}\r\n  ],\r\n  \"total\": 2\r\n}";
    let text = format!("Query ok.\r\nResult:\r\n{body}  \r\nDone in 3 ms.");
    let e = found(&text);
    assert_eq!(e.prefix, "Query ok.\r\nResult:\r\n");
    assert_eq!(e.suffix, "  \r\nDone in 3 ms.");
    assert_eq!(e.value, parse(body).unwrap());
    assert_eq!(format!("{}{body}{}", e.prefix, e.suffix), text);
}

#[test]
fn a_caption_of_three_lines_is_the_most() {
    let value = format!("[{}]", vec!["1"; 40].join(","));
    let ok = format!("one\ntwo\nthree\n{value}");
    assert_eq!(found(&ok).prefix, "one\ntwo\nthree\n");
    assert!(find(&format!("one\ntwo\nthree\nfour\n{value}")).is_none());
    let trailer_ok = format!("{value}\na\nb\nc");
    assert_eq!(found(&trailer_ok).suffix, "\na\nb\nc");
    assert!(find(&format!("{value}\na\nb\nc\nd")).is_none());
}

#[test]
fn a_caption_over_the_character_bound_is_prose() {
    let value = format!("[{}]", vec!["\"abcdefgh\""; 60].join(","));
    let long = "x".repeat(MAX_CHARS + 1);
    assert!(find(&format!("{long}\n{value}")).is_none());
    assert!(find(&format!("{value}\n{long}")).is_none());
    let fits = "x".repeat(MAX_CHARS);
    assert!(find(&format!("{fits}\n{value}")).is_some());
}

#[test]
fn a_value_shorter_than_its_frame_is_left_alone() {
    // A footnote-like `[1]` or a tiny object in a sentence is not what the text is about.
    assert!(find("Footnotes follow below:\n[1]\nSee the appendix.").is_none());
    assert!(find("Result of the operation you asked for:\n{}").is_none());
}

#[test]
fn whole_json_is_not_embedded() {
    assert!(find("{\"a\": 1}").is_none());
    assert!(find("\n  [1, 2, 3]  \n").is_none());
}

#[test]
fn code_and_prose_with_brackets_are_left_alone() {
    let texts = [
        // Rust and JS sources, braces at line starts
        "fn main() {\n    let v = vec![1, 2];\n    println!(\"{v:?}\");\n}\n",
        "struct A;\n{\n    let x = 1;\n}\n",
        "const config =\n{ \"a\": 1, \"b\": 2 };\nexport default config;\n",
        "x = \n[1, 2, 3, 4, 5, 6];\n",
        "function f() {\n  return {a: 1};\n}\n",
        // logs
        "2024-01-01 INFO request {} done\n2024-01-01 WARN {\"retry\": 1}\n",
        "[INFO] fetched 3 rows\n[WARN] slow query\n",
        // a bare number in prose
        "There are 42 results.\n42\n",
        // Markdown: a link, a list, a JSON code fence
        "[the docs](https://example.com) say so\n",
        "```json\n{\"a\": 1, \"b\": [1, 2, 3], \"c\": \"a long enough value\"}\n```\n",
        "~~~\n[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]\n~~~",
        // JSON Lines: a second value after the first
        "{\"a\": 1, \"b\": \"some text here\"}\n{\"a\": 2, \"b\": \"some text here\"}\n",
        // the value's last line goes on
        "[1, 2, 3, 4, 5, 6, 7, 8] and then some words\n",
        // indented: inside code or a bigger value
        "Result:\n  {\"a\": 1, \"b\": 2, \"c\": 3, \"d\": 4}\n",
        "",
        "plain text with no brackets at all",
    ];
    for t in texts {
        assert_eq!(find(t), None, "{t:?}");
    }
}

#[test]
fn the_first_value_decides() {
    // A first value that does not qualify (here: code after it on its line) is not skipped
    // for a later one.
    let text = "[1, 2] + x\n{\"a\": \"a value long enough to be the point\"}";
    assert!(find(text).is_none());
}

#[test]
fn python_rows() {
    let text = "[{'id': 1, 'name': 'Ada', 'admin': True, 'manager': None, 'score': 0.5}, {'id': 2, 'name': 'Bo', 'admin': False, 'manager': 1, 'score': -2.25}]";
    let e = found(text);
    assert_eq!(e.kind, Kind::PyRepr);
    assert_eq!((e.prefix, e.suffix), ("", ""));
    assert_eq!(
        json_of(&e),
        r#"[{"id":1,"name":"Ada","admin":true,"manager":null,"score":0.5},{"id":2,"name":"Bo","admin":false,"manager":1,"score":-2.25}]"#
    );
}

#[test]
fn python_nested_with_escapes_and_unicode() {
    let text = r#"{'path': 'C:\\tmp\\x', 'quote': "it's", 'both': 'a\'b"c', 'nl': 'a\nb\tc\r', 'ctl': '\x00\x1f\x7f', 'nbsp': 'a\xa0b', 'zw': '\u200b', 'name': 'José 日本 🎉', 'deep': {'l': [[], {}, [1, [2, [3]]]], 'e': ''}}"#;
    let e = found(text);
    assert_eq!(e.kind, Kind::PyRepr);
    let v = &e.value;
    let get = |k: &str| v.as_object().unwrap().get(k).unwrap().as_str().unwrap();
    assert_eq!(get("path"), r"C:\tmp\x");
    assert_eq!(get("quote"), "it's");
    assert_eq!(get("both"), "a'b\"c");
    assert_eq!(get("nl"), "a\nb\tc\r");
    assert_eq!(get("ctl"), "\0\u{1f}\u{7f}");
    assert_eq!(get("nbsp"), "a\u{a0}b");
    assert_eq!(get("zw"), "\u{200b}");
    assert_eq!(get("name"), "José 日本 🎉");
    assert_eq!(
        to_compact(v.as_object().unwrap().get("deep").unwrap()),
        r#"{"l":[[],{},[1,[2,[3]]]],"e":""}"#
    );
}

#[test]
fn python_with_a_caption_and_trailer() {
    let text = "Rows:\n[{'id': 1, 'v': 'x'}, {'id': 2, 'v': 'y'}]\n(2 rows)";
    let e = found(text);
    assert_eq!(e.kind, Kind::PyRepr);
    assert_eq!((e.prefix, e.suffix), ("Rows:\n", "\n(2 rows)"));
}

#[test]
fn python_numbers_keep_their_repr() {
    // (`None` makes it Python: the rest is JSON too.)
    let e =
        found("[None, 1, -7, 0.1, 1e+16, 1.5e-05, 0.0001, -0.0, 123456789012345678901234567890]");
    assert_eq!(
        json_of(&e),
        "[null,1,-7,0.1,1e+16,1.5e-05,0.0001,-0.0,123456789012345678901234567890]"
    );
}

#[test]
fn python_that_does_not_print_back_exactly_is_refused() {
    let texts = [
        "[(1, 2), (3, 4)]",            // tuples
        "[{1, 2}]",                    // a set
        "{1: 'a', 2: 'b'}",            // keys that are not strings
        "[1.0, inf]",                  // not a value JSON holds
        "[nan]",                       //
        "[1e16]",                      // Python prints 1e+16
        "[100000000000000000.0]",      // Python prints 1e+17
        "[1.50]",                      // Python prints 1.5
        "[0x10]",                      // not a repr
        "[1_000]",                     //
        "[\"plain\"]",                 // Python prints 'plain' (and this is JSON anyway)
        "['a', \"b\"]",                // Python prints 'b'
        "['it\\'s']",                  // Python prints "it's"
        "['\\u00e9']",                 // Python prints 'é'
        "['\\a']",                     // an escape repr does not write
        "['\u{0378}']",                // unassigned: printed raw or escaped by version
        "[True,False]",                // repr puts a space after the comma
        "{'a' : 1}",                   // and none before the colon
        "{'a': 1, 'a': 2}",            // a repeated key
        "[datetime.date(2024, 1, 1)]", // an object repr
        "[b'bytes']",                  // bytes
        "[[[[]]]",                     // unclosed
    ];
    for t in texts {
        assert_eq!(find(t), None, "{t:?}");
    }
}

#[test]
fn python_nesting_is_bounded() {
    let deep_py = format!("{}None{}", "[".repeat(200), "]".repeat(200));
    assert!(find(&deep_py).is_none());
    let ok_py = format!("{}None{}", "[".repeat(100), "]".repeat(100));
    assert_eq!(found(&ok_py).kind, Kind::PyRepr);
}
