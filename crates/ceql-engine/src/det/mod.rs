//! Lazy I/O-determinization with a bounded cache (reference §5.6), after the lazy
//! DFA of regex-automata: det-states are interned sets of CEA states, successors
//! are computed on demand and memoised in dense per-state rows indexed by class,
//! and when the cache outgrows its budget it is cleared and rebuilt from the
//! det-states that are still in use.
//!
//! `δ(P, c) = (P•, P∘)`: the states reached from `P` on class `c` by marking and by
//! non-marking transitions. From a det-state an event therefore has at most one
//! marking and one non-marking successor, which is what makes the tECS
//! duplicate-free.

mod classes;

pub use classes::{ClassId, ClassTable, OTHER_TYPE};

use crate::bitset;
use crate::cea::Cea;
use crate::schema::TypeId;
use std::collections::HashMap;
use std::sync::Arc;

/// Id of an interned det-state. Id 0 is always the initial det-state `{q0}`.
pub type DetId = u32;
/// No successor (the empty set).
pub const DEAD: DetId = u32::MAX;
/// The initial det-state `{q0}`.
pub const INITIAL: DetId = 0;

const UNKNOWN: u64 = u64::MAX - 1;

#[inline]
fn pack(marked: DetId, unmarked: DetId) -> u64 {
    (marked as u64) << 32 | unmarked as u64
}

#[inline]
fn unpack(t: u64) -> (DetId, DetId) {
    ((t >> 32) as DetId, t as DetId)
}

/// Budget and thrashing guard of the cache (reference §5.6 defaults).
#[derive(Clone, Copy, Debug)]
pub struct CacheConfig {
    /// Bytes for interned sets, classes and transition rows.
    pub max_cache_bytes: usize,
    /// Number of det-states.
    pub max_det_states: usize,
    /// Clears tolerated within a short span before switching to uncached mode.
    pub max_clears: u32,
    /// "Short span" is fewer than `min_events_per_state × max_det_states` events.
    pub min_events_per_state: u64,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig { max_cache_bytes: 64 << 20, max_det_states: 4096, max_clears: 8, min_events_per_state: 10 }
    }
}

/// Counters exposed in the query statistics.
#[derive(Clone, Copy, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct CacheStats {
    /// Det-states interned since the start (over all clears).
    pub det_states_created: u64,
    /// Transition lookups answered from the cache.
    pub hits: u64,
    /// Transition lookups that computed `δ`.
    pub misses: u64,
    /// Cache clears.
    pub clears: u64,
    /// True once the thrashing guard switched to uncached mode.
    pub uncached: bool,
}

/// The lazily determinized automaton of one query evaluation, shared by all its
/// partitions.
pub struct DetCache {
    cea: Arc<Cea>,
    config: CacheConfig,
    /// Words per state set.
    words: usize,
    /// Interned sets, `words` words each, indexed by det id.
    sets: Vec<u64>,
    finals: Vec<bool>,
    index: HashMap<Box<[u64]>, DetId, foldhash::fast::RandomState>,
    /// Classes of the events seen since the last clear.
    pub classes: ClassTable,
    /// Transition rows: `trans[det * stride + class]`.
    trans: Vec<u64>,
    stride: usize,
    stats: CacheStats,
    clear_threshold: usize,
    state_threshold: usize,
    clears_in_burst: u32,
    burst_start_event: u64,
    scratch_marked: Vec<u64>,
    scratch_unmarked: Vec<u64>,
}

impl DetCache {
    /// A cache for `cea`, whose types have `preds_per_type[t]` predicates.
    pub fn new(cea: Arc<Cea>, preds_per_type: &[usize], config: CacheConfig) -> Self {
        let words = bitset::words_for(cea.num_states);
        let mut cache = DetCache {
            words,
            sets: Vec::new(),
            finals: Vec::new(),
            index: HashMap::default(),
            classes: ClassTable::new(preds_per_type),
            trans: Vec::new(),
            stride: 8,
            stats: CacheStats::default(),
            clear_threshold: config.max_cache_bytes,
            state_threshold: config.max_det_states,
            clears_in_burst: 0,
            burst_start_event: 0,
            scratch_marked: vec![0; words],
            scratch_unmarked: vec![0; words],
            config,
            cea,
        };
        cache.intern_initial();
        cache
    }

    fn intern_initial(&mut self) {
        let mut q0 = vec![0u64; self.words];
        bitset::set(&mut q0, 0);
        let id = self.intern(&q0);
        debug_assert_eq!(id, INITIAL);
    }

    /// The automaton being determinized.
    pub fn cea(&self) -> &Cea {
        &self.cea
    }

    /// Whether det-state `d` contains a final state.
    #[inline]
    pub fn is_final(&self, d: DetId) -> bool {
        self.finals[d as usize]
    }

    /// The CEA states of det-state `d`.
    pub fn states(&self, d: DetId) -> &[u64] {
        &self.sets[d as usize * self.words..(d as usize + 1) * self.words]
    }

    /// Number of interned det-states.
    pub fn num_states(&self) -> usize {
        self.finals.len()
    }

    /// Counters.
    pub fn stats(&self) -> CacheStats {
        self.stats
    }

    /// The class id of an event of type `ty` with predicate bits `bits`.
    #[inline]
    pub fn class_of(&mut self, ty: TypeId, bits: &[u64]) -> ClassId {
        let (c, new) = self.classes.intern(ty, bits);
        if new && c as usize >= self.stride {
            self.grow_stride();
        }
        c
    }

    /// `δ(det, class)` as (marking successor, non-marking successor), [`DEAD`] for none.
    #[inline]
    pub fn step(&mut self, det: DetId, class: ClassId) -> (DetId, DetId) {
        if !self.stats.uncached {
            let t = self.trans[det as usize * self.stride + class as usize];
            if t != UNKNOWN {
                self.stats.hits += 1;
                return unpack(t);
            }
        }
        self.step_slow(det, class)
    }

    #[cold]
    fn step_slow(&mut self, det: DetId, class: ClassId) -> (DetId, DetId) {
        self.stats.misses += 1;
        let (ty, bits) = self.classes.get(class);
        let (m, u) = (&mut self.scratch_marked, &mut self.scratch_unmarked);
        m.iter_mut().for_each(|w| *w = 0);
        u.iter_mut().for_each(|w| *w = 0);
        let set = &self.sets[det as usize * self.words..(det as usize + 1) * self.words];
        for p in bitset::iter(set) {
            for tr in &self.cea.out[p] {
                if self.cea.guards[tr.guard as usize].matches(ty, bits) {
                    let target = if tr.marked { &mut *m } else { &mut *u };
                    bitset::set(target, tr.target as usize);
                }
            }
        }
        let m = std::mem::take(&mut self.scratch_marked);
        let u = std::mem::take(&mut self.scratch_unmarked);
        let md = if bitset::is_empty(&m) { DEAD } else { self.intern(&m) };
        let ud = if bitset::is_empty(&u) { DEAD } else { self.intern(&u) };
        self.scratch_marked = m;
        self.scratch_unmarked = u;
        if !self.stats.uncached {
            self.trans[det as usize * self.stride + class as usize] = pack(md, ud);
        }
        (md, ud)
    }

    /// Interns a det-state given as automaton-state words (snapshot restore).
    pub fn intern_states(&mut self, set: &[u64]) -> DetId {
        assert_eq!(set.len(), self.words, "state set width");
        self.intern(set)
    }

    /// Restores counters from a snapshot.
    pub fn restore_stats(&mut self, stats: CacheStats) {
        let uncached = self.stats.uncached;
        self.stats = CacheStats { uncached, ..stats };
    }

    fn intern(&mut self, set: &[u64]) -> DetId {
        if let Some(&d) = self.index.get(set) {
            return d;
        }
        let id = self.finals.len() as DetId;
        self.sets.extend_from_slice(set);
        self.finals.push(bitset::iter(set).any(|q| self.cea.finals[q]));
        self.index.insert(Box::from(set), id);
        if !self.stats.uncached {
            self.trans.resize(self.trans.len() + self.stride, UNKNOWN);
        }
        self.stats.det_states_created += 1;
        id
    }

    fn grow_stride(&mut self) {
        let old = self.stride;
        let new = (old * 2).max(self.classes.len().next_power_of_two());
        if !self.stats.uncached {
            let mut trans = vec![UNKNOWN; self.num_states() * new];
            for d in 0..self.num_states() {
                trans[d * new..d * new + old].copy_from_slice(&self.trans[d * old..(d + 1) * old]);
            }
            self.trans = trans;
        }
        self.stride = new;
    }

    /// Approximate heap bytes held by the cache.
    pub fn memory_bytes(&self) -> usize {
        self.sets.len() * 8
            + self.finals.len()
            + self.index.len() * (self.words * 8 + 40)
            + self.trans.len() * 8
            + self.classes.memory_bytes()
    }

    /// True when the cache should be cleared before the next event.
    #[inline]
    pub fn over_budget(&self) -> bool {
        self.num_states() > self.state_threshold || self.memory_bytes() > self.clear_threshold
    }

    /// Clears the cache, keeping the det-states in `live` (in that order, after the
    /// initial one). Returns the map from old to new ids (`DEAD` for dropped ones).
    /// `events` is the number of events processed so far (thrashing guard).
    pub fn clear(&mut self, live: impl IntoIterator<Item = DetId>, events: u64) -> Vec<DetId> {
        let old_sets = std::mem::take(&mut self.sets);
        let old_count = self.finals.len();
        self.finals.clear();
        self.index.clear();
        self.trans.clear();
        self.classes.clear();
        self.stats.clears += 1;
        // Thrashing guard.
        if self.clears_in_burst == 0
            || events - self.burst_start_event >= self.config.min_events_per_state * self.config.max_det_states as u64
        {
            self.clears_in_burst = 0;
            self.burst_start_event = events;
        }
        self.clears_in_burst += 1;
        if self.clears_in_burst > self.config.max_clears && !self.stats.uncached {
            self.stats.uncached = true;
            self.trans = Vec::new();
        }
        let mut remap = vec![DEAD; old_count];
        self.intern_initial();
        remap[INITIAL as usize] = INITIAL;
        for d in live {
            if remap[d as usize] == DEAD {
                let set = &old_sets[d as usize * self.words..(d as usize + 1) * self.words];
                remap[d as usize] = self.intern(set);
            }
        }
        // When many det-states are still in use, let the cache grow to twice that
        // before clearing again, so that clears stay amortised O(1) per state.
        self.clear_threshold = self.config.max_cache_bytes.max(self.memory_bytes().saturating_mul(2));
        self.state_threshold = self.config.max_det_states.max(self.num_states().saturating_mul(2));
        remap
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cea::{Cea, Guard, Term, Transition};
    use crate::bitset::BitSet;

    /// q0 -A-> 1 (marked), 1 -TRUE-> 1, 1 -B-> 2 (marked, final).
    fn seq_ab() -> Arc<Cea> {
        let a = Guard { negated: false, terms: vec![Term { ty: 0, bits: vec![] }] };
        let b = Guard { negated: false, terms: vec![Term { ty: 1, bits: vec![] }] };
        let t = |guard, target, marked| Transition { guard, vars: BitSet::new(), target, marked, compared: marked };
        Arc::new(Cea {
            num_states: 3,
            finals: vec![false, false, true],
            out: vec![vec![t(0, 1, true)], vec![t(2, 1, false), t(1, 2, true)], vec![]],
            guards: vec![a, b, Guard::always()],
        })
    }

    #[test]
    fn steps_are_cached_and_io_deterministic() {
        let mut c = DetCache::new(seq_ab(), &[0, 0], CacheConfig::default());
        let a = c.class_of(0, &[0]);
        let b = c.class_of(1, &[0]);
        let (m, u) = c.step(INITIAL, a);
        assert_ne!(m, DEAD);
        assert_eq!(u, DEAD);
        let (m2, u2) = c.step(m, b);
        assert!(c.is_final(m2));
        assert_eq!(u2, m, "the skip loop keeps the run in {{1}}");
        c.step(m, b);
        assert_eq!(c.stats().misses, 2);
        assert_eq!(c.stats().hits, 1);
    }

    #[test]
    fn clear_keeps_live_states_and_results() {
        let mut c = DetCache::new(seq_ab(), &[0, 0], CacheConfig::default());
        let a = c.class_of(0, &[0]);
        let (m, _) = c.step(INITIAL, a);
        let remap = c.clear([m], 1);
        let m_new = remap[m as usize];
        assert_ne!(m_new, DEAD);
        let b = c.class_of(1, &[0]);
        let (f, _) = c.step(m_new, b);
        assert!(c.is_final(f));
        assert_eq!(c.stats().clears, 1);
    }
}
