//! Splitting a shaped value into pages that each fit a token budget.
//!
//! **What a page is.** When the value is an array, a page is a consecutive run of its items.
//! When it is an object, a page is the object with each array member cut to a consecutive
//! run of its items, taking the arrays in member order (page 1 may end inside `entities`,
//! page 2 then carries the rest of `entities` and the start of `relations`); members that
//! are not arrays (and empty arrays) ride on page 1. So every page is itself a valid value
//! in the same format, readable alone, and concatenating the pages' arrays member by member
//! gives the whole. A value with no arrays at the top, or with one item too large for a
//! page, is split as text instead: at line ends where possible, else mid-line.
//!
//! Token counts are exact: `fit` (the budget's counter) on each rendered page; `tok` is the
//! tokenizer `auto` chooses its encodings by, as for the whole value.

use pare::Value;
use pare::encode::{Format, render};
use pare::tokens::Tokenizer;
use pare::value::Map;

/// The rendered texts of the pages, each at most `budget` tokens by `fit`. Always at least
/// one page.
pub fn paginate(
    value: &Value,
    format: Format,
    tok: &dyn Tokenizer,
    fit: &dyn Tokenizer,
    budget: usize,
) -> Vec<String> {
    let whole = render(value, format, tok);
    if fit.fits(&whole, budget) {
        return vec![whole];
    }
    let whole_tokens = fit.count(&whole);
    paginate_rendered(value, &whole, whole_tokens, format, tok, fit, budget)
}

/// [`paginate`] for a value already rendered: `whole` is `render(value, format, tok)` and
/// `whole_tokens` its count by `fit`, so neither is made again.
pub fn paginate_rendered(
    value: &Value,
    whole: &str,
    whole_tokens: usize,
    format: Format,
    tok: &dyn Tokenizer,
    fit: &dyn Tokenizer,
    budget: usize,
) -> Vec<String> {
    if whole_tokens <= budget {
        return vec![whole.to_owned()];
    }
    match by_items(value, whole_tokens, format, tok, fit, budget) {
        Some(pages) => pages,
        None => by_text(whole, fit, budget),
    }
}

/// Where an item of the flattened sequence lives: the index of its array among `arrays`,
/// and its index in that array.
type Slot = (usize, usize);

/// Pages of whole items, or `None` when the value has no top-level arrays or a single item
/// does not fit.
fn by_items(
    value: &Value,
    whole_tokens: usize,
    format: Format,
    tok: &dyn Tokenizer,
    fit: &dyn Tokenizer,
    budget: usize,
) -> Option<Vec<String>> {
    let arrays: Vec<&[Value]> = match value {
        Value::Array(items) => vec![items.as_slice()],
        Value::Object(map) => map
            .values()
            .filter_map(|v| v.as_array().filter(|a| !a.is_empty()).map(Vec::as_slice))
            .collect(),
        _ => return None,
    };
    let slots: Vec<Slot> = arrays
        .iter()
        .enumerate()
        .flat_map(|(a, items)| (0..items.len()).map(move |i| (a, i)))
        .collect();
    if slots.is_empty() {
        return None;
    }
    let page = |from: usize, to: usize| -> String {
        render(&page_value(value, &slots[from..to], from == 0), format, tok)
    };
    let total_tokens = whole_tokens.max(1);
    let mut pages = Vec::new();
    let mut from = 0;
    // The first guess is the average item size; later ones, the previous page's length.
    let mut guess = (slots.len() * budget / total_tokens).max(1);
    while from < slots.len() {
        let left = slots.len() - from;
        let one = page(from, from + 1);
        if !fit.fits(&one, budget) {
            return None;
        }
        // The largest run that fits: `lo` items are known to fit (with their text), `hi`
        // known not to. Steps scale the last count to the budget (items are usually of
        // similar size, so this lands in two or three renders), halving when that stalls.
        let (mut lo, mut lo_text, mut hi) = (1, one, left + 1);
        let mut k = guess;
        for round in 0.. {
            if lo + 1 >= hi {
                break;
            }
            k = if round < 4 { k } else { lo + (hi - lo) / 2 };
            k = k.clamp(lo + 1, hi - 1);
            let text = page(from, from + k);
            let count = fit.count(&text).max(1);
            if count <= budget {
                (lo, lo_text) = (k, text);
                k = (k * budget / count).max(k + 1);
            } else {
                hi = k;
                k = (k * budget / count).min(k - 1);
            }
        }
        pages.push(lo_text);
        from += lo;
        guess = lo;
    }
    Some(pages)
}

/// The value cut to the items in `run` (consecutive slots). `first`: the page that carries
/// the members that are not (non-empty) arrays.
fn page_value(value: &Value, run: &[Slot], first: bool) -> Value {
    let (start, end) = (run[0], run[run.len() - 1]);
    let cut = |a: usize, items: &[Value]| -> Option<Vec<Value>> {
        if a < start.0 || a > end.0 {
            return None;
        }
        let lo = if a == start.0 { start.1 } else { 0 };
        let hi = if a == end.0 { end.1 + 1 } else { items.len() };
        Some(items[lo..hi].to_vec())
    };
    match value {
        Value::Array(items) => Value::Array(cut(0, items).unwrap_or_default()),
        Value::Object(map) => {
            let mut out = Map::new();
            let mut a = 0;
            for (k, v) in map.iter() {
                match v.as_array().filter(|items| !items.is_empty()) {
                    Some(items) => {
                        if let Some(part) = cut(a, items) {
                            out.insert(k.clone(), Value::Array(part));
                        }
                        a += 1;
                    }
                    None if first => {
                        out.insert(k.clone(), v.clone());
                    }
                    None => {}
                }
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// Text pieces of at most `budget` tokens, cut after a newline where one is in the second
/// half of the piece.
fn by_text(text: &str, tok: &dyn Tokenizer, budget: usize) -> Vec<String> {
    let mut pages = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        if tok.fits(rest, budget) {
            pages.push(rest.to_owned());
            break;
        }
        let mut cut = tok.prefix_len(rest, budget.max(1));
        if let Some(nl) = rest[..cut].rfind('\n')
            && nl + 1 > cut / 2
        {
            cut = nl + 1;
        }
        if cut == 0 {
            // A single character over the budget: take it anyway rather than loop.
            cut = rest.chars().next().map_or(rest.len(), char::len_utf8);
        }
        pages.push(rest[..cut].to_owned());
        rest = &rest[cut..];
    }
    pages
}

#[cfg(test)]
mod tests {
    use super::*;
    use pare::encode::expand;

    fn tok() -> &'static dyn Tokenizer {
        pare::tokens::builtin("o200k_base").unwrap()
    }

    fn graph(n: usize) -> Value {
        let entities: Vec<String> = (0..n)
            .map(|i| {
                format!(r#"{{"name":"e{i}","entityType":"person","observations":["likes {i}"]}}"#)
            })
            .collect();
        let relations: Vec<String> = (0..n)
            .map(|i| {
                format!(
                    r#"{{"from":"e{i}","to":"e{}","relationType":"knows"}}"#,
                    (i + 1) % n
                )
            })
            .collect();
        pare::json::parse(&format!(
            r#"{{"kind":"graph","entities":[{}],"relations":[{}]}}"#,
            entities.join(","),
            relations.join(",")
        ))
        .unwrap()
    }

    #[test]
    fn object_pages_fit_and_concatenate_back_to_the_whole() {
        let v = graph(200);
        for format in [Format::Json, Format::Auto, Format::Toon] {
            let pages = paginate(&v, format, tok(), tok(), 800);
            assert!(pages.len() > 2, "{format:?}: {}", pages.len());
            let mut entities = Vec::new();
            let mut relations = Vec::new();
            for (i, p) in pages.iter().enumerate() {
                assert!(tok().count(p) <= 800);
                let (page, _) = expand(p).unwrap();
                let map = page.as_object().unwrap();
                assert_eq!(map.contains_key("kind"), i == 0);
                if let Some(Value::Array(a)) = map.get("entities") {
                    entities.extend(a.iter().cloned());
                }
                if let Some(Value::Array(a)) = map.get("relations") {
                    relations.extend(a.iter().cloned());
                }
            }
            let whole = v.as_object().unwrap();
            assert_eq!(Some(&Value::Array(entities)), whole.get("entities"));
            assert_eq!(Some(&Value::Array(relations)), whole.get("relations"));
        }
    }

    #[test]
    fn pages_of_a_rendered_value_are_those_of_the_value() {
        let v = graph(200);
        for format in [Format::Json, Format::Auto, Format::Toon] {
            let whole = render(&v, format, tok());
            for budget in [800, 100_000] {
                assert_eq!(
                    paginate_rendered(
                        &v,
                        &whole,
                        tok().count(&whole),
                        format,
                        tok(),
                        tok(),
                        budget
                    ),
                    paginate(&v, format, tok(), tok(), budget),
                    "{format:?} {budget}"
                );
            }
        }
    }

    #[test]
    fn a_value_that_fits_is_one_page() {
        let v = graph(3);
        assert_eq!(
            paginate(&v, Format::Json, tok(), tok(), 10_000),
            vec![pare::json::to_compact(&v)]
        );
    }

    #[test]
    fn an_item_too_large_for_a_page_falls_back_to_text_pieces() {
        let big = format!("[\"{}\"]", "word ".repeat(2000));
        let v = pare::json::parse(&big).unwrap();
        let pages = paginate(&v, Format::Json, tok(), tok(), 300);
        assert!(pages.len() > 1);
        assert!(pages.iter().all(|p| tok().count(p) <= 300));
        assert_eq!(pages.concat(), pare::json::to_compact(&v));
    }
}
