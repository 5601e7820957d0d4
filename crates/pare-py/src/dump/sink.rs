//! Where a conversion writes its text: a `String` (what the engine reads), or, for
//! `pare.dumps` in a per-version build, the `bytes` object it returns ([`BytesOut`]).
//!
//! Why: `pare.dumps` wrote into a `String` and copied that into a new `bytes`. The copy
//! was 7% of the 1 MB entities dict's conversion and 17% of the 8 MB one's (38 µs and
//! 0.68 ms, `bytes(memoryview)` of the same sizes), the margin by which it trailed or
//! matched `orjson.dumps`, which writes into its `bytes` as it goes. The writers are
//! generic over [`Sink`]; the `String` one is the `String` itself, so the engine's paths
//! pay nothing for it.
//!
//! ```text
//! let mut out = BytesOut::new(py, 64)?;   // a bytes object with room for 64
//! write_string("a\nb", &mut out);          // "a\nb", escaped, in place
//! out.finish(py)?                          // b'"a\\nb"', shrunk to its length
//! ```

#![allow(unsafe_code)]

/// A growable UTF-8 text buffer, as much of `String`'s API as the writers use.
pub(crate) trait Sink {
    fn len(&self) -> usize;
    /// Room for `additional` more bytes past the length.
    fn reserve(&mut self, additional: usize);
    fn push_str(&mut self, s: &str);
    fn push(&mut self, c: char);
    /// Cut to `len` bytes (a character boundary).
    fn truncate(&mut self, len: usize);
    /// What was written.
    fn as_str(&self) -> &str;
    /// The first byte of the buffer: valid for the length plus what was reserved, until
    /// the next call that may grow the buffer.
    fn as_mut_ptr(&mut self) -> *mut u8;
    /// Set the length.
    ///
    /// SAFETY (callers): `len` is within the room reserved, the bytes up to it are written,
    /// and they are UTF-8 ending at a character boundary.
    unsafe fn set_len(&mut self, len: usize);
}

impl Sink for String {
    #[inline(always)]
    fn len(&self) -> usize {
        String::len(self)
    }
    #[inline(always)]
    fn reserve(&mut self, additional: usize) {
        String::reserve(self, additional);
    }
    #[inline(always)]
    fn push_str(&mut self, s: &str) {
        String::push_str(self, s);
    }
    #[inline(always)]
    fn push(&mut self, c: char) {
        String::push(self, c);
    }
    #[inline(always)]
    fn truncate(&mut self, len: usize) {
        String::truncate(self, len);
    }
    #[inline(always)]
    fn as_str(&self) -> &str {
        self
    }
    #[inline(always)]
    fn as_mut_ptr(&mut self) -> *mut u8 {
        // SAFETY: only a pointer is taken; what is written through it is the callers' to
        // keep UTF-8 (`set_len`'s contract).
        unsafe { self.as_mut_vec().as_mut_ptr() }
    }
    #[inline(always)]
    unsafe fn set_len(&mut self, len: usize) {
        // SAFETY: per the caller.
        unsafe { self.as_mut_vec().set_len(len) }
    }
}

/// Append the JSON escape of `b` (a byte `pare::scan::is_special` flags).
#[inline]
pub(crate) fn push_escape<S: Sink>(b: u8, out: &mut S) {
    out.push_str(&pare::json::escape(b));
}

#[cfg(not(any(Py_LIMITED_API, PyPy, GraalPy)))]
pub(crate) use bytes_out::BytesOut;

thread_local! {
    /// `bytes` written in place on this thread since the tests last asked.
    static IN_PLACE: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many `bytes` this thread wrote in place ([`BytesOut`]) since the last call (the
/// tests' proof that the path ran; always 0 where the build has no `BytesOut`).
pub fn written_in_place() -> u64 {
    IN_PLACE.with(|n| n.replace(0))
}

#[cfg(not(any(Py_LIMITED_API, PyPy, GraalPy)))]
mod bytes_out {
    use std::os::raw::c_int;

    use pyo3::ffi;
    use pyo3::prelude::*;
    use pyo3::types::PyBytes;

    use super::Sink;

    unsafe extern "C" {
        // CPython's own (exported by every version this build is for; orjson grows its
        // output the same way): reallocates a `bytes` no one else holds; on failure
        // releases it, sets `*bytes` to NULL and raises `MemoryError`.
        fn _PyBytes_Resize(bytes: *mut *mut ffi::PyObject, newsize: ffi::Py_ssize_t) -> c_int;
    }

    /// A `bytes` object being written: only this holds it (reference count 1) until
    /// [`BytesOut::finish`]. Not `Send` (raw pointers): it is made, grown and dropped on the
    /// thread holding the GIL.
    pub(crate) struct BytesOut {
        /// The object (null once finished).
        obj: *mut ffi::PyObject,
        /// Its first byte of text.
        data: *mut u8,
        len: usize,
        /// Its size: the room for text (CPython keeps one more byte for a trailing NUL).
        cap: usize,
    }

    impl BytesOut {
        /// A `bytes` with room for `cap` bytes of text.
        pub(crate) fn new(py: Python<'_>, cap: usize) -> PyResult<BytesOut> {
            let cap = cap.max(16);
            // SAFETY: the GIL is held (`py`); a NULL source leaves the bytes unset, to be
            // written before `finish` shows any of them.
            let obj = unsafe { ffi::PyBytes_FromStringAndSize(std::ptr::null(), cap as _) };
            if obj.is_null() {
                return Err(PyErr::fetch(py));
            }
            Ok(BytesOut {
                obj,
                // SAFETY: a live `bytes`.
                data: unsafe { ffi::PyBytes_AS_STRING(obj) }.cast_mut().cast(),
                len: 0,
                cap,
            })
        }

        /// The `bytes`, shrunk to what was written.
        pub(crate) fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
            // SAFETY: the GIL is held; the object is this one's alone (never handed out),
            // as `_PyBytes_Resize` asks; it writes the trailing NUL at the new size.
            unsafe {
                if _PyBytes_Resize(&mut self.obj, self.len as _) != 0 {
                    self.obj = std::ptr::null_mut();
                    return Err(PyErr::fetch(py));
                }
                let obj = std::mem::replace(&mut self.obj, std::ptr::null_mut());
                super::IN_PLACE.with(|n| n.set(n.get() + 1));
                Ok(Bound::from_owned_ptr(py, obj).cast_into_unchecked())
            }
        }

        #[cold]
        #[inline(never)]
        fn grow(&mut self, additional: usize) {
            let cap = self
                .len
                .checked_add(additional)
                .map(|need| need.max(self.cap.saturating_mul(2)))
                .filter(|&cap| cap <= isize::MAX as usize / 2)
                .unwrap_or_else(|| panic!("a text of over {} bytes", self.len));
            // SAFETY: as in `finish`: the GIL is held (a `BytesOut` lives on the thread
            // that has it, inside a conversion that holds it throughout).
            unsafe {
                if _PyBytes_Resize(&mut self.obj, cap as _) != 0 {
                    // As `String` does on an allocation it cannot make (the object is
                    // already released).
                    self.obj = std::ptr::null_mut();
                    std::alloc::handle_alloc_error(
                        std::alloc::Layout::array::<u8>(cap)
                            .unwrap_or(std::alloc::Layout::new::<u8>()),
                    );
                }
                self.data = ffi::PyBytes_AS_STRING(self.obj).cast_mut().cast();
            }
            self.cap = cap;
        }
    }

    impl Drop for BytesOut {
        fn drop(&mut self) {
            if !self.obj.is_null() {
                // SAFETY: this holds the only reference, and the GIL (see above).
                unsafe { ffi::Py_DECREF(self.obj) };
            }
        }
    }

    impl Sink for BytesOut {
        #[inline(always)]
        fn len(&self) -> usize {
            self.len
        }
        #[inline(always)]
        fn reserve(&mut self, additional: usize) {
            if self.cap - self.len < additional {
                self.grow(additional);
            }
        }
        #[inline(always)]
        fn push_str(&mut self, s: &str) {
            self.reserve(s.len());
            // SAFETY: room for `s` was just made; `s` is whole characters.
            unsafe {
                std::ptr::copy_nonoverlapping(s.as_ptr(), self.data.add(self.len), s.len());
            }
            self.len += s.len();
        }
        #[inline(always)]
        fn push(&mut self, c: char) {
            if c.is_ascii() {
                self.reserve(1);
                // SAFETY: room for one byte was just made; an ASCII byte is a character.
                unsafe { *self.data.add(self.len) = c as u8 };
                self.len += 1;
            } else {
                self.push_str(c.encode_utf8(&mut [0; 4]));
            }
        }
        #[inline(always)]
        fn truncate(&mut self, len: usize) {
            if len < self.len {
                debug_assert!(self.as_str().is_char_boundary(len));
                self.len = len;
            }
        }
        #[inline(always)]
        fn as_str(&self) -> &str {
            // SAFETY: the first `len` bytes are written, whole characters (the writers'
            // contract, `set_len`'s).
            unsafe {
                std::str::from_utf8_unchecked(std::slice::from_raw_parts(self.data, self.len))
            }
        }
        #[inline(always)]
        fn as_mut_ptr(&mut self) -> *mut u8 {
            self.data
        }
        #[inline(always)]
        unsafe fn set_len(&mut self, len: usize) {
            debug_assert!(len <= self.cap);
            self.len = len;
        }
    }
}
