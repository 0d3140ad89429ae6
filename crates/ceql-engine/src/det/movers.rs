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

use super::{ClassId, DetCache, DetId};

/// Largest number of det-states for which masks are kept (one bit each).
pub const MAX_MASKED_STATES: usize = 64;

/// Per class: the mask and how many det-states it covers, side by side, so that
/// the lookup on every event is one bounds check and one cache line.
#[derive(Default)]
pub struct MoverMasks {
    per_class: Vec<(u64, u32)>,
}

impl MoverMasks {
    /// Forgets every mask (det-states and classes were renumbered).
    pub fn clear(&mut self) {
        self.per_class.clear();
    }
}

impl DetCache {
    /// Bit `d` is set when det-state `d` accepts, or when on `class` it marks, moves
    /// or dies; a clear bit means the det-state stays put without marking. `None`
    /// when the cache holds more than [`MAX_MASKED_STATES`] det-states or is uncached.
    #[inline]
    pub fn mover_mask(&mut self, class: ClassId) -> Option<u64> {
        let c = class.index();
        match self.movers.per_class.get(c) {
            Some(&(mask, covered)) if covered as usize == self.finals.len() => Some(mask),
            _ => self.extend_mover_mask(c),
        }
    }

    #[cold]
    fn extend_mover_mask(&mut self, c: usize) -> Option<u64> {
        if self.stats.uncached {
            return None;
        }
        if c >= self.movers.per_class.len() {
            self.movers.per_class.resize(c + 1, (0, 0));
        }
        // Computing a transition can intern new det-states: loop until covered.
        while (self.movers.per_class[c].1 as usize) < self.finals.len() {
            if self.finals.len() > MAX_MASKED_STATES {
                return None;
            }
            let i = self.movers.per_class[c].1 as usize;
            let d = DetId::from_index(i);
            let s = self.step(d, ClassId::from_index(c));
            if self.is_final(d) || s.has_marked() || s.unmarked() != d || !s.unmarked_other().is_dead() {
                self.movers.per_class[c].0 |= 1 << i;
            }
            self.movers.per_class[c].1 += 1;
        }
        Some(self.movers.per_class[c].0)
    }
}
