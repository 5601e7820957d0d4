//! Parsing a large text on two threads.
//!
//! Why: payloads of tens of megabytes are almost always one long array of records, and
//! parsing is the largest part of encoding them. While the main thread parses from the
//! start, a helper finds an element boundary of the outermost array open halfway through
//! the text and parses the rest of that array (its *tail*); then, as long as the main
//! parser is far enough from it, the stretch halfway between the two (a *segment*, which
//! ends where the last one started), and so on: the helper works back towards the main
//! parser, so both finish together however unevenly the text's records cost. When the main
//! parser finishes an element exactly where an offer starts, it takes the helper's
//! elements and goes on after them.
//!
//! Why that is always right: from an element boundary, what the rest of an array parses to
//! does not depend on what came before, so the helper only has to be right about *where* a
//! boundary is, and the main parser checks that itself. Any doubt — the helper's position
//! is inside a string of a malformed text, its elements failed to parse, or nest deeper
//! than the main parser's depth budget allows there — and the main parser just parses on
//! alone, reporting errors exactly as it would without a helper.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver};

use super::find_special;
use super::omit::{Omit, Omitted};
use super::parse::{Fail, Items, Parser, Tail};
use crate::value::Value;

/// Texts shorter than this are parsed on one thread: starting one costs tens of
/// microseconds, parsing a megabyte about two milliseconds.
pub(super) const MIN_BYTES: usize = 1 << 21;

/// The same for a text a door wrote in a long-lived process (a binding's `dict`): there a
/// thread starts cheaply, and a megabyte's stream took a fifth less on two (measured in
/// the Python package; in a fresh `pare` process it took more, hence [`MIN_BYTES`]).
pub(super) const WARM_MIN_BYTES: usize = 1 << 19;

/// The helper stops offering when the main parser is this close to its last offer.
const MIN_SEGMENT: usize = 1 << 18;

/// How often the helper's first scan notes where it is, to find boundaries again later
/// without scanning from the start.
const MARK_BYTES: usize = 1 << 20;

/// What the helper has offered, and how far the main parser is; shared by both threads.
pub(super) struct Offers {
    /// The start of the earliest offer not yet taken or passed; `usize::MAX` for none.
    next: AtomicUsize,
    /// Where the main parser last finished an array element.
    at: AtomicUsize,
    /// Offers by start, each with where its elements will arrive.
    list: Mutex<Vec<(usize, Receiver<Option<Tail>>)>>,
    /// The main parser is done: stop.
    done: AtomicBool,
}

impl Offers {
    /// No offers yet; the main parser starts at `start`.
    fn new(start: usize) -> Offers {
        Offers {
            next: AtomicUsize::new(usize::MAX),
            at: AtomicUsize::new(start),
            list: Mutex::new(Vec::new()),
            done: AtomicBool::new(false),
        }
    }

    /// The main parser is just after a comma at `pos`: note it; true if an offer starts
    /// there or was passed (then [`Offers::take`] sorts it out).
    #[inline]
    pub(super) fn progress(&self, pos: usize) -> bool {
        self.at.store(pos, Ordering::Relaxed);
        pos >= self.next.load(Ordering::Acquire)
    }

    /// The elements offered at `pos`, waiting for them if the helper is still at it; offers
    /// the main parser has passed are dropped.
    pub(super) fn take(&self, pos: usize) -> Option<Tail> {
        let offer = {
            let mut list = self.list.lock().unwrap_or_else(|e| e.into_inner());
            list.retain(|(start, _)| *start >= pos);
            let offer = match list.first() {
                Some((start, _)) if *start == pos => Some(list.remove(0).1),
                _ => None,
            };
            let next = list.first().map_or(usize::MAX, |(start, _)| *start);
            self.next.store(next, Ordering::Release);
            offer
        };
        offer?.recv().ok().flatten()
    }

    /// The helper's offer of the elements from `start`: on the list before it parses them.
    fn offer(&self, start: usize) -> mpsc::Sender<Option<Tail>> {
        let (send, receive) = mpsc::channel();
        let mut list = self.list.lock().unwrap_or_else(|e| e.into_inner());
        let i = list.partition_point(|(s, _)| *s < start);
        list.insert(i, (start, receive));
        self.next.fetch_min(start, Ordering::Release);
        send
    }

    /// Whether the main parser is done or past `start`: an offer from there is no use.
    pub(super) fn passed(&self, start: usize) -> bool {
        self.done.load(Ordering::Relaxed) || self.at.load(Ordering::Relaxed) > start
    }
}

/// What the helper makes of the elements it reads: values for the parser, or compact text
/// for [`super::stream`] (and, when the policy has list ops, where each element's members
/// went, see [`super::Written`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    Parse,
    Stream { note_items: bool, keys_unique: bool },
}

/// How the helper reads elements: the depth budget, what to leave out, and what to make.
#[derive(Clone, Copy)]
struct Job<'o> {
    max_depth: usize,
    omit: Option<&'o Omit>,
    mode: Mode,
}

/// [`Parser::document`] from `start`, with a helper parsing ahead (see the module).
pub(super) fn parse_with_help(
    text: &str,
    start: usize,
    max_depth: usize,
    omit: Option<&Omit>,
) -> Result<(Value, Vec<usize>, Omitted), Fail> {
    let target = start + (text.len() - start) / 2;
    parse_with_help_from(text, start, max_depth, target, omit)
}

fn parse_with_help_from(
    text: &str,
    start: usize,
    max_depth: usize,
    target: usize,
    omit: Option<&Omit>,
) -> Result<(Value, Vec<usize>, Omitted), Fail> {
    let job = Job {
        max_depth,
        omit,
        mode: Mode::Parse,
    };
    with_help(text, start, target, job, |offers| {
        let mut p = Parser::new(text, start, max_depth, Some(offers), omit);
        p.document().map(|v| (v, p.duplicates, p.omitted))
    })
}

/// `main` (the main thread's work, given the offers) with a helper writing the elements
/// of the text's arrays ahead of it, from halfway through, as [`super::stream`] does.
pub(super) fn stream_with_help<T>(
    text: &str,
    start: usize,
    omit: &Omit,
    (note_items, keys_unique): (bool, bool),
    main: impl FnOnce(&Offers) -> T,
) -> T {
    let target = start + (text.len() - start) / 2;
    let job = Job {
        max_depth: super::MAX_DEPTH,
        omit: Some(omit),
        mode: Mode::Stream {
            note_items,
            keys_unique,
        },
    };
    with_help(text, start, target, job, main)
}

/// `main` on this thread, given the offers, while a helper does `job` from `target` on
/// (see [`help`]); the helper is told to stop when `main` is done.
fn with_help<T>(
    text: &str,
    start: usize,
    target: usize,
    job: Job,
    main: impl FnOnce(&Offers) -> T,
) -> T {
    let offers = Offers::new(start);
    std::thread::scope(|s| {
        // As much stack as a main thread has; without a helper the main parser just works alone.
        let _ = std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn_scoped(s, || help(text, start, target, &offers, job));
        let result = main(&offers);
        offers.done.store(true, Ordering::Relaxed);
        result
    })
}

/// The helper: a tail from the first boundary at or after `target`, then segments back
/// towards the main parser. When that tail closed its array with enough text after it
/// (a top-level object of several large arrays, e.g. `entities` then `relationships`),
/// the same again for the rest of the text: a tail from halfway through what is left,
/// then segments back to where the closed array ended. Without that second round the main
/// parser parsed everything after the first array alone.
fn help(text: &str, start: usize, mut target: usize, offers: &Offers, job: Job) {
    let b = text.as_bytes();
    let mut marks = Vec::new();
    let mut base = Scan::new(start);
    let mut scan = base.clone();
    if scan.skim(b, target, Some(&mut marks)).is_none() {
        return;
    }
    while let Some((first, around)) = scan.boundary(b, target, usize::MAX) {
        let send = offers.offer(first);
        let tail = elements(text, first, None, offers, job);
        let close = tail
            .as_ref()
            .filter(|t| t.closed && text.len() - t.end >= NEXT_ROUND_BYTES)
            .map(|t| t.end);
        let _ = send.send(tail);
        // Skim past the closed array now (noting marks, all after the earlier ones), so
        // the next round finds its boundary at once.
        if let Some(close) = close
            && Scan::after_array(close, around.clone())
                .skim(b, text.len(), Some(&mut marks))
                .is_none()
        {
            return;
        }
        segments_back(text, &base, first, offers, &marks, job);
        // The main parser is about at `first` now and takes the tail at once: the next
        // round splits what follows the closed array.
        let Some(close) = close else {
            return;
        };
        target = close + (text.len() - close) / 2;
        base = Scan::after_array(close, around);
        scan = latest_mark(&marks, &base, target);
        if scan.skim(b, target, None).is_none() {
            return;
        }
    }
}

/// What is left after a tail's array closes, for another round of [`help`].
const NEXT_ROUND_BYTES: usize = 4 * MIN_SEGMENT;

/// The scan to go on from to reach `target`: the last mark before it, or `base` when no
/// mark after `base` is.
fn latest_mark(marks: &[Scan], base: &Scan, target: usize) -> Scan {
    match marks.iter().rposition(|m| m.i <= target) {
        Some(k) if marks[k].i >= base.i => marks[k].clone(),
        _ => base.clone(),
    }
}

/// Segments of elements from halfway between the main parser and `end` to `end`, each
/// ending where the last began, while the main parser is far enough from `end`; scans
/// start from `base` or a later mark.
fn segments_back(
    text: &str,
    base: &Scan,
    mut end: usize,
    offers: &Offers,
    marks: &[Scan],
    job: Job,
) {
    let b = text.as_bytes();
    loop {
        let main_at = offers.at.load(Ordering::Relaxed);
        if offers.passed(end) || end.saturating_sub(main_at) < MIN_SEGMENT {
            return;
        }
        // Halfway: the main parser should get there about when these are parsed.
        let mid = main_at + (end - main_at) / 2;
        if mid < base.i {
            return;
        }
        let mut scan = latest_mark(marks, base, mid);
        let Some((at, _)) = scan
            .skim(b, mid, None)
            .and_then(|()| scan.boundary(b, mid, end))
        else {
            return;
        };
        let send = offers.offer(at);
        let _ = send.send(elements(text, at, Some(end), offers, job));
        end = at;
    }
}

/// The elements of an array from `at` (just after a comma) to its closing `]`, or to
/// just after the comma at `stop`; `None` if they don't parse, don't end there, or the
/// main parser has passed `at`.
fn elements(text: &str, at: usize, stop: Option<usize>, offers: &Offers, job: Job) -> Option<Tail> {
    let Job {
        max_depth,
        omit,
        mode,
    } = job;
    if let Mode::Stream {
        note_items,
        keys_unique,
    } = mode
    {
        let how = (max_depth, note_items, keys_unique);
        return super::stream::elements(text, at, stop, how, offers, omit?);
    }
    let mut p = Parser::new(text, at, max_depth, None, omit);
    let mut values = Vec::new();
    let closed = read_elements(
        &mut p,
        |p| p,
        at,
        stop,
        offers,
        |p| {
            values.push(p.value().ok()?);
            Some(())
        },
    )?;
    Some(Tail {
        items: Items::Values(values),
        end: p.pos,
        closed,
        depth: max_depth - p.min_depth_left,
        duplicates: p.duplicates,
        omitted: p.omitted,
    })
}

/// The loop of [`elements`], for any reader of them (`parser` reaches its parser, whose
/// cursor is at `at`): `element` reads one, then a comma goes on and `]` closes the array.
/// Whether they closed it; `None` if one did not read, they don't end at `stop` (a comma
/// there) or the array's end, or the main parser has passed `at`.
pub(super) fn read_elements<'a, R>(
    reader: &mut R,
    parser: impl Fn(&mut R) -> &mut Parser<'a>,
    at: usize,
    stop: Option<usize>,
    offers: &Offers,
    mut element: impl FnMut(&mut R) -> Option<()>,
) -> Option<bool> {
    loop {
        if offers.passed(at) {
            return None;
        }
        element(reader)?;
        let p = parser(reader);
        p.skip_ws();
        match p.peek() {
            Some(b',') => {
                p.pos += 1;
                match stop {
                    Some(stop) if p.pos == stop => return Some(false),
                    Some(stop) if p.pos > stop => return None,
                    _ => {}
                }
            }
            Some(b']') if stop.is_none() => {
                p.pos += 1;
                return Some(true);
            }
            _ => return None,
        }
    }
}

/// Where a scan of the text's brackets is: outside strings it knows nothing else.
#[derive(Clone)]
struct Scan {
    i: usize,
    in_string: bool,
    escaped: bool,
    /// Per open container: is it an array.
    open: Vec<bool>,
}

impl Scan {
    /// The scan just after the `]` at `close - 1` of an array that had `around` open
    /// around it.
    fn after_array(close: usize, around: Vec<bool>) -> Scan {
        Scan {
            i: close,
            in_string: false,
            escaped: false,
            open: around,
        }
    }

    fn new(i: usize) -> Scan {
        Scan {
            i,
            in_string: false,
            escaped: false,
            open: Vec::new(),
        }
    }

    /// Scans on to about `target` (the last whole block of 64 bytes before it), noting
    /// copies of itself in `marks` every [`MARK_BYTES`]; `None` if a bracket closes that
    /// was never opened. Why blocks and bit masks: a byte-at-a-time scan of half a large
    /// text took nearly as long as parsing the other half. Quotes toggle "in a string" (a
    /// running XOR of their bits); a block holding a backslash, or starting escaped, goes
    /// byte by byte instead.
    fn skim(&mut self, b: &[u8], target: usize, mut marks: Option<&mut Vec<Scan>>) -> Option<()> {
        let mut next_mark = self.i + MARK_BYTES;
        while let Some(block) = b.get(self.i..target).and_then(<[u8]>::first_chunk::<64>) {
            if self.i >= next_mark
                && let Some(marks) = marks.as_mut()
            {
                marks.push(self.clone());
                next_mark += MARK_BYTES;
            }
            let (quotes, backslashes, brackets) = block_masks(block);
            if backslashes != 0 || self.escaped {
                for &c in block {
                    self.byte(c)?;
                }
            } else {
                // From an opening quote to before its closing one.
                let mut strings = prefix_xor(quotes);
                if self.in_string {
                    strings = !strings;
                }
                self.in_string = strings >> 63 != 0;
                let mut hits = brackets & !strings;
                while hits != 0 {
                    let c = block[hits.trailing_zeros() as usize];
                    hits &= hits - 1;
                    self.bracket(c)?;
                }
            }
            self.i += 64;
        }
        Some(())
    }

    /// One byte of a byte-by-byte scan.
    fn byte(&mut self, c: u8) -> Option<()> {
        if self.escaped {
            self.escaped = false;
        } else if self.in_string {
            self.escaped = c == b'\\';
            self.in_string = c != b'"';
        } else if c == b'"' {
            self.in_string = true;
        } else {
            self.bracket(c)?;
        }
        Some(())
    }

    fn bracket(&mut self, c: u8) -> Option<()> {
        match c {
            b'[' | b'{' => self.open.push(c == b'['),
            b']' | b'}' => _ = self.open.pop()?,
            _ => {}
        }
        Some(())
    }

    /// Just after the first comma, at or after `target` and before `limit`, between two
    /// elements of the outermost array open at `target`, with the brackets open around
    /// that array; `None` if there is no such array or it ends first. (The text is not checked: on a malformed one the position is
    /// merely useless.)
    fn boundary(mut self, b: &[u8], target: usize, limit: usize) -> Option<(usize, Vec<bool>)> {
        let mut i = self.i + usize::from(self.escaped);
        if self.in_string {
            i = after_string(b, i);
        }
        let open = &mut self.open;
        let mut inside: Option<usize> = None; // `open.len()` directly inside the array
        while let Some(&c) = b.get(i).filter(|_| i < limit) {
            if inside.is_none() && i >= target {
                inside = Some(open.iter().position(|&array| array)? + 1);
            }
            match c {
                b'"' => {
                    i = after_string(b, i + 1);
                    continue;
                }
                b'[' => open.push(true),
                b'{' => open.push(false),
                b']' | b'}' => {
                    open.pop()?;
                    if inside.is_some_and(|d| open.len() < d) {
                        return None;
                    }
                }
                b',' if inside == Some(open.len()) => {
                    // What is open outside the array: the brackets around it.
                    let around = open.len() - 1;
                    open.truncate(around);
                    return Some((i + 1, std::mem::take(open))).filter(|&(at, _)| at < limit);
                }
                _ => {}
            }
            i += 1;
        }
        None
    }
}

/// Bit k of each mask: is byte k of the block `"`, `\`, or a bracket (`[]{}`).
#[inline]
fn block_masks(block: &[u8; 64]) -> (u64, u64, u64) {
    const LO: u64 = 0x0101_0101_0101_0101;
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    // The high bit of each byte of `x` equal to `c` (exact, unlike a borrow-based test).
    let equal = |x: u64, c: u8| {
        let t = x ^ (LO * u64::from(c));
        !(((t & LOW7) + LOW7) | t | LOW7)
    };
    // Those high bits gathered into the low byte, byte k to bit k.
    let gather = |m: u64| ((m >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56;
    let (mut quotes, mut backslashes, mut brackets) = (0, 0, 0);
    for (k, word) in block.chunks_exact(8).enumerate() {
        let x = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        let folded = x | (LO * 0x20); // `[` `]` to `{` `}`; nothing else lands on them
        quotes |= gather(equal(x, b'"')) << (8 * k);
        backslashes |= gather(equal(x, b'\\')) << (8 * k);
        brackets |= gather(equal(folded, b'{') | equal(folded, b'}')) << (8 * k);
    }
    (quotes, backslashes, brackets)
}

/// Each bit set to the XOR of itself and all bits below it.
fn prefix_xor(mut x: u64) -> u64 {
    for shift in [1, 2, 4, 8, 16, 32] {
        x ^= x << shift;
    }
    x
}

/// The offset after the closing quote of the string whose contents start at `i`.
fn after_string(b: &[u8], mut i: usize) -> usize {
    loop {
        let j = find_special(b, i);
        match b.get(j) {
            Some(b'"') => return j + 1,
            Some(b'\\') => i = j + 2,
            Some(_) => i = j + 1,
            None => return b.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse::parse_forking_from;
    use crate::json::{MAX_DEPTH, parse_with_max_depth};

    const PARSE: Job = Job {
        max_depth: MAX_DEPTH,
        omit: None,
        mode: Mode::Parse,
    };

    /// With the helper aimed at every offset in turn, parsing gives what one thread gives.
    fn same_at_every_target(text: &str, max_depth: usize) {
        let alone = parse_forking_from(text, max_depth, usize::MAX);
        let start = if text.starts_with('\u{feff}') { 3 } else { 0 };
        for target in start..=text.len() {
            let helped = parse_with_help_from(text, start, max_depth, target, None)
                .map(|(v, dups, _)| (v, dups))
                .map_err(|f| f.into_error(text, max_depth));
            // Repeated keys are noted wherever the helper took over.
            assert_eq!(helped, alone, "{text:?} target {target}");
        }
    }

    #[test]
    fn helped_parse_is_the_same_parse() {
        for text in [
            r#"[1,2,3]"#,
            r#"{"a":[{"x":1},{"x":[2,3]},{"x":"],[,\"]"}],"b":[4,5]}"#,
            r#"[ [1, [2, 3]] , {"k": [4 , 5 ]}, "s,]" , [] ,{} ]"#,
            "[\n  {\"id\": 1, \"t\": [\"a\", \"b\"]},\n  {\"id\": 2, \"t\": []}\n]\n",
            r#"{"a":1,"a":[1,2],"b":{"c":[[1],[2],[3]]}}"#,
            r#"[{"a":1,"a":2},{"b":1},{"b":1,"b":2,"b":3},{"c":{"d":0,"d":1}}]"#,
            "\u{feff}[1,2]",
        ] {
            same_at_every_target(text, MAX_DEPTH);
        }
    }

    #[test]
    fn helped_parse_fails_the_same_way() {
        for text in [
            r#"[1,2,3"#,
            r#"[1,2,]"#,
            r#"[1,2,3] x"#,
            r#"[{"a":1},{"a":tru},{"a":3}]"#,
            r#"[{"a":1},{"a":2} {"a":3}]"#,
            r#"["a","b\q","c"]"#,
            r#"[1,2,3]]"#,
            r#"[1,"2,3]"#,
            r#"{"a":[1,2},"b":3}"#,
        ] {
            same_at_every_target(text, MAX_DEPTH);
        }
    }

    #[test]
    fn a_tail_too_deep_for_its_place_is_not_taken() {
        // Alone the tail nests 3 levels, fine from the top; inside the outer array, 4.
        same_at_every_target("[0,[[[1]]],2]", 3);
        same_at_every_target("[0,[[[1]]],2]", 4);
        same_at_every_target("[[0,[[1]],2]]", 3);
    }

    /// The brackets open before `target`, one byte at a time (what `skim` must agree with).
    fn open_before(b: &[u8], target: usize) -> Option<(Vec<bool>, usize)> {
        let (mut open, mut i) = (Vec::new(), 0);
        while i < target {
            match b[i] {
                b'"' => i = after_string(b, i + 1) - 1,
                c @ (b'[' | b'{') => open.push(c == b'['),
                b']' | b'}' => _ = open.pop()?,
                _ => {}
            }
            i += 1;
        }
        Some((open, i))
    }

    #[test]
    fn skimming_by_blocks_tracks_strings_and_escapes() {
        let plain = r#"{"a":["x]","{",{"b]":"[ ]"}],"c":"}}"},"#;
        let escaped = r#"{"a":["x\"]\\","\\",{"b]":"[\u005d"}],"c":"\"\"{"},"#;
        let text = format!(
            "[{}{}1]",
            plain.repeat(30),
            (escaped.to_owned() + plain).repeat(30)
        );
        let b = text.as_bytes();
        for target in 0..b.len() {
            let mut scan = Scan::new(0);
            scan.skim(b, target, None).unwrap();
            assert!(scan.i <= target && scan.i + 64 > target, "target {target}");
            let mut stop = scan.i + usize::from(scan.escaped);
            if scan.in_string {
                stop = after_string(b, stop);
            }
            assert_eq!(
                Some((scan.open, stop)),
                open_before(b, stop),
                "target {target}"
            );
        }
    }

    #[test]
    fn after_its_tail_closes_an_array_the_helper_splits_the_next_one() {
        let rows = |name: &str, n: usize| -> String {
            let rows: Vec<String> = (0..n)
                .map(|i| format!(r#"{{"{name}":{i},"t":["a","],["],"m":{{"x":[{i}]}}}}"#))
                .collect();
            rows.join(",\n")
        };
        // `b` is long enough for a second round, `c` is not.
        let text = format!(
            r#"{{"a":[{}],"b":[{}],"c":[{}],"n":0}}"#,
            rows("a", 40_000),
            rows("b", 30_000),
            rows("c", 10)
        );
        let b_at = text.find(r#""b":["#).unwrap();
        let c_at = text.find(r#""c":["#).unwrap();
        let offers = Offers::new(0);
        help(&text, 0, text.len() / 3, &offers, PARSE);
        let starts: Vec<usize> = offers.list.lock().unwrap().iter().map(|o| o.0).collect();
        let in_b: Vec<usize> = starts.iter().copied().filter(|&s| s > b_at).collect();
        assert_eq!(in_b.len(), 1, "{starts:?}, b at {b_at}, c at {c_at}");
        // Halfway through what follows `a`, inside `b`.
        assert!(in_b[0] < c_at && text[in_b[0]..].starts_with("\n{\"b\":"));
        let mut p = Parser::new(&text, 0, MAX_DEPTH, Some(&offers), None);
        let helped = p.document().map(|v| (v, p.duplicates));
        assert!(offers.list.lock().unwrap().is_empty(), "every offer taken");
        assert_eq!(
            helped.map_err(|f| f.into_error(&text, MAX_DEPTH)),
            parse_forking_from(&text, MAX_DEPTH, usize::MAX)
        );
    }

    #[test]
    fn the_helper_offers_a_tail_and_segments_back_to_the_main_parser() {
        let rows: Vec<String> = (0..45_000)
            .map(|i| format!(r#"{{"id":{i},"tags":["a","b,]"],"m":{{"x":[{i}]}}}}"#))
            .collect();
        let text = format!(r#"{{"meta":[1],"rows":[{}],"n":0}}"#, rows.join(",\n"));
        let b = text.as_bytes();
        let (at, around) = Scan::new(0).boundary(b, b.len() / 2, usize::MAX).unwrap();
        assert_eq!(around, [false]);
        assert!(text[..at].ends_with(",") && text[at..].starts_with("\n{\"id\":"));
        // The helper first, as if the main parser were slow to start: then it takes them all.
        let offers = Offers::new(0);
        help(&text, 0, b.len() / 2, &offers, PARSE);
        let starts: Vec<usize> = offers.list.lock().unwrap().iter().map(|o| o.0).collect();
        assert_eq!(starts.len(), 4, "{starts:?} of {}", b.len());
        let mut p = Parser::new(&text, 0, MAX_DEPTH, Some(&offers), None);
        let helped = p.document().map(|v| (v, p.duplicates));
        assert!(offers.list.lock().unwrap().is_empty());
        assert_eq!(
            helped.map_err(|f| f.into_error(&text, MAX_DEPTH)),
            parse_forking_from(&text, MAX_DEPTH, usize::MAX)
        );
        assert!(text.len() >= MIN_BYTES);
        assert_eq!(
            parse_with_max_depth(&text, MAX_DEPTH),
            parse_forking_from(&text, MAX_DEPTH, usize::MAX).map(|(v, _)| v)
        );
    }
}
