//! Cutting a value into pages that each fit a budget and each decode alone.
//!
//! **What a page is.** The value is read as a sequence of *units* in document order: the
//! items of every array (wherever it is: at the top, under `results`, inside an item), and
//! the members that are not arrays or objects. A page is a run of consecutive units, shown
//! inside the value's own skeleton: the objects and arrays that lead to them, with only the
//! members and items the run holds. So a page is a value of the same shape, rendered in the
//! same format, whose array headers and counts (`relationships[66]`) are what the page holds,
//! and `pare expand` reads it alone. Units are whole items where they fit; an item too big
//! for a page on its own is opened into its members and items (and so on down), and a string
//! too big for a page is cut into pieces, at a line end where one is near.
//!
//! **Merging back.** Pages merge back to exactly the paged value ([`super::merge::merge`]):
//! objects by key, arrays concatenated, and where a page *continues* an item or a string the
//! page before it began (its record names it by JSON Pointer), that item is merged into the
//! one before instead of added after it, and the string pieces are joined.
//!
//! ```text
//! whole: {"results":{"entities":[e0…e99],"relationships":[r0…r499]}}
//! page 1: {"results":{"entities":[e0…e99],"relationships":[r0…r65]}}
//! page 2: {"results":{"relationships":[r66…r180]}}
//! ```
//!
//! Token counts are exact: `fit` (the budget gate) on each rendered page; `tok` decides
//! `auto`'s encodings, as for the whole value.

use crate::encode::{Format, render};
use crate::json;
use crate::tokens::{Tokenizer, ceil_char_boundary, floor_char_boundary};
use crate::value::{Map, Value};

/// One step from a container to a child: an object member by position, an array item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Member(usize),
    Item(usize),
}

/// A run's element: the subtree at `path`, or the bytes `piece` of the string there.
#[derive(Clone, Debug)]
struct Unit {
    path: Vec<Step>,
    piece: Option<(usize, usize)>,
}

/// One page of a value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ValuePage {
    pub text: String,
    /// JSON Pointer (in the whole value) of the item or string this page continues from the
    /// page before it; `None` when it starts with a whole unit.
    pub continues: Option<String>,
}

/// Pages of `value`, each at most `budget` by `fit`, or `None` when a unit cannot be made
/// small enough (a single key or number over the budget): the caller then cuts the text.
pub(crate) fn cut_value(
    value: &Value,
    format: Format,
    tok: &dyn Tokenizer,
    fit: &dyn Tokenizer,
    budget: usize,
) -> Option<Vec<ValuePage>> {
    Cutter {
        value,
        format,
        tok,
        fit,
        budget,
        units: coarse_units(value),
    }
    .run()
}

struct Cutter<'a> {
    value: &'a Value,
    format: Format,
    tok: &'a dyn Tokenizer,
    fit: &'a dyn Tokenizer,
    budget: usize,
    units: Vec<Unit>,
}

impl Cutter<'_> {
    fn run(mut self) -> Option<Vec<ValuePage>> {
        let mut pages: Vec<ValuePage> = Vec::new();
        let mut from = 0;
        // The first guess is the whole's average unit size; later ones, the last page's run.
        let mut guess = 0;
        while from < self.units.len() {
            // A unit too big for a page alone is opened (or, a string, cut) until it fits.
            // A string piece far longer than any page is cut without rendering it whole:
            // rendering the rest of a long string for every page made paging it quadratic.
            while self.surely_over(from) {
                if !self.refine(from, from) {
                    return None;
                }
            }
            let mut one = self.render(from, from + 1);
            while !self.fits(&one) {
                if !self.refine(from, from) {
                    return None;
                }
                one = self.render(from, from + 1);
            }
            let (mut run, mut text) = (1, one);
            loop {
                (run, text) = self.largest_run(from, run, text, guess.max(run + 1));
                let next = from + run;
                // The unit after the run did not fit beside it. If it fits no page alone
                // either, it is cut anyway: cut it now, so its first part fills this page.
                if next >= self.units.len()
                    || (!self.surely_over(next) && self.fits(&self.render(next, next + 1)))
                {
                    break;
                }
                if !self.refine(next, from) {
                    break;
                }
            }
            let continues = (from > 0)
                .then(|| continuation(&self.units[from - 1], &self.units[from]))
                .flatten()
                .map(|steps| pointer(self.value, &steps));
            pages.push(ValuePage { text, continues });
            from += run;
            guess = run;
        }
        Some(pages)
    }

    fn fits(&self, text: &str) -> bool {
        self.fit.fits(text, self.budget)
    }

    /// The most bytes of a string a page is assumed to hold: far more than any tokenizer
    /// here puts in the budget's tokens (o200k's longest token is 128 bytes; chars/4 is 4 a
    /// token). A string piece longer is cut before it is rendered; were the assumption
    /// wrong for some text, a page would hold less than it could, never more (every page's
    /// own text is counted).
    fn page_bytes(&self) -> usize {
        self.budget.saturating_mul(128).saturating_add(1024)
    }

    /// Unit `at` is a string piece longer than [`Cutter::page_bytes`].
    fn surely_over(&self, at: usize) -> bool {
        let unit = &self.units[at];
        match at_path(self.value, &unit.path) {
            Value::String(s) => {
                let (start, end) = unit.piece.unwrap_or((0, s.len()));
                end - start > self.page_bytes()
            }
            _ => false,
        }
    }

    fn render(&self, from: usize, to: usize) -> String {
        render(
            &build(self.value, &self.units[from..to]),
            self.format,
            self.tok,
        )
    }

    /// The longest run from `from` that fits, knowing `run` units fit (as `text`). Steps
    /// scale the last count to the budget (units are usually of similar size, so this lands
    /// in two or three renders), halving when that stalls.
    fn largest_run(&self, from: usize, run: usize, text: String, guess: usize) -> (usize, String) {
        let left = self.units.len() - from;
        let (mut lo, mut lo_text, mut hi) = (run, text, left + 1);
        let mut k = guess;
        // Units before `checked` are not far over a page (the first `run` fit).
        let mut checked = from + run;
        for round in 0.. {
            if lo + 1 >= hi {
                break;
            }
            k = if round < 4 { k } else { lo + (hi - lo) / 2 };
            k = k.clamp(lo + 1, hi - 1);
            // A run holding a string piece far longer than a page does not fit: that is known
            // without rendering it (rendering the rest of a long string for every page made
            // paging it quadratic). Each unit is looked at once per page.
            while checked < from + k {
                if self.surely_over(checked) {
                    hi = checked - from + 1;
                    break;
                }
                checked += 1;
            }
            if k >= hi {
                continue;
            }
            let text = self.render(from, from + k);
            let count = self.fit.count(&text).max(1);
            if count <= self.budget {
                (lo, lo_text) = (k, text);
                k = (k * self.budget / count).max(k + 1);
            } else {
                hi = k;
                k = (k * self.budget / count).min(k - 1);
            }
        }
        (lo, lo_text)
    }

    /// Make unit `at` smaller: open an object or array into its members or items, or cut a
    /// string so that its first piece fits after the units `from..at`. False when it cannot.
    fn refine(&mut self, at: usize, from: usize) -> bool {
        let whole = self.value;
        let (path, piece) = (self.units[at].path.clone(), self.units[at].piece);
        match (at_path(whole, &path), piece) {
            (Value::String(s), piece) => {
                let (start, end) = piece.unwrap_or((0, s.len()));
                let Some(cut) = self.string_cut(at, from, s, start, end) else {
                    return false;
                };
                let head = Unit {
                    path: path.clone(),
                    piece: Some((start, cut)),
                };
                let tail = Unit {
                    path,
                    piece: Some((cut, end)),
                };
                self.units.splice(at..=at, [head, tail]);
                true
            }
            (Value::Object(m), None) if !m.is_empty() => {
                let mut finer = Vec::new();
                for (i, (_, v)) in m.iter().enumerate() {
                    push_coarse(v, with(&path, Step::Member(i)), &mut finer);
                }
                self.units.splice(at..=at, finer);
                true
            }
            (Value::Array(items), None) if !items.is_empty() => {
                let finer: Vec<Unit> = (0..items.len())
                    .map(|i| Unit {
                        path: with(&path, Step::Item(i)),
                        piece: None,
                    })
                    .collect();
                self.units.splice(at..=at, finer);
                true
            }
            _ => false,
        }
    }

    /// Where to cut the string `s[start..end]` of unit `at` so that the units `from..at` and
    /// the piece `start..cut` fit a page: after the last line end in the piece's second half,
    /// else at a character boundary. `None` when not even one character fits.
    fn string_cut(
        &mut self,
        at: usize,
        from: usize,
        s: &str,
        start: usize,
        end: usize,
    ) -> Option<usize> {
        let saved = self.units[at].piece;
        let fits_to = |cut: usize, this: &mut Self| -> bool {
            this.units[at].piece = Some((start, cut));
            let text = this.render(from, at + 1);
            this.fits(&text)
        };
        // Known: `end` does not fit. Bisect on bytes, starting from the tokenizer's guess,
        // between bounds a page's length apart: a piece of `page_bytes` does not fit (or, were
        // it to, the page holds that much), so no step renders more than a page or two.
        let cap = floor_char_boundary(s, end.min(start.saturating_add(self.page_bytes())));
        let (mut lo, mut hi) = (start, if cap > start { cap } else { end });
        // `hi` is known not to fit only when it is the string's end; below the cap, gallop up
        // from the guess (doubling) until a piece does not fit, then bisect: no render is
        // more than twice the page.
        let mut hi_known = hi == end;
        let room = self.budget.saturating_sub(1);
        // The guess reads a sample of the piece: four bytes a token first, more only while
        // the whole sample fits (a long piece's BPE is the costly part of a page: counting
        // 16 bytes a token for every page was most of paging a run without spaces).
        let mut sample_bytes = self.budget.saturating_mul(4).max(64);
        let mut mid = loop {
            let sample = floor_char_boundary(s, hi.min(start.saturating_add(sample_bytes)));
            let guess = start + escaped_prefix_len(self.tok, &s[start..sample.max(start)], room);
            if guess < sample || sample >= hi || sample_bytes >= self.budget.saturating_mul(16) {
                break guess;
            }
            sample_bytes = sample_bytes.saturating_mul(2);
        };
        let mut step = ((mid - start) / 64).max(8);
        while hi - lo > 8 {
            mid = floor_char_boundary(s, mid.clamp(lo + 1, hi - 1));
            if mid <= lo {
                mid = ceil_char_boundary(s, lo + 1);
                if mid >= hi {
                    break;
                }
            }
            if fits_to(mid, self) {
                lo = mid;
            } else {
                hi = mid;
                hi_known = true;
            }
            mid = if hi_known {
                lo + (hi - lo) / 2
            } else {
                // The tokenizer's guess is usually within a few tokens: gallop up from it in
                // steps of a 64th of the piece, doubling while they fit, so the bisect after
                // spans a few hundred bytes, not the whole piece again.
                let next = lo + step;
                step = step.saturating_mul(2);
                next
            };
        }
        // The last few bytes one character at a time.
        let mut next = ceil_char_boundary(s, lo + 1);
        while next < hi && fits_to(next, self) {
            lo = next;
            next = ceil_char_boundary(s, lo + 1);
        }
        self.units[at].piece = saved;
        if lo <= start {
            return None;
        }
        let half = floor_char_boundary(s, start + (lo - start) / 2);
        Some(match s[half..lo].rfind('\n') {
            Some(nl) => half + nl + 1,
            None => lo,
        })
    }
}

/// The tokenizer's `prefix_len` of `raw` as a page writes it, escaped (a run of newlines
/// is `\n\n…` on the page, not one whitespace piece): the raw length of the longest prefix
/// whose escaped text has at most `room` tokens. A guess for the bisect, so JSON's escapes
/// stand for TOON's too.
fn escaped_prefix_len(tok: &dyn Tokenizer, raw: &str, room: usize) -> usize {
    // Where escapes are rare the raw text is guess enough, and escaping costs a copy.
    let escapes = raw.bytes().filter(|&b| json::is_special(b)).count();
    if escapes <= raw.len() / 32 {
        return tok.prefix_len(raw, room);
    }
    let mut escaped = String::with_capacity(raw.len() + raw.len() / 4);
    // (escaped length, raw length) after each character.
    let mut ends = Vec::with_capacity(raw.len());
    for (i, c) in raw.char_indices() {
        match u8::try_from(c) {
            Ok(b) if json::is_special(b) => json::push_escape(b, &mut escaped),
            _ => escaped.push(c),
        }
        ends.push((escaped.len(), i + c.len_utf8()));
    }
    let fits = tok.prefix_len(&escaped, room);
    let whole = ends.partition_point(|&(e, _)| e <= fits);
    whole.checked_sub(1).map_or(0, |i| ends[i].1)
}

fn with(path: &[Step], step: Step) -> Vec<Step> {
    let mut p = Vec::with_capacity(path.len() + 1);
    p.extend_from_slice(path);
    p.push(step);
    p
}

/// The units of a value before any is opened: objects are always opened (their members
/// are units, or opened again), arrays give their items whole.
fn coarse_units(value: &Value) -> Vec<Unit> {
    let mut out = Vec::new();
    push_coarse(value, Vec::new(), &mut out);
    out
}

fn push_coarse(value: &Value, path: Vec<Step>, out: &mut Vec<Unit>) {
    match value {
        Value::Object(m) if !m.is_empty() => {
            for (i, (_, v)) in m.iter().enumerate() {
                push_coarse(v, with(&path, Step::Member(i)), out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            out.extend((0..items.len()).map(|i| Unit {
                path: with(&path, Step::Item(i)),
                piece: None,
            }));
        }
        _ => out.push(Unit { path, piece: None }),
    }
}

fn at_path<'v>(mut value: &'v Value, path: &[Step]) -> &'v Value {
    for step in path {
        value = child(value, *step);
    }
    value
}

fn child(value: &Value, step: Step) -> &Value {
    match (value, step) {
        (Value::Object(m), Step::Member(i)) => &m.entries()[i].1,
        (Value::Array(items), Step::Item(i)) => &items[i],
        _ => unreachable!("a unit's path follows the value"),
    }
}

/// The value cut to `units` (consecutive, in document order), in the whole's skeleton.
fn build(whole: &Value, units: &[Unit]) -> Value {
    let mut root: Option<Value> = None;
    let mut prev: Option<&Unit> = None;
    for unit in units {
        let shared = prev.map_or(0, |p| common_len(&p.path, &unit.path));
        if let (Some(p), Some(root)) = (prev, root.as_mut())
            && p.path == unit.path
        {
            // The next piece of the same string, on the same page.
            if let (Some((_, end)), Value::String(s)) = (unit.piece, at_path(whole, &unit.path)) {
                let leaf = last_at(root, unit.path.len());
                if let Value::String(text) = leaf {
                    let start = p.piece.map_or(0, |(_, e)| e);
                    text.push_str(&s[start..end]);
                }
            }
            prev = Some(unit);
            continue;
        }
        insert(&mut root, whole, unit, shared);
        prev = Some(unit);
    }
    root.unwrap_or(Value::Null)
}

/// The last-added node `depth` levels down from `node`.
fn last_at(mut node: &mut Value, depth: usize) -> &mut Value {
    for _ in 0..depth {
        node = match node {
            Value::Object(m) => &mut m.entries_mut().last_mut().expect("built").1,
            Value::Array(items) => items.last_mut().expect("built"),
            _ => unreachable!("a built path leads through containers"),
        };
    }
    node
}

/// Add `unit` to the page being built: the first `shared` steps of its path lead through
/// nodes the previous unit already added (always the last member or item); the rest are new.
fn insert(root: &mut Option<Value>, whole: &Value, unit: &Unit, shared: usize) {
    let leaf = |v: &Value| match (v, unit.piece) {
        (Value::String(s), Some((start, end))) => Value::String(s[start..end].into()),
        (v, _) => v.clone(),
    };
    let empty_like = |v: &Value| match v {
        Value::Object(_) => Value::Object(Map::new()),
        Value::Array(_) => Value::Array(Vec::new()),
        other => other.clone(),
    };
    if unit.path.is_empty() {
        *root = Some(leaf(whole));
        return;
    }
    let mut node = root.get_or_insert_with(|| empty_like(whole));
    let mut source = whole;
    for (depth, &step) in unit.path.iter().enumerate() {
        let src_child = child(source, step);
        let last = depth + 1 == unit.path.len();
        if depth < shared {
            node = last_at(node, 1);
        } else {
            let made = if last {
                leaf(src_child)
            } else {
                empty_like(src_child)
            };
            node = match (node, step) {
                (Value::Object(m), Step::Member(i)) => {
                    let key = source.as_object().expect("member of an object").entries()[i]
                        .0
                        .clone();
                    let entries = m.entries_mut();
                    entries.push((key, made));
                    &mut entries.last_mut().expect("pushed").1
                }
                (Value::Array(items), Step::Item(_)) => {
                    items.push(made);
                    items.last_mut().expect("pushed")
                }
                _ => unreachable!("the skeleton follows the value"),
            };
        }
        source = src_child;
    }
}

fn common_len(a: &[Step], b: &[Step]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// What the unit `next` continues of the unit `prev` before it (on the page before): the
/// same string (both pieces), or the deepest array item both lie in. Objects need nothing:
/// pages merge them by key.
fn continuation(prev: &Unit, next: &Unit) -> Option<Vec<Step>> {
    if prev.path == next.path && next.piece.is_some() {
        return Some(next.path.clone());
    }
    let shared = &next.path[..common_len(&prev.path, &next.path)];
    let last_item = shared.iter().rposition(|s| matches!(s, Step::Item(_)))?;
    Some(shared[..=last_item].to_vec())
}

/// RFC 6901 JSON Pointer of `path` in `value`.
fn pointer(value: &Value, path: &[Step]) -> String {
    let mut out = String::new();
    let mut node = value;
    for &step in path {
        out.push('/');
        match (node, step) {
            (Value::Object(m), Step::Member(i)) => {
                out.push_str(&m.entries()[i].0.replace('~', "~0").replace('/', "~1"));
            }
            (_, Step::Item(i)) => out.push_str(&i.to_string()),
            _ => unreachable!("a unit's path follows the value"),
        }
        node = child(node, step);
    }
    out
}

/// Text pieces of at most `budget` by `fit`, cut after the last line end in the second half
/// of the longest piece that fits, else (one long line) inside the line. A single character
/// over the budget is still taken whole, so the cutting always ends.
pub(crate) fn cut_text(text: &str, fit: &dyn Tokenizer, budget: usize) -> Vec<String> {
    let mut pages = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        if fit.fits(rest, budget) {
            pages.push(rest.to_owned());
            break;
        }
        let mut cut = fit.prefix_len(rest, budget.max(1));
        if let Some(nl) = rest[..cut].rfind('\n')
            && nl + 1 > cut / 2
        {
            cut = nl + 1;
        }
        if cut == 0 {
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
    use crate::encode::expand;
    use crate::json::{parse, to_compact};
    use crate::respond::merge::merge;
    use crate::tokens::metered::Metered;

    fn tok() -> &'static dyn Tokenizer {
        crate::tokens::builtin("o200k_base").unwrap()
    }

    /// The issue-28 probe: paging one long string took 8.5 / 40.6 / 111.8 s at 2 / 4 / 8 MB,
    /// as every page rendered (and counted) the rest of the string. The work, as bytes the
    /// tokenizer is given, now grows with the string, not with its square.
    #[test]
    fn regression_paging_a_long_string_was_quadratic() {
        let read = |words: usize| {
            let text: String = (0..words)
                .map(|i| ["alpha ", "beta\n", "gamma "][i % 3])
                .collect();
            let v = Value::String(text.into());
            let metered = Metered(Default::default());
            let pages = cut_value(&v, Format::Json, &metered, &metered, 500).unwrap();
            let parts = pages
                .iter()
                .map(|p| (parse(&p.text).unwrap(), p.continues.clone()));
            let joined = merge(parts).unwrap();
            assert_eq!(joined, v);
            (metered.0.into_inner(), to_compact(&v).len())
        };
        // Quadratic work reads 16x as much for 4x the string; linear, 4x.
        let (small, small_len) = read(20_000);
        let (large, large_len) = read(80_000);
        assert!(
            large < small * 6,
            "4x the string, {small} -> {large} bytes read"
        );
        // Each page's cut bisects over at most two pages' text: a bounded multiple.
        for (read, len) in [(small, small_len), (large, large_len)] {
            assert!(
                read < len * 120,
                "{read} bytes read for a {len}-byte string"
            );
        }
    }

    fn pages_merge_back(v: &Value, format: Format, budget: usize) -> Vec<ValuePage> {
        let pages = cut_value(v, format, tok(), tok(), budget).expect("cuttable");
        let mut parts = Vec::new();
        for p in &pages {
            assert!(tok().count(&p.text) <= budget, "{format:?}: {}", p.text);
            let (page, _) = expand(&p.text).unwrap_or_else(|e| panic!("{e}: {}", p.text));
            parts.push((page, p.continues.clone()));
        }
        let merged = merge(parts).expect("pages merge");
        assert_eq!(to_compact(&merged), to_compact(v), "{format:?} {budget}");
        pages
    }

    #[test]
    fn nested_arrays_are_paged_where_they_are() {
        let entities: Vec<String> = (0..60)
            .map(|i| format!(r#"{{"id":"e{i}","type":"vendor","name":"Vendor {i}"}}"#))
            .collect();
        let rels: Vec<String> = (0..200)
            .map(|i| {
                format!(
                    r#"{{"from":"e{}","to":"e{}","type":"SUPPLIES"}}"#,
                    i % 60,
                    (i * 7) % 60
                )
            })
            .collect();
        let v = parse(&format!(
            r#"{{"results":{{"entities":[{}],"relationships":[{}],"statistics":{{"n":260}}}},"pagination":{{"page":1}}}}"#,
            entities.join(","),
            rels.join(",")
        ))
        .unwrap();
        for format in [Format::Json, Format::Toon, Format::Auto, Format::Pretty] {
            let pages = pages_merge_back(&v, format, 400);
            assert!(pages.len() > 3, "{format:?}");
            assert!(pages.iter().all(|p| p.continues.is_none()));
        }
    }

    #[test]
    fn an_item_too_big_for_a_page_is_opened_and_its_string_cut_at_line_ends() {
        let body: String = (0..400)
            .map(|i| format!("line {i} of the file\n"))
            .collect();
        let v = parse(&format!(
            r#"{{"files":[{{"path":"a.txt","content":{}}},{{"path":"b.txt","content":"short"}}]}}"#,
            serde_json::to_string(&body).unwrap()
        ))
        .unwrap();
        for format in [Format::Json, Format::Auto] {
            let pages = pages_merge_back(&v, format, 300);
            assert!(pages.len() > 4);
            assert_eq!(pages[1].continues.as_deref(), Some("/files/0/content"));
        }
    }

    #[test]
    fn arrays_of_arrays_merge_the_split_item() {
        let inner: Vec<String> = (0..300).map(|i| format!("\"word{i}\"")).collect();
        let v = parse(&format!("[[{}],[1,2,3]]", inner.join(","))).unwrap();
        let pages = pages_merge_back(&v, Format::Json, 200);
        assert_eq!(pages[1].continues.as_deref(), Some("/0"));
    }

    #[test]
    fn a_root_string_is_cut_into_pieces() {
        let v = Value::String("word ".repeat(3000).into());
        let pages = pages_merge_back(&v, Format::Json, 250);
        assert!(pages.len() > 2);
        assert_eq!(pages[1].continues.as_deref(), Some(""));
    }

    #[test]
    fn scalars_and_empty_containers_are_units_in_document_order() {
        let v = parse(r#"{"a":{},"b":[],"c":null,"d":[{"x":[]}],"e":"end"}"#).unwrap();
        let pages = pages_merge_back(&v, Format::Auto, 20);
        assert!(pages.len() > 1);
    }

    #[test]
    fn regression_a_string_of_wide_characters_is_cut_on_character_boundaries() {
        // Found by the pages property test: the line-end search started inside a character.
        let v = Value::Array(vec![Value::String("！ꬑ line\n".repeat(31).into())]);
        let pages = pages_merge_back(&v, Format::Json, 79);
        assert!(pages.len() > 1);
    }

    #[test]
    fn text_pieces_fit_and_join_back() {
        let text: String = (0..500)
            .map(|i| format!("row {i}: ('a', {i}, None)\n"))
            .collect();
        let pages = cut_text(&text, tok(), 200);
        assert!(pages.len() > 3);
        assert!(
            pages
                .iter()
                .all(|p| tok().count(p) <= 200 && p.ends_with('\n'))
        );
        let joined: String = pages.concat();
        assert_eq!(joined, text);
    }
}
