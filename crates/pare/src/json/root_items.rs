//! The items of a top-level JSON array as its bytes arrive: where each complete item ends,
//! so the items read so far can be shaped and sent before the array is whole.
//!
//! Why: a proxy holding a 50 MB array until its last byte makes the client wait for all of
//! it. The items of a root array are independent for the ops the parser does (drops by
//! key, prunes), so the items that have arrived can be written at once
//! ([`crate::respond::Incremental`]).
//!
//! This only finds boundaries: strings (with their escapes) and the nesting of brackets,
//! at the root array's level the commas between items and the closing `]`. It checks what
//! it reads there (a `,` or `]` after each item, nothing but whitespace after the array);
//! what is inside an item is checked by the parser that reads it.
//!
//! ```text
//! pushed:  `[{"a":[1,`   `2]}, 3, "x`   `,y"]`
//! items:   —             `{"a":[1,2]}`, `3`   `"x,y"`, end
//! ```

use super::parse::JsonError;
use super::parse::JsonErrorKind;

/// Where the scan is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    /// Before the root value (a byte order mark and whitespace may come first).
    Start,
    /// Inside the root array, before an item (just after `[` or a `,`); `first`: just
    /// after `[`, where `]` may close an empty array.
    BeforeItem { first: bool },
    /// Inside an item: `depth` brackets open within it; in a string, after a `\`.
    InItem {
        depth: usize,
        string: bool,
        escaped: bool,
    },
    /// After an item, before its `,` or the closing `]`.
    AfterItem,
    /// After the closing `]`: only whitespace may follow.
    End,
}

/// What the root value turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Root {
    /// Not seen yet (only whitespace so far).
    Unknown,
    /// An array: its items can be read as they arrive.
    Array,
    /// Something else (an object, a scalar, or not JSON): the text must be read whole.
    Other,
}

/// What the value a text holds is, from its first bytes (a byte order mark and whitespace
/// may come first), and the offset of its first byte (the text's length while unknown).
pub(crate) fn root_start(text: &[u8]) -> (Root, usize) {
    const BOM: &[u8] = "\u{feff}".as_bytes();
    if text.len() < BOM.len() && BOM.starts_with(text) {
        // Perhaps a byte order mark, not whole yet.
        return (Root::Unknown, text.len());
    }
    let skip = if text.starts_with(BOM) { BOM.len() } else { 0 };
    match text[skip..]
        .iter()
        .position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    {
        None => (Root::Unknown, text.len()),
        Some(i) if text[skip + i] == b'[' => (Root::Array, skip + i),
        Some(i) => (Root::Other, skip + i),
    }
}

/// The bytes pushed so far and the items found in them.
#[derive(Debug)]
pub(crate) struct RootItems {
    text: Vec<u8>,
    pos: usize,
    at: At,
    root: Root,
    /// Where the current item began (its first byte).
    item_start: usize,
    /// The start of the first item not yet taken, and the end of the last complete one.
    taken_to: Option<usize>,
    complete_to: Option<usize>,
}

impl Default for RootItems {
    fn default() -> RootItems {
        RootItems::new()
    }
}

impl RootItems {
    pub(crate) fn new() -> RootItems {
        RootItems {
            text: Vec::new(),
            pos: 0,
            at: At::Start,
            root: Root::Unknown,
            item_start: 0,
            taken_to: None,
            complete_to: None,
        }
    }

    /// Room for `bytes` more of the text (a door that knows the length makes it once).
    pub(crate) fn reserve(&mut self, bytes: usize) {
        self.text.reserve_exact(bytes);
    }

    /// Everything pushed so far.
    pub(crate) fn text(&self) -> &[u8] {
        &self.text
    }

    /// Everything pushed, for a caller that reads it whole after all.
    pub(crate) fn into_text(self) -> Vec<u8> {
        self.text
    }

    pub(crate) fn root(&self) -> Root {
        self.root
    }

    /// Add bytes and scan them; an error where the array's own punctuation is wrong.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Result<(), JsonError> {
        self.text.extend_from_slice(bytes);
        self.scan()
    }

    /// The complete items not taken before: the byte range from the first's start to the
    /// last's end (with the commas and whitespace between them), if any.
    pub(crate) fn take(&mut self) -> Option<std::ops::Range<usize>> {
        let (from, to) = (self.taken_to?, self.complete_to?);
        // An item begun after the last complete one is the first of the next range.
        self.taken_to = matches!(self.at, At::InItem { .. }).then_some(self.item_start);
        self.complete_to = None;
        Some(from..to)
    }

    /// Whether the array closed, with nothing but whitespace after it; an error saying
    /// where the text ended otherwise.
    pub(crate) fn finish(&self) -> Result<(), JsonError> {
        match self.at {
            At::End => Ok(()),
            // A number at the very end, before its `]`, is still an item in progress.
            _ => Err(self.error(
                self.text.len(),
                "the text ended before the array closed",
                JsonErrorKind::UnexpectedEnd,
            )),
        }
    }

    fn scan(&mut self) -> Result<(), JsonError> {
        // The text is out of `self` while the scan notes what it finds there.
        let bytes = std::mem::take(&mut self.text);
        let fault = self.scan_in(&bytes);
        self.text = bytes;
        match fault {
            None => Ok(()),
            Some((offset, message, kind)) => Err(self.error(offset, message, kind)),
        }
    }

    /// [`RootItems::scan`] over `bytes` (the text): a fault's offset, message and kind.
    fn scan_in(&mut self, bytes: &[u8]) -> Option<(usize, &'static str, JsonErrorKind)> {
        let mut i = self.pos;
        let mut at = self.at;
        while i < bytes.len() {
            let b = bytes[i];
            match at {
                At::Start => {
                    let (root, first) = root_start(bytes);
                    self.root = root;
                    match root {
                        // Only whitespace (or part of a byte order mark) so far.
                        Root::Unknown => i = bytes.len(),
                        Root::Other => {
                            self.pos = first;
                            self.at = at;
                            return None;
                        }
                        Root::Array => {
                            i = first + 1;
                            at = At::BeforeItem { first: true };
                        }
                    }
                    continue;
                }
                At::BeforeItem { first } => match b {
                    b' ' | b'\t' | b'\n' | b'\r' => {}
                    b']' if first => at = At::End,
                    _ => {
                        self.item_start = i;
                        if self.taken_to.is_none() {
                            self.taken_to = Some(i);
                        }
                        at = At::InItem {
                            depth: usize::from(matches!(b, b'[' | b'{')),
                            string: b == b'"',
                            escaped: false,
                        };
                        if !matches!(b, b'[' | b'{' | b'"') {
                            // A number or a literal: it ends at a delimiter.
                            at = At::InItem {
                                depth: 0,
                                string: false,
                                escaped: false,
                            };
                        }
                    }
                },
                At::InItem {
                    depth,
                    string,
                    escaped,
                } => {
                    if string {
                        // Skip to the next quote or backslash at once: most of an item is
                        // string content.
                        if escaped {
                            at = At::InItem {
                                depth,
                                string,
                                escaped: false,
                            };
                        } else if b == b'\\' {
                            at = At::InItem {
                                depth,
                                string,
                                escaped: true,
                            };
                        } else if b == b'"' {
                            at = At::InItem {
                                depth,
                                string: false,
                                escaped: false,
                            };
                            if depth == 0 {
                                self.complete(i + 1);
                                at = At::AfterItem;
                            }
                        } else if let Some(n) =
                            bytes[i..].iter().position(|&c| c == b'"' || c == b'\\')
                        {
                            i += n;
                            continue;
                        } else {
                            i = bytes.len();
                            continue;
                        }
                    } else if depth == 0 {
                        // A scalar: a number or a literal, up to a delimiter.
                        match b {
                            b',' | b']' | b' ' | b'\t' | b'\n' | b'\r' | b'[' | b'{' | b'"'
                            | b'}' => {
                                self.complete(i);
                                at = At::AfterItem;
                                continue;
                            }
                            _ => {}
                        }
                    } else {
                        match b {
                            b'"' => {
                                at = At::InItem {
                                    depth,
                                    string: true,
                                    escaped: false,
                                }
                            }
                            b'[' | b'{' => {
                                at = At::InItem {
                                    depth: depth + 1,
                                    string: false,
                                    escaped: false,
                                }
                            }
                            b']' | b'}' => {
                                if depth == 1 {
                                    self.complete(i + 1);
                                    at = At::AfterItem;
                                } else {
                                    at = At::InItem {
                                        depth: depth - 1,
                                        string: false,
                                        escaped: false,
                                    }
                                }
                            }
                            _ => {}
                        }
                    }
                }
                At::AfterItem => match b {
                    b' ' | b'\t' | b'\n' | b'\r' => {}
                    b',' => at = At::BeforeItem { first: false },
                    b']' => at = At::End,
                    _ => {
                        self.pos = i;
                        self.at = at;
                        return Some((
                            i,
                            "expected ',' or ']' after an array item",
                            JsonErrorKind::Syntax,
                        ));
                    }
                },
                At::End => match b {
                    b' ' | b'\t' | b'\n' | b'\r' => {}
                    _ => {
                        self.pos = i;
                        self.at = at;
                        return Some((
                            i,
                            "unexpected characters after the JSON value",
                            JsonErrorKind::TrailingCharacters,
                        ));
                    }
                },
            }
            i += 1;
        }
        self.pos = i.min(bytes.len());
        self.at = at;
        None
    }

    fn complete(&mut self, end: usize) {
        self.complete_to = Some(end);
    }

    /// An error at byte `offset` of the text, its line and column counted.
    pub(crate) fn error(&self, offset: usize, message: &str, kind: JsonErrorKind) -> JsonError {
        let text = String::from_utf8_lossy(&self.text[..offset.min(self.text.len())]);
        let (line, column) = super::parse::line_column(&text, text.len());
        JsonError {
            line,
            column,
            offset,
            message: message.to_owned(),
            kind,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(chunks: &[&str]) -> (Vec<String>, Result<(), JsonError>) {
        let mut r = RootItems::new();
        let mut out = Vec::new();
        for c in chunks {
            if let Err(e) = r.push(c.as_bytes()) {
                return (out, Err(e));
            }
            if let Some(range) = r.take() {
                out.push(String::from_utf8(r.text()[range].to_vec()).unwrap());
            }
        }
        (out, r.finish())
    }

    #[test]
    fn items_are_found_across_chunk_boundaries() {
        let (out, end) = items(&["[{\"a\":[1,", "2]}, 3, \"x", ",y\"]"]);
        assert_eq!(out, ["{\"a\":[1,2]}, 3", "\"x,y\""]);
        assert!(end.is_ok());
    }

    #[test]
    fn an_item_begun_before_a_take_is_in_the_next_range() {
        let (out, end) = items(&["[1, {\"a\"", ":2}]"]);
        assert_eq!(out, ["1", "{\"a\":2}"]);
        assert!(end.is_ok());
    }

    #[test]
    fn a_number_at_a_chunks_end_waits_for_its_delimiter() {
        let (out, end) = items(&["[12", "34", "]"]);
        assert_eq!(out, ["1234"]);
        assert!(end.is_ok());
    }

    #[test]
    fn escaped_quotes_and_brackets_in_strings_do_not_end_items() {
        let (out, end) = items(&["[\"a\\\"]\", {\"b\":\"}\\\\\"}", "]"]);
        assert_eq!(out, ["\"a\\\"]\", {\"b\":\"}\\\\\"}"]);
        assert!(end.is_ok());
    }

    #[test]
    fn an_object_root_is_other_and_an_empty_array_ends() {
        let mut r = RootItems::new();
        r.push(b"  {\"a\":1}").unwrap();
        assert_eq!(r.root(), Root::Other);
        let (out, end) = items(&["\u{feff} [ ", " ] \n"]);
        assert!(out.is_empty());
        assert!(end.is_ok());
    }

    #[test]
    fn a_byte_order_mark_split_across_chunks_is_skipped() {
        let bom = "\u{feff}".as_bytes();
        let mut r = RootItems::new();
        r.push(&bom[..1]).unwrap();
        assert_eq!(r.root(), Root::Unknown);
        r.push(&bom[1..]).unwrap();
        r.push(b"[1]").unwrap();
        assert_eq!(r.root(), Root::Array);
        assert!(r.finish().is_ok());
    }

    #[test]
    fn punctuation_faults_name_their_place() {
        let (_, end) = items(&["[1,\n 2 3]"]);
        let e = end.unwrap_err();
        assert_eq!((e.line, e.column), (2, 4), "{e}");
        let (_, end) = items(&["[1] x"]);
        assert_eq!(end.unwrap_err().kind, JsonErrorKind::TrailingCharacters);
        let (_, end) = items(&["[1, 2"]);
        assert_eq!(end.unwrap_err().kind, JsonErrorKind::UnexpectedEnd);
    }
}
