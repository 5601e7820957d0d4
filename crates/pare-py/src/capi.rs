//! The few CPython reads the converter ([`crate::dump`]) makes per object, as direct struct
//! reads where the build allows them and as the stable ABI's calls where it does not.
//!
//! The default build is for one CPython version (`cp311`, `cp312`, …), and reads what
//! CPython's own macros read: a compact ASCII `str`'s characters right after its header
//! (they are its UTF-8), a compact `str`'s cached UTF-8, a list's or tuple's item array,
//! a float's value, reference counts in place. The `abi3` feature builds one wheel for
//! CPython 3.10 and later instead; there each of these is a call into libpython.
//!
//! Why: on the 1 MB entities dict those calls were about a sixth of `pare.dumps` (perf:
//! `PyUnicode_AsUTF8AndSize` 4%, the `utf8` wrapper 2.4%, list and tuple item calls, the
//! reference count calls); orjson, built per version, reads the structs as these do.
//! CPython 3.14 no longer exposes the `str` header's bit fields to PyO3, so there a `str`
//! is read by the call in every build.
//!
//! ```text
//! list_item(obj, i)   // PyList_GET_ITEM in a cp3XX build, PyList_GetItem in abi3
//! ```

// Raw CPython reads: each function's SAFETY line says what its caller guarantees.
#![allow(unsafe_code)]

use pyo3::ffi;

/// A `str`'s UTF-8 read in place when CPython already holds it: a compact ASCII string's
/// characters, or a compact string's cached UTF-8. `None`: ask `PyUnicode_AsUTF8AndSize`
/// (which encodes, caches, and refuses lone surrogates).
///
/// SAFETY (callers): `obj` is a live `str` (or subclass); the bytes live as long as it.
#[cfg(not(any(Py_LIMITED_API, Py_3_14, PyPy, GraalPy)))]
#[inline(always)]
pub unsafe fn utf8_in_place(obj: *mut ffi::PyObject) -> Option<(*const u8, usize)> {
    // SAFETY: a live `str` per the caller. A compact string (every `str` made since 3.3's
    // new API, i.e. all but legacy subclass instances) is always ready, and its data
    // follows the header: right after `PyASCIIObject` when ASCII (one byte a character,
    // which is its UTF-8), after `PyCompactUnicodeObject` otherwise, with `utf8` the
    // cached UTF-8 or null (CPython's `PyUnicode_UTF8` macro reads the same fields).
    unsafe {
        if ffi::PyUnicode_IS_COMPACT(obj) == 0 {
            return None;
        }
        let len = ffi::PyUnicode_GET_LENGTH(obj) as usize;
        if ffi::PyUnicode_IS_ASCII(obj) != 0 {
            let data = obj.cast::<ffi::PyASCIIObject>().add(1).cast::<u8>();
            return Some((data, len));
        }
        let compact = obj.cast::<ffi::PyCompactUnicodeObject>();
        let utf8 = (*compact).utf8;
        (!utf8.is_null()).then(|| {
            (
                utf8.cast::<u8>().cast_const(),
                (*compact).utf8_length as usize,
            )
        })
    }
}

/// The stable ABI cannot read a `str`'s header: always ask.
///
/// SAFETY (callers): as above.
#[cfg(any(Py_LIMITED_API, Py_3_14, PyPy, GraalPy))]
#[inline(always)]
pub unsafe fn utf8_in_place(_obj: *mut ffi::PyObject) -> Option<(*const u8, usize)> {
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

/// SAFETY (callers): `obj` is live and the GIL is held.
#[inline(always)]
pub unsafe fn incref(obj: *mut ffi::PyObject) {
    // SAFETY: per the caller. `Py_INCREF` is inline in a per-version build.
    unsafe { ffi::Py_INCREF(obj) }
}

/// SAFETY (callers): the caller owns a reference to `obj` and the GIL is held.
#[inline(always)]
pub unsafe fn decref(obj: *mut ffi::PyObject) {
    // SAFETY: per the caller.
    unsafe { ffi::Py_DECREF(obj) }
}
