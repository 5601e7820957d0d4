//! The few CPython reads the converter ([`crate::dump`]) makes per object, as direct struct
//! reads where the build allows them and as the stable ABI's calls where it does not.
//!
//! The default build is for one CPython version (`cp311`, `cp312`, …), and reads what
//! CPython's own macros read: a compact ASCII `str`'s characters right after its header
//! (they are its UTF-8), a compact `str`'s cached UTF-8, a list's or tuple's item array,
//! a float's value. The `abi3` feature builds one wheel for CPython 3.10 and later
//! instead; there each of these is a call into libpython. (Reference counts need nothing
//! here: PyO3's `Py_INCREF` is inline in a per-version build.)
//!
//! Why: on the 1 MB entities dict those calls were about a sixth of `pare.dumps` (perf:
//! `PyUnicode_AsUTF8AndSize` 4%, the `utf8` wrapper 2.4%, list and tuple item calls, the
//! reference count calls); orjson, built per version, reads the structs as these do.
//! CPython 3.14 no longer exposes the `str` header's bit fields to PyO3, so there a `str`
//! is read by the call in every build.
//!
//! A dict's members are read from its entry table in a CPython 3.11–3.13 build (its
//! layout is the same in the three; `PyDict_Next` elsewhere): on a 1 KB dict the call was
//! a fifth of `pare.dumps`, and each member's key waited on it.
//!
//! ```text
//! list_item(obj, i)   // PyList_GET_ITEM in a cp3XX build, PyList_GetItem in abi3
//! ```

// Raw CPython reads: each function's SAFETY line says what its caller guarantees.
#![allow(unsafe_code)]

use crate::dump::sink::Sink;
use pyo3::ffi;

/// A `str`'s UTF-8 as CPython already holds it ([`utf8_in_place`]).
pub struct InPlace {
    pub data: *const u8,
    pub len: usize,
    /// A compact ASCII string under 8 bytes as one little-endian word, its bytes low and
    /// zeros above: read as the 8 bytes that end where its characters end, which start
    /// inside its header (`PyASCIIObject`, more than 8 bytes, the same allocation), shifted
    /// down. Why: half the values of a typical record are that short, and gathering their
    /// bytes 4, 2 and 1 at a time by the bits of the length cost a branch each, which a
    /// varying length mispredicts.
    pub word: Option<u64>,
}

/// A `str`'s UTF-8 read in place when CPython already holds it: a compact ASCII string's
/// characters, or a compact string's cached UTF-8. `None`: ask `PyUnicode_AsUTF8AndSize`
/// (which encodes, caches, and refuses lone surrogates).
///
/// SAFETY (callers): `obj` is a live `str` (or subclass); the bytes live as long as it.
#[cfg(not(any(Py_LIMITED_API, Py_3_14, PyPy, GraalPy)))]
#[inline(always)]
pub unsafe fn utf8_in_place(obj: *mut ffi::PyObject) -> Option<InPlace> {
    const _: () = assert!(std::mem::size_of::<ffi::PyASCIIObject>() >= 8);
    // SAFETY: a live `str` per the caller. A compact string (every `str` made since 3.3's
    // new API, i.e. all but legacy subclass instances) is always ready, and its data
    // follows the header: right after `PyASCIIObject` when ASCII (one byte a character,
    // which is its UTF-8), after `PyCompactUnicodeObject` otherwise, with `utf8` the
    // cached UTF-8 or null (CPython's `PyUnicode_UTF8` macro reads the same fields). The
    // 8 bytes before the end of a short ASCII string's characters lie in its header and
    // its characters.
    unsafe {
        if ffi::PyUnicode_IS_COMPACT(obj) == 0 {
            return None;
        }
        let len = ffi::PyUnicode_GET_LENGTH(obj) as usize;
        if ffi::PyUnicode_IS_ASCII(obj) != 0 {
            let data = obj.cast::<ffi::PyASCIIObject>().add(1).cast::<u8>();
            let word = (len < 8).then(|| match len {
                0 => 0,
                _ => {
                    let last8 = std::ptr::read_unaligned(data.add(len).sub(8).cast::<[u8; 8]>());
                    u64::from_le_bytes(last8) >> (8 * (8 - len))
                }
            });
            return Some(InPlace { data, len, word });
        }
        let compact = obj.cast::<ffi::PyCompactUnicodeObject>();
        let utf8 = (*compact).utf8;
        (!utf8.is_null()).then(|| InPlace {
            data: utf8.cast::<u8>().cast_const(),
            len: (*compact).utf8_length as usize,
            word: None,
        })
    }
}

/// A compact `str` whose UTF-8 CPython has not made yet, written onto `out` as a JSON
/// string (quoted, escaped as `pare::json` escapes) straight from its 1-, 2- or 4-byte
/// characters, without changing the string: `false` (and `out` as it was) when it is not
/// compact or holds a lone surrogate (which has no UTF-8; the caller asks CPython, whose
/// error says so).
///
/// Why: `PyUnicode_AsUTF8AndSize` makes and keeps a UTF-8 copy inside the string, a change
/// the converter's helper thread must not see happen (see `split`), and memory the string
/// holds from then on; this reads only, and encodes and escapes in one pass.
///
/// SAFETY (callers): `obj` is a live `str` (or subclass).
#[cfg(not(any(Py_LIMITED_API, Py_3_14, PyPy, GraalPy)))]
pub unsafe fn write_encoded<S: Sink>(obj: *mut ffi::PyObject, out: &mut S) -> bool {
    // SAFETY: a live `str`; a compact one's characters follow its header, `length` of
    // them, each of `kind` bytes (what CPython's `PyUnicode_DATA` and `PyUnicode_KIND`
    // read).
    unsafe {
        if ffi::PyUnicode_IS_COMPACT(obj) == 0 {
            return false;
        }
        let len = ffi::PyUnicode_GET_LENGTH(obj) as usize;
        let data = ffi::PyUnicode_DATA(obj);
        let start = out.len();
        out.push('"');
        let whole = match ffi::PyUnicode_KIND(obj) {
            ffi::PyUnicode_1BYTE_KIND => {
                encode(std::slice::from_raw_parts(data.cast::<u8>(), len), out)
            }
            ffi::PyUnicode_2BYTE_KIND => {
                encode(std::slice::from_raw_parts(data.cast::<u16>(), len), out)
            }
            ffi::PyUnicode_4BYTE_KIND => {
                encode(std::slice::from_raw_parts(data.cast::<u32>(), len), out)
            }
            _ => false,
        };
        if !whole {
            out.truncate(start);
            return false;
        }
        out.push('"');
        true
    }
}

/// Code points as UTF-8 onto `out`, the ASCII ones JSON escapes escaped; `false` at the
/// first that is not a character (a surrogate).
#[cfg(not(any(Py_LIMITED_API, Py_3_14, PyPy, GraalPy)))]
fn encode<U: Copy + Into<u32>, S: Sink>(units: &[U], out: &mut S) -> bool {
    // The longest UTF-8 of one unit: a 1-byte unit (Latin-1) takes at most 2 bytes, a
    // 2-byte one 3, a 4-byte one 4. Room for all of them, so the loop writes unchecked.
    let widest = match std::mem::size_of::<U>() {
        1 => 2,
        2 => 3,
        _ => 4,
    };
    out.reserve(units.len() * widest);
    let mut at = out.len();
    for (i, &unit) in units.iter().enumerate() {
        let point: u32 = unit.into();
        if point < 0x80 && pare::scan::is_special(point as u8) {
            // SAFETY: `at` is the end of what was written, all whole characters.
            unsafe { out.set_len(at) };
            crate::dump::sink::push_escape(point as u8, out);
            out.reserve((units.len() - i) * widest);
            at = out.len();
            continue;
        }
        if (0xD800..0xE000).contains(&point) || point > 0x10FFFF {
            // SAFETY: as above.
            unsafe { out.set_len(at) };
            return false;
        }
        // SAFETY: the room reserved holds this unit's UTF-8 (at most `widest` bytes) and
        // every later one's; the bytes written are the character's whole UTF-8.
        unsafe {
            let p = out.as_mut_ptr().add(at);
            if point < 0x80 {
                *p = point as u8;
                at += 1;
            } else if point < 0x800 {
                *p = 0xC0 | (point >> 6) as u8;
                *p.add(1) = 0x80 | (point & 0x3F) as u8;
                at += 2;
            } else if point < 0x10000 {
                *p = 0xE0 | (point >> 12) as u8;
                *p.add(1) = 0x80 | ((point >> 6) & 0x3F) as u8;
                *p.add(2) = 0x80 | (point & 0x3F) as u8;
                at += 3;
            } else {
                *p = 0xF0 | (point >> 18) as u8;
                *p.add(1) = 0x80 | ((point >> 12) & 0x3F) as u8;
                *p.add(2) = 0x80 | ((point >> 6) & 0x3F) as u8;
                *p.add(3) = 0x80 | (point & 0x3F) as u8;
                at += 4;
            }
        }
    }
    // SAFETY: as above.
    unsafe { out.set_len(at) };
    true
}

/// Only a per-version build reads a `str`'s characters.
///
/// SAFETY (callers): as above.
#[cfg(any(Py_LIMITED_API, Py_3_14, PyPy, GraalPy))]
pub unsafe fn write_encoded<S: Sink>(_obj: *mut ffi::PyObject, _out: &mut S) -> bool {
    false
}

/// The stable ABI cannot read a `str`'s header: always ask.
///
/// SAFETY (callers): as above.
#[cfg(any(Py_LIMITED_API, Py_3_14, PyPy, GraalPy))]
#[inline(always)]
pub unsafe fn utf8_in_place(_obj: *mut ffi::PyObject) -> Option<InPlace> {
    None
}

/// SAFETY (callers): `obj` is a live `list` (or subclass).
#[inline(always)]
pub unsafe fn list_len(obj: *mut ffi::PyObject) -> ffi::Py_ssize_t {
    #[cfg(not(Py_LIMITED_API))]
    // SAFETY: per the caller.
    unsafe {
        ffi::PyList_GET_SIZE(obj)
    }
    #[cfg(Py_LIMITED_API)]
    // SAFETY: per the caller.
    unsafe {
        ffi::PyList_Size(obj)
    }
}

/// A borrowed item.
///
/// SAFETY (callers): `obj` is a live `list` (or subclass) and `0 <= i < list_len(obj)`.
#[inline(always)]
pub unsafe fn list_item(obj: *mut ffi::PyObject, i: ffi::Py_ssize_t) -> *mut ffi::PyObject {
    #[cfg(not(Py_LIMITED_API))]
    // SAFETY: per the caller.
    unsafe {
        ffi::PyList_GET_ITEM(obj, i)
    }
    #[cfg(Py_LIMITED_API)]
    // SAFETY: per the caller.
    unsafe {
        ffi::PyList_GetItem(obj, i)
    }
}

/// SAFETY (callers): `obj` is a live `tuple` (or subclass).
#[inline(always)]
pub unsafe fn tuple_len(obj: *mut ffi::PyObject) -> ffi::Py_ssize_t {
    #[cfg(not(Py_LIMITED_API))]
    // SAFETY: per the caller.
    unsafe {
        ffi::PyTuple_GET_SIZE(obj)
    }
    #[cfg(Py_LIMITED_API)]
    // SAFETY: per the caller.
    unsafe {
        ffi::PyTuple_Size(obj)
    }
}

/// A borrowed item.
///
/// SAFETY (callers): `obj` is a live `tuple` (or subclass) and `0 <= i < tuple_len(obj)`.
#[inline(always)]
pub unsafe fn tuple_item(obj: *mut ffi::PyObject, i: ffi::Py_ssize_t) -> *mut ffi::PyObject {
    #[cfg(not(Py_LIMITED_API))]
    // SAFETY: per the caller.
    unsafe {
        ffi::PyTuple_GET_ITEM(obj, i)
    }
    #[cfg(Py_LIMITED_API)]
    // SAFETY: per the caller.
    unsafe {
        ffi::PyTuple_GetItem(obj, i)
    }
}

/// A float's value (a subclass's too: `PyFloat_AsDouble` reads the same field for any
/// `float` instance, without calling `__float__`).
///
/// SAFETY (callers): `obj` is a live `float` (or subclass).
#[inline(always)]
pub unsafe fn float_value(obj: *mut ffi::PyObject) -> f64 {
    #[cfg(not(Py_LIMITED_API))]
    // SAFETY: per the caller.
    unsafe {
        ffi::PyFloat_AS_DOUBLE(obj)
    }
    #[cfg(Py_LIMITED_API)]
    // SAFETY: per the caller (a `float` cannot fail to give its value).
    unsafe {
        ffi::PyFloat_AsDouble(obj)
    }
}

/// `PyDict_Next`, inline where the build knows the dict's layout (CPython 3.11–3.13 with the
/// GIL: [`dict_table`]), the call everywhere else.
///
/// SAFETY (callers): `obj` is a live `dict` (or subclass); `key` and `value` are borrowed.
#[inline(always)]
pub unsafe fn dict_next(
    obj: *mut ffi::PyObject,
    pos: &mut ffi::Py_ssize_t,
    key: &mut *mut ffi::PyObject,
    value: &mut *mut ffi::PyObject,
) -> bool {
    #[cfg(all(
        Py_3_11,
        not(any(Py_LIMITED_API, Py_3_14, Py_GIL_DISABLED, PyPy, GraalPy))
    ))]
    // SAFETY: per the caller.
    unsafe {
        dict_table::next(obj, pos, key, value)
    }
    #[cfg(not(all(
        Py_3_11,
        not(any(Py_LIMITED_API, Py_3_14, Py_GIL_DISABLED, PyPy, GraalPy))
    )))]
    // SAFETY: per the caller.
    unsafe {
        ffi::PyDict_Next(obj, pos, key, value) != 0
    }
}

/// A dict's table as CPython 3.11, 3.12 and 3.13 (with the GIL) lay it out.
#[cfg(all(
    Py_3_11,
    not(any(Py_LIMITED_API, Py_3_14, Py_GIL_DISABLED, PyPy, GraalPy))
))]
mod dict_table {
    use pyo3::ffi;

    /// `PyDictObject` (`Include/cpython/dictobject.h`, the same in 3.11, 3.12 and 3.13).
    #[repr(C)]
    struct DictObject {
        ob_base: ffi::PyObject,
        ma_used: ffi::Py_ssize_t,
        ma_version_tag: u64,
        ma_keys: *const DictKeys,
        /// Null for a combined table (the values are in the entries); a split table's
        /// values (an instance's `__dict__`) are read by the call.
        ma_values: *const std::ffi::c_void,
    }

    /// `struct _dictkeysobject` (`Include/internal/pycore_dict.h`, 3.11–3.13 without
    /// `Py_GIL_DISABLED`), up to its index array, which starts right after it.
    #[repr(C)]
    struct DictKeys {
        dk_refcnt: ffi::Py_ssize_t,
        dk_log2_size: u8,
        dk_log2_index_bytes: u8,
        /// `DICT_KEYS_GENERAL` (0) has entries with a hash; any other kind has
        /// `PyDictUnicodeEntry`s (`DK_IS_UNICODE`).
        dk_kind: u8,
        dk_version: u32,
        dk_usable: ffi::Py_ssize_t,
        dk_nentries: ffi::Py_ssize_t,
    }

    const _: () = assert!(std::mem::size_of::<DictKeys>() == 32);

    /// An entry of the table: a key and its value (null once deleted).
    trait Entry {
        fn pair(&self) -> (*mut ffi::PyObject, *mut ffi::PyObject);
    }

    /// `PyDictKeyEntry`.
    #[repr(C)]
    struct GeneralEntry {
        me_hash: ffi::Py_hash_t,
        me_key: *mut ffi::PyObject,
        me_value: *mut ffi::PyObject,
    }

    /// `PyDictUnicodeEntry`.
    #[repr(C)]
    struct UnicodeEntry {
        me_key: *mut ffi::PyObject,
        me_value: *mut ffi::PyObject,
    }

    impl Entry for GeneralEntry {
        fn pair(&self) -> (*mut ffi::PyObject, *mut ffi::PyObject) {
            (self.me_key, self.me_value)
        }
    }

    impl Entry for UnicodeEntry {
        fn pair(&self) -> (*mut ffi::PyObject, *mut ffi::PyObject) {
            (self.me_key, self.me_value)
        }
    }

    /// `PyDict_Next` as CPython 3.11–3.13 runs it on a combined table, inline: the entries
    /// follow the index array (`DK_ENTRIES`), a deleted one has no value. Everything is read
    /// again on each call, as `PyDict_Next` does, so a dict that changed is read as it is.
    ///
    /// SAFETY (callers): as [`super::dict_next`]'s.
    #[inline(always)]
    pub(super) unsafe fn next(
        obj: *mut ffi::PyObject,
        pos: &mut ffi::Py_ssize_t,
        key: &mut *mut ffi::PyObject,
        value: &mut *mut ffi::PyObject,
    ) -> bool {
        // SAFETY: a live dict per the caller: `ma_keys` is its live keys object, whose
        // `dk_nentries` entries follow its `1 << dk_log2_index_bytes` bytes of indices.
        unsafe {
            let dict = obj.cast::<DictObject>();
            if !(*dict).ma_values.is_null() {
                return ffi::PyDict_Next(obj, pos, key, value) != 0;
            }
            let keys = (*dict).ma_keys;
            if *pos < 0 {
                return false;
            }
            let entries = keys
                .cast::<u8>()
                .add(std::mem::size_of::<DictKeys>() + (1usize << (*keys).dk_log2_index_bytes));
            let found = match (*keys).dk_kind {
                0 => first_live(entries.cast::<GeneralEntry>(), (*keys).dk_nentries, *pos),
                _ => first_live(entries.cast::<UnicodeEntry>(), (*keys).dk_nentries, *pos),
            };
            let Some((next, k, v)) = found else {
                return false;
            };
            (*pos, *key, *value) = (next, k, v);
            true
        }
    }

    /// The first entry at or after `i` (of `n`) with a value, and the position after it.
    ///
    /// SAFETY (callers): `entries` points at `n` entries.
    #[inline(always)]
    unsafe fn first_live<E: Entry>(
        entries: *const E,
        n: ffi::Py_ssize_t,
        mut i: ffi::Py_ssize_t,
    ) -> Option<(ffi::Py_ssize_t, *mut ffi::PyObject, *mut ffi::PyObject)> {
        while i < n {
            // SAFETY: `0 <= i < n`, per the caller.
            let (k, v) = unsafe { &*entries.add(i as usize) }.pair();
            i += 1;
            if !v.is_null() {
                return Some((i, k, v));
            }
        }
        None
    }
}
