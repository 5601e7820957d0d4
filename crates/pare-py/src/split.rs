//! Conversion on two threads: the second half of a big object's lists is written by a
//! helper thread while the converter ([`crate::dump`]) writes the rest, and the pieces are
//! joined in order, so the text is byte for byte what one thread writes.
//!
//! The helper's half is cut into chunks of about [`CHUNK_BYTES`], claimed in order by
//! whichever thread gets there first: the helper from the front, the converter when it
//! reaches a chunk no one has claimed yet (it writes it itself rather than wait). A helper
//! thread that starts late or is not scheduled costs the converter at most the chunk it
//! is writing: on the 1 MB entities dict, waiting for the helper's whole half had been
//! 50 µs of every 550.
//!
//! Why: a payload of a few hundred kilobytes or more is mostly one or two long lists
//! (`{"items": [...]}`), and writing it is reading CPython's structs and copying bytes, work
//! a second core can share. orjson writes on one thread.
//!
//! A second thread is not always a second core (a busy machine, or vCPUs that share one),
//! so a big conversion takes the helper only while that has been faster ([`pace`]).
//!
//! What keeps it sound. The caller holds the GIL for the whole conversion, and while the
//! helper runs the caller runs no Python code and changes no object but reference counts
//! (its own `Held` containers and key cache), which the helper never reads:
//!
//! - the helper only *reads*: exact `dict`/`list`/`tuple`/`str`/`int`/`float`, `None`,
//!   `True`, `False`, with a `str`'s UTF-8 read in place or encoded from its characters
//!   ([`crate::dump::write_str_reading_only`]); it makes no Python call that
//!   allocates, raises, or touches a thread state, and takes no references. Anything else
//!   (a subclass, a rich type, an `int` past 64 bits, NaN, a lone surrogate, too deep)
//!   gives up on that part, which the caller then writes itself, as it would have;
//! - before the caller does anything else (run Python code: a rich type, `default=`,
//!   pydantic; ask CPython for a `str`'s UTF-8; build an error) it stops the helper and
//!   waits for it ([`Dumper::quiesce`](crate::dump)), and writes every part not yet taken
//!   itself: Python code may change what the helper read;
//! - the conversion waits for the helper to be done with its job before it returns (its
//!   `Drop`), so no object it reads can be freed while it reads it. The helper thread is
//!   kept for the next conversion ([`HELPER_THREAD`]).
//!
//! Only in a per-version build with a GIL (`capi`'s reads; a free-threaded CPython lets
//! other threads change objects at any time).
//!
//! ```text
//! {"entities": [e0 … e398], "relationships": [r0 … r597]}
//!  caller: e0…e198, r0…r298          helper: e199…e398, r299…r597
//! ```

// Raw CPython reads from a second thread: each `unsafe` block says why it is sound.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};

use pyo3::ffi;

use crate::capi;
use crate::dump::omitting::Leaving;
use crate::dump::{KEY_BYTES, KeyCache, push_key, write_float, write_str_reading_only};

mod pace;

/// The helper is started only when its half is estimated at this many bytes or more: a
/// thread costs tens of microseconds to start, about what writing 64 KB takes.
const MIN_HELPER_BYTES: usize = 128 << 10;

/// The helper's half of a list is claimed in chunks of about this many bytes of text.
const CHUNK_BYTES: usize = 16 << 10;

/// A list shorter than this is not split.
const MIN_ITEMS: ffi::Py_ssize_t = 16;

/// The most members of a top-level dict looked at for lists to split.
const MAX_MEMBERS: usize = 64;

/// `list[from..to]`, written by the helper, of about `bytes` bytes.
#[derive(Clone, Copy)]
struct Part {
    list: *mut ffi::PyObject,
    from: ffi::Py_ssize_t,
    to: ffi::Py_ssize_t,
    bytes: usize,
}

/// The parts, moved to the helper thread.
struct Parts(Vec<Part>);

// SAFETY: the pointers are only read on the helper thread, under the rules in the module
// comment (the caller holds the GIL, runs no Python code and keeps the objects alive until
// the helper is done with them).
unsafe impl Send for Parts {}

/// A part's text, and what was left out of it when the text is written omitting.
type PartText = (String, Option<Box<Leaving>>);

/// What the two threads share.
#[derive(Default)]
struct Shared {
    /// How many parts have been claimed, by either thread: parts are claimed in order.
    claimed: AtomicUsize,
    /// The caller is about to do more than read: the helper stops at once.
    stop: AtomicBool,
}

/// A running helper: its parts in the order the caller meets them, and the texts of those
/// it claimed as they come (`None`: the helper gave up on that part).
pub struct Helper {
    parts: Vec<Part>,
    next: usize,
    /// The helper's texts, by part number, in the order it claimed them.
    texts: mpsc::Receiver<(usize, Option<PartText>)>,
    shared: Arc<Shared>,
    /// The caller writes a part no one has claimed instead of waiting for it (off only for
    /// tests that count the helper's parts: [`set_stealing`]).
    steals: bool,
    /// The list of the last part taken from the helper ([`parts_taken`] counts lists).
    last_list: *mut ffi::PyObject,
    /// Whether this conversion took the helper, and when it began: timed for [`PACE`]
    /// (`None`: not timed, as when it started the helper thread, which a conversion does once).
    timed: Option<(bool, std::time::Instant)>,
    /// The text's length when the conversion ran to its end without stopping the helper
    /// early ([`Helper::finished`]): only such a conversion's time says how fast its way is.
    bytes: Option<usize>,
}

/// Whether big conversions take the helper ([`pace`]). Conversions hold the GIL, so this
/// is never waited for.
static PACE: Mutex<pace::Pace> = Mutex::new(pace::Pace::new());

/// A conversion's work for the helper thread.
struct Job {
    parts: Parts,
    shared: Arc<Shared>,
    /// Dropped when the helper is done with the job: from then on it reads nothing of it.
    texts: mpsc::Sender<(usize, Option<PartText>)>,
    /// What the text leaves out, for the helper's parts to leave out too.
    leaving: Option<Leaving>,
    /// A delay before it starts, for the tests ([`set_stealing`]).
    late_ms: u64,
}

/// The helper thread: started by the first conversion that wants it and kept, because
/// starting a thread for each had cost the converter 33 µs of a 1 MB dict's 0.4 ms.
/// It is ended before a fork ([`end_helper_thread`], registered with `os.register_at_fork`);
/// a child forked some other way has no such thread (only the forking thread is copied)
/// and starts its own, as its process id says.
static HELPER_THREAD: Mutex<Option<HelperThread>> = Mutex::new(None);

struct HelperThread {
    /// The process that started it.
    pid: u32,
    jobs: mpsc::Sender<Job>,
    thread: std::thread::JoinHandle<()>,
}

/// End the helper thread and wait for it (a thread of another process, as a child sees
/// its parent's, is only forgotten). The next conversion that wants one starts another.
pub fn end_helper_thread() {
    let ended = lock(&HELPER_THREAD).take();
    if let Some(helper) = ended {
        if helper.pid == std::process::id() {
            drop(helper.jobs); // its queue ends, and so does it
            let _ = helper.thread.join();
        } else {
            std::mem::forget(helper);
        }
    }
}

/// Hand `job` to the helper thread (starting it if need be): `None` when no thread could
/// be started, and the caller writes everything; else whether a thread was started.
fn send(mut job: Job) -> Option<bool> {
    let mut helper = lock(&HELPER_THREAD);
    let pid = std::process::id();
    match helper.take() {
        Some(running) if running.pid == pid => match running.jobs.send(job) {
            Ok(()) => {
                *helper = Some(running);
                return Some(false);
            }
            // The thread is gone (a panic): start another.
            Err(mpsc::SendError(back)) => job = back,
        },
        // Another process's (this is a child it forked): not here to join or detach.
        Some(theirs) => std::mem::forget(theirs),
        None => {}
    }
    let (jobs, queue) = mpsc::channel::<Job>();
    let started = std::thread::Builder::new()
        .name("pare-convert".into())
        .spawn(move || {
            for job in queue {
                run(job);
            }
        });
    let Ok(thread) = started else {
        return None;
    };
    let sent = jobs.send(job).is_ok();
    *helper = Some(HelperThread { pid, jobs, thread });
    sent.then_some(true)
}

/// The helper's side of a job: claim parts in order and write them, until there are no
/// more or the caller says stop.
fn run(job: Job) {
    let Job {
        parts,
        shared,
        texts,
        leaving,
        late_ms,
    } = job;
    let stopped = &shared.stop;
    if late_ms > 0 {
        std::thread::sleep(std::time::Duration::from_millis(late_ms));
    }
    // Its own key cache, owning no references: no key is freed while it runs (and a new
    // one for each job: a key of an earlier one may be gone, its address reused).
    let mut keys = KeyCache::new();
    keys.next_text();
    loop {
        if stopped.load(Ordering::Relaxed) {
            return;
        }
        let n = shared.claimed.fetch_add(1, Ordering::AcqRel);
        let Some(part) = parts.0.get(n) else {
            return;
        };
        let mut out = String::with_capacity(part.bytes + part.bytes / 8);
        // What this part leaves out is counted on its own: it counts only if the caller
        // takes the part.
        let mut left = leaving.as_ref().map(Leaving::fork);
        let written = (keys.as_mut(), &mut out, left.as_mut());
        // SAFETY: the module comment's rules, kept by the caller until `texts` is dropped.
        let text = unsafe { write_part(*part, stopped, written) }
            .ok()
            .map(|()| (out, left.map(Box::new)));
        if texts.send((n, text)).is_err() {
            return;
        }
    }
}

impl Helper {
    /// Plan and start a helper for `root`, when it has lists long enough to be worth one
    /// (boxed: a small object's `None` comes back in a register, where a struct returned
    /// on the stack cost a small conversion a tenth of its time in store-forwarding stalls);
    /// `leaving`: what the text leaves out as it is written ([`crate::dump::omitting`]),
    /// which the helper leaves out of its parts too.
    ///
    /// SAFETY (callers): `root` is live, the GIL is held, and the caller keeps to the
    /// module comment's rules until the helper is dropped.
    pub unsafe fn start(
        root: *mut ffi::PyObject,
        leaving: Option<&Leaving>,
    ) -> Option<Box<Helper>> {
        if cfg!(any(Py_LIMITED_API, Py_GIL_DISABLED, Py_3_14, PyPy, GraalPy)) {
            return None;
        }
        // SAFETY: per the caller; planning only reads.
        let parts = unsafe { plan(root, leaving) }?;
        let (steals, late_ms, paced) = STEALS.with(std::cell::Cell::get);
        let began = std::time::Instant::now();
        let (parts, texts, shared, timed) = if paced && !lock(&PACE).take_helper() {
            // Alone this time: no parts, and a queue no one sends on (nothing to wait for);
            // only timed.
            let (_, texts) = mpsc::channel();
            (Vec::new(), texts, Arc::default(), Some((false, began)))
        } else {
            let shared = Arc::new(Shared::default());
            let (tx, texts) = mpsc::channel();
            let job = Job {
                parts: Parts(parts.clone()),
                shared: Arc::clone(&shared),
                texts: tx,
                leaving: leaving.map(Leaving::fork),
                late_ms,
            };
            let started_thread = send(job)?;
            let timed = (paced && !started_thread).then_some((true, began));
            (parts, texts, shared, timed)
        };
        Some(Box::new(Helper {
            parts,
            next: 0,
            texts,
            shared,
            steals,
            last_list: std::ptr::null_mut(),
            timed,
            bytes: None,
        }))
    }

    /// The conversion ran to its end, writing `bytes` bytes, without stopping the helper
    /// early: its time counts for [`PACE`] (taken when the helper is dropped, after the
    /// wait for it).
    pub fn finished(&mut self, bytes: usize) {
        self.bytes = Some(bytes);
    }

    /// The helper's text for `list[i..]`, where it ends, and what it left out, when
    /// `list[i..]` is the next part, the helper claimed it and its text is ready (waited for
    /// only with stealing off); `None` otherwise: the caller writes it.
    ///
    /// Asked at every item of every list the caller writes: the answer is almost always no,
    /// and that is decided inline.
    #[inline(always)]
    pub fn take(
        &mut self,
        list: *mut ffi::PyObject,
        i: ffi::Py_ssize_t,
    ) -> Option<(String, ffi::Py_ssize_t, Option<Box<Leaving>>)> {
        let part = self.parts.get(self.next)?;
        if part.list != list || part.from != i {
            return None;
        }
        self.take_next()
    }

    /// The next part: the helper's text when it claimed the part and the text is ready
    /// (waited for with stealing off); `None` when the caller writes it.
    #[cold]
    fn take_next(&mut self) -> Option<(String, ffi::Py_ssize_t, Option<Box<Leaving>>)> {
        let n = self.next;
        let part = self.parts[n];
        self.next += 1;
        // Every part before `n` was claimed (by the caller, or by the helper and taken
        // from it), so `claimed` is `n` unless the helper claimed this one too.
        if self.steals
            && (self.shared.claimed)
                .compare_exchange(n, n + 1, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            return None;
        }
        // The helper claimed it. Its texts come in the order it claimed them: any before
        // this one are of parts written here while the helper was still at them. Unless
        // told to wait, this part is written here too when its text is not ready: a
        // helper descheduled mid-part (a busy or stolen core) had held the caller up for
        // 0.2 ms of a 0.6 ms conversion.
        let (text, leaving) = loop {
            let (index, text) = match self.steals {
                true => self.texts.try_recv().ok()?,
                false => self.texts.recv().ok()?,
            };
            if index == n {
                break text?;
            }
        };
        if part.list != self.last_list {
            self.last_list = part.list;
            TAKEN.with(|n| n.set(n.get() + 1));
        }
        Some((text, part.to, leaving))
    }
}

thread_local! {
    /// Lists of which a helper wrote a part on this thread, for the tests
    /// (`pare._pare._helper_parts`).
    static TAKEN: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// Whether this thread's conversions write unclaimed parts themselves, how long their
    /// helpers wait before they start, and whether [`PACE`] decides if they take one
    /// ([`set_stealing`]).
    static STEALS: std::cell::Cell<(bool, u64, bool)> =
        const { std::cell::Cell::new((true, 0, true)) };
}

/// How many lists this thread's conversions took a helper's part of since the last call.
pub fn parts_taken() -> u64 {
    TAKEN.with(|n| n.replace(0))
}

/// For the tests, on this thread: whether a conversion writes a part no one has claimed
/// itself (the default) or always waits for the helper's, which makes [`parts_taken`]
/// exact; a delay before each helper starts, in milliseconds (0), which makes the caller
/// claim every part; and whether a big conversion takes the helper only when that has been
/// faster ([`pace`], the default) or always. Gives the settings before.
pub fn set_stealing(steals: bool, late_ms: u64, paced: bool) -> (bool, u64, bool) {
    STEALS.with(|s| s.replace((steals, late_ms, paced)))
}

/// The averages [`PACE`] goes by, in nanoseconds per byte (with the helper, alone; `None`
/// until timed), and whether the next big conversion takes the helper; for the tests,
/// `reset` forgets them first and `record` then counts a time as a conversion's.
pub fn pace(reset: bool, record: Option<(bool, f64)>) -> (Option<f64>, Option<f64>, bool) {
    let mut pace = lock(&PACE);
    if reset {
        *pace = pace::Pace::new();
    }
    if let Some((with_helper, ns_per_byte)) = record {
        pace.record(with_helper, ns_per_byte);
    }
    let (with, alone) = pace.averages();
    (with, alone, pace.would_take_helper())
}

/// `m` locked; a panic elsewhere while it was held leaves nothing here half-done.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Drop for Helper {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        // The helper drops the job's sender when it is done with it (or if it panicked,
        // which it cannot on our data: it writes into its own strings); until then it may
        // read the objects, which must outlive that.
        while self.texts.recv().is_ok() {}
        if let (Some((with_helper, began)), Some(bytes)) = (self.timed, self.bytes)
            && bytes > 0
        {
            let ns = began.elapsed().as_nanos() as f64;
            lock(&PACE).record(with_helper, ns / bytes as f64);
        }
    }
}

/// The parts worth a helper: the second half of the root list, or of each list that is a
/// member of the root dict (not one that `leaving` drops: the caller writes that whole,
/// leaving nothing out of it); `None` when their estimated text is small.
///
/// SAFETY (callers): `root` is live and the GIL is held.
unsafe fn plan(root: *mut ffi::PyObject, leaving: Option<&Leaving>) -> Option<Vec<Part>> {
    // Made only for a list long enough to sample: a small object pays nothing here.
    let mut keys: Option<Box<KeyCache>> = None;
    let mut lists = Vec::new();
    // SAFETY: reads of live objects under the GIL; `dict_next` hands out borrowed
    // references the root dict keeps alive.
    unsafe {
        let ty = ffi::Py_TYPE(root);
        // Only long lists are kept, so a small object allocates nothing here.
        if ty == &raw mut ffi::PyList_Type && capi::list_len(root) >= MIN_ITEMS {
            lists.push(root);
        } else if ty == &raw mut ffi::PyDict_Type {
            let mut pos: ffi::Py_ssize_t = 0;
            let mut key = std::ptr::null_mut();
            let mut value = std::ptr::null_mut();
            while lists.len() < MAX_MEMBERS && capi::dict_next(root, &mut pos, &mut key, &mut value)
            {
                if ffi::Py_TYPE(value) == &raw mut ffi::PyList_Type
                    && capi::list_len(value) >= MIN_ITEMS
                    && leaving.is_none_or(|l| kept_by_key(l, key))
                {
                    lists.push(value);
                }
            }
        }
    }
    let mut parts = Vec::new();
    let mut estimate = 0usize;
    let mut sample = String::new();
    for list in lists {
        // SAFETY: a live list (above).
        let len = unsafe { capi::list_len(list) };
        if len < MIN_ITEMS {
            continue;
        }
        let from = len / 2;
        // One item from the helper's half, written, stands for all of them.
        sample.clear();
        // SAFETY: as above; `from` is in range.
        let item = unsafe { capi::list_item(list, from) };
        let mut left = leaving.map(Leaving::fork);
        let written = (
            keys.get_or_insert_with(KeyCache::new).as_mut(),
            &mut sample,
            left.as_mut(),
        );
        if unsafe { write_item(item, written) }.is_err() {
            continue;
        }
        let item_bytes = sample.len() + 1;
        estimate += item_bytes * (len - from) as usize;
        let per_chunk = (CHUNK_BYTES / item_bytes).max(1) as ffi::Py_ssize_t;
        let mut at = from;
        while at < len {
            let to = (at + per_chunk).min(len);
            parts.push(Part {
                list,
                from: at,
                to,
                bytes: item_bytes * (to - at) as usize,
            });
            at = to;
        }
    }
    (estimate >= MIN_HELPER_BYTES).then_some(parts)
}

/// Whether the key `key` of a root member keeps it (a member it drops is written whole).
///
/// SAFETY (callers): `key` is a live key of the root dict; the GIL is held.
unsafe fn kept_by_key(leaving: &Leaving, key: *mut ffi::PyObject) -> bool {
    let mut quoted = String::new();
    // SAFETY: per the caller.
    let readable = unsafe {
        ffi::Py_TYPE(key) == &raw mut ffi::PyUnicode_Type
            && write_str_reading_only(key, &mut quoted)
    };
    readable && leaving.mark(None, &quoted).keeps()
}

/// The helper gave up (the caller writes this part).
struct GaveUp;

/// Where a value is written: the key cache, the text, and what the text leaves out (`None`
/// when it leaves nothing out, and inside a member it drops).
type Writing<'w> = (&'w mut KeyCache, &'w mut String, Option<&'w mut Leaving>);

/// `part`'s items, separated by commas.
///
/// SAFETY (callers): the module comment's rules.
unsafe fn write_part(part: Part, stop: &AtomicBool, w: Writing) -> Result<(), GaveUp> {
    let (keys, out, mut leaving) = w;
    for i in part.from..part.to {
        // Asked to stop (the caller is about to run Python code): at once, not at the end
        // of the part, which the caller waits for.
        if stop.load(Ordering::Relaxed) {
            return Err(GaveUp);
        }
        if i > part.from {
            out.push(',');
        }
        // SAFETY: the list cannot change while the helper runs; `i` is in range.
        let item = unsafe { capi::list_item(part.list, i) };
        unsafe { write_item(item, (&mut *keys, &mut *out, leaving.as_deref_mut())) }?;
    }
    Ok(())
}

/// `obj` as the converter writes it, for the types the helper reads; [`GaveUp`] for any
/// other.
///
/// SAFETY (callers): the module comment's rules (or the calling thread holds the GIL).
/// An item of a part (a list's item, under the root), with the writer that leaves out when
/// the text does.
///
/// SAFETY (callers): as [`write_value`]'s.
unsafe fn write_item(item: *mut ffi::PyObject, w: Writing) -> Result<(), GaveUp> {
    // SAFETY: per the caller.
    match w.2.is_some() {
        true => unsafe { write_value::<true>(item, 1, w) },
        false => unsafe { write_value::<false>(item, 1, w) },
    }
}

/// `OMIT`: the text leaves out (the code that does is there only then).
unsafe fn write_value<const OMIT: bool>(
    obj: *mut ffi::PyObject,
    depth: usize,
    w: Writing,
) -> Result<(), GaveUp> {
    let (keys, out, mut leaving) = w;
    if depth >= pare::json::MAX_DEPTH {
        return Err(GaveUp);
    }
    // SAFETY: reads of live objects, per the caller; the type objects are CPython's
    // statics; exact `int`s convert without raising or calling Python code.
    unsafe {
        let ty = ffi::Py_TYPE(obj);
        if ty == &raw mut ffi::PyUnicode_Type {
            write_str(obj, out)
        } else if ty == &raw mut ffi::PyDict_Type {
            out.push('{');
            let mut pos: ffi::Py_ssize_t = 0;
            let mut key = std::ptr::null_mut();
            let mut value = std::ptr::null_mut();
            let mut kept = 0usize;
            while capi::dict_next(obj, &mut pos, &mut key, &mut value) {
                let member = out.len();
                if kept > 0 {
                    out.push(',');
                }
                let key_at = out.len();
                write_key(key, keys, out)?;
                let Some(leaving) = leaving.as_deref_mut().filter(|_| OMIT) else {
                    // `null` and an exact `str`, the commonest values, without a call.
                    if value == ffi::Py_None() {
                        out.push_str("null");
                    } else if ffi::Py_TYPE(value) != &raw mut ffi::PyUnicode_Type
                        || !write_str_reading_only(value, out)
                    {
                        write_value::<OMIT>(value, depth + 1, (&mut *keys, &mut *out, None))?;
                    }
                    kept += 1;
                    continue;
                };
                // As the caller does it (`Dumper::member_omitting`).
                let value_at = out.len();
                let mark = leaving.mark(Some((&mut *keys, key)), &out[key_at..value_at - 1]);
                let inner = mark.keeps().then_some(&mut *leaving);
                write_value::<OMIT>(value, depth + 1, (&mut *keys, &mut *out, inner))?;
                if leaving.settle(mark, &out[key_at..value_at - 1], &out[value_at..]) {
                    kept += 1;
                } else {
                    out.truncate(member);
                }
            }
            out.push('}');
            Ok(())
        } else if ty == &raw mut ffi::PyList_Type {
            write_items::<OMIT>(
                capi::list_len(obj),
                |i| capi::list_item(obj, i),
                depth,
                (keys, out, leaving),
            )
        } else if obj == ffi::Py_None() {
            out.push_str("null");
            Ok(())
        } else if obj == ffi::Py_True() {
            out.push_str("true");
            Ok(())
        } else if obj == ffi::Py_False() {
            out.push_str("false");
            Ok(())
        } else if ty == &raw mut ffi::PyLong_Type {
            let mut overflow = 0;
            let n = ffi::PyLong_AsLongLongAndOverflow(obj, &mut overflow);
            if overflow != 0 {
                return Err(GaveUp);
            }
            out.push_str(itoa::Buffer::new().format(n));
            Ok(())
        } else if ty == &raw mut ffi::PyFloat_Type {
            let x = capi::float_value(obj);
            if !x.is_finite() {
                return Err(GaveUp);
            }
            write_float(x, out);
            Ok(())
        } else if ty == &raw mut ffi::PyTuple_Type {
            write_items::<OMIT>(
                capi::tuple_len(obj),
                |i| capi::tuple_item(obj, i),
                depth,
                (keys, out, leaving),
            )
        } else {
            Err(GaveUp)
        }
    }
}

/// SAFETY (callers): as [`write_value`]'s, with `item(i)` live for `i < len`.
unsafe fn write_items<const OMIT: bool>(
    len: ffi::Py_ssize_t,
    item: impl Fn(ffi::Py_ssize_t) -> *mut ffi::PyObject,
    depth: usize,
    w: Writing,
) -> Result<(), GaveUp> {
    let (keys, out, mut leaving) = w;
    out.push('[');
    for i in 0..len {
        if i > 0 {
            out.push(',');
        }
        // SAFETY: per the caller.
        let w = (&mut *keys, &mut *out, leaving.as_deref_mut());
        unsafe { write_value::<OMIT>(item(i), depth + 1, w) }?;
    }
    out.push(']');
    Ok(())
}

/// A member's key and its colon, from `keys` when this key object was written before.
///
/// SAFETY (callers): `key` is a live key of a dict being read, per the module comment's rules.
#[inline(always)]
unsafe fn write_key(
    key: *mut ffi::PyObject,
    keys: &mut KeyCache,
    out: &mut String,
) -> Result<(), GaveUp> {
    let slot = &keys.slots[KeyCache::slot(key)];
    if slot.key == key {
        push_key(out, slot);
        return Ok(());
    }
    // SAFETY: per the caller.
    if unsafe { ffi::Py_TYPE(key) } != &raw mut ffi::PyUnicode_Type {
        return Err(GaveUp);
    }
    let start = out.len();
    unsafe { write_str(key, out) }?;
    out.push(':');
    let written = &out.as_bytes()[start..];
    if written.len() <= KEY_BYTES {
        keys.remember(key, written);
    }
    Ok(())
}

/// SAFETY (callers): `obj` is a live `str`, per the module comment's rules.
unsafe fn write_str(obj: *mut ffi::PyObject, out: &mut String) -> Result<(), GaveUp> {
    // SAFETY: per the caller.
    match unsafe { write_str_reading_only(obj, out) } {
        true => Ok(()),
        false => Err(GaveUp),
    }
}
