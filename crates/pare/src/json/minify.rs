//! A text's compact JSON with nothing left out, written without reading its grammar:
//! whitespace outside strings goes, a string with no escape is copied, and one with escapes
//! is decoded and written again.
//!
//! Why: a report counts the input as compact JSON, and writing that with the stream
//! ([`super::compact_omitting`], nothing omitted) read the whole grammar a second time
//! beside the output's stream, which reads it anyway: 165 µs of a `--report` on the
//! 120 KB corpus file, on the thread that waits for it. This copies runs between
//! whitespace and skips strings eight bytes at a time.
//!
//! Exact only for a text the stream accepts: there it is byte for byte what the stream
//! writes (the tests compare them, on the corpus and on random texts). Elsewhere it writes
//! something or `None`, never panics; so it is used only beside a stream over the same
//! text that, failing, discards it ([`crate::report::measure_text`]).
//!
//! ```text
//! {"a": [1.50, "x\u00e9"],\n "b": "\/"}   →   {"a":[1.50,"xé"],"b":"/"}
//! ```

use super::parse::{Parser, after_bom};
use super::write::write_string;
use crate::scan::{find_special, skip_ws};

/// `text` as the stream writes it with nothing omitted, when the stream accepts it; `None`
/// when a string is not one (a raw control character, a bad escape, no closing quote).
pub(crate) fn minified(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = after_bom(text);
    // The start of the run to copy: everything since the last whitespace or rewritten string.
    let mut run = i;
    while let Some(&c) = b.get(i) {
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => {
                out.push_str(&text[run..i]);
                i = skip_ws(b, i + 1);
                run = i;
            }
            b'"' => {
                let end = find_special(b, i + 1);
                if b.get(end) == Some(&b'"') {
                    i = end + 1;
                } else {
                    // Escapes (or a fault): decoded by the parser's own rules, then
                    // written as the stream writes a string it decoded.
                    out.push_str(&text[run..i]);
                    let mut p = Parser::new(text, i, super::MAX_DEPTH, None, None);
                    let decoded = p.string_slow(i, end).ok()?;
                    write_string(&decoded, &mut out);
                    i = p.pos;
                    run = i;
                }
            }
            _ => i += 1,
        }
    }
    out.push_str(&text[run..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::omit::Omit;
    use crate::json::{Known, compact_omitting};
    use proptest::prelude::*;

    /// What the stream writes with nothing omitted, if it accepts `text`.
    fn streamed(text: &str) -> Option<String> {
        let nothing = Omit::new(Vec::new(), Vec::new(), Default::default(), 0)?;
        compact_omitting(text, &nothing, None, Known::ONE_THREAD).map(|s| s.text)
    }

    #[track_caller]
    fn same_as_the_stream(text: &str) {
        if let Some(want) = streamed(text) {
            assert_eq!(minified(text).as_deref(), Some(want.as_str()), "{text:?}");
        }
    }

    #[test]
    fn writes_what_the_stream_writes() {
        for text in [
            "{\"a\": [1.50, \"x\\u00e9\"],\n \"b\": \"\\/\"}",
            "\u{feff} [ true , false , null , -0.0e+5 ] ",
            "\"\\ud83d\\ude00 \\\" \\\\ \\b\\f\\n\\r\\t \\u0000 \\u001f \\u2028\"",
            "{\"k\\u0065y\": {\"\": \"\"}, \"\u{2028}\u{feff}é\": [\"\", {}]}",
            "\t\r\n 7 \n",
            "{\"a\":\"tab\tinside\"}",
        ] {
            same_as_the_stream(text);
        }
        assert_eq!(
            minified("{\"a\": [1.50, \"x\\u00e9\"],\n \"b\": \"\\/\"}").unwrap(),
            "{\"a\":[1.50,\"xé\"],\"b\":\"/\"}"
        );
    }

    #[test]
    fn writes_what_the_stream_writes_on_the_corpus() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/payloads");
        let mut read = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|x| x == "json") {
                let text = std::fs::read_to_string(&path).unwrap();
                assert!(streamed(&text).is_some(), "{}", path.display());
                same_as_the_stream(&text);
                read += 1;
            }
        }
        assert!(
            read >= 6,
            "the checked-in payloads are missing: {read} read"
        );
    }

    #[test]
    fn a_string_that_is_not_one_gives_none_not_a_panic() {
        for text in ["\"\\x\"", "\"open", "[\"\\u12\"]", "\"a\u{1}b\"", "\"\\"] {
            assert_eq!(minified(text), None, "{text:?}");
        }
    }

    /// JSON-ish texts: values with escapes, raw control characters, Unicode and stray
    /// whitespace, some not JSON at all.
    fn jsonish() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just(" ".to_owned()),
            Just("\n  ".to_owned()),
            Just("\t".to_owned()),
            Just("{".to_owned()),
            Just("}".to_owned()),
            Just("[".to_owned()),
            Just("]".to_owned()),
            Just(",".to_owned()),
            Just(":".to_owned()),
            Just("-1.5e3".to_owned()),
            Just("true".to_owned()),
            Just("null".to_owned()),
            "\"([a-zé\u{2028}\u{feff} ]|\\\\[\"\\\\/bfnrtx]|\\\\u00[0-9a-f]{2}|\\\\ud83d\\\\ude00|\t){0,6}\"",
        ];
        prop::collection::vec(piece, 0..40).prop_map(|p| p.concat())
    }

    /// JSON documents with stray whitespace, keys and strings escaped or not.
    fn document() -> impl Strategy<Value = String> {
        let string = r#""([a-zé  ]|\\["\\/bfnrt]|\\u00[0-9a-f]{2}){0,5}""#;
        let leaf = prop_oneof![
            Just("null".to_owned()),
            Just("-0.5".to_owned()),
            Just("12".to_owned()),
            Just("true".to_owned()),
            string,
        ];
        leaf.prop_recursive(4, 40, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5)
                    .prop_map(|items| format!("[\n  {}\n]", items.join(" ,\n  "))),
                prop::collection::vec(inner, 0..5).prop_map(|values| {
                    let members: Vec<String> = values
                        .iter()
                        .enumerate()
                        .map(|(i, v)| format!("\"k\\u003{i}\" : {v}"))
                        .collect();
                    format!("{{\t{}\r\n}}", members.join(",\n "))
                }),
            ]
        })
    }

    proptest! {
        #[test]
        fn writes_what_the_stream_writes_on_random_texts(text in jsonish()) {
            same_as_the_stream(&text);
        }

        #[test]
        fn writes_what_the_stream_writes_on_random_documents(text in document()) {
            prop_assert!(streamed(&text).is_some(), "{text:?}");
            same_as_the_stream(&text);
        }
    }
}
