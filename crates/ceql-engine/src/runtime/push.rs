//! The entry of every event: PUSH resolves what the event is (ingestion), settles
//! the determinization cache, commits the position, and runs ON_EVENT for its
//! partition (`step.rs`); then expired memory is reclaimed (docs/language.md#s6-5, #s6-7).

use super::ingest::Outcome;
use super::step::Settled;
use super::{Precomputed, Runtime, Target};
use crate::error::EventError;
use crate::output::{MatchBuffer, Position};
use crate::predicate::Row;
use crate::schema::TypeId;

impl Runtime {
    /// Pushes one event: `values[i]` is the value of `attribute_names()[i]`.
    /// Complex events ending at this event are appended to `out`.
    pub fn push<P: Position>(
        &mut self,
        stream: Option<&str>,
        event_type: &str,
        values: &[crate::value::ValueRef<'_>],
        out: &mut MatchBuffer<P>,
    ) -> Result<(), EventError> {
        self.check_state_budget()?;
        let target = self
            .resolve_target(stream, event_type)
            .map_err(|(field, msg)| EventError::new(self.state.position, field, Some(event_type), msg))?;
        self.push_target(target, values, out).map_err(|mut e| {
            e.event_type = Some(event_type.to_string());
            e
        })
    }

    /// Pushes one event whose target was resolved with [`Runtime::resolve_target`]
    /// (lets columnar input resolve each distinct type name once). This is the
    /// fastest path and does not check the state budget: a caller that pushes
    /// events one by one this way checks it with [`Runtime::check_state_budget`]
    /// every few thousand events ([`Runtime::push`] and [`Runtime::push_batch`]
    /// do it for their callers).
    pub fn push_target<R: Row + ?Sized, P: Position>(
        &mut self,
        target: Target,
        row: &R,
        out: &mut MatchBuffer<P>,
    ) -> Result<(), EventError> {
        self.push_precomputed(target, row, None, out)
    }

    /// As [`Runtime::push_target`], with predicate results already computed for the
    /// batch the row belongs to.
    pub(crate) fn push_precomputed<R: Row + ?Sized, P: Position>(
        &mut self,
        target: Target,
        row: &R,
        pre: Option<&Precomputed<'_>>,
        out: &mut MatchBuffer<P>,
    ) -> Result<(), EventError> {
        let position = self.state.position;
        // A narrow output cannot name this event (for u64 this is never true).
        if position > P::MAX {
            return Err(EventError::position_overflow(position, P::MAX));
        }
        let ty = match target {
            Target::Skip => {
                self.state.position += 1;
                self.state.stats.skipped += 1;
                if !self.config.facts.time_based {
                    self.state.max_w = position as i64;
                }
                self.reclaim();
                return Ok(());
            }
            Target::Type(t) => t,
        };
        let type_name = |rt: &Runtime| (ty != crate::det::OTHER_TYPE).then(|| rt.config.query.type_name(ty));
        let w = match self.coordinate(ty, row, position) {
            Ok(Outcome::Accept(w)) => w,
            Ok(Outcome::Late) => {
                self.state.position += 1;
                self.state.stats.late += 1;
                return Ok(());
            }
            Err((field, msg)) => return Err(EventError::new(position, field, type_name(self).as_deref(), msg)),
        };
        if !self.encode_key(ty, row, w) {
            if let Some((slot, msg)) = self.scratch.route_error.take() {
                let field = self.config.layout[slot as usize].clone();
                return Err(EventError::new(position, field, type_name(self).as_deref(), msg));
            }
            self.state.position += 1;
            self.state.stats.no_key += 1;
            self.state.max_w = self.state.max_w.max(w);
            if self.config.deadline.is_some() {
                self.deadline_event_cold(None, 0, w, out);
            }
            self.reclaim();
            return Ok(());
        }
        // Clear the determinization cache between events when it is over budget
        // (class ids are computed next and only live for this event).
        if self.state.cache.over_budget() {
            self.clear_cache()?;
        }
        let mut words = 0;
        let class = match self.fixed_class(ty) {
            Some(c) => c,
            None => {
                words = self
                    .predicate_bits(ty, row, pre)
                    .map_err(|(field, msg)| EventError::new(position, field, type_name(self).as_deref(), msg))?;
                self.state.cache.class_of(ty, &self.scratch.bits[..words])
            }
        };
        // Committed: the event is accepted.
        self.state.position += 1;
        self.state.stats.accepted += 1;
        self.state.max_w = self.state.max_w.max(w);
        // One test for the two kinds of query that do more with an accepted event
        // (a second test for `every_row` alone cost 2 instructions per event on
        // every other query).
        if self.config.facts.on_accept {
            if self.config.facts.time_based {
                if self.state.coordinate_marks.back().is_none_or(|&(last, _)| last < w) {
                    self.state.coordinate_marks.push_back((w, position));
                }
                // A trailing absence needs a duration window (E0304), so queries
                // without time windows do not test for deadlines at all.
                if self.config.deadline.is_some() {
                    self.deadline_event_cold(Some(ty), words, w, out);
                }
            }
            if self.config.facts.every_row {
                self.store_every_event(ty, row, position);
            }
        }
        // Accepted coordinates never decrease, so `w` is now `max_w` and this is the
        // threshold of both the event and the reclamation after it.
        let tau = self.threshold(w);
        let pid = match self.state.partitions.find(&self.scratch.key_buf) {
            Ok(pid) => pid,
            // A new key whose event starts nothing: the partition would be created
            // empty and removed again at once (see `settle_with`).
            Err(_) if self.idle_in_new_partition(class) => {
                self.reclaim_at(tau);
                return Ok(());
            }
            Err(hash) => self.state.partitions.create(&self.scratch.key_buf, hash, self.state.reset_epoch),
        };
        match self.settle_idle(pid, class, w, tau) {
            Settled::Idle => {}
            Settled::Busy(begun) => self.step_busy(pid, begun, class, position, w, tau, (ty, row), out)?,
            Settled::NotCached => self.event_not_cached(pid, class, position, w, tau, (ty, row), out)?,
        }
        self.reclaim_at(tau);
        if out.overflowed() {
            return Err(EventError::out_of_memory(position));
        }
        Ok(())
    }

    /// [`Runtime::deadline_event`], kept out of line: queries without a trailing
    /// absence never call it, and inlined it made the push's frame larger for them.
    #[cold]
    #[inline(never)]
    fn deadline_event_cold<P: Position>(&mut self, ty: Option<TypeId>, words: usize, w: i64, out: &mut MatchBuffer<P>) {
        self.deadline_event(ty, words, w, out);
    }

    /// The threshold `τ` for the current coordinate: starts with `w < τ` are outside
    /// the window from now on.
    #[inline]
    pub(crate) fn threshold(&self, w: i64) -> i64 {
        match self.config.facts.epsilon {
            None => i64::MIN,
            Some(eps) => w.saturating_sub(eps),
        }
    }

    /// Frees tECS chunks and partitions that can no longer contribute (docs/language.md#s6-7).
    #[inline(always)]
    pub(super) fn reclaim(&mut self) {
        if self.config.facts.epsilon.is_none() || self.state.max_w == i64::MIN {
            return;
        }
        self.reclaim_at(self.threshold(self.state.max_w));
    }

    /// [`Runtime::reclaim`] when the threshold of `max_w` is known to be `tau`.
    #[inline(always)]
    fn reclaim_at(&mut self, tau: i64) {
        debug_assert!(self.state.max_w == i64::MIN || tau == self.threshold(self.state.max_w));
        // Most events free nothing: without partitions or time marks, that is one
        // comparison here instead of a call (unbounded windows have τ = i64::MIN).
        if self.state.arena.oldest_full_coordinate() >= tau
            && !self.config.facts.partitioned
            && !self.config.facts.time_based
        {
            return;
        }
        if self.config.facts.epsilon.is_some() {
            self.reclaim_below(tau);
        }
    }

    /// The work of [`Runtime::reclaim`] for the threshold `tau`.
    fn reclaim_below(&mut self, tau: i64) {
        if self.state.arena.oldest_full_coordinate() < tau {
            self.state.arena.expire(tau);
        }
        if self.config.facts.partitioned {
            self.state.partitions.evict_idle(tau, self.state.reset_epoch, &mut self.scratch.pool);
        }
        if self.config.facts.time_based {
            while self.state.coordinate_marks.front().is_some_and(|&(w, _)| w < tau) {
                self.state.coordinate_marks.pop_front();
            }
        }
    }
}
