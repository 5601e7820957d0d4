//! `structuredContent` beside a result's text: whether it is the same value (a "dual emit").
//!
//! Why: the MCP spec asks a tool that returns `structuredContent` to send its JSON as text
//! too, and every SDK does (the TypeScript servers write `JSON.stringify(output)` beside
//! `output`; the Python SDK and FastMCP wrap a returned `str` or `list` as
//! `{"result": …}` beside the text items). A client that shows both to the model pays for
//! the value twice, and a budget that counts only the text is void. When the two are the
//! same value, pare sends it once, as the shaped text ([`crate::mcp::result`]).
//!
//! The comparison reads both JSON texts token by token, with no tree: strings compare by
//! what they decode to, numbers by their spelling (`1` is not `1.0`: when in doubt, the
//! values differ and nothing is dropped), objects in member order.
//!
//! ```
//! use pare::mcp::structured::same_value;
//! assert!(same_value(r#"{"a": [1, "é"]}"#, &["{\n  \"a\": [1, \"\\u00e9\"]\n}"]));
//! // FastMCP's wrapped `str` result, and the Python SDK's wrapped list of items.
//! assert!(same_value(r#"{"result":"hello"}"#, &["hello"]));
//! assert!(same_value(r#"{"result":[{"id":1},"two"]}"#, &[r#"{"id": 1}"#, "two"]));
//! assert!(!same_value(r#"{"a":1.0}"#, &[r#"{"a":1}"#]));
//! ```

/// Whether the JSON text `structured` is the value the text items `texts` carry: the one
/// item's value, or the list of the items' values (an item that is not JSON stands for the
/// string it is), either as it is or wrapped in an object of one member named as an SDK
/// names it (`WRAPPERS`).
///
/// `structured` must be JSON (the doors pass the server's, read as strict JSON, or one they
/// wrote): one item with the same tokens is then JSON too, and that, the common case, is
/// settled without checking the item on its own first.
pub fn same_value(structured: &str, texts: &[&str]) -> bool {
    if texts.is_empty() {
        return false;
    }
    if let [text] = texts
        && equal(
            Lexer::new(structured),
            Content::new(&[Item::Json(text)], false),
        )
    {
        return true;
    }
    let items: Vec<Item> = texts.iter().map(|t| Item::of(t)).collect();
    let several = items.len() > 1;
    // One item is its value, or (wrapped: the Python SDK's list of one) a list of it.
    equal(Lexer::new(structured), Content::new(&items, several))
        || wrapped(structured, &items, several)
        || (!several && wrapped(structured, &items, true))
}

/// The member names SDKs wrap a text result's value in: the Python SDK and FastMCP
/// (`result`), the reference filesystem server (`content`). Another name may mean something
/// the text does not say, so the value is then not the same.
pub(crate) const WRAPPERS: [&str; 3] = ["result", "content", "text"];

/// `{"result": V}` (a name of [`WRAPPERS`]) where V is the content's value.
fn wrapped(structured: &str, items: &[Item], as_list: bool) -> bool {
    let mut s = Lexer::new(structured);
    if !matches!(s.next(), Some(Tok::Punct(b'{')))
        || !matches!(s.next(), Some(Tok::Str(k)) if decoded(k).is_some_and(|k| WRAPPERS.contains(&k.as_str())))
        || !matches!(s.next(), Some(Tok::Punct(b':')))
    {
        return false;
    }
    let mut content = Content::new(items, as_list);
    for want in content.by_ref() {
        match s.next() {
            Some(got) if same_token(&got, &want) => {}
            _ => return false,
        }
    }
    matches!(s.next(), Some(Tok::Punct(b'}')))
        && s.next().is_none()
        && !s.failed
        && !content.failed()
}

/// Two token streams, the same tokens to their ends, neither malformed.
fn equal(mut a: Lexer, mut b: Content) -> bool {
    loop {
        match (a.next(), b.next()) {
            (None, None) => return !a.failed && !b.failed(),
            (Some(x), Some(y)) if same_token(&x, &y) => {}
            _ => return false,
        }
    }
}

/// Whether `text` is one JSON value (checked, not built).
pub(crate) fn is_json_text(text: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

/// One text item: JSON text, or a string (a text that is not JSON stands for itself).
enum Item<'a> {
    Json(&'a str),
    Text(&'a str),
}

impl<'a> Item<'a> {
    fn of(text: &'a str) -> Item<'a> {
        if is_json_text(text) {
            Item::Json(text)
        } else {
            Item::Text(text)
        }
    }
}

/// The content's tokens: one item's, or `[`, the items' separated by `,`, `]`.
struct Content<'i, 'a> {
    items: &'i [Item<'a>],
    as_list: bool,
    /// The next item to start, and the lexer of the one being read.
    at: usize,
    current: Option<Lexer<'a>>,
    started: bool,
    ended: bool,
    failed: bool,
}

impl<'i, 'a> Content<'i, 'a> {
    fn new(items: &'i [Item<'a>], as_list: bool) -> Self {
        Content {
            items,
            as_list,
            at: 0,
            current: None,
            started: false,
            ended: false,
            failed: false,
        }
    }

    fn failed(&self) -> bool {
        self.failed || self.current.as_ref().is_some_and(|l| l.failed)
    }
}

impl<'a> Iterator for Content<'_, 'a> {
    type Item = Tok<'a>;

    fn next(&mut self) -> Option<Tok<'a>> {
        if self.as_list && !self.started {
            self.started = true;
            return Some(Tok::Punct(b'['));
        }
        loop {
            if let Some(lexer) = &mut self.current {
                if let Some(t) = lexer.next() {
                    return Some(t);
                }
                self.failed |= lexer.failed;
                self.current = None;
            }
            if self.at == self.items.len() {
                if self.as_list && !self.ended {
                    self.ended = true;
                    return Some(Tok::Punct(b']'));
                }
                return None;
            }
            self.current = Some(match self.items[self.at] {
                Item::Json(text) => Lexer::new(text),
                Item::Text(text) => Lexer::text(text),
            });
            self.at += 1;
            if self.as_list && self.at > 1 {
                return Some(Tok::Punct(b','));
            }
        }
    }
}

/// A JSON token.
#[derive(Debug, Clone, Copy)]
enum Tok<'a> {
    /// `{ } [ ] : ,`
    Punct(u8),
    /// A string as written, quotes included.
    Str(&'a str),
    /// A number, `true`, `false` or `null`, as written.
    Lit(&'a str),
    /// A string by its value (a text item that is not JSON).
    Text(&'a str),
}

fn same_token(a: &Tok, b: &Tok) -> bool {
    match (a, b) {
        (Tok::Punct(x), Tok::Punct(y)) => x == y,
        (Tok::Lit(x), Tok::Lit(y)) => x == y,
        (Tok::Str(x), Tok::Str(y)) => x == y || decoded(x).is_some_and(|d| decoded(y) == Some(d)),
        (Tok::Str(s), Tok::Text(t)) | (Tok::Text(t), Tok::Str(s)) => {
            let inner = &s[1..s.len() - 1];
            if inner.contains('\\') {
                decoded(s).is_some_and(|d| d == *t)
            } else {
                // Without escapes the string is its bytes (a control character would have
                // had to be escaped: such a text is not the string).
                inner == *t && !t.bytes().any(|b| b < 0x20)
            }
        }
        (Tok::Text(x), Tok::Text(y)) => x == y,
        _ => false,
    }
}

fn decoded(s: &str) -> Option<String> {
    serde_json::from_str(s).ok()
}

/// JSON tokens of a text, whitespace skipped. Lexing only: a text whose tokens equal those
/// of strict JSON is strict JSON itself, as long as each token is well formed, which the
/// lexer checks for numbers and literals loosely and `same_token` settles for strings.
struct Lexer<'a> {
    text: &'a str,
    at: usize,
    /// A single text item: yields [`Tok::Text`] once.
    whole: bool,
    failed: bool,
}

impl<'a> Lexer<'a> {
    fn new(text: &'a str) -> Self {
        Lexer {
            text,
            at: 0,
            whole: false,
            failed: false,
        }
    }

    fn text(text: &'a str) -> Self {
        Lexer {
            text,
            at: 0,
            whole: true,
            failed: false,
        }
    }

    fn fail(&mut self) -> Option<Tok<'a>> {
        self.failed = true;
        self.at = self.text.len();
        None
    }
}

impl<'a> Iterator for Lexer<'a> {
    type Item = Tok<'a>;

    fn next(&mut self) -> Option<Tok<'a>> {
        if self.whole {
            if self.at == 0 {
                self.at = 1;
                return Some(Tok::Text(self.text));
            }
            return None;
        }
        let bytes = self.text.as_bytes();
        while self.at < bytes.len() && matches!(bytes[self.at], b' ' | b'\t' | b'\n' | b'\r') {
            self.at += 1;
        }
        let start = self.at;
        let &b = bytes.get(start)?;
        match b {
            b'{' | b'}' | b'[' | b']' | b':' | b',' => {
                self.at += 1;
                Some(Tok::Punct(b))
            }
            b'"' => {
                let mut i = start + 1;
                loop {
                    match bytes.get(i) {
                        None => return self.fail(),
                        Some(b'"') => break,
                        Some(b'\\') => i += 2,
                        Some(_) => i += 1,
                    }
                }
                self.at = i + 1;
                Some(Tok::Str(&self.text[start..=i]))
            }
            b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => {
                let mut i = start;
                while i < bytes.len()
                    && matches!(bytes[i], b'-' | b'+' | b'.' | b'0'..=b'9' | b'a'..=b'z' | b'E')
                {
                    i += 1;
                }
                self.at = i;
                Some(Tok::Lit(&self.text[start..i]))
            }
            _ => self.fail(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::{Value as Json, json};

    #[test]
    fn the_same_value_however_it_is_written() {
        let value = json!({"entities": [{"name": "a\"b", "n": 1, "x": null, "t": true}], "é": []});
        let pretty = serde_json::to_string_pretty(&value).unwrap();
        let compact = serde_json::to_string(&value).unwrap();
        assert!(same_value(&compact, &[&pretty]));
        assert!(same_value(&pretty, &[&compact]));
        let escaped = compact.replace('é', "\\u00e9");
        assert!(same_value(&escaped, &[&compact]));
    }

    #[test]
    fn different_values_are_different() {
        for (s, t) in [
            (r#"{"a":1}"#, r#"{"a":2}"#),
            (r#"{"a":1}"#, r#"{"b":1}"#),
            (r#"{"a":1,"b":2}"#, r#"{"b":2,"a":1}"#),
            (r#"[1,2]"#, r#"[1,2,3]"#),
            (r#"{"a":[1]}"#, r#"{"a":[1]"#),
            (r#""x""#, r#""y""#),
            (r#"{"result":"x"}"#, "y"),
            (r#"{"result":"x","more":1}"#, "x"),
            (r#"{"count":5}"#, "5"),
            (r#"{"a":1e2}"#, r#"{"a":100}"#),
        ] {
            assert!(!same_value(s, &[t]), "{s} vs {t}");
        }
    }

    #[test]
    fn wrapped_and_listed_items() {
        assert!(same_value(r#"{"result": "plain words"}"#, &["plain words"]));
        assert!(same_value(r#"{"content":"line\none\n"}"#, &["line\none\n"]));
        assert!(same_value(r#""plain""#, &["plain"]));
        assert!(same_value(
            r#"{"result":["k1","k2","k3"]}"#,
            &["k1", "k2", "k3"]
        ));
        assert!(same_value(
            r#"["k1",{"a":1},"k3"]"#,
            &["k1", "{\"a\": 1}", "k3"]
        ));
        assert!(same_value(r#"{"result":[{"a":1}]}"#, &["{\"a\":1}"]));
        assert!(!same_value(
            r#"{"result":["k1","k2"]}"#,
            &["k1", "k2", "k3"]
        ));
        assert!(!same_value(
            r#"{"result":["k1","k2","k3"]}"#,
            &["k1", "k3", "k2"]
        ));
        // A control character in a text item is not the escaped one's raw form.
        assert!(same_value(r#"{"result":"a\u0001b"}"#, &["a\u{1}b"]));
        assert!(!same_value(r#"{"result":"a\u0001b"}"#, &["a\\u0001b"]));
        assert!(!same_value("{}", &[]));
    }

    fn value() -> impl Strategy<Value = Json> {
        let leaf = prop_oneof![
            Just(Json::Null),
            any::<bool>().prop_map(Json::Bool),
            any::<i32>().prop_map(|n| json!(n)),
            "[a-z\"\\\\é\n\u{1}]{0,6}".prop_map(Json::String),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Json::Array),
                prop::collection::vec(("[a-c]{1,2}", inner), 0..4)
                    .prop_map(|m| Json::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Said equal only when serde_json reads the two as equal values; always equal to
        /// itself written another way.
        #[test]
        fn same_value_agrees_with_serde(a in value(), b in value()) {
            let (ta, tb) = (serde_json::to_string(&a).unwrap(), serde_json::to_string_pretty(&b).unwrap());
            if same_value(&ta, &[&tb]) {
                let unwrapped = a.as_object().filter(|m| m.len() == 1).and_then(|m| {
                    m.iter().find(|(k, _)| WRAPPERS.contains(&k.as_str())).map(|(_, v)| v)
                });
                prop_assert!(a == b || unwrapped == Some(&b), "{} vs {}", ta, tb);
            }
            prop_assert!(same_value(&ta, &[&serde_json::to_string_pretty(&a).unwrap()]));
            let wrapped = json!({"result": a.clone()}).to_string();
            prop_assert!(same_value(&wrapped, &[&ta]));
        }
    }
}
