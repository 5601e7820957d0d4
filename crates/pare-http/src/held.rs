//! A budget of memory for the bodies held at once for shaping, shared by every request:
//! each body is charged [`SHAPING_COST`] bytes per byte (what shaping it takes, measured).
//!
//! Why: a shaped body is held whole (read, decoded, parsed) before its first byte goes out,
//! and the per-body cap (`--max-shape-bytes`) bounds one body, not how many arrive at once:
//! four 52 MB bodies held 1 GB. With a budget, a body that would take pare over it is not
//! held: what was read goes on, then the rest as it comes, unshaped, and the response says
//! so (`X-Pare-Note`). pare never waits for room, so a burst of large bodies slows no one.
//!
//! ```text
//! budget 1 GiB, 160 MB of bodies held (800 MB charged), a 60 MB body arrives (300 MB)
//!   →  passed unshaped, X-Pare-Note says why
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// What holding a body to shape costs in memory, per byte of the body, at most: the text,
/// a parse tree and the shaped output at once. Measured on one 52 MB `list_entities` body
/// (`bench/http_rss.sh 1 52`): a policy the engine walks as a tree took `pare http` from 15
/// to 273 MiB, 5.0× the body; one it writes as it reads (the shipped S1 policy) to 167 MiB,
/// 2.9×. A body is charged the larger, so the budget bounds memory, not raw text.
pub const SHAPING_COST: usize = 5;

/// Bytes are counted in units of this many (a semaphore holds at most `u32::MAX` permits).
const UNIT: usize = 1024;

/// The budget; cheap to clone (one shared count).
#[derive(Debug, Clone)]
pub struct HeldBytes {
    free: Arc<Semaphore>,
    /// The budget in units ([`UNIT`]), and in bytes as given.
    units: usize,
    max: usize,
    /// How many bodies hold room now.
    holders: Arc<AtomicUsize>,
}

/// Room taken from a [`HeldBytes`], given back when dropped.
#[derive(Debug, Default)]
pub struct Held {
    /// Its units ([`UNIT`]) of the budget.
    permit: Option<OwnedSemaphorePermit>,
    /// The budget's count of holders, once this holds room.
    holders: Option<Arc<AtomicUsize>>,
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(h) = &self.holders {
            h.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl HeldBytes {
    /// A budget of `max` bytes (rounded up to whole KiB).
    pub fn new(max: usize) -> HeldBytes {
        let units = max.div_ceil(UNIT).clamp(1, u32::MAX as usize >> 1);
        HeldBytes {
            free: Arc::new(Semaphore::new(units)),
            units,
            max,
            holders: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// The budget, in bytes.
    pub fn max(&self) -> usize {
        self.max
    }

    /// Bodies holding room now.
    pub fn holders(&self) -> usize {
        self.holders.load(Ordering::Relaxed)
    }

    /// Bytes held now, across every request.
    pub fn in_use(&self) -> usize {
        (self.units - self.free.available_permits()) * UNIT
    }

    /// Make `held` cover a body of `body_bytes` in all, charged [`SHAPING_COST`] bytes per
    /// byte, if the budget has room; `false` (and `held` as it was) if not.
    pub fn hold_body(&self, held: &mut Held, body_bytes: usize) -> bool {
        self.grow(held, body_bytes.saturating_mul(SHAPING_COST))
    }

    /// Make `held` cover `bytes` in all, if the budget has room; `false` (and `held` as it
    /// was) if not.
    pub fn grow(&self, held: &mut Held, bytes: usize) -> bool {
        let have = held.permit.as_ref().map_or(0, |p| p.num_permits());
        let need = bytes.div_ceil(UNIT);
        if need <= have {
            return true;
        }
        let Ok(more) = u32::try_from(need - have) else {
            return false;
        };
        match self.free.clone().try_acquire_many_owned(more) {
            Ok(p) => {
                match &mut held.permit {
                    Some(permit) => permit.merge(p),
                    None => held.permit = Some(p),
                }
                if held.holders.is_none() {
                    self.holders.fetch_add(1, Ordering::Relaxed);
                    held.holders = Some(self.holders.clone());
                }
                true
            }
            Err(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_share_the_budget_and_give_it_back() {
        let budget = HeldBytes::new(10 * UNIT);
        let (mut a, mut b) = (Held::default(), Held::default());
        assert!(budget.grow(&mut a, 6 * UNIT));
        assert!(budget.grow(&mut a, 6 * UNIT + 1)); // one more unit
        assert!(!budget.grow(&mut b, 4 * UNIT));
        assert!(budget.grow(&mut b, 3 * UNIT));
        assert_eq!((budget.in_use(), budget.holders()), (10 * UNIT, 2));
        drop(a);
        assert_eq!((budget.in_use(), budget.holders()), (3 * UNIT, 1));
        assert!(budget.grow(&mut b, 9 * UNIT));
    }
}
