//! What the stream asks of the list ops that act on the lists it writes (`hoist`,
//! `partition`), so that `json` names no op: the ops implement [`ListHooks`]
//! (`crate::ops::streamed_lists`), the stream calls it.
//!
//! Why a trait object: its calls are few (a key on an op's path, an item of a noted list,
//! a list once written), each beside far more parsing work; `bench/compare.sh` showed no
//! difference from the direct calls it replaced.
//!
//! The places ops apply are nodes of a tree of member names from the root ([`ROOT`]): the
//! stream follows it key by key ([`ListHooks::child`]), notes the items of a list where ops
//! apply ([`super::Written`]), and hands the list to them ([`ListHooks::apply`]).

use super::written::Written;

/// The root's node.
pub(crate) const ROOT: usize = 0;

/// The list ops of a policy's level, as the stream sees them.
pub(crate) trait ListHooks {
    /// How many nodes there are (indices `0..nodes()`).
    fn nodes(&self) -> usize;

    /// The node of member `key` of the object at `node`.
    fn child(&self, node: usize, key: &str) -> Option<usize>;

    /// The node of member `key` of an object off every path: one a `$..key` names.
    fn anywhere(&self, key: &str) -> Option<usize>;

    /// Whether a list op applies at `node`.
    fn has_ops(&self, node: usize) -> bool;

    /// What decides item by item, as the stream writes the items, for the list at `node`.
    fn narrowing(&self, node: usize) -> Option<Box<dyn Narrow + '_>>;

    /// The selectors that name the nodes `reached`.
    fn selectors_hit(&self, reached: &[bool]) -> Vec<usize>;

    /// The ops at `node` on the list written at `out[start..]` (`key`: its member name;
    /// `member`: where that member's key begins), with what was `written` of its items and
    /// its `narrowed` [`ListHooks::narrowing`]: the list is written again when they change
    /// it, with the members they put beside it before it. Those members' names, for the
    /// caller to check against the object's other keys.
    fn apply(
        &self,
        node: usize,
        key: &str,
        out: &mut String,
        at: (usize, usize),
        written: Written,
        narrowed: Option<Box<dyn Narrow + '_>>,
    ) -> Vec<String>;
}

/// A decision made item by item while the stream writes a list's items (each still in the
/// cache).
pub(crate) trait Narrow {
    /// Narrow by the items of `written` (at `out`) not yet seen.
    fn narrow(&mut self, out: &str, written: &Written);

    /// What it decided so far, for [`ListHooks::apply`] to go on from: the first item's
    /// members still candidates, and how many items narrowed them; `None` before any item.
    fn so_far(self: Box<Self>) -> Option<(Vec<usize>, usize)>;
}
