//! Lazy I/O-determinization with a bounded cache (docs/language.md#s5-6), after the lazy
//! DFA of regex-automata: det-states are interned keys, successors are computed on
//! demand and memoised in dense per-state rows indexed by event class, and when the
//! cache outgrows its budget it is cleared and rebuilt from the det-states still in
//! use.
//!
//! A det-state key is `P ‖ X`: a set `P` of automaton states plus the component
//! the selection strategy's automaton adds (see [`strategy`]). Successors are split
//! by output mark, so an event leads a det-run to at most one output-marked
//! successor and (at most two, for MAX) unmarked ones: the tECS stays
//! duplicate-free and Algorithm 1 runs unchanged for every strategy.

mod classes;
mod ids;
mod movers;
mod preorder;
pub mod strategy;

pub use classes::{ClassId, ClassTable, OTHER_TYPE};
pub use ids::{DetId, ListId, Succ};
pub use strategy::StrategyKind;

use crate::bitset;
use crate::cea::Cea;
use crate::schema::TypeId;
use preorder::Preorders;
use std::collections::HashMap;
use std::sync::Arc;
use strategy::Scratch;

/// Classes per transition row until more are met.
const INITIAL_STRIDE: usize = 8;

/// Budget and thrashing guard of the cache (docs/language.md#s5-6 defaults).
#[derive(Clone, Copy, Debug)]
pub struct CacheConfig {
    /// Bytes for interned keys, classes and transition rows.
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
    /// Transition lookups that computed successors.
    pub misses: u64,
    /// Cache clears.
    pub clears: u64,
    /// True once the thrashing guard switched to uncached mode.
    pub uncached: bool,
}

/// A det-state independent of any cache (for snapshots).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PortableDet {
    /// The state set `P`.
    pub states: Vec<u64>,
    /// NEXT/LAST: the blocks of the preorder, concatenated; MAX: the set `Q`.
    pub extra: Vec<u64>,
}

/// The lazily determinized automaton of one query evaluation, shared by all its
/// partitions.
pub struct DetCache {
    cea: Arc<Cea>,
    kind: StrategyKind,
    config: CacheConfig,
    /// Words per state set.
    words: usize,
    /// Words per key (`P ‖ X`).
    key_words: usize,
    keys: Vec<u64>,
    finals: Vec<bool>,
    index: HashMap<Box<[u64]>, DetId, foldhash::fast::RandomState>,
    preorders: Preorders,
    /// Classes of the events seen since the last clear.
    pub classes: ClassTable,
    /// Transition rows: `trans[det * stride + class]`.
    trans: Vec<Succ>,
    stride: usize,
    stats: CacheStats,
    clears_in_burst: u32,
    burst_start_event: u64,
    scratch: Scratch,
    out: strategy::SuccessorKeys,
    /// Det-states, classes or row width were added since the last budget check
    /// (or the cache was cleared): only then is the size recomputed. One flag
    /// instead of comparing three counts on every event.
    grown: bool,
    /// Per class, the det-states that do not stay put (see `movers.rs`).
    movers: movers::MoverMasks,
    /// Split marked successors by capture label (docs/language.md#s5-6).
    captures: bool,
    /// Marked successors of the last computation, per label.
    marked_out: Vec<(u32, Vec<u64>)>,
    /// With captures on: the lists that [`Succ::marked_list`] names, each a
    /// header `(length, DEAD)` followed by its `(label, det-state)` pairs.
    lists: Vec<(u32, DetId)>,
}

impl DetCache {
    /// A cache for `cea` under strategy `kind`, whose types have
    /// `preds_per_type[t]` predicates.
    pub fn new(cea: Arc<Cea>, kind: StrategyKind, preds_per_type: &[usize], config: CacheConfig) -> Self {
        let words = bitset::words_for(cea.num_states);
        let mut cache = DetCache {
            kind,
            words,
            key_words: words + kind.extra_words(words),
            keys: Vec::new(),
            finals: Vec::new(),
            index: HashMap::default(),
            preorders: Preorders::new(words),
            classes: ClassTable::new(preds_per_type),
            trans: Vec::new(),
            stride: INITIAL_STRIDE,
            stats: CacheStats::default(),
            clears_in_burst: 0,
            burst_start_event: 0,
            scratch: Scratch::new(words),
            out: Default::default(),
            grown: true,
            movers: movers::MoverMasks::default(),
            captures: false,
            marked_out: Vec::new(),
            lists: Vec::new(),
            config,
            cea,
        };
        cache.intern_initial();
        cache
    }

    fn intern_initial(&mut self) {
        let mut key = vec![0u64; self.key_words];
        bitset::set(&mut key, 0);
        // NEXT/LAST: preorder 0 (no live run); MAX: Q = ∅.
        let id = self.intern(&key);
        debug_assert_eq!(id, DetId::INITIAL);
    }

    /// Splits marked successors by capture label from now on (call before the
    /// first step): the marked part of a [`Succ`] becomes a list ([`Succ::marked_list`]).
    pub fn set_captures(&mut self, on: bool) {
        debug_assert!(self.stats.misses == 0, "set before the first step");
        self.captures = on;
    }

    /// Whether marked successors are split by capture label.
    pub fn captures(&self) -> bool {
        self.captures
    }

    /// With captures on: the `(label, det-state)` pairs of the marked successors
    /// that [`Succ::marked_list`] names (valid until the next cache clear, or, in
    /// uncached mode, until [`DetCache::release_lists`]).
    #[inline]
    pub fn marked_list(&self, list: ListId) -> &[(u32, DetId)] {
        let at = list.index();
        let n = self.lists[at].0 as usize;
        &self.lists[at + 1..at + 1 + n]
    }

    /// In uncached mode, forgets the lists of the successors computed so far
    /// (they are not memoised, so nothing refers to them after the event).
    pub fn release_lists(&mut self) {
        if self.stats.uncached {
            self.lists.clear();
        }
    }

    /// The strategy automaton being determinized.
    pub fn kind(&self) -> StrategyKind {
        self.kind
    }

    /// The automaton being determinized.
    pub fn cea(&self) -> &Cea {
        &self.cea
    }

    /// Whether det-state `d` accepts.
    #[inline]
    pub fn is_final(&self, d: DetId) -> bool {
        debug_assert!(d.index() < self.finals.len());
        // SAFETY: det ids handed out by this cache index `finals` (ids are only
        // issued by `intern`, which pushes to `finals`; a clear remaps every id in use).
        unsafe { *self.finals.get_unchecked(d.index()) }
    }

    fn key(&self, d: DetId) -> &[u64] {
        &self.keys[d.index() * self.key_words..(d.index() + 1) * self.key_words]
    }

    /// The automaton states `P` of det-state `d`.
    pub fn states(&self, d: DetId) -> &[u64] {
        &self.key(d)[..self.words]
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
        if new {
            self.grown = true;
            if c.index() >= self.stride {
                self.grow_stride();
            }
        }
        c
    }

    /// The cached successors of `det` on `class`, without counting the hit (see
    /// [`DetCache::count_hits`]); `None` when they are not computed yet. Being a
    /// shared borrow, it lets a hot loop keep the table's address in registers.
    #[inline]
    pub fn lookup(&self, det: DetId, class: ClassId) -> Option<Succ> {
        if self.stats.uncached {
            return None;
        }
        let i = det.index() * self.stride + class.index();
        debug_assert!(i < self.trans.len());
        // SAFETY: `det` < number of det-states (ids come from `intern`, which
        // grows `trans` by one row of `stride` entries per det-state) and
        // `class` < `stride` (`class_of` grows the stride before handing out a
        // larger class id); the hot loop does not pay for the bounds check.
        let t = unsafe { *self.trans.get_unchecked(i) };
        t.is_known().then_some(t)
    }

    /// Adds `n` hits of [`DetCache::lookup`] to the counters.
    #[inline]
    pub fn count_hits(&mut self, n: u64) {
        self.stats.hits += n;
    }

    /// The successors of `det` on `class` (see [`Succ`]).
    #[inline]
    pub fn step(&mut self, det: DetId, class: ClassId) -> Succ {
        match self.lookup(det, class) {
            Some(t) => {
                self.stats.hits += 1;
                t
            }
            None => self.step_slow(det, class),
        }
    }

    #[cold]
    fn step_slow(&mut self, det: DetId, class: ClassId) -> Succ {
        self.stats.misses += 1;
        let key = self.key(det).to_vec();
        let (ty, bits) = self.classes.get(class);
        let bits = bits.to_vec();
        let mut out = std::mem::take(&mut self.out);
        let mut marked = std::mem::take(&mut self.marked_out);
        let on = strategy::OnClass { cea: &self.cea, ty, bits: &bits };
        let split = self.captures;
        strategy::successors(on, self.kind, &key, &mut self.preorders, &mut self.scratch, &mut out, &mut marked, split);
        // The marked successors are interned first, then the others in the order
        // of `Succ`'s parts (the numbering of det-states follows it).
        let list = if split && !marked.is_empty() {
            let list = ListId::from_index(self.lists.len());
            self.lists.push((marked.len() as u32, DetId::DEAD));
            for (label, k) in &marked {
                let d = self.intern(k);
                self.lists.push((*label, d));
            }
            Some(list)
        } else {
            None
        };
        let marked_det = match marked.first() {
            Some((_, k)) if !split => {
                debug_assert_eq!(marked.len(), 1, "one marked successor without captures");
                self.intern(k)
            }
            _ => DetId::DEAD,
        };
        let unmarked = self.intern_nonempty(&out.unmarked);
        let unmarked_other = self.intern_nonempty(&out.unmarked_other);
        let next_virtual = self.intern_nonempty(&out.next_virtual);
        let succ = match list {
            Some(list) => Succ::with_list(list, unmarked, unmarked_other, next_virtual),
            None => Succ::new(marked_det, unmarked, unmarked_other, next_virtual),
        };
        self.out = out;
        self.marked_out = marked;
        if !self.stats.uncached {
            self.trans[det.index() * self.stride + class.index()] = succ;
        }
        succ
    }

    /// The det-state of `key`, or [`DetId::DEAD`] for an empty key (no successor).
    fn intern_nonempty(&mut self, key: &[u64]) -> DetId {
        if key.is_empty() {
            DetId::DEAD
        } else {
            self.intern(key)
        }
    }

    fn intern(&mut self, key: &[u64]) -> DetId {
        debug_assert_eq!(key.len(), self.key_words);
        if let Some(&d) = self.index.get(key) {
            return d;
        }
        let id = DetId::from_index(self.finals.len());
        self.grown = true;
        self.keys.extend_from_slice(key);
        self.finals.push(strategy::is_final(&self.cea, self.kind, self.words, key, &self.preorders));
        self.index.insert(Box::from(key), id);
        if !self.stats.uncached {
            self.trans.resize(self.trans.len() + self.stride, Succ::UNKNOWN);
        }
        self.stats.det_states_created += 1;
        id
    }

    fn grow_stride(&mut self) {
        let old = self.stride;
        let new = (old * 2).max(self.classes.len().next_power_of_two());
        if !self.stats.uncached {
            let mut trans = vec![Succ::UNKNOWN; self.num_states() * new];
            for d in 0..self.num_states() {
                trans[d * new..d * new + old].copy_from_slice(&self.trans[d * old..(d + 1) * old]);
            }
            self.trans = trans;
        }
        self.stride = new;
    }

    /// Approximate heap bytes held by the cache.
    pub fn memory_bytes(&self) -> usize {
        self.keys.len() * 8
            + self.finals.len()
            + self.index.len() * (self.key_words * 8 + 40)
            + self.trans.len() * std::mem::size_of::<Succ>()
            + self.classes.memory_bytes()
            + self.preorders.memory_bytes()
            + self.lists.len() * std::mem::size_of::<(u32, DetId)>()
    }

    /// True when the cache should be cleared before the next event. The size is
    /// only recomputed when det-states or classes were added since the last check.
    #[inline]
    pub fn over_budget(&mut self) -> bool {
        if !self.grown {
            return false;
        }
        self.grown = false;
        self.num_states() > self.config.max_det_states || self.memory_bytes() > self.config.max_cache_bytes
    }

    /// A det-state in a form independent of this cache.
    pub fn export(&self, d: DetId) -> PortableDet {
        let key = self.key(d);
        let extra = match self.kind {
            StrategyKind::All => Vec::new(),
            StrategyKind::Next | StrategyKind::Last => self.preorders.blocks(key[self.words] as u32).to_vec(),
            StrategyKind::Max => key[self.words..].to_vec(),
        };
        PortableDet { states: key[..self.words].to_vec(), extra }
    }

    /// Interns the det-state of a restored run (an entry of `T`): `None` unless it
    /// fits this automaton, holds some state, and not `q0`, which only the virtual
    /// det-state holds (C1). Snapshots are checked so because the hot loop trusts
    /// det ids ([`DetCache::lookup`]): a virtual det-state without `q0`, say, would
    /// step to [`DetId::DEAD`] and be looked up past the end of the table.
    pub fn import_run(&mut self, p: &PortableDet) -> Option<DetId> {
        (!bitset::is_empty(&p.states) && !holds_q0(&p.states)).then_some(())?;
        self.import(p)
    }

    /// Interns the restored virtual det-state of a partition: `None` unless it fits
    /// this automaton and holds `q0` (see [`DetCache::import_run`]).
    pub fn import_virtual(&mut self, p: &PortableDet) -> Option<DetId> {
        holds_q0(&p.states).then_some(())?;
        self.import(p)
    }

    /// Whether `bits` names states of the automaton only (none at or past `num_states`).
    fn names_states(&self, bits: &[u64]) -> bool {
        bits.len() == self.words && bitset::iter(bits).all(|q| q < self.cea.num_states)
    }

    /// Interns a det-state given in portable form; `None` if it does not fit
    /// this automaton (a state, or a preorder block, beyond its states).
    pub fn import(&mut self, p: &PortableDet) -> Option<DetId> {
        if !self.names_states(&p.states) {
            return None;
        }
        let blocks_fit = match self.kind {
            StrategyKind::All => true,
            StrategyKind::Next | StrategyKind::Last => p.extra.chunks(self.words).all(|b| self.names_states(b)),
            StrategyKind::Max => self.names_states(&p.extra),
        };
        if !blocks_fit {
            return None;
        }
        let mut key = p.states.clone();
        match self.kind {
            StrategyKind::All if p.extra.is_empty() => {}
            StrategyKind::Next | StrategyKind::Last if p.extra.len() % self.words == 0 => {
                key.push(self.preorders.intern(&p.extra) as u64)
            }
            StrategyKind::Max if p.extra.len() == self.words => key.extend_from_slice(&p.extra),
            _ => return None,
        }
        Some(self.intern(&key))
    }

    /// Restores counters from a snapshot.
    pub fn restore_stats(&mut self, stats: CacheStats) {
        let uncached = self.stats.uncached;
        self.stats = CacheStats { uncached, ..stats };
    }

    /// Clears the cache, keeping the det-states in `live` (the initial one always
    /// keeps id 0). Returns the map from old to new ids, indexed by
    /// [`DetId::index`] ([`DetId::DEAD`] for dropped ones).
    /// `events` is the number of events processed so far (thrashing guard).
    pub fn clear(&mut self, live: impl IntoIterator<Item = DetId>, events: u64) -> Vec<DetId> {
        let old_count = self.finals.len();
        let live: Vec<(DetId, PortableDet)> = live.into_iter().map(|d| (d, self.export(d))).collect();
        self.keys.clear();
        self.finals.clear();
        self.index.clear();
        self.trans.clear();
        self.classes.clear();
        self.movers.clear();
        self.lists.clear();
        self.preorders = Preorders::new(self.words);
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
        // Classes start again from id 0, so the rows shrink back to the first stride
        // (a stream of ever-new classes would otherwise keep the widest rows forever).
        self.stride = INITIAL_STRIDE;
        let mut remap = vec![DetId::DEAD; old_count];
        self.intern_initial();
        remap[DetId::INITIAL.index()] = DetId::INITIAL;
        for (d, p) in live {
            if remap[d.index()].is_dead() {
                remap[d.index()] = self.import(&p).expect("a live det-state fits its own automaton");
            }
        }
        self.grown = true;
        remap
    }

    /// After a [`DetCache::clear`]: whether the det-states still in use alone exceed
    /// the budget, so that no clear can bring the cache back under it.
    pub fn exhausted(&self) -> bool {
        self.num_states() > self.config.max_det_states || self.memory_bytes() > self.config.max_cache_bytes
    }

    /// The budget, for messages.
    pub fn config(&self) -> &CacheConfig {
        &self.config
    }

    /// For each automaton state, in how many of the det-states `dets` it occurs.
    pub fn state_frequencies(&self, dets: &[DetId]) -> Vec<usize> {
        let mut freq = vec![0; self.cea.num_states];
        for &d in dets {
            for (q, f) in freq.iter_mut().enumerate() {
                if bitset::test(self.states(d), q) {
                    *f += 1;
                }
            }
        }
        freq
    }
}

/// Whether a det-state's states hold the initial state `q0` (state 0).
fn holds_q0(states: &[u64]) -> bool {
    !states.is_empty() && bitset::test(states, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bitset::BitSet;
    use crate::cea::{Cea, Guard, Term, Transition};

    /// q0 -A-> 1 (marked), 1 -TRUE-> 1, 1 -B-> 2 (marked, final).
    fn seq_ab() -> Arc<Cea> {
        let a = Guard { negated: false, terms: vec![Term { ty: 0, bits: vec![] }] };
        let b = Guard { negated: false, terms: vec![Term { ty: 1, bits: vec![] }] };
        let t = |guard, target, marked: bool| {
            let mut vars = BitSet::new();
            if marked {
                vars.insert(0);
            }
            Transition { guard, vars, target, marked, compared: marked, label: u32::from(marked) }
        };
        Arc::new(Cea {
            num_states: 3,
            finals: vec![false, false, true],
            out: vec![vec![t(0, 1, true)], vec![t(2, 1, false), t(1, 2, true)], vec![]],
            guards: vec![a, b, Guard::always()],
            state_spans: vec![ceql_syntax::Span::default(); 3],
            trailing: None,
        })
    }

    #[test]
    fn steps_are_cached_and_io_deterministic() {
        let mut c = DetCache::new(seq_ab(), StrategyKind::All, &[0, 0], CacheConfig::default());
        let a = c.class_of(0, &[0]);
        let b = c.class_of(1, &[0]);
        let start = c.step(DetId::INITIAL, a);
        let m = start.marked();
        assert_ne!(m, DetId::DEAD);
        assert_eq!(start.unmarked(), DetId::DEAD);
        assert_eq!(start.next_virtual(), DetId::INITIAL, "the virtual run of ALL stays {{q0}}");
        let s = c.step(m, b);
        assert!(c.is_final(s.marked()));
        assert_eq!(s.unmarked(), m, "the skip loop keeps the run in {{1}}");
        c.step(m, b);
        assert_eq!(c.stats().misses, 2);
        assert_eq!(c.stats().hits, 1);
    }

    #[test]
    fn restored_det_states_are_checked_against_their_role() {
        for kind in [StrategyKind::All, StrategyKind::Next, StrategyKind::Last, StrategyKind::Max] {
            let mut c = DetCache::new(seq_ab(), kind, &[0, 0], CacheConfig::default());
            let a = c.class_of(0, &[0]);
            let marked = c.step(DetId::INITIAL, a).marked();
            let run = c.export(marked);
            let virtual_det = c.export(DetId::INITIAL);
            assert!(c.import_run(&run).is_some() && c.import_virtual(&virtual_det).is_some());
            // The roles swapped: a run holding q0, a virtual det-state without it.
            assert_eq!(c.import_run(&virtual_det), None, "{kind:?}");
            assert_eq!(c.import_virtual(&run), None, "{kind:?}");
            // No state at all, and a state beyond the automaton's three.
            let empty = PortableDet { states: vec![0], extra: run.extra.clone() };
            assert_eq!(c.import_run(&empty), None);
            let beyond = PortableDet { states: vec![run.states[0] | 1 << 3], extra: run.extra.clone() };
            assert_eq!(c.import_run(&beyond), None);
        }
    }

    #[test]
    fn clear_keeps_live_states_and_results() {
        for kind in [StrategyKind::All, StrategyKind::Next, StrategyKind::Last, StrategyKind::Max] {
            let mut c = DetCache::new(seq_ab(), kind, &[0, 0], CacheConfig::default());
            let a = c.class_of(0, &[0]);
            let start = c.step(DetId::INITIAL, a);
            let (m, v) = (start.marked(), start.next_virtual());
            let before = c.export(m);
            let remap = c.clear([m, v], 1);
            assert_eq!(c.export(remap[m.index()]), before, "{kind:?}");
            let b = c.class_of(1, &[0]);
            let f = c.step(remap[m.index()], b).marked();
            assert!(c.is_final(f), "{kind:?}");
            assert_eq!(c.stats().clears, 1);
        }
    }
}
