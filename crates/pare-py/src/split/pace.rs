//! Whether a helper thread pays, here and now: big conversions are timed with it and
//! without, and each goes the way that has been faster.
//!
//! Why: a second thread is not always a second core. On the project's 2-core VM the 1 MB
//! entities dict converts in 0.33–0.37 ms with the helper and 0.47–0.50 ms alone in some
//! hours, and in 0.60–0.79 ms with it and 0.47–0.54 ms alone in others (the host's other
//! tenants; `bench/python_ab.py`). A server whose other cores run other workers is in the
//! second case. Timing both ways, as the process goes, takes the faster: in six processes
//! of a slow hour, 0.59–0.66 ms against 0.60–0.79 ms always with the helper; in a fast one
//! the same medians (0.35 ms).
//!
//! How: the converter's nanoseconds per byte of text, an exponential average for each way
//! (a quarter of each new time, a time over twice the average taken as twice it). The
//! first big conversion takes the helper, the next goes alone, and from then on each goes
//! the faster way but every [`PROBE_EVERY`]th, which goes the other, so that a change (the
//! other core freed or taken) is seen. A probe costs the difference once in 32 conversions
//! (in a fast hour, about 2% of the mean time; the median does not move). Only a
//! conversion that ran to its end without Python code is timed (Python code stops the
//! helper); and not one that started the helper thread.
//!
//! ```text
//! with helper 0.70 ns/B, alone 0.52 ns/B  →  alone, but every 32nd with the helper
//! ```

/// Every this many big conversions, one goes the way that has been slower.
pub(super) const PROBE_EVERY: u32 = 32;

/// The two averages and how many big conversions asked.
pub(super) struct Pace {
    with_helper: Option<f64>,
    alone: Option<f64>,
    asked: u32,
}

impl Pace {
    pub(super) const fn new() -> Pace {
        Pace {
            with_helper: None,
            alone: None,
            asked: 0,
        }
    }

    /// Whether the next big conversion takes the helper (counting it as asked).
    pub(super) fn take_helper(&mut self) -> bool {
        let with = self.would_take_helper();
        self.asked = self.asked.wrapping_add(1);
        with
    }

    /// What [`Pace::take_helper`] would say, without counting.
    pub(super) fn would_take_helper(&self) -> bool {
        match (self.with_helper, self.alone) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(with), Some(alone)) => {
                let probe = self.asked.wrapping_add(1).is_multiple_of(PROBE_EVERY);
                (with <= alone) != probe
            }
        }
    }

    /// A big conversion's time per byte of its text, with the helper or alone.
    pub(super) fn record(&mut self, with_helper: bool, ns_per_byte: f64) {
        let average = match with_helper {
            true => &mut self.with_helper,
            false => &mut self.alone,
        };
        *average = Some(match *average {
            // A time over twice the average counts as twice it: one call the scheduler
            // held up (a millisecond where 0.3 ms is usual) had turned the choice for the
            // next 32 calls.
            Some(before) => before + (ns_per_byte.min(2.0 * before) - before) / 4.0,
            None => ns_per_byte,
        });
    }

    /// The two averages, in nanoseconds per byte (`None`: not timed yet).
    pub(super) fn averages(&self) -> (Option<f64>, Option<f64>) {
        (self.with_helper, self.alone)
    }
}
