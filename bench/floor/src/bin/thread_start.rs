//! `thread_start [TRIALS [REST_US]]`: how long a new thread takes to start running while the
//! thread that spawned it keeps its core busy, the situation of `pare compact --report`'s
//! counting helpers (spawned while the main thread writes the report's texts).
//!
//! Each trial spawns one thread and spins until that thread stores the time it began, then
//! rests REST_US microseconds (2,000 unless given) so the other core can go idle again.
//! Prints the start latencies' quantiles, how many trials waited over a millisecond, and
//! the kernel's `sched*` boot options.
//!
//! Why: on this project's 2-vCPU VM a thread spawned after the second core idled for 2 ms
//! waited about 1.9 ms for a core (its kernel packs threads onto one vCPU,
//! `sched_vcpu_pack=`, and balances on a 4 ms tick), which is why `docs/python.md` reads
//! the report's helpers as late as it does. `thread_start 100 0` (no rest) shows the same
//! machine starting most within tens of microseconds when the second core was busy a
//! moment before.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

fn main() {
    let trials: usize = std::env::args()
        .nth(1)
        .map(|n| n.parse().expect("TRIALS is a number"))
        .unwrap_or(200);
    let rest = Duration::from_micros(
        std::env::args()
            .nth(2)
            .map(|n| n.parse().expect("REST_US is a number"))
            .unwrap_or(2000),
    );
    let epoch = Instant::now();
    let mut waits = Vec::with_capacity(trials);
    for _ in 0..trials {
        let began = AtomicU64::new(0);
        std::thread::scope(|scope| {
            let spawned = epoch.elapsed().as_nanos() as u64;
            scope.spawn(|| began.store(epoch.elapsed().as_nanos() as u64, Ordering::Release));
            // Busy, as the main thread is while it writes the report's texts.
            while began.load(Ordering::Acquire) == 0 {
                std::hint::spin_loop();
            }
            waits.push(began.load(Ordering::Acquire) - spawned);
        });
        std::thread::sleep(rest);
    }
    waits.sort_unstable();
    let at = |q: f64| waits[((waits.len() - 1) as f64 * q) as usize] as f64 / 1e3;
    let late = waits.iter().filter(|&&w| w > 1_000_000).count();
    println!(
        "{trials} thread starts, µs: p10 {:.0}  p50 {:.0}  p75 {:.0}  p90 {:.0}  max {:.0}; over 1 ms: {late} ({:.0}%)",
        at(0.1),
        at(0.5),
        at(0.75),
        at(0.9),
        at(1.0),
        100.0 * late as f64 / trials as f64
    );
    let cmdline = std::fs::read_to_string("/proc/cmdline").unwrap_or_default();
    let sched: Vec<&str> = cmdline
        .split_whitespace()
        .filter(|w| w.starts_with("sched"))
        .collect();
    println!(
        "kernel sched options: {}",
        if sched.is_empty() {
            "none".into()
        } else {
            sched.join(" ")
        }
    );
}
