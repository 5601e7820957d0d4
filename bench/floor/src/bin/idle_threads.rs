//! `idle_threads [BUSY_US]`: what starting and joining helper threads that never get work
//! costs a short process, the situation of a report's counting helpers on a short input.
//!
//! Starts `IDLE_THREADS` (0, 1 or 2; 0 unless set) scoped threads that wait on a condition
//! variable, keeps the main thread busy for BUSY_US microseconds (300 unless given), then
//! wakes and joins them. Prints the microseconds that took, in process; time the whole
//! process with `bench/process_ab.py`, which sets the variable per side:
//!
//! ```text
//! python3 bench/process_ab.py 100 IDLE_THREADS=0@bench/floor/target/release/idle_threads \
//!     IDLE_THREADS=1@bench/floor/target/release/idle_threads \
//!     IDLE_THREADS=2@bench/floor/target/release/idle_threads -- 300
//! ```
//!
//! Why: on this project's 2-vCPU VM two idle helpers added about 0.1 ms to a whole process
//! (1.23 → 1.33 ms, 100 rounds alternated; one helper 1.24 ms). In `pare compact --report`
//! two helpers cost 0.3–0.4 ms even with every count skipped (they also bring in the rank
//! table and take parts from the pool), which is why `CountPool::helpers` starts none for
//! an input under `HELP_FROM_BYTES`.

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

fn main() {
    let threads: usize = std::env::var("IDLE_THREADS")
        .ok()
        .map(|n| n.parse().expect("IDLE_THREADS is 0, 1 or 2"))
        .unwrap_or(0);
    let busy = Duration::from_micros(
        std::env::args()
            .nth(1)
            .map(|n| n.parse().expect("BUSY_US is a number"))
            .unwrap_or(300),
    );
    let woken = Mutex::new(false);
    let changed = Condvar::new();
    let began = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut done = woken.lock().expect("not poisoned");
                while !*done {
                    done = changed.wait(done).expect("not poisoned");
                }
            });
        }
        // Busy, as the main thread is while it writes a report's texts.
        let mut spins = 0u64;
        while began.elapsed() < busy {
            spins = std::hint::black_box(spins.wrapping_add(1));
        }
        *woken.lock().expect("not poisoned") = true;
        changed.notify_all();
    });
    println!("{}", began.elapsed().as_micros());
}
