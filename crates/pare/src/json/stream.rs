//! Compact JSON written straight from the text, leaving out what an [`Omit`] names, with no
//! value built: for a policy whose every op the parser does (`$..name` drops and a plain
//! `prune`, see [`crate::early`]) and JSON out, the whole response.
//!
//! Why: building a tree only to write it out again was most of `pare compact`'s time on a
//! large payload (70 MB: parse 100 ms, render 27 ms). Writing as it reads, this does the
//! same in one pass over the text and one output buffer.
//!
//! It is the parser's own grammar (the same [`Parser`] methods read numbers, literals,
//! escapes and keys, and check the nesting depth and repeated keys), so the output is
//! exactly `write_compact` of what [`super::parse_omitting`] gives, and what it left out is
//! counted the same. Where that could differ, or would need more than this keeps, it stops
//! and says so (`None`), and the caller takes the parser's way:
//! - a text that is not JSON (the parser then names the error);
//! - an object that repeats a key (the parser keeps the last value, at the first key's
//!   place, and warns).
//!
//! Keys are compared decoded (`"a"` and `"\u0061"` are one key), in a short list per object
//! with a bit filter, and past [`LINEAR_KEYS`] members in a hash set, as the parser does.
//!
//! A member is written as it is read; when it turns out to be left out (its key is
//! dropped, or its value is empty and pruned) the output is cut back to where it began.
//!
//! ```text
//! drop $..at, prune:  {"a": {"at": 1, "b": null}, "c": [ {"at": 2} ]}  →  {"c":[{}]}
//! ```

use std::borrow::Cow;
use std::collections::HashSet;
use std::hash::{BuildHasher, RandomState};

use super::find_special;
use super::fork::{self, Offers};
use super::hooks::{ListHooks, Narrow, ROOT};
use super::omit::{At, Emptiness, KEEP, Omit, Omitted};
use super::parse::{Fail, Items, KeyFilter, LINEAR_KEYS, Parser, Tail, after_bom, filter_bit};
use super::paths::Paths;
use super::write::write_string;
use super::written::{ItemSpan, MemberSpan, Written};
use crate::value::Value;

/// Why the stream stopped (see the module docs): the parser reads the text instead.
struct Stop;

impl From<Fail> for Stop {
    fn from(_: Fail) -> Stop {
        Stop
    }
}

type Step<T> = Result<T, Stop>;

/// What [`compact_omitting`] wrote: the text, what it left out, and the selectors of list
/// ops it reached.
pub(crate) struct Streamed {
    pub text: String,
    pub omitted: Omitted,
    pub selectors_hit: Vec<usize>,
}

/// What the caller knows of the text it hands [`compact_omitting`].
#[derive(Clone, Copy)]
pub(crate) struct Known {
    /// No object in it repeats a key (a door wrote it from its own map objects): the
    /// stream does not look. Were one repeated, it would be written twice.
    pub keys_unique: bool,
    /// Texts from this long are read on two threads.
    pub fork_from: usize,
}

impl Known {
    /// Any text, in any process: repeated keys are looked for (and stop the stream), and
    /// two threads start at [`fork::MIN_BYTES`].
    pub(crate) const NOTHING: Known = Known {
        keys_unique: false,
        fork_from: fork::MIN_BYTES,
    };

    /// A short stretch of text a door has whole, inside a text it writes: on this thread,
    /// and repeated keys looked for.
    pub(crate) const ONE_THREAD: Known = Known {
        keys_unique: false,
        fork_from: usize::MAX,
    };

    /// Text a door wrote from its own objects in a long-lived process
    /// ([`crate::Request::written_by_door`]): no repeated keys, and two threads from
    /// [`fork::WARM_MIN_BYTES`] (a thread is cheap to start once a process is warm).
    pub(crate) const WRITTEN_BY_DOOR: Known = Known {
        keys_unique: true,
        fork_from: fork::WARM_MIN_BYTES,
    };
}

/// `text` as compact JSON, less the members `omit` leaves out, with `lists`' ops applied to
/// the lists they name; `None` when the parser must read the text instead (see the module
/// docs).
pub(crate) fn compact_omitting(
    text: &str,
    omit: &Omit,
    lists: Option<&dyn ListHooks>,
    known: Known,
) -> Option<Streamed> {
    let start = after_bom(text);
    let unique = known.keys_unique;
    let document = |offers: Option<&Offers>| match lists {
        Some(lists) => document::<true>(text, start, offers, omit, Some(lists), unique),
        None => document::<false>(text, start, offers, omit, None, unique),
    };
    // A large text on two threads, as the parser reads one (see [`super::fork`]).
    // A helper writes elements before it knows whose they are: not with scoped tests.
    if text.len() >= known.fork_from && !omit.scoped() && crate::has_second_core() {
        let note_items = lists.is_some();
        fork::stream_with_help(text, start, omit, (note_items, unique), |offers| {
            document(Some(offers))
        })
    } else {
        document(None)
    }
}

/// [`compact_omitting`] on this thread; `LISTS`: whether `lists` is given (without, the
/// stream does nothing for list ops, at no cost).
fn document<const LISTS: bool>(
    text: &str,
    start: usize,
    offers: Option<&Offers>,
    omit: &Omit,
    lists: Option<&dyn ListHooks>,
    keys_unique: bool,
) -> Option<Streamed> {
    // Compact output is at most about as long as the text: one buffer of that size, never
    // copied as it grows.
    let mut s = Stream::<LISTS>::new(text, start, super::MAX_DEPTH, offers, omit, text.len());
    s.keys_unique = keys_unique;
    s.lists = lists;
    s.node = lists.map(|_| ROOT);
    s.reached = vec![false; lists.map_or(0, |l| l.nodes())];
    s.value().ok()?;
    s.p.skip_ws();
    let selectors_hit = lists.map_or_else(Vec::new, |l| l.selectors_hit(&s.reached));
    (s.p.pos == text.len()).then_some(Streamed {
        text: s.out,
        omitted: s.p.omitted,
        selectors_hit,
    })
}

/// [`compact_omitting`] with no list ops, on this thread, noting the path of each member
/// it leaves out ([`Paths`]): what a report's manifest says.
pub(crate) fn compact_noting_paths(text: &str, omit: &Omit) -> Option<(Streamed, Paths)> {
    let start = after_bom(text);
    let mut s = Stream::<false>::new(text, start, super::MAX_DEPTH, None, omit, text.len());
    s.paths = Some(Paths::new());
    s.value().ok()?;
    s.p.skip_ws();
    let paths = s.paths.take()?;
    (s.p.pos == text.len()).then_some((
        Streamed {
            text: s.out,
            omitted: s.p.omitted,
            selectors_hit: Vec::new(),
        },
        paths,
    ))
}

/// A helper's elements of an array, from `at` (just after a comma) to its closing `]` or
/// to just after the comma at `stop` (see [`super::fork`]), written as compact JSON; with
/// `note_items` (a policy with list ops), where each element and its members went, in case
/// they are a list's items.
pub(super) fn elements(
    text: &str,
    at: usize,
    stop: Option<usize>,
    (max_depth, note_items, keys_unique): (usize, bool, bool),
    offers: &Offers,
    omit: &Omit,
) -> Option<Tail> {
    let depth = (max_depth, keys_unique);
    match note_items {
        true => elements_noting::<true>(text, at, stop, depth, offers, omit),
        false => elements_noting::<false>(text, at, stop, depth, offers, omit),
    }
}

fn elements_noting<const LISTS: bool>(
    text: &str,
    at: usize,
    stop: Option<usize>,
    (max_depth, keys_unique): (usize, bool),
    offers: &Offers,
    omit: &Omit,
) -> Option<Tail> {
    // At most as long as the text they come from (see above).
    let capacity = stop.unwrap_or(text.len()) - at;
    let mut s = Stream::<LISTS>::new(text, at, max_depth, None, omit, capacity);
    s.keys_unique = keys_unique;
    // Its elements may be a list's items: noted, for the main stream to use if so.
    if LISTS {
        s.item_depth = max_depth.checked_sub(1);
        s.written = Written::with_room(capacity);
    }
    let mut n = 0;
    let closed = fork::read_elements(
        &mut s,
        |s| &mut s.p,
        at,
        stop,
        offers,
        |s| {
            if n > 0 {
                s.out.push(',');
            }
            s.item(LISTS).ok()?;
            n += 1;
            Some(())
        },
    )?;
    Some(Tail {
        items: Items::Text(s.out, n, s.written),
        end: s.p.pos,
        closed,
        depth: max_depth - s.p.min_depth_left,
        duplicates: Vec::new(),
        omitted: s.p.omitted,
    })
}

/// The parser, the keys of the objects open (innermost last; decoded only when written
/// with escapes), and the output.
struct Stream<'a, const LISTS: bool> {
    p: Parser<'a>,
    keys: Vec<Cow<'a, str>>,
    out: String,
    /// Where the list ops apply, if the policy has any.
    lists: Option<&'a dyn ListHooks>,
    /// The node (of `lists`) of the value about to be read; `None` off their paths.
    node: Option<usize>,
    /// The nodes reached, for the selectors matched.
    reached: Vec<bool>,
    /// The depth (`depth_left` inside) of the objects that are items of the list being
    /// noted, and what was noted of them.
    item_depth: Option<usize>,
    written: Written,
    /// The noted list's leading hoist, decided item by item.
    narrowing: Option<Box<dyn Narrow + 'a>>,
    /// No object repeats a key ([`Known::keys_unique`]): not looked for.
    keys_unique: bool,
    /// The path of each member left out, for a report ([`compact_noting_paths`]).
    paths: Option<Paths>,
}

/// A member an object kept, where it was written (after its comma, if any): its key at
/// `key`, the colon at `colon`, its value up to `end`; `k` in [`Stream::keys`].
struct Kept {
    k: usize,
    empty: Emptiness,
    key: usize,
    colon: usize,
    end: usize,
}

/// The keys one object has had, beside its stretch of [`Stream::keys`]: a bit filter while
/// it is short, then a set of their hashes, with random keys (a large object stays linear,
/// and crafted collisions only cost a scan).
struct Seen {
    filter: KeyFilter,
    hashes: Option<(RandomState, HashSet<u64>)>,
}

impl Seen {
    fn new() -> Seen {
        Seen {
            filter: [0; 4],
            hashes: None,
        }
    }

    /// Whether `key` is one of `earlier` (the object's keys so far); notes it.
    fn repeats(&mut self, key: &str, earlier: &[Cow<str>]) -> bool {
        if self.hashes.is_none() && earlier.len() >= LINEAR_KEYS {
            let state = RandomState::new();
            let set = earlier.iter().map(|k| state.hash_one(k.as_ref())).collect();
            self.hashes = Some((state, set));
        }
        let is_earlier = || earlier.iter().any(|k| k.as_ref() == key);
        if let Some((state, set)) = &mut self.hashes {
            return !set.insert(state.hash_one(key)) && is_earlier();
        }
        let (word, bit) = filter_bit(key);
        let repeated = self.filter[word] & bit != 0 && is_earlier();
        self.filter[word] |= bit;
        repeated
    }
}

impl<'a, const LISTS: bool> Stream<'a, LISTS> {
    fn new(
        text: &'a str,
        at: usize,
        max_depth: usize,
        offers: Option<&'a Offers>,
        omit: &'a Omit,
        capacity: usize,
    ) -> Self {
        Stream {
            p: Parser::new(text, at, max_depth, offers, Some(omit)),
            keys: Vec::new(),
            out: String::with_capacity(capacity),
            lists: None,
            node: None,
            reached: Vec::new(),
            item_depth: None,
            written: Written::default(),
            narrowing: None,
            keys_unique: false,
            paths: None,
        }
    }

    /// Write the value under the cursor (after optional whitespace); how empty it is.
    fn value(&mut self) -> Step<Emptiness> {
        self.p.skip_ws();
        let start = self.p.pos;
        let empty = match self.p.peek() {
            Some(b'"') => return self.string(),
            Some(b'{') => return self.object(),
            Some(b'[') => return self.array(),
            Some(b'-' | b'0'..=b'9') => {
                self.p.pos = self.p.number_end()?;
                Emptiness::NotEmpty
            }
            Some(b't') => Emptiness::of(&self.p.literal(b"true", Value::Bool(true))?),
            Some(b'f') => Emptiness::of(&self.p.literal(b"false", Value::Bool(false))?),
            Some(b'n') => Emptiness::of(&self.p.literal(b"null", Value::Null)?),
            _ => return Err(Stop),
        };
        self.out.push_str(&self.p.text[start..self.p.pos]);
        Ok(empty)
    }

    /// A string: copied as it is when it has no escapes (the writer would write it the
    /// same), else decoded and written again.
    fn string(&mut self) -> Step<Emptiness> {
        let open = self.p.pos;
        let end = find_special(self.p.bytes, open + 1);
        let empty = if self.p.bytes.get(end) == Some(&b'"') {
            self.out.push_str(&self.p.text[open..=end]);
            self.p.pos = end + 1;
            end == open + 1
        } else {
            let s = self.p.string_slow(open, end)?;
            write_string(&s, &mut self.out);
            s.is_empty()
        };
        Ok(if empty {
            Emptiness::String
        } else {
            Emptiness::NotEmpty
        })
    }

    fn array(&mut self) -> Step<Emptiness> {
        if LISTS {
            self.node = None;
        }
        self.p.descend(self.p.pos)?;
        // The list whose items are noted (see [`Stream::list`]).
        let noting = LISTS && self.item_depth.is_some_and(|d| d + 1 == self.p.depth_left);
        self.p.pos += 1;
        self.out.push('[');
        self.p.skip_ws();
        let mut items = 0usize;
        let path_mark = self.paths.as_mut().map(Paths::enter_items);
        self.p.enter_scoped();
        if self.p.peek() == Some(b']') {
            self.p.pos += 1;
        } else {
            loop {
                if items > 0 {
                    self.out.push(',');
                }
                // An element is under no key.
                self.p.pending = 0;
                self.item(noting)?;
                items += 1;
                self.p.skip_ws();
                match self.p.peek() {
                    Some(b',') => {
                        self.p.pos += 1;
                        if let Some(offers) = self.p.offers
                            && offers.progress(self.p.pos)
                            && self.take_offers(offers, &mut items, noting)
                        {
                            break;
                        }
                    }
                    Some(b']') => {
                        self.p.pos += 1;
                        break;
                    }
                    _ => return Err(Stop),
                }
            }
        }
        self.p.depth_left += 1;
        self.p.leave_scoped();
        if let (Some(paths), Some(mark)) = (&mut self.paths, path_mark) {
            paths.leave(mark);
        }
        self.out.push(']');
        Ok(if items == 0 {
            Emptiness::Array
        } else {
            Emptiness::NotEmpty
        })
    }

    /// An element of an array; `noting`: of the list whose items are noted.
    #[inline]
    fn item(&mut self, noting: bool) -> Step<Emptiness> {
        if !noting {
            return self.value();
        }
        self.p.skip_ws();
        let (start, members) = (self.out.len(), self.written.members.len());
        let empty = self.value()?;
        let object = self.out.as_bytes()[start] == b'{';
        let members = members..self.written.members.len();
        let span = ItemSpan::new(start..self.out.len(), members, object);
        self.written.items.push(span.ok_or(Stop)?);
        if let Some(narrowing) = &mut self.narrowing {
            narrowing.narrow(&self.out, &self.written);
        }
        Ok(empty)
    }

    /// At an array element that starts where the helper offered elements: take the ones it
    /// wrote ([`Parser::take_offers_with`]), and what it noted of them when they are items
    /// of the list being noted. True when they closed the array.
    #[cold]
    fn take_offers(&mut self, offers: &Offers, items: &mut usize, noting: bool) -> bool {
        let (out, noted, narrowing) = (&mut self.out, &mut self.written, &mut self.narrowing);
        self.p.take_offers_with(offers, |_, offered| match offered {
            Items::Text(text, n, written) => {
                out.push(',');
                // Offsets past 32 bits: the main stream reads these, and stops.
                if noting && noted.append(written, out.len()).is_none() {
                    out.pop();
                    return false;
                }
                out.push_str(&text);
                if let Some(narrowing) = narrowing.as_mut().filter(|_| noting) {
                    narrowing.narrow(out, noted);
                }
                *items += n;
                true
            }
            Items::Values(_) => false,
        })
    }

    /// The value of member `k` (whose key begins at `member` in the output), at `node`,
    /// where list ops apply: a list is written with its items noted, then the ops have
    /// it; the names of the members they put before it go onto `siblings`.
    fn list(
        &mut self,
        node: usize,
        k: usize,
        member: usize,
        siblings: &mut Vec<String>,
    ) -> Step<Emptiness> {
        self.p.skip_ws();
        if self.p.peek() != Some(b'[') {
            self.node = Some(node);
            return self.value();
        }
        // A list inside an item of the list being noted: its ops would move what is noted.
        if self.item_depth.is_some() {
            return Err(Stop);
        }
        let start = self.out.len();
        let depth = self.p.depth_left.checked_sub(2).ok_or(Stop)?;
        let rest = self.p.text.len() - self.p.pos;
        let lists = self.lists.expect("a node is only set with lists");
        let outer = (
            self.item_depth.replace(depth),
            std::mem::replace(&mut self.written, Written::with_room(rest)),
            std::mem::replace(&mut self.narrowing, lists.narrowing(node)),
        );
        let empty = self.array();
        self.item_depth = outer.0;
        let written = std::mem::replace(&mut self.written, outer.1);
        let narrowed = std::mem::replace(&mut self.narrowing, outer.2);
        let empty = empty?;
        let key = &self.keys[k];
        let at = (member, start);
        siblings.extend(lists.apply(node, key, &mut self.out, at, written, narrowed));
        Ok(empty)
    }

    fn object(&mut self) -> Step<Emptiness> {
        let here = if LISTS { self.node.take() } else { None };
        self.p.descend(self.p.pos)?;
        // An item of the list being noted (see [`Stream::list`]).
        let noting = LISTS && self.item_depth == Some(self.p.depth_left);
        self.p.pos += 1;
        self.out.push('{');
        let inside = self.out.len();
        self.p.skip_ws();
        let base = self.keys.len();
        let mut seen = Seen::new();
        let mut kept = 0usize;
        // With conditional prunes: where each kept member was written, to decide at the end.
        let wheres = self.p.omit.filter(|o| o.has_wheres());
        let mut written_members: Vec<Kept> = Vec::new();
        // On a list op's path: the keys kept, and the members the ops put beside lists.
        let (mut kept_keys, mut siblings) = (Vec::new(), Vec::new());
        let at = self.p.enter_scoped();
        if self.p.peek() == Some(b'}') {
            self.p.pos += 1;
        } else {
            loop {
                let key_at = self.p.pos;
                self.key(base, &mut seen)?;
                let k = self.keys.len() - 1;
                self.p.skip_ws();
                if self.p.peek() != Some(b':') {
                    return Err(Stop);
                }
                self.p.pos += 1;
                let mark = match self.p.omit {
                    Some(omit) if self.p.scoped => {
                        self.p.pending = omit.context_of(&self.keys[k]);
                        if self.p.suspended == 0 {
                            omit.mark_at(&self.keys[k], at)
                        } else {
                            KEEP
                        }
                    }
                    Some(omit) if self.p.suspended == 0 => omit.mark(&self.keys[k]),
                    _ => KEEP,
                };
                let member_at = self.out.len();
                if kept > 0 {
                    self.out.push(',');
                }
                let key_out = self.out.len();
                match &self.keys[k] {
                    // As written: the writer would write it the same.
                    Cow::Borrowed(key) => self
                        .out
                        .push_str(&self.p.text[key_at..key_at + key.len() + 2]),
                    Cow::Owned(key) => write_string(key, &mut self.out),
                }
                let colon = self.out.len();
                self.out.push(':');
                let child = match (LISTS, here) {
                    (true, Some(n)) => self.lists.and_then(|l| l.child(n, &self.keys[k])),
                    (true, None) => self.lists.and_then(|l| l.anywhere(&self.keys[k])),
                    (false, _) => None,
                };
                if let Some(c) = child
                    && self.p.suspended == 0
                {
                    self.reached[c] = true;
                }
                let empty = if mark == KEEP {
                    match child {
                        Some(c) if self.lists.is_some_and(|l| l.has_ops(c)) => {
                            self.list(c, k, key_out, &mut siblings)?
                        }
                        _ => {
                            if LISTS {
                                self.node = child;
                            }
                            if self.paths.is_some() {
                                self.value_noting_path(k)?
                            } else {
                                self.value()?
                            }
                        }
                    }
                } else {
                    // Inside a dropped member nothing is left out (or counted), as in the walk.
                    self.p.suspended += 1;
                    let empty = self.value();
                    self.p.suspended -= 1;
                    empty?
                };
                let mark = match self.p.omit {
                    Some(omit) if self.p.suspended == 0 => {
                        let mark = omit.fate(mark, empty);
                        if mark != KEEP {
                            self.count_left_out(omit, mark, k, empty, at);
                        }
                        mark
                    }
                    _ => mark,
                };
                if mark == KEEP {
                    kept += 1;
                    if wheres.is_some() {
                        written_members.push(Kept {
                            k,
                            empty,
                            key: key_out,
                            colon,
                            end: self.out.len(),
                        });
                    }
                    if noting {
                        let span = MemberSpan::new(key_out, colon, self.out.len());
                        self.written.members.push(span.ok_or(Stop)?);
                    }
                    if here.is_some() {
                        kept_keys.push(k);
                    }
                } else {
                    self.out.truncate(member_at);
                }
                self.p.skip_ws();
                match self.p.peek() {
                    Some(b',') => {
                        self.p.pos += 1;
                        self.p.skip_ws();
                    }
                    Some(b'}') => {
                        self.p.pos += 1;
                        break;
                    }
                    _ => return Err(Stop),
                }
            }
        }
        if let Some(omit) = wheres
            && self.p.suspended == 0
            && written_members.iter().any(|m| omit.where_may_take(m.empty))
        {
            // A sibling moved the members it was written before: left to the parser.
            if !siblings.is_empty() {
                return Err(Stop);
            }
            let cut = self.close_wheres(omit, inside, &written_members, at, noting)?;
            kept -= cut.len();
            kept_keys.retain(|k| !cut.contains(k));
        }
        // The walk would make a sibling's name unique among the object's keys: rare, and
        // left to it.
        for (i, name) in siblings.iter().enumerate().filter(|_| LISTS) {
            let mut kept_names = kept_keys.iter().map(|&k| self.keys[k].as_ref());
            if siblings[..i].contains(name) || kept_names.any(|k| k == name) {
                return Err(Stop);
            }
        }
        self.keys.truncate(base);
        self.p.depth_left += 1;
        self.p.leave_scoped();
        self.out.push('}');
        Ok(if kept == 0 {
            Emptiness::Object
        } else {
            Emptiness::NotEmpty
        })
    }

    /// The conditional prunes of the object whose members (`kept`) were written from
    /// `inside` on: the members they take are counted and cut out of the output (and out of
    /// what was noted of them, `noting`); their keys ([`Kept::k`]).
    #[cold]
    fn close_wheres(
        &mut self,
        omit: &Omit,
        inside: usize,
        kept: &[Kept],
        at: At,
        noting: bool,
    ) -> Step<Vec<usize>> {
        let keys: Vec<&str> = kept.iter().map(|m| self.keys[m.k].as_ref()).collect();
        let empties: Vec<Emptiness> = kept.iter().map(|m| m.empty).collect();
        let mut marks = vec![KEEP; kept.len()];
        let out = &self.out;
        let mut value = |i: usize| {
            let m = &kept[i];
            match super::parse(&out[m.colon + 1..m.end]) {
                Ok(Value::Array(_) | Value::Object(_)) | Err(_) => None,
                Ok(v) => Some(v),
            }
        };
        omit.close_wheres(&keys, &empties, &mut marks, &mut value)
            .map_err(|_| Stop)?;
        let gone = |i: usize| marks[i] != KEEP;
        let cut: Vec<usize> = (0..kept.len())
            .filter(|&i| gone(i))
            .map(|i| kept[i].k)
            .collect();
        if cut.is_empty() {
            return Ok(cut);
        }
        for (i, m) in kept.iter().enumerate().filter(|&(i, _)| gone(i)) {
            self.count_left_out(omit, marks[i], m.k, m.empty, at);
        }
        // The members are written one after another from `inside`; those that stay are
        // written again, each after a comma but the first.
        if kept.last().map(|m| m.end) != Some(self.out.len()) {
            return Err(Stop);
        }
        let tail = self.out.split_off(inside);
        if noting {
            let first = self.written.members.len().checked_sub(kept.len());
            self.written.members.truncate(first.ok_or(Stop)?);
        }
        for m in (0..kept.len()).filter(|&i| !gone(i)).map(|i| &kept[i]) {
            if self.out.len() > inside {
                self.out.push(',');
            }
            let key = self.out.len();
            self.out.push_str(&tail[m.key - inside..m.end - inside]);
            if noting {
                let shift = |x: usize| x - m.key + key;
                let span = MemberSpan::new(key, shift(m.colon), self.out.len());
                self.written.members.push(span.ok_or(Stop)?);
            }
        }
        Ok(cut)
    }

    /// Count member `k`, left out as `mark` says, and note its path when noting paths.
    #[inline]
    fn count_left_out(&mut self, omit: &Omit, mark: u16, k: usize, empty: Emptiness, at: At) {
        let key = &self.keys[k];
        let (op, kind) = omit.count_at(mark, key, empty, at, &mut self.p.omitted);
        if let Some(paths) = &mut self.paths {
            paths.removed(op, kind, key);
        }
    }

    /// The value of member `k`, its path noted while inside it when it is a container.
    #[inline(never)]
    fn value_noting_path(&mut self, k: usize) -> Step<Emptiness> {
        self.p.skip_ws();
        let container = matches!(self.p.peek(), Some(b'{' | b'['));
        let paths = self.paths.as_mut().expect("only while noting paths");
        let mark = container.then(|| paths.enter_key(&self.keys[k]));
        let empty = self.value();
        if let (Some(paths), Some(mark)) = (&mut self.paths, mark) {
            paths.leave(mark);
        }
        empty
    }

    /// The key under the cursor, of the object whose keys start at `base` (and `seen`), onto
    /// [`Stream::keys`]; a key the object has had already stops the stream.
    fn key(&mut self, base: usize, seen: &mut Seen) -> Step<()> {
        let open = self.p.pos;
        if self.p.peek() != Some(b'"') {
            return Err(Stop);
        }
        let end = find_special(self.p.bytes, open + 1);
        let key = if self.p.bytes.get(end) == Some(&b'"') {
            self.p.pos = end + 1;
            let text: &'a str = self.p.text;
            Cow::Borrowed(&text[open + 1..end])
        } else {
            Cow::Owned(self.p.string_slow(open, end)?.into_string())
        };
        if !self.keys_unique && seen.repeats(&key, &self.keys[base..]) {
            return Err(Stop);
        }
        self.keys.push(key);
        Ok(())
    }
}
