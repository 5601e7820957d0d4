//! What the stream notes of a list's items as it writes them (offsets into its output), for
//! the list ops that act on the written text ([`super::ListHooks`]) to decide over and to
//! write the list again.
//!
//! ```text
//! written:  {"e":[{"t":"A","v":1},{"t":"A","v":2}]}
//! noted:    item 6..21, members "t" 7..14 and "v" 15..20; item 22..37, members 23..30, 31..36
//! ```

use std::ops::Range;

/// The most [`Written::with_room`] reserves for each of its two lists.
const ROOM_BYTES: usize = 64 << 20;

/// What the stream noted of a list's items as it wrote them: offsets into its output (32
/// bits: a longer output stops the stream, see [`ItemSpan::new`]).
#[derive(Default)]
pub(crate) struct Written {
    pub items: Vec<ItemSpan>,
    pub members: Vec<MemberSpan>,
}

impl Written {
    /// Room for the items and members of up to `bytes` of text, reserved (not touched) so
    /// that a large list is seldom copied as it grows: a member takes at least 6 bytes of
    /// text (`"k":0,`), most take several times that. At most [`ROOM_BYTES`] each: past
    /// that the lists grow as they go, so a huge text never asks for address space it may
    /// not be given.
    pub(crate) fn with_room(bytes: usize) -> Written {
        let room = |per: usize, size: usize| (bytes / per).min(ROOM_BYTES / size);
        Written {
            items: Vec::with_capacity(room(64, size_of::<ItemSpan>())),
            members: Vec::with_capacity(room(24, size_of::<MemberSpan>())),
        }
    }

    /// Note `other`'s items (offsets into a text appended at `base`) after these; `None`
    /// when the offsets no longer fit in 32 bits.
    pub(crate) fn append(&mut self, other: Written, base: usize) -> Option<()> {
        let end = other.items.last().map_or(0, |i| i.end);
        let base = u32::try_from(base)
            .ok()
            .filter(|b| b.checked_add(end).is_some())?;
        let first = u32::try_from(self.members.len() + other.members.len()).ok()?
            - other.members.len() as u32;
        self.members
            .extend(other.members.into_iter().map(|m| MemberSpan {
                start: m.start + base,
                colon: m.colon + base,
                end: m.end + base,
                gone: false,
            }));
        self.items.extend(other.items.into_iter().map(|i| ItemSpan {
            start: i.start + base,
            end: i.end + base,
            members: (i.members.0 + first, i.members.1 + first),
            object: i.object,
        }));
        Some(())
    }
}

/// An item: where it was written, and (an object) its members in [`Written::members`].
pub(crate) struct ItemSpan {
    start: u32,
    end: u32,
    members: (u32, u32),
    /// Whether it is an object.
    pub(crate) object: bool,
}

impl ItemSpan {
    /// `None` when an offset does not fit in 32 bits.
    pub(crate) fn new(text: Range<usize>, members: Range<usize>, object: bool) -> Option<ItemSpan> {
        Some(ItemSpan {
            start: u32::try_from(text.start).ok()?,
            end: u32::try_from(text.end).ok()?,
            members: (
                u32::try_from(members.start).ok()?,
                u32::try_from(members.end).ok()?,
            ),
            object,
        })
    }
    /// Where it was written.
    pub(crate) fn span(&self) -> Range<usize> {
        self.start as usize..self.end as usize
    }
    /// Its members, indices into [`Written::members`].
    pub(crate) fn members(&self) -> Range<usize> {
        self.members.0 as usize..self.members.1 as usize
    }
}

/// A member of an item: `"key"` at `start..colon`, its value from `colon + 1` to `end`.
pub(crate) struct MemberSpan {
    start: u32,
    colon: u32,
    end: u32,
    /// Taken out by an op.
    pub(crate) gone: bool,
}

impl MemberSpan {
    /// `None` when an offset does not fit in 32 bits.
    pub(crate) fn new(start: usize, colon: usize, end: usize) -> Option<MemberSpan> {
        Some(MemberSpan {
            start: u32::try_from(start).ok()?,
            colon: u32::try_from(colon).ok()?,
            end: u32::try_from(end).ok()?,
            gone: false,
        })
    }
    /// Where it was written.
    pub(crate) fn span(&self) -> Range<usize> {
        self.start as usize..self.end as usize
    }
    /// Its key, quoted, as written.
    pub(crate) fn key(&self) -> Range<usize> {
        self.start as usize..self.colon as usize
    }
    /// Its value, as written.
    pub(crate) fn value(&self) -> Range<usize> {
        self.colon as usize + 1..self.end as usize
    }
}
