//! Mover masks: for each class, the det-states that do anything on it other than
//! stay where they are without marking. Most classes leave most det-states in
//! place (noise, and the types of the other steps of a sequence), so the
//! evaluator can find the few entries of `T` that an event affects by testing one
//! bit per entry instead of looking up every entry's transition.
//!
//! The masks are kept for caches of at most 64 det-states. They are extended
//! lazily: a class's mask covers the det-states interned before it was last
//! asked for, and new ones are checked (and their transitions computed) on the
//! next request. A cache clear renumbers det-states and classes, so it drops them.

use super::{ClassId, DetCache, DEAD};

/// Largest number of det-states for which masks are kept (one bit each).
pub const MAX_MASKED_STATES: usize = 64;

/// Per class: the mask and how many det-states it covers.
#[derive(Default)]
pub struct MoverMasks {
    mask: Vec<u64>,
    covered: Vec<u32>,
}

impl MoverMasks {
    /// Forgets every mask (det-states and classes were renumbered).
    pub fn clear(&mut self) {
        self.mask.clear();
        self.covered.clear();
    }
}

impl DetCache {
    /// Bit `d` is set when det-state `d` accepts, or when on `class` it marks, moves
    /// or dies; a clear bit means the det-state stays put without marking. `None`
    /// when the cache holds more than [`MAX_MASKED_STATES`] det-states or is uncached.
    #[inline]
    pub fn mover_mask(&mut self, class: ClassId) -> Option<u64> {
        let c = class as usize;
        if c < self.movers.covered.len() && self.movers.covered[c] as usize == self.finals.len() {
            return Some(self.movers.mask[c]);
        }
        self.extend_mover_mask(c)
    }

    #[cold]
    fn extend_mover_mask(&mut self, c: usize) -> Option<u64> {
        if self.stats.uncached {
            return None;
        }
        if c >= self.movers.covered.len() {
            self.movers.mask.resize(c + 1, 0);
            self.movers.covered.resize(c + 1, 0);
        }
        // Computing a transition can intern new det-states: loop until covered.
        while (self.movers.covered[c] as usize) < self.finals.len() {
            if self.finals.len() > MAX_MASKED_STATES {
                return None;
            }
            let d = self.movers.covered[c];
            let s = self.step(d, c as ClassId);
            if self.is_final(d) || s[0] != DEAD || s[1] != d || s[2] != DEAD {
                self.movers.mask[c] |= 1 << d;
            }
            self.movers.covered[c] += 1;
        }
        Some(self.movers.mask[c])
    }
}
