//! Whether a TOON or dialect text reads back as the value it was written from, with the
//! answers for the last few documents remembered.
//!
//! Why: `auto` takes a TOON or dialect candidate only if [`toon::decode`] gives back exactly
//! the value, and that decode was a quarter of a millisecond of `pare mcp`'s added latency on
//! the memory server's 120 KB `read_graph`, which a long-lived door sees again and again
//! (a graph read again, a list polled). The check is a function of the two texts alone, so
//! its answer for a pair seen before is the answer.
//!
//! Exact, not by hash: an entry keeps both texts, the candidate and the value's compact JSON
//! (which is one text per value: [`crate::json::write`] writes each value one way), and a
//! hit compares them byte for byte — a few microseconds against the decode's hundreds.
//!
//! ```text
//! reads_back("a: 1", "{\"a\":1}", &value)  decodes once; asked again, compares two texts
//! ```

use std::sync::Mutex;

use super::toon;
use crate::value::Value;

/// Documents whose answers are kept, the latest first.
const ENTRIES: usize = 4;
/// Texts longer than this (either of the two) are checked every time: a document that large
/// rarely comes again, and keeping it would hold its memory.
const UP_TO_BYTES: usize = 1 << 20;
/// Texts shorter than this are checked every time: the decode costs about what the lookup does.
const FROM_BYTES: usize = 4 << 10;

/// (candidate text, the value's compact JSON, whether the one reads back as the other)
type Entry = (String, String, bool);

static SEEN: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// Whether `text` reads back (by [`toon::decode`]) as exactly `value`, whose compact JSON is
/// `json`.
pub(crate) fn reads_back(text: &str, json: &str, value: &Value) -> bool {
    let kept = (FROM_BYTES..=UP_TO_BYTES).contains(&text.len()) && json.len() <= UP_TO_BYTES;
    if kept && let Some(answer) = remembered(text, json) {
        return answer;
    }
    let answer = decodes_to(text, value);
    if kept {
        remember(text, json, answer);
    }
    answer
}

/// The check itself.
fn decodes_to(text: &str, value: &Value) -> bool {
    toon::decode(text, &toon::DecodeOptions::default()).is_ok_and(|back| back == *value)
}

fn remembered(text: &str, json: &str) -> Option<bool> {
    let mut seen = SEEN.lock().unwrap_or_else(|p| p.into_inner());
    let at = seen.iter().position(|(t, j, _)| t == text && j == json)?;
    let entry = seen.remove(at);
    let answer = entry.2;
    seen.insert(0, entry);
    Some(answer)
}

fn remember(text: &str, json: &str, answer: bool) {
    let mut seen = SEEN.lock().unwrap_or_else(|p| p.into_inner());
    seen.truncate(ENTRIES - 1);
    seen.insert(0, (text.to_owned(), json.to_owned(), answer));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A text that does not read back is remembered as such, and one that does as such:
    /// the answer for a pair is the decode's, asked once or again.
    #[test]
    fn an_answer_remembered_is_the_decode_s() {
        let rows: Vec<String> = (0..1000)
            .map(|i| format!("{{\"id\":{i},\"k\":\"value\"}}"))
            .collect();
        let json = format!("{{\"rows\":[{}]}}", rows.join(","));
        let value = crate::json::parse(&json).unwrap();
        let good = toon::encode(&value, &toon::EncodeOptions::default());
        let bad = good.replace("999,value", "999,other");
        assert!(good.len() >= FROM_BYTES && bad != good, "{good}");
        for _ in 0..2 {
            assert!(reads_back(&good, &json, &value));
            assert!(!reads_back(&bad, &json, &value));
        }
        // The same text against another value is another pair.
        let other_json = json.replace("\"id\":999", "\"id\":998");
        let other = crate::json::parse(&other_json).unwrap();
        assert!(!reads_back(&good, &other_json, &other));
    }
}
