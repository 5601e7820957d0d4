//! Members left out as they are written: for a request the engine's stream would do whole
//! (`$..name` drops and a plain `prune`, JSON out, no budget: [`pare::respond::Omitting`]),
//! a dict's members that the policy drops or prunes are cut from the text as soon as their
//! value is written, with the engine deciding each one and counting it as the stream would.
//!
//! Why: the text was otherwise written whole, then read again by the stream only to leave
//! most of it out; on the 1 MB entities dict that second pass was most of `Policy.shape`.
//!
//! The text is the stream's output for the whole text, byte for byte, and so are the counts
//! (`tests/test_omitting.py` compares the two ways). A member a key drops is still written
//! (then cut), so what it holds raises the errors it would have raised, and its value tells
//! the engine whether it was empty. pydantic's own JSON of a model is left out of by the
//! engine's stream, on that stretch alone.
//!
//! ```text
//! drop $..at, prune:  {"a": {"at": 1, "b": None}, "c": [{"at": 2}]}  →  {"c":[{}]}
//! ```

use std::borrow::Cow;

use pare::respond::{Mark, Omitting};
use pyo3::ffi;

use super::sink::Sink;
use super::{Dumper, Failed, Failure, KeyCache, failed};

/// What a text being written leaves out.
pub(crate) struct Leaving {
    pub(crate) omitting: Omitting,
}

impl Leaving {
    pub(crate) fn new(omitting: Omitting) -> Leaving {
        Leaving { omitting }
    }

    /// A copy for a thread that writes part of the same text, nothing counted yet.
    pub(crate) fn fork(&self) -> Leaving {
        Leaving {
            omitting: self.omitting.fork(),
        }
    }

    /// What the request decides of a member's key, written (quoted, escaped) as `quoted`;
    /// `cached`: a key cache (whose [`KeyCache::text`] is this text) and the key's `str`
    /// object, when the cache may hold it (a dict's key), whose slot then remembers the
    /// mark for the rest of the text.
    pub(crate) fn mark(
        &self,
        cached: Option<(&mut KeyCache, *mut ffi::PyObject)>,
        quoted: &str,
    ) -> Mark {
        let slot = cached.and_then(|(keys, k)| {
            let i = KeyCache::slot(k);
            let marks = keys.marks.as_mut()?;
            (keys.slots[i].key == k).then_some((&mut marks[i], keys.text))
        });
        if let Some(((text, mark), now)) = &slot
            && *text == *now
        {
            return *mark;
        }
        let mark = self.omitting.mark(&key_of(quoted));
        if let Some((slot, now)) = slot {
            *slot = (now, mark);
        }
        mark
    }

    /// Whether a member whose key was written (quoted, escaped) as `quoted` and its value as
    /// `value` stays; counted when it goes.
    pub(crate) fn settle(&mut self, mark: Mark, quoted: &str, value: &str) -> bool {
        self.omitting.settle(mark, value, || key_of(quoted))
    }
}

impl<const OMIT: bool, S: Sink> Dumper<'_, '_, OMIT, S> {
    /// A member of an object, written from `member` (its comma included), its key and colon
    /// from `key_at` (`key`: its `str` object): its value written by `write`, then kept or
    /// cut as the request decides. `Ok(false)`: cut. Only with [`Dumper::omitting`] set.
    pub(super) fn member_omitting(
        &mut self,
        member: usize,
        (key_at, key): (usize, *mut ffi::PyObject),
        write: impl FnOnce(&mut Self) -> Result<(), Failed>,
    ) -> Result<bool, Failed> {
        let value_at = self.out.len();
        let leaving = self.omitting.as_ref().expect("only when leaving out");
        let mark = leaving.mark(
            Some((&mut *self.keys, key)),
            &self.out.as_str()[key_at..value_at - 1],
        );
        if mark.keeps() {
            write(self)?;
        } else {
            // Inside a member its key drops, nothing is left out (the stream looks no
            // further), but it is written: its errors are raised, and its value is read.
            let leaving = self.omitting.take();
            let written = write(self);
            self.omitting = leaving;
            written?;
        }
        let leaving = self.omitting.as_mut().expect("put back above");
        let (quoted, value) = (
            &self.out.as_str()[key_at..value_at - 1],
            &self.out.as_str()[value_at..],
        );
        if leaving.settle(mark, quoted, value) {
            return Ok(true);
        }
        self.out.truncate(member);
        Ok(false)
    }

    /// Whether a part the helper wrote (`leaving`: what it left out, when it left out) was
    /// written as this thread would write it here, leaving out or not; what it left out is
    /// then counted. The part is written here instead when not.
    pub(super) fn take_leaving(&mut self, leaving: Option<Box<Leaving>>) -> bool {
        match (self.omitting.as_mut(), leaving) {
            (None, None) => true,
            (Some(mine), Some(theirs)) => {
                mine.omitting.join(theirs.omitting);
                true
            }
            _ => false,
        }
    }

    /// The JSON written from `start` (pydantic's own, of a model, or of a run of them when
    /// `items`: the items without their brackets), with what the request leaves out left
    /// out by the engine's stream. Nothing to do without [`Dumper::omitting`].
    pub(super) fn leave_out_of_written(&mut self, start: usize, items: bool) -> Result<(), Failed> {
        let Some(leaving) = self.omitting.as_mut() else {
            return Ok(());
        };
        let written = &self.out.as_str()[start..];
        let whole: Cow<str> = match items {
            true => format!("[{written}]").into(),
            false => written.into(),
        };
        let left = leaving
            .omitting
            .leave_out(&whole)
            .ok_or_else(|| failed(Failure::GiveUp))?;
        let left = match items {
            true => &left[1..left.len() - 1],
            false => &left,
        };
        self.out.truncate(start);
        self.out.push_str(left);
        Ok(())
    }
}

thread_local! {
    /// Texts written with members left out on this thread, for the tests
    /// (`pare._pare._omitted_as_written`).
    static WRITTEN: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Note one more text written with members left out.
pub(crate) fn note_written() {
    WRITTEN.with(|n| n.set(n.get() + 1));
}

/// How many texts this thread wrote with members left out since the last call.
pub fn written_omitting() -> u64 {
    WRITTEN.with(|n| n.replace(0))
}

/// A key written (quoted, escaped) as `quoted`: the text between the quotes, decoded when
/// it holds an escape.
pub(crate) fn key_of(quoted: &str) -> Cow<'_, str> {
    let inside = &quoted[1..quoted.len() - 1];
    if !inside.as_bytes().contains(&b'\\') {
        return Cow::Borrowed(inside);
    }
    match pare::json::parse(quoted) {
        Ok(pare::Value::String(s)) => Cow::Owned(s.to_string()),
        // Not reached: the converter wrote it as a JSON string.
        _ => Cow::Borrowed(inside),
    }
}
