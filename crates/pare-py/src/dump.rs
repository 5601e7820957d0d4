//! Python objects → compact JSON text, natively: what the engine reads when a caller hands
//! `Policy.shape` (or `encode`, `stats`, …) a dict instead of text.
//!
//! The text is exactly `json.dumps(obj, separators=(",", ":"), ensure_ascii=False)` for the
//! types `json.dumps` takes, with strings escaped as the engine writes them (so it is also
//! the engine's own compact form of the value, byte for byte):
//!
//! - `dict` (and subclasses) in insertion order, keys `str`; `list`, `tuple` → arrays;
//!   `str`; `bool`; `None` → `null`; `int` → its digits (any size); `float` → its `repr`
//!   (`1.5`, `1e-07`, `1e+16`); NaN and infinities are refused (JSON has none);
//! - as FastAPI's `jsonable_encoder` and orjson write them: `datetime`/`date`/`time` as
//!   `isoformat()`, `UUID` as its text, an `Enum` member as its value, a dataclass as its
//!   fields, a pydantic v2 model as `model_dump(mode="json", by_alias=True)`; `Decimal` as a
//!   number with its own digits (`Decimal("1.10")` → `1.10`; `jsonable_encoder` gives `1.1`);
//! - anything else goes to the caller's `default=` hook, as `json.dumps(default=...)` does
//!   (its result is written in the object's place), else is a `TypeError`.
//!
//! Every error names where the object was (`$.items[3].when`).
//!
//! Why text, and why by hand: the engine's fastest path reads JSON text (drops and prunes
//! done as it reads, `pare::json::stream`), so a dict written as text takes the same path as
//! `pare compact` and gives the same bytes. For a request that path does whole, the members
//! it would leave out are left out as they are written instead ([`omitting`]). Through PyO3's safe API each object cost a
//! reference count, a type check by call and (on abi3) a `bytes` copy of every string; this
//! reads the common types by their type pointer and borrows each string's UTF-8 from
//! CPython, as orjson does ([`crate::capi`]: struct reads in a per-version build), and a
//! big object's long lists are written half on a second thread ([`crate::split`]). On the
//! 1 MB entities dict it was 3.4 ms through a tree; `bench/python_speed.py` prints it
//! against orjson's time.
//!
//! ```python
//! pare.encode({"a": 1.0, "b": (1, None)}, format="json") == '{"a":1.0,"b":[1,null]}'
//! ```

// The one module that reads CPython objects through the C API: each `unsafe` block says
// what keeps its pointers valid.
#![allow(unsafe_code)]

use std::cell::Cell;
use std::os::raw::c_int;

use pare::Number;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyInt, PyString};

use crate::capi;
use crate::convert::float_number;
use crate::split::Helper;

pub(crate) mod omitting;
pub(crate) mod sink;
use omitting::Leaving;
pub use omitting::written_omitting;
use sink::Sink;

/// A finite float as Python's `repr` writes it. zmij writes the same shortest digits, and
/// in the same form from 1e-4 up (positional below 1e16, then `1e+16`; `-0.0`, `1.0`); below
/// 1e-4 Python writes an exponent of at least two digits (`1e-07`, `1.5e-05`) where zmij
/// writes `1e-7` or positional `0.00001`: a short exponent is padded, and a positional one
/// goes to [`float_number`]. zmij takes about 14 ns a float where ryu-js (and its
/// JavaScript form, rewritten) took 35: a fifth of a small object's conversion.
pub(crate) fn write_float<S: Sink>(x: f64, out: &mut S) {
    let mut buf = zmij::Buffer::new();
    let text = buf.format_finite(x);
    if x == 0.0 || x.abs() >= 1e-4 {
        out.push_str(text);
        return;
    }
    match text.find("e-") {
        Some(at) if text.len() - at == 3 => {
            out.push_str(&text[..at + 2]);
            out.push('0');
            out.push_str(&text[at + 2..]);
        }
        Some(_) => out.push_str(text),
        None => {
            if let Some(n) = float_number(x) {
                out.push_str(n.as_str());
            }
        }
    }
}

/// Deeper than this is refused, as pare's JSON parser refuses the text of it; a cycle
/// stops here too.
const MAX_DEPTH: usize = pare::json::MAX_DEPTH;

thread_local! {
    /// The last text's length on this thread, written whole and written omitting (much
    /// shorter): a caller shaping many similar objects gets a buffer of about the right size
    /// at once instead of growing one by doubling.
    static LAST_LEN: Cell<[usize; 2]> = const { Cell::new([256; 2]) };
    /// A buffer a caller was done with ([`give_back`]), written into by the next text on
    /// this thread: `pare.dumps` below 8 KB copies its text into a `bytes` and needs it no
    /// more, and a small text's own allocation and free were a tenth of its conversion.
    static SPARE: Cell<String> = const { Cell::new(String::new()) };
}

/// The buffers kept for the next text are at most this large: a thread that once wrote a
/// huge text keeps no huge buffer.
const SPARE_MAX: usize = 1 << 20;

/// Hand `text`'s buffer to the next text written on this thread.
fn give_back(mut text: String) {
    if text.capacity() <= SPARE_MAX {
        text.clear();
        SPARE.with(|s| s.set(text));
    }
}

/// What becomes of a buffer once its text was taken.
trait Recycle {
    fn recycle(self);
}

impl Recycle for String {
    /// Kept for the next text on this thread ([`give_back`]), if `finish` left it.
    fn recycle(self) {
        if self.capacity() > 0 {
            give_back(self);
        }
    }
}

#[cfg(not(any(Py_LIMITED_API, PyPy, GraalPy)))]
impl Recycle for sink::BytesOut {
    fn recycle(self) {}
}

/// `obj` as compact JSON text; `default` is called for an object of no type this knows.
pub fn to_json(obj: &Bound<'_, PyAny>, default: Option<&Bound<'_, PyAny>>) -> PyResult<String> {
    dump(obj, default).map(|d| d.text)
}

/// What [`dump`] wrote.
pub struct Dumped {
    pub text: String,
    /// No object in the text repeats a key: every key was an exact `str` (a dict's keys
    /// are distinct; a `str` subclass's `__eq__` can make two keys of one text), or came
    /// from pydantic's JSON, whose repeats are caught ([`push_model_json`]).
    pub keys_unique: bool,
}

/// [`to_json`], saying whether keys may repeat.
pub fn dump(obj: &Bound<'_, PyAny>, default: Option<&Bound<'_, PyAny>>) -> PyResult<Dumped> {
    dump_with::<false, _, _>(
        obj,
        default,
        &mut None,
        spare_buffer::<false>,
        |out, keys_unique| Dumped {
            text: std::mem::take(out),
            keys_unique,
        },
    )?
    .ok_or_else(gave_up)
}

/// `obj` as compact JSON in a `bytes` (`pare.dumps`), written in the `bytes` itself
/// ([`sink::BytesOut`]) where the build can grow one; else made from the buffer where it
/// lies, and the buffer kept for the next text: the text itself never moves (moved out
/// through two or three `Result`s, its parts were loaded back right after they were
/// stored, which stalls; that was a quarter of an empty dict's conversion).
pub fn to_bytes<'py>(
    obj: &Bound<'py, PyAny>,
    default: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    // The thread's last length read once (a second read was 5% of `{}`'s 57 ns).
    let guess = guessed_len::<false>();
    #[cfg(not(any(Py_LIMITED_API, PyPy, GraalPy)))]
    if guess >= BYTES_OUT_FROM {
        return to_bytes_in_place(obj, default, guess);
    }
    let py = obj.py();
    let out = || spare_buffer_of(guess);
    dump_with::<false, _, _>(obj, default, &mut None, out, |out, _| {
        PyBytes::new(py, out.as_bytes())
    })?
    .ok_or_else(gave_up)
}

/// [`to_bytes`] written in the `bytes` itself. A call of its own: inlined, it made a small
/// object's conversion by copy 10% slower (763 bytes: 606 against 669 ns).
#[cfg(not(any(Py_LIMITED_API, PyPy, GraalPy)))]
#[inline(never)]
fn to_bytes_in_place<'py>(
    obj: &Bound<'py, PyAny>,
    default: Option<&Bound<'py, PyAny>>,
    guess: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let py = obj.py();
    let out = sink::BytesOut::new(py, guess)?;
    dump_with::<false, _, _>(obj, default, &mut None, || out, |out, _| out.finish(py))?
        .ok_or_else(gave_up)?
}

/// From about this many bytes (the last text's length on this thread) `pare.dumps` writes
/// into the `bytes` itself. Below, a copy costs less than making a `bytes` too big and
/// shrinking it: up to 512 bytes CPython's allocator moves a shrunk object to a smaller
/// block (a 30-byte dict's conversion took 5% longer written in place).
#[cfg(not(any(Py_LIMITED_API, PyPy, GraalPy)))]
const BYTES_OUT_FROM: usize = 8 << 10;

/// Only a dump that leaves members out gives up; were another to, say so, not panic.
fn gave_up() -> PyErr {
    PyValueError::new_err("pare gave up writing a value whole (a bug)")
}

/// `obj` written with what `omitting` leaves out already left out ([`omitting`]), and the
/// counts of it; `None` when the text must be written whole instead (a key that is a `str`
/// subclass, or pydantic JSON the engine cannot read).
pub fn dump_omitting(
    obj: &Bound<'_, PyAny>,
    default: Option<&Bound<'_, PyAny>>,
    omitting: pare::respond::Omitting,
) -> PyResult<Option<(String, pare::respond::Omitting)>> {
    let mut leaving = Some(Box::new(Leaving::new(omitting)));
    Ok(
        match (
            dump_with::<true, _, _>(
                obj,
                default,
                &mut leaving,
                spare_buffer::<true>,
                |out, keys_unique| keys_unique.then(|| std::mem::take(out)),
            )?,
            leaving,
        ) {
            (Some(Some(text)), Some(leaving)) => {
                omitting::note_written();
                Some((text, leaving.omitting))
            }
            _ => None,
        },
    )
}

/// The length to make room for: about the last text's on this thread, written whole or
/// omitting (`OMIT`).
fn guessed_len<const OMIT: bool>() -> usize {
    let guess = LAST_LEN.with(Cell::get)[usize::from(OMIT)];
    guess + guess / 8
}

/// The buffer a text was written in last on this thread ([`give_back`]), with room for
/// about the last text's length.
fn spare_buffer<const OMIT: bool>() -> String {
    spare_buffer_of(guessed_len::<OMIT>())
}

/// The buffer a text was written in last on this thread, with room for `len` bytes.
#[inline(always)]
fn spare_buffer_of(len: usize) -> String {
    let mut out = SPARE.with(Cell::take);
    out.reserve(len);
    out
}

/// [`dump`], or with `omitting` [`dump_omitting`] (`OMIT`: the code that leaves out is
/// there only then, so a plain dump pays nothing for it; `omitting` is given back with what
/// was left out), into `out`: `None` when that gave up. `finish` gets the text and whether
/// its keys are unique, and makes the result where the text lies; a `String` it leaves
/// is kept for the next text on this thread.
fn dump_with<const OMIT: bool, S: Sink + Recycle, R>(
    obj: &Bound<'_, PyAny>,
    default: Option<&Bound<'_, PyAny>>,
    omitting: &mut Option<Box<Leaving>>,
    out: impl FnOnce() -> S,
    finish: impl FnOnce(&mut S, bool) -> R,
) -> PyResult<Option<R>> {
    let mut keys = KEY_CACHE.with(Cell::take).unwrap_or_else(KeyCache::new);
    if omitting.is_some() {
        keys.next_text();
    }
    let mut d = Dumper::<OMIT, S> {
        py: obj.py(),
        out: out(),
        default,
        keys,
        kinds: Vec::new(),
        model_dump_kwargs: None,
        to_json_kwargs: None,
        python_ran: 0,
        // SAFETY: `obj` is live (the caller's), the GIL is held, and the `Dumper` keeps to
        // `split`'s rules: it stops the helper (`quiesce`) before anything but reading. A
        // helper leaves out what the caller would.
        helper: unsafe { Helper::start(obj.as_ptr(), omitting.as_deref()) },
        keys_unique: true,
        omitting: omitting.take(),
    };
    let result = d.value(obj.as_ptr(), 0);
    if let (Ok(()), Some(helper)) = (&result, d.helper.as_mut()) {
        helper.finished(d.out.len());
    }
    d.quiesce();
    LAST_LEN.with(|c| {
        let mut lens = c.get();
        lens[usize::from(OMIT)] = d.out.len().clamp(256, 64 << 20);
        c.set(lens);
    });
    KEY_CACHE.with(|c| c.set(Some(d.keys)));
    match result {
        Ok(()) => {
            *omitting = d.omitting;
            let made = finish(&mut d.out, d.keys_unique);
            d.out.recycle();
            Ok(Some(made))
        }
        Err(e) if matches!(e.kind, Failure::GiveUp) => Ok(None),
        Err(e) => {
            let FailedAt { kind, mut path } = *e.0;
            path.reverse();
            let at = where_(&path);
            Err(match kind {
                Failure::Type(m) => PyTypeError::new_err(m.replace("{at}", &at)),
                Failure::Value(m) => PyValueError::new_err(m.replace("{at}", &at)),
                Failure::Python(err) => err,
                Failure::Default(err) => from_default(obj.py(), err, &at),
                Failure::GiveUp => PyValueError::new_err("pare gave up writing a value (a bug)"),
            })
        }
    }
}

/// `obj` as the engine's value (its text, parsed: the parser is faster than building the
/// tree object by object through the API).
pub fn to_value(
    obj: &Bound<'_, PyAny>,
    default: Option<&Bound<'_, PyAny>>,
) -> PyResult<pare::Value> {
    let text = to_json(obj, default)?;
    pare::json::parse(&text).map_err(|e| {
        PyValueError::new_err(format!("pare wrote text it cannot read back (a bug): {e}"))
    })
}

/// A step of the path to the object being written, for errors.
enum Step {
    Key(String),
    Index(usize),
}

fn where_(path: &[Step]) -> String {
    let steps: Vec<pare::manifest::Step> = path
        .iter()
        .map(|step| match step {
            Step::Key(k) => pare::manifest::Step::Key(k),
            Step::Index(i) => pare::manifest::Step::Index(*i),
        })
        .collect();
    pare::manifest::error_path(&steps)
}

/// Why writing failed (the message's `{at}` becomes the path), and where: the path is
/// collected on the way out of a failure, innermost step first, so a success builds none.
/// Boxed: every write returns a `Result<(), Failed>`, and one pointer comes back in a
/// register where the whole struct came back through memory (a small object's conversion
/// is mostly calls and returns).
struct Failed(Box<FailedAt>);

struct FailedAt {
    kind: Failure,
    path: Vec<Step>,
}

impl std::ops::Deref for Failed {
    type Target = FailedAt;
    fn deref(&self) -> &FailedAt {
        &self.0
    }
}

impl std::ops::DerefMut for Failed {
    fn deref_mut(&mut self) -> &mut FailedAt {
        &mut self.0
    }
}

enum Failure {
    Type(String),
    Value(String),
    Python(PyErr),
    /// The caller's `default=` raised.
    Default(PyErr),
    /// Members cannot be left out as the text is written ([`dump_omitting`]): it is
    /// written whole instead.
    GiveUp,
}

impl From<PyErr> for Failed {
    fn from(e: PyErr) -> Failed {
        failed(Failure::Python(e))
    }
}

fn failed(kind: Failure) -> Failed {
    Failed(Box::new(FailedAt {
        kind,
        path: Vec::new(),
    }))
}

/// An exception from `default=` goes on with the path added: a `TypeError` or `ValueError`
/// as one of the same class whose cause is the original, anything else unchanged.
fn from_default(py: Python<'_>, err: PyErr, at: &str) -> PyErr {
    let wrapped = if err.is_instance_of::<PyTypeError>(py) {
        PyTypeError::new_err(format!("default= raised at {at}: {}", err.value(py)))
    } else if err.is_instance_of::<PyValueError>(py) {
        PyValueError::new_err(format!("default= raised at {at}: {}", err.value(py)))
    } else {
        return err;
    };
    wrapped.set_cause(py, Some(err));
    wrapped
}

fn too_deep(depth: usize) -> Result<(), Failed> {
    if depth >= MAX_DEPTH {
        return Err(failed(Failure::Value(format!(
            "nested deeper than {MAX_DEPTH} levels at {{at}}, the most pare's JSON parser \
             reads (a cycle?)"
        ))));
    }
    Ok(())
}

struct Dumper<'a, 'py, const OMIT: bool, S: Sink> {
    py: Python<'py>,
    out: S,
    default: Option<&'a Bound<'py, PyAny>>,
    keys: Box<KeyCache>,
    /// The rich type of each class met so far ([`Dumper::kind_of`]).
    kinds: Vec<(Py<pyo3::types::PyType>, Rich)>,
    /// `model_dump`'s keyword arguments, made once per text.
    model_dump_kwargs: Option<Py<PyDict>>,
    /// The same for a pydantic serializer's `to_json`.
    to_json_kwargs: Option<Py<PyDict>>,
    /// How many times Python code ran (a dict is checked for changes only then).
    python_ran: u64,
    /// The thread writing the second half of the root's long lists, while it may.
    helper: Option<Box<Helper>>,
    /// Every key so far was an exact `str` ([`Dumped::keys_unique`]).
    keys_unique: bool,
    /// What the request leaves out as members are written ([`omitting`]); `None` when it
    /// leaves nothing out, and inside a member it drops.
    omitting: Option<Box<Leaving>>,
}

/// The longest key text (quoted, escaped, with its colon) the cache keeps.
pub(crate) const KEY_BYTES: usize = 38;

/// Keys written before, by the address of their `str` object: `json.load`, pydantic and
/// most code that builds many dicts share one object per distinct key, so each distinct
/// key is read and escaped once. A slot holds a reference to its key, so no other string
/// can take that address while it is cached: the cache stays right across Python code a
/// rich type runs, and from one text to the next on a thread. Only exact `str` keys are
/// kept (letting a subclass's go could run its `__del__` mid-text). Direct-mapped, a slot
/// per address hash; at most `KEY_SLOTS` keys are kept alive per thread (a thread that
/// ends leaves its last ones alive: there may be no GIL to free them with then).
pub(crate) struct KeyCache {
    pub(crate) slots: [KeySlot; KEY_SLOTS],
    /// Beside each slot, what the request of a text written omitting decided of its key
    /// ([`omitting::Leaving::mark`]), and that text's number ([`KeyCache::text`]; 0: none);
    /// made for the first such text. Apart from the slots, which stay 48 bytes (a plain
    /// conversion reads only those).
    pub(crate) marks: Option<Box<[(u8, pare::respond::Mark); KEY_SLOTS]>>,
    /// The number of the text being written omitting; 0 is no text.
    pub(crate) text: u8,
}

const KEY_SLOTS: usize = 256;

#[derive(Clone, Copy)]
pub(crate) struct KeySlot {
    /// A reference the slot owns, or null (the helper thread's own cache owns none: see
    /// `split`).
    pub(crate) key: *mut ffi::PyObject,
    len: u8,
    bytes: [u8; KEY_BYTES],
}

// A slot is 48 bytes: three to a 128-byte pair of cache lines, 12 KB a cache.
const _: () = assert!(std::mem::size_of::<KeySlot>() == 48);

impl KeySlot {
    /// Keep `written` (a key's text, quoted, with its colon: at most `KEY_BYTES`) as `key`'s.
    fn remember(&mut self, key: *mut ffi::PyObject, written: &[u8]) {
        self.key = key;
        self.len = written.len() as u8;
        self.bytes[..written.len()].copy_from_slice(written);
    }
}

/// Append a cached key: the slot's whole array is copied (a fixed size copies in a few
/// moves, where a call to copy its length was a tenth of the time) and the length set to
/// the key's.
pub(crate) fn push_key<S: Sink>(out: &mut S, slot: &KeySlot) {
    out.reserve(KEY_BYTES);
    // SAFETY: `reserve` made room for `KEY_BYTES` more bytes; of them only the first `len`
    // become part of the string, and they are a key's whole text (copied from a `str` at a
    // character boundary), so the string stays UTF-8.
    unsafe {
        let at = out.len();
        std::ptr::copy_nonoverlapping(slot.bytes.as_ptr(), out.as_mut_ptr().add(at), KEY_BYTES);
        out.set_len(at + usize::from(slot.len));
    }
}

impl KeyCache {
    pub(crate) fn new() -> Box<KeyCache> {
        let empty = KeySlot {
            key: std::ptr::null_mut(),
            len: 0,
            bytes: [0; KEY_BYTES],
        };
        // One box, the slots in it: a lookup is one load from the `Dumper`'s pointer.
        Box::new(KeyCache {
            slots: [empty; KEY_SLOTS],
            marks: None,
            text: 0,
        })
    }

    /// Keep `written` (a key's text, quoted, with its colon: at most `KEY_BYTES`) as `key`'s,
    /// in its slot; the mark of the key the slot held goes with it. (The reference the slot
    /// holds is the caller's to take.)
    pub(crate) fn remember(&mut self, key: *mut ffi::PyObject, written: &[u8]) {
        let i = KeyCache::slot(key);
        self.slots[i].remember(key, written);
        if let Some(marks) = &mut self.marks {
            marks[i].0 = 0;
        }
    }

    /// Start a text written omitting: the marks of earlier texts no longer hold.
    pub(crate) fn next_text(&mut self) {
        self.marks
            .get_or_insert_with(|| Box::new([(0, pare::respond::Mark::default()); KEY_SLOTS]));
        self.text = self.text.wrapping_add(1);
        if self.text == 0 {
            for mark in self.marks.iter_mut().flat_map(|m| m.iter_mut()) {
                mark.0 = 0;
            }
            self.text = 1;
        }
    }

    pub(crate) fn slot(key: *mut ffi::PyObject) -> usize {
        // Addresses are 16-byte aligned; a multiply spreads the rest over the slots.
        (((key as usize as u64) >> 4).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as usize
    }
}

thread_local! {
    /// One key cache per thread, reused by every text written on it.
    static KEY_CACHE: Cell<Option<Box<KeyCache>>> = const { Cell::new(None) };
}

/// A strong reference to a container while it is written: Python code a rich type or
/// `default=` runs may drop the last other reference to it.
struct Held(*mut ffi::PyObject);

impl Held {
    /// SAFETY (callers): `obj` is a live object.
    unsafe fn new(obj: *mut ffi::PyObject) -> Held {
        // SAFETY: live per the caller; the GIL is held (a `Dumper` has a `Python`). Inline
        // in a per-version build, a call in abi3.
        unsafe { ffi::Py_INCREF(obj) };
        Held(obj)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        // SAFETY: `new` took this reference; the GIL is held for the whole conversion.
        unsafe { ffi::Py_DECREF(self.0) };
    }
}

impl<const OMIT: bool, S: Sink> Dumper<'_, '_, OMIT, S> {
    /// Write `obj`, a live object (borrowed: the container it came from is [`Held`], and
    /// nothing runs Python code between taking it and reading it, except [`Self::other`],
    /// which takes its own reference first).
    fn value(&mut self, obj: *mut ffi::PyObject, depth: usize) -> Result<(), Failed> {
        // SAFETY: `obj` is live (see above) and the GIL is held; the type objects are
        // CPython's statics.
        unsafe {
            let ty = ffi::Py_TYPE(obj);
            if ty == &raw mut ffi::PyUnicode_Type {
                self.string(obj)
            } else if ty == &raw mut ffi::PyDict_Type {
                self.dict(obj, depth)
            } else if ty == &raw mut ffi::PyList_Type {
                self.list(obj, depth)
            } else if obj == ffi::Py_None() {
                self.out.push_str("null");
                Ok(())
            } else if obj == ffi::Py_True() {
                self.out.push_str("true");
                Ok(())
            } else if obj == ffi::Py_False() {
                self.out.push_str("false");
                Ok(())
            } else if ty == &raw mut ffi::PyLong_Type {
                self.int(obj)
            } else if ty == &raw mut ffi::PyFloat_Type {
                self.float(obj)
            } else if ty == &raw mut ffi::PyTuple_Type {
                self.tuple(obj, depth)
            } else {
                self.other(obj, depth)
            }
        }
    }

    /// [`Self::value`] with its two commonest cases, `null` and an exact `str`, inline in
    /// the member loop (no call, no dispatch): half the values of a typical record.
    #[inline(always)]
    fn member_value(&mut self, obj: *mut ffi::PyObject, depth: usize) -> Result<(), Failed> {
        // SAFETY: as `value`'s.
        unsafe {
            if obj == ffi::Py_None() {
                self.out.push_str("null");
                return Ok(());
            }
            if ffi::Py_TYPE(obj) == &raw mut ffi::PyUnicode_Type
                && write_str_reading_only(obj, &mut self.out)
            {
                return Ok(());
            }
        }
        self.value(obj, depth)
    }

    /// SAFETY (callers): `obj` is a live `str` (or subclass).
    unsafe fn string(&mut self, obj: *mut ffi::PyObject) -> Result<(), Failed> {
        // SAFETY: a live `str` per the caller.
        if unsafe { write_str_reading_only(obj, &mut self.out) } {
            return Ok(());
        }
        // CPython makes (and keeps) the UTF-8 now: a change the helper must not see.
        self.quiesce();
        let s = unsafe { utf8(self.py, obj) }?;
        write_string(s, &mut self.out);
        Ok(())
    }

    /// SAFETY (callers): `obj` is a live `dict` (or subclass).
    #[inline(never)]
    unsafe fn dict(&mut self, obj: *mut ffi::PyObject, depth: usize) -> Result<(), Failed> {
        too_deep(depth)?;
        let _held = unsafe { Held::new(obj) };
        let size = unsafe { ffi::PyDict_Size(obj) };
        let mut pos: ffi::Py_ssize_t = 0;
        self.out.push('{');
        let mut kept = 0usize;
        let mut key: *mut ffi::PyObject = std::ptr::null_mut();
        let mut value: *mut ffi::PyObject = std::ptr::null_mut();
        // SAFETY: the dict is held; `dict_next` (`PyDict_Next`) hands out borrowed references
        // that stay valid until the dict changes, and it only changes if Python code runs,
        // after which the size is checked (as `dict` iteration does).
        while unsafe { capi::dict_next(obj, &mut pos, &mut key, &mut value) } {
            let ran = self.python_ran;
            unsafe { self.member(&mut kept, key, value, depth) }?;
            if self.python_ran != ran && unsafe { ffi::PyDict_Size(obj) } != size {
                return Err(failed(Failure::Python(PyRuntimeError::new_err(
                    "dictionary changed size during iteration",
                ))));
            }
        }
        self.out.push('}');
        Ok(())
    }

    /// A dict subclass, by its `items()` as `json.dumps` writes it (an `OrderedDict`'s order
    /// is its own, not its table's).
    ///
    /// SAFETY (callers): `obj` is a live `dict` subclass.
    unsafe fn mapping(&mut self, obj: *mut ffi::PyObject, depth: usize) -> Result<(), Failed> {
        too_deep(depth)?;
        self.python_runs();
        // SAFETY: a live object; the list of pairs is new, ours, and nothing else changes it.
        let items = unsafe { Bound::from_owned_ptr_or_err(self.py, ffi::PyMapping_Items(obj)) }?;
        let items = items
            .cast_into::<pyo3::types::PyList>()
            .map_err(PyErr::from)?;
        self.out.push('{');
        let mut kept = 0usize;
        for pair in items.iter() {
            let pair = pair
                .cast_into::<pyo3::types::PyTuple>()
                .ok()
                .filter(|t| t.len() == 2)
                .ok_or_else(|| {
                    failed(Failure::Value(
                        "items() must return (key, value) pairs, at {at}".into(),
                    ))
                })?;
            // SAFETY: the pair is held; its items live as long as it does.
            unsafe {
                let (key, value) = (
                    capi::tuple_item(pair.as_ptr(), 0),
                    capi::tuple_item(pair.as_ptr(), 1),
                );
                self.member(&mut kept, key, value, depth)?;
            }
        }
        self.out.push('}');
        Ok(())
    }

    /// One member of an object (`kept` members written before it), cut again when the
    /// request leaves it out ([`omitting`]).
    ///
    /// SAFETY (callers): `key` and `value` are live, held by their container.
    #[inline(always)]
    unsafe fn member(
        &mut self,
        kept: &mut usize,
        key: *mut ffi::PyObject,
        value: *mut ffi::PyObject,
        depth: usize,
    ) -> Result<(), Failed> {
        let member = self.out.len();
        if *kept > 0 {
            self.out.push(',');
        }
        let key_at = self.out.len();
        unsafe { self.key(key) }?;
        let written = match OMIT && self.omitting.is_some() {
            false => self.member_value(value, depth + 1).map(|()| true),
            true => self.member_omitting(member, (key_at, key), |d| d.value(value, depth + 1)),
        };
        match written {
            Ok(stays) => {
                *kept += usize::from(stays);
                Ok(())
            }
            Err(mut e) => {
                self.quiesce();
                e.path.push(Step::Key(unsafe { key_text(self.py, key) }));
                Err(e)
            }
        }
    }

    /// Write a member's key and its colon, from the cache when this key object was written
    /// before.
    ///
    /// SAFETY (callers): `key` is a live key of a held dict.
    #[inline(always)]
    unsafe fn key(&mut self, key: *mut ffi::PyObject) -> Result<(), Failed> {
        let slot = &mut self.keys.slots[KeyCache::slot(key)];
        if slot.key == key {
            push_key(&mut self.out, slot);
            return Ok(());
        }
        let is_str = unsafe {
            ffi::Py_TYPE(key) == &raw mut ffi::PyUnicode_Type || ffi::PyUnicode_Check(key) != 0
        };
        if !is_str {
            self.quiesce();
            return Err(self.bad_key(key));
        }
        if unsafe { ffi::Py_TYPE(key) } != &raw mut ffi::PyUnicode_Type {
            self.keys_unique = false;
        }
        let start = self.out.len();
        if unsafe { self.string(key) }.is_err() {
            return Err(failed(Failure::Value(
                "a dict key at {at} is not Unicode text (a lone surrogate?)".into(),
            )));
        }
        self.out.push(':');
        let written = &self.out.as_str()[start..];
        if written.len() <= KEY_BYTES
            && unsafe { ffi::Py_TYPE(key) } == &raw mut ffi::PyUnicode_Type
        {
            let old = self.keys.slots[KeyCache::slot(key)].key;
            // SAFETY: the GIL is held; the slot owned its old key's reference (an exact
            // `str`, whose freeing runs no Python code), and takes one on the new key.
            unsafe {
                if !old.is_null() {
                    ffi::Py_DECREF(old);
                }
                ffi::Py_INCREF(key);
            }
            self.keys.remember(key, written.as_bytes());
        }
        Ok(())
    }

    /// Python code is about to run (a rich type's method, `default=`): it may change a
    /// dict being written, which is checked after it.
    fn python_runs(&mut self) {
        self.quiesce();
        self.python_ran += 1;
    }

    /// Stop the helper thread and wait for it, before anything but reading objects (Python
    /// code, asking CPython for a string's UTF-8, an error): the parts it has not handed
    /// over are written here instead.
    fn quiesce(&mut self) {
        self.helper = None;
    }

    fn bad_key(&self, key: *mut ffi::PyObject) -> Failed {
        // SAFETY: a live key of a held dict.
        let key = unsafe { Bound::from_borrowed_ptr(self.py, key) };
        failed(Failure::Type(format!(
            "dict keys must be str, got {} ({}) at {{at}}",
            type_name(&key),
            key.repr().map(|r| r.to_string()).unwrap_or_default(),
        )))
    }

    /// SAFETY (callers): `obj` is a live `list` (or subclass).
    unsafe fn list(&mut self, obj: *mut ffi::PyObject, depth: usize) -> Result<(), Failed> {
        too_deep(depth)?;
        let _held = unsafe { Held::new(obj) };
        self.out.push('[');
        let mut i = 0;
        // The length is read each time: Python code a rich item runs may change the list.
        while i < unsafe { capi::list_len(obj) } {
            if i > 0 {
                self.out.push(',');
            }
            if let Some((text, end, leaving)) = self.helper.as_mut().and_then(|h| h.take(obj, i))
                && self.take_leaving(leaving)
            {
                self.out.push_str(&text);
                i = end;
                continue;
            }
            // SAFETY: `i` is in range (checked just above, nothing ran since).
            let item = unsafe { capi::list_item(obj, i) };
            if let Some(end) = unsafe { self.model_run(obj, i) }
                && unsafe { self.models(obj, i, end) }
            {
                i = end;
                continue;
            }
            if let Err(mut e) = self.value(item, depth + 1) {
                e.path.push(Step::Index(i as usize));
                return Err(e);
            }
            i += 1;
        }
        self.out.push(']');
        Ok(())
    }

    /// The end of the run of items from `i` of one class written by pydantic's JSON
    /// ([`Rich::ModelJson`], known from an item before), when there are two or more.
    ///
    /// SAFETY (callers): `list` is a live, held `list`, and `i` is in range.
    unsafe fn model_run(
        &self,
        list: *mut ffi::PyObject,
        i: ffi::Py_ssize_t,
    ) -> Option<ffi::Py_ssize_t> {
        // SAFETY: per the caller; nothing here runs Python code.
        unsafe {
            let ty = ffi::Py_TYPE(capi::list_item(list, i));
            let known = self
                .kinds
                .iter()
                .any(|(t, kind)| t.as_ptr() == ty.cast() && matches!(kind, Rich::ModelJson));
            if !known {
                return None;
            }
            let len = capi::list_len(list);
            let mut end = i + 1;
            while end < len && ffi::Py_TYPE(capi::list_item(list, end)) == ty {
                end += 1;
            }
            (end - i >= 2).then_some(end)
        }
    }

    /// Write the models `list[i..end]` (a [`Dumper::model_run`]) in one call of pydantic's
    /// serializer for a list of their class, as the items one by one would be written.
    /// `false` (nothing written) when that call fails, or its JSON repeats a key: the items
    /// are then written one by one, and the one that fails says where it is.
    ///
    /// Why: a call into pydantic per model cost a third of writing a thousand of them.
    ///
    /// SAFETY (callers): as for [`Dumper::model_run`], with `end` from it.
    unsafe fn models(
        &mut self,
        list: *mut ffi::PyObject,
        i: ffi::Py_ssize_t,
        end: ffi::Py_ssize_t,
    ) -> bool {
        let py = self.py;
        let start = self.out.len();
        self.python_runs();
        let written = (|| -> Result<bool, Failed> {
            // SAFETY: a live list; the slice is a new reference, owned by the `Bound`.
            let run =
                unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyList_GetSlice(list, i, end)) }?;
            let first = run.get_item(0)?;
            let serializer = list_serializer(&first.get_type())?;
            let json = self.serializer_json(&serializer, run.as_any())?;
            let inner = json
                .as_bytes()
                .strip_prefix(b"[")
                .and_then(|b| b.strip_suffix(b"]"))
                .ok_or_else(|| failed(Failure::Value("pydantic wrote no list".into())))?;
            Ok(push_model_json(inner, &mut self.out)? && {
                self.leave_out_of_written(start, true)?;
                true
            })
        })();
        let written = written.unwrap_or(false);
        if !written {
            self.out.truncate(start);
        }
        written
    }

    /// SAFETY (callers): `obj` is a live `tuple` (or subclass).
    unsafe fn tuple(&mut self, obj: *mut ffi::PyObject, depth: usize) -> Result<(), Failed> {
        too_deep(depth)?;
        let _held = unsafe { Held::new(obj) };
        self.out.push('[');
        // A tuple does not change: its items live as long as it does.
        let n = unsafe { capi::tuple_len(obj) };
        for i in 0..n {
            if i > 0 {
                self.out.push(',');
            }
            let item = unsafe { capi::tuple_item(obj, i) };
            if let Err(mut e) = self.value(item, depth + 1) {
                e.path.push(Step::Index(i as usize));
                return Err(e);
            }
        }
        self.out.push(']');
        Ok(())
    }

    /// SAFETY (callers): `obj` is a live `int` (or subclass, not `bool`).
    unsafe fn int(&mut self, obj: *mut ffi::PyObject) -> Result<(), Failed> {
        let mut overflow: c_int = 0;
        let n = unsafe { ffi::PyLong_AsLongLongAndOverflow(obj, &mut overflow) };
        if overflow == 0 {
            if n == -1 && !unsafe { ffi::PyErr_Occurred() }.is_null() {
                return Err(PyErr::fetch(self.py).into());
            }
            self.out.push_str(itoa::Buffer::new().format(n));
            return Ok(());
        }
        // Past 64 bits: `int.__str__`'s digits (an `IntEnum` member's own `str()` is its name).
        self.python_runs();
        let obj = unsafe { Bound::from_borrowed_ptr(self.py, obj) };
        let digits = self
            .py
            .get_type::<PyInt>()
            .call_method1("__str__", (obj,))?
            .extract::<String>()?;
        self.out.push_str(&digits);
        Ok(())
    }

    /// SAFETY (callers): `obj` is a live `float` (or subclass).
    unsafe fn float(&mut self, obj: *mut ffi::PyObject) -> Result<(), Failed> {
        let x = unsafe { capi::float_value(obj) };
        if !x.is_finite() {
            return Err(failed(Failure::Value(format!(
                "{x} at {{at}} is not a JSON number (JSON has no NaN or infinity)"
            ))));
        }
        write_float(x, &mut self.out);
        Ok(())
    }

    /// Subclasses of the types above, then the rich types, then `default=`.
    ///
    /// SAFETY (callers): `obj` is live.
    unsafe fn other(&mut self, obj: *mut ffi::PyObject, depth: usize) -> Result<(), Failed> {
        self.quiesce();
        // A strong reference: what follows may run Python code.
        let obj = unsafe { Bound::from_borrowed_ptr(self.py, obj) };
        let ptr = obj.as_ptr();
        // `str` before the rich types (a `StrEnum` member is a `str`); `bool` cannot be
        // subclassed, so `True` and `False` were all of it.
        unsafe {
            if ffi::PyUnicode_Check(ptr) != 0 {
                return self.string(ptr);
            }
            if ffi::PyDict_Check(ptr) != 0 {
                return self.mapping(ptr, depth);
            }
            if ffi::PyList_Check(ptr) != 0 {
                return self.list(ptr, depth);
            }
            if ffi::PyTuple_Check(ptr) != 0 {
                return self.tuple(ptr, depth);
            }
            if ffi::PyLong_Check(ptr) != 0 {
                return self.int(ptr);
            }
            if ffi::PyFloat_Check(ptr) != 0 {
                return self.float(ptr);
            }
        }
        self.python_runs();
        if self.rich(&obj, depth)? {
            return Ok(());
        }
        if let Some(default) = self.default {
            too_deep(depth)?;
            let made = default
                .call1((&obj,))
                .map_err(|e| failed(Failure::Default(e)))?;
            return self.value(made.as_ptr(), depth + 1);
        }
        Err(failed(Failure::Type(format!(
            "cannot shape a {} at {{at}}: give dict, list, tuple, str, int, float, bool or None, \
             or datetime, date, time, UUID, Decimal, an Enum, a dataclass or a pydantic model \
             (or pass default= to convert it)",
            type_name(&obj)
        ))))
    }

    /// The types a web handler returns besides JSON's own (see the module docs); `false`:
    /// none of these.
    fn rich(&mut self, obj: &Bound<'_, PyAny>, depth: usize) -> Result<bool, Failed> {
        let py = self.py;
        match self.kind_of(obj)? {
            Rich::Iso => {
                let iso = obj.call_method0("isoformat")?;
                self.text(&iso.str()?)?;
            }
            Rich::Uuid => self.text(&obj.str()?)?,
            Rich::Decimal => {
                let text = obj.str()?.to_cow()?.into_owned();
                match Number::from_lexeme(&text) {
                    Some(n) => self.out.push_str(n.as_str()),
                    None => {
                        return Err(failed(Failure::Value(format!(
                            "Decimal({text:?}) at {{at}} is not a JSON number"
                        ))));
                    }
                }
            }
            Rich::Enum => {
                let value = obj.getattr("value")?;
                self.value(value.as_ptr(), depth)?;
            }
            Rich::Dataclass => {
                too_deep(depth)?;
                let fields = rich_types(py)?.fields.bind(py).call1((obj,))?;
                self.out.push('{');
                let mut kept = 0usize;
                for f in fields.try_iter()? {
                    let name = f?.getattr("name")?;
                    let name = name.cast::<PyString>().map_err(PyErr::from)?;
                    let v = obj.getattr(name)?;
                    // SAFETY: the name and the value are held here.
                    unsafe { self.member(&mut kept, name.as_ptr(), v.as_ptr(), depth) }?;
                }
                self.out.push('}');
            }
            Rich::ModelJson => {
                let serializer = obj
                    .get_type()
                    .getattr(pyo3::intern!(py, "__pydantic_serializer__"))?;
                let json = self.serializer_json(&serializer, obj)?;
                let start = self.out.len();
                if push_model_json(json.as_bytes(), &mut self.out)? {
                    self.leave_out_of_written(start, false)?;
                } else {
                    self.model_dump(obj, depth)?;
                }
            }
            Rich::Model => self.model_dump(obj, depth)?,
            Rich::None => return Ok(false),
        }
        Ok(true)
    }

    /// A pydantic model as its `model_dump(mode="json", by_alias=True)`, converted.
    fn model_dump(&mut self, obj: &Bound<'_, PyAny>, depth: usize) -> Result<(), Failed> {
        let kwargs = kwargs_once(self.py, &mut self.model_dump_kwargs, |k| {
            k.set_item("mode", "json")
        })?;
        let dumped = obj.call_method("model_dump", (), Some(&kwargs))?;
        self.value(dumped.as_ptr(), depth)?;
        Ok(())
    }

    /// `serializer.to_json(value, by_alias=True)`: a pydantic serializer's JSON of `value`.
    fn serializer_json<'py>(
        &mut self,
        serializer: &Bound<'py, PyAny>,
        value: &Bound<'py, PyAny>,
    ) -> Result<Bound<'py, PyBytes>, Failed> {
        let py = serializer.py();
        let kwargs = kwargs_once(py, &mut self.to_json_kwargs, |_| Ok(()))?;
        let json = serializer.call_method(pyo3::intern!(py, "to_json"), (value,), Some(&kwargs))?;
        Ok(json.cast_into::<PyBytes>().map_err(PyErr::from)?)
    }

    /// Which rich type `obj` is, decided once per class in a text (the checks are calls
    /// into Python; a list of a thousand models asked them a thousand times). The classes
    /// are held, so an address names one class throughout.
    fn kind_of(&mut self, obj: &Bound<'_, PyAny>) -> Result<Rich, Failed> {
        use pyo3::types::{PyDate, PyDateTime, PyTime, PyType};
        let py = self.py;
        // A class itself (a dataclass's class, say) is told by itself, not by its metaclass.
        let is_class = obj.is_instance_of::<PyType>();
        let ty = obj.get_type();
        let known = self.kinds.iter().find(|(t, _)| t.as_ptr() == ty.as_ptr());
        if let (false, Some((_, kind))) = (is_class, known) {
            return Ok(*kind);
        }
        let types = rich_types(py)?;
        let kind = if obj.cast::<PyDateTime>().is_ok()
            || obj.cast::<PyDate>().is_ok()
            || obj.cast::<PyTime>().is_ok()
        {
            Rich::Iso
        } else if obj.is_instance(types.uuid.bind(py))? {
            Rich::Uuid
        } else if obj.is_instance(types.decimal.bind(py))? {
            Rich::Decimal
        } else if obj.is_instance(types.enum_.bind(py))? {
            Rich::Enum
        } else if !is_class && types.is_dataclass.bind(py).call1((obj,))?.is_truthy()? {
            Rich::Dataclass
        } else if !is_class && obj.hasattr("model_dump")? && ty.hasattr("model_fields")? {
            // A pydantic v2 model (its class has `model_fields`; asking the instance is
            // deprecated): written by pydantic's own JSON unless its class has a
            // `model_dump` of its own, which `model_dump(mode="json")` would run.
            let own_dump = py
                .import("pydantic")
                .and_then(|m| m.getattr("BaseModel")?.getattr("model_dump"))
                .is_ok_and(|base| ty.getattr("model_dump").is_ok_and(|d| d.is(&base)));
            if own_dump && ty.hasattr("__pydantic_serializer__")? {
                Rich::ModelJson
            } else {
                Rich::Model
            }
        } else {
            Rich::None
        };
        if !is_class {
            self.kinds.push((ty.unbind(), kind));
        }
        Ok(kind)
    }

    fn text(&mut self, s: &Bound<'_, PyString>) -> Result<(), Failed> {
        // SAFETY: a live `str` the caller holds.
        unsafe { self.string(s.as_ptr()) }
    }
}

/// `s` as a JSON string, byte for byte as [`pare::json::write_string`] writes it, but
/// copied eight bytes at a time as it is scanned: most strings of a payload are short and
/// need no escape, and a scan then a copy of each (a call to `memcpy` for a few bytes) was
/// a third of a conversion. The last 1-7 bytes of a string of 8 or more are the top of its
/// last eight, loaded and stored as one word that ends where the string does (its lower
/// bytes rewrite what was just copied, when that was copied unescaped).
pub(crate) fn write_string<S: Sink>(s: &str, out: &mut S) {
    let b = s.as_bytes();
    let n = b.len();
    // Room for the string, its quotes, and a whole last word written past its end.
    out.reserve(n + 2 + 8);
    let mut i = 0;
    // Bytes of `b` from here on were copied as they are (none escaped since).
    let mut verbatim_from = 0;
    // SAFETY: bytes are written only within the capacity reserved (at most `n - i` string
    // bytes, plus 8 a word may run past them, plus the quotes, reserved again after each
    // escape); a word stored to end at the string's end starts at most 7 bytes back, over
    // bytes of `b` copied unescaped (`verbatim_from`), so it rewrites them unchanged; the
    // length is set only to the end of whole characters copied from `s` (a word is kept
    // whole, or up to an ASCII byte to escape), so the string stays UTF-8.
    unsafe {
        let mut at = out.len();
        let mut dst = out.as_mut_ptr();
        *dst.add(at) = b'"';
        at += 1;
        while let Some(word) = b.get(i..).and_then(<[u8]>::first_chunk::<8>) {
            std::ptr::copy_nonoverlapping(word.as_ptr(), dst.add(at), 8);
            let hits = pare::scan::special_bytes(u64::from_le_bytes(*word));
            if hits == 0 {
                at += 8;
                i += 8;
                continue;
            }
            let k = (hits.trailing_zeros() / 8) as usize;
            out.set_len(at + k);
            sink::push_escape(b[i + k], out);
            i += k + 1;
            verbatim_from = i;
            out.reserve(n - i + 2 + 8);
            at = out.len();
            dst = out.as_mut_ptr();
        }
        let rest = n - i;
        if rest > 0 && n >= 8 && n - 8 >= verbatim_from {
            // The lower `8 - rest` bytes were checked: the first flagged byte above them
            // is a true one (flags run only upward from a true one).
            let word = u64::from_le_bytes(*b[n - 8..].first_chunk::<8>().unwrap_unchecked());
            let hits = pare::scan::special_bytes(word) & (u64::MAX << (8 * (8 - rest)));
            if hits == 0 {
                let from = at - (8 - rest);
                std::ptr::write_unaligned(dst.add(from).cast::<[u8; 8]>(), word.to_le_bytes());
                *dst.add(from + 8) = b'"';
                out.set_len(from + 9);
                return;
            }
        }
        // The last 0-7 bytes, as one word padded with a plain byte: written whole (the
        // room is there), kept up to the first byte to escape, the rest one by one.
        let tail = &b[i..];
        let word = pare::scan::short_word(tail, b'A');
        std::ptr::write_unaligned(dst.add(at).cast::<[u8; 8]>(), word.to_le_bytes());
        let hits = pare::scan::special_bytes(word);
        let clean = if hits == 0 {
            tail.len()
        } else {
            (hits.trailing_zeros() / 8) as usize
        };
        if clean == tail.len() {
            *dst.add(at + clean) = b'"';
            out.set_len(at + clean + 1);
            return;
        }
        out.set_len(at + clean);
        for &c in &tail[clean..] {
            if pare::scan::is_special(c) {
                sink::push_escape(c, out);
            } else {
                // Continuation bytes of a character: the string is whole again by the end.
                out.reserve(1);
                let at = out.len();
                *out.as_mut_ptr().add(at) = c;
                out.set_len(at + 1);
            }
        }
    }
    out.push('"');
}

/// A string of `len` < 8 ASCII bytes (low in `word`, zeros above) as a JSON string in one
/// store, when none of its bytes needs an escape; `false` (nothing written) when one does.
#[inline(always)]
fn write_short<S: Sink>(word: u64, len: usize, out: &mut S) -> bool {
    // Only the string's own bytes: the zeros above are flagged, and flags run only upward.
    if pare::scan::special_bytes(word) & ((1u64 << (8 * len)) - 1) != 0 {
        return false;
    }
    out.reserve(10);
    // SAFETY: 10 bytes are reserved: a quote, the 8-byte word and a quote after at most 7
    // of its bytes; the length then covers the quotes and the string's `len` ASCII bytes.
    unsafe {
        let at = out.len();
        let p = out.as_mut_ptr().add(at);
        *p = b'"';
        std::ptr::write_unaligned(p.add(1).cast::<[u8; 8]>(), word.to_le_bytes());
        *p.add(1 + len) = b'"';
        out.set_len(at + len + 2);
    }
    true
}

/// A `str` as a JSON string from what CPython holds, changing nothing (so on either
/// thread, see `split`): its UTF-8 in place, or encoded from its characters. `false`
/// (nothing written): ask CPython (`PyUnicode_AsUTF8AndSize`), as the abi3 build always
/// does.
///
/// SAFETY (callers): `obj` is a live `str` (or subclass).
#[inline]
pub(crate) unsafe fn write_str_reading_only<S: Sink>(obj: *mut ffi::PyObject, out: &mut S) -> bool {
    // SAFETY: per the caller; the text is CPython's UTF-8 of a live string.
    if let Some(held) = unsafe { capi::utf8_in_place(obj) } {
        if let Some(word) = held.word
            && write_short(word, held.len, out)
        {
            return true;
        }
        let s = unsafe {
            std::str::from_utf8_unchecked(std::slice::from_raw_parts(held.data, held.len))
        };
        write_string(s, out);
        return true;
    }
    // SAFETY: per the caller.
    unsafe { capi::write_encoded(obj, out) }
}

/// Keyword arguments for a pydantic call, made once per text (kept in `kept`): `by_alias=True`,
/// as FastAPI writes a model, and what `more` adds.
fn kwargs_once<'py>(
    py: Python<'py>,
    kept: &mut Option<Py<PyDict>>,
    more: impl FnOnce(&Bound<'py, PyDict>) -> PyResult<()>,
) -> PyResult<Bound<'py, PyDict>> {
    if let Some(k) = kept {
        return Ok(k.bind(py).clone());
    }
    let kwargs = PyDict::new(py);
    kwargs.set_item("by_alias", true)?;
    more(&kwargs)?;
    *kept = Some(kwargs.clone().unbind());
    Ok(kwargs)
}

/// pydantic's serializer for a list of `class` (a model class), made once per class: a
/// `SchemaSerializer` of a list of the class's own core schema, so each item is written as
/// the class's serializer writes it. At most [`LIST_SERIALIZERS`] classes are kept; a class
/// rebuilt since (`model_rebuild`, a new serializer of its own) gets a new one.
fn list_serializer<'py>(class: &Bound<'py, pyo3::types::PyType>) -> PyResult<Bound<'py, PyAny>> {
    use std::sync::Mutex;
    static KEPT: Mutex<Vec<KeptSerializer>> = Mutex::new(Vec::new());
    let py = class.py();
    let own = class.getattr(pyo3::intern!(py, "__pydantic_serializer__"))?;
    let lock = || {
        KEPT.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    };
    let same = |k: &KeptSerializer| k.class.is(class) && k.own.is(&own);
    if let Some(k) = lock().iter().find(|k| same(k)) {
        return Ok(k.list.bind(py).clone());
    }
    // Made without the lock held: this runs Python code.
    let core = py.import("pydantic_core")?;
    let schema = core
        .getattr("core_schema")?
        .call_method1("list_schema", (class.getattr("__pydantic_core_schema__")?,))?;
    let list = core.getattr("SchemaSerializer")?.call1((schema,))?;
    let mut kept = lock();
    kept.retain(|k| !k.class.is(class));
    if kept.len() >= LIST_SERIALIZERS {
        kept.remove(0);
    }
    kept.push(KeptSerializer {
        class: class.clone().into_any().unbind(),
        own: own.unbind(),
        list: list.clone().unbind(),
    });
    Ok(list)
}

/// A [`list_serializer`] kept: the class and its own serializer it was made for (held, so
/// their addresses name them while kept), and the list's.
struct KeptSerializer {
    class: Py<PyAny>,
    own: Py<PyAny>,
    list: Py<PyAny>,
}

/// How many model classes [`list_serializer`] keeps a serializer for.
const LIST_SERIALIZERS: usize = 64;

/// A pydantic model's JSON (its serializer's `to_json`) as [`Dumper`] writes the same model's
/// `model_dump(mode="json")`: the same text but for its floats, which pydantic writes as
/// Rust does (`1e-7`, `0.00001`) and are rewritten as Python's `repr` (`1e-07`, `1e-05`),
/// and any string with an escape, written again as the engine escapes it (pydantic's
/// escapes are the same today; this keeps the bytes the same should they change).
///
/// Why: pydantic writes a model's JSON in Rust without making its dict; a thousand models
/// dumped to dicts then converted cost twice as long.
///
/// `Ok(false)`, with nothing written, when an object of it repeats a key (a field's alias
/// that is another field's name, an extra field by that name): its `model_dump` keeps one
/// of them, so it is written from that instead.
fn push_model_json<S: Sink>(json: &[u8], out: &mut S) -> Result<bool, Failed> {
    let bad = |what: &str| {
        failed(Failure::Value(format!(
            "pydantic wrote JSON pare cannot read at {{at}} ({what})"
        )))
    };
    let text = std::str::from_utf8(json).map_err(|_| bad("not UTF-8"))?;
    let b = text.as_bytes();
    let start = out.len();
    out.reserve(b.len());
    let (mut i, mut copied) = (0, 0);
    // The containers open: an object's first key in `keys`, or `None` for an array.
    let mut open: Vec<Option<usize>> = Vec::new();
    let mut keys: Vec<&str> = Vec::new();
    while i < b.len() {
        match b[i] {
            b'{' => {
                open.push(Some(keys.len()));
                i += 1;
            }
            b'[' => {
                open.push(None);
                i += 1;
            }
            b'}' | b']' => {
                if let Some(Some(from)) = open.pop() {
                    keys.truncate(from);
                }
                i += 1;
            }
            b'"' => {
                let end = pare::scan::string_end(b, i).ok_or_else(|| bad("a string"))?;
                if let Some(&Some(from)) = open.last()
                    && b.get(end) == Some(&b':')
                {
                    let key = &text[i..end];
                    if keys[from..].contains(&key) {
                        out.truncate(start);
                        return Ok(false);
                    }
                    keys.push(key);
                }
                if b[i..end].contains(&b'\\') {
                    let Ok(pare::Value::String(s)) = pare::json::parse(&text[i..end]) else {
                        return Err(bad("a string"));
                    };
                    out.push_str(&text[copied..i]);
                    write_string(&s, out);
                    copied = end;
                }
                i = end;
            }
            b'-' | b'0'..=b'9' => {
                let end = b[i..]
                    .iter()
                    .position(|c| !matches!(c, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                    .map_or(b.len(), |n| i + n);
                let lexeme = &text[i..end];
                if lexeme.contains(['.', 'e', 'E']) {
                    let x: f64 = lexeme.parse().map_err(|_| bad("a number"))?;
                    out.push_str(&text[copied..i]);
                    write_float(x, out);
                    copied = end;
                } else if end < b.len() && b[end].is_ascii_alphabetic() {
                    // `-Infinity` (`ser_json_inf_nan = "constants"`).
                    return Err(not_a_json_number(&text[i..]));
                }
                i = end;
            }
            b'N' | b'I' => return Err(not_a_json_number(&text[i..])),
            _ => i += 1,
        }
    }
    out.push_str(&text[copied..]);
    Ok(true)
}

/// `NaN` or an infinity pydantic wrote (`ser_json_inf_nan = "constants"`), refused as a
/// float of the same value is.
fn not_a_json_number(rest: &str) -> Failed {
    let word: String = rest
        .chars()
        .take_while(|&c| c == '-' || c.is_ascii_alphabetic())
        .collect();
    failed(Failure::Value(format!(
        "{word} at {{at}} is not a JSON number (JSON has no NaN or infinity)"
    )))
}

/// A `str`'s UTF-8, borrowed from CPython (for an ASCII string its own data; otherwise the
/// UTF-8 copy CPython makes once and keeps with the string, as for many C API calls).
///
/// SAFETY (callers): `obj` is a live `str`; the text lives as long as it does.
unsafe fn utf8<'a>(py: Python<'_>, obj: *mut ffi::PyObject) -> Result<&'a str, Failed> {
    let mut len: ffi::Py_ssize_t = 0;
    let data = unsafe { ffi::PyUnicode_AsUTF8AndSize(obj, &mut len) };
    if data.is_null() {
        // A lone surrogate (`"\ud800"`) has no UTF-8.
        let err = PyErr::fetch(py);
        return Err(failed(Failure::Value(format!(
            "a str at {{at}} is not Unicode text: {err}"
        ))));
    }
    // SAFETY: CPython's UTF-8 of a `str` is valid UTF-8 of `len` bytes, owned by `obj`.
    Ok(unsafe {
        std::str::from_utf8_unchecked(std::slice::from_raw_parts(data.cast::<u8>(), len as usize))
    })
}

/// A key's text for a path (lossy: only for messages).
///
/// SAFETY (callers): `key` is a live `str`.
unsafe fn key_text(py: Python<'_>, key: *mut ffi::PyObject) -> String {
    unsafe { utf8(py, key) }
        .map(str::to_owned)
        .unwrap_or_else(|_| "?".into())
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".into())
}

/// What [`Dumper::rich`] writes an object of a class as.
#[derive(Clone, Copy)]
enum Rich {
    /// `datetime`, `date`, `time`: `isoformat()`.
    Iso,
    Uuid,
    Decimal,
    Enum,
    Dataclass,
    /// A pydantic v2 model: `model_dump(mode="json", by_alias=True)`, converted.
    Model,
    /// A pydantic v2 model whose class keeps pydantic's `model_dump`: its serializer's
    /// JSON (`to_json(by_alias=True)`), which is that dump written as JSON but for floats
    /// (rewritten as Python's `repr`, [`push_model_json`]) and NaN and infinities (pydantic
    /// writes `null` for them, by the model's `ser_json_inf_nan`).
    ModelJson,
    /// None of these.
    None,
}

/// The classes [`Dumper::rich`] recognizes, imported once.
struct RichTypes {
    uuid: Py<PyAny>,
    decimal: Py<PyAny>,
    enum_: Py<PyAny>,
    is_dataclass: Py<PyAny>,
    fields: Py<PyAny>,
}

fn rich_types(py: Python<'_>) -> PyResult<&'static RichTypes> {
    static TYPES: pyo3::sync::PyOnceLock<RichTypes> = pyo3::sync::PyOnceLock::new();
    TYPES.get_or_try_init(py, || {
        let get = |module: &str, name: &str| -> PyResult<Py<PyAny>> {
            Ok(py.import(module)?.getattr(name)?.unbind())
        };
        Ok(RichTypes {
            uuid: get("uuid", "UUID")?,
            decimal: get("decimal", "Decimal")?,
            enum_: get("enum", "Enum")?,
            is_dataclass: get("dataclasses", "is_dataclass")?,
            fields: get("dataclasses", "fields")?,
        })
    })
}
