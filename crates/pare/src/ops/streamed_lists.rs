//! The list ops (`hoist`, `partition`) on lists the JSON stream has written
//! ([`crate::json::ListHooks`]): where they apply, what they decide over the items the stream
//! noted ([`Written`]), and the list written again once they have decided
//! ([`super::records`]).
//!
//! Why: with these two done on the written text, the shipped `list_entities` policy needs
//! no tree at all (on 70 MB, building one was most of the time).
//!
//! The stream does them only where it can know it is exactly where the walk would: every
//! list an op names is a path of member names from the root (`$.entities`, `$.a.b`), which
//! the stream follows key by key, or a member name anywhere (`$..entities`), which it looks
//! up at every member (a list of those inside the items of a list being noted is left to
//! the tree). Any other selector (`$..a.b`, `[*]`, a pattern) leaves the policy to the tree.
//!
//! ```text
//! hoist $.e:   {"e":[{"t":"A","v":1},{"t":"A","v":2}]}
//! written:     {"e":[{"t":"A","v":1},{"t":"A","v":2}]}   items 6..21, 22..37; members "t", "v"
//! again:       {"e_common":{"t":"A"},"e":[{"v":1},{"v":2}]}
//! ```

use std::ops::Range;

use super::ListOp;
use super::hoist::Hoist;
use super::records::Records;
use crate::json::{ListHooks, Narrow, ROOT, Written, find_special, write_string};
use crate::query::selector::{Item, SelectorSet};

/// Where the list ops of a policy's level apply: a tree of member names from the root.
pub(crate) struct Lists<'p> {
    nodes: Vec<Node<'p>>,
    /// Member name → node, for `$..name`: at any depth.
    anywhere: Vec<(String, usize)>,
}

#[derive(Default)]
struct Node<'p> {
    /// Member name → node.
    children: Vec<(String, usize)>,
    /// The selectors that name this node (noted when the stream reaches it).
    selectors: Vec<usize>,
    /// The list ops that name it, in policy order.
    ops: Vec<ListOp<'p>>,
}

impl<'p> Lists<'p> {
    /// The lists `ops` (the ones the parser does not do, in policy order; `None` for one
    /// that is not a list op) name; `None` unless each is a list op whose every selector is
    /// a path of member names.
    pub(crate) fn new(
        set: &SelectorSet,
        ops: impl IntoIterator<Item = Option<ListOp<'p>>>,
    ) -> Option<Lists<'p>> {
        let mut lists = Lists {
            nodes: vec![Node::default()],
            anywhere: Vec::new(),
        };
        for list in ops {
            let list = list?;
            for &s in list.at() {
                let mut node = ROOT;
                let mut segments = set.selector(s).segments();
                if let [only] = segments
                    && only.descendant
                {
                    let [Item::Name(name)] = &only.items[..] else {
                        return None;
                    };
                    node = lists.anywhere_or_new(name);
                    segments = &[];
                }
                for segment in segments {
                    let [Item::Name(name)] = &segment.items[..] else {
                        return None;
                    };
                    if segment.descendant {
                        return None;
                    }
                    node = lists.child_or_new(node, name);
                }
                // `$` alone: a list with no key, which only the walk handles.
                if node == ROOT {
                    return None;
                }
                let here = &mut lists.nodes[node];
                here.selectors.push(s);
                if !here.ops.iter().any(|o| same(o, &list)) {
                    here.ops.push(list);
                }
            }
        }
        Some(lists)
    }

    fn child_or_new(&mut self, node: usize, name: &str) -> usize {
        if let Some(child) = self.child_of(node, name) {
            return child;
        }
        self.nodes.push(Node::default());
        let child = self.nodes.len() - 1;
        self.nodes[node].children.push((name.to_owned(), child));
        child
    }

    fn anywhere_or_new(&mut self, name: &str) -> usize {
        if let Some(node) = self.anywhere(name) {
            return node;
        }
        self.nodes.push(Node::default());
        let node = self.nodes.len() - 1;
        self.anywhere.push((name.to_owned(), node));
        node
    }

    /// The node of member `key` of the object at `node`.
    #[inline]
    fn child_of(&self, node: usize, key: &str) -> Option<usize> {
        let children = &self.nodes[node].children;
        children.iter().find(|(k, _)| k == key).map(|&(_, c)| c)
    }
}

impl ListHooks for Lists<'_> {
    fn nodes(&self) -> usize {
        self.nodes.len()
    }

    #[inline]
    fn child(&self, node: usize, key: &str) -> Option<usize> {
        self.child_of(node, key).or_else(|| self.anywhere(key))
    }

    #[inline]
    fn anywhere(&self, key: &str) -> Option<usize> {
        self.anywhere
            .iter()
            .find(|(k, _)| k == key)
            .map(|&(_, n)| n)
    }

    fn has_ops(&self, node: usize) -> bool {
        !self.nodes[node].ops.is_empty()
    }

    /// The hoist that is the first op at `node`: it decides over the items as written, so
    /// the stream can narrow it item by item as it writes them ([`Narrowing`]).
    fn narrowing(&self, node: usize) -> Option<Box<dyn Narrow + '_>> {
        match self.nodes[node].ops.first() {
            Some(ListOp::Hoist(hoist)) => Some(Box::new(Narrowing {
                hoist,
                candidates: None,
                seen: 0,
            })),
            _ => None,
        }
    }

    fn selectors_hit(&self, reached: &[bool]) -> Vec<usize> {
        let nodes = self.nodes.iter().zip(reached);
        nodes
            .filter(|&(_, &r)| r)
            .flat_map(|(n, _)| n.selectors.iter().copied())
            .collect()
    }

    /// Hoisted siblings go before the member.
    fn apply(
        &self,
        node: usize,
        key: &str,
        out: &mut String,
        (member, start): (usize, usize),
        mut written: Written,
        mut narrowed: Option<Box<dyn Narrow + '_>>,
    ) -> Vec<String> {
        let mut siblings: Vec<(String, String)> = Vec::new();
        let mut groups = None;
        for op in &self.nodes[node].ops {
            if groups.is_some() {
                break; // a list no more: the ops after a partition find none here
            }
            let spans = Spans {
                out: out.as_bytes(),
                w: &written,
            };
            match op {
                ListOp::Hoist(h) => {
                    // The leading hoist, narrowed as the items were written, goes on from there.
                    let at = match narrowed.take().and_then(Narrow::so_far) {
                        Some((candidates, seen)) => h.constant_after(&spans, candidates, seen),
                        None => h.constant(&spans),
                    };
                    if at.is_empty() {
                        continue;
                    }
                    let first: Vec<usize> = spans.live(0).collect();
                    let hoisted: Vec<usize> = at.iter().map(|&j| first[j]).collect();
                    let mut common = String::from("{");
                    for (n, &m) in hoisted.iter().enumerate() {
                        if n > 0 {
                            common.push(',');
                        }
                        common.push_str(&out[written.members[m].span()]);
                    }
                    common.push('}');
                    let gone = spans.find_in_each(hoisted.iter().map(|&m| spans.key(m)));
                    for m in gone {
                        written.members[m].gone = true;
                    }
                    siblings.push((h.sibling_name(key), common));
                }
                ListOp::Partition(p) => {
                    let Some((slot_of, kinds)) = p.slots(&spans) else {
                        continue;
                    };
                    let mut by = String::new();
                    write_string(p.by(), &mut by);
                    let by = spans.find_in_each(std::iter::once(by.as_bytes()));
                    let mut order: Vec<(Range<usize>, Vec<usize>)> = Vec::with_capacity(kinds);
                    for (i, (&slot, &m)) in slot_of.iter().zip(&by).enumerate() {
                        if slot == order.len() {
                            order.push((written.members[m].value(), Vec::new()));
                        }
                        order[slot].1.push(i);
                    }
                    for m in by {
                        written.members[m].gone = true;
                    }
                    groups = Some(order);
                }
            }
        }
        if siblings.is_empty() && groups.is_none() {
            return Vec::new();
        }
        // Written again into a new buffer, which takes what comes before when that is
        // shorter than the list (a list at the top of the document): one copy, not two.
        let whole = member < out.len() - member;
        let mut again = match whole {
            true => {
                let mut again = String::with_capacity(out.capacity());
                again.push_str(&out[..member]);
                again
            }
            false => String::with_capacity(out.len() - member + 64),
        };
        for (name, value) in &siblings {
            write_string(name, &mut again);
            again.push(':');
            again.push_str(value);
            again.push(',');
        }
        again.push_str(&out[member..start]);
        match &groups {
            None => {
                again.push('[');
                write_items(out, &written, 0..written.items.len(), &mut again);
                again.push(']');
            }
            Some(groups) => {
                again.push('{');
                for (g, (kind, items)) in groups.iter().enumerate() {
                    if g > 0 {
                        again.push(',');
                    }
                    again.push_str(&out[kind.clone()]);
                    again.push_str(":[");
                    write_items(out, &written, items.iter().copied(), &mut again);
                    again.push(']');
                }
                again.push('}');
            }
        }
        if whole {
            *out = again;
        } else {
            out.truncate(member);
            out.push_str(&again);
        }
        siblings.into_iter().map(|(name, _)| name).collect()
    }
}

/// A list's leading hoist, decided item by item while the stream writes the items (each
/// still in the cache): the first item's fields that every item so far has alike.
struct Narrowing<'p> {
    hoist: &'p Hoist,
    candidates: Option<Vec<usize>>,
    /// Items the candidates are narrowed by.
    seen: usize,
}

impl Narrow for Narrowing<'_> {
    fn narrow(&mut self, out: &str, written: &Written) {
        let spans = Spans {
            out: out.as_bytes(),
            w: written,
        };
        let count = spans.count();
        if self.seen == count {
            return;
        }
        let candidates = self.candidates.get_or_insert_with(|| {
            self.seen = 1;
            self.hoist.candidates(&spans).unwrap_or_default()
        });
        for i in self.seen..count {
            if candidates.is_empty() {
                break;
            }
            self.hoist.narrow(&spans, i, candidates);
        }
        self.seen = count;
    }

    fn so_far(self: Box<Self>) -> Option<(Vec<usize>, usize)> {
        Some((self.candidates?, self.seen))
    }
}

/// Two list ops are one when they are the same op of the policy.
fn same(a: &ListOp, b: &ListOp) -> bool {
    match (a, b) {
        (ListOp::Hoist(a), ListOp::Hoist(b)) => std::ptr::eq(*a, *b),
        (ListOp::Partition(a), ListOp::Partition(b)) => std::ptr::eq(*a, *b),
        _ => false,
    }
}

/// The items `which` of `written`, less their gone members, comma separated. The members
/// between two gone ones are copied as one run.
fn write_items(
    out: &str,
    written: &Written,
    which: impl Iterator<Item = usize>,
    again: &mut String,
) {
    for (n, i) in which.enumerate() {
        if n > 0 {
            again.push(',');
        }
        let item = &written.items[i];
        if !item.object {
            again.push_str(&out[item.span()]);
            continue;
        }
        again.push('{');
        let mut run: Option<Range<usize>> = None;
        let mut runs = 0;
        for m in &written.members[item.members()] {
            match (&mut run, m.gone) {
                (Some(r), false) => r.end = m.span().end,
                (None, false) => run = Some(m.span()),
                (Some(_), true) => flush(out, run.take(), &mut runs, again),
                (None, true) => {}
            }
        }
        flush(out, run, &mut runs, again);
        again.push('}');
    }
}

/// One run of members, after a comma unless it is the item's first.
fn flush(out: &str, run: Option<Range<usize>>, runs: &mut usize, again: &mut String) {
    if let Some(r) = run {
        if *runs > 0 {
            again.push(',');
        }
        again.push_str(&out[r]);
        *runs += 1;
    }
}

/// The written form, as the list ops read it.
struct Spans<'r> {
    out: &'r [u8],
    w: &'r Written,
}

impl<'r> Spans<'r> {
    /// Item `i`'s members still there (indices into [`Written::members`]).
    fn live(&self, i: usize) -> impl Iterator<Item = usize> + use<'r> {
        let members = &self.w.members;
        let item = &self.w.items[i];
        let range = if item.object { item.members() } else { 0..0 };
        range.filter(move |&m| !members[m].gone)
    }

    fn key(&self, m: usize) -> &'r [u8] {
        &self.out[self.w.members[m].key()]
    }

    /// In each item, the live members whose keys are among `keys` (spelt as written).
    /// Items mostly list their members in one order: each key is looked for first where
    /// it was in the item before.
    fn find_in_each<'k>(&self, keys: impl Iterator<Item = &'k [u8]>) -> Vec<usize> {
        let keys: Vec<&[u8]> = keys.collect();
        let mut at = vec![0usize; keys.len()];
        let mut found = Vec::with_capacity(self.w.items.len() * keys.len());
        for (i, item) in self.w.items.iter().enumerate() {
            if !item.object {
                continue;
            }
            let members = item.members();
            for (key, at) in keys.iter().zip(&mut at) {
                let guess = members.start + *at;
                let hit =
                    (guess < members.end && !self.w.members[guess].gone && self.key(guess) == *key)
                        .then_some(guess)
                        .or_else(|| self.live(i).find(|&m| self.key(m) == *key));
                if let Some(m) = hit {
                    *at = m - members.start;
                    found.push(m);
                }
            }
        }
        found
    }
}

impl<'r> Records<'r> for Spans<'r> {
    type Value = &'r [u8];

    fn count(&self) -> usize {
        self.w.items.len()
    }

    fn members(&self, i: usize) -> Option<impl Iterator<Item = (&'r [u8], &'r [u8])>> {
        let (out, members) = (self.out, &self.w.members);
        self.w.items[i].object.then(|| {
            self.live(i).map(move |m| {
                let m = &members[m];
                (&out[m.key()], &out[m.value()])
            })
        })
    }

    /// Keys are written as JSON strings, one spelling each.
    fn spells(&self, key: &[u8], name: &str) -> bool {
        if find_special(name.as_bytes(), 0) == name.len() {
            return key.len() == name.len() + 2 && &key[1..key.len() - 1] == name.as_bytes();
        }
        let mut spelt = String::with_capacity(name.len() + 8);
        write_string(name, &mut spelt);
        key == spelt.as_bytes()
    }

    fn string(&self, value: &'r [u8]) -> Option<&'r [u8]> {
        value.starts_with(b"\"").then_some(value)
    }
}
