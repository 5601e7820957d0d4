//! Giving the memory of large bodies back to the system once pare is done with them.
//!
//! Why: an allocator keeps freed memory to reuse it, and gives it back only when later
//! allocations give it the chance. After four 52 MB bodies were shaped, `pare http` held
//! 892 MiB until the next busy moment, which on a quiet proxy is never. Giving back at once
//! on every free (mimalloc's `purge_delay = 0`) cost a fifth of the shaped requests a
//! second. So the door asks for it only after a large body, once things are quiet: a
//! second after the last large body was answered, the binary's `give_back` runs once.
//!
//! ```text
//! 52 MB body shaped, answered  →  1 s with no other large body  →  give_back()  (RSS 271 → ~50 MiB)
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// A body at least this large is followed by a give-back.
pub const LARGE: usize = 4 << 20;

/// How long after the last large body the give-back waits.
const QUIET: Duration = Duration::from_secs(1);

/// The binary's way to give memory back (the library does not know the allocator); cheap
/// to clone.
#[derive(Clone, Default)]
pub struct Release {
    give_back: Option<fn()>,
    /// A give-back is waiting.
    waiting: Arc<AtomicBool>,
    /// A large body was answered since the waiting give-back last looked.
    again: Arc<AtomicBool>,
}

impl Release {
    /// Run `give_back` (say, `mi_collect(true)`) once things are quiet after a large body.
    pub fn new(give_back: fn()) -> Release {
        Release {
            give_back: Some(give_back),
            ..Release::default()
        }
    }

    /// Nothing to run: the allocator gives memory back by itself.
    pub fn none() -> Release {
        Release::default()
    }

    /// A body of `bytes` is done with. Must be called inside a tokio runtime.
    pub fn after(&self, bytes: usize) {
        let Some(give_back) = self.give_back else {
            return;
        };
        if bytes < LARGE {
            return;
        }
        self.again.store(true, Ordering::SeqCst);
        if self.waiting.swap(true, Ordering::SeqCst) {
            return;
        }
        let (waiting, again) = (self.waiting.clone(), self.again.clone());
        tokio::spawn(async move {
            loop {
                // Until a whole quiet second passes with no other large body.
                while again.swap(false, Ordering::SeqCst) {
                    tokio::time::sleep(QUIET).await;
                }
                let _ = tokio::task::spawn_blocking(give_back).await;
                waiting.store(false, Ordering::SeqCst);
                // A large body that came while giving back found this one waiting and
                // left it to this one: wait for it too, unless another took over.
                if !again.load(Ordering::SeqCst) || waiting.swap(true, Ordering::SeqCst) {
                    break;
                }
            }
        });
    }
}
