//! ON_EVENT, EXEC_TRANS and OUTPUT of docs/language.md#s6-5 (Algorithm 1 of [CORE]).
//!
//! Per event the work is O(|T| · (cost(δ) + |T|)) for the event's partition only:
//! constant in the length of the stream and the size of the window.

use super::partition::{dets_of, Entry, PartitionId};
use super::Runtime;
use crate::det::{ClassId, DetId, Succ};
use crate::output::{MatchBuffer, Position};
use crate::predicate::Row;
use crate::schema::TypeId;
use crate::tecs::{check_invariants, new_ulist, prune, Item, UnionList};
use ceql_syntax::ast::ConsumePolicy;

/// What [`Runtime::settle_idle`] decided about an accepted event.
pub(super) enum Settled {
    /// The event was idle and is settled.
    Idle,
    /// The event needs the rest of ON_EVENT.
    Busy(EventStart),
    /// The successors of the partition's virtual det-state are not cached.
    NotCached,
}

/// What [`Runtime::settle_idle`] learnt about an event that is not idle.
#[derive(Clone, Copy)]
pub(super) struct EventStart {
    /// Successors of the partition's virtual det-state.
    start: Succ,
    /// The class's mover mask.
    mask: Option<u64>,
}

impl Runtime {
    /// The first half of ON_EVENT for an accepted event of class `class` with
    /// coordinate `w` (threshold `tau`) in partition `pid`: settles an idle event
    /// on the spot, or returns what [`Runtime::on_event`] needs. Kept apart and
    /// inlined into the push, so that idle events, often half of the stream, do
    /// not pay for entering the full step.
    ///
    /// Only cached successors are read here; a miss (a transition not computed
    /// yet, or the uncached mode) is left to [`Runtime::event_not_cached`]. With
    /// `DetCache::step` here, the cached successors and those computed on a miss
    /// met in a stack slot that every event wrote and read back (about 5
    /// instructions per event, callgrind on `seq3_w100`).
    #[inline(always)]
    pub(super) fn settle_idle(&mut self, pid: PartitionId, class: ClassId, w: i64, tau: i64) -> Settled {
        debug_assert_eq!(tau, self.threshold(w));
        if self.state.partitions.get_mut(pid).epoch < self.state.reset_epoch {
            self.reset_consumed(pid);
        }
        let virtual_det = self.state.partitions.get_mut(pid).virtual_det;
        let Some(start) = self.state.cache.lookup(virtual_det, class) else {
            return Settled::NotCached;
        };
        self.state.cache.count_hits(1);
        match self.settle_with(pid, start, class, w, tau) {
            None => Settled::Idle,
            Some(begun) => Settled::Busy(begun),
        }
    }

    /// Whether an event of class `class` leaves a partition that does not exist yet
    /// as it is, empty with the initial virtual det-state: [`Runtime::settle_with`]
    /// would create it and remove it again at once. Only cached successors are
    /// read (a miss creates the partition and goes the usual way).
    #[inline(always)]
    pub(super) fn idle_in_new_partition(&mut self, class: ClassId) -> bool {
        let idle = self
            .state
            .cache
            .lookup(DetId::INITIAL, class)
            .is_some_and(|start| start.is_empty() && start.next_virtual() == DetId::INITIAL)
            && self.state.cache.mover_mask(class).is_some();
        if idle {
            self.state.cache.count_hits(1);
        }
        idle
    }

    /// [`Runtime::settle_idle`] once the successors `start` of the partition's
    /// virtual det-state are known: `None` when the event was idle and is settled.
    #[inline(always)]
    fn settle_with(&mut self, pid: PartitionId, start: Succ, class: ClassId, w: i64, tau: i64) -> Option<EventStart> {
        let mask = self.state.cache.mover_mask(class);
        let part = self.state.partitions.get_mut(pid);
        let virtual_det = part.virtual_det;

        // An idle event (noise, most often) starts no run, moves no entry of T and
        // lets none expire: T' = T, and since every final det-state is a mover, T
        // holds none and there is no output. Decided from the partition's det-state
        // bits without reading T's entries.
        if start.is_empty()
            && start.next_virtual() == virtual_det
            && mask.is_some_and(|mask| mask & part.dets == 0)
            && part.table.last().is_none_or(|e| e.head_max() >= tau)
        {
            debug_assert_eq!(dets_of(&part.table) & !part.dets, 0, "dets is a superset of T's det-states");
            let empty = part.table.is_empty() && virtual_det == DetId::INITIAL;
            self.state.partitions.touch(pid, w);
            if empty {
                self.state.partitions.remove(pid, &mut self.scratch.pool);
            }
            return None;
        }
        Some(EventStart { start, mask })
    }

    /// ON_EVENT for an event whose virtual successors [`Runtime::settle_idle`]
    /// did not find in the cache: computes them, then settles or steps the event
    /// as the push does. Out of line, so that the push reads cached successors
    /// only (misses come with new det-states and classes, or in uncached mode).
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn event_not_cached<P: Position, R: Row + ?Sized>(
        &mut self,
        pid: PartitionId,
        class: ClassId,
        position: u64,
        w: i64,
        tau: i64,
        (ty, row): (TypeId, &R),
        out: &mut MatchBuffer<P>,
    ) -> Result<(), crate::error::EventError> {
        let virtual_det = self.state.partitions.get_mut(pid).virtual_det;
        let start = self.state.cache.step(virtual_det, class);
        match self.settle_with(pid, start, class, w, tau) {
            None => Ok(()),
            Some(begun) => self.step_busy(pid, begun, class, position, w, tau, (ty, row), out),
        }
    }

    /// The rest of ON_EVENT for an event that is not idle, with captures on or off;
    /// a type error met by filters between events is reported for this event.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn step_busy<P: Position, R: Row + ?Sized>(
        &mut self,
        pid: PartitionId,
        begun: EventStart,
        class: ClassId,
        position: u64,
        w: i64,
        tau: i64,
        (ty, row): (TypeId, &R),
        out: &mut MatchBuffer<P>,
    ) -> Result<(), crate::error::EventError> {
        if self.state.cache.captures() {
            let before = out.len();
            self.on_event_captures(pid, begun, class, position, w, tau, (ty, row), out)?;
            if self.interrupt.hit {
                // Its complex events found so far are not all of them: none is reported
                // (nor counted).
                self.state.stats.matches -= (out.len() - before) as u64;
                out.truncate(before);
                return Err(Self::interrupted_error(position));
            }
            if let Some(e) = self.scratch.residual_error.take() {
                let type_name = (ty != crate::det::OTHER_TYPE).then(|| self.config.query.type_name(ty));
                return Err(crate::error::EventError::new(position, e.field, type_name.as_deref(), e.message));
            }
        } else {
            self.on_event::<P, false>(pid, begun, class, position, w, tau, out);
        }
        Ok(())
    }

    /// Lazy CONSUME BY ANY: partition `pid` was reset by an earlier output.
    #[cold]
    fn reset_consumed(&mut self, pid: PartitionId) {
        let part = self.state.partitions.get_mut(pid);
        self.scratch.pool.extend(part.table.drain(..).map(|e| e.ul));
        part.epoch = self.state.reset_epoch;
        part.virtual_det = DetId::INITIAL;
    }

    /// [`Runtime::on_event`] with captures on, kept out of line so that the
    /// captures-off step is compiled into the push exactly as without captures.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    ///
    /// With filters between events, the event's values are stored here: an idle
    /// event (settled by [`Runtime::settle_idle`]) makes no node, so no valuation
    /// can hold it, and the captures-off step does not test for them at all.
    pub(super) fn on_event_captures<P: Position, R: Row + ?Sized>(
        &mut self,
        pid: PartitionId,
        begun: EventStart,
        class: ClassId,
        position: u64,
        w: i64,
        tau: i64,
        (ty, row): (TypeId, &R),
        out: &mut MatchBuffer<P>,
    ) -> Result<(), crate::error::EventError> {
        // Positions share a node's word with the capture label.
        if position > crate::cea::POSITION_MASK {
            return Err(crate::error::EventError::captures_overflow(position, crate::cea::POSITION_MASK));
        }
        if self.config.facts.residual {
            self.store_values(ty, row, position);
        }
        self.on_event::<P, true>(pid, begun, class, position, w, tau, out);
        Ok(())
    }

    /// The rest of ON_EVENT for an event that [`Runtime::settle_idle`] did not
    /// settle: updates T (in place or by a rebuild), outputs, and applies CONSUME BY.
    /// The event's values are passed one by one, not as a struct, so that they stay
    /// in registers on the hot path.
    ///
    /// `CAP`: captures on (docs/language.md#s3-2a), a separate monomorphised step,
    /// so that the captures-off step has no branch more. The marked part of every
    /// successor is then a list of `(label, det-state)` pairs ([`Succ::marked_list`]),
    /// and each pair gets its own output node, whose position word carries the
    /// label. The in-place update applies when every marking entry has one label.
    ///
    /// Cost with captures on: an event makes at most `|labels|` output nodes per
    /// entry of `T` instead of one, and `|labels|` is a constant of the query (the
    /// distinct projected variable sets of its transitions), so the update stays
    /// O(|T| · (cost(δ) + |T|)) with a larger constant. Each output node is still
    /// an `extend` of the entry's merged list, and distinct labels give distinct
    /// valuations, so the tECS stays duplicate-free over valuations and
    /// Algorithm 2 keeps its output-linear delay: it reads one label per position
    /// it writes.
    ///
    /// Always inlined: into the push (captures off), the captures step and the
    /// path of uncached successors; left to LLVM, it was called out of line once
    /// it had the second caller (+1.5M instructions on `seq3_w100`, callgrind).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn on_event<P: Position, const CAP: bool>(
        &mut self,
        pid: PartitionId,
        begun: EventStart,
        class: ClassId,
        position: u64,
        w: i64,
        tau: i64,
        out: &mut MatchBuffer<P>,
    ) {
        let EventStart { start, mask } = begun;
        let next_virtual = start.next_virtual();
        self.state.arena.set_coordinate(w);
        let part = self.state.partitions.get_mut(pid);
        let mut table = std::mem::take(&mut part.table);
        let mut dets = part.dets;

        // Most events leave T where it is, with at most a few new nodes: update it in
        // place (in_place.rs); any other event rebuilds T' entry by entry.
        let in_place = self.update_in_place::<CAP>(&mut table, &mut dets, mask, start, class, position, w, tau);
        let any_final = in_place.unwrap_or(true);
        let mut next = if in_place.is_some() {
            table
        } else {
            self.begin_table();
            let mut next = std::mem::take(&mut self.scratch.next_table);
            // The runs that start at this event are executed first: their max,
            // w(j), is the largest, which keeps the heads of T' in non-increasing order.
            if CAP && !start.has_unmarked() {
                if start.has_marked() {
                    // Only marking starts: one begin node per label.
                    for i in 0..self.state.cache.marked_list(start.marked_list()).len() {
                        let (label, d) = self.state.cache.marked_list(start.marked_list())[i];
                        let node = self.state.arena.begin(labelled(position, label), w);
                        self.add(&mut next, d, Item { node, max: w });
                    }
                }
            } else if !start.has_unmarked() {
                if start.has_marked() {
                    // Only a marking start: one begin node instead of a bottom and
                    // an output node over it.
                    let node = self.state.arena.begin(position, w);
                    self.add(&mut next, start.marked(), Item { node, max: w });
                }
            } else {
                let bottom = Item { node: self.state.arena.bottom(position, w), max: w };
                let ul = new_ulist(bottom, &mut self.scratch.pool);
                self.exec_trans::<CAP>(&mut next, start, Entry::new(DetId::DEAD, ul), position);
            }
            for mut e in table.drain(..) {
                if !prune(&mut e.ul, tau) {
                    self.scratch.pool.push(e.ul);
                    continue;
                }
                let succ = self.state.cache.step(e.det, class);
                self.exec_trans::<CAP>(&mut next, succ, e, position);
            }
            self.scratch.next_table = table;
            debug_assert_eq!(self.scratch.next_dets, dets_of(&next));
            dets = self.scratch.next_dets;
            next
        };
        // Union-list length ≤ number of det-states (+1: the head may repeat a max).
        debug_assert!(next.iter().all(|e| check_invariants(&e.ul) && e.ul.len() <= self.state.cache.num_states() + 1));
        debug_assert!(
            next.windows(2).all(|p| p[0].head_max() >= p[1].head_max()),
            "processing order: heads of T are non-increasing"
        );

        // OUTPUT: only when T' may hold a final det-state (most events cannot).
        let any = any_final
            && if self.config.deadline.is_some() {
                // A trailing absence: the complex events wait for their deadline (deadlines.rs).
                self.defer_outputs_cold::<CAP>(&next, position, w, tau)
            } else {
                let before = out.total();
                let any = self.emit_outputs::<P, CAP>(&next, position, tau, out);
                self.state.stats.matches += out.total() - before;
                any
            };

        // CONSUME BY (docs/language.md#s3-10): tested on O_j before LIMIT.
        let reset = any && self.config.facts.consume != ConsumePolicy::None;
        let mut next_virtual = next_virtual;
        let mut reset_all = false;
        if reset {
            self.scratch.pool.extend(next.drain(..).map(|e| e.ul));
            dets = 0;
            next_virtual = DetId::INITIAL;
            if self.config.facts.consume == ConsumePolicy::Any || !self.state.partitions.keyed() {
                self.state.reset_epoch += 1;
                reset_all = true;
            }
        }
        let part = self.state.partitions.get_mut(pid);
        part.table = next;
        part.dets = dets;
        part.epoch = self.state.reset_epoch;
        part.virtual_det = next_virtual;
        self.state.partitions.touch(pid, w);
        if reset_all {
            // The other partitions are reset lazily, when touched; those kept only for
            // their strategy state may never be: they go now.
            self.state.partitions.drop_evicted(self.state.reset_epoch, &mut self.scratch.pool);
        }
        let part = self.state.partitions.get_mut(pid);
        if part.table.is_empty() && part.virtual_det == DetId::INITIAL {
            self.state.partitions.remove(pid, &mut self.scratch.pool);
        }
        if CAP {
            self.state.cache.release_lists();
        }
    }

    /// [`Runtime::defer_outputs`], kept out of line so that queries without a
    /// trailing absence do not carry it in their step.
    #[cold]
    #[inline(never)]
    fn defer_outputs_cold<const CAP: bool>(&mut self, next: &[Entry], position: u64, w: i64, tau: i64) -> bool {
        self.defer_outputs::<CAP>(next, position, w, tau)
    }

    /// OUTPUT: appends to `out` the complex events of the final det-states of `next`
    /// whose start is in the window (`τ`); returns whether there was any.
    #[inline(always)]
    pub(super) fn emit_outputs<P: Position, const CAP: bool>(
        &mut self,
        next: &[Entry],
        position: u64,
        tau: i64,
        out: &mut MatchBuffer<P>,
    ) -> bool {
        if CAP && self.config.facts.residual {
            return self.emit_tested(next, position, tau, out);
        }
        // MAX under a partial projection: incomparable maximal runs (different
        // det-states) can project to the same complex event; the output is a set,
        // so enumerate everything, remove duplicates, then apply LIMIT.
        // Deduplication needs the positions: a counting buffer enumerates into the
        // runtime's scratch buffer first.
        if self.config.facts.dedupe && out.is_counting() {
            let mut scratch = std::mem::take(&mut self.scratch.dedupe_scratch);
            scratch.clear();
            let any = self.enumerate_finals::<u64, CAP>(next, position, tau, &mut scratch);
            out.add_counts(scratch.len() as u64, scratch.positions.len() as u64);
            self.scratch.dedupe_scratch = scratch;
            any
        } else {
            self.enumerate_finals::<P, CAP>(next, position, tau, out)
        }
    }

    /// The body of OUTPUT: enumerates into `target` (deduplicated for MAX under a
    /// partial projection, then cut to LIMIT). Never inlined: inlined into the
    /// event loop (as LLVM chose for `u32` outputs) it ran 6% more instructions
    /// per call than on its own, as it stays for `u64` (callgrind, d3).
    #[inline(never)]
    fn enumerate_finals<P: Position, const CAP: bool>(
        &mut self,
        next: &[Entry],
        position: u64,
        tau: i64,
        target: &mut MatchBuffer<P>,
    ) -> bool {
        let mut any = false;
        let limit = self.config.facts.limit;
        let dedupe = self.config.facts.dedupe;
        let first = target.len();
        let mut budget = if dedupe { u64::MAX } else { limit };
        for e in next {
            if !self.state.cache.is_final(e.det) || e.head_max() < tau {
                continue;
            }
            any = true;
            if !self.config.options.enumerate {
                break;
            }
            for &item in &e.ul {
                if budget == 0 {
                    break;
                }
                budget -=
                    self.scratch.enumerator.enumerate::<P, CAP>(&self.state.arena, item, position, tau, budget, target);
                if target.overflowed() {
                    break;
                }
            }
        }
        if dedupe {
            target.dedupe_from(first);
            target.truncate(first + limit.min((target.len() - first) as u64) as usize);
        }
        any
    }

    /// EXEC_TRANS: moves the union-list of entry `e` along its successors: to the
    /// marked one by output-marking transitions (a new output node), to the
    /// unmarked ones by non-marking transitions (the list itself, or its merge
    /// when the target is already in `T'`). A list that moves unchanged keeps its
    /// remembered merge. With `CAP`, the marked part is a list of `(label,
    /// det-state)` pairs: one labelled output node each.
    #[inline(always)]
    fn exec_trans<const CAP: bool>(&mut self, next: &mut Vec<Entry>, succ: Succ, mut e: Entry, position: u64) {
        let (u1, u2) = (succ.unmarked(), succ.unmarked_other());
        let i1 = if !u1.is_dead() { self.index_of(u1) } else { None };
        if !succ.has_marked() && u2.is_dead() && i1.is_none() {
            if u1.is_dead() {
                self.scratch.pool.push(e.ul);
            } else {
                // Only a non-marking successor not yet in T': reuse the list as is.
                self.set_index(u1, next.len());
                e.det = u1;
                next.push(e);
            }
            return;
        }
        let merged = e.merged(&mut self.state.arena);
        let ul = e.ul;
        if CAP && succ.has_marked() {
            let list = succ.marked_list();
            for i in 0..self.state.cache.marked_list(list).len() {
                let (label, d) = self.state.cache.marked_list(list)[i];
                let node = self.state.arena.output(labelled(position, label), merged.node, merged.max);
                self.add(next, d, Item { node, max: merged.max });
            }
        } else if succ.has_marked() {
            let node = self.state.arena.output(position, merged.node, merged.max);
            self.add(next, succ.marked(), Item { node, max: merged.max });
        }
        let mut ul = Some(ul);
        let mut moved_to: Option<usize> = None;
        for u in [u1, u2] {
            if u.is_dead() {
                continue;
            }
            match self.index_of(u) {
                Some(i) => next[i].insert(&mut self.state.arena, merged),
                None => {
                    self.set_index(u, next.len());
                    let list = match (ul.take(), moved_to) {
                        (Some(l), _) => l,
                        // Both non-marking successors are new (MAX): the second one
                        // gets a copy of the list.
                        (None, Some(i)) => {
                            let i: usize = i;
                            let mut copy: UnionList = self.scratch.pool.pop().unwrap_or_default();
                            copy.clear();
                            copy.extend_from_slice(&next[i].ul);
                            copy
                        }
                        (None, None) => unreachable!("the list is moved at most once"),
                    };
                    moved_to = Some(next.len());
                    // Either way the list is unchanged, so its merge is `merged`.
                    let mut entry = Entry::new(u, list);
                    entry.remember_merge(merged);
                    next.push(entry);
                }
            }
        }
        if let Some(l) = ul {
            self.scratch.pool.push(l);
        }
    }

    /// ADD: inserts a non-union node under det-state `q` of `T'`.
    #[inline]
    fn add(&mut self, next: &mut Vec<Entry>, q: DetId, n: Item) {
        match self.index_of(q) {
            Some(i) => next[i].insert(&mut self.state.arena, n),
            None => {
                self.set_index(q, next.len());
                let ul = new_ulist(n, &mut self.scratch.pool);
                next.push(Entry::new(q, ul));
            }
        }
    }

    /// Starts a new `T'`: invalidates every index of the previous one in O(1).
    fn begin_table(&mut self) {
        self.scratch.next_dets = 0;
        self.scratch.stamp = self.scratch.stamp.wrapping_add(1);
        if self.scratch.stamp == 0 {
            self.scratch.stamp_of.iter_mut().for_each(|s| *s = 0);
            self.scratch.stamp = 1;
        }
    }

    #[inline]
    fn index_of(&self, d: DetId) -> Option<usize> {
        let d = d.index();
        (d < self.scratch.stamp_of.len() && self.scratch.stamp_of[d] == self.scratch.stamp)
            .then(|| self.scratch.slot_of[d] as usize)
    }

    #[inline]
    fn set_index(&mut self, det: DetId, i: usize) {
        let d = det.index();
        if d >= self.scratch.stamp_of.len() {
            let n = (d + 1).max(self.scratch.stamp_of.len() * 2);
            self.scratch.stamp_of.resize(n, 0);
            self.scratch.slot_of.resize(n, 0);
        }
        self.scratch.stamp_of[d] = self.scratch.stamp;
        self.scratch.slot_of[d] = i as u32;
        self.scratch.next_dets |= super::partition::det_bit(det);
    }
}

/// A node's position word with captures on: the capture label above the position.
#[inline(always)]
pub(super) fn labelled(position: u64, label: u32) -> u64 {
    debug_assert!(position <= crate::cea::POSITION_MASK);
    position | (label as u64) << crate::cea::LABEL_SHIFT
}
