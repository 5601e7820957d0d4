//! How well each item of a list answers the caller's question: Okapi BM25 over the items'
//! text, with terms cut the way code and prose are searched (identifiers split at
//! `camelCase` and `snake_case`, lower case, a light English stemmer, common words dropped).
//!
//! Why: everything pare cuts, it used to cut blind to what was asked. With a query, `pack`
//! ranks chunks by relevance blended with the upstream score, so the chunk that answers the
//! question is the one shown in full even when the search engine ranked it 35th.
//! Deterministic (no model, no network): the same items and query give the same scores.
//!
//! ```
//! use pare::relevance::Relevance;
//! let docs = ["fn parse_header(line: &str) -> Header", "fn write_body(out: &mut Vec<u8>)"];
//! let r = Relevance::score("how are headers parsed", &docs);
//! assert!(r.scores[0] > 0.0 && r.scores[1] == 0.0);
//! assert_eq!(r.matched, ["headers", "parsed"]);
//! assert!(r.unmatched.is_empty());
//! ```

use std::collections::{HashMap, HashSet};

/// BM25's term-frequency saturation.
const K1: f64 = 1.2;
/// BM25's length normalisation.
const B: f64 = 0.75;

/// Words a question is made of that say nothing about what it asks for.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "how",
    "i", "if", "in", "is", "it", "of", "on", "or", "that", "the", "this", "to", "what", "when",
    "where", "which", "who", "why", "with",
];

/// The items' scores for a query, and which of its words any item has.
#[derive(Debug, Clone, PartialEq)]
pub struct Relevance {
    /// One BM25 score per item, in the items' order; 0 for an item with none of the terms.
    pub scores: Vec<f64>,
    /// The query's words (as written, lower case) that some item has, in the query's order.
    pub matched: Vec<String>,
    /// The query's words no item has.
    pub unmatched: Vec<String>,
}

impl Relevance {
    /// Score `docs` against `query`.
    pub fn score<S: AsRef<str>>(query: &str, docs: &[S]) -> Relevance {
        let words = query_words(query);
        let docs_terms: Vec<HashMap<String, usize>> = docs
            .iter()
            .map(|d| {
                let mut tf = HashMap::new();
                for t in terms(d.as_ref()) {
                    *tf.entry(t).or_insert(0) += 1;
                }
                tf
            })
            .collect();
        let lengths: Vec<usize> = docs_terms.iter().map(|tf| tf.values().sum()).collect();
        let n = docs.len() as f64;
        let avg = if docs.is_empty() {
            0.0
        } else {
            lengths.iter().sum::<usize>() as f64 / n
        };
        let mut scores = vec![0.0; docs.len()];
        let (mut matched, mut unmatched) = (Vec::new(), Vec::new());
        let mut seen_terms: HashSet<&str> = HashSet::new();
        for (word, word_terms) in &words {
            let mut any = false;
            for term in word_terms {
                let df = docs_terms.iter().filter(|tf| tf.contains_key(term)).count();
                if df == 0 {
                    continue;
                }
                any = true;
                // A term two words share (`parse`, `parsing`) counts once.
                if !seen_terms.insert(term) {
                    continue;
                }
                let idf = ((n - df as f64 + 0.5) / (df as f64 + 0.5) + 1.0).ln();
                for (i, tf) in docs_terms.iter().enumerate() {
                    if let Some(&f) = tf.get(term) {
                        let f = f as f64;
                        let norm = if avg > 0.0 {
                            1.0 - B + B * lengths[i] as f64 / avg
                        } else {
                            1.0
                        };
                        scores[i] += idf * f * (K1 + 1.0) / (f + K1 * norm);
                    }
                }
            }
            if any {
                matched.push(word.clone());
            } else {
                unmatched.push(word.clone());
            }
        }
        Relevance {
            scores,
            matched,
            unmatched,
        }
    }
}

/// The query's words that are not stop words, each with the terms it stands for; repeated
/// words once.
fn query_words(query: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let mut seen = HashSet::new();
    for word in query.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        let lower = word.to_lowercase();
        if lower.is_empty() || STOP_WORDS.contains(&lower.as_str()) {
            continue;
        }
        if !seen.insert(lower.clone()) {
            continue;
        }
        let t = terms(word);
        if !t.is_empty() {
            out.push((lower, t));
        }
    }
    out
}

/// The terms of a text: each word (runs of letters, digits and `_`) lower-cased and
/// stemmed, and, for an identifier, its parts too (`parseHeader` → `parseheader`, `pars`,
/// `header`; `max_gap` → `max_gap`, `max`, `gap`). Stop words and one-letter terms go.
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        if word.is_empty() {
            continue;
        }
        let parts = parts(word);
        if parts.len() > 1 {
            push(&mut out, &word.to_lowercase());
        }
        for p in parts {
            push(&mut out, &p);
        }
    }
    out
}

fn push(out: &mut Vec<String>, word: &str) {
    if word.chars().count() < 2 || STOP_WORDS.contains(&word) {
        return;
    }
    out.push(stem(word));
}

/// An identifier's parts, lower case: split at `_`, at a lower-to-upper change and before
/// the last capital of a run of them (`HTTPServer` → `http`, `server`), and between letters
/// and digits.
fn parts(word: &str) -> Vec<String> {
    let chars: Vec<char> = word.chars().collect();
    let mut parts = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c == '_' {
            if !cur.is_empty() {
                parts.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if let Some(&prev) = i.checked_sub(1).and_then(|j| chars.get(j)) {
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            let boundary = (prev.is_lowercase() && c.is_uppercase())
                || (prev.is_uppercase() && c.is_uppercase() && next_lower)
                || (prev.is_alphabetic() && c.is_numeric())
                || (prev.is_numeric() && c.is_alphabetic());
            if boundary && !cur.is_empty() {
                parts.push(std::mem::take(&mut cur));
            }
        }
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        parts.push(cur);
    }
    parts
}

/// A light English stemmer, in three steps each taken once: a plural (`queries` → `query`,
/// `headers` → `header`), then `-ing`, `-ed` or `-er`, then a final `e`. So `parse`,
/// `parses`, `parsing`, `parsed` and `parser` all give `pars`, and `header(s)` `head`. Only
/// endings that leave three letters or more.
fn stem(word: &str) -> String {
    let long_enough = |rest: &str| rest.chars().count() >= 3;
    let mut w = word.to_owned();
    if let Some(rest) = w.strip_suffix("ies").filter(|r| long_enough(r)) {
        w = format!("{rest}y");
    } else if let Some(rest) = w.strip_suffix("sses") {
        w = format!("{rest}ss");
    } else if let Some(rest) = w
        .strip_suffix('s')
        .filter(|r| long_enough(r) && !["s", "u", "i"].iter().any(|e| r.ends_with(e)))
    {
        w = rest.to_owned();
    }
    for suffix in ["ing", "ed", "er"] {
        if let Some(rest) = w.strip_suffix(suffix).filter(|r| long_enough(r)) {
            w = rest.to_owned();
            break;
        }
    }
    if let Some(rest) = w.strip_suffix('e').filter(|r| long_enough(r)) {
        w = rest.to_owned();
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_split_into_their_parts() {
        assert_eq!(parts("parseHTTPHeader2"), ["parse", "http", "header", "2"]);
        assert_eq!(parts("max_gap_minutes"), ["max", "gap", "minutes"]);
        assert_eq!(terms("fn parseHeader"), ["fn", "parsehead", "pars", "head"]);
    }

    #[test]
    fn the_stemmer_joins_forms_of_a_word() {
        for w in ["parse", "parsing", "parsed", "parses", "parser"] {
            assert_eq!(stem(w), "pars", "{w}");
        }
        assert_eq!(stem("queries"), "query");
        assert_eq!(stem("headers"), stem("header"));
        assert_eq!(stem("class"), "class");
        assert_eq!(stem("status"), "status");
        assert_eq!(stem("is"), "is");
    }

    #[test]
    fn rarer_terms_weigh_more_and_longer_items_less() {
        let docs = [
            "retry the request",
            "retry backoff with jitter",
            "the request and the request and the response",
        ];
        let r = Relevance::score("jitter request", &docs);
        // `jitter` is in one item, `request` in two: the item with `jitter` wins.
        assert!(r.scores[1] > r.scores[0] && r.scores[1] > r.scores[2]);
    }

    #[test]
    fn query_analysis_names_matched_and_unmatched_words() {
        let r = Relevance::score("What does the Tokenizer cache?", &["token cache", "other"]);
        assert_eq!(r.matched, ["cache"]);
        assert_eq!(r.unmatched, ["tokenizer"]);
        let none = Relevance::score("the of", &["x"]);
        assert!(none.matched.is_empty() && none.scores == [0.0]);
    }

    /// A question of 20,000 distinct words took seconds (2 s in `pack`, 12.7 s through a
    /// budgeted `shape`): each word was looked for in a list of the words and terms before
    /// it. Sets now; this pins the answer on such a question (the time is the bench's).
    #[test]
    fn regression_a_long_question_was_quadratic_in_its_words() {
        let query: String = (0..20_000).map(|i| format!("w{i}x ")).collect();
        let docs = ["w5x w7x", "nothing"];
        let r = Relevance::score(&query, &docs);
        assert_eq!(r.matched, ["w5x", "w7x"]);
        assert_eq!(r.unmatched.len(), 19_998);
    }

    #[test]
    fn no_items_no_scores() {
        let r = Relevance::score("anything", &[] as &[&str]);
        assert!(r.scores.is_empty());
        assert_eq!(r.unmatched, ["anything"]);
    }
}
